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

Status runSteps(StepCall &Call, StepHooks &Hooks, int64_t First, int64_t Last,
                bool &InputEnded, int64_t &LastStep) {
  InputEnded = false;
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
      InputEnded = true;
      return Status::success();
    }
    if (Status S = Hooks.afterCall(Span); !S.ok())
      return S;
    for (const StepResult &Result : Results) {
      if (Status S = Hooks.afterStep(Result); !S.ok())
        return S;
      LastStep = Result.Step;
    }
  }
  return Status::success();
}

} // namespace fastnn::trainer
