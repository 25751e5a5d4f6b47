//===- FastNNGradients.cpp - reverse-mode derivatives of fastnn ops -------===//
//
// One buildGradients per op (GradientOpInterface). Rules build fastnn ops so
// that the backward pass goes through the same lowering as the forward one;
// kernels with a library backward (convolution, pooling, batch norm, LRN)
// get dedicated backward ops.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fastnn;

#include "fastnn/Dialect/FastNN/IR/FastNNInterfaces.cpp.inc"

namespace {

RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

Value scalar(OpBuilder &b, Location loc, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getFloatAttr(elementType, value)));
}

Value reshape(OpBuilder &b, Location loc, Value value,
              ArrayRef<int64_t> shape) {
  if (typeOf(value).getShape() == shape)
    return value;
  return ReshapeOp::create(b, loc, typeOf(value).clone(shape), value);
}

template <typename OpT>
Value binary(OpBuilder &b, Location loc, Value l, Value r) {
  return OpT::create(b, loc, ValueRange{l, r}).getResult();
}

/// Sums a broadcast gradient back to the operand's shape: over the leading
/// dimensions the operand lacks and the ones it has as size 1.
Value unbroadcast(OpBuilder &b, Location loc, Value grad, Type targetType) {
  auto target = cast<RankedTensorType>(targetType);
  RankedTensorType type = typeOf(grad);
  if (type == target)
    return grad;
  int64_t offset = type.getRank() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d < offset ||
        (target.getDimSize(d - offset) == 1 && type.getDimSize(d) != 1))
      axes.push_back(d);
  Value summed = grad;
  if (!axes.empty()) {
    SmallVector<int64_t> kept(type.getShape());
    for (int64_t axis : axes)
      kept[axis] = 1;
    summed = ReduceSumOp::create(b, loc, type.clone(kept), grad,
                                 b.getDenseI64ArrayAttr(axes), b.getUnitAttr());
  }
  return reshape(b, loc, summed, target.getShape());
}

/// `value` reshaped so that it broadcasts along `axis` of a tensor of rank
/// `rank` (a per-channel vector becomes [1, C, 1, 1]).
Value alongAxis(OpBuilder &b, Location loc, Value value, int64_t rank,
                int64_t axis) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = typeOf(value).getNumElements();
  return reshape(b, loc, value, shape);
}

/// Sums `value` over every dimension but `axis`, giving a vector.
Value sumAllBut(OpBuilder &b, Location loc, Value value, int64_t axis) {
  RankedTensorType type = typeOf(value);
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != axis)
      axes.push_back(d);
  return ReduceSumOp::create(
      b, loc,
      RankedTensorType::get({type.getDimSize(axis)}, type.getElementType()),
      value, b.getDenseI64ArrayAttr(axes), UnitAttr());
}

Value broadcastTo(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return BroadcastOp::create(b, loc, type, value);
}

/// The gradient of a piecewise-constant op.
Value zerosLike(OpBuilder &b, Location loc, Value x) {
  RankedTensorType type = typeOf(x);
  return ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0.0)));
}

/// The matrix product op(l) op(r), its result type inferred.
Value product(OpBuilder &b, Location loc, Value l, Value r, bool transposeL,
              bool transposeR) {
  SmallVector<Type> types;
  MatMulOp::Properties properties;
  if (transposeL)
    properties.setTransposeA(b.getUnitAttr());
  if (transposeR)
    properties.setTransposeB(b.getUnitAttr());
  (void)MatMulOp::inferReturnTypes(
      b.getContext(), loc,
      MatMulOp::Adaptor(ValueRange{l, r}, DictionaryAttr(), properties), types);
  return MatMulOp::create(b, loc, types.front(), l, r,
                          transposeL ? b.getUnitAttr() : UnitAttr(),
                          transposeR ? b.getUnitAttr() : UnitAttr())
      .getResult();
}

LogicalResult notDifferentiable(Operation *op, StringRef why) {
  return op->emitOpError("has no gradient: ") << why;
}

