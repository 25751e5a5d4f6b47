//===- BackendHooks.h - where a backend changes shared behaviour -*- C++
//-*-===//
//
// fnn_input_next and the tracing spans are common code (they hold the
// process-wide state the ABI requires), but a device whose memory the host
// cannot address, or whose work runs asynchronously, must take part in them.
// A backend registers these hooks when it creates its device and clears them
// when it destroys it; with none registered (the CPU) the shared code
// behaves as it always did.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_BACKENDHOOKS_H
#define FASTNN_RUNTIME_BACKENDHOOKS_H

#include "fastnn/runtime/abi.h"

#include <cstddef>

namespace fastnn::runtime {

/// Delivers the next batch from Source into the device buffers Images and
/// Labels (e.g. through a host staging buffer and a copy).
using InputDelivery = void (*)(void *Context, fnn_input_source Source,
                               void *SourceContext, void *Images, void *Labels);
void setInputDelivery(InputDelivery Deliver, void *Context);
/// Clears the delivery if Context registered it.
void clearInputDelivery(void *Context);

/// The byte sizes of the step's "images" and "labels" inputs, for a
/// delivery that stages them (fnn_input_next's pointers carry no size). The
/// driver sets them beside fnn_input_set_source; 0 until then.
void setInputBytes(size_t ImagesBytes, size_t LabelsBytes);
size_t inputImagesBytes();
size_t inputLabelsBytes();

/// Called by fnn_trace_begin and fnn_trace_end while recording, just before
/// they read the clock: a backend whose work is asynchronous waits for its
/// device there, so that a span measures the device's time for its op.
using TraceFence = void (*)(void *Context);
void setTraceFence(TraceFence Fence, void *Context);
void clearTraceFence(void *Context);

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_BACKENDHOOKS_H
