//===- FastNNScalarBodies.cpp - elementwise ops, one element at a time ----===//
//
// ScalarBodyOpInterface: how each elementwise op computes one element of
// its result, in arith and math ops on scalars; ReductionBodyOpInterface:
// how each reduction takes in one element.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::fastnn;

namespace {

using ElementIndexFn = function_ref<Value(OpBuilder &, Location, int64_t)>;

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

/// A binary op as its float or its integer arith op, by the compute type.
template <typename FloatOpT, typename IntOpT>
Value binary(OpBuilder &b, Location loc, ValueRange operands,
             Type computeType) {
  if (isa<FloatType>(computeType))
    return FloatOpT::create(b, loc, operands[0], operands[1]);
  return IntOpT::create(b, loc, operands[0], operands[1]);
}

/// 64 random bits for an element, a pure function of (seed, step, element
/// index): splitmix64 of their mix. Counter-based, so that draws need no
/// state, parallelise, and an op recomputed (or applied to its own
/// gradient) draws the same bits. A null \p step is step 0.
Value counterBits(OpBuilder &b, Location loc, int64_t seed, Value step,
                  ArrayRef<int64_t> shape, ElementIndexFn elementIndex) {
  SmallVector<int64_t> strides = computeStrides(shape);
  Type i64 = b.getI64Type();
  auto c64 = [&](uint64_t v) {
    return arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(i64, static_cast<int64_t>(v)));
  };
  Value linear = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [dim, stride] : llvm::enumerate(strides))
    linear = arith::AddIOp::create(
        b, loc, linear,
        arith::MulIOp::create(b, loc, elementIndex(b, loc, dim),
                              arith::ConstantIndexOp::create(b, loc, stride)));
  Value z = arith::IndexCastOp::create(b, loc, i64, linear);
  if (step)
    z = arith::XOrIOp::create(
        b, loc, z,
        arith::MulIOp::create(b, loc, step, c64(0x9E3779B97F4A7C15ull)));
  z = arith::XOrIOp::create(
      b, loc, z, c64(static_cast<uint64_t>(seed) * 0xD1B54A32D192ED03ull));
  auto mixStep = [&](uint64_t shift, uint64_t multiplier) {
    z = arith::XOrIOp::create(b, loc, z,
                              arith::ShRUIOp::create(b, loc, z, c64(shift)));
    if (multiplier)
      z = arith::MulIOp::create(b, loc, z, c64(multiplier));
  };
  z = arith::AddIOp::create(b, loc, z, c64(0x9E3779B97F4A7C15ull));
  mixStep(30, 0xBF58476D1CE4E5B9ull);
  mixStep(27, 0x94D049BB133111EBull);
  mixStep(31, 0);
  return z;
}

/// A random op's bits for an element; its one operand, where it has one,
/// is the step.
template <typename DrawOpT>
Value drawBits(DrawOpT op, OpBuilder &b, Location loc, ValueRange operands,
               ElementIndexFn elementIndex) {
  return counterBits(b, loc, op.getSeed(),
                     operands.empty() ? Value() : operands[0],
                     op.getType().getShape(), elementIndex);
}

/// The 24 bits of \p bits from bit \p shift up as a uniform in [0, 1):
/// 24 bits convert exactly to f32.
Value unitUniform(OpBuilder &b, Location loc, Value bits, uint64_t shift,
                  Type type) {
  Type i64 = b.getI64Type();
  Value field = arith::ShRUIOp::create(
      b, loc, bits,
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, shift)));
  if (shift + 24 < 64)
    field = arith::AndIOp::create(
        b, loc, field,
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, 0xFFFFFF)));
  return arith::MulFOp::create(b, loc,
                               arith::UIToFPOp::create(b, loc, type, field),
                               floatConstant(b, loc, type, 1.0 / (1 << 24)));
}

/// Leaky relu's select, shared by the op (\p value = x) and its gradient
/// (\p value = dy): \p value where \p x >= 0, else alpha times it.
Value leakySelect(OpBuilder &b, Location loc, Type type, Value x, Value value,
                  double alpha) {
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                         floatConstant(b, loc, type, 0.0));
  Value scaled =
      arith::MulFOp::create(b, loc, value, floatConstant(b, loc, type, alpha));
  return arith::SelectOp::create(b, loc, positive, value, scaled);
}

bool isHalf(Type type) { return type.isBF16() || type.isF16(); }

} // namespace

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

