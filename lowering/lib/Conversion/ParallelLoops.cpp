//===- ParallelLoops.cpp - generated loop nests on the runtime's threads --===//
//
// Generated loop nests run on the OpenMP threads oneDNN already uses: each
// outermost nest is outlined into a function over a range of its outer
// iterations, and the runtime's fnn_parallel_for splits the range. Going
// through the runtime rather than the OpenMP dialect keeps one thread pool
// (MLIR's OpenMP lowering calls LLVM's libomp, oneDNN runs on libgomp) and
// lets the runtime run small nests inline. Nests that differ only in where
// their buffers lie in the arena (a network's repeated blocks and cells)
// share one function, which keeps a NASNet's thousands of nests from being
// optimised and compiled one by one.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Conversion/Passes.h"

#include "LoopNests.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"

#include "llvm/ADT/BitVector.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNOUTLINELOOPNESTS
#define GEN_PASS_DEF_FASTNNDISPATCHLOOPBODIES
#include "fastnn/Conversion/Passes.h.inc"
} // namespace fastnn

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kLoopCount = "fastnn.loop_count";
constexpr llvm::StringLiteral kLoopWork = "fastnn.loop_work";
/// Marks the function of a serial nest, called directly.
constexpr llvm::StringLiteral kSerialNest = "fastnn.serial_nest";

/// Builds the function that runs one range of an outermost loop nest.
class NestOutliner {
public:
  NestOutliner(scf::ParallelOp loop, ArrayRef<fastnn::Dimension> dims)
      : loop(loop), dims(dims) {}

  /// Creates the function `name` in the module of `symbols`, the arena
  /// offsets of its views arguments, and replaces the nest with a call of it
  /// over the whole outer space, which it returns.
  func::CallOp outline(SymbolTable &symbols, StringRef name);

private:
  /// The loops over [begin, end) of the outer space and the innermost
  /// dimension, with the nest's body cloned inside.
  void emitLoops(OpBuilder &b, Value begin, Value end, IRMapping &mapping);

  scf::ParallelOp loop;
  ArrayRef<fastnn::Dimension> dims;
};

void NestOutliner::emitLoops(OpBuilder &b, Value begin, Value end,
                             IRMapping &mapping) {
  Location loc = loop.getLoc();
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  size_t outerDims = dims.size() == 1 ? 1 : dims.size() - 1;
  auto outer = scf::ForOp::create(b, loc, begin, end, index(1));
  b.setInsertionPointToStart(outer.getBody());
  // Delinearise the outer index, innermost outer dimension fastest.
  SmallVector<Value> ivs = fastnn::delinearize(b, loc, outer.getInductionVar(),
                                               dims.take_front(outerDims));
  ivs.resize(dims.size());
  if (dims.size() > 1) {
    const fastnn::Dimension &last = dims.back();
    auto inner = scf::ForOp::create(b, loc, index(last.lower),
                                    index(last.lower + last.trips * last.step),
                                    index(last.step));
    b.setInsertionPointToStart(inner.getBody());
    ivs.back() = inner.getInductionVar();
  }
  for (auto [iv, value] : llvm::zip(loop.getInductionVars(), ivs))
    mapping.map(iv, value);
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
}

