//===- TrainingRun.cpp - The training loop of train.bin -------------------===//

#include "TrainingRun.h"
#include "Distributed.h"
#include "InputStaging.h"
#include "LoopInput.h"

#include "fastnn/runtime/model.h"
#include "fastnn/trainer/Checkpoint.h"
#include "fastnn/trainer/DataSource.h"
#include "fastnn/trainer/EventWriter.h"
#include "fastnn/trainer/LearningRate.h"
#include "fastnn/trainer/TFRecordDataSource.h"
#include "fastnn/trainer/Timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <unistd.h>

namespace fastnn::trainer {

using runtime::TensorRecord;

namespace fs = std::filesystem;

std::string shapeText(const std::vector<int64_t> &Shape) {
  std::string Text = "[";
  for (size_t I = 0; I < Shape.size(); ++I)
    Text += (I ? ", " : "") + std::to_string(Shape[I]);
  return Text + "]";
}

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

/// Training steps one fnn_model_run performs: iterations_per_loop, the
/// length of the compiled step's learning-rate input (one rate per step).
int64_t stepsPerCall(const ModelInterface &M) {
  return M.Rate.shape.empty() ? 1 : M.Rate.shape[0];
}

/// The spans the compiled step recorded since tracing was turned on.
/// "1h02m", "3m07s" or "42s".
std::string durationText(double Seconds) {
  auto Total = static_cast<long long>(std::llround(std::max(Seconds, 0.0)));
  char Text[32];
  if (Total >= 3600)
    std::snprintf(Text, sizeof(Text), "%lldh%02lldm", Total / 3600,
                  Total / 60 % 60);
  else if (Total >= 60)
    std::snprintf(Text, sizeof(Text), "%lldm%02llds", Total / 60, Total % 60);
  else
    std::snprintf(Text, sizeof(Text), "%llds", Total);
  return Text;
}

/// One terminal line, redrawn in place: "[=====>    ] 312/937 eta 1m05s".
void drawProgress(int64_t Step, int64_t Total, double Eta) {
  constexpr int Width = 30;
  int Filled = static_cast<int>(Width * Step / std::max<int64_t>(Total, 1));
  std::string Bar(static_cast<size_t>(Filled), '=');
  if (Filled < Width)
    Bar += '>';
  Bar.resize(Width, ' ');
  std::printf("\r[%s] %lld/%lld eta %s  ", Bar.c_str(),
              static_cast<long long>(Step), static_cast<long long>(Total),
              durationText(Eta).c_str());
  std::fflush(stdout);
}

std::vector<fnn_trace_span> collectKernelSpans() {
  std::vector<fnn_trace_span> Spans;
  fnn_trace_span Buffer[1024];
  for (;;) {
    int64_t N = fnn_trace_collect(Buffer, 1024);
    Spans.insert(Spans.end(), Buffer, Buffer + N);
    if (N < 1024)
      return Spans;
  }
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
  void createInput();
  void printPlacement(const std::vector<fnn_trace_span> &Spans);
  void writeTimeline(int64_t Step, int64_t StepStart, int64_t WaitEnd,
                     int64_t StepEnd,
                     const std::vector<fnn_trace_span> &Kernels);
  void save(int64_t Step);
  void evaluate(int64_t Step);
  void reportLossScale(int64_t Step, int64_t At);
  void printSummary(double Seconds);

  const Hparams &H;
  const ModelInterface &M;
  const int64_t BatchSize;
  std::string OutputDir;

  fnn_device *Device = nullptr;
  unsigned char *Arena = nullptr;
  bool Initialised = false;
  std::unique_ptr<Evaluator> Eval;
  std::unique_ptr<EventWriter> Events, EvalEvents;

  std::unique_ptr<DataSource> Source;
  std::string SourceLine;
  std::unique_ptr<LearningRateSchedule> Schedule;
  int64_t TrainSteps = 0;

  /// The step the run starts after and the batches consumed by then.
  int64_t StartStep = 0, StartPosition = 0;
  int64_t LastStep = 0, LastSaved = -1, LastEvaluated = -1;
  std::string LastCheckpoint;
  EvalResult LastEval;

  // Metrics of this process's steps, for the summary.
  int64_t Steps = 0;
  double LossSum = 0, WaitSeconds = 0;
  float LastLoss = 0, LastTop1 = 0, LastTop5 = 0;
  // Dynamic loss scaling (models with "loss_scale" and "skipped" outputs).
  float LossScale = 0;
  int64_t SkippedUpdates = 0;
};

TrainingRun::~TrainingRun() {
  Eval.reset();
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
  Device = fnn_device_create(FNN_DEVICE_CPU, 0);
  if (!Device)
    fail(std::string("cannot create the CPU device: ") + fnn_last_error());
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
  if (H.getString("task_type") == "finetune")
    finetune();
}

void TrainingRun::resumeFrom(const Checkpoint &C, const std::string &Path) {
  RestoreReport Report;
  if (Status S = restoreTensors(C.Tensors, Path, M.State, Arena,
                                RestoreMode::Resume, Report);
      !S.ok())
    fail(S.message());
  StartStep = LastStep = LastSaved = C.Step;
  StartPosition = C.DataPosition;
  LastCheckpoint = Path;
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
  if (Status S = restoreTensors(From.Tensors, Path, M.State, Arena,
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

void TrainingRun::printPlacement(const std::vector<fnn_trace_span> &Spans) {
  std::string Device = "/job:" + H.getString("job_name") +
                       "/replica:0/task:" + H.text("task_index") +
                       "/device:CPU:0";
  std::set<std::string> Seen;
  for (const fnn_trace_span &Span : Spans)
    if (Seen.insert(Span.name).second)
      std::printf("device placement: %s: %s\n", Span.name, Device.c_str());
  if (Seen.empty())
    std::printf("device placement: the step reported no kernels; it runs "
                "on %s\n",
                Device.c_str());
}

void TrainingRun::writeTimeline(int64_t Step, int64_t StepStart,
                                int64_t WaitEnd, int64_t StepEnd,
                                const std::vector<fnn_trace_span> &Kernels) {
  std::vector<TimelineSpan> Spans = {
      {"step " + std::to_string(Step), "step", 0, StepStart, StepEnd},
      {"data wait", "input", 1, StepStart, WaitEnd}};
  for (const fnn_trace_span &Kernel : Kernels)
    Spans.push_back({Kernel.name, "kernel", 2, Kernel.start_ns, Kernel.end_ns});
  std::string Path =
      OutputDir + "/timeline-step-" + std::to_string(Step) + ".json";
  if (Status S =
          writeChromeTrace(Path, "train.bin step " + std::to_string(Step),
                           {"train.bin", "input", "compiled step"}, Spans);
      !S.ok())
    fail(S.message());
  std::printf("train.bin: timeline of step %lld (%zu kernel spans): %s\n",
              static_cast<long long>(Step), Kernels.size(), Path.c_str());
}

void TrainingRun::save(int64_t Step) {
  Checkpoint C;
  C.Step = Step;
  C.DataPosition = StartPosition + Steps;
  C.Seed = static_cast<uint64_t>(H.getInt("seed"));
  C.Tensors = arenaTensors(M.State, Arena);
  std::vector<std::string> Removed;
  if (Status S = saveCheckpoint(OutputDir, C, H.getInt("keep_checkpoint_max"),
                                LastCheckpoint, Removed);
      !S.ok())
    fail(S.message());
  LastSaved = Step;
  std::printf("train.bin: saved checkpoint %s (step %lld)\n",
              LastCheckpoint.c_str(), static_cast<long long>(Step));
  for (const std::string &Path : Removed)
    std::printf("train.bin: removed %s (keep_checkpoint_max=%s)\n",
                Path.c_str(), H.text("keep_checkpoint_max").c_str());
  std::fflush(stdout);
}

void TrainingRun::evaluate(int64_t Step) {
  if (!Eval)
    if (Status S = Evaluator::create(Device, Eval); !S.ok())
      fail(S.message());
  if (Status S = Eval->load(arenaTensors(M.State, Arena), "the training step");
      !S.ok())
    fail(S.message());
  std::string Description;
  if (Status S = Eval->run(H, LastEval, Description); !S.ok())
    fail(S.message());
  if (LastEvaluated < 0)
    std::printf("train.bin: %s\n", Description.c_str());
  LastEvaluated = Step;
  std::printf("%s\n", evalLine(Step, LastEval).c_str());
  std::fflush(stdout);
  if (OutputDir.empty())
    return;
  if (!EvalEvents)
    if (Status S = EventWriter::open(OutputDir + "/eval", EvalEvents); !S.ok())
      fail(S.message());
  if (Status S = EvalEvents->scalars(Step, evalScalars(LastEval)); !S.ok())
    fail(S.message());
}

/// A line for every change of the dynamic loss scale: halved with the
/// update skipped after an overflow, doubled after a run of finite steps.
void TrainingRun::reportLossScale(int64_t Step, int64_t At) {
  float Skipped, Scale;
  std::memcpy(&Skipped, Arena + M.Skipped->offset + At, sizeof(Skipped));
  std::memcpy(&Scale, Arena + M.LossScale->offset + At, sizeof(Scale));
  if (Skipped != 0) {
    ++SkippedUpdates;
    std::printf("train.bin: step %lld: the gradients overflowed (inf or "
                "NaN): update skipped, loss scale now %g\n",
                static_cast<long long>(Step), Scale);
  } else if (LossScale != 0 && Scale != LossScale) {
    std::printf("train.bin: step %lld: loss scale now %g\n",
                static_cast<long long>(Step), Scale);
  }
  LossScale = Scale;
}

void TrainingRun::printSummary(double Seconds) {
  std::printf("train.bin: %lld steps in %.2f s, %.1f images/s\n",
              static_cast<long long>(Steps), Seconds,
              Seconds > 0 ? Steps * BatchSize / Seconds : 0.0);
  if (Steps == 0)
    return;
  // No "loss=" here: scripts count the step lines by it.
  std::printf("train.bin: summary: steps %lld-%lld; last step: loss %.6f, "
              "top1 %.4f, top5 %.4f; mean loss %.6f; %.1f images/s, data "
              "wait %.1f%%",
              static_cast<long long>(StartStep + 1),
              static_cast<long long>(LastStep), LastLoss, LastTop1, LastTop5,
              LossSum / static_cast<double>(Steps),
              Seconds > 0 ? Steps * BatchSize / Seconds : 0.0,
              Seconds > 0 ? 100.0 * WaitSeconds / Seconds : 0.0);
  if (M.Skipped)
    std::printf("; %lld updates skipped on overflow, loss scale %g",
                static_cast<long long>(SkippedUpdates), LossScale);
  if (LastEvaluated >= 0)
    std::printf("; eval at step %lld: top1 %.4f, top5 %.4f, loss %.6f",
                static_cast<long long>(LastEvaluated), LastEval.Top1,
                LastEval.Top5, LastEval.Loss);
  if (!LastCheckpoint.empty())
    std::printf("; checkpoint %s", LastCheckpoint.c_str());
  std::printf("\n");
}

int TrainingRun::run() {
  setUpOutput();
  createModel();
  restore();
  shareState(M.State, Arena, StartStep, StartPosition);
  LastStep = StartStep;
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
                LastCheckpoint.c_str(), static_cast<long long>(StartStep),
                static_cast<long long>(TrainSteps));
    return 0;
  }
  std::fflush(stdout);

  if (!OutputDir.empty() && isChief()) {
    if (Status S = EventWriter::open(OutputDir, Events); !S.ok())
      fail(S.message());
    if (Status S = Events->sessionStart(StartStep + 1); !S.ok())
      fail(S.message());
  }
  const int64_t LogEvery =
      hasHook(H, "LoggingTensorHook") ? H.getInt("log_loss_every_n_iters") : 0;
  const int64_t SaveEvery = H.getInt("save_checkpoints_steps");
  const bool Saving =
      !OutputDir.empty() && isChief() && hasHook(H, "CheckpointSaverHook");
  const int64_t ProfileEvery =
      !OutputDir.empty() && hasHook(H, "ProfilerHook") &&
              H.getInt("task_index") == H.getInt("profile_at_task")
          ? H.getInt("profile_every_n_iters")
          : 0;
  const int64_t EvalEvery = isChief() ? H.getInt("eval_every_n_iters") : 0;
  bool PrintPlacement = H.getBool("log_device_placement");
  // A progress bar only for a person watching; logs and pipes get lines.
  const bool Terminal = isatty(fileno(stdout)) != 0;
  int64_t LastDrawn = 0;

  InputStaging Input(M.Images, M.Labels, Arena);
  // iterations_per_loop > 1: one call runs Loop steps, fetching their
  // batches itself; the trainer acts between calls.
  const int64_t Loop = stepsPerCall(M);
  std::unique_ptr<LoopInput> Sunk;
  if (Loop > 1) {
    Sunk = std::make_unique<LoopInput>(*Source, Input);
    std::printf("train.bin: iterations_per_loop=%lld: each call of the "
                "compiled step trains %lld steps; step lines, TensorBoard "
                "scalars, timelines, checkpoints and evaluations happen "
                "between calls (at loop boundaries)\n",
                static_cast<long long>(Loop), static_cast<long long>(Loop));
  }
  const int64_t Start = fnn_trace_now_ns();
  int64_t WindowStart = Start, WindowSteps = 0;
  // Time spent waiting for (and copying) batches: the share of the step
  // time that a faster input pipeline would win back.
  double WindowWait = 0;
  bool EndOfData = false;
  for (int64_t Step = StartStep + 1; Step <= TrainSteps; ++Step) {
    // A step's place in its loop; the calls happen at place 0, the other
    // steps of a loop only read their results.
    const int64_t InLoop = (Step - StartStep - 1) % Loop;
    const bool Profile =
        ProfileEvery > 0 && InLoop == 0 &&
        (Step + Loop - 1) / ProfileEvery * ProfileEvery >= Step;
    const bool Trace = InLoop == 0 && (Profile || PrintPlacement);
    if (Trace)
      fnn_trace_enable(1);
    const int64_t StepStart = fnn_trace_now_ns();
    int64_t WaitEnd = StepStart;
    const float Rate = static_cast<float>(Schedule->at(Step));
    if (Loop == 1) {
      int64_t Size = 0;
      Status S = Source->next(Input.images(), Input.labels(), Size);
      WaitEnd = fnn_trace_now_ns();
      WindowWait += static_cast<double>(WaitEnd - StepStart) * 1e-9;
      if (!S.ok())
        fail(S.message());
      if (Size == 0) {
        endOfInput(Step);
        EndOfData = true;
        break;
      }
      Input.store(Size);
      std::memcpy(Arena + M.Rate.offset, &Rate, sizeof(Rate));
    } else if (InLoop == 0) {
      std::vector<float> Rates(static_cast<size_t>(Loop));
      for (int64_t I = 0; I < Loop; ++I)
        Rates[I] = static_cast<float>(Schedule->at(Step + I));
      std::memcpy(Arena + M.Rate.offset, Rates.data(),
                  Rates.size() * sizeof(float));
    }
    if (InLoop == 0) {
      std::memcpy(Arena + M.Step.offset, &Step, sizeof(Step));
      fnn_model_run(Arena);
      fnn_device_synchronize(Device);
    }
    if (Sunk)
      WindowWait += Sunk->takeWaitSeconds();
    const int64_t StepEnd = fnn_trace_now_ns();
    if (Trace) {
      std::vector<fnn_trace_span> Kernels = collectKernelSpans();
      fnn_trace_enable(0);
      if (PrintPlacement)
        printPlacement(Kernels);
      PrintPlacement = false;
      if (Profile)
        writeTimeline(Step, StepStart, WaitEnd, StepEnd, Kernels);
    }
    ++Steps;
    ++WindowSteps;
    LastStep = Step;

    // The step's results: the InLoop-th of each output.
    float Loss, Top1, Top5;
    const int64_t At = InLoop * static_cast<int64_t>(sizeof(float));
    std::memcpy(&Loss, Arena + M.Loss.offset + At, sizeof(Loss));
    std::memcpy(&Top1, Arena + M.Top1.offset + At, sizeof(Top1));
    std::memcpy(&Top5, Arena + M.Top5.offset + At, sizeof(Top5));
    if (M.Skipped)
      reportLossScale(Step, At);
    if (!std::isfinite(Loss))
      fail("step " + std::to_string(Step) + ": the loss is " +
           (std::isnan(Loss) ? "nan" : "infinite") + " at learning rate " +
           std::to_string(Rate) +
           "; training stopped (lower learning_rate, set max_gradient_norm "
           "or check the input)");
    LossSum += Loss;
    LastLoss = Loss;
    LastTop1 = Top1;
    LastTop5 = Top5;
    const int64_t Now = fnn_trace_now_ns();
    // The remaining steps at this run's mean step time so far.
    const double Eta = static_cast<double>(Now - Start) * 1e-9 / Steps *
                       static_cast<double>(TrainSteps - Step);
    const bool Log =
        LogEvery > 0 && (Step % LogEvery == 0 || Step == TrainSteps);
    if (Terminal && !Log && Now - LastDrawn > 200'000'000) {
      drawProgress(Step, TrainSteps, Eta);
      LastDrawn = Now;
    }
    if (Log) {
      double Seconds = static_cast<double>(Now - WindowStart) * 1e-9;
      double ImagesPerSecond =
          Seconds > 0 ? WindowSteps * BatchSize / Seconds : 0.0;
      std::printf("%sstep %lld: loss=%.6f lr=%.6g top1=%.4f top5=%.4f "
                  "images/s=%.1f data_wait=%.1f%% eta=%s\n",
                  Terminal ? "\r\033[K" : "", static_cast<long long>(Step),
                  Loss, Rate, Top1, Top5, ImagesPerSecond,
                  Seconds > 0 ? 100.0 * WindowWait / Seconds : 0.0,
                  durationText(Eta).c_str());
      std::fflush(stdout);
      if (Events)
        if (Status E = Events->scalars(
                Step,
                {{"loss", Loss},
                 {"learning_rate", Rate},
                 {"images_per_second", static_cast<float>(ImagesPerSecond)},
                 {"top1_accuracy", Top1},
                 {"top5_accuracy", Top5}});
            !E.ok())
          fail(E.message());
      WindowStart = Now;
      WindowSteps = 0;
      WaitSeconds += WindowWait;
      WindowWait = 0;
    }
    const bool SaveNow = Saving && SaveEvery > 0 && Step % SaveEvery == 0;
    const bool EvaluateNow = EvalEvery > 0 && Step % EvalEvery == 0;
    if (Terminal && (SaveNow || EvaluateNow || Step == TrainSteps))
      std::printf("\r\033[K");
    if (SaveNow)
      save(Step);
    if (EvaluateNow)
      evaluate(Step);
  }
  WaitSeconds += WindowWait;
  double Seconds = static_cast<double>(fnn_trace_now_ns() - Start) * 1e-9;
  if (EndOfData)
    std::printf("train.bin: the input ended after %lld steps (num_epochs=%lld)"
                "\n",
                static_cast<long long>(LastStep),
                static_cast<long long>(H.getInt("num_epochs")));
  if (Saving && Steps > 0 && LastSaved != LastStep)
    save(LastStep);
  if (EvalEvery > 0 && Steps > 0 && LastEvaluated != LastStep)
    evaluate(LastStep);
  printSummary(Seconds);
  if (Events)
    if (Status S = Events->close(); !S.ok())
      fail(S.message());
  if (EvalEvents)
    if (Status S = EvalEvents->close(); !S.ok())
      fail(S.message());
  return 0;
}

} // namespace

std::string outputDirectory(const Hparams &H) {
  if (H.isSet("train_dir"))
    return localPath(H.getString("train_dir"));
  if (H.isSet("model_dir") && H.getString("task_type") == "pretrain")
    return localPath(H.getString("model_dir"));
  return "";
}

std::vector<std::pair<std::string, float>> evalScalars(const EvalResult &R) {
  return {{"loss", static_cast<float>(R.Loss)},
          {"top1_accuracy", static_cast<float>(R.Top1)},
          {"top5_accuracy", static_cast<float>(R.Top5)}};
}

int train(const Hparams &H, const ModelInterface &Model) {
  TrainingRun Run(H, Model);
  return Run.run();
}

} // namespace fastnn::trainer
