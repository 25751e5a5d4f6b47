//===- Input.cpp - fnn_input_set_source and fnn_input_next ----------------===//
//
// The registered source is process-wide state the ABI requires: compiled
// code calls fnn_input_next with no handle to pass it through. On the CPU
// the source writes the step's inputs into the arena itself; a backend whose
// device memory the host cannot address registers an InputDelivery
// (BackendHooks.h) that lets the source write host memory and copies it.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/BackendHooks.h"

#include <cstdio>
#include <cstdlib>

namespace {
fnn_input_source Source = nullptr;
void *SourceContext = nullptr;
fastnn::runtime::InputDelivery Delivery = nullptr;
void *DeliveryContext = nullptr;
size_t ImagesBytes = 0, LabelsBytes = 0;
} // namespace

void fastnn::runtime::setInputDelivery(InputDelivery Deliver, void *Context) {
  Delivery = Deliver;
  DeliveryContext = Context;
}

void fastnn::runtime::clearInputDelivery(void *Context) {
  if (DeliveryContext == Context) {
    Delivery = nullptr;
    DeliveryContext = nullptr;
  }
}

void fastnn::runtime::setInputBytes(size_t Images, size_t Labels) {
  ImagesBytes = Images;
  LabelsBytes = Labels;
}

size_t fastnn::runtime::inputImagesBytes() { return ImagesBytes; }
size_t fastnn::runtime::inputLabelsBytes() { return LabelsBytes; }

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
  if (Delivery)
    Delivery(DeliveryContext, Source, SourceContext, Images, Labels);
  else
    Source(SourceContext, Images, Labels);
}
