//===- TrainingRun.h - The training loop of train.bin -----------*- C++ -*-===//
//
// One run: make the device and the model, restore (resume train_dir's
// latest checkpoint, or finetune from model_dir), then the steps with their
// hooks (fastnn/trainer/StepHooks.h): the loss line and TensorBoard scalars
// (LoggingTensorHook), checkpoints (CheckpointSaverHook), timelines
// (ProfilerHook), evaluation every eval_every_n_iters, and a summary at the
// end.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_TRAININGRUN_H
#define FASTNN_TRAINER_TRAININGRUN_H

#include "Evaluate.h"

#include "fastnn/runtime/ModelTables.h"
#include "fastnn/trainer/Hparams.h"

#include <string>
#include <utility>
#include <vector>

namespace fastnn::trainer {

/// Prints every line of Message as its own error line and exits with 1.
[[noreturn]] void fail(const std::string &Message);

/// train.bin's exit code when a file it must write cannot be (a checkpoint,
/// an exported model: a full disk, an I/O error): sysexits' EX_IOERR.
constexpr int ExitIoError = 74;

/// fail(S.message()), exiting with ExitIoError for a Status::ioError.
[[noreturn]] void fail(const Status &S);

/// The tensors of the compiled training step that the loop uses.
struct ModelInterface {
  std::vector<runtime::TensorRecord> State;
  runtime::TensorRecord Images, Labels, Rate, Step, Loss, Top1, Top5;
  /// Dynamic loss scaling's outputs (the scale after the step, and 1.0 when
  /// it skipped its update), or null when the model has none.
  const runtime::TensorRecord *LossScale = nullptr, *Skipped = nullptr;
};

/// Where checkpoints, TensorBoard events and timelines go: train_dir, else
/// model_dir with task_type=pretrain; "" when neither is set. A file:// URI
/// names a local directory.
std::string outputDirectory(const Hparams &H);

/// Trains as the hyperparameters say; returns the exit code.
int train(const Hparams &H, const ModelInterface &Model);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_TRAININGRUN_H
