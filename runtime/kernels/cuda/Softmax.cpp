//===- Softmax.cpp - fnn_softmax on CUDA (cuDNN) --------------------------===//
//
// cudnnSoftmaxForward in channel mode over the input viewed as
// outer x axis x inner x 1, so one softmax runs along the axis for every
// (outer, inner) position; CUDNN_SOFTMAX_ACCURATE subtracts the maximum
// first, CUDNN_SOFTMAX_LOG is log-softmax.
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"

using namespace fastnn::cuda;

namespace {

struct SoftmaxKernel final : CudaKernel {
  using CudaKernel::CudaKernel;
  TensorDescriptor Data;
  cudnnSoftmaxAlgorithm_t Algorithm = CUDNN_SOFTMAX_ACCURATE;
};

} // namespace

extern "C" fnn_kernel *fnn_softmax_create(fnn_device *Device,
                                          const fnn_softmax_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_softmax_create", Device, Desc,
      [Device](const fnn_softmax_desc &D) {
        int64_t Axis = fastnn::runtime::checkSoftmaxDesc(D);
        int64_t Outer = 1, Inner = 1;
        for (int64_t I = 0; I < Axis; ++I)
          Outer *= D.input.dims[I];
        for (int64_t I = Axis + 1; I < D.input.rank; ++I)
          Inner *= D.input.dims[I];
        if (Outer > INT32_MAX || Inner > INT32_MAX ||
            D.input.dims[Axis] > INT32_MAX)
          throw KernelError("dimensions above cuDNN's 2^31 limit");
        auto K = std::make_unique<SoftmaxKernel>(*Device);
        K->Data = TensorDescriptor(cudnnCreateTensorDescriptor);
        check(cudnnSetTensor4dDescriptor(
                  K->Data.get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                  static_cast<int>(Outer), static_cast<int>(D.input.dims[Axis]),
                  static_cast<int>(Inner), 1),
              "cudnnSetTensor4dDescriptor");
        K->Algorithm = D.log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
        return K;
      },
      fastnn::runtime::describeSoftmax);
}

extern "C" void fnn_softmax_forward(fnn_kernel *Handle, const void *Input,
                                    void *Output) {
  auto &K = static_cast<SoftmaxKernel &>(*Handle);
  succeeded(cudnnSoftmaxForward(K.Device.Cudnn, K.Algorithm,
                                CUDNN_SOFTMAX_MODE_CHANNEL, &One, K.Data.get(),
                                Input, &Zero, K.Data.get(), Output),
            "fnn_softmax_forward", "cudnnSoftmaxForward");
}
