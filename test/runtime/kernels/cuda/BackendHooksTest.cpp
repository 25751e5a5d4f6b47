//===- BackendHooksTest.cpp - the hooks the CUDA device registers ---------===//
//
// The CUDA device stages fnn_input_next through pinned memory and fences
// trace timestamps through hooks of the shared code (BackendHooks.h). Here
// the hooks alone, without a GPU: with one registered the shared code goes
// through it; cleared (or registered by someone else) it behaves as on the
// CPU.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/BackendHooks.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace fastnn::runtime;

namespace {

struct Calls {
  int Deliveries = 0, Sources = 0, Fences = 0;
};

void source(void *Context, void *Images, void *) {
  ++static_cast<Calls *>(Context)->Sources;
  std::memset(Images, 7, 4);
}

void deliver(void *Context, fnn_input_source Source, void *SourceContext,
             void *Images, void *Labels) {
  ++static_cast<Calls *>(Context)->Deliveries;
  Source(SourceContext, Images, Labels);
}

void fence(void *Context) { ++static_cast<Calls *>(Context)->Fences; }

TEST(BackendHooks, InputNextGoesThroughARegisteredDelivery) {
  Calls Backend, Driver;
  int Images = 0;
  int64_t Labels = 0;
  fnn_input_set_source(source, &Driver);
  setInputDelivery(deliver, &Backend);
  fnn_input_next(&Images, &Labels);
  EXPECT_EQ(Backend.Deliveries, 1);
  EXPECT_EQ(Driver.Sources, 1);
  clearInputDelivery(&Driver); // not the one that registered: stays
  fnn_input_next(&Images, &Labels);
  EXPECT_EQ(Backend.Deliveries, 2);
  clearInputDelivery(&Backend);
  fnn_input_next(&Images, &Labels);
  EXPECT_EQ(Backend.Deliveries, 2);
  EXPECT_EQ(Driver.Sources, 3);
  EXPECT_EQ(Images, 0x07070707);
  fnn_input_set_source(nullptr, nullptr);
}

TEST(BackendHooks, InputBytesAreKeptForTheBackend) {
  setInputBytes(1024, 64);
  EXPECT_EQ(inputImagesBytes(), 1024u);
  EXPECT_EQ(inputLabelsBytes(), 64u);
  setInputBytes(0, 0);
}

TEST(BackendHooks, TraceFencesOnlyWhileRecording) {
  Calls Backend;
  setTraceFence(fence, &Backend);
  fnn_trace_begin("off");
  fnn_trace_end();
  EXPECT_EQ(Backend.Fences, 0);
  fnn_trace_enable(1);
  fnn_trace_begin("on");
  fnn_trace_end();
  fnn_trace_enable(0);
  EXPECT_EQ(Backend.Fences, 2);
  clearTraceFence(&Backend);
  fnn_trace_enable(1);
  fnn_trace_begin("cleared");
  fnn_trace_end();
  fnn_trace_enable(0);
  EXPECT_EQ(Backend.Fences, 2);
}

} // namespace
