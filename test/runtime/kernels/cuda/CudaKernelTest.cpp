//===- CudaKernelTest.cpp - the CUDA kernels on a GPU ---------------------===//
//
// Every CUDA kernel on random inputs, against host references: float64
// loops for the library-backed kernels (convolution, batch norm, softmax,
// matmul, reduction: the CPU kernel tests hold the CPU kernels to the same
// loops), and the shared per-element math for our own kernels (optimizers
// bit for bit, pooling, LRN: the host tests in this folder hold that math to
// the CPU kernels). The binary links only the CUDA backend and NVIDIA's
// libraries, needs no file at run time (the device image of the fnn_gpu_*
// test is compiled in), and runs on a GPU machine as it is. Without a GPU
// each test reports SKIPPED with "no CUDA device", which ctest counts as
// skipped.
//
//===----------------------------------------------------------------------===//

#include "../KernelTestUtil.h"

#include "AddOneFatbin.h"
#include "NormalizationMath.h"
#include "OptimizerMath.h"
#include "PoolingMath.h"

#include "fastnn/runtime/BackendHooks.h"

#include <cstring>
#include <string>

using namespace fastnn::test;
using namespace fastnn::cuda;

namespace {

class CudaTest : public ::testing::Test {
protected:
  void SetUp() override {
    Device = fnn_device_create(FNN_DEVICE_CUDA, 0);
    if (!Device)
      GTEST_SKIP() << "no CUDA device (" << fnn_last_error() << ")";
  }
  void TearDown() override {
    for (void *P : Buffers)
      fnn_device_free(Device, P);
    if (Device)
      fnn_device_destroy(Device);
  }
  template <typename T> void *upload(const std::vector<T> &Host) {
    void *P = fnn_device_alloc(Device, Host.size() * sizeof(T));
    EXPECT_NE(P, nullptr) << fnn_last_error();
    Buffers.push_back(P);
    fnn_copy_to_device(Device, P, Host.data(), Host.size() * sizeof(T));
    return P;
  }
  void *zeros(size_t Floats) { return upload(std::vector<float>(Floats, 0)); }
  std::vector<float> download(const void *P, size_t Floats) {
    std::vector<float> Host(Floats);
    fnn_device_synchronize(Device);
    fnn_copy_to_host(Device, Host.data(), P, Floats * sizeof(float));
    EXPECT_STREQ(fnn_last_error(), "");
    return Host;
  }
  fnn_device *Device = nullptr;
  std::vector<void *> Buffers;
};

std::vector<double> toDouble(const std::vector<float> &X) {
  return std::vector<double>(X.begin(), X.end());
}

TEST_F(CudaTest, DeviceMemoryAndCopies) {
  EXPECT_EQ(fnn_device_default_kind(), FNN_DEVICE_CUDA);
  EXPECT_EQ(fnn_device_host_addressable(Device), 0);
  std::vector<float> X = randomData(1000, 1);
  void *P = upload(X);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(P) % 64, 0u);
  EXPECT_EQ(download(P, X.size()), X);
}

TEST_F(CudaTest, GpuModuleLaunchesOnTheComputeStream) {
  KernelPtr Module(
      fnn_gpu_module_load(Device, AddOneFatbin, sizeof(AddOneFatbin)));
  ASSERT_NE(Module, nullptr) << fnn_last_error();
  KernelPtr Function(fnn_gpu_function_create(Module.get(), "add_one"));
  ASSERT_NE(Function, nullptr) << fnn_last_error();
  EXPECT_EQ(fnn_gpu_function_create(Module.get(), "missing"), nullptr);
  Module.reset(); // the function keeps its module's code
  std::vector<float> X = randomData(1000, 2);
  void *P = upload(X);
  long long N = static_cast<long long>(X.size());
  void *Params[] = {&P, &N};
  fnn_gpu_launch(Function.get(), 4, 256, Params);
  std::vector<float> Y = download(P, X.size());
  for (size_t I = 0; I < X.size(); ++I)
    EXPECT_EQ(Y[I], X[I] + 1.0f);
}

struct InputFixture {
  std::vector<float> Images;
  std::vector<int64_t> Labels;
};

TEST_F(CudaTest, InputNextStagesThroughPinnedMemory) {
  InputFixture Batch{randomData(48, 3), {3, 1, 4}};
  fastnn::runtime::setInputBytes(Batch.Images.size() * 4,
                                 Batch.Labels.size() * 8);
  fnn_input_set_source(
      [](void *Context, void *Images, void *Labels) {
        auto &B = *static_cast<InputFixture *>(Context);
        std::memcpy(Images, B.Images.data(), B.Images.size() * 4);
        std::memcpy(Labels, B.Labels.data(), B.Labels.size() * 8);
      },
      &Batch);
  void *Images = zeros(48), *Labels = zeros(6);
  for (int I = 0; I < 3; ++I)
    fnn_input_next(Images, Labels);
  fnn_input_set_source(nullptr, nullptr);
  fastnn::runtime::setInputBytes(0, 0);
  EXPECT_EQ(download(Images, 48), Batch.Images);
  std::vector<int64_t> Labels64(3);
  fnn_copy_to_host(Device, Labels64.data(), Labels, 24);
  EXPECT_EQ(Labels64, Batch.Labels);
}

