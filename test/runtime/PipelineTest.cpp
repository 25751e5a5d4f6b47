//===- PipelineTest.cpp - Sharding, shuffling, determinism, caching -------===//

#include "TestUtil.h"

#include "fastnn/data/Pipeline.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <thread>

using namespace fastnn::data;
using namespace fastnn::data::test;

namespace {

/// Files f0..fN-1 with PerFile records each; record label = global id.
std::vector<std::string> makeFiles(const TempDir &D, int NumFiles, int PerFile,
                                   Compression C = Compression::None) {
  std::vector<std::string> Files;
  for (int F = 0; F < NumFiles; ++F) {
    std::vector<std::string> Recs;
    for (int R = 0; R < PerFile; ++R)
      Recs.push_back(pngRecord(F * PerFile + R));
    Files.push_back(D.file("f" + std::to_string(F) + ".tfrecord"));
    writeRecords(Files.back(), Recs, C);
  }
  return Files;
}

PipelineOptions baseOptions(const std::vector<std::string> &Files) {
  PipelineOptions O;
  EXPECT_TRUE(builtinDatasetSpec("mnist", O.Spec));
  O.Spec.Height = O.Spec.Width = 8;
  O.Spec.NumClasses = 0; // Labels are record ids here.
  O.Files = Files;
  O.BatchSize = 4;
  O.DropRemainder = false;
  O.ShuffleBufferSize = 16;
  O.Seed = 7;
  return O;
}

struct Drained {
  std::vector<int32_t> Labels;
  std::vector<float> Pixels;
};

Drained drain(const PipelineOptions &O, size_t MaxBatches = SIZE_MAX) {
  Status S;
  auto P = Pipeline::create(O, S);
  EXPECT_TRUE(P) << S.message();
  Drained D;
  if (!P)
    return D;
  size_t Elems = P->shape().elements();
  for (size_t B = 0; B < MaxBatches; ++B) {
    BatchView V;
    S = P->acquire(V);
    EXPECT_TRUE(S.ok()) << S.message();
    if (!S.ok() || V.Size == 0)
      break;
    D.Labels.insert(D.Labels.end(), V.Labels, V.Labels + V.Size);
    const float *Px = static_cast<const float *>(V.Images);
    D.Pixels.insert(D.Pixels.end(), Px, Px + V.Size * Elems);
    P->release(V);
  }
  return D;
}

} // namespace

TEST(Pipeline, EveryRecordOncePerEpochAcrossWorkers) {
  TempDir D;
  auto Files = makeFiles(D, 7, 10);
  const int World = 3, Epochs = 2;
  std::map<int, int> Seen;
  for (int Rank = 0; Rank < World; ++Rank) {
    PipelineOptions O = baseOptions(Files);
    O.Rank = Rank;
    O.WorldSize = World;
    O.NumEpochs = Epochs;
    O.NumThreads = 3;
    Drained Out = drain(O);
    // This rank's files: i % World == Rank.
    std::set<int> Mine;
    for (int F = Rank; F < 7; F += World)
      for (int R = 0; R < 10; ++R)
        Mine.insert(F * 10 + R);
    ASSERT_EQ(Out.Labels.size(), Mine.size() * Epochs);
    for (int E = 0; E < Epochs; ++E) {
      std::set<int> Epoch(Out.Labels.begin() + E * Mine.size(),
                          Out.Labels.begin() + (E + 1) * Mine.size());
      EXPECT_EQ(Epoch, Mine) << "rank " << Rank << " epoch " << E;
    }
    for (int L : Out.Labels)
      Seen[L]++;
  }
  ASSERT_EQ(Seen.size(), 70u);
  for (auto [L, N] : Seen)
    EXPECT_EQ(N, Epochs) << "record " << L;
}

TEST(Pipeline, ShuffledAndDeterministicWithASeed) {
  TempDir D;
  auto Files = makeFiles(D, 4, 25);
  PipelineOptions O = baseOptions(Files);
  O.Preprocess = PreprocessKind::Inception; // Random crops and flips too.
  O.Shape = {8, 8, 3, Layout::NCHW};
  O.NumEpochs = 2;
  O.NumThreads = 1;
  Drained A = drain(O);
  O.NumThreads = 3;
  O.PrefetchBatches = 5;
  Drained B = drain(O);
  EXPECT_EQ(A.Labels, B.Labels);
  EXPECT_EQ(A.Pixels, B.Pixels); // Bitwise, whatever the thread count.
  std::vector<int32_t> Sorted(A.Labels.begin(), A.Labels.begin() + 100);
  EXPECT_NE(std::vector<int32_t>(A.Labels.begin(), A.Labels.begin() + 100),
            (std::sort(Sorted.begin(), Sorted.end()), Sorted));
  O.Seed = 8;
  Drained C = drain(O);
  EXPECT_NE(A.Labels, C.Labels);
  // Epochs are shuffled differently.
  EXPECT_NE(std::vector<int32_t>(A.Labels.begin(), A.Labels.begin() + 100),
            std::vector<int32_t>(A.Labels.begin() + 100, A.Labels.end()));
}

