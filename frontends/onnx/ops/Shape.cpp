//===- Shape.cpp - ONNX shape and data movement ---------------------------===//
//
// Operators that reshape, reorder, pad, split or select data, Shape,
// ConstantOfShape and Range (constants under static shapes), Trilu and
// Identity. Their shape operands must be constants.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Dialect/FastNN/IR/ShapeInference.h"

#include "mlir/IR/Matchers.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

LogicalResult importConcat(NodeImporter &n) {
  FailureOr<SmallVector<Value>> all = n.allInputs();
  if (failed(all))
    return failure();
  SmallVector<Value> &inputs = *all;
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
    } else if (llvm::MulOverflow(known, dim, known)) {
      return n.error("shape has more elements than 64 bits can count");
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
    if (llvm::MulOverflow(count, dim, count))
      return n.error("shape has more elements than 64 bits can count");
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
  FailureOr<std::optional<SmallVector<int64_t>>> axesOrNone =
      readAxes(n, /*axesInput=*/true);
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
  FailureOr<std::optional<SmallVector<int64_t>>> axesOrNone =
      readAxes(n, /*axesInput=*/true);
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

/// Pads with mode 'wrap' (Pad 19): along each axis the result is the input
/// repeated periodically, built from slices of it and their concatenation
/// (index i of the padded axis reads input index (i - before) mod size).
FailureOr<Value> wrapPad(NodeImporter &n, Value input, ArrayRef<int64_t> pads) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t before = pads[d], after = pads[d + rank];
    if (before == 0 && after == 0)
      continue;
    auto type = cast<RankedTensorType>(input.getType());
    int64_t size = type.getDimSize(d);
    if (size == 0)
      return n.error("cannot wrap-pad axis " + Twine(d) + " of size 0");
    SmallVector<Value> pieces;
    for (int64_t i = -before; i < size + after;) {
      int64_t from = ((i % size) + size) % size;
      int64_t length = std::min(size - from, size + after - i);
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      SmallVector<int64_t> shape(type.getShape());
      offsets[d] = from;
      shape[d] = length;
      pieces.push_back(
          n.fold(SliceOp::create(n.builder(), n.getLoc(), type.clone(shape),
                                 input, offsets, strides)));
      i += length;
    }
    FailureOr<Value> joined = n.create<ConcatOp>(
        pieces, {namedAttr(n, "axis", n.builder().getI64IntegerAttr(d))});
    if (failed(joined))
      return failure();
    input = *joined;
  }
  return input;
}