TEST_F(CudaTest, TraceSpansHoldDeviceTime) {
  fnn_trace_enable(1);
  fnn_trace_begin("sync");
  fnn_device_synchronize(Device);
  fnn_trace_end();
  fnn_trace_span Span{};
  EXPECT_EQ(fnn_trace_collect(&Span, 1), 1);
  fnn_trace_enable(0);
  EXPECT_LE(Span.start_ns, Span.end_ns);
}

// --- convolution ---------------------------------------------------------

struct Conv {
  const char *Name;
  int64_t N, C, H, W, O, KH, KW, G, OH, OW;
  int64_t Strides[2], Pads[4], Dilations[2];
};

void PrintTo(const Conv &C, std::ostream *OS) { *OS << C.Name; }

/// Float64 NCHW / OIHW references: forward, and the three gradients.
std::vector<double> convRef(const Conv &P, const std::vector<float> &X,
                            const std::vector<float> &Wt,
                            const std::vector<float> *Bias, bool Relu) {
  std::vector<double> Y(P.N * P.O * P.OH * P.OW);
  int64_t Ig = P.C / P.G, Og = P.O / P.G;
  for (int64_t N = 0; N < P.N; ++N)
    for (int64_t O = 0; O < P.O; ++O)
      for (int64_t Oh = 0; Oh < P.OH; ++Oh)
        for (int64_t Ow = 0; Ow < P.OW; ++Ow) {
          double S = Bias ? (*Bias)[O] : 0;
          for (int64_t I = 0; I < Ig; ++I)
            for (int64_t Kh = 0; Kh < P.KH; ++Kh)
              for (int64_t Kw = 0; Kw < P.KW; ++Kw) {
                int64_t H = Oh * P.Strides[0] - P.Pads[0] + Kh * P.Dilations[0];
                int64_t W = Ow * P.Strides[1] - P.Pads[1] + Kw * P.Dilations[1];
                if (H < 0 || H >= P.H || W < 0 || W >= P.W)
                  continue;
                int64_t C = O / Og * Ig + I;
                S += double(X[((N * P.C + C) * P.H + H) * P.W + W]) *
                     Wt[((O * Ig + I) * P.KH + Kh) * P.KW + Kw];
              }
          Y[((N * P.O + O) * P.OH + Oh) * P.OW + Ow] = Relu && S < 0 ? 0 : S;
        }
  return Y;
}

void convGradRef(const Conv &P, const std::vector<float> &X,
                 const std::vector<float> &Wt, const std::vector<float> &Dy,
                 std::vector<double> &Dx, std::vector<double> &Dw,
                 std::vector<double> &Db) {
  Dx.assign(X.size(), 0);
  Dw.assign(Wt.size(), 0);
  Db.assign(P.O, 0);
  int64_t Ig = P.C / P.G, Og = P.O / P.G;
  for (int64_t N = 0; N < P.N; ++N)
    for (int64_t O = 0; O < P.O; ++O)
      for (int64_t Oh = 0; Oh < P.OH; ++Oh)
        for (int64_t Ow = 0; Ow < P.OW; ++Ow) {
          double G = Dy[((N * P.O + O) * P.OH + Oh) * P.OW + Ow];
          Db[O] += G;
          for (int64_t I = 0; I < Ig; ++I)
            for (int64_t Kh = 0; Kh < P.KH; ++Kh)
              for (int64_t Kw = 0; Kw < P.KW; ++Kw) {
                int64_t H = Oh * P.Strides[0] - P.Pads[0] + Kh * P.Dilations[0];
                int64_t W = Ow * P.Strides[1] - P.Pads[1] + Kw * P.Dilations[1];
                if (H < 0 || H >= P.H || W < 0 || W >= P.W)
                  continue;
                int64_t C = O / Og * Ig + I;
                int64_t Xi = ((N * P.C + C) * P.H + H) * P.W + W;
                int64_t Wi = ((O * Ig + I) * P.KH + Kh) * P.KW + Kw;
                Dx[Xi] += G * Wt[Wi];
                Dw[Wi] += G * X[Xi];
              }
        }
}

fnn_conv2d_desc convDesc(const Conv &P, int64_t Layout, bool Bias, bool Relu) {
  fnn_conv2d_desc D{};
  bool Nhwc = Layout == FNN_NHWC;
  D.input = layoutShape(P.N, P.C, P.H, P.W, Nhwc);
  D.filter = layoutShape(P.O, P.C / P.G, P.KH, P.KW, Nhwc);
  D.output = layoutShape(P.N, P.O, P.OH, P.OW, Nhwc);
  D.dtype = FNN_F32;
  D.layout = Layout;
  D.has_bias = Bias;
  D.post_op = Relu ? FNN_POST_RELU : FNN_POST_NONE;
  D.groups = P.G;
  for (int J = 0; J < 2; ++J) {
    D.strides[J] = P.Strides[J];
    D.dilations[J] = P.Dilations[J];
  }
  for (int J = 0; J < 4; ++J)
    D.pads[J] = P.Pads[J];
  return D;
}

