//===- Timeline.cpp - Chrome-trace timelines of training steps ------------===//

#include "fastnn/trainer/Timeline.h"
#include "fastnn/trainer/AtomicFile.h"

#include <algorithm>
#include <cstdio>
#include <map>

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

std::vector<fnn_trace_span> collectKernelSpans() {
  std::vector<fnn_trace_span> Spans;
  fnn_trace_span Buffer[1024];
  for (;;) {
    int64_t N = fnn_trace_collect(Buffer, 1024);
    Spans.insert(Spans.end(), Buffer, Buffer + N);
    if (N < 1024)
      return Spans;
  }
}

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

std::string spanSummary(const std::vector<TimelineSpan> &Spans,
                        int64_t TotalNs) {
  struct Kind {
    int64_t Calls = 0, Ns = 0;
  };
  std::map<std::string, Kind> Kinds;
  int64_t Covered = 0;
  for (const TimelineSpan &Span : Spans) {
    Kind &K = Kinds[Span.Name.substr(0, Span.Name.find(' '))];
    int64_t Ns = std::max<int64_t>(0, Span.EndNs - Span.StartNs);
    ++K.Calls;
    K.Ns += Ns;
    Covered += Ns;
  }
  std::vector<std::pair<std::string, Kind>> Sorted(Kinds.begin(), Kinds.end());
  std::stable_sort(
      Sorted.begin(), Sorted.end(),
      [](const auto &A, const auto &B) { return A.second.Ns > B.second.Ns; });
  auto Line = [&](const std::string &Name, int64_t Calls, int64_t Ns) {
    char Text[160];
    std::snprintf(Text, sizeof(Text), "  %-24s %6lld calls %10.3f ms %5.1f%%\n",
                  Name.c_str(), static_cast<long long>(Calls),
                  static_cast<double>(Ns) / 1e6,
                  TotalNs > 0 ? 100.0 * static_cast<double>(Ns) /
                                    static_cast<double>(TotalNs)
                              : 0.0);
    return std::string(Text);
  };
  std::string Summary;
  for (const auto &[Name, K] : Sorted)
    Summary += Line(Name, K.Calls, K.Ns);
  return Summary +
         Line("(between spans)", 0, std::max<int64_t>(0, TotalNs - Covered));
}

Status writeChromeTrace(const std::string &Path, const std::string &Title,
                        const std::vector<std::string> &Threads,
                        const std::vector<TimelineSpan> &Spans) {
  std::string Json = chromeTraceJson(Title, Threads, Spans);
  return writeFileAtomically(Path, {{Json.data(), Json.size()}});
}

} // namespace fastnn::trainer
