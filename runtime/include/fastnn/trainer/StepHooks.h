//===- StepHooks.h - The training loop: the step and its hooks --*- C++ -*-===//
//
// train.bin's loop is a call of the compiled step (one training step, or
// iterations_per_loop of them when the loop is sunk into the step) followed
// by the hooks, TensorFlow's SessionRunHook idea: logging, checkpoints,
// evaluation, timelines and the like each watch the steps through this one
// interface and know nothing of each other or of the device. runSteps is the
// whole loop; TrainingHooks.h has the hooks.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_STEPHOOKS_H
#define FASTNN_TRAINER_STEPHOOKS_H

#include "fastnn/data/Status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace fastnn::trainer {

using data::Status;

/// What one training step gave.
struct StepResult {
  int64_t Step = 0; ///< 1-based
  float Rate = 0, Loss = 0, Top1 = 0, Top5 = 0;
  /// Dynamic loss scaling's outputs (the scale after the step, and 1 when
  /// the update was skipped), when the model has them.
  bool HasLossScale = false;
  float LossScale = 0, Skipped = 0;
  /// Seconds spent waiting for input since the previous step.
  double WaitSeconds = 0;
  /// Damaged input records skipped by the end of the step's call
  /// (skip_corrupt_records); -1 when the input skips none.
  int64_t SkippedRecords = -1;
};

/// When one call of the compiled step ran (fnn_trace_now_ns's clock): from
/// Start, waiting for its batch until WaitEnd, finished at End.
struct CallSpan {
  int64_t FirstStep = 0;
  int64_t Start = 0, WaitEnd = 0, End = 0;
};

/// One observer of the loop. The loop stops at the first error a hook
/// returns.
class StepHook {
public:
  virtual ~StepHook() = default;
  /// Before the call of the compiled step that starts with FirstStep.
  virtual Status beforeCall(int64_t /*FirstStep*/) { return Status::success(); }
  /// After that call finished on the device.
  virtual Status afterCall(const CallSpan & /*Call*/) {
    return Status::success();
  }
  /// After each step of the call, in step order.
  virtual Status afterStep(const StepResult & /*Result*/) {
    return Status::success();
  }
  /// After the loop; LastStep is the last step run (the start step when none
  /// ran).
  virtual Status end(int64_t /*LastStep*/) { return Status::success(); }
  /// After the loop stopped early on a signal (runSteps' Stop): what end()
  /// does, unless the hook would delay the stop with work that does not
  /// need to outlive it (an evaluation).
  virtual Status stop(int64_t LastStep) { return end(LastStep); }
};

/// Hooks called in the order they were added.
class StepHooks {
public:
  void add(std::unique_ptr<StepHook> Hook) { Hooks.push_back(std::move(Hook)); }
  Status beforeCall(int64_t FirstStep);
  Status afterCall(const CallSpan &Call);
  Status afterStep(const StepResult &Result);
  Status end(int64_t LastStep);
  Status stop(int64_t LastStep);

private:
  std::vector<std::unique_ptr<StepHook>> Hooks;
};

/// One call of the compiled step.
class StepCall {
public:
  virtual ~StepCall() = default;
  /// Runs the call's steps from First on, one result each into Results (no
  /// result: the input ended before step First, nothing ran), and times it.
  virtual Status run(int64_t First, CallSpan &Span,
                     std::vector<StepResult> &Results) = 0;
};

/// Asked after each call that leaves steps to run: the signal that asks the
/// loop to stop there, 0 to go on. In a job of several workers every worker
/// must get the same answer (they run the same steps).
using StopQuery = std::function<int()>;

/// How the loop ended.
struct LoopEnd {
  /// The last step run (First - 1 when none ran).
  int64_t LastStep = 0;
  /// The input ended before Last.
  bool InputEnded = false;
  /// The signal Stop answered, which ended the loop after LastStep; 0 for
  /// none.
  int StopSignal = 0;
};

/// The loop: steps First to Last through Call, each call with its hooks,
/// until Stop asks to stop. end() or, after a stop, stop() is the caller's
/// to call.
Status runSteps(StepCall &Call, StepHooks &Hooks, int64_t First, int64_t Last,
                const StopQuery &Stop, LoopEnd &End);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_STEPHOOKS_H
