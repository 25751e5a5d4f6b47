//===- RecordIndex.cpp - Per-file record offsets, cached beside the data --===//

#include "fastnn/data/RecordIndex.h"
#include "fastnn/data/Crc32c.h"
#include "fastnn/data/RecordIO.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace fastnn::data {
namespace {

constexpr char Magic[8] = {'F', 'N', 'N', 'R', 'I', 'D', 'X', '\0'};
constexpr uint32_t Version = 1;
constexpr size_t HeaderBytes = 8 + 4 + 4 + 8 * 5;

void put64(std::string &Out, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    Out.push_back(static_cast<char>(V >> (8 * I)));
}
void put32(std::string &Out, uint32_t V) {
  for (int I = 0; I < 4; ++I)
    Out.push_back(static_cast<char>(V >> (8 * I)));
}
uint64_t get64(const std::string &In, size_t At) {
  uint64_t V = 0;
  for (int I = 7; I >= 0; --I)
    V = V << 8 | static_cast<unsigned char>(In[At + I]);
  return V;
}
uint32_t get32(const std::string &In, size_t At) {
  uint32_t V = 0;
  for (int I = 3; I >= 0; --I)
    V = V << 8 | static_cast<unsigned char>(In[At + I]);
  return V;
}

Status statFile(const std::string &Path, uint64_t &Size, int64_t &MtimeNs) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0)
    return Status::error(Path + ": " + std::strerror(errno));
  Size = static_cast<uint64_t>(St.st_size);
  MtimeNs =
      static_cast<int64_t>(St.st_mtim.tv_sec) * 1000000000 + St.st_mtim.tv_nsec;
  return Status::success();
}

} // namespace

uint64_t RecordIndex::span(size_t I) const {
  uint64_t End = I + 1 < Offsets.size() ? Offsets[I + 1] : FileSize;
  for (uint64_t D : Damaged)
    if (D > Offsets[I] && D < End)
      End = D;
  return End - Offsets[I];
}

std::string recordIndexPath(const std::string &DataPath) {
  return DataPath + ".fnnidx";
}

bool isRecordIndexFile(const std::string &Name) {
  // Also the temporary files of an index being written.
  return Name.find(".fnnidx") != std::string::npos;
}

Status buildRecordIndex(const std::string &Path, uint64_t MaxRecordBytes,
                        RecordIndex &Out) {
  Out = RecordIndex();
  Out.MaxRecordBytes = MaxRecordBytes;
  if (Status S = statFile(Path, Out.FileSize, Out.MtimeNs); !S.ok())
    return S;
  RecordReaderOptions Options;
  Options.MaxRecordBytes = MaxRecordBytes;
  Status Err;
  std::unique_ptr<RecordReader> Reader = RecordReader::open(Path, Options, Err);
  if (!Reader)
    return Err;
  std::string Record;
  for (;;) {
    const uint64_t At = Reader->offset();
    RecordReader::Result R = Reader->next(Record, Err);
    if (R == RecordReader::Result::End)
      break;
    if (R == RecordReader::Result::Record) {
      Out.Offsets.push_back(At);
      continue;
    }
    Out.Damaged.push_back(At);
    if (!Reader->canContinue())
      break;
  }
  // A file rewritten while it was scanned would leave a wrong index behind.
  uint64_t Size = 0;
  int64_t MtimeNs = 0;
  if (Status S = statFile(Path, Size, MtimeNs); !S.ok())
    return S;
  if (Size != Out.FileSize || MtimeNs != Out.MtimeNs)
    return Status::error(Path + ": changed while it was being indexed");
  return Status::success();
}

