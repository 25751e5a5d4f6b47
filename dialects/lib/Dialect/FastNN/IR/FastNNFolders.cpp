//===- FastNNFolders.cpp - fastnn folders and canonicalizations -----------===//
//
// Exporters compute shapes at run time (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape); with static shapes those chains are constants, and
// these folders reduce them so that the importer and later passes see plain
// constants. Constant folding is bounded to small tensors: it exists for
// shape arithmetic, not for precomputing weights.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace {

/// Largest constant the folders materialise.
constexpr int64_t kMaxFoldedElements = 4096;

DenseElementsAttr smallDense(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldedElements)
    return nullptr;
  return dense;
}

/// The constant of `type` whose element at each multi-index is `input`'s
/// element at the flat position `source(index)`.
DenseElementsAttr
gatherElements(DenseElementsAttr input, RankedTensorType type,
               llvm::function_ref<int64_t(ArrayRef<int64_t>)> source) {
  SmallVector<Attribute> values(input.getValues<Attribute>());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<Attribute> result;
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    result.push_back(values[source(index)]);
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(type, result);
}

/// `input` numpy-broadcast to `type` (dimensions aligned from the right;
/// the verifiers checked that the shapes broadcast).
DenseElementsAttr broadcastElements(DenseElementsAttr input,
                                    RankedTensorType type) {
  if (input.getType() == type)
    return input;
  if (input.isSplat())
    return DenseElementsAttr::get(type, input.getSplatValue<Attribute>());
  ArrayRef<int64_t> inputShape = input.getType().getShape();
  SmallVector<int64_t> strides = computeStrides(inputShape);
  size_t leading = type.getRank() - inputShape.size();
  return gatherElements(input, type, [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t d = 0; d < inputShape.size(); ++d)
      if (inputShape[d] != 1)
        flat += index[leading + d] * strides[d];
    return flat;
  });
}

/// True if `attr` is a splat equal to `value` (an integer, or a float
/// compared exactly).
bool isSplatOf(Attribute attr, double value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (isa<FloatType>(elementType)) {
    APFloat v = splat.getSplatValue<APFloat>();
    return v.isExactlyValue(value) && v.isNegative() == std::signbit(value);
  }
  if (elementType.isInteger())
    return static_cast<double>(splat.getSplatValue<APInt>().getSExtValue()) ==
           value;
  return false;
}

/// The value of `x op identity` when `identity` broadcasts into x unchanged.
OpFoldResult foldIdentityOperand(Value x, Attribute other, Type resultType,
                                 double identity) {
  if (x.getType() == resultType && isSplatOf(other, identity))
    return x;
  return {};
}

/// True for the integer types whose values are unsigned: ui8, and i1 (bool).
bool isUnsignedElement(Type type) {
  return type.isUnsignedInteger() || type.isInteger(1);
}

template <typename FloatFn, typename IntFn>
OpFoldResult foldConstantBinary(ArrayRef<Attribute> operands, Type resultType,
                                FloatFn floatFn, IntFn intFn) {
  DenseElementsAttr lhs = smallDense(operands[0]);
  DenseElementsAttr rhs = smallDense(operands[1]);
  auto shaped = dyn_cast<ShapedType>(resultType);
  if (!lhs || !rhs || !shaped ||
      lhs.getElementType() != shaped.getElementType() ||
      rhs.getElementType() != shaped.getElementType())
    return {};
  // Operands broadcast to the result fold at the result's shape: a splat
  // (shape arithmetic divides a shape by a one-element constant) and, for
  // integers, any (a column of offsets added to a row).
  auto resultTensor = dyn_cast<RankedTensorType>(resultType);
  if (!resultTensor)
    return {};
  for (DenseElementsAttr *operand : {&lhs, &rhs}) {
    if (operand->getType() != resultTensor && !operand->isSplat() &&
        (!operand->getElementType().isInteger() ||
         resultTensor.getNumElements() > kMaxFoldedElements))
      return {};
    *operand = broadcastElements(*operand, resultTensor);
  }
  Attribute same[2] = {lhs, rhs};
  // fastnn has no poison values, hence `void` for the poison attribute.
  if (isa<FloatType>(lhs.getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(same, resultType,
                                                       floatFn);
  return constFoldBinaryOpConditional<IntegerAttr, APInt, void>(
      same, resultType, intFn);
}

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor adaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isa<FloatType>(getType().getElementType())) {
    // x + -0.0 is x for every x, including -0.0.
    if (OpFoldResult r =
            foldIdentityOperand(getLhs(), adaptor.getRhs(), getType(), -0.0))
      return r;
  } else if (OpFoldResult r = foldIdentityOperand(getLhs(), adaptor.getRhs(),
                                                  getType(), 0)) {
    return r;
  }
  return foldConstantBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a + b; },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a + b;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r =
          foldIdentityOperand(getLhs(), adaptor.getRhs(), getType(), 0))
    return r;
  return foldConstantBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a - b; },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a - b;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r =
          foldIdentityOperand(getLhs(), adaptor.getRhs(), getType(), 1))
    return r;
  return foldConstantBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a * b; },
      [](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return a * b;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult r =
          foldIdentityOperand(getLhs(), adaptor.getRhs(), getType(), 1))
    return r;
  bool isUnsigned = isUnsignedElement(getType().getElementType());
  return foldConstantBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return a / b; },
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        // ONNX integer division truncates; a zero divisor, and the one
        // quotient that overflows (INT_MIN / -1), are left to run time.
        if (b.isZero())
          return std::nullopt;
        if (isUnsigned)
          return a.udiv(b);
        bool overflow;
        APInt quotient = a.sdiv_ov(b, overflow);
        if (overflow)
          return std::nullopt;
        return quotient;
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = isUnsignedElement(getType().getElementType());
  return foldConstantBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return llvm::maximum(a, b); },
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return (isUnsigned ? a.uge(b) : a.sge(b)) ? a : b;
      });
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  bool isUnsigned = isUnsignedElement(getType().getElementType());
  return foldConstantBinary(
      adaptor.getOperands(), getType(),
      [](const APFloat &a, const APFloat &b) { return llvm::minimum(a, b); },
      [&](const APInt &a, const APInt &b) -> std::optional<APInt> {
        return (isUnsigned ? a.ule(b) : a.sle(b)) ? a : b;
      });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  return foldIdentityOperand(getLhs(), adaptor.getRhs(), getType(), 1);
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (!smallDense(adaptor.getInput()))
    return {};
  return constFoldUnaryOp<FloatAttr, APFloat, void>(
      adaptor.getOperands(), getType(), [](const APFloat &a) { return -a; });
}

