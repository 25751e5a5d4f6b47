//===- RecordShardingTest.cpp - Record indexes and record-level shards ----===//

#include "TestUtil.h"

#include "fastnn/data/Pipeline.h"
#include "fastnn/data/RecordIndex.h"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <numeric>
#include <set>
#include <sys/stat.h>

using namespace fastnn::data;
using namespace fastnn::data::test;

namespace {

/// Files with the given record counts; labels number the records across
/// all files, in file order.
std::vector<std::string> makeFiles(const TempDir &D,
                                   const std::vector<int> &Counts,
                                   Compression C = Compression::None) {
  std::vector<std::string> Files;
  int Label = 0;
  for (size_t F = 0; F < Counts.size(); ++F) {
    std::vector<std::string> Recs;
    for (int R = 0; R < Counts[F]; ++R)
      Recs.push_back(pngRecord(Label++));
    Files.push_back(D.file("f" + std::to_string(F) + ".tfrecord"));
    writeRecords(Files.back(), Recs, C);
  }
  return Files;
}

/// One file of 1000 records and nine of 10.
std::vector<int> skewedCounts() {
  std::vector<int> Counts(10, 10);
  Counts[0] = 1000;
  return Counts;
}

PipelineOptions recordOptions(const std::vector<std::string> &Files) {
  PipelineOptions O;
  EXPECT_TRUE(builtinDatasetSpec("mnist", O.Spec));
  O.Spec.Height = O.Spec.Width = 8;
  O.Spec.NumClasses = 0; // Labels are record numbers here.
  O.Files = Files;
  O.Sharding = ShardBy::Record;
  O.BatchSize = 4;
  O.DropRemainder = false;
  O.ShuffleBufferSize = 0;
  O.ShuffleFiles = false;
  O.Seed = 7;
  return O;
}

std::vector<int32_t> drainLabels(const PipelineOptions &O,
                                 PipelineStats *Stats = nullptr) {
  Status S;
  auto P = Pipeline::create(O, S);
  EXPECT_TRUE(P) << S.message();
  std::vector<int32_t> Labels;
  if (!P)
    return Labels;
  for (;;) {
    BatchView V;
    S = P->acquire(V);
    EXPECT_TRUE(S.ok()) << S.message();
    if (!S.ok() || V.Size == 0)
      break;
    Labels.insert(Labels.end(), V.Labels, V.Labels + V.Size);
    P->release(V);
  }
  if (Stats)
    *Stats = P->stats();
  return Labels;
}

/// Offsets of the records of an intact file of records \p Sizes long.
std::vector<uint64_t> framedOffsets(const std::string &Path) {
  std::vector<std::string> Recs;
  EXPECT_TRUE(readAll(Path, Recs).ok());
  std::vector<uint64_t> Offsets;
  uint64_t At = 0;
  for (const std::string &R : Recs) {
    Offsets.push_back(At);
    At += 16 + R.size();
  }
  return Offsets;
}

void flipByte(const std::string &Path, uint64_t At) {
  std::string Bytes = readFile(Path);
  ASSERT_LT(At, Bytes.size());
  Bytes[At] ^= 0x40;
  writeFile(Path, Bytes);
}

} // namespace

TEST(RecordIndex, BuiltOnceSavedBesideTheDataAndTrusted) {
  TempDir D;
  auto Files = makeFiles(D, {5});
  RecordIndex I;
  std::string Notice;
  bool Built = false;
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  EXPECT_TRUE(Built);
  EXPECT_EQ(Notice, "");
  EXPECT_TRUE(std::filesystem::exists(recordIndexPath(Files[0])));
  EXPECT_EQ(I.Offsets, framedOffsets(Files[0]));
  EXPECT_TRUE(I.Damaged.empty());

  RecordIndex Again;
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, Again, Notice, Built).ok());
  EXPECT_FALSE(Built);
  EXPECT_EQ(Notice, "");
  EXPECT_EQ(Again.Offsets, I.Offsets);
  EXPECT_EQ(Again.FileSize, std::filesystem::file_size(Files[0]));
  EXPECT_TRUE(isRecordIndexFile(recordIndexPath(Files[0])));
  EXPECT_FALSE(isRecordIndexFile(Files[0]));
}

