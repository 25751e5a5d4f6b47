//===- Elementwise.cpp - ONNX elementwise operators -----------------------===//
//
// Unary and broadcasting binary arithmetic, the variadic Sum/Mean/Max/Min,
// activations (some as compositions of ops with gradients), Dropout and Cast.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::onnx_import {
namespace {

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
  // ONNX: with min above max every element becomes max.
  if (lo > hi)
    lo = hi;
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
  // Version 19's saturate and 24's round_mode apply to float8 targets only,
  // which convertElementType refuses.
  if (n.version() >= 19)
    (void)n.intAttr("saturate", 1);
  if (n.version() >= 24)
    (void)n.stringAttr("round_mode", "up");
  return defineResult(
      n, n.create<CastOp>(*x, {namedAttr(n, "to", TypeAttr::get(to))}));
}

} // namespace

std::vector<OpRecord> elementwiseOpRecords() {
  return {
      {"Abs", importUnary<AbsOp>, {13}},
      {"Add", importBinary<AddOp>, {13, 14}},
      {"Cast", importCast, {13, 19, 21, 23, 24, 25, 28}},
      // The bounds are attributes in disguise.
      {"Clip", importClip, {13}, {1, 2}},
      {"Div", importBinary<DivOp>, {13, 14}},
      // The ratio and training_mode decide how the node is compiled.
      {"Dropout", importDropout, {13, 22}, {1, 2}},
      {"Erf", importUnary<ErfOp>, {13}},
      {"Exp", importUnary<ExpOp>, {13}},
      {"HardSigmoid", importHardSigmoid, {6, 22}},
      {"HardSwish", importHardSwish, {14, 22}},
      {"LeakyRelu", importLeakyRelu, {6, 16}},
      {"Log", importUnary<LogOp>, {13}},
      {"Max", importVariadic<MaxOp>, {13}},
      {"Mean", importVariadic<AddOp, /*Mean=*/true>, {13}},
      {"Min", importVariadic<MinOp>, {13}},
      {"Mul", importBinary<MulOp>, {13, 14}},
      {"Neg", importUnary<NegOp>, {13}},
      {"Pow", importPow, {13, 15}},
      {"Reciprocal", importUnary<ReciprocalOp>, {13}},
      {"Relu", importUnary<ReluOp>, {13, 14}},
      {"Sigmoid", importUnary<SigmoidOp>, {13}},
      {"Sqrt", importUnary<SqrtOp>, {13}},
      {"Sub", importBinary<SubOp>, {13, 14}},
      {"Sum", importVariadic<AddOp>, {13}},
      {"Tanh", importUnary<TanhOp>, {13}},
  };
}

} // namespace fastnn::onnx_import
