//===- NormalizationMath.h - LRN and batch-norm statistics ------*- C++ -*-===//
//
// LRN across channels with ONNX semantics, one element at a time:
//   y_c = x_c / d_c^beta,  d_c = bias + alpha / size * sum_{j in win(c)} x_j^2
// with win(c) = [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the
// channels (the CPU kernel takes odd sizes only, where both halves are
// (size-1)/2), and its gradient
//   dx_c = dy_c d_c^-beta
//          - 2 alpha beta / size x_c sum_{j : c in win(j)} dy_j x_j
//          d_j^(-beta-1).
// cuDNN's LRN is limited to windows of 1..16 channels and to its own layouts,
// so the CUDA backend computes LRN with its own kernels over these functions.
// Channels are read through loaders X(j) -> float along one pixel.
//
// Batch-norm statistics: cuDNN's training forward hands out the batch mean
// and, as its running variance with an averaging factor of 1, the unbiased
// variance; the ABI (and the CPU kernel, oneDNN) wants the biased one, and
// cuDNN's backward wants 1/sqrt(variance + epsilon).
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_CUDA_NORMALIZATIONMATH_H
#define FASTNN_RUNTIME_CUDA_NORMALIZATIONMATH_H

#include "HostDevice.h"

namespace fastnn::cuda {

struct LrnParams {
  int64_t Channels, Size;
  float Alpha, Beta, Bias;
};

FNN_HOST_DEVICE inline int64_t lrnWindowBegin(const LrnParams &P, int64_t C) {
  int64_t B = C - (P.Size - 1) / 2;
  return B < 0 ? 0 : B;
}

FNN_HOST_DEVICE inline int64_t lrnWindowEnd(const LrnParams &P, int64_t C) {
  int64_t E = C + P.Size / 2 + 1;
  return E > P.Channels ? P.Channels : E;
}

/// d_c, the denominator's base.
template <typename Load>
FNN_HOST_DEVICE float lrnScaleAt(const LrnParams &P, Load X, int64_t C) {
  float Sum = 0.f;
  for (int64_t J = lrnWindowBegin(P, C); J < lrnWindowEnd(P, C); ++J) {
    float V = X(J);
    Sum += V * V;
  }
  return P.Bias + P.Alpha / static_cast<float>(P.Size) * Sum;
}

template <typename Load>
FNN_HOST_DEVICE float lrnForwardAt(const LrnParams &P, Load X, int64_t C) {
  return X(C) * fnnPow(lrnScaleAt(P, X, C), -P.Beta);
}

template <typename Load, typename LoadGrad>
FNN_HOST_DEVICE float lrnBackwardAt(const LrnParams &P, Load X, LoadGrad Dy,
                                    int64_t C) {
  // j's window holds c exactly when j is in [c - ceil((size-1)/2),
  // c + floor((size-1)/2)].
  int64_t Begin = C - P.Size / 2, End = C + (P.Size - 1) / 2 + 1;
  Begin = Begin < 0 ? 0 : Begin;
  End = End > P.Channels ? P.Channels : End;
  float Sum = 0.f;
  for (int64_t J = Begin; J < End; ++J)
    Sum += Dy(J) * X(J) * fnnPow(lrnScaleAt(P, X, J), -P.Beta - 1.f);
  return Dy(C) * fnnPow(lrnScaleAt(P, X, C), -P.Beta) -
         2.f * P.Alpha * P.Beta / static_cast<float>(P.Size) * X(C) * Sum;
}

/// The biased variance of \p Count values from their unbiased one.
FNN_HOST_DEVICE inline float biasedVariance(float Unbiased, int64_t Count) {
  if (Count < 2)
    return 0.f;
  return static_cast<float>(static_cast<double>(Unbiased) *
                            static_cast<double>(Count - 1) /
                            static_cast<double>(Count));
}

FNN_HOST_DEVICE inline float inverseStdDev(float Variance, double Epsilon) {
  return static_cast<float>(1.0 /
                            fnnSqrt(static_cast<double>(Variance) + Epsilon));
}

} // namespace fastnn::cuda

#endif // FASTNN_RUNTIME_CUDA_NORMALIZATIONMATH_H
