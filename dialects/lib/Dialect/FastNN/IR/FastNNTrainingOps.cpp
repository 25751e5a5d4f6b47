//===- FastNNTrainingOps.cpp - verification of training-step ops ----------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Dialect/FastNN/IR/ShapeInference.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace {

RankedTensorType rankedType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

int64_t channelDim(RankedTensorType type, Layout layout) {
  return layout == Layout::NHWC ? type.getRank() - 1 : 1;
}

} // namespace

LogicalResult BatchNormTrainOp::verify() {
  RankedTensorType input = rankedType(getInput());
  if (input.getRank() < 2)
    return emitOpError("expects an input of rank >= 2");
  int64_t channels = input.getDimSize(channelDim(input, getLayout()));
  RankedTensorType scale = rankedType(getScale());
  if (scale.getRank() != 1 || scale.getDimSize(0) != channels)
    return emitOpError("expects per-channel operands of ")
           << channels << " elements, got " << scale;
  return success();
}

SmallVector<unsigned> BatchNormTrainOp::getActivationOperands() {
  return {getInputMutable().getOperandNumber()};
}

/// The batch's mean and variance are statistics.
SmallVector<unsigned> BatchNormTrainOp::getActivationResults() { return {0}; }

SmallVector<unsigned> BatchNormBackwardOp::getActivationOperands() {
  return {getInputMutable().getOperandNumber(),
          getGradOutputMutable().getOperandNumber()};
}

/// The scale's and bias's gradients have the parameters' type.
SmallVector<unsigned> BatchNormBackwardOp::getActivationResults() {
  return {0};
}

LogicalResult DropoutTrainOp::verify() {
  if (getRatio().convertToDouble() >= 1.0)
    return emitOpError("expects a ratio in [0, 1)");
  if (rankedType(getStep()).getRank() != 0)
    return emitOpError("expects a scalar step");
  return success();
}

LogicalResult Conv2DBackwardOp::verify() {
  SmallVector<Type, 1> outputTypes;
  Conv2DOp::Properties properties;
  properties.setStrides(getStridesAttr());
  properties.setPads(getPadsAttr());
  properties.setDilations(getDilationsAttr());
  properties.setGroups(getGroupsAttr());
  properties.setLayout(getLayoutAttr());
  if (failed(Conv2DOp::inferReturnTypes(
          getContext(), getLoc(),
          Conv2DOp::Adaptor(ValueRange{getInput(), getFilter()},
                            DictionaryAttr(), properties),
          outputTypes)))
    return failure();
  if (outputTypes.front() != getGradOutput().getType())
    return emitOpError("grad_output must have the convolution's output type ")
           << outputTypes.front();
  if (getGradInput().getType() != getInput().getType() ||
      getGradFilter().getType() != getFilter().getType())
    return emitOpError("expects gradients of the input's and filter's types");
  RankedTensorType bias = rankedType(getGradBias());
  if (bias.getRank() != 1 ||
      bias.getDimSize(0) != rankedType(getFilter()).getDimSize(0))
    return emitOpError("expects a bias gradient of one element per output "
                       "channel");
  return success();
}

LogicalResult Pool2DBackwardOp::verify() {
  Operation *forward = getForwardOutput().getDefiningOp();
  if (!isa_and_nonnull<MaxPool2DOp, AvgPool2DOp>(forward))
    return emitOpError("expects the result of a max_pool2d or avg_pool2d");
  if (getGradOutput().getType() != getForwardOutput().getType())
    return emitOpError("grad_output must have the pooling's output type");
  if (getGradInput().getType() != forward->getOperand(0).getType())
    return emitOpError("grad_input must have the pooling's input type");
  return success();
}

LogicalResult LRNBackwardOp::verify() {
  if (!getForwardOutput().getDefiningOp<LRNOp>())
    return emitOpError("expects the result of an lrn");
  return success();
}

LogicalResult BroadcastOp::verify() {
  RankedTensorType input = rankedType(getInput());
  RankedTensorType result = rankedType(getResult());
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(input.getShape(), result.getShape());
  if (!shape || ArrayRef<int64_t>(*shape) != result.getShape())
    return emitOpError("cannot broadcast ") << input << " to " << result;
  return success();
}

