//===- ParallelForTest.cpp - fnn_parallel_for -----------------------------===//

#include "fastnn/runtime/abi.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

extern "C" int omp_get_max_threads(void);

namespace {

/// What the body saw: how often each iteration ran, and the ranges (with
/// the thread) it was called with.
struct Record {
  explicit Record(int64_t Count) : Hits(Count) {}
  std::vector<std::atomic<int>> Hits;
  std::mutex Lock;
  std::vector<std::pair<int64_t, int64_t>> Ranges;
  std::vector<std::thread::id> Threads;
};

void recordRange(void *Context, int64_t Begin, int64_t End) {
  auto &R = *static_cast<Record *>(Context);
  for (int64_t I = Begin; I < End; ++I)
    R.Hits[I].fetch_add(1);
  std::lock_guard<std::mutex> Guard(R.Lock);
  R.Ranges.emplace_back(Begin, End);
  R.Threads.push_back(std::this_thread::get_id());
}

TEST(ParallelForTest, SmallWorkRunsOnTheCallingThread) {
  Record R(100);
  fnn_parallel_for(recordRange, &R, 100, /*work=*/400);
  ASSERT_EQ(R.Ranges.size(), 1u);
  EXPECT_EQ(R.Ranges[0], std::make_pair(int64_t(0), int64_t(100)));
  EXPECT_EQ(R.Threads[0], std::this_thread::get_id());
}

TEST(ParallelForTest, LargeWorkCoversEachIterationOnceOnSeveralThreads) {
  const int64_t Count = 1000;
  Record R(Count);
  fnn_parallel_for(recordRange, &R, Count, /*work=*/int64_t(1) << 24);
  for (int64_t I = 0; I < Count; ++I)
    ASSERT_EQ(R.Hits[I].load(), 1) << "iteration " << I;
  if (omp_get_max_threads() > 1)
    EXPECT_GT(R.Ranges.size(), 1u);
  else
    EXPECT_EQ(R.Ranges.size(), 1u);
}

TEST(ParallelForTest, NoMoreRangesThanIterations) {
  Record R(1);
  fnn_parallel_for(recordRange, &R, 1, /*work=*/int64_t(1) << 24);
  ASSERT_EQ(R.Ranges.size(), 1u);
  EXPECT_EQ(R.Hits[0].load(), 1);
}

TEST(ParallelForTest, NothingToRun) {
  Record R(0);
  fnn_parallel_for(recordRange, &R, 0, /*work=*/int64_t(1) << 24);
  EXPECT_TRUE(R.Ranges.empty());
}

} // namespace
