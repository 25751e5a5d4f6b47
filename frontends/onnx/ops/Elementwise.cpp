//===- Elementwise.cpp - ONNX elementwise operators -----------------------===//
//
// Unary and broadcasting binary arithmetic, comparisons, logic and Where,
// the variadic Sum/Mean/Max/Min, activations (some as compositions of ops
// with gradients), Dropout and Cast.
//
//===----------------------------------------------------------------------===//

#include "../ImporterImpl.h"

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/IR/Matchers.h"

#include <cmath>
#include <functional>
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

/// An element of a constant as a double (comparisons of shape values).
double elementValue(Attribute element) {
  if (auto f = dyn_cast<FloatAttr>(element))
    return f.getValueAsDouble();
  return static_cast<double>(cast<IntegerAttr>(element).getInt());
}

/// Comparisons, logic and Where of constants (exporters' shape arithmetic:
/// the legacy PyTorch exporter expands a class token to Where(Equal(shape,
/// -1), ...)) fold at import, element by element with numpy broadcasting:
/// `evaluate` maps the operands' elements to the result's. Of other
/// operands, the op.
template <typename OpT, typename Evaluate>
LogicalResult importFoldable(NodeImporter &n, Evaluate evaluate,
                             ArrayRef<NamedAttribute> attributes = {}) {
  FailureOr<SmallVector<Value>> all = n.allInputs();
  if (failed(all))
    return failure();
  SmallVector<Value> &inputs = *all;
  FailureOr<Value> result = n.create<OpT>(inputs, attributes);
  if (failed(result) || matchPattern(*result, m_Constant()))
    return defineResult(n, result);
  SmallVector<DenseElementsAttr> constants;
  for (Value input : inputs) {
    DenseElementsAttr constant;
    if (!matchPattern(input, m_Constant(&constant)))
      return defineResult(n, result);
    constants.push_back(constant);
  }
  auto type = cast<RankedTensorType>(result->getType());
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr constant : constants)
    values.emplace_back(constant.getValues<Attribute>());
  SmallVector<Attribute> elements;
  SmallVector<Attribute> operands(inputs.size());
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    for (auto [k, constant] : llvm::enumerate(constants)) {
      ArrayRef<int64_t> shape = constant.getType().getShape();
      int64_t offset = type.getRank() - static_cast<int64_t>(shape.size());
      int64_t rest = i, index = 0, stride = 1;
      for (int64_t d = type.getRank() - 1; d >= 0; --d) {
        int64_t position = rest % type.getDimSize(d);
        rest /= type.getDimSize(d);
        if (d < offset)
          continue;
        int64_t size = shape[d - offset];
        index += (size == 1 ? 0 : position) * stride;
        stride *= size;
      }
      operands[k] = values[k][index];
    }
    elements.push_back(evaluate(ArrayRef<Attribute>(operands)));
  }
  result->getDefiningOp()->erase();
  n.setOutput(0, ConstantOp::create(n.builder(), n.getLoc(),
                                    DenseElementsAttr::get(type, elements)));
  return success();
}

template <typename OpT, typename Predicate>
LogicalResult importComparison(NodeImporter &n, Predicate predicate) {
  Builder b(n.context());
  return importFoldable<OpT>(n, [&](ArrayRef<Attribute> operands) {
    return b.getBoolAttr(
        predicate(elementValue(operands[0]), elementValue(operands[1])));
  });
}

LogicalResult importEqual(NodeImporter &n) {
  return importComparison<EqualOp>(n, std::equal_to<double>());
}
LogicalResult importLess(NodeImporter &n) {
  return importComparison<LessOp>(n, std::less<double>());
}
LogicalResult importGreater(NodeImporter &n) {
  return importComparison<GreaterOp>(n, std::greater<double>());
}
LogicalResult importAnd(NodeImporter &n) {
  return importComparison<AndOp>(
      n, [](double a, double b) { return a != 0 && b != 0; });
}
LogicalResult importNot(NodeImporter &n) {
  Builder b(n.context());
  return importFoldable<NotOp>(n, [&](ArrayRef<Attribute> operands) {
    return b.getBoolAttr(elementValue(operands[0]) == 0);
  });
}