TEST(Pipeline, StartBatchGivesTheTailOfTheStream) {
  TempDir D;
  auto Files = makeFiles(D, 4, 25);
  PipelineOptions O = baseOptions(Files);
  O.Preprocess = PreprocessKind::Inception; // Per-position random crops.
  O.Shape = {8, 8, 3, Layout::NCHW};
  O.NumEpochs = 2;
  O.DropRemainder = true;
  Drained All = drain(O);
  ASSERT_EQ(All.Labels.size(), 200u);
  const size_t Elems = 8 * 8 * 3;
  // 25 batches an epoch: starts inside the first epoch, inside the second,
  // at the end of the data and past it.
  for (uint64_t Start : {3u, 37u, 50u, 60u}) {
    O.StartBatch = Start;
    O.NumThreads = static_cast<int>(1 + Start % 3);
    Drained Tail = drain(O);
    size_t First = std::min<size_t>(Start * 4, All.Labels.size());
    EXPECT_EQ(Tail.Labels, std::vector<int32_t>(All.Labels.begin() + First,
                                                All.Labels.end()))
        << "start " << Start;
    EXPECT_EQ(Tail.Pixels,
              std::vector<float>(All.Pixels.begin() + First * Elems,
                                 All.Pixels.end()))
        << "start " << Start;
  }
  O.StartBatch = 5;
  Status S;
  auto P = Pipeline::create(O, S);
  ASSERT_TRUE(P) << S.message();
  BatchView V;
  ASSERT_TRUE(P->acquire(V).ok());
  EXPECT_EQ(V.Index, 5u); // Batch numbers count from the stream's start.
  P->release(V);
}

