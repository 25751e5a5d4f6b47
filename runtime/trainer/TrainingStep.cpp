//===- TrainingStep.cpp - One call of the compiled training step ----------===//

#include "TrainingStep.h"
#include "Distributed.h"

#include "fastnn/runtime/model.h"

namespace fastnn::trainer {

int64_t stepsPerCall(const ModelInterface &M) {
  return M.Rate.shape.empty() ? 1 : M.Rate.shape[0];
}

TrainingStep::TrainingStep(const ModelInterface &M,
                           const runtime::ArenaAccess &Arena,
                           DataSource &Source,
                           const LearningRateSchedule &Schedule)
    : M(M), Arena(Arena), Source(Source), Schedule(Schedule),
      Loop(stepsPerCall(M)), Input(M.Images, M.Labels, Arena),
      Rates(static_cast<size_t>(Loop)) {
  if (Loop > 1)
    Sunk = std::make_unique<LoopInput>(Source, Input);
}

Status TrainingStep::run(int64_t First, CallSpan &Span,
                         std::vector<StepResult> &Results) {
  Span.FirstStep = First;
  Span.Start = Span.WaitEnd = fnn_trace_now_ns();
  double WaitSeconds = 0;
  if (!Sunk) {
    int64_t Size = 0;
    Status S = Source.next(Input.images(), Input.labels(), Size);
    Span.WaitEnd = fnn_trace_now_ns();
    WaitSeconds = static_cast<double>(Span.WaitEnd - Span.Start) * 1e-9;
    if (!S.ok())
      return S;
    if (Size == 0) {
      endOfInput(First);
      return Status::success();
    }
    Input.store(Size);
  }
  for (int64_t I = 0; I < Loop; ++I)
    Rates[I] = static_cast<float>(Schedule.at(First + I));
  Arena.write(M.Rate.offset, Rates.data(), Rates.size() * sizeof(float));
  Arena.write(M.Step.offset, First);
  // Names the step in the line of a collective that misses its deadline.
  fnn_comm_set_step(First);
  fnn_model_run(Arena.arena());
  fnn_device_synchronize(Arena.device());
  if (Sunk)
    WaitSeconds += Sunk->takeWaitSeconds();
  Span.End = fnn_trace_now_ns();

  // The outputs hold one value per step of the call.
  const int64_t SkippedRecords = Source.skippedRecords();
  for (int64_t I = 0; I < Loop; ++I) {
    const int64_t At = I * static_cast<int64_t>(sizeof(float));
    StepResult R;
    R.Step = First + I;
    R.Rate = Rates[I];
    R.Loss = Arena.read<float>(M.Loss.offset + At);
    R.Top1 = Arena.read<float>(M.Top1.offset + At);
    R.Top5 = Arena.read<float>(M.Top5.offset + At);
    if (M.LossScale) {
      R.HasLossScale = true;
      R.LossScale = Arena.read<float>(M.LossScale->offset + At);
      R.Skipped = Arena.read<float>(M.Skipped->offset + At);
    }
    R.WaitSeconds = I == 0 ? WaitSeconds : 0;
    R.SkippedRecords = SkippedRecords;
    Results.push_back(R);
  }
  return Status::success();
}

} // namespace fastnn::trainer
