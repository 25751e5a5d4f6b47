//===- Reduction.cpp - ONNX reductions ------------------------------------===//
//
// ReduceSum, ReduceMean, ReduceMax and ReduceMin, whose axes are an
// attribute or a constant input, ReduceL2 and ReduceLogSumExp as
// compositions with ReduceSum, and ArgMax as one of reductions and a select.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

/// The reduction a node asks for: the sorted axes and keepdims, or none
/// (`identity`) where noop_with_empty_axes makes empty axes the identity.
struct Reduction {
  SmallVector<int64_t> axes;
  bool keepdims = true;
  bool identity = false;
};

/// The axes are an attribute before `axesInputVersion` (ReduceSum's 13, the
/// others' 18) and an input from it on, where noop_with_empty_axes makes
/// empty axes the identity instead of a reduction over every axis.
FailureOr<Reduction> readReduction(NodeImporter &n, int64_t axesInputVersion) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  bool axesInput = n.version() >= axesInputVersion;
  FailureOr<std::optional<SmallVector<int64_t>>> axesOrNone =
      readAxes(n, axesInput);
  if (failed(axesOrNone))
    return failure();
  SmallVector<int64_t> rawAxes = axesOrNone->value_or(SmallVector<int64_t>{});
  Reduction reduction;
  reduction.keepdims = n.intAttr("keepdims", 1) != 0;
  bool noopWithEmptyAxes =
      axesInput && n.intAttr("noop_with_empty_axes", 0) != 0;
  if (rawAxes.empty() && noopWithEmptyAxes) {
    reduction.identity = true;
    return reduction;
  }
  for (int64_t axis : rawAxes) {
    FailureOr<int64_t> normalized = n.normalizeAxis(axis, type->getRank());
    if (failed(normalized))
      return failure();
    reduction.axes.push_back(*normalized);
  }
  if (reduction.axes.empty())
    for (int64_t d = 0; d < type->getRank(); ++d)
      reduction.axes.push_back(d);
  llvm::sort(reduction.axes);
  reduction.axes.erase(
      std::unique(reduction.axes.begin(), reduction.axes.end()),
      reduction.axes.end());
  return reduction;
}

/// `OpT` over the reduction's axes, or `value` itself for the identity.
template <typename OpT>
FailureOr<Value> reduce(NodeImporter &n, const Reduction &reduction,
                        Value value) {
  if (reduction.identity)
    return value;
  SmallVector<NamedAttribute> attrs = {
      namedAttr(n, "axes", i64Array(n, reduction.axes))};
  if (reduction.keepdims)
    attrs.push_back(namedAttr(n, "keepdims", n.builder().getUnitAttr()));
  return n.create<OpT>(value, attrs);
}

template <typename OpT, int64_t axesInputVersion>
LogicalResult importReduce(NodeImporter &n) {
  FailureOr<Reduction> reduction = readReduction(n, axesInputVersion);
  if (failed(reduction))
    return failure();
  return defineResult(n, reduce<OpT>(n, *reduction, *n.input(0)));
}

/// sqrt(reduce_sum(x * x)), whose gradient x / y is infinite where a whole
/// slice is zero, as the formula's is.
LogicalResult importReduceL2(NodeImporter &n) {
  FailureOr<Reduction> reduction = readReduction(n, 18);
  if (failed(reduction))
    return failure();
  Value x = *n.input(0);
  FailureOr<Value> squared = n.create<MulOp>(ValueRange{x, x});
  if (failed(squared))
    return failure();
  FailureOr<Value> sum = reduce<ReduceSumOp>(n, *reduction, *squared);
  if (failed(sum))
    return failure();
  return defineResult(n, n.create<SqrtOp>(*sum));
}

