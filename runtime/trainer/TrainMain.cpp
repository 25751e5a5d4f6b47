//===- TrainMain.cpp - main() of train.bin --------------------------------===//
//
// train.bin [--hparams FILE] [--key=value]... [--eval | --export-onnx FILE]
//           [--help] [--print-config]
//
// Runs a model compiled by fastnnc for training: each fnn_model_run is one
// step (forward, backward, optimizer update) on the arena's "images",
// "labels", "learning_rate" and "step" inputs, giving "loss", "top1" and
// "top5". The hyperparameters come from the file, the flags (which win) and
// the compiled configuration, which they may not contradict. The training
// loop (checkpoints, resume, TensorBoard events, timelines, evaluation) is
// TrainingRun; --eval evaluates the latest checkpoint instead, and
// --export-onnx writes it as an ONNX model.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"
#include "Evaluate.h"
#include "TrainingRun.h"

#include "fastnn/runtime/ModelDevice.h"
#include "fastnn/runtime/ModelTables.h"
#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/model.h"
#include "fastnn/trainer/BestEffortOutput.h"
#include "fastnn/trainer/EventWriter.h"
#include "fastnn/trainer/Hparams.h"
#include "fastnn/trainer/OnnxExport.h"
#include "fastnn/trainer/StopSignal.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace fastnn::trainer;
using fastnn::runtime::shapeText;
using fastnn::runtime::TensorRecord;

const TensorRecord &findTensor(const std::vector<TensorRecord> &Records,
                               int64_t Kind, const char *Name,
                               std::initializer_list<int64_t> Dtypes) {
  for (const TensorRecord &Record : Records)
    if (Record.kind == Kind && Record.name == Name) {
      if (std::find(Dtypes.begin(), Dtypes.end(), Record.dtype) == Dtypes.end())
        fail(std::string("the model's ") + Name +
             " has an element type the trainer does not handle (dtype " +
             std::to_string(Record.dtype) + ")");
      return Record;
    }
  fail(std::string("the model has no ") +
       (Kind == FNN_IO_INPUT ? "input" : "output") + " '" + Name +
       "'; train.bin needs a model compiled for training (fastnnc without "
       "--mode=infer)");
}

void printUsage() {
  std::printf(
      "usage: train.bin [--hparams FILE] [--key=value]... [--eval | "
      "--export-onnx FILE]\n                 [--help] [--print-config]\n\n"
      "Trains the compiled model. Hyperparameters come from FILE (key=value "
      "lines,\nblank lines and # comments) and from --key=value flags, which "
      "override the\nfile. A run resumes the latest checkpoint of train_dir; "
      "--eval evaluates it\n(top-1, top-5, mean loss over the evaluation "
      "split) instead of training;\n--export-onnx writes it as the ONNX model "
      "train.bin was compiled from, with\nthe trained weights and batch-norm "
      "statistics.\n--print-config prints the effective "
      "configuration and exits.\n\n");
  std::printf("%s", hparamsHelp().c_str());
  std::string Compiled = fnn_model_config;
  if (!Compiled.empty())
    std::printf("\nThis train.bin was compiled with:\n%s%s", Compiled.c_str(),
                Compiled.back() == '\n' ? "" : "\n");
}

/// The latest checkpoint of the output directory, for --eval and
/// --export-onnx (Flag), read into Latest from Path.
void loadLatestOrFail(const Hparams &H, const std::string &OutputDir,
                      const std::string &Flag, Checkpoint &Latest,
                      std::string &Path) {
  if (OutputDir.empty())
    fail(Flag + " reads the latest checkpoint of train_dir, which is not "
                "set; set train_dir (or model_dir with task_type=pretrain) "
                "to the directory a training run saved into");
  bool Found = false;
  std::vector<std::string> Warnings;
  if (Status S = loadLatestCheckpoint(OutputDir, Latest, Path, Found, Warnings);
      !S.ok())
    fail(S.message());
  for (const std::string &Warning : Warnings)
    std::printf("train.bin: warning: %s\n", Warning.c_str());
  if (!Found) {
    const char *Key = H.isSet("train_dir") ? "train_dir" : "model_dir";
    fail(H.origin(Key) + ": " + Key + "=" + H.text(Key) +
         ": holds no checkpoint for " + Flag +
         "; train first (a run saves into it), or point it at the directory "
         "a training run saved into");
  }
}

