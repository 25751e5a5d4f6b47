//===- ArenaPlanning.cpp - fusion, aliasing and arena offsets -------------===//

#include "LoweringImpl.h"

#include "fastnn/Conversion/MemoryPlan.h"
#include "fastnn/runtime/abi.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::lowering {

int64_t elementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

int64_t tensorBytes(RankedTensorType type) {
  return type.getNumElements() * elementBytes(type.getElementType());
}

namespace {

bool isFloat(Value value) {
  return isa<FloatType>(
      cast<RankedTensorType>(value.getType()).getElementType());
}

/// Kernels whose output can absorb a following relu (oneDNN post-ops,
/// cuDNN epilogues), in any of their types.
bool acceptsPostOp(Operation *op) {
  return isa<Conv2DOp, BatchNormOp, MatMulOp>(op) && isFloat(op->getResult(0));
}

/// `add(matmul(a, b), bias)` with a vector bias over the last dimension,
/// computed before the matmul runs, is the matmul's bias.
void fuseMatMulBias(AddOp add, ArenaLayout &layout) {
  for (auto [product, bias] : {std::pair{add.getLhs(), add.getRhs()},
                               std::pair{add.getRhs(), add.getLhs()}}) {
    auto matmul = product.getDefiningOp<MatMulOp>();
    if (!matmul || !product.hasOneUse() || layout.fusedBias.count(matmul) ||
        layout.postOps.count(matmul) || add.getType() != matmul.getType() ||
        !isFloat(product))
      continue;
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1 ||
        biasType.getDimSize(0) != matmul.getType().getShape().back())
      continue;
    Operation *biasDef = bias.getDefiningOp();
    if (biasDef && !biasDef->isBeforeInBlock(matmul))
      continue;
    layout.fusedBias[matmul] = bias;
    layout.aliasOf[add.getResult()] = product;
    return;
  }
}

void decideFusion(func::FuncOp forward, ArenaLayout &layout) {
  for (Operation &op : stepBlock(forward)) {
    if (isa<ReshapeOp, DropoutOp, NextBatchOp>(op)) {
      for (auto [result, operand] :
           llvm::zip(op.getResults(), op.getOperands()))
        layout.aliasOf[result] = operand;
    } else if (auto add = dyn_cast<AddOp>(op)) {
      fuseMatMulBias(add, layout);
    } else if (auto relu = dyn_cast<ReluOp>(op)) {
      Value input = relu.getInput();
      Operation *kernel = layout.root(input).getDefiningOp();
      if (kernel && input.hasOneUse() && acceptsPostOp(kernel) &&
          !layout.postOps.count(kernel)) {
        layout.postOps[kernel] = FNN_POST_RELU;
        layout.aliasOf[relu.getResult()] = input;
      }
    }
  }
}

/// How many ops after an elementwise op its user may stand for the op to be
/// computed inside the user's loop nest.
constexpr int kMaxInlineDistance = 8;

/// An elementwise op whose result only one elementwise op of the same shape,
/// a few ops later, reads is computed inside that op's loop nest: no
/// buffer, and one pass over memory instead of two. Chains inline whole.
void inlineElementwise(Block &body, ArenaLayout &layout) {
  for (Operation &op : body) {
    if (!isElementwise(&op) || op.getNumResults() != 1)
      continue;
    Value result = op.getResult(0);
    if (!result.hasOneUse() || layout.aliasOf.count(result))
      continue;
    Operation *user = *result.getUsers().begin();
    if (!isElementwise(user) || user->getBlock() != &body ||
        layout.aliasOf.count(user->getResult(0)) ||
        cast<RankedTensorType>(user->getResult(0).getType()).getShape() !=
            cast<RankedTensorType>(result.getType()).getShape())
      continue;
    // A user that reads a collective's result waits for it first; the
    // producer stays where it overlaps the communication.
    if (llvm::any_of(user->getOperands(), [&](Value operand) {
          return layout.root(operand).getDefiningOp<AllReduceOp>();
        }))
      continue;
    // The user must follow closely: moving the reads there keeps the
    // producer's operands alive until then (a forward value read only in
    // the backward would hold two buffers for one), and the scan below
    // stays bounded. Nor may the reads move past a write to existing
    // buffers (a state update, an optimizer step, a collective).
    bool inlinable = false;
    Operation *between = op.getNextNode();
    for (int distance = 0; distance < kMaxInlineDistance; ++distance) {
      if (between == user) {
        inlinable = true;
        break;
      }
      if (!isMemoryEffectFree(between))
        break;
      between = between->getNextNode();
    }
    if (inlinable)
      layout.inlinedInto[&op] = user;
  }
}

