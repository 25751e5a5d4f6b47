//===- MemoryPlanTest.cpp - the arena planner -----------------------------===//

#include "fastnn/Conversion/MemoryPlan.h"

#include <gtest/gtest.h>

#include <random>

namespace {

using fastnn::BufferRequest;
using fastnn::kArenaAlignment;
using fastnn::MemoryPlan;
using fastnn::planMemory;

bool overlapInTime(const BufferRequest &a, const BufferRequest &b) {
  return a.firstUse <= b.lastUse && b.firstUse <= a.lastUse;
}

bool overlapInSpace(int64_t offsetA, int64_t bytesA, int64_t offsetB,
                    int64_t bytesB) {
  return offsetA < offsetB + bytesB && offsetB < offsetA + bytesA;
}

/// Every pair of buffers alive at the same time occupies disjoint bytes, and
/// every offset is aligned and inside the arena.
void expectValid(const std::vector<BufferRequest> &requests,
                 const MemoryPlan &plan) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0);
    EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.totalBytes);
    for (size_t j = i + 1; j < requests.size(); ++j)
      if (overlapInTime(requests[i], requests[j]))
        EXPECT_FALSE(overlapInSpace(plan.offsets[i], requests[i].bytes,
                                    plan.offsets[j], requests[j].bytes))
            << "buffers " << i << " and " << j << " overlap";
  }
}

TEST(MemoryPlan, ReusesMemoryOfDeadBuffers) {
  // A chain a -> b -> c: a is dead when c is made, so c can take its place.
  std::vector<BufferRequest> requests = {
      {1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  MemoryPlan plan = planMemory(requests);
  expectValid(requests, plan);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_EQ(plan.totalBytes, 2 * 1024);
}

TEST(MemoryPlan, KeepsBuffersAliveTogetherApart) {
  std::vector<BufferRequest> requests = {{64, 0, 10}, {64, 0, 10}, {64, 0, 10}};
  MemoryPlan plan = planMemory(requests);
  expectValid(requests, plan);
  EXPECT_EQ(plan.totalBytes, 3 * 64);
}

TEST(MemoryPlan, FillsGapsBetweenLiveBuffers) {
  // Big buffers live throughout leave a gap a small one can use.
  std::vector<BufferRequest> requests = {
      {4096, 0, 10}, {4096, 0, 2}, {4096, 0, 10}, {1024, 5, 6}};
  MemoryPlan plan = planMemory(requests);
  expectValid(requests, plan);
  EXPECT_EQ(plan.totalBytes, 3 * 4096);
}

TEST(MemoryPlan, AlignsEveryOffset) {
  std::vector<BufferRequest> requests = {{3, 0, 5}, {5, 0, 5}, {7, 0, 5}};
  MemoryPlan plan = planMemory(requests);
  expectValid(requests, plan);
  EXPECT_EQ(plan.totalBytes, 3 * kArenaAlignment);
}

TEST(MemoryPlan, EmptyPlanIsEmpty) {
  MemoryPlan plan = planMemory({});
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.totalBytes, 0);
}

TEST(MemoryPlan, RandomLifetimesNeverOverlapAndBeatNoReuse) {
  std::mt19937 random(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<BufferRequest> requests;
    int64_t sum = 0;
    for (int i = 0; i < 60; ++i) {
      int64_t first = random() % 40;
      int64_t bytes = 1 + random() % 100000;
      requests.push_back({bytes, first, first + int64_t(random() % 8)});
      sum += (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    }
    MemoryPlan plan = planMemory(requests);
    expectValid(requests, plan);
    EXPECT_LT(plan.totalBytes, sum);
  }
}

TEST(MemoryPlan, IsDeterministic) {
  std::vector<BufferRequest> requests = {
      {100, 0, 3}, {100, 1, 4}, {200, 2, 5}, {100, 3, 6}};
  EXPECT_EQ(planMemory(requests).offsets, planMemory(requests).offsets);
}

} // namespace
