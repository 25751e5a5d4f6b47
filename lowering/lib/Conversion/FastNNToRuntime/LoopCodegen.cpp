//===- LoopCodegen.cpp - fastnn ops generated as linalg loops -------------===//
//
// Elementwise arithmetic, casts and data movement have no library kernel
// worth a call: they become linalg ops over memref views of the arena, which
// the standard pipeline lowers to loops.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::lowering {
namespace {

SmallVector<utils::IteratorType> parallel(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

Value floatConstant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

/// Numpy broadcasting as an indexing map from the output's iteration space:
/// a size-1 input dimension facing a larger output dimension reads index 0.
AffineMap broadcastMap(RankedTensorType input, RankedTensorType output,
                       MLIRContext *context) {
  int64_t rank = output.getRank(), offset = rank - input.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < input.getRank(); ++i) {
    bool broadcast =
        input.getDimSize(i) == 1 && output.getDimSize(i + offset) != 1;
    exprs.push_back(broadcast ? getAffineConstantExpr(0, context)
                              : getAffineDimExpr(i + offset, context));
  }
  return AffineMap::get(rank, 0, exprs, context);
}

bool isFloat(Type type) { return isa<FloatType>(type); }

bool isHalf(Type type) { return type.isBF16() || type.isF16(); }

/// The f32 value of bf16 bits (exact: bf16 is the top half of an f32).
Value bf16BitsToF32(OpBuilder &b, Location loc, Value bits) {
  Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), bits);
  Value shifted = arith::ShLIOp::create(
      b, loc, wide, arith::ConstantIntOp::create(b, loc, 16, 32));
  return arith::BitcastOp::create(b, loc, b.getF32Type(), shifted);
}

/// The bits of `value` (f32) rounded to bf16, to nearest even; NaN stays a
/// quiet NaN.
Value f32ToBF16Bits(OpBuilder &b, Location loc, Value value) {
  auto i32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
  Value odd = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, i32(16)), i32(1));
  Value rounded = arith::AddIOp::create(
      b, loc, bits, arith::AddIOp::create(b, loc, odd, i32(0x7fff)));
  Value top = arith::TruncIOp::create(
      b, loc, b.getI16Type(), arith::ShRUIOp::create(b, loc, rounded, i32(16)));
  Value nan =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, value, value);
  return arith::SelectOp::create(
      b, loc, nan, arith::ConstantIntOp::create(b, loc, 0x7fc0, 16), top);
}

/// A stored element of type \p element as the f32 that arithmetic on it
/// uses (bf16 is stored as its i16 bits); other types are returned as they
/// are.
Value widenHalf(OpBuilder &b, Location loc, Value value, Type element) {
  if (element.isBF16())
    return bf16BitsToF32(b, loc, value);
  if (element.isF16())
    return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
  return value;
}

/// The f32 \p value rounded to how type \p element is stored; the inverse
/// of widenHalf.
Value roundHalf(OpBuilder &b, Location loc, Value value, Type element) {
  if (element.isBF16())
    return f32ToBF16Bits(b, loc, value);
  if (element.isF16())
    return arith::TruncFOp::create(b, loc, element, value);
  return value;
}

} // namespace

Value RunEmitter::view(Location loc, Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  auto memrefType = MemRefType::get(
      type.getShape(), elementType ? elementType : type.getElementType());
  Value shift =
      arith::ConstantIndexOp::create(runBuilder, loc, layout.offsetOf(value));
  return memref::ViewOp::create(runBuilder, loc, memrefType, arenaMemRef, shift,
                                ValueRange{});
}

LogicalResult RunEmitter::lowerAllFinite(AllFiniteOp op) {
  OpBuilder &b = runBuilder;
  Location loc = op.getLoc();
  Value result = view(loc, op.getResult());
  linalg::FillOp::create(b, loc,
                         ValueRange{arith::ConstantIntOp::create(b, loc, 1, 1)},
                         ValueRange{result});
  // x - x is 0 for every finite x and NaN for infinities and NaNs.
  for (Value input : op.getInputs()) {
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    linalg::GenericOp::create(
        b, loc, ValueRange{view(loc, input)}, ValueRange{result},
        {b.getMultiDimIdentityMap(rank),
         AffineMap::get(rank, 0, {}, b.getContext())},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value difference = arith::SubFOp::create(nb, l, args[0], args[0]);
          Value finite = arith::CmpFOp::create(
              nb, l, arith::CmpFPredicate::OEQ, difference,
              floatConstant(nb, l, args[0].getType(), 0.0));
          linalg::YieldOp::create(
              nb, l, ValueRange{arith::AndIOp::create(nb, l, args[1], finite)});
        });
  }
  return success();
}