/// Elementwise unary ops: operand gradient = resultGrad * f'(x, y).
template <typename Fn>
LogicalResult unaryGradient(Operation *op, OpBuilder &b,
                            ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads, Fn fn) {
  operandGrads.assign(op->getNumOperands(), Value());
  if (resultGrads[0])
    operandGrads[0] =
        fn(op->getLoc(), op->getOperand(0), op->getResult(0), resultGrads[0]);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Convolution, pooling, normalisation
//===----------------------------------------------------------------------===//

LogicalResult Conv2DOp::buildGradients(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  if (!resultGrads[0])
    return success();
  auto filterType = typeOf(getFilter());
  auto biasType = RankedTensorType::get({filterType.getDimSize(0)},
                                        filterType.getElementType());
  auto backward = Conv2DBackwardOp::create(
      b, getLoc(), getInput().getType(), filterType, biasType, getInput(),
      getFilter(), resultGrads[0], getStridesAttr(), getPadsAttr(),
      getDilationsAttr(), getGroupsAttr(), getLayoutAttr());
  operandGrads[0] = backward.getGradInput();
  operandGrads[1] = backward.getGradFilter();
  if (getBias())
    operandGrads[2] = backward.getGradBias();
  return success();
}

template <typename PoolOpT>
static LogicalResult poolGradients(PoolOpT op, OpBuilder &b,
                                   ArrayRef<Value> resultGrads,
                                   SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (resultGrads[0])
    operandGrads[0] =
        Pool2DBackwardOp::create(b, op.getLoc(), op.getInput().getType(),
                                 op.getResult(), resultGrads[0]);
  return success();
}

LogicalResult
MaxPool2DOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  return poolGradients(*this, b, resultGrads, operandGrads);
}

/// Integer positions: nothing flows back to the input.
LogicalResult
MaxPool2DIndicesOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  return success();
}

LogicalResult
AvgPool2DOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  return poolGradients(*this, b, resultGrads, operandGrads);
}

LogicalResult
BatchNormOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  // With its statistics held fixed the op is affine in x:
  // y = scale * (x - mean) * inv + shift, inv = 1 / sqrt(variance + eps).
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  RankedTensorType type = typeOf(getInput());
  Type elementType = type.getElementType();
  int64_t rank = type.getRank();
  int64_t axis = getLayout() == Layout::NHWC ? rank - 1 : 1;
  Value eps = scalar(b, loc, elementType, getEpsilon().convertToDouble());
  Value inv = ReciprocalOp::create(
      b, loc,
      SqrtOp::create(b, loc, binary<AddOp>(b, loc, getVariance(), eps)));
  Value scaleInv = binary<MulOp>(b, loc, getScale(), inv);
  operandGrads[0] =
      binary<MulOp>(b, loc, dy, alongAxis(b, loc, scaleInv, rank, axis));
  Value centered = binary<SubOp>(b, loc, getInput(),
                                 alongAxis(b, loc, getMean(), rank, axis));
  Value normalized =
      binary<MulOp>(b, loc, centered, alongAxis(b, loc, inv, rank, axis));
  operandGrads[1] =
      sumAllBut(b, loc, binary<MulOp>(b, loc, dy, normalized), axis);
  operandGrads[2] = sumAllBut(b, loc, dy, axis);
  return success();
}

LogicalResult
BatchNormTrainOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  if (resultGrads[1] || resultGrads[2])
    return notDifferentiable(*this, "the batch statistics feed only the "
                                    "running averages, which take no "
                                    "gradient");
  if (!resultGrads[0])
    return success();
  auto backward = BatchNormBackwardOp::create(
      b, getLoc(), getInput().getType(), getScale().getType(),
      getScale().getType(), getInput(), getScale(), getMean(), getVariance(),
      resultGrads[0], getEpsilonAttr(), getLayoutAttr());
  operandGrads[0] = backward.getGradInput();
  operandGrads[1] = backward.getGradScale();
  operandGrads[2] = backward.getGradBias();
  return success();
}

