//===- ObjectEmitter.cpp - LLVM-dialect module to LLVM IR / object --------===//

#include "fastnn/Target/ObjectEmitter.h"
#include "fastnn/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/SplitModule.h"

using namespace mlir;

void fastnn::buildHostToLLVMDialectPipeline(OpPassManager &pm) {
  // The passes that work function by function run nested on the functions,
  // which the pass manager spreads over threads: a big model has thousands
  // (its outlined loop nests).
  OpPassManager &structured = pm.nest<func::FuncOp>();
  structured.addPass(createSCFToControlFlowPass());
  structured.addPass(memref::createExpandStridedMetadataPass());
  structured.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.nest<func::FuncOp>().addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (math.erf) becomes a libm call, as the
  // intrinsics of tanh, exp and log become on x86 anyway; train.bin and
  // infer.bin link libm.
  pm.addPass(createConvertMathToLibmPass());
  OpPassManager &scalars = pm.nest<func::FuncOp>();
  scalars.addPass(createArithToLLVMConversionPass());
  scalars.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void fastnn::buildLowerToLLVMDialectPipeline(OpPassManager &pm) {
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addPass(fastnn::createFastNNOutlineLoopNests());
  buildHostToLLVMDialectPipeline(pm);
  pm.addPass(fastnn::createFastNNDispatchLoopBodies());
  pm.addPass(createCanonicalizerPass());
}

void fastnn::embedBytes(ModuleOp module, llvm::StringRef symbol,
                        llvm::StringRef bytes) {
  MLIRContext *context = module.getContext();
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto i64 = IntegerType::get(context, 64);
  // A zero-length LLVM array cannot carry a string initializer.
  std::string data = bytes.empty() ? std::string(1, '\0') : bytes.str();
  LLVM::GlobalOp::create(
      builder, loc,
      LLVM::LLVMArrayType::get(IntegerType::get(context, 8), data.size()),
      /*isConstant=*/true, LLVM::Linkage::External, symbol,
      StringAttr::get(context, data));
  LLVM::GlobalOp::create(builder, loc, i64, /*isConstant=*/true,
                         LLVM::Linkage::External, (symbol + "_bytes").str(),
                         IntegerAttr::get(i64, bytes.size()));
}

namespace {

/// The host CPU as LLVM targets it: what every part's TargetMachine is
/// created from (a TargetMachine serves one code generation at a time).
struct HostTarget {
  const llvm::Target *target = nullptr;
  llvm::Triple triple;
  std::string cpu;
  std::string features;

  std::unique_ptr<llvm::TargetMachine> createMachine(
      llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive) const {
    return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
        triple, cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
        std::nullopt, level));
  }
};

/// Registers the native target (once, before any thread uses the registry)
/// and describes the host CPU.
LogicalResult lookUpHostTarget(HostTarget &host, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  host.triple = llvm::Triple(llvm::sys::getDefaultTargetTriple());
  host.target = llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (!host.target)
    return failure();
  host.cpu = llvm::sys::getHostCPUName().str();
  llvm::SubtargetFeatures features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.getKey(), feature.getValue());
  host.features = features.getString();
  return success();
}

void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager loopAnalyses;
  llvm::FunctionAnalysisManager functionAnalyses;
  llvm::CGSCCAnalysisManager cgsccAnalyses;
  llvm::ModuleAnalysisManager moduleAnalyses;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(moduleAnalyses);
  builder.registerCGSCCAnalyses(cgsccAnalyses);
  builder.registerFunctionAnalyses(functionAnalyses);
  builder.registerLoopAnalyses(loopAnalyses);
  builder.crossRegisterProxies(loopAnalyses, functionAnalyses, cgsccAnalyses,
                               moduleAnalyses);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, moduleAnalyses);
}

