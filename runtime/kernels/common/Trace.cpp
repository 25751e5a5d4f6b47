//===- Trace.cpp - spans of the compiled step -----------------------------===//
//
// The generated step runs on one thread (kernels parallelise inside, or run
// on the device's stream), so the recorder is a plain vector owned by that
// thread's calls; the flag is atomic only so that a trainer thread may read
// it while a step is not running. A span is host time: on a device that
// runs asynchronously it measures the enqueueing unless the step
// synchronises inside it.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

namespace {

std::atomic<bool> Enabled{false};
std::vector<fnn_trace_span> Spans;
size_t Collected = 0;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace

extern "C" void fnn_trace_begin(const char *Name) {
  if (!Enabled.load(std::memory_order_relaxed))
    return;
  Spans.push_back({Name, nowNs(), 0});
}

extern "C" void fnn_trace_end(void) {
  if (!Enabled.load(std::memory_order_relaxed) || Spans.empty())
    return;
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