OpFoldResult DropoutOp::fold(FoldAdaptor adaptor) {
  if (getRatio().isZero())
    return getInput();
  return {};
}

namespace {
/// clip(x, 0, +inf) is relu(x), which kernels fuse more readily.
struct ClipToRelu : public OpRewritePattern<ClipOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ClipOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMin().isZero() || !op.getMax().isInfinity() ||
        op.getMax().isNegative())
      return failure();
    rewriter.replaceOpWithNewOp<ReluOp>(op, op.getInput());
    return success();
  }
};
} // namespace

void ClipOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<ClipToRelu>(context);
}

/// True when every value of float type `from` is exactly a value of `to`
/// (f16 and bf16 in f32 and f64, f32 in f64).
static bool widensExactly(Type from, Type to) {
  if (from.isF16() || from.isBF16())
    return to.isF32() || to.isF64();
  return from.isF32() && to.isF64();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // After an exact widening, casting again is casting the original:
  // bf16 -> f32 -> bf16 is the identity, bf16 -> f32 -> f16 one rounding.
  if (auto inner = getInput().getDefiningOp<CastOp>()) {
    Type original = inner.getInput().getType().getElementType();
    if (widensExactly(original, inner.getType().getElementType())) {
      if (inner.getInput().getType() == getType())
        return inner.getInput();
      getInputMutable().set(inner.getInput());
      return getResult();
    }
  }
  DenseElementsAttr input = smallDense(adaptor.getInput());
  if (!input)
    return {};
  Type from = input.getElementType();
  Type to = getType().getElementType();
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  bool fromUnsigned = isUnsignedElement(from);
  // ONNX casts to bool by comparing with zero, not by truncating.
  if (to.isInteger(1)) {
    if (fromFloat)
      return input.mapValues(
          to, [](const APFloat &v) { return APInt(1, !v.isZero()); });
    return input.mapValues(
        to, [](const APInt &v) { return APInt(1, !v.isZero()); });
  }
  if (fromFloat && toFloat)
    return input.mapValues(to, [&](const APFloat &v) -> APInt {
      APFloat r = v;
      bool lost;
      r.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      return r.bitcastToAPInt();
    });
  if (fromFloat)
    return input.mapValues(to, [&](const APFloat &v) -> APInt {
      APSInt r(to.getIntOrFloatBitWidth(), to.isUnsignedInteger());
      bool exact;
      v.convertToInteger(r, APFloat::rmTowardZero, &exact);
      return APInt(r);
    });
  if (toFloat)
    return input.mapValues(to, [&](const APInt &v) -> APInt {
      APFloat r(toFloat.getFloatSemantics());
      r.convertFromAPInt(v, /*IsSigned=*/!fromUnsigned,
                         APFloat::rmNearestTiesToEven);
      return r.bitcastToAPInt();
    });
  unsigned width = to.getIntOrFloatBitWidth();
  return input.mapValues(to, [&](const APInt &v) {
    return fromUnsigned ? v.zextOrTrunc(width) : v.sextOrTrunc(width);
  });
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  if (getType().getNumElements() > kMaxFoldedElements)
    return {};
  SmallVector<DenseElementsAttr> inputs;
  for (Attribute attr : adaptor.getInputs()) {
    DenseElementsAttr dense = smallDense(attr);
    if (!dense)
      return {};
    inputs.push_back(dense);
  }
  // Row-major: the result is, for each index before the axis, each input's
  // contiguous block of (axis size x inner) elements in turn.
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t axis = getAxis();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr input : inputs)
    values.emplace_back(input.getValues<Attribute>());
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [input, vals] : llvm::zip(inputs, values)) {
      int64_t block = input.getType().getDimSize(axis) * inner;
      llvm::append_range(result, ArrayRef(vals).slice(o * block, block));
    }
  return DenseElementsAttr::get(getType(), result);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // Integer constants only: shape arithmetic. A float constant broadcast
  // stays a broadcast, computed where it is used rather than stored.
  DenseElementsAttr input = smallDense(adaptor.getInput());
  if (!input || !input.getElementType().isInteger() ||
      getType().getNumElements() > kMaxFoldedElements)
    return {};
  return broadcastElements(input, getType());
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> permutation = getPermutation();
  bool identity = llvm::all_of(llvm::enumerate(permutation), [](auto it) {
    return static_cast<int64_t>(it.index()) == it.value();
  });
  if (identity)
    return getInput();
  if (auto producer = getInput().getDefiningOp<TransposeOp>()) {
    // transpose(transpose(x, p), q)[i] reads x at p[q[i]].
    SmallVector<int64_t> composed;
    for (int64_t q : permutation)
      composed.push_back(producer.getPermutation()[q]);
    getInputMutable().assign(producer.getInput());
    setPermutation(composed);
    return getResult();
  }
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getInput()))
    return splat.reshape(getType());
  // Small integer constants: shape arithmetic (the legacy PyTorch
  // exporter's pads of Swin's windows go through a transpose). Float
  // constants stay transposes, which the layout pass may cancel.
  DenseElementsAttr input = smallDense(adaptor.getInput());
  if (!input || !input.getElementType().isInteger())
    return {};
  SmallVector<int64_t> strides =
      computeStrides(cast<RankedTensorType>(getInput().getType()).getShape());
  // Result dimension d is input dimension permutation[d].
  return gatherElements(input, getType(), [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d)
      flat += index[d] * strides[permutation[d]];
    return flat;
  });
}

