//===- Reduction.cpp - ONNX reductions ------------------------------------===//
//
// ReduceSum, ReduceMean, ReduceMax and ReduceMin, whose axes are an
// attribute or a constant input.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

/// The axes are an attribute before `axesInputVersion` (ReduceSum's 13, the
/// others' 18) and an input from it on, where noop_with_empty_axes makes
/// empty axes the identity instead of a reduction over every axis.
template <typename OpT, int64_t axesInputVersion>
LogicalResult importReduce(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  bool axesInput = n.version() >= axesInputVersion;
  FailureOr<std::optional<SmallVector<int64_t>>> axesOrNone =
      readAxes(n, axesInput);
  if (failed(axesOrNone))
    return failure();
  SmallVector<int64_t> rawAxes = axesOrNone->value_or(SmallVector<int64_t>{});
  bool keepdims = n.intAttr("keepdims", 1) != 0;
  bool noopWithEmptyAxes =
      axesInput && n.intAttr("noop_with_empty_axes", 0) != 0;
  if (rawAxes.empty() && noopWithEmptyAxes) {
    n.setOutput(0, *n.input(0));
    return success();
  }
  SmallVector<int64_t> axes;
  for (int64_t axis : rawAxes) {
    FailureOr<int64_t> normalized = n.normalizeAxis(axis, type->getRank());
    if (failed(normalized))
      return failure();
    axes.push_back(*normalized);
  }
  if (axes.empty())
    for (int64_t d = 0; d < type->getRank(); ++d)
      axes.push_back(d);
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  SmallVector<NamedAttribute> attrs = {namedAttr(n, "axes", i64Array(n, axes))};
  if (keepdims)
    attrs.push_back(namedAttr(n, "keepdims", n.builder().getUnitAttr()));
  return defineResult(n, n.create<OpT>(*n.input(0), attrs));
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
      // Axes (input 1) decide the result's shape.
      {"ReduceMax", importReduce<ReduceMaxOp, 18>, {13, 18, 20}, {1}},
      {"ReduceMean", importReduce<ReduceMeanOp, 18>, {13, 18}, {1}},
      {"ReduceMin", importReduce<ReduceMinOp, 18>, {13, 18, 20}, {1}},
      {"ReduceSum", importReduce<ReduceSumOp, 13>, {13}, {1}},
  };
}

} // namespace fastnn::onnx_import
