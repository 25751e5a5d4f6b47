//===- Kernels.cu - pooling, LRN and small helpers as CUDA kernels --------===//
//
// What cuDNN does not do as the ABI states it: pooling with asymmetric pads
// and dilation (cuDNN's takes symmetric pads and no dilation), LRN with
// windows past 16 channels and both layouts, the conversion of cuDNN's
// batch-norm statistics to the ABI's, and explicit padding for asymmetric
// convolutions. One thread per output element, over the per-element
// functions of PoolingMath.h and NormalizationMath.h; backward passes
// gather (each input element sums its own gradient), so no atomics and the
// same bits on every run.
//
//===----------------------------------------------------------------------===//

#include "ElementTypes.cuh"
#include "KernelLaunch.h"

#include "fastnn/runtime/LastError.h"

#include <string>

namespace fastnn::cuda {
namespace {

constexpr int Threads = 256;

unsigned blocksFor(int64_t Count) {
  int64_t Blocks = (Count + Threads - 1) / Threads;
  return static_cast<unsigned>(Blocks > 0 ? Blocks : 1);
}

void reportLaunch(const char *Function) {
  cudaError_t E = cudaGetLastError();
  if (E != cudaSuccess)
    runtime::setLastError(std::string(Function) +
                          ": launch: " + cudaGetErrorString(E));
}

/// Element offsets of an activation: plane (n, c) base and (h, w) strides.
struct Planes {
  int64_t RowStride, ColStride;
  __host__ __device__ Planes(const ActivationShape &S)
      : RowStride(S.Nhwc ? S.W * S.C : S.W), ColStride(S.Nhwc ? S.C : 1) {}
  __device__ static int64_t base(const ActivationShape &S, int64_t N,
                                 int64_t C) {
    return S.Nhwc ? N * S.H * S.W * S.C + C : (N * S.C + C) * S.H * S.W;
  }
};

/// (n, c, h, w) of linear index I of an activation stored in its layout.
__device__ void coordinates(const ActivationShape &S, int64_t I, int64_t &N,
                            int64_t &C, int64_t &H, int64_t &W) {
  if (S.Nhwc) {
    C = I % S.C;
    I /= S.C;
    W = I % S.W;
    I /= S.W;
    H = I % S.H;
    N = I / S.H;
  } else {
    W = I % S.W;
    I /= S.W;
    H = I % S.H;
    I /= S.H;
    C = I % S.C;
    N = I / S.C;
  }
}

/// The number of elements of an activation.
__host__ __device__ int64_t elementCount(const ActivationShape &S) {
  return S.N * S.C * S.H * S.W;
}

/// This thread's element of \p S: its linear index \p I and (n, c, h, w);
/// false for a thread past the end (the last block is not full).
__device__ bool threadElement(const ActivationShape &S, int64_t &I, int64_t &N,
                              int64_t &C, int64_t &H, int64_t &W) {
  I = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (I >= elementCount(S))
    return false;
  coordinates(S, I, N, C, H, W);
  return true;
}

__device__ int64_t offsetOf(const ActivationShape &S, int64_t N, int64_t C,
                            int64_t H, int64_t W) {
  return S.Nhwc ? ((N * S.H + H) * S.W + W) * S.C + C
                : ((N * S.C + C) * S.H + H) * S.W + W;
}

template <typename T>
__global__ void poolForward(PoolGeometry G, ActivationShape In,
                            ActivationShape Out, const T *Input, T *Output,
                            int32_t *Argmax) {
  int64_t I, N, C, Oh, Ow;
  if (!threadElement(Out, I, N, C, Oh, Ow))
    return;
  Planes P(In);
  const T *Plane = Input + Planes::base(In, N, C);
  auto Load = [&](int64_t H, int64_t W) {
    return toFloat(Plane[H * P.RowStride + W * P.ColStride]);
  };
  Output[I] = fromFloat<T>(
      poolForwardAt(G, Load, Oh, Ow, Argmax ? Argmax + I : nullptr));
}

template <typename T>
__global__ void poolBackward(PoolGeometry G, ActivationShape In,
                             ActivationShape Out, const T *GradOutput,
                             const int32_t *Argmax, T *GradInput) {
  int64_t I, N, C, H, W;
  if (!threadElement(In, I, N, C, H, W))
    return;
  auto Grad = [&](int64_t Oh, int64_t Ow) {
    return toFloat(GradOutput[offsetOf(Out, N, C, Oh, Ow)]);
  };
  auto ArgmaxOf = [&](int64_t Oh, int64_t Ow) {
    return Argmax ? Argmax[offsetOf(Out, N, C, Oh, Ow)] : -1;
  };
  GradInput[I] = fromFloat<T>(poolBackwardAt(G, Grad, ArgmaxOf, H, W));
}

ActivationShape outputShape(const PoolGeometry &G, const ActivationShape &In) {
  return {In.N, In.C, G.OutH, G.OutW, In.Nhwc};
}

__global__ void lrnForward(LrnParams P, ActivationShape S, const float *Input,
                           float *Output) {
  int64_t I, N, C, H, W;
  if (!threadElement(S, I, N, C, H, W))
    return;
  const float *Pixel = Input + offsetOf(S, N, 0, H, W);
  int64_t Stride = S.Nhwc ? 1 : S.H * S.W;
  auto X = [&](int64_t J) { return Pixel[J * Stride]; };
  Output[I] = lrnForwardAt(P, X, C);
}

__global__ void lrnBackward(LrnParams P, ActivationShape S, const float *Input,
                            const float *GradOutput, float *GradInput) {
  int64_t I, N, C, H, W;
  if (!threadElement(S, I, N, C, H, W))
    return;
  int64_t Base = offsetOf(S, N, 0, H, W);
  int64_t Stride = S.Nhwc ? 1 : S.H * S.W;
  auto X = [&](int64_t J) { return Input[Base + J * Stride]; };
  auto Dy = [&](int64_t J) { return GradOutput[Base + J * Stride]; };
  GradInput[I] = lrnBackwardAt(P, X, Dy, C);
}

__global__ void biasedVariance(float *Variance, int64_t Channels,
                               int64_t Count) {
  int64_t C = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (C < Channels)
    Variance[C] = fastnn::cuda::biasedVariance(Variance[C], Count);
}

__global__ void inverseStdDev(const float *Variance, float *InvStd,
                              int64_t Channels, double Epsilon) {
  int64_t C = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (C < Channels)
    InvStd[C] = fastnn::cuda::inverseStdDev(Variance[C], Epsilon);
}

template <typename T>
__global__ void padCopy(ActivationShape In, ActivationShape Padded, int64_t Top,
                        int64_t Left, const T *Src, T *Dst, bool Crop) {
  int64_t I, N, C, H, W;
  if (!threadElement(Crop ? In : Padded, I, N, C, H, W))
    return;
  if (Crop) {
    Dst[I] = Src[offsetOf(Padded, N, C, H + Top, W + Left)];
    return;
  }
  int64_t Hi = H - Top, Wi = W - Left;
  bool Inside = Hi >= 0 && Hi < In.H && Wi >= 0 && Wi < In.W;
  Dst[I] = Inside ? Src[offsetOf(In, N, C, Hi, Wi)] : T(0);
}

} // namespace

void launchPoolForward(int64_t DType, const PoolGeometry &G,
                       const ActivationShape &In, const void *Input,
                       void *Output, int32_t *Argmax, cudaStream_t Stream) {
  ActivationShape Out = outputShape(G, In);
  unsigned Blocks = blocksFor(elementCount(Out));
  withElementType(DType, [&](auto Element) {
    using T = typename decltype(Element)::Type;
    poolForward<<<Blocks, Threads, 0, Stream>>>(
        G, In, Out, static_cast<const T *>(Input), static_cast<T *>(Output),
        Argmax);
  });
  reportLaunch("fnn_pool2d_forward");
}

void launchPoolBackward(int64_t DType, const PoolGeometry &G,
                        const ActivationShape &In, const void *GradOutput,
                        const int32_t *Argmax, void *GradInput,
                        cudaStream_t Stream) {
  ActivationShape Out = outputShape(G, In);
  unsigned Blocks = blocksFor(elementCount(In));
  withElementType(DType, [&](auto Element) {
    using T = typename decltype(Element)::Type;
    poolBackward<<<Blocks, Threads, 0, Stream>>>(
        G, In, Out, static_cast<const T *>(GradOutput), Argmax,
        static_cast<T *>(GradInput));
  });
  reportLaunch("fnn_pool2d_backward");
}

void launchLrnForward(const LrnParams &P, const ActivationShape &Shape,
                      const float *Input, float *Output, cudaStream_t Stream) {
  lrnForward<<<blocksFor(elementCount(Shape)), Threads, 0, Stream>>>(
      P, Shape, Input, Output);
  reportLaunch("fnn_lrn_forward");
}

void launchLrnBackward(const LrnParams &P, const ActivationShape &Shape,
                       const float *Input, const float *GradOutput,
                       float *GradInput, cudaStream_t Stream) {
  lrnBackward<<<blocksFor(elementCount(Shape)), Threads, 0, Stream>>>(
      P, Shape, Input, GradOutput, GradInput);
  reportLaunch("fnn_lrn_backward");
}

void launchBiasedVariance(float *Variance, int64_t Channels, int64_t Count,
                          cudaStream_t Stream) {
  biasedVariance<<<blocksFor(Channels), Threads, 0, Stream>>>(Variance,
                                                              Channels, Count);
  reportLaunch("fnn_batch_norm_train_forward");
}

void launchInverseStdDev(const float *Variance, float *InvStd, int64_t Channels,
                         double Epsilon, cudaStream_t Stream) {
  inverseStdDev<<<blocksFor(Channels), Threads, 0, Stream>>>(Variance, InvStd,
                                                             Channels, Epsilon);
  reportLaunch("fnn_batch_norm_backward");
}

void launchPadCopy(size_t ElementBytes, const ActivationShape &In,
                   const ActivationShape &Padded, int64_t Top, int64_t Left,
                   const void *Src, void *Dst, bool Crop, cudaStream_t Stream) {
  unsigned Blocks = blocksFor(elementCount(Crop ? In : Padded));
  if (ElementBytes == 2)
    padCopy<<<Blocks, Threads, 0, Stream>>>(In, Padded, Top, Left,
                                            static_cast<const uint16_t *>(Src),
                                            static_cast<uint16_t *>(Dst), Crop);
  else
    padCopy<<<Blocks, Threads, 0, Stream>>>(In, Padded, Top, Left,
                                            static_cast<const uint32_t *>(Src),
                                            static_cast<uint32_t *>(Dst), Crop);
  reportLaunch("fnn_conv2d");
}

} // namespace fastnn::cuda
