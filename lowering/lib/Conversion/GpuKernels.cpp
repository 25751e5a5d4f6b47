//===- GpuKernels.cpp - generated loop nests as CUDA kernels --------------===//
//
// On CUDA the arena is device memory, so every generated loop nest must run
// on the GPU: fastnn-outline-gpu-kernels makes each one a kernel of one
// gpu.module, with one thread per point of the nest's parallel space, and
// fastnn-launch-gpu-kernels, once the module is a fatbin, embeds it and
// launches the kernels through the runtime's fnn_gpu_* calls (abi.h), which
// enqueue them on the device's compute stream in order with the kernel
// library's calls.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Conversion/Passes.h"

#include "FastNNToRuntime/LoweringImpl.h"
#include "LoopNests.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace fastnn {
#define GEN_PASS_DEF_FASTNNOUTLINEGPUKERNELS
#define GEN_PASS_DEF_FASTNNLAUNCHGPUKERNELS
#define GEN_PASS_DEF_FASTNNEMULATEGPUKERNELS
#include "fastnn/Conversion/Passes.h.inc"
} // namespace fastnn

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kKernelModule = "fastnn_kernels";
/// Threads per block: a multiple of the warp size that keeps every SM busy
/// for the nests' simple bodies (no shared memory, few registers).
constexpr int64_t kThreadsPerBlock = 256;

/// An empty scf.parallel of one iteration at `b`'s insertion point: what a
/// single thread runs.
scf::ParallelOp singleIteration(OpBuilder &b, Location loc) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  return scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{one},
                                 ValueRange{one});
}

/// Lowers every linalg op of `function` to loops whose outermost is an
/// scf.parallel, so that each becomes one kernel: an op whose first
/// dimension is a reduction (or that has none) is first put inside a
/// one-iteration scf.parallel, run by a single thread.
LogicalResult linalgToParallelNests(func::FuncOp function) {
  SmallVector<linalg::LinalgOp> ops;
  function.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  IRRewriter rewriter(function.getContext());
  for (linalg::LinalgOp op : ops) {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    if (iterators.empty() || !linalg::isParallelIterator(iterators.front())) {
      rewriter.setInsertionPoint(op);
      scf::ParallelOp single = singleIteration(rewriter, op.getLoc());
      op->moveBefore(single.getBody()->getTerminator());
    }
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
      return op->emitOpError("cannot be lowered to loops for a GPU kernel");
    rewriter.eraseOp(op);
  }
  return success();
}

/// Puts each store `function` makes outside any loop nest (a sunk loop
/// storing its iteration, stacking an output: LoopSinking.cpp), with a
/// load only it reads, into a one-iteration scf.parallel, so that it runs
/// on the device too.
void wrapScalarStores(func::FuncOp function) {
  SmallVector<memref::StoreOp> stores;
  function.walk([&](memref::StoreOp store) {
    if (!store->getParentOfType<scf::ParallelOp>())
      stores.push_back(store);
  });
  for (memref::StoreOp store : stores) {
    OpBuilder b(store);
    Operation *terminator =
        singleIteration(b, store.getLoc()).getBody()->getTerminator();
    auto load = store.getValueToStore().getDefiningOp<memref::LoadOp>();
    if (load && load->hasOneUse() && load->getBlock() == store->getBlock())
      load->moveBefore(terminator);
    store->moveBefore(terminator);
  }
}