LogicalResult LRNOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  return unaryGradient(*this, b, resultGrads, operandGrads,
                       [&](Location loc, Value x, Value y, Value dy) -> Value {
                         return LRNBackwardOp::create(b, loc, x.getType(), x, y,
                                                      dy);
                       });
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::buildGradients(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  bool ta = getTransposeA(), tb = getTransposeB();
  auto matmul = [&](Value l, Value r, bool transposeL, bool transposeR) {
    return product(b, loc, l, r, transposeL, transposeR);
  };
  // y = op(a) op(b); the four transpose cases, shapes as stored.
  if (!ta && !tb) {
    operandGrads[0] = matmul(dy, getB(), false, true);
    operandGrads[1] = matmul(getA(), dy, true, false);
  } else if (!ta && tb) {
    operandGrads[0] = matmul(dy, getB(), false, false);
    operandGrads[1] = matmul(dy, getA(), true, false);
  } else if (ta && !tb) {
    operandGrads[0] = matmul(getB(), dy, false, true);
    operandGrads[1] = matmul(getA(), dy, false, false);
  } else {
    operandGrads[0] = matmul(getB(), dy, true, true);
    operandGrads[1] = matmul(dy, getA(), true, true);
  }
  // Batched products: each gradient has the broadcast batch dimensions of
  // dy; an operand broadcast along some of them gets their sum.
  operandGrads[0] = unbroadcast(b, loc, operandGrads[0], getA().getType());
  operandGrads[1] = unbroadcast(b, loc, operandGrads[1], getB().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (Value dy = resultGrads[0]) {
    operandGrads[0] = unbroadcast(b, getLoc(), dy, getLhs().getType());
    operandGrads[1] = unbroadcast(b, getLoc(), dy, getRhs().getType());
  }
  return success();
}

LogicalResult SubOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (Value dy = resultGrads[0]) {
    operandGrads[0] = unbroadcast(b, getLoc(), dy, getLhs().getType());
    operandGrads[1] = unbroadcast(b, getLoc(), NegOp::create(b, getLoc(), dy),
                                  getRhs().getType());
  }
  return success();
}

LogicalResult MulOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (Value dy = resultGrads[0]) {
    Location loc = getLoc();
    operandGrads[0] = unbroadcast(b, loc, binary<MulOp>(b, loc, dy, getRhs()),
                                  getLhs().getType());
    operandGrads[1] = unbroadcast(b, loc, binary<MulOp>(b, loc, dy, getLhs()),
                                  getRhs().getType());
  }
  return success();
}

LogicalResult DivOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (Value dy = resultGrads[0]) {
    // d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b, so db = -(dy/b) * (a/b).
    Location loc = getLoc();
    Value da = binary<DivOp>(b, loc, dy, getRhs());
    operandGrads[0] = unbroadcast(b, loc, da, getLhs().getType());
    Value db = NegOp::create(b, loc, binary<MulOp>(b, loc, da, getResult()));
    operandGrads[1] = unbroadcast(b, loc, db, getRhs().getType());
  }
  return success();
}

LogicalResult PowOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (Value dy = resultGrads[0]) {
    // d(a^e)/da = e * a^(e-1); d(a^e)/de = a^e * log(a).
    Location loc = getLoc();
    Type elementType = getType().getElementType();
    Value exponentLess1 =
        binary<SubOp>(b, loc, getRhs(), scalar(b, loc, elementType, 1.0));
    Value da = binary<MulOp>(
        b, loc, dy,
        binary<MulOp>(b, loc, getRhs(),
                      binary<PowOp>(b, loc, getLhs(), exponentLess1)));
    operandGrads[0] = unbroadcast(b, loc, da, getLhs().getType());
    Value de = binary<MulOp>(
        b, loc, dy,
        binary<MulOp>(
            b, loc, getResult(),
            LogOp::create(b, loc, broadcastTo(b, loc, getLhs(), getType()))));
    operandGrads[1] = unbroadcast(b, loc, de, getRhs().getType());
  }
  return success();
}

LogicalResult MaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  return notDifferentiable(*this, "elementwise max is not differentiated yet");
}

LogicalResult MinOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  return notDifferentiable(*this, "elementwise min is not differentiated yet");
}

LogicalResult ModOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  Value dy = resultGrads[0];
  if (!dy || !isa<FloatType>(getType().getElementType()))
    return success();
  // y = a - q b with q = (a - y) / b an integer constant between the jumps:
  // da = dy, db = -q dy.
  Location loc = getLoc();
  operandGrads[0] = unbroadcast(b, loc, dy, getLhs().getType());
  Value quotient = binary<DivOp>(
      b, loc, binary<SubOp>(b, loc, getLhs(), getResult()), getRhs());
  operandGrads[1] = unbroadcast(
      b, loc, NegOp::create(b, loc, binary<MulOp>(b, loc, dy, quotient)),
      getRhs().getType());
  return success();
}

