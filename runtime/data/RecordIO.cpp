//===- RecordIO.cpp - TFRecord reader and writer --------------------------===//

#include "fastnn/data/RecordIO.h"
#include "ByteSource.h"
#include "fastnn/data/Crc32c.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fastnn::data {
namespace {

uint64_t loadLE64(const unsigned char *P) {
  uint64_t V = 0;
  for (int I = 7; I >= 0; --I)
    V = (V << 8) | P[I];
  return V;
}
uint32_t loadLE32(const unsigned char *P) {
  return uint32_t(P[0]) | uint32_t(P[1]) << 8 | uint32_t(P[2]) << 16 |
         uint32_t(P[3]) << 24;
}
void storeLE64(unsigned char *P, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    P[I] = static_cast<unsigned char>(V >> (8 * I));
}
void storeLE32(unsigned char *P, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    P[I] = static_cast<unsigned char>(V >> (8 * I));
}

// Compressed streams are read in steps of this size so that a corrupt length
// never makes us allocate more than the data actually present.
constexpr size_t GrowStep = size_t(1) << 20;
constexpr size_t IoBufferBytes = size_t(256) << 10;

} // namespace

//===----------------------------------------------------------------------===//
// Byte sources
//===----------------------------------------------------------------------===//

Status FileSource::read(void *Dst, size_t N, size_t &Got) {
  Got = std::fread(Dst, 1, N, F);
  if (Got < N && std::ferror(F))
    return Status::error(std::string("read failed: ") + std::strerror(errno));
  return Status::success();
}

Status MemorySource::read(void *Dst, size_t N, size_t &Got) {
  Got = std::min(N, Left);
  std::memcpy(Dst, P, Got);
  P += Got;
  Left -= Got;
  return Status::success();
}

InflateSource::InflateSource(std::unique_ptr<ByteSource> Inner, Compression C)
    : Inner(std::move(Inner)), Comp(C), In(IoBufferBytes) {
  // 16 + MAX_WBITS selects the gzip wrapper, MAX_WBITS the zlib one, as
  // TensorFlow's ZlibCompressionOptions do.
  int Bits = Comp == Compression::Gzip ? 16 + MAX_WBITS : MAX_WBITS;
  Initialised = inflateInit2(&Z, Bits) == Z_OK;
}

InflateSource::~InflateSource() {
  if (Initialised)
    inflateEnd(&Z);
}

