//===- BatchNorm.cpp - fnn_batch_norm on CUDA (cuDNN) ---------------------===//
//
// cuDNN's spatial batch normalisation (float32 statistics, scale and shift
// for every activation type):
// - inference: cudnnBatchNormalizationForwardInference, then the ReLU
//   post-op as cudnnActivationForward in place;
// - training forward: cudnnBatchNormalizationForwardTraining with an
//   averaging factor of 1, so its running mean and variance are the
//   batch's: the mean is the ABI's, the variance is the unbiased one and a
//   small kernel makes it the biased one the ABI (and the CPU kernel)
//   writes; a ReLU or ReLU6 post-op follows in place as in inference. The
//   outputs are zeroed first: cuDNN blends the old running values in with
//   weight 0, and 0 * NaN would stay NaN;
// - backward: cudnnBatchNormalizationBackward with the saved mean and
//   1/sqrt(variance + epsilon) computed from the ABI's variance into a
//   kernel-owned buffer. Gradients the caller does not want (NULL) go to
//   kernel-owned spare buffers made at create.
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"
#include "KernelLaunch.h"

#include <sstream>

using namespace fastnn::cuda;

namespace {

struct BatchNormKernel final : CudaKernel {
  using CudaKernel::CudaKernel;
  TensorDescriptor Data, Channel;
  ActivationDescriptor Activation;
  bool ApplyActivation = false;
  /// Training forward: the residual is added (FNN_POST_RESIDUAL) by cuDNN's
  /// blending with the output's prior contents, a copy of it.
  bool AddResidual = false;
  /// The bytes of the input (and of the output and its gradients).
  size_t DataBytes = 0;
  double Epsilon = 0;
  int64_t Channels = 0, CountPerChannel = 0;
  DeviceBuffer InvStd, SpareGradInput, SpareGradScale, SpareGradShift;
};

std::string describe(const fnn_batch_norm_desc &D, const char *Mode) {
  std::ostringstream S;
  S << "batch_norm" << Mode << " input " << shapeText(D.input) << " "
    << layoutName(D.layout) << ", epsilon " << D.epsilon
    << fastnn::runtime::postOpText(D.post_op);
  return S.str();
}

/// The input as cuDNN's N, C, spatial... tensor (at least 4-D), with the
/// strides of its layout (channels second, or last).
TensorDescriptor dataDescriptor(const fnn_batch_norm_desc &D) {
  const int Rank = static_cast<int>(D.input.rank);
  const bool ChannelsLast = D.layout == FNN_NHWC;
  std::vector<int> Dims; // N, C, spatial...
  Dims.push_back(static_cast<int>(D.input.dims[0]));
  Dims.push_back(static_cast<int>(D.input.dims[ChannelsLast ? Rank - 1 : 1]));
  for (int I = ChannelsLast ? 1 : 2; I < (ChannelsLast ? Rank - 1 : Rank); ++I)
    Dims.push_back(static_cast<int>(D.input.dims[I]));
  while (Dims.size() < 4)
    Dims.push_back(1);
  const int N = static_cast<int>(Dims.size());
  std::vector<int> Strides(N);
  int Stride = 1;
  if (ChannelsLast) {
    Strides[1] = Stride;
    Stride *= Dims[1];
    for (int I = N - 1; I >= 2; --I) {
      Strides[I] = Stride;
      Stride *= Dims[I];
    }
  } else {
    for (int I = N - 1; I >= 1; --I) {
      Strides[I] = Stride;
      Stride *= Dims[I];
    }
  }
  Strides[0] = Stride;
  TensorDescriptor T(cudnnCreateTensorDescriptor);
  check(cudnnSetTensorNdDescriptor(T.get(), cudnnType(D.dtype), N, Dims.data(),
                                   Strides.data()),
        "cudnnSetTensorNdDescriptor");
  return T;
}

std::unique_ptr<BatchNormKernel>
make(fnn_device &Device, const fnn_batch_norm_desc &D, bool Training) {
  checkFloatType(D.dtype);
  checkLayout(D.layout);
  if (Training)
    fastnn::runtime::checkTrainingBatchNormPostOp(D.post_op);
  else
    fastnn::runtime::checkReluPostOp(D.post_op, "batch_norm");
  checkShape(D.input, "input", 2, 5);
  if (!(D.epsilon >= 0))
    throw KernelError("epsilon must be >= 0");
  auto K = std::make_unique<BatchNormKernel>(Device);
  K->Data = dataDescriptor(D);
  K->Channel = TensorDescriptor(cudnnCreateTensorDescriptor);
  check(cudnnDeriveBNTensorDescriptor(K->Channel.get(), K->Data.get(),
                                      CUDNN_BATCHNORM_SPATIAL),
        "cudnnDeriveBNTensorDescriptor");
  K->ApplyActivation = (D.post_op & FNN_POST_ACTIVATION_MASK) != FNN_POST_NONE;
  if (K->ApplyActivation)
    K->Activation = activationDescriptor(D.post_op & FNN_POST_ACTIVATION_MASK);
  K->AddResidual = (D.post_op & FNN_POST_RESIDUAL) != 0;
  K->DataBytes = static_cast<size_t>(
      numElements(D.input) * static_cast<int64_t>(elementBytes(D.dtype)));
  K->Epsilon = D.epsilon;
  K->Channels = D.input.dims[D.layout == FNN_NHWC ? D.input.rank - 1 : 1];
  K->CountPerChannel = numElements(D.input) / K->Channels;
  return K;
}

} // namespace

