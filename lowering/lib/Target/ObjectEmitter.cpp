//===- ObjectEmitter.cpp - LLVM-dialect module to LLVM IR / object --------===//

#include "fastnn/Target/ObjectEmitter.h"
#include "fastnn/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

void fastnn::buildHostToLLVMDialectPipeline(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (math.erf) becomes a libm call, as the
  // intrinsics of tanh, exp and log become on x86 anyway; train.bin and
  // infer.bin link libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
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

std::unique_ptr<llvm::TargetMachine> hostTargetMachine(std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::SubtargetFeatures features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.getKey(), feature.getValue());
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(),
      llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
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

} // namespace

LogicalResult fastnn::emitHostCode(ArrayRef<ModuleOp> modules,
                                   llvm::raw_ostream *os,
                                   llvm::StringRef objectFile,
                                   std::string &error) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  modules.front()->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  for (ModuleOp module : modules) {
    std::unique_ptr<llvm::Module> translated =
        translateModuleToLLVMIR(module, llvmContext);
    if (!translated) {
      error = "translation to LLVM IR failed";
      return failure();
    }
    // The IR linker renames clashing internal globals (each lowering has
    // its own descriptors and kernel table); exported symbols must differ.
    if (!llvmModule)
      llvmModule = std::move(translated);
    else if (llvm::Linker::linkModules(*llvmModule, std::move(translated))) {
      error = "linking the compiled modules failed (a symbol is defined "
              "twice)";
      return failure();
    }
  }
  std::unique_ptr<llvm::TargetMachine> machine = hostTargetMachine(error);
  if (!machine)
    return failure();
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple());
  optimize(*llvmModule, *machine);

  if (objectFile.empty()) {
    llvmModule->print(*os, nullptr);
    return success();
  }
  std::error_code ec;
  llvm::ToolOutputFile output(objectFile, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = objectFile.str() + ": " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, output.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the host target cannot emit object files";
    return failure();
  }
  codegen.run(*llvmModule);
  output.keep();
  return success();
}
