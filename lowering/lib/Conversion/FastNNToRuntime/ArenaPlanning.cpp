//===- ArenaPlanning.cpp - recorded fusion, aliasing, arena offsets -------===//

#include "LoweringImpl.h"

#include "fastnn/Conversion/ArenaEstimate.h"
#include "fastnn/Conversion/MemoryPlan.h"
#include "fastnn/Dialect/FastNN/IR/FastNNTraits.h"
#include "fastnn/runtime/abi.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"

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

/// The views ops are by nature, and the fusion fastnn-plan-fusion
/// recorded.
LogicalResult readFusion(Block &body, ArenaLayout &layout) {
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::fastnn::ResultsAliasOperands>())
      for (auto [result, operand] :
           llvm::zip(op.getResults(), op.getOperands()))
        layout.aliasOf[result] = operand;
    if (auto postOp = op.getAttrOfType<StringAttr>(kPostOpAttr)) {
      if (postOp.getValue() == kPostOpRelu)
        layout.postOps[&op] = FNN_POST_RELU;
      else if (postOp.getValue() == kPostOpRelu6 &&
               isa<Conv2DOp, BatchNormTrainOp>(op))
        layout.postOps[&op] = FNN_POST_RELU6;
      else
        return op.emitOpError("has post-op '")
               << postOp.getValue() << "', which the runtime kernels lack";
    }
    if (op.hasAttr(kAccumulateAttr)) {
      if (!isa<Conv2DOp>(op))
        return op.emitOpError("accumulates, which only conv2d kernels do");
      layout.postOps[&op] |= FNN_POST_ACCUMULATE;
      layout.accumulating.insert(&op);
    }
    if (op.hasAttr(kResidualFusedAttr)) {
      if (!isa<BatchNormTrainOp>(op))
        return op.emitOpError("adds a residual, which only batch_norm_train "
                              "kernels do");
      layout.postOps[&op] |= FNN_POST_RESIDUAL;
    }
    if (op.hasAttr(kFusedIntoProducerAttr)) {
      if (isa<ReluOp, ClipOp>(op)) {
        layout.aliasOf[op.getResult(0)] = op.getOperand(0);
      } else if (auto add = dyn_cast<AddOp>(op)) {
        for (auto [product, other] : {std::pair{add.getLhs(), add.getRhs()},
                                      std::pair{add.getRhs(), add.getLhs()}}) {
          Operation *producer = product.getDefiningOp();
          if (producer &&
              ((isa<MatMulOp>(producer) && producer->hasAttr(kBiasFusedAttr)) ||
               (isa<BatchNormTrainOp>(producer) &&
                producer->hasAttr(kResidualFusedAttr) &&
                product == producer->getResult(0)))) {
            layout.fusedAddend[producer] = other;
          } else if (producer && layout.accumulating.contains(producer)) {
            // The convolution writes into the addend's buffer.
            layout.aliasOf[product] = other;
          } else {
            continue;
          }
          layout.aliasOf[add.getResult()] = product;
          break;
        }
        if (!layout.aliasOf.count(add.getResult()))
          return op.emitOpError("is fused into no matmul that takes a bias, "
                                "no batch norm that adds a residual and no "
                                "accumulating convolution");
      } else {
        return op.emitOpError("cannot be fused into its producer");
      }
    }
    if (op.hasAttr(kChainedIntoConsumerAttr)) {
      // A chain's pointwise start into its depthwise convolution, or that
      // depthwise convolution into the pointwise one that ends it.
      auto conv = dyn_cast<Conv2DOp>(op);
      Conv2DOp consumer = conv ? soleConvConsumer(conv) : nullptr;
      bool chained = layout.chainedFrom.count(&op);
      if (!consumer || op.hasAttr(kAccumulateAttr) ||
          !(chained ? isDepthwiseConv(conv) && isPointwiseConv(consumer)
                    : isPointwiseConv(conv) && isDepthwiseConv(consumer) &&
                          !consumer->hasAttr(kAccumulateAttr)))
        return op.emitOpError(
            "is chained into no conv2d that alone reads it: a pointwise "
            "conv2d into a depthwise one, or that into a pointwise one");
      layout.chainedInto[&op] = consumer;
      layout.chainedFrom[consumer] = &op;
    }
    if (op.hasAttr(kInlineIntoConsumerAttr)) {
      if (op.getNumResults() != 1 || !op.getResult(0).hasOneUse())
        return op.emitOpError("is inlined into a consumer but has not one "
                              "result read once");
      layout.inlinedInto[&op] = *op.getResult(0).getUsers().begin();
    }
  }
  return success();
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
      bool inPlace = producer && !isWrittenAtInit(producer) &&
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
    if (!layout.isAlias(&op)) {
      for (Value operand : op.getOperands())
        read(&op, operand);
      if (Value addend = layout.fusedAddend.lookup(&op))
        read(&op, addend);
    }
    if (layout.accumulating.contains(&op))
      read(&op, op.getResult(0));
    if (auto allreduce = dyn_cast<AllReduceOp>(op)) {
      for (Value slice : bucketOf[allreduce]->slices)
        inFlight[slice] = allreduce;
      started.push_back(allreduce);
    }
  }
}

} // namespace

