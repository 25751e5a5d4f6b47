//===- FastNNOps.cpp - fastnn operations: verification and inference -----===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Dialect/FastNN/IR/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fastnn;

namespace {

/// Emits an inference error prefixed like an op error, so diagnostics read
/// the same whether inference ran while building or while verifying.
template <typename OpT, typename... Args>
LogicalResult inferFailure(std::optional<Location> loc, Args &&...args) {
  return emitOptionalError(loc, "'", OpT::getOperationName(), "' op ",
                           std::forward<Args>(args)...);
}

RankedTensorType rankedType(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

/// Spatial dimension indices (H, W) and channel index for a layout.
struct LayoutDims {
  int64_t channel, height, width;
};
LayoutDims layoutDims(Layout layout) {
  if (layout == Layout::NHWC)
    return {3, 1, 2};
  return {1, 2, 3};
}

/// Checks the window attributes of conv and pool ops. Inference also runs on
/// ops whose attributes ODS has not verified yet (the importer builds ops from
/// untrusted models), so the sizes are checked here too.
template <typename OpT>
LogicalResult
checkWindowAttrs(std::optional<Location> loc, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations) {
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    return inferFailure<OpT>(loc,
                             "expects 2 strides, 2 dilations and 4 pads, "
                             "got ",
                             strides.size(), ", ", dilations.size(), " and ",
                             pads.size());
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }))
    return inferFailure<OpT>(loc, "expects positive strides");
  if (llvm::any_of(dilations, [](int64_t d) { return d <= 0; }))
    return inferFailure<OpT>(loc, "expects positive dilations");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return inferFailure<OpT>(loc, "expects non-negative pads");
  return success();
}

/// Output shape of a 2-D window op (conv or pool) on a 4-D input.
template <typename OpT>
LogicalResult
inferWindowShape(std::optional<Location> loc, RankedTensorType input,
                 Layout layout, int64_t outChannels, ArrayRef<int64_t> kernel,
                 ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                 ArrayRef<int64_t> dilations, bool ceilMode,
                 SmallVectorImpl<int64_t> &shape) {
  LayoutDims dims = layoutDims(layout);
  shape.assign(input.getShape().begin(), input.getShape().end());
  shape[dims.channel] = outChannels;
  int64_t spatial[2] = {dims.height, dims.width};
  for (int i = 0; i < 2; ++i) {
    std::optional<int64_t> size = slidingWindowOutputSize(
        input.getDimSize(spatial[i]), kernel[i], strides[i], dilations[i],
        pads[i], pads[i + 2], ceilMode);
    if (!size)
      return inferFailure<OpT>(loc, "window of size ", kernel[i], " (dilation ",
                               dilations[i], ") does not fit input dimension ",
                               input.getDimSize(spatial[i]), " padded by ",
                               pads[i], "+", pads[i + 2]);
    shape[spatial[i]] = *size;
  }
  return success();
}

/// Checks `axis` against `rank` and returns it; ONNX's negative axes are
/// normalised by the importer, so the IR holds non-negative axes only.
template <typename OpT>
LogicalResult checkAxis(std::optional<Location> loc, int64_t axis,
                        int64_t rank) {
  if (axis < 0 || axis >= rank)
    return inferFailure<OpT>(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// ParameterOp / ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParameterOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getInitialValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("expects a statically shaped tensor initial value");
  if (!isa<FloatType>(type.getElementType()))
    return emitOpError("expects a floating-point initial value, got ")
           << type.getElementType();
  return success();
}

LogicalResult ParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto parameter =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!parameter)
    return emitOpError("refers to '")
           << getName() << "', which is not a fastnn.parameter";
  if (parameter.getType() != getType())
    return emitOpError("result type ")
           << getType() << " differs from parameter type "
           << parameter.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, normalisation
//===----------------------------------------------------------------------===//