TEST(RecordIndex, AStaleIndexIsRebuilt) {
  TempDir D;
  auto Files = makeFiles(D, {5});
  RecordIndex I;
  std::string Notice;
  bool Built = false;
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());

  // Rewritten with more records: another size.
  writeRecords(Files[0], {pngRecord(0), pngRecord(1), pngRecord(2),
                          pngRecord(3), pngRecord(4), pngRecord(5)});
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  EXPECT_TRUE(Built);
  EXPECT_NE(Notice.find("stale"), std::string::npos) << Notice;
  EXPECT_EQ(I.Offsets.size(), 6u);

  // The same size, another modification time.
  struct timespec Times[2] = {{0, UTIME_OMIT}, {12345, 678}};
  ASSERT_EQ(utimensat(AT_FDCWD, Files[0].c_str(), Times, 0), 0);
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  EXPECT_TRUE(Built);
  EXPECT_NE(Notice.find("stale"), std::string::npos) << Notice;
  EXPECT_EQ(I.MtimeNs, int64_t(12345) * 1000000000 + 678);
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  EXPECT_FALSE(Built);

  // Another record size limit decides damage differently.
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 21, I, Notice, Built).ok());
  EXPECT_TRUE(Built);
  EXPECT_NE(Notice.find("stale"), std::string::npos) << Notice;
}

TEST(RecordIndex, ADamagedIndexIsRebuiltNeverTrusted) {
  TempDir D;
  auto Files = makeFiles(D, {5});
  const std::string Index = recordIndexPath(Files[0]);
  RecordIndex I;
  std::string Notice;
  bool Built = false;
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  const std::vector<uint64_t> Offsets = I.Offsets;

  flipByte(Index, std::filesystem::file_size(Index) - 12); // An offset.
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  EXPECT_TRUE(Built);
  EXPECT_NE(Notice.find("damaged (checksum mismatch)"), std::string::npos)
      << Notice;
  EXPECT_EQ(I.Offsets, Offsets);

  std::string Bytes = readFile(Index);
  writeFile(Index, Bytes.substr(0, Bytes.size() - 9));
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  EXPECT_NE(Notice.find("damaged (truncated)"), std::string::npos) << Notice;
  EXPECT_EQ(I.Offsets, Offsets);

  writeFile(Index, "not an index at all, but long enough to hold a header");
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  EXPECT_NE(Notice.find("damaged (not an index)"), std::string::npos) << Notice;
  EXPECT_EQ(I.Offsets, Offsets);
}

TEST(RecordIndex, AnIndexThatCannotBeSavedIsKeptInMemory) {
  TempDir D;
  auto Files = makeFiles(D, {5});
  // A directory where the index would go: unreadable and unwritable as a
  // file, even for root (whom a read-only directory does not stop).
  std::filesystem::create_directory(recordIndexPath(Files[0]));
  RecordIndex I;
  std::string Notice;
  bool Built = false;
  ASSERT_TRUE(loadRecordIndex(Files[0], 1 << 20, I, Notice, Built).ok());
  EXPECT_TRUE(Built);
  EXPECT_NE(Notice.find("kept in memory for this run"), std::string::npos)
      << Notice;
  EXPECT_EQ(I.Offsets.size(), 5u);

  PipelineOptions O = recordOptions(Files);
  std::vector<int32_t> Labels = drainLabels(O);
  EXPECT_EQ(Labels, std::vector<int32_t>({0, 1, 2, 3, 4}));
}

TEST(RecordIndex, ListsTheDamagedRecordsTheReaderWouldDrop) {
  TempDir D;
  auto Files = makeFiles(D, {5});
  const std::vector<uint64_t> Offsets = framedOffsets(Files[0]);
  flipByte(Files[0], Offsets[2] + 12 + 3); // Record 2's data: its CRC fails.
  RecordIndex I;
  ASSERT_TRUE(buildRecordIndex(Files[0], 1 << 20, I).ok());
  EXPECT_EQ(I.Offsets, std::vector<uint64_t>(
                           {Offsets[0], Offsets[1], Offsets[3], Offsets[4]}));
  EXPECT_EQ(I.Damaged, std::vector<uint64_t>({Offsets[2]}));
  EXPECT_EQ(I.span(1), Offsets[2] - Offsets[1]);

  // A lost framing ends the file: nothing after it is indexed.
  flipByte(Files[0], Offsets[3] + 9); // Record 3's length CRC.
  ASSERT_TRUE(buildRecordIndex(Files[0], 1 << 20, I).ok());
  EXPECT_EQ(I.Offsets, std::vector<uint64_t>({Offsets[0], Offsets[1]}));
  EXPECT_EQ(I.Damaged, std::vector<uint64_t>({Offsets[2], Offsets[3]}));
}

