//===- Evaluate.h - The evaluation pass of train.bin ------------*- C++ -*-===//
//
// train.bin --eval, and eval_every_n_iters during training, run the
// evaluation step that fastnnc compiles beside the training step
// (fnn_eval_* in fastnn/runtime/model.h): inference semantics, outputs per
// sample, in its own arena. Its parameters and statistics are copied in by
// name from the training arena or a checkpoint; one pass over the
// evaluation split (eval_files or dataset_dir's test split, evaluation
// preprocessing, file order, a last partial batch padded and only its
// samples counted) gives top-1 and top-5 accuracy and the mean
// cross-entropy.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_EVALUATE_H
#define FASTNN_TRAINER_EVALUATE_H

#include "fastnn/runtime/abi.h"
#include "fastnn/trainer/BestEffortOutput.h"
#include "fastnn/trainer/Checkpoint.h"
#include "fastnn/trainer/EventWriter.h"
#include "fastnn/trainer/Hparams.h"
#include "fastnn/trainer/TrainingHooks.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastnn::trainer {

struct EvalResult {
  int64_t Samples = 0;
  double Top1 = 0, Top5 = 0, Loss = 0;
  double Seconds = 0;
};

/// The machine-readable result line:
/// "eval: step=S samples=N top1=... top5=... loss=...".
std::string evalLine(int64_t Step, const EvalResult &Result);

class Evaluator {
public:
  /// Reads the evaluation model's tables, allocates its arena on Device and
  /// creates its kernels.
  static Status create(fnn_device *Device, std::unique_ptr<Evaluator> &Out);
  ~Evaluator();

  /// Copies the evaluation model's parameters and statistics from From
  /// (named FromName in errors), checking names, dtypes and shapes.
  Status load(const std::vector<StateTensor> &From,
              const std::string &FromName);
  /// Gives every worker of the job the chief's loaded state and Step.
  void shareChiefState(int64_t &Step);
  /// One pass over the evaluation split; in a job of several, every worker
  /// calls it and evaluates its share (the files i with i % K == rank, or
  /// the mock pool's batches so), and all get the job's result, which
  /// equals one process's exactly. Description (a line for the log) is
  /// filled on the first call.
  Status run(const Hparams &H, EvalResult &Out, std::string &Description);

private:
  Evaluator() = default;

  fnn_device *Device = nullptr;
  unsigned char *Arena = nullptr;
  bool Initialised = false;
  std::vector<runtime::TensorRecord> Io, State;
};

/// Evaluates the training state every eval_every_n_iters steps and after
/// the last one, on every worker, and writes the results (the chief) as
/// TensorBoard scalars under Dir/eval (none without Dir), a BestEffortOutput.
class EvalHook : public PeriodicHook {
public:
  EvalHook(const Hparams &H, std::string Dir,
           const std::vector<runtime::TensorRecord> &State,
           const runtime::ArenaAccess &Arena, EvalSummary &Latest,
           ProgressLine &Progress);
  Status end(int64_t LastStep) override;
  /// No evaluation: a stopping run has a grace period's seconds left.
  Status stop(int64_t LastStep) override;

private:
  int64_t latestStep() const override { return Latest.Step; }
  Status act(int64_t Step) override;

  const Hparams &H;
  const std::string Dir;
  const std::vector<runtime::TensorRecord> &State;
  const runtime::ArenaAccess Arena;
  EvalSummary &Latest;
  ProgressLine &Progress;
  std::unique_ptr<Evaluator> Eval;
  std::unique_ptr<EventWriter> Events;
  BestEffortOutput EventsOutput{"TensorBoard evaluation events"};
};

/// The TensorBoard scalars of an evaluation (written under train_dir/eval,
/// the directory TensorFlow's estimators use).
std::vector<std::pair<std::string, float>> evalScalars(const EvalResult &R);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_EVALUATE_H