func::CallOp NestOutliner::outline(SymbolTable &symbols, StringRef name) {
  MLIRContext *context = loop.getContext();
  Location loc = loop.getLoc();
  OpBuilder b(context);
  b.setInsertionPointToEnd(&symbols.getOp()->getRegion(0).front());
  auto indexType = b.getIndexType();
  auto function = func::FuncOp::create(
      b, loc, name, b.getFunctionType({indexType, indexType}, {}));
  function.setPrivate();
  // Inserted from the function itself: looking the name up in the module
  // would scan it, quadratic in the number of nests.
  symbols.insert(function);
  Block *entry = function.addEntryBlock();
  Value begin = entry->getArgument(0), end = entry->getArgument(1);

  // Values from above first (the prologue), then the loops after them.
  fastnn::CapturedValues captures(entry, /*viewOffsetsAsArguments=*/true);
  captures.captureUsedAbove(loop.getRegion());
  OpBuilder body = OpBuilder::atBlockEnd(entry);
  emitLoops(body, begin, end, captures.mapping());
  OpBuilder tail = OpBuilder::atBlockEnd(entry);
  func::ReturnOp::create(tail, loc);
  function.setFunctionType(
      b.getFunctionType(entry->getArgumentTypes(), TypeRange{}));

  int64_t count = 1;
  for (size_t d = 0; d < std::max<size_t>(1, dims.size() - 1); ++d)
    count *= dims[d].trips;
  int64_t work = fastnn::estimateWork(*loop.getBody());
  for (const fastnn::Dimension &d : dims)
    work *= std::max<int64_t>(1, d.trips);
  function->setAttr(kLoopCount, b.getI64IntegerAttr(count));
  function->setAttr(kLoopWork, b.getI64IntegerAttr(work));

  OpBuilder site(loop);
  SmallVector<Value> operands{arith::ConstantIndexOp::create(site, loc, 0),
                              arith::ConstantIndexOp::create(site, loc, count)};
  llvm::append_range(operands, captures.arguments());
  auto call = func::CallOp::create(site, loc, function, operands);
  loop.erase();
  return call;
}

/// Moves the serial loop nest `loop` (a reduction into a scalar, which has
/// no parallel dimension) into the function `name` of the module of
/// `symbols`, the arena offsets of its views arguments, and calls it where
/// the nest was. A step function holding hundreds of these nests (a weight
/// decay term per filter) cost SCF lowering a block split per loop, each
/// moving the rest of the step.
func::CallOp outlineSerialNest(scf::ForOp loop, SymbolTable &symbols,
                               StringRef name) {
  Location loc = loop.getLoc();
  OpBuilder b(loop.getContext());
  b.setInsertionPointToEnd(&symbols.getOp()->getRegion(0).front());
  auto function = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
  function.setPrivate();
  function->setAttr(kSerialNest, b.getUnitAttr());
  symbols.insert(function);
  Block *entry = function.addEntryBlock();

  fastnn::CapturedValues captures(entry, /*viewOffsetsAsArguments=*/true);
  for (Value bound : loop->getOperands())
    captures.materialize(bound);
  captures.captureUsedAbove(loop.getRegion());
  OpBuilder body = OpBuilder::atBlockEnd(entry);
  body.clone(*loop, captures.mapping());
  func::ReturnOp::create(body, loc);
  function.setFunctionType(
      b.getFunctionType(entry->getArgumentTypes(), TypeRange{}));

  OpBuilder site(loop);
  auto call = func::CallOp::create(site, loc, function, captures.arguments());
  loop.erase();
  return call;
}

