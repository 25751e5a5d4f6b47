//===- PoolingTest.cpp - fnn_pool2d against a naive reference -------------===//

#include "KernelTestUtil.h"

#include <limits>
#include <string>

using namespace fastnn::test;

namespace {

struct PoolCase {
  std::string Name;
  int64_t Kind, IncludePad;
  int64_t N, C, H, W;
  int64_t Kernel[2], Strides[2], Pads[4], Dilations[2];
  bool Ceil;
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

/// Windows as the ABI states them: max over input elements only; average
/// divided by the kernel area or by the number of input elements covered.
std::vector<double> reference(const PoolCase &P, const std::vector<float> &X,
                              int64_t OH, int64_t OW) {
  std::vector<double> Y(P.N * P.C * OH * OW);
  for (int64_t N = 0; N < P.N * P.C; ++N)
    for (int64_t Oh = 0; Oh < OH; ++Oh)
      for (int64_t Ow = 0; Ow < OW; ++Ow) {
        double Max = -std::numeric_limits<double>::infinity(), Sum = 0;
        int64_t Count = 0;
        for (int64_t Kh = 0; Kh < P.Kernel[0]; ++Kh)
          for (int64_t Kw = 0; Kw < P.Kernel[1]; ++Kw) {
            int64_t Ih = Oh * P.Strides[0] - P.Pads[0] + Kh * P.Dilations[0];
            int64_t Iw = Ow * P.Strides[1] - P.Pads[1] + Kw * P.Dilations[1];
            if (Ih < 0 || Ih >= P.H || Iw < 0 || Iw >= P.W)
              continue;
            double V = X[(N * P.H + Ih) * P.W + Iw];
            Max = std::max(Max, V);
            Sum += V;
            ++Count;
          }
        double Out = P.Kind == FNN_POOL_MAX ? Max
                     : P.IncludePad         ? Sum / (P.Kernel[0] * P.Kernel[1])
                                            : Sum / Count;
        Y[(N * OH + Oh) * OW + Ow] = Out;
      }
  return Y;
}

class PoolingTest : public KernelTest,
                    public ::testing::WithParamInterface<PoolCase> {};

/// One case in one layout (NHWC float32 runs on the hand-written kernels
/// where the CPU has AVX2, NCHW on oneDNN).
void checkCase(const PoolCase &P, bool Nhwc, fnn_device *Device) {
  int64_t OH = extent(P.H, P.Kernel[0], P.Strides[0], P.Dilations[0], P.Pads[0],
                      P.Pads[2], P.Ceil);
  int64_t OW = extent(P.W, P.Kernel[1], P.Strides[1], P.Dilations[1], P.Pads[1],
                      P.Pads[3], P.Ceil);
  std::vector<float> X = randomData(P.N * P.C * P.H * P.W, 4);
  std::vector<double> Ref = reference(P, X, OH, OW);

  fnn_pool2d_desc D{};
  if (Nhwc) {
    D.input = shape({P.N, P.H, P.W, P.C});
    D.output = shape({P.N, OH, OW, P.C});
    X = nchwToNhwc(X, P.N, P.C, P.H, P.W);
  } else {
    D.input = shape({P.N, P.C, P.H, P.W});
    D.output = shape({P.N, P.C, OH, OW});
  }
  D.dtype = FNN_F32;
  D.layout = Nhwc ? FNN_NHWC : FNN_NCHW;
  D.kind = P.Kind;
  D.count_include_pad = P.IncludePad;
  for (int J = 0; J < 2; ++J) {
    D.kernel[J] = P.Kernel[J];
    D.strides[J] = P.Strides[J];
    D.dilations[J] = P.Dilations[J];
  }
  for (int J = 0; J < 4; ++J)
    D.pads[J] = P.Pads[J];
  KernelPtr K(fnn_pool2d_create(Device, &D));
  ASSERT_NE(K, nullptr) << fnn_last_error();
  std::vector<float> Y(P.N * P.C * OH * OW, -7.f);
  fnn_pool2d_forward(K.get(), X.data(), Y.data());
  if (Nhwc)
    Y = nhwcToNchw(Y, P.N, P.C, OH, OW);
  expectClose(Y, Ref);
}

TEST_P(PoolingTest, MatchesReference) {
  for (bool Nhwc : {false, true}) {
    SCOPED_TRACE(Nhwc ? "NHWC" : "NCHW");
    checkCase(GetParam(), Nhwc, Device);
  }
}

constexpr int64_t Max = FNN_POOL_MAX, Avg = FNN_POOL_AVG;

// Name, kind, include pad, N C H W, kernel, strides, pads (t l b r),
// dilations, ceil mode; each in both layouts.
INSTANTIATE_TEST_SUITE_P(Cases, PoolingTest,
                         ::testing::Values(PoolCase{"MaxPadded",
                                                    Max,
                                                    0,
                                                    2,
                                                    3,
                                                    9,
                                                    9,
                                                    {3, 3},
                                                    {2, 2},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    false},
                                           PoolCase{"MaxAsymmetricPads",
                                                    Max,
                                                    0,
                                                    1,
                                                    4,
                                                    8,
                                                    7,
                                                    {2, 3},
                                                    {1, 2},
                                                    {0, 1, 1, 0},
                                                    {1, 1},
                                                    false},
                                           PoolCase{"MaxCeil",
                                                    Max,
                                                    0,
                                                    2,
                                                    3,
                                                    6,
                                                    7,
                                                    {3, 3},
                                                    {2, 2},
                                                    {0, 0, 0, 0},
                                                    {1, 1},
                                                    true},
                                           PoolCase{"MaxCeilPadded",
                                                    Max,
                                                    0,
                                                    1,
                                                    2,
                                                    8,
                                                    8,
                                                    {3, 3},
                                                    {2, 2},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    true},
                                           PoolCase{"MaxDilation2",
                                                    Max,
                                                    0,
                                                    1,
                                                    3,
                                                    10,
                                                    10,
                                                    {3, 3},
                                                    {1, 1},
                                                    {1, 1, 1, 1},
                                                    {2, 2},
                                                    false},
                                           PoolCase{"AvgIncludePad",
                                                    Avg,
                                                    1,
                                                    2,
                                                    3,
                                                    7,
                                                    7,
                                                    {3, 3},
                                                    {2, 2},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    false},
                                           PoolCase{"AvgExcludePad",
                                                    Avg,
                                                    0,
                                                    2,
                                                    3,
                                                    7,
                                                    7,
                                                    {3, 3},
                                                    {2, 2},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    false},
                                           PoolCase{"AvgExcludePadCeil",
                                                    Avg,
                                                    0,
                                                    1,
                                                    3,
                                                    6,
                                                    6,
                                                    {3, 3},
                                                    {2, 2},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    true},
                                           PoolCase{"AvgIncludePadCeil",
                                                    Avg,
                                                    1,
                                                    1,
                                                    3,
                                                    6,
                                                    6,
                                                    {3, 3},
                                                    {2, 2},
                                                    {0, 0, 0, 0},
                                                    {1, 1},
                                                    true},
                                           PoolCase{"AvgDilation2",
                                                    Avg,
                                                    0,
                                                    1,
                                                    2,
                                                    9,
                                                    9,
                                                    {2, 2},
                                                    {2, 2},
                                                    {1, 1, 1, 1},
                                                    {2, 2},
                                                    false},
                                           PoolCase{"GlobalAvg",
                                                    Avg,
                                                    0,
                                                    2,
                                                    5,
                                                    7,
                                                    7,
                                                    {7, 7},
                                                    {1, 1},
                                                    {0, 0, 0, 0},
                                                    {1, 1},
                                                    false},
                                           PoolCase{"MaxCeilFiveChannels",
                                                    Max,
                                                    0,
                                                    2,
                                                    5,
                                                    8,
                                                    8,
                                                    {3, 3},
                                                    {2, 2},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    true},
                                           PoolCase{"AvgExcludePadStride1",
                                                    Avg,
                                                    0,
                                                    2,
                                                    5,
                                                    8,
                                                    8,
                                                    {3, 3},
                                                    {1, 1},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    false},
                                           PoolCase{"MaxFortyChannels",
                                                    Max,
                                                    0,
                                                    2,
                                                    40,
                                                    7,
                                                    6,
                                                    {3, 3},
                                                    {1, 1},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    false},
                                           PoolCase{"AvgFortyChannelsCeil",
                                                    Avg,
                                                    1,
                                                    1,
                                                    40,
                                                    7,
                                                    7,
                                                    {3, 3},
                                                    {2, 2},
                                                    {1, 1, 1, 1},
                                                    {1, 1},
                                                    true}),
                         [](const ::testing::TestParamInfo<PoolCase> &Info) {
                           return Info.param.Name;
                         });

} // namespace
