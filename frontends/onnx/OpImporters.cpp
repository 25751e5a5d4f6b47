//===- OpImporters.cpp - one importer per ONNX operator -------------------===//
//
// Each importer maps an ONNX node (opset 13-17 semantics; older models are
// converted first) onto fastnn ops. Attributes an importer does not read are
// reported as unsupported by the caller, so none is silently ignored.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

LogicalResult defineResult(NodeImporter &n, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  n.setOutput(0, *value);
  return success();
}

NamedAttribute namedAttr(NodeImporter &n, StringRef name, Attribute value) {
  return n.builder().getNamedAttr(name, value);
}

DenseI64ArrayAttr i64Array(NodeImporter &n, ArrayRef<int64_t> values) {
  return n.builder().getDenseI64ArrayAttr(values);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

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
  FailureOr<Window> window = readWindow(n, *type, std::nullopt, false);
  if (failed(window))
    return failure();
  SmallVector<NamedAttribute> attrs = {
      namedAttr(n, "kernel_shape", i64Array(n, window->kernel)),
      namedAttr(n, "strides", i64Array(n, window->strides)),
      namedAttr(n, "pads", i64Array(n, window->pads))};
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

LogicalResult importBatchNormalization(NodeImporter &n) {
  SmallVector<Value> operands;
  for (size_t i = 0; i < 5; ++i) {
    FailureOr<Value> v = n.input(i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  if (n.intAttr("spatial", 1) != 1)
    return n.error("spatial=0 (per-activation statistics) is not supported");
  (void)n.intAttr("is_test", 0);
  double momentum = n.floatAttr("momentum", 0.9);
  bool trainingMode = n.intAttr("training_mode", 0) != 0;
  auto used = [&](size_t i) {
    return n.node().output_size() > static_cast<int>(i) && n.isUsed(i);
  };
  // A training-mode node whose updated running statistics the graph reads
  // computes them itself: normalise with the batch's statistics and blend
  // them in (ONNX's running = input * momentum + batch * (1 - momentum),
  // with the biased batch variance). With the statistics left dangling, as
  // training exports do, updating them is the trainer's business and the
  // node is an ordinary batch norm (batch statistics in train.bin, running
  // ones in infer.bin).
  if (trainingMode && (used(1) || used(2))) {
    for (size_t i = 3; i < 5; ++i)
      if (failed(n.requireUnusedOutput(i, "saved batch statistics")))
        return failure();
    Type statisticsType = operands[3].getType();
    auto train = BatchNormTrainOp::create(
        n.builder(), n.getLoc(), operands[0].getType(), statisticsType,
        statisticsType, operands[0], operands[1], operands[2],
        n.builder().getF64FloatAttr(n.floatAttr("epsilon", 1e-5)),
        LayoutAttr::get(n.builder().getContext(), Layout::NCHW));
    Type elementType = cast<RankedTensorType>(statisticsType).getElementType();
    auto blend = [&](Value running, Value batch) -> FailureOr<Value> {
      FailureOr<Value> kept = n.create<MulOp>(
          ValueRange{running, n.scalarConstant(elementType, momentum)});
      FailureOr<Value> fresh = n.create<MulOp>(
          ValueRange{batch, n.scalarConstant(elementType, 1 - momentum)});
      if (failed(kept) || failed(fresh))
        return failure();
      return n.create<AddOp>(ValueRange{*kept, *fresh});
    };
    FailureOr<Value> runningMean = blend(operands[3], train.getMean());
    FailureOr<Value> runningVariance = blend(operands[4], train.getVariance());
    if (failed(runningMean) || failed(runningVariance))
      return failure();
    n.setOutput(1, *runningMean);
    n.setOutput(2, *runningVariance);
    return defineResult(n, train.getResult());
  }
  for (size_t i = 1; i < 5; ++i)
    if (failed(n.requireUnusedOutput(i, "batch statistics")))
      return failure();
  return defineResult(
      n,
      n.create<BatchNormOp>(
          operands,
          {namedAttr(n, "epsilon",
                     n.builder().getF64FloatAttr(n.floatAttr("epsilon", 1e-5))),
           namedAttr(n, "momentum", n.builder().getF64FloatAttr(momentum))}));
}

LogicalResult importLRN(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  if (!n.hasAttr("size"))
    return n.error("expects a size attribute");
  Builder &b = n.builder();
  return defineResult(
      n,
      n.create<LRNOp>(
          *x,
          {namedAttr(n, "size", b.getI64IntegerAttr(n.intAttr("size", 1))),
           namedAttr(n, "alpha", b.getF64FloatAttr(n.floatAttr("alpha", 1e-4))),
           namedAttr(n, "beta", b.getF64FloatAttr(n.floatAttr("beta", 0.75))),
           namedAttr(n, "bias", b.getF64FloatAttr(n.floatAttr("bias", 1.0)))}));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult importGemm(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  if (cast<RankedTensorType>(a->getType()).getRank() != 2 ||
      cast<RankedTensorType>(b->getType()).getRank() != 2)
    return n.error("expects 2-D A and B");
  SmallVector<NamedAttribute> attrs;
  if (n.intAttr("transA", 0))
    attrs.push_back(namedAttr(n, "transpose_a", n.builder().getUnitAttr()));
  if (n.intAttr("transB", 0))
    attrs.push_back(namedAttr(n, "transpose_b", n.builder().getUnitAttr()));
  double alpha = n.floatAttr("alpha", 1.0), beta = n.floatAttr("beta", 1.0);
  FailureOr<Value> product = n.create<MatMulOp>(ValueRange{*a, *b}, attrs);
  if (failed(product))
    return failure();
  Type elementType = cast<RankedTensorType>(a->getType()).getElementType();
  if (alpha != 1.0)
    product = n.create<MulOp>(
        ValueRange{*product, n.scalarConstant(elementType, alpha)});
  if (failed(product) || !n.hasInput(2))
    return defineResult(n, product);
  FailureOr<Value> c = n.input(2);
  if (failed(c))
    return failure();
  if (beta != 1.0)
    c = n.create<MulOp>(ValueRange{*c, n.scalarConstant(elementType, beta)});
  if (failed(c))
    return failure();
  return defineResult(n, n.create<AddOp>(ValueRange{*product, *c}));
}

LogicalResult importMatMul(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  auto aType = cast<RankedTensorType>(a->getType());
  auto bType = cast<RankedTensorType>(b->getType());
  // numpy.matmul promotes 1-D operands to matrices and drops the added
  // dimension from the result.
  bool vectorA = aType.getRank() == 1, vectorB = bType.getRank() == 1;
  if (vectorA)
    a = n.reshape(*a, {1, aType.getDimSize(0)});
  if (vectorB)
    b = n.reshape(*b, {bType.getDimSize(0), 1});
  // A stack of matrices times one matrix (a linear layer over channels-last
  // activations, as ConvNeXt's) is one 2-D product over the stacked rows:
  // one GEMM, and the product the matmul gradient differentiates.
  if (aType.getRank() > 2 && bType.getRank() == 2) {
    ArrayRef<int64_t> shape = aType.getShape();
    int64_t rows = 1;
    for (int64_t dim : shape.drop_back())
      rows *= dim;
    FailureOr<Value> product =
        n.create<MatMulOp>(ValueRange{n.reshape(*a, {rows, shape.back()}), *b});
    if (failed(product))
      return failure();
    SmallVector<int64_t> resultShape(shape);
    resultShape.back() = bType.getDimSize(1);
    return defineResult(n, n.reshape(*product, resultShape));
  }
  FailureOr<Value> product = n.create<MatMulOp>(ValueRange{*a, *b});
  if (failed(product) || (!vectorA && !vectorB))
    return defineResult(n, product);
  auto type = cast<RankedTensorType>(product->getType());
  SmallVector<int64_t> shape(type.getShape());
  if (vectorB)
    shape.pop_back();
  if (vectorA)
    shape.erase(shape.end() - (vectorB ? 1 : 2));
  return defineResult(n, n.reshape(*product, shape));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT> LogicalResult importUnary(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  return defineResult(n, n.create<OpT>(*x));
}

template <typename OpT> LogicalResult importBinary(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  return defineResult(n, n.create<OpT>(ValueRange{*a, *b}));
}

LogicalResult importPow(NodeImporter &n) {
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(a) || failed(b))
    return failure();
  // ONNX allows an exponent of another type; compute in the base's type.
  Type baseType = cast<RankedTensorType>(a->getType()).getElementType();
  if (cast<RankedTensorType>(b->getType()).getElementType() != baseType) {
    b = n.create<CastOp>(*b, {namedAttr(n, "to", TypeAttr::get(baseType))});
    if (failed(b))
      return failure();
  }
  return defineResult(n, n.create<PowOp>(ValueRange{*a, *b}));
}

/// Sum, Max, Min and Mean take one or more inputs.
template <typename OpT, bool Mean = false>
LogicalResult importVariadic(NodeImporter &n) {
  FailureOr<Value> acc = n.input(0);
  for (size_t i = 1; i < n.numInputs() && succeeded(acc); ++i) {
    FailureOr<Value> next = n.input(i);
    if (failed(next))
      return failure();
    acc = n.create<OpT>(ValueRange{*acc, *next});
  }
  if (Mean && succeeded(acc) && n.numInputs() > 1) {
    Type elementType = cast<RankedTensorType>(acc->getType()).getElementType();
    acc = n.create<DivOp>(
        ValueRange{*acc, n.scalarConstant(elementType,
                                          static_cast<double>(n.numInputs()))});
  }
  return defineResult(n, acc);
}

LogicalResult importLeakyRelu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  return defineResult(n, n.create<LeakyReluOp>(
                             *x, {namedAttr(n, "alpha",
                                            n.builder().getF64FloatAttr(
                                                n.floatAttr("alpha", 0.01)))}));
}

LogicalResult importClip(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  for (auto [index, bound] : {std::pair<size_t, double *>{1, &lo}, {2, &hi}}) {
    if (!n.hasInput(index))
      continue;
    FailureOr<double> value = n.constantScalar(index);
    if (failed(value))
      return failure();
    *bound = *value;
  }
  Builder &b = n.builder();
  return defineResult(
      n, n.create<ClipOp>(*x, {namedAttr(n, "min", b.getF64FloatAttr(lo)),
                               namedAttr(n, "max", b.getF64FloatAttr(hi))}));
}

/// max(0, min(1, alpha * x + beta)) as mul, add and clip, whose gradients
/// the training step already has.
FailureOr<Value> hardSigmoid(NodeImporter &n, Value x, double alpha,
                             double beta) {
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  FailureOr<Value> linear = x;
  if (alpha != 1.0)
    linear = n.create<MulOp>(
        ValueRange{*linear, n.scalarConstant(elementType, alpha)});
  if (succeeded(linear) && beta != 0.0)
    linear = n.create<AddOp>(
        ValueRange{*linear, n.scalarConstant(elementType, beta)});
  if (failed(linear))
    return failure();
  Builder &b = n.builder();
  return n.create<ClipOp>(*linear, {namedAttr(n, "min", b.getF64FloatAttr(0)),
                                    namedAttr(n, "max", b.getF64FloatAttr(1))});
}

LogicalResult importHardSigmoid(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  double alpha = n.floatAttr("alpha", 0.2), beta = n.floatAttr("beta", 0.5);
  for (auto [name, value] :
       {std::pair<StringRef, double>{"alpha", alpha}, {"beta", beta}})
    if (!std::isfinite(value))
      return n.error("attribute '" + name + "' must be a finite number");
  return defineResult(n, hardSigmoid(n, *x, alpha, beta));
}

/// x * HardSigmoid(x) with alpha 1/6 and beta 0.5 (opset 14's definition;
/// PyTorch's x * relu6(x + 3) / 6).
LogicalResult importHardSwish(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> gate = hardSigmoid(n, *x, 1.0 / 6.0, 0.5);
  if (failed(gate))
    return failure();
  return defineResult(n, n.create<MulOp>(ValueRange{*x, *gate}));
}

LogicalResult importDropout(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  double ratio = 0.5;
  if (n.hasInput(1)) {
    FailureOr<double> value = n.constantScalar(1);
    if (failed(value))
      return failure();
    ratio = *value;
  }
  // training_mode (input 2) and seed describe how the exporter ran; fastnn
  // decides training behaviour itself and draws from its own seeded RNG.
  (void)n.intAttr("seed", 0);
  if (n.node().output_size() > 1 && n.isUsed(1)) {
    // The mask is only defined here when the node is in inference mode,
    // where it is all true; a training-mode mask is the trainer's.
    bool training = false;
    if (n.hasInput(2)) {
      FailureOr<double> mode = n.constantScalar(2);
      if (failed(mode))
        return failure();
      training = *mode != 0;
    }
    if (training && ratio != 0.0)
      return n.error("the mask output of a training-mode Dropout is not "
                     "supported");
    auto maskType =
        cast<RankedTensorType>(x->getType()).clone(n.builder().getI1Type());
    n.setOutput(1, ConstantOp::create(n.builder(), n.getLoc(),
                                      DenseElementsAttr::get(maskType, true)));
  }
  return defineResult(
      n, n.create<DropoutOp>(
             *x, {namedAttr(n, "ratio", n.builder().getF64FloatAttr(ratio))}));
}

LogicalResult importCast(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  Type to = convertElementType(n.intAttr("to", 0), n.context());
  if (!to)
    return n.error("unsupported target type in attribute 'to'");
  return defineResult(
      n, n.create<CastOp>(*x, {namedAttr(n, "to", TypeAttr::get(to))}));
}

/// Axes of Squeeze, Unsqueeze and the reductions: an attribute in older
/// opsets, a constant second input in newer ones.
FailureOr<std::optional<SmallVector<int64_t>>> readAxes(NodeImporter &n) {
  std::optional<SmallVector<int64_t>> axes = n.intsAttr("axes");
  if (n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> values = n.constantInts(1);
    if (failed(values))
      return failure();
    axes = *values;
  }
  return axes;
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

template <typename OpT> LogicalResult importSoftmax(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.intAttr("axis", -1), type->getRank());
  if (failed(axis))
    return failure();
  return defineResult(
      n, n.create<OpT>(
             *n.input(0),
             {namedAttr(n, "axis", n.builder().getI64IntegerAttr(*axis))}));
}

/// ReduceSum takes its axes as an input from opset 13, the others from 18;
/// both forms are accepted.
template <typename OpT> LogicalResult importReduce(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axesOrNone = readAxes(n);
  if (failed(axesOrNone))
    return failure();
  SmallVector<int64_t> rawAxes = axesOrNone->value_or(SmallVector<int64_t>{});
  bool keepdims = n.intAttr("keepdims", 1) != 0;
  bool noopWithEmptyAxes = n.intAttr("noop_with_empty_axes", 0) != 0;
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

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

LogicalResult importConcat(NodeImporter &n) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    FailureOr<Value> v = n.input(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return n.error("expects at least one input");
  int64_t rank = cast<RankedTensorType>(inputs.front().getType()).getRank();
  FailureOr<int64_t> axis = n.normalizeAxis(n.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  return defineResult(
      n, n.create<ConcatOp>(
             inputs,
             {namedAttr(n, "axis", n.builder().getI64IntegerAttr(*axis))}));
}

LogicalResult importReshape(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  FailureOr<SmallVector<int64_t>> requested = n.constantInts(1);
  if (failed(type) || failed(requested))
    return failure();
  bool allowZero = n.intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int64_t inferred = -1, known = 1;
  for (auto [i, dim] : llvm::enumerate(*requested)) {
    if (dim == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type->getRank())
        return n.error("shape entry " + Twine(i) +
                       " copies a dimension the input does not have");
      dim = type->getDimSize(i);
    }
    if (dim == -1) {
      if (inferred >= 0)
        return n.error("shape has more than one -1");
      inferred = i;
    } else if (dim < 0) {
      return n.error("shape has a negative size " + Twine(dim));
    } else {
      known *= dim;
    }
    shape.push_back(dim);
  }
  if (inferred >= 0) {
    if (known == 0 || type->getNumElements() % known != 0)
      return n.error("cannot infer the -1 in the shape for " +
                     Twine(type->getNumElements()) + " elements");
    shape[inferred] = type->getNumElements() / known;
  }
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  if (count != type->getNumElements())
    return n.error("cannot reshape " + Twine(type->getNumElements()) +
                   " elements into " + Twine(count) +
                   " (a shape fixed at export for another batch size?)");
  n.setOutput(0, n.reshape(*n.input(0), shape));
  return success();
}

LogicalResult importFlatten(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t axis = n.intAttr("axis", 1);
  if (axis < -rank || axis > rank)
    return n.error("axis " + Twine(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= type->getDimSize(d);
  n.setOutput(0, n.reshape(*n.input(0), {outer, inner}));
  return success();
}

LogicalResult importSqueeze(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axesOrNone = readAxes(n);
  if (failed(axesOrNone))
    return failure();
  std::optional<SmallVector<int64_t>> axes = *axesOrNone;
  SmallVector<bool> drop(type->getRank(), false);
  if (!axes || axes->empty()) {
    for (int64_t d = 0; d < type->getRank(); ++d)
      drop[d] = type->getDimSize(d) == 1;
  } else {
    for (int64_t axis : *axes) {
      FailureOr<int64_t> d = n.normalizeAxis(axis, type->getRank());
      if (failed(d))
        return failure();
      if (type->getDimSize(*d) != 1)
        return n.error("cannot squeeze dimension " + Twine(*d) + " of size " +
                       Twine(type->getDimSize(*d)));
      drop[*d] = true;
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type->getRank(); ++d)
    if (!drop[d])
      shape.push_back(type->getDimSize(d));
  n.setOutput(0, n.reshape(*n.input(0), shape));
  return success();
}

LogicalResult importUnsqueeze(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axesOrNone = readAxes(n);
  if (failed(axesOrNone))
    return failure();
  std::optional<SmallVector<int64_t>> axes = *axesOrNone;
  if (!axes)
    return n.error("expects axes");
  int64_t rank = type->getRank() + axes->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : *axes) {
    FailureOr<int64_t> d = n.normalizeAxis(axis, rank);
    if (failed(d))
      return failure();
    if (inserted[*d])
      return n.error("axis " + Twine(axis) + " is repeated");
    inserted[*d] = true;
  }
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : type->getDimSize(next++));
  n.setOutput(0, n.reshape(*n.input(0), shape));
  return success();
}

LogicalResult importTranspose(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  SmallVector<int64_t> perm;
  if (auto attr = n.intsAttr("perm")) {
    perm = *attr;
  } else {
    for (int64_t d = type->getRank() - 1; d >= 0; --d)
      perm.push_back(d);
  }
  return defineResult(
      n, n.create<TransposeOp>(
             *n.input(0), {namedAttr(n, "permutation", i64Array(n, perm))}));
}

LogicalResult importPad(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  std::optional<SmallVector<int64_t>> pads = n.intsAttr("pads");
  double value = n.floatAttr("value", 0.0);
  if (n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> values = n.constantInts(1);
    if (failed(values))
      return failure();
    pads = *values;
  }
  if (n.hasInput(2)) {
    FailureOr<double> fill = n.constantScalar(2);
    if (failed(fill))
      return failure();
    value = *fill;
  }
  if (!pads)
    return n.error("expects pads");
  if (llvm::any_of(*pads, [](int64_t p) { return p < 0; }))
    return n.error("negative pads (cropping) are not supported; use Slice");
  std::string mode = n.stringAttr("mode", "constant");
  PadMode padMode;
  if (mode == "constant")
    padMode = PadMode::Constant;
  else if (mode == "reflect")
    padMode = PadMode::Reflect;
  else if (mode == "edge")
    padMode = PadMode::Edge;
  else
    return n.error("unsupported mode '" + mode + "'");
  return defineResult(
      n, n.create<PadOp>(
             *n.input(0),
             {namedAttr(n, "pads", i64Array(n, *pads)),
              namedAttr(n, "mode", PadModeAttr::get(n.context(), padMode)),
              namedAttr(n, "value", n.builder().getF64FloatAttr(value))}));
}

LogicalResult importSlice(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (n.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> s = n.constantInts(1),
                                    e = n.constantInts(2);
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (n.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = n.constantInts(3);
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (n.hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = n.constantInts(4);
      if (failed(st))
        return failure();
      steps = *st;
    }
  } else {
    starts = n.intsAttr("starts").value_or(SmallVector<int64_t>{});
    ends = n.intsAttr("ends").value_or(SmallVector<int64_t>{});
    axes = n.intsAttr("axes").value_or(SmallVector<int64_t>{});
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return n.error("starts, ends, axes and steps differ in length");

  int64_t rank = type->getRank();
  SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
  SmallVector<int64_t> shape(type->getShape());
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = n.normalizeAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    int64_t dim = type->getDimSize(*axis), step = steps[i];
    if (step == 0)
      return n.error("step 0 on axis " + Twine(*axis));
    // ONNX clamps starts and ends into the dimension (see the Slice spec).
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = std::max<int64_t>(0, (end - start + step - 1) / step);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      size = std::max<int64_t>(0, (start - end - step - 1) / -step);
    }
    offsets[*axis] = size > 0 ? start : 0;
    strides[*axis] = step;
    shape[*axis] = size;
  }
  Operation *op = SliceOp::create(n.builder(), n.getLoc(), type->clone(shape),
                                  *n.input(0), offsets, strides);
  n.setOutput(0, n.fold(op));
  return success();
}

LogicalResult importGather(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  FailureOr<Value> indices = n.input(1);
  if (failed(type) || failed(indices))
    return failure();
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.intAttr("axis", 0), type->getRank());
  if (failed(axis))
    return failure();
  return defineResult(
      n, n.create<GatherOp>(
             ValueRange{*n.input(0), *indices},
             {namedAttr(n, "axis", n.builder().getI64IntegerAttr(*axis))}));
}

LogicalResult importShape(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t start = n.intAttr("start", 0), end = n.intAttr("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d)
    dims.push_back(type->getDimSize(d));
  auto resultType = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                          n.builder().getI64Type());
  n.setOutput(0, ConstantOp::create(n.builder(), n.getLoc(),
                                    DenseElementsAttr::get(
                                        resultType, ArrayRef<int64_t>(dims))));
  return success();
}

LogicalResult importConstant(NodeImporter &n) {
  Builder &b = n.builder();
  DenseElementsAttr value;
  if (const onnx::TensorProto *tensor = n.tensorAttr("value")) {
    Type elementType = convertElementType(tensor->data_type(), n.context());
    if (!elementType)
      return n.error("unsupported element type of attribute 'value'");
    SmallVector<int64_t> shape(tensor->dims().begin(), tensor->dims().end());
    auto type = RankedTensorType::get(shape, elementType);
    std::vector<char> data;
    if (std::string error = readTensorData(*tensor, "", type, data);
        !error.empty())
      return n.error(error);
    value = makeDenseAttr(type, data);
  } else if (n.hasAttr("value_float")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({}, b.getF32Type()),
        static_cast<float>(n.floatAttr("value_float", 0)));
  } else if (auto floats = n.floatsAttr("value_floats")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(floats->size())},
                              b.getF32Type()),
        ArrayRef<float>(*floats));
  } else if (n.hasAttr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   n.intAttr("value_int", 0));
  } else if (auto ints = n.intsAttr("value_ints")) {
    value = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(ints->size())},
                              b.getI64Type()),
        ArrayRef<int64_t>(*ints));
  } else {
    return n.error("expects a tensor, float(s) or int(s) value (sparse and "
                   "string constants are not supported)");
  }
  n.setOutput(0, ConstantOp::create(n.builder(), n.getLoc(), value));
  return success();
}

