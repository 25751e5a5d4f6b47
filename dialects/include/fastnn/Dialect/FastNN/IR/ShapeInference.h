//===- ShapeInference.h - shape arithmetic of fastnn ops -------*- C++ -*-===//
//
// The size rules of convolution, pooling and broadcasting, shared by the ops'
// type inference and verifiers; the importer and the lowering read shapes
// from the ops' inferred types, so all agree.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DIALECT_FASTNN_IR_SHAPEINFERENCE_H
#define FASTNN_DIALECT_FASTNN_IR_SHAPEINFERENCE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <cstdint>
#include <optional>

namespace mlir::fastnn {

/// Output length of a sliding window over `inputSize` elements padded by
/// `padBegin` and `padEnd`; std::nullopt if the window never fits.
std::optional<int64_t> slidingWindowOutputSize(int64_t inputSize,
                                               int64_t kernelSize,
                                               int64_t stride, int64_t dilation,
                                               int64_t padBegin, int64_t padEnd,
                                               bool ceilMode);

/// Numpy broadcast of two shapes; std::nullopt if they are incompatible.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                    ArrayRef<int64_t> rhs);

} // namespace mlir::fastnn

#endif // FASTNN_DIALECT_FASTNN_IR_SHAPEINFERENCE_H
