//===- Rematerialize.cpp - the fastnn-rematerialize pass ------------------===//
//
// Recomputes stored forward values in the backward pass until the arena the
// lowering plans fits a budget. The arena is measured by the lowering's own
// planner (fastnn/Conversion/ArenaEstimate.h), so the budget holds for the
// arena train.bin allocates.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Conversion/ArenaEstimate.h"
#include "fastnn/Dialect/FastNN/IR/FastNNTraits.h"
#include "fastnn/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

namespace fastnn {
#define GEN_PASS_DEF_FASTNNREMATERIALIZE
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
/// How far a recomputation follows operands that are dead at the peak
/// before it keeps one alive instead (a relu of a batch norm of a
/// convolution of a stored value is 3 deep).
constexpr int kMaxDepth = 4;
/// Planning rounds before the pass gives up; each recomputes at least one
/// value.
constexpr int kMaxRounds = 1000;

bool isView(Operation *op) {
  return op->hasTrait<OpTrait::fastnn::ResultsAliasOperands>();
}

int64_t bytesOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  Type element = type.getElementType();
  int64_t bits = element.isInteger(1) ? 8 : element.getIntOrFloatBitWidth();
  return type.getNumElements() * bits / 8;
}

/// Whether `value` can be computed again from its producer's operands with
/// a bitwise equal result and no side effect.
bool isRecomputable(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op || isa<ParamOp, ConstantOp>(op) || op->getNumRegions() != 0 ||
      !isMemoryEffectFree(op))
    return false;
  // The normalised output; the statistics stay the ones saved.
  if (auto bn = dyn_cast<BatchNormTrainOp>(op))
    return value == bn.getResult();
  if (op->getNumResults() != 1)
    return false;
  return isView(op) || op->hasTrait<OpTrait::fastnn::Elementwise>() ||
         isa<Conv2DOp, BatchNormOp>(op);
}

/// Multiply-adds (or elementwise operations) that recomputing `value`
/// costs.
int64_t costOf(Value value) {
  Operation *op = value.getDefiningOp();
  int64_t elements = cast<RankedTensorType>(value.getType()).getNumElements();
  if (isView(op))
    return 0;
  if (auto conv = dyn_cast<Conv2DOp>(op)) {
    auto filter = cast<RankedTensorType>(conv.getFilter().getType());
    return elements * (filter.getNumElements() / filter.getDimSize(0));
  }
  // Batch norm in training reads its input twice for the statistics.
  if (isa<BatchNormTrainOp>(op))
    return 3 * elements;
  if (isa<BatchNormOp>(op))
    return 2 * elements;
  return elements;
}

/// Builds the recomputation of `value` at `b`, reading the recomputed
/// values `recomputed` maps to instead of the stored ones, and maps
/// `value` to it.
///
/// Batch norm is recomputed by its training kernel, whose statistics the
/// copy computes again into buffers of its own (the running averages are
/// updated from the original's): the inference kernel, which normalises
/// with given statistics, folds them into one scale and shift per channel
/// and rounds differently, which would change the gradients' last bits.
Value recompute(OpBuilder &b, Value value, IRMapping &recomputed) {
  Operation *op = value.getDefiningOp();
  Operation *copy = b.clone(*op, recomputed);
  if (auto bn = dyn_cast<BatchNormTrainOp>(op)) {
    recomputed.erase(bn.getMean());
    recomputed.erase(bn.getVariance());
  }
  return copy->getResult(cast<OpResult>(value).getResultNumber());
}

/// Positions, reads and writes of the step's buffers around the peak.
struct Liveness {
  Liveness(Block &body, Operation *peakOp) : body(body) {
    for (Operation &op : body) {
      ops.push_back(&op);
      position[&op] = static_cast<int64_t>(ops.size());
    }
    peak = position.lookup(peakOp);
    for (Operation &op : body) {
      int64_t at = position[&op];
      bool writes = !isMemoryEffectFree(&op);
      for (Value operand : op.getOperands()) {
        Value buffer = root(operand);
        int64_t &last = lastRead[buffer];
        last = std::max(last, at);
        if (at == peak)
          readAtPeak.insert(buffer);
        if (writes && !firstWrite.count(buffer))
          firstWrite[buffer] = at;
      }
    }
  }