class CudaConv : public CudaTest,
                 public ::testing::WithParamInterface<std::tuple<Conv, int>> {};

TEST_P(CudaConv, ForwardPostOpsAndBackwardMatchFloat64) {
  const Conv &P = std::get<0>(GetParam());
  const int64_t Layout = std::get<1>(GetParam());
  const bool Nhwc = Layout == FNN_NHWC;
  std::vector<float> X = randomData(P.N * P.C * P.H * P.W, 1);
  std::vector<float> Wt = randomData(P.O * (P.C / P.G) * P.KH * P.KW, 2);
  std::vector<float> B = randomData(P.O, 3);
  std::vector<float> Dy = randomData(P.N * P.O * P.OH * P.OW, 4);
  auto In = [&](const std::vector<float> &V, int64_t N, int64_t C, int64_t H,
                int64_t W) { return Nhwc ? nchwToNhwc(V, N, C, H, W) : V; };
  auto Back = [&](const std::vector<float> &V, int64_t N, int64_t C, int64_t H,
                  int64_t W) { return Nhwc ? nhwcToNchw(V, N, C, H, W) : V; };
  void *DX = upload(In(X, P.N, P.C, P.H, P.W));
  void *DW = upload(In(Wt, P.O, P.C / P.G, P.KH, P.KW));
  void *DB = upload(B);
  void *DDy = upload(In(Dy, P.N, P.O, P.OH, P.OW));
  void *DY = zeros(Dy.size());

  fnn_conv2d_desc D = convDesc(P, Layout, true, true);
  KernelPtr Forward(fnn_conv2d_create(Device, &D));
  ASSERT_NE(Forward, nullptr) << fnn_last_error();
  fnn_conv2d_forward(Forward.get(), DX, DW, DB, DY);
  expectClose(Back(download(DY, Dy.size()), P.N, P.O, P.OH, P.OW),
              convRef(P, X, Wt, &B, true), 1e-5);

  // A residual add and relu6 as post-ops: cudnnConvolutionForward blends
  // into the output's contents (beta 1), then the bias and the clipped relu.
  std::vector<float> R = randomData(Dy.size(), 5, -8.f, 8.f);
  void *DR = upload(In(R, P.N, P.O, P.OH, P.OW));
  fnn_conv2d_desc AD = convDesc(P, Layout, true, false);
  AD.post_op = FNN_POST_ACCUMULATE | FNN_POST_RELU6;
  KernelPtr Accumulating(fnn_conv2d_create(Device, &AD));
  ASSERT_NE(Accumulating, nullptr) << fnn_last_error();
  fnn_conv2d_forward(Accumulating.get(), DX, DW, DB, DR);
  std::vector<double> Want = convRef(P, X, Wt, &B, false);
  for (size_t I = 0; I < Want.size(); ++I)
    Want[I] = std::min(std::max(Want[I] + R[I], 0.0), 6.0);
  expectClose(Back(download(DR, R.size()), P.N, P.O, P.OH, P.OW), Want, 1e-5);

  fnn_conv2d_desc BD = convDesc(P, Layout, true, false);
  KernelPtr Backward(fnn_conv2d_backward_create(Device, &BD));
  ASSERT_NE(Backward, nullptr) << fnn_last_error();
  void *DDx = zeros(X.size()), *DDw = zeros(Wt.size()), *DDb = zeros(P.O);
  fnn_conv2d_backward(Backward.get(), DX, DW, DDy, DDx, DDw, DDb);
  std::vector<double> Dx, Dw, Db;
  convGradRef(P, X, Wt, Dy, Dx, Dw, Db);
  expectClose(Back(download(DDx, X.size()), P.N, P.H, P.W, P.C), Dx, 1e-5);
  expectClose(Back(download(DDw, Wt.size()), P.O, P.KH, P.KW, P.C / P.G), Dw,
              1e-5);
  expectClose(download(DDb, P.O), Db, 1e-5);
}

// The three shapes, each in both layouts. One row per convolution:
// name, N, C, H, W, O, KH, KW, groups, OH, OW, strides, pads, dilations.
// clang-format off
const Conv ConvCases[] = {
    {"dense", 2, 3, 9, 9, 4, 3, 3, 1, 9, 9, {1, 1}, {1, 1, 1, 1}, {1, 1}},
    // TensorFlow's SAME at stride 2: the extra pad at the end.
    {"grouped_same_stride2", 2, 4, 8, 8, 6, 3, 3, 2, 4, 4, {2, 2}, {0, 0, 1, 1}, {1, 1}},
    {"depthwise_dilated", 1, 6, 10, 9, 6, 3, 3, 6, 6, 5, {1, 1}, {0, 0, 0, 0}, {2, 2}},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaConv,
    ::testing::Combine(::testing::ValuesIn(ConvCases),
                       ::testing::Values(int(FNN_NCHW), int(FNN_NHWC))),
    [](const auto &Info) {
      return std::string(std::get<0>(Info.param).Name) +
             (std::get<1>(Info.param) == FNN_NHWC ? "_nhwc" : "_nchw");
    });