Status InflateSource::read(void *Dst, size_t N, size_t &Got) {
  Got = 0;
  if (!Initialised)
    return Status::error("cannot initialise zlib");
  auto *Out = static_cast<unsigned char *>(Dst);
  while (Got < N && !StreamEnd) {
    if (Z.avail_in == 0 && !InnerEnd) {
      size_t Read = 0;
      Status S = Inner->read(In.data(), In.size(), Read);
      if (!S.ok())
        return S;
      InnerEnd = Read < In.size();
      Z.next_in = In.data();
      Z.avail_in = static_cast<uInt>(Read);
    }
    Z.next_out = Out + Got;
    Z.avail_out = static_cast<uInt>(std::min<size_t>(N - Got, 1u << 30));
    uInt Before = Z.avail_out;
    int Rc = inflate(&Z, Z_NO_FLUSH);
    Got += Before - Z.avail_out;
    if (Rc == Z_STREAM_END) {
      // Concatenated gzip members are one stream to gunzip and to us.
      if (Comp == Compression::Gzip && (Z.avail_in > 0 || !InnerEnd)) {
        inflateReset(&Z);
        continue;
      }
      StreamEnd = true;
      break;
    }
    if (Rc == Z_BUF_ERROR && Z.avail_in == 0 && InnerEnd)
      return Status::error("compressed stream is truncated");
    if (Rc != Z_OK && Rc != Z_BUF_ERROR)
      return Status::error(std::string("bad compressed data (") +
                           (Z.msg ? Z.msg : "zlib error") + ")");
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Compression names
//===----------------------------------------------------------------------===//

Status parseCompression(std::string_view Name, Compression &Out) {
  std::string L(Name);
  for (char &C : L)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  if (L.empty() || L == "none")
    Out = Compression::None;
  else if (L == "gzip")
    Out = Compression::Gzip;
  else if (L == "zlib")
    Out = Compression::Zlib;
  else
    return Status::error("unknown compression '" + std::string(Name) +
                         "' (expected none, gzip or zlib)");
  return Status::success();
}

const char *compressionName(Compression C) {
  switch (C) {
  case Compression::None:
    return "none";
  case Compression::Gzip:
    return "gzip";
  case Compression::Zlib:
    return "zlib";
  }
  return "?";
}

Status detectCompression(const std::string &Path, Compression &Out) {
  std::FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F)
    return Status::error(Path + ": cannot open: " + std::strerror(errno));
  unsigned char B[12];
  size_t N = std::fread(B, 1, sizeof(B), F);
  std::fclose(F);
  Out = Compression::None;
  if (N >= 2 && B[0] == 0x1f && B[1] == 0x8b)
    Out = Compression::Gzip;
  else if (N == 12 && maskCrc(crc32c(B, 8)) == loadLE32(B + 8))
    Out = Compression::None;
  else if (N >= 2 && (B[0] & 0x0f) == 8 && ((B[0] << 8) | B[1]) % 31 == 0)
    Out = Compression::Zlib;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// RecordReader
//===----------------------------------------------------------------------===//

RecordReader::RecordReader(std::string Name, std::unique_ptr<ByteSource> Source,
                           const RecordReaderOptions &Options,
                           uint64_t FileSize)
    : Name(std::move(Name)), Source(std::move(Source)), Options(Options),
      FileSize(FileSize) {}

RecordReader::~RecordReader() = default;

std::unique_ptr<RecordReader>
RecordReader::open(const std::string &Path, const RecordReaderOptions &Options,
                   Status &Err) {
  std::FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F) {
    Err = Status::error(Path + ": cannot open: " + std::strerror(errno));
    return nullptr;
  }
  struct stat St;
  uint64_t Size = 0;
  if (fstat(fileno(F), &St) == 0 && S_ISREG(St.st_mode))
    Size = static_cast<uint64_t>(St.st_size);
  std::setvbuf(F, nullptr, _IOFBF, IoBufferBytes);
  std::unique_ptr<ByteSource> Src = std::make_unique<FileSource>(F);
  if (Options.Comp != Compression::None) {
    Src = std::make_unique<InflateSource>(std::move(Src), Options.Comp);
    Size = 0;
  }
  Err = Status::success();
  return std::unique_ptr<RecordReader>(
      new RecordReader(Path, std::move(Src), Options, Size));
}

std::unique_ptr<RecordReader>
RecordReader::openMemory(const std::string &Name, const void *Data, size_t Size,
                         const RecordReaderOptions &Options) {
  std::unique_ptr<ByteSource> Src = std::make_unique<MemorySource>(Data, Size);
  uint64_t Known = Size;
  if (Options.Comp != Compression::None) {
    Src = std::make_unique<InflateSource>(std::move(Src), Options.Comp);
    Known = 0;
  }
  return std::unique_ptr<RecordReader>(
      new RecordReader(Name, std::move(Src), Options, Known));
}

RecordReader::Result RecordReader::corrupt(Status &Err, uint64_t At,
                                           const std::string &What,
                                           bool Resume) {
  const char *Where = FileSize || Options.Comp == Compression::None
                          ? "byte offset "
                          : "uncompressed byte offset ";
  Err = Status::error(Name + ": " + Where + std::to_string(At) +
                      ": corrupt record: " + What);
  Resumable = Resume;
  Dead = !Resume;
  return Result::Corrupt;
}

RecordReader::Result RecordReader::next(std::string &Record, Status &Err) {
  if (Dead)
    return Result::End;
  Resumable = false;
  const uint64_t Start = Offset;
  unsigned char Header[12];
  size_t Got = 0;
  Status S = Source->read(Header, sizeof(Header), Got);
  if (!S.ok())
    return corrupt(Err, Start, S.message(), false);
  if (Got == 0)
    return Result::End;
  if (Got < sizeof(Header))
    return corrupt(Err, Start,
                   "truncated header (" + std::to_string(Got) + " of 12 bytes)",
                   false);
  uint64_t Length = loadLE64(Header);
  if (maskCrc(crc32c(Header, 8)) != loadLE32(Header + 8))
    return corrupt(Err, Start, "length CRC mismatch", false);
  if (Length > Options.MaxRecordBytes)
    return corrupt(Err, Start,
                   "length " + std::to_string(Length) + " exceeds the limit " +
                       std::to_string(Options.MaxRecordBytes),
                   false);
  if (FileSize) {
    uint64_t Left = FileSize - std::min(FileSize, Start + 12);
    if (Length + 4 > Left)
      return corrupt(Err, Start,
                     "length " + std::to_string(Length) +
                         " runs past the end of the file (" +
                         std::to_string(Left) + " bytes left)",
                     false);
  }

  // Known-good lengths are read in one go; otherwise grow as data arrives.
  Record.clear();
  uint64_t Have = 0;
  while (Have < Length) {
    uint64_t Step =
        FileSize ? Length - Have : std::min<uint64_t>(Length - Have, GrowStep);
    Record.resize(Have + Step);
    S = Source->read(&Record[Have], Step, Got);
    Have += Got;
    if (!S.ok())
      return corrupt(Err, Start, S.message(), false);
    if (Got < Step)
      return corrupt(Err, Start,
                     "truncated data (" + std::to_string(Have) + " of " +
                         std::to_string(Length) + " bytes)",
                     false);
  }
  unsigned char Footer[4];
  S = Source->read(Footer, sizeof(Footer), Got);
  if (!S.ok())
    return corrupt(Err, Start, S.message(), false);
  if (Got < sizeof(Footer))
    return corrupt(Err, Start, "truncated data CRC", false);
  Offset = Start + 12 + Length + 4;
  if (maskCrc(crc32c(Record.data(), Record.size())) != loadLE32(Footer))
    return corrupt(Err, Start, "data CRC mismatch", true);
  return Result::Record;
}

//===----------------------------------------------------------------------===//
// RecordFile
//===----------------------------------------------------------------------===//

std::unique_ptr<RecordFile> RecordFile::open(const std::string &Path,
                                             uint64_t MaxRecordBytes,
                                             Status &Err) {
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0) {
    Err = Status::error(Path + ": cannot open: " + std::strerror(errno));
    return nullptr;
  }
  struct stat St;
  if (fstat(Fd, &St) != 0 || !S_ISREG(St.st_mode)) {
    Err = Status::error(Path + ": not a regular file");
    ::close(Fd);
    return nullptr;
  }
  Err = Status::success();
  return std::unique_ptr<RecordFile>(new RecordFile(
      Path, Fd, static_cast<uint64_t>(St.st_size), MaxRecordBytes));
}

