//===- Input.cpp - fnn_input_set_source and fnn_input_next ----------------===//
//
// The registered source is process-wide state the ABI requires: compiled
// code calls fnn_input_next with no handle to pass it through. The source
// writes the step's inputs into the arena itself (in place on CPU, through
// fnn_copy_to_device where the device's memory is not the host's), so this
// registry is the same for every backend.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/abi.h"

#include <cstdio>
#include <cstdlib>

namespace {
fnn_input_source Source = nullptr;
void *SourceContext = nullptr;
} // namespace

extern "C" void fnn_input_set_source(fnn_input_source S, void *Context) {
  Source = S;
  SourceContext = Context;
}

extern "C" void fnn_input_next(void *Images, void *Labels) {
  if (!Source) {
    // A driver's mistake: the step cannot go on without its batch.
    std::fprintf(stderr, "fnn_input_next: error: no input source registered "
                         "(a driver must call fnn_input_set_source before "
                         "it runs a step compiled with iterations_per_loop "
                         "> 1)\n");
    std::exit(1);
  }
  Source(SourceContext, Images, Labels);
}
