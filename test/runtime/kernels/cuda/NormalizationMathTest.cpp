//===- NormalizationMathTest.cpp - CUDA LRN and BN math against the CPU ---===//
//
// LRN: the CUDA kernels' per-element forward and backward
// (NormalizationMath.h) over whole tensors, against the CPU kernels on the
// same inputs (sizes 3, 5 and cifarnet's 9, both layouts).
// Batch norm: cuDNN's training forward hands out the unbiased batch
// variance, which the CUDA backend converts to the biased one the ABI wants
// (biasedVariance), and gives cuDNN's backward 1/sqrt(variance + epsilon)
// (inverseStdDev); both conversions are checked against the CPU kernel's
// batch statistics.
//
//===----------------------------------------------------------------------===//

#include "../KernelTestUtil.h"

#include "NormalizationMath.h"

#include <string>

using namespace fastnn::test;
using namespace fastnn::cuda;

namespace {

struct LrnCase {
  std::string Name;
  int64_t Layout, Size;
  int64_t N, C, H, W;
};

void PrintTo(const LrnCase &C, std::ostream *OS) { *OS << C.Name; }

class LrnMath : public KernelTest,
                public ::testing::WithParamInterface<LrnCase> {};

TEST_P(LrnMath, ForwardAndBackwardMatchTheCpuKernels) {
  const LrnCase &T = GetParam();
  bool Nhwc = T.Layout == FNN_NHWC;
  fnn_lrn_desc D{};
  D.input = layoutShape(T.N, T.C, T.H, T.W, Nhwc);
  D.dtype = FNN_F32;
  D.layout = T.Layout;
  D.size = T.Size;
  D.alpha = 1e-2;
  D.beta = 0.75;
  D.bias = 1.5;
  KernelPtr Forward(fnn_lrn_train_create(Device, &D));
  ASSERT_NE(Forward, nullptr) << fnn_last_error();
  KernelPtr Backward(fnn_lrn_backward_create(Device, &D, Forward.get()));
  ASSERT_NE(Backward, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 11, -2.f, 2.f);
  std::vector<float> Dy = randomData(X.size(), 12), Y(X.size()), Dx(X.size());
  fnn_lrn_forward(Forward.get(), X.data(), Y.data());
  fnn_lrn_backward(Backward.get(), X.data(), Dy.data(), Dx.data());

  LrnParams P{T.C, T.Size, static_cast<float>(D.alpha),
              static_cast<float>(D.beta), static_cast<float>(D.bias)};
  std::vector<float> YMath(X.size()), DxMath(X.size());
  int64_t Pixels = T.H * T.W;
  for (int64_t N = 0; N < T.N; ++N)
    for (int64_t Pixel = 0; Pixel < Pixels; ++Pixel) {
      auto At = [&](int64_t Ch) {
        return Nhwc ? (N * Pixels + Pixel) * T.C + Ch
                    : (N * T.C + Ch) * Pixels + Pixel;
      };
      auto Xc = [&](int64_t Ch) { return X[At(Ch)]; };
      auto Dyc = [&](int64_t Ch) { return Dy[At(Ch)]; };
      for (int64_t Ch = 0; Ch < T.C; ++Ch) {
        YMath[At(Ch)] = lrnForwardAt(P, Xc, Ch);
        DxMath[At(Ch)] = lrnBackwardAt(P, Xc, Dyc, Ch);
      }
    }
  expectClose(YMath, std::vector<double>(Y.begin(), Y.end()), 1e-5);
  expectClose(DxMath, std::vector<double>(Dx.begin(), Dx.end()), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Windows, LrnMath,
    ::testing::Values(LrnCase{"size5_nchw", FNN_NCHW, 5, 2, 7, 3, 4},
                      LrnCase{"size3_nhwc", FNN_NHWC, 3, 2, 6, 3, 3},
                      LrnCase{"size9_nchw", FNN_NCHW, 9, 1, 20, 2, 3},
                      LrnCase{"size9_nhwc", FNN_NHWC, 9, 2, 13, 2, 2}),
    [](const auto &Info) { return Info.param.Name; });

TEST_F(KernelTest, BatchNormStatisticsConversionMatchesTheCpuKernel) {
  const int64_t N = 4, C = 3, H = 5, W = 6, Count = N * H * W;
  fnn_batch_norm_desc D{};
  D.input = shape({N, C, H, W});
  D.dtype = FNN_F32;
  D.layout = FNN_NCHW;
  D.epsilon = 1e-3;
  KernelPtr K(fnn_batch_norm_train_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 21, -3.f, 5.f);
  std::vector<float> Scale(C, 1.f), Shift(C, 0.f), Y(X.size());
  std::vector<float> Mean(C), Variance(C);
  fnn_batch_norm_train_forward(K.get(), X.data(), Scale.data(), Shift.data(),
                               nullptr, Y.data(), Mean.data(), Variance.data());
  std::vector<float> Converted(C), InvStd(C);
  std::vector<double> CpuVariance(C), CpuInvStd(C);
  for (int64_t Ch = 0; Ch < C; ++Ch) {
    // What cuDNN hands out: the unbiased variance (float).
    double Sum = 0, SumSq = 0;
    for (int64_t I = 0; I < N; ++I)
      for (int64_t P = 0; P < H * W; ++P)
        Sum += X[(I * C + Ch) * H * W + P];
    double M = Sum / Count;
    for (int64_t I = 0; I < N; ++I)
      for (int64_t P = 0; P < H * W; ++P) {
        double Dv = X[(I * C + Ch) * H * W + P] - M;
        SumSq += Dv * Dv;
      }
    float Unbiased = static_cast<float>(SumSq / (Count - 1));
    Converted[Ch] = biasedVariance(Unbiased, Count);
    CpuVariance[Ch] = Variance[Ch];
    InvStd[Ch] = inverseStdDev(Variance[Ch], D.epsilon);
    CpuInvStd[Ch] = 1.0 / std::sqrt(double(Variance[Ch]) + D.epsilon);
  }
  expectClose(Converted, CpuVariance, 1e-6);
  expectClose(InvStd, CpuInvStd, 1e-7);
  EXPECT_EQ(biasedVariance(2.f, 1), 0.f);
}

} // namespace
