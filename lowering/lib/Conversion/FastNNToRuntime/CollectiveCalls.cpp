//===- CollectiveCalls.cpp - allreduce as a started and awaited kernel ----===//
//
// An allreduce's bucket is one buffer of the arena (ArenaPlanning.cpp); its
// collective is a kernel made at init from {count, dtype, op}, started where
// the op stands and awaited before the first op that reads a result, so
// that the communication overlaps the work in between.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "fastnn/runtime/abi.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::lowering {

LogicalResult RunEmitter::lowerAllReduce(AllReduceOp op) {
  Location loc = op.getLoc();
  const ArenaLayout::Bucket &bucket = layout.buckets.at(op);
  // An input that could not be laid out in the bucket (see ArenaPlanning)
  // is copied into its slice, the result's buffer.
  for (unsigned i : bucket.copiedIn)
    linalg::CopyOp::create(runBuilder, loc, view(loc, op.getInputs()[i]),
                           view(loc, op.getResults()[i]));
  Type element =
      cast<RankedTensorType>(op.getInputs().front().getType()).getElementType();
  SmallVector<int64_t> words = {
      bucket.bytes / elementBytes(element), dtypeOf(op.getInputs().front()),
      op.getKind() == AllReduceKind::Mean ? FNN_ALLREDUCE_MEAN
                                          : FNN_ALLREDUCE_SUM};
  int64_t k = createKernel(loc, "fnn_allreduce_create", words);
  callForward(loc, "fnn_allreduce_start", k,
              {arenaPointer(runBuilder, loc, runArena, bucket.offset)});
  return success();
}

void RunEmitter::awaitAllReduce(Operation *op) {
  Location loc = op->getLoc();
  traceBegin(op, "allreduce_wait");
  callForward(loc, "fnn_allreduce_wait", kernelOf.at(op), {});
  traceEnd(loc);
}

} // namespace fastnn::lowering
