//===- Trace.cpp - spans of the compiled step -----------------------------===//
//
// The generated step runs on one thread (kernels parallelise inside, or run
// on the device's stream), so the recorder is a plain vector owned by that
// thread's calls; the flag is atomic only so that a trainer thread may read
// it while a step is not running. A span is host time; a backend whose
// device runs asynchronously registers a TraceFence (BackendHooks.h) that
// waits for the device before each timestamp while recording is on, so the
// span holds the op's device time (and recording serialises the step).
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/BackendHooks.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

namespace {

std::atomic<bool> Enabled{false};
std::vector<fnn_trace_span> Spans;
size_t Collected = 0;
fastnn::runtime::TraceFence Fence = nullptr;
void *FenceContext = nullptr;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void fence() {
  if (Fence)
    Fence(FenceContext);
}

} // namespace

void fastnn::runtime::setTraceFence(TraceFence F, void *Context) {
  Fence = F;
  FenceContext = Context;
}

void fastnn::runtime::clearTraceFence(void *Context) {
  if (FenceContext == Context) {
    Fence = nullptr;
    FenceContext = nullptr;
  }
}

extern "C" void fnn_trace_begin(const char *Name) {
  if (!Enabled.load(std::memory_order_relaxed))
    return;
  fence();
  Spans.push_back({Name, nowNs(), 0});
}

extern "C" void fnn_trace_end(void) {
  if (!Enabled.load(std::memory_order_relaxed) || Spans.empty())
    return;
  fence();
  Spans.back().end_ns = nowNs();
}

extern "C" void fnn_trace_enable(int64_t On) {
  if (On) {
    Spans.clear();
    Collected = 0;
  }
  Enabled.store(On != 0, std::memory_order_relaxed);
}

extern "C" int64_t fnn_trace_now_ns(void) { return nowNs(); }

extern "C" int64_t fnn_trace_collect(fnn_trace_span *Out, int64_t Capacity) {
  size_t Count = std::min(Spans.size() - Collected,
                          static_cast<size_t>(std::max<int64_t>(Capacity, 0)));
  std::copy_n(Spans.begin() + static_cast<std::ptrdiff_t>(Collected), Count,
              Out);
  Collected += Count;
  if (Collected == Spans.size()) {
    Spans.clear();
    Collected = 0;
  }
  return static_cast<int64_t>(Count);
}
