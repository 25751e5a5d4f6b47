//===- KernelLaunch.h - the hand-written CUDA kernels' launchers -*- C++
//-*-===//
//
// Host functions, defined in the .cu files, that enqueue our own kernels on
// a stream; the library-side .cpp files call them. They neither allocate
// nor synchronise, and report a launch failure through fnn_last_error.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_CUDA_KERNELLAUNCH_H
#define FASTNN_RUNTIME_CUDA_KERNELLAUNCH_H

#include "NormalizationMath.h"
#include "OptimizerMath.h"
#include "PoolingMath.h"

#include <cuda_runtime.h>

namespace fastnn::cuda {

/// One update of H.NumElements elements from the gradient \p G, of
/// H.GradType; learning rate, step and the apply flag (NULL: always) are
/// read on the device.
void launchOptimizer(const OptimizerHyperparameters &H, OptimizerState *State,
                     float *Var, const void *G, float *S0, float *S1,
                     const float *LearningRate, const int64_t *Step,
                     const unsigned char *Apply, cudaStream_t Stream);

/// A 4-D activation's N, C, H, W and its layout.
struct ActivationShape {
  int64_t N, C, H, W;
  bool Nhwc;
};

/// \p S as an ActivationShape of \p Layout.
inline ActivationShape activationShape(const fnn_shape &S, int64_t Layout) {
  bool Nhwc = Layout == FNN_NHWC;
  return {S.dims[0], S.dims[Nhwc ? 3 : 1], S.dims[Nhwc ? 1 : 2],
          S.dims[Nhwc ? 2 : 3], Nhwc};
}

void launchPoolForward(int64_t DType, const PoolGeometry &G,
                       const ActivationShape &In, const void *Input,
                       void *Output, int32_t *Argmax, cudaStream_t Stream);
void launchPoolBackward(int64_t DType, const PoolGeometry &G,
                        const ActivationShape &In, const void *GradOutput,
                        const int32_t *Argmax, void *GradInput,
                        cudaStream_t Stream);

void launchLrnForward(const LrnParams &P, const ActivationShape &Shape,
                      const float *Input, float *Output, cudaStream_t Stream);
void launchLrnBackward(const LrnParams &P, const ActivationShape &Shape,
                       const float *Input, const float *GradOutput,
                       float *GradInput, cudaStream_t Stream);

/// Variance[c] = biasedVariance(Variance[c], Count), in place.
void launchBiasedVariance(float *Variance, int64_t Channels, int64_t Count,
                          cudaStream_t Stream);
void launchInverseStdDev(const float *Variance, float *InvStd, int64_t Channels,
                         double Epsilon, cudaStream_t Stream);

/// Copies an activation of shape \p In into the zero-padded one of shape
/// \p Padded (Top rows and Left columns before it; the rest after), or
/// crops it back out (\p Crop): explicit padding for the convolutions whose
/// pads are asymmetric, which cuDNN does not take.
void launchPadCopy(size_t ElementBytes, const ActivationShape &In,
                   const ActivationShape &Padded, int64_t Top, int64_t Left,
                   const void *Src, void *Dst, bool Crop, cudaStream_t Stream);

} // namespace fastnn::cuda

#endif // FASTNN_RUNTIME_CUDA_KERNELLAUNCH_H