/// Translates `modules` into one LLVM module in `llvmContext` for
/// `machine`, optimised (O3) if `optimized`.
std::unique_ptr<llvm::Module>
translateAndLink(ArrayRef<ModuleOp> modules, llvm::LLVMContext &llvmContext,
                 llvm::TargetMachine &machine, bool optimized,
                 TimingScope &timing, std::string &error) {
  TimingScope translation = timing.nest("Translate to LLVM IR");
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  modules.front()->getContext()->appendDialectRegistry(registry);

  std::unique_ptr<llvm::Module> llvmModule;
  for (ModuleOp module : modules) {
    std::unique_ptr<llvm::Module> translated =
        translateModuleToLLVMIR(module, llvmContext);
    if (!translated) {
      error = "translation to LLVM IR failed";
      return nullptr;
    }
    // The IR linker renames clashing internal globals (each lowering has
    // its own descriptors and kernel table); exported symbols must differ.
    if (!llvmModule)
      llvmModule = std::move(translated);
    else if (llvm::Linker::linkModules(*llvmModule, std::move(translated))) {
      error = "linking the compiled modules failed (a symbol is defined "
              "twice)";
      return nullptr;
    }
  }
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());
  translation.stop();
  if (optimized) {
    TimingScope optimization = timing.nest("LLVM O3");
    optimize(*llvmModule, machine);
  }
  return llvmModule;
}

/// Generates code for `module` into the object file `path`.
LogicalResult emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                         llvm::StringRef path, std::string &error) {
  std::error_code ec;
  llvm::ToolOutputFile output(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = path.str() + ": " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, output.os(), nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    error = "the host target cannot emit object files";
    return failure();
  }
  codegen.run(module);
  output.os().close();
  if (output.os().has_error()) {
    error = path.str() + ": " + output.os().error().message();
    output.os().clear_error();
    return failure();
  }
  output.keep();
  return success();
}

/// Constant arrays of at least this many bytes go to the data object.
constexpr uint64_t kDataObjectMinBytes = 64 * 1024;

/// A constant global whose initial bytes moved to the data object.
struct ConstantData {
  std::string name;
  // Owned by the LLVMContext of the module it came from.
  llvm::StringRef bytes;
  llvm::Align alignment;
};