/// Moves the outermost nest `loop` into the kernel `name` of `kernels` and
/// launches that instead.
LogicalResult outlineKernel(scf::ParallelOp loop, gpu::GPUModuleOp kernels,
                            StringRef name) {
  std::optional<SmallVector<::fastnn::Dimension>> dims =
      ::fastnn::constantDimensions(loop);
  if (!dims || !loop.getInitVals().empty())
    return loop.emitOpError("has dynamic bounds or a reduction: only static "
                            "parallel loop nests become GPU kernels");
  int64_t total = 1;
  for (const ::fastnn::Dimension &d : *dims)
    total *= d.trips;
  if (total == 0) {
    loop.erase();
    return success();
  }

  MLIRContext *context = loop.getContext();
  Location loc = loop.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(kernels.getBody());
  auto kernel =
      gpu::GPUFuncOp::create(b, loc, name, FunctionType::get(context, {}, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  Block *entry = &kernel.getBody().front();
  ::fastnn::CapturedValues captures(entry);
  captures.captureUsedAbove(loop.getRegion());
  for (Value value : captures.arguments())
    if (!value.getType().isIntOrIndexOrFloat() &&
        !isa<LLVM::LLVMPointerType>(value.getType()))
      return loop.emitOpError("reads a ")
             << value.getType()
             << " from the host: a GPU kernel takes pointers and scalars";

  // One thread per point of the nest, the innermost dimension fastest, so
  // that neighbouring threads touch neighbouring elements.
  b.setInsertionPointToEnd(entry);
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  int64_t threads = std::min(total, kThreadsPerBlock);
  Value blockId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, blockId, index(threads)), threadId);
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       linear, index(total));
  auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
  gpu::ReturnOp::create(b, loc);

  b.setInsertionPoint(guard.thenBlock()->getTerminator());
  IRMapping &mapping = captures.mapping();
  SmallVector<Value> ivs = ::fastnn::delinearize(b, loc, linear, *dims);
  for (auto [iv, value] : llvm::zip(loop.getInductionVars(), ivs))
    mapping.map(iv, value);
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  kernel.setFunctionTypeAttr(
      TypeAttr::get(FunctionType::get(context, entry->getArgumentTypes(), {})));

  OpBuilder site(loop);
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(site, loc, v).getResult();
  };
  Value one = constant(1);
  gpu::LaunchFuncOp::create(
      site, loc, kernel,
      gpu::KernelDim3{constant((total + threads - 1) / threads), one, one},
      gpu::KernelDim3{constant(threads), one, one},
      /*dynamicSharedMemorySize=*/Value(), captures.arguments());
  loop.erase();
  return success();
}

struct OutlineGpuKernels
    : ::fastnn::impl::FastNNOutlineGpuKernelsBase<OutlineGpuKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModule);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    SymbolTable symbols(kernels);
    // The step's host functions (not the kernels' module, made above).
    for (auto function : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (failed(linalgToParallelNests(function)))
        return signalPassFailure();
      wrapScalarStores(function);
      unsigned counter = 0;
      for (scf::ParallelOp loop : ::fastnn::outermostNests(function)) {
        std::string name = ::fastnn::uniqueName(
            symbols, (function.getSymName() + "_kernel").str(), counter);
        if (failed(outlineKernel(loop, kernels, name)))
          return signalPassFailure();
      }
      // The host must not touch the arena: anything that still reads or
      // writes memory would dereference a device pointer on the CPU.
      WalkResult stray = function.walk([](Operation *op) {
        if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp>(op)) {
          op->emitOpError("would access device memory from the host: it is "
                          "not inside a loop nest that becomes a GPU kernel");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (stray.wasInterrupted())
        return signalPassFailure();
    }
    // A step whose every op is a library call (LeNet's inference) loads no
    // device image.
    if (kernels.getBody()->empty()) {
      kernels.erase();
      module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
    }
  }
};

