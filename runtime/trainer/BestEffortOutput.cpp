//===- BestEffortOutput.cpp - Outputs a run can do without ----------------===//

#include "fastnn/trainer/BestEffortOutput.h"

namespace fastnn::trainer {

std::string BestEffortOutput::note(const Status &Write) {
  if (Write.ok()) {
    if (!Failing)
      return "";
    Failing = false;
    const int64_t Count = Failed;
    Failed = 0;
    return "train.bin: " + What + " are written again after " +
           std::to_string(Count) +
           (Count == 1 ? " failed write" : " failed writes");
  }
  ++Failed;
  if (Failing)
    return "";
  Failing = true;
  return "train.bin: warning: " + Write.message() + "; " + What +
         " are dropped until one can be written; training goes on";
}

} // namespace fastnn::trainer