namespace {
/// A transpose that keeps the dimensions larger than 1 in their order
/// leaves every element at its offset: it is a reshape, which aliases its
/// input instead of copying it (NCHW <-> NHWC of a 1x1 convolution's filter
/// and its gradient, of pooled features, of one-channel images).
struct TransposeOfUnitDimsToReshape : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(op.getInput().getType()).getShape();
    SmallVector<int64_t> kept;
    for (int64_t from : op.getPermutation())
      if (shape[from] != 1)
        kept.push_back(from);
    if (!llvm::is_sorted(kept))
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<TransposeOfUnitDimsToReshape>(context);
}

OpFoldResult PadOp::fold(FoldAdaptor adaptor) {
  if (llvm::all_of(getPads(), [](int64_t p) { return p == 0; }))
    return getInput();
  return {};
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  bool identity =
      inputType == getType() &&
      llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; });
  if (identity)
    return getInput();
  DenseElementsAttr input = smallDense(adaptor.getInput());
  if (!input)
    return {};
  SmallVector<int64_t> strides = computeStrides(inputType.getShape());
  return gatherElements(input, getType(), [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d)
      flat += (getOffsets()[d] + index[d] * getSteps()[d]) * strides[d];
    return flat;
  });
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  DenseElementsAttr input = smallDense(adaptor.getInput());
  DenseElementsAttr indices = smallDense(adaptor.getIndices());
  if (!input || !indices || getType().getNumElements() > kMaxFoldedElements)
    return {};
  auto inputType = cast<RankedTensorType>(getInput().getType());
  int64_t axis = getAxis();
  int64_t axisSize = inputType.getDimSize(axis);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= inputType.getDimSize(d);
  for (int64_t d = axis + 1; d < inputType.getRank(); ++d)
    inner *= inputType.getDimSize(d);
  SmallVector<Attribute> values(input.getValues<Attribute>());
  SmallVector<int64_t> picks;
  for (const APInt &i : indices.getValues<APInt>()) {
    int64_t pick = i.getSExtValue();
    if (pick < 0)
      pick += axisSize;
    if (pick < 0 || pick >= axisSize)
      return {};
    picks.push_back(pick);
  }
  SmallVector<Attribute> result;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t pick : picks)
      for (int64_t i = 0; i < inner; ++i)
        result.push_back(values[(o * axisSize + pick) * inner + i]);
  return DenseElementsAttr::get(getType(), result);
}
