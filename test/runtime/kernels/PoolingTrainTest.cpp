//===- PoolingTrainTest.cpp - training pooling and its backward -----------===//
//
// The training forward (through fnn_pool2d_forward) and fnn_pool2d_backward
// against a float64 reference: max routes each output gradient to its
// window's argmax (inputs are distinct, so there are no ties), average
// spreads it over the window's input elements divided as the forward divides.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

using namespace fastnn::test;

namespace {

struct PoolCase {
  std::string Name;
  int64_t Kind, IncludePad;
  int64_t N, C, H, W;
  int64_t Kernel[2], Strides[2], Pads[4], Dilations[2];
  bool Ceil;
  /// Set by the test, which runs each case in both layouts.
  bool Nhwc = false;
};

int64_t extent(int64_t In, int64_t K, int64_t S, int64_t D, int64_t P0,
               int64_t P1, bool Ceil) {
  int64_t Span = In + P0 + P1 - ((K - 1) * D + 1);
  int64_t Out = (Ceil ? (Span + S - 1) / S : Span / S) + 1;
  // As ONNX and PyTorch: the last window must start inside the input or the
  // begin padding.
  if (Ceil && (Out - 1) * S >= In + P0)
    --Out;
  return Out;
}

/// Distinct values in [-1, 1) in a random order, so max pooling has no ties.
std::vector<float> distinctData(size_t N, unsigned Seed) {
  std::vector<float> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = -1.f + 2.f * float(I) / float(N);
  std::mt19937 Gen(Seed);
  std::shuffle(V.begin(), V.end(), Gen);
  return V;
}

/// Forward output and input gradient of one case, NCHW.
void reference(const PoolCase &P, const std::vector<float> &X,
               const std::vector<float> &Dy, int64_t OH, int64_t OW,
               std::vector<double> &Y, std::vector<double> &Dx) {
  Y.assign(P.N * P.C * OH * OW, 0);
  Dx.assign(X.size(), 0);
  for (int64_t N = 0; N < P.N * P.C; ++N)
    for (int64_t Oh = 0; Oh < OH; ++Oh)
      for (int64_t Ow = 0; Ow < OW; ++Ow) {
        std::vector<int64_t> Covered;
        for (int64_t Kh = 0; Kh < P.Kernel[0]; ++Kh)
          for (int64_t Kw = 0; Kw < P.Kernel[1]; ++Kw) {
            int64_t Ih = Oh * P.Strides[0] - P.Pads[0] + Kh * P.Dilations[0];
            int64_t Iw = Ow * P.Strides[1] - P.Pads[1] + Kw * P.Dilations[1];
            if (Ih >= 0 && Ih < P.H && Iw >= 0 && Iw < P.W)
              Covered.push_back((N * P.H + Ih) * P.W + Iw);
          }
        int64_t Out = (N * OH + Oh) * OW + Ow;
        if (P.Kind == FNN_POOL_MAX) {
          int64_t Arg = *std::max_element(
              Covered.begin(), Covered.end(),
              [&](int64_t A, int64_t B) { return X[A] < X[B]; });
          Y[Out] = X[Arg];
          Dx[Arg] += Dy[Out];
          continue;
        }
        double Divisor = P.IncludePad ? double(P.Kernel[0] * P.Kernel[1])
                                      : double(Covered.size());
        for (int64_t I : Covered) {
          Y[Out] += X[I] / Divisor;
          Dx[I] += Dy[Out] / Divisor;
        }
      }
}

fnn_pool2d_desc makeDesc(const PoolCase &P, int64_t OH, int64_t OW) {
  fnn_pool2d_desc D{};
  D.input = layoutShape(P.N, P.C, P.H, P.W, P.Nhwc);
  D.output = layoutShape(P.N, P.C, OH, OW, P.Nhwc);
  D.dtype = FNN_F32;
  D.layout = P.Nhwc ? FNN_NHWC : FNN_NCHW;
  D.kind = P.Kind;
  D.count_include_pad = P.IncludePad;
  for (int J = 0; J < 2; ++J) {
    D.kernel[J] = P.Kernel[J];
    D.strides[J] = P.Strides[J];
    D.dilations[J] = P.Dilations[J];
  }
  for (int J = 0; J < 4; ++J)
    D.pads[J] = P.Pads[J];
  return D;
}

class PoolingTrainTest : public KernelTest,
                         public ::testing::WithParamInterface<PoolCase> {};

/// One case (NHWC float32 runs on the hand-written kernels where the CPU has
/// AVX2, NCHW on oneDNN).
void checkCase(const PoolCase &P, fnn_device *Device) {
  int64_t OH = extent(P.H, P.Kernel[0], P.Strides[0], P.Dilations[0], P.Pads[0],
                      P.Pads[2], P.Ceil);
  int64_t OW = extent(P.W, P.Kernel[1], P.Strides[1], P.Dilations[1], P.Pads[1],
                      P.Pads[3], P.Ceil);
  std::vector<float> X = distinctData(P.N * P.C * P.H * P.W, 5);
  std::vector<float> Dy = randomData(P.N * P.C * OH * OW, 6);
  std::vector<double> RefY, RefDx;
  reference(P, X, Dy, OH, OW, RefY, RefDx);

  fnn_pool2d_desc D = makeDesc(P, OH, OW);
  KernelPtr Fw(fnn_pool2d_train_create(Device, &D));
  ASSERT_NE(Fw, nullptr) << fnn_last_error();
  KernelPtr Bw(fnn_pool2d_backward_create(Device, &D, Fw.get()));
  ASSERT_NE(Bw, nullptr) << fnn_last_error();

  auto ToLayout = [&](const std::vector<float> &V, int64_t H, int64_t W) {
    return P.Nhwc ? nchwToNhwc(V, P.N, P.C, H, W) : V;
  };
  auto FromLayout = [&](const std::vector<float> &V, int64_t H, int64_t W) {
    return P.Nhwc ? nhwcToNchw(V, P.N, P.C, H, W) : V;
  };
  std::vector<float> Xin = ToLayout(X, P.H, P.W);
  std::vector<float> DyIn = ToLayout(Dy, OH, OW);
  std::vector<float> Y(RefY.size(), -7.f), Dx(X.size(), -7.f);
  fnn_pool2d_forward(Fw.get(), Xin.data(), Y.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(FromLayout(Y, OH, OW), RefY);
  fnn_pool2d_backward(Bw.get(), DyIn.data(), Dx.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(FromLayout(Dx, P.H, P.W), RefDx);

  // The backward keeps the saved argmax alive past its forward kernel.
  Fw.reset();
  std::vector<float> Again(X.size(), -7.f);
  fnn_pool2d_backward(Bw.get(), DyIn.data(), Again.data());
  EXPECT_EQ(Again, Dx);
}

TEST_P(PoolingTrainTest, ForwardAndBackwardMatchReference) {
  for (bool Nhwc : {false, true}) {
    SCOPED_TRACE(Nhwc ? "NHWC" : "NCHW");
    PoolCase P = GetParam();
    P.Nhwc = Nhwc;
    checkCase(P, Device);
  }
}

constexpr int64_t Max = FNN_POOL_MAX, Avg = FNN_POOL_AVG;

// Name, kind, include pad, N C H W, kernel, strides, pads (t l b r),
// dilations, ceil mode.
// clang-format off
const PoolCase Cases[] = {
    {"MaxPadded", Max, 0, 2, 3, 9, 9, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false},
    {"MaxOverlapping", Max, 0, 1, 4, 8, 7, {3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false},
    {"MaxAsymmetricPads", Max, 0, 1, 4, 8, 7, {2, 3}, {1, 2}, {0, 1, 1, 0}, {1, 1}, false},
    {"MaxCeil", Max, 0, 2, 3, 6, 7, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true},
    {"MaxDilated", Max, 0, 1, 2, 9, 8, {2, 3}, {1, 2}, {1, 0, 1, 2}, {2, 2}, false},
    {"MaxGlobal", Max, 0, 2, 5, 4, 3, {4, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false},
    {"AvgExcludePad", Avg, 0, 2, 3, 9, 9, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false},
    {"AvgIncludePad", Avg, 1, 2, 3, 9, 9, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false},
    {"AvgExcludePadCeil", Avg, 0, 1, 3, 6, 7, {3, 3}, {2, 2}, {1, 0, 0, 1}, {1, 1}, true},
    {"AvgIncludePadCeil", Avg, 1, 1, 3, 6, 7, {3, 3}, {2, 2}, {1, 0, 0, 1}, {1, 1}, true},
    {"AvgOverlapping", Avg, 0, 1, 4, 7, 8, {3, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false},
    {"AvgDilated", Avg, 0, 1, 2, 9, 8, {2, 3}, {1, 2}, {1, 0, 1, 2}, {2, 2}, false},
    {"MaxFortyChannels", Max, 0, 2, 40, 7, 6, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false},
    {"AvgFortyChannelsCeil", Avg, 1, 1, 40, 7, 7, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Cases, PoolingTrainTest, ::testing::ValuesIn(Cases),
                         [](const auto &Info) { return Info.param.Name; });

// Both layouts: NHWC float32 runs on the hand-written kernels, which check
// their forward kernel as oneDNN's do.
TEST_F(KernelTest, MaxPoolBackwardNeedsTrainingForward) {
  for (bool Nhwc : {false, true}) {
    SCOPED_TRACE(Nhwc ? "NHWC" : "NCHW");
    PoolCase P{"",     Max,          0,      1,     2,   4, 4, {2, 2},
               {2, 2}, {0, 0, 0, 0}, {1, 1}, false, Nhwc};
    fnn_pool2d_desc D = makeDesc(P, 2, 2);
    KernelPtr Inference(fnn_pool2d_create(Device, &D));
    ASSERT_NE(Inference, nullptr) << fnn_last_error();
    EXPECT_EQ(fnn_pool2d_backward_create(Device, &D, Inference.get()), nullptr);
    EXPECT_NE(std::string(fnn_last_error()).find("fnn_pool2d_train_create"),
              std::string::npos)
        << fnn_last_error();
    EXPECT_EQ(fnn_pool2d_backward_create(Device, &D, nullptr), nullptr);

    // A forward made for other shapes has another workspace.
    KernelPtr Training(fnn_pool2d_train_create(Device, &D));
    ASSERT_NE(Training, nullptr) << fnn_last_error();
    PoolCase Larger = P;
    Larger.H = Larger.W = 6;
    fnn_pool2d_desc Other = makeDesc(Larger, 3, 3);
    EXPECT_EQ(fnn_pool2d_backward_create(Device, &Other, Training.get()),
              nullptr);
    EXPECT_NE(std::string(fnn_last_error()).find("different descriptor"),
              std::string::npos)
        << fnn_last_error();
  }
}

} // namespace