/// Boolean results carry no gradient.
#define FASTNN_NO_GRADIENT(OpT)                                                \
  LogicalResult OpT::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads, \
                                    SmallVectorImpl<Value> &operandGrads) {    \
    operandGrads.assign(getOperation()->getNumOperands(), Value());            \
    return success();                                                          \
  }
FASTNN_NO_GRADIENT(EqualOp)
FASTNN_NO_GRADIENT(LessOp)
FASTNN_NO_GRADIENT(GreaterOp)
FASTNN_NO_GRADIENT(AndOp)
FASTNN_NO_GRADIENT(NotOp)
#undef FASTNN_NO_GRADIENT

LogicalResult SelectOp::buildGradients(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(3, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  Value zero = scalar(b, loc, getType().getElementType(), 0.0);
  auto select = [&](Value onTrue, Value onFalse) {
    return SelectOp::create(b, loc, ValueRange{getCondition(), onTrue, onFalse})
        .getResult();
  };
  operandGrads[1] =
      unbroadcast(b, loc, select(dy, zero), getOnTrue().getType());
  operandGrads[2] =
      unbroadcast(b, loc, select(zero, dy), getOnFalse().getType());
  return success();
}

#define FASTNN_UNARY_GRADIENT(OpT, BODY)                                       \
  LogicalResult OpT::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads, \
                                    SmallVectorImpl<Value> &operandGrads) {    \
    Type elementType = getType().getElementType();                             \
    (void)elementType;                                                         \
    return unaryGradient(                                                      \
        *this, b, resultGrads, operandGrads,                                   \
        [&](Location loc, Value x, Value y, Value dy) -> Value BODY);          \
  }

FASTNN_UNARY_GRADIENT(NegOp, { return NegOp::create(b, loc, dy); })
FASTNN_UNARY_GRADIENT(AbsOp, {
  return binary<MulOp>(b, loc, dy, SignOp::create(b, loc, x));
})
FASTNN_UNARY_GRADIENT(ExpOp, { return binary<MulOp>(b, loc, dy, y); })
FASTNN_UNARY_GRADIENT(LogOp, { return binary<DivOp>(b, loc, dy, x); })
FASTNN_UNARY_GRADIENT(SqrtOp, {
  // d sqrt(x) = 1 / (2 sqrt(x)).
  return binary<DivOp>(
      b, loc, binary<MulOp>(b, loc, dy, scalar(b, loc, elementType, 0.5)), y);
})
FASTNN_UNARY_GRADIENT(ReciprocalOp, {
  return NegOp::create(b, loc,
                       binary<MulOp>(b, loc, dy, binary<MulOp>(b, loc, y, y)));
})
FASTNN_UNARY_GRADIENT(ReluOp, {
  return ReluBackwardOp::create(b, loc, y.getType(), y, dy);
})
FASTNN_UNARY_GRADIENT(SigmoidOp, {
  // y (1 - y).
  Value oneMinus = binary<SubOp>(b, loc, scalar(b, loc, elementType, 1.0), y);
  return binary<MulOp>(b, loc, dy, binary<MulOp>(b, loc, y, oneMinus));
})
FASTNN_UNARY_GRADIENT(TanhOp, {
  // 1 - y^2.
  Value oneMinus = binary<SubOp>(b, loc, scalar(b, loc, elementType, 1.0),
                                 binary<MulOp>(b, loc, y, y));
  return binary<MulOp>(b, loc, dy, oneMinus);
})
FASTNN_UNARY_GRADIENT(ErfOp, {
  // d erf(x) = 2 / sqrt(pi) * e^(-x^2).
  Value gauss =
      ExpOp::create(b, loc, NegOp::create(b, loc, binary<MulOp>(b, loc, x, x)));
  Value slope =
      binary<MulOp>(b, loc, gauss,
                    scalar(b, loc, elementType, 2 * llvm::numbers::inv_sqrtpi));
  return binary<MulOp>(b, loc, dy, slope);
})
FASTNN_UNARY_GRADIENT(SinOp, {
  return binary<MulOp>(b, loc, dy, CosOp::create(b, loc, x));
})
FASTNN_UNARY_GRADIENT(CosOp, {
  return NegOp::create(b, loc,
                       binary<MulOp>(b, loc, dy, SinOp::create(b, loc, x)));
})
FASTNN_UNARY_GRADIENT(SoftplusOp, {
  return binary<MulOp>(b, loc, dy, SigmoidOp::create(b, loc, x));
})
FASTNN_UNARY_GRADIENT(FloorOp, { return zerosLike(b, loc, x); })
FASTNN_UNARY_GRADIENT(CeilOp, { return zerosLike(b, loc, x); })
FASTNN_UNARY_GRADIENT(RoundOp, { return zerosLike(b, loc, x); })
FASTNN_UNARY_GRADIENT(LeakyReluOp, {
  return LeakyReluBackwardOp::create(b, loc, x.getType(), x, dy,
                                     getAlphaAttr());
})
// From the clip's output, which is strictly inside (min, max) exactly where
// its input is: the input need not live on to the backward pass, and the
// clip can be its producer's post-op.
FASTNN_UNARY_GRADIENT(ClipOp, {
  return ClipBackwardOp::create(b, loc, y.getType(), y, dy, getMinAttr(),
                                getMaxAttr());
})
FASTNN_UNARY_GRADIENT(SignOp, { return zerosLike(b, loc, x); })
FASTNN_UNARY_GRADIENT(DropoutOp, { return dy; })
FASTNN_UNARY_GRADIENT(LogSoftmaxOp, {
  // dx = dy - exp(y) * sum(dy) along the axis.
  RankedTensorType type = typeOf(y);
  SmallVector<int64_t> kept(type.getShape());
  kept[getAxis()] = 1;
  Value sum = ReduceSumOp::create(
      b, loc, type.clone(kept), dy,
      b.getDenseI64ArrayAttr({static_cast<int64_t>(getAxis())}),
      b.getUnitAttr());
  return binary<SubOp>(b, loc, dy,
                       binary<MulOp>(b, loc, ExpOp::create(b, loc, y), sum));
})
FASTNN_UNARY_GRADIENT(SoftmaxOp, {
  // dx = y * (dy - sum(dy * y)) along the axis.
  RankedTensorType type = typeOf(y);
  SmallVector<int64_t> kept(type.getShape());
  kept[getAxis()] = 1;
  Value sum = ReduceSumOp::create(
      b, loc, type.clone(kept), binary<MulOp>(b, loc, dy, y),
      b.getDenseI64ArrayAttr({static_cast<int64_t>(getAxis())}),
      b.getUnitAttr());
  return binary<MulOp>(b, loc, y, binary<SubOp>(b, loc, dy, sum));
})
#undef FASTNN_UNARY_GRADIENT