LogicalResult
Conv2DOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                           Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType filter = rankedType(adaptor.getFilter());
  if (!input || !filter)
    return inferFailure<Conv2DOp>(loc, "expects ranked operands");
  if (input.getRank() != 4)
    return inferFailure<Conv2DOp>(loc, "expects a 4-D input, got ", input);
  if (filter.getRank() != 4)
    return inferFailure<Conv2DOp>(loc, "expects a 4-D filter, got ", filter);
  if (input.getElementType() != filter.getElementType())
    return inferFailure<Conv2DOp>(loc,
                                  "expects input and filter of one "
                                  "element type, got ",
                                  input.getElementType(), " and ",
                                  filter.getElementType());
  Layout layout = adaptor.getLayout();
  bool nhwc = layout == Layout::NHWC;
  int64_t groups = adaptor.getGroups();
  if (groups <= 0)
    return inferFailure<Conv2DOp>(loc, "expects positive groups, got ", groups);
  int64_t channels = input.getDimSize(layoutDims(layout).channel);
  int64_t outChannels = filter.getDimSize(0);
  int64_t filterChannels = filter.getDimSize(nhwc ? 3 : 1);
  SmallVector<int64_t, 2> kernel = {filter.getDimSize(nhwc ? 1 : 2),
                                    filter.getDimSize(nhwc ? 2 : 3)};
  if (kernel[0] == 0 || kernel[1] == 0)
    return inferFailure<Conv2DOp>(loc, "expects a non-empty kernel, got ",
                                  filter);
  if (channels % groups != 0 || channels / groups != filterChannels)
    return inferFailure<Conv2DOp>(
        loc, "input has ", channels, " channels, which is not groups (", groups,
        ") times the filter's ", filterChannels, " input channels");
  if (outChannels % groups != 0)
    return inferFailure<Conv2DOp>(loc, "output channels (", outChannels,
                                  ") are not divisible by groups (", groups,
                                  ")");
  if (Value bias = adaptor.getBias()) {
    RankedTensorType biasType = rankedType(bias);
    if (!biasType || biasType.getRank() != 1 ||
        biasType.getDimSize(0) != outChannels ||
        biasType.getElementType() != input.getElementType())
      return inferFailure<Conv2DOp>(
          loc, "expects a bias of ", outChannels, " elements of type ",
          input.getElementType(), ", got ", bias.getType());
  }
  ArrayRef<int64_t> strides = adaptor.getStrides();
  ArrayRef<int64_t> pads = adaptor.getPads();
  ArrayRef<int64_t> dilations = adaptor.getDilations();
  if (failed(checkWindowAttrs<Conv2DOp>(loc, strides, pads, dilations)))
    return failure();
  SmallVector<int64_t, 4> shape;
  if (failed(inferWindowShape<Conv2DOp>(loc, input, layout, outChannels, kernel,
                                        strides, pads, dilations,
                                        /*ceilMode=*/false, shape)))
    return failure();
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, input.getElementType()));
  return success();
}

template <typename OpT, typename AdaptorT>
static LogicalResult inferPoolType(std::optional<Location> loc,
                                   AdaptorT adaptor,
                                   ArrayRef<int64_t> dilations,
                                   SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input || input.getRank() != 4)
    return inferFailure<OpT>(loc, "expects a 4-D input, got ",
                             adaptor.getInput().getType());
  if (!adaptor.getKernelShapeAttr() || adaptor.getKernelShape().size() != 2)
    return inferFailure<OpT>(loc, "expects a kernel shape of 2 sizes");
  ArrayRef<int64_t> kernel = adaptor.getKernelShape();
  if (llvm::any_of(kernel, [](int64_t k) { return k <= 0; }))
    return inferFailure<OpT>(loc, "expects a positive kernel shape");
  if (failed(checkWindowAttrs<OpT>(loc, adaptor.getStrides(), adaptor.getPads(),
                                   dilations)))
    return failure();
  // A pad as large as the kernel would make windows that see only padding.
  for (int i = 0; i < 2; ++i)
    if (adaptor.getPads()[i] >= kernel[i] ||
        adaptor.getPads()[i + 2] >= kernel[i])
      return inferFailure<OpT>(loc, "expects pads smaller than the kernel");
  Layout layout = adaptor.getLayout();
  SmallVector<int64_t, 4> shape;
  if (failed(inferWindowShape<OpT>(
          loc, input, layout, input.getDimSize(layoutDims(layout).channel),
          kernel, adaptor.getStrides(), adaptor.getPads(), dilations,
          adaptor.getCeilMode(), shape)))
    return failure();
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult
MaxPool2DOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferPoolType<MaxPool2DOp>(loc, adaptor, adaptor.getDilations(),
                                    inferredReturnTypes);
}

