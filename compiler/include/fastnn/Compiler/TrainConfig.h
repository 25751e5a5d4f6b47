//===- TrainConfig.h - hyperparameters -> training compilation --*- C++ -*-===//

#ifndef FASTNN_COMPILER_TRAINCONFIG_H
#define FASTNN_COMPILER_TRAINCONFIG_H

#include "fastnn/Transforms/Passes.h"
#include "fastnn/trainer/Hparams.h"

#include "mlir/IR/BuiltinOps.h"

namespace fastnn {

/// The options of fastnn-build-train-step that the compile-time
/// hyperparameters (optimizer and its settings, weight_decay,
/// max_gradient_norm, seed) give.
FastNNBuildTrainStepOptions trainStepOptions(const trainer::Hparams &hparams);

/// Fails with a diagnostic when num_classes was given and differs from the
/// classes of the model's logits.
mlir::LogicalResult checkNumClasses(mlir::ModuleOp module,
                                    const trainer::Hparams &hparams);

} // namespace fastnn

#endif // FASTNN_COMPILER_TRAINCONFIG_H
