//===- LrnTrainTest.cpp - training LRN and its backward vs float64 --------===//
//
// The training forward (through fnn_lrn_forward) against the float64 ONNX
// formula, and fnn_lrn_backward against central finite differences of that
// float64 forward (of sum(grad_output * y)).
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <string>

using namespace fastnn::test;

namespace {

struct LrnCase {
  std::string Name;
  int64_t N, C, H, W, Size;
  double Alpha, Beta, Bias;
  bool Nhwc;
};

/// y = x / (bias + alpha / size * sum of x^2 over the window)^beta, NCHW.
std::vector<double> forward(const LrnCase &P, const std::vector<double> &X) {
  std::vector<double> Y(X.size());
  int64_t S = P.H * P.W, Half = (P.Size - 1) / 2;
  for (int64_t A = 0; A < P.N; ++A)
    for (int64_t C = 0; C < P.C; ++C)
      for (int64_t I = 0; I < S; ++I) {
        double Sum = 0;
        for (int64_t J = std::max<int64_t>(0, C - Half);
             J <= std::min(P.C - 1, C + Half); ++J)
          Sum += std::pow(X[(A * P.C + J) * S + I], 2);
        int64_t At = (A * P.C + C) * S + I;
        Y[At] = X[At] / std::pow(P.Bias + P.Alpha / P.Size * Sum, P.Beta);
      }
  return Y;
}

class LrnTrainTest : public KernelTest,
                     public ::testing::WithParamInterface<LrnCase> {};

TEST_P(LrnTrainTest, ForwardAndBackwardMatchFloat64) {
  const LrnCase &P = GetParam();
  const int64_t Count = P.N * P.C * P.H * P.W;
  std::vector<float> X = randomData(Count, 31, -2.f, 2.f);
  std::vector<float> Dy = randomData(Count, 32);
  std::vector<double> Xd(X.begin(), X.end());
  std::vector<double> RefY = forward(P, Xd);
  std::vector<double> RefDx(Count);
  const double Step = 1e-6;
  for (int64_t I = 0; I < Count; ++I) {
    std::vector<double> Plus = Xd, Minus = Xd;
    Plus[I] += Step;
    Minus[I] -= Step;
    std::vector<double> YPlus = forward(P, Plus), YMinus = forward(P, Minus);
    for (int64_t J = 0; J < Count; ++J)
      RefDx[I] += Dy[J] * (YPlus[J] - YMinus[J]) / (2 * Step);
  }

  fnn_lrn_desc D{};
  D.input = P.Nhwc ? shape({P.N, P.H, P.W, P.C}) : shape({P.N, P.C, P.H, P.W});
  D.dtype = FNN_F32;
  D.layout = P.Nhwc ? FNN_NHWC : FNN_NCHW;
  D.size = P.Size;
  D.alpha = P.Alpha;
  D.beta = P.Beta;
  D.bias = P.Bias;
  KernelPtr Fw(fnn_lrn_train_create(Device, &D));
  ASSERT_NE(Fw, nullptr) << fnn_last_error();
  KernelPtr Bw(fnn_lrn_backward_create(Device, &D, Fw.get()));
  ASSERT_NE(Bw, nullptr) << fnn_last_error();

  auto ToLayout = [&](const std::vector<float> &V) {
    return P.Nhwc ? nchwToNhwc(V, P.N, P.C, P.H, P.W) : V;
  };
  auto FromLayout = [&](const std::vector<float> &V) {
    return P.Nhwc ? nhwcToNchw(V, P.N, P.C, P.H, P.W) : V;
  };
  std::vector<float> Xin = ToLayout(X), DyIn = ToLayout(Dy);
  std::vector<float> Y(Count, -7.f), Dx(Count, -7.f);
  fnn_lrn_forward(Fw.get(), Xin.data(), Y.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(FromLayout(Y), RefY);
  fnn_lrn_backward(Bw.get(), Xin.data(), DyIn.data(), Dx.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(FromLayout(Dx), RefDx);

  // The backward keeps the saved workspace alive past its forward kernel.
  Fw.reset();
  std::vector<float> Again(Count, -7.f);
  fnn_lrn_backward(Bw.get(), Xin.data(), DyIn.data(), Again.data());
  EXPECT_EQ(Again, Dx);
}

// Large alphas, so that the cross-channel term of the gradient matters.
// Layouts and channel counts pick oneDNN's jit implementations (NHWC, and
// NCHW with 16 channels and size 5, whose forward saves a workspace that the
// reference backward does not read) and its reference one (the other NCHW
// cases, no workspace at all).
const LrnCase Cases[] = {
    {"Size5Nchw16", 2, 16, 3, 4, 5, 0.8, 0.75, 1.0, false},
    {"Size5Nhwc16", 2, 16, 3, 4, 5, 0.8, 0.75, 1.0, true},
    {"Size3Nchw5", 2, 5, 4, 3, 3, 1.5, 0.6, 2.0, false},
    {"Size3Nhwc5", 2, 5, 4, 3, 3, 1.5, 0.6, 2.0, true},
    {"AlexNetNchw7", 1, 7, 3, 3, 5, 1e-4, 0.75, 1.0, false},
    {"AlexNetNhwc7", 1, 7, 3, 3, 5, 1e-4, 0.75, 1.0, true},
};

INSTANTIATE_TEST_SUITE_P(Cases, LrnTrainTest, ::testing::ValuesIn(Cases),
                         [](const auto &Info) { return Info.param.Name; });

TEST_F(KernelTest, LrnBackwardNeedsTrainingForward) {
  fnn_lrn_desc D{};
  D.input = shape({1, 16, 4, 4});
  D.dtype = FNN_F32;
  D.size = 5;
  D.alpha = 1e-4;
  D.beta = 0.75;
  D.bias = 1;
  KernelPtr Inference(fnn_lrn_create(Device, &D));
  ASSERT_NE(Inference, nullptr) << fnn_last_error();
  EXPECT_EQ(fnn_lrn_backward_create(Device, &D, Inference.get()), nullptr);
  EXPECT_NE(std::string(fnn_last_error()).find("fnn_lrn_train_create"),
            std::string::npos)
      << fnn_last_error();
  EXPECT_EQ(fnn_lrn_backward_create(Device, &D, nullptr), nullptr);
}

} // namespace
