//===- MemoryPlan.h - static arena offsets from buffer lifetimes -*- C++
//-*-===//
//
// All activations of a compiled model live in one arena allocated at init;
// each buffer gets a fixed byte offset, and buffers whose lifetimes do not
// overlap share memory. The planner is independent of MLIR so it can be
// tested alone.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_CONVERSION_MEMORYPLAN_H
#define FASTNN_CONVERSION_MEMORYPLAN_H

#include <cstdint>
#include <vector>

namespace fastnn {

/// A buffer needed from step `firstUse` to step `lastUse`, both inclusive.
struct BufferRequest {
  int64_t bytes;
  int64_t firstUse;
  int64_t lastUse;
};

struct MemoryPlan {
  /// Byte offset of each request, in request order.
  std::vector<int64_t> offsets;
  /// Arena size that holds every buffer.
  int64_t totalBytes = 0;
};

/// Alignment of every planned offset: a cache line, and enough for any
/// vector load the generated code or the kernels issue.
constexpr int64_t kArenaAlignment = 64;

/// Places the largest buffers first, each at the lowest aligned offset that
/// does not overlap a placed buffer whose lifetime intersects its own (the
/// greedy-by-size strategy TFLite's arena planner uses). Deterministic.
MemoryPlan planMemory(const std::vector<BufferRequest> &requests);

} // namespace fastnn

#endif // FASTNN_CONVERSION_MEMORYPLAN_H
