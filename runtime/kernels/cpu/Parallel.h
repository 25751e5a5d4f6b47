//===- Parallel.h - loops on the OpenMP threads oneDNN runs on ---*- C++
//-*-===//
//
// Hand-written kernels and generated loop nests share libgomp's thread pool
// with oneDNN. libgomp is called directly rather than through `#pragma omp`:
// clang's OpenMP code calls LLVM's libomp (a second pool of spinning threads
// next to oneDNN's), and fastnnc links compiled models with a fixed library
// list that has no OpenMP flag.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_KERNELS_CPU_PARALLEL_H
#define FASTNN_RUNTIME_KERNELS_CPU_PARALLEL_H

#include <algorithm>
#include <cstdint>

// Makes lld add libgomp wherever an object including this is linked.
#pragma comment(lib, "gomp")
extern "C" {
void GOMP_parallel(void (*Fn)(void *), void *Data, unsigned NumThreads,
                   unsigned Flags);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
}

namespace fastnn::cpu {

/// Operations (for generated loops, fastnn-outline-loop-nests' count) below
/// which waking the other threads costs more than it saves: a fork and join
/// of a warm team is a few microseconds, about this much scalar work.
constexpr int64_t MinParallelWork = int64_t(1) << 16;
/// Operations each thread gets at least, so that mid-sized loops wake only
/// some of the threads of a large machine.
constexpr int64_t MinWorkPerThread = int64_t(1) << 15;

/// The MaxThreads to give parallelFor for a loop of \p Work operations: 1
/// below MinParallelWork, else one thread per MinWorkPerThread.
inline int threadsForWork(int64_t Work) {
  if (Work < MinParallelWork)
    return 1;
  return static_cast<int>(
      std::min<int64_t>(Work / MinWorkPerThread, INT32_MAX));
}

/// Runs Body(Begin, End, Thread) over a static split of [0, Items) on at
/// most MaxThreads OpenMP threads (Thread < MaxThreads). The split depends
/// only on the team size, so results are the same from run to run.
template <typename BodyT>
void parallelFor(int64_t Items, int MaxThreads, const BodyT &Body) {
  int64_t Threads =
      std::min<int64_t>({omp_get_max_threads(), MaxThreads, Items});
  if (Threads <= 1) {
    Body(int64_t(0), Items, 0);
    return;
  }
  struct Context {
    const BodyT *Body;
    int64_t Items;
  } Ctx{&Body, Items};
  GOMP_parallel(
      [](void *Data) {
        const Context &C = *static_cast<const Context *>(Data);
        int64_t Thread = omp_get_thread_num(), Team = omp_get_num_threads();
        int64_t Begin = C.Items * Thread / Team,
                End = C.Items * (Thread + 1) / Team;
        if (Begin < End)
          (*C.Body)(Begin, End, static_cast<int>(Thread));
      },
      &Ctx, static_cast<unsigned>(Threads), 0);
}

} // namespace fastnn::cpu

#endif // FASTNN_RUNTIME_KERNELS_CPU_PARALLEL_H
