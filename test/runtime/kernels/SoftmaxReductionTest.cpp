//===- SoftmaxReductionTest.cpp - fnn_softmax and fnn_reduce --------------===//

#include "KernelTestUtil.h"

#include <limits>
#include <string>

using namespace fastnn::test;

namespace {

/// Visits every (outer, inner) position of \p S around dimension \p Axis.
struct AxisView {
  int64_t Outer = 1, Len, Inner = 1;
  AxisView(const fnn_shape &S, int64_t Axis) : Len(S.dims[Axis]) {
    for (int64_t I = 0; I < Axis; ++I)
      Outer *= S.dims[I];
    for (int64_t I = Axis + 1; I < S.rank; ++I)
      Inner *= S.dims[I];
  }
  int64_t index(int64_t O, int64_t A, int64_t I) const {
    return (O * Len + A) * Inner + I;
  }
};

struct SoftmaxCase {
  std::string Name;
  fnn_shape Input;
  int64_t Axis;
  bool Log;
};

class SoftmaxTest : public KernelTest,
                    public ::testing::WithParamInterface<SoftmaxCase> {};

TEST_P(SoftmaxTest, MatchesReference) {
  const SoftmaxCase &P = GetParam();
  int64_t Axis = P.Axis < 0 ? P.Axis + P.Input.rank : P.Axis;
  std::vector<float> X = randomData(numElements(P.Input), 14, -5.f, 5.f);
  std::vector<double> Ref(X.size());
  AxisView V(P.Input, Axis);
  for (int64_t O = 0; O < V.Outer; ++O)
    for (int64_t I = 0; I < V.Inner; ++I) {
      double Max = -std::numeric_limits<double>::infinity(), Sum = 0;
      for (int64_t A = 0; A < V.Len; ++A)
        Max = std::max<double>(Max, X[V.index(O, A, I)]);
      for (int64_t A = 0; A < V.Len; ++A)
        Sum += std::exp(X[V.index(O, A, I)] - Max);
      for (int64_t A = 0; A < V.Len; ++A) {
        double Shifted = X[V.index(O, A, I)] - Max;
        Ref[V.index(O, A, I)] =
            P.Log ? Shifted - std::log(Sum) : std::exp(Shifted) / Sum;
      }
    }
  fnn_softmax_desc D{};
  D.input = P.Input;
  D.dtype = FNN_F32;
  D.axis = P.Axis;
  D.log = P.Log;
  KernelPtr K(fnn_softmax_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> Y(X.size());
  fnn_softmax_forward(K.get(), X.data(), Y.data());
  expectClose(Y, Ref);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SoftmaxTest,
    ::testing::Values(SoftmaxCase{"Axis1", shape({2, 5, 3, 4}), 1, false},
                      SoftmaxCase{"LastAxis", shape({6, 10}), 1, false},
                      SoftmaxCase{"NegativeLastAxis", shape({2, 3, 17}), -1,
                                  false},
                      SoftmaxCase{"LogAxis1", shape({2, 5, 3, 4}), 1, true},
                      SoftmaxCase{"LogLastAxis", shape({6, 1000}), -1, true}),
    [](const ::testing::TestParamInfo<SoftmaxCase> &Info) {
      return Info.param.Name;
    });

struct ReduceCase {
  std::string Name;
  int64_t Kind;
  fnn_shape Input, Output;
};

class ReductionTest : public KernelTest,
                      public ::testing::WithParamInterface<ReduceCase> {};

TEST_P(ReductionTest, MatchesReference) {
  const ReduceCase &P = GetParam();
  std::vector<float> X = randomData(numElements(P.Input), 15);
  int64_t OutCount = numElements(P.Output);
  int64_t Group = numElements(P.Input) / OutCount;
  std::vector<double> Sum(OutCount, 0.0),
      Max(OutCount, -std::numeric_limits<double>::infinity()),
      Min(OutCount, std::numeric_limits<double>::infinity());
  for (int64_t I = 0; I < numElements(P.Input); ++I) {
    // Row-major index of I's position with reduced dimensions dropped to 0.
    int64_t Rest = I, Out = 0, Stride = 1;
    for (int64_t D = P.Input.rank - 1; D >= 0; --D) {
      int64_t Idx = Rest % P.Input.dims[D];
      Rest /= P.Input.dims[D];
      if (P.Output.dims[D] != 1)
        Out += Idx * Stride;
      Stride *= P.Output.dims[D];
    }
    Sum[Out] += X[I];
    Max[Out] = std::max<double>(Max[Out], X[I]);
    Min[Out] = std::min<double>(Min[Out], X[I]);
  }
  std::vector<double> Ref(OutCount);
  for (int64_t I = 0; I < OutCount; ++I)
    Ref[I] = P.Kind == FNN_REDUCE_SUM    ? Sum[I]
             : P.Kind == FNN_REDUCE_MEAN ? Sum[I] / Group
             : P.Kind == FNN_REDUCE_MAX  ? Max[I]
                                         : Min[I];
  fnn_reduce_desc D{};
  D.input = P.Input;
  D.output = P.Output;
  D.dtype = FNN_F32;
  D.kind = P.Kind;
  KernelPtr K(fnn_reduce_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> Y(OutCount);
  fnn_reduce_forward(K.get(), X.data(), Y.data());
  expectClose(Y, Ref);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ReductionTest,
    ::testing::Values(ReduceCase{"SumHW", FNN_REDUCE_SUM, shape({2, 3, 6, 5}),
                                 shape({2, 3, 1, 1})},
                      ReduceCase{"MeanHW", FNN_REDUCE_MEAN, shape({2, 3, 6, 5}),
                                 shape({2, 3, 1, 1})},
                      ReduceCase{"MaxHW", FNN_REDUCE_MAX, shape({2, 3, 6, 5}),
                                 shape({2, 3, 1, 1})},
                      ReduceCase{"MinHW", FNN_REDUCE_MIN, shape({2, 3, 6, 5}),
                                 shape({2, 3, 1, 1})},
                      ReduceCase{"SumC", FNN_REDUCE_SUM, shape({2, 7, 4, 5}),
                                 shape({2, 1, 4, 5})},
                      ReduceCase{"MeanC", FNN_REDUCE_MEAN, shape({2, 7, 4, 5}),
                                 shape({2, 1, 4, 5})},
                      ReduceCase{"MaxC", FNN_REDUCE_MAX, shape({2, 7, 4, 5}),
                                 shape({2, 1, 4, 5})},
                      ReduceCase{"MinC", FNN_REDUCE_MIN, shape({2, 7, 4, 5}),
                                 shape({2, 1, 4, 5})},
                      ReduceCase{"MeanAll", FNN_REDUCE_MEAN, shape({3, 10}),
                                 shape({1, 1})},
                      ReduceCase{"NothingReduced", FNN_REDUCE_MAX,
                                 shape({2, 1, 3}), shape({2, 1, 3})}),
    [](const ::testing::TestParamInfo<ReduceCase> &Info) {
      return Info.param.Name;
    });

} // namespace