LogicalResult
DropoutTrainOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  if (Value dy = resultGrads[0])
    operandGrads[0] =
        DropoutTrainOp::create(b, getLoc(), dy.getType(), dy, getStep(),
                               getRatioAttr(), getSeedAttr());
  return success();
}

LogicalResult CastOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Type from = typeOf(getInput()).getElementType();
  if (!resultGrads[0] || !isa<FloatType>(from))
    return success();
  if (!isa<FloatType>(getType().getElementType()))
    return success();
  operandGrads[0] = CastOp::create(b, getLoc(), resultGrads[0], from);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The gradient of a reduction, broadcast back over the reduced axes.
template <typename OpT>
static Value expandReduced(OpT op, OpBuilder &b, Value dy) {
  RankedTensorType input = typeOf(op.getInput());
  SmallVector<int64_t> kept(input.getShape());
  for (int64_t axis : op.getAxes())
    kept[axis] = 1;
  Value shaped = reshape(b, op.getLoc(), dy, kept);
  return BroadcastOp::create(b, op.getLoc(),
                             input.clone(typeOf(dy).getElementType()), shaped);
}

LogicalResult
ReduceSumOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (resultGrads[0])
    operandGrads[0] = expandReduced(*this, b, resultGrads[0]);
  return success();
}

LogicalResult
ReduceMeanOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                             SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (!resultGrads[0])
    return success();
  RankedTensorType input = typeOf(getInput());
  int64_t count = 1;
  for (int64_t axis : getAxes())
    count *= input.getDimSize(axis);
  Value scaled =
      binary<MulOp>(b, getLoc(), resultGrads[0],
                    scalar(b, getLoc(), input.getElementType(), 1.0 / count));
  operandGrads[0] = expandReduced(*this, b, scaled);
  return success();
}