Value AddOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type computeType, ElementIndexFn) {
  return binary<arith::AddFOp, arith::AddIOp>(b, loc, operands, computeType);
}

Value SubOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type computeType, ElementIndexFn) {
  return binary<arith::SubFOp, arith::SubIOp>(b, loc, operands, computeType);
}

Value MulOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type computeType, ElementIndexFn) {
  return binary<arith::MulFOp, arith::MulIOp>(b, loc, operands, computeType);
}

Value DivOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type computeType, ElementIndexFn) {
  return binary<arith::DivFOp, arith::DivSIOp>(b, loc, operands, computeType);
}

Value MaxOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type computeType, ElementIndexFn) {
  return binary<arith::MaximumFOp, arith::MaxSIOp>(b, loc, operands,
                                                   computeType);
}

Value MinOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type computeType, ElementIndexFn) {
  return binary<arith::MinimumFOp, arith::MinSIOp>(b, loc, operands,
                                                   computeType);
}

LogicalResult PowOp::verifyScalarBody() {
  if (!isa<FloatType>(getType().getElementType()))
    return emitOpError("expects a floating-point base");
  return success();
}

Value PowOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return math::PowFOp::create(b, loc, operands[0], operands[1]);
}

LogicalResult ModOp::verifyScalarBody() {
  if (getType().getElementType().isUnsignedInteger())
    return emitOpError("on unsigned integers is not supported by the code "
                       "generator");
  return success();
}

/// The truncated remainder (C's fmod, LLVM's rem), moved into the divisor's
/// sign unless `fmod`: r + b where r is nonzero and its sign differs from b's.
Value ModOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type computeType, ElementIndexFn) {
  Value lhs = operands[0], rhs = operands[1];
  bool isFloat = isa<FloatType>(computeType);
  Value zero =
      isFloat ? floatConstant(b, loc, computeType, 0.0)
              : arith::ConstantOp::create(b, loc, b.getZeroAttr(computeType))
                    .getResult();
  Value remainder;
  if (isFloat) {
    remainder = arith::RemFOp::create(b, loc, lhs, rhs);
  } else {
    // LLVM's srem of a zero divisor is undefined; ONNX leaves it open too.
    Value divisorIsZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs, zero);
    Value one = arith::ConstantOp::create(b, loc, b.getOneAttr(computeType));
    Value safe = arith::SelectOp::create(b, loc, divisorIsZero, one, rhs);
    remainder = arith::SelectOp::create(
        b, loc, divisorIsZero, zero, arith::RemSIOp::create(b, loc, lhs, safe));
  }
  if (getFmod())
    return remainder;
  Value nonzero, remainderNegative, divisorNegative;
  if (isFloat) {
    nonzero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE,
                                    remainder, zero);
    remainderNegative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                              remainder, zero);
    divisorNegative =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, rhs, zero);
  } else {
    nonzero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, remainder,
                                    zero);
    remainderNegative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                              remainder, zero);
    divisorNegative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rhs, zero);
  }
  Value signsDiffer =
      arith::XOrIOp::create(b, loc, remainderNegative, divisorNegative);
  Value adjust = arith::AndIOp::create(b, loc, nonzero, signsDiffer);
  Value moved = binary<arith::AddFOp, arith::AddIOp>(
      b, loc, ValueRange{remainder, rhs}, computeType);
  return arith::SelectOp::create(b, loc, adjust, moved, remainder);
}

//===----------------------------------------------------------------------===//
// Comparisons, logic and selection
//===----------------------------------------------------------------------===//

#define FASTNN_COMPARE_VERIFIER(OpT)                                           \
  LogicalResult OpT::verifyScalarBody() {                                      \
    if (getLhs().getType().getElementType().isUnsignedInteger())               \
      return emitOpError("on unsigned integers is not supported by the code "  \
                         "generator");                                         \
    return success();                                                          \
  }
FASTNN_COMPARE_VERIFIER(EqualOp)
FASTNN_COMPARE_VERIFIER(LessOp)
FASTNN_COMPARE_VERIFIER(GreaterOp)
FASTNN_COMPARE_VERIFIER(AndOp)
#undef FASTNN_COMPARE_VERIFIER