IndexState readRecordIndex(const std::string &DataPath,
                           const std::string &IndexPath,
                           uint64_t MaxRecordBytes, RecordIndex &Out,
                           std::string &Why) {
  Out = RecordIndex();
  std::FILE *F = std::fopen(IndexPath.c_str(), "rb");
  if (!F) {
    Why = std::strerror(errno);
    return errno == ENOENT ? IndexState::Missing : IndexState::Damaged;
  }
  std::string Bytes;
  char Buf[1 << 16];
  size_t Got;
  while ((Got = std::fread(Buf, 1, sizeof(Buf), F)) > 0)
    Bytes.append(Buf, Got);
  const bool ReadError = std::ferror(F);
  std::fclose(F);
  if (ReadError) {
    Why = "read error";
    return IndexState::Damaged;
  }
  if (Bytes.size() < HeaderBytes + 4 || Bytes.compare(0, 8, Magic, 8) != 0) {
    Why = "not an index";
    return IndexState::Damaged;
  }
  if (get32(Bytes, 8) != Version) {
    Why = "format version " + std::to_string(get32(Bytes, 8)) + ", not " +
          std::to_string(Version);
    return IndexState::Damaged;
  }
  const uint64_t Records = get64(Bytes, 40), Damaged = get64(Bytes, 48);
  if (Records > Bytes.size() / 8 || Damaged > Bytes.size() / 8 ||
      Bytes.size() != HeaderBytes + 8 * (Records + Damaged) + 4) {
    Why = "truncated";
    return IndexState::Damaged;
  }
  const size_t Body = Bytes.size() - 4;
  if (crc32c(Bytes.data(), Body) != get32(Bytes, Body)) {
    Why = "checksum mismatch";
    return IndexState::Damaged;
  }
  Out.FileSize = get64(Bytes, 16);
  Out.MtimeNs = static_cast<int64_t>(get64(Bytes, 24));
  Out.MaxRecordBytes = get64(Bytes, 32);
  uint64_t Size = 0;
  int64_t MtimeNs = 0;
  if (Status S = statFile(DataPath, Size, MtimeNs); !S.ok()) {
    Why = S.message();
    return IndexState::Stale;
  }
  if (Size != Out.FileSize || MtimeNs != Out.MtimeNs) {
    Why = "the file's size or modification time changed since it was built";
    return IndexState::Stale;
  }
  if (Out.MaxRecordBytes != MaxRecordBytes) {
    Why = "built with another record size limit";
    return IndexState::Stale;
  }
  Out.Offsets.resize(Records);
  Out.Damaged.resize(Damaged);
  for (uint64_t I = 0; I < Records; ++I)
    Out.Offsets[I] = get64(Bytes, HeaderBytes + 8 * I);
  for (uint64_t I = 0; I < Damaged; ++I)
    Out.Damaged[I] = get64(Bytes, HeaderBytes + 8 * (Records + I));
  for (size_t I = 1; I < Out.Offsets.size(); ++I)
    if (Out.Offsets[I] <= Out.Offsets[I - 1] ||
        Out.Offsets[I] >= Out.FileSize) {
      Why = "offsets out of order";
      return IndexState::Damaged;
    }
  return IndexState::Fresh;
}

Status writeRecordIndex(const std::string &IndexPath,
                        const RecordIndex &Index) {
  std::string Bytes(Magic, 8);
  put32(Bytes, Version);
  put32(Bytes, 0);
  put64(Bytes, Index.FileSize);
  put64(Bytes, static_cast<uint64_t>(Index.MtimeNs));
  put64(Bytes, Index.MaxRecordBytes);
  put64(Bytes, Index.Offsets.size());
  put64(Bytes, Index.Damaged.size());
  for (uint64_t O : Index.Offsets)
    put64(Bytes, O);
  for (uint64_t D : Index.Damaged)
    put64(Bytes, D);
  put32(Bytes, crc32c(Bytes.data(), Bytes.size()));
  // Workers of one host may build the same index at once: each writes its
  // own temporary file, and the last rename wins with identical bytes.
  const std::string Tmp =
      IndexPath + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  std::FILE *F = std::fopen(Tmp.c_str(), "wb");
  if (!F)
    return Status::error(IndexPath + ": cannot write: " + std::strerror(errno));
  const bool Written =
      std::fwrite(Bytes.data(), 1, Bytes.size(), F) == Bytes.size();
  const int WriteErrno = errno;
  if (std::fclose(F) != 0 || !Written) {
    std::remove(Tmp.c_str());
    return Status::error(IndexPath + ": cannot write: " +
                         std::strerror(Written ? errno : WriteErrno));
  }
  if (std::rename(Tmp.c_str(), IndexPath.c_str()) != 0) {
    const int E = errno;
    std::remove(Tmp.c_str());
    return Status::error(IndexPath + ": cannot write: " + std::strerror(E));
  }
  return Status::success();
}

Status loadRecordIndex(const std::string &DataPath, uint64_t MaxRecordBytes,
                       RecordIndex &Out, std::string &Notice, bool &Built) {
  Notice.clear();
  Built = false;
  const std::string IndexPath = recordIndexPath(DataPath);
  std::string Why;
  IndexState State =
      readRecordIndex(DataPath, IndexPath, MaxRecordBytes, Out, Why);
  if (State == IndexState::Fresh)
    return Status::success();
  if (State != IndexState::Missing)
    Notice = IndexPath + ": " +
             (State == IndexState::Stale ? "stale (" : "damaged (") + Why +
             "), rebuilt";
  if (Status S = buildRecordIndex(DataPath, MaxRecordBytes, Out); !S.ok())
    return S;
  Built = true;
  if (Status S = writeRecordIndex(IndexPath, Out); !S.ok())
    Notice = (Notice.empty() ? "" : Notice + "; ") + S.message() +
             ": the index is kept in memory for this run (run fastnn-data "
             "index where the directory is writable to save the scan)";
  return Status::success();
}

} // namespace fastnn::data
