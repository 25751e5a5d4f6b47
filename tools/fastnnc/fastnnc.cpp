//===- fastnnc.cpp - the fastnn compiler driver ---------------------------===//
//
// fastnnc model.onnx [--mode=import|infer|train|eval] [--target=cpu|cuda]
//                    [--emit=...] [-o out] [--batch-size N] [--hparams FILE]
//                    [--hparam KEY=VALUE] [--weights=embedded|external]
//
// Parses flags and calls the compiler libraries; the logic lives there.
//
//===----------------------------------------------------------------------===//

#include "LinkConfig.h"

#include "fastnn/Compiler/Diagnostics.h"
#include "fastnn/Compiler/Linker.h"
#include "fastnn/Compiler/ModelSummary.h"
#include "fastnn/Compiler/Pipelines.h"
#include "fastnn/Compiler/Registration.h"
#include "fastnn/Compiler/TrainConfig.h"
#include "fastnn/Frontends/ONNX/ONNXImporter.h"
#include "fastnn/Target/ObjectEmitter.h"
#include "fastnn/trainer/Hparams.h"
#include "fastnn/trainer/InitialWeights.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

#include <set>
#include <thread>
#include <utility>

namespace cl = llvm::cl;

namespace {

enum class Mode { Auto, Import, Infer, Train, Eval };
enum class EmitKind { MLIR, Summary, LLVM, Object, Executable };
enum class Weights { Embedded, External };

cl::OptionCategory fastnncCategory("fastnnc options");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::cat(fastnncCategory));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' is stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(fastnncCategory));
cl::opt<Mode> mode(
    "mode",
    cl::desc("What to compile (default: train when writing a file without "
             "--emit, import otherwise)"),
    cl::init(Mode::Auto),
    cl::values(clEnumValN(Mode::Import, "import",
                          "only import the model into fastnn IR"),
               clEnumValN(Mode::Infer, "infer",
                          "an inference executable (batch norm uses its "
                          "statistics, dropout is off) that reads and writes "
                          ".npy files"),
               clEnumValN(Mode::Train, "train",
                          "a training executable (train.bin): forward, loss, "
                          "backward and optimizer update as compiled code, "
                          "plus the evaluation step (--emit=mlir and llvm "
                          "show the training step)"),
               clEnumValN(Mode::Eval, "eval",
                          "the evaluation step train.bin holds (per-sample "
                          "loss, top-1 and top-5 with inference semantics), "
                          "for inspection with --emit=mlir, llvm or obj")),
    cl::cat(fastnncCategory));
cl::opt<std::string> hparamsFile(
    "hparams",
    cl::desc("Hyperparameter file (key=value lines); fastnnc uses the "
             "compile-time keys, train.bin reads the rest"),
    cl::value_desc("file"), cl::cat(fastnncCategory));
cl::list<std::string>
    hparamFlags("hparam",
                cl::desc("A hyperparameter KEY=VALUE, overriding the file"),
                cl::value_desc("key=value"), cl::cat(fastnncCategory));