/// Whether `op` calls anything: such a loop (a sunk training loop, a loop
/// around an outlined nest) stays where it is.
bool containsCall(Operation *op) {
  return op->walk([](CallOpInterface) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Outlines the outermost call-free scf.for nests in `region`; loops that
/// call stay, their nests outlined.
void outlineSerialNests(Region &region, SymbolTable &symbols,
                        StringRef baseName, unsigned &counter,
                        SmallVectorImpl<func::CallOp> &calls) {
  for (Block &block : region)
    for (Operation &op : llvm::make_early_inc_range(block)) {
      // What the parallel outliner left (reductions with init values)
      // stays whole.
      if (isa<scf::ParallelOp>(op))
        continue;
      auto loop = dyn_cast<scf::ForOp>(op);
      if (loop && loop->getNumResults() == 0 && !containsCall(loop)) {
        std::string name = fastnn::uniqueName(symbols, baseName, counter);
        calls.push_back(outlineSerialNest(loop, symbols, name));
        continue;
      }
      for (Region &nested : op.getRegions())
        outlineSerialNests(nested, symbols, baseName, counter, calls);
    }
}

/// Outlined functions equal in everything but their names: the same
/// attributes (iteration count and work included) and the same body.
struct EqualFunctionInfo : llvm::DenseMapInfo<func::FuncOp> {
  static unsigned getHashValue(func::FuncOp function) {
    llvm::hash_code hash = mlir::hash_value(function.getFunctionType());
    for (NamedAttribute attribute : function->getDiscardableAttrs())
      hash = llvm::hash_combine(hash, attribute);
    function.getBody().walk([&](Operation *op) {
      hash = llvm::hash_combine(hash,
                                OperationEquivalence::computeHash(
                                    op, OperationEquivalence::ignoreHashValue,
                                    OperationEquivalence::ignoreHashValue,
                                    OperationEquivalence::IgnoreLocations));
    });
    return hash;
  }

  static bool isEqual(func::FuncOp lhs, func::FuncOp rhs) {
    if (lhs == rhs)
      return true;
    if (lhs == getEmptyKey() || lhs == getTombstoneKey() ||
        rhs == getEmptyKey() || rhs == getTombstoneKey())
      return false;
    return lhs.getFunctionType() == rhs.getFunctionType() &&
           lhs->getDiscardableAttrDictionary() ==
               rhs->getDiscardableAttrDictionary() &&
           OperationEquivalence::isRegionEquivalentTo(
               &lhs.getBody(), &rhs.getBody(),
               OperationEquivalence::IgnoreLocations);
  }
};

/// The arguments of a parallel nest's function before its captured values:
/// the range of outer iterations it runs.
constexpr unsigned kRangeArguments = 2;

/// The arguments of `function` before its captured values.
unsigned rangeArguments(func::FuncOp function) {
  return function->hasAttr(kSerialNest) ? 0 : kRangeArguments;
}

/// A function with a single call: its constant captured arguments (the arena
/// offsets) become constants again, so that LLVM sees static offsets from
/// one base pointer and knows which buffers are disjoint.
void inlineConstantArguments(func::FuncOp function, func::CallOp call) {
  Block &entry = function.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  llvm::BitVector constants(function.getNumArguments());
  unsigned leading = rangeArguments(function);
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    auto constant = operand.getDefiningOp<arith::ConstantOp>();
    if (i < leading || !constant)
      continue;
    entry.getArgument(i).replaceAllUsesWith(b.clone(*constant)->getResult(0));
    constants.set(i);
  }
  (void)function.eraseArguments(constants);
  call->eraseOperands(constants);
}

/// Makes the calls of equal functions call the first of them, erasing the
/// others; a function left with one call gets its constant arguments back.
void shareEqualFunctions(ArrayRef<func::CallOp> calls, SymbolTable &symbols) {
  DenseMap<func::FuncOp, unsigned, EqualFunctionInfo> groupOf;
  SmallVector<SmallVector<func::CallOp>> groups;
  for (func::CallOp call : calls) {
    auto function = symbols.lookup<func::FuncOp>(call.getCallee());
    auto [it, inserted] = groupOf.try_emplace(function, groups.size());
    if (inserted) {
      groups.emplace_back();
    } else {
      call.setCalleeAttr(FlatSymbolRefAttr::get(it->first.getSymNameAttr()));
      symbols.erase(function);
    }
    groups[it->second].push_back(call);
  }
  for (SmallVector<func::CallOp> &group : groups)
    if (group.size() == 1)
      inlineConstantArguments(
          symbols.lookup<func::FuncOp>(group.front().getCallee()),
          group.front());
}

struct OutlineLoopNests
    : fastnn::impl::FastNNOutlineLoopNestsBase<OutlineLoopNests> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::CallOp> calls;
    for (auto function : llvm::to_vector(module.getOps<func::FuncOp>())) {
      unsigned counter = 0;
      std::string baseName = (function.getSymName() + "_loop").str();
      for (scf::ParallelOp loop : fastnn::outermostNests(function)) {
        std::optional<SmallVector<fastnn::Dimension>> dims =
            fastnn::constantDimensions(loop);
        if (!dims || !loop.getInitVals().empty())
          continue;
        std::string name = fastnn::uniqueName(symbols, baseName, counter);
        calls.push_back(NestOutliner(loop, *dims).outline(symbols, name));
      }
      outlineSerialNests(function.getBody(), symbols, baseName, counter, calls);
    }
    shareEqualFunctions(calls, symbols);
  }
};

