//===- CorruptInputTest.cpp - Damaged files: clear errors, no crashes -----===//
//
// Also built with AddressSanitizer (label asan), where any out-of-bounds
// access or leak on these paths fails the run.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "fastnn/data/Crc32c.h"
#include "fastnn/data/Pipeline.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace fastnn::data;
using namespace fastnn::data::test;

namespace {

std::string framed(const std::vector<std::string> &Recs) {
  std::string Out;
  for (const auto &R : Recs)
    appendFramedRecord(Out, R);
  return Out;
}

/// Reads \p Bytes from memory; returns records read, the error if any.
size_t readMemory(const std::string &Bytes, Compression C, Status &Err,
                  bool Skip = false, size_t *Skipped = nullptr) {
  RecordReaderOptions O;
  O.Comp = C;
  auto R =
      RecordReader::openMemory("mem.tfrecord", Bytes.data(), Bytes.size(), O);
  std::string Rec;
  size_t N = 0;
  Err = Status::success();
  for (;;) {
    Status S;
    auto Res = R->next(Rec, S);
    if (Res == RecordReader::Result::End)
      return N;
    if (Res == RecordReader::Result::Corrupt) {
      Err = S;
      if (Skipped)
        ++*Skipped;
      if (Skip && R->canContinue())
        continue;
      return N;
    }
    ++N;
  }
}

} // namespace

TEST(CorruptInput, EmptyFileHasNoRecords) {
  Status S;
  EXPECT_EQ(readMemory("", Compression::None, S), 0u);
  EXPECT_TRUE(S.ok());
}

TEST(CorruptInput, EmptyCompressedFileIsAnError) {
  Status S;
  EXPECT_EQ(readMemory("", Compression::Gzip, S), 0u);
  EXPECT_FALSE(S.ok());
  EXPECT_NE(S.message().find("mem.tfrecord"), std::string::npos);
}

TEST(CorruptInput, TruncatedAtEveryOffset) {
  const std::vector<std::string> Recs = {"first record", "second",
                                         std::string(300, 'z')};
  std::string Full = framed(Recs);
  std::vector<size_t> Ends;
  size_t At = 0;
  for (const auto &R : Recs)
    Ends.push_back(At += 16 + R.size());
  for (size_t Cut = 0; Cut < Full.size(); ++Cut) {
    Status S;
    size_t N = readMemory(Full.substr(0, Cut), Compression::None, S);
    size_t Whole = 0;
    while (Whole < Ends.size() && Ends[Whole] <= Cut)
      ++Whole;
    EXPECT_EQ(N, Whole) << "cut at " << Cut;
    bool AtBoundary = Cut == 0 || (Whole > 0 && Ends[Whole - 1] == Cut);
    EXPECT_EQ(S.ok(), AtBoundary) << "cut at " << Cut << ": " << S.message();
    if (!S.ok()) {
      // The error names the file and the offset of the damaged record.
      size_t RecStart = Whole ? Ends[Whole - 1] : 0;
      EXPECT_NE(S.message().find("mem.tfrecord: byte offset " +
                                 std::to_string(RecStart) + ":"),
                std::string::npos)
          << S.message();
    }
  }
}

TEST(CorruptInput, TruncatedCompressedAtEveryOffset) {
  TempDir D;
  for (Compression C : {Compression::Gzip, Compression::Zlib}) {
    writeRecords(D.file("c"), {"first record", "second", "third"}, C);
    std::string Full = readFile(D.file("c"));
    for (size_t Cut = 0; Cut < Full.size(); ++Cut) {
      Status S;
      size_t N = readMemory(Full.substr(0, Cut), C, S);
      EXPECT_LE(N, 3u);
      EXPECT_FALSE(S.ok()) << "cut at " << Cut;
    }
  }
}

