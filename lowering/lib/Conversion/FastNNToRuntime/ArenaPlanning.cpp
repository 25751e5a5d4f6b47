//===- ArenaPlanning.cpp - fusion, aliasing and arena offsets -------------===//

#include "LoweringImpl.h"

#include "fastnn/Conversion/MemoryPlan.h"
#include "fastnn/runtime/abi.h"

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

} // namespace

ArenaLayout planArena(func::FuncOp forward) {
  ArenaLayout layout;
  decideFusion(forward, layout);

  Block &body = stepBlock(forward);
  int64_t end = static_cast<int64_t>(body.getOperations().size()) + 1;
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
  for (auto [index, op] : llvm::enumerate(body)) {
    int64_t step = static_cast<int64_t>(index) + 1;
    for (Value operand : op.getOperands()) {
      Value root = layout.root(operand);
      auto &lifetime = lifetimes[root];
      lifetime.second =
          std::max(lifetime.second, isa<func::ReturnOp>(op) ? end : step);
    }
    for (Value result : op.getResults()) {
      if (layout.aliasOf.count(result))
        continue;
      // Parameters and constants are written once at init.
      bool permanent = isa<ParamOp, ConstantOp>(op);
      addBuffer(result, permanent ? 0 : step, permanent ? end : step);
    }
  }

  std::vector<BufferRequest> requests;
  for (Value value : buffers)
    requests.push_back({tensorBytes(cast<RankedTensorType>(value.getType())),
                        lifetimes[value].first, lifetimes[value].second});
  MemoryPlan plan = planMemory(requests);
  for (auto [value, offset] : llvm::zip(buffers, plan.offsets))
    layout.offsets[value] = offset;
  layout.totalBytes = plan.totalBytes;
  return layout;
}

} // namespace fastnn::lowering
