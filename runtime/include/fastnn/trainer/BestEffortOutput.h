//===- BestEffortOutput.h - Outputs a run can do without --------*- C++ -*-===//
//
// A checkpoint that cannot be written stops the run: its steps would be
// lost (CheckpointHook). TensorBoard events and timelines only observe the
// run: when one cannot be written (a full disk, an I/O error) train.bin
// prints one warning and goes on, tries each later one as usual, and prints
// a line when one is written again. BestEffortOutput keeps that account
// for one kind of output.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_BESTEFFORTOUTPUT_H
#define FASTNN_TRAINER_BESTEFFORTOUTPUT_H

#include "fastnn/data/Status.h"

#include <cstdint>
#include <string>

namespace fastnn::trainer {

using data::Status;

class BestEffortOutput {
public:
  /// What names the output in the lines, in the plural ("timelines").
  explicit BestEffortOutput(std::string What) : What(std::move(What)) {}

  /// Takes the result of one write and returns the line to print, "" for
  /// none: a warning at a failure after a success (or at the first), a
  /// line at a success after failures.
  std::string note(const Status &Write);

private:
  const std::string What;
  bool Failing = false;
  /// The failed writes of the current stretch.
  int64_t Failed = 0;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_BESTEFFORTOUTPUT_H
