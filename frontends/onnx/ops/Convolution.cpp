//===- Convolution.cpp - ONNX convolution and pooling ---------------------===//
//
// Conv and the pooling operators, which share ONNX's window attributes
// (kernel_shape, strides, pads, dilations, auto_pad).
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

/// Spatial window settings shared by Conv, MaxPool and AveragePool.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

/// Reads kernel_shape/strides/pads/dilations/auto_pad for a 2-D window over
/// `input` (NCHW); `kernel` comes from the filter for Conv.
FailureOr<Window> readWindow(NodeImporter &n, RankedTensorType input,
                             std::optional<SmallVector<int64_t>> kernel,
                             bool hasDilations) {
  if (input.getRank() != 4) {
    (void)n.error("only 2-D windows over 4-D NCHW inputs are supported, got " +
                  Twine(input.getRank()) + "-D input");
    return failure();
  }
  Window w;
  std::optional<SmallVector<int64_t>> kernelAttr = n.intsAttr("kernel_shape");
  if (kernelAttr && kernel && *kernelAttr != *kernel) {
    (void)n.error("kernel_shape does not match the filter");
    return failure();
  }
  if (!kernel)
    kernel = kernelAttr;
  if (!kernel || kernel->size() != 2) {
    (void)n.error("expects a 2-D kernel_shape");
    return failure();
  }
  w.kernel = *kernel;
  w.strides = n.intsAttr("strides").value_or(SmallVector<int64_t>{1, 1});
  w.dilations = SmallVector<int64_t>{1, 1};
  if (hasDilations)
    w.dilations = n.intsAttr("dilations").value_or(w.dilations);
  w.pads = n.intsAttr("pads").value_or(SmallVector<int64_t>{0, 0, 0, 0});
  if (w.strides.size() != 2 || w.dilations.size() != 2 || w.pads.size() != 4) {
    (void)n.error("expects 2 strides, 2 dilations and 4 pads");
    return failure();
  }
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.pads = {0, 0, 0, 0};
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t in = input.getDimSize(i + 2);
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + span - in);
      int64_t small = total / 2;
      bool upper = autoPad == "SAME_UPPER";
      w.pads[i] = upper ? small : total - small;
      w.pads[i + 2] = upper ? total - small : small;
    }
  } else if (autoPad != "NOTSET") {
    (void)n.error("unsupported auto_pad '" + autoPad + "'");
    return failure();
  }
  return w;
}

LogicalResult importConv(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), w = n.input(1);
  if (failed(x) || failed(w))
    return failure();
  auto filterType = cast<RankedTensorType>(w->getType());
  if (filterType.getRank() != 4)
    return n.error("only 2-D convolution is supported (4-D filter)");
  SmallVector<int64_t> kernel(filterType.getShape().drop_front(2));
  FailureOr<Window> window =
      readWindow(n, cast<RankedTensorType>(x->getType()), kernel, true);
  if (failed(window))
    return failure();
  SmallVector<Value> operands = {*x, *w};
  if (n.hasInput(2)) {
    FailureOr<Value> b = n.input(2);
    if (failed(b))
      return failure();
    operands.push_back(*b);
  }
  return defineResult(
      n,
      n.create<Conv2DOp>(
          operands,
          {namedAttr(n, "strides", i64Array(n, window->strides)),
           namedAttr(n, "pads", i64Array(n, window->pads)),
           namedAttr(n, "dilations", i64Array(n, window->dilations)),
           namedAttr(n, "groups",
                     n.builder().getI64IntegerAttr(n.intAttr("group", 1)))}));
}

LogicalResult importMaxPool(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  int64_t storageOrder = n.intAttr("storage_order", 0);
  FailureOr<Window> window = readWindow(n, *type, std::nullopt, true);
  if (failed(window))
    return failure();
  SmallVector<NamedAttribute> attrs = {
      namedAttr(n, "kernel_shape", i64Array(n, window->kernel)),
      namedAttr(n, "strides", i64Array(n, window->strides)),
      namedAttr(n, "pads", i64Array(n, window->pads)),
      namedAttr(n, "dilations", i64Array(n, window->dilations))};
  if (n.intAttr("ceil_mode", 0))
    attrs.push_back(namedAttr(n, "ceil_mode", n.builder().getUnitAttr()));
  if (n.node().output_size() > 1 && n.isUsed(1)) {
    SmallVector<NamedAttribute> indexAttrs(attrs);
    indexAttrs.push_back(namedAttr(
        n, "storage_order", n.builder().getI64IntegerAttr(storageOrder)));
    FailureOr<Value> indices =
        n.create<MaxPool2DIndicesOp>(*n.input(0), indexAttrs);
    if (failed(indices))
      return failure();
    n.setOutput(1, *indices);
  }
  return defineResult(n, n.create<MaxPool2DOp>(*n.input(0), attrs));
}

LogicalResult importAveragePool(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  // Dilations are an attribute from version 19.
  FailureOr<Window> window =
      readWindow(n, *type, std::nullopt, n.version() >= 19);
  if (failed(window))
    return failure();
  SmallVector<NamedAttribute> attrs = {
      namedAttr(n, "kernel_shape", i64Array(n, window->kernel)),
      namedAttr(n, "strides", i64Array(n, window->strides)),
      namedAttr(n, "pads", i64Array(n, window->pads)),
      namedAttr(n, "dilations", i64Array(n, window->dilations))};
  if (n.intAttr("ceil_mode", 0))
    attrs.push_back(namedAttr(n, "ceil_mode", n.builder().getUnitAttr()));
  if (n.intAttr("count_include_pad", 0))
    attrs.push_back(
        namedAttr(n, "count_include_pad", n.builder().getUnitAttr()));
  return defineResult(n, n.create<AvgPool2DOp>(*n.input(0), attrs));
}

template <typename ReduceOpT> LogicalResult importGlobalPool(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  if (type->getRank() < 3)
    return n.error("expects an input with spatial dimensions");
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < type->getRank(); ++d)
    axes.push_back(d);
  return defineResult(
      n,
      n.create<ReduceOpT>(
          *n.input(0), {namedAttr(n, "axes", i64Array(n, axes)),
                        namedAttr(n, "keepdims", n.builder().getUnitAttr())}));
}

} // namespace

std::vector<OpRecord> convolutionOpRecords() {
  return {
      {"AveragePool", importAveragePool, {11, 19, 22}},
      {"Conv", importConv, {11, 22}},
      {"GlobalAveragePool", importGlobalPool<ReduceMeanOp>, {1, 22}},
      {"GlobalMaxPool", importGlobalPool<ReduceMaxOp>, {1, 22}},
      {"MaxPool", importMaxPool, {12, 22}},
  };
}

} // namespace fastnn::onnx_import
