//===- Optimizer.h - what fnn_optimizer means on every backend --*- C++ -*-===//
//
// The parts of an fnn_optimizer kernel that do not depend on the device:
// the kinds' names and slot counts (the ABI's table), the create-time checks
// tf.compat.v1.train makes at construction, the hyperparameters rounded to
// float32 once (TF feeds them to its ops as float32 tensors) and the
// descriptor's text in messages.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_OPTIMIZER_H
#define FASTNN_RUNTIME_OPTIMIZER_H

#include "fastnn/runtime/abi.h"

#include <cstdint>
#include <string>

namespace fastnn::runtime {

/// "sgd", "momentum", ... ("?" for a kind the ABI does not have).
const char *optimizerKindName(int64_t Kind);
/// How many of slot0/slot1 \p Kind reads (the ABI's table).
int optimizerSlotCount(int64_t Kind);
/// "optimizer adam (kind 3), 10 elements".
std::string describeOptimizer(const fnn_optimizer_desc &D);
/// Throws a KernelError unless \p D is a float32 optimizer of a known kind
/// whose hyperparameters tf.compat.v1.train would accept.
void checkOptimizerDesc(const fnn_optimizer_desc &D);

/// A desc's hyperparameters as TF's kernels see them (float32).
struct OptimizerHyperparameters {
  int64_t Kind;
  /// The gradient's element type, FNN_F32 or FNN_BF16.
  int64_t GradType;
  int64_t NumElements;
  bool Nesterov;
  float Momentum, Rho, Beta1, Beta2, Epsilon, Decay;
  float LearningRatePower, L1, L2, WeightDecayRate;
};
OptimizerHyperparameters optimizerHyperparameters(const fnn_optimizer_desc &D);

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_OPTIMIZER_H