// An expansion, depthwise and accumulating projection chain is the three
// convolutions in turn (cuDNN has no fused one): the same bits as three
// conv2d kernels, and the caller's intermediates hold their outputs.
TEST_F(CudaTest, ConvChainIsItsConvolutions) {
  const Conv Shapes[] = {
      {"pw", 2, 8, 9, 9, 24, 1, 1, 1, 9, 9, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {"dw", 2, 24, 9, 9, 24, 3, 3, 24, 5, 5, {2, 2}, {1, 1, 1, 1}, {1, 1}},
      {"pw", 2, 24, 5, 5, 8, 1, 1, 1, 5, 5, {1, 1}, {0, 0, 0, 0}, {1, 1}}};
  fnn_conv2d_chain_desc D{};
  D.count = 3;
  std::vector<KernelPtr> Convs;
  std::vector<void *> Filters, Biases, Want, Got;
  for (int I = 0; I < 3; ++I) {
    const Conv &S = Shapes[I];
    D.convs[I] = convDesc(S, FNN_NHWC, true, I == 1);
    if (I == 0)
      D.convs[I].post_op = FNN_POST_RELU6;
    if (I == 2)
      D.convs[I].post_op = FNN_POST_ACCUMULATE;
    Convs.emplace_back(fnn_conv2d_create(Device, &D.convs[I]));
    ASSERT_NE(Convs.back(), nullptr) << fnn_last_error();
    size_t Out = S.N * S.O * S.OH * S.OW;
    Filters.push_back(upload(randomData(S.O * (S.C / S.G), 2 + I)));
    Biases.push_back(upload(randomData(S.O, 5 + I)));
    std::vector<float> Start =
        I == 2 ? randomData(Out, 9) : std::vector<float>(Out, 0.f);
    Want.push_back(upload(Start));
    Got.push_back(upload(Start));
  }
  KernelPtr Chain(fnn_conv2d_chain_create(Device, &D));
  ASSERT_NE(Chain, nullptr) << fnn_last_error();
  void *X = upload(randomData(2 * 8 * 9 * 9, 1, -2.f, 2.f));
  const void *From = X;
  for (int I = 0; I < 3; ++I) {
    fnn_conv2d_forward(Convs[I].get(), From, Filters[I], Biases[I], Want[I]);
    From = Want[I];
  }
  fnn_conv2d_chain_forward(Chain.get(), X, Filters[0], Biases[0], Got[0],
                           Filters[1], Biases[1], Got[1], Filters[2], Biases[2],
                           Got[2]);
  EXPECT_STREQ(fnn_last_error(), "");
  for (int I = 0; I < 3; ++I) {
    size_t Out = Shapes[I].N * Shapes[I].O * Shapes[I].OH * Shapes[I].OW;
    EXPECT_EQ(download(Got[I], Out), download(Want[I], Out)) << "conv " << I;
  }
}

// --- pooling (our kernels, against their host math) ----------------------

TEST_F(CudaTest, PoolingMatchesItsHostMath) {
  for (int64_t Kind : {FNN_POOL_MAX, FNN_POOL_AVG}) {
    fnn_pool2d_desc D =
        poolDesc(Kind, shape({2, 3, 9, 8}), shape({2, 3, 5, 4}), 3, 2);
    D.pads[0] = 1, D.pads[1] = 0, D.pads[2] = 1, D.pads[3] = 1;
    std::vector<float> X(numElements(D.input));
    for (size_t I = 0; I < X.size(); ++I)
      X[I] = static_cast<float>((I * 7919) % X.size()) / X.size();
    std::vector<float> Dy = randomData(numElements(D.output), 9);
    KernelPtr F(fnn_pool2d_train_create(Device, &D));
    ASSERT_NE(F, nullptr) << fnn_last_error();
    KernelPtr B(fnn_pool2d_backward_create(Device, &D, F.get()));
    ASSERT_NE(B, nullptr) << fnn_last_error();
    void *DX = upload(X), *DDy = upload(Dy);
    void *DY = zeros(Dy.size()), *DDx = zeros(X.size());
    fnn_pool2d_forward(F.get(), DX, DY);
    fnn_pool2d_backward(B.get(), DDy, DDx);
    PoolGeometry G = poolGeometry(D);
    std::vector<double> Y(Dy.size()), Dx(X.size());
    std::vector<int32_t> Argmax(Dy.size());
    for (int64_t Plane = 0; Plane < 6; ++Plane) {
      auto In = [&](int64_t H, int64_t W) { return X[Plane * 72 + H * 8 + W]; };
      for (int64_t O = 0; O < 20; ++O)
        Y[Plane * 20 + O] =
            poolForwardAt(G, In, O / 4, O % 4, &Argmax[Plane * 20 + O]);
      auto Grad = [&](int64_t Oh, int64_t Ow) {
        return Dy[Plane * 20 + Oh * 4 + Ow];
      };
      auto Arg = [&](int64_t Oh, int64_t Ow) {
        return Argmax[Plane * 20 + Oh * 4 + Ow];
      };
      for (int64_t I = 0; I < 72; ++I)
        Dx[Plane * 72 + I] = poolBackwardAt(G, Grad, Arg, I / 8, I % 8);
    }
    expectClose(download(DY, Y.size()), Y, 1e-6);
    expectClose(download(DDx, Dx.size()), Dx, 1e-6);
  }
}

// --- batch norm -----------------------------------------------------------

TEST_F(CudaTest, BatchNormTrainingAndInferenceMatchFloat64) {
  const int64_t N = 4, C = 3, H = 5, W = 6, M = N * H * W;
  fnn_batch_norm_desc D{};
  D.input = shape({N, C, H, W});
  D.dtype = FNN_F32;
  D.layout = FNN_NCHW;
  D.epsilon = 1e-3;
  std::vector<float> X = randomData(N * C * H * W, 1, -2.f, 3.f);
  std::vector<float> Scale = randomData(C, 2), Shift = randomData(C, 3);
  std::vector<float> Dy = randomData(X.size(), 4);
  void *DX = upload(X), *DScale = upload(Scale), *DShift = upload(Shift);
  void *DDy = upload(Dy), *DY = zeros(X.size()), *DMean = zeros(C),
       *DVar = zeros(C), *DDx = zeros(X.size()), *DDs = zeros(C),
       *DDb = zeros(C);
  KernelPtr Train(fnn_batch_norm_train_create(Device, &D));
  ASSERT_NE(Train, nullptr) << fnn_last_error();
  fnn_batch_norm_train_forward(Train.get(), DX, DScale, DShift, nullptr, DY,
                               DMean, DVar);
  KernelPtr Backward(fnn_batch_norm_backward_create(Device, &D));
  ASSERT_NE(Backward, nullptr) << fnn_last_error();
  fnn_batch_norm_backward(Backward.get(), DX, DScale, DMean, DVar, DDy, DDx,
                          DDs, DDb);
  std::vector<double> Mean(C), Var(C), Y(X.size()), Dx(X.size()), Ds(C), Db(C);
  auto At = [&](int64_t I, int64_t Ch, int64_t P) {
    return (I * C + Ch) * H * W + P;
  };
  for (int64_t Ch = 0; Ch < C; ++Ch) {
    for (int64_t I = 0; I < N; ++I)
      for (int64_t P = 0; P < H * W; ++P)
        Mean[Ch] += X[At(I, Ch, P)] / double(M);
    for (int64_t I = 0; I < N; ++I)
      for (int64_t P = 0; P < H * W; ++P)
        Var[Ch] += std::pow(X[At(I, Ch, P)] - Mean[Ch], 2) / double(M);
    double Inv = 1 / std::sqrt(Var[Ch] + D.epsilon);
    double SumDy = 0, SumDyXhat = 0;
    for (int64_t I = 0; I < N; ++I)
      for (int64_t P = 0; P < H * W; ++P) {
        double Xhat = (X[At(I, Ch, P)] - Mean[Ch]) * Inv;
        Y[At(I, Ch, P)] = Scale[Ch] * Xhat + Shift[Ch];
        SumDy += Dy[At(I, Ch, P)];
        SumDyXhat += Dy[At(I, Ch, P)] * Xhat;
      }
    Ds[Ch] = SumDyXhat;
    Db[Ch] = SumDy;
    for (int64_t I = 0; I < N; ++I)
      for (int64_t P = 0; P < H * W; ++P) {
        double Xhat = (X[At(I, Ch, P)] - Mean[Ch]) * Inv;
        Dx[At(I, Ch, P)] = Scale[Ch] * Inv / M *
                           (M * Dy[At(I, Ch, P)] - SumDy - Xhat * SumDyXhat);
      }
  }
  expectClose(download(DY, X.size()), Y, 1e-5);
  expectClose(download(DMean, C), Mean, 1e-5);
  expectClose(download(DVar, C), Var, 1e-5);
  expectClose(download(DDx, X.size()), Dx, 1e-4);
  expectClose(download(DDs, C), Ds, 1e-4);
  expectClose(download(DDb, C), Db, 1e-4);

  D.post_op = FNN_POST_RELU;
  KernelPtr Infer(fnn_batch_norm_create(Device, &D));
  ASSERT_NE(Infer, nullptr) << fnn_last_error();
  fnn_batch_norm_forward(Infer.get(), DX, DScale, DShift, DMean, DVar, DY);
  const std::vector<double> Normalized = Y;
  for (double &V : Y)
    V = V < 0 ? 0 : V;
  expectClose(download(DY, X.size()), Y, 1e-5);

  // The training forward takes the relu too; the backward does not.
  KernelPtr TrainRelu(fnn_batch_norm_train_create(Device, &D));
  ASSERT_NE(TrainRelu, nullptr) << fnn_last_error();
  void *DRectified = zeros(X.size());
  fnn_batch_norm_train_forward(TrainRelu.get(), DX, DScale, DShift, nullptr,
                               DRectified, DMean, DVar);
  expectClose(download(DRectified, X.size()), Y, 1e-5);
  expectClose(download(DVar, C), Var, 1e-5);
  EXPECT_EQ(fnn_batch_norm_backward_create(Device, &D), nullptr);

  // And a residual before the relu, from its own buffer or in place.
  D.post_op = FNN_POST_RESIDUAL | FNN_POST_RELU;
  KernelPtr TrainResidual(fnn_batch_norm_train_create(Device, &D));
  ASSERT_NE(TrainResidual, nullptr) << fnn_last_error();
  std::vector<float> Residual = randomData(X.size(), 5);
  std::vector<double> Sum(X.size());
  for (size_t I = 0; I < Sum.size(); ++I)
    Sum[I] = std::max(0.0, Normalized[I] + Residual[I]);
  void *DResidual = upload(Residual), *DSum = zeros(X.size());
  fnn_batch_norm_train_forward(TrainResidual.get(), DX, DScale, DShift,
                               DResidual, DSum, DMean, DVar);
  expectClose(download(DSum, X.size()), Sum, 1e-5);
  fnn_batch_norm_train_forward(TrainResidual.get(), DX, DScale, DShift,
                               DResidual, DResidual, DMean, DVar);
  expectClose(download(DResidual, X.size()), Sum, 1e-5);
}

// --- LRN (our kernels, against their host math) ---------------------------

TEST_F(CudaTest, LrnMatchesItsHostMath) {
  fnn_lrn_desc D{};
  D.input = shape({2, 13, 3, 2});
  D.dtype = FNN_F32;
  D.layout = FNN_NCHW;
  D.size = 9;
  D.alpha = 1e-2;
  D.beta = 0.75;
  D.bias = 1;
  std::vector<float> X = randomData(numElements(D.input), 1, -2.f, 2.f);
  std::vector<float> Dy = randomData(X.size(), 2);
  KernelPtr F(fnn_lrn_train_create(Device, &D));
  ASSERT_NE(F, nullptr) << fnn_last_error();
  KernelPtr B(fnn_lrn_backward_create(Device, &D, F.get()));
  ASSERT_NE(B, nullptr) << fnn_last_error();
  void *DX = upload(X), *DDy = upload(Dy), *DY = zeros(X.size()),
       *DDx = zeros(X.size());
  fnn_lrn_forward(F.get(), DX, DY);
  fnn_lrn_backward(B.get(), DX, DDy, DDx);
  LrnParams P{13, 9, 1e-2f, 0.75f, 1.f};
  std::vector<double> Y(X.size()), Dx(X.size());
  for (int64_t N = 0; N < 2; ++N)
    for (int64_t Pixel = 0; Pixel < 6; ++Pixel) {
      auto Xc = [&](int64_t C) { return X[(N * 13 + C) * 6 + Pixel]; };
      auto Dyc = [&](int64_t C) { return Dy[(N * 13 + C) * 6 + Pixel]; };
      for (int64_t C = 0; C < 13; ++C) {
        Y[(N * 13 + C) * 6 + Pixel] = lrnForwardAt(P, Xc, C);
        Dx[(N * 13 + C) * 6 + Pixel] = lrnBackwardAt(P, Xc, Dyc, C);
      }
    }
  expectClose(download(DY, X.size()), Y, 1e-5);
  expectClose(download(DDx, X.size()), Dx, 1e-5);
}

// --- softmax, matmul, reduce ----------------------------------------------

TEST_F(CudaTest, SoftmaxAndLogSoftmaxMatchFloat64) {
  const int64_t A = 3, K = 7, B = 4;
  std::vector<float> X = randomData(A * K * B, 1, -4.f, 4.f);
  void *DX = upload(X), *DY = zeros(X.size());
  for (int64_t Log : {0, 1}) {
    fnn_softmax_desc D{};
    D.input = shape({A, K, B});
    D.dtype = FNN_F32;
    D.axis = 1;
    D.log = Log;
    KernelPtr S(fnn_softmax_create(Device, &D));
    ASSERT_NE(S, nullptr) << fnn_last_error();
    fnn_softmax_forward(S.get(), DX, DY);
    std::vector<double> Y(X.size());
    for (int64_t I = 0; I < A; ++I)
      for (int64_t J = 0; J < B; ++J) {
        double Sum = 0;
        for (int64_t C = 0; C < K; ++C)
          Sum += std::exp(double(X[(I * K + C) * B + J]));
        for (int64_t C = 0; C < K; ++C) {
          double E = std::exp(double(X[(I * K + C) * B + J]));
          Y[(I * K + C) * B + J] = Log ? std::log(E / Sum) : E / Sum;
        }
      }
    expectClose(download(DY, X.size()), Y, 1e-5);
  }
}

TEST_F(CudaTest, MatmulWithTransposesBroadcastBiasAndReluMatchesFloat64) {
  // a [2, 1, 3, 5] stored transposed ([2, 1, 5, 3]), b [4, 5, 6] broadcast
  // over the first dimension, out [2, 4, 3, 6].
  const int64_t M = 3, K = 5, N = 6;
  fnn_matmul_desc D{};
  D.a = shape({2, 1, K, M});
  D.b = shape({4, K, N});
  D.output = shape({2, 4, M, N});
  D.dtype = FNN_F32;
  D.transpose_a = 1;
  D.has_bias = 1;
  D.post_op = FNN_POST_RELU;
  std::vector<float> Av = randomData(2 * K * M, 1),
                     Bv = randomData(4 * K * N, 2);
  std::vector<float> Bias = randomData(N, 3);
  void *DA = upload(Av), *DB = upload(Bv), *DBias = upload(Bias),
       *DOut = zeros(2 * 4 * M * N);
  KernelPtr Mm(fnn_matmul_create(Device, &D));
  ASSERT_NE(Mm, nullptr) << fnn_last_error();
  fnn_matmul_forward(Mm.get(), DA, DB, DBias, DOut);
  std::vector<double> Ref(2 * 4 * M * N);
  for (int64_t I = 0; I < 2; ++I)
    for (int64_t J = 0; J < 4; ++J)
      for (int64_t R = 0; R < M; ++R)
        for (int64_t C = 0; C < N; ++C) {
          double S = Bias[C];
          for (int64_t L = 0; L < K; ++L)
            S += double(Av[(I * K + L) * M + R]) * Bv[(J * K + L) * N + C];
          Ref[((I * 4 + J) * M + R) * N + C] = S < 0 ? 0 : S;
        }
  expectClose(download(DOut, Ref.size()), Ref, 1e-5);
}

TEST_F(CudaTest, ReductionsMatchFloat64) {
  std::vector<float> X = randomData(2 * 3 * 4, 1);
  void *DX = upload(X), *DY = zeros(3);
  for (int64_t Kind :
       {FNN_REDUCE_SUM, FNN_REDUCE_MEAN, FNN_REDUCE_MAX, FNN_REDUCE_MIN}) {
    fnn_reduce_desc D{};
    D.input = shape({2, 3, 4});
    D.output = shape({1, 3, 1});
    D.dtype = FNN_F32;
    D.kind = Kind;
    KernelPtr R(fnn_reduce_create(Device, &D));
    ASSERT_NE(R, nullptr) << fnn_last_error();
    fnn_reduce_forward(R.get(), DX, DY);
    std::vector<double> Ref(3);
    for (int64_t C = 0; C < 3; ++C) {
      double Sum = 0, Max = -1e30, Min = 1e30;
      for (int64_t I = 0; I < 2; ++I)
        for (int64_t J = 0; J < 4; ++J) {
          double V = X[(I * 3 + C) * 4 + J];
          Sum += V;
          Max = std::max(Max, V);
          Min = std::min(Min, V);
        }
      Ref[C] = Kind == FNN_REDUCE_SUM    ? Sum
               : Kind == FNN_REDUCE_MEAN ? Sum / 8
               : Kind == FNN_REDUCE_MAX  ? Max
                                         : Min;
    }
    expectClose(download(DY, 3), Ref, 1e-6);
  }
}

// --- optimizers (our kernels, bit for bit against their host math) -------

// Float32 gradients and bfloat16 ones (widened as the kernel reads them).
TEST_F(CudaTest, OptimizersMatchTheirHostMathBitForBit) {
  for (int64_t GradType : {FNN_F32, FNN_BF16})
    for (int64_t Kind = FNN_OPT_SGD; Kind <= FNN_OPT_ADAMW; ++Kind) {
      fnn_optimizer_desc D{};
      D.kind = Kind;
      D.dtype = FNN_F32;
      D.grad_dtype = GradType;
      D.num_elements = 1000;
      D.momentum = 0.9;
      D.use_nesterov = Kind == FNN_OPT_MOMENTUM;
      D.rho = 0.95;
      D.beta1 = 0.9;
      D.beta2 = 0.999;
      D.epsilon = 1e-7;
      D.decay = 0.9;
      D.initial_accumulator_value = 0.1;
      D.learning_rate_power = -0.5;
      D.weight_decay_rate = 0.01;
      KernelPtr Opt(fnn_optimizer_create(Device, &D));
      ASSERT_NE(Opt, nullptr) << fnn_last_error();
      OptimizerHyperparameters H = optimizerHyperparameters(D);
      OptimizerState State{{0, 1.f, 1.f}, 0.f};
      std::vector<float> Var = randomData(1000, 1), S0(1000, 0.1f),
                         S1(1000, Kind == FNN_OPT_RMSPROP ? 1.f : 0.f);
      void *DVar = upload(Var), *DS0 = upload(S0), *DS1 = upload(S1);
      for (int Step = 1; Step <= 3; ++Step) {
        std::vector<float> G = randomData(1000, 10 + Step);
        std::vector<uint16_t> LowG = toLow(G, FNN_BF16);
        if (GradType == FNN_BF16)
          G = fromLow(LowG, FNN_BF16);
        float Lr = 0.01f * Step;
        int64_t Step64 = Step;
        unsigned char Apply = Step != 2;
        void *DG = GradType == FNN_BF16 ? upload(LowG) : upload(G);
        void *DLr = upload(std::vector<float>{Lr});
        void *DStep = upload(std::vector<int64_t>{Step64});
        void *DApply = upload(std::vector<unsigned char>{Apply});
        fnn_optimizer_apply_if(Opt.get(), DVar, DG, DS0, DS1, DLr, DStep,
                               DApply);
        if (optimizerApplies(&Apply)) {
          beginOptimizerUpdate(H, State, Lr, Step64);
          for (int64_t I = 0; I < 1000; ++I)
            optimizerUpdate(H, I, Var.data(), G[I], S0.data(), S1.data(), Lr,
                            State.AdamAlpha);
        }
      }
      EXPECT_EQ(download(DVar, 1000), Var)
          << "kind " << Kind << ", grad_dtype " << GradType;
      EXPECT_EQ(download(DS0, 1000), S0)
          << "kind " << Kind << ", grad_dtype " << GradType;
      EXPECT_EQ(download(DS1, 1000), S1)
          << "kind " << Kind << ", grad_dtype " << GradType;
    }
}

// --- half precision (mixed-precision training's types) --------------------

class CudaHalf : public CudaTest,
                 public ::testing::WithParamInterface<int64_t> {
protected:
  void *uploadLow(const std::vector<float> &X) {
    return upload(toLow(X, GetParam()));
  }
  std::vector<float> downloadLow(const void *P, size_t Count) {
    std::vector<uint16_t> Host(Count);
    fnn_device_synchronize(Device);
    fnn_copy_to_host(Device, Host.data(), P, Count * 2);
    return fromLow(Host, GetParam());
  }
};

TEST_P(CudaHalf, ConvolutionMatmulAndPoolingAgreeWithFloat64) {
  const int64_t DType = GetParam();
  // Tensor cores multiply the rounded inputs exactly and accumulate in
  // float32; the output is rounded once more.
  const double Tol = DType == FNN_BF16 ? 1e-2 : 2e-3;
  Conv P{"nhwc", 2, 8, 6, 6, 8, 3, 3, 1, 6, 6, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  std::vector<float> X = roundedTo(randomData(2 * 8 * 36, 1), DType);
  std::vector<float> Wt = roundedTo(randomData(8 * 8 * 9, 2), DType);
  fnn_conv2d_desc D = convDesc(P, FNN_NHWC, false, false);
  D.dtype = DType;
  KernelPtr C(fnn_conv2d_create(Device, &D));
  ASSERT_NE(C, nullptr) << fnn_last_error();
  void *DX = uploadLow(nchwToNhwc(X, 2, 8, 6, 6));
  void *DW = uploadLow(nchwToNhwc(Wt, 8, 8, 3, 3));
  void *DY = upload(std::vector<uint16_t>(2 * 8 * 36));
  fnn_conv2d_forward(C.get(), DX, DW, nullptr, DY);
  expectClose(nhwcToNchw(downloadLow(DY, 2 * 8 * 36), 2, 6, 6, 8),
              convRef(P, X, Wt, nullptr, false), Tol);

  fnn_matmul_desc M{};
  M.a = shape({16, 32});
  M.b = shape({32, 24});
  M.output = shape({16, 24});
  M.dtype = DType;
  std::vector<float> A = roundedTo(randomData(16 * 32, 3), DType);
  std::vector<float> B = roundedTo(randomData(32 * 24, 4), DType);
  KernelPtr Mm(fnn_matmul_create(Device, &M));
  ASSERT_NE(Mm, nullptr) << fnn_last_error();
  void *DA = uploadLow(A), *DB = uploadLow(B);
  void *DOut = upload(std::vector<uint16_t>(16 * 24));
  fnn_matmul_forward(Mm.get(), DA, DB, nullptr, DOut);
  std::vector<double> Ref(16 * 24);
  for (int64_t R = 0; R < 16; ++R)
    for (int64_t Col = 0; Col < 24; ++Col)
      for (int64_t K = 0; K < 32; ++K)
        Ref[R * 24 + Col] += double(A[R * 32 + K]) * B[K * 24 + Col];
  expectClose(downloadLow(DOut, Ref.size()), Ref, Tol * 4);

  // Max pooling picks one of its (rounded) inputs: exact.
  fnn_pool2d_desc Pd = poolDesc(FNN_POOL_MAX, shape({1, 4, 6, 6}),
                                shape({1, 4, 3, 3}), 2, 2, DType);
  KernelPtr Pool(fnn_pool2d_create(Device, &Pd));
  ASSERT_NE(Pool, nullptr) << fnn_last_error();
  std::vector<float> Pin = roundedTo(randomData(144, 5), DType);
  void *DPin = uploadLow(Pin), *DPout = upload(std::vector<uint16_t>(36));
  fnn_pool2d_forward(Pool.get(), DPin, DPout);
  std::vector<double> PoolRef(36);
  for (int64_t Plane = 0; Plane < 4; ++Plane)
    for (int64_t O = 0; O < 9; ++O) {
      double Best = -1e30;
      for (int64_t K = 0; K < 4; ++K)
        Best = std::max<double>(
            Best,
            Pin[Plane * 36 + (O / 3 * 2 + K / 2) * 6 + O % 3 * 2 + K % 2]);
      PoolRef[Plane * 9 + O] = Best;
    }
  expectClose(downloadLow(DPout, 36), PoolRef, 0);
}

INSTANTIATE_TEST_SUITE_P(Types, CudaHalf,
                         ::testing::Values(int64_t(FNN_F16), int64_t(FNN_BF16)),
                         [](const auto &Info) {
                           return Info.param == FNN_F16 ? "f16" : "bf16";
                         });

} // namespace