/// Turns `module`'s large constant arrays (the initial weights) into
/// declarations and returns what they held, so that their bytes bypass O3,
/// the parts' bitcode and code generation element by element (vgg_16's
/// 553 MB of weights took 27 of its 36 s to compile that way). An internal
/// one becomes hidden: the data object defines it.
llvm::SmallVector<ConstantData> extractConstantData(llvm::Module &module) {
  llvm::SmallVector<ConstantData> extracted;
  const llvm::DataLayout &layout = module.getDataLayout();
  for (llvm::GlobalVariable &global : module.globals()) {
    if (!global.isConstant() || !global.hasInitializer())
      continue;
    auto *data =
        llvm::dyn_cast<llvm::ConstantDataSequential>(global.getInitializer());
    if (!data || data->getRawDataValues().size() < kDataObjectMinBytes)
      continue;
    llvm::Align alignment = layout.getPreferredAlign(&global);
    extracted.push_back(
        {global.getName().str(), data->getRawDataValues(), alignment});
    global.setInitializer(nullptr);
    if (global.hasLocalLinkage()) {
      global.setLinkage(llvm::GlobalValue::ExternalLinkage);
      global.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
    global.setAlignment(alignment);
    global.setDSOLocal(true);
  }
  return extracted;
}

/// Writes `data` as the object file `path`: one read-only byte array per
/// global, its bytes as they are.
LogicalResult emitDataObject(ArrayRef<ConstantData> data,
                             const HostTarget &host, llvm::StringRef path,
                             std::string &error) {
  llvm::LLVMContext context;
  llvm::Module module("fastnn_constant_data", context);
  std::unique_ptr<llvm::TargetMachine> machine = host.createMachine();
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(machine->getTargetTriple());
  for (const ConstantData &global : data) {
    llvm::Constant *bytes = llvm::ConstantDataArray::getRaw(
        global.bytes, global.bytes.size(), llvm::Type::getInt8Ty(context));
    auto *variable = new llvm::GlobalVariable(
        module, bytes->getType(), /*isConstant=*/true,
        llvm::GlobalValue::ExternalLinkage, bytes, global.name);
    variable->setVisibility(llvm::GlobalValue::HiddenVisibility);
    variable->setAlignment(global.alignment);
  }
  return emitObject(module, *machine, path, error);
}

/// Whether every innermost loop of `function` calls a function, as the
/// loops of host glue do (a sunk training loop iterates over kernel calls);
/// a loop over data would run slower without code generation optimisations.
bool loopsOnlyCall(llvm::Function &function) {
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  auto calls = [](llvm::BasicBlock *block) {
    return llvm::any_of(*block, [](llvm::Instruction &instruction) {
      return llvm::isa<llvm::CallBase>(instruction) &&
             !llvm::isa<llvm::IntrinsicInst>(instruction);
    });
  };
  return llvm::all_of(loops.getLoopsInPreorder(), [&](llvm::Loop *loop) {
    return !loop->isInnermost() || llvm::any_of(loop->blocks(), calls);
  });
}

/// Moves the definitions of `module`'s huge functions, those of at least
/// `minInstructions` instructions whose loops only call, into a module of
/// their own and returns it (null if there are none); `module` keeps
/// declarations. A huge function is host glue: the step or the initialisation
/// calling thousands of kernels and outlined loop nests in one basic block,
/// where greedy register allocation is superlinear. nasnet_large's step
/// function (73k instructions) took 10.6 s to generate at O3 against 0.6 s at
/// O0, the compile's critical path; it runs once per step and does no
/// arithmetic of its own, so its code quality does not show. Every local symbol
/// becomes hidden external, as SplitModule makes them anyway, so that the
/// modules resolve each other's references in the final link.
std::unique_ptr<llvm::Module> separateHugeFunctions(llvm::Module &module,
                                                    unsigned minInstructions) {
  if (minInstructions == 0)
    return nullptr;
  llvm::SmallPtrSet<const llvm::GlobalValue *, 4> huge;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getInstructionCount() >= minInstructions &&
        loopsOnlyCall(function))
      huge.insert(&function);
  if (huge.empty())
    return nullptr;
  for (llvm::GlobalValue &value : module.global_values()) {
    if (!value.hasLocalLinkage())
      continue;
    if (!value.hasName())
      value.setName("fnn_unnamed");
    value.setLinkage(llvm::GlobalValue::ExternalLinkage);
    value.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  llvm::ValueToValueMapTy clonedValues;
  std::unique_ptr<llvm::Module> separated = llvm::CloneModule(
      module, clonedValues,
      [&](const llvm::GlobalValue *value) { return huge.contains(value); });
  for (llvm::Function &function : module)
    if (huge.contains(&function))
      function.deleteBody();
  return separated;
}

/// `modules` translated into one LLVM module for the host (optimised if
/// asked), with the context and machine it was made in and for.
struct HostModule {
  HostTarget host;
  std::unique_ptr<llvm::TargetMachine> machine;
  llvm::LLVMContext context;
  // Last: destroyed before the context it lives in.
  std::unique_ptr<llvm::Module> module;

  LogicalResult build(ArrayRef<ModuleOp> modules, bool optimized,
                      TimingScope &timing, std::string &error) {
    if (failed(lookUpHostTarget(host, error)))
      return failure();
    machine = host.createMachine();
    module =
        translateAndLink(modules, context, *machine, optimized, timing, error);
    return success(module != nullptr);
  }
};

} // namespace

LogicalResult fastnn::printHostLLVMIR(ArrayRef<ModuleOp> modules,
                                      llvm::raw_ostream &os,
                                      std::string &error) {
  TimingScope timing;
  HostModule optimized;
  if (failed(optimized.build(modules, /*optimized=*/true, timing, error)))
    return failure();
  optimized.module->print(os, nullptr);
  return success();
}