RecordFile::~RecordFile() { ::close(Fd); }

Status RecordFile::readFully(uint64_t At, void *Dst, size_t N, size_t &Got) {
  Got = 0;
  while (Got < N) {
    ssize_t R = ::pread(Fd, static_cast<char *>(Dst) + Got, N - Got,
                        static_cast<off_t>(At + Got));
    if (R < 0 && errno == EINTR)
      continue;
    if (R < 0)
      return Status::error(Name + ": byte offset " + std::to_string(At) + ": " +
                           std::strerror(errno));
    if (R == 0)
      break;
    Got += static_cast<size_t>(R);
  }
  return Status::success();
}

RecordReader::Result RecordFile::readAt(uint64_t Offset, uint64_t Span,
                                        std::string &Record, Status &Err) {
  auto corrupt = [&](const std::string &What) {
    Err = Status::error(Name + ": byte offset " + std::to_string(Offset) +
                        ": corrupt record: " + What);
    return RecordReader::Result::Corrupt;
  };
  const uint64_t Left = FileSize - std::min(FileSize, Offset);
  if (Left < 12)
    return corrupt("truncated header (" + std::to_string(Left) +
                   " of 12 bytes)");
  // The header and, with a span, the data and footer in one read.
  const uint64_t First = std::min<uint64_t>(
      Left, std::max<uint64_t>(12, std::min(Span, MaxRecordBytes + 16)));
  Buffer.resize(First);
  size_t Got = 0;
  if (Status S = readFully(Offset, Buffer.data(), First, Got); !S.ok()) {
    Err = S;
    return RecordReader::Result::Corrupt;
  }
  if (Got < 12)
    return corrupt("truncated header (" + std::to_string(Got) +
                   " of 12 bytes)");
  const auto *Header = reinterpret_cast<const unsigned char *>(Buffer.data());
  const uint64_t Length = loadLE64(Header);
  if (maskCrc(crc32c(Header, 8)) != loadLE32(Header + 8))
    return corrupt("length CRC mismatch");
  if (Length > MaxRecordBytes)
    return corrupt("length " + std::to_string(Length) + " exceeds the limit " +
                   std::to_string(MaxRecordBytes));
  if (Length + 4 > Left - 12)
    return corrupt("length " + std::to_string(Length) +
                   " runs past the end of the file (" +
                   std::to_string(Left - 12) + " bytes left)");
  const uint64_t Framed = 12 + Length + 4;
  if (Got < Framed) {
    Buffer.resize(Framed);
    size_t More = 0;
    if (Status S = readFully(Offset + Got, &Buffer[Got], Framed - Got, More);
        !S.ok()) {
      Err = S;
      return RecordReader::Result::Corrupt;
    }
    if (Got + More < Framed)
      return corrupt("truncated data");
  }
  Record.assign(Buffer.data() + 12, Length);
  const auto *Footer =
      reinterpret_cast<const unsigned char *>(Buffer.data()) + 12 + Length;
  if (maskCrc(crc32c(Record.data(), Record.size())) != loadLE32(Footer))
    return corrupt("data CRC mismatch");
  return RecordReader::Result::Record;
}

