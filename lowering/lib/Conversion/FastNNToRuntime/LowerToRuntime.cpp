//===- LowerToRuntime.cpp - the fastnn-lower-to-runtime pass --------------===//

#include "LoweringImpl.h"

#include "fastnn/Conversion/Passes.h"
#include "fastnn/Dialect/FastNN/IR/FastNNTraits.h"
#include "fastnn/runtime/model.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Path.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNLOWERTORUNTIME
#include "fastnn/Conversion/Passes.h.inc"
} // namespace fastnn

using namespace mlir;
using namespace mlir::fastnn;

namespace fastnn::lowering {

RunEmitter::RunEmitter(ModuleOp module, const ArenaLayout &layout,
                       OpBuilder &initBuilder, OpBuilder &runBuilder,
                       Value device, Value initArena, Value runArena,
                       Block *initFailure, bool constantState)
    : module(module), layout(layout), initBuilder(initBuilder),
      runBuilder(runBuilder), device(device), initArena(initArena),
      runArena(runArena), initFailure(initFailure),
      constantState(constantState) {
  arenaMemRef =
      arenaAsMemRef(runBuilder, module.getLoc(), runArena, layout.totalBytes);
}

Value arenaAsMemRef(OpBuilder &b, Location loc, Value arena,
                    int64_t totalBytes) {
  // The descriptor is built by hand and cast; the conversion to LLVM
  // cancels the cast again.
  MLIRContext *context = b.getContext();
  auto i64 = IntegerType::get(context, 64);
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto array1 = LLVM::LLVMArrayType::get(i64, 1);
  auto descriptorType = LLVM::LLVMStructType::getLiteral(
      context, {ptrType, ptrType, i64, array1, array1});
  auto constant = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, v);
  };
  int64_t size = std::max<int64_t>(totalBytes, 1);
  Value descriptor = LLVM::PoisonOp::create(b, loc, descriptorType);
  descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, arena,
                                           ArrayRef<int64_t>{0});
  descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, arena,
                                           ArrayRef<int64_t>{1});
  descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, constant(0),
                                           ArrayRef<int64_t>{2});
  descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, constant(size),
                                           ArrayRef<int64_t>{3, 0});
  descriptor = LLVM::InsertValueOp::create(b, loc, descriptor, constant(1),
                                           ArrayRef<int64_t>{4, 0});
  auto arenaType = MemRefType::get({size}, IntegerType::get(context, 8));
  return UnrealizedConversionCastOp::create(b, loc, arenaType, descriptor)
      .getResult(0);
}

void destroyKernelTable(OpBuilder &b, Location loc, Value table, int64_t count,
                        LLVM::LLVMFuncOp destroy) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value null = LLVM::ZeroOp::create(b, loc, ptrType);
  for (int64_t k = 0; k < count; ++k) {
    Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, table,
                                     ArrayRef<LLVM::GEPArg>{k});
    LLVM::CallOp::create(
        b, loc, destroy,
        ValueRange{LLVM::LoadOp::create(b, loc, ptrType, slot)});
    LLVM::StoreOp::create(b, loc, null, slot);
  }
}

Value arenaPointer(OpBuilder &builder, Location loc, Value arena,
                   int64_t offset) {
  MLIRContext *context = builder.getContext();
  // A value index: GEP's constant indices hold 32 bits at most, and arenas
  // of large models pass 2 GiB.
  Value index = LLVM::ConstantOp::create(builder, loc,
                                         IntegerType::get(context, 64), offset);
  return LLVM::GEPOp::create(builder, loc, LLVM::LLVMPointerType::get(context),
                             IntegerType::get(context, 8), arena,
                             ArrayRef<LLVM::GEPArg>{index});
}

Value RunEmitter::pointer(Location loc, Value value) {
  return arenaPointer(runBuilder, loc, runArena, layout.offsetOf(value));
}