LogicalResult MaxPool2DIndicesOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  if (adaptor.getLayout() != Layout::NCHW)
    return inferFailure<MaxPool2DIndicesOp>(loc, "expects the NCHW layout");
  if (adaptor.getStorageOrder() != 0 && adaptor.getStorageOrder() != 1)
    return inferFailure<MaxPool2DIndicesOp>(
        loc, "expects storage_order 0 (row-major) or 1 (column-major), got ",
        adaptor.getStorageOrder());
  if (failed(inferPoolType<MaxPool2DIndicesOp>(
          loc, adaptor, adaptor.getDilations(), inferredReturnTypes)))
    return failure();
  auto pooled = cast<RankedTensorType>(inferredReturnTypes.back());
  inferredReturnTypes.back() = pooled.clone(IntegerType::get(context, 64));
  return success();
}

LogicalResult
AvgPool2DOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferPoolType<AvgPool2DOp>(loc, adaptor, adaptor.getDilations(),
                                    inferredReturnTypes);
}

LogicalResult
BatchNormOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input || input.getRank() < 2)
    return inferFailure<BatchNormOp>(loc, "expects an input of rank >= 2");
  int64_t channelDim =
      adaptor.getLayout() == Layout::NHWC ? input.getRank() - 1 : 1;
  int64_t channels = input.getDimSize(channelDim);
  for (Value operand : {adaptor.getScale(), adaptor.getBias(),
                        adaptor.getMean(), adaptor.getVariance()}) {
    RankedTensorType type = rankedType(operand);
    if (!type || type.getRank() != 1 || type.getDimSize(0) != channels)
      return inferFailure<BatchNormOp>(loc, "expects per-channel operands of ",
                                       channels, " elements, got ",
                                       operand.getType());
  }
  inferredReturnTypes.push_back(input);
  return success();
}

LogicalResult BatchNormOp::verify() {
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0.0 && momentum <= 1.0))
    return emitOpError("expects a momentum in [0, 1], got ") << momentum;
  return success();
}

SmallVector<unsigned> BatchNormOp::getActivationOperands() {
  return {getInputMutable().getOperandNumber()};
}

SmallVector<unsigned> BatchNormOp::getActivationResults() { return {0}; }