//===----------------------------------------------------------------------===//
// RecordWriter
//===----------------------------------------------------------------------===//

void appendFramedRecord(std::string &Out, std::string_view Record) {
  unsigned char Header[12];
  storeLE64(Header, Record.size());
  storeLE32(Header + 8, maskCrc(crc32c(Header, 8)));
  unsigned char Footer[4];
  storeLE32(Footer, maskCrc(crc32c(Record.data(), Record.size())));
  Out.append(reinterpret_cast<const char *>(Header), sizeof(Header));
  Out.append(Record.data(), Record.size());
  Out.append(reinterpret_cast<const char *>(Footer), sizeof(Footer));
}

struct RecordWriter::Impl {
  std::string Path;
  std::FILE *F = nullptr;
  Compression Comp = Compression::None;
  z_stream Z{};
  bool ZInit = false;
  std::string Frame;
  std::vector<unsigned char> Out = std::vector<unsigned char>(IoBufferBytes);

  Status writeRaw(const void *Data, size_t N) {
    if (std::fwrite(Data, 1, N, F) != N)
      return Status::error(Path + ": write failed: " + std::strerror(errno));
    return Status::success();
  }
  Status deflateSome(const void *Data, size_t N, int Flush) {
    Z.next_in = static_cast<Bytef *>(const_cast<void *>(Data));
    Z.avail_in = static_cast<uInt>(N);
    do {
      Z.next_out = Out.data();
      Z.avail_out = static_cast<uInt>(Out.size());
      int Rc = deflate(&Z, Flush);
      if (Rc == Z_STREAM_ERROR)
        return Status::error(Path + ": deflate failed");
      Status S = writeRaw(Out.data(), Out.size() - Z.avail_out);
      if (!S.ok())
        return S;
    } while (Z.avail_out == 0);
    return Status::success();
  }
};

RecordWriter::RecordWriter(std::unique_ptr<Impl> I) : P(std::move(I)) {}

RecordWriter::~RecordWriter() { (void)close(); }

std::unique_ptr<RecordWriter>
RecordWriter::open(const std::string &Path, Compression Comp, Status &Err) {
  auto I = std::make_unique<Impl>();
  I->Path = Path;
  I->Comp = Comp;
  I->F = std::fopen(Path.c_str(), "wb");
  if (!I->F) {
    Err = Status::error(Path + ": cannot create: " + std::strerror(errno));
    return nullptr;
  }
  if (Comp != Compression::None) {
    int Bits = Comp == Compression::Gzip ? 16 + MAX_WBITS : MAX_WBITS;
    if (deflateInit2(&I->Z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, Bits, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      std::fclose(I->F);
      Err = Status::error(Path + ": cannot initialise zlib");
      return nullptr;
    }
    I->ZInit = true;
  }
  Err = Status::success();
  return std::unique_ptr<RecordWriter>(new RecordWriter(std::move(I)));
}

Status RecordWriter::write(std::string_view Record) {
  if (!P->F)
    return Status::error(P->Path + ": write after close");
  P->Frame.clear();
  appendFramedRecord(P->Frame, Record);
  ++Count;
  if (P->Comp == Compression::None)
    return P->writeRaw(P->Frame.data(), P->Frame.size());
  return P->deflateSome(P->Frame.data(), P->Frame.size(), Z_NO_FLUSH);
}

Status RecordWriter::flush() {
  if (!P->F)
    return Status::error(P->Path + ": flush after close");
  if (P->ZInit)
    if (Status S = P->deflateSome(nullptr, 0, Z_SYNC_FLUSH); !S.ok())
      return S;
  if (std::fflush(P->F) != 0)
    return Status::error(P->Path + ": write failed: " + std::strerror(errno));
  return Status::success();
}

Status RecordWriter::close() {
  if (!P || !P->F)
    return Status::success();
  Status S;
  if (P->ZInit) {
    S = P->deflateSome(nullptr, 0, Z_FINISH);
    deflateEnd(&P->Z);
    P->ZInit = false;
  }
  if (std::fclose(P->F) != 0 && S.ok())
    S = Status::error(P->Path + ": close failed: " + std::strerror(errno));
  P->F = nullptr;
  return S;
}

} // namespace fastnn::data
