//===- ClipGradients.cpp - the fastnn-clip-gradients pass -----------------===//

#include "StepBuilder.h"

#include "fastnn/Transforms/Passes.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNCLIPGRADIENTS
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

using ::fastnn::step::binary;
using ::fastnn::step::scalar;
using ::fastnn::step::sumAll;

struct ClipGradientsPass
    : public ::fastnn::impl::FastNNClipGradientsBase<ClipGradientsPass> {
  using FastNNClipGradientsBase::FastNNClipGradientsBase;

  void runOnOperation() override {
    if (maxNorm <= 0)
      return;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      SmallVector<ApplyOptimizerOp> updates;
      function.walk([&](ApplyOptimizerOp apply) { updates.push_back(apply); });
      if (!updates.empty())
        clip(updates);
    }
  }

  void clip(MutableArrayRef<ApplyOptimizerOp> updates) {
    OpBuilder b(updates.front());
    Location loc = NameLoc::get(b.getStringAttr("clip_by_global_norm"),
                                updates.front().getLoc());
    Value squares;
    for (ApplyOptimizerOp apply : updates) {
      Value g = apply.getGrad();
      Value s = sumAll(b, loc, binary<MulOp>(b, loc, g, g));
      squares = squares ? binary<AddOp>(b, loc, squares, s) : s;
    }
    // tf.clip_by_global_norm: g * clip / max(norm, clip).
    Value clip = scalar(b, loc, maxNorm);
    Value norm = SqrtOp::create(b, loc, squares);
    Value factor =
        binary<DivOp>(b, loc, clip, binary<MaxOp>(b, loc, norm, clip));
    for (ApplyOptimizerOp apply : updates)
      apply.getGradMutable().assign(
          binary<MulOp>(b, loc, apply.getGrad(), factor));
  }
};

} // namespace
