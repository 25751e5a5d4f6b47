//===- LoopInput.h - Batches for a step that loops itself -------*- C++ -*-===//
//
// A model compiled with iterations_per_loop N > 1 runs N training steps per
// fnn_model_run and fetches each step's batch itself (fnn_input_next). While
// a LoopInput lives it is the runtime's input source: it reads the data
// source through InputStaging into the buffers fnn_input_next passes, as
// train.bin does per step otherwise, and keeps the time spent waiting for
// batches.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_LOOPINPUT_H
#define FASTNN_TRAINER_LOOPINPUT_H

#include "fastnn/trainer/DataSource.h"
#include "fastnn/trainer/InputStaging.h"

namespace fastnn::trainer {

class LoopInput {
public:
  LoopInput(DataSource &Source, InputStaging &Input);
  ~LoopInput();
  LoopInput(const LoopInput &) = delete;
  LoopInput &operator=(const LoopInput &) = delete;

  /// Seconds spent waiting for batches since the last call.
  double takeWaitSeconds();

private:
  static void next(void *Context, void *Images, void *Labels);

  DataSource &Source;
  InputStaging &Input;
  double WaitSeconds = 0;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_LOOPINPUT_H
