//===- NcclCensusTest.cpp - whether a CUDA job reduces with NCCL ----------===//
//
// The census decision of runtime/kernels/cuda/NcclAllReduce.cpp (header
// only, no CUDA): every rank must take the same branch, and the job gets
// one line saying why it stages through host memory.
//
//===----------------------------------------------------------------------===//

#include "NcclCensus.h"

#include <gtest/gtest.h>

namespace {

using fastnn::cuda::decideNccl;

TEST(NcclCensusTest, DistinctGpusUseNccl) {
  const std::vector<int64_t> Census = {11, 22, 33, 0};
  for (int Rank = 0; Rank < 3; ++Rank) {
    const auto Decision = decideNccl(Census, Rank, "");
    EXPECT_TRUE(Decision.UseNccl);
    EXPECT_EQ(Decision.Warning, "");
  }
}

TEST(NcclCensusTest, ASharedGpuStagesWithOneLineFromRankZero) {
  const std::vector<int64_t> Census = {11, 22, 11, 0};
  for (int Rank = 0; Rank < 3; ++Rank) {
    const auto Decision = decideNccl(Census, Rank, "");
    EXPECT_FALSE(Decision.UseNccl);
    EXPECT_EQ(Decision.Warning,
              Rank == 0 ? "ranks 0 and 2 use the same GPU, and NCCL needs "
                          "one GPU per process"
                        : "");
  }
}

TEST(NcclCensusTest, ARankWithoutNcclStagesTheWholeJob) {
  // Rank 1 could not load NCCL: its slot stays 0, the count is 1.
  const std::vector<int64_t> Census = {11, 0, 33, 1};
  const auto Chief = decideNccl(Census, 0, "");
  EXPECT_FALSE(Chief.UseNccl);
  EXPECT_EQ(Chief.Warning, "1 of 3 processes cannot use NCCL");
  const auto Missing = decideNccl(Census, 1, "libnccl.so.2 cannot be loaded");
  EXPECT_FALSE(Missing.UseNccl);
  EXPECT_EQ(Missing.Warning, "libnccl.so.2 cannot be loaded");
  const auto Other = decideNccl(Census, 2, "");
  EXPECT_FALSE(Other.UseNccl);
  EXPECT_EQ(Other.Warning, "");
}

TEST(NcclCensusTest, RanksWithoutNcclAreNoSharedGpu) {
  // Two ranks without NCCL both leave 0: the count says why, not sharing.
  const std::vector<int64_t> Census = {0, 0, 2};
  EXPECT_EQ(decideNccl(Census, 0, "no NCCL").Warning, "no NCCL");
  EXPECT_FALSE(decideNccl(Census, 1, "no NCCL").UseNccl);
}

} // namespace
