//===- ConvolutionBackwardTest.cpp - fnn_conv2d_backward vs float64 -------===//
//
// The reference differentiates L = sum(grad_output * conv(input, filter) +
// bias) by hand, in float64: every (output, tap) pair of the forward sum
// adds grad_output * filter to grad_input and grad_output * input to
// grad_filter.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

using namespace fastnn::test;

namespace {

struct ConvCase {
  int64_t N, C, H, W, O, KH, KW, Groups;
  int64_t Strides[2], Pads[4], Dilations[2];
  bool Bias;
  /// expectClose's tolerance. Winograd's input and output transforms add
  /// and subtract products before and after the elementwise products, so
  /// its float32 error scales with the sum of the products' magnitudes
  /// (~36 for these data over 144 taps; gradients sum over more), not with the
  /// output: 1e-4 on outputs near 1 is ~3e-6 of that sum, where the direct
  /// kernels keep 1e-5.
  double Tolerance = 1e-5;
};

int64_t extent(int64_t In, int64_t K, int64_t S, int64_t D, int64_t P0,
               int64_t P1) {
  return (In + P0 + P1 - ((K - 1) * D + 1)) / S + 1;
}

struct Grads {
  std::vector<double> Input, Filter, Bias;
};

/// NCHW / OIHW float64 gradients.
Grads reference(const ConvCase &P, const std::vector<float> &X,
                const std::vector<float> &Wt, const std::vector<float> &Dy,
                int64_t OH, int64_t OW) {
  int64_t I = P.C / P.Groups, OG = P.O / P.Groups;
  Grads R{std::vector<double>(X.size()), std::vector<double>(Wt.size()),
          std::vector<double>(P.O)};
  for (int64_t N = 0; N < P.N; ++N)
    for (int64_t O = 0; O < P.O; ++O)
      for (int64_t Y = 0; Y < OH; ++Y)
        for (int64_t Xo = 0; Xo < OW; ++Xo) {
          double G = Dy[((N * P.O + O) * OH + Y) * OW + Xo];
          R.Bias[O] += G;
          int64_t Group = O / OG;
          for (int64_t Ci = 0; Ci < I; ++Ci)
            for (int64_t Ky = 0; Ky < P.KH; ++Ky)
              for (int64_t Kx = 0; Kx < P.KW; ++Kx) {
                int64_t Iy = Y * P.Strides[0] - P.Pads[0] + Ky * P.Dilations[0];
                int64_t Ix =
                    Xo * P.Strides[1] - P.Pads[1] + Kx * P.Dilations[1];
                if (Iy < 0 || Iy >= P.H || Ix < 0 || Ix >= P.W)
                  continue;
                int64_t C = Group * I + Ci;
                size_t XI = ((N * P.C + C) * P.H + Iy) * P.W + Ix;
                size_t WI = ((O * I + Ci) * P.KH + Ky) * P.KW + Kx;
                R.Input[XI] += G * Wt[WI];
                R.Filter[WI] += G * X[XI];
              }
        }
  return R;
}

/// OIHW <-> OHWI for the NHWC runs.
std::vector<float> oihwToOhwi(const std::vector<float> &W, int64_t O, int64_t I,
                              int64_t H, int64_t Wd) {
  std::vector<float> R(W.size());
  for (int64_t A = 0; A < O; ++A)
    for (int64_t B = 0; B < I; ++B)
      for (int64_t Y = 0; Y < H; ++Y)
        for (int64_t X = 0; X < Wd; ++X)
          R[((A * H + Y) * Wd + X) * I + B] = W[((A * I + B) * H + Y) * Wd + X];
  return R;
}

class ConvolutionBackwardTest
    : public KernelTest,
      public ::testing::WithParamInterface<std::tuple<ConvCase, int64_t>> {};

TEST_P(ConvolutionBackwardTest, MatchesFloat64Reference) {
  const auto &[P, Layout] = GetParam();
  bool Nhwc = Layout == FNN_NHWC;
  int64_t I = P.C / P.Groups;
  int64_t OH =
      extent(P.H, P.KH, P.Strides[0], P.Dilations[0], P.Pads[0], P.Pads[2]);
  int64_t OW =
      extent(P.W, P.KW, P.Strides[1], P.Dilations[1], P.Pads[1], P.Pads[3]);
  std::vector<float> X = randomData(P.N * P.C * P.H * P.W, 1);
  std::vector<float> Wt = randomData(P.O * I * P.KH * P.KW, 2);
  std::vector<float> Dy = randomData(P.N * P.O * OH * OW, 3);
  Grads Ref = reference(P, X, Wt, Dy, OH, OW);

  fnn_conv2d_desc D{};
  D.input = layoutShape(P.N, P.C, P.H, P.W, Nhwc);
  D.filter = layoutShape(P.O, I, P.KH, P.KW, Nhwc);
  D.output = layoutShape(P.N, P.O, OH, OW, Nhwc);
  D.dtype = FNN_F32;
  D.layout = Layout;
  D.has_bias = P.Bias;
  D.groups = P.Groups;
  std::copy(P.Strides, P.Strides + 2, D.strides);
  std::copy(P.Pads, P.Pads + 4, D.pads);
  std::copy(P.Dilations, P.Dilations + 2, D.dilations);
  KernelPtr K(fnn_conv2d_backward_create(Device, &D));
  ASSERT_TRUE(K) << fnn_last_error();

  std::vector<float> Xin = Nhwc ? nchwToNhwc(X, P.N, P.C, P.H, P.W) : X;
  std::vector<float> Win = Nhwc ? oihwToOhwi(Wt, P.O, I, P.KH, P.KW) : Wt;
  std::vector<float> DyIn = Nhwc ? nchwToNhwc(Dy, P.N, P.O, OH, OW) : Dy;
  std::vector<float> Dx(X.size()), Dw(Wt.size()), Db(P.O);
  fnn_conv2d_backward(K.get(), Xin.data(), Win.data(), DyIn.data(), Dx.data(),
                      Dw.data(), P.Bias ? Db.data() : nullptr);
  ASSERT_STREQ(fnn_last_error(), "");
  if (Nhwc) {
    Dx = nhwcToNchw(Dx, P.N, P.C, P.H, P.W);
    // Compare in OHWI against the float64 values rearranged the same way.
    std::vector<double> RefW(Ref.Filter.size());
    for (int64_t A = 0; A < P.O; ++A)
      for (int64_t B = 0; B < I; ++B)
        for (int64_t Y = 0; Y < P.KH; ++Y)
          for (int64_t Xk = 0; Xk < P.KW; ++Xk)
            RefW[((A * P.KH + Y) * P.KW + Xk) * I + B] =
                Ref.Filter[((A * I + B) * P.KH + Y) * P.KW + Xk];
    Ref.Filter = RefW;
  }
  expectClose(Dx, Ref.Input, P.Tolerance);
  expectClose(Dw, Ref.Filter, P.Tolerance);
  if (P.Bias)
    expectClose(Db, Ref.Bias, P.Tolerance);

  // Gradients the caller does not want may be NULL.
  std::vector<float> Dx2(X.size());
  fnn_conv2d_backward(K.get(), Xin.data(), Win.data(), DyIn.data(), Dx2.data(),
                      nullptr, nullptr);
  ASSERT_STREQ(fnn_last_error(), "");
  if (Nhwc)
    Dx2 = nhwcToNchw(Dx2, P.N, P.C, P.H, P.W);
  expectClose(Dx2, Ref.Input, P.Tolerance);

  // Without grad_input (the first convolution's input is the images) only
  // the weight-gradient steps run, and they still give the same gradients.
  std::vector<float> Dw2(Dw.size(), -1.0f), Db2(Db.size(), -1.0f);
  fnn_conv2d_backward(K.get(), Xin.data(), Win.data(), DyIn.data(), nullptr,
                      Dw2.data(), P.Bias ? Db2.data() : nullptr);
  ASSERT_STREQ(fnn_last_error(), "");
  EXPECT_EQ(Dw2, Dw);
  if (P.Bias)
    EXPECT_EQ(Db2, Db);
}

const ConvCase Cases[] = {
    {2, 3, 8, 8, 4, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
    {2, 4, 9, 7, 6, 3, 3, 2, {2, 2}, {1, 0, 1, 2}, {1, 1}, true},
    {1, 3, 10, 10, 5, 3, 2, 1, {1, 2}, {2, 1, 0, 1}, {2, 2}, false},
    {2, 6, 7, 7, 6, 3, 3, 6, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
    {1, 2, 11, 9, 4, 5, 5, 2, {3, 2}, {2, 2, 2, 2}, {2, 1}, true},
    // Whole channel blocks: the nChw16c path on NCHW.
    {2, 32, 6, 6, 16, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
    {2, 32, 7, 7, 48, 1, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, false},
    {1, 32, 6, 6, 32, 3, 3, 32, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
    // 3x3, unit stride, 16-channel blocks, 14x14 output: Winograd for the
    // weight gradient (and not the input gradient, with 16 input channels),
    // then for both.
    {2, 16, 14, 14, 32, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, 1e-4},
    {1, 32, 14, 14, 32, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, 1e-4},
};

INSTANTIATE_TEST_SUITE_P(
    Cases, ConvolutionBackwardTest,
    ::testing::Combine(::testing::ValuesIn(Cases),
                       ::testing::Values(int64_t(FNN_NCHW),
                                         int64_t(FNN_NHWC))));

TEST_F(KernelTest, ConvolutionBackwardRejectsFusedRelu) {
  fnn_conv2d_desc D{};
  D.input = shape({1, 1, 4, 4});
  D.filter = shape({1, 1, 3, 3});
  D.output = shape({1, 1, 2, 2});
  D.dtype = FNN_F32;
  D.groups = 1;
  D.post_op = FNN_POST_RELU;
  D.strides[0] = D.strides[1] = D.dilations[0] = D.dilations[1] = 1;
  EXPECT_EQ(fnn_conv2d_backward_create(Device, &D), nullptr);
  EXPECT_NE(std::string(fnn_last_error()).find("FNN_POST_NONE"),
            std::string::npos)
      << fnn_last_error();
}

} // namespace
