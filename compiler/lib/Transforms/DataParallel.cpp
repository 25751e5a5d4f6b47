//===- DataParallel.cpp - the fastnn-data-parallel pass -------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNDATAPARALLEL
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

bool isAveraged(Value value) {
  return value.getDefiningOp<AllReduceOp>() != nullptr;
}

struct DataParallelPass
    : public ::fastnn::impl::FastNNDataParallelBase<DataParallelPass> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      SmallVector<ApplyOptimizerOp> updates;
      function.walk([&](ApplyOptimizerOp apply) { updates.push_back(apply); });
      if (updates.empty())
        continue;
      averageGradients(updates);
      function.walk([&](func::ReturnOp ret) { averageResults(ret); });
    }
  }

  /// Each gradient's mean right where the backward pass completes it; a
  /// gradient that feeds several updates is averaged once.
  void averageGradients(MutableArrayRef<ApplyOptimizerOp> updates) {
    llvm::DenseMap<Value, Value> means;
    for (ApplyOptimizerOp apply : updates) {
      Value grad = apply.getGrad();
      if (isAveraged(grad))
        continue;
      Value &mean = means[grad];
      if (!mean) {
        OpBuilder b(apply.getContext());
        b.setInsertionPointAfterValue(grad);
        mean = AllReduceOp::create(b, grad.getLoc(), ValueRange{grad},
                                   AllReduceKind::Mean)
                   .getResult(0);
      }
      apply.getGradMutable().assign(mean);
    }
  }

  /// One allreduce of the float results per element type, before the
  /// return.
  void averageResults(func::ReturnOp ret) {
    llvm::MapVector<Type, SmallVector<unsigned>> byElementType;
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (type && isa<FloatType>(type.getElementType()) && !isAveraged(value))
        byElementType[type.getElementType()].push_back(index);
    }
    OpBuilder b(ret);
    Location loc = NameLoc::get(b.getStringAttr("metrics"), ret.getLoc());
    for (auto &[type, indices] : byElementType) {
      SmallVector<Value> values;
      for (unsigned index : indices)
        values.push_back(ret.getOperand(index));
      auto mean = AllReduceOp::create(b, loc, values, AllReduceKind::Mean);
      for (auto [index, result] : llvm::zip(indices, mean.getResults()))
        ret.setOperand(index, result);
    }
  }
};

} // namespace