/// Pads are input 1 and the constant value input 2; from version 18 input 3
/// names the axes the pads are for (the others are not padded), and
/// version 19 adds mode 'wrap'.
LogicalResult importPad(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  FailureOr<SmallVector<int64_t>> given = n.constantInts(1);
  if (failed(given))
    return failure();
  double value = 0.0;
  if (n.hasInput(2)) {
    FailureOr<double> fill = n.constantScalar(2);
    if (failed(fill))
      return failure();
    value = *fill;
  }
  SmallVector<int64_t> pads = *given;
  if (n.version() >= 18 && n.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> axes = n.constantInts(3);
    if (failed(axes))
      return failure();
    if (given->size() != 2 * axes->size())
      return n.error("expects 2 pads per axis, got " + Twine(given->size()) +
                     " pads for " + Twine(axes->size()) + " axes");
    pads.assign(2 * rank, 0);
    for (auto [i, axis] : llvm::enumerate(*axes)) {
      FailureOr<int64_t> d = n.normalizeAxis(axis, rank);
      if (failed(d))
        return failure();
      pads[*d] = (*given)[i];
      pads[*d + rank] = (*given)[i + axes->size()];
    }
  } else if (n.hasInput(3)) {
    return n.error("input 3 (axes) needs Pad version 18 (opset 18)");
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return n.error("expects " + Twine(2 * rank) + " pads for rank " +
                   Twine(rank) + ", got " + Twine(pads.size()));
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return n.error("negative pads (cropping) are not supported; use Slice");
  std::string mode = n.stringAttr("mode", "constant");
  if (mode == "wrap" && n.version() >= 19)
    return defineResult(n, wrapPad(n, *n.input(0), pads));
  PadMode padMode;
  if (mode == "constant")
    padMode = PadMode::Constant;
  else if (mode == "reflect")
    padMode = PadMode::Reflect;
  else if (mode == "edge")
    padMode = PadMode::Edge;
  else
    return n.error("unsupported mode '" + mode + "'" +
                   (mode == "wrap" ? " before Pad version 19 (opset 19)" : ""));
  return defineResult(
      n, n.create<PadOp>(
             *n.input(0),
             {namedAttr(n, "pads", i64Array(n, pads)),
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

/// The input numpy-broadcast with a constant shape (either may have the
/// larger dimension).
LogicalResult importExpand(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  FailureOr<SmallVector<int64_t>> requested = n.constantInts(1);
  if (failed(x) || failed(requested))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (llvm::any_of(*requested, [](int64_t d) { return d < 0; }))
    return n.error("shape has a negative size");
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(type.getShape(), *requested);
  if (!shape)
    return n.error("shape does not broadcast with the input's");
  return defineResult(n, n.fold(BroadcastOp::create(n.builder(), n.getLoc(),
                                                    type.clone(*shape), *x)));
}

/// Each dimension d repeated r times as a broadcast of [1, d] to [r, d]
/// between reshapes: the whole of each dimension repeats, outermost first.
LogicalResult importTile(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  FailureOr<SmallVector<int64_t>> repeats = n.constantInts(1);
  if (failed(x) || failed(repeats))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (static_cast<int64_t>(repeats->size()) != type.getRank())
    return n.error("expects one repeat per input dimension, got " +
                   Twine(repeats->size()) + " for rank " +
                   Twine(type.getRank()));
  if (llvm::any_of(*repeats, [](int64_t r) { return r < 0; }))
    return n.error("repeats must not be negative");
  SmallVector<int64_t> split, expanded, result;
  for (auto [r, d] : llvm::zip(*repeats, type.getShape())) {
    split.append({1, d});
    expanded.append({r, d});
    result.push_back(r * d);
  }
  Value tiled = n.fold(BroadcastOp::create(
      n.builder(), n.getLoc(), type.clone(expanded), n.reshape(*x, split)));
  return defineResult(n, n.reshape(tiled, result));
}

/// The input cut along `axis` into the sizes of input 1 (a constant), or
/// into as many near-equal parts as the node has outputs (num_outputs from
/// version 18), the last one smaller when the size does not divide.
LogicalResult importSplit(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  FailureOr<int64_t> axis =
      n.normalizeAxis(n.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = type.getDimSize(*axis);
  int64_t outputs = n.node().output_size();
  bool hasNumOutputs = n.version() >= 18 && n.hasAttr("num_outputs");
  SmallVector<int64_t> sizes;
  if (n.hasInput(1)) {
    if (hasNumOutputs)
      return n.error("takes input 'split' or attribute num_outputs, not both");
    FailureOr<SmallVector<int64_t>> given = n.constantInts(1);
    if (failed(given))
      return failure();
    sizes = *given;
  } else {
    int64_t parts = hasNumOutputs ? n.intAttr("num_outputs", 0) : outputs;
    if (parts < 1)
      return n.error("num_outputs must be positive, got " + Twine(parts));
    if (parts != outputs)
      return n.error("num_outputs is " + Twine(parts) + " but the node has " +
                     Twine(outputs) + " outputs");
    if (!hasNumOutputs && dim % parts != 0)
      return n.error("cannot split size " + Twine(dim) + " into " +
                     Twine(parts) + " equal parts");
    int64_t chunk = (dim + parts - 1) / parts;
    sizes.assign(parts, chunk);
    sizes.back() = dim - chunk * (parts - 1);
    if (sizes.back() < 0)
      return n.error("cannot split size " + Twine(dim) + " into " +
                     Twine(parts) + " parts");
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    return n.error("split has " + Twine(sizes.size()) +
                   " sizes but the node has " + Twine(outputs) + " outputs");
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return n.error("split has a negative size " + Twine(size));
    if (size == 0)
      return n.error("split has a part of size 0; fastnn computes on tensors "
                     "of at least one element");
    total += size;
  }
  if (total != dim)
    return n.error("split sizes add up to " + Twine(total) + ", not the size " +
                   Twine(dim) + " of axis " + Twine(*axis));
  SmallVector<int64_t> offsets(type.getRank(), 0), steps(type.getRank(), 1);
  SmallVector<int64_t> shape(type.getShape());
  for (auto [i, size] : llvm::enumerate(sizes)) {
    shape[*axis] = size;
    n.setOutput(i,
                n.fold(SliceOp::create(n.builder(), n.getLoc(),
                                       type.clone(shape), *x, offsets, steps)));
    offsets[*axis] += size;
  }
  return success();
}

/// A constant: the one-element `value` (float 0 by default) broadcast to the
/// shape of input 0.
LogicalResult importConstantOfShape(NodeImporter &n) {
  FailureOr<SmallVector<int64_t>> shape = n.constantInts(0);
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return n.error("shape has a negative size");
  Attribute element = n.builder().getF32FloatAttr(0);
  Type elementType = n.builder().getF32Type();
  if (const onnx::TensorProto *tensor = n.tensorAttr("value")) {
    elementType = convertElementType(tensor->data_type(), n.context());
    if (!elementType)
      return n.error("unsupported element type of attribute 'value'");
    RankedTensorType valueType;
    std::vector<char> data;
    if (std::string error = tensorTypeOf(*tensor, elementType, valueType);
        !error.empty())
      return n.error(error);
    if (valueType.getNumElements() != 1)
      return n.error("attribute 'value' must hold one element, not " +
                     Twine(valueType.getNumElements()));
    if (tensor->data_location() == onnx::TensorProto::EXTERNAL)
      return n.error("attribute 'value' stores its data externally; only "
                     "initializers may");
    if (std::string error = readTensorData(*tensor, "", valueType, data);
        !error.empty())
      return n.error(error);
    element = *makeDenseAttr(valueType, data).getValues<Attribute>().begin();
  }
  n.setOutput(0, ConstantOp::create(
                     n.builder(), n.getLoc(),
                     DenseElementsAttr::get(
                         RankedTensorType::get(*shape, elementType), element)));
  return success();
}

/// start, start + delta, ... up to limit (exclusive), from constant scalars:
/// a constant, as static shapes require. Integers are computed exactly,
/// floating-point values in double (Range 27's stash_type names the
/// precision for float16 and bfloat16, which double holds as well).
LogicalResult importRange(NodeImporter &n) {
  FailureOr<DenseElementsAttr> startAttr = n.constantInput(0);
  FailureOr<double> start = n.constantScalar(0), limit = n.constantScalar(1),
                    delta = n.constantScalar(2);
  if (failed(startAttr) || failed(start) || failed(limit) || failed(delta))
    return failure();
  if (n.version() >= 27)
    (void)n.intAttr("stash_type", 1);
  if (*delta == 0)
    return n.error("delta must not be 0");
  double steps = std::ceil((*limit - *start) / *delta);
  if (!(steps < static_cast<double>(std::numeric_limits<int32_t>::max())))
    return n.error("the range has too many elements");
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
  Type elementType = startAttr->getElementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < count; ++i) {
    if (isa<FloatType>(elementType)) {
      values.push_back(FloatAttr::get(elementType, *start + i * *delta));
    } else {
      values.push_back(
          IntegerAttr::get(elementType, static_cast<int64_t>(*start) +
                                            i * static_cast<int64_t>(*delta)));
    }
  }
  n.setOutput(0, ConstantOp::create(
                     n.builder(), n.getLoc(),
                     DenseElementsAttr::get(
                         RankedTensorType::get({count}, elementType), values)));
  return success();
}

/// The upper (or lower) triangle of the last two dimensions from diagonal k
/// on, zeros elsewhere: folded for a constant input, otherwise a select
/// between the input and zeros with a constant mask (the gradient flows
/// where the mask keeps the input).
LogicalResult importTrilu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  if (type.getRank() < 2)
    return n.error("expects an input of rank >= 2");
  int64_t k = 0;
  if (n.hasInput(1)) {
    FailureOr<double> diagonal = n.constantScalar(1);
    if (failed(diagonal))
      return failure();
    k = static_cast<int64_t>(*diagonal);
  }
  bool upper = n.intAttr("upper", 1) != 0;
  int64_t rows = type.getDimSize(type.getRank() - 2);
  int64_t columns = type.getDimSize(type.getRank() - 1);
  auto keeps = [&](int64_t row, int64_t column) {
    return upper ? column - row >= k : column - row <= k;
  };
  Type elementType = type.getElementType();
  Attribute zero = isa<FloatType>(elementType)
                       ? Attribute(FloatAttr::get(elementType, 0.0))
                       : Attribute(IntegerAttr::get(elementType, 0));
  DenseElementsAttr constant;
  if (matchPattern(*x, m_Constant(&constant))) {
    SmallVector<Attribute> values(constant.getValues<Attribute>());
    for (auto [i, value] : llvm::enumerate(values))
      if (!keeps((i / columns) % rows, i % columns))
        value = zero;
    n.setOutput(0, ConstantOp::create(n.builder(), n.getLoc(),
                                      DenseElementsAttr::get(type, values)));
    return success();
  }
  SmallVector<bool> mask;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t column = 0; column < columns; ++column)
      mask.push_back(keeps(row, column));
  Value maskValue = ConstantOp::create(
      n.builder(), n.getLoc(),
      DenseElementsAttr::get(
          RankedTensorType::get({rows, columns}, n.builder().getI1Type()),
          ArrayRef<bool>(mask)));
  Value zeros = ConstantOp::create(
      n.builder(), n.getLoc(),
      DenseElementsAttr::get(RankedTensorType::get({}, elementType), zero));
  return defineResult(n, n.create<SelectOp>(ValueRange{maskValue, *x, zeros}));
}

LogicalResult importIdentity(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  n.setOutput(0, n.untieParameter(*x));
  return success();
}

} // namespace

std::vector<OpRecord> shapeOpRecords() {
  return {
      // Versions 19 and later only add element types, except where the
      // importer says otherwise.
      {"Concat", importConcat, {13}},
      {"ConstantOfShape", importConstantOfShape, {9, 20, 21, 23, 24, 25}, {0}},
      {"Expand", importExpand, {13}, {1}},
      {"Flatten", importFlatten, {13, 21, 23, 24, 25}},
      {"Gather", importGather, {13}},
      {"Identity", importIdentity, {13, 14, 16, 19, 21, 23, 24, 25}},
      {"Pad", importPad, {13, 18, 19, 21, 23, 24, 25}, {1, 2, 3}},
      // Range 27 adds stash_type, the precision of float16 ranges.
      {"Range", importRange, {11, 27}, {0, 1, 2}},
      {"Reshape", importReshape, {13, 14, 19, 21, 23, 24, 25}, {1}},
      {"Shape", importShape, {13, 15, 19, 21, 23, 24, 25}},
      {"Slice", importSlice, {13}, {1, 2, 3, 4}},
      // Split 18 adds num_outputs.
      {"Split", importSplit, {13, 18}, {1}},
      {"Squeeze", importSqueeze, {13, 21, 23, 24, 25}, {1}},
      {"Tile", importTile, {13}, {1}},
      {"Trilu", importTrilu, {14}, {1}},
      {"Transpose", importTranspose, {13, 21, 23, 24, 25}},
      {"Unsqueeze", importUnsqueeze, {13, 21, 23, 24, 25}, {1}},
  };
}

} // namespace fastnn::onnx_import
