//===- AlignedBuffer.h - 64-byte aligned host memory ------------*- C++ -*-===//
//
// The alignment AVX-512 loads like, for kernels' buffers and for the batches
// the input pipeline hands them.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_ALIGNEDBUFFER_H
#define FASTNN_RUNTIME_ALIGNEDBUFFER_H

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace fastnn::runtime {

struct AlignedFree {
  void operator()(void *P) const { std::free(P); }
};
using AlignedBuffer = std::unique_ptr<void, AlignedFree>;

/// Returns null for zero bytes; throws std::bad_alloc on failure.
AlignedBuffer allocateAligned(size_t Bytes);

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_ALIGNEDBUFFER_H
