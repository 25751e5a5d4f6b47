//===- FuseAllReduce.cpp - the fastnn-fuse-allreduce pass -----------------===//

#include "fastnn/Dialect/FastNN/IR/FastNNOps.h"
#include "fastnn/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNFUSEALLREDUCE
#include "fastnn/Transforms/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace {

int64_t bytesOf(AllReduceOp op) {
  int64_t bytes = 0;
  for (Type type : op.getInputs().getTypes()) {
    auto tensor = cast<RankedTensorType>(type);
    bytes += tensor.getNumElements() *
             llvm::divideCeil(tensor.getElementTypeBitWidth(), 8);
  }
  return bytes;
}

Type elementTypeOf(AllReduceOp op) {
  return cast<RankedTensorType>(op.getInputs().front().getType())
      .getElementType();
}

/// The allreduces of one bucket, in block order, and what they hold.
struct Bucket {
  SmallVector<AllReduceOp> members;
  llvm::SmallPtrSet<Operation *, 16> memberOps;
  int64_t bytes = 0;

  bool uses(Operation &op) const {
    return llvm::any_of(op.getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && memberOps.contains(def);
    });
  }
  void add(AllReduceOp op) {
    members.push_back(op);
    memberOps.insert(op);
    bytes += bytesOf(op);
  }
};

struct FuseAllReducePass
    : public ::fastnn::impl::FastNNFuseAllReduceBase<FuseAllReducePass> {
  using FastNNFuseAllReduceBase::FastNNFuseAllReduceBase;

  void runOnOperation() override {
    if (bucketBytes <= 0)
      return;
    // Every block: after fastnn-sink-loop the step is a loop's body.
    getOperation().walk([&](func::FuncOp function) {
      int64_t index = 0;
      function.walk([&](Block *block) { fuseBlock(*block, index); });
    });
  }

  void fuseBlock(Block &block, int64_t &index) {
    // One open bucket per kind and element type: under mixed precision the
    // backward pass completes low (convolution, dense) and f32 (batch norm,
    // bias) gradients in turn, which one bucket at a time would split into
    // a collective each.
    llvm::MapVector<std::pair<unsigned, Type>, Bucket> open;
    auto close = [&](Bucket &bucket) {
      if (bucket.members.size() > 1)
        fuse(bucket.members, index++);
      bucket = Bucket();
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      // The fused op takes the place of the bucket's last allreduce, which
      // every user of a result must follow.
      for (auto &entry : open)
        if (entry.second.uses(op))
          close(entry.second);
      auto allreduce = dyn_cast<AllReduceOp>(op);
      if (!allreduce)
        continue;
      Bucket &bucket = open[{static_cast<unsigned>(allreduce.getKind()),
                             elementTypeOf(allreduce)}];
      if (!bucket.members.empty() &&
          bucket.bytes + bytesOf(allreduce) > bucketBytes)
        close(bucket);
      bucket.add(allreduce);
    }
    for (auto &entry : open)
      close(entry.second);
  }

  void fuse(ArrayRef<AllReduceOp> members, int64_t index) {
    AllReduceOp last = members.back();
    OpBuilder b(last);
    SmallVector<Value> inputs;
    SmallVector<Location> locations;
    for (AllReduceOp member : members) {
      llvm::append_range(inputs, member.getInputs());
      locations.push_back(member.getLoc());
    }
    Location loc = NameLoc::get(b.getStringAttr("bucket" + Twine(index)),
                                b.getFusedLoc(locations));
    auto fused = AllReduceOp::create(b, loc, inputs, last.getKind());
    unsigned next = 0;
    for (AllReduceOp member : members) {
      for (Value result : member.getResults())
        result.replaceAllUsesWith(fused.getResult(next++));
      member.erase();
    }
  }
};

} // namespace
