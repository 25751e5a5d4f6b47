//===- KernelTypes.cpp - the fastnn-kernel-types pass ---------------------===//
//
// Ops that run as runtime kernels get operands of a type their kernel takes.
// Only the ops with a precision trait have half-precision kernels (abi.h);
// the others (softmax, reductions, LRN and their gradients) take float32, so
// a model that computes them in float16 or bfloat16 (an ONNX export in half
// precision) would be refused by the kernel's create at run time.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Conversion/Passes.h"
#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Dialect/FastNN/IR/FastNNTraits.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNKERNELTYPES
#include "fastnn/Conversion/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

bool isHalfPrecision(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<Float16Type, BFloat16Type>(tensor.getElementType());
}

/// The forward result a backward op that reuses its forward kernel reads.
Value forwardOutput(Operation *op) {
  if (auto pool = dyn_cast<Pool2DBackwardOp>(op))
    return pool.getForwardOutput();
  if (auto lrn = dyn_cast<LRNBackwardOp>(op))
    return lrn.getForwardOutput();
  return nullptr;
}

/// A kernel op without a half-precision kernel that has a half-precision
/// operand or result. Ops that write memory (state updates) are left alone:
/// a widened copy of their operand is not the memory they update. A backward
/// op made from its forward op's kernel runs in the forward's type.
bool takesOnlyFloat32(Operation *op) {
  if (op->hasTrait<OpTrait::fastnn::ReusesForwardKernel>()) {
    Value forward = forwardOutput(op);
    Operation *forwardOp = forward ? forward.getDefiningOp() : nullptr;
    return forwardOp && takesOnlyFloat32(forwardOp);
  }
  if (!op->hasTrait<OpTrait::fastnn::RunsAsKernel>() ||
      op->hasTrait<OpTrait::fastnn::LowPrecision>() ||
      op->hasTrait<OpTrait::fastnn::FollowsPrecision>() ||
      hasEffect<MemoryEffects::Write>(op))
    return false;
  return llvm::any_of(op->getOperandTypes(), isHalfPrecision) ||
         llvm::any_of(op->getResultTypes(), isHalfPrecision);
}

/// Computes `op` in float32: half-precision operands are widened (exactly)
/// before it and its half-precision results rounded back after it.
void computeInFloat32(Operation *op) {
  OpBuilder b(op);
  Type f32 = b.getF32Type();
  Value forward = forwardOutput(op);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isHalfPrecision(operand.get().getType()))
      continue;
    // The widened forward op's own result, not its rounding: the backward
    // op must read the result of the forward kernel it is made from.
    if (forward && operand.get() == forward)
      if (auto rounded = forward.getDefiningOp<CastOp>()) {
        operand.set(rounded.getInput());
        continue;
      }
    operand.set(CastOp::create(b, op->getLoc(), operand.get(), f32));
  }
  b.setInsertionPointAfter(op);
  for (OpResult result : op->getResults()) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!isHalfPrecision(type))
      continue;
    result.setType(type.clone(f32));
    auto rounded =
        CastOp::create(b, op->getLoc(), result, type.getElementType());
    result.replaceAllUsesExcept(rounded, rounded);
  }
}

struct KernelTypesPass
    : public ::fastnn::impl::FastNNKernelTypesBase<KernelTypesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> widened;
    getOperation().walk([&](Operation *op) {
      if (takesOnlyFloat32(op))
        widened.push_back(op);
    });
    for (Operation *op : widened)
      computeInFloat32(op);
  }
};

} // namespace
