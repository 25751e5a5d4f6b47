//===- ShapeText.h - shapes in messages -------------------------*- C++ -*-===//
//
// The one way each part of the runtime writes a shape into a message: the
// drivers and the trainer as a list, the .npy code as numpy prints it, the
// kernels as their descriptors' dimensions.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_SHAPETEXT_H
#define FASTNN_RUNTIME_SHAPETEXT_H

#include "fastnn/runtime/abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::runtime {

/// "[2, 3]"; "[]" for a scalar.
std::string shapeText(const std::vector<int64_t> &Shape);
/// "(2, 3)", "(2,)", "()": as numpy prints a shape.
std::string numpyShapeText(const std::vector<int64_t> &Shape);
/// "2x3x8x8", "scalar", or "<rank 9>" for a rank the ABI does not allow.
std::string shapeText(const fnn_shape &Shape);

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_SHAPETEXT_H