LogicalResult RunEmitter::lowerUpdateLossScale(UpdateLossScaleOp op) {
  OpBuilder &b = runBuilder;
  Location loc = op.getLoc();
  double interval = static_cast<double>(op.getGrowthInterval());
  double factor = op.getFactor().convertToDouble();
  AffineMap scalarMap = AffineMap::get(0, 0, {}, b.getContext());
  linalg::GenericOp::create(
      b, loc,
      ValueRange{view(loc, op.getScale()), view(loc, op.getGoodSteps()),
                 view(loc, op.getFinite())},
      ValueRange{view(loc, op.getNewScale()), view(loc, op.getNewGoodSteps())},
      SmallVector<AffineMap>(5, scalarMap), {},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Type f32 = nb.getF32Type();
        auto constant = [&](double v) { return floatConstant(nb, l, f32, v); };
        Value scale = args[0], finite = args[2];
        Value counted = arith::AddFOp::create(nb, l, args[1], constant(1.0));
        Value grow = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE,
                                           counted, constant(interval));
        Value grown = arith::SelectOp::create(
            nb, l, grow, arith::MulFOp::create(nb, l, scale, constant(factor)),
            scale);
        Value shrunk = arith::MaximumFOp::create(
            nb, l, arith::DivFOp::create(nb, l, scale, constant(factor)),
            constant(1.0));
        Value count =
            arith::SelectOp::create(nb, l, grow, constant(0.0), counted);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{
                arith::SelectOp::create(nb, l, finite, grown, shrunk),
                arith::SelectOp::create(nb, l, finite, count, constant(0.0))});
      });
  return success();
}

namespace {
ArrayRef<int64_t> reductionAxes(Operation *op) {
  return op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
}
} // namespace

LogicalResult RunEmitter::lowerReduction(Operation *op) {
  OpBuilder &b = runBuilder;
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  Value input = op->getOperand(0), result = op->getResult(0);
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  ArrayRef<int64_t> axes = reductionAxes(op);
  bool keepdims = op->hasAttr("keepdims");
  SmallVector<AffineExpr> outputExprs;
  SmallVector<utils::IteratorType> iterators;
  int64_t extent = 1;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (reduced)
      extent *= inputType.getDimSize(d);
    if (!reduced)
      outputExprs.push_back(getAffineDimExpr(d, context));
    else if (keepdims)
      outputExprs.push_back(getAffineConstantExpr(0, context));
  }
  Type f32 = b.getF32Type();
  auto reduction = cast<ReductionBodyOpInterface>(op);
  Value output = view(loc, result);
  linalg::FillOp::create(
      b, loc,
      ValueRange{floatConstant(b, loc, f32, reduction.getReductionIdentity())},
      ValueRange{output});
  linalg::GenericOp::create(
      b, loc, ValueRange{view(loc, input)}, ValueRange{output},
      {b.getMultiDimIdentityMap(rank),
       AffineMap::get(rank, 0, outputExprs, context)},
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(
            nb, l, reduction.buildCombine(nb, l, args[1], args[0]));
      });
  if (isa<ReduceMeanOp>(op)) {
    int64_t outputRank = cast<RankedTensorType>(result.getType()).getRank();
    linalg::GenericOp::create(
        b, loc, ValueRange{}, ValueRange{output},
        {b.getMultiDimIdentityMap(outputRank)}, parallel(outputRank),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(
              nb, l,
              arith::DivFOp::create(
                  nb, l, args[0],
                  floatConstant(nb, l, f32, static_cast<double>(extent)))
                  .getResult());
        });
  }
  return success();
}