  /// The value whose buffer `value` is (views share their operand's).
  Value root(Value value) const {
    while (Operation *op = value.getDefiningOp()) {
      if (op->getBlock() != &body || !isView(op))
        break;
      value = op->getOperand(cast<OpResult>(value).getResultNumber());
    }
    return value;
  }

  /// Position of `value`'s producer in the step, 0 if it lives outside
  /// (function inputs, the loop's constants).
  int64_t definedAt(Value value) const {
    Operation *op = value.getDefiningOp();
    return op ? position.lookup(op) : 0;
  }

  /// Buffers that live for the whole step: inputs, parameters, constants.
  bool isPermanent(Value buffer) const {
    Operation *op = buffer.getDefiningOp();
    return definedAt(buffer) == 0 || isa<ParamOp, ConstantOp>(op);
  }

  /// A buffer that holds memory at the peak without the peak reading it.
  bool isStoredAcrossPeak(Value buffer) const {
    return !isPermanent(buffer) && definedAt(buffer) < peak &&
           lastRead.lookup(buffer) > peak && !readAtPeak.count(buffer);
  }

  bool isAliveAtPeak(Value buffer) const {
    return isPermanent(buffer) || readAtPeak.count(buffer) ||
           (definedAt(buffer) < peak && lastRead.lookup(buffer) > peak);
  }

  /// The first reader of `value` after the peak (kNever if none).
  int64_t firstReadAfterPeak(Value value) const {
    int64_t first = kNever;
    for (Operation *user : value.getUsers()) {
      int64_t at = position.lookup(user);
      if (at > peak)
        first = std::min(first, at);
    }
    return first;
  }

  Block &body;
  std::vector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t peak = 0;
  llvm::DenseMap<Value, int64_t> lastRead, firstWrite;
  llvm::DenseSet<Value> readAtPeak;
};

/// What recomputing one stored buffer involves: the values recomputed (the
/// buffer, the views read after the peak, operands dead at the peak), the
/// bytes the peak loses and the cost.
struct Choice {
  llvm::SetVector<Value> values;
  int64_t bytesFreed = 0;
  int64_t cost = 0;
  /// Where the first recomputation goes at the latest.
  int64_t firstRead = kNever;
};

class ChoiceBuilder {
public:
  explicit ChoiceBuilder(const Liveness &liveness) : liveness(liveness) {}

  /// Recomputing `buffer`, if it is safe: no copy would read a buffer that
  /// an op before the copy has overwritten.
  std::optional<Choice> build(Value buffer) {
    choice = Choice();
    keptAlive.clear();
    add(buffer, 0);
    for (Value kept : keptAlive)
      if (liveness.firstWrite.lookup(kept) &&
          liveness.firstWrite.lookup(kept) < choice.firstRead)
        return std::nullopt;
    choice.bytesFreed += bytesOf(buffer);
    return choice;
  }

private:
  void add(Value value, int depth) {
    if (!choice.values.insert(value))
      return;
    choice.cost += costOf(value);
    choice.firstRead =
        std::min(choice.firstRead, liveness.firstReadAfterPeak(value));
    // A view made before the peak and read after it holds the buffer too.
    for (Operation *user : value.getUsers())
      if (isView(user) && liveness.position.lookup(user) &&
          liveness.position.lookup(user) < liveness.peak)
        for (Value view : user->getResults())
          if (liveness.firstReadAfterPeak(view) != kNever)
            add(view, depth);
    for (Value input : value.getDefiningOp()->getOperands()) {
      if (choice.values.count(input))
        continue;
      Value buffer = liveness.root(input);
      if (!liveness.isAliveAtPeak(buffer) && depth < kMaxDepth &&
          isRecomputable(input)) {
        add(input, depth + 1);
        continue;
      }
      if (keptAlive.insert(buffer) && !liveness.isAliveAtPeak(buffer))
        choice.bytesFreed -= bytesOf(buffer);
    }
  }

  const Liveness &liveness;
  Choice choice;
  llvm::SetVector<Value> keptAlive;
};

