//===- MixedPrecisionTest.cpp - bfloat16 and float16 kernels vs float32 ---===//
//
// Every kernel that mixed-precision training runs in a low type, run on
// inputs already rounded to that type and compared with the float32 kernel
// on the same values: what remains is the rounding of the outputs (and, for
// float16, of nothing else: it computes in float32). The tolerances are a
// few units in the last place of the low type: 2^-8 for bfloat16, 2^-11 for
// float16.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <array>

using namespace fastnn::test;

namespace {

double tolerance(int64_t Dtype) { return Dtype == FNN_BF16 ? 1.5e-2 : 2e-3; }

void expectLowClose(const std::vector<uint16_t> &Got, int64_t Dtype,
                    const std::vector<float> &Ref) {
  expectClose(fromLow(Got, Dtype), std::vector<double>(Ref.begin(), Ref.end()),
              tolerance(Dtype));
}

class MixedPrecisionTest : public KernelTest,
                           public ::testing::WithParamInterface<int64_t> {
protected:
  /// Batch norm's training forward and backward against float32 kernels.
  void checkBatchNormTraining(int64_t Layout, int64_t C);

  int64_t Dtype = GetParam();
};

fnn_conv2d_desc convDesc(int64_t Dtype, bool Bias) {
  fnn_conv2d_desc D{};
  D.input = shape({2, 32, 8, 8});
  D.filter = shape({16, 32, 3, 3});
  D.output = shape({2, 16, 8, 8});
  D.dtype = Dtype;
  D.layout = FNN_NCHW;
  D.has_bias = Bias;
  D.groups = 1;
  D.strides[0] = D.strides[1] = D.dilations[0] = D.dilations[1] = 1;
  D.pads[0] = D.pads[1] = D.pads[2] = D.pads[3] = 1;
  return D;
}

TEST_P(MixedPrecisionTest, ConvolutionForwardWithBiasAndRelu) {
  fnn_conv2d_desc D = convDesc(Dtype, true);
  D.post_op = FNN_POST_RELU;
  std::vector<float> X = roundedTo(randomData(2 * 32 * 64, 1), Dtype);
  std::vector<float> W =
      roundedTo(randomData(16 * 32 * 9, 2, -.2f, .2f), Dtype);
  std::vector<float> B = roundedTo(randomData(16, 3), Dtype);
  std::vector<float> Ref(2 * 16 * 64);
  fnn_conv2d_desc F = D;
  F.dtype = FNN_F32;
  KernelPtr Reference(fnn_conv2d_create(Device, &F));
  ASSERT_TRUE(Reference) << fnn_last_error();
  fnn_conv2d_forward(Reference.get(), X.data(), W.data(), B.data(), Ref.data());

  KernelPtr K(fnn_conv2d_create(Device, &D));
  ASSERT_TRUE(K) << fnn_last_error();
  std::vector<uint16_t> Xl = toLow(X, Dtype), Wl = toLow(W, Dtype),
                        Bl = toLow(B, Dtype), Y(Ref.size());
  fnn_conv2d_forward(K.get(), Xl.data(), Wl.data(), Bl.data(), Y.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectLowClose(Y, Dtype, Ref);
}

// An inverted residual chain in the low type (large enough for oneDNN's
// fused depthwise kernel) against the float32 chain on the same values.
// The low chain rounds its intermediates where it stores them, so the
// bound is twice the single kernels'.
TEST_P(MixedPrecisionTest, ConvolutionChain) {
  fnn_conv2d_chain_desc D{};
  D.count = 3;
  fnn_conv2d_desc &P = D.convs[0], &W = D.convs[1], &R = D.convs[2];
  P = convDesc(Dtype, true);
  P.input = shape({2, 96, 96, 16});
  P.filter = shape({128, 1, 1, 16});
  P.output = shape({2, 96, 96, 128});
  P.layout = FNN_NHWC;
  P.post_op = FNN_POST_RELU6;
  P.pads[0] = P.pads[1] = P.pads[2] = P.pads[3] = 0;
  P.constant_filter = 1;
  W = P;
  W.input = P.output;
  W.filter = shape({128, 3, 3, 1});
  W.output = shape({2, 48, 48, 128});
  W.groups = 128;
  W.strides[0] = W.strides[1] = 2;
  W.pads[0] = W.pads[1] = W.pads[2] = W.pads[3] = 1;
  R = P;
  R.input = W.output;
  R.filter = shape({24, 1, 1, 128});
  R.output = shape({2, 48, 48, 24});
  R.post_op = FNN_POST_NONE;
  std::vector<std::vector<float>> Values = {
      roundedTo(randomData(numElements(P.input), 1), Dtype),
      roundedTo(randomData(128 * 16, 2, -.3f, .3f), Dtype),
      roundedTo(randomData(128, 3), Dtype),
      roundedTo(randomData(128 * 9, 4, -.3f, .3f), Dtype),
      roundedTo(randomData(128, 5), Dtype),
      roundedTo(randomData(24 * 128, 6, -.2f, .2f), Dtype),
      roundedTo(randomData(24, 7), Dtype)};
  std::vector<float> Mid(numElements(P.output)), Dw(numElements(W.output)),
      Ref(numElements(R.output));
  fnn_conv2d_chain_desc F = D;
  for (fnn_conv2d_desc &Conv : F.convs)
    Conv.dtype = FNN_F32;
  KernelPtr Reference(fnn_conv2d_chain_create(Device, &F));
  ASSERT_TRUE(Reference) << fnn_last_error();
  std::vector<const float *> V;
  for (const std::vector<float> &Operand : Values)
    V.push_back(Operand.data());
  fnn_conv2d_chain_forward(Reference.get(), V[0], V[1], V[2], Mid.data(), V[3],
                           V[4], Dw.data(), V[5], V[6], Ref.data());

  KernelPtr K(fnn_conv2d_chain_create(Device, &D));
  ASSERT_TRUE(K) << fnn_last_error();
  std::vector<std::vector<uint16_t>> Low;
  for (const std::vector<float> &Operand : Values)
    Low.push_back(toLow(Operand, Dtype));
  std::vector<uint16_t> MidL(Mid.size()), DwL(Dw.size()), Y(Ref.size());
  fnn_conv2d_chain_forward(K.get(), Low[0].data(), Low[1].data(), Low[2].data(),
                           MidL.data(), Low[3].data(), Low[4].data(),
                           DwL.data(), Low[5].data(), Low[6].data(), Y.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(fromLow(Y, Dtype), std::vector<double>(Ref.begin(), Ref.end()),
              2 * tolerance(Dtype));
}

TEST_P(MixedPrecisionTest, ConvolutionBackward) {
  fnn_conv2d_desc D = convDesc(Dtype, true);
  std::vector<float> X = roundedTo(randomData(2 * 32 * 64, 4), Dtype);
  std::vector<float> W =
      roundedTo(randomData(16 * 32 * 9, 5, -.2f, .2f), Dtype);
  std::vector<float> Dy = roundedTo(randomData(2 * 16 * 64, 6), Dtype);
  std::vector<float> Dx(X.size()), Dw(W.size()), Db(16);
  fnn_conv2d_desc F = D;
  F.dtype = FNN_F32;
  KernelPtr Reference(fnn_conv2d_backward_create(Device, &F));
  ASSERT_TRUE(Reference) << fnn_last_error();
  fnn_conv2d_backward(Reference.get(), X.data(), W.data(), Dy.data(), Dx.data(),
                      Dw.data(), Db.data());

  KernelPtr K(fnn_conv2d_backward_create(Device, &D));
  ASSERT_TRUE(K) << fnn_last_error();
  std::vector<uint16_t> Xl = toLow(X, Dtype), Wl = toLow(W, Dtype),
                        Dyl = toLow(Dy, Dtype), Dxl(Dx.size()), Dwl(Dw.size()),
                        Dbl(16);
  fnn_conv2d_backward(K.get(), Xl.data(), Wl.data(), Dyl.data(), Dxl.data(),
                      Dwl.data(), Dbl.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectLowClose(Dxl, Dtype, Dx);
  expectLowClose(Dwl, Dtype, Dw);
  expectLowClose(Dbl, Dtype, Db);
}

/// An NHWC convolution's backward in the low type, with and without
/// grad_input, against the float32 kernel on the rounded operands.
void checkNhwcConvolutionBackward(fnn_device *Device, int64_t Dtype,
                                  const fnn_conv2d_desc &D) {
  std::vector<float> X = roundedTo(randomData(numElements(D.input), 7), Dtype);
  std::vector<float> W =
      roundedTo(randomData(numElements(D.filter), 8, -.2f, .2f), Dtype);
  std::vector<float> Dy =
      roundedTo(randomData(numElements(D.output), 9), Dtype);
  std::vector<float> Dx(X.size()), Dw(W.size());
  fnn_conv2d_desc F = D;
  F.dtype = FNN_F32;
  KernelPtr Reference(fnn_conv2d_backward_create(Device, &F));
  ASSERT_TRUE(Reference) << fnn_last_error();
  fnn_conv2d_backward(Reference.get(), X.data(), W.data(), Dy.data(), Dx.data(),
                      Dw.data(), nullptr);

  KernelPtr K(fnn_conv2d_backward_create(Device, &D));
  ASSERT_TRUE(K) << fnn_last_error();
  std::vector<uint16_t> Xl = toLow(X, Dtype), Wl = toLow(W, Dtype),
                        Dyl = toLow(Dy, Dtype), Dxl(Dx.size()), Dwl(Dw.size());
  fnn_conv2d_backward(K.get(), Xl.data(), Wl.data(), Dyl.data(), Dxl.data(),
                      Dwl.data(), nullptr);
  ASSERT_STREQ(fnn_last_error(), "");
  expectLowClose(Dxl, Dtype, Dx);
  expectLowClose(Dwl, Dtype, Dw);
  std::vector<uint16_t> WeightsOnly(Dw.size());
  fnn_conv2d_backward(K.get(), Xl.data(), Wl.data(), Dyl.data(), nullptr,
                      WeightsOnly.data(), nullptr);
  ASSERT_STREQ(fnn_last_error(), "");
  EXPECT_EQ(WeightsOnly, Dwl);
}

fnn_conv2d_desc nhwcConvDesc(int64_t Dtype, const fnn_shape &Input,
                             const fnn_shape &Filter, const fnn_shape &Output,
                             std::array<int64_t, 2> Strides,
                             std::array<int64_t, 4> Pads,
                             std::array<int64_t, 2> Dilations) {
  fnn_conv2d_desc D = convDesc(Dtype, false);
  D.layout = FNN_NHWC;
  D.input = Input;
  D.filter = Filter;
  D.output = Output;
  for (int J = 0; J < 2; ++J) {
    D.strides[J] = Strides[J];
    D.dilations[J] = Dilations[J];
  }
  for (int J = 0; J < 4; ++J)
    D.pads[J] = Pads[J];
  return D;
}

// A 1x1 NHWC convolution without bias: on AMX its bfloat16 weight gradient
// is a matmul over the pixels.
TEST_P(MixedPrecisionTest, PointwiseConvolutionBackward) {
  checkNhwcConvolutionBackward(
      Device, Dtype,
      nhwcConvDesc(Dtype, shape({2, 6, 6, 48}), shape({40, 1, 1, 48}),
                   shape({2, 6, 6, 40}), {1, 1}, {0, 0, 0, 0}, {1, 1}));
}

// Convolutions with few output pixels: on AMX their bfloat16 weight
// gradient is a matmul over im2col's columns, whose taps cover padding,
// strides, dilations and one-row filters.
TEST_P(MixedPrecisionTest, Im2colConvolutionBackward) {
  struct Case {
    const char *Name;
    fnn_conv2d_desc Desc;
  } Cases[] = {
      {"3x3", nhwcConvDesc(Dtype, shape({2, 7, 7, 64}), shape({32, 3, 3, 64}),
                           shape({2, 7, 7, 32}), {1, 1}, {1, 1, 1, 1}, {1, 1})},
      {"strided, asymmetric pads",
       nhwcConvDesc(Dtype, shape({2, 9, 9, 48}), shape({40, 3, 3, 48}),
                    shape({2, 4, 4, 40}), {2, 2}, {0, 1, 1, 0}, {1, 1})},
      {"1x3", nhwcConvDesc(Dtype, shape({2, 8, 8, 48}), shape({32, 1, 3, 48}),
                           shape({2, 8, 8, 32}), {1, 1}, {0, 1, 0, 1}, {1, 1})},
      {"dilated",
       nhwcConvDesc(Dtype, shape({1, 9, 9, 32}), shape({16, 3, 3, 32}),
                    shape({1, 9, 9, 16}), {1, 1}, {2, 2, 2, 2}, {2, 2})},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Name);
    checkNhwcConvolutionBackward(Device, Dtype, C.Desc);
  }
}

TEST_P(MixedPrecisionTest, MatmulWithBias) {
  fnn_matmul_desc D{};
  D.a = shape({8, 64});
  D.b = shape({10, 64});
  D.output = shape({8, 10});
  D.dtype = Dtype;
  D.transpose_b = 1;
  D.has_bias = 1;
  std::vector<float> A = roundedTo(randomData(8 * 64, 7), Dtype);
  std::vector<float> B = roundedTo(randomData(10 * 64, 8, -.2f, .2f), Dtype);
  std::vector<float> Bias = roundedTo(randomData(10, 9), Dtype);
  std::vector<float> Ref(80);
  fnn_matmul_desc F = D;
  F.dtype = FNN_F32;
  KernelPtr Reference(fnn_matmul_create(Device, &F));
  ASSERT_TRUE(Reference) << fnn_last_error();
  fnn_matmul_forward(Reference.get(), A.data(), B.data(), Bias.data(),
                     Ref.data());

  KernelPtr K(fnn_matmul_create(Device, &D));
  ASSERT_TRUE(K) << fnn_last_error();
  std::vector<uint16_t> Al = toLow(A, Dtype), Bl = toLow(B, Dtype),
                        Biasl = toLow(Bias, Dtype), Y(80);
  fnn_matmul_forward(K.get(), Al.data(), Bl.data(), Biasl.data(), Y.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectLowClose(Y, Dtype, Ref);
}

void MixedPrecisionTest::checkBatchNormTraining(int64_t Layout, int64_t C) {
  const int64_t N = 2, HW = 25;
  fnn_batch_norm_desc D{};
  D.input = Layout == FNN_NHWC ? shape({N, 5, 5, C}) : shape({N, C, 5, 5});
  D.dtype = Dtype;
  D.layout = Layout;
  D.epsilon = 1e-3;
  std::vector<float> X =
      roundedTo(randomData(N * C * HW, 10, -2.f, 2.f), Dtype);
  std::vector<float> Dy = roundedTo(randomData(N * C * HW, 11), Dtype);
  std::vector<float> Scale = randomData(C, 12, .5f, 1.5f);
  std::vector<float> Shift = randomData(C, 13);
  fnn_batch_norm_desc F = D;
  F.dtype = FNN_F32;
  KernelPtr RefFw(fnn_batch_norm_train_create(Device, &F));
  KernelPtr RefBw(fnn_batch_norm_backward_create(Device, &F));
  ASSERT_TRUE(RefFw && RefBw) << fnn_last_error();
  std::vector<float> Y(X.size()), Mean(C), Var(C), Dx(X.size()), Ds(C), Dt(C);
  fnn_batch_norm_train_forward(RefFw.get(), X.data(), Scale.data(),
                               Shift.data(), nullptr, Y.data(), Mean.data(),
                               Var.data());
  fnn_batch_norm_backward(RefBw.get(), X.data(), Scale.data(), Mean.data(),
                          Var.data(), Dy.data(), Dx.data(), Ds.data(),
                          Dt.data());

  KernelPtr Fw(fnn_batch_norm_train_create(Device, &D));
  KernelPtr Bw(fnn_batch_norm_backward_create(Device, &D));
  ASSERT_TRUE(Fw && Bw) << fnn_last_error();
  std::vector<uint16_t> Xl = toLow(X, Dtype), Dyl = toLow(Dy, Dtype),
                        Yl(X.size()), Dxl(X.size());
  std::vector<float> GotMean(C), GotVar(C), GotDs(C), GotDt(C);
  fnn_batch_norm_train_forward(Fw.get(), Xl.data(), Scale.data(), Shift.data(),
                               nullptr, Yl.data(), GotMean.data(),
                               GotVar.data());
  fnn_batch_norm_backward(Bw.get(), Xl.data(), Scale.data(), GotMean.data(),
                          GotVar.data(), Dyl.data(), Dxl.data(), GotDs.data(),
                          GotDt.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectLowClose(Yl, Dtype, Y);
  expectLowClose(Dxl, Dtype, Dx);
  // The statistics and parameter gradients stay float32: they see the same
  // inputs and differ by summation order only.
  auto Wide = [](const std::vector<float> &V) {
    return std::vector<double>(V.begin(), V.end());
  };
  expectClose(GotMean, Wide(Mean), 1e-5);
  expectClose(GotVar, Wide(Var), 1e-5);
  expectClose(GotDs, Wide(Ds), 1e-4);
  expectClose(GotDt, Wide(Dt), 1e-4);
}

// Low-precision activations, float32 statistics, scale and shift, in both
// layouts; 24 channels in NHWC are a part of a 16-channel block, which the
// bfloat16 kernel runs on nChw16c.
TEST_P(MixedPrecisionTest, BatchNormTrainingForwardAndBackward) {
  for (int64_t Layout : {FNN_NCHW, FNN_NHWC})
    for (int64_t C : {32, 24}) {
      SCOPED_TRACE("layout " + std::to_string(Layout) + ", " +
                   std::to_string(C) + " channels");
      checkBatchNormTraining(Layout, C);
    }
}

/// Training pooling of \p Kind in \p Layout against the same kernels in
/// float32 on the rounded inputs.
void checkPoolingTraining(fnn_device *Device, int64_t Dtype, int64_t Kind,
                          int64_t Layout) {
  bool Nhwc = Layout == FNN_NHWC;
  fnn_pool2d_desc D =
      poolDesc(Kind, Nhwc ? shape({2, 9, 9, 16}) : shape({2, 16, 9, 9}),
               Nhwc ? shape({2, 4, 4, 16}) : shape({2, 16, 4, 4}), 3, 2, Dtype);
  D.layout = Layout;
  std::vector<float> X = roundedTo(randomData(2 * 16 * 81, 14), Dtype);
  std::vector<float> Dy = roundedTo(randomData(2 * 16 * 16, 15), Dtype);
  fnn_pool2d_desc F = D;
  F.dtype = FNN_F32;
  KernelPtr RefFw(fnn_pool2d_train_create(Device, &F));
  ASSERT_TRUE(RefFw) << fnn_last_error();
  KernelPtr RefBw(fnn_pool2d_backward_create(Device, &F, RefFw.get()));
  ASSERT_TRUE(RefBw) << fnn_last_error();
  std::vector<float> Y(Dy.size()), Dx(X.size());
  fnn_pool2d_forward(RefFw.get(), X.data(), Y.data());
  fnn_pool2d_backward(RefBw.get(), Dy.data(), Dx.data());

  KernelPtr Fw(fnn_pool2d_train_create(Device, &D));
  ASSERT_TRUE(Fw) << fnn_last_error();
  KernelPtr Bw(fnn_pool2d_backward_create(Device, &D, Fw.get()));
  ASSERT_TRUE(Bw) << fnn_last_error();
  std::vector<uint16_t> Xl = toLow(X, Dtype), Dyl = toLow(Dy, Dtype),
                        Yl(Y.size()), Dxl(X.size());
  fnn_pool2d_forward(Fw.get(), Xl.data(), Yl.data());
  fnn_pool2d_backward(Bw.get(), Dyl.data(), Dxl.data());
  ASSERT_STREQ(fnn_last_error(), "");
  if (Kind == FNN_POOL_MAX) {
    // A maximum is exact in any type; overlapping windows sum gradients.
    EXPECT_EQ(fromLow(Yl, Dtype), Y);
  } else {
    expectLowClose(Yl, Dtype, Y);
  }
  expectLowClose(Dxl, Dtype, Dx);
}

// NHWC bfloat16 runs on the hand-written kernels where the CPU has AVX2;
// the rest on oneDNN.
TEST_P(MixedPrecisionTest, PoolingForwardAndBackward) {
  for (int64_t Kind : {FNN_POOL_MAX, FNN_POOL_AVG})
    for (int64_t Layout : {FNN_NCHW, FNN_NHWC}) {
      SCOPED_TRACE(std::string(Kind == FNN_POOL_MAX ? "max" : "avg") +
                   ", layout " + std::to_string(Layout));
      checkPoolingTraining(Device, Dtype, Kind, Layout);
    }
}

TEST_P(MixedPrecisionTest, InferenceBatchNorm) {
  const int64_t C = 16;
  fnn_batch_norm_desc D{};
  D.input = shape({2, C, 3, 3});
  D.dtype = Dtype;
  D.layout = FNN_NCHW;
  D.epsilon = 1e-5;
  D.post_op = FNN_POST_RELU;
  std::vector<float> X = roundedTo(randomData(2 * C * 9, 16, -2.f, 2.f), Dtype);
  std::vector<float> Scale = randomData(C, 17, .5f, 1.5f),
                     Shift = randomData(C, 18), Mean = randomData(C, 19),
                     Var = randomData(C, 20, .5f, 2.f);
  fnn_batch_norm_desc F = D;
  F.dtype = FNN_F32;
  KernelPtr Reference(fnn_batch_norm_create(Device, &F));
  KernelPtr K(fnn_batch_norm_create(Device, &D));
  ASSERT_TRUE(Reference && K) << fnn_last_error();
  std::vector<float> Y(X.size());
  fnn_batch_norm_forward(Reference.get(), X.data(), Scale.data(), Shift.data(),
                         Mean.data(), Var.data(), Y.data());
  std::vector<uint16_t> Xl = toLow(X, Dtype), Yl(X.size());
  fnn_batch_norm_forward(K.get(), Xl.data(), Scale.data(), Shift.data(),
                         Mean.data(), Var.data(), Yl.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectLowClose(Yl, Dtype, Y);
}

INSTANTIATE_TEST_SUITE_P(Types, MixedPrecisionTest,
                         ::testing::Values(int64_t(FNN_BF16), int64_t(FNN_F16)),
                         [](const ::testing::TestParamInfo<int64_t> &Info) {
                           return Info.param == FNN_BF16 ? "bf16" : "f16";
                         });

// Overflow to float16 gives infinity, as the hardware conversion does (the
// case dynamic loss scaling detects).
TEST_F(KernelTest, Float16OutputOverflowsToInfinity) {
  fnn_matmul_desc D{};
  D.a = shape({1, 1});
  D.b = shape({1, 1});
  D.output = shape({1, 1});
  D.dtype = FNN_F16;
  KernelPtr K(fnn_matmul_create(Device, &D));
  ASSERT_TRUE(K) << fnn_last_error();
  uint16_t A = toLowBits(300.f, FNN_F16), B = toLowBits(300.f, FNN_F16), Y = 0;
  fnn_matmul_forward(K.get(), &A, &B, nullptr, &Y);
  EXPECT_EQ(Y, 0x7c00u);
}

// Dynamic loss scaling skips the update of a step whose gradients
// overflowed: parameter and slots untouched.
TEST_F(KernelTest, OptimizerApplyIfSkipsOnFalse) {
  fnn_optimizer_desc D{};
  D.kind = FNN_OPT_MOMENTUM;
  D.dtype = FNN_F32;
  D.num_elements = 3;
  D.momentum = 0.9;
  KernelPtr K(fnn_optimizer_create(Device, &D));
  ASSERT_TRUE(K) << fnn_last_error();
  std::vector<float> X = {1.f, 2.f, 3.f}, G = {.5f, -.5f, 1.f},
                     Accum = {.1f, .2f, .3f};
  const std::vector<float> X0 = X, Accum0 = Accum;
  float Lr = 0.1f;
  int64_t Step = 1;
  unsigned char Skip = 0, Apply = 1;
  fnn_optimizer_apply_if(K.get(), X.data(), G.data(), Accum.data(), nullptr,
                         &Lr, &Step, &Skip);
  EXPECT_EQ(X, X0);
  EXPECT_EQ(Accum, Accum0);
  std::vector<float> Y = X0, AccumY = Accum0;
  fnn_optimizer_apply(K.get(), Y.data(), G.data(), AccumY.data(), nullptr, &Lr,
                      &Step);
  fnn_optimizer_apply_if(K.get(), X.data(), G.data(), Accum.data(), nullptr,
                         &Lr, &Step, &Apply);
  EXPECT_EQ(X, Y);
  EXPECT_EQ(Accum, AccumY);
  EXPECT_NE(X, X0);
}

// float16 kernels convert every operand to float32 in the device's shared
// scratch. A kernel made later with a larger need grows (reallocates) it:
// the earlier kernel must follow it, and each kernel's results must not
// depend on what another wrote there in between. The scratch buffers are
// large enough to be unmapped when freed, so a stale pointer faults.
TEST_F(KernelTest, KernelsShareTheDeviceScratchAsItGrows) {
  auto Conv = [](int64_t Channels, int64_t Size) {
    fnn_conv2d_desc D = convDesc(FNN_F16, false);
    D.input = shape({2, Channels, Size, Size});
    D.filter = shape({Channels, Channels, 3, 3});
    D.output = shape({2, Channels, Size, Size});
    return D;
  };
  fnn_conv2d_desc Small = Conv(16, 32), Large = Conv(32, 64);
  auto Data = [](const fnn_conv2d_desc &D, unsigned Seed) {
    size_t Inputs = 2 * D.input.dims[1] * D.input.dims[2] * D.input.dims[3];
    size_t Weights = D.filter.dims[0] * D.filter.dims[1] * 9;
    return std::make_pair(
        toLow(roundedTo(randomData(Inputs, Seed), FNN_F16), FNN_F16),
        toLow(roundedTo(randomData(Weights, Seed + 1, -.2f, .2f), FNN_F16),
              FNN_F16));
  };
  auto [SmallX, SmallW] = Data(Small, 7);
  auto [LargeX, LargeW] = Data(Large, 9);
  KernelPtr SmallK(fnn_conv2d_create(Device, &Small));
  ASSERT_TRUE(SmallK) << fnn_last_error();
  std::vector<uint16_t> First(SmallX.size()), Again(SmallX.size()),
      LargeY(LargeX.size()), LargeAgain(LargeX.size());
  fnn_conv2d_forward(SmallK.get(), SmallX.data(), SmallW.data(), nullptr,
                     First.data());
  KernelPtr LargeK(fnn_conv2d_create(Device, &Large));
  ASSERT_TRUE(LargeK) << fnn_last_error();
  fnn_conv2d_forward(LargeK.get(), LargeX.data(), LargeW.data(), nullptr,
                     LargeY.data());
  fnn_conv2d_forward(SmallK.get(), SmallX.data(), SmallW.data(), nullptr,
                     Again.data());
  fnn_conv2d_forward(LargeK.get(), LargeX.data(), LargeW.data(), nullptr,
                     LargeAgain.data());
  ASSERT_STREQ(fnn_last_error(), "");
  EXPECT_EQ(Again, First);
  EXPECT_EQ(LargeAgain, LargeY);

  fnn_conv2d_desc Reference = Large;
  Reference.dtype = FNN_F32;
  KernelPtr ReferenceK(fnn_conv2d_create(Device, &Reference));
  ASSERT_TRUE(ReferenceK) << fnn_last_error();
  std::vector<float> X = fromLow(LargeX, FNN_F16), W = fromLow(LargeW, FNN_F16),
                     Ref(LargeX.size());
  fnn_conv2d_forward(ReferenceK.get(), X.data(), W.data(), nullptr, Ref.data());
  expectLowClose(LargeY, FNN_F16, Ref);
}

} // namespace