/// The op whose code computes `op`: itself, or the end of the inlining
/// chain it belongs to.
Operation *computedBy(Operation *op, const ArenaLayout &layout) {
  while (Operation *user = layout.inlinedInto.lookup(op))
    op = user;
  return op;
}

/// Where an allreduce's inputs lie in its bucket: the buffer that is each
/// input's slice.
struct BucketSlices {
  AllReduceOp op;
  int64_t step;
  SmallVector<Value> slices;
};

/// An input's own buffer becomes its slice (its producer writes straight
/// into the bucket, the collective reduces it in place and the result
/// aliases it) unless an op still reads the buffer after the collective
/// starts, the buffer lives on (parameters, constants, function inputs), or
/// another input already took it; then the result's buffer is the slice and
/// the input is copied in.
SmallVector<BucketSlices> decideBuckets(Block &body, ArenaLayout &layout) {
  int64_t end = static_cast<int64_t>(body.getOperations().size()) + 1;
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = static_cast<int64_t>(index) + 1;
  llvm::DenseMap<Value, int64_t> lastRead;
  for (Operation &op : body)
    for (Value operand : op.getOperands()) {
      int64_t &last = lastRead[layout.root(operand)];
      last = std::max(last, isa<func::ReturnOp>(op)
                                ? end
                                : position[computedBy(&op, layout)]);
    }
  llvm::DenseSet<Value> taken;
  SmallVector<BucketSlices> buckets;
  for (auto [index, op] : llvm::enumerate(body)) {
    auto allreduce = dyn_cast<AllReduceOp>(op);
    if (!allreduce)
      continue;
    BucketSlices bucket{allreduce, static_cast<int64_t>(index) + 1, {}};
    ArenaLayout::Bucket &planned = layout.buckets[allreduce];
    for (auto [i, input, result] :
         llvm::enumerate(allreduce.getInputs(), allreduce.getResults())) {
      Value root = layout.root(input);
      Operation *producer = root.getDefiningOp();
      bool inPlace = producer && !isa<ParamOp, ConstantOp>(producer) &&
                     lastRead.lookup(root) <= bucket.step &&
                     taken.insert(root).second;
      if (inPlace) {
        layout.aliasOf[result] = input;
        bucket.slices.push_back(root);
      } else {
        planned.copiedIn.push_back(i);
        bucket.slices.push_back(result);
      }
    }
    buckets.push_back(bucket);
  }
  return buckets;
}

/// A collective must be complete before the first op after it that reads
/// one of its slices (a view reads nothing; a matmul reads its fused bias),
/// and at the latest before the step's end (the return, or the yield of a
/// sunk loop's iteration).
void placeWaits(Block &body, ArrayRef<BucketSlices> buckets,
                ArenaLayout &layout) {
  llvm::DenseMap<Operation *, const BucketSlices *> bucketOf;
  for (const BucketSlices &bucket : buckets)
    bucketOf[bucket.op] = &bucket;
  llvm::DenseMap<Value, Operation *> inFlight;
  SmallVector<Operation *> started;
  auto await = [&](Operation *collective, Operation *reader) {
    layout.buckets[collective].waitBefore = reader;
    layout.awaitedBefore[reader].push_back(collective);
    for (Value slice : bucketOf[collective]->slices)
      inFlight.erase(slice);
    llvm::erase(started, collective);
  };
  auto read = [&](Operation *reader, Value value) {
    if (Operation *collective = inFlight.lookup(layout.root(value)))
      await(collective, reader);
  };
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (Operation *collective : SmallVector<Operation *>(started))
        await(collective, &op);
      break;
    }
    bool view = !isa<AllReduceOp>(op) && op.getNumResults() == 1 &&
                layout.aliasOf.count(op.getResult(0));
    if (!view) {
      for (Value operand : op.getOperands())
        read(&op, operand);
      if (Value bias = layout.fusedBias.lookup(&op))
        read(&op, bias);
    }
    if (auto allreduce = dyn_cast<AllReduceOp>(op)) {
      for (Value slice : bucketOf[allreduce]->slices)
        inFlight[slice] = allreduce;
      started.push_back(allreduce);
    }
  }
}

} // namespace