LogicalResult importWhere(NodeImporter &n) {
  return importFoldable<SelectOp>(n, [](ArrayRef<Attribute> operands) {
    return elementValue(operands[0]) != 0 ? operands[1] : operands[2];
  });
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

/// Of constants (the legacy exporter's window padding arithmetic in Swin)
/// Mod folds: fmod 0 takes the divisor's sign, fmod 1 the dividend's.
LogicalResult importMod(NodeImporter &n) {
  bool fmod = n.intAttr("fmod", 0) != 0;
  SmallVector<NamedAttribute, 1> attributes;
  if (fmod)
    attributes.push_back(namedAttr(n, "fmod", n.builder().getUnitAttr()));
  return importFoldable<ModOp>(
      n,
      [&](ArrayRef<Attribute> operands) -> Attribute {
        if (auto a = dyn_cast<IntegerAttr>(operands[0])) {
          int64_t x = a.getInt(), y = cast<IntegerAttr>(operands[1]).getInt();
          int64_t r = y == 0 ? 0 : x % y;
          if (!fmod && r != 0 && (r < 0) != (y < 0))
            r += y;
          return IntegerAttr::get(a.getType(), r);
        }
        auto a = cast<FloatAttr>(operands[0]);
        double x = a.getValueAsDouble(), y = elementValue(operands[1]);
        double r = std::fmod(x, y);
        if (!fmod && r != 0 && (r < 0) != (y < 0))
          r += y;
        return FloatAttr::get(a.getType(), r);
      },
      attributes);
}

/// The negative part min(x, 0) as -relu(-x), which has a gradient.
FailureOr<Value> negativePart(NodeImporter &n, Value x) {
  FailureOr<Value> negated = n.create<NegOp>(x);
  if (succeeded(negated))
    negated = n.create<ReluOp>(*negated);
  if (failed(negated))
    return failure();
  return n.create<NegOp>(*negated);
}

/// scale * (relu(x) + alpha * (e^min(x, 0) - 1)): Elu, and Selu with a
/// scale. Exact on both sides of 0, and differentiable through relu and exp.
FailureOr<Value> scaledElu(NodeImporter &n, Value x, double alpha,
                           double scale) {
  Type elementType = cast<RankedTensorType>(x.getType()).getElementType();
  FailureOr<Value> negative = negativePart(n, x);
  FailureOr<Value> positive = n.create<ReluOp>(x);
  if (failed(negative) || failed(positive))
    return failure();
  FailureOr<Value> curve = n.create<ExpOp>(*negative);
  if (succeeded(curve))
    curve =
        n.create<SubOp>(ValueRange{*curve, n.scalarConstant(elementType, 1.0)});
  if (succeeded(curve))
    curve = n.create<MulOp>(
        ValueRange{*curve, n.scalarConstant(elementType, alpha)});
  if (succeeded(curve))
    curve = n.create<AddOp>(ValueRange{*positive, *curve});
  if (succeeded(curve) && scale != 1.0)
    curve = n.create<MulOp>(
        ValueRange{*curve, n.scalarConstant(elementType, scale)});
  return curve;
}

LogicalResult importElu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  return defineResult(n, scaledElu(n, *x, n.floatAttr("alpha", 1.0), 1.0));
}

LogicalResult importSelu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  // ONNX's defaults are float32 roundings of the paper's constants.
  double alpha = n.floatAttr("alpha", 1.67326319217681884765625);
  double gamma = n.floatAttr("gamma", 1.05070102214813232421875);
  return defineResult(n, scaledElu(n, *x, alpha, gamma));
}

/// relu(x) + slope * min(x, 0), the slope broadcast to x (one per channel,
/// usually, and trainable).
LogicalResult importPRelu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0), slope = n.input(1);
  if (failed(x) || failed(slope))
    return failure();
  FailureOr<Value> positive = n.create<ReluOp>(*x);
  FailureOr<Value> negative = negativePart(n, *x);
  if (failed(positive) || failed(negative))
    return failure();
  FailureOr<Value> scaled = n.create<MulOp>(ValueRange{*negative, *slope});
  if (failed(scaled))
    return failure();
  return defineResult(n, n.create<AddOp>(ValueRange{*positive, *scaled}));
}

/// x * tanh(softplus(x)).
LogicalResult importMish(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> gate = n.create<SoftplusOp>(*x);
  if (succeeded(gate))
    gate = n.create<TanhOp>(*gate);
  if (failed(gate))
    return failure();
  return defineResult(n, n.create<MulOp>(ValueRange{*x, *gate}));
}