/// Replaces `launch` by an scf.parallel over its blocks and threads that
/// runs the kernel's body, each launch dimension's ids the loop's induction
/// variables.
LogicalResult emulateLaunch(gpu::LaunchFuncOp launch) {
  auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
  if (!kernel || !kernel.getBody().hasOneBlock())
    return launch.emitOpError("launches no single-block kernel to emulate");
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Location loc = launch.getLoc();
  OpBuilder b(launch);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero, zero, zero, zero, zero},
      ValueRange{grid.x, grid.y, grid.z, block.x, block.y, block.z},
      ValueRange{one, one, one, one, one, one});
  SmallVector<Value> ivs = loop.getInductionVars();
  auto pick = [](gpu::Dimension d, Value x, Value y, Value z) {
    return d == gpu::Dimension::x ? x : d == gpu::Dimension::y ? y : z;
  };

  IRMapping mapping;
  Block &entry = kernel.getBody().front();
  for (auto [argument, operand] :
       llvm::zip_equal(entry.getArguments(), launch.getKernelOperands()))
    mapping.map(argument, operand);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  for (Operation &op : entry) {
    Value replacement;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      replacement = pick(id.getDimension(), ivs[0], ivs[1], ivs[2]);
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      replacement = pick(id.getDimension(), ivs[3], ivs[4], ivs[5]);
    else if (auto size = dyn_cast<gpu::GridDimOp>(op))
      replacement = pick(size.getDimension(), grid.x, grid.y, grid.z);
    else if (auto size = dyn_cast<gpu::BlockDimOp>(op))
      replacement = pick(size.getDimension(), block.x, block.y, block.z);
    if (replacement) {
      mapping.map(op.getResult(0), replacement);
      continue;
    }
    if (isa<gpu::ReturnOp>(op))
      continue;
    Operation *copy = b.clone(op, mapping);
    WalkResult device = copy->walk([](Operation *nested) {
      return isa<gpu::GPUDialect>(nested->getDialect())
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (device.wasInterrupted())
      return op.emitOpError("is a GPU operation the host emulation lacks");
  }
  launch.erase();
  return success();
}

struct EmulateGpuKernels
    : ::fastnn::impl::FastNNEmulateGpuKernelsBase<EmulateGpuKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches)
      if (failed(emulateLaunch(launch)))
        return signalPassFailure();
    for (auto kernels : llvm::to_vector(module.getOps<gpu::GPUModuleOp>()))
      kernels.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

/// `value` as a launch parameter: index becomes i64 (the kernels'
/// index width).
Value parameterValue(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
  return value;
}

struct LaunchGpuKernels
    : ::fastnn::impl::FastNNLaunchGpuKernelsBase<LaunchGpuKernels> {
  using Base::Base;
  void runOnOperation() override;

private:
  LLVM::LLVMFuncOp declare(OpBuilder &b, StringRef name, Type result,
                           ArrayRef<Type> params);
  LogicalResult loadAtInit(func::FuncOp init, LLVM::GlobalOp image,
                           int64_t imageBytes, LLVM::GlobalOp table,
                           ArrayRef<LLVM::GlobalOp> names);
  void releaseAtEnd(func::FuncOp release, LLVM::GlobalOp table, int64_t slots);
  void lowerLaunch(gpu::LaunchFuncOp launch, LLVM::GlobalOp table,
                   int64_t slot);

  LLVM::LLVMFuncOp moduleLoad, functionCreate, launchKernel, destroy;
};

LLVM::LLVMFuncOp LaunchGpuKernels::declare(OpBuilder &b, StringRef name,
                                           Type result, ArrayRef<Type> params) {
  ModuleOp module = getOperation();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name,
                                  LLVM::LLVMFunctionType::get(result, params));
}

