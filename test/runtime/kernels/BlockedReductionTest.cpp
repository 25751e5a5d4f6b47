//===- BlockedReductionTest.cpp - fnn_reduce over trailing dimensions -----===//
//
// Reductions whose reduced dimensions follow the kept ones (full reductions
// among them, e.g. the L2 loss's sum of squares of a weight) run the
// hand-written blocked reduction: held to a sum within about an ulp of the
// exact one (a float running sum misses that by far on the large cases),
// exact extrema, NaN propagation, and the same bits on 1 and 2 threads.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <limits>
#include <string>

extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int);
}

using namespace fastnn::test;

namespace {

struct BlockedCase {
  std::string Name;
  int64_t Kind;
  fnn_shape Input, Output;
  /// Inputs are uniform in [Lo, 1): Lo 0 for sums of squares.
  float Lo = -1.f;
};

/// Kept positions (Rows) times reduced elements each (Length), the reduced
/// dimensions being the trailing ones of every case here.
int64_t reducedLength(const BlockedCase &P) {
  return numElements(P.Input) / numElements(P.Output);
}

std::vector<float> runReduce(fnn_device *Device, const BlockedCase &P,
                             const std::vector<float> &X) {
  fnn_reduce_desc D{};
  D.input = P.Input;
  D.output = P.Output;
  D.dtype = FNN_F32;
  D.kind = P.Kind;
  KernelPtr K(fnn_reduce_create(Device, &D));
  EXPECT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> Y(numElements(P.Output), -7.f);
  if (K)
    fnn_reduce_forward(K.get(), X.data(), Y.data());
  return Y;
}

class BlockedReductionTest : public KernelTest,
                             public ::testing::WithParamInterface<BlockedCase> {
};

TEST_P(BlockedReductionTest, MatchesDoubleReference) {
  const BlockedCase &P = GetParam();
  std::vector<float> X = randomData(numElements(P.Input), 21, P.Lo);
  int64_t Rows = numElements(P.Output), Length = reducedLength(P);
  std::vector<float> Y = runReduce(Device, P, X);
  ASSERT_EQ(static_cast<int64_t>(Y.size()), Rows);
  size_t Bad = 0;
  for (int64_t R = 0; R < Rows; ++R) {
    const float *Row = X.data() + R * Length;
    double Sum = 0, Magnitude = 0;
    double Max = -std::numeric_limits<double>::infinity(),
           Min = std::numeric_limits<double>::infinity();
    for (int64_t I = 0; I < Length; ++I) {
      Sum += Row[I];
      Magnitude += std::abs(Row[I]);
      Max = std::max<double>(Max, Row[I]);
      Min = std::min<double>(Min, Row[I]);
    }
    double Ref = Sum, Tol = 0;
    switch (P.Kind) {
    case FNN_REDUCE_MEAN:
      Ref = Sum / Length;
      Magnitude /= Length;
      [[fallthrough]];
    case FNN_REDUCE_SUM:
      // Rounding to float (half an ulp, an ulp allowed) plus the float64
      // accumulation's error, bounded by the terms' magnitudes.
      Tol = std::abs(Ref) * std::ldexp(1.0, -23) + Magnitude * 1e-12;
      break;
    case FNN_REDUCE_MAX:
      Ref = Max;
      break;
    default:
      Ref = Min;
      break;
    }
    if (!(std::abs(Y[R] - Ref) <= Tol) && Bad++ < 5)
      ADD_FAILURE() << "output " << R << ": got " << Y[R] << ", expected "
                    << Ref << " within " << Tol;
  }
  EXPECT_EQ(Bad, 0u) << "outputs out of tolerance";
}

TEST_P(BlockedReductionTest, SameBitsOnOneAndTwoThreads) {
  const BlockedCase &P = GetParam();
  std::vector<float> X = randomData(numElements(P.Input), 22, P.Lo);
  int Threads = omp_get_max_threads();
  omp_set_num_threads(1);
  std::vector<float> One = runReduce(Device, P, X);
  omp_set_num_threads(2);
  std::vector<float> Two = runReduce(Device, P, X);
  omp_set_num_threads(Threads);
  ASSERT_EQ(One.size(), Two.size());
  EXPECT_EQ(std::memcmp(One.data(), Two.data(), One.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BlockedReductionTest,
    ::testing::Values(
        BlockedCase{"OneElement", FNN_REDUCE_SUM, shape({1}), shape({1})},
        BlockedCase{"OneElementRank3", FNN_REDUCE_MEAN, shape({1, 1, 1}),
                    shape({1, 1, 1})},
        BlockedCase{"OddVector", FNN_REDUCE_SUM, shape({1000003}), shape({1})},
        BlockedCase{"FilterSumOfSquares", FNN_REDUCE_SUM,
                    shape({512, 512, 3, 3}), shape({1, 1, 1, 1}), 0.f},
        BlockedCase{"FilterMean", FNN_REDUCE_MEAN, shape({64, 3, 7, 7}),
                    shape({1, 1, 1, 1})},
        BlockedCase{"FilterMax", FNN_REDUCE_MAX, shape({256, 64, 3, 3}),
                    shape({1, 1, 1, 1})},
        BlockedCase{"FilterMin", FNN_REDUCE_MIN, shape({256, 64, 3, 3}),
                    shape({1, 1, 1, 1})},
        BlockedCase{"ShortOddVectorMax", FNN_REDUCE_MAX, shape({13}),
                    shape({1})},
        BlockedCase{"UnitDimensionsBetween", FNN_REDUCE_SUM,
                    shape({1, 7, 1, 4099}), shape({1, 1, 1, 1})},
        BlockedCase{"RowsOfSeveralChunks", FNN_REDUCE_SUM, shape({3, 40001}),
                    shape({3, 1})},
        BlockedCase{"RowsOfSeveralChunksMean", FNN_REDUCE_MEAN,
                    shape({3, 5, 200, 33}), shape({3, 5, 1, 1})},
        BlockedCase{"ManyShortRows", FNN_REDUCE_MEAN, shape({8, 2048, 7, 7}),
                    shape({8, 2048, 1, 1})},
        BlockedCase{"ManyShortRowsMin", FNN_REDUCE_MIN, shape({2, 1, 9, 1, 5}),
                    shape({2, 1, 9, 1, 1})}),
    [](const ::testing::TestParamInfo<BlockedCase> &Info) {
      return Info.param.Name;
    });

class BlockedReductionNanTest : public KernelTest,
                                public ::testing::WithParamInterface<int64_t> {
};

TEST_P(BlockedReductionNanTest, PropagatesNan) {
  BlockedCase P{"", GetParam(), shape({3, 50000}), shape({3, 1})};
  std::vector<float> X = randomData(numElements(P.Input), 23);
  // Row 0: NaN first; row 1: inside its third chunk; row 2: none.
  X[0] = std::numeric_limits<float>::quiet_NaN();
  X[50000 + 2 * 16384 + 5] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> Y = runReduce(Device, P, X);
  EXPECT_TRUE(std::isnan(Y[0]));
  EXPECT_TRUE(std::isnan(Y[1]));
  EXPECT_FALSE(std::isnan(Y[2]));
}

INSTANTIATE_TEST_SUITE_P(Kinds, BlockedReductionNanTest,
                         ::testing::Values(FNN_REDUCE_SUM, FNN_REDUCE_MEAN,
                                           FNN_REDUCE_MAX, FNN_REDUCE_MIN));

TEST_F(KernelTest, ReduceRejectsAnUnknownKind) {
  fnn_reduce_desc D{};
  D.input = shape({4, 8});
  D.output = shape({1, 1});
  D.dtype = FNN_F32;
  D.kind = 9;
  KernelPtr K(fnn_reduce_create(Device, &D));
  EXPECT_EQ(K, nullptr);
  EXPECT_NE(std::string(fnn_last_error()).find("unknown reduction kind 9"),
            std::string::npos)
      << fnn_last_error();
}

} // namespace