cl::opt<EmitKind> emitKind(
    "emit",
    cl::desc("What to produce (default: mlir for --mode=import, exe "
             "otherwise)"),
    cl::values(
        clEnumValN(EmitKind::MLIR, "mlir",
                   "IR: fastnn after import, the LLVM dialect otherwise "
                   "(CUDA: the host's kernel launches and the kernels in "
                   "NVVM, before the fatbin)"),
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

cl::opt<fastnn::Target> targetFlag(
    "target",
    cl::desc("The device the executable runs on: its kernels, layouts and "
             "runtime library"),
    cl::init(fastnn::Target::CPU), fastnn::targetValues(),
    cl::cat(fastnncCategory));

cl::opt<bool> emulateGpuKernels(
    "emulate-gpu-kernels",
    cl::desc("With --target=cuda: run the generated GPU kernels as host "
             "loops over their grid and link the CPU runtime, to test the "
             "CUDA lowering on a machine without a GPU"),
    cl::init(false), cl::cat(fastnncCategory));

cl::opt<fastnn::LayoutChoice>
    layoutFlag("layout",
               cl::desc("Layout of convolutions, pooling and batch norm"),
               cl::init(fastnn::LayoutChoice::Auto), fastnn::layoutValues(),
               cl::cat(fastnncCategory));

cl::opt<Weights> weightsFlag(
    "weights", cl::desc("Where the initial weights go"),
    cl::init(Weights::Embedded),
    cl::values(
        clEnumValN(Weights::Embedded, "embedded",
                   "into the executable, which needs nothing else"),
        clEnumValN(Weights::External, "external",
                   "into <output>.weights beside it (the checkpoint format), "
                   "where the executable reads them at start")),
    cl::cat(fastnncCategory));

// The parts are fixed, not the threads, so that train.bin does not depend on
// the machine that compiled it.
cl::opt<unsigned> codegenParts(
    "codegen-parts",
    cl::desc("Split the LLVM module of --emit=exe into this many parts, "
             "optimised and generated in parallel and linked together (1: "
             "the whole module optimised at once, one object; --emit=obj "
             "always writes one)"),
    cl::init(8), cl::cat(fastnncCategory));
cl::opt<unsigned> codegenFastInstructions(
    "codegen-fast-above",
    cl::desc("With several --codegen-parts, generate the functions of at "
             "least this many LLVM instructions (the host glue of a big "
             "model's step) without code generation optimisations, in a part "
             "of their own (0: none)"),
    cl::init(16384), cl::Hidden, cl::cat(fastnncCategory));
cl::opt<unsigned> codegenThreads(
    "codegen-threads",
    cl::desc("Threads generating the parts (0: one per core); the "
             "executable does not depend on it"),
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

/// Writes what fastnn-lower-to-runtime left out of the executable
/// (fastnn.external_weights) to Path in the checkpoint format, at step 0,
/// and drops the attribute.
std::string writeExternalWeights(mlir::ModuleOp module,
                                 const std::string &path) {
  auto entries =
      module->getAttrOfType<mlir::ArrayAttr>("fastnn.external_weights");
  if (!entries)
    return "internal error: the lowering listed no external weights";
  fastnn::trainer::Checkpoint weights;
  // Uniform values are held as one element; the file holds them whole.
  std::vector<std::vector<unsigned char>> expanded;
  expanded.reserve(entries.size());
  for (mlir::Attribute entry : entries) {
    auto fields = llvm::cast<mlir::DictionaryAttr>(entry);
    fastnn::trainer::StateTensor tensor;
    tensor.Name = fields.getAs<mlir::StringAttr>("name").str();
    tensor.Role = fields.getAs<mlir::IntegerAttr>("role").getInt();
    tensor.Dtype = fields.getAs<mlir::IntegerAttr>("dtype").getInt();
    auto value = fields.getAs<mlir::ElementsAttr>("value");
    auto type = llvm::cast<mlir::ShapedType>(value.getType());
    tensor.Shape.assign(type.getShape().begin(), type.getShape().end());
    tensor.Bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
    llvm::ArrayRef<char> data;
    if (auto resource =
            llvm::dyn_cast<mlir::DenseResourceElementsAttr>(value)) {
      if (mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob())
        data = blob->getData();
    } else if (auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(value)) {
      data = dense.getRawData();
    }
    if (data.size() == tensor.Bytes) {
      tensor.Data = reinterpret_cast<const unsigned char *>(data.data());
    } else if (!data.empty() && tensor.Bytes % data.size() == 0) {
      std::vector<unsigned char> &whole = expanded.emplace_back();
      for (uint64_t at = 0; at < tensor.Bytes; at += data.size())
        whole.insert(whole.end(), data.begin(), data.end());
      tensor.Data = whole.data();
    } else {
      return "the initial value of '" + tensor.Name +
             "' is not available (an elided resource?); compile from the "
             "ONNX model";
    }
    weights.Tensors.push_back(std::move(tensor));
  }
  module->removeAttr("fastnn.external_weights");
  fastnn::data::Status status = fastnn::trainer::writeCheckpoint(path, weights);
  return status.ok() ? "" : status.message();
}

/// A pass manager running what `addPasses` adds, with the MLIR command
/// line's options (--mlir-timing reports when it is destroyed).
std::unique_ptr<mlir::PassManager>
buildPassManager(mlir::MLIRContext &context,
                 llvm::function_ref<void(mlir::PassManager &)> addPasses) {
  auto pm = std::make_unique<mlir::PassManager>(&context);
  if (mlir::failed(mlir::applyPassManagerCLOptions(*pm)))
    return nullptr;
  auto timing = std::make_unique<mlir::DefaultTimingManager>();
  mlir::applyDefaultTimingManagerCLOptions(*timing);
  pm->enableTiming(std::move(timing));
  addPasses(*pm);
  return pm;
}

mlir::LogicalResult
runPasses(mlir::ModuleOp module,
          llvm::function_ref<void(mlir::PassManager &)> addPasses) {
  std::unique_ptr<mlir::PassManager> pm =
      buildPassManager(*module.getContext(), addPasses);
  return mlir::success(pm && mlir::succeeded(pm->run(module)));
}

/// The training and evaluation steps are compiled from the same graph, so
/// what one reports the other would report too, often in other words
/// ("training expects" and "evaluation expects"): the first error is the
/// one reported (a pipeline stops at its first failing pass), and other
/// diagnostics once. The diagnostic engine calls handlers one at a time.
class ReportOnceDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  explicit ReportOnceDiagnosticHandler(mlir::MLIRContext *context)
      : ScopedDiagnosticHandler(context) {
    // Failure passes the diagnostic on to the handler that prints it.
    setHandler([this](mlir::Diagnostic &diag) {
      if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
        return mlir::success(std::exchange(errorReported, true));
      std::string key;
      llvm::raw_string_ostream os(key);
      os << diag.getLocation() << ": " << diag.str();
      return mlir::success(!reported.insert(key).second);
    });
  }

private:
  bool errorReported = false;
  std::set<std::string> reported;
};

/// Runs the training pipeline on `trainModule` and the evaluation pipeline on
/// `evalModule` side by side: they share nothing but the context, whose
/// uniquing is thread-safe, and the evaluation step was a tenth of a big
/// model's compile.
mlir::LogicalResult runSideBySide(mlir::ModuleOp trainModule,
                                  mlir::PassManager &trainPasses,
                                  mlir::ModuleOp evalModule,
                                  mlir::PassManager &evalPasses) {
  mlir::MLIRContext &context = *trainModule.getContext();
  ReportOnceDiagnosticHandler reportOnce(&context);
  if (!context.isMultithreadingEnabled())
    return mlir::success(mlir::succeeded(evalPasses.run(evalModule)) &&
                         mlir::succeeded(trainPasses.run(trainModule)));
  // PassManager::run loads the dialects its passes depend on, which two
  // threads must not do at once: they are loaded here first.
  mlir::DialectRegistry dependencies;
  trainPasses.getDependentDialects(dependencies);
  evalPasses.getDependentDialects(dependencies);
  context.appendDialectRegistry(dependencies);
  for (llvm::StringRef name : dependencies.getDialectNames())
    context.getOrLoadDialect(name);
  mlir::LogicalResult evalResult = mlir::failure();
  std::thread evalThread([&] { evalResult = evalPasses.run(evalModule); });
  mlir::LogicalResult trainResult = trainPasses.run(trainModule);
  evalThread.join();
  return mlir::success(mlir::succeeded(evalResult) &&
                       mlir::succeeded(trainResult));
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
      "fastnnc: compiles an ONNX image model into a trainer, an inference\n"
      "executable or fastnn IR\n\n"
      "Textual ONNX models are read from files ending in .onnxtxt.\n");

  if (emulateGpuKernels && targetFlag != fastnn::Target::CUDA)
    return fail("--emulate-gpu-kernels emulates the CUDA target's kernels: "
                "add --target=cuda");
  if (codegenParts == 0)
    return fail("--codegen-parts must be at least 1");
  if (batchSize < 0)
    return fail("--batch-size must be positive, got " +
                llvm::Twine(batchSize.getValue()));
  Mode compileMode = mode;
  if (compileMode == Mode::Auto) {
    bool wantsIR =
        emitKind.getNumOccurrences()
            ? (emitKind == EmitKind::MLIR || emitKind == EmitKind::Summary)
            : outputPath == "-";
    compileMode = wantsIR ? Mode::Import : Mode::Train;
  }
  EmitKind emit = emitKind.getNumOccurrences()
                      ? emitKind.getValue()
                      : (compileMode == Mode::Import ? EmitKind::MLIR
                                                     : EmitKind::Executable);
  if (compileMode == Mode::Import &&
      (emit != EmitKind::MLIR && emit != EmitKind::Summary))
    return fail("--emit=llvm, obj and exe need --mode=infer, train or eval");
  if (compileMode == Mode::Eval && emit == EmitKind::Executable)
    return fail("--mode=eval has no executable of its own (train.bin holds "
                "the evaluation step): use --emit=mlir, llvm or obj");
  // The evaluation step is compiled like the training step it goes with.
  bool trainingModel = compileMode == Mode::Train || compileMode == Mode::Eval;
  fastnn::trainer::Hparams hparams;
  if (trainingModel) {
    if (!hparamsFile.empty())
      if (auto status = hparams.parseFile(hparamsFile); !status.ok())
        return fail(status.message());
    std::vector<std::string> flags;
    for (const std::string &flag : hparamFlags)
      flags.push_back("--" + flag);
    if (auto status = hparams.parseFlags(flags); !status.ok())
      return fail(status.message());
    if (batchSize.getNumOccurrences())
      if (auto status = hparams.parseFlags(
              {"--batch_size=" + std::to_string(batchSize.getValue())});
          !status.ok())
        return fail(status.message());
    if (auto status = hparams.validate(); !status.ok())
      return fail(status.message());
    if (auto status = fastnn::resolvePrecision(hparams); !status.ok())
      return fail(status.message());
  } else if (!hparamsFile.empty() || !hparamFlags.empty()) {
    return fail("--hparams and --hparam apply to --mode=train and eval");
  }
  if ((emit == EmitKind::Object || emit == EmitKind::Executable) &&
      outputPath == "-")
    return fail("--emit=obj and --emit=exe write a file: give -o <file>");
  // The weights file goes beside the output; --emit=mlir shows the
  // weights in fastnn.external_weights instead.
  bool writesWeights = weightsFlag == Weights::External &&
                       emit != EmitKind::MLIR && emit != EmitKind::Summary;
  // The evaluation step's parameters are the training arena's.
  if (weightsFlag == Weights::External &&
      (compileMode == Mode::Import || compileMode == Mode::Eval))
    return fail("--weights=external applies to --mode=infer and train");
  if (writesWeights && outputPath == "-")
    return fail("--weights=external writes the weights beside the output "
                "(<output>.weights): give -o <file>");

  mlir::DialectRegistry registry;
  fastnn::registerDialects(registry);
  mlir::MLIRContext context(registry);
  fastnn::OneLineDiagnosticHandler diagnostics(&context, "fastnnc");

  fastnn::ONNXImportOptions options;
  options.batchSize =
      trainingModel ? hparams.getInt("batch_size") : batchSize.getValue();
  std::string exportTemplate;
  if (compileMode == Mode::Train)
    options.exportTemplate = &exportTemplate;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      fastnn::importONNXFile(context, inputPath, options);
  if (!module)
    return 1;
  if (trainingModel) {
    if (mlir::failed(fastnn::checkNumClasses(*module, hparams)))
      return 1;
    (*module)->setAttr(
        "fastnn.config",
        mlir::StringAttr::get(&context, hparams.compiledConfigText()));
  }
  bool writesObject = emit == EmitKind::Object || emit == EmitKind::Executable;
  // train.bin evaluates too: the evaluation step is compiled from the same
  // imported forward graph, before training rewrites it.
  mlir::OwningOpRef<mlir::ModuleOp> evalModule;
  if (compileMode == Mode::Import) {
    // The model as imported, cleaned up.
    if (mlir::failed(runPasses(*module, [](mlir::PassManager &pm) {
          pm.addPass(mlir::createCanonicalizerPass());
          pm.addPass(mlir::createCSEPass());
        })))
      return 1;
  } else {
    // The registered pipelines (fastnn-cpu and its parts), as fastnnc-opt
    // runs them.
    fastnn::PipelineOptions pipeline;
    pipeline.mode = compileMode == Mode::Train  ? fastnn::StepKind::Train
                    : compileMode == Mode::Eval ? fastnn::StepKind::Eval
                                                : fastnn::StepKind::Infer;
    pipeline.layout = layoutFlag.getValue();
    pipeline.externalWeights = weightsFlag == Weights::External;
    // Kernels embedded as a fatbin cannot be read: --emit=mlir shows them
    // in NVVM, with the host's launches of them.
    pipeline.emulateGpuKernels = emulateGpuKernels;
    pipeline.gpuKernelsAsIR = emit == EmitKind::MLIR &&
                              targetFlag == fastnn::Target::CUDA &&
                              !emulateGpuKernels;
    if (trainingModel)
      if (auto status = fastnn::setPipelineOptions(hparams, pipeline);
          !status.ok())
        return fail(status.message());
    if (emit == EmitKind::Summary) {
      if (mlir::failed(runPasses(*module, [&](mlir::PassManager &pm) {
            fastnn::buildForwardPipeline(pm, pipeline, targetFlag);
          })))
        return 1;
    } else {
      std::unique_ptr<mlir::PassManager> trainPasses =
          buildPassManager(context, [&](mlir::PassManager &pm) {
            fastnn::buildPipeline(pm, pipeline, targetFlag);
          });
      if (!trainPasses)
        return 1;
      if (compileMode == Mode::Train && writesObject) {
        evalModule = module->clone();
        fastnn::PipelineOptions evalPipeline;
        evalPipeline.copyOptionValuesFrom(pipeline);
        evalPipeline.mode = fastnn::StepKind::Eval;
        std::unique_ptr<mlir::PassManager> evalPasses =
            buildPassManager(context, [&](mlir::PassManager &pm) {
              fastnn::buildPipeline(pm, evalPipeline, targetFlag);
            });
        if (!evalPasses ||
            mlir::failed(
                runSideBySide(*module, *trainPasses, *evalModule, *evalPasses)))
          return 1;
      } else if (mlir::failed(trainPasses->run(*module))) {
        return 1;
      }
    }
  }

  std::string error;
  if (writesWeights) {
    error = writeExternalWeights(
        *module, outputPath + fastnn::trainer::WeightsFileSuffix);
    if (!error.empty())
      return fail(error);
  }
  if (writesObject) {
    if (compileMode == Mode::Train)
      fastnn::embedBytes(*module, "fnn_model_onnx", exportTemplate);
    llvm::SmallVector<mlir::ModuleOp, 2> compiled = {*module};
    if (evalModule)
      compiled.push_back(*evalModule);
    // --mlir-timing reports LLVM's part and the link after the passes'.
    mlir::DefaultTimingManager timing;
    mlir::applyDefaultTimingManagerCLOptions(timing);
    mlir::TimingScope timingScope = timing.getRootScope();
    if (emit == EmitKind::Object)
      return mlir::succeeded(fastnn::emitHostObjects(
                 compiled, {outputPath.getValue()},
                 /*dataObjectFile=*/"", codegenThreads, codegenFastInstructions,
                 timingScope, error))
                 ? 0
                 : fail(error);
    // Emulated kernels run on the host: the step links the CPU runtime.
    bool cuda = targetFlag == fastnn::Target::CUDA && !emulateGpuKernels;
    llvm::StringRef linkInputs =
        compileMode == Mode::Train
            ? (cuda ? FASTNN_CUDA_TRAIN_LINK_INPUTS : FASTNN_TRAIN_LINK_INPUTS)
            : (cuda ? FASTNN_CUDA_INFER_LINK_INPUTS : FASTNN_INFER_LINK_INPUTS);
    if (linkInputs.empty())
      return fail("this fastnnc was built without the CUDA runtime "
                  "(fastnn_runtime_cuda): --emit=exe for --target=cuda "
                  "needs a build configured with the CUDA toolkit");
    llvm::SmallVector<std::string> objectFiles;
    llvm::scope_exit removeObjects([&] {
      for (const std::string &objectFile : objectFiles)
        llvm::sys::fs::remove(objectFile);
    });
    // The code parts, then the object of the embedded weights.
    for (unsigned part = 0; part <= codegenParts; ++part) {
      llvm::SmallString<128> objectFile;
      if (llvm::sys::fs::createTemporaryFile("fastnnc", "o", objectFile))
        return fail("cannot create a temporary object file");
      objectFiles.push_back(objectFile.str().str());
    }
    if (mlir::failed(fastnn::emitHostObjects(
            compiled, llvm::ArrayRef(objectFiles).drop_back(),
            objectFiles.back(), codegenThreads, codegenFastInstructions,
            timingScope, error)))
      return fail(error);
    llvm::SmallVector<std::string> inputs;
    for (llvm::StringRef input : llvm::split(linkInputs, ';'))
      inputs.push_back(input.str());
    mlir::TimingScope linkTiming = timingScope.nest("Link");
    bool ok = fastnn::linkExecutable(FASTNN_LINKER, objectFiles, inputs,
                                     outputPath, error);
    return ok ? 0 : fail(error);
  }

  auto output = mlir::openOutputFile(outputPath, &error);
  if (!output)
    return fail(outputPath + ": " + error);
  if (emit == EmitKind::Summary)
    fastnn::printModelSummary(*module, output->os());
  else if (emit == EmitKind::LLVM) {
    if (mlir::failed(fastnn::printHostLLVMIR(*module, output->os(), error)))
      return fail(error);
  } else
    module->print(output->os(), mlir::OpPrintingFlags());
  output->keep();
  return 0;
}
