//===- BuildEvalStep.cpp - the fastnn-build-eval-step pass ----------------===//

#include "StepBuilder.h"

#include "fastnn/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNBUILDEVALSTEP
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

using ::fastnn::step::asLogits;
using ::fastnn::step::finishStep;
using ::fastnn::step::labelLogProbabilities;
using ::fastnn::step::lookupForward;
using ::fastnn::step::topKHits;
using ::fastnn::step::typeOf;

struct BuildEvalStepPass
    : public ::fastnn::impl::FastNNBuildEvalStepBase<BuildEvalStepPass> {
  using FastNNBuildEvalStepBase::FastNNBuildEvalStepBase;

  void runOnOperation() override {
    if (failed(build(getOperation())))
      signalPassFailure();
  }

  LogicalResult build(ModuleOp module) {
    FailureOr<func::FuncOp> found =
        lookupForward(module, "evaluate", "evaluation");
    if (failed(found))
      return failure();
    func::FuncOp forward = *found;
    Block &body = forward.front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    Location loc = forward.getLoc();
    int64_t batch = typeOf(body.getArgument(0)).getDimSize(0);
    Value labels =
        body.addArgument(RankedTensorType::get({batch}, b.getI64Type()), loc);

    // @forward already has inference semantics (batch norm on its running
    // statistics, dropout the identity); only the head is added. Auxiliary
    // logits are a training aid and are dropped.
    Location lossLoc = NameLoc::get(b.getStringAttr("loss"), loc);
    FailureOr<Value> logits =
        asLogits(b, lossLoc, ret.getOperand(0), batch, ret);
    if (failed(logits))
      return failure();
    Value picked = labelLogProbabilities(b, lossLoc, *logits, labels);
    Value loss = NegOp::create(
        b, lossLoc,
        ReduceSumOp::create(b, lossLoc,
                            RankedTensorType::get({batch}, b.getF32Type()),
                            picked, b.getDenseI64ArrayAttr({1}), UnitAttr()));
    auto hits = topKHits(b, loc, *logits, labels);
    finishStep(forward, ret, "eval_step", {loss, hits.top1, hits.top5},
               {"images", "labels"}, {"loss", "top1", "top5"});

    // The auxiliary head, and the parameters only it read, are gone.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isOpTriviallyDead(&op))
        op.erase();
    // The uses are gathered once: asking per parameter walks the module
    // each time (nasnet_cifar's 944 parameters took 5 s).
    SymbolTableCollection symbolTables;
    SymbolUserMap users(symbolTables, module);
    for (auto parameter :
         llvm::make_early_inc_range(module.getOps<ParameterOp>()))
      if (users.useEmpty(parameter))
        parameter.erase();
    return success();
  }
};

} // namespace
