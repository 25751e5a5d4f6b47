//===- Lrn.cpp - fnn_lrn on CUDA: forward, training, backward -------------===//
//
// Our own kernels (Kernels.cu over NormalizationMath.h): cuDNN's LRN takes
// windows of at most 16 channels. The backward recomputes the denominators
// from the input, so the training forward saves nothing; it is still a
// kernel of its own, so the backward checks it was given its forward.
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"
#include "KernelLaunch.h"

using namespace fastnn::cuda;

namespace {

struct LrnKernel final : CudaKernel {
  LrnKernel(fnn_device &Device, const fnn_lrn_desc &D, bool Training)
      : CudaKernel(Device), Desc(D), Training(Training),
        Shape(activationShape(D.input, D.layout)) {
    Params = {Shape.C, D.size, static_cast<float>(D.alpha),
              static_cast<float>(D.beta), static_cast<float>(D.bias)};
  }
  fnn_lrn_desc Desc;
  bool Training;
  ActivationShape Shape;
  LrnParams Params;
};

std::unique_ptr<LrnKernel> make(fnn_device &Device, const fnn_lrn_desc &D,
                                bool Training) {
  fastnn::runtime::checkLrnDesc(D);
  return std::make_unique<LrnKernel>(Device, D, Training);
}

} // namespace

extern "C" fnn_kernel *fnn_lrn_create(fnn_device *Device,
                                      const fnn_lrn_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_lrn_create", Device, Desc,
      [Device](const fnn_lrn_desc &D) { return make(*Device, D, false); },
      fastnn::runtime::describeLrn);
}

extern "C" fnn_kernel *fnn_lrn_train_create(fnn_device *Device,
                                            const fnn_lrn_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_lrn_train_create", Device, Desc,
      [Device](const fnn_lrn_desc &D) { return make(*Device, D, true); },
      fastnn::runtime::describeLrn);
}

extern "C" fnn_kernel *fnn_lrn_backward_create(fnn_device *Device,
                                               const fnn_lrn_desc *Desc,
                                               fnn_kernel *Forward) {
  return fastnn::runtime::createKernel(
      "fnn_lrn_backward_create", Device, Desc,
      [Device, Forward](const fnn_lrn_desc &D) {
        auto K = make(*Device, D, false);
        auto *Saved = dynamic_cast<LrnKernel *>(Forward);
        if (!Saved || !Saved->Training)
          throw KernelError("LRN's backward needs the kernel of its "
                            "forward, made by fnn_lrn_train_create");
        checkForwardMatches(*Saved, Saved->Desc, *Device, D);
        return K;
      },
      fastnn::runtime::describeLrn);
}

extern "C" void fnn_lrn_forward(fnn_kernel *Handle, const void *Input,
                                void *Output) {
  auto &K = static_cast<LrnKernel &>(*Handle);
  launchLrnForward(K.Params, K.Shape, static_cast<const float *>(Input),
                   static_cast<float *>(Output), K.Device.Compute);
}

extern "C" void fnn_lrn_backward(fnn_kernel *Handle, const void *Input,
                                 const void *GradOutput, void *GradInput) {
  auto &K = static_cast<LrnKernel &>(*Handle);
  launchLrnBackward(K.Params, K.Shape, static_cast<const float *>(Input),
                    static_cast<const float *>(GradOutput),
                    static_cast<float *>(GradInput), K.Device.Compute);
}
