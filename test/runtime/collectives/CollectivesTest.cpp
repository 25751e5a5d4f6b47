//===- CollectivesTest.cpp - fnn_comm_* and fnn_allreduce_* ---------------===//
//
// Runs alone (a job of one: every call is the identity) and under
// `mpirun -np K` (ctest collectives.mpi2), where each rank checks the
// reduced values against what every rank contributed.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace {

using fastnn::runtime::bfloat16ToFloat;
using fastnn::runtime::floatToBfloat16;
using fastnn::runtime::floatToHalf;
using fastnn::runtime::halfToFloat;

/// A half-precision type's bits to float and back.
float toFloat(int64_t Dtype, uint16_t Bits) {
  return Dtype == FNN_BF16 ? bfloat16ToFloat(Bits) : halfToFloat(Bits);
}
uint16_t fromFloat(int64_t Dtype, float Value) {
  return Dtype == FNN_BF16 ? floatToBfloat16(Value) : floatToHalf(Value);
}

/// The distance from Value to the next larger magnitude of the type (its
/// unit in the last place there), in float.
float ulpAt(int64_t Dtype, float Value) {
  uint16_t Bits = fromFloat(Dtype, std::fabs(Value));
  return toFloat(Dtype, static_cast<uint16_t>(Bits + 1)) - toFloat(Dtype, Bits);
}

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

/// Rank R's value of element I: magnitudes across float16's normal range
/// (2^-14 to 2^10) with either sign, different on every rank.
float halfTestValue(int64_t Rank, int64_t I) {
  uint32_t Hash = static_cast<uint32_t>(I * 2654435761u + Rank * 40503u);
  Hash ^= Hash >> 13;
  Hash *= 0x5bd1e995u;
  Hash ^= Hash >> 15;
  float Mantissa = 1.0f + static_cast<float>(Hash & 0x3ffu) / 1024.0f;
  int Exponent = static_cast<int>((Hash >> 10) % 25) - 14;
  return std::ldexp((Hash >> 31) ? -Mantissa : Mantissa, Exponent);
}

class HalfReductionTest : public CollectivesTest,
                          public ::testing::WithParamInterface<int64_t> {};

// The acceptance criterion of a reduction in the gradients' own type: its
// result equals the float32 reduction of the same values rounded once to
// the type. Checked bitwise against that sum taken in rank order (what the
// runtime computes), and to half an ulp of the result type against the
// float32 allreduce MPI itself computes (whose order of additions is its
// own): at most one rounding per reduction.
TEST_P(HalfReductionTest, EqualsTheFloat32ReductionRoundedOnce) {
  const int64_t Dtype = GetParam();
  // Not a multiple of 2 or 3 workers: the last chunk is shorter.
  const int64_t Count = 1001;
  for (int64_t Op : {FNN_ALLREDUCE_SUM, FNN_ALLREDUCE_MEAN}) {
    std::vector<uint16_t> Halves(Count);
    std::vector<float> Floats(Count);
    for (int64_t I = 0; I < Count; ++I) {
      Halves[I] = fromFloat(Dtype, halfTestValue(Rank, I));
      Floats[I] = toFloat(Dtype, Halves[I]);
    }
    fnn_kernel *HalfKernel = allreduce(Count, Dtype, Op);
    fnn_kernel *FloatKernel = allreduce(Count, FNN_F32, Op);
    fnn_allreduce_start(HalfKernel, Halves.data());
    fnn_allreduce_start(FloatKernel, Floats.data());
    fnn_allreduce_wait(HalfKernel);
    fnn_allreduce_wait(FloatKernel);
    const float Scale = 1.0f / static_cast<float>(Size);
    for (int64_t I = 0; I < Count; ++I) {
      float InRankOrder = toFloat(Dtype, fromFloat(Dtype, halfTestValue(0, I)));
      for (int64_t R = 1; R < Size; ++R)
        InRankOrder += toFloat(Dtype, fromFloat(Dtype, halfTestValue(R, I)));
      if (Op == FNN_ALLREDUCE_MEAN)
        InRankOrder *= Scale;
      ASSERT_EQ(Halves[I], fromFloat(Dtype, InRankOrder))
          << "element " << I << ", op " << Op;
      const float Reduced = toFloat(Dtype, Halves[I]);
      ASSERT_LE(std::fabs(Reduced - Floats[I]), 0.5f * ulpAt(Dtype, Reduced))
          << "element " << I << ", op " << Op << ": " << Reduced
          << " against float32's " << Floats[I];
    }
    fnn_kernel_destroy(HalfKernel);
    fnn_kernel_destroy(FloatKernel);
  }
}

