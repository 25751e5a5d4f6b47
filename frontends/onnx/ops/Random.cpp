//===- Random.cpp - ONNX random generators --------------------------------===//
//
// RandomUniform(Like), RandomNormal(Like) and Bernoulli as fastnn's
// counter-based draws. Today's exporters write dropout and stochastic depth
// in training mode this way; fastnn-random-masks turns the masks among them
// into random_mask.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

/// The draw's seed: the node's `seed` (a float in ONNX) by its bits, or a
/// stable hash of its first output's name, so that the model's draws differ
/// from each other and from run to run of the compiler not at all.
int64_t drawSeed(NodeImporter &n) {
  if (n.hasAttr("seed"))
    return llvm::bit_cast<uint32_t>(
        static_cast<float>(n.floatAttr("seed", 0.0)));
  return static_cast<int64_t>(llvm::xxh3_64bits(n.node().output(0)));
}

/// The float element type of attribute `dtype`, or `fallback` without it.
FailureOr<Type> drawType(NodeImporter &n, Type fallback) {
  Type type = fallback;
  if (n.hasAttr("dtype"))
    type = convertElementType(n.intAttr("dtype", 0), n.context());
  if (!type || !isa<FloatType>(type)) {
    (void)n.error("draws floating-point tensors only; attribute 'dtype' "
                  "names another type");
    return failure();
  }
  return type;
}

/// The result type of a draw: the `shape` attribute's (RandomUniform,
/// RandomNormal) or input 0's (the Like forms), with `dtype`.
FailureOr<RankedTensorType> drawResultType(NodeImporter &n, bool like) {
  if (like) {
    FailureOr<RankedTensorType> input = n.inputType(0);
    if (failed(input))
      return failure();
    FailureOr<Type> element = drawType(n, input->getElementType());
    if (failed(element))
      return failure();
    return input->clone(*element);
  }
  std::optional<SmallVector<int64_t>> shape = n.intsAttr("shape");
  if (!shape) {
    (void)n.error("attribute 'shape' is required");
    return failure();
  }
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
    (void)n.error("attribute 'shape' has a negative size");
    return failure();
  }
  FailureOr<Type> element = drawType(n, Float32Type::get(n.context()));
  if (failed(element))
    return failure();
  return RankedTensorType::get(*shape, *element);
}

template <bool Like> LogicalResult importRandomUniform(NodeImporter &n) {
  FailureOr<RankedTensorType> type = drawResultType(n, Like);
  if (failed(type))
    return failure();
  double low = n.floatAttr("low", 0.0), high = n.floatAttr("high", 1.0);
  if (!(low <= high))
    return n.error("expects low <= high");
  OpBuilder &b = n.builder();
  n.setOutput(0, RandomUniformOp::create(b, n.getLoc(), *type, Value(),
                                         b.getF64FloatAttr(low),
                                         b.getF64FloatAttr(high),
                                         b.getI64IntegerAttr(drawSeed(n))));
  return success();
}

template <bool Like> LogicalResult importRandomNormal(NodeImporter &n) {
  FailureOr<RankedTensorType> type = drawResultType(n, Like);
  if (failed(type))
    return failure();
  double mean = n.floatAttr("mean", 0.0), scale = n.floatAttr("scale", 1.0);
  if (!(scale >= 0.0))
    return n.error("expects a non-negative scale");
  OpBuilder &b = n.builder();
  n.setOutput(0, RandomNormalOp::create(b, n.getLoc(), *type, Value(),
                                        b.getF64FloatAttr(mean),
                                        b.getF64FloatAttr(scale),
                                        b.getI64IntegerAttr(drawSeed(n))));
  return success();
}

/// 1 where a uniform draw falls below the input's probability, as `dtype`
/// (by default the input's type).
LogicalResult importBernoulli(NodeImporter &n) {
  FailureOr<Value> probability = n.input(0);
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(probability) || failed(type))
    return failure();
  if (!isa<FloatType>(type->getElementType()))
    return n.error("expects floating-point probabilities");
  Type result = type->getElementType();
  if (n.hasAttr("dtype")) {
    result = convertElementType(n.intAttr("dtype", 0), n.context());
    if (!result)
      return n.error("unsupported element type in attribute 'dtype'");
  }
  OpBuilder &b = n.builder();
  Value draw = RandomUniformOp::create(
      b, n.getLoc(), *type, Value(), b.getF64FloatAttr(0.0),
      b.getF64FloatAttr(1.0), b.getI64IntegerAttr(drawSeed(n)));
  FailureOr<Value> below = n.create<LessOp>({draw, *probability});
  if (failed(below))
    return failure();
  if (result.isInteger(1))
    return defineResult(n, below);
  return defineResult(
      n,
      n.create<CastOp>({*below}, {namedAttr(n, "to", TypeAttr::get(result))}));
}

} // namespace

std::vector<OpRecord> randomOpRecords() {
  return {
      {"Bernoulli", importBernoulli, {15, 22}},
      {"RandomNormal", importRandomNormal<false>, {1, 22}},
      // Input 0 is read for its type only.
      {"RandomNormalLike", importRandomNormal<true>, {1, 22}, {0}},
      {"RandomUniform", importRandomUniform<false>, {1, 22}},
      {"RandomUniformLike", importRandomUniform<true>, {1, 22}, {0}},
  };
}

} // namespace fastnn::onnx_import
