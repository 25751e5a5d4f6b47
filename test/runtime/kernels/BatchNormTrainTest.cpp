//===- BatchNormTrainTest.cpp - training batch norm vs float64 ------------===//
//
// Reference: batch statistics over N and the spatial dimensions (biased
// variance), and the closed-form gradient
//   dx = scale / sqrt(var + eps) * (dy - mean(dy) - xhat * mean(dy * xhat)),
//   dscale = sum(dy * xhat), dshift = sum(dy).
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"

#include <algorithm>
#include <cmath>

using namespace fastnn::test;

namespace {

/// Float64 forward and backward of training batch norm on NCHW-ordered data
/// (N x C x S, S the product of the spatial dimensions).
struct Reference {
  std::vector<double> Mean, Var, Y, Dx, Dscale, Dshift;

  Reference(const std::vector<float> &X, const std::vector<float> &Dy,
            const std::vector<float> &Scale, const std::vector<float> &Shift,
            int64_t N, int64_t C, int64_t S, double Eps)
      : Mean(C), Var(C), Y(X.size()), Dx(X.size()), Dscale(C), Dshift(C) {
    auto At = [&](int64_t A, int64_t Ch, int64_t P) {
      return (A * C + Ch) * S + P;
    };
    const double M = double(N * S);
    for (int64_t Ch = 0; Ch < C; ++Ch) {
      for (int64_t A = 0; A < N; ++A)
        for (int64_t P = 0; P < S; ++P)
          Mean[Ch] += X[At(A, Ch, P)] / M;
      for (int64_t A = 0; A < N; ++A)
        for (int64_t P = 0; P < S; ++P)
          Var[Ch] += std::pow(X[At(A, Ch, P)] - Mean[Ch], 2) / M;
      double Inv = 1 / std::sqrt(Var[Ch] + Eps), MeanDy = 0, MeanDyXhat = 0;
      for (int64_t A = 0; A < N; ++A)
        for (int64_t P = 0; P < S; ++P) {
          double Xhat = (X[At(A, Ch, P)] - Mean[Ch]) * Inv;
          Y[At(A, Ch, P)] = Scale[Ch] * Xhat + Shift[Ch];
          MeanDy += Dy[At(A, Ch, P)] / M;
          MeanDyXhat += Dy[At(A, Ch, P)] * Xhat / M;
        }
      Dscale[Ch] = MeanDyXhat * M;
      Dshift[Ch] = MeanDy * M;
      for (int64_t A = 0; A < N; ++A)
        for (int64_t P = 0; P < S; ++P) {
          double Xhat = (X[At(A, Ch, P)] - Mean[Ch]) * Inv;
          Dx[At(A, Ch, P)] =
              Scale[Ch] * Inv * (Dy[At(A, Ch, P)] - MeanDy - Xhat * MeanDyXhat);
        }
    }
  }
};

// (layout, channels): 32 channels take the kernels' nChw16c path on NCHW.
class BatchNormTrainTest
    : public KernelTest,
      public ::testing::WithParamInterface<std::tuple<int64_t, int64_t>> {};

TEST_P(BatchNormTrainTest, ForwardAndBackwardMatchFloat64) {
  const auto [Layout, C] = GetParam();
  bool Nhwc = Layout == FNN_NHWC;
  const int64_t N = 3, H = 4, W = 6;
  const double Eps = 1e-3;
  // An offset mean, so that a one-pass variance would lose digits.
  std::vector<float> X = randomData(N * C * H * W, 11, 2.f, 5.f);
  std::vector<float> Dy = randomData(N * C * H * W, 12);
  std::vector<float> Scale = randomData(C, 13, 0.5f, 1.5f);
  std::vector<float> Shift = randomData(C, 14);
  Reference Ref(X, Dy, Scale, Shift, N, C, H * W, Eps);

  fnn_batch_norm_desc D{};
  D.input = layoutShape(N, C, H, W, Nhwc);
  D.dtype = FNN_F32;
  D.layout = Layout;
  D.epsilon = Eps;
  KernelPtr Fw(fnn_batch_norm_train_create(Device, &D));
  ASSERT_TRUE(Fw) << fnn_last_error();
  KernelPtr Bw(fnn_batch_norm_backward_create(Device, &D));
  ASSERT_TRUE(Bw) << fnn_last_error();

  std::vector<float> Xin = Nhwc ? nchwToNhwc(X, N, C, H, W) : X;
  std::vector<float> DyIn = Nhwc ? nchwToNhwc(Dy, N, C, H, W) : Dy;
  std::vector<float> Out(X.size()), GotMean(C), GotVar(C);
  fnn_batch_norm_train_forward(Fw.get(), Xin.data(), Scale.data(), Shift.data(),
                               nullptr, Out.data(), GotMean.data(),
                               GotVar.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(Nhwc ? nhwcToNchw(Out, N, C, H, W) : Out, Ref.Y);
  expectClose(GotMean, Ref.Mean);
  expectClose(GotVar, Ref.Var);

  // With a relu or relu6 post-op the forward writes the activation of the
  // same values; with FNN_POST_RESIDUAL of those plus the residual, read
  // from its own buffer or from the output's (in place).
  const std::vector<float> Residual = randomData(X.size(), 15);
  const std::vector<float> ResidualIn =
      Nhwc ? nchwToNhwc(Residual, N, C, H, W) : Residual;
  for (int64_t PostOp :
       {int64_t(FNN_POST_RELU), int64_t(FNN_POST_RELU6),
        int64_t(FNN_POST_RESIDUAL), int64_t(FNN_POST_RESIDUAL | FNN_POST_RELU),
        int64_t(FNN_POST_RESIDUAL | FNN_POST_RELU6)})
    for (bool InPlace : {false, true}) {
      bool AddResidual = PostOp & FNN_POST_RESIDUAL;
      if (InPlace && !AddResidual)
        continue;
      int64_t Activation = PostOp & FNN_POST_ACTIVATION_MASK;
      SCOPED_TRACE(testing::Message()
                   << "post-op " << PostOp << (InPlace ? ", in place" : ""));
      fnn_batch_norm_desc WithPostOp = D;
      WithPostOp.post_op = PostOp;
      KernelPtr FwPostOp(fnn_batch_norm_train_create(Device, &WithPostOp));
      ASSERT_TRUE(FwPostOp) << fnn_last_error();
      std::vector<float> Activated =
          InPlace ? ResidualIn : std::vector<float>(X.size());
      std::vector<float> ActivatedMean(C), ActivatedVar(C);
      fnn_batch_norm_train_forward(
          FwPostOp.get(), Xin.data(), Scale.data(), Shift.data(),
          !AddResidual ? nullptr
          : InPlace    ? Activated.data()
                       : ResidualIn.data(),
          Activated.data(), ActivatedMean.data(), ActivatedVar.data());
      ASSERT_STREQ(fnn_last_error(), "");
      std::vector<double> RefActivated = Ref.Y;
      for (size_t I = 0; I < RefActivated.size(); ++I) {
        double &V = RefActivated[I];
        if (AddResidual)
          V += Residual[I];
        if (Activation != FNN_POST_NONE)
          V = std::min(Activation == FNN_POST_RELU6 ? 6.0 : INFINITY,
                       std::max(0.0, V));
      }
      expectClose(Nhwc ? nhwcToNchw(Activated, N, C, H, W) : Activated,
                  RefActivated);
      EXPECT_EQ(ActivatedMean, GotMean);
      EXPECT_EQ(ActivatedVar, GotVar);
    }

  std::vector<float> GotDx(X.size()), GotDscale(C), GotDshift(C);
  fnn_batch_norm_backward(Bw.get(), Xin.data(), Scale.data(), GotMean.data(),
                          GotVar.data(), DyIn.data(), GotDx.data(),
                          GotDscale.data(), GotDshift.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(Nhwc ? nhwcToNchw(GotDx, N, C, H, W) : GotDx, Ref.Dx);
  expectClose(GotDscale, Ref.Dscale);
  expectClose(GotDshift, Ref.Dshift);

  // Gradients the caller does not want may be NULL, in either combination.
  std::vector<float> OnlyDx(X.size());
  fnn_batch_norm_backward(Bw.get(), Xin.data(), Scale.data(), GotMean.data(),
                          GotVar.data(), DyIn.data(), OnlyDx.data(), nullptr,
                          nullptr);
  ASSERT_STREQ(fnn_last_error(), "");
  EXPECT_EQ(OnlyDx, GotDx);
  std::vector<float> OnlyDscale(C), OnlyDshift(C);
  fnn_batch_norm_backward(Bw.get(), Xin.data(), Scale.data(), GotMean.data(),
                          GotVar.data(), DyIn.data(), nullptr,
                          OnlyDscale.data(), OnlyDshift.data());
  ASSERT_STREQ(fnn_last_error(), "");
  EXPECT_EQ(OnlyDscale, GotDscale);
  EXPECT_EQ(OnlyDshift, GotDshift);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, BatchNormTrainTest,
    ::testing::Combine(::testing::Values(int64_t(FNN_NCHW), int64_t(FNN_NHWC)),
                       ::testing::Values(int64_t(5), int64_t(32))));

// Batch norm after a fully connected layer: N x C, statistics over N only.
TEST_F(KernelTest, BatchNormTrainRank2) {
  const int64_t N = 7, C = 3;
  const double Eps = 1e-5;
  std::vector<float> X = randomData(N * C, 21, -3.f, 3.f);
  std::vector<float> Dy = randomData(N * C, 22);
  std::vector<float> Scale = randomData(C, 23, 0.5f, 1.5f);
  std::vector<float> Shift = randomData(C, 24);
  Reference Ref(X, Dy, Scale, Shift, N, C, 1, Eps);

  fnn_batch_norm_desc D{};
  D.input = shape({N, C});
  D.dtype = FNN_F32;
  D.layout = FNN_NHWC;
  D.epsilon = Eps;
  KernelPtr Fw(fnn_batch_norm_train_create(Device, &D));
  ASSERT_TRUE(Fw) << fnn_last_error();
  KernelPtr Bw(fnn_batch_norm_backward_create(Device, &D));
  ASSERT_TRUE(Bw) << fnn_last_error();
  std::vector<float> Out(X.size()), Mean(C), Var(C), Dx(X.size()), Dscale(C),
      Dshift(C);
  fnn_batch_norm_train_forward(Fw.get(), X.data(), Scale.data(), Shift.data(),
                               nullptr, Out.data(), Mean.data(), Var.data());
  fnn_batch_norm_backward(Bw.get(), X.data(), Scale.data(), Mean.data(),
                          Var.data(), Dy.data(), Dx.data(), Dscale.data(),
                          Dshift.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(Out, Ref.Y);
  expectClose(Mean, Ref.Mean);
  expectClose(Var, Ref.Var);
  expectClose(Dx, Ref.Dx);
  expectClose(Dscale, Ref.Dscale);
  expectClose(Dshift, Ref.Dshift);
}

// Enough rows for several summing blocks on two threads, around a mean far
// from zero against the spread (what a variance taken as E[x^2] - E[x]^2 in
// float32 would lose), NHWC: the hand-written kernel's shifted sums hold
// 1e-4 here (oneDNN's float32 ones, on NCHW, are ~2e-4 off in y and the
// scale's gradient).
TEST_F(KernelTest, BatchNormTrainManyRowsOffsetMean) {
  const int64_t N = 4, C = 48, H = 20, W = 20;
  const double Eps = 1e-5;
  std::vector<float> X = randomData(N * C * H * W, 31, 99.f, 101.f);
  std::vector<float> Dy = randomData(N * C * H * W, 32);
  std::vector<float> Scale = randomData(C, 33, 0.5f, 1.5f);
  std::vector<float> Shift = randomData(C, 34);
  Reference Ref(X, Dy, Scale, Shift, N, C, H * W, Eps);
  fnn_batch_norm_desc D{};
  D.input = layoutShape(N, C, H, W, /*Nhwc=*/true);
  D.dtype = FNN_F32;
  D.layout = FNN_NHWC;
  D.epsilon = Eps;
  KernelPtr Fw(fnn_batch_norm_train_create(Device, &D));
  ASSERT_TRUE(Fw) << fnn_last_error();
  KernelPtr Bw(fnn_batch_norm_backward_create(Device, &D));
  ASSERT_TRUE(Bw) << fnn_last_error();
  std::vector<float> Xin = nchwToNhwc(X, N, C, H, W);
  std::vector<float> DyIn = nchwToNhwc(Dy, N, C, H, W);
  std::vector<float> Out(X.size()), Mean(C), Var(C), Dx(X.size()), Dscale(C),
      Dshift(C);
  fnn_batch_norm_train_forward(Fw.get(), Xin.data(), Scale.data(), Shift.data(),
                               nullptr, Out.data(), Mean.data(), Var.data());
  fnn_batch_norm_backward(Bw.get(), Xin.data(), Scale.data(), Mean.data(),
                          Var.data(), DyIn.data(), Dx.data(), Dscale.data(),
                          Dshift.data());
  ASSERT_STREQ(fnn_last_error(), "");
  expectClose(Mean, Ref.Mean);
  // Relative to the variance itself (~1/3), not to max(1, |ref|).
  for (int64_t I = 0; I < C; ++I)
    EXPECT_NEAR(Var[I], Ref.Var[I], 1e-4 * Ref.Var[I]) << "channel " << I;
  expectClose(nhwcToNchw(Out, N, C, H, W), Ref.Y, 1e-4);
  expectClose(nhwcToNchw(Dx, N, C, H, W), Ref.Dx, 1e-4);
  expectClose(Dscale, Ref.Dscale, 1e-4);
  expectClose(Dshift, Ref.Dshift, 1e-4);
}

// The forward takes a relu or relu6 post-op and a residual, not an
// accumulation; the backward none (the compiler applies the activation's
// gradient), in both layouts.
TEST_F(KernelTest, BatchNormTrainPostOps) {
  for (bool Nhwc : {false, true}) {
    SCOPED_TRACE(Nhwc ? "NHWC" : "NCHW");
    fnn_batch_norm_desc D{};
    D.input = layoutShape(2, 3, 4, 4, Nhwc);
    D.dtype = FNN_F32;
    D.layout = Nhwc ? FNN_NHWC : FNN_NCHW;
    for (int64_t PostOp : {int64_t(FNN_POST_RELU), int64_t(FNN_POST_RELU6),
                           int64_t(FNN_POST_RESIDUAL | FNN_POST_RELU)}) {
      D.post_op = PostOp;
      KernelPtr Fw(fnn_batch_norm_train_create(Device, &D));
      EXPECT_TRUE(Fw) << fnn_last_error();
      EXPECT_EQ(fnn_batch_norm_backward_create(Device, &D), nullptr);
      EXPECT_NE(std::string(fnn_last_error()).find("post_op"),
                std::string::npos)
          << fnn_last_error();
    }
    D.post_op = FNN_POST_RELU | FNN_POST_ACCUMULATE;
    EXPECT_EQ(fnn_batch_norm_train_create(Device, &D), nullptr);
    EXPECT_NE(std::string(fnn_last_error()).find("accumulate"),
              std::string::npos)
        << fnn_last_error();
  }
}

} // namespace