namespace {
Value compare(OpBuilder &b, Location loc, ValueRange operands, Type computeType,
              arith::CmpFPredicate floatPredicate,
              arith::CmpIPredicate intPredicate) {
  if (isa<FloatType>(computeType))
    return arith::CmpFOp::create(b, loc, floatPredicate, operands[0],
                                 operands[1]);
  return arith::CmpIOp::create(b, loc, intPredicate, operands[0], operands[1]);
}
} // namespace

Value EqualOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                               Type computeType, ElementIndexFn) {
  return compare(b, loc, operands, computeType, arith::CmpFPredicate::OEQ,
                 arith::CmpIPredicate::eq);
}

Value LessOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                              Type computeType, ElementIndexFn) {
  return compare(b, loc, operands, computeType, arith::CmpFPredicate::OLT,
                 arith::CmpIPredicate::slt);
}

Value GreaterOp::buildScalarBody(OpBuilder &b, Location loc,
                                 ValueRange operands, Type computeType,
                                 ElementIndexFn) {
  return compare(b, loc, operands, computeType, arith::CmpFPredicate::OGT,
                 arith::CmpIPredicate::sgt);
}

Value AndOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return arith::AndIOp::create(b, loc, operands[0], operands[1]);
}

Value NotOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  return arith::XOrIOp::create(b, loc, operands[0], one);
}

Value SelectOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                                Type, ElementIndexFn) {
  return arith::SelectOp::create(b, loc, operands[0], operands[1], operands[2]);
}

//===----------------------------------------------------------------------===//
// Unary ops (floating-point operands only)
//===----------------------------------------------------------------------===//

Value NegOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return arith::NegFOp::create(b, loc, operands[0]);
}

Value AbsOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return math::AbsFOp::create(b, loc, operands[0]);
}

Value ExpOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return math::ExpOp::create(b, loc, operands[0]);
}

Value LogOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return math::LogOp::create(b, loc, operands[0]);
}

Value SqrtOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                              Type, ElementIndexFn) {
  return math::SqrtOp::create(b, loc, operands[0]);
}

Value TanhOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                              Type, ElementIndexFn) {
  return math::TanhOp::create(b, loc, operands[0]);
}

Value ErfOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return math::ErfOp::create(b, loc, operands[0]);
}

Value SinOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return math::SinOp::create(b, loc, operands[0]);
}

Value CosOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                             Type, ElementIndexFn) {
  return math::CosOp::create(b, loc, operands[0]);
}

/// max(x, 0) + log1p(e^-|x|): e^x would overflow for large x.
Value SoftplusOp::buildScalarBody(OpBuilder &b, Location loc,
                                  ValueRange operands, Type computeType,
                                  ElementIndexFn) {
  Value x = operands[0];
  Value positivePart = arith::MaximumFOp::create(
      b, loc, x, floatConstant(b, loc, computeType, 0.0));
  Value decay = math::ExpOp::create(
      b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x)));
  return arith::AddFOp::create(b, loc, positivePart,
                               math::Log1pOp::create(b, loc, decay));
}

Value FloorOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                               Type, ElementIndexFn) {
  return math::FloorOp::create(b, loc, operands[0]);
}

Value CeilOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                              Type, ElementIndexFn) {
  return math::CeilOp::create(b, loc, operands[0]);
}

Value RoundOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                               Type, ElementIndexFn) {
  return math::RoundEvenOp::create(b, loc, operands[0]);
}

Value ReciprocalOp::buildScalarBody(OpBuilder &b, Location loc,
                                    ValueRange operands, Type computeType,
                                    ElementIndexFn) {
  return arith::DivFOp::create(b, loc, floatConstant(b, loc, computeType, 1.0),
                               operands[0]);
}

Value ReluOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                              Type computeType, ElementIndexFn) {
  return arith::MaximumFOp::create(b, loc, operands[0],
                                   floatConstant(b, loc, computeType, 0.0));
}

Value SigmoidOp::buildScalarBody(OpBuilder &b, Location loc,
                                 ValueRange operands, Type computeType,
                                 ElementIndexFn) {
  Value one = floatConstant(b, loc, computeType, 1.0);
  Value e =
      math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, operands[0]));
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}

Value LeakyReluOp::buildScalarBody(OpBuilder &b, Location loc,
                                   ValueRange operands, Type computeType,
                                   ElementIndexFn) {
  return leakySelect(b, loc, computeType, operands[0], operands[0],
                     getAlpha().convertToDouble());
}

