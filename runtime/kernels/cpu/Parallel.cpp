//===- Parallel.cpp - fnn_parallel_for ------------------------------------===//

#include "Parallel.h"

#include "fastnn/runtime/abi.h"

#include <climits>

namespace {
/// Operations (fastnn-outline-loop-nests' count) below which waking the
/// other threads costs more than it saves: a fork and join of a warm team
/// is a few microseconds, about this much scalar work.
constexpr int64_t MinParallelWork = int64_t(1) << 16;
/// Operations each thread gets at least, so that mid-sized nests wake only
/// some of the threads of a large machine.
constexpr int64_t MinWorkPerThread = int64_t(1) << 15;
} // namespace

extern "C" void fnn_parallel_for(fnn_loop_body body, void *context,
                                 int64_t count, int64_t work) {
  if (count <= 0)
    return;
  if (work < MinParallelWork) {
    body(context, 0, count);
    return;
  }
  int MaxThreads =
      static_cast<int>(std::min<int64_t>(work / MinWorkPerThread, INT_MAX));
  fastnn::cpu::parallelFor(
      count, MaxThreads,
      [&](int64_t Begin, int64_t End, int) { body(context, Begin, End); });
}
