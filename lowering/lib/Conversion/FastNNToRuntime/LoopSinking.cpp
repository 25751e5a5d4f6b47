//===- LoopSinking.cpp - the compiled loop of fastnn-sink-loop ------------===//
//
// A sunk step is a function whose body is one fastnn.loop (beside constants)
// and the return of its stacked results. The loop's body is lowered like any
// step (one arena plan, its kernels created once) inside an scf.for of N
// iterations; each iteration stores its index where the body reads it, fetches
// its batch through fnn_input_next and stores its scalar results at its index
// of the stacked results.
//
//===----------------------------------------------------------------------===//

#include "LoweringImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::lowering {

LoopOp sunkLoop(func::FuncOp step) {
  // Beside the loop, only constants (which canonicalization hoists out of
  // it) and the return.
  LoopOp loop;
  for (Operation &op : step.front()) {
    if (auto found = dyn_cast<LoopOp>(op)) {
      if (loop)
        return {};
      loop = found;
    } else if (!isa<ConstantOp, func::ReturnOp>(op)) {
      return {};
    }
  }
  return loop;
}

Block &stepBlock(func::FuncOp step) {
  if (LoopOp loop = sunkLoop(step))
    return loop.getBody().front();
  return step.front();
}

SmallVector<Value> loopBoundaryValues(func::FuncOp step) {
  SmallVector<Value> values;
  if (LoopOp loop = sunkLoop(step)) {
    llvm::append_range(values, step.getArguments());
    for (Operation &op : step.front())
      if (!isa<func::ReturnOp>(op))
        llvm::append_range(values, op.getResults());
  }
  return values;
}

void RunEmitter::storeIteration(Value index, Value iteration) {
  Location loc = index.getLoc();
  Value value = arith::IndexCastOp::create(runBuilder, loc,
                                           runBuilder.getI64Type(), iteration);
  memref::StoreOp::create(runBuilder, loc, value, view(loc, index));
}

void RunEmitter::stackIteration(LoopYieldOp yield, Value iteration) {
  auto loop = cast<LoopOp>(yield->getParentOp());
  Location loc = yield.getLoc();
  for (auto [value, stacked] :
       llvm::zip(yield.getValues(), loop.getResults())) {
    Value element = memref::LoadOp::create(runBuilder, loc, view(loc, value));
    memref::StoreOp::create(runBuilder, loc, element, view(loc, stacked),
                            ValueRange{iteration});
  }
}

LogicalResult RunEmitter::lowerNextBatch(NextBatchOp op) {
  MLIRContext *context = module.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(context);
  LLVM::CallOp::create(runBuilder, op.getLoc(),
                       runtimeFunction("fnn_input_next",
                                       LLVM::LLVMVoidType::get(context),
                                       {ptrType, ptrType}),
                       ValueRange{pointer(op.getLoc(), op.getImages()),
                                  pointer(op.getLoc(), op.getLabels())});
  return success();
}

} // namespace fastnn::lowering