TEST(Pipeline, NoShuffleKeepsInterleavedFileOrder) {
  TempDir D;
  auto Files = makeFiles(D, 2, 3);
  PipelineOptions O = baseOptions(Files);
  O.ShuffleBufferSize = 0;
  O.ShuffleFiles = false;
  O.CycleLength = 2;
  Drained A = drain(O);
  EXPECT_EQ(A.Labels, (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
}

TEST(Pipeline, CachingGivesTheSameStream) {
  TempDir D;
  auto Files = makeFiles(D, 3, 20, Compression::Gzip);
  PipelineOptions O = baseOptions(Files);
  O.NumEpochs = 3;
  O.Preprocess = PreprocessKind::Cifarnet;
  Drained Plain = drain(O);
  O.UseCaching = true;
  Drained Cached = drain(O);
  EXPECT_EQ(Plain.Labels, Cached.Labels);
  EXPECT_EQ(Plain.Pixels, Cached.Pixels);
  // After the first epoch the files are not read again: delete them.
  Status S;
  auto P = Pipeline::create(O, S);
  ASSERT_TRUE(P);
  BatchView V;
  int Got = 0;
  while (Got < 60) { // The first epoch.
    ASSERT_TRUE(P->acquire(V).ok());
    Got += V.Size;
    P->release(V);
  }
  while (P->stats().Epoch < 1)
    std::this_thread::yield();
  for (const auto &F : Files)
    std::filesystem::remove(F);
  while (true) {
    S = P->acquire(V);
    ASSERT_TRUE(S.ok()) << S.message();
    if (!V.Size)
      break;
    Got += V.Size;
    P->release(V);
  }
  EXPECT_EQ(Got, 180);
  EXPECT_GT(P->stats().CacheBytes, 0u);
}

TEST(Pipeline, DropRemainderGivesFullBatches) {
  TempDir D;
  auto Files = makeFiles(D, 1, 10);
  PipelineOptions O = baseOptions(Files);
  O.DropRemainder = true;
  Drained A = drain(O);
  EXPECT_EQ(A.Labels.size(), 8u);
  O.DropRemainder = false;
  EXPECT_EQ(drain(O).Labels.size(), 10u);
}

TEST(Pipeline, WritesIntoTheCallersStagingRing) {
  TempDir D;
  auto Files = makeFiles(D, 2, 8);
  PipelineOptions O = baseOptions(Files);
  std::vector<std::vector<float>> Img(2, std::vector<float>(4 * 64));
  std::vector<std::vector<int32_t>> Lab(2, std::vector<int32_t>(4));
  for (int I = 0; I < 2; ++I)
    O.StagingBuffers.push_back({Img[I].data(), Lab[I].data()});
  Status S;
  auto P = Pipeline::create(O, S);
  ASSERT_TRUE(P);
  for (int B = 0; B < 4; ++B) {
    BatchView V;
    ASSERT_TRUE(P->acquire(V).ok());
    ASSERT_EQ(V.Size, 4);
    EXPECT_EQ(V.Images, Img[B % 2].data());
    EXPECT_EQ(V.Labels, Lab[B % 2].data());
    P->release(V);
  }
}

TEST(Pipeline, NextBatchCopiesIntoCallerMemory) {
  TempDir D;
  auto Files = makeFiles(D, 1, 4);
  PipelineOptions O = baseOptions(Files);
  O.ShuffleBufferSize = 0;
  Status S;
  auto P = Pipeline::create(O, S);
  std::vector<float> Img(4 * 64);
  std::vector<int32_t> Lab(4);
  int Size = 0;
  ASSERT_TRUE(P->nextBatch(Img.data(), Lab.data(), Size).ok());
  EXPECT_EQ(Size, 4);
  EXPECT_EQ(Lab, (std::vector<int32_t>{0, 1, 2, 3}));
  std::vector<uint8_t> Px = testPixels(8, 8, 1, 2);
  EXPECT_FLOAT_EQ(Img[2 * 64 + 5], Px[5] / 255.0f);
  ASSERT_TRUE(P->nextBatch(Img.data(), Lab.data(), Size).ok());
  EXPECT_EQ(Size, 0);
}

TEST(Pipeline, MockDataNeedsNoFiles) {
  PipelineOptions O;
  ASSERT_TRUE(builtinDatasetSpec("mock", O.Spec));
  O.Shape = {16, 16, 3, Layout::NHWC};
  O.MockSamplesPerEpoch = 100;
  O.MockNumClasses = 5;
  O.BatchSize = 10;
  O.WorldSize = 2;
  O.Rank = 1;
  Drained A = drain(O);
  EXPECT_EQ(A.Labels.size(), 50u);
  for (int32_t L : A.Labels) {
    EXPECT_GE(L, 0);
    EXPECT_LT(L, 5);
  }
  for (float V : A.Pixels) {
    ASSERT_GE(V, -1.0f);
    ASSERT_LE(V, 1.0f);
  }
}

TEST(Pipeline, RawAndFloatImages) {
  TempDir D;
  std::vector<std::string> Raw, Flt;
  for (int I = 0; I < 4; ++I) {
    Example E;
    std::string Px(2 * 3 * 1, static_cast<char>(10 * I));
    addBytesFeature(E, "img", {Px});
    addInt64Feature(E, "lbl", {I});
    Raw.push_back(E.SerializeAsString());
    Example F;
    addFloatFeature(F, "img", std::vector<float>(6, I * 0.25f));
    addInt64Feature(F, "lbl", {I});
    Flt.push_back(F.SerializeAsString());
  }
  writeRecords(D.file("raw"), Raw);
  writeRecords(D.file("flt"), Flt);
  for (const char *Kind : {"raw", "float"}) {
    PipelineOptions O;
    std::string Spec = std::string("image_feature = img\nimage_kind = ") +
                       Kind +
                       "\nlabel_feature = lbl\nheight = 2\nwidth = 3\n"
                       "channels = 1\nfloat_scale = 255\n";
    ASSERT_TRUE(parseDatasetSpec(Spec, "t.spec", O.Spec).ok());
    O.Files = {D.file(std::string(Kind) == "raw" ? "raw" : "flt")};
    O.BatchSize = 4;
    O.ShuffleBufferSize = 0;
    Drained A = drain(O);
    ASSERT_EQ(A.Labels, (std::vector<int32_t>{0, 1, 2, 3}));
    ASSERT_EQ(A.Pixels.size(), 24u);
    float Want = std::string(Kind) == "raw" ? 30 / 255.0f : 0.75f;
    EXPECT_NEAR(A.Pixels[3 * 6], Want, 1e-6) << Kind;
  }
}

TEST(Pipeline, CroppedJpegDecodingEqualsFullDecoding) {
  // Inception decodes only its crop of each JPEG; the batches must equal
  // full decoding followed by the same preprocessing (sample I of an
  // unshuffled file draws from Rng::forSample(Seed, I)), bit for bit, for
  // any thread count.
  TempDir D;
  std::vector<std::string> Jpegs, Recs;
  for (int I = 0; I < 10; ++I) {
    int H = 40 + 7 * I, W = 90 - 5 * I;
    std::vector<uint8_t> Px = photoPixels(H, W, 3, I);
    std::string J;
    ASSERT_TRUE(encodeJpeg(Px.data(), H, W, 3, 90, J).ok());
    Recs.push_back(makeImageExample(J, "jpeg", I, H, W));
    Jpegs.push_back(std::move(J));
  }
  writeRecords(D.file("j.tfrecord"), Recs);
  PipelineOptions O;
  ASSERT_TRUE(builtinDatasetSpec("flowers", O.Spec));
  O.Spec.NumClasses = 0;
  O.Files = {D.file("j.tfrecord")};
  O.Preprocess = PreprocessKind::Inception;
  O.BatchSize = 4;
  O.DropRemainder = false;
  O.ShuffleBufferSize = 0;
  O.Seed = 11;
  ImageDecoder Dec;
  for (bool Training : {true, false})
    for (Layout L : {Layout::NHWC, Layout::NCHW})
      for (int Channels : {3, 1}) {
        O.Training = Training;
        O.Shape = {24, 32, Channels, L};
        std::vector<float> Want;
        for (int I = 0; I < 10; ++I) {
          std::vector<uint8_t> Px;
          ImageRef Img;
          ASSERT_TRUE(Dec.decode(Jpegs[I].data(), Jpegs[I].size(), Channels, Px,
                                 Img.Height, Img.Width)
                          .ok());
          Img.U8 = Px.data();
          Img.Channels = Channels;
          std::vector<float> Out(O.Shape.elements());
          Rng R = Rng::forSample(O.Seed, I);
          ASSERT_TRUE(preprocessImage(O.Preprocess, Training, Img, O.Shape, R,
                                      Out.data())
                          .ok());
          Want.insert(Want.end(), Out.begin(), Out.end());
        }
        for (int Threads : {1, 3}) {
          O.NumThreads = Threads;
          Drained A = drain(O);
          ASSERT_EQ(A.Labels,
                    (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
          EXPECT_EQ(A.Pixels, Want)
              << (Training ? "training" : "evaluation") << ", " << Channels
              << " channels, " << Threads << " threads";
        }
      }
}

TEST(Pipeline, CleanShutdownWhileRunningForever) {
  TempDir D;
  auto Files = makeFiles(D, 2, 50);
  PipelineOptions O = baseOptions(Files);
  O.NumEpochs = 0; // Forever.
  O.NumThreads = 4;
  O.PrefetchBatches = 3;
  for (int Round = 0; Round < 5; ++Round) {
    Status S;
    auto P = Pipeline::create(O, S);
    ASSERT_TRUE(P);
    for (int B = 0; B < Round * 20; ++B) {
      BatchView V;
      ASSERT_TRUE(P->acquire(V).ok());
      ASSERT_EQ(V.Size, 4);
      P->release(V);
    }
    PipelineStats St = P->stats();
    EXPECT_EQ(St.Samples, uint64_t(Round) * 80);
    EXPECT_LE(St.ReadyBatches, 3);
    // Destruction joins every thread even while they wait on full queues.
  }
}

TEST(Pipeline, StatsAndBoundedQueues) {
  TempDir D;
  auto Files = makeFiles(D, 2, 100);
  PipelineOptions O = baseOptions(Files);
  O.ShuffleBufferSize = 10;
  O.NumParallelBatches = 2;
  Status S;
  auto P = Pipeline::create(O, S);
  BatchView V;
  ASSERT_TRUE(P->acquire(V).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  PipelineStats St = P->stats();
  // Nothing is consumed: the reader stops at queue + shuffle capacity.
  EXPECT_LE(St.RecordQueueDepth, size_t(2 * 4 + O.NumThreads));
  EXPECT_LE(St.ShuffleBufferFill, 10u);
  EXPECT_LE(St.RecordsRead, 4u * 2 + 2 * 4 + O.NumThreads + 10 + 4);
  EXPECT_EQ(St.RingBytes, 2u * 4 * (64 * 4 + 4));
  P->release(V);
  while (P->acquire(V).ok() && V.Size)
    P->release(V);
  St = P->stats();
  EXPECT_EQ(St.Samples, 200u);
  EXPECT_EQ(St.RecordsRead, 200u);
  EXPECT_GT(St.ImagesPerSecond, 0);
}

TEST(Pipeline, ConfigurationErrors) {
  TempDir D;
  auto Files = makeFiles(D, 2, 1);
  PipelineOptions O = baseOptions(Files);
  O.WorldSize = 3;
  O.Rank = 2;
  Status S;
  EXPECT_FALSE(Pipeline::create(O, S));
  EXPECT_NE(S.message().find("rank 2 of 3 gets none of the 2 files"),
            std::string::npos)
      << S.message();
  O = baseOptions({D.file("missing.tfrecord")});
  EXPECT_FALSE(Pipeline::create(O, S));
  EXPECT_NE(S.message().find("missing.tfrecord"), std::string::npos);
  O = baseOptions(Files);
  ASSERT_TRUE(builtinDatasetSpec("flowers", O.Spec));
  EXPECT_FALSE(Pipeline::create(O, S));
  EXPECT_NE(S.message().find("no fixed image size"), std::string::npos);
}
