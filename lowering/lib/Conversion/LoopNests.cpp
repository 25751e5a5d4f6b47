//===- LoopNests.cpp - what the loop-nest outliners share -----------------===//

#include "LoopNests.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace fastnn {

std::optional<SmallVector<Dimension>> constantDimensions(scf::ParallelOp loop) {
  SmallVector<Dimension> dims;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    dims.push_back({*l, *s, std::max<int64_t>(0, (*u - *l + *s - 1) / *s)});
  }
  return dims;
}

SmallVector<scf::ParallelOp> outermostNests(func::FuncOp function) {
  SmallVector<scf::ParallelOp> nests;
  function.walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>())
      nests.push_back(loop);
  });
  return nests;
}

std::string uniqueName(SymbolTable &symbols, StringRef base,
                       unsigned &counter) {
  std::string name;
  do
    name = (base + Twine(counter++)).str();
  while (symbols.lookup(name));
  return name;
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Dimension> dims) {
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  SmallVector<Value> ivs(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    Value position = linear;
    if (d > 0) {
      Value trips = index(dims[d].trips);
      position = arith::RemUIOp::create(b, loc, linear, trips);
      linear = arith::DivUIOp::create(b, loc, linear, trips);
    }
    ivs[d] = arith::AddIOp::create(
        b, loc, index(dims[d].lower),
        arith::MulIOp::create(b, loc, position, index(dims[d].step)));
  }
  return ivs;
}

int64_t estimateWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    int64_t inner = 0;
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        inner += estimateWork(nested);
    int64_t trips = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      if (std::optional<APInt> count = loop.getStaticTripCount())
        trips = count->getSExtValue();
    work += 1 + trips * inner;
  }
  return work;
}

CapturedValues::CapturedValues(Block *entry, bool viewOffsetsAsArguments)
    : entry(entry), viewOffsetsAsArguments(viewOffsetsAsArguments),
      prologue(OpBuilder::atBlockBegin(entry)) {}

void CapturedValues::captureUsedAbove(Region &region) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(region, region, above);
  for (Value value : above)
    materialize(value);
}

BlockArgument CapturedValues::addArgument(Value value) {
  captured.push_back(value);
  return entry->addArgument(value.getType(), value.getLoc());
}

Value CapturedValues::materialize(Value value) {
  if (Value mapped = valueMapping.lookupOrNull(value))
    return mapped;
  Operation *producer = value.getDefiningOp();
  if (producer && producer->getNumRegions() == 0 && isPure(producer)) {
    auto view = dyn_cast<memref::ViewOp>(producer);
    Value offset = view ? view.getByteShift() : Value();
    for (Value operand : producer->getOperands())
      if (!viewOffsetsAsArguments || operand != offset)
        materialize(operand);
    Operation *clone = prologue.clone(*producer, valueMapping);
    // The offset's own argument, not a mapping of its value: the same
    // constant may also be a loop bound, which must stay constant.
    if (viewOffsetsAsArguments && view)
      cast<memref::ViewOp>(clone).getByteShiftMutable().set(
          addArgument(offset));
    return valueMapping.lookup(value);
  }
  BlockArgument argument = addArgument(value);
  valueMapping.map(value, argument);
  return argument;
}

} // namespace fastnn
