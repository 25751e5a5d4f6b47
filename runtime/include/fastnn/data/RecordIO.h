//===- RecordIO.h - TFRecord reader and writer ------------------*- C++ -*-===//
//
// A TFRecord file is a sequence of
//   uint64 length | uint32 masked_crc32c(length) | data | uint32
//   masked_crc32c(data)
// (little endian), optionally wrapped as a whole in a GZIP or ZLIB stream, as
// TensorFlow's TFRecordOptions compression types do.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DATA_RECORDIO_H
#define FASTNN_DATA_RECORDIO_H

#include "fastnn/data/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace fastnn::data {

enum class Compression { None, Gzip, Zlib };

/// Accepts TensorFlow's spellings: "", "none", "GZIP", "ZLIB" (any case).
Status parseCompression(std::string_view Name, Compression &Out);
const char *compressionName(Compression C);
/// Guesses the compression from the first bytes of \p Path: a gzip magic, a
/// valid uncompressed record header (length CRC checks out), or a zlib header.
Status detectCompression(const std::string &Path, Compression &Out);

class ByteSource;

struct RecordReaderOptions {
  Compression Comp = Compression::None;
  /// Records longer than this are rejected as corrupt before any allocation;
  /// uncompressed files also reject lengths beyond the end of the file.
  uint64_t MaxRecordBytes = uint64_t(1) << 30;
};

class RecordReader {
public:
  enum class Result { Record, End, Corrupt };

  static std::unique_ptr<RecordReader> open(const std::string &Path,
                                            const RecordReaderOptions &Options,
                                            Status &Err);
  /// Reads records from memory; \p Name only appears in error messages.
  static std::unique_ptr<RecordReader>
  openMemory(const std::string &Name, const void *Data, size_t Size,
             const RecordReaderOptions &Options);
  ~RecordReader();

  /// Reads the next record into \p Record (reusing its capacity). On Corrupt,
  /// \p Err names the file and byte offset; canContinue() says whether the
  /// framing is still trustworthy (only a bad data CRC leaves it so).
  Result next(std::string &Record, Status &Err);
  bool canContinue() const { return Resumable; }
  /// Offset of the next record in the (uncompressed) record stream.
  uint64_t offset() const { return Offset; }
  const std::string &name() const { return Name; }

private:
  RecordReader(std::string Name, std::unique_ptr<ByteSource> Source,
               const RecordReaderOptions &Options, uint64_t FileSize);
  Result corrupt(Status &Err, uint64_t At, const std::string &What,
                 bool Resume);

  std::string Name;
  std::unique_ptr<ByteSource> Source;
  RecordReaderOptions Options;
  uint64_t FileSize; // 0 when unknown (compressed).
  uint64_t Offset = 0;
  bool Resumable = false;
  bool Dead = false;
};

/// Random access to the records of an uncompressed file, by the byte offsets
/// a RecordIndex holds: one pread per record, the same framing checks and
/// messages as RecordReader, and no stdio buffer, so that many can be open.
class RecordFile {
public:
  static std::unique_ptr<RecordFile> open(const std::string &Path,
                                          uint64_t MaxRecordBytes, Status &Err);
  ~RecordFile();
  RecordFile(const RecordFile &) = delete;
  RecordFile &operator=(const RecordFile &) = delete;

  /// Reads the record framed at \p Offset into \p Record (reusing its
  /// capacity). \p Span, the framed size when known (the next record's
  /// offset minus this one's), lets one read fetch it all. On Corrupt,
  /// \p Err names the file and byte offset.
  RecordReader::Result readAt(uint64_t Offset, uint64_t Span,
                              std::string &Record, Status &Err);
  const std::string &name() const { return Name; }
  uint64_t size() const { return FileSize; }

private:
  RecordFile(std::string Name, int Fd, uint64_t FileSize,
             uint64_t MaxRecordBytes)
      : Name(std::move(Name)), Fd(Fd), FileSize(FileSize),
        MaxRecordBytes(MaxRecordBytes) {}
  Status readFully(uint64_t At, void *Dst, size_t N, size_t &Got);

  std::string Name;
  int Fd;
  uint64_t FileSize;
  uint64_t MaxRecordBytes;
  std::string Buffer;
};

class RecordWriter {
public:
  static std::unique_ptr<RecordWriter> open(const std::string &Path,
                                            Compression Comp, Status &Err);
  ~RecordWriter();
  Status write(std::string_view Record);
  /// Hands everything written so far to the operating system, so that a
  /// reader of the growing file (TensorBoard) sees whole records.
  Status flush();
  /// Flushes and closes; the destructor closes too but cannot report errors.
  Status close();
  uint64_t recordCount() const { return Count; }

private:
  struct Impl;
  explicit RecordWriter(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
  uint64_t Count = 0;
};

/// Frames \p Record as one TFRecord (header, data, footer) appended to \p Out.
void appendFramedRecord(std::string &Out, std::string_view Record);

} // namespace fastnn::data

#endif // FASTNN_DATA_RECORDIO_H