bool reducesInLoops(Operation *op) {
  auto codegen = op->getAttrOfType<StringAttr>(kCodegenAttr);
  return codegen && codegen.getValue() == kCodegenLoops;
}

FailureOr<ArenaLayout> planArena(func::FuncOp forward) {
  ArenaLayout layout;
  Block &body = stepBlock(forward);
  if (failed(readFusion(body, layout)))
    return failure();
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
  // A view (a reshape's alias) that later runs read keeps the buffer it
  // aliases for the whole run too: a first-run value read only through a
  // view (a relative-position bias transposed, then unsqueezed) was planned
  // as a first-run temporary and overwritten before the next run read it.
  llvm::DenseSet<Value> permanentRoots;
  for (auto [index, op] : llvm::enumerate(body)) {
    stepOf[&op] = static_cast<int64_t>(index) + 1;
    if (isWrittenAtInit(&op))
      for (Value result : op.getResults())
        permanentRoots.insert(layout.root(result));
  }
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
      bool permanent = isWrittenAtInit(&op) || permanentRoots.count(result);
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
  // Live bytes per step: each request adds its bytes over its lifetime.
  std::vector<int64_t> liveChange(end + 2, 0);
  for (const BufferRequest &request : requests) {
    liveChange[request.firstUse] += request.bytes;
    liveChange[request.lastUse + 1] -= request.bytes;
  }
  int64_t live = 0;
  for (int64_t step = 0; step <= end; ++step) {
    live += liveChange[step];
    if (step >= 1 && step < end && live > layout.peakLiveBytes) {
      layout.peakLiveBytes = live;
      layout.peakStep = step;
    }
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

namespace fastnn {

FailureOr<ArenaEstimate> estimateArena(func::FuncOp step,
                                       int64_t maxLoopReduction) {
  // The copy takes the fusion decisions, which the step's later rewrites
  // would invalidate.
  auto copy = cast<func::FuncOp>(step->clone());
  llvm::scope_exit eraseCopy([&] { copy->erase(); });
  lowering::planFusion(lowering::stepBlock(copy), maxLoopReduction);
  FailureOr<lowering::ArenaLayout> layout = lowering::planArena(copy);
  if (failed(layout))
    return failure();
  ArenaEstimate estimate;
  estimate.totalBytes = layout->totalBytes;
  estimate.peakLiveBytes = layout->peakLiveBytes;
  if (layout->peakStep > 0)
    estimate.peakOp =
        &*std::next(lowering::stepBlock(step).begin(), layout->peakStep - 1);
  return estimate;
}

} // namespace fastnn