TEST(RecordSharding, SkewedFilesGiveEveryWorkerTheSameShareWithinOne) {
  TempDir D;
  auto Files = makeFiles(D, skewedCounts());
  const int Total = 1090;
  for (bool Shuffled : {false, true})
    for (int K : {2, 3, 4}) {
      std::set<int32_t> Seen;
      size_t Least = SIZE_MAX, Most = 0;
      for (int R = 0; R < K; ++R) {
        PipelineOptions O = recordOptions(Files);
        O.WorldSize = K;
        O.Rank = R;
        O.ShuffleBufferSize = Shuffled ? 64 : 0;
        PipelineStats Stats;
        std::vector<int32_t> Labels = drainLabels(O, &Stats);
        // It reads its records only, not the others'.
        EXPECT_EQ(Stats.RecordsRead, Labels.size());
        Least = std::min(Least, Labels.size());
        Most = std::max(Most, Labels.size());
        for (int32_t L : Labels)
          EXPECT_TRUE(Seen.insert(L).second)
              << "record " << L << " read twice, K=" << K;
      }
      EXPECT_LE(Most - Least, 1u) << "K=" << K;
      EXPECT_EQ(Seen.size(), size_t(Total)) << "K=" << K;
    }
}

TEST(RecordSharding, FileShardingStaysAvailable) {
  TempDir D;
  auto Files = makeFiles(D, skewedCounts());
  PipelineOptions O = recordOptions(Files);
  O.Sharding = ShardBy::File;
  O.WorldSize = 2;
  O.Rank = 0;
  // Files 0, 2, 4, 6, 8: the big one and four small.
  EXPECT_EQ(drainLabels(O).size(), 1040u);
  EXPECT_FALSE(std::filesystem::exists(recordIndexPath(Files[0])));
}

TEST(RecordSharding, TheWorkersDealOutTheOneProcessOrder) {
  TempDir D;
  auto Files = makeFiles(D, {30, 7, 13});
  for (bool Shuffled : {false, true}) {
    PipelineOptions O = recordOptions(Files);
    O.ShuffleBufferSize = Shuffled ? 64 : 0;
    O.ShuffleFiles = true;
    std::vector<int32_t> One = drainLabels(O);
    ASSERT_EQ(One.size(), 50u);
    O.WorldSize = 2;
    for (int R = 0; R < 2; ++R) {
      O.Rank = R;
      std::vector<int32_t> Mine = drainLabels(O), Expected;
      for (size_t P = R; P < One.size(); P += 2)
        Expected.push_back(One[P]);
      EXPECT_EQ(Mine, Expected) << "rank " << R << " shuffled " << Shuffled;
    }
  }
}

TEST(RecordSharding, AGlobalShuffleHoldsEveryRecordOncePerEpoch) {
  TempDir D;
  auto Files = makeFiles(D, {40, 3, 17});
  PipelineOptions O = recordOptions(Files);
  O.ShuffleBufferSize = 2;
  O.NumEpochs = 3;
  std::vector<int32_t> All = drainLabels(O);
  ASSERT_EQ(All.size(), 180u);
  std::vector<int32_t> Sorted(60);
  std::iota(Sorted.begin(), Sorted.end(), 0);
  std::vector<std::vector<int32_t>> Epochs;
  for (int E = 0; E < 3; ++E) {
    Epochs.emplace_back(All.begin() + E * 60, All.begin() + (E + 1) * 60);
    std::vector<int32_t> Epoch = Epochs.back();
    std::sort(Epoch.begin(), Epoch.end());
    EXPECT_EQ(Epoch, Sorted) << "epoch " << E;
  }
  EXPECT_NE(Epochs[0], Epochs[1]);
  EXPECT_NE(Epochs[0], Sorted);
  // Records of the big file do not come in a block, as a buffer shuffle's
  // first ones would.
  EXPECT_LT(std::count_if(All.begin(), All.begin() + 20,
                          [](int32_t L) { return L < 40; }),
            20);
  EXPECT_EQ(drainLabels(O), All); // The seed decides the order.
  O.Seed = 8;
  EXPECT_NE(drainLabels(O), All);
}