/// m + log(reduce_sum(exp(x - m))) with m the maximum over the axes, which
/// keeps exp from overflowing; the gradient through m cancels (it is
/// dy (1 - sum of the softmax)).
LogicalResult importReduceLogSumExp(NodeImporter &n) {
  FailureOr<Reduction> reduction = readReduction(n, 18);
  if (failed(reduction))
    return failure();
  Value x = *n.input(0);
  if (reduction->identity)
    return defineResult(n, x);
  Reduction kept = *reduction;
  kept.keepdims = true;
  FailureOr<Value> maximum = reduce<ReduceMaxOp>(n, kept, x);
  if (failed(maximum))
    return failure();
  FailureOr<Value> shifted = n.create<SubOp>(ValueRange{x, *maximum});
  if (failed(shifted))
    return failure();
  FailureOr<Value> exponential = n.create<ExpOp>(*shifted);
  if (failed(exponential))
    return failure();
  FailureOr<Value> sum = reduce<ReduceSumOp>(n, *reduction, *exponential);
  if (failed(sum))
    return failure();
  FailureOr<Value> logarithm = n.create<LogOp>(*sum);
  if (failed(logarithm))
    return failure();
  Value offset = n.reshape(
      *maximum, cast<RankedTensorType>(logarithm->getType()).getShape());
  return defineResult(n, n.create<AddOp>(ValueRange{*logarithm, offset}));
}

/// The first (or, with select_last_index, the last) position of the
/// maximum along `axis`, without an op of its own: positions where x equals
/// its maximum keep their index (a float32 constant along the axis, exact
/// below 2^24), the others one past the ends, and a min (max) reduction
/// picks it; the result is cast to int64. Integer results take no gradient.
LogicalResult importArgMax(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (!isa<FloatType>(type.getElementType()))
    return n.error("expects a floating-point input");
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  bool last = n.intAttr("select_last_index", 0) != 0;
  int64_t dim = type.getDimSize(*axis);
  if (dim > (int64_t(1) << 24))
    return n.error("axis " + Twine(*axis) + " has more positions (" +
                   Twine(dim) + ") than float32 indices count exactly");
  Reduction along;
  along.axes = {*axis};
  FailureOr<Value> maximum = reduce<ReduceMaxOp>(n, along, *x);
  if (failed(maximum))
    return failure();
  FailureOr<Value> isMaximum = n.create<EqualOp>(ValueRange{*x, *maximum});
  if (failed(isMaximum))
    return failure();
  Type f32 = n.builder().getF32Type();
  SmallVector<float> positions;
  for (int64_t i = 0; i < dim; ++i)
    positions.push_back(static_cast<float>(i));
  SmallVector<int64_t> indexShape(type.getRank(), 1);
  indexShape[*axis] = dim;
  Value indices = ConstantOp::create(
      n.builder(), n.getLoc(),
      DenseElementsAttr::get(RankedTensorType::get(indexShape, f32),
                             ArrayRef<float>(positions)));
  Value outside = n.scalarConstant(f32, last ? -1.0 : static_cast<double>(dim));
  FailureOr<Value> candidates =
      n.create<SelectOp>(ValueRange{*isMaximum, indices, outside});
  if (failed(candidates))
    return failure();
  along.keepdims = n.intAttr("keepdims", 1) != 0;
  FailureOr<Value> position = last ? reduce<ReduceMaxOp>(n, along, *candidates)
                                   : reduce<ReduceMinOp>(n, along, *candidates);
  if (failed(position))
    return failure();
  return defineResult(
      n, n.create<CastOp>(
             *position,
             {namedAttr(n, "to", TypeAttr::get(n.builder().getI64Type()))}));
}

} // namespace

FailureOr<std::optional<SmallVector<int64_t>>> readAxes(NodeImporter &n,
                                                        bool axesInput) {
  if (!axesInput)
    return n.intsAttr("axes");
  if (!n.hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> values = n.constantInts(1);
  if (failed(values))
    return failure();
  return std::optional<SmallVector<int64_t>>(*values);
}

std::vector<OpRecord> reductionOpRecords() {
  return {
      {"ArgMax", importArgMax, {13}},
      // Axes (input 1) decide the result's shape.
      {"ReduceL2", importReduceL2, {13, 18}, {1}},
      // ReduceLogSumExp 28 drops integer element types.
      {"ReduceLogSumExp", importReduceLogSumExp, {13, 18, 28}, {1}},
      {"ReduceMax", importReduce<ReduceMaxOp, 18>, {13, 18, 20}, {1}},
      {"ReduceMean", importReduce<ReduceMeanOp, 18>, {13, 18}, {1}},
      {"ReduceMin", importReduce<ReduceMinOp, 18>, {13, 18, 20}, {1}},
      {"ReduceSum", importReduce<ReduceSumOp, 13>, {13}, {1}},
  };
}

} // namespace fastnn::onnx_import
