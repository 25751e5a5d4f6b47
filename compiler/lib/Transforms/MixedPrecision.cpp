//===- MixedPrecision.cpp - the fastnn-mixed-precision pass ---------------===//
//
// Element types by op kind, in one walk in program order (TensorFlow's
// automatic mixed precision, with its allow/infer/deny lists, here the
// ops' traits): convolutions and matrix products (LowPrecision) always
// compute in the low type; ops that only move or combine activations
// (FollowsPrecision) follow their inputs; everything else stays f32. A
// low result is widened back to f32 right away for whoever needs f32, and
// a later low consumer of it reads the low value itself, so the casts that
// remain sit exactly where f32 and low ops meet.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Transforms/Passes.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNMIXEDPRECISION
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

bool isF32(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

enum class Role {
  /// Computes in the low type whatever its inputs are.
  Low,
  /// Computes in the low type when its activations arrive in it.
  Follow,
  /// Stays as it is.
  Keep
};

Role roleOf(Operation *op) {
  if (op->hasTrait<OpTrait::fastnn::LowPrecision>())
    return Role::Low;
  if (op->hasTrait<OpTrait::fastnn::FollowsPrecision>())
    return Role::Follow;
  return Role::Keep;
}

/// The operands and results of an op that hold activations, the ones whose
/// type changes: every f32 one, except those ActivationsOpInterface leaves
/// out (batch norm's scale, bias and statistics, and their gradients, stay
/// f32).
struct Activations {
  SmallVector<unsigned> operands, results;
};

Activations activationsOf(Operation *op) {
  if (auto withParameters = dyn_cast<ActivationsOpInterface>(op))
    return {withParameters.getActivationOperands(),
            withParameters.getActivationResults()};
  Activations activations;
  for (OpOperand &operand : op->getOpOperands())
    if (isF32(operand.get()))
      activations.operands.push_back(operand.getOperandNumber());
  for (OpResult result : op->getResults())
    if (isF32(result))
      activations.results.push_back(result.getResultNumber());
  return activations;
}

class PrecisionAssignment {
public:
  explicit PrecisionAssignment(Type low) : low(low) {}

  void run(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto backward = dyn_cast<Pool2DBackwardOp>(op)) {
        assignPoolingBackward(backward);
        continue;
      }
      Role role = roleOf(&op);
      if (role == Role::Keep)
        continue;
      Activations activations = activationsOf(&op);
      if (activations.results.empty())
        continue;
      if (role == Role::Low || arrivesLow(&op, activations))
        makeLow(&op, activations);
    }
    // Casts nobody reads any more (a widened value whose consumers all
    // became low), last first so that chains go too.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isa<CastOp>(op) && op.use_empty())
        op.erase();
  }

private:
  /// The low value `value` (f32) widens, or null.
  Value widenedFrom(Value value) {
    auto cast = value.getDefiningOp<CastOp>();
    if (cast && cast.getInput().getType().getElementType() == low)
      return cast.getInput();
    return {};
  }

  /// `value` in the low type: the value it widens, else one cast right
  /// after its definition, shared by every low consumer.
  Value lowOf(Value value) {
    if (Value original = widenedFrom(value))
      return original;
    Value &narrowed = narrowedValues[value];
    if (!narrowed) {
      OpBuilder b(value.getContext());
      if (Operation *definition = value.getDefiningOp())
        b.setInsertionPointAfter(definition);
      else
        b.setInsertionPointToStart(value.getParentBlock());
      narrowed = CastOp::create(b, value.getLoc(), value, low);
    }
    return narrowed;
  }

  /// Every activation operand is a widened low value or a constant (cast
  /// at compile time), and at least one is the former.
  bool arrivesLow(Operation *op, const Activations &activations) {
    bool anyLow = false;
    for (unsigned index : activations.operands) {
      Value operand = op->getOperand(index);
      if (widenedFrom(operand))
        anyLow = true;
      else if (!operand.getDefiningOp<ConstantOp>())
        return false;
    }
    return anyLow;
  }

  void makeLow(Operation *op, const Activations &activations) {
    for (unsigned index : activations.operands)
      op->setOperand(index, lowOf(op->getOperand(index)));
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    for (unsigned index : activations.results) {
      Value result = op->getResult(index);
      result.setType(cast<RankedTensorType>(result.getType()).clone(low));
      auto widened = CastOp::create(b, op->getLoc(), result, b.getF32Type());
      result.replaceAllUsesExcept(widened, widened);
    }
  }

  /// A pooling's gradient goes with its forward: it reads the forward
  /// kernel's saved state, so it takes the type the forward got.
  void assignPoolingBackward(Pool2DBackwardOp backward) {
    Value forward = widenedFrom(backward.getForwardOutput());
    if (!forward ||
        !isa_and_nonnull<MaxPool2DOp, AvgPool2DOp>(forward.getDefiningOp()))
      return;
    backward.getForwardOutputMutable().set(forward);
    makeLow(backward, {{1}, {0}});
  }

  Type low;
  llvm::DenseMap<Value, Value> narrowedValues;
};

struct MixedPrecisionPass
    : public ::fastnn::impl::FastNNMixedPrecisionBase<MixedPrecisionPass> {
  using FastNNMixedPrecisionBase::FastNNMixedPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    if (precision == ::fastnn::Precision::FP32)
      return;
    Type low = precision == ::fastnn::Precision::BF16 ? Type(b.getBF16Type())
                                                      : b.getF16Type();
    for (auto function : module.getOps<func::FuncOp>())
      for (Block &block : function.getBody())
        PrecisionAssignment(low).run(block);
  }
};

} // namespace
