//===- MemoryPlan.cpp - static arena offsets from buffer lifetimes --------===//

#include "fastnn/Conversion/MemoryPlan.h"

#include <algorithm>
#include <numeric>

namespace fastnn {

static int64_t alignUp(int64_t value) {
  return (value + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

MemoryPlan planMemory(const std::vector<BufferRequest> &requests) {
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].bytes > requests[b].bytes;
  });

  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  // The placed buffers by offset, so that those alive with a request come
  // out in order without a sort per request (a big model has thousands).
  std::vector<size_t> placed;
  std::vector<size_t> live;
  for (size_t index : order) {
    const BufferRequest &request = requests[index];
    int64_t size = alignUp(std::max<int64_t>(request.bytes, 1));
    // The placed buffers alive at the same time, by offset: the request
    // takes the first gap between them that is large enough.
    live.clear();
    for (size_t other : placed)
      if (requests[other].firstUse <= request.lastUse &&
          request.firstUse <= requests[other].lastUse)
        live.push_back(other);
    int64_t offset = 0;
    for (size_t other : live) {
      if (plan.offsets[other] - offset >= size)
        break;
      offset = std::max(offset,
                        alignUp(plan.offsets[other] + requests[other].bytes));
    }
    plan.offsets[index] = offset;
    plan.totalBytes = std::max(plan.totalBytes, offset + size);
    placed.insert(std::upper_bound(placed.begin(), placed.end(), offset,
                                   [&](int64_t value, size_t other) {
                                     return value < plan.offsets[other];
                                   }),
                  index);
  }
  return plan;
}

} // namespace fastnn