TEST(CorruptInput, FlippedBitsEverywhere) {
  std::string Full = framed({"payload one", "payload two"});
  for (size_t Byte = 0; Byte < Full.size(); ++Byte) {
    for (int Bit = 0; Bit < 8; Bit += 3) {
      std::string B = Full;
      B[Byte] = static_cast<char>(B[Byte] ^ (1 << Bit));
      Status S;
      size_t N = readMemory(B, Compression::None, S);
      // CRCs catch every single-bit flip.
      EXPECT_FALSE(S.ok()) << "byte " << Byte << " bit " << Bit;
      EXPECT_LT(N, 2u);
      const bool InFirst = Byte < 16 + 11;
      const bool InData =
          (Byte >= 12 && Byte < 23) || (Byte >= 27 + 12 && Byte < 27 + 23);
      const bool InDataCrc = (Byte >= 23 && Byte < 27) || Byte >= 27 + 23;
      std::string Expect =
          InData || InDataCrc ? "data CRC mismatch" : "length CRC mismatch";
      // A flipped length bit can also make the length run past the end,
      // which is caught by the length CRC first.
      EXPECT_NE(S.message().find(Expect), std::string::npos)
          << "byte " << Byte << ": " << S.message();
      EXPECT_NE(
          S.message().find(InFirst ? "byte offset 0:" : "byte offset 27:"),
          std::string::npos)
          << S.message();
    }
  }
}

TEST(CorruptInput, DataCrcErrorIsSkippable) {
  std::string B = framed({"one", "two", "three"});
  B[12 + 3 + 4 + 12] ^= 1; // First data byte of record two.
  Status S;
  size_t Skipped = 0;
  EXPECT_EQ(readMemory(B, Compression::None, S, /*Skip=*/true, &Skipped), 2u);
  EXPECT_EQ(Skipped, 1u);
  EXPECT_NE(S.message().find("byte offset 19: corrupt record: data CRC"),
            std::string::npos)
      << S.message();
}

TEST(CorruptInput, AbsurdLengthIsRejectedWithoutAllocating) {
  // A valid length CRC over a length of 2^60: must be refused, not
  // allocated; for compressed input the cap applies.
  std::string Hdr(8, '\0');
  uint64_t Len = uint64_t(1) << 60;
  std::memcpy(&Hdr[0], &Len, 8);
  uint32_t Crc = maskCrc(crc32c(Hdr.data(), 8));
  Hdr.append(reinterpret_cast<const char *>(&Crc), 4);
  Hdr += "tiny";
  Status S;
  EXPECT_EQ(readMemory(Hdr, Compression::None, S), 0u);
  EXPECT_NE(S.message().find("exceeds the limit"), std::string::npos)
      << S.message();

  // Within the cap but past the end of the file.
  Len = 1000;
  std::memcpy(&Hdr[0], &Len, 8);
  Crc = maskCrc(crc32c(Hdr.data(), 8));
  std::memcpy(&Hdr[8], &Crc, 4);
  EXPECT_EQ(readMemory(Hdr, Compression::None, S), 0u);
  EXPECT_NE(S.message().find("runs past the end of the file"),
            std::string::npos)
      << S.message();
}

TEST(CorruptInput, GarbageCompressedData) {
  std::string B = "\x1f\x8b\x08\x00garbage that is not deflate at all";
  Status S;
  EXPECT_EQ(readMemory(B, Compression::Gzip, S), 0u);
  EXPECT_FALSE(S.ok());
}

