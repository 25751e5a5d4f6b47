//===- ConvolutionTest.cpp - fnn_conv2d against a naive reference ---------===//

#include "KernelTestUtil.h"

#include <algorithm>
#include <string>

using namespace fastnn::test;

namespace {

struct ConvCase {
  std::string Name;
  int64_t N, C, H, W, O, KH, KW, Groups;
  int64_t Strides[2], Pads[4], Dilations[2];
  bool Bias;
  /// FNN_POST_*; with FNN_POST_ACCUMULATE the output starts as a residual.
  int64_t PostOp;
  bool Nhwc;
  /// expectClose's tolerance. Winograd's input and output transforms add
  /// and subtract products before and after the elementwise products, so
  /// its float32 error scales with the sum of the products' magnitudes
  /// (~36 for these data over 144 taps, ~3x that over 432), not with the
  /// output: 1e-4 on outputs near 1 is ~3e-6 of that sum, where the direct
  /// kernels keep 1e-5.
  double Tolerance = 1e-5;
};

int64_t extent(int64_t In, int64_t K, int64_t S, int64_t D, int64_t P0,
               int64_t P1) {
  return (In + P0 + P1 - ((K - 1) * D + 1)) / S + 1;
}

/// NCHW input, OIHW filter, float64 accumulation; \p Residual (NCHW) is
/// what an accumulating post-op adds.
std::vector<double> reference(const ConvCase &P, const std::vector<float> &X,
                              const std::vector<float> &F,
                              const std::vector<float> &B,
                              const std::vector<float> &Residual, int64_t OH,
                              int64_t OW) {
  int64_t I = P.C / P.Groups, OPerGroup = P.O / P.Groups;
  std::vector<double> Y(P.N * P.O * OH * OW);
  for (int64_t N = 0; N < P.N; ++N)
    for (int64_t O = 0; O < P.O; ++O)
      for (int64_t Oh = 0; Oh < OH; ++Oh)
        for (int64_t Ow = 0; Ow < OW; ++Ow) {
          double Sum = P.Bias ? B[O] : 0.0;
          int64_t G = O / OPerGroup;
          for (int64_t Ci = 0; Ci < I; ++Ci)
            for (int64_t Kh = 0; Kh < P.KH; ++Kh)
              for (int64_t Kw = 0; Kw < P.KW; ++Kw) {
                int64_t Ih =
                    Oh * P.Strides[0] - P.Pads[0] + Kh * P.Dilations[0];
                int64_t Iw =
                    Ow * P.Strides[1] - P.Pads[1] + Kw * P.Dilations[1];
                if (Ih < 0 || Ih >= P.H || Iw < 0 || Iw >= P.W)
                  continue;
                int64_t C = G * I + Ci;
                Sum += double(X[((N * P.C + C) * P.H + Ih) * P.W + Iw]) *
                       F[((O * I + Ci) * P.KH + Kh) * P.KW + Kw];
              }
          int64_t At = ((N * P.O + O) * OH + Oh) * OW + Ow;
          if (P.PostOp & FNN_POST_ACCUMULATE)
            Sum += Residual[At];
          int64_t Activation = P.PostOp & FNN_POST_ACTIVATION_MASK;
          if (Activation != FNN_POST_NONE)
            Sum = std::max(Sum, 0.0);
          if (Activation == FNN_POST_RELU6)
            Sum = std::min(Sum, 6.0);
          Y[At] = Sum;
        }
  return Y;
}

class ConvolutionTest : public KernelTest,
                        public ::testing::WithParamInterface<ConvCase> {};

TEST_P(ConvolutionTest, MatchesReference) {
  const ConvCase &P = GetParam();
  int64_t I = P.C / P.Groups;
  int64_t OH =
      extent(P.H, P.KH, P.Strides[0], P.Dilations[0], P.Pads[0], P.Pads[2]);
  int64_t OW =
      extent(P.W, P.KW, P.Strides[1], P.Dilations[1], P.Pads[1], P.Pads[3]);
  std::vector<float> X = randomData(P.N * P.C * P.H * P.W, 1);
  std::vector<float> F = randomData(P.O * I * P.KH * P.KW, 2);
  std::vector<float> B = randomData(P.O, 3);
  // Scaled so that relu6 clips some sums at 6.
  std::vector<float> R = randomData(P.N * P.O * OH * OW, 4);
  for (float &V : R)
    V *= 8.f;
  std::vector<double> Ref = reference(P, X, F, B, R, OH, OW);

  fnn_conv2d_desc D{};
  if (P.Nhwc) {
    D.input = shape({P.N, P.H, P.W, P.C});
    D.filter = shape({P.O, P.KH, P.KW, I});
    D.output = shape({P.N, OH, OW, P.O});
    X = nchwToNhwc(X, P.N, P.C, P.H, P.W);
    // OIHW -> OHWI is the same permutation with O as the batch.
    F = nchwToNhwc(F, P.O, I, P.KH, P.KW);
  } else {
    D.input = shape({P.N, P.C, P.H, P.W});
    D.filter = shape({P.O, I, P.KH, P.KW});
    D.output = shape({P.N, P.O, OH, OW});
  }
  D.dtype = FNN_F32;
  D.layout = P.Nhwc ? FNN_NHWC : FNN_NCHW;
  D.has_bias = P.Bias;
  D.post_op = P.PostOp;
  D.groups = P.Groups;
  for (int J = 0; J < 2; ++J) {
    D.strides[J] = P.Strides[J];
    D.dilations[J] = P.Dilations[J];
  }
  for (int J = 0; J < 4; ++J)
    D.pads[J] = P.Pads[J];
  KernelPtr K(fnn_conv2d_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  EXPECT_STREQ(fnn_last_error(), "");
  std::vector<float> Y(P.N * P.O * OH * OW, -7.f);
  if (P.PostOp & FNN_POST_ACCUMULATE)
    Y = P.Nhwc ? nchwToNhwc(R, P.N, P.O, OH, OW) : R;
  fnn_conv2d_forward(K.get(), X.data(), F.data(), P.Bias ? B.data() : nullptr,
                     Y.data());
  fnn_device_synchronize(Device);
  if (P.Nhwc)
    Y = nhwcToNchw(Y, P.N, P.O, OH, OW);
  expectClose(Y, Ref, P.Tolerance);
}

// Name, N C H W, O KH KW, groups, strides, pads (t l b r), dilations,
// bias, post-op, nhwc.
// clang-format off
const ConvCase ConvCases[] = {
    {"Basic3x3", 2, 3, 8, 8, 4, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, FNN_POST_NONE, false},
    {"Stride2AsymmetricPads", 2, 4, 9, 10, 6, 3, 3, 1, {2, 2}, {0, 1, 1, 2}, {1, 1}, false, FNN_POST_NONE, false},
    {"Dilation2", 1, 3, 11, 11, 5, 3, 3, 1, {1, 1}, {2, 2, 2, 2}, {2, 2}, false, FNN_POST_NONE, false},
    {"Groups2", 2, 6, 7, 7, 8, 3, 3, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, FNN_POST_NONE, false},
    {"Depthwise", 2, 8, 9, 9, 8, 3, 3, 8, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, FNN_POST_NONE, false},
    {"DepthwiseMultiplier2", 1, 4, 6, 6, 8, 3, 3, 4, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, FNN_POST_NONE, false},
    {"Pointwise1x1", 2, 16, 5, 5, 12, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, FNN_POST_NONE, false},
    {"Kernel7x1", 1, 4, 12, 9, 6, 7, 1, 1, {1, 1}, {3, 0, 3, 0}, {1, 1}, false, FNN_POST_NONE, false},
    {"BiasRelu", 2, 3, 8, 8, 4, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, FNN_POST_RELU, false},
    {"Nhwc", 2, 6, 8, 7, 4, 3, 3, 2, {2, 1}, {1, 0, 1, 2}, {1, 1}, true, FNN_POST_NONE, true},
    {"NhwcDepthwiseRelu", 1, 8, 7, 7, 8, 3, 3, 8, {1, 1}, {1, 1, 1, 1}, {2, 2}, true, FNN_POST_RELU, true},
    // Channel counts that are not whole 16-channel blocks: the blocked layouts
    // are padded.
    {"BlockedPaddedChannels", 2, 24, 7, 6, 40, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, FNN_POST_RELU, false},
    {"BlockedDepthwise", 2, 32, 9, 9, 32, 3, 3, 32, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, FNN_POST_RELU, false},
    // Residual adds: the output's contents are added before the activation, on
    // NHWC as it is and through the blocked layout NCHW computes in.
    {"NhwcAccumulateRelu", 2, 16, 6, 6, 32, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, true, FNN_POST_ACCUMULATE | FNN_POST_RELU, true},
    {"BlockedAccumulate", 2, 24, 7, 6, 40, 3, 3, 1, {2, 1}, {1, 1, 1, 1}, {1, 1}, false, FNN_POST_ACCUMULATE, false},
    {"NhwcDepthwiseRelu6", 2, 16, 9, 9, 16, 3, 3, 16, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, FNN_POST_RELU6, true},
    {"NhwcAccumulateRelu6", 1, 8, 5, 5, 16, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, FNN_POST_ACCUMULATE | FNN_POST_RELU6, true},
    // 3x3, unit stride, 16-channel blocks, 14x14 output, 48 input
    // channels: Winograd.
    {"WinogradBiasRelu", 2, 48, 14, 14, 32, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, FNN_POST_RELU, false, 1e-4},
    {"NhwcWinogradAccumulate", 1, 48, 16, 15, 16, 3, 3, 1, {1, 1}, {1, 1, 0, 1}, {1, 1}, false, FNN_POST_ACCUMULATE, true, 1e-4},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Cases, ConvolutionTest, ::testing::ValuesIn(ConvCases),
                         [](const ::testing::TestParamInfo<ConvCase> &Info) {
                           return Info.param.Name;
                         });

fnn_conv2d_desc basicDesc() {
  fnn_conv2d_desc D{};
  D.input = shape({1, 3, 8, 8});
  D.filter = shape({4, 3, 3, 3});
  D.output = shape({1, 4, 8, 8});
  D.dtype = FNN_F32;
  D.layout = FNN_NCHW;
  D.groups = 1;
  D.strides[0] = D.strides[1] = 1;
  D.dilations[0] = D.dilations[1] = 1;
  for (int64_t &P : D.pads)
    P = 1;
  return D;
}

// The kernel reorders the filter into oneDNN's blocked layout inside every
// call: training updates it in place between calls, so no copy may be kept.
TEST_F(KernelTest, ConvReadsTheFilterOnEveryCall) {
  ConvCase P{"",
             2,
             32,
             6,
             6,
             32,
             3,
             3,
             1,
             {1, 1},
             {1, 1, 1, 1},
             {1, 1},
             true,
             FNN_POST_NONE,
             false};
  fnn_conv2d_desc D{};
  D.input = shape({2, 32, 6, 6});
  D.filter = shape({32, 32, 3, 3});
  D.output = shape({2, 32, 6, 6});
  D.dtype = FNN_F32;
  D.layout = FNN_NCHW;
  D.has_bias = 1;
  D.groups = 1;
  D.strides[0] = D.strides[1] = 1;
  D.dilations[0] = D.dilations[1] = 1;
  for (int64_t &Pad : D.pads)
    Pad = 1;
  KernelPtr K(fnn_conv2d_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> X = randomData(numElements(D.input), 1),
                     F = randomData(numElements(D.filter), 2),
                     B = randomData(32, 3), Y(numElements(D.output));
  fnn_conv2d_forward(K.get(), X.data(), F.data(), B.data(), Y.data());
  expectClose(Y, reference(P, X, F, B, {}, 6, 6));
  for (float &V : F)
    V = 0.5f - V;
  fnn_conv2d_forward(K.get(), X.data(), F.data(), B.data(), Y.data());
  expectClose(Y, reference(P, X, F, B, {}, 6, 6));
}

// With constant_filter (inference) a filter that oneDNN wants in another
// layout is reordered on the first call only. Both layouts compute right on
// every call; on NCHW, whose jit convolutions always take blocked weights,
// a later call computes with the first call's filter, whatever the pointer
// holds by then (an NHWC filter may be read in place: gemm on AVX2).
TEST_F(KernelTest, ConvKeepsAConstantFilter) {
  for (bool Nhwc : {false, true}) {
    ConvCase P{"",
               2,
               32,
               6,
               6,
               32,
               3,
               3,
               1,
               {1, 1},
               {1, 1, 1, 1},
               {1, 1},
               true,
               FNN_POST_NONE,
               Nhwc};
    fnn_conv2d_desc D = basicDesc();
    D.input = D.output = layoutShape(2, 32, 6, 6, Nhwc);
    D.filter = layoutShape(32, 32, 3, 3, Nhwc);
    D.layout = Nhwc ? FNN_NHWC : FNN_NCHW;
    D.has_bias = 1;
    D.constant_filter = 1;
    KernelPtr K(fnn_conv2d_create(Device, &D));
    ASSERT_NE(K, nullptr) << fnn_last_error();
    std::vector<float> X = randomData(numElements(D.input), 1),
                       F = randomData(numElements(D.filter), 2),
                       B = randomData(32, 3), Y(numElements(D.output));
    std::vector<float> XIn = Nhwc ? nchwToNhwc(X, 2, 32, 6, 6) : X;
    std::vector<float> FIn = Nhwc ? nchwToNhwc(F, 32, 32, 3, 3) : F;
    std::vector<double> Ref = reference(P, X, F, B, {}, 6, 6);
    for (int Call = 0; Call < 2; ++Call) {
      fnn_conv2d_forward(K.get(), XIn.data(), FIn.data(), B.data(), Y.data());
      expectClose(Nhwc ? nhwcToNchw(Y, 2, 32, 6, 6) : Y, Ref);
      if (!Nhwc)
        for (float &V : FIn)
          V = 0.5f - V;
    }
  }
}

TEST_F(KernelTest, ConvRejectsIntegerDtype) {
  fnn_conv2d_desc D = basicDesc();
  D.dtype = FNN_I32;
  EXPECT_EQ(fnn_conv2d_create(Device, &D), nullptr);
  std::string Error = fnn_last_error();
  EXPECT_NE(Error.find("fnn_conv2d_create"), std::string::npos) << Error;
  EXPECT_NE(Error.find("dtype"), std::string::npos) << Error;
  EXPECT_NE(Error.find("1x3x8x8"), std::string::npos) << Error;
  EXPECT_EQ(Error.find('\n'), std::string::npos) << Error;
}

TEST_F(KernelTest, ConvRejectsInconsistentOutput) {
  fnn_conv2d_desc D = basicDesc();
  D.output = shape({1, 4, 7, 8});
  EXPECT_EQ(fnn_conv2d_create(Device, &D), nullptr);
  std::string Error = fnn_last_error();
  EXPECT_NE(Error.find("output 1x4x7x8"), std::string::npos) << Error;
}

TEST_F(KernelTest, SuccessClearsLastError) {
  fnn_conv2d_desc D = basicDesc();
  D.groups = 2;
  EXPECT_EQ(fnn_conv2d_create(Device, &D), nullptr);
  EXPECT_STRNE(fnn_last_error(), "");
  D.groups = 1;
  KernelPtr K(fnn_conv2d_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  EXPECT_STREQ(fnn_last_error(), "");
}

/// A chain's pointwise expansion (C -> O channels), depthwise convolution
/// (3x3 window, Stride, padding 1) and, with Projection channels, pointwise
/// projection, on an N x C x H x H input.
struct ChainCase {
  int64_t N, C, H, O, Stride;
  bool Nhwc, DepthwiseBias;
  int64_t PostOps[3];
  int64_t Projection = 0;
};

fnn_conv2d_chain_desc chainDesc(const ChainCase &P) {
  int64_t OH = extent(P.H, 3, P.Stride, 1, 1, 1);
  fnn_conv2d_chain_desc D{};
  D.count = P.Projection ? 3 : 2;
  fnn_conv2d_desc &E = D.convs[0], &W = D.convs[1], &R = D.convs[2];
  E = basicDesc();
  E.input = layoutShape(P.N, P.C, P.H, P.H, P.Nhwc);
  E.filter = layoutShape(P.O, P.C, 1, 1, P.Nhwc);
  E.output = layoutShape(P.N, P.O, P.H, P.H, P.Nhwc);
  E.layout = P.Nhwc ? FNN_NHWC : FNN_NCHW;
  E.has_bias = 1;
  E.post_op = P.PostOps[0];
  for (int64_t &Pad : E.pads)
    Pad = 0;
  W = E;
  W.input = E.output;
  W.filter = layoutShape(P.O, 1, 3, 3, P.Nhwc);
  W.output = layoutShape(P.N, P.O, OH, OH, P.Nhwc);
  W.has_bias = P.DepthwiseBias;
  W.post_op = P.PostOps[1];
  W.groups = P.O;
  W.strides[0] = W.strides[1] = P.Stride;
  for (int64_t &Pad : W.pads)
    Pad = 1;
  if (P.Projection) {
    R = E;
    R.input = W.output;
    R.filter = layoutShape(P.Projection, P.O, 1, 1, P.Nhwc);
    R.output = layoutShape(P.N, P.Projection, OH, OH, P.Nhwc);
    R.post_op = P.PostOps[2];
  }
  return D;
}

// The chain computes what its convolutions compute in turn, on either
// layout, with either stride, with and without a depthwise bias, with and
// without a projection (which may accumulate: a residual add). The first
// three intermediates (9.4 MiB) exceed twice the L2 caches of two cores, so
// oneDNN computes them with its fused depthwise kernel (DNNL_VERBOSE shows
// jit_1x1 with a dw post-op); the small ones run as separate primitives.
// With constant filters, as an inference model passes them, a second call
// computes the same.
TEST_F(KernelTest, ConvChainMatchesItsConvolutions) {
  const int64_t None = FNN_POST_NONE, Relu6 = FNN_POST_RELU6;
  const ChainCase Cases[] = {
      {2, 16, 96, 128, 2, true, true, {Relu6, Relu6, None}},
      {2, 24, 96, 128, 1, false, false, {Relu6, None, None}},
      {2, 24, 96, 128, 1, true, true, {Relu6, Relu6, FNN_POST_ACCUMULATE}, 24},
      {2, 16, 96, 128, 2, false, true, {Relu6, Relu6, None}, 32},
      {2, 16, 10, 96, 1, true, true, {Relu6, Relu6, None}},
      {2, 24, 11, 144, 2, true, false, {Relu6, None, None}, 40},
      {1, 8, 7, 48, 1, true, true, {None, FNN_POST_RELU, None}},
      {2, 16, 9, 64, 1, false, true, {Relu6, Relu6, FNN_POST_ACCUMULATE}, 16},
  };
  for (const ChainCase &P : Cases) {
    SCOPED_TRACE(::testing::Message()
                 << "C " << P.C << " O " << P.O << " H " << P.H << " stride "
                 << P.Stride << " projection " << P.Projection
                 << (P.Nhwc ? " nhwc" : " nchw"));
    fnn_conv2d_chain_desc D = chainDesc(P);
    std::vector<KernelPtr> Convs;
    std::vector<std::vector<float>> Filters, Biases, Want;
    for (int64_t I = 0; I < D.count; ++I) {
      D.convs[I].constant_filter = 1;
      Convs.emplace_back(fnn_conv2d_create(Device, &D.convs[I]));
      ASSERT_NE(Convs.back(), nullptr) << fnn_last_error();
      Filters.push_back(randomData(numElements(D.convs[I].filter), 2 + I));
      Biases.push_back(
          randomData(D.convs[I].output.dims[P.Nhwc ? 3 : 1], 5 + I));
    }
    KernelPtr Chain(fnn_conv2d_chain_create(Device, &D));
    ASSERT_NE(Chain, nullptr) << fnn_last_error();
    // Scaled so that relu6 clips some intermediate values at 6.
    std::vector<float> X =
        randomData(numElements(D.convs[0].input), 1, -2.f, 2.f);
    std::vector<float> Residual =
        randomData(numElements(D.convs[D.count - 1].output), 9);
    auto BiasOf = [&](int64_t I) {
      return I == 1 && !P.DepthwiseBias ? nullptr : Biases[I].data();
    };
    const float *From = X.data();
    for (int64_t I = 0; I < D.count; ++I) {
      bool Last = I + 1 == D.count;
      Want.push_back(Last ? Residual
                          : std::vector<float>(numElements(D.convs[I].output)));
      fnn_conv2d_forward(Convs[I].get(), From, Filters[I].data(), BiasOf(I),
                         Want.back().data());
      From = Want.back().data();
    }
    std::vector<double> Ref(Want.back().begin(), Want.back().end());
    for (int Call = 0; Call < 2; ++Call) {
      std::vector<std::vector<float>> Got;
      for (int64_t I = 0; I < D.count; ++I)
        Got.push_back(I + 1 == D.count
                          ? Residual
                          : std::vector<float>(Want[I].size(), -7.f));
      auto Out = [&](int64_t I) {
        return I < D.count ? Got[I].data() : nullptr;
      };
      auto Filter = [&](int64_t I) {
        return I < D.count ? Filters[I].data() : nullptr;
      };
      auto Bias = [&](int64_t I) { return I < D.count ? BiasOf(I) : nullptr; };
      fnn_conv2d_chain_forward(Chain.get(), X.data(), Filter(0), Bias(0),
                               Out(0), Filter(1), Bias(1), Out(1), Filter(2),
                               Bias(2), Out(2));
      EXPECT_STREQ(fnn_last_error(), "");
      // Both sides are float32, summed in different orders by different
      // implementations (a 128-channel projection of a 128-channel
      // depthwise output differs by ~1e-5 relative).
      expectClose(Got.back(), Ref, 1e-4);
    }
  }
}

TEST_F(KernelTest, ConvChainRejectsASecondConvolutionThatIsNotDepthwise) {
  fnn_conv2d_chain_desc D = chainDesc(
      {1, 8, 7, 16, 1, true, true, {FNN_POST_NONE, FNN_POST_NONE, 0}});
  D.convs[1].groups = 8;
  D.convs[1].filter = layoutShape(16, 2, 3, 3, true);
  EXPECT_EQ(fnn_conv2d_chain_create(Device, &D), nullptr);
  std::string Error = fnn_last_error();
  EXPECT_NE(Error.find("fnn_conv2d_chain_create"), std::string::npos) << Error;
  EXPECT_NE(Error.find("not depthwise"), std::string::npos) << Error;
  EXPECT_EQ(Error.find('\n'), std::string::npos) << Error;
}

TEST_F(KernelTest, ConvChainRejectsConvolutionsThatDoNotChain) {
  const ChainCase P = {1, 8, 7, 16, 1, true, true, {0, 0, 0}, 8};
  fnn_conv2d_chain_desc D = chainDesc(P);
  D.convs[2].input = layoutShape(1, 16, 6, 6, true);
  D.convs[2].output = layoutShape(1, 8, 6, 6, true);
  EXPECT_EQ(fnn_conv2d_chain_create(Device, &D), nullptr);
  std::string Error = fnn_last_error();
  EXPECT_NE(Error.find("convolution 1's output is not convolution 2's input"),
            std::string::npos)
      << Error;
  D = chainDesc(P);
  D.convs[1].post_op = FNN_POST_ACCUMULATE;
  EXPECT_EQ(fnn_conv2d_chain_create(Device, &D), nullptr);
  Error = fnn_last_error();
  EXPECT_NE(Error.find("only the last convolution"), std::string::npos)
      << Error;
  D = chainDesc(P);
  D.count = 4;
  EXPECT_EQ(fnn_conv2d_chain_create(Device, &D), nullptr);
  Error = fnn_last_error();
  EXPECT_NE(Error.find("2 or 3 convolutions, not 4"), std::string::npos)
      << Error;
}

} // namespace
