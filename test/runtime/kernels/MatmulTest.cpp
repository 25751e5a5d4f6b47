//===- MatmulTest.cpp - fnn_matmul against a naive reference --------------===//

#include "KernelTestUtil.h"

#include <algorithm>
#include <string>

using namespace fastnn::test;

namespace {

struct MatmulCase {
  std::string Name;
  fnn_shape A, B, Output; // as stored (A is K x M when transposed)
  bool TransA, TransB, Bias, Relu;
};

/// Index of \p Out's batch position in an operand whose batch dimensions
/// (right-aligned, size-1 dimensions broadcast) are \p S's leading ones.
int64_t batchOffset(const fnn_shape &S, const fnn_shape &Out, int64_t Batch) {
  int64_t Offset = 0, Stride = S.dims[S.rank - 1] * S.dims[S.rank - 2];
  for (int64_t I = Out.rank - 3, J = S.rank - 3; I >= 0; --I, --J) {
    int64_t Idx = Batch % Out.dims[I];
    Batch /= Out.dims[I];
    if (J < 0)
      continue;
    if (S.dims[J] != 1)
      Offset += Idx * Stride;
    Stride *= S.dims[J];
  }
  return Offset;
}

class MatmulTest : public KernelTest,
                   public ::testing::WithParamInterface<MatmulCase> {};

TEST_P(MatmulTest, MatchesReference) {
  const MatmulCase &P = GetParam();
  const fnn_shape &O = P.Output;
  int64_t M = O.dims[O.rank - 2], N = O.dims[O.rank - 1];
  int64_t K = P.A.dims[P.A.rank - (P.TransA ? 2 : 1)];
  std::vector<float> A = randomData(numElements(P.A), 11);
  std::vector<float> B = randomData(numElements(P.B), 12);
  std::vector<float> Bias = randomData(N, 13);
  int64_t Batches = numElements(O) / (M * N);
  std::vector<double> Ref(numElements(O));
  for (int64_t Bt = 0; Bt < Batches; ++Bt) {
    const float *Ab = A.data() + batchOffset(P.A, O, Bt);
    const float *Bb = B.data() + batchOffset(P.B, O, Bt);
    for (int64_t I = 0; I < M; ++I)
      for (int64_t J = 0; J < N; ++J) {
        double Sum = P.Bias ? Bias[J] : 0.0;
        for (int64_t L = 0; L < K; ++L)
          Sum += double(P.TransA ? Ab[L * M + I] : Ab[I * K + L]) *
                 (P.TransB ? Bb[J * K + L] : Bb[L * N + J]);
        Ref[(Bt * M + I) * N + J] = P.Relu && Sum < 0 ? 0 : Sum;
      }
  }

  fnn_matmul_desc D{};
  D.a = P.A;
  D.b = P.B;
  D.output = O;
  D.dtype = FNN_F32;
  D.transpose_a = P.TransA;
  D.transpose_b = P.TransB;
  D.has_bias = P.Bias;
  D.post_op = P.Relu ? FNN_POST_RELU : FNN_POST_NONE;
  KernelPtr Kernel(fnn_matmul_create(Device, &D));
  ASSERT_NE(Kernel, nullptr) << fnn_last_error();
  std::vector<float> Y(Ref.size());
  fnn_matmul_forward(Kernel.get(), A.data(), B.data(),
                     P.Bias ? Bias.data() : nullptr, Y.data());
  expectClose(Y, Ref);

  // With constant_b, b in the layout oneDNN prefers, prepared on the
  // first call and reused by the second.
  D.constant_b = 1;
  KernelPtr Constant(fnn_matmul_create(Device, &D));
  ASSERT_NE(Constant, nullptr) << fnn_last_error();
  for (int Call = 0; Call < 2; ++Call) {
    std::fill(Y.begin(), Y.end(), -7.f);
    fnn_matmul_forward(Constant.get(), A.data(), B.data(),
                       P.Bias ? Bias.data() : nullptr, Y.data());
    expectClose(Y, Ref);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MatmulTest,
    ::testing::Values(
        MatmulCase{"Plain2D", shape({7, 13}), shape({13, 5}), shape({7, 5}),
                   false, false, false, false},
        MatmulCase{"TransposeA", shape({13, 7}), shape({13, 5}), shape({7, 5}),
                   true, false, false, false},
        MatmulCase{"TransposeB", shape({7, 13}), shape({5, 13}), shape({7, 5}),
                   false, true, false, false},
        MatmulCase{"TransposeBoth", shape({13, 7}), shape({5, 13}),
                   shape({7, 5}), true, true, false, false},
        MatmulCase{"BiasRelu", shape({16, 64}), shape({10, 64}),
                   shape({16, 10}), false, true, true, true},
        MatmulCase{"Batched", shape({3, 4, 6}), shape({3, 6, 5}),
                   shape({3, 4, 5}), false, false, false, false},
        MatmulCase{"BatchedBroadcastRank", shape({3, 4, 6}), shape({6, 5}),
                   shape({3, 4, 5}), false, false, true, false},
        MatmulCase{"BatchedBroadcastBoth", shape({1, 3, 4, 6}),
                   shape({2, 1, 6, 5}), shape({2, 3, 4, 5}), false, false,
                   false, false},
        MatmulCase{"BatchedTransposed", shape({2, 6, 4}), shape({2, 5, 6}),
                   shape({2, 4, 5}), true, true, true, false}),
    [](const ::testing::TestParamInfo<MatmulCase> &Info) {
      return Info.param.Name;
    });

TEST_F(KernelTest, MatmulRejectsMismatchedInnerDims) {
  fnn_matmul_desc D{};
  D.a = shape({4, 6});
  D.b = shape({5, 3});
  D.output = shape({4, 3});
  D.dtype = FNN_F32;
  EXPECT_EQ(fnn_matmul_create(Device, &D), nullptr);
  std::string Error = fnn_last_error();
  EXPECT_NE(Error.find("fnn_matmul_create"), std::string::npos) << Error;
  EXPECT_NE(Error.find("a 4x6, b 5x3"), std::string::npos) << Error;
}

} // namespace