TEST(CorruptInput, UndecodableImage) {
  ImageDecoder Dec;
  std::vector<uint8_t> Px;
  int H, W;
  std::vector<uint8_t> Src = testPixels(16, 16, 3);
  std::string Jpeg, Png;
  ASSERT_TRUE(encodeJpeg(Src.data(), 16, 16, 3, 90, Jpeg).ok());
  ASSERT_TRUE(encodePng(Src.data(), 16, 16, 3, Png).ok());
  EXPECT_FALSE(Dec.decode("not an image", 12, 3, Px, H, W).ok());
  EXPECT_FALSE(Dec.decode("", 0, 3, Px, H, W).ok());
  // Every truncation of a JPEG and a PNG fails cleanly or decodes.
  for (const std::string *Img : {&Jpeg, &Png})
    for (size_t Cut = 0; Cut < Img->size(); ++Cut)
      (void)Dec.decode(Img->data(), Cut, 3, Px, H, W);
  std::string Bad = Jpeg.substr(0, Jpeg.size() / 2);
  Status S = Dec.decode(Bad.data(), Bad.size(), 3, Px, H, W);
  EXPECT_FALSE(S.ok());
  EXPECT_NE(S.message().find("JPEG"), std::string::npos);
}

TEST(CorruptInput, DamagedJpegCrops) {
  // Cropped decoding goes through libjpeg's own API: its errors and
  // warnings must come back as a Status (libjpeg's default handler calls
  // exit()), and the decoder must stay usable after them.
  const int H = 64, W = 48;
  std::vector<uint8_t> Src = photoPixels(H, W, 3), Px, Full;
  std::string Jpeg;
  ASSERT_TRUE(encodeJpeg(Src.data(), H, W, 3, 90, Jpeg).ok());
  ImageDecoder Dec;
  int FH, FW;
  ASSERT_TRUE(Dec.decode(Jpeg.data(), Jpeg.size(), 3, Full, FH, FW).ok());
  const PixelRect Crops[] = {
      {0, 0, H, W}, {0, 0, 8, 8}, {20, 17, 30, 20}, {H - 5, W - 9, 5, 9}};
  PixelView V;
  for (size_t Cut = 0; Cut < Jpeg.size(); Cut += 7)
    for (const PixelRect &R : Crops)
      (void)Dec.decodeCrop(Jpeg.data(), Cut, 3, R, Px, V);
  std::string Flipped = Jpeg;
  for (size_t I = 2; I < Flipped.size(); I += 3) {
    Flipped[I] ^= 0x10;
    for (const PixelRect &R : Crops)
      (void)Dec.decodeCrop(Flipped.data(), Flipped.size(), 3, R, Px, V);
    Flipped[I] ^= 0x10;
  }
  // Cut at two thirds: a crop of the top rows decodes (the damage lies
  // after its last row, which cropped decoding never reads), a crop that
  // reaches the damage fails with libjpeg's message.
  std::string Cut = Jpeg.substr(0, Jpeg.size() * 2 / 3);
  Status S = Dec.decodeCrop(Cut.data(), Cut.size(), 3, {0, 0, 8, W}, Px, V);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(0, std::memcmp(V.Data, Full.data(), 8 * W * 3));
  S = Dec.decodeCrop(Cut.data(), Cut.size(), 3, {H - 8, 0, 8, W}, Px, V);
  EXPECT_FALSE(S.ok());
  EXPECT_NE(S.message().find("undecodable JPEG: Premature end of JPEG file"),
            std::string::npos)
      << S.message();
  std::string Garbage = "\xff\xd8\xff\xe0 not really a JPEG";
  S = Dec.decodeCrop(Garbage.data(), Garbage.size(), 3, {0, 0, 1, 1}, Px, V);
  EXPECT_FALSE(S.ok());
  EXPECT_NE(S.message().find("undecodable JPEG"), std::string::npos)
      << S.message();
  ASSERT_TRUE(
      Dec.decodeCrop(Jpeg.data(), Jpeg.size(), 3, {0, 0, H, W}, Px, V).ok());
  EXPECT_EQ(Px, Full);
}

