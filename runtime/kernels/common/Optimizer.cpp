//===- Optimizer.cpp - fnn_optimizer's names, checks, hyperparameters -----===//

#include "fastnn/runtime/Optimizer.h"

#include "fastnn/runtime/KernelBase.h"

#include <sstream>

const char *fastnn::runtime::optimizerKindName(int64_t Kind) {
  static const char *const Names[] = {"sgd",  "momentum", "rmsprop",
                                      "adam", "adagrad",  "adadelta",
                                      "ftrl", "adamw"};
  return Kind >= FNN_OPT_SGD && Kind <= FNN_OPT_ADAMW ? Names[Kind] : "?";
}

int fastnn::runtime::optimizerSlotCount(int64_t Kind) {
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

std::string fastnn::runtime::describeOptimizer(const fnn_optimizer_desc &D) {
  std::ostringstream S;
  S << "optimizer " << optimizerKindName(D.kind) << " (kind " << D.kind << "), "
    << D.num_elements << " elements"
    << (D.grad_dtype == FNN_BF16 ? ", bfloat16 gradient" : "");
  return S.str();
}

void fastnn::runtime::checkOptimizerDesc(const fnn_optimizer_desc &D) {
  checkF32(D.dtype);
  if (D.grad_dtype != FNN_F32 && D.grad_dtype != FNN_BF16)
    throw KernelError("grad_dtype must be FNN_F32 or FNN_BF16");
  if (D.kind < FNN_OPT_SGD || D.kind > FNN_OPT_ADAMW)
    throw KernelError("unknown optimizer kind " + std::to_string(D.kind));
  if (D.num_elements < 1)
    throw KernelError("num_elements must be >= 1");
  // The checks tf.compat.v1.train makes at construction.
  if (D.kind == FNN_OPT_FTRL &&
      !(D.learning_rate_power <= 0 && D.l1 >= 0 && D.l2 >= 0 &&
        D.initial_accumulator_value >= 0))
    throw KernelError("ftrl needs learning_rate_power <= 0, l1 >= 0, l2 >= 0 "
                      "and initial_accumulator_value >= 0");
  if (D.kind == FNN_OPT_ADAGRAD && !(D.initial_accumulator_value > 0))
    throw KernelError("adagrad needs initial_accumulator_value > 0");
}

fastnn::runtime::OptimizerHyperparameters
fastnn::runtime::optimizerHyperparameters(const fnn_optimizer_desc &D) {
  return {D.kind,
          D.grad_dtype,
          D.num_elements,
          D.use_nesterov != 0,
          static_cast<float>(D.momentum),
          static_cast<float>(D.rho),
          static_cast<float>(D.beta1),
          static_cast<float>(D.beta2),
          static_cast<float>(D.epsilon),
          static_cast<float>(D.decay),
          static_cast<float>(D.learning_rate_power),
          static_cast<float>(D.l1),
          static_cast<float>(D.l2),
          static_cast<float>(D.weight_decay_rate)};
}
