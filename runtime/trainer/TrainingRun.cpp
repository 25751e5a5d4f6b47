//===- TrainingRun.cpp - The training loop of train.bin -------------------===//

#include "TrainingRun.h"
#include "Distributed.h"
#include "TrainingStep.h"

#include "fastnn/runtime/ModelDevice.h"
#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/model.h"
#include "fastnn/trainer/Checkpoint.h"
#include "fastnn/trainer/DataSource.h"
#include "fastnn/trainer/EventWriter.h"
#include "fastnn/trainer/InitialWeights.h"
#include "fastnn/trainer/LearningRate.h"
#include "fastnn/trainer/OnnxInitializers.h"
#include "fastnn/trainer/StepHooks.h"
#include "fastnn/trainer/StopSignal.h"
#include "fastnn/trainer/TFRecordDataSource.h"
#include "fastnn/trainer/TrainingHooks.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <unistd.h>

namespace fastnn::trainer {

using runtime::shapeText;
using runtime::TensorRecord;

namespace fs = std::filesystem;

namespace {

std::string localPath(const std::string &Path) {
  return Path.rfind("file://", 0) == 0 ? Path.substr(7) : Path;
}

bool hasHook(const Hparams &H, const std::string &Hook) {
  std::string Hooks = "," + H.getString("hooks") + ",";
  Hooks.erase(std::remove(Hooks.begin(), Hooks.end(), ' '), Hooks.end());
  return Hooks.find("," + Hook + ",") != std::string::npos;
}

/// "run.txt:3: model_dir=/x" - where a key was set, for messages.
std::string where(const Hparams &H, const std::string &Key) {
  return H.origin(Key) + ": " + Key + "=" + H.text(Key);
}

void printModelStatistics(const std::vector<TensorRecord> &State) {
  static const char *const Roles[] = {"trainable", "statistic", "slot"};
  std::printf("# Model state\nFormat: <role> <name>, <shape>, <elements>\n");
  int64_t Trainable = 0, Total = 0;
  for (const TensorRecord &Record : State) {
    const char *Role =
        Record.kind >= 0 && Record.kind <= 2 ? Roles[Record.kind] : "other";
    std::printf("  %-9s %s, %s, %lld\n", Role, Record.name.c_str(),
                shapeText(Record.shape).c_str(),
                static_cast<long long>(Record.numElements()));
    Total += Record.numElements();
    if (Record.kind == FNN_STATE_TRAINABLE)
      Trainable += Record.numElements();
  }
  std::printf("Total trainable elements: %lld (all state: %lld)\n",
              static_cast<long long>(Trainable), static_cast<long long>(Total));
}

class TrainingRun {
public:
  TrainingRun(const Hparams &H, const ModelInterface &M)
      : H(H), M(M), BatchSize(M.Images.shape[0]) {}
  ~TrainingRun();
  int run();

private:
  void setUpOutput();
  void createModel();
  void restore();
  void resumeFrom(const Checkpoint &C, const std::string &Path);
  void finetune();
  void initFromOnnx();
  void createInput();
  void addHooks();
  /// Ends a run that a signal stopped after End.LastStep; the exit code.
  int stop(const LoopEnd &End);
  runtime::ArenaAccess arena() const { return {Device, Arena}; }

  const Hparams &H;
  const ModelInterface &M;
  const int64_t BatchSize;
  std::string OutputDir;

  fnn_device *Device = nullptr;
  unsigned char *Arena = nullptr;
  bool Initialised = false;

  std::unique_ptr<DataSource> Source;
  std::string SourceLine;
  std::unique_ptr<LearningRateSchedule> Schedule;
  int64_t TrainSteps = 0;

