//===- TrainConfig.h - hyperparameters -> training compilation --*- C++ -*-===//

#ifndef FASTNN_COMPILER_TRAINCONFIG_H
#define FASTNN_COMPILER_TRAINCONFIG_H

#include "fastnn/Transforms/Passes.h"
#include "fastnn/trainer/Hparams.h"

#include "mlir/IR/BuiltinOps.h"

namespace fastnn {

/// The options of fastnn-build-train-step that the compile-time
/// hyperparameters (optimizer and its settings, weight_decay, seed) give.
FastNNBuildTrainStepOptions trainStepOptions(const trainer::Hparams &hparams);

/// fastnn-clip-gradients' norm: max_gradient_norm.
FastNNClipGradientsOptions
clipGradientsOptions(const trainer::Hparams &hparams);

/// fastnn-fuse-allreduce's bucket size: allreduce_bucket_bytes.
FastNNFuseAllReduceOptions
fuseAllReduceOptions(const trainer::Hparams &hparams);

/// Settles precision, use_fp16, dynamic_loss_scale and loss_scale into
/// consistent values (what the compiled configuration then records):
/// precision if given, else fp16 when use_fp16=True is given, else fp32;
/// use_fp16 is True for fp16 and bf16; dynamic_loss_scale if given, else
/// True for fp16 when loss_scale is not given, which then starts at 2^15.
/// A given use_fp16 that contradicts a given precision is an error.
trainer::Status resolvePrecision(trainer::Hparams &hparams);

/// fastnn-mixed-precision's type: the resolved precision.
FastNNMixedPrecisionOptions
mixedPrecisionOptions(const trainer::Hparams &hparams);

/// fastnn-sink-loop's iterations: iterations_per_loop.
FastNNSinkLoopOptions sinkLoopOptions(const trainer::Hparams &hparams);

/// fastnn-layout's target (the CPU backend) and the resolved precision.
FastNNLayoutOptions layoutOptions(const trainer::Hparams &hparams);

/// Fails with a diagnostic when num_classes was given and differs from the
/// classes of the model's logits.
mlir::LogicalResult checkNumClasses(mlir::ModuleOp module,
                                    const trainer::Hparams &hparams);

} // namespace fastnn

#endif // FASTNN_COMPILER_TRAINCONFIG_H