/// The gradient of a max or min reduction: each result's gradient shared
/// equally by the elements equal to it (TensorFlow's rule for ties).
template <typename OpT>
static LogicalResult extremumGradients(OpT op, OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = op.getLoc();
  RankedTensorType input = typeOf(op.getInput());
  Value isExtremum = binary<EqualOp>(b, loc, op.getInput(),
                                     expandReduced(op, b, op.getResult()));
  Value mask = CastOp::create(b, loc, isExtremum, input.getElementType());
  Value count = ReduceSumOp::create(b, loc, op.getType(), mask,
                                    op.getAxesAttr(), op.getKeepdimsAttr());
  Value share = binary<DivOp>(b, loc, dy, count);
  operandGrads[0] = binary<MulOp>(b, loc, mask, expandReduced(op, b, share));
  return success();
}

LogicalResult
ReduceMaxOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  return extremumGradients(*this, b, resultGrads, operandGrads);
}

LogicalResult
ReduceMinOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  return extremumGradients(*this, b, resultGrads, operandGrads);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::buildGradients(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(getNumOperands(), Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  int64_t axis = getAxis(), offset = 0, rank = getType().getRank();
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    RankedTensorType type = typeOf(input);
    SmallVector<int64_t> offsets(rank, 0), steps(rank, 1);
    offsets[axis] = offset;
    offset += type.getDimSize(axis);
    operandGrads[i] =
        SliceOp::create(b, getLoc(), type, dy, b.getDenseI64ArrayAttr(offsets),
                        b.getDenseI64ArrayAttr(steps));
  }
  return success();
}

LogicalResult
BroadcastOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (resultGrads[0])
    operandGrads[0] =
        unbroadcast(b, getLoc(), resultGrads[0], getInput().getType());
  return success();
}

LogicalResult ReshapeOp::buildGradients(OpBuilder &b,
                                        ArrayRef<Value> resultGrads,
                                        SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (resultGrads[0])
    operandGrads[0] =
        reshape(b, getLoc(), resultGrads[0], typeOf(getInput()).getShape());
  return success();
}

LogicalResult
TransposeOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                            SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (!resultGrads[0])
    return success();
  ArrayRef<int64_t> permutation = getPermutation();
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    inverse[p] = i;
  operandGrads[0] =
      TransposeOp::create(b, getLoc(), getInput().getType(), resultGrads[0],
                          b.getDenseI64ArrayAttr(inverse));
  return success();
}

LogicalResult PadOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  if (!resultGrads[0])
    return success();
  if (getMode() != PadMode::Constant)
    return notDifferentiable(*this, "reflect and edge padding are not "
                                    "differentiated yet");
  RankedTensorType input = typeOf(getInput());
  SmallVector<int64_t> offsets(getPads().take_front(input.getRank()));
  SmallVector<int64_t> steps(input.getRank(), 1);
  operandGrads[0] = SliceOp::create(b, getLoc(), input, resultGrads[0],
                                    b.getDenseI64ArrayAttr(offsets),
                                    b.getDenseI64ArrayAttr(steps));
  return success();
}

