//===- TrainingHooks.h - The hooks of train.bin's loop ----------*- C++ -*-===//
//
// Each hook is one of the things train.bin does between steps, named after
// its TensorFlow counterpart where there is one: the loss-scale report, the
// non-finite loss check (NanTensorHook), the step lines and TensorBoard
// scalars (LoggingTensorHook), checkpoints (CheckpointSaverHook), timelines
// and device placement (ProfilerHook), and the summary at the end. The
// evaluation hook, which needs the compiled evaluation step, is in
// runtime/trainer/Evaluate.h. Hooks that print share the ProgressLine, so
// that a progress bar on a terminal is erased before a line follows it.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_TRAININGHOOKS_H
#define FASTNN_TRAINER_TRAININGHOOKS_H

#include "fastnn/runtime/ModelDevice.h"
#include "fastnn/runtime/ModelTables.h"
#include "fastnn/trainer/BestEffortOutput.h"
#include "fastnn/trainer/EventWriter.h"
#include "fastnn/trainer/Hparams.h"
#include "fastnn/trainer/StepHooks.h"

#include <memory>
#include <string>
#include <vector>

namespace fastnn::trainer {

/// "1h02m", "3m07s" or "42s".
std::string durationText(double Seconds);

/// stdout's progress bar, redrawn in place on a terminal (never elsewhere:
/// logs and pipes get lines only).
class ProgressLine {
public:
  explicit ProgressLine(bool Terminal) : Terminal(Terminal) {}
  bool terminal() const { return Terminal; }
  /// "[=====>    ] 312/937 eta 1m05s", at most five times a second.
  void draw(int64_t Step, int64_t Total, double Eta);
  /// Erases a drawn bar, so that a line can be printed.
  void erase();
  /// Prints Line ("": nothing) on stdout below the bar.
  void print(const std::string &Line);

private:
  bool Terminal;
  bool Shown = false;
  int64_t LastDrawn = 0;
};

/// A line for every change of the dynamic loss scale: halved with the
/// update skipped after an overflow, doubled after a run of finite steps.
class LossScaleHook : public StepHook {
public:
  explicit LossScaleHook(ProgressLine &Progress) : Progress(Progress) {}
  Status afterStep(const StepResult &Result) override;
  int64_t skippedUpdates() const { return SkippedUpdates; }
  float lossScale() const { return LossScale; }

private:
  ProgressLine &Progress;
  float LossScale = 0;
  int64_t SkippedUpdates = 0;
};

/// Stops the run at a loss that is NaN or infinite (NanTensorHook).
class NanLossHook : public StepHook {
public:
  Status afterStep(const StepResult &Result) override;
};

/// A line every LogEvery steps and at the last step (TrainSteps), with its
/// TensorBoard scalars in Events when given (LoggingTensorHook), which
/// begin with a SessionLog START at FirstStep; the progress bar between
/// lines. Events are a BestEffortOutput.
class LoggingHook : public StepHook {
public:
  LoggingHook(int64_t LogEvery, int64_t TrainSteps, int64_t BatchSize,
              int64_t FirstStep, std::unique_ptr<EventWriter> Events,
              ProgressLine &Progress);
  Status afterStep(const StepResult &Result) override;
  Status end(int64_t LastStep) override;

private:
  const int64_t LogEvery, TrainSteps, BatchSize;
  std::unique_ptr<EventWriter> Events;
  BestEffortOutput EventsOutput{"TensorBoard events"};
  ProgressLine &Progress;
  const int64_t Start;
  int64_t Steps = 0, WindowStart, WindowSteps = 0;
  /// Time spent waiting for (and copying) batches in the window: the share
  /// of the step time that a faster input pipeline would win back.
  double WindowWait = 0;
};

/// A hook that acts every Every steps (0: never) and after the last step
/// unless the latest act (or what the run restored) was at that step:
/// checkpoints and evaluations.
class PeriodicHook : public StepHook {
public:
  Status afterStep(const StepResult &Result) final;
  Status end(int64_t LastStep) override;

protected:
  explicit PeriodicHook(int64_t Every) : Every(Every) {}
  /// The step of the latest act, -1 for none.
  virtual int64_t latestStep() const = 0;
  virtual Status act(int64_t Step) = 0;
  /// The steps seen so far.
  int64_t steps() const { return Steps; }

private:
  const int64_t Every;
  int64_t Steps = 0;
};

/// The run's latest checkpoint: the one it resumed, then the ones it saved.
struct CheckpointState {
  std::string Path;
  int64_t Step = -1;
};

/// Saves the model state every save_checkpoints_steps steps and after the
/// last one into Dir (CheckpointSaverHook), keeping keep_checkpoint_max. A
/// checkpoint that cannot be written stops the run (an ioError that says
/// which checkpoint is intact).
class CheckpointHook : public PeriodicHook {
public:
  /// StartPosition: the batches consumed before the run's first step.
  CheckpointHook(const Hparams &H, std::string Dir, int64_t StartPosition,
                 const std::vector<runtime::TensorRecord> &State,
                 const runtime::ArenaAccess &Arena, CheckpointState &Latest,
                 ProgressLine &Progress);

private:
  int64_t latestStep() const override { return Latest.Step; }
  Status act(int64_t Step) override;

  const Hparams &H;
  const std::string Dir;
  const int64_t StartPosition;
  const std::vector<runtime::TensorRecord> &State;
  const runtime::ArenaAccess Arena;
  CheckpointState &Latest;
  ProgressLine &Progress;
};

/// Traces calls of the compiled step (ProfilerHook): a timeline of the
/// calls that hold a multiple of ProfileEvery (0: none) into Dir, and with
/// PrintPlacement the ops of the first call and the device they ran on.
/// Timelines are a BestEffortOutput.
class TraceHook : public StepHook {
public:
  TraceHook(std::string Dir, int64_t ProfileEvery, int64_t StepsPerCall,
            bool PrintPlacement, std::string DeviceName,
            ProgressLine &Progress);
  Status beforeCall(int64_t FirstStep) override;
  Status afterCall(const CallSpan &Call) override;

private:
  const std::string Dir;
  const int64_t ProfileEvery, StepsPerCall;
  bool PrintPlacement;
  const std::string DeviceName;
  ProgressLine &Progress;
  BestEffortOutput Timelines{"timelines"};
  bool Profile = false, Tracing = false;
};

/// The latest evaluation, for the summary (Step -1: none).
struct EvalSummary {
  int64_t Step = -1;
  double Top1 = 0, Top5 = 0, Loss = 0;
};

/// Counts the run's steps and prints the summary at the end: throughput,
/// last and mean loss, data wait, and what LossScale (if the model has dynamic
/// loss scaling), Eval and Latest record.
class SummaryHook : public StepHook {
public:
  SummaryHook(int64_t BatchSize, int64_t StartStep,
              const LossScaleHook *LossScale, const EvalSummary &Eval,
              const CheckpointState &Latest, ProgressLine &Progress);
  Status afterStep(const StepResult &Result) override;
  Status end(int64_t LastStep) override;

private:
  const int64_t BatchSize, StartStep;
  const LossScaleHook *LossScale;
  const EvalSummary &Eval;
  const CheckpointState &Latest;
  ProgressLine &Progress;
  const int64_t Start;
  int64_t LastTime, Steps = 0;
  double LossSum = 0, WaitSeconds = 0;
  StepResult Last;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_TRAININGHOOKS_H
