//===- NormalizationTest.cpp - fnn_batch_norm and fnn_lrn -----------------===//

#include "KernelTestUtil.h"

#include <string>

using namespace fastnn::test;

namespace {

struct BatchNormCase {
  std::string Name;
  fnn_shape Input; // logical N, C, spatial...
  bool Nhwc, Relu;
};

class BatchNormTest : public KernelTest,
                      public ::testing::WithParamInterface<BatchNormCase> {};

TEST_P(BatchNormTest, MatchesReference) {
  const BatchNormCase &P = GetParam();
  int64_t N = P.Input.dims[0], C = P.Input.dims[1];
  int64_t Spatial = numElements(P.Input) / (N * C);
  std::vector<float> X = randomData(numElements(P.Input), 5, -2.f, 2.f);
  std::vector<float> Scale = randomData(C, 6);
  std::vector<float> Shift = randomData(C, 7);
  std::vector<float> Mean = randomData(C, 8);
  std::vector<float> Var = randomData(C, 9, 0.1f, 2.f);
  const double Eps = 1e-3;
  std::vector<double> Ref(X.size());
  for (int64_t I = 0; I < N * C * Spatial; ++I) {
    int64_t Ch = I / Spatial % C;
    double Y =
        Scale[Ch] * (X[I] - double(Mean[Ch])) / std::sqrt(Var[Ch] + Eps) +
        Shift[Ch];
    Ref[I] = P.Relu && Y < 0 ? 0 : Y;
  }

  fnn_batch_norm_desc D{};
  D.input = P.Input;
  if (P.Nhwc) {
    // N, C, H, W -> N, H, W, C.
    D.input = shape({N, P.Input.dims[2], P.Input.dims[3], C});
    X = nchwToNhwc(X, N, C, P.Input.dims[2], P.Input.dims[3]);
  }
  D.dtype = FNN_F32;
  D.layout = P.Nhwc ? FNN_NHWC : FNN_NCHW;
  D.post_op = P.Relu ? FNN_POST_RELU : FNN_POST_NONE;
  D.epsilon = Eps;
  KernelPtr K(fnn_batch_norm_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> Y(X.size());
  fnn_batch_norm_forward(K.get(), X.data(), Scale.data(), Shift.data(),
                         Mean.data(), Var.data(), Y.data());
  if (P.Nhwc)
    Y = nhwcToNchw(Y, N, C, P.Input.dims[2], P.Input.dims[3]);
  expectClose(Y, Ref);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BatchNormTest,
    ::testing::Values(BatchNormCase{"Nchw", shape({2, 5, 6, 7}), false, false},
                      BatchNormCase{"NchwRelu", shape({2, 5, 6, 7}), false,
                                    true},
                      BatchNormCase{"Nhwc", shape({2, 5, 6, 7}), true, false},
                      BatchNormCase{"Rank2", shape({4, 9}), false, false}),
    [](const ::testing::TestParamInfo<BatchNormCase> &Info) {
      return Info.param.Name;
    });

// The kernel folds the statistics into a per-channel scale and shift inside
// every call: training updates them in place between calls.
TEST_F(KernelTest, BatchNormReadsTheStatisticsOnEveryCall) {
  const int64_t N = 2, C = 16, Spatial = 9;
  std::vector<float> X = randomData(N * C * Spatial, 1);
  std::vector<float> Scale = randomData(C, 2), Shift = randomData(C, 3),
                     Mean = randomData(C, 4), Var = randomData(C, 5, 0.1f, 2.f);
  fnn_batch_norm_desc D{};
  D.input = shape({N, C, 3, 3});
  D.dtype = FNN_F32;
  D.layout = FNN_NCHW;
  D.epsilon = 1e-5;
  KernelPtr K(fnn_batch_norm_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> Y(X.size());
  for (int Call = 0; Call < 2; ++Call) {
    if (Call == 1)
      for (int64_t Ch = 0; Ch < C; ++Ch) {
        Scale[Ch] *= -2.f;
        Shift[Ch] += 1.f;
        Mean[Ch] -= 0.5f;
        Var[Ch] *= 3.f;
      }
    fnn_batch_norm_forward(K.get(), X.data(), Scale.data(), Shift.data(),
                           Mean.data(), Var.data(), Y.data());
    std::vector<double> Ref(X.size());
    for (size_t I = 0; I < X.size(); ++I) {
      int64_t Ch = I / Spatial % C;
      Ref[I] = Scale[Ch] * (X[I] - double(Mean[Ch])) /
                   std::sqrt(Var[Ch] + D.epsilon) +
               Shift[Ch];
    }
    expectClose(Y, Ref);
  }
}

struct LrnCase {
  std::string Name;
  int64_t Size;
  bool Nhwc;
};

class LrnTest : public KernelTest,
                public ::testing::WithParamInterface<LrnCase> {};

TEST_P(LrnTest, MatchesOnnxFormula) {
  const LrnCase &P = GetParam();
  const int64_t N = 2, C = 12, H = 5, W = 4;
  // A large alpha so that the normalisation visibly matters.
  const double Alpha = 0.5, Beta = 0.75, Bias = 2.0;
  std::vector<float> X = randomData(N * C * H * W, 10, -2.f, 2.f);
  std::vector<double> Ref(X.size());
  int64_t Half = (P.Size - 1) / 2;
  for (int64_t Nn = 0; Nn < N; ++Nn)
    for (int64_t Ch = 0; Ch < C; ++Ch)
      for (int64_t S = 0; S < H * W; ++S) {
        double Sum = 0;
        for (int64_t J = std::max<int64_t>(0, Ch - Half);
             J <= std::min(C - 1, Ch + Half); ++J) {
          double V = X[(Nn * C + J) * H * W + S];
          Sum += V * V;
        }
        int64_t I = (Nn * C + Ch) * H * W + S;
        Ref[I] = X[I] / std::pow(Bias + Alpha / P.Size * Sum, Beta);
      }

  fnn_lrn_desc D{};
  D.input = layoutShape(N, C, H, W, P.Nhwc);
  if (P.Nhwc)
    X = nchwToNhwc(X, N, C, H, W);
  D.dtype = FNN_F32;
  D.layout = P.Nhwc ? FNN_NHWC : FNN_NCHW;
  D.size = P.Size;
  D.alpha = Alpha;
  D.beta = Beta;
  D.bias = Bias;
  KernelPtr K(fnn_lrn_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> Y(X.size());
  fnn_lrn_forward(K.get(), X.data(), Y.data());
  if (P.Nhwc)
    Y = nhwcToNchw(Y, N, C, H, W);
  expectClose(Y, Ref);
}

INSTANTIATE_TEST_SUITE_P(Cases, LrnTest,
                         ::testing::Values(LrnCase{"Size5", 5, false},
                                           LrnCase{"Size9", 9, false},
                                           LrnCase{"Size5Nhwc", 5, true}),
                         [](const ::testing::TestParamInfo<LrnCase> &Info) {
                           return Info.param.Name;
                         });

TEST_F(KernelTest, LrnRejectsEvenSize) {
  fnn_lrn_desc D{};
  D.input = shape({1, 8, 4, 4});
  D.dtype = FNN_F32;
  D.size = 4;
  D.alpha = 1e-4;
  D.beta = 0.75;
  D.bias = 1;
  EXPECT_EQ(fnn_lrn_create(Device, &D), nullptr);
  EXPECT_NE(std::string(fnn_last_error()).find("odd"), std::string::npos)
      << fnn_last_error();
}

} // namespace
