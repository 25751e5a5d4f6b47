//===- fastnnc.cpp - the fastnn compiler driver ---------------------------===//
//
// fastnnc model.onnx --emit=mlir [-o out.mlir] [--batch-size N]
//
// Parses flags and calls the compiler libraries; the logic lives there.
//
//===----------------------------------------------------------------------===//

#include "fastnn/Compiler/Diagnostics.h"
#include "fastnn/Compiler/ModelSummary.h"
#include "fastnn/Compiler/Registration.h"
#include "fastnn/Frontends/ONNX/ONNXImporter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

namespace cl = llvm::cl;

namespace {

enum class EmitKind { MLIR, Summary };

cl::OptionCategory fastnncCategory("fastnnc options");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::cat(fastnncCategory));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' is stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(fastnncCategory));
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to produce"), cl::init(EmitKind::MLIR),
    cl::values(clEnumValN(EmitKind::MLIR, "mlir",
                          "fastnn IR of the imported model"),
               clEnumValN(EmitKind::Summary, "summary",
                          "inputs, outputs, parameters and op counts")),
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
      "fastnnc: compiles an ONNX image model into fastnn IR\n\n"
      "Textual ONNX models are read from files ending in .onnxtxt.\n");

  if (batchSize < 0) {
    llvm::errs() << "fastnnc: error: --batch-size must be positive, got "
                 << batchSize << "\n";
    return 1;
  }

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

  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return 1;
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  mlir::TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(*module)))
    return 1;

  std::string error;
  auto output = mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "fastnnc: error: " << outputPath << ": " << error << "\n";
    return 1;
  }
  if (emitKind == EmitKind::Summary)
    fastnn::printModelSummary(*module, output->os());
  else
    module->print(output->os(), mlir::OpPrintingFlags());
  output->keep();
  return 0;
}