LogicalResult fastnn::emitHostObjects(ArrayRef<ModuleOp> modules,
                                      ArrayRef<std::string> objectFiles,
                                      llvm::StringRef dataObjectFile,
                                      unsigned threads,
                                      unsigned fastCodegenInstructions,
                                      TimingScope &timing, std::string &error) {
  // Several parts are split before O3, which then runs in each part's
  // thread too: O3 was most of a big model's compile (nasnet_mobile: 24 of
  // 41 s of LLVM's share). The loop nests are separate functions called
  // through fnn_parallel_for, so little crosses parts that O3 could use.
  const bool split = objectFiles.size() > 1;
  HostModule whole;
  if (failed(whole.build(modules, /*optimized=*/false, timing, error)))
    return failure();
  std::unique_ptr<llvm::Module> &llvmModule = whole.module;
  llvm::SmallVector<ConstantData> data;
  if (!dataObjectFile.empty())
    data = extractConstantData(*llvmModule);
  if (!split) {
    {
      TimingScope optimization = timing.nest("LLVM O3");
      optimize(*llvmModule, *whole.machine);
    }
    TimingScope codegenTiming = timing.nest("LLVM code generation");
    if (failed(emitObject(*llvmModule, *whole.machine, objectFiles.front(),
                          error)))
      return failure();
    return dataObjectFile.empty()
               ? success()
               : emitDataObject(data, whole.host, dataObjectFile, error);
  }

  // An LLVMContext serves one thread: each part travels as bitcode into a
  // context of its own. SplitModule gives the internal symbols hidden
  // external linkage, so that calls between parts resolve in the final link
  // and nothing more is exported from the executable. The huge functions, if
  // any, take the last part.
  TimingScope codegenTiming = timing.nest("LLVM O3 and code generation");
  TimingScope splitting = codegenTiming.nest("Split into parts");
  llvm::SmallVector<llvm::SmallString<0>> bitcode;
  auto writePart = [&](const llvm::Module &part) {
    llvm::raw_svector_ostream os(bitcode.emplace_back());
    llvm::WriteBitcodeToFile(part, os);
  };
  std::unique_ptr<llvm::Module> hugeFunctions =
      separateHugeFunctions(*llvmModule, fastCodegenInstructions);
  unsigned splitParts = objectFiles.size() - (hugeFunctions ? 1 : 0);
  llvm::SplitModule(
      *llvmModule, splitParts,
      [&](std::unique_ptr<llvm::Module> part) { writePart(*part); });
  if (hugeFunctions)
    writePart(*hugeFunctions);
  // The data's bytes stay with the context, not the module.
  hugeFunctions.reset();
  llvmModule.reset();
  splitting.stop();
  std::vector<std::string> errors(objectFiles.size() + 1);
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
  if (!dataObjectFile.empty())
    pool.async([&] {
      (void)emitDataObject(data, whole.host, dataObjectFile, errors.back());
    });
  // The huge functions' part starts first: it is the longest.
  for (size_t index = objectFiles.size(); index-- > 0;)
    pool.async([&, index] {
      llvm::LLVMContext partContext;
      llvm::Expected<std::unique_ptr<llvm::Module>> part =
          llvm::parseBitcodeFile(
              llvm::MemoryBufferRef(bitcode[index], objectFiles[index]),
              partContext);
      if (!part) {
        errors[index] = "reading back a split part failed: " +
                        llvm::toString(part.takeError());
        return;
      }
      bool huge = index >= splitParts;
      std::unique_ptr<llvm::TargetMachine> partMachine =
          whole.host.createMachine(huge ? llvm::CodeGenOptLevel::None
                                        : llvm::CodeGenOptLevel::Aggressive);
      optimize(**part, *partMachine);
      (void)emitObject(**part, *partMachine, objectFiles[index], errors[index]);
    });
  pool.wait();
  for (const std::string &partError : errors)
    if (!partError.empty()) {
      error = partError;
      return failure();
    }
  return success();
}
