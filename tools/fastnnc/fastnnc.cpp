//===- fastnnc.cpp - the fastnn compiler driver ---------------------------===//
//
// fastnnc model.onnx [--mode=import|infer] [--emit=...] [-o out]
//                    [--batch-size N]
//
// Parses flags and calls the compiler libraries; the logic lives there.
//
//===----------------------------------------------------------------------===//

#include "LinkConfig.h"

#include "fastnn/Compiler/Diagnostics.h"
#include "fastnn/Compiler/Linker.h"
#include "fastnn/Compiler/ModelSummary.h"
#include "fastnn/Compiler/Registration.h"
#include "fastnn/Conversion/Passes.h"
#include "fastnn/Frontends/ONNX/ONNXImporter.h"
#include "fastnn/Target/ObjectEmitter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

namespace cl = llvm::cl;

namespace {

enum class Mode { Import, Infer };
enum class EmitKind { MLIR, Summary, LLVM, Object, Executable };

cl::OptionCategory fastnncCategory("fastnnc options");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::cat(fastnncCategory));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' is stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(fastnncCategory));
cl::opt<Mode> mode(
    "mode", cl::desc("What to compile"), cl::init(Mode::Import),
    cl::values(clEnumValN(Mode::Import, "import",
                          "only import the model into fastnn IR"),
               clEnumValN(Mode::Infer, "infer",
                          "an inference executable (batch norm uses its "
                          "statistics, dropout is off) that reads and writes "
                          ".npy files")),
    cl::cat(fastnncCategory));
cl::opt<EmitKind> emitKind(
    "emit",
    cl::desc("What to produce (default: mlir for --mode=import, exe "
             "otherwise)"),
    cl::values(
        clEnumValN(EmitKind::MLIR, "mlir",
                   "IR: fastnn after import, the LLVM dialect otherwise"),
        clEnumValN(EmitKind::Summary, "summary",
                   "inputs, outputs, parameters and op counts"),
        clEnumValN(EmitKind::LLVM, "llvm", "optimised LLVM IR"),
        clEnumValN(EmitKind::Object, "obj", "an object file"),
        clEnumValN(EmitKind::Executable, "exe", "a linked executable")),
    cl::cat(fastnncCategory));
cl::opt<int64_t>
    batchSize("batch-size",
              cl::desc("Batch size compiled into the model (replaces the first "
                       "dimension of every input; 0 keeps the model's)"),
              cl::init(0), cl::cat(fastnncCategory));

/// libLLVM registers hundreds of backend options; --help lists only fastnnc's
/// own and MLIR's (--mlir-print-ir-after-all and its family).
void hideUnrelatedOptions() {
  for (auto &entry : cl::getRegisteredOptions()) {
    llvm::StringRef name = entry.first;
    cl::Option *option = entry.second;
    bool ours = llvm::is_contained(option->Categories, &fastnncCategory);
    if (!ours && !name.starts_with("mlir-") && name != "help" &&
        name != "version")
      option->setHiddenFlag(cl::ReallyHidden);
  }
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "fastnnc: error: " << message << "\n";
  return 1;
}

mlir::LogicalResult
runPasses(mlir::ModuleOp module,
          llvm::function_ref<void(mlir::PassManager &)> addPasses) {
  mlir::PassManager pm(module.getContext());
  if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return mlir::failure();
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  mlir::TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  addPasses(pm);
  return pm.run(module);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  hideUnrelatedOptions();
  cl::ParseCommandLineOptions(
      argc, argv,
      "fastnnc: compiles an ONNX image model\n\n"
      "Textual ONNX models are read from files ending in .onnxtxt.\n");

  if (batchSize < 0)
    return fail("--batch-size must be positive, got " +
                llvm::Twine(batchSize.getValue()));
  EmitKind emit =
      emitKind.getNumOccurrences()
          ? emitKind.getValue()
          : (mode == Mode::Import ? EmitKind::MLIR : EmitKind::Executable);
  if (mode == Mode::Import &&
      (emit != EmitKind::MLIR && emit != EmitKind::Summary))
    return fail("--emit=llvm, obj and exe need --mode=infer");
  if ((emit == EmitKind::Object || emit == EmitKind::Executable) &&
      outputPath == "-")
    return fail("--emit=obj and --emit=exe write a file: give -o <file>");

  mlir::DialectRegistry registry;
  fastnn::registerDialects(registry);
  mlir::MLIRContext context(registry);
  fastnn::OneLineDiagnosticHandler diagnostics(&context, "fastnnc");

  fastnn::ONNXImportOptions options;
  options.batchSize = batchSize;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      fastnn::importONNXFile(context, inputPath, options);
  if (!module)
    return 1;
  if (mlir::failed(runPasses(*module, [&](mlir::PassManager &pm) {
        pm.addPass(mlir::createCanonicalizerPass());
        pm.addPass(mlir::createCSEPass());
        if (mode == Mode::Infer && emit != EmitKind::Summary) {
          pm.addPass(fastnn::createFastNNLowerToRuntime());
          fastnn::buildLowerToLLVMDialectPipeline(pm);
        }
      })))
    return 1;

  std::string error;
  if (emit == EmitKind::Object || emit == EmitKind::Executable) {
    llvm::SmallString<128> objectFile(outputPath.getValue());
    if (emit == EmitKind::Executable &&
        llvm::sys::fs::createTemporaryFile("fastnnc", "o", objectFile))
      return fail("cannot create a temporary object file");
    bool ok = mlir::succeeded(
        fastnn::emitHostCode(*module, nullptr, objectFile, error));
    if (ok && emit == EmitKind::Executable) {
      llvm::SmallVector<std::string> inputs;
      for (llvm::StringRef input : llvm::split(FASTNN_INFER_LINK_INPUTS, ';'))
        inputs.push_back(input.str());
      ok = fastnn::linkExecutable(FASTNN_LINKER, objectFile, inputs, outputPath,
                                  error);
      llvm::sys::fs::remove(objectFile);
    }
    return ok ? 0 : fail(error);
  }

  auto output = mlir::openOutputFile(outputPath, &error);
  if (!output)
    return fail(outputPath + ": " + error);
  if (emit == EmitKind::Summary)
    fastnn::printModelSummary(*module, output->os());
  else if (emit == EmitKind::LLVM) {
    if (mlir::failed(fastnn::emitHostCode(*module, &output->os(), "", error)))
      return fail(error);
  } else
    module->print(output->os(), mlir::OpPrintingFlags());
  output->keep();
  return 0;
}