struct DispatchLoopBodies
    : fastnn::impl::FastNNDispatchLoopBodiesBase<DispatchLoopBodies> {
  void runOnOperation() override;
};

void DispatchLoopBodies::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  OpBuilder b(context);

  SmallVector<LLVM::LLVMFuncOp> bodies;
  for (auto function : module.getOps<LLVM::LLVMFuncOp>()) {
    if (function->removeAttr(kSerialNest))
      function.setLinkage(LLVM::Linkage::Internal);
    if (function->hasAttr(kLoopCount) && function->hasAttr(kLoopWork))
      bodies.push_back(function);
  }
  if (bodies.empty())
    return;

  auto parallelFor = module.lookupSymbol<LLVM::LLVMFuncOp>("fnn_parallel_for");
  if (!parallelFor) {
    b.setInsertionPointToEnd(module.getBody());
    parallelFor = LLVM::LLVMFuncOp::create(
        b, module.getLoc(), "fnn_parallel_for",
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptr, ptr, i64, i64}));
  }

  DenseMap<StringAttr, SmallVector<LLVM::CallOp>> calls;
  module.walk([&](LLVM::CallOp call) {
    if (auto callee = call.getCalleeAttr())
      calls[callee.getAttr()].push_back(call);
  });

  for (LLVM::LLVMFuncOp function : bodies) {
    Location loc = function.getLoc();
    int64_t count = cast<IntegerAttr>(function->getAttr(kLoopCount)).getInt();
    int64_t work = cast<IntegerAttr>(function->getAttr(kLoopWork)).getInt();
    function->removeAttr(kLoopCount);
    function->removeAttr(kLoopWork);
    function.setLinkage(LLVM::Linkage::Internal);
    ArrayRef<Type> captured =
        function.getFunctionType().getParams().drop_front(kRangeArguments);
    auto contextType = LLVM::LLVMStructType::getLiteral(context, captured);

    // <body>_task(context, begin, end): unpack and call the body.
    b.setInsertionPointAfter(function);
    auto task = LLVM::LLVMFuncOp::create(
        b, loc, (function.getSymName() + "_task").str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptr, i64, i64}),
        LLVM::Linkage::Internal);
    Block *entry = task.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> arguments{entry->getArgument(1), entry->getArgument(2)};
    for (auto [i, type] : llvm::enumerate(captured)) {
      Value field = LLVM::GEPOp::create(
          b, loc, ptr, contextType, entry->getArgument(0),
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      arguments.push_back(LLVM::LoadOp::create(b, loc, type, field));
    }
    LLVM::CallOp::create(b, loc, function, arguments);
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    for (LLVM::CallOp call : calls.lookup(function.getSymNameAttr())) {
      Location callLoc = call.getLoc();
      Value contextPointer;
      if (captured.empty()) {
        b.setInsertionPoint(call);
        contextPointer = LLVM::ZeroOp::create(b, callLoc, ptr);
      } else {
        auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
        b.setInsertionPointToStart(&caller.getBody().front());
        Value one = LLVM::ConstantOp::create(b, callLoc, i64, 1);
        contextPointer =
            LLVM::AllocaOp::create(b, callLoc, ptr, contextType, one);
        b.setInsertionPoint(call);
        for (auto [i, value] : llvm::enumerate(
                 call.getArgOperands().drop_front(kRangeArguments))) {
          Value field = LLVM::GEPOp::create(
              b, callLoc, ptr, contextType, contextPointer,
              ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
          LLVM::StoreOp::create(b, callLoc, value, field);
        }
      }
      Value taskAddress = LLVM::AddressOfOp::create(b, callLoc, task);
      LLVM::CallOp::create(
          b, callLoc, parallelFor,
          ValueRange{taskAddress, contextPointer,
                     LLVM::ConstantOp::create(b, callLoc, i64, count),
                     LLVM::ConstantOp::create(b, callLoc, i64, work)});
      call.erase();
    }
  }
}

} // namespace