LogicalResult SliceOp::buildGradients(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(1, Value());
  Value dy = resultGrads[0];
  if (!dy)
    return success();
  Location loc = getLoc();
  RankedTensorType input = typeOf(getInput());
  int64_t rank = input.getRank();
  SmallVector<int64_t> offsets(getOffsets());
  auto zeroPad = [&](Value value, ArrayRef<int64_t> pads,
                     ArrayRef<int64_t> shape) -> Value {
    return PadOp::create(b, loc, typeOf(value).clone(shape), value,
                         b.getDenseI64ArrayAttr(pads),
                         PadModeAttr::get(getContext(), PadMode::Constant),
                         b.getF64FloatAttr(0.0));
  };
  // Each strided axis becomes a dense window first: reversed where the step
  // is negative, then with step - 1 zeros after each element (a [n, 1]
  // view padded to [n, step]) up to the last element read.
  for (int64_t d = 0; d < rank; ++d) {
    int64_t step = getSteps()[d], count = typeOf(dy).getDimSize(d);
    if (step == 1 || count <= 1)
      continue;
    SmallVector<int64_t> shape(typeOf(dy).getShape());
    if (step < 0) {
      SmallVector<int64_t> start(rank, 0), steps(rank, 1);
      start[d] = count - 1;
      steps[d] = -1;
      dy = SliceOp::create(b, loc, typeOf(dy), dy, start, steps);
      offsets[d] += (count - 1) * step;
      step = -step;
    }
    if (step == 1)
      continue;
    SmallVector<int64_t> split(shape);
    split.insert(split.begin() + d + 1, 1);
    SmallVector<int64_t> spread(split), pads(2 * (rank + 1), 0);
    spread[d + 1] = step;
    pads[rank + 1 + d + 1] = step - 1;
    Value spaced = zeroPad(reshape(b, loc, dy, split), pads, spread);
    shape[d] = count * step;
    SmallVector<int64_t> window(shape);
    window[d] = (count - 1) * step + 1;
    dy = SliceOp::create(
        b, loc, typeOf(dy).clone(window), reshape(b, loc, spaced, shape),
        SmallVector<int64_t>(rank, 0), SmallVector<int64_t>(rank, 1));
  }
  SmallVector<int64_t> pads(offsets);
  for (int64_t d = 0; d < rank; ++d)
    pads.push_back(input.getDimSize(d) - offsets[d] - typeOf(dy).getDimSize(d));
  operandGrads[0] = zeroPad(dy, pads, input.getShape());
  return success();
}

LogicalResult GatherOp::buildGradients(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  operandGrads.assign(2, Value());
  Value dy = resultGrads[0];
  if (!dy || !isa<FloatType>(getType().getElementType()))
    return success();
  // With the input as [P, A, Q] (A the gathered axis) and the K indices
  // flattened, y[p, k, q] = x[p, index[k], q]: the gradient is dy times the
  // [K, A] one-hot matrix of the indices, summed over k. A constant one for
  // constant indices (levit's attention-bias tables, a class token);
  // fastnn.one_hot of the indices, negative ones counted from the end,
  // otherwise.
  Location loc = getLoc();
  RankedTensorType input = typeOf(getInput());
  RankedTensorType indicesType = typeOf(getIndices());
  Type elementType = input.getElementType();
  int64_t axis = getAxis(), size = input.getDimSize(axis);
  int64_t count = indicesType.getNumElements(), outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= input.getDimSize(d);
  for (int64_t d = axis + 1; d < input.getRank(); ++d)
    inner *= input.getDimSize(d);
  auto oneHotType = RankedTensorType::get({count, size}, elementType);
  Value oneHot;
  DenseIntElementsAttr constantIndices;
  if (matchPattern(getIndices(), m_Constant(&constantIndices))) {
    SmallVector<Attribute> entries(count * size,
                                   b.getFloatAttr(elementType, 0.0));
    for (auto [k, index] :
         llvm::enumerate(constantIndices.getValues<APInt>())) {
      int64_t column = index.getSExtValue();
      column += column < 0 ? size : 0;
      if (column >= 0 && column < size)
        entries[k * size + column] = b.getFloatAttr(elementType, 1.0);
    }
    oneHot =
        ConstantOp::create(b, loc, DenseElementsAttr::get(oneHotType, entries));
  } else {
    Value flat = reshape(b, loc, getIndices(), {count});
    Type indexType = indicesType.getElementType();
    auto constantIndex = [&](int64_t value) {
      auto type = RankedTensorType::get({}, indexType);
      return ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(type, b.getIntegerAttr(indexType, value)));
    };
    Value negative = binary<LessOp>(b, loc, flat, constantIndex(0));
    Value wrapped = binary<AddOp>(b, loc, flat, constantIndex(size));
    Value normalized =
        SelectOp::create(b, loc, ValueRange{negative, wrapped, flat});
    oneHot = OneHotOp::create(b, loc, oneHotType, normalized);
  }
  Value dx;
  if (inner == 1)
    dx = product(b, loc, reshape(b, loc, dy, {outer, count}), oneHot, false,
                 false);
  else if (outer == 1)
    dx = product(b, loc, oneHot, reshape(b, loc, dy, {count, inner}), true,
                 false);
  else
    dx = product(b, loc, oneHot, reshape(b, loc, dy, {outer, count, inner}),
                 true, false);
  operandGrads[0] = reshape(b, loc, dx, input.getShape());
  return success();
}