/// train.bin --export-onnx FILE: the latest checkpoint's weights and
/// statistics in the ONNX model train.bin was compiled from.
int exportLatest(const Hparams &H, const std::string &OutputDir,
                 const std::string &File) {
  Checkpoint Latest;
  std::string Path;
  loadLatestOrFail(H, OutputDir, "--export-onnx", Latest, Path);
  if (Status S = exportOnnx(File, fnn_model_onnx, fnn_model_onnx_bytes,
                            Latest.Tensors);
      !S.ok())
    fail(S);
  std::printf("train.bin: wrote %s from %s (step %lld)\n", File.c_str(),
              Path.c_str(), static_cast<long long>(Latest.Step));
  return 0;
}

/// train.bin --eval: the latest checkpoint of the output directory through
/// the evaluation step; under mpirun the chief reads it and every worker
/// evaluates its share.
int evaluateLatest(const Hparams &H, const std::string &OutputDir) {
  Checkpoint Latest;
  std::string Path;
  if (isChief())
    loadLatestOrFail(H, OutputDir, "--eval", Latest, Path);

  std::string Error;
  fnn_device *Device =
      fastnn::runtime::createModelDevice(fnn_comm_local_rank(), Error);
  if (!Device)
    fail(Error);
  {
    std::unique_ptr<Evaluator> Eval;
    if (Status S = Evaluator::create(Device, Eval); !S.ok())
      fail(S.message());
    if (isChief())
      if (Status S = Eval->load(Latest.Tensors, Path); !S.ok())
        fail(S.message());
    Eval->shareChiefState(Latest.Step);
    std::printf("train.bin: evaluating %s (step %lld)\n", Path.c_str(),
                static_cast<long long>(Latest.Step));
    std::fflush(stdout);
    EvalResult Result;
    std::string Description;
    if (Status S = Eval->run(H, Result, Description); !S.ok())
      fail(S.message());
    std::printf("train.bin: %s\n", Description.c_str());
    std::printf("%s\n", evalLine(Latest.Step, Result).c_str());
    std::printf("train.bin: evaluated %lld samples in %.2f s\n",
                static_cast<long long>(Result.Samples), Result.Seconds);
    if (isChief()) {
      EventWriter Events(OutputDir + "/eval");
      BestEffortOutput EventsOutput("TensorBoard evaluation events");
      for (const std::string &Line :
           {EventsOutput.note(Events.scalars(Latest.Step, evalScalars(Result))),
            EventsOutput.note(Events.close())})
        if (!Line.empty())
          std::printf("%s\n", Line.c_str());
    }
  }
  fnn_device_destroy(Device);
  return 0;
}

} // namespace

namespace fastnn::trainer {

namespace {

void printErrorLines(const std::string &Message) {
  std::stringstream Lines(Message);
  std::string Line;
  while (std::getline(Lines, Line))
    std::fprintf(stderr, "train.bin: error: %s%s\n", workerPrefix().c_str(),
                 Line.c_str());
}

} // namespace

void fail(const std::string &Message) {
  printErrorLines(Message);
  endJob(1);
}

void fail(const Status &S) {
  printErrorLines(S.message());
  endJob(S.isIoError() ? ExitIoError : 1);
}

} // namespace fastnn::trainer