LogicalResult LRNOp::verify() {
  if (getInput().getType().getRank() != 4)
    return emitOpError("expects a 4-D input, got ") << getInput().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult
MatMulOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                           Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType a = rankedType(adaptor.getA());
  RankedTensorType b = rankedType(adaptor.getB());
  if (!a || !b || a.getRank() < 2 || b.getRank() < 2)
    return inferFailure<MatMulOp>(loc, "expects operands of rank >= 2");
  int64_t m = a.getDimSize(a.getRank() - (adaptor.getTransposeA() ? 1 : 2));
  int64_t ka = a.getDimSize(a.getRank() - (adaptor.getTransposeA() ? 2 : 1));
  int64_t kb = b.getDimSize(b.getRank() - (adaptor.getTransposeB() ? 1 : 2));
  int64_t n = b.getDimSize(b.getRank() - (adaptor.getTransposeB() ? 2 : 1));
  if (ka != kb)
    return inferFailure<MatMulOp>(loc, "contracting dimensions differ: ", ka,
                                  " vs ", kb);
  std::optional<SmallVector<int64_t>> batch =
      broadcastShapes(a.getShape().drop_back(2), b.getShape().drop_back(2));
  if (!batch)
    return inferFailure<MatMulOp>(loc, "batch dimensions of ", a, " and ", b,
                                  " do not broadcast");
  batch->push_back(m);
  batch->push_back(n);
  inferredReturnTypes.push_back(
      RankedTensorType::get(*batch, a.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT, typename AdaptorT>
static LogicalResult
inferBroadcastType(std::optional<Location> loc, AdaptorT adaptor,
                   SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType lhs = rankedType(adaptor.getLhs());
  RankedTensorType rhs = rankedType(adaptor.getRhs());
  if (!lhs || !rhs)
    return inferFailure<OpT>(loc, "expects ranked operands");
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(lhs.getShape(), rhs.getShape());
  if (!shape)
    return inferFailure<OpT>(loc, "operand shapes ", lhs, " and ", rhs,
                             " do not broadcast");
  inferredReturnTypes.push_back(
      RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

#define FASTNN_BROADCAST_INFERENCE(OpT)                                        \
  LogicalResult OpT::inferReturnTypes(                                         \
      MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,      \
      SmallVectorImpl<Type> &inferredReturnTypes) {                            \
    return inferBroadcastType<OpT>(loc, adaptor, inferredReturnTypes);         \
  }
FASTNN_BROADCAST_INFERENCE(AddOp)
FASTNN_BROADCAST_INFERENCE(SubOp)
FASTNN_BROADCAST_INFERENCE(MulOp)
FASTNN_BROADCAST_INFERENCE(DivOp)
FASTNN_BROADCAST_INFERENCE(MaxOp)
FASTNN_BROADCAST_INFERENCE(MinOp)
FASTNN_BROADCAST_INFERENCE(PowOp)
FASTNN_BROADCAST_INFERENCE(ModOp)
#undef FASTNN_BROADCAST_INFERENCE

#define FASTNN_COMPARE_INFERENCE(OpT)                                          \
  LogicalResult OpT::inferReturnTypes(                                         \
      MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,      \
      SmallVectorImpl<Type> &inferredReturnTypes) {                            \
    if (failed(inferBroadcastType<OpT>(loc, adaptor, inferredReturnTypes)))    \
      return failure();                                                        \
    inferredReturnTypes[0] = cast<RankedTensorType>(inferredReturnTypes[0])    \
                                 .clone(IntegerType::get(context, 1));         \
    return success();                                                          \
  }
FASTNN_COMPARE_INFERENCE(EqualOp)
FASTNN_COMPARE_INFERENCE(LessOp)
FASTNN_COMPARE_INFERENCE(GreaterOp)
FASTNN_COMPARE_INFERENCE(AndOp)
#undef FASTNN_COMPARE_INFERENCE

LogicalResult
SelectOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                           Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType condition = rankedType(adaptor.getCondition());
  RankedTensorType onTrue = rankedType(adaptor.getOnTrue());
  RankedTensorType onFalse = rankedType(adaptor.getOnFalse());
  if (!condition || !onTrue || !onFalse)
    return inferFailure<SelectOp>(loc, "expects ranked operands");
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(onTrue.getShape(), onFalse.getShape());
  if (shape)
    shape = broadcastShapes(condition.getShape(), *shape);
  if (!shape)
    return inferFailure<SelectOp>(loc, "operand shapes ", condition, ", ",
                                  onTrue, " and ", onFalse,
                                  " do not broadcast");
  inferredReturnTypes.push_back(
      RankedTensorType::get(*shape, onTrue.getElementType()));
  return success();
}

LogicalResult ClipOp::verify() {
  // Written so that a NaN bound fails too.
  if (!(getMin().convertToDouble() <= getMax().convertToDouble()))
    return emitOpError("expects min <= max, got ")
           << getMin().convertToDouble() << " > " << getMax().convertToDouble();
  return success();
}

LogicalResult DropoutOp::verify() {
  if (!(getRatio().convertToDouble() < 1.0))
    return emitOpError("expects a ratio in [0, 1), got ")
           << getRatio().convertToDouble();
  return success();
}

/// A random op's step, where it has one, is a scalar.
static LogicalResult verifyRandomStep(Operation *op, Value step) {
  if (step && rankedType(step).getRank() != 0)
    return op->emitOpError("expects a scalar step");
  return success();
}

LogicalResult RandomUniformOp::verify() {
  double low = getLow().convertToDouble(), high = getHigh().convertToDouble();
  if (!std::isfinite(low) || !std::isfinite(high) || low > high)
    return emitOpError("expects finite bounds with low <= high, got [")
           << low << ", " << high << ")";
  return verifyRandomStep(*this, getStep());
}

LogicalResult RandomNormalOp::verify() {
  if (!(getScale().convertToDouble() >= 0.0) ||
      !std::isfinite(getMean().convertToDouble()))
    return emitOpError("expects a finite mean and a non-negative scale");
  return verifyRandomStep(*this, getStep());
}

LogicalResult RandomMaskOp::verify() {
  if (!(getProbability().convertToDouble() <= 1.0))
    return emitOpError("expects a probability in [0, 1], got ")
           << getProbability().convertToDouble();
  return verifyRandomStep(*this, getStep());
}

LogicalResult
CastOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                         Adaptor adaptor,
                         SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input)
    return inferFailure<CastOp>(loc, "expects a ranked input");
  inferredReturnTypes.push_back(input.clone(adaptor.getTo()));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return checkAxis<SoftmaxOp>(getLoc(), getAxis(), getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  return checkAxis<LogSoftmaxOp>(getLoc(), getAxis(), getType().getRank());
}

template <typename OpT, typename AdaptorT>
static LogicalResult
inferReduceType(std::optional<Location> loc, AdaptorT adaptor,
                SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input)
    return inferFailure<OpT>(loc, "expects a ranked input");
  ArrayRef<int64_t> axes = adaptor.getAxes();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (failed(checkAxis<OpT>(loc, axis, input.getRank())))
      return failure();
    if (i > 0 && axes[i - 1] >= axis)
      return inferFailure<OpT>(loc, "expects distinct axes in ascending "
                                    "order");
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(input.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  inferredReturnTypes.push_back(input.clone(shape));
  return success();
}

#define FASTNN_REDUCE_INFERENCE(OpT)                                           \
  LogicalResult OpT::inferReturnTypes(                                         \
      MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,      \
      SmallVectorImpl<Type> &inferredReturnTypes) {                            \
    return inferReduceType<OpT>(loc, adaptor, inferredReturnTypes);            \
  }
FASTNN_REDUCE_INFERENCE(ReduceSumOp)
FASTNN_REDUCE_INFERENCE(ReduceMeanOp)
FASTNN_REDUCE_INFERENCE(ReduceMaxOp)
FASTNN_REDUCE_INFERENCE(ReduceMinOp)
#undef FASTNN_REDUCE_INFERENCE

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult
ConcatOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                           Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  if (adaptor.getInputs().empty())
    return inferFailure<ConcatOp>(loc, "expects at least one input");
  RankedTensorType first = rankedType(adaptor.getInputs().front());
  if (!first)
    return inferFailure<ConcatOp>(loc, "expects ranked inputs");
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<ConcatOp>(loc, axis, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (Value input : adaptor.getInputs().drop_front()) {
    RankedTensorType type = rankedType(input);
    if (!type || type.getRank() != first.getRank())
      return inferFailure<ConcatOp>(loc, "expects inputs of equal rank, got ",
                                    first, " and ", input.getType());
    for (int64_t d = 0; d < first.getRank(); ++d) {
      if (d == axis)
        continue;
      if (type.getDimSize(d) != first.getDimSize(d))
        return inferFailure<ConcatOp>(loc, "inputs differ in dimension ", d,
                                      " (not the concatenation axis): ", first,
                                      " and ", type);
    }
    shape[axis] += type.getDimSize(axis);
  }
  inferredReturnTypes.push_back(first.clone(shape));
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (input.getNumElements() != result.getNumElements())
    return emitOpError("cannot reshape ")
           << input << " (" << input.getNumElements() << " elements) to "
           << result << " (" << result.getNumElements() << " elements)";
  return success();
}

LogicalResult
TransposeOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                              Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input)
    return inferFailure<TransposeOp>(loc, "expects a ranked input");
  ArrayRef<int64_t> permutation = adaptor.getPermutation();
  if (static_cast<int64_t>(permutation.size()) != input.getRank())
    return inferFailure<TransposeOp>(
        loc, "permutation has ", permutation.size(),
        " entries for an input of rank ", input.getRank());
  SmallVector<bool> seen(input.getRank(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : permutation) {
    if (p < 0 || p >= input.getRank() || seen[p])
      return inferFailure<TransposeOp>(loc, "expects a permutation of 0..",
                                       input.getRank() - 1);
    seen[p] = true;
    shape.push_back(input.getDimSize(p));
  }
  inferredReturnTypes.push_back(input.clone(shape));
  return success();
}

LogicalResult
PadOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                        Adaptor adaptor,
                        SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input)
    return inferFailure<PadOp>(loc, "expects a ranked input");
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return inferFailure<PadOp>(loc, "expects ", 2 * rank,
                               " pads (begins then ends), got ", pads.size());
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return inferFailure<PadOp>(loc, "expects non-negative pads");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d);
    // Reflection mirrors without the border element, so it needs that many
    // interior elements.
    if (adaptor.getMode() == PadMode::Reflect &&
        (pads[d] >= size || pads[d + rank] >= size))
      return inferFailure<PadOp>(loc, "reflect padding of dimension ", d,
                                 " must be smaller than its size ", size);
    if (adaptor.getMode() == PadMode::Edge && size == 0 &&
        pads[d] + pads[d + rank] > 0)
      return inferFailure<PadOp>(loc, "edge padding of an empty dimension");
    shape.push_back(size + pads[d] + pads[d + rank]);
  }
  inferredReturnTypes.push_back(input.clone(shape));
  return success();
}

