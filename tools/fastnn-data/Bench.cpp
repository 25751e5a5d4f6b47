//===- Bench.cpp - fastnn-data bench --------------------------------------===//

#include "Tool.h"

#include "fastnn/data/Pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sys/resource.h>

namespace fastnn::tool {
using data::Status;

int runBench(const Args &A) {
  auto fail = [](const Status &S) {
    std::fprintf(stderr, "fastnn-data bench: %s\n", S.message().c_str());
    return 1;
  };
  if (Status S =
          A.check({"dataset", "batch", "threads", "preprocessing", "height",
                   "width", "channels", "eval", "seconds", "prefetch",
                   "shuffle", "epochs", "caching", "seed", "skip-corrupt"});
      !S.ok())
    return fail(S);
  data::PipelineOptions O;
  if (Status S = data::loadDatasetSpec(A.get("dataset", "mock"), O.Spec);
      !S.ok())
    return fail(S);
  for (const std::string &P : A.Positional) {
    std::error_code Ec;
    if (std::filesystem::is_directory(P, Ec)) {
      std::vector<std::string> In;
      for (const auto &E : std::filesystem::directory_iterator(P, Ec))
        if (E.path().filename().string().find(".tfrecord") != std::string::npos)
          In.push_back(E.path().string());
      std::sort(In.begin(), In.end());
      O.Files.insert(O.Files.end(), In.begin(), In.end());
    } else {
      O.Files.push_back(P);
    }
  }
  int64_t V = 0;
  double Seconds = 0;
  Status S;
  auto intFlag = [&](const char *K, int64_t Def, int64_t Lo, int64_t Hi,
                     int &Out) {
    if (S.ok())
      S = A.getInt(K, Def, Lo, Hi, V);
    Out = static_cast<int>(V);
  };
  intFlag("batch", 32, 1, 1 << 20, O.BatchSize);
  intFlag("threads", 2, 1, 1024, O.NumThreads);
  intFlag("height", 0, 0, 65535, O.Shape.Height);
  intFlag("width", 0, 0, 65535, O.Shape.Width);
  intFlag("channels", 0, 0, 3, O.Shape.Channels);
  intFlag("prefetch", 2, 1, 4096, O.PrefetchBatches);
  intFlag("shuffle", 1024, 0, 1 << 24, O.ShuffleBufferSize);
  intFlag("epochs", 0, 0, 1 << 20, O.NumEpochs);
  int Seed = 0;
  intFlag("seed", 0, 0, INT32_MAX, Seed);
  O.Seed = static_cast<uint64_t>(Seed);
  if (S.ok())
    S = A.getDouble("seconds", 10, 0.1, 3600, Seconds);
  if (S.ok())
    S = data::resolvePreprocessing(A.get("preprocessing", "none"), "",
                                   O.Preprocess);
  if (!S.ok())
    return fail(S);
  O.Training = !A.has("eval");
  O.UseCaching = A.has("caching");
  if (A.has("skip-corrupt"))
    O.SkipCorruptRecords = UINT64_MAX;
  O.NumParallelBatches = 2;

  auto P = data::Pipeline::create(O, S);
  if (!P)
    return fail(S);
  auto Start = std::chrono::steady_clock::now();
  uint64_t Images = 0;
  for (;;) {
    data::BatchView B;
    if (S = P->acquire(B); !S.ok())
      return fail(S);
    if (B.Size == 0)
      break;
    Images += B.Size;
    P->release(B);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count() >= Seconds)
      break;
  }
  double Elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  data::PipelineStats St = P->stats();
  P->stop();
  struct rusage RU;
  getrusage(RUSAGE_SELF, &RU);
  std::printf("images: %llu in %.2f s = %.1f images/s (%d threads, batch %d, "
              "%dx%dx%d, %s%s)\n",
              static_cast<unsigned long long>(Images), Elapsed,
              Images / Elapsed, O.NumThreads, O.BatchSize, P->shape().Height,
              P->shape().Width, P->shape().Channels,
              data::preprocessingName(O.Preprocess), O.Training ? "" : " eval");
  std::printf("waited %.2f s for batches; records %llu (%.1f MB); skipped "
              "%llu corrupt records, %llu bad samples\n",
              St.WaitSeconds, static_cast<unsigned long long>(St.RecordsRead),
              St.BytesRead / 1e6,
              static_cast<unsigned long long>(St.CorruptRecordsSkipped),
              static_cast<unsigned long long>(St.BadSamplesSkipped));
  std::printf("memory: ring %.1f MB, peak queued records %.1f MB, cache "
              "%.1f MB, peak RSS %.1f MB\n",
              St.RingBytes / 1e6, St.PeakRecordBytes / 1e6, St.CacheBytes / 1e6,
              RU.ru_maxrss / 1e3);
  return 0;
}

} // namespace fastnn::tool
