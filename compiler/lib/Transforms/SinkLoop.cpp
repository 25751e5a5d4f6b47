//===- SinkLoop.cpp - the fastnn-sink-loop pass ---------------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Transforms/Passes.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNSINKLOOP
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

struct SinkLoopPass : public ::fastnn::impl::FastNNSinkLoopBase<SinkLoopPass> {
  using FastNNSinkLoopBase::FastNNSinkLoopBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (iterations < 1) {
      module.emitError("expects at least 1 iteration per loop, got ")
          << iterations;
      return signalPassFailure();
    }
    if (iterations == 1)
      return;
    auto step = module.lookupSymbol<func::FuncOp>(entryName);
    if (!step) {
      module.emitError("no function @") << entryName << " to sink into a loop";
      return signalPassFailure();
    }
    if (failed(sink(step)))
      signalPassFailure();
  }

  /// The argument named `name` (fastnn.name) of type `type`.
  FailureOr<BlockArgument> input(func::FuncOp step, StringRef name,
                                 Type type = {}) {
    for (BlockArgument arg : step.getArguments()) {
      auto attr =
          step.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "fastnn.name");
      if (!attr || attr.getValue() != name)
        continue;
      if (type && arg.getType() != type)
        return step.emitError("loop sinking expects the input '")
               << name << "' to be " << type << ", got " << arg.getType();
      return arg;
    }
    return step.emitError("loop sinking expects an input named '")
           << name << "' (a training step of fastnn-build-train-step)";
  }

  LogicalResult sink(func::FuncOp step) {
    OpBuilder b(&getContext());
    Location loc = step.getLoc();
    auto i64Scalar = RankedTensorType::get({}, b.getI64Type());
    auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
    FailureOr<BlockArgument> images = input(step, "images");
    if (failed(images))
      return failure();
    FailureOr<BlockArgument> labels = input(step, "labels");
    if (failed(labels))
      return failure();
    FailureOr<BlockArgument> rate = input(step, "learning_rate", f32Scalar);
    if (failed(rate))
      return failure();
    FailureOr<BlockArgument> stepIndex = input(step, "step", i64Scalar);
    if (failed(stepIndex))
      return failure();
    if (!llvm::hasSingleElement(step.getBody()))
      return step.emitError("loop sinking expects a function of one block");
    Block &body = step.front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    SmallVector<Type> stacked;
    for (Value result : ret.getOperands()) {
      auto type = cast<RankedTensorType>(result.getType());
      if (type.getRank() != 0)
        return step.emitError("loop sinking stacks scalar results, got ")
               << type;
      stacked.push_back(
          RankedTensorType::get({iterations}, type.getElementType()));
    }

    // The whole step moves into the loop's body.
    b.setInsertionPointToStart(&body);
    auto loop =
        LoopOp::create(b, loc, stacked, b.getI64IntegerAttr(iterations));
    Block *loopBody =
        b.createBlock(&loop.getBody(), {}, TypeRange{i64Scalar}, {loc});
    loopBody->getOperations().splice(loopBody->end(), body.getOperations(),
                                     std::next(loop->getIterator()),
                                     ret->getIterator());
    OpBuilder inner = OpBuilder::atBlockEnd(loopBody);
    LoopYieldOp::create(inner, loc, ret.getOperands());
    ret->setOperands(loop.getResults());

    // Iteration i reads its own batch, rate and step number.
    inner.setInsertionPointToStart(loopBody);
    Value iteration = loopBody->getArgument(0);
    Location inputLoc = NameLoc::get(b.getStringAttr("input"), loc);
    auto next = NextBatchOp::create(inner, inputLoc, *images, *labels);
    rate->setType(RankedTensorType::get({iterations}, b.getF32Type()));
    Value rateNow = GatherOp::create(inner, loc, f32Scalar, *rate, iteration,
                                     inner.getI64IntegerAttr(0));
    Value stepNow =
        AddOp::create(inner, loc, ValueRange{*stepIndex, iteration});
    auto insideLoop = [&](Operation *except) {
      return [&, except](OpOperand &use) {
        return use.getOwner() != except &&
               loop->isProperAncestor(use.getOwner());
      };
    };
    images->replaceUsesWithIf(next.getNextImages(), insideLoop(next));
    labels->replaceUsesWithIf(next.getNextLabels(), insideLoop(next));
    rate->replaceUsesWithIf(rateNow, insideLoop(rateNow.getDefiningOp()));
    stepIndex->replaceUsesWithIf(stepNow, insideLoop(stepNow.getDefiningOp()));
    step.setType(
        FunctionType::get(&getContext(), body.getArgumentTypes(), stacked));
    return success();
  }
};

} // namespace