  /// The step the run starts after and the batches consumed by then.
  int64_t StartStep = 0, StartPosition = 0;
  CheckpointState LatestCheckpoint;
  EvalSummary LatestEval;
  // A progress bar only for a person watching; logs and pipes get lines.
  ProgressLine Progress{isatty(fileno(stdout)) != 0};
  StepHooks Hooks;
};

TrainingRun::~TrainingRun() {
  // The hooks' evaluation step lives on the device: it goes first.
  Hooks = StepHooks();
  if (Initialised)
    fnn_model_release();
  if (Arena)
    fnn_device_free(Device, Arena);
  if (Device)
    fnn_device_destroy(Device);
}

void TrainingRun::setUpOutput() {
  OutputDir = outputDirectory(H);
  if (OutputDir.empty()) {
    std::printf("train.bin: neither train_dir nor model_dir is set: no "
                "checkpoints, TensorBoard events or timelines are written\n");
    return;
  }
  std::error_code Ec;
  fs::create_directories(OutputDir, Ec);
  if (Ec)
    fail(where(H, H.isSet("train_dir") ? "train_dir" : "model_dir") +
         ": cannot create the directory: " + Ec.message());
  // The rest is the chief's: the other workers only write timelines here.
  if (!isChief())
    return;
  std::vector<std::string> Removed;
  if (Status S = removeIncompleteWrites(OutputDir, Removed); !S.ok())
    fail(S.message());
  for (const std::string &Path : Removed)
    std::printf("train.bin: removed %s, left by an interrupted write\n",
                Path.c_str());
}

void TrainingRun::createModel() {
  std::string Error;
  Device = runtime::createModelDevice(fnn_comm_local_rank(), Error);
  if (!Device)
    fail(Error);
  Arena = static_cast<unsigned char *>(
      fnn_device_alloc(Device, static_cast<size_t>(fnn_model_arena_bytes)));
  if (!Arena)
    fail("cannot allocate the " + std::to_string(fnn_model_arena_bytes) +
         "-byte arena");
  if (fnn_model_init(Device, Arena) != 0)
    fail(std::string("cannot initialise the model: ") + fnn_last_error());
  Initialised = true;
}

void TrainingRun::restore() {
  // The chief restores; shareState gives the other workers its state.
  if (!isChief())
    return;
  // An interrupted run continues, whatever the task: TensorFlow's estimators
  // too prefer the model directory's checkpoint to a warm start.
  if (!OutputDir.empty()) {
    Checkpoint Latest;
    std::string Path;
    bool Found = false;
    std::vector<std::string> Warnings;
    if (Status S =
            loadLatestCheckpoint(OutputDir, Latest, Path, Found, Warnings);
        !S.ok())
      fail(S.message());
    for (const std::string &Warning : Warnings)
      std::printf("train.bin: warning: %s\n", Warning.c_str());
    if (Found) {
      resumeFrom(Latest, Path);
      return;
    }
  }
  // Else the run starts from an ONNX model's weights, or from the initial
  // ones (embedded, or the weights file of --weights=external), which a
  // finetune overwrites where its checkpoint matches.
  if (H.isSet("init_from_onnx")) {
    initFromOnnx();
    return;
  }
  if (fnn_model_external_weights || H.isSet("weights_file"))
    if (Status S = loadWeightsFile(weightsFilePath(H.getString("weights_file")),
                                   M.State, arena(), "weights_file=FILE");
        !S.ok())
      fail(S.message());
  if (H.getString("task_type") == "finetune")
    finetune();
}

void TrainingRun::initFromOnnx() {
  const std::string Path = localPath(H.getString("init_from_onnx"));
  int64_t Restored = 0;
  std::string Warning;
  if (Status S =
          loadOnnxWeights(Path, "init_from_onnx=" + H.text("init_from_onnx"),
                          M.State, arena(), Restored, Warning);
      !S.ok())
    fail(H.origin("init_from_onnx") + ": " + S.message());
  std::printf("train.bin: starting from the weights of %s: %lld parameters "
              "and statistics; optimizer slots start afresh\n",
              Path.c_str(), static_cast<long long>(Restored));
  if (!Warning.empty())
    std::printf("train.bin: warning: %s\n", Warning.c_str());
}

void TrainingRun::resumeFrom(const Checkpoint &C, const std::string &Path) {
  RestoreReport Report;
  if (Status S = restoreTensors(C.Tensors, Path, M.State, arena(),
                                RestoreMode::Resume, Report);
      !S.ok())
    fail(S.message());
  StartStep = LatestCheckpoint.Step = C.Step;
  StartPosition = C.DataPosition;
  LatestCheckpoint.Path = Path;
  std::printf("train.bin: resuming %s at step %lld (input position: %lld "
              "batches)\n",
              Path.c_str(), static_cast<long long>(C.Step),
              static_cast<long long>(C.DataPosition));
  uint64_t Seed = static_cast<uint64_t>(H.getInt("seed"));
  if (C.Seed != Seed)
    std::printf("train.bin: warning: %s was written with seed=%llu, this run "
                "has seed=%llu (%s): the input after step %lld differs from "
                "the interrupted run's\n",
                Path.c_str(), static_cast<unsigned long long>(C.Seed),
                static_cast<unsigned long long>(Seed), H.origin("seed").c_str(),
                static_cast<long long>(C.Step));
}

void TrainingRun::finetune() {
  std::string Dir =
      H.isSet("model_dir") ? localPath(H.getString("model_dir")) : "";
  Checkpoint From;
  std::string Path;
  if (H.isSet("ckpt_file_name")) {
    std::string Name = H.getString("ckpt_file_name");
    Path = Dir.empty() || Name.front() == '/' ? Name : Dir + "/" + Name;
    if (Status S = readCheckpoint(Path, From); !S.ok())
      fail(where(H, "ckpt_file_name") + ": " + S.message());
  } else {
    bool Found = false;
    std::vector<std::string> Warnings;
    if (Status S = loadLatestCheckpoint(Dir, From, Path, Found, Warnings);
        !S.ok())
      fail(S.message());
    for (const std::string &Warning : Warnings)
      std::printf("train.bin: warning: %s\n", Warning.c_str());
    if (!Found)
      fail(where(H, "model_dir") +
           ": holds no checkpoint to finetune from; point model_dir at the "
           "train_dir of a training run, or name the file with "
           "ckpt_file_name");
  }
  RestoreReport Report;
  if (Status S = restoreTensors(From.Tensors, Path, M.State, arena(),
                                RestoreMode::Finetune, Report);
      !S.ok())
    fail(S.message());
  std::printf("train.bin: finetuning from %s (step %lld of its run): "
              "restored %lld parameters and statistics\n",
              Path.c_str(), static_cast<long long>(From.Step),
              static_cast<long long>(Report.Restored));
  for (const std::string &Skipped : Report.Skipped)
    std::printf("train.bin: finetune: skipped %s; it keeps its initial "
                "value\n",
                Skipped.c_str());
  for (const std::string &Missing : Report.Missing)
    std::printf("train.bin: finetune: '%s' is not in the checkpoint; it "
                "keeps its initial value\n",
                Missing.c_str());
  std::printf("train.bin: finetune: optimizer slots start afresh and the "
              "step from 0\n");
}

void TrainingRun::createInput() {
  if (Status S =
          createDataSource(H, M.Images.shape, InputSplit::Train, StartPosition,
                           Source, SourceLine, trainingShard());
      !S.ok())
    fail(S.message());

  // The run ends at stop_at_step (StopAtStepHook) or after num_epochs,
  // whichever comes first.
  int64_t SamplesPerEpoch = H.isSet("num_sample_per_epoch")
                                ? H.getInt("num_sample_per_epoch")
                                : Source->samplesPerEpoch();
  TrainSteps = -1;
  if (hasHook(H, "StopAtStepHook"))
    TrainSteps = H.getInt("stop_at_step");
  if (SamplesPerEpoch > 0) {
    int64_t EpochSteps = std::max<int64_t>(1, H.getInt("num_epochs") *
                                                  SamplesPerEpoch / BatchSize);
    TrainSteps = TrainSteps < 0 ? EpochSteps : std::min(TrainSteps, EpochSteps);
  }
  if (TrainSteps < 0)
    fail(H.origin("hooks") +
         ": hooks: without StopAtStepHook the run needs an epoch size "
         "(num_sample_per_epoch) to end");
  // A compiled loop runs whole: the epochs end the run at a loop boundary.
  const int64_t Loop = stepsPerCall(M);
  if (TrainSteps % Loop != 0) {
    std::printf("train.bin: the input lasts %lld steps; the run ends at step "
                "%lld, the last multiple of iterations_per_loop=%lld\n",
                static_cast<long long>(TrainSteps),
                static_cast<long long>(TrainSteps / Loop * Loop),
                static_cast<long long>(Loop));
    TrainSteps = TrainSteps / Loop * Loop;
  }

  LearningRateOptions RateOptions;
  if (Status S = LearningRateSchedule::fromHparams(H, Source->samplesPerEpoch(),
                                                   TrainSteps, RateOptions);
      !S.ok())
    fail(S.message());
  Schedule = std::make_unique<LearningRateSchedule>(RateOptions);
}

void TrainingRun::addHooks() {
  const bool Chief = isChief();
  const int64_t Loop = stepsPerCall(M);
  const int64_t ProfileEvery =
      !OutputDir.empty() && hasHook(H, "ProfilerHook") &&
              H.getInt("task_index") == H.getInt("profile_at_task")
          ? H.getInt("profile_every_n_iters")
          : 0;
  const int64_t Kind = fnn_device_default_kind();
  Hooks.add(std::make_unique<TraceHook>(
      OutputDir, ProfileEvery, Loop, H.getBool("log_device_placement"),
      "/job:" + H.getString("job_name") +
          "/replica:0/task:" + H.text("task_index") +
          "/device:" + runtime::deviceKindName(Kind) + ":" +
          std::to_string(
              runtime::modelDeviceIndex(Kind, fnn_comm_local_rank())),
      Progress));
  const LossScaleHook *LossScale = nullptr;
  if (M.Skipped) {
    auto Hook = std::make_unique<LossScaleHook>(Progress);
    LossScale = Hook.get();
    Hooks.add(std::move(Hook));
  }
  Hooks.add(std::make_unique<NanLossHook>());

  std::unique_ptr<EventWriter> Events;
  if (!OutputDir.empty() && Chief)
    Events = std::make_unique<EventWriter>(OutputDir);
  Hooks.add(std::make_unique<LoggingHook>(
      hasHook(H, "LoggingTensorHook") ? H.getInt("log_loss_every_n_iters") : 0,
      TrainSteps, BatchSize, StartStep + 1, std::move(Events), Progress));
  if (!OutputDir.empty() && Chief && hasHook(H, "CheckpointSaverHook"))
    Hooks.add(std::make_unique<CheckpointHook>(H, OutputDir, StartPosition,
                                               M.State, arena(),
                                               LatestCheckpoint, Progress));
  if (H.getInt("eval_every_n_iters") > 0)
    Hooks.add(std::make_unique<EvalHook>(H, OutputDir, M.State, arena(),
                                         LatestEval, Progress));
  Hooks.add(std::make_unique<SummaryHook>(
      BatchSize, StartStep, LossScale, LatestEval, LatestCheckpoint, Progress));
}

int TrainingRun::run() {
  setUpOutput();
  createModel();
  restore();
  shareState(M.State, arena(), StartStep, StartPosition);
  createInput();

  if (H.getBool("print_model_statistics"))
    printModelStatistics(M.State);
  std::printf("train.bin: %s\n", SourceLine.c_str());
  std::printf("train.bin: %lld steps of batch %lld; %s\n",
              static_cast<long long>(TrainSteps),
              static_cast<long long>(BatchSize), Schedule->describe().c_str());
  if (StartStep >= TrainSteps) {
    std::printf("train.bin: %s is at step %lld; the run ends at step %lld: "
                "nothing to train\n",
                LatestCheckpoint.Path.c_str(),
                static_cast<long long>(StartStep),
                static_cast<long long>(TrainSteps));
    return 0;
  }
  std::fflush(stdout);

  TrainingStep Step(M, arena(), *Source, *Schedule);
  if (const int64_t Loop = stepsPerCall(M); Loop > 1)
    std::printf("train.bin: iterations_per_loop=%lld: each call of the "
                "compiled step trains %lld steps; step lines, TensorBoard "
                "scalars, timelines, checkpoints and evaluations happen "
                "between calls (at loop boundaries)\n",
                static_cast<long long>(Loop), static_cast<long long>(Loop));
  addHooks();
  // From here on SIGTERM and SIGINT stop the run after the call in flight
  // (and a checkpoint); before, nothing is lost by dying at once.
  StopSignals Signals;
  LoopEnd End;
  if (Status S = runSteps(
          Step, Hooks, StartStep + 1, TrainSteps,
          [] { return agreeOnStop(StopSignals::received()); }, End);
      !S.ok())
    fail(S);
  if (End.StopSignal != 0)
    return stop(End);
  if (End.InputEnded) {
    Progress.erase();
    std::printf("train.bin: the input ended after %lld steps (num_epochs=%lld)"
                "\n",
                static_cast<long long>(End.LastStep),
                static_cast<long long>(H.getInt("num_epochs")));
  }
  Progress.erase();
  checkWorkersAgree(M.State, arena(), End.LastStep);
  if (Status S = Hooks.end(End.LastStep); !S.ok())
    fail(S);
  return 0;
}

int TrainingRun::stop(const LoopEnd &End) {
  if (Status S = Hooks.stop(End.LastStep); !S.ok())
    fail(S);
  Progress.erase();
  const std::string Saved =
      LatestCheckpoint.Step == End.LastStep
          ? "checkpoint " + LatestCheckpoint.Path +
                " written; resume with the same command"
          : "no checkpoint written (that needs train_dir and "
            "CheckpointSaverHook in hooks)";
  std::printf("train.bin: stopped by %s after step %lld; %s\n",
              stopSignalName(End.StopSignal),
              static_cast<long long>(End.LastStep), Saved.c_str());
  std::fflush(stdout);
  // The shell's convention for a process ended by a signal.
  return 128 + End.StopSignal;
}

} // namespace

std::string outputDirectory(const Hparams &H) {
  if (H.isSet("train_dir"))
    return localPath(H.getString("train_dir"));
  if (H.isSet("model_dir") && H.getString("task_type") == "pretrain")
    return localPath(H.getString("model_dir"));
  return "";
}

int train(const Hparams &H, const ModelInterface &Model) {
  TrainingRun Run(H, Model);
  return Run.run();
}

} // namespace fastnn::trainer