int main(int argc, char **argv) {
  // Before MPI, the loader and OpenMP start their threads.
  watchStopSignals();
  joinJob(argc, argv);
  // Under a file-size limit (ulimit -f) a write past it then fails with
  // EFBIG, reported like a full disk, instead of killing train.bin.
  std::signal(SIGXFSZ, SIG_IGN);
  std::string HparamsFile;
  std::vector<std::string> Flags;
  bool PrintConfig = false, EvaluateOnly = false;
  std::string ExportFile;
  for (int I = 1; I < argc; ++I) {
    std::string Arg = argv[I];
    if (Arg == "--help" || Arg == "-h") {
      printUsage();
      return 0;
    }
    if (Arg == "--print-config") {
      PrintConfig = true;
    } else if (Arg == "--eval") {
      EvaluateOnly = true;
    } else if (Arg == "--export-onnx" || Arg.rfind("--export-onnx=", 0) == 0) {
      if (Arg.size() > 13)
        ExportFile = Arg.substr(14);
      else if (I + 1 < argc)
        ExportFile = argv[++I];
      if (ExportFile.empty())
        fail("--export-onnx expects the file to write");
    } else if (Arg == "--hparams") {
      if (I + 1 >= argc)
        fail("--hparams expects a file");
      HparamsFile = argv[++I];
    } else if (Arg.rfind("--hparams=", 0) == 0) {
      HparamsFile = Arg.substr(10);
    } else {
      Flags.push_back(Arg);
    }
  }

  Hparams H;
  std::string Errors;
  auto collect = [&](const Status &S) {
    if (!S.ok())
      Errors += S.message() + "\n";
  };
  if (!HparamsFile.empty())
    collect(H.parseFile(HparamsFile));
  collect(H.parseFlags(Flags));
  if (Errors.empty())
    collect(H.applyCompiled(fnn_model_config));
  if (Errors.empty())
    collect(H.validate());
  if (Errors.empty())
    collect(applyWorker(H));
  if (!Errors.empty())
    fail(Errors);

  std::vector<TensorRecord> Io =
      fastnn::runtime::readTensorRecords(fnn_model_io, fnn_model_io_names);
  ModelInterface Model;
  Model.State = fastnn::runtime::readTensorRecords(fnn_model_state,
                                                   fnn_model_state_names);
  Model.Images =
      findTensor(Io, FNN_IO_INPUT, "images", {FNN_F32, FNN_F16, FNN_BF16});
  Model.Labels = findTensor(Io, FNN_IO_INPUT, "labels", {FNN_I64, FNN_I32});
  Model.Rate = findTensor(Io, FNN_IO_INPUT, "learning_rate", {FNN_F32});
  Model.Step = findTensor(Io, FNN_IO_INPUT, "step", {FNN_I64});
  Model.Loss = findTensor(Io, FNN_IO_OUTPUT, "loss", {FNN_F32});
  Model.Top1 = findTensor(Io, FNN_IO_OUTPUT, "top1", {FNN_F32});
  Model.Top5 = findTensor(Io, FNN_IO_OUTPUT, "top5", {FNN_F32});
  Model.LossScale =
      fastnn::runtime::findTensorRecord(Io, FNN_IO_OUTPUT, "loss_scale");
  Model.Skipped =
      fastnn::runtime::findTensorRecord(Io, FNN_IO_OUTPUT, "skipped");
  if (!Model.LossScale != !Model.Skipped)
    fail("the model has only one of the outputs loss_scale and skipped of "
         "dynamic loss scaling; recompile it with this fastnnc");
  const std::vector<int64_t> &ImageShape = Model.Images.shape;
  if (ImageShape.empty() || Model.Labels.shape.size() != 1 ||
      Model.Labels.shape[0] != ImageShape[0])
    fail("the model's images " + shapeText(ImageShape) + " and labels " +
         shapeText(Model.Labels.shape) + " do not share a batch dimension");
  // The images' batch dimension is the compiled batch_size even when the
  // configuration does not list it.
  int64_t BatchSize = ImageShape[0];
  if (H.origin("batch_size") == "compiled configuration" &&
      H.getInt("batch_size") != BatchSize)
    fail("the model is inconsistent: compiled with batch_size=" +
         H.text("batch_size") + " but its images are " + shapeText(ImageShape));
  Status BatchStatus =
      H.applyCompiled("batch_size=" + std::to_string(BatchSize));
  if (!BatchStatus.ok())
    fail(BatchStatus.message());

  if (PrintConfig) {
    std::printf("%s", H.configText().c_str());
    return 0;
  }
  // Exporting is the chief's work; every worker evaluates its share.
  if (!isChief() && !ExportFile.empty())
    return 0;
  if (EvaluateOnly && !ExportFile.empty())
    fail("--eval and --export-onnx are separate runs; give one of them");
  if (EvaluateOnly)
    return evaluateLatest(H, outputDirectory(H));
  if (!ExportFile.empty())
    return exportLatest(H, outputDirectory(H), ExportFile);
  return train(H, Model);
}