extern "C" fnn_kernel *fnn_batch_norm_create(fnn_device *Device,
                                             const fnn_batch_norm_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_batch_norm_create", Device, Desc,
      [Device](const fnn_batch_norm_desc &D) {
        return make(*Device, D, false);
      },
      [](const fnn_batch_norm_desc &D) { return describe(D, ""); });
}

extern "C" void fnn_batch_norm_forward(fnn_kernel *Handle, const void *Input,
                                       const void *Scale, const void *Shift,
                                       const void *Mean, const void *Variance,
                                       void *Output) {
  auto &K = static_cast<BatchNormKernel &>(*Handle);
  const char *Function = "fnn_batch_norm_forward";
  if (!succeeded(cudnnBatchNormalizationForwardInference(
                     K.Device.Cudnn, CUDNN_BATCHNORM_SPATIAL, &One, &Zero,
                     K.Data.get(), Input, K.Data.get(), Output, K.Channel.get(),
                     Scale, Shift, Mean, Variance, K.Epsilon),
                 Function, "cudnnBatchNormalizationForwardInference") ||
      !K.ApplyActivation)
    return;
  succeeded(cudnnActivationForward(K.Device.Cudnn, K.Activation.get(), &One,
                                   K.Data.get(), Output, &Zero, K.Data.get(),
                                   Output),
            Function, "cudnnActivationForward");
}

extern "C" fnn_kernel *
fnn_batch_norm_train_create(fnn_device *Device,
                            const fnn_batch_norm_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_batch_norm_train_create", Device, Desc,
      [Device](const fnn_batch_norm_desc &D) { return make(*Device, D, true); },
      [](const fnn_batch_norm_desc &D) { return describe(D, " (training)"); });
}

extern "C" void fnn_batch_norm_train_forward(
    fnn_kernel *Handle, const void *Input, const void *Scale, const void *Shift,
    const void *Residual, void *Output, void *Mean, void *Variance) {
  auto &K = static_cast<BatchNormKernel &>(*Handle);
  const char *Function = "fnn_batch_norm_train_forward";
  size_t StatBytes = static_cast<size_t>(K.Channels) * sizeof(float);
  bool CopyResidual = K.AddResidual && Residual != Output;
  if ((CopyResidual &&
       !succeeded(cudaMemcpyAsync(Output, Residual, K.DataBytes,
                                  cudaMemcpyDeviceToDevice, K.Device.Compute),
                  Function, "cudaMemcpyAsync")) ||
      !succeeded(cudaMemsetAsync(Mean, 0, StatBytes, K.Device.Compute),
                 Function, "cudaMemsetAsync") ||
      !succeeded(cudaMemsetAsync(Variance, 0, StatBytes, K.Device.Compute),
                 Function, "cudaMemsetAsync") ||
      !succeeded(cudnnBatchNormalizationForwardTraining(
                     K.Device.Cudnn, CUDNN_BATCHNORM_SPATIAL, &One,
                     K.AddResidual ? &One : &Zero, K.Data.get(), Input,
                     K.Data.get(), Output, K.Channel.get(), Scale, Shift, 1.0,
                     Mean, Variance, K.Epsilon, nullptr, nullptr),
                 Function, "cudnnBatchNormalizationForwardTraining"))
    return;
  launchBiasedVariance(static_cast<float *>(Variance), K.Channels,
                       K.CountPerChannel, K.Device.Compute);
  if (K.ApplyActivation)
    succeeded(cudnnActivationForward(K.Device.Cudnn, K.Activation.get(), &One,
                                     K.Data.get(), Output, &Zero, K.Data.get(),
                                     Output),
              Function, "cudnnActivationForward");
}

extern "C" fnn_kernel *
fnn_batch_norm_backward_create(fnn_device *Device,
                               const fnn_batch_norm_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_batch_norm_backward_create", Device, Desc,
      [Device](const fnn_batch_norm_desc &D) {
        if (D.post_op != FNN_POST_NONE)
          throw KernelError("post_op must be FNN_POST_NONE for the backward "
                            "(the compiler applies the relu's gradient "
                            "itself)");
        auto K = make(*Device, D, true);
        size_t StatBytes = static_cast<size_t>(K->Channels) * sizeof(float);
        K->InvStd = DeviceBuffer(StatBytes);
        K->SpareGradScale = DeviceBuffer(StatBytes);
        K->SpareGradShift = DeviceBuffer(StatBytes);
        K->SpareGradInput = DeviceBuffer(K->DataBytes);
        return K;
      },
      [](const fnn_batch_norm_desc &D) { return describe(D, " backward"); });
}

extern "C" void fnn_batch_norm_backward(fnn_kernel *Handle, const void *Input,
                                        const void *Scale, const void *Mean,
                                        const void *Variance,
                                        const void *GradOutput, void *GradInput,
                                        void *GradScale, void *GradShift) {
  auto &K = static_cast<BatchNormKernel &>(*Handle);
  auto *InvStd = static_cast<float *>(K.InvStd.get());
  launchInverseStdDev(static_cast<const float *>(Variance), InvStd, K.Channels,
                      K.Epsilon, K.Device.Compute);
  succeeded(cudnnBatchNormalizationBackward(
                K.Device.Cudnn, CUDNN_BATCHNORM_SPATIAL, &One, &Zero, &One,
                &Zero, K.Data.get(), Input, K.Data.get(), GradOutput,
                K.Data.get(), GradInput ? GradInput : K.SpareGradInput.get(),
                K.Channel.get(), Scale,
                GradScale ? GradScale : K.SpareGradScale.get(),
                GradShift ? GradShift : K.SpareGradShift.get(), K.Epsilon, Mean,
                InvStd),
            "fnn_batch_norm_backward", "cudnnBatchNormalizationBackward");
}
