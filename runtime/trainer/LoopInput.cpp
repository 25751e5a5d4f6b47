//===- LoopInput.cpp - Batches for a step that loops itself ---------------===//

#include "LoopInput.h"
#include "TrainingRun.h"

#include "fastnn/runtime/BackendHooks.h"
#include "fastnn/runtime/abi.h"

namespace fastnn::trainer {

LoopInput::LoopInput(DataSource &Source, InputStaging &Input)
    : Source(Source), Input(Input) {
  fnn_input_set_source(&LoopInput::next, this);
  // A device the host cannot address stages the batch (BackendHooks.h):
  // fnn_input_next's pointers carry no size.
  runtime::setInputBytes(Input.imagesBytes(), Input.labelsBytes());
}

LoopInput::~LoopInput() {
  fnn_input_set_source(nullptr, nullptr);
  runtime::setInputBytes(0, 0);
}

double LoopInput::takeWaitSeconds() {
  double Seconds = WaitSeconds;
  WaitSeconds = 0;
  return Seconds;
}

void LoopInput::next(void *Context, void *Images, void *Labels) {
  // Images and Labels are host memory the runtime moves to the step's inputs
  // (on the CPU, those inputs in the arena themselves).
  auto &Self = *static_cast<LoopInput *>(Context);
  int64_t Start = fnn_trace_now_ns();
  int64_t Size = 0;
  Status S = Self.Source.next(Self.Input.images(Images),
                              Self.Input.labels(Labels), Size);
  Self.WaitSeconds += static_cast<double>(fnn_trace_now_ns() - Start) * 1e-9;
  if (!S.ok())
    fail(S.message());
  // The run is sized to whole loops of the input's known length: an input
  // that ends earlier cannot be stopped in the middle of a compiled loop.
  if (Size == 0)
    fail("the input ended in the middle of a loop of iterations_per_loop "
         "steps; give num_sample_per_epoch or stop_at_step so that the run "
         "ends at a loop boundary");
  Self.Input.store(Size, Images, Labels);
}

} // namespace fastnn::trainer
