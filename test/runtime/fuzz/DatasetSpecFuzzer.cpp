//===- DatasetSpecFuzzer.cpp - libFuzzer target for dataset specs ---------===//
//
// Parses the input as a dataset spec file (parseDatasetSpec).
//
//===----------------------------------------------------------------------===//

#include "fastnn/data/DatasetSpec.h"

#include <string_view>

using namespace fastnn::data;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  DatasetSpec Spec;
  (void)parseDatasetSpec(
      std::string_view(reinterpret_cast<const char *>(Data), Size), "fuzz.spec",
      Spec);
  return 0;
}
