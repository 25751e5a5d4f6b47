//===- Optimizers.cpp - fnn_optimizer on CUDA -----------------------------===//
//
// The create-time checks and the hyperparameters rounded to float32 once
// are shared with the CPU kernel (fastnn/runtime/Optimizer.h); the update
// itself is Optimizers.cu. The kernel owns a small device buffer for Adam's
// beta powers (advanced on the device, see OptimizerMath.h).
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"
#include "KernelLaunch.h"

using namespace fastnn::cuda;

namespace {

struct OptimizerKernel final : CudaKernel {
  OptimizerKernel(fnn_device &Device, const OptimizerHyperparameters &H)
      : CudaKernel(Device), Params(H), State(sizeof(OptimizerState)) {}
  OptimizerHyperparameters Params;
  DeviceBuffer State;
};

void apply(fnn_kernel *Handle, void *Param, const void *Grad, void *Slot0,
           void *Slot1, const void *LearningRate, const void *Step,
           const void *Apply) {
  auto &K = static_cast<OptimizerKernel &>(*Handle);
  const OptimizerHyperparameters &H = K.Params;
  int Slots = fastnn::runtime::optimizerSlotCount(H.Kind);
  if (!Param || !Grad || !LearningRate || (Slots > 0 && !Slot0) ||
      (Slots > 1 && !Slot1) || (H.Kind == FNN_OPT_ADAM && !Step)) {
    fastnn::runtime::setLastError(std::string("fnn_optimizer_apply: ") +
                                  fastnn::runtime::optimizerKindName(H.Kind) +
                                  " called with a null tensor");
    return;
  }
  launchOptimizer(H, static_cast<OptimizerState *>(K.State.get()),
                  static_cast<float *>(Param), Grad,
                  static_cast<float *>(Slot0), static_cast<float *>(Slot1),
                  static_cast<const float *>(LearningRate),
                  static_cast<const int64_t *>(Step),
                  static_cast<const unsigned char *>(Apply), K.Device.Compute);
}

} // namespace

extern "C" fnn_kernel *fnn_optimizer_create(fnn_device *Device,
                                            const fnn_optimizer_desc *Desc) {
  return fastnn::runtime::createKernel(
      "fnn_optimizer_create", Device, Desc,
      [Device](const fnn_optimizer_desc &D) {
        fastnn::runtime::checkOptimizerDesc(D);
        auto K = std::make_unique<OptimizerKernel>(*Device,
                                                   optimizerHyperparameters(D));
        const OptimizerState Initial{{0, 1.f, 1.f}, 0.f};
        check(cudaMemcpy(K->State.get(), &Initial, sizeof(Initial),
                         cudaMemcpyHostToDevice),
              "initialising the optimizer state");
        return K;
      },
      fastnn::runtime::describeOptimizer);
}

extern "C" void fnn_optimizer_apply(fnn_kernel *Kernel, void *Param,
                                    const void *Grad, void *Slot0, void *Slot1,
                                    const void *LearningRate,
                                    const void *Step) {
  apply(Kernel, Param, Grad, Slot0, Slot1, LearningRate, Step, nullptr);
}

extern "C" void fnn_optimizer_apply_if(fnn_kernel *Kernel, void *Param,
                                       const void *Grad, void *Slot0,
                                       void *Slot1, const void *LearningRate,
                                       const void *Step, const void *Apply) {
  apply(Kernel, Param, Grad, Slot0, Slot1, LearningRate, Step, Apply);
}
