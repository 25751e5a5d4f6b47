//===- Optimizers.cpp - fnn_optimizer on CUDA -----------------------------===//
//
// The create-time checks of the CPU kernel (those tf.compat.v1.train makes)
// and the hyperparameters rounded to float32 once; the update itself is
// Optimizers.cu. The kernel owns a small device buffer for Adam's beta
// powers (advanced on the device, see OptimizerMath.h).
//
//===----------------------------------------------------------------------===//

#include "CudaKernel.h"
#include "KernelLaunch.h"

#include <sstream>

using namespace fastnn::cuda;

namespace {

const char *kindName(int64_t Kind) {
  static const char *const Names[] = {"sgd",  "momentum", "rmsprop",
                                      "adam", "adagrad",  "adadelta",
                                      "ftrl", "adamw"};
  return Kind >= FNN_OPT_SGD && Kind <= FNN_OPT_ADAMW ? Names[Kind] : "?";
}

/// Slots each kind reads (the ABI's table).
int slotCount(int64_t Kind) {
  switch (Kind) {
  case FNN_OPT_SGD:
    return 0;
  case FNN_OPT_MOMENTUM:
  case FNN_OPT_ADAGRAD:
    return 1;
  default:
    return 2;
  }
}

struct OptimizerKernel final : CudaKernel {
  OptimizerKernel(fnn_device &Device, const OptimizerParams &H)
      : CudaKernel(Device), Params(H), State(sizeof(OptimizerState)) {}
  OptimizerParams Params;
  DeviceBuffer State;
};

std::string describe(const fnn_optimizer_desc &D) {
  std::ostringstream S;
  S << "optimizer " << kindName(D.kind) << " (kind " << D.kind << "), "
    << D.num_elements << " elements";
  return S.str();
}

void apply(fnn_kernel *Handle, void *Param, const void *Grad, void *Slot0,
           void *Slot1, const void *LearningRate, const void *Step,
           const void *Apply) {
  auto &K = static_cast<OptimizerKernel &>(*Handle);
  const OptimizerParams &H = K.Params;
  int Slots = slotCount(H.Kind);
  if (!Param || !Grad || !LearningRate || (Slots > 0 && !Slot0) ||
      (Slots > 1 && !Slot1) || (H.Kind == FNN_OPT_ADAM && !Step)) {
    fastnn::runtime::setLastError(std::string("fnn_optimizer_apply: ") +
                                  kindName(H.Kind) +
                                  " called with a null tensor");
    return;
  }
  launchOptimizer(H, static_cast<OptimizerState *>(K.State.get()),
                  static_cast<float *>(Param), static_cast<const float *>(Grad),
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
        checkF32(D.dtype);
        if (D.kind < FNN_OPT_SGD || D.kind > FNN_OPT_ADAMW)
          throw KernelError("unknown optimizer kind " + std::to_string(D.kind));
        if (D.num_elements < 1)
          throw KernelError("num_elements must be >= 1");
        if (D.kind == FNN_OPT_FTRL &&
            !(D.learning_rate_power <= 0 && D.l1 >= 0 && D.l2 >= 0 &&
              D.initial_accumulator_value >= 0))
          throw KernelError("ftrl needs learning_rate_power <= 0, l1 >= 0, "
                            "l2 >= 0 and initial_accumulator_value >= 0");
        if (D.kind == FNN_OPT_ADAGRAD && !(D.initial_accumulator_value > 0))
          throw KernelError("adagrad needs initial_accumulator_value > 0");
        auto K = std::make_unique<OptimizerKernel>(*Device, optimizerParams(D));
        const OptimizerState Initial{{0, 1.f, 1.f}, 0.f};
        check(cudaMemcpy(K->State.get(), &Initial, sizeof(Initial),
                         cudaMemcpyHostToDevice),
              "initialising the optimizer state");
        return K;
      },
      describe);
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