LogicalResult RunEmitter::lowerElementwise(Operation *root) {
  OpBuilder &b = runBuilder;
  Location loc = root->getLoc();
  MLIRContext *context = root->getContext();
  auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
  int64_t rank = resultType.getRank();

  // The ops computed in this nest: `root` and, recursively, the producers
  // inlined into it (same shape as `root`), with the distinct values they
  // read from memory (the leaves). An inlined transpose is a leaf read
  // from its input through the permutation.
  SmallVector<Value> leaves;
  llvm::DenseMap<Value, unsigned> leafIndex;
  auto computedHere = [&](Value operand, Operation *user) {
    Operation *producer = operand.getDefiningOp();
    return producer && !isa<TransposeOp>(producer) &&
           layout.inlinedInto.lookup(producer) == user;
  };
  std::function<LogicalResult(Operation *)> collect =
      [&](Operation *op) -> LogicalResult {
    if (cast<RankedTensorType>(op->getResult(0).getType())
            .getElementType()
            .isUnsignedInteger())
      return op->emitOpError("on unsigned integers is not supported by the "
                             "code generator");
    if (failed(cast<ScalarBodyOpInterface>(op).verifyScalarBody()))
      return failure();
    for (Value operand : op->getOperands()) {
      if (computedHere(operand, op)) {
        if (failed(collect(operand.getDefiningOp())))
          return failure();
      } else if (leafIndex.try_emplace(operand, leaves.size()).second) {
        leaves.push_back(operand);
      }
    }
    return success();
  };
  if (failed(collect(root)))
    return failure();

  /// bf16 elements are read and written as their i16 bits and converted
  /// with integer arithmetic: LLVM vectorises that, but keeps bf16 values
  /// (and the compares and selects it folds back onto them) scalar.
  Type i16 = b.getI16Type();
  auto elementOf = [](Value value) {
    return cast<RankedTensorType>(value.getType()).getElementType();
  };
  auto stored = [&](Value value) {
    Type element = elementOf(value);
    return element.isBF16() ? i16 : element;
  };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (Value leaf : leaves) {
    auto transpose = leaf.getDefiningOp<TransposeOp>();
    if (transpose && layout.inlinedInto.count(transpose)) {
      // Result dimension i is input dimension permutation[i].
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      SmallVector<unsigned> inputToResult(permutation.size());
      for (auto [i, p] : llvm::enumerate(permutation))
        inputToResult[p] = i;
      inputs.push_back(
          view(loc, transpose.getInput(), stored(transpose.getInput())));
      maps.push_back(AffineMap::getPermutationMap(inputToResult, context));
      continue;
    }
    inputs.push_back(view(loc, leaf, stored(leaf)));
    maps.push_back(broadcastMap(cast<RankedTensorType>(leaf.getType()),
                                resultType, context));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value result = root->getResult(0);
  linalg::GenericOp::create(
      b, loc, inputs, ValueRange{view(loc, result, stored(result))}, maps,
      parallel(rank), [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // Half-precision arithmetic happens in f32: operands are widened
        // and each op's result rounded to its type once, also where the
        // next op reads it without a trip through memory.
        std::function<Value(Operation *)> compute = [&](Operation *op) {
          SmallVector<Value> values;
          for (Value operand : op->getOperands()) {
            Type element = elementOf(operand);
            if (computedHere(operand, op))
              values.push_back(widenHalf(
                  nb, nloc,
                  roundHalf(nb, nloc, compute(operand.getDefiningOp()),
                            element),
                  element));
            else
              values.push_back(widenHalf(
                  nb, nloc, args[leafIndex.lookup(operand)], element));
          }
          auto body = cast<ScalarBodyOpInterface>(op);
          Type bodyType = body.getScalarBodyType();
          return body.buildScalarBody(
              nb, nloc, values, isHalf(bodyType) ? nb.getF32Type() : bodyType,
              [](OpBuilder &ib, Location iloc, int64_t dim) -> Value {
                return linalg::IndexOp::create(ib, iloc, dim);
              });
        };
        linalg::YieldOp::create(
            nb, nloc, roundHalf(nb, nloc, compute(root), elementOf(result)));
      });
  return success();
}

LogicalResult RunEmitter::lowerLoopOp(Operation *op) {
  OpBuilder &b = runBuilder;
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  if (auto update = dyn_cast<UpdateStateOp>(op)) {
    linalg::CopyOp::create(b, loc, view(loc, update.getValue()),
                           view(loc, update.getState()));
    return success();
  }
  if (auto next = dyn_cast<UpdateLossScaleOp>(op))
    return lowerUpdateLossScale(next);
  if (auto allFinite = dyn_cast<AllFiniteOp>(op))
    return lowerAllFinite(allFinite);
  if (auto next = dyn_cast<NextBatchOp>(op))
    return lowerNextBatch(next);
  if (reducesInLoops(op))
    return lowerReduction(op);
  if (op->getNumResults() != 1)
    return op->emitOpError("cannot be generated as loops");
  Value result = op->getResult(0);
  auto resultType = cast<RankedTensorType>(result.getType());
  Type elementType = resultType.getElementType();
  if (elementType.isUnsignedInteger())
    return op->emitOpError("on unsigned integers is not supported by the "
                           "code generator");
  if (op->hasTrait<OpTrait::fastnn::Elementwise>())
    return lowerElementwise(op);
  int64_t rank = resultType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);

  /// A loop over the output that computes each element from its indices.
  auto gatherLoop =
      [&](function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> fn)
      -> LogicalResult {
    linalg::GenericOp::create(
        b, loc, ValueRange{}, ValueRange{view(loc, result)}, {identity},
        parallel(rank), [&](OpBuilder &nb, Location nloc, ValueRange) {
          SmallVector<Value> indices;
          for (int64_t d = 0; d < rank; ++d)
            indices.push_back(linalg::IndexOp::create(nb, nloc, d));
          linalg::YieldOp::create(nb, nloc, fn(nb, nloc, indices));
        });
    return success();
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](TransposeOp transpose) {
        linalg::TransposeOp::create(b, loc, view(loc, transpose.getInput()),
                                    view(loc, result),
                                    transpose.getPermutation());
        return success();
      })
      .Case([&](ConcatOp concat) {
        Value output = view(loc, result);
        int64_t axis = concat.getAxis(), offset = 0;
        for (Value input : concat.getInputs()) {
          auto type = cast<RankedTensorType>(input.getType());
          SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
          offsets[axis] = offset;
          offset += type.getDimSize(axis);
          Value part = memref::SubViewOp::create(b, loc, output, offsets,
                                                 type.getShape(), strides);
          linalg::CopyOp::create(b, loc, view(loc, input), part);
        }
        return success();
      })
      .Case([&](PadOp pad) -> LogicalResult {
        auto inputType = cast<RankedTensorType>(pad.getInput().getType());
        ArrayRef<int64_t> pads = pad.getPads();
        Value input = view(loc, pad.getInput());
        if (pad.getMode() == PadMode::Constant) {
          Value output = view(loc, result);
          Attribute fill =
              isFloat(elementType)
                  ? Attribute(b.getFloatAttr(elementType,
                                             pad.getValue().convertToDouble()))
                  : Attribute(b.getIntegerAttr(
                        elementType, static_cast<int64_t>(
                                         pad.getValue().convertToDouble())));
          linalg::FillOp::create(b, loc,
                                 ValueRange{arith::ConstantOp::create(
                                     b, loc, cast<TypedAttr>(fill))},
                                 ValueRange{output});
          SmallVector<int64_t> offsets(pads.take_front(rank)), strides(rank, 1);
          Value interior = memref::SubViewOp::create(
              b, loc, output, offsets, inputType.getShape(), strides);
          linalg::CopyOp::create(b, loc, input, interior);
          return success();
        }
        bool reflect = pad.getMode() == PadMode::Reflect;
        return gatherLoop([&](OpBuilder &nb, Location l,
                              ArrayRef<Value> indices) -> Value {
          SmallVector<Value> source;
          for (int64_t d = 0; d < rank; ++d) {
            Value begin = arith::ConstantIndexOp::create(nb, l, pads[d]);
            Value last = arith::ConstantIndexOp::create(
                nb, l, inputType.getDimSize(d) - 1);
            Value zero = arith::ConstantIndexOp::create(nb, l, 0);
            Value s = arith::SubIOp::create(nb, l, indices[d], begin);
            if (reflect) {
              // Mirror around the border elements without repeating them.
              Value negative = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::slt, s, zero);
              s = arith::SelectOp::create(
                  nb, l, negative, arith::SubIOp::create(nb, l, zero, s), s);
              Value beyond = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::sgt, s, last);
              Value twiceLast = arith::AddIOp::create(nb, l, last, last);
              s = arith::SelectOp::create(
                  nb, l, beyond, arith::SubIOp::create(nb, l, twiceLast, s), s);
            } else {
              s = arith::MaxSIOp::create(nb, l, s, zero);
              s = arith::MinSIOp::create(nb, l, s, last);
            }
            source.push_back(s);
          }
          return memref::LoadOp::create(nb, l, input, source);
        });
      })
      .Case([&](SliceOp slice) {
        Value input = view(loc, slice.getInput());
        ArrayRef<int64_t> offsets = slice.getOffsets(),
                          steps = slice.getSteps();
        return gatherLoop(
            [&](OpBuilder &nb, Location l, ArrayRef<Value> indices) -> Value {
              SmallVector<Value> source;
              for (int64_t d = 0; d < rank; ++d) {
                Value scaled = arith::MulIOp::create(
                    nb, l, indices[d],
                    arith::ConstantIndexOp::create(nb, l, steps[d]));
                source.push_back(arith::AddIOp::create(
                    nb, l, scaled,
                    arith::ConstantIndexOp::create(nb, l, offsets[d])));
              }
              return memref::LoadOp::create(nb, l, input, source);
            });
      })
      .Case([&](GatherOp gather) {
        Value input = view(loc, gather.getInput());
        Value indicesView = view(loc, gather.getIndices());
        auto inputType = cast<RankedTensorType>(gather.getInput().getType());
        int64_t indexRank =
            cast<RankedTensorType>(gather.getIndices().getType()).getRank();
        int64_t axis = gather.getAxis();
        return gatherLoop([&](OpBuilder &nb, Location l,
                              ArrayRef<Value> indices) -> Value {
          Value picked = memref::LoadOp::create(nb, l, indicesView,
                                                indices.slice(axis, indexRank));
          picked = arith::IndexCastOp::create(nb, l, nb.getIndexType(), picked);
          // ONNX: negative indices count from the end.
          Value size =
              arith::ConstantIndexOp::create(nb, l, inputType.getDimSize(axis));
          Value negative =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, picked,
                                    arith::ConstantIndexOp::create(nb, l, 0));
          picked = arith::SelectOp::create(
              nb, l, negative, arith::AddIOp::create(nb, l, picked, size),
              picked);
          SmallVector<Value> source(indices.take_front(axis));
          source.push_back(picked);
          llvm::append_range(source, indices.drop_front(axis + indexRank));
          return memref::LoadOp::create(nb, l, input, source);
        });
      })
      .Case([&](MaxPool2DIndicesOp pool) {
        // Each output element walks its window, unrolled (kernels are
        // small), keeping the first strictly larger value's flat index.
        auto inputType = cast<RankedTensorType>(pool.getInput().getType());
        Type inputElement = inputType.getElementType();
        bool bf16 = inputElement.isBF16();
        Value input = view(loc, pool.getInput(),
                           bf16 ? Type(b.getI16Type()) : inputElement);
        int64_t channels = inputType.getDimSize(1);
        int64_t height = inputType.getDimSize(2);
        int64_t width = inputType.getDimSize(3);
        ArrayRef<int64_t> kernel = pool.getKernelShape();
        ArrayRef<int64_t> strides = pool.getStrides();
        ArrayRef<int64_t> pads = pool.getPads();
        ArrayRef<int64_t> dilations = pool.getDilations();
        bool columnMajor = pool.getStorageOrder() == 1;
        return gatherLoop([&](OpBuilder &nb, Location l,
                              ArrayRef<Value> indices) -> Value {
          auto constant = [&](int64_t v) {
            return arith::ConstantIndexOp::create(nb, l, v).getResult();
          };
          auto mul = [&](Value x, int64_t v) {
            return arith::MulIOp::create(nb, l, x, constant(v)).getResult();
          };
          auto add = [&](Value x, Value y) {
            return arith::AddIOp::create(nb, l, x, y).getResult();
          };
          auto compare = [&](arith::CmpIPredicate predicate, Value x,
                             int64_t v) {
            return arith::CmpIOp::create(nb, l, predicate, x, constant(v))
                .getResult();
          };
          Type valueType = bf16 ? Type(nb.getF32Type()) : inputElement;
          Value plane =
              mul(add(mul(indices[0], channels), indices[1]), height * width);
          Value top = arith::SubIOp::create(nb, l, mul(indices[2], strides[0]),
                                            constant(pads[0]));
          Value left = arith::SubIOp::create(nb, l, mul(indices[3], strides[1]),
                                             constant(pads[1]));
          Value bestValue = floatConstant(
              nb, l, valueType, -std::numeric_limits<double>::infinity());
          Value bestIndex =
              arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(-1));
          for (int64_t kh = 0; kh < kernel[0]; ++kh) {
            for (int64_t kw = 0; kw < kernel[1]; ++kw) {
              Value h = add(top, constant(kh * dilations[0]));
              Value w = add(left, constant(kw * dilations[1]));
              Value inside = arith::AndIOp::create(
                  nb, l,
                  arith::AndIOp::create(
                      nb, l, compare(arith::CmpIPredicate::sge, h, 0),
                      compare(arith::CmpIPredicate::slt, h, height)),
                  arith::AndIOp::create(
                      nb, l, compare(arith::CmpIPredicate::sge, w, 0),
                      compare(arith::CmpIPredicate::slt, w, width)));
              // Outside the input, read (0, 0) and never take it.
              Value hc = arith::SelectOp::create(nb, l, inside, h, constant(0));
              Value wc = arith::SelectOp::create(nb, l, inside, w, constant(0));
              Value value = memref::LoadOp::create(
                  nb, l, input, ValueRange{indices[0], indices[1], hc, wc});
              if (bf16)
                value = bf16BitsToF32(nb, l, value);
              Value offset = columnMajor ? add(mul(wc, height), hc)
                                         : add(mul(hc, width), wc);
              Value flat = arith::IndexCastOp::create(nb, l, nb.getI64Type(),
                                                      add(plane, offset));
              Value first = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::slt, bestIndex,
                  arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0)));
              Value larger = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OGT, value, bestValue);
              Value take = arith::AndIOp::create(
                  nb, l, inside, arith::OrIOp::create(nb, l, first, larger));
              bestValue =
                  arith::SelectOp::create(nb, l, take, value, bestValue);
              bestIndex = arith::SelectOp::create(nb, l, take, flat, bestIndex);
            }
          }
          return bestIndex;
        });
      })
      .Case([&](OneHotOp oneHot) {
        Value labels = view(loc, oneHot.getLabels());
        return gatherLoop([&](OpBuilder &nb, Location l,
                              ArrayRef<Value> indices) -> Value {
          Value label = memref::LoadOp::create(nb, l, labels, indices[0]);
          Value column =
              arith::IndexCastOp::create(nb, l, label.getType(), indices[1]);
          Value hit = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                            label, column);
          return arith::SelectOp::create(
              nb, l, hit, floatConstant(nb, l, elementType, 1.0),
              floatConstant(nb, l, elementType, 0.0));
        });
      })
      .Case([&](InTopKOp topK) {
        // Count the logits strictly above the label's, per row, into the
        // result; then turn each count into whether it is below k.
        Value logits = view(loc, topK.getLogits());
        Value labels = view(loc, topK.getLabels());
        Value output = view(loc, result);
        linalg::FillOp::create(
            b, loc, ValueRange{floatConstant(b, loc, elementType, 0.0)},
            ValueRange{output});
        AffineMap rows = AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, context);
        linalg::GenericOp::create(
            b, loc, ValueRange{logits}, ValueRange{output},
            {b.getMultiDimIdentityMap(2), rows},
            {utils::IteratorType::parallel, utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value row = linalg::IndexOp::create(nb, l, 0);
              Value label = arith::IndexCastOp::create(
                  nb, l, nb.getIndexType(),
                  memref::LoadOp::create(nb, l, labels, row));
              Value target =
                  memref::LoadOp::create(nb, l, logits, ValueRange{row, label});
              Value above = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OGT, args[0], target);
              Value count = arith::AddFOp::create(
                  nb, l, args[1],
                  arith::SelectOp::create(
                      nb, l, above, floatConstant(nb, l, elementType, 1.0),
                      floatConstant(nb, l, elementType, 0.0)));
              linalg::YieldOp::create(nb, l, count);
            });
        double k = static_cast<double>(topK.getK());
        linalg::GenericOp::create(
            b, loc, ValueRange{}, ValueRange{output}, {identity},
            parallel(rank), [&](OpBuilder &nb, Location l, ValueRange args) {
              Value inside = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OLT, args[0],
                  floatConstant(nb, l, elementType, k));
              linalg::YieldOp::create(
                  nb, l,
                  arith::SelectOp::create(
                      nb, l, inside, floatConstant(nb, l, elementType, 1.0),
                      floatConstant(nb, l, elementType, 0.0))
                      .getResult());
            });
        return success();
      })
      .Default([](Operation *op) {
        return op->emitOpError("is not supported by the code generator");
      });
}

} // namespace fastnn::lowering
