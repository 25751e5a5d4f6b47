//===- BuildTrainStep.cpp - the fastnn-build-train-step pass --------------===//

#include "StepBuilder.h"

#include "fastnn/Transforms/Passes.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace fastnn {
#define GEN_PASS_DEF_FASTNNBUILDTRAINSTEP
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

using ::fastnn::step::asLogits;
using ::fastnn::step::binary;
using ::fastnn::step::finishStep;
using ::fastnn::step::labelLogProbabilities;
using ::fastnn::step::lookupForward;
using ::fastnn::step::scalar;
using ::fastnn::step::sumAll;
using ::fastnn::step::topKHits;
using ::fastnn::step::typeOf;

struct BuildTrainStepPass
    : public ::fastnn::impl::FastNNBuildTrainStepBase<BuildTrainStepPass> {
  using FastNNBuildTrainStepBase::FastNNBuildTrainStepBase;

  void runOnOperation() override {
    if (failed(build(getOperation())))
      signalPassFailure();
  }

  /// Mean softmax cross-entropy of `logits` [N, C] against class indices.
  Value crossEntropy(OpBuilder &b, Location loc, Value logits, Value labels) {
    Value picked =
        sumAll(b, loc, labelLogProbabilities(b, loc, logits, labels));
    return binary<MulOp>(b, loc, picked,
                         scalar(b, loc, -1.0 / typeOf(logits).getDimSize(0)));
  }

  /// The batch's mean of per-sample hits.
  Value mean(OpBuilder &b, Location loc, Value hits) {
    return ReduceMeanOp::create(b, loc,
                                RankedTensorType::get({}, b.getF32Type()), hits,
                                b.getDenseI64ArrayAttr({0}), UnitAttr());
  }

  LogicalResult build(ModuleOp module) {
    FailureOr<func::FuncOp> found = lookupForward(module, "train", "training");
    if (failed(found))
      return failure();
    func::FuncOp forward = *found;
    Optimizer rule = optimizer;
    Block &body = forward.front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(module.getContext());
    Location loc = forward.getLoc();
    int64_t batch = typeOf(body.getArgument(0)).getDimSize(0);

    // Inputs of the step after the images.
    auto i64Scalar = RankedTensorType::get({}, b.getI64Type());
    Value labels =
        body.addArgument(RankedTensorType::get({batch}, b.getI64Type()), loc);
    Value learningRate =
        body.addArgument(RankedTensorType::get({}, b.getF32Type()), loc);
    Value step = body.addArgument(i64Scalar, loc);

    SymbolTable symbols(module);
    SmallVector<std::pair<Value, Value>> stateUpdates;
    if (failed(useTrainingForms(b, body, symbols, step, stateUpdates)))
      return failure();

    // Loss and metrics; the loss's ops are named for timelines and errors.
    b.setInsertionPoint(ret);
    Location lossLoc = NameLoc::get(b.getStringAttr("loss"), loc);
    FailureOr<Value> logits =
        asLogits(b, lossLoc, ret.getOperand(0), batch, ret);
    if (failed(logits))
      return failure();
    Value loss = crossEntropy(b, lossLoc, *logits, labels);
    if (ret.getNumOperands() == 2) {
      FailureOr<Value> aux =
          asLogits(b, lossLoc, ret.getOperand(1), batch, ret);
      if (failed(aux))
        return failure();
      loss = binary<AddOp>(b, lossLoc, loss,
                           binary<MulOp>(b, lossLoc,
                                         crossEntropy(b, lossLoc, *aux, labels),
                                         scalar(b, lossLoc, auxLossWeight)));
    }
    auto hits = topKHits(b, loc, *logits, labels);
    Value top1 = mean(b, hits.top1.getLoc(), hits.top1);
    Value top5 = mean(b, hits.top5.getLoc(), hits.top5);

    // Trainable parameters, and which of them are weights that decay.
    llvm::SetVector<Value> trainable;
    llvm::DenseSet<Value> weights;
    for (Operation &op : body) {
      auto read = dyn_cast<ParamOp>(op);
      if (read && symbols.lookup<ParameterOp>(read.getName()).isTrainable())
        trainable.insert(read.getResult());
    }
    // A filter may reach its convolution through a layout change
    // (fastnn-layout's OIHW -> OHWI transpose) or a reshape; it is still
    // the parameter that decays. (These two by name, not a trait: they are
    // what the importer and fastnn-layout put between a parameter and its
    // reader.)
    auto storedAs = [](Value v) {
      while (Operation *producer = v.getDefiningOp()) {
        if (!isa<TransposeOp, ReshapeOp>(producer))
          break;
        v = producer->getOperand(0);
      }
      return v;
    };
    for (Operation &op : body) {
      if (auto conv = dyn_cast<Conv2DOp>(op))
        weights.insert(storedAs(conv.getFilter()));
      else if (auto matmul = dyn_cast<MatMulOp>(op)) {
        weights.insert(storedAs(matmul.getA()));
        weights.insert(storedAs(matmul.getB()));
      }
    }
    // Loss scaling: the backward pass starts from the scale, and every
    // gradient is divided by it again before anything else reads it.
    Location scaleLoc = NameLoc::get(b.getStringAttr("loss_scale"), loc);
    Value seed, inverseScale;
    if (!(lossScale > 0) || std::isinf(lossScale))
      return module.emitError("expects a finite loss scale above 0, got ")
             << lossScale;
    if (dynamicLossScale) {
      seed = lossScaleState(b, symbols, forward, scaleLoc);
      b.setInsertionPoint(ret);
      inverseScale = binary<DivOp>(b, scaleLoc, scalar(b, scaleLoc, 1.0), seed);
    } else if (lossScale != 1.0) {
      seed = scalar(b, scaleLoc, lossScale);
      inverseScale = scalar(b, scaleLoc, 1.0 / lossScale);
    }

    // The L2 term's gradient, weight_decay * w, is added directly below;
    // differentiation covers the data loss only.
    llvm::DenseMap<Value, Value> grads;
    if (failed(differentiate(b, body, ret, loss, seed, trainable, grads)))
      return failure();
    bool decoupledDecay = rule == Optimizer::AdamW;
    if (weightDecay > 0 && !decoupledDecay) {
      Value squares;
      for (Value w : trainable)
        if (weights.count(w)) {
          Value s = sumAll(b, loc, binary<MulOp>(b, loc, w, w));
          squares = squares ? binary<AddOp>(b, loc, squares, s) : s;
        }
      if (squares)
        loss = binary<AddOp>(
            b, loc, loss,
            binary<MulOp>(b, loc, squares, scalar(b, loc, weightDecay / 2)));
    }

    // Weight decay's gradient joins each weight's gradient where the
    // backward pass completes it, so that the gradient is final (ready for
    // an allreduce, fastnn-data-parallel) as early as possible.
    SmallVector<std::pair<Value, Value>> updates;
    for (Value p : trainable) {
      Value g = grads.lookup(p);
      if (!g)
        continue;
      if (inverseScale) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointAfterValue(g);
        g = binary<MulOp>(b, scaleLoc, g, inverseScale);
      }
      if (weightDecay > 0 && !decoupledDecay && weights.count(p)) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointAfterValue(g);
        g = binary<AddOp>(
            b, loc, g, binary<MulOp>(b, loc, p, scalar(b, loc, weightDecay)));
      }
      updates.push_back({p, g});
    }

    for (auto &[state, value] : stateUpdates)
      UpdateStateOp::create(b, loc, state, value);
    for (auto &[p, g] : updates)
      if (failed(applyOptimizer(b, symbols, rule, p, g, learningRate, step)))
        return failure();

    finishStep(forward, ret, "train_step", {loss, top1, top5},
               {"images", "labels", "learning_rate", "step"},
               {"loss", "top1", "top5"});
    return success();
  }

  /// The dynamic loss scale: a `slot` parameter `loss_scale` (saved in
  /// checkpoints, restarted by finetuning as TF restarts its optimizer's
  /// variables) read at the start of the step, which the function names in
  /// its `fastnn.loss_scale` attribute for fastnn-dynamic-loss-scale.
  Value lossScaleState(OpBuilder &b, SymbolTable &symbols, func::FuncOp step,
                       Location loc) {
    auto type = RankedTensorType::get({}, b.getF32Type());
    OpBuilder moduleBuilder(step);
    auto state = ParameterOp::create(
        moduleBuilder, loc, "loss_scale", ParamRole::Slot,
        DenseElementsAttr::get(type, b.getF32FloatAttr(lossScale)));
    symbols.insert(state);
    step->setAttr("fastnn.loss_scale",
                  FlatSymbolRefAttr::get(state.getSymNameAttr()));
    OpBuilder entry = OpBuilder::atBlockBegin(&step.front());
    return ParamOp::create(entry, loc, type, state.getSymName());
  }

  /// Batch norm with batch statistics (plus the running-average updates it
  /// implies), dropout with random masks, and random draws that change
  /// with the step.
  LogicalResult
  useTrainingForms(OpBuilder &b, Block &body, SymbolTable &symbols, Value step,
                   SmallVectorImpl<std::pair<Value, Value>> &updates) {
    int64_t dropoutIndex = 0;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (auto bn = dyn_cast<BatchNormOp>(op)) {
        b.setInsertionPoint(bn);
        Location loc = bn.getLoc();
        auto train = BatchNormTrainOp::create(
            b, loc, bn.getType(), bn.getMean().getType(),
            bn.getMean().getType(), bn.getInput(), bn.getScale(), bn.getBias(),
            bn.getEpsilonAttr(), bn.getLayoutAttr());
        auto runningMean = bn.getMean().getDefiningOp<ParamOp>();
        auto runningVariance = bn.getVariance().getDefiningOp<ParamOp>();
        if (!runningMean || !runningVariance)
          return bn.emitError("training expects batch-norm statistics that "
                              "are parameters of the model");
        double momentum = bn.getMomentum().convertToDouble();
        RankedTensorType type = typeOf(bn.getInput());
        int64_t count =
            type.getNumElements() / typeOf(bn.getMean()).getNumElements();
        auto blend = [&](Value running, Value batchValue, double correction) {
          Value kept = binary<MulOp>(b, loc, running, scalar(b, loc, momentum));
          Value fresh = binary<MulOp>(
              b, loc, batchValue, scalar(b, loc, (1 - momentum) * correction));
          return binary<AddOp>(b, loc, kept, fresh);
        };
        updates.push_back(
            {runningMean, blend(runningMean, train.getMean(), 1.0)});
        // Bessel's correction for the running variance, as TF's fused batch
        // norm does; normalisation itself uses the biased variance.
        double bessel = count > 1 ? double(count) / (count - 1) : 1.0;
        updates.push_back(
            {runningVariance,
             blend(runningVariance, train.getVariance(), bessel)});
        bn.replaceAllUsesWith(train.getResult());
        bn.erase();
      } else if (auto dropout = dyn_cast<DropoutOp>(op)) {
        b.setInsertionPoint(dropout);
        Value masked = DropoutTrainOp::create(
            b, dropout.getLoc(), dropout.getType(), dropout.getInput(), step,
            dropout.getRatioAttr(),
            b.getI64IntegerAttr(dropoutSeed * 1000003 + dropoutIndex++));
        dropout.replaceAllUsesWith(masked);
        dropout.erase();
      } else if (isa<RandomUniformOp, RandomNormalOp, RandomMaskOp>(op)) {
        // Each step draws afresh; the trainer's seed selects the stream.
        op.insertOperands(0, step);
        auto seed = op.getAttrOfType<IntegerAttr>("seed");
        op.setAttr("seed", b.getI64IntegerAttr(static_cast<int64_t>(
                               static_cast<uint64_t>(seed.getInt()) ^
                               (static_cast<uint64_t>(dropoutSeed) + 1) *
                                   0x9E3779B97F4A7C15ull)));
      }
    }
    return success();
  }

  /// Reverse-mode differentiation of `loss` with respect to `trainable`,
  /// starting from `seed` (1 when null), appending the backward ops before
  /// `ret`.
  LogicalResult differentiate(OpBuilder &b, Block &body, func::ReturnOp ret,
                              Value loss, Value seed,
                              const llvm::SetVector<Value> &trainable,
                              llvm::DenseMap<Value, Value> &grads) {
    // Only values that depend on a trainable parameter need gradients.
    llvm::DenseSet<Value> active(trainable.begin(), trainable.end());
    for (Operation &op : body)
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return active.count(v); }))
        for (Value result : op.getResults())
          if (isa<FloatType>(typeOf(result).getElementType()))
            active.insert(result);
    if (!active.count(loss))
      return ret.emitError("the loss does not depend on any trainable "
                           "parameter");

    SmallVector<Operation *> forwardOps;
    for (Operation &op : body)
      if (&op != ret.getOperation())
        forwardOps.push_back(&op);
    b.setInsertionPoint(ret);
    grads[loss] = seed ? seed : scalar(b, loss.getLoc(), 1.0);
    for (Operation *op : llvm::reverse(forwardOps)) {
      SmallVector<Value> resultGrads;
      bool any = false;
      for (Value result : op->getResults()) {
        resultGrads.push_back(grads.lookup(result));
        any |= resultGrads.back() != nullptr;
      }
      if (!any || !llvm::any_of(op->getOperands(),
                                [&](Value v) { return active.count(v); }))
        continue;
      auto differentiable = dyn_cast<GradientOpInterface>(op);
      if (!differentiable)
        return op->emitOpError("has no gradient rule");
      SmallVector<Value> operandGrads;
      if (failed(differentiable.buildGradients(b, resultGrads, operandGrads)))
        return failure();
      for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
        if (!grad || !active.count(operand))
          continue;
        Value &sum = grads[operand];
        sum = sum ? binary<AddOp>(b, op->getLoc(), sum, grad) : grad;
      }
    }
    return success();
  }

  LogicalResult applyOptimizer(OpBuilder &b, SymbolTable &symbols,
                               Optimizer rule, Value param, Value grad,
                               Value learningRate, Value step) {
    auto read = param.getDefiningOp<ParamOp>();
    auto parameter = symbols.lookup<ParameterOp>(read.getName());
    Location loc = read.getLoc();
    SmallVector<Value> slots;
    for (int64_t i = 0; i < ApplyOptimizerOp::slotCount(rule); ++i) {
      double initial = ApplyOptimizerOp::slotInitialValue(
          rule, i,
          rule == Optimizer::FTRL ? ftrlInitialAccumulatorValue
                                  : adagradInitialAccumulatorValue);
      RankedTensorType type = parameter.getType();
      OpBuilder moduleBuilder(parameter);
      moduleBuilder.setInsertionPointAfter(parameter);
      auto slot = ParameterOp::create(
          moduleBuilder, loc,
          (parameter.getSymName() + ".slot" + Twine(i)).str(), ParamRole::Slot,
          DenseElementsAttr::get(
              type, b.getFloatAttr(type.getElementType(), initial)));
      symbols.insert(slot);
      OpBuilder entry = OpBuilder::atBlockBegin(read->getBlock());
      slots.push_back(ParamOp::create(entry, loc, type, slot.getSymName()));
    }
    bool rmsprop = rule == Optimizer::RMSProp;
    bool adamLike = rule == Optimizer::Adam || rule == Optimizer::AdamW;
    ApplyOptimizerOp::create(
        b, loc, param, grad, learningRate, step, slots, /*apply=*/Value(),
        OptimizerAttr::get(b.getContext(), rule),
        b.getF64FloatAttr(rmsprop ? rmspropMomentum : momentum),
        useNesterov ? b.getUnitAttr() : UnitAttr(),
        b.getF64FloatAttr(adadeltaRho), b.getF64FloatAttr(adamBeta1),
        b.getF64FloatAttr(adamBeta2), b.getF64FloatAttr(optEpsilon),
        b.getF64FloatAttr(rmspropDecay),
        b.getF64FloatAttr(rule == Optimizer::FTRL
                              ? ftrlInitialAccumulatorValue
                              : adagradInitialAccumulatorValue),
        b.getF64FloatAttr(ftrlLearningRatePower), b.getF64FloatAttr(ftrlL1),
        b.getF64FloatAttr(ftrlL2),
        b.getF64FloatAttr(adamLike && rule == Optimizer::AdamW ? weightDecay
                                                               : 0.0));
    return success();
  }
};

} // namespace
