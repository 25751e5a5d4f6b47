//===- Timeline.h - Chrome-trace timelines of training steps ----*- C++ -*-===//
//
// profile_every_n_iters writes one timeline per profiled step: the compiled
// step's kernel spans (fnn_trace_collect), the trainer's wait for the batch
// and the step as a whole, as a JSON file in the Trace Event Format that
// chrome://tracing and Perfetto (ui.perfetto.dev) open.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_TIMELINE_H
#define FASTNN_TRAINER_TIMELINE_H

#include "fastnn/data/Status.h"
#include "fastnn/runtime/abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::trainer {

using data::Status;

struct TimelineSpan {
  std::string Name;
  /// "kernel", "input" or "step": the trace event's category.
  std::string Category;
  /// Index into the timeline's thread names (a row in the viewer).
  int Thread = 0;
  int64_t StartNs = 0, EndNs = 0;
};

/// The spans the compiled step recorded since tracing was turned on
/// (fnn_trace_collect until it has none left).
std::vector<fnn_trace_span> collectKernelSpans();

/// The timeline as Trace Event Format JSON: a process named Title, one
/// named thread per entry of Threads, and one complete event ("ph": "X")
/// per span with microsecond times relative to the earliest span.
std::string chromeTraceJson(const std::string &Title,
                            const std::vector<std::string> &Threads,
                            const std::vector<TimelineSpan> &Spans);

/// Where the time of \p Spans went, by op kind (a span's name up to its
/// first space: "conv2d", "add", ...): one line per kind, the largest
/// first, with its calls, milliseconds and share of \p TotalNs (the wall
/// time the spans lie in), and a last line for the time in no span.
std::string spanSummary(const std::vector<TimelineSpan> &Spans,
                        int64_t TotalNs);

/// Writes chromeTraceJson atomically to Path.
Status writeChromeTrace(const std::string &Path, const std::string &Title,
                        const std::vector<std::string> &Threads,
                        const std::vector<TimelineSpan> &Spans);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_TIMELINE_H