/// At the start of init: load the image, look up every kernel, and fail
/// init (return -1) if either does not work.
LogicalResult LaunchGpuKernels::loadAtInit(func::FuncOp init,
                                           LLVM::GlobalOp image,
                                           int64_t imageBytes,
                                           LLVM::GlobalOp table,
                                           ArrayRef<LLVM::GlobalOp> names) {
  Block *failure = nullptr;
  for (Block &block : init.getBody())
    if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
      if (ret.getNumOperands() == 1)
        if (std::optional<int64_t> code =
                getConstantIntValue(ret.getOperand(0));
            code && *code == -1)
          failure = &block;
  if (!failure)
    return init.emitOpError("has no failure exit (a block returning -1) for "
                            "the GPU module's load");
  MLIRContext *context = init.getContext();
  Location loc = init.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  Block *entry = &init.front();
  Block *rest = entry->splitBlock(entry->begin());
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  Value tableAddress = LLVM::AddressOfOp::create(b, loc, table);
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  auto store = [&](Value handle, int64_t slot) {
    Value address = LLVM::GEPOp::create(b, loc, ptr, ptr, tableAddress,
                                        ArrayRef<LLVM::GEPArg>{slot});
    LLVM::StoreOp::create(b, loc, handle, address);
  };
  Value gpuModule =
      LLVM::CallOp::create(
          b, loc, moduleLoad,
          ValueRange{entry->getArgument(0),
                     LLVM::AddressOfOp::create(b, loc, image),
                     LLVM::ConstantOp::create(b, loc, i64, imageBytes)})
          .getResult();
  store(gpuModule, 0);
  Value failed =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, gpuModule, null);
  Block *lookups = b.createBlock(rest);
  OpBuilder branch = OpBuilder::atBlockEnd(entry);
  cf::CondBranchOp::create(branch, loc, failed, failure, lookups);
  b.setInsertionPointToEnd(lookups);
  Value anyFailed = LLVM::ConstantOp::create(b, loc, b.getI1Type(), 0);
  for (auto [k, name] : llvm::enumerate(names)) {
    Value function =
        LLVM::CallOp::create(
            b, loc, functionCreate,
            ValueRange{gpuModule, LLVM::AddressOfOp::create(b, loc, name)})
            .getResult();
    store(function, k + 1);
    anyFailed = LLVM::OrOp::create(
        b, loc, anyFailed,
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, function, null));
  }
  cf::CondBranchOp::create(b, loc, anyFailed, failure, rest);
  return success();
}

/// At the end of release: the module and the kernels (abi.h allows any
/// order), each slot cleared so that init can run again.
void LaunchGpuKernels::releaseAtEnd(func::FuncOp release, LLVM::GlobalOp table,
                                    int64_t slots) {
  OpBuilder b(release.getBody().back().getTerminator());
  Value tableAddress = LLVM::AddressOfOp::create(b, release.getLoc(), table);
  ::fastnn::lowering::destroyKernelTable(b, release.getLoc(), tableAddress,
                                         slots, destroy);
}

/// fnn_gpu_launch(function, blocks, threads, params), params being an array
/// of pointers to stack slots holding the kernel's arguments.
void LaunchGpuKernels::lowerLaunch(gpu::LaunchFuncOp launch,
                                   LLVM::GlobalOp table, int64_t slot) {
  Location loc = launch.getLoc();
  MLIRContext *context = launch.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  auto caller = launch->getParentOfType<func::FuncOp>();
  OpBuilder entry = OpBuilder::atBlockBegin(&caller.front());
  Value one = LLVM::ConstantOp::create(entry, loc, i64, 1);
  int64_t count = launch.getKernelOperands().size();
  auto arrayType = LLVM::LLVMArrayType::get(ptr, std::max<int64_t>(count, 1));
  Value params = LLVM::AllocaOp::create(entry, loc, ptr, arrayType, one);

  OpBuilder b(launch);
  for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
    Value value = parameterValue(b, loc, operand);
    Value holder =
        LLVM::AllocaOp::create(entry, loc, ptr, value.getType(), one);
    LLVM::StoreOp::create(b, loc, value, holder);
    Value element =
        LLVM::GEPOp::create(b, loc, ptr, arrayType, params,
                            ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    LLVM::StoreOp::create(b, loc, holder, element);
  }
  Value address = LLVM::GEPOp::create(b, loc, ptr, ptr,
                                      LLVM::AddressOfOp::create(b, loc, table),
                                      ArrayRef<LLVM::GEPArg>{slot});
  Value function = LLVM::LoadOp::create(b, loc, ptr, address);
  auto size = [&](Value v) {
    return LLVM::ConstantOp::create(b, loc, i64, *getConstantIntValue(v));
  };
  LLVM::CallOp::create(b, loc, launchKernel,
                       ValueRange{function, size(launch.getGridSizeX()),
                                  size(launch.getBlockSizeX()), params});
  launch.erase();
}