LogicalResult SliceOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  ArrayRef<int64_t> offsets = getOffsets();
  ArrayRef<int64_t> steps = getSteps();
  if (result.getRank() != input.getRank())
    return emitOpError("expects a result of the input's rank ")
           << input.getRank();
  if (static_cast<int64_t>(offsets.size()) != input.getRank() ||
      static_cast<int64_t>(steps.size()) != input.getRank())
    return emitOpError("expects one offset and one step per dimension");
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (steps[d] == 0)
      return emitOpError("step of dimension ") << d << " is zero";
    int64_t size = result.getDimSize(d);
    if (size == 0)
      continue;
    int64_t last = offsets[d] + (size - 1) * steps[d];
    if (offsets[d] < 0 || offsets[d] >= input.getDimSize(d) || last < 0 ||
        last >= input.getDimSize(d))
      return emitOpError("window of dimension ")
             << d << " (offset " << offsets[d] << ", step " << steps[d]
             << ", size " << size << ") leaves the input's "
             << input.getDimSize(d) << " elements";
  }
  return success();
}

LogicalResult
GatherOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                           Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  if (!input || !indices)
    return inferFailure<GatherOp>(loc, "expects ranked operands");
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<GatherOp>(loc, axis, input.getRank())))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, input.getShape().drop_front(axis + 1));
  inferredReturnTypes.push_back(input.clone(shape));
  return success();
}

#define GET_OP_CLASSES
#include "fastnn/Dialect/FastNN/IR/FastNNOps.cpp.inc"
