//===- ShapeInference.cpp - shape arithmetic of fastnn ops ----------------===//

#include "fastnn/Dialect/FastNN/IR/ShapeInference.h"

#include <algorithm>

namespace mlir::fastnn {

std::optional<int64_t> slidingWindowOutputSize(int64_t inputSize,
                                               int64_t kernelSize,
                                               int64_t stride, int64_t dilation,
                                               int64_t padBegin, int64_t padEnd,
                                               bool ceilMode) {
  int64_t span = dilation * (kernelSize - 1) + 1;
  int64_t room = inputSize + padBegin + padEnd - span;
  if (room < 0 || stride <= 0)
    return std::nullopt;
  // ONNX: floor or ceil of room / stride, plus one.
  int64_t steps = ceilMode ? (room + stride - 1) / stride : room / stride;
  // Rounding up may add a window that starts in the end padding and sees no
  // input; PyTorch and onnxruntime drop it, and so do we.
  if (ceilMode && steps > 0 && steps * stride >= inputSize + padBegin)
    --steps;
  return steps + 1;
}

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                    ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    result[i] = l == 1 ? r : l;
  }
  return result;
}

} // namespace mlir::fastnn
