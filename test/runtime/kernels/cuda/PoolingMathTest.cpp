//===- PoolingMathTest.cpp - CUDA pooling's window math against the CPU ---===//
//
// The CUDA pooling kernels (Kernels.cu) compute each output, its argmax and
// each input's gradient with PoolingMath.h; here those functions run on the
// host over whole tensors, and are compared with the CPU kernels' training
// forward and backward on the same inputs: asymmetric pads, ceil-mode
// outputs, dilation, overlapping windows, both layouts, max and average
// (with and without count_include_pad).
//
//===----------------------------------------------------------------------===//

#include "../KernelTestUtil.h"

#include "PoolingMath.h"

#include <string>

using namespace fastnn::test;
using namespace fastnn::cuda;

namespace {

struct Case {
  std::string Name;
  int64_t Kind, IncludePad, Layout;
  int64_t N, C, H, W, OutH, OutW;
  int64_t Kernel[2], Strides[2], Pads[4], Dilations[2];
};

std::vector<Case> cases() {
  return {
      {"max3s2",
       FNN_POOL_MAX,
       0,
       FNN_NCHW,
       2,
       3,
       9,
       9,
       4,
       4,
       {3, 3},
       {2, 2},
       {0, 0, 0, 0},
       {1, 1}},
      {"max_asymmetric_pads",
       FNN_POOL_MAX,
       0,
       FNN_NCHW,
       1,
       2,
       8,
       7,
       4,
       4,
       {3, 3},
       {2, 2},
       {0, 1, 1, 1},
       {1, 1}},
      {"max_ceil_nhwc",
       FNN_POOL_MAX,
       0,
       FNN_NHWC,
       2,
       5,
       8,
       8,
       4,
       4,
       {3, 3},
       {2, 2},
       {0, 0, 1, 1},
       {1, 1}},
      {"max_dilated",
       FNN_POOL_MAX,
       0,
       FNN_NCHW,
       1,
       2,
       10,
       9,
       4,
       3,
       {3, 2},
       {2, 3},
       {1, 0, 0, 1},
       {2, 2}},
      {"avg_exclude_pad",
       FNN_POOL_AVG,
       0,
       FNN_NCHW,
       2,
       3,
       7,
       7,
       4,
       4,
       {3, 3},
       {2, 2},
       {1, 1, 1, 1},
       {1, 1}},
      {"avg_include_pad_nhwc",
       FNN_POOL_AVG,
       1,
       FNN_NHWC,
       1,
       4,
       7,
       6,
       4,
       3,
       {3, 3},
       {2, 2},
       {1, 0, 1, 1},
       {1, 1}},
      {"avg_global",
       FNN_POOL_AVG,
       0,
       FNN_NCHW,
       2,
       3,
       5,
       5,
       1,
       1,
       {5, 5},
       {1, 1},
       {0, 0, 0, 0},
       {1, 1}},
  };
}

fnn_pool2d_desc descOf(const Case &C) {
  fnn_pool2d_desc D{};
  bool Nhwc = C.Layout == FNN_NHWC;
  D.input = layoutShape(C.N, C.C, C.H, C.W, Nhwc);
  D.output = layoutShape(C.N, C.C, C.OutH, C.OutW, Nhwc);
  D.dtype = FNN_F32;
  D.layout = C.Layout;
  D.kind = C.Kind;
  D.count_include_pad = C.IncludePad;
  for (int J = 0; J < 2; ++J) {
    D.kernel[J] = C.Kernel[J];
    D.strides[J] = C.Strides[J];
    D.dilations[J] = C.Dilations[J];
  }
  for (int J = 0; J < 4; ++J)
    D.pads[J] = C.Pads[J];
  return D;
}

/// Offset of (n, c, h, w) in a tensor of \p C channels, \p H x \p W.
int64_t offset(bool Nhwc, int64_t C, int64_t H, int64_t W, int64_t N,
               int64_t Ch, int64_t Y, int64_t X) {
  return Nhwc ? ((N * H + Y) * W + X) * C + Ch : ((N * C + Ch) * H + Y) * W + X;
}

void PrintTo(const Case &C, std::ostream *OS) { *OS << C.Name; }

class PoolingMath : public KernelTest,
                    public ::testing::WithParamInterface<Case> {};

TEST_P(PoolingMath, ForwardAndBackwardMatchTheCpuKernels) {
  const Case &C = GetParam();
  fnn_pool2d_desc D = descOf(C);
  bool Nhwc = C.Layout == FNN_NHWC;
  KernelPtr Forward(fnn_pool2d_train_create(Device, &D));
  ASSERT_NE(Forward, nullptr) << fnn_last_error();
  KernelPtr Backward(fnn_pool2d_backward_create(Device, &D, Forward.get()));
  ASSERT_NE(Backward, nullptr) << fnn_last_error();

  // Distinct values (a permutation scaled), so max pooling has no ties.
  std::vector<float> X(numElements(D.input));
  for (size_t I = 0; I < X.size(); ++I)
    X[I] = static_cast<float>((I * 7919) % X.size()) / X.size() - 0.5f;
  std::vector<float> Y(numElements(D.output)), Dy = randomData(Y.size(), 5);
  std::vector<float> Dx(X.size());
  fnn_pool2d_forward(Forward.get(), X.data(), Y.data());
  fnn_pool2d_backward(Backward.get(), Dy.data(), Dx.data());

  PoolGeometry G = poolGeometry(D);
  std::vector<float> YMath(Y.size()), DxMath(X.size());
  std::vector<int32_t> Argmax(Y.size());
  for (int64_t N = 0; N < C.N; ++N)
    for (int64_t Ch = 0; Ch < C.C; ++Ch) {
      auto In = [&](int64_t H, int64_t W) {
        return X[offset(Nhwc, C.C, C.H, C.W, N, Ch, H, W)];
      };
      for (int64_t Oh = 0; Oh < C.OutH; ++Oh)
        for (int64_t Ow = 0; Ow < C.OutW; ++Ow) {
          int64_t O = offset(Nhwc, C.C, C.OutH, C.OutW, N, Ch, Oh, Ow);
          YMath[O] = poolForwardAt(G, In, Oh, Ow, &Argmax[O]);
        }
      auto Grad = [&](int64_t Oh, int64_t Ow) {
        return Dy[offset(Nhwc, C.C, C.OutH, C.OutW, N, Ch, Oh, Ow)];
      };
      auto ArgmaxOf = [&](int64_t Oh, int64_t Ow) {
        return Argmax[offset(Nhwc, C.C, C.OutH, C.OutW, N, Ch, Oh, Ow)];
      };
      for (int64_t H = 0; H < C.H; ++H)
        for (int64_t W = 0; W < C.W; ++W)
          DxMath[offset(Nhwc, C.C, C.H, C.W, N, Ch, H, W)] =
              poolBackwardAt(G, Grad, ArgmaxOf, H, W);
    }
  std::vector<double> YCpu(Y.begin(), Y.end()), DxCpu(Dx.begin(), Dx.end());
  expectClose(YMath, YCpu, 1e-6);
  expectClose(DxMath, DxCpu, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Windows, PoolingMath, ::testing::ValuesIn(cases()),
                         [](const auto &Info) { return Info.param.Name; });

} // namespace