LogicalResult importIdentity(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  n.setOutput(0, n.untieParameter(*x));
  return success();
}

} // namespace

Value NodeImporter::untieParameter(Value value) {
  if (node().output_size() == 0 || node().output(0).empty())
    return value;
  return graph.untieParameter(value, node().output(0), loc);
}

bool isConstantOperand(StringRef opType, int index) {
  static const llvm::StringMap<std::vector<int>> positions = {
      {"Clip", {1, 2}},   {"Dropout", {1, 2}}, {"Pad", {1, 2}},
      {"ReduceMax", {1}}, {"ReduceMean", {1}}, {"ReduceMin", {1}},
      {"ReduceSum", {1}}, {"Reshape", {1}},    {"Slice", {1, 2, 3, 4}},
      {"Squeeze", {1}},   {"Unsqueeze", {1}},
  };
  auto it = positions.find(opType);
  return it != positions.end() && llvm::is_contained(it->second, index);
}

OpImporter lookupOpImporter(StringRef opType) {
  static const llvm::StringMap<OpImporter> importers = {
      {"Abs", importUnary<AbsOp>},
      {"Add", importBinary<AddOp>},
      {"AveragePool", importAveragePool},
      {"BatchNormalization", importBatchNormalization},
      {"Cast", importCast},
      {"Clip", importClip},
      {"Concat", importConcat},
      {"Constant", importConstant},
      {"Conv", importConv},
      {"Div", importBinary<DivOp>},
      {"Dropout", importDropout},
      {"Erf", importUnary<ErfOp>},
      {"Exp", importUnary<ExpOp>},
      {"Flatten", importFlatten},
      {"Gather", importGather},
      {"Gemm", importGemm},
      {"GlobalAveragePool", importGlobalPool<ReduceMeanOp>},
      {"GlobalMaxPool", importGlobalPool<ReduceMaxOp>},
      {"HardSigmoid", importHardSigmoid},
      {"HardSwish", importHardSwish},
      {"Identity", importIdentity},
      {"LRN", importLRN},
      {"LeakyRelu", importLeakyRelu},
      {"Log", importUnary<LogOp>},
      {"LogSoftmax", importSoftmax<LogSoftmaxOp>},
      {"MatMul", importMatMul},
      {"Max", importVariadic<MaxOp>},
      {"MaxPool", importMaxPool},
      {"Mean", importVariadic<AddOp, /*Mean=*/true>},
      {"Min", importVariadic<MinOp>},
      {"Mul", importBinary<MulOp>},
      {"Neg", importUnary<NegOp>},
      {"Pad", importPad},
      {"Pow", importPow},
      {"Reciprocal", importUnary<ReciprocalOp>},
      {"ReduceMax", importReduce<ReduceMaxOp>},
      {"ReduceMean", importReduce<ReduceMeanOp>},
      {"ReduceMin", importReduce<ReduceMinOp>},
      {"ReduceSum", importReduce<ReduceSumOp>},
      {"Relu", importUnary<ReluOp>},
      {"Reshape", importReshape},
      {"Shape", importShape},
      {"Sigmoid", importUnary<SigmoidOp>},
      {"Slice", importSlice},
      {"Softmax", importSoftmax<SoftmaxOp>},
      {"Sqrt", importUnary<SqrtOp>},
      {"Squeeze", importSqueeze},
      {"Sub", importBinary<SubOp>},
      {"Sum", importVariadic<AddOp>},
      {"Tanh", importUnary<TanhOp>},
      {"Transpose", importTranspose},
      {"Unsqueeze", importUnsqueeze},
  };
  auto it = importers.find(opType);
  return it == importers.end() ? nullptr : it->second;
}

} // namespace fastnn::onnx_import
