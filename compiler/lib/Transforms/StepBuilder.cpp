//===- StepBuilder.cpp - IR shared by the training and evaluation steps ---===//

#include "StepBuilder.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::step {

Value scalar(OpBuilder &b, Location loc, double value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

Value sumAll(OpBuilder &b, Location loc, Value value) {
  RankedTensorType type = typeOf(value);
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    axes.push_back(d);
  return ReduceSumOp::create(b, loc,
                             RankedTensorType::get({}, type.getElementType()),
                             value, b.getDenseI64ArrayAttr(axes), UnitAttr());
}

FailureOr<func::FuncOp> lookupForward(ModuleOp module, StringRef verb,
                                      StringRef noun) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return module.emitError("no function @forward to ") << verb;
  if (forward.getNumArguments() != 1)
    return forward.emitError()
           << noun << " expects a model with one input (the images), got "
           << forward.getNumArguments();
  auto ret = cast<func::ReturnOp>(forward.front().getTerminator());
  if (ret.getNumOperands() < 1 || ret.getNumOperands() > 2)
    return forward.emitError()
           << noun
           << " expects the logits (and optionally auxiliary logits) as "
              "outputs, got "
           << ret.getNumOperands() << " outputs";
  return forward;
}

FailureOr<Value> asLogits(OpBuilder &b, Location loc, Value value,
                          int64_t batch, Operation *where) {
  RankedTensorType type = typeOf(value);
  if (!isa<FloatType>(type.getElementType()))
    return where->emitError("expects floating-point logits, got ") << type;
  if (type.getRank() < 2 || type.getDimSize(0) != batch ||
      type.getNumElements() != batch * type.getDimSize(1))
    return where->emitError("expects logits of shape [batch, classes], got ")
           << type;
  if (!type.getElementType().isF32())
    value = CastOp::create(b, loc, value, b.getF32Type());
  auto logitsType =
      RankedTensorType::get({batch, type.getDimSize(1)}, b.getF32Type());
  if (type.getRank() == 2)
    return value;
  return ReshapeOp::create(b, loc, logitsType, value).getResult();
}

Value labelLogProbabilities(OpBuilder &b, Location loc, Value logits,
                            Value labels) {
  Value logProbabilities = LogSoftmaxOp::create(b, loc, logits, 1);
  Value oneHot = OneHotOp::create(b, loc, typeOf(logits), labels);
  return binary<MulOp>(b, loc, oneHot, logProbabilities);
}

TopKHits topKHits(OpBuilder &b, Location loc, Value logits, Value labels) {
  RankedTensorType type = typeOf(logits);
  auto hitsType = RankedTensorType::get({type.getDimSize(0)}, b.getF32Type());
  auto hits = [&](StringRef name, int64_t k) -> Value {
    return InTopKOp::create(b, NameLoc::get(b.getStringAttr(name), loc),
                            hitsType, logits, labels, b.getI64IntegerAttr(k));
  };
  return {hits("top1", 1),
          hits("top5", std::min<int64_t>(5, type.getDimSize(1)))};
}

void finishStep(func::FuncOp function, func::ReturnOp ret, StringRef name,
                ValueRange results, ArrayRef<StringRef> argNames,
                ArrayRef<StringRef> resultNames) {
  OpBuilder b(ret);
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  function.setName(name);
  function.setType(FunctionType::get(function.getContext(),
                                     function.front().getArgumentTypes(),
                                     ValueRange(results).getTypes()));
  // Drivers find their inputs and outputs by these names, whatever the
  // exporter called the images.
  for (auto [i, argName] : llvm::enumerate(argNames))
    function.setArgAttr(i, "fastnn.name", b.getStringAttr(argName));
  function.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  for (auto [i, resultName] : llvm::enumerate(resultNames))
    function.setResultAttr(i, "fastnn.name", b.getStringAttr(resultName));
}

} // namespace fastnn::step
