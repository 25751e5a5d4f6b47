//===- Input.cpp - fnn_input_next on CPU ----------------------------------===//
//
// The registered source is process-wide state the ABI requires: compiled
// code calls fnn_input_next with no handle to pass it through. On CPU the
// arena is host memory, so the source writes the step's inputs directly.
//
//===----------------------------------------------------------------------===//

#include "Kernel.h"

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
