//===- Parallel.cpp - fnn_parallel_for ------------------------------------===//

#include "Parallel.h"

#include "fastnn/runtime/abi.h"

extern "C" void fnn_parallel_for(fnn_loop_body body, void *context,
                                 int64_t count, int64_t work) {
  if (count <= 0)
    return;
  int MaxThreads = fastnn::cpu::threadsForWork(work);
  if (MaxThreads <= 1) {
    body(context, 0, count);
    return;
  }
  fastnn::cpu::parallelFor(
      count, MaxThreads,
      [&](int64_t Begin, int64_t End, int) { body(context, Begin, End); });
}
