//===- Pooling.cpp - fnn_pool2d on CUDA: inference, training, backward ----===//
//
// Our own kernels (Kernels.cu over PoolingMath.h): cuDNN's pooling takes
// symmetric pads and no dilation, the ABI's has both. A training max-pooling
// kernel keeps the argmax of its latest run (int32 plane indices, one per
// output element, allocated at create); the backward kernel shares it.
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"
#include "KernelLaunch.h"

#include <sstream>

using namespace fastnn::cuda;

namespace {

struct PoolKernel final : CudaKernel {
  PoolKernel(fnn_device &Device, const fnn_pool2d_desc &D)
      : CudaKernel(Device), Desc(D), Geometry(poolGeometry(D)),
        Input(activationShape(D.input, D.layout)) {}
  fnn_pool2d_desc Desc;
  PoolGeometry Geometry;
  ActivationShape Input;
  /// Max pooling for training: the forward's argmax, shared with the
  /// backward kernel.
  std::shared_ptr<DeviceBuffer> Argmax;
  bool Training = false;
};

std::string describe(const fnn_pool2d_desc &D) {
  std::ostringstream S;
  S << (D.kind == FNN_POOL_MAX ? "max" : "avg") << "pool input "
    << shapeText(D.input) << " " << layoutName(D.layout) << ", output "
    << shapeText(D.output) << ", kernel " << formatPair(D.kernel)
    << ", strides " << formatPair(D.strides) << ", pads " << D.pads[0] << ","
    << D.pads[1] << "," << D.pads[2] << "," << D.pads[3] << ", dilations "
    << formatPair(D.dilations);
  if (D.kind == FNN_POOL_AVG)
    S << (D.count_include_pad ? ", count_include_pad" : "");
  return S.str();
}

void checkDesc(const fnn_pool2d_desc &D) {
  fastnn::runtime::checkPool2dDesc(D);
  bool Nhwc = D.layout == FNN_NHWC;
  int H = Nhwc ? 1 : 2, W = Nhwc ? 2 : 3;
  // Every window must start inside the padded input (what oneDNN, and so
  // the CPU kernel, accepts: ceil mode adds at most one such window).
  for (int J = 0; J < 2; ++J) {
    int Dim = J == 0 ? H : W;
    if ((D.output.dims[Dim] - 1) * D.strides[J] >=
        D.input.dims[Dim] + D.pads[J] + D.pads[J + 2])
      throw KernelError("output height/width do not follow from input, "
                        "kernel, strides and pads");
  }
  if (D.input.dims[H] * D.input.dims[W] > INT32_MAX)
    throw KernelError("input planes above 2^31 elements");
}

std::unique_ptr<PoolKernel> make(fnn_device &Device, const fnn_pool2d_desc &D,
                                 bool Training) {
  checkDesc(D);
  auto K = std::make_unique<PoolKernel>(Device, D);
  K->Training = Training;
  if (Training && D.kind == FNN_POOL_MAX)
    K->Argmax = std::make_shared<DeviceBuffer>(
        static_cast<size_t>(numElements(D.output)) * sizeof(int32_t));
  return K;
}

} // namespace

extern "C" fnn_kernel *fnn_pool2d_create(fnn_device *Device,
                                         const fnn_pool2d_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_pool2d_create", Device, Desc,
      [Device](const fnn_pool2d_desc &D) { return make(*Device, D, false); },
      describe);
}

extern "C" fnn_kernel *fnn_pool2d_train_create(fnn_device *Device,
                                               const fnn_pool2d_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_pool2d_train_create", Device, Desc,
      [Device](const fnn_pool2d_desc &D) { return make(*Device, D, true); },
      describe);
}

extern "C" fnn_kernel *fnn_pool2d_backward_create(fnn_device *Device,
                                                  const fnn_pool2d_desc *Desc,
                                                  fnn_kernel *Forward) {
  return fastnn::runtime::createKernel(
      "fnn_pool2d_backward_create", Device, Desc,
      [Device, Forward](const fnn_pool2d_desc &D) {
        auto K = make(*Device, D, false);
        if (D.kind != FNN_POOL_MAX)
          return K;
        // Max pooling routes each gradient to the argmax the forward kernel
        // saved on its last run.
        auto *Saved = dynamic_cast<PoolKernel *>(Forward);
        if (!Saved || !Saved->Argmax)
          throw KernelError("max pooling's backward needs the kernel of its "
                            "forward, made by fnn_pool2d_train_create");
        checkForwardMatches(*Saved, Saved->Desc, *Device, D);
        K->Argmax = Saved->Argmax;
        return K;
      },
      describe);
}

extern "C" void fnn_pool2d_forward(fnn_kernel *Handle, const void *Input,
                                   void *Output) {
  auto &K = static_cast<PoolKernel &>(*Handle);
  int32_t *Argmax = K.Training && K.Argmax
                        ? static_cast<int32_t *>(K.Argmax->get())
                        : nullptr;
  launchPoolForward(K.Desc.dtype, K.Geometry, K.Input, Input, Output, Argmax,
                    K.Device.Compute);
}

extern "C" void fnn_pool2d_backward(fnn_kernel *Handle, const void *GradOutput,
                                    void *GradInput) {
  auto &K = static_cast<PoolKernel &>(*Handle);
  const int32_t *Argmax =
      K.Argmax ? static_cast<const int32_t *>(K.Argmax->get()) : nullptr;
  launchPoolBackward(K.Desc.dtype, K.Geometry, K.Input, GradOutput, Argmax,
                     GradInput, K.Device.Compute);
}
