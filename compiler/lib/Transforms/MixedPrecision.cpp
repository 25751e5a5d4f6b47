//===- MixedPrecision.cpp - the fastnn-mixed-precision pass ---------------===//
//
// Element types by op kind, in one walk in program order (TensorFlow's
// automatic mixed precision, with its allow/infer/deny lists, here the
// ops' traits): convolutions and matrix products (LowPrecision) always
// compute in the low type; ops that only move or combine activations
// (FollowsPrecision) follow their inputs; everything else stays f32. A
// low result is widened back to f32 right away for whoever needs f32, and
// a later low consumer of it reads the low value itself, so the casts that
// remain sit exactly where f32 and low ops meet. Last, a gradient's mean
// over the workers moves onto the low value it was widened from, so that
// the gradient travels in the low type (half the bytes), and an optimizer
// update reads a bf16 gradient without its widened copy.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

/// Whether every worker of a data-parallel job computes the same value:
/// parameters (every worker holds the same), constants, the results of
/// allreduces, and what pure ops compute from those alone.
class WorkerUniformity {
public:
  bool isUniform(Value value) {
    auto [known, inserted] = uniform.try_emplace(value, false);
    if (!inserted)
      return known->second;
    Operation *op = value.getDefiningOp();
    bool result = false;
    if (!op)
      result = false; // a step input: the worker's batch, say
    else if (isa<ParamOp, ConstantOp, AllReduceOp>(op))
      result = true;
    else if (isPure(op) && op->getNumRegions() == 0 &&
             op->getNumOperands() > 0 && !isa<DropoutTrainOp>(op))
      result = llvm::all_of(op->getOperands(),
                            [&](Value operand) { return isUniform(operand); });
    uniform[value] = result;
    return result;
  }

private:
  llvm::DenseMap<Value, bool> uniform;
};

/// Moves the mean over the workers of a gradient widened from the low type
/// onto the low value: mean(widen(g) * u + v) = widen(mean(g)) * u + v for
/// u, v the same on every worker (the loss scale's and the batch's
/// factors, the weight decay term). The low mean is the float32 mean of
/// the same values rounded once to the low type (abi.h), the gradient's
/// own precision, so the result equals the f32 mean within the rounding
/// the low type already gave each worker's gradient; and the overflow
/// check of dynamic loss scaling reads the result, so a low mean that
/// overflows is seen by every worker alike.
class LowPrecisionMeans {
public:
  explicit LowPrecisionMeans(Type low) : low(low) {}

  void run(Block &block) {
    SmallVector<AllReduceOp> means;
    for (auto allreduce : block.getOps<AllReduceOp>())
      if (allreduce.getKind() == AllReduceKind::Mean &&
          allreduce.getInputs().size() == 1)
        means.push_back(allreduce);
    for (AllReduceOp mean : means)
      moveOntoLowValue(mean);
  }

private:
  /// One op between the low value and the mean's input, and the operand
  /// the low value reaches it through.
  struct Step {
    Operation *op;
    unsigned operand;
  };

  /// The low value `value` is computed from by casts and uniform affine
  /// steps, with those steps outermost first; null if there is none.
  Value lowSource(Value value, SmallVectorImpl<Step> &steps,
                  WorkerUniformity &uniformity) {
    for (;;) {
      Operation *op = value.getDefiningOp();
      if (auto cast = dyn_cast_or_null<CastOp>(op)) {
        if (cast.getInput().getType().getElementType() != low)
          return {};
        steps.push_back({op, 0});
        return cast.getInput();
      }
      if (!isa_and_nonnull<AddOp, SubOp, MulOp, DivOp>(op))
        return {};
      // The varying operand keeps the result's shape (a uniform one may be
      // broadcast); a division only by a uniform divisor.
      std::optional<unsigned> varying;
      for (unsigned i : {0u, 1u}) {
        Value operand = op->getOperand(i);
        Value other = op->getOperand(1 - i);
        if (operand.getType() == op->getResult(0).getType() &&
            uniformity.isUniform(other) && !(isa<DivOp>(op) && i == 1))
          varying = i;
      }
      if (!varying)
        return {};
      steps.push_back({op, *varying});
      value = op->getOperand(*varying);
    }
  }

  /// The op of the mean's block that first reads its result, or the mean
  /// itself if none does.
  static Operation *firstReader(AllReduceOp mean) {
    Block *block = mean->getBlock();
    Operation *first = nullptr;
    for (Operation *user : mean->getUsers()) {
      Operation *reader = block->findAncestorOpInBlock(*user);
      if (reader && (!first || reader->isBeforeInBlock(first)))
        first = reader;
    }
    return first ? first : mean.getOperation();
  }

  void moveOntoLowValue(AllReduceOp mean) {
    SmallVector<Step> steps;
    // Fresh for each mean: the ops erased below must leave no answers.
    WorkerUniformity uniformity;
    Value source = lowSource(mean.getInputs().front(), steps, uniformity);
    if (!source)
      return;
    OpBuilder b(mean.getContext());
    // Where the low gradient is complete, so that its collective starts
    // as early as the f32 one did, or earlier.
    b.setInsertionPointAfterValue(source);
    Value reduced = AllReduceOp::create(b, mean.getLoc(), ValueRange{source},
                                        AllReduceKind::Mean)
                        .getResult(0);
    // The f32 steps again, from the mean, right before the old mean's
    // first reader (the old mean stood before it: every uniform operand is
    // defined by then), so that nothing reads the low mean early and the
    // next gradients' means can join its bucket (fastnn-fuse-allreduce).
    b.setInsertionPoint(firstReader(mean));
    for (const Step &step : llvm::reverse(steps)) {
      IRMapping mapping;
      mapping.map(step.op->getOperand(step.operand), reduced);
      reduced = b.clone(*step.op, mapping)->getResult(0);
    }
    mean.getResult(0).replaceAllUsesWith(reduced);
    mean.erase();
    for (const Step &step : steps)
      if (step.op->use_empty())
        step.op->erase();
  }

  Type low;
};

/// An optimizer update whose gradient is widened from bf16 reads the bf16
/// gradient itself (the kernel widens it as it reads, exactly): one pass over
/// the gradient and one f32 buffer fewer per parameter. f16 gradients arrive
/// through the loss scale's division, in f32, and stay as they are.
void readLowGradients(Block &block) {
  for (auto apply : block.getOps<ApplyOptimizerOp>()) {
    auto widened = apply.getGrad().getDefiningOp<CastOp>();
    if (!widened || !widened.getInput().getType().getElementType().isBF16())
      continue;
    apply.getGradMutable().assign(widened.getInput());
    if (widened->use_empty())
      widened->erase();
  }
}

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
      for (Block &block : function.getBody()) {
        PrecisionAssignment(low).run(block);
        LowPrecisionMeans(low).run(block);
        readLowGradients(block);
      }
  }
};

} // namespace
