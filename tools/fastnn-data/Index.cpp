//===- Index.cpp - fastnn-data index --------------------------------------===//
//
// Builds the record index (FILE.fnnidx, see fastnn/data/RecordIndex.h) of
// each file ahead of a run that shards by record, or checks that it is up
// to date; train.bin otherwise builds missing ones itself at its start.
//
//===----------------------------------------------------------------------===//

#include "Tool.h"

#include "fastnn/data/Pipeline.h"
#include "fastnn/data/RecordIO.h"
#include "fastnn/data/RecordIndex.h"

#include <chrono>
#include <cstdio>

namespace fastnn::tool {
using data::Status;

int runIndex(const Args &A) {
  if (Status S = A.check({"force", "max-record-bytes"}); !S.ok()) {
    std::fprintf(stderr, "fastnn-data index: %s\n", S.message().c_str());
    return 2;
  }
  if (A.Positional.empty()) {
    std::fprintf(stderr, "fastnn-data index: name the TFRecord files\n");
    return 2;
  }
  int64_t MaxRecordBytes = 0;
  if (Status S = A.getInt("max-record-bytes",
                          int64_t(data::PipelineOptions().MaxRecordBytes), 1,
                          INT64_MAX, MaxRecordBytes);
      !S.ok()) {
    std::fprintf(stderr, "fastnn-data index: %s\n", S.message().c_str());
    return 2;
  }
  const bool Force = A.has("force");
  int Failed = 0;
  for (const std::string &Path : A.Positional) {
    auto fail = [&](const std::string &Message) {
      std::fprintf(stderr, "fastnn-data index: %s\n", Message.c_str());
      ++Failed;
    };
    // A glob over a directory of indexed files names the indexes too.
    if (data::isRecordIndexFile(Path)) {
      std::printf("%s: a record index, skipped\n", Path.c_str());
      continue;
    }
    data::Compression Comp;
    if (Status S = data::detectCompression(Path, Comp); !S.ok()) {
      fail(S.message());
      continue;
    }
    if (Comp != data::Compression::None) {
      fail(Path + ": " + data::compressionName(Comp) +
           "-compressed: records cannot be read by offset, so there is no "
           "index (shard_by=record shards such files by file)");
      continue;
    }
    const std::string IndexPath = data::recordIndexPath(Path);
    data::RecordIndex Index;
    std::string Why;
    const data::IndexState State = data::readRecordIndex(
        Path, IndexPath, static_cast<uint64_t>(MaxRecordBytes), Index, Why);
    const char *What = "up to date";
    double Seconds = 0;
    if (Force || State != data::IndexState::Fresh) {
      auto Begin = std::chrono::steady_clock::now();
      if (Status S = data::buildRecordIndex(
              Path, static_cast<uint64_t>(MaxRecordBytes), Index);
          !S.ok()) {
        fail(S.message());
        continue;
      }
      if (Status S = data::writeRecordIndex(IndexPath, Index); !S.ok()) {
        fail(S.message());
        continue;
      }
      Seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              Begin)
                    .count();
      What = State == data::IndexState::Stale     ? "rebuilt (was stale)"
             : State == data::IndexState::Damaged ? "rebuilt (was damaged)"
             : State == data::IndexState::Missing ? "built"
                                                  : "rebuilt";
    }
    std::printf("%s: %zu records", Path.c_str(), Index.Offsets.size());
    if (!Index.Damaged.empty())
      std::printf(", %zu damaged (skip_corrupt_records skips them)",
                  Index.Damaged.size());
    std::printf(", index %s %s", IndexPath.c_str(), What);
    if (Seconds > 0)
      std::printf(" in %.3f s", Seconds);
    std::printf("\n");
  }
  return Failed ? 1 : 0;
}

} // namespace fastnn::tool
