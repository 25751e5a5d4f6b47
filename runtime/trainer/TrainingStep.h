//===- TrainingStep.h - One call of the compiled training step --*- C++ -*-===//
//
// fnn_model_run as the loop calls it: the learning rate of each of its steps
// and the first step's number in, the batch in (read here for a single step;
// fetched by the step itself through LoopInput when iterations_per_loop > 1),
// the loss, accuracies and loss scale of each step out. Everything goes
// through the arena's ArenaAccess, so the same code drives every device.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_TRAININGSTEP_H
#define FASTNN_TRAINER_TRAININGSTEP_H

#include "LoopInput.h"
#include "TrainingRun.h"

#include "fastnn/trainer/DataSource.h"
#include "fastnn/trainer/InputStaging.h"
#include "fastnn/trainer/LearningRate.h"
#include "fastnn/trainer/StepHooks.h"

#include <memory>

namespace fastnn::trainer {

/// Training steps one call runs: iterations_per_loop, the length of the
/// compiled step's learning-rate input (one rate per step).
int64_t stepsPerCall(const ModelInterface &M);

class TrainingStep : public StepCall {
public:
  TrainingStep(const ModelInterface &M, const runtime::ArenaAccess &Arena,
               DataSource &Source, const LearningRateSchedule &Schedule);
  Status run(int64_t First, CallSpan &Span,
             std::vector<StepResult> &Results) override;

private:
  const ModelInterface &M;
  const runtime::ArenaAccess Arena;
  DataSource &Source;
  const LearningRateSchedule &Schedule;
  const int64_t Loop;
  InputStaging Input;
  /// The input source of a sunk loop (Loop > 1).
  std::unique_ptr<LoopInput> Sunk;
  std::vector<float> Rates;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_TRAININGSTEP_H