TEST(RecordSharding, AResumedStreamStartsAtTheExactRecordUnread) {
  TempDir D;
  auto Files = makeFiles(D, {50, 9, 41});
  PipelineOptions O = recordOptions(Files);
  O.ShuffleBufferSize = 64;
  O.NumEpochs = 2;
  O.WorldSize = 2;
  O.Rank = 1;
  O.DropRemainder = true;
  std::vector<int32_t> All = drainLabels(O);
  ASSERT_EQ(All.size(), 100u); // 50 an epoch: 12 full batches and 2 left.
  // Inside the first epoch, in the second, at its end and past it.
  for (uint64_t Start : {3u, 15u, 25u, 30u}) {
    O.StartBatch = Start;
    PipelineStats Stats;
    std::vector<int32_t> Tail = drainLabels(O, &Stats);
    // With drop_remainder each epoch's stream stays whole across epochs:
    // positions run on; only the last partial batch is dropped.
    const size_t First = std::min<size_t>(Start * 4, All.size());
    const size_t Kept = (All.size() - First) / 4 * 4;
    EXPECT_EQ(Tail, std::vector<int32_t>(All.begin() + First,
                                         All.begin() + First + Kept))
        << "start " << Start;
    // Nothing before the start position was read.
    EXPECT_LE(Stats.RecordsRead, 100 - std::min<uint64_t>(First, 100))
        << "start " << Start;
  }
}

TEST(RecordSharding, CachingGivesTheSameStream) {
  TempDir D;
  auto Files = makeFiles(D, {20, 5});
  PipelineOptions O = recordOptions(Files);
  O.ShuffleBufferSize = 64;
  O.NumEpochs = 3;
  O.WorldSize = 2;
  std::vector<int32_t> Plain = drainLabels(O);
  O.UseCaching = true;
  EXPECT_EQ(drainLabels(O), Plain);
}

TEST(RecordSharding, ADamagedRecordIsCountedOnceByOneWorker) {
  TempDir D;
  auto Files = makeFiles(D, {12, 8});
  const std::vector<uint64_t> Offsets = framedOffsets(Files[0]);
  flipByte(Files[0], Offsets[5] + 12 + 3);
  uint64_t Skipped = 0;
  size_t Records = 0;
  for (int R = 0; R < 2; ++R) {
    PipelineOptions O = recordOptions(Files);
    O.WorldSize = 2;
    O.Rank = R;
    O.NumEpochs = 2;
    O.SkipCorruptRecords = 1;
    PipelineStats Stats;
    Records += drainLabels(O, &Stats).size();
    Skipped += Stats.CorruptRecordsSkipped;
  }
  EXPECT_EQ(Skipped, 1u);
  EXPECT_EQ(Records, 2u * 19);

  // Without skipping, the worker that meets it fails at its first batch
  // with the reader's message; the other reads on.
  int Failed = 0;
  for (int R = 0; R < 2; ++R) {
    PipelineOptions O = recordOptions(Files);
    O.WorldSize = 2;
    O.Rank = R;
    Status S;
    auto P = Pipeline::create(O, S);
    ASSERT_TRUE(P) << S.message();
    BatchView V;
    S = P->acquire(V);
    if (!S.ok()) {
      ++Failed;
      EXPECT_NE(S.message().find("f0.tfrecord: byte offset " +
                                 std::to_string(Offsets[5]) +
                                 ": corrupt record: data CRC mismatch"),
                std::string::npos)
          << S.message();
    } else {
      P->release(V);
    }
  }
  EXPECT_EQ(Failed, 1);
}

TEST(RecordSharding, CompressedFilesShardByFileWithANotice) {
  TempDir D;
  auto Files = makeFiles(D, {6, 6}, Compression::Gzip);
  PipelineOptions O = recordOptions(Files);
  O.WorldSize = 2;
  Status S;
  auto P = Pipeline::create(O, S);
  ASSERT_TRUE(P) << S.message();
  EXPECT_FALSE(P->shardsByRecord());
  ASSERT_EQ(P->notices().size(), 1u);
  EXPECT_NE(P->notices()[0].find("gzip-compressed"), std::string::npos)
      << P->notices()[0];
  P.reset();
  EXPECT_EQ(drainLabels(O), std::vector<int32_t>({0, 1, 2, 3, 4, 5}));
}

TEST(RecordSharding, IndexesAreBuiltOnceAndCounted) {
  TempDir D;
  auto Files = makeFiles(D, {7, 3});
  PipelineOptions O = recordOptions(Files);
  Status S;
  auto P = Pipeline::create(O, S);
  ASSERT_TRUE(P) << S.message();
  EXPECT_TRUE(P->shardsByRecord());
  EXPECT_EQ(P->recordsPerEpoch(), 10u);
  ASSERT_EQ(P->notices().size(), 1u);
  EXPECT_NE(P->notices()[0].find("indexed the records of 2 of 2 files"),
            std::string::npos)
      << P->notices()[0];
  P.reset();
  P = Pipeline::create(O, S);
  ASSERT_TRUE(P) << S.message();
  EXPECT_TRUE(P->notices().empty());
}