void LaunchGpuKernels::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = module.getContext();
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  auto binaries = llvm::to_vector(module.getOps<gpu::BinaryOp>());
  SmallVector<gpu::LaunchFuncOp> launches;
  module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
  if (binaries.empty() && launches.empty())
    return;
  if (binaries.size() != 1 || binaries.front().getName() != kKernelModule) {
    module.emitOpError("needs exactly one gpu.binary @")
        << kKernelModule << " (fastnn-outline-gpu-kernels, then "
        << "gpu-module-to-binary)";
    return signalPassFailure();
  }
  gpu::BinaryOp binary = binaries.front();
  auto object =
      dyn_cast_or_null<gpu::ObjectAttr>(binary.getObjects().getValue().front());
  if (!object || binary.getObjects().size() != 1) {
    binary.emitOpError("must hold one object, for the one CUDA target");
    return signalPassFailure();
  }
  StringRef bytes = object.getObject().getValue();

  auto ptr = LLVM::LLVMPointerType::get(context);
  auto i64 = IntegerType::get(context, 64);
  auto i8 = IntegerType::get(context, 8);
  auto voidType = LLVM::LLVMVoidType::get(context);
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  moduleLoad = declare(b, "fnn_gpu_module_load", ptr, {ptr, ptr, i64});
  functionCreate = declare(b, "fnn_gpu_function_create", ptr, {ptr, ptr});
  launchKernel = declare(b, "fnn_gpu_launch", voidType, {ptr, i64, i64, ptr});
  destroy = declare(b, "fnn_kernel_destroy", voidType, {ptr});

  // Slot 0 of the table holds the module, slot k the k-th kernel launched.
  llvm::StringMap<int64_t> slots;
  SmallVector<StringRef> kernelNames;
  for (gpu::LaunchFuncOp launch : launches)
    if (slots.try_emplace(launch.getKernelName(), kernelNames.size() + 1)
            .second)
      kernelNames.push_back(launch.getKernelName());

  Location loc = binary.getLoc();
  std::string prefix = symbolPrefix;
  b.setInsertionPoint(binary);
  auto image = LLVM::GlobalOp::create(
      b, loc, LLVM::LLVMArrayType::get(i8, std::max<size_t>(bytes.size(), 1)),
      /*isConstant=*/true, LLVM::Linkage::Internal, prefix + "_gpu_image",
      b.getStringAttr(bytes.empty() ? StringRef("", 1) : bytes),
      /*alignment=*/64);
  auto tableType = LLVM::LLVMArrayType::get(ptr, kernelNames.size() + 1);
  auto table = LLVM::GlobalOp::create(b, loc, tableType, /*isConstant=*/false,
                                      LLVM::Linkage::Internal,
                                      prefix + "_gpu_functions", Attribute());
  {
    OpBuilder init =
        OpBuilder::atBlockEnd(b.createBlock(&table.getInitializerRegion()));
    LLVM::ReturnOp::create(
        init, loc, LLVM::ZeroOp::create(init, loc, tableType).getResult());
  }
  b.setInsertionPoint(binary);
  SmallVector<LLVM::GlobalOp> names;
  for (auto [k, name] : llvm::enumerate(kernelNames)) {
    std::string text = (name + Twine('\0')).str();
    names.push_back(LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(i8, text.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal,
        prefix + "_gpu_name_" + std::to_string(k), b.getStringAttr(text)));
  }
  binary.erase();

  auto init = module.lookupSymbol<func::FuncOp>(prefix + "_init");
  auto release = module.lookupSymbol<func::FuncOp>(prefix + "_release");
  if (!init || !release) {
    module.emitOpError("has no @")
        << prefix << "_init and @" << prefix
        << "_release to load and free the GPU module in (symbol-prefix)";
    return signalPassFailure();
  }
  if (failed(loadAtInit(init, image, bytes.size(), table, names)))
    return signalPassFailure();
  releaseAtEnd(release, table, kernelNames.size() + 1);
  for (gpu::LaunchFuncOp launch : launches)
    lowerLaunch(launch, table, slots.lookup(launch.getKernelName()));
}

} // namespace