Value ClipOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                              Type computeType, ElementIndexFn) {
  Value low = arith::MaximumFOp::create(
      b, loc, operands[0],
      floatConstant(b, loc, computeType, getMin().convertToDouble()));
  return arith::MinimumFOp::create(
      b, loc, low,
      floatConstant(b, loc, computeType, getMax().convertToDouble()));
}

/// Inference dropout is the identity.
Value DropoutOp::buildScalarBody(OpBuilder &, Location, ValueRange operands,
                                 Type, ElementIndexFn) {
  return operands[0];
}

Value SignOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                              Type computeType, ElementIndexFn) {
  Value x = operands[0];
  Value zero = floatConstant(b, loc, computeType, 0.0);
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
  Value negative =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  Value sign = arith::SelectOp::create(
      b, loc, negative, floatConstant(b, loc, computeType, -1.0), zero);
  return arith::SelectOp::create(b, loc, positive,
                                 floatConstant(b, loc, computeType, 1.0), sign);
}

//===----------------------------------------------------------------------===//
// Casts and data movement
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verifyScalarBody() {
  if (getInput().getType().getElementType().isUnsignedInteger())
    return emitOpError("from unsigned integers is not supported by the code "
                       "generator");
  return success();
}

/// Half-precision ends are f32 here: the caller widens and rounds them.
Value CastOp::buildScalarBody(OpBuilder &b, Location loc, ValueRange operands,
                              Type, ElementIndexFn) {
  Type f32 = b.getF32Type();
  Type to = getType().getElementType();
  Type from = getInput().getType().getElementType();
  if (isHalf(to))
    to = f32;
  if (isHalf(from))
    from = f32;
  Value x = operands[0];
  if (from == to)
    return x;
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  if (to.isInteger(1)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                   floatConstant(b, loc, from, 0));
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(from));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
  }
  if (fromFloat && toFloat)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? arith::ExtFOp::create(b, loc, to, x).getResult()
               : arith::TruncFOp::create(b, loc, to, x).getResult();
  if (fromFloat)
    return arith::FPToSIOp::create(b, loc, to, x);
  if (toFloat)
    return from.isInteger(1)
               ? arith::UIToFPOp::create(b, loc, to, x).getResult()
               : arith::SIToFPOp::create(b, loc, to, x).getResult();
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return from.isInteger(1)
               ? arith::ExtUIOp::create(b, loc, to, x).getResult()
               : arith::ExtSIOp::create(b, loc, to, x).getResult();
  return arith::TruncIOp::create(b, loc, to, x);
}

/// The caller reads the input at the broadcast position.
Value BroadcastOp::buildScalarBody(OpBuilder &, Location, ValueRange operands,
                                   Type, ElementIndexFn) {
  return operands[0];
}

//===----------------------------------------------------------------------===//
// Training ops
//===----------------------------------------------------------------------===//

Value ReluBackwardOp::buildScalarBody(OpBuilder &b, Location loc,
                                      ValueRange operands, Type computeType,
                                      ElementIndexFn) {
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, operands[0],
                            floatConstant(b, loc, computeType, 0.0));
  return arith::SelectOp::create(b, loc, positive, operands[1],
                                 floatConstant(b, loc, computeType, 0.0));
}

Value LeakyReluBackwardOp::buildScalarBody(OpBuilder &b, Location loc,
                                           ValueRange operands,
                                           Type computeType, ElementIndexFn) {
  return leakySelect(b, loc, computeType, operands[0], operands[1],
                     getAlpha().convertToDouble());
}

Value ClipBackwardOp::buildScalarBody(OpBuilder &b, Location loc,
                                      ValueRange operands, Type computeType,
                                      ElementIndexFn) {
  Value above = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGT, operands[0],
      floatConstant(b, loc, computeType, getMin().convertToDouble()));
  Value below = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT, operands[0],
      floatConstant(b, loc, computeType, getMax().convertToDouble()));
  Value inside = arith::AndIOp::create(b, loc, above, below);
  return arith::SelectOp::create(b, loc, inside, operands[1],
                                 floatConstant(b, loc, computeType, 0.0));
}

Value DropoutTrainOp::buildScalarBody(OpBuilder &b, Location loc,
                                      ValueRange operands, Type computeType,
                                      ElementIndexFn elementIndex) {
  double ratio = getRatio().convertToDouble();
  Value bits = counterBits(b, loc, getSeed(), operands[1], getType().getShape(),
                           elementIndex);
  Value keep = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OGE,
      unitUniform(b, loc, bits, /*shift=*/40, computeType),
      floatConstant(b, loc, computeType, ratio));
  Value scaled = arith::MulFOp::create(
      b, loc, operands[0],
      floatConstant(b, loc, computeType, 1.0 / (1.0 - ratio)));
  return arith::SelectOp::create(b, loc, keep, scaled,
                                 floatConstant(b, loc, computeType, 0.0));
}