/// x * Phi(x) with the normal CDF exact (0.5 (1 + erf(x / sqrt 2))) or, for
/// approximate = "tanh", 0.5 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
LogicalResult importGelu(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  std::string approximate = n.stringAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return n.error("attribute 'approximate' must be \"none\" or \"tanh\", "
                   "got \"" +
                   approximate + "\"");
  Type elementType = cast<RankedTensorType>(x->getType()).getElementType();
  auto constant = [&](double value) {
    return n.scalarConstant(elementType, value);
  };
  FailureOr<Value> cdf;
  if (approximate == "none") {
    cdf = n.create<MulOp>(ValueRange{*x, constant(M_SQRT1_2)});
    if (succeeded(cdf))
      cdf = n.create<ErfOp>(*cdf);
  } else {
    FailureOr<Value> cube = n.create<MulOp>(ValueRange{*x, *x});
    if (succeeded(cube))
      cube = n.create<MulOp>(ValueRange{*cube, *x});
    if (succeeded(cube))
      cube = n.create<MulOp>(ValueRange{*cube, constant(0.044715)});
    if (succeeded(cube))
      cdf = n.create<AddOp>(ValueRange{*x, *cube});
    if (succeeded(cdf))
      cdf = n.create<MulOp>(ValueRange{*cdf, constant(std::sqrt(2 / M_PI))});
    if (succeeded(cdf))
      cdf = n.create<TanhOp>(*cdf);
  }
  if (succeeded(cdf))
    cdf = n.create<AddOp>(ValueRange{*cdf, constant(1.0)});
  if (succeeded(cdf))
    cdf = n.create<MulOp>(ValueRange{*cdf, constant(0.5)});
  if (failed(cdf))
    return failure();
  return defineResult(n, n.create<MulOp>(ValueRange{*x, *cdf}));
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

/// Cast to the element type of input 1, whose values are not read (PyTorch's
/// default exporter writes it, unoptimised, for scalars).
LogicalResult importCastLike(NodeImporter &n) {
  FailureOr<Value> x = n.input(0);
  FailureOr<RankedTensorType> like = n.inputType(1);
  if (failed(x) || failed(like))
    return failure();
  if (n.version() >= 19)
    (void)n.intAttr("saturate", 1);
  if (n.version() >= 24)
    (void)n.stringAttr("round_mode", "up");
  return defineResult(
      n, n.create<CastOp>(
             *x, {namedAttr(n, "to", TypeAttr::get(like->getElementType()))}));
}

} // namespace

std::vector<OpRecord> elementwiseOpRecords() {
  return {
      {"Abs", importUnary<AbsOp>, {13}},
      {"Add", importBinary<AddOp>, {13, 14}},
      {"And", importAnd, {7}},
      {"Cast", importCast, {13, 19, 21, 23, 24, 25, 28}},
      // Input 1 is read for its type only: an initializer there is no weight.
      {"CastLike", importCastLike, {15, 19, 21, 23, 24, 25}, {1}},
      {"Ceil", importUnary<CeilOp>, {13}},
      // The bounds are attributes in disguise.
      {"Clip", importClip, {13}, {1, 2}},
      {"Cos", importUnary<CosOp>, {7, 22}},
      {"Div", importBinary<DivOp>, {13, 14}},
      // The ratio and training_mode decide how the node is compiled.
      {"Dropout", importDropout, {13, 22}, {1, 2}},
      {"Elu", importElu, {6, 22}},
      {"Equal", importEqual, {13, 19}},
      {"Erf", importUnary<ErfOp>, {13}},
      {"Exp", importUnary<ExpOp>, {13}},
      {"Floor", importUnary<FloorOp>, {13}},
      {"Gelu", importGelu, {20}},
      {"Greater", importGreater, {13}},
      {"HardSigmoid", importHardSigmoid, {6, 22}},
      {"HardSwish", importHardSwish, {14, 22}},
      {"LeakyRelu", importLeakyRelu, {6, 16}},
      {"Less", importLess, {13}},
      {"Log", importUnary<LogOp>, {13}},
      {"Max", importVariadic<MaxOp>, {13}},
      {"Mean", importVariadic<AddOp, /*Mean=*/true>, {13}},
      {"Min", importVariadic<MinOp>, {13}},
      {"Mish", importMish, {18, 22}},
      {"Mod", importMod, {13, 28}},
      {"Mul", importBinary<MulOp>, {13, 14}},
      {"Neg", importUnary<NegOp>, {13}},
      {"Not", importNot, {1}},
      {"PRelu", importPRelu, {9, 16}},
      {"Pow", importPow, {13, 15}},
      {"Reciprocal", importUnary<ReciprocalOp>, {13}},
      {"Relu", importUnary<ReluOp>, {13, 14}},
      {"Round", importUnary<RoundOp>, {11, 22}},
      {"Selu", importSelu, {6, 22}},
      {"Sigmoid", importUnary<SigmoidOp>, {13}},
      {"Sin", importUnary<SinOp>, {7, 22}},
      {"Softplus", importUnary<SoftplusOp>, {1, 22}},
      {"Sqrt", importUnary<SqrtOp>, {13}},
      {"Sub", importBinary<SubOp>, {13, 14}},
      {"Sum", importVariadic<AddOp>, {13}},
      {"Tanh", importUnary<TanhOp>, {13}},
      {"Where", importWhere, {9, 16}},
  };
}

} // namespace fastnn::onnx_import