/// Replaces every read after the peak of a value of `values` with a
/// recomputation placed before the first such read (or before the first
/// recomputation that reads it).
void recomputeAfterPeak(const Liveness &liveness,
                        llvm::SetVector<Value> values) {
  SmallVector<Value> ordered(values.begin(), values.end());
  llvm::sort(ordered, [&](Value a, Value b) {
    int64_t atA = liveness.definedAt(a), atB = liveness.definedAt(b);
    if (atA != atB)
      return atA < atB;
    return cast<OpResult>(a).getResultNumber() <
           cast<OpResult>(b).getResultNumber();
  });
  llvm::DenseMap<Value, int64_t> placeAt;
  for (Value value : llvm::reverse(ordered)) {
    int64_t at = liveness.firstReadAfterPeak(value);
    for (Operation *user : value.getUsers())
      for (Value result : user->getResults())
        if (values.count(result))
          at = std::min(at, placeAt.lookup(result));
    placeAt[value] = at;
  }
  IRMapping recomputed;
  for (Value value : ordered) {
    int64_t at = placeAt[value];
    if (at == kNever)
      continue;
    OpBuilder b(liveness.ops[at - 1]);
    Value copy = recompute(b, value, recomputed);
    value.replaceUsesWithIf(copy, [&](OpOperand &use) {
      return liveness.position.lookup(use.getOwner()) > liveness.peak;
    });
  }
}

struct RematerializePass
    : public ::fastnn::impl::FastNNRematerializeBase<RematerializePass> {
  using FastNNRematerializeBase::FastNNRematerializeBase;

  void runOnOperation() override {
    if (budgetBytes <= 0)
      return;
    auto step = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!step) {
      getOperation().emitError("no function @")
          << entryName << " to fit in the memory budget";
      return signalPassFailure();
    }
    if (failed(fit(step)))
      signalPassFailure();
  }

  LogicalResult fit(func::FuncOp step) {
    int64_t smallest = kNever;
    for (int round = 0; round < kMaxRounds; ++round) {
      FailureOr<::fastnn::ArenaEstimate> arena =
          ::fastnn::estimateArena(step, maxLoopReduction);
      if (failed(arena))
        return failure();
      smallest = std::min(smallest, arena->totalBytes);
      if (arena->totalBytes <= budgetBytes)
        return success();
      if (!arena->peakOp || !recomputeSome(*arena))
        break;
    }
    auto mib = [](int64_t bytes) {
      return llvm::formatv("{0:F1} MiB", bytes / 1048576.0).str();
    };
    return step.emitError()
           << "the training step's arena does not fit the memory budget of "
           << mib(budgetBytes) << " (memory_budget_mb): recomputing "
           << "activations brings it down to " << mib(smallest) << " ("
           << smallest << " bytes) at the least";
  }

  /// Recomputes the stored buffers at the peak that free the most bytes
  /// per unit of work, until the bytes they free would bring the arena
  /// within the budget; false if none frees anything.
  bool recomputeSome(const ::fastnn::ArenaEstimate &arena) {
    Block &body = *arena.peakOp->getBlock();
    Liveness liveness(body, arena.peakOp);
    ChoiceBuilder builder(liveness);
    SmallVector<Choice> choices;
    for (Operation *op : liveness.ops) {
      if (liveness.position[op] >= liveness.peak)
        break;
      for (Value result : op->getResults())
        if (liveness.root(result) == result &&
            liveness.isStoredAcrossPeak(result) && isRecomputable(result))
          if (std::optional<Choice> choice = builder.build(result))
            if (choice->bytesFreed > 0)
              choices.push_back(std::move(*choice));
    }
    if (choices.empty())
      return false;
    // Bytes per unit of work, compared without division: a / b > c / d.
    llvm::stable_sort(choices, [](const Choice &a, const Choice &b) {
      return static_cast<double>(a.bytesFreed) * std::max<int64_t>(b.cost, 1) >
             static_cast<double>(b.bytesFreed) * std::max<int64_t>(a.cost, 1);
    });
    llvm::SetVector<Value> values;
    int64_t freed = 0;
    for (const Choice &choice : choices) {
      values.insert(choice.values.begin(), choice.values.end());
      freed += choice.bytesFreed;
      if (freed >= arena.totalBytes - budgetBytes)
        break;
    }
    numRecomputed += values.size();
    recomputeAfterPeak(liveness, values);
    return true;
  }
};

} // namespace
