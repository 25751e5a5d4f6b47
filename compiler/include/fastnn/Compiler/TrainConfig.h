//===- TrainConfig.h - hyperparameters -> training compilation --*- C++ -*-===//

#ifndef FASTNN_COMPILER_TRAINCONFIG_H
#define FASTNN_COMPILER_TRAINCONFIG_H

#include "fastnn/Compiler/Pipelines.h"
#include "fastnn/trainer/Hparams.h"

#include "mlir/IR/BuiltinOps.h"

namespace fastnn {

/// Sets the pipeline options the compile-time hyperparameters give (the
/// optimizer and its settings, weight_decay, seed, loss scaling, clipping,
/// iterations_per_loop, allreduce buckets, the resolved precision).
trainer::Status setPipelineOptions(const trainer::Hparams &hparams,
                                   PipelineOptions &options);

/// Settles precision, use_fp16, dynamic_loss_scale and loss_scale into
/// consistent values (what the compiled configuration then records):
/// precision if given, else fp16 when use_fp16=True is given, else fp32;
/// use_fp16 is True for fp16 and bf16; dynamic_loss_scale if given, else
/// True for fp16 when loss_scale is not given, which then starts at 2^15.
/// A given use_fp16 that contradicts a given precision is an error.
trainer::Status resolvePrecision(trainer::Hparams &hparams);

/// Fails with a diagnostic when num_classes was given and differs from the
/// classes of the model's logits.
mlir::LogicalResult checkNumClasses(mlir::ModuleOp module,
                                    const trainer::Hparams &hparams);

} // namespace fastnn

#endif // FASTNN_COMPILER_TRAINCONFIG_H
