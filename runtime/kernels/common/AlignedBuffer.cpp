//===- AlignedBuffer.cpp - 64-byte aligned host memory --------------------===//

#include "fastnn/runtime/AlignedBuffer.h"

#include <new>

fastnn::runtime::AlignedBuffer fastnn::runtime::allocateAligned(size_t Bytes) {
  if (Bytes == 0)
    return nullptr;
  // std::aligned_alloc wants a size that is a multiple of the alignment.
  size_t Rounded = (Bytes + 63) / 64 * 64;
  void *P = std::aligned_alloc(64, Rounded);
  if (!P)
    throw std::bad_alloc();
  return AlignedBuffer(P);
}
