//===- BestEffortOutput.cpp - Outputs a run can do without ----------------===//

#include "fastnn/trainer/BestEffortOutput.h"

namespace fastnn::trainer {

std::string BestEffortOutput::note(const Status &Write) {
  if (Write.ok()) {
    if (!Failing)
      return "";
    Failing = false;
    return "train.bin: " + What + " are written again (" +
           std::to_string(Dropped) + " dropped)";
  }
  ++Dropped;
  if (Failing)
    return "";
  Failing = true;
  return "train.bin: warning: " + Write.message() + "; " + What +
         " are dropped until one can be written; training goes on";
}

} // namespace fastnn::trainer
