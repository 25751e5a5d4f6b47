//===- CollectivesTest.cpp - fnn_comm_* and fnn_allreduce_* ---------------===//
//
// Runs alone (a job of one: every call is the identity) and under
// `mpirun -np K` (ctest collectives.mpi2), where each rank checks the
// reduced values against what every rank contributed.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/abi.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

namespace {

class CollectivesTest : public ::testing::Test {
protected:
  void SetUp() override {
    Device = fnn_device_create(FNN_DEVICE_CPU, 0);
    ASSERT_NE(Device, nullptr);
    Rank = fnn_comm_rank();
    Size = fnn_comm_size();
  }
  void TearDown() override { fnn_device_destroy(Device); }

  fnn_kernel *allreduce(int64_t Count, int64_t Dtype, int64_t Op) {
    fnn_allreduce_desc Desc = {Count, Dtype, Op};
    fnn_kernel *Kernel = fnn_allreduce_create(Device, &Desc);
    EXPECT_NE(Kernel, nullptr) << fnn_last_error();
    return Kernel;
  }

  fnn_device *Device = nullptr;
  int64_t Rank = 0, Size = 1;
};

TEST_F(CollectivesTest, SumAndMeanInPlace) {
  const int64_t Count = 1000;
  std::vector<float> Sum(Count), Mean(Count);
  for (int64_t I = 0; I < Count; ++I)
    Sum[I] = Mean[I] = static_cast<float>(Rank * 1000 + I);
  fnn_kernel *SumKernel = allreduce(Count, FNN_F32, FNN_ALLREDUCE_SUM);
  fnn_kernel *MeanKernel = allreduce(Count, FNN_F32, FNN_ALLREDUCE_MEAN);
  fnn_allreduce_start(SumKernel, Sum.data());
  fnn_allreduce_start(MeanKernel, Mean.data());
  // Awaited in the other order than started: each wait is for its kernel.
  fnn_allreduce_wait(MeanKernel);
  fnn_allreduce_wait(SumKernel);
  // sum over ranks r of (1000 r + i) = 1000 K (K - 1) / 2 + K i
  for (int64_t I = 0; I < Count; ++I) {
    float Expected =
        static_cast<float>(1000 * Size * (Size - 1) / 2 + Size * I);
    ASSERT_EQ(Sum[I], Expected) << "element " << I;
    ASSERT_FLOAT_EQ(Mean[I], Expected / static_cast<float>(Size));
  }
  fnn_kernel_destroy(SumKernel);
  fnn_kernel_destroy(MeanKernel);
}

TEST_F(CollectivesTest, RepeatsEveryStepOnTheSameBuffer) {
  std::vector<double> Buffer(64);
  fnn_kernel *Kernel = allreduce(64, FNN_F64, FNN_ALLREDUCE_MEAN);
  for (int Step = 0; Step < 20; ++Step) {
    for (size_t I = 0; I < Buffer.size(); ++I)
      Buffer[I] = Step + static_cast<double>(Rank) * 2;
    fnn_allreduce_start(Kernel, Buffer.data());
    fnn_allreduce_wait(Kernel);
    // mean over ranks of (step + 2 r) = step + K - 1
    for (double Value : Buffer)
      ASSERT_DOUBLE_EQ(Value, Step + static_cast<double>(Size - 1));
  }
  fnn_kernel_destroy(Kernel);
}

TEST_F(CollectivesTest, BroadcastsTheRootsBytes) {
  std::vector<int64_t> Values(10);
  std::iota(Values.begin(), Values.end(), Rank * 100);
  ASSERT_EQ(
      fnn_comm_broadcast(Values.data(), Values.size() * sizeof(int64_t), 0), 0)
      << fnn_last_error();
  for (int64_t I = 0; I < 10; ++I)
    EXPECT_EQ(Values[I], I);
}

TEST_F(CollectivesTest, SumsHostIntegersAndDoubles) {
  // Beyond float's 24 bits: int64 sums are exact.
  std::vector<int64_t> Counts = {(int64_t(1) << 40) + Rank, -Rank, 7};
  ASSERT_EQ(fnn_comm_allreduce_sum(Counts.data(), 3, FNN_I64), 0)
      << fnn_last_error();
  EXPECT_EQ(Counts[0], Size * (int64_t(1) << 40) + Size * (Size - 1) / 2);
  EXPECT_EQ(Counts[1], -Size * (Size - 1) / 2);
  EXPECT_EQ(Counts[2], 7 * Size);
  std::vector<double> Sums = {0.5 * static_cast<double>(Rank + 1)};
  ASSERT_EQ(fnn_comm_allreduce_sum(Sums.data(), 1, FNN_F64), 0)
      << fnn_last_error();
  EXPECT_DOUBLE_EQ(Sums[0], 0.25 * static_cast<double>(Size * (Size + 1)));
}

TEST_F(CollectivesTest, SumRefusesOtherTypes) {
  float Value = 1;
  EXPECT_EQ(fnn_comm_allreduce_sum(&Value, 1, FNN_F32), -1);
  EXPECT_NE(std::string(fnn_last_error()).find("neither int64 nor float64"),
            std::string::npos)
      << fnn_last_error();
}

TEST_F(CollectivesTest, RankAndSizeDescribeTheJob) {
  // Set by the ctest that launches the suite, so that a launch this
  // runtime failed to recognise (K jobs of one) does not pass unnoticed.
  if (const char *Expected = std::getenv("FASTNN_TEST_EXPECT_SIZE"))
    EXPECT_EQ(Size, std::atoll(Expected));
  EXPECT_GE(Size, 1);
  EXPECT_GE(Rank, 0);
  EXPECT_LT(Rank, Size);
  EXPECT_GE(fnn_comm_local_rank(), 0);
  EXPECT_LE(fnn_comm_local_rank(), Rank);
}

TEST_F(CollectivesTest, RefusesAnUnknownOp) {
  fnn_allreduce_desc Desc = {4, FNN_F32, 7};
  EXPECT_EQ(fnn_allreduce_create(Device, &Desc), nullptr);
  EXPECT_NE(std::string(fnn_last_error()).find("op 7 is neither sum nor mean"),
            std::string::npos)
      << fnn_last_error();
}

TEST_F(CollectivesTest, AnAllreduceKernelIsNoForwardKernel) {
  // Both derive from the runtime's fnn_kernel base: a CPU backward create
  // must tell them apart instead of reading the allreduce as its forward.
  fnn_kernel *Allreduce = allreduce(4, FNN_F32, FNN_ALLREDUCE_SUM);
  fnn_pool2d_desc Pool{};
  Pool.input.rank = Pool.output.rank = 4;
  for (int I = 0; I < 4; ++I)
    Pool.input.dims[I] = Pool.output.dims[I] = I < 2 ? 1 : 4;
  Pool.dtype = FNN_F32;
  Pool.layout = FNN_NCHW;
  Pool.kind = FNN_POOL_MAX;
  Pool.kernel[0] = Pool.kernel[1] = 1;
  Pool.strides[0] = Pool.strides[1] = 1;
  Pool.dilations[0] = Pool.dilations[1] = 1;
  EXPECT_EQ(fnn_pool2d_backward_create(Device, &Pool, Allreduce), nullptr);
  EXPECT_NE(std::string(fnn_last_error())
                .find("needs the kernel of its "
                      "forward"),
            std::string::npos)
      << fnn_last_error();
  fnn_kernel_destroy(Allreduce);
}

} // namespace

int main(int argc, char **argv) {
  if (fnn_comm_init(&argc, &argv) != 0) {
    std::fprintf(stderr, "%s\n", fnn_last_error());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  int Result = RUN_ALL_TESTS();
  fnn_comm_finalize();
  return Result;
}
