//===- ByteSource.h - Sequential byte sources for the record reader -------===//
//
// Private to fastnn_data. A source delivers bytes in order; the inflating
// source turns a GZIP/ZLIB stream back into the record stream.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DATA_BYTESOURCE_H
#define FASTNN_DATA_BYTESOURCE_H

#include "fastnn/data/RecordIO.h"

#include <cstdio>
#include <vector>
#include <zlib.h>

namespace fastnn::data {

class ByteSource {
public:
  virtual ~ByteSource() = default;
  /// Reads up to \p N bytes; \p Got < N means the end of the stream. A
  /// non-ok Status is a damaged stream (e.g. bad deflate data).
  virtual Status read(void *Dst, size_t N, size_t &Got) = 0;
};

class FileSource final : public ByteSource {
public:
  explicit FileSource(std::FILE *F) : F(F) {}
  ~FileSource() override { std::fclose(F); }
  Status read(void *Dst, size_t N, size_t &Got) override;

private:
  std::FILE *F;
};

class MemorySource final : public ByteSource {
public:
  MemorySource(const void *Data, size_t Size)
      : P(static_cast<const unsigned char *>(Data)), Left(Size) {}
  Status read(void *Dst, size_t N, size_t &Got) override;

private:
  const unsigned char *P;
  size_t Left;
};

class InflateSource final : public ByteSource {
public:
  InflateSource(std::unique_ptr<ByteSource> Inner, Compression C);
  ~InflateSource() override;
  Status read(void *Dst, size_t N, size_t &Got) override;

private:
  std::unique_ptr<ByteSource> Inner;
  Compression Comp;
  z_stream Z{};
  std::vector<unsigned char> In;
  bool InnerEnd = false;
  bool StreamEnd = false;
  bool Initialised = false;
};

} // namespace fastnn::data

#endif // FASTNN_DATA_BYTESOURCE_H