TEST(CorruptInput, PipelineReportsOffsetOfBadImage) {
  TempDir D;
  std::vector<std::string> Recs;
  for (int I = 0; I < 10; ++I)
    Recs.push_back(pngRecord(I % 3));
  Recs[5] = makeImageExample("definitely not a png", "png", 1, 8, 8);
  writeRecords(D.file("bad.tfrecord"), Recs);
  std::string Expected;
  for (int I = 0; I < 5; ++I)
    appendFramedRecord(Expected, Recs[I]);

  PipelineOptions O;
  ASSERT_TRUE(builtinDatasetSpec("mnist", O.Spec));
  O.Spec.Height = O.Spec.Width = 8;
  O.Files = {D.file("bad.tfrecord")};
  O.BatchSize = 2;
  O.ShuffleBufferSize = 0;
  O.DropRemainder = false;
  Status S;
  auto P = Pipeline::create(O, S);
  ASSERT_TRUE(P) << S.message();
  BatchView B;
  for (;;) {
    S = P->acquire(B);
    if (!S.ok() || B.Size == 0)
      break;
    P->release(B);
  }
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("bad.tfrecord: byte offset " +
                             std::to_string(Expected.size()) +
                             ": image is neither JPEG nor PNG"),
            std::string::npos)
      << S.message();

  // Skip mode: counted, and the batch is refilled with the next record.
  O.SkipCorruptRecords = 1;
  P = Pipeline::create(O, S);
  ASSERT_TRUE(P);
  int Total = 0;
  for (;;) {
    ASSERT_TRUE(P->acquire(B).ok());
    if (B.Size == 0)
      break;
    Total += B.Size;
    P->release(B);
  }
  EXPECT_EQ(Total, 9); // The 9 good records; the last partial batch kept.
  EXPECT_EQ(P->stats().BadSamplesSkipped, 1u);
}