ArenaLayout planArena(func::FuncOp forward) {
  ArenaLayout layout;
  decideFusion(forward, layout);

  Block &body = stepBlock(forward);
  inlineElementwise(body, layout);
  SmallVector<BucketSlices> buckets = decideBuckets(body, layout);
  placeWaits(body, buckets, layout);
  int64_t end = static_cast<int64_t>(body.getOperations().size()) + 1;
  llvm::DenseMap<Operation *, int64_t> stepOf;
  SmallVector<Value> buffers;
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> lifetimes;
  auto addBuffer = [&](Value value, int64_t first, int64_t last) {
    buffers.push_back(value);
    lifetimes[value] = {first, last};
  };
  for (BlockArgument arg : body.getArguments())
    addBuffer(arg, 0, end);
  for (Value value : loopBoundaryValues(forward))
    addBuffer(value, 0, end);
  for (auto [index, op] : llvm::enumerate(body))
    stepOf[&op] = static_cast<int64_t>(index) + 1;
  for (Operation &op : body) {
    int64_t step = stepOf[&op];
    // An inlined op reads its operands where its user's nest runs.
    int64_t readStep = stepOf[computedBy(&op, layout)];
    for (Value operand : op.getOperands()) {
      Value root = layout.root(operand);
      auto &lifetime = lifetimes[root];
      lifetime.second =
          std::max(lifetime.second, isa<func::ReturnOp>(op) ? end : readStep);
    }
    for (Value result : op.getResults()) {
      if (layout.aliasOf.count(result) || layout.inlinedInto.count(&op))
        continue;
      // Parameters and constants are written once at init.
      bool permanent = isa<ParamOp, ConstantOp>(op);
      addBuffer(result, permanent ? 0 : step, permanent ? end : step);
    }
  }

  // A bucket is one buffer, its slices back to back at aligned offsets,
  // alive from its first slice's producer until the collective is awaited
  // and the last result read.
  llvm::DenseSet<Value> sliced;
  for (const BucketSlices &bucket : buckets)
    sliced.insert(bucket.slices.begin(), bucket.slices.end());
  SmallVector<Value> singles;
  std::vector<BufferRequest> requests;
  for (Value value : buffers) {
    if (sliced.count(value))
      continue;
    singles.push_back(value);
    requests.push_back({tensorBytes(cast<RankedTensorType>(value.getType())),
                        lifetimes[value].first, lifetimes[value].second});
  }
  SmallVector<SmallVector<int64_t>> sliceOffsets;
  for (const BucketSlices &bucket : buckets) {
    int64_t bytes = 0, first = end, last = 0;
    SmallVector<int64_t> &at = sliceOffsets.emplace_back();
    for (Value slice : bucket.slices) {
      bytes = llvm::alignTo(bytes, kArenaAlignment);
      at.push_back(bytes);
      bytes += tensorBytes(cast<RankedTensorType>(slice.getType()));
      first = std::min(first, lifetimes[slice].first);
      last = std::max(last, lifetimes[slice].second);
    }
    Operation *waiter = layout.buckets[bucket.op].waitBefore;
    last = std::max(last, isa<func::ReturnOp>(waiter) ? end : stepOf[waiter]);
    layout.buckets[bucket.op].bytes = bytes;
    requests.push_back({bytes, first, last});
  }
  MemoryPlan plan = planMemory(requests);
  for (auto [value, offset] : llvm::zip(singles, plan.offsets))
    layout.offsets[value] = offset;
  for (auto [i, bucket] : llvm::enumerate(buckets)) {
    int64_t offset = plan.offsets[singles.size() + i];
    layout.buckets[bucket.op].offset = offset;
    for (auto [slice, at] : llvm::zip(bucket.slices, sliceOffsets[i]))
      layout.offsets[slice] = offset + at;
  }
  layout.totalBytes = plan.totalBytes;
  return layout;
}

} // namespace fastnn::lowering