//===----------------------------------------------------------------------===//
// Random draws
//===----------------------------------------------------------------------===//

Value RandomUniformOp::buildScalarBody(OpBuilder &b, Location loc,
                                       ValueRange operands, Type computeType,
                                       ElementIndexFn elementIndex) {
  Value bits = drawBits(*this, b, loc, operands, elementIndex);
  double low = getLow().convertToDouble(), high = getHigh().convertToDouble();
  return arith::AddFOp::create(
      b, loc,
      arith::MulFOp::create(
          b, loc, unitUniform(b, loc, bits, /*shift=*/40, computeType),
          floatConstant(b, loc, computeType, high - low)),
      floatConstant(b, loc, computeType, low));
}

/// Box-Muller: sqrt(-2 ln u1) cos(2 pi u2), with u1 in (0, 1] from the top
/// 24 bits (so the logarithm is finite) and u2 from the next 24.
Value RandomNormalOp::buildScalarBody(OpBuilder &b, Location loc,
                                      ValueRange operands, Type computeType,
                                      ElementIndexFn elementIndex) {
  Value bits = drawBits(*this, b, loc, operands, elementIndex);
  Value u1 = arith::SubFOp::create(
      b, loc, floatConstant(b, loc, computeType, 1.0),
      unitUniform(b, loc, bits, /*shift=*/40, computeType));
  Value u2 = unitUniform(b, loc, bits, /*shift=*/16, computeType);
  Value radius = math::SqrtOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, floatConstant(b, loc, computeType, -2.0),
                            math::LogOp::create(b, loc, u1)));
  Value angle = arith::MulFOp::create(
      b, loc, floatConstant(b, loc, computeType, 2.0 * llvm::numbers::pi), u2);
  Value standard =
      arith::MulFOp::create(b, loc, radius, math::CosOp::create(b, loc, angle));
  return arith::AddFOp::create(
      b, loc,
      arith::MulFOp::create(
          b, loc, standard,
          floatConstant(b, loc, computeType, getScale().convertToDouble())),
      floatConstant(b, loc, computeType, getMean().convertToDouble()));
}

/// Without a step, the mask's mean.
Value RandomMaskOp::buildScalarBody(OpBuilder &b, Location loc,
                                    ValueRange operands, Type computeType,
                                    ElementIndexFn elementIndex) {
  double probability = getProbability().convertToDouble();
  if (operands.empty())
    return floatConstant(b, loc, computeType, probability);
  Value bits = drawBits(*this, b, loc, operands, elementIndex);
  Value kept = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OLT,
      unitUniform(b, loc, bits, /*shift=*/40, computeType),
      floatConstant(b, loc, computeType, probability));
  return arith::SelectOp::create(b, loc, kept,
                                 floatConstant(b, loc, computeType, 1.0),
                                 floatConstant(b, loc, computeType, 0.0));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

double ReduceSumOp::getReductionIdentity() { return 0.0; }

Value ReduceSumOp::buildCombine(OpBuilder &b, Location loc, Value accumulator,
                                Value element) {
  return arith::AddFOp::create(b, loc, accumulator, element);
}

double ReduceMeanOp::getReductionIdentity() { return 0.0; }

/// The sum; the lowering divides by the count afterwards.
Value ReduceMeanOp::buildCombine(OpBuilder &b, Location loc, Value accumulator,
                                 Value element) {
  return arith::AddFOp::create(b, loc, accumulator, element);
}

double ReduceMaxOp::getReductionIdentity() {
  return -std::numeric_limits<double>::infinity();
}

Value ReduceMaxOp::buildCombine(OpBuilder &b, Location loc, Value accumulator,
                                Value element) {
  return arith::MaximumFOp::create(b, loc, accumulator, element);
}

double ReduceMinOp::getReductionIdentity() {
  return std::numeric_limits<double>::infinity();
}

Value ReduceMinOp::buildCombine(OpBuilder &b, Location loc, Value accumulator,
                                Value element) {
  return arith::MinimumFOp::create(b, loc, accumulator, element);
}