// The loss scale's overflow check reads the reduced gradients: an inf or
// NaN of any worker must reach every worker's result, and a sum past the
// type's range is an overflow too (not the largest finite value).
TEST_P(HalfReductionTest, NonfiniteValuesAndOverflowSurvive) {
  const int64_t Dtype = GetParam();
  const float Inf = std::numeric_limits<float>::infinity();
  const float Nan = std::numeric_limits<float>::quiet_NaN();
  // Finite on every worker, and their sum over two is past the range.
  const float Large = Dtype == FNN_BF16 ? 2e38f : 40000.0f;
  auto values = [&](int64_t R) {
    return std::vector<float>{R == 0 ? Inf : 1.0f,
                              R == 0 ? -Inf : Inf,
                              R == Size - 1 ? Nan : 2.0f,
                              Large,
                              -0.0f,
                              R == Size - 1 ? -Inf : 0.5f};
  };
  for (int64_t Op : {FNN_ALLREDUCE_SUM, FNN_ALLREDUCE_MEAN}) {
    std::vector<float> Mine = values(Rank);
    std::vector<uint16_t> Buffer(Mine.size());
    for (size_t I = 0; I < Mine.size(); ++I)
      Buffer[I] = fromFloat(Dtype, Mine[I]);
    fnn_kernel *Kernel =
        allreduce(static_cast<int64_t>(Buffer.size()), Dtype, Op);
    fnn_allreduce_start(Kernel, Buffer.data());
    fnn_allreduce_wait(Kernel);
    fnn_kernel_destroy(Kernel);
    std::vector<float> Got(Buffer.size());
    for (size_t I = 0; I < Buffer.size(); ++I)
      Got[I] = toFloat(Dtype, Buffer[I]);
    EXPECT_EQ(Got[0], Inf) << "op " << Op;
    if (Size > 1)
      EXPECT_TRUE(std::isnan(Got[1])) << "inf - inf, op " << Op;
    EXPECT_TRUE(std::isnan(Got[2])) << "op " << Op;
    // Summed in float as float32's reduction would be: float16's mean of
    // two is back in range, bfloat16's (float's range) is not.
    const float LargeSum =
        toFloat(Dtype, fromFloat(Dtype, Large)) * static_cast<float>(Size);
    const float Expected = Op == FNN_ALLREDUCE_SUM
                               ? LargeSum
                               : LargeSum / static_cast<float>(Size);
    EXPECT_EQ(Got[3], toFloat(Dtype, fromFloat(Dtype, Expected)))
        << Size << " x " << Large << ", op " << Op;
    if (Size > 1 && Op == FNN_ALLREDUCE_SUM)
      EXPECT_EQ(Got[3], Inf) << "the sum of " << Size << " x " << Large;
    EXPECT_EQ(Got[4], 0.0f);
    EXPECT_TRUE(std::signbit(Got[4])) << "-0 on every worker, op " << Op;
    EXPECT_EQ(Got[5], -Inf) << "op " << Op;
  }
}

INSTANTIATE_TEST_SUITE_P(HalfTypes, HalfReductionTest,
                         ::testing::Values(int64_t{FNN_F16}, int64_t{FNN_BF16}),
                         [](const ::testing::TestParamInfo<int64_t> &Info) {
                           return std::string(
                               Info.param == FNN_BF16 ? "BFloat16" : "Float16");
                         });

TEST_F(CollectivesTest, AHalfBucketOfFewerElementsThanWorkers) {
  // Fewer elements than workers: some workers' chunks are empty.
  std::vector<uint16_t> One = {floatToHalf(static_cast<float>(Rank + 1))};
  fnn_kernel *Kernel = allreduce(1, FNN_F16, FNN_ALLREDUCE_SUM);
  fnn_allreduce_start(Kernel, One.data());
  fnn_allreduce_wait(Kernel);
  EXPECT_EQ(halfToFloat(One[0]), static_cast<float>(Size * (Size + 1) / 2));
  fnn_kernel_destroy(Kernel);
}

TEST_F(CollectivesTest, RefusesAnIntegerBucket) {
  fnn_allreduce_desc Desc = {4, FNN_I64, FNN_ALLREDUCE_SUM};
  EXPECT_EQ(fnn_allreduce_create(Device, &Desc), nullptr);
  EXPECT_NE(std::string(fnn_last_error()).find("float16 and bfloat16"),
            std::string::npos)
      << fnn_last_error();
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