TEST(CorruptInput, PipelineSkipsCorruptRecords) {
  TempDir D;
  std::string B = framed({pngRecord(0), pngRecord(1), pngRecord(2)});
  B[B.size() - 1] ^= 0x40; // Data CRC of the last record.
  writeFile(D.file("c.tfrecord"), B);
  PipelineOptions O;
  ASSERT_TRUE(builtinDatasetSpec("mnist", O.Spec));
  O.Spec.Height = O.Spec.Width = 8;
  O.Files = {D.file("c.tfrecord")};
  O.BatchSize = 1;
  O.SkipCorruptRecords = 1;
  Status S;
  auto P = Pipeline::create(O, S);
  ASSERT_TRUE(P);
  int N = 0;
  BatchView V;
  while (P->acquire(V).ok() && V.Size) {
    ++N;
    P->release(V);
  }
  EXPECT_EQ(N, 2);
  PipelineStats St = P->stats();
  EXPECT_EQ(St.CorruptRecordsSkipped, 1u);
  EXPECT_NE(St.LastSkipMessage.find("data CRC mismatch"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// The skip policy: SkipCorruptRecords
//===----------------------------------------------------------------------===//

namespace {

/// A file of Count 8x8 PNG records labelled by their index: those in BadCrc
/// with a wrong data CRC, those in Undecodable holding no image. Offsets
/// gets each record's byte offset.
std::string damagedFile(const TempDir &D, int Count,
                        const std::set<int> &BadCrc,
                        const std::set<int> &Undecodable,
                        std::vector<uint64_t> &Offsets) {
  std::string Bytes;
  Offsets.clear();
  for (int I = 0; I < Count; ++I) {
    Offsets.push_back(Bytes.size());
    std::string Rec = Undecodable.count(I)
                          ? makeImageExample("no image", "png", I, 8, 8)
                          : pngRecord(I);
    appendFramedRecord(Bytes, Rec);
    if (BadCrc.count(I))
      Bytes[Bytes.size() - 1] ^= 0x40;
  }
  std::string Path = D.file("d.tfrecord");
  writeFile(Path, Bytes);
  return Path;
}

PipelineOptions policyOptions(const std::string &File) {
  PipelineOptions O;
  EXPECT_TRUE(builtinDatasetSpec("mnist", O.Spec));
  O.Spec.Height = O.Spec.Width = 8;
  O.Spec.NumClasses = 0; // Labels are record indices.
  O.Files = {File};
  O.BatchSize = 4;
  O.ShuffleBufferSize = 0;
  return O;
}

struct Stream {
  std::vector<int32_t> Labels;
  std::vector<float> Pixels;
  uint64_t Batches = 0;
  Status Err;
  PipelineStats Stats;
  std::vector<SkippedRecord> Skipped;
};

/// Every batch until the end or the first error.
Stream drainStream(const PipelineOptions &O) {
  Stream Out;
  auto P = Pipeline::create(O, Out.Err);
  EXPECT_TRUE(P) << Out.Err.message();
  if (!P)
    return Out;
  const size_t Elems = P->shape().elements();
  for (;;) {
    BatchView V;
    Out.Err = P->acquire(V);
    for (SkippedRecord &R : P->takeSkipped())
      Out.Skipped.push_back(std::move(R));
    if (!Out.Err.ok() || V.Size == 0)
      break;
    ++Out.Batches;
    Out.Labels.insert(Out.Labels.end(), V.Labels, V.Labels + V.Size);
    const auto *Px = static_cast<const float *>(V.Images);
    Out.Pixels.insert(Out.Pixels.end(), Px, Px + V.Size * Elems);
    P->release(V);
  }
  Out.Stats = P->stats();
  return Out;
}

/// "DIR/d.tfrecord: byte offset N: ", how messages start.
std::string atOffset(const TempDir &D, uint64_t Offset) {
  return D.file("d.tfrecord") + ": byte offset " + std::to_string(Offset) +
         ": ";
}

} // namespace

TEST(SkipCorruptRecords, EachDamagedRecordCountsOnceOverTheEpochs) {
  TempDir D;
  std::vector<uint64_t> Off;
  PipelineOptions O = policyOptions(damagedFile(D, 24, {5, 17}, {}, Off));
  O.NumEpochs = 3;
  O.DropRemainder = false;
  O.SkipCorruptRecords = 2;
  Stream S = drainStream(O);
  ASSERT_TRUE(S.Err.ok()) << S.Err.message();
  EXPECT_EQ(S.Labels.size(), 3u * 22u);
  EXPECT_EQ(S.Stats.CorruptRecordsSkipped, 2u);
  EXPECT_EQ(S.Stats.BadSamplesSkipped, 0u);
  ASSERT_EQ(S.Skipped.size(), 2u);
  EXPECT_EQ(S.Skipped[0].Number, 1u);
  EXPECT_EQ(S.Skipped[0].Message,
            atOffset(D, Off[5]) + "corrupt record: data CRC mismatch");
  EXPECT_EQ(S.Skipped[1].Number, 2u);
  EXPECT_EQ(S.Skipped[1].Message.rfind(atOffset(D, Off[17]), 0), 0u);
}

TEST(SkipCorruptRecords, TheOnePastTheLimitFailsItsBatch) {
  TempDir D;
  std::vector<uint64_t> Off;
  PipelineOptions O = policyOptions(damagedFile(D, 24, {5, 17}, {}, Off));
  O.SkipCorruptAdvice = "; raise the limit";
  O.SkipCorruptRecords = 1;
  Stream S = drainStream(O);
  ASSERT_FALSE(S.Err.ok());
  EXPECT_EQ(S.Err.message(),
            atOffset(D, Off[17]) +
                "corrupt record: data CRC mismatch; that is damaged record 2 "
                "and at most 1 are skipped; raise the limit");
  // Records 0-16 but 5 fill batches 0-3; the batch the damage lies in fails.
  EXPECT_EQ(S.Batches, 4u);
  EXPECT_EQ(S.Stats.CorruptRecordsSkipped, 1u);

  // The default: the first damaged record fails, with the message alone.
  O.SkipCorruptAdvice.clear();
  O.SkipCorruptRecords = 0;
  S = drainStream(O);
  EXPECT_EQ(S.Err.message(),
            atOffset(D, Off[5]) + "corrupt record: data CRC mismatch");
  EXPECT_EQ(S.Batches, 1u);
}

TEST(SkipCorruptRecords, UndecodableRecordsKeepTheirPositions) {
  TempDir D;
  std::vector<uint64_t> Off;
  PipelineOptions O = policyOptions(damagedFile(D, 12, {2}, {5, 9}, Off));
  O.SkipCorruptRecords = 3;
  O.DropRemainder = true;
  Stream S = drainStream(O);
  ASSERT_TRUE(S.Err.ok()) << S.Err.message();
  // Record 2 has no position; 5 and 9 keep theirs, filled with copies of
  // their batches' first decoded samples.
  EXPECT_EQ(S.Labels, (std::vector<int32_t>{0, 1, 3, 4, 6, 6, 7, 8}));
  const size_t Elems = 64;
  EXPECT_TRUE(std::equal(S.Pixels.begin() + 4 * Elems,
                         S.Pixels.begin() + 5 * Elems,
                         S.Pixels.begin() + 5 * Elems));
  EXPECT_EQ(S.Stats.CorruptRecordsSkipped, 1u);
  // Record 9 lies in the last, partial batch, which is dropped: accounted
  // at the end all the same.
  EXPECT_EQ(S.Stats.BadSamplesSkipped, 2u);
  ASSERT_EQ(S.Skipped.size(), 3u);
  EXPECT_EQ(S.Skipped[1].Message,
            atOffset(D, Off[5]) + "image is neither JPEG nor PNG");

  // Where batches may be short (evaluation) the gaps close instead.
  O.DropRemainder = false;
  S = drainStream(O);
  ASSERT_TRUE(S.Err.ok()) << S.Err.message();
  EXPECT_EQ(S.Labels, (std::vector<int32_t>{0, 1, 3, 4, 6, 7, 8, 10, 11}));
}

TEST(SkipCorruptRecords, SameStreamAndFailureWhateverTheThreads) {
  TempDir D;
  std::vector<uint64_t> Off;
  PipelineOptions O =
      policyOptions(damagedFile(D, 60, {3, 31, 44}, {8, 20, 21, 50}, Off));
  O.Preprocess = PreprocessKind::Inception; // Random crops per position.
  O.Shape = {8, 8, 3, Layout::NCHW};
  O.ShuffleBufferSize = 16;
  O.Seed = 5;
  O.NumEpochs = 2;
  O.DropRemainder = true;
  O.SkipCorruptRecords = 7;
  O.NumThreads = 1;
  const Stream Ref = drainStream(O);
  ASSERT_TRUE(Ref.Err.ok()) << Ref.Err.message();
  EXPECT_EQ(Ref.Stats.CorruptRecordsSkipped + Ref.Stats.BadSamplesSkipped, 7u);
  O.SkipCorruptRecords = 5;
  O.NumThreads = 1;
  const Stream RefFail = drainStream(O);
  ASSERT_FALSE(RefFail.Err.ok());
  for (int Threads : {2, 4, 7}) {
    O.NumThreads = Threads;
    O.SkipCorruptRecords = 7;
    Stream S = drainStream(O);
    EXPECT_EQ(S.Labels, Ref.Labels) << Threads << " threads";
    EXPECT_EQ(S.Pixels, Ref.Pixels) << Threads << " threads";
    ASSERT_EQ(S.Skipped.size(), Ref.Skipped.size());
    for (size_t I = 0; I < S.Skipped.size(); ++I)
      EXPECT_EQ(S.Skipped[I].Message, Ref.Skipped[I].Message);
    O.SkipCorruptRecords = 5;
    S = drainStream(O);
    EXPECT_EQ(S.Err.message(), RefFail.Err.message());
    EXPECT_EQ(S.Batches, RefFail.Batches) << Threads << " threads";
  }
}

TEST(SkipCorruptRecords, AStreamStartedLaterIsTheTail) {
  TempDir D;
  std::vector<uint64_t> Off;
  PipelineOptions O = policyOptions(damagedFile(D, 40, {3, 30}, {6, 25}, Off));
  O.Preprocess = PreprocessKind::Inception;
  O.Shape = {8, 8, 3, Layout::NCHW};
  O.ShuffleBufferSize = 8;
  O.NumEpochs = 2;
  O.DropRemainder = true;
  O.SkipCorruptRecords = 4;
  const Stream Full = drainStream(O);
  ASSERT_TRUE(Full.Err.ok()) << Full.Err.message();
  const size_t Elems = 8 * 8 * 3;
  for (uint64_t Start : {2u, 9u}) {
    O.StartBatch = Start;
    O.NumThreads = 3;
    Stream Tail = drainStream(O);
    ASSERT_TRUE(Tail.Err.ok()) << Tail.Err.message();
    EXPECT_EQ(Tail.Labels, std::vector<int32_t>(Full.Labels.begin() + Start * 4,
                                                Full.Labels.end()));
    EXPECT_EQ(Tail.Pixels,
              std::vector<float>(Full.Pixels.begin() + Start * 4 * Elems,
                                 Full.Pixels.end()));
    // The reader reads the records before the start again, damaged ones
    // included; the undecodable ones are met again in the second epoch.
    EXPECT_EQ(Tail.Stats.CorruptRecordsSkipped, 2u);
    EXPECT_EQ(Tail.Stats.BadSamplesSkipped, 2u);
  }
}

TEST(SkipCorruptRecords, CachedEpochsNameTheOffsets) {
  TempDir D;
  std::vector<uint64_t> Off;
  PipelineOptions O = policyOptions(damagedFile(D, 12, {}, {7}, Off));
  O.UseCaching = true;
  O.NumEpochs = 3;
  O.SkipCorruptRecords = 1;
  Stream S = drainStream(O);
  ASSERT_TRUE(S.Err.ok()) << S.Err.message();
  EXPECT_EQ(S.Stats.BadSamplesSkipped, 1u);
  ASSERT_EQ(S.Skipped.size(), 1u);
  EXPECT_EQ(S.Skipped[0].Message.rfind(atOffset(D, Off[7]), 0), 0u);
}

TEST(SkipCorruptRecords, ABatchWithNothingDecodable) {
  TempDir D;
  std::vector<uint64_t> Off;
  PipelineOptions O = policyOptions(damagedFile(D, 12, {}, {4, 5, 6, 7}, Off));
  O.SkipCorruptRecords = 4;
  O.DropRemainder = true;
  Stream S = drainStream(O);
  ASSERT_FALSE(S.Err.ok());
  EXPECT_NE(S.Err.message().find("batch 1: none of its 4 records could be "
                                 "decoded"),
            std::string::npos)
      << S.Err.message();
  // Short batches: the empty one is passed over.
  O.DropRemainder = false;
  S = drainStream(O);
  ASSERT_TRUE(S.Err.ok()) << S.Err.message();
  EXPECT_EQ(S.Labels, (std::vector<int32_t>{0, 1, 2, 3, 8, 9, 10, 11}));
}

TEST(SkipCorruptRecords, ABrokenFramingEndsTheFileAndCountsOnce) {
  TempDir D;
  std::vector<uint64_t> Off;
  std::string Path = damagedFile(D, 10, {}, {}, Off);
  std::string Bytes = readFile(Path);
  Bytes[Off[6] + 9] ^= 0x01; // Length CRC of record 6.
  writeFile(Path, Bytes);
  PipelineOptions O = policyOptions(Path);
  O.NumEpochs = 2;
  O.SkipCorruptRecords = 1;
  Stream S = drainStream(O);
  ASSERT_TRUE(S.Err.ok()) << S.Err.message();
  EXPECT_EQ(S.Labels.size(), 12u); // Records 0-5, twice.
  EXPECT_EQ(S.Stats.CorruptRecordsSkipped, 1u);
}
