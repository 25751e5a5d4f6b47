//===- FastNNLoopOps.cpp - verification of the loop-sinking ops -----------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::fastnn;

LogicalResult LoopOp::verify() {
  Block &body = getBody().front();
  auto index = RankedTensorType::get({}, IntegerType::get(getContext(), 64));
  if (body.getNumArguments() != 1 || body.getArgument(0).getType() != index)
    return emitOpError("expects a body whose one argument is the iteration "
                       "index, ")
           << index;
  auto yield = dyn_cast<LoopYieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("expects its body to end with fastnn.loop_yield");
  if (yield.getValues().size() != getNumResults())
    return emitOpError("expects ")
           << getNumResults() << " yielded values, one per result, got "
           << yield.getValues().size();
  for (auto [value, result] : llvm::zip(yield.getValues(), getResults())) {
    auto yielded = cast<RankedTensorType>(value.getType());
    auto stacked = RankedTensorType::get({int64_t(getIterations())},
                                         yielded.getElementType());
    if (yielded.getRank() != 0 || result.getType() != stacked)
      return emitOpError("expects scalars yielded and results stacking them "
                         "over the iterations (")
             << stacked << "), got " << yielded << " and " << result.getType();
  }
  return success();
}

LogicalResult NextBatchOp::verify() {
  auto function = (*this)->getParentOfType<func::FuncOp>();
  for (Value input : {getImages(), getLabels()}) {
    auto argument = dyn_cast<BlockArgument>(input);
    if (!argument || !function ||
        argument.getOwner() != &function.getBody().front())
      return emitOpError("expects the step function's inputs, where the "
                         "batch is fetched to");
  }
  return success();
}
