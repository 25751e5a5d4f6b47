//===- Timeline.cpp - Chrome-trace timelines of training steps ------------===//

#include "fastnn/trainer/Timeline.h"
#include "fastnn/trainer/AtomicFile.h"

#include <algorithm>
#include <cstdio>

namespace fastnn::trainer {

namespace {

std::string jsonString(const std::string &Text) {
  std::string Out = "\"";
  for (unsigned char C : Text) {
    if (C == '"' || C == '\\') {
      Out += '\\';
      Out += static_cast<char>(C);
    } else if (C < 0x20) {
      char Escape[8];
      std::snprintf(Escape, sizeof(Escape), "\\u%04x", C);
      Out += Escape;
    } else {
      Out += static_cast<char>(C);
    }
  }
  return Out + "\"";
}

std::string micros(int64_t Ns) {
  char Text[32];
  std::snprintf(Text, sizeof(Text), "%.3f", static_cast<double>(Ns) / 1000.0);
  return Text;
}

} // namespace

std::string chromeTraceJson(const std::string &Title,
                            const std::vector<std::string> &Threads,
                            const std::vector<TimelineSpan> &Spans) {
  int64_t Origin = 0;
  if (!Spans.empty())
    Origin = std::min_element(Spans.begin(), Spans.end(),
                              [](const TimelineSpan &A, const TimelineSpan &B) {
                                return A.StartNs < B.StartNs;
                              })
                 ->StartNs;
  std::string Json = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  Json += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": "
          "{\"name\": " +
          jsonString(Title) + "}}";
  for (size_t T = 0; T < Threads.size(); ++T)
    Json += ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, "
            "\"tid\": " +
            std::to_string(T) +
            ", \"args\": {\"name\": " + jsonString(Threads[T]) + "}}";
  for (const TimelineSpan &Span : Spans)
    Json +=
        ",\n{\"name\": " + jsonString(Span.Name) +
        ", \"cat\": " + jsonString(Span.Category) +
        ", \"ph\": \"X\", \"pid\": 1, \"tid\": " + std::to_string(Span.Thread) +
        ", \"ts\": " + micros(Span.StartNs - Origin) + ", \"dur\": " +
        micros(std::max<int64_t>(0, Span.EndNs - Span.StartNs)) + "}";
  return Json + "\n]}\n";
}

Status writeChromeTrace(const std::string &Path, const std::string &Title,
                        const std::vector<std::string> &Threads,
                        const std::vector<TimelineSpan> &Spans) {
  std::string Json = chromeTraceJson(Title, Threads, Spans);
  return writeFileAtomically(Path, {{Json.data(), Json.size()}});
}

} // namespace fastnn::trainer
