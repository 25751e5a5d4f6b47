//===- DynamicLossScale.cpp - the fastnn-dynamic-loss-scale pass ----------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Transforms/Passes.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNDYNAMICLOSSSCALE
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

Value f32Scalar(OpBuilder &b, Location loc, double value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

struct DynamicLossScalePass
    : public ::fastnn::impl::FastNNDynamicLossScaleBase<DynamicLossScalePass> {
  using FastNNDynamicLossScaleBase::FastNNDynamicLossScaleBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (growthInterval < 1) {
      module.emitError("expects a growth interval of at least 1 step, got ")
          << growthInterval;
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    for (auto function : module.getOps<func::FuncOp>())
      if (auto name =
              function->getAttrOfType<FlatSymbolRefAttr>("fastnn.loss_scale"))
        if (failed(adapt(function, name, symbols)))
          return signalPassFailure();
  }

  LogicalResult adapt(func::FuncOp function, FlatSymbolRefAttr name,
                      SymbolTable &symbols) {
    auto state = symbols.lookup<ParameterOp>(name.getValue());
    auto scalarF32 = RankedTensorType::get({}, Float32Type::get(&getContext()));
    if (!state || state.getType() != scalarF32)
      return function.emitError("fastnn.loss_scale names ")
             << name << ", which is not an f32 scalar parameter";
    Block &body = function.front();
    ParamOp scale;
    SmallVector<ApplyOptimizerOp> updates;
    for (Operation &op : body) {
      if (auto read = dyn_cast<ParamOp>(op);
          read && read.getName() == name.getValue())
        scale = read;
      else if (auto update = dyn_cast<ApplyOptimizerOp>(op))
        updates.push_back(update);
    }
    if (!scale)
      return function.emitError("does not read its loss scale ") << name;
    if (updates.empty())
      return function.emitError("has a loss scale but no apply_optimizer");
    if (llvm::any_of(updates, [](ApplyOptimizerOp u) { return u.getApply(); }))
      return function.emitError("already skips updates conditionally");

    Location loc = NameLoc::get(StringAttr::get(&getContext(), "loss_scale"),
                                function.getLoc());
    OpBuilder moduleBuilder(state);
    moduleBuilder.setInsertionPointAfter(state);
    auto goodStepsState = ParameterOp::create(
        moduleBuilder, loc, (name.getValue() + ".good_steps").str(),
        ParamRole::Slot,
        DenseElementsAttr::get(scalarF32, moduleBuilder.getF32FloatAttr(0.0f)));
    symbols.insert(goodStepsState);
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    Value goodSteps =
        ParamOp::create(b, loc, scalarF32, goodStepsState.getSymName());

    b.setInsertionPoint(updates.front());
    SmallVector<Value> grads;
    for (ApplyOptimizerOp update : updates)
      grads.push_back(update.getGrad());
    Value finite = AllFiniteOp::create(
        b, loc, RankedTensorType::get({}, b.getI1Type()), grads);
    auto next = UpdateLossScaleOp::create(b, loc, scale, goodSteps, finite,
                                          b.getI64IntegerAttr(growthInterval),
                                          b.getF64FloatAttr(2.0));
    UpdateStateOp::create(b, loc, scale, next.getNewScale());
    UpdateStateOp::create(b, loc, goodSteps, next.getNewGoodSteps());
    for (ApplyOptimizerOp update : updates)
      update.getApplyMutable().assign(finite);

    // skipped = 1 - float(finite), returned with the next scale.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    Value skipped = SubOp::create(
        b, loc,
        ValueRange{f32Scalar(b, loc, 1.0),
                   CastOp::create(b, loc, finite, b.getF32Type())});
    ret->insertOperands(ret.getNumOperands(),
                        ValueRange{next.getNewScale(), skipped});
    unsigned first = function.getNumResults();
    function.setType(FunctionType::get(
        &getContext(), function.getArgumentTypes(), ret.getOperandTypes()));
    function.setResultAttr(first, "fastnn.name", b.getStringAttr("loss_scale"));
    function.setResultAttr(first + 1, "fastnn.name",
                           b.getStringAttr("skipped"));
    return success();
  }
};

} // namespace