LogicalResult OneHotOp::verify() {
  RankedTensorType labels = rankedType(getLabels());
  RankedTensorType result = rankedType(getResult());
  if (labels.getRank() != 1 || result.getRank() != 2 ||
      result.getDimSize(0) != labels.getDimSize(0))
    return emitOpError("expects labels [N] and a result [N, classes]");
  return success();
}

LogicalResult InTopKOp::verify() {
  RankedTensorType logits = rankedType(getLogits());
  RankedTensorType labels = rankedType(getLabels());
  RankedTensorType result = rankedType(getResult());
  if (logits.getRank() != 2 || labels.getRank() != 1 || result.getRank() != 1 ||
      labels.getDimSize(0) != logits.getDimSize(0) ||
      result.getDimSize(0) != logits.getDimSize(0))
    return emitOpError("expects logits [N, C], labels [N] and a result [N]");
  return success();
}

LogicalResult UpdateStateOp::verify() {
  if (!getState().getDefiningOp<ParamOp>())
    return emitOpError("expects state read by fastnn.param");
  return success();
}

int64_t ApplyOptimizerOp::slotCount(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::SGD:
    return 0;
  case Optimizer::Momentum:
  case Optimizer::Adagrad:
    return 1;
  default:
    return 2;
  }
}

double ApplyOptimizerOp::slotInitialValue(Optimizer optimizer, int64_t index,
                                          double initialAccumulatorValue) {
  // tf.train: RMSProp's mean square starts at 1; Adagrad's and FTRL's
  // accumulators at initial_accumulator_value; everything else at 0.
  if (optimizer == Optimizer::RMSProp && index == 0)
    return 1.0;
  if ((optimizer == Optimizer::Adagrad || optimizer == Optimizer::FTRL) &&
      index == 0)
    return initialAccumulatorValue;
  return 0.0;
}

LogicalResult ApplyOptimizerOp::verify() {
  if (!getParam().getDefiningOp<ParamOp>())
    return emitOpError("expects a parameter read by fastnn.param");
  auto paramType = rankedType(getParam());
  auto gradType = rankedType(getGrad());
  Type gradElement = gradType.getElementType();
  if (gradType.getShape() != paramType.getShape() ||
      (gradElement != paramType.getElementType() &&
       !(gradElement.isBF16() && paramType.getElementType().isF32())))
    return emitOpError("expects a gradient of the parameter's type, or bf16 "
                       "for an f32 parameter");
  if (static_cast<int64_t>(getSlots().size()) != slotCount(getOptimizer()))
    return emitOpError("expects ") << slotCount(getOptimizer()) << " slots for "
                                   << stringifyOptimizer(getOptimizer());
  for (Value slot : getSlots())
    if (slot.getType() != getParam().getType() ||
        !slot.getDefiningOp<ParamOp>())
      return emitOpError("expects slots read by fastnn.param, of the "
                         "parameter's type");
  if (rankedType(getLearningRate()).getRank() != 0 ||
      rankedType(getStep()).getRank() != 0)
    return emitOpError("expects a scalar learning rate and step");
  if (getApply() && rankedType(getApply()).getRank() != 0)
    return emitOpError("expects a scalar condition");
  return success();
}

LogicalResult AllFiniteOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one operand");
  if (rankedType(getResult()).getRank() != 0)
    return emitOpError("expects a scalar result");
  return success();
}

LogicalResult UpdateLossScaleOp::verify() {
  if (rankedType(getScale()).getRank() != 0 ||
      rankedType(getFinite()).getRank() != 0)
    return emitOpError("expects scalar operands");
  if (!(getFactor().convertToDouble() > 1.0))
    return emitOpError("expects a factor above 1");
  return success();
}

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, adaptor.getInputs().getTypes());
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one input");
  Type element = rankedType(getInputs().front()).getElementType();
  for (Value input : getInputs())
    if (rankedType(input).getElementType() != element)
      return emitOpError("expects inputs of one element type (one buffer), "
                         "got ")
             << element << " and " << rankedType(input).getElementType();
  return success();
}
