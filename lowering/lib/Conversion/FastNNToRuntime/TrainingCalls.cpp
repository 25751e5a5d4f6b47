//===- TrainingCalls.cpp - training-step ops that run as kernels ----------===//

#include "LoweringImpl.h"

#include "fastnn/runtime/abi.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::lowering {

LogicalResult RunEmitter::lowerTrainingKernelOp(Operation *op) {
  Location loc = op->getLoc();
  SmallVector<int64_t> words;
  auto p = [&](Value value) { return pointer(loc, value); };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](Conv2DBackwardOp conv) {
        appendShape(words, conv.getInput());
        appendShape(words, conv.getFilter());
        appendShape(words, conv.getGradOutput());
        llvm::append_values(words, dtypeOf(conv.getInput()),
                            layoutWord(conv.getLayout()),
                            int64_t(!conv.getGradBias().use_empty()),
                            int64_t(FNN_POST_NONE), conv.getGroups());
        llvm::append_range(words, conv.getStrides());
        llvm::append_range(words, conv.getPads());
        llvm::append_range(words, conv.getDilations());
        words.push_back(/*constant_filter=*/0);
        int64_t k = createKernel(loc, "fnn_conv2d_backward_create", words);
        callForward(loc, "fnn_conv2d_backward", k,
                    {p(conv.getInput()), p(conv.getFilter()),
                     p(conv.getGradOutput()),
                     pointerIfUsed(loc, conv.getGradInput()),
                     pointerIfUsed(loc, conv.getGradFilter()),
                     pointerIfUsed(loc, conv.getGradBias())});
        return success();
      })
      .Case([&](Pool2DBackwardOp pool) {
        Operation *forward = pool.getForwardOutput().getDefiningOp();
        auto found = kernelOf.find(forward);
        if (found == kernelOf.end())
          return LogicalResult(
              op->emitOpError("needs its forward pooling lowered first"));
        // The descriptor is the forward kernel's: the backward kernel
        // reuses its window and saved argmax.
        auto global = module.lookupSymbol<LLVM::GlobalOp>(
            "fnn_desc_" + std::to_string(found->second));
        auto values = cast<DenseIntElementsAttr>(*global.getValue());
        for (const APInt &word : values.getValues<APInt>())
          words.push_back(word.getSExtValue());
        int64_t k = createKernel(loc, "fnn_pool2d_backward_create", words,
                                 found->second);
        callForward(loc, "fnn_pool2d_backward", k,
                    {p(pool.getGradOutput()), p(pool.getGradInput())});
        return success();
      })
      .Case([&](BatchNormTrainOp bn) {
        appendShape(words, bn.getInput());
        llvm::append_values(words, dtypeOf(bn.getInput()),
                            layoutWord(bn.getLayout()),
                            layout.postOps.lookup(op));
        appendDouble(words, bn.getEpsilon().convertToDouble());
        int64_t k = createKernel(loc, "fnn_batch_norm_train_create", words);
        Value residual = layout.fusedAddend.lookup(bn);
        callForward(loc, "fnn_batch_norm_train_forward", k,
                    {p(bn.getInput()), p(bn.getScale()), p(bn.getBias()),
                     residual ? p(residual) : nullPointer(loc),
                     p(bn.getResult()), p(bn.getMean()), p(bn.getVariance())});
        return success();
      })
      .Case([&](BatchNormBackwardOp bn) {
        appendShape(words, bn.getInput());
        llvm::append_values(words, dtypeOf(bn.getInput()),
                            layoutWord(bn.getLayout()), int64_t(FNN_POST_NONE));
        appendDouble(words, bn.getEpsilon().convertToDouble());
        int64_t k = createKernel(loc, "fnn_batch_norm_backward_create", words);
        callForward(loc, "fnn_batch_norm_backward", k,
                    {p(bn.getInput()), p(bn.getScale()), p(bn.getMean()),
                     p(bn.getVariance()), p(bn.getGradOutput()),
                     pointerIfUsed(loc, bn.getGradInput()),
                     pointerIfUsed(loc, bn.getGradScale()),
                     pointerIfUsed(loc, bn.getGradBias())});
        return success();
      })
      .Case([&](LRNBackwardOp lrn) {
        auto forward = lrn.getForwardOutput().getDefiningOp<LRNOp>();
        auto found = kernelOf.find(forward);
        if (found == kernelOf.end())
          return LogicalResult(
              op->emitOpError("needs its forward lrn lowered first"));
        appendShape(words, forward.getInput());
        llvm::append_values(words, dtypeOf(forward.getInput()),
                            int64_t(FNN_NCHW), forward.getSize());
        appendDouble(words, forward.getAlpha().convertToDouble());
        appendDouble(words, forward.getBeta().convertToDouble());
        appendDouble(words, forward.getBias().convertToDouble());
        int64_t k =
            createKernel(loc, "fnn_lrn_backward_create", words, found->second);
        callForward(
            loc, "fnn_lrn_backward", k,
            {p(lrn.getInput()), p(lrn.getGradOutput()), p(lrn.getGradInput())});
        return success();
      })
      .Case([&](ApplyOptimizerOp apply) {
        auto type = cast<RankedTensorType>(apply.getParam().getType());
        llvm::append_values(words, int64_t(apply.getOptimizer()),
                            dtypeOf(apply.getParam()), dtypeOf(apply.getGrad()),
                            type.getNumElements(),
                            int64_t(apply.getUseNesterov()));
        for (APFloat value :
             {apply.getMomentum(), apply.getRho(), apply.getBeta1(),
              apply.getBeta2(), apply.getEpsilon(), apply.getDecay(),
              apply.getInitialAccumulatorValue(), apply.getLearningRatePower(),
              apply.getL1(), apply.getL2(), apply.getWeightDecayRate()})
          appendDouble(words, value.convertToDouble());
        int64_t k = createKernel(loc, "fnn_optimizer_create", words);
        auto slots = apply.getSlots();
        SmallVector<Value> operands = {
            p(apply.getParam()),
            p(apply.getGrad()),
            slots.size() > 0 ? p(slots[0]) : nullPointer(loc),
            slots.size() > 1 ? p(slots[1]) : nullPointer(loc),
            p(apply.getLearningRate()),
            p(apply.getStep())};
        if (apply.getApply())
          operands.push_back(p(apply.getApply()));
        callForward(loc,
                    apply.getApply() ? "fnn_optimizer_apply_if"
                                     : "fnn_optimizer_apply",
                    k, operands);
        return success();
      })
      .Default([&](Operation *op) { return lowerKernelOp(op); });
}

} // namespace fastnn::lowering