Value RunEmitter::pointerIfUsed(Location loc, Value value) {
  return value.use_empty() ? nullPointer(loc) : pointer(loc, value);
}

Value RunEmitter::nullPointer(Location loc) {
  return LLVM::ZeroOp::create(runBuilder, loc,
                              LLVM::LLVMPointerType::get(module.getContext()));
}

namespace {

/// What a timeline shows of a location: the ONNX node name the importer
/// attached, else the file and line.
std::string locationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      if (isa<NameLoc>(part))
        return locationName(part);
    return fused.getLocations().empty()
               ? ""
               : locationName(fused.getLocations().front());
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return locationName(callSite.getCallee());
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string text = llvm::sys::path::filename(file.getFilename()).str();
    if (file.getLine() > 0)
      text += ":" + std::to_string(file.getLine());
    return text;
  }
  return "";
}

} // namespace

Value RunEmitter::traceName(Operation *op, StringRef what) {
  MLIRContext *context = module.getContext();
  std::string name =
      what.empty() ? op->getName().stripDialect().str() : what.str();
  std::string where = locationName(op->getLoc());
  if (!where.empty())
    name += " " + where;
  LLVM::GlobalOp &global = traceNames[name];
  if (!global) {
    OpBuilder globals(module.getBodyRegion());
    globals.setInsertionPointToStart(module.getBody());
    std::string text = name + '\0';
    global = LLVM::GlobalOp::create(
        globals, op->getLoc(),
        LLVM::LLVMArrayType::get(IntegerType::get(context, 8), text.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal,
        "fnn_trace_name_" + std::to_string(traceNames.size() - 1),
        StringAttr::get(context, text));
  }
  return LLVM::AddressOfOp::create(runBuilder, op->getLoc(), global);
}

void RunEmitter::traceBegin(Operation *op, StringRef what) {
  MLIRContext *context = module.getContext();
  LLVM::CallOp::create(runBuilder, op->getLoc(),
                       runtimeFunction("fnn_trace_begin",
                                       LLVM::LLVMVoidType::get(context),
                                       {LLVM::LLVMPointerType::get(context)}),
                       ValueRange{traceName(op, what)});
}

void RunEmitter::traceEnd(Location loc) {
  LLVM::CallOp::create(
      runBuilder, loc,
      runtimeFunction("fnn_trace_end",
                      LLVM::LLVMVoidType::get(module.getContext()), {}),
      ValueRange{});
}

bool isWrittenAtInit(Operation *op) {
  if (isa<ParamOp, ConstantOp>(op))
    return true;
  // A result that only other first-run ops read is a temporary of the
  // first run.
  return op->hasAttr(kComputedOnceAttr) &&
         llvm::any_of(op->getUsers(), [](Operation *user) {
           return !user->hasAttr(kComputedOnceAttr);
         });
}

LogicalResult RunEmitter::lower(Operation *op) {
  for (Operation *collective : layout.awaitedBefore.lookup(op))
    awaitAllReduce(collective);
  if (layout.isAlias(op))
    return success();
  // Computed inside its user's loop nest, or by the kernel of the
  // depthwise convolution that reads it.
  if (layout.inlinedInto.count(op) || layout.chainedInto.count(op))
    return success();
  if (op->hasAttr(kComputedOnceAttr))
    return lowerOnFirstRun(op);
  // Written once at init; a terminator (the return, a sunk loop's yield)
  // only ends the step.
  if (isWrittenAtInit(op) || op->hasTrait<OpTrait::IsTerminator>())
    return success();
  // A chain's span covers its convolutions: the profile names it apart.
  traceBegin(op, layout.chainedFrom.count(op) ? "conv2d_chain" : "");
  int64_t firstKernel = kernelCount;
  LogicalResult lowered = success();
  if (auto allreduce = dyn_cast<AllReduceOp>(op))
    lowered = lowerAllReduce(allreduce);
  else if (op->hasTrait<OpTrait::fastnn::RunsAsKernel>() && !reducesInLoops(op))
    lowered = lowerTrainingKernelOp(op);
  else
    lowered = lowerLoopOp(op);
  if (kernelCount > firstKernel)
    kernelOf[op] = firstKernel;
  traceEnd(op->getLoc());
  return lowered;
}

LogicalResult RunEmitter::lowerOnFirstRun(Operation *op) {
  if (!firstRunBlock) {
    // if (!fnn_first_run_done) { fnn_first_run_done = 1; ... }, the flag
    // cleared by fnn_model_init (a released model may be initialised
    // again, on another arena).
    MLIRContext *context = module.getContext();
    Location loc = op->getLoc();
    auto i8 = IntegerType::get(context, 8);
    OpBuilder globals(module.getBodyRegion());
    globals.setInsertionPointToStart(module.getBody());
    auto flag = LLVM::GlobalOp::create(
        globals, loc, i8, /*isConstant=*/false, LLVM::Linkage::Internal,
        "fnn_first_run_done", globals.getI8IntegerAttr(0));
    auto store = [&](OpBuilder &b, int64_t value) {
      LLVM::StoreOp::create(b, loc, LLVM::ConstantOp::create(b, loc, i8, value),
                            LLVM::AddressOfOp::create(b, loc, flag));
    };
    store(initBuilder, 0);
    Value done = LLVM::LoadOp::create(
        runBuilder, loc, i8, LLVM::AddressOfOp::create(runBuilder, loc, flag));
    Value first =
        LLVM::ICmpOp::create(runBuilder, loc, LLVM::ICmpPredicate::eq, done,
                             LLVM::ConstantOp::create(runBuilder, loc, i8, 0));
    auto branch = scf::IfOp::create(runBuilder, loc, first);
    firstRunBlock = branch.thenBlock();
    OpBuilder::InsertionGuard guard(runBuilder);
    runBuilder.setInsertionPoint(firstRunBlock->getTerminator());
    store(runBuilder, 1);
  }
  OpBuilder::InsertionGuard guard(runBuilder);
  runBuilder.setInsertionPoint(firstRunBlock->getTerminator());
  // A chain's span covers its convolutions: the profile names it apart.
  traceBegin(op, layout.chainedFrom.count(op) ? "conv2d_chain" : "");
  int64_t firstKernel = kernelCount;
  LogicalResult lowered =
      op->hasTrait<OpTrait::fastnn::RunsAsKernel>() && !reducesInLoops(op)
          ? lowerKernelOp(op)
          : lowerLoopOp(op);
  if (kernelCount > firstKernel)
    kernelOf[op] = firstKernel;
  traceEnd(op->getLoc());
  return lowered;
}

namespace {

/// In an inference step, marks the ops computed from parameters and
/// constants alone with kComputedOnceAttr, and moves them, after the
/// parameter reads and constants, to the start of the step in their order:
/// where the first run computes them, so that the arena plan sees their
/// temporaries live there.
void markComputedOnce(Block &body) {
  Builder b(body.getParentOp()->getContext());
  SmallVector<Operation *> state, once;
  auto isState = [](Operation *op) {
    return op &&
           (isa<ParamOp, ConstantOp>(op) || op->hasAttr(kComputedOnceAttr));
  };
  for (Operation &op : body) {
    if (isa<ParamOp, ConstantOp>(op)) {
      state.push_back(&op);
      continue;
    }
    if (op.getNumOperands() == 0 || op.getNumRegions() != 0 ||
        !isMemoryEffectFree(&op) || op.hasTrait<OpTrait::IsTerminator>() ||
        !llvm::all_of(op.getOperands(), [&](Value operand) {
          return isState(operand.getDefiningOp());
        }))
      continue;
    op.setAttr(kComputedOnceAttr, b.getUnitAttr());
    once.push_back(&op);
  }
  Operation *rest = &body.front();
  for (Operation *op : llvm::concat<Operation *>(state, once)) {
    if (op == rest)
      rest = rest->getNextNode();
    else
      op->moveBefore(rest);
  }
}

/// Initial values of parameters and constants, as constant globals copied
/// into the arena by fnn_model_init. Resource blobs are shared, not copied.
LLVM::GlobalOp initialValueGlobal(OpBuilder &globals, Location loc,
                                  ElementsAttr value, int64_t index) {
  auto type = cast<RankedTensorType>(value.getType());
  auto flatType =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  Attribute flat;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    flat = DenseResourceElementsAttr::get(flatType, resource.getRawHandle());
  else
    flat = cast<DenseElementsAttr>(value).reshape(flatType);
  Type elementType = type.getElementType();
  if (elementType.isInteger(1))
    elementType = IntegerType::get(type.getContext(), 8);
  return LLVM::GlobalOp::create(
      globals, loc,
      LLVM::LLVMArrayType::get(elementType, type.getNumElements()),
      /*isConstant=*/true, LLVM::Linkage::Internal,
      "fnn_init_" + std::to_string(index), flat);
}

/// The fnn_state_role of a parameter.
int64_t stateRole(ParamRole role) {
  return role == ParamRole::Trainable   ? FNN_STATE_TRAINABLE
         : role == ParamRole::Statistic ? FNN_STATE_STATISTIC
                                        : FNN_STATE_SLOT;
}

/// The entry of fastnn.external_weights for a parameter the driver loads.
DictionaryAttr externalWeight(ParamOp read, ParameterOp parameter) {
  MLIRContext *context = read.getContext();
  auto i64 = IntegerType::get(context, 64);
  Builder b(context);
  return b.getDictionaryAttr(
      {b.getNamedAttr("name", read.getNameAttr().getAttr()),
       b.getNamedAttr("role",
                      IntegerAttr::get(i64, stateRole(parameter.getRole()))),
       b.getNamedAttr("dtype",
                      IntegerAttr::get(i64, dtypeOf(read.getResult()))),
       b.getNamedAttr("value", parameter.getInitialValue())});
}

/// Whether any op of `step` writes memory (a state update, an optimizer
/// step, a collective).
bool writesMemory(func::FuncOp step) {
  return step
      .walk([](Operation *op) {
        return hasEffect<MemoryEffects::Write>(op) ? WalkResult::interrupt()
                                                   : WalkResult::advance();
      })
      .wasInterrupted();
}

struct LowerToRuntimePass
    : public ::fastnn::impl::FastNNLowerToRuntimeBase<LowerToRuntimePass> {
  using FastNNLowerToRuntimeBase::FastNNLowerToRuntimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>(entryName);
    if (!forward) {
      module.emitError("no function @") << entryName << " to lower";
      return signalPassFailure();
    }
    if (!llvm::hasSingleElement(forward.getBody())) {
      forward.emitError("expects a function of one block");
      return signalPassFailure();
    }
    if (failed(lower(module, forward)))
      return signalPassFailure();
  }

  LogicalResult lower(ModuleOp module, func::FuncOp forward) {
    MLIRContext *context = module.getContext();
    Location loc = forward.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(context);
    auto i64 = IntegerType::get(context, 64);
    // An inference step: its state is what init (or the driver, before
    // the first run) wrote, on every run, so what it computes from the
    // state alone the first run computes. An evaluation step's state is
    // copied in by the trainer before each evaluation.
    bool constantState = initializeState && !writesMemory(forward);
    if (constantState)
      markComputedOnce(stepBlock(forward));
    FailureOr<ArenaLayout> planned = lowering::planArena(forward);
    if (failed(planned))
      return failure();
    ArenaLayout &layout = *planned;
    externalWeightEntries.clear();

    OpBuilder globals(context);
    globals.setInsertionPointToStart(module.getBody());
    SymbolTable symbols(module);

    // <prefix>_init(device, arena) -> i64 and <prefix>_run(arena).
    auto init = func::FuncOp::create(
        globals, loc, exported("init"),
        FunctionType::get(context, {ptrType, ptrType}, {i64}));
    auto run = func::FuncOp::create(globals, loc, exported("run"),
                                    FunctionType::get(context, {ptrType}, {}));
    Block *initEntry = init.addEntryBlock();
    Block *initFailure = new Block();
    init.getBody().push_back(initFailure);
    Block *runEntry = run.addEntryBlock();
    OpBuilder initBuilder = OpBuilder::atBlockEnd(initEntry);
    OpBuilder runBuilder = OpBuilder::atBlockEnd(runEntry);
    Value device = initEntry->getArgument(0);
    Value initArena = initEntry->getArgument(1);

    // Copy initial values of parameters and constants into their buffers.
    LLVM::LLVMFuncOp copy = LLVM::LLVMFuncOp::create(
        globals, loc, "fnn_copy_to_device",
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptrType, ptrType, ptrType, i64}));
    int64_t initIndex = 0;
    Value initArenaMemRef;
    Block &steps = stepBlock(forward);
    SmallVector<Operation *> stepOps;
    if (&steps != &forward.front())
      for (auto constant : forward.front().getOps<ConstantOp>())
        stepOps.push_back(constant);
    for (Operation &op : steps)
      stepOps.push_back(&op);
    for (Operation *stepOp : stepOps) {
      Operation &op = *stepOp;
      ElementsAttr value;
      if (auto param = dyn_cast<ParamOp>(op)) {
        if (!initializeState)
          continue;
        auto parameter = symbols.lookup<ParameterOp>(param.getName());
        // Weights come from the file beside the executable; slots are the
        // optimizer's and stay uniform fills.
        if (externalWeights && parameter.getRole() != ParamRole::Slot) {
          externalWeightEntries.push_back(externalWeight(param, parameter));
          continue;
        }
        value = parameter.getInitialValue();
      } else if (auto constant = dyn_cast<ConstantOp>(op))
        value = constant.getValue();
      else
        continue;
      auto type = cast<RankedTensorType>(op.getResult(0).getType());
      // A uniform value (optimizer slots, zero biases) is filled in place
      // rather than embedded: an RMSProp ResNet-50 would otherwise carry
      // two more copies of its weights.
      auto dense = dyn_cast<DenseElementsAttr>(value);
      if (dense && dense.isSplat() && !type.getElementType().isInteger(1)) {
        if (!initArenaMemRef)
          initArenaMemRef = lowering::arenaAsMemRef(initBuilder, loc, initArena,
                                                    layout.totalBytes);
        Value shift = arith::ConstantIndexOp::create(
            initBuilder, op.getLoc(), layout.offsetOf(op.getResult(0)));
        Value target = memref::ViewOp::create(
            initBuilder, op.getLoc(),
            MemRefType::get(type.getShape(), type.getElementType()),
            initArenaMemRef, shift, ValueRange{});
        Value element = arith::ConstantOp::create(
            initBuilder, op.getLoc(),
            cast<TypedAttr>(dense.getSplatValue<Attribute>()));
        linalg::FillOp::create(initBuilder, op.getLoc(), ValueRange{element},
                               ValueRange{target});
        continue;
      }
      LLVM::GlobalOp global =
          initialValueGlobal(globals, op.getLoc(), value, initIndex++);
      Value source =
          LLVM::AddressOfOp::create(initBuilder, op.getLoc(), global);
      Value target = arenaPointer(initBuilder, op.getLoc(), initArena,
                                  layout.offsetOf(op.getResult(0)));
      Value bytes = LLVM::ConstantOp::create(initBuilder, op.getLoc(), i64,
                                             tensorBytes(type));
      LLVM::CallOp::create(initBuilder, op.getLoc(), copy,
                           ValueRange{device, target, source, bytes});
    }

    RunEmitter emitter(module, layout, initBuilder, runBuilder, device,
                       initArena, runEntry->getArgument(0), initFailure,
                       constantState);
    if (LoopOp loop = sunkLoop(forward)) {
      // A sunk step runs N times per call, in one loop over the same plan.
      auto count = [&](int64_t n) {
        return arith::ConstantIndexOp::create(runBuilder, loc, n);
      };
      auto iterations = scf::ForOp::create(
          runBuilder, loc, count(0), count(loop.getIterations()), count(1));
      OpBuilder::InsertionGuard guard(runBuilder);
      runBuilder.setInsertionPoint(iterations.getBody()->getTerminator());
      Value iteration = iterations.getInductionVar();
      emitter.storeIteration(steps.getArgument(0), iteration);
      // The yield too: what an op awaits before it runs applies to the
      // end of the iteration.
      for (Operation &op : steps)
        if (failed(emitter.lower(&op)))
          return failure();
      emitter.stackIteration(cast<LoopYieldOp>(steps.getTerminator()),
                             iteration);
    }
    for (Operation &op : forward.front())
      if (!isa<LoopOp>(op) && failed(emitter.lower(&op)))
        return failure();

    func::ReturnOp::create(
        initBuilder, loc,
        ValueRange{arith::ConstantIntOp::create(initBuilder, loc, 0, 64)});
    OpBuilder failureBuilder = OpBuilder::atBlockEnd(initFailure);
    func::ReturnOp::create(
        failureBuilder, loc,
        ValueRange{arith::ConstantIntOp::create(failureBuilder, loc, -1, 64)});
    func::ReturnOp::create(runBuilder, loc);

    if (externalWeights && initializeState)
      module->setAttr("fastnn.external_weights",
                      ArrayAttr::get(context, externalWeightEntries));

    emitKernelTable(globals, loc, emitter.numKernels());
    emitRelease(globals, loc, emitter.numKernels());
    emitMetadata(globals, forward, layout, symbols);

    forward.erase();
    for (auto parameter :
         llvm::make_early_inc_range(module.getOps<ParameterOp>()))
      parameter.erase();
    return success();
  }

  void emitKernelTable(OpBuilder &globals, Location loc, int64_t count) {
    MLIRContext *context = globals.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(context);
    auto tableType =
        LLVM::LLVMArrayType::get(ptrType, std::max<int64_t>(count, 1));
    auto table =
        LLVM::GlobalOp::create(globals, loc, tableType,
                               /*isConstant=*/false, LLVM::Linkage::Internal,
                               "fnn_kernel_table", Attribute());
    Block *body = globals.createBlock(&table.getInitializerRegion());
    OpBuilder b = OpBuilder::atBlockEnd(body);
    LLVM::ReturnOp::create(b, loc,
                           LLVM::ZeroOp::create(b, loc, tableType).getResult());
    globals.setInsertionPointAfter(table);
  }

  void emitRelease(OpBuilder &globals, Location loc, int64_t count) {
    MLIRContext *context = globals.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(context);
    auto release = func::FuncOp::create(globals, loc, exported("release"),
                                        FunctionType::get(context, {}, {}));
    OpBuilder b = OpBuilder::atBlockEnd(release.addEntryBlock());
    auto destroy = LLVM::LLVMFuncOp::create(
        globals, loc, "fnn_kernel_destroy",
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptrType}));
    Value table =
        LLVM::AddressOfOp::create(b, loc, ptrType, "fnn_kernel_table");
    lowering::destroyKernelTable(b, loc, table, count, destroy);
    func::ReturnOp::create(b, loc);
  }

  void emitMetadata(OpBuilder &globals, func::FuncOp forward,
                    const ArenaLayout &layout, SymbolTable &symbols) {
    MLIRContext *context = globals.getContext();
    Location loc = forward.getLoc();
    auto i64 = IntegerType::get(context, 64);
    auto i8 = IntegerType::get(context, 8);
    /// A table of fnn_model_io-style records and its names.
    struct Table {
      SmallVector<int64_t> records = {0};
      std::string names;
      void add(int64_t kind, Value value, StringRef name,
               const ArenaLayout &layout) {
        auto type = cast<RankedTensorType>(value.getType());
        records.push_back(kind);
        records.push_back(dtypeOf(type.getElementType()));
        records.push_back(type.getRank());
        for (int64_t d = 0; d < FNN_MAX_RANK; ++d)
          records.push_back(d < type.getRank() ? type.getDimSize(d) : 0);
        records.push_back(layout.offsetOf(value));
        records.push_back(names.size());
        records.push_back(name.size());
        names += name;
        ++records[0];
      }
    };
    auto nameOf = [](Attribute attr, StringRef fallback, unsigned index) {
      if (auto name = dyn_cast_or_null<StringAttr>(attr))
        return name.str();
      return fallback.str() + std::to_string(index);
    };
    Table io;
    for (BlockArgument arg : forward.getArguments())
      io.add(FNN_IO_INPUT, arg,
             nameOf(forward.getArgAttr(arg.getArgNumber(), "fastnn.name"),
                    "input", arg.getArgNumber()),
             layout);
    auto ret = cast<func::ReturnOp>(forward.front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands()))
      io.add(FNN_IO_OUTPUT, value,
             nameOf(forward.getResultAttr(i, "fastnn.name"), "output", i),
             layout);
    Table state;
    for (auto read : stepBlock(forward).getOps<ParamOp>()) {
      auto parameter = symbols.lookup<ParameterOp>(read.getName());
      state.add(stateRole(parameter.getRole()), read.getResult(),
                read.getName(), layout);
    }

    auto constantGlobal = [&](Type type, StringRef name, Attribute value) {
      LLVM::GlobalOp::create(globals, loc, type, /*isConstant=*/true,
                             LLVM::Linkage::External, name, value);
    };
    auto recordsGlobal = [&](StringRef name, ArrayRef<int64_t> records) {
      auto count = static_cast<int64_t>(records.size());
      constantGlobal(LLVM::LLVMArrayType::get(i64, count), name,
                     DenseIntElementsAttr::get(
                         RankedTensorType::get({count}, i64), records));
    };
    auto stringGlobal = [&](StringRef name, std::string text, bool terminate) {
      if (terminate || text.empty())
        text.push_back('\0');
      constantGlobal(LLVM::LLVMArrayType::get(i8, text.size()), name,
                     StringAttr::get(context, text));
    };
    constantGlobal(
        i64, exported("arena_bytes"),
        IntegerAttr::get(i64, std::max<int64_t>(layout.totalBytes, 1)));
    recordsGlobal(exported("io"), io.records);
    stringGlobal(exported("io_names"), io.names, false);
    recordsGlobal(exported("state"), state.records);
    stringGlobal(exported("state_names"), state.names, false);
    auto config =
        forward->getParentOfType<ModuleOp>()->getAttrOfType<StringAttr>(
            "fastnn.config");
    stringGlobal(exported("config"), config ? config.str() : "", true);
    // Without initialize-state the caller fills the state anyway.
    constantGlobal(
        i64, exported("external_weights"),
        IntegerAttr::get(i64, externalWeights && initializeState ? 1 : 0));
  }

  /// The name of an exported symbol of model.h: fnn_model_run for "run"
  /// under the default prefix.
  std::string exported(StringRef suffix) const {
    return symbolPrefix + "_" + suffix.str();
  }

  /// The entries of fastnn.external_weights, in the state table's order.
  SmallVector<Attribute> externalWeightEntries;
};

} // namespace
} // namespace fastnn::lowering
