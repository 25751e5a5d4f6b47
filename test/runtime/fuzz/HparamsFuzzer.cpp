//===- HparamsFuzzer.cpp - libFuzzer target for hyperparameter files ------===//
//
// Parses the input as a hyperparameter file (Hparams::parseText, the text
// path of parseFile) and, when it parses, checks it and writes it back out
// as configText does for a run's log.
//
//===----------------------------------------------------------------------===//

#include "fastnn/trainer/Hparams.h"

#include <string>

using namespace fastnn::trainer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  Hparams H;
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  if (!H.parseText(Text, "fuzz.txt").ok())
    return 0;
  (void)H.validate();
  (void)H.configText();
  return 0;
}
