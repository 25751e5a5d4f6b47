//===- StepHooks.cpp - The training loop: the step and its hooks ----------===//

#include "fastnn/trainer/StepHooks.h"

namespace fastnn::trainer {

Status StepHooks::beforeCall(int64_t FirstStep) {
  for (const std::unique_ptr<StepHook> &Hook : Hooks)
    if (Status S = Hook->beforeCall(FirstStep); !S.ok())
      return S;
  return Status::success();
}

Status StepHooks::afterCall(const CallSpan &Call) {
  for (const std::unique_ptr<StepHook> &Hook : Hooks)
    if (Status S = Hook->afterCall(Call); !S.ok())
      return S;
  return Status::success();
}

Status StepHooks::afterStep(const StepResult &Result) {
  for (const std::unique_ptr<StepHook> &Hook : Hooks)
    if (Status S = Hook->afterStep(Result); !S.ok())
      return S;
  return Status::success();
}

Status StepHooks::end(int64_t LastStep) {
  for (const std::unique_ptr<StepHook> &Hook : Hooks)
    if (Status S = Hook->end(LastStep); !S.ok())
      return S;
  return Status::success();
}

Status StepHooks::stop(int64_t LastStep) {
  for (const std::unique_ptr<StepHook> &Hook : Hooks)
    if (Status S = Hook->stop(LastStep); !S.ok())
      return S;
  return Status::success();
}

Status runSteps(StepCall &Call, StepHooks &Hooks, int64_t First, int64_t Last,
                const StopQuery &Stop, LoopEnd &End) {
  End = LoopEnd();
  int64_t &LastStep = End.LastStep;
  LastStep = First - 1;
  std::vector<StepResult> Results;
  while (LastStep < Last) {
    if (Status S = Hooks.beforeCall(LastStep + 1); !S.ok())
      return S;
    CallSpan Span;
    Results.clear();
    if (Status S = Call.run(LastStep + 1, Span, Results); !S.ok())
      return S;
    if (Results.empty()) {
      End.InputEnded = true;
      return Status::success();
    }
    if (Status S = Hooks.afterCall(Span); !S.ok())
      return S;
    for (const StepResult &Result : Results) {
      if (Status S = Hooks.afterStep(Result); !S.ok())
        return S;
      LastStep = Result.Step;
    }
    if (LastStep < Last) {
      End.StopSignal = Stop();
      if (End.StopSignal != 0)
        return Status::success();
    }
  }
  return Status::success();
}

} // namespace fastnn::trainer
