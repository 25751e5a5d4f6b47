//===- PoolingMath.h - pooling windows, one output at a time ----*- C++ -*-===//
//
// 2-D max and average pooling as the ABI states it (fnn_pool2d_desc): the
// output shape is given, pads are top, left, bottom, right and may be
// asymmetric, windows may be dilated; max ignores padding, average divides
// by the kernel area (count_include_pad, as the CPU kernel does, also in
// ceil-mode windows) or by the number of input elements covered. cuDNN's
// pooling takes symmetric pads and no dilation, so the CUDA backend pools
// with its own kernels over these functions (Kernels.cu); the host tests
// compare them with the CPU kernels.
//
// Inputs are read through a loader In(h, w) -> float of one (n, c) plane, so
// the same code serves both layouts and all three element types.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_CUDA_POOLINGMATH_H
#define FASTNN_RUNTIME_CUDA_POOLINGMATH_H

#include "HostDevice.h"

#include "fastnn/runtime/abi.h"

namespace fastnn::cuda {

struct PoolGeometry {
  int64_t InH, InW, OutH, OutW;
  int64_t KernelH, KernelW, StrideH, StrideW, PadTop, PadLeft;
  int64_t DilationH, DilationW;
  int64_t Kind, CountIncludePad;
};

inline PoolGeometry poolGeometry(const fnn_pool2d_desc &D) {
  bool Nhwc = D.layout == FNN_NHWC;
  int H = Nhwc ? 1 : 2, W = Nhwc ? 2 : 3;
  return {D.input.dims[H],  D.input.dims[W],    D.output.dims[H],
          D.output.dims[W], D.kernel[0],        D.kernel[1],
          D.strides[0],     D.strides[1],       D.pads[0],
          D.pads[1],        D.dilations[0],     D.dilations[1],
          D.kind,           D.count_include_pad};
}

/// What average pooling divides output (Oh, Ow)'s window sum by.
FNN_HOST_DEVICE inline float poolAvgDivisor(const PoolGeometry &G, int64_t Oh,
                                            int64_t Ow) {
  if (G.CountIncludePad)
    return static_cast<float>(G.KernelH * G.KernelW);
  int64_t Count = 0;
  for (int64_t Kh = 0; Kh < G.KernelH; ++Kh) {
    int64_t H = Oh * G.StrideH - G.PadTop + Kh * G.DilationH;
    for (int64_t Kw = 0; Kw < G.KernelW; ++Kw) {
      int64_t W = Ow * G.StrideW - G.PadLeft + Kw * G.DilationW;
      Count += H >= 0 && H < G.InH && W >= 0 && W < G.InW;
    }
  }
  return static_cast<float>(Count > 0 ? Count : 1);
}

/// Output (Oh, Ow) of one plane. For max pooling, *Argmax receives the
/// plane index h * InW + w of the first largest input in window order (-1
/// for a window that covers no input, whose output is 0).
template <typename Load>
FNN_HOST_DEVICE float poolForwardAt(const PoolGeometry &G, Load In, int64_t Oh,
                                    int64_t Ow, int32_t *Argmax) {
  bool Max = G.Kind == FNN_POOL_MAX;
  float Acc = 0.f;
  int32_t Best = -1;
  for (int64_t Kh = 0; Kh < G.KernelH; ++Kh) {
    int64_t H = Oh * G.StrideH - G.PadTop + Kh * G.DilationH;
    if (H < 0 || H >= G.InH)
      continue;
    for (int64_t Kw = 0; Kw < G.KernelW; ++Kw) {
      int64_t W = Ow * G.StrideW - G.PadLeft + Kw * G.DilationW;
      if (W < 0 || W >= G.InW)
        continue;
      float X = In(H, W);
      if (!Max) {
        Acc += X;
      } else if (Best < 0 || X > Acc) {
        Acc = X;
        Best = static_cast<int32_t>(H * G.InW + W);
      }
    }
  }
  if (Max) {
    if (Argmax)
      *Argmax = Best;
    return Best < 0 ? 0.f : Acc;
  }
  return Acc / poolAvgDivisor(G, Oh, Ow);
}

/// The gradient of input (H, W) of one plane: the sum, over the outputs
/// whose windows hold it, of their gradients GradOut(oh, ow) (max: only
/// where ArgmaxOf(oh, ow) is this input; average: divided by the window's
/// divisor). Summed in a fixed order per input, so the result does not
/// depend on how threads are scheduled (no atomics).
template <typename LoadGrad, typename LoadArgmax>
FNN_HOST_DEVICE float poolBackwardAt(const PoolGeometry &G, LoadGrad GradOut,
                                     LoadArgmax ArgmaxOf, int64_t H,
                                     int64_t W) {
  bool Max = G.Kind == FNN_POOL_MAX;
  int32_t Self = static_cast<int32_t>(H * G.InW + W);
  float Acc = 0.f;
  for (int64_t Kh = 0; Kh < G.KernelH; ++Kh) {
    int64_t T = H + G.PadTop - Kh * G.DilationH;
    if (T < 0 || T % G.StrideH != 0 || T / G.StrideH >= G.OutH)
      continue;
    int64_t Oh = T / G.StrideH;
    for (int64_t Kw = 0; Kw < G.KernelW; ++Kw) {
      int64_t U = W + G.PadLeft - Kw * G.DilationW;
      if (U < 0 || U % G.StrideW != 0 || U / G.StrideW >= G.OutW)
        continue;
      int64_t Ow = U / G.StrideW;
      if (Max) {
        if (ArgmaxOf(Oh, Ow) == Self)
          Acc += GradOut(Oh, Ow);
      } else {
        Acc += GradOut(Oh, Ow) / poolAvgDivisor(G, Oh, Ow);
      }
    }
  }
  return Acc;
}

} // namespace fastnn::cuda

#endif // FASTNN_RUNTIME_CUDA_POOLINGMATH_H
