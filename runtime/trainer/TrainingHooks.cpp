//===- TrainingHooks.cpp - The hooks of train.bin's loop ------------------===//

#include "fastnn/trainer/TrainingHooks.h"
#include "fastnn/trainer/Checkpoint.h"
#include "fastnn/trainer/Timeline.h"

#include "fastnn/runtime/abi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace fastnn::trainer {

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

//===----------------------------------------------------------------------===//
// ProgressLine
//===----------------------------------------------------------------------===//

void ProgressLine::draw(int64_t Step, int64_t Total, double Eta) {
  const int64_t Now = fnn_trace_now_ns();
  if (!Terminal || Now - LastDrawn <= 200'000'000)
    return;
  LastDrawn = Now;
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
  Shown = true;
}

void ProgressLine::erase() {
  if (!Shown)
    return;
  std::printf("\r\033[K");
  Shown = false;
}

void ProgressLine::print(const std::string &Line) {
  if (Line.empty())
    return;
  erase();
  std::printf("%s\n", Line.c_str());
  std::fflush(stdout);
}

//===----------------------------------------------------------------------===//
// LossScaleHook, NanLossHook
//===----------------------------------------------------------------------===//

Status LossScaleHook::afterStep(const StepResult &R) {
  if (!R.HasLossScale)
    return Status::success();
  if (R.Skipped != 0) {
    ++SkippedUpdates;
    Progress.erase();
    std::printf("train.bin: step %lld: the gradients overflowed (inf or "
                "NaN): update skipped, loss scale now %g\n",
                static_cast<long long>(R.Step), R.LossScale);
  } else if (LossScale != 0 && R.LossScale != LossScale) {
    Progress.erase();
    std::printf("train.bin: step %lld: loss scale now %g\n",
                static_cast<long long>(R.Step), R.LossScale);
  }
  LossScale = R.LossScale;
  return Status::success();
}

Status NanLossHook::afterStep(const StepResult &R) {
  if (std::isfinite(R.Loss))
    return Status::success();
  return Status::error(
      "step " + std::to_string(R.Step) + ": the loss is " +
      (std::isnan(R.Loss) ? "nan" : "infinite") + " at learning rate " +
      std::to_string(R.Rate) +
      "; training stopped (lower learning_rate, set max_gradient_norm or "
      "check the input)");
}

//===----------------------------------------------------------------------===//
// LoggingHook
//===----------------------------------------------------------------------===//

LoggingHook::LoggingHook(int64_t LogEvery, int64_t TrainSteps,
                         int64_t BatchSize, int64_t FirstStep,
                         std::unique_ptr<EventWriter> Events,
                         ProgressLine &Progress)
    : LogEvery(LogEvery), TrainSteps(TrainSteps), BatchSize(BatchSize),
      Events(std::move(Events)), Progress(Progress), Start(fnn_trace_now_ns()),
      WindowStart(Start) {
  if (this->Events)
    Progress.print(EventsOutput.note(this->Events->sessionStart(FirstStep)));
}

Status LoggingHook::afterStep(const StepResult &R) {
  ++Steps;
  ++WindowSteps;
  WindowWait += R.WaitSeconds;
  const int64_t Now = fnn_trace_now_ns();
  // The remaining steps at this run's mean step time so far.
  const double Eta = static_cast<double>(Now - Start) * 1e-9 / Steps *
                     static_cast<double>(TrainSteps - R.Step);
  if (LogEvery <= 0 || (R.Step % LogEvery != 0 && R.Step != TrainSteps)) {
    Progress.draw(R.Step, TrainSteps, Eta);
    return Status::success();
  }
  double Seconds = static_cast<double>(Now - WindowStart) * 1e-9;
  double ImagesPerSecond =
      Seconds > 0 ? WindowSteps * BatchSize / Seconds : 0.0;
  Progress.erase();
  std::printf("step %lld: loss=%.6f lr=%.6g top1=%.4f top5=%.4f "
              "images/s=%.1f data_wait=%.1f%% eta=%s\n",
              static_cast<long long>(R.Step), R.Loss, R.Rate, R.Top1, R.Top5,
              ImagesPerSecond, Seconds > 0 ? 100.0 * WindowWait / Seconds : 0.0,
              durationText(Eta).c_str());
  std::fflush(stdout);
  WindowStart = Now;
  WindowSteps = 0;
  WindowWait = 0;
  if (!Events)
    return Status::success();
  std::vector<std::pair<std::string, float>> Scalars = {
      {"loss", R.Loss},
      {"learning_rate", R.Rate},
      {"images_per_second", static_cast<float>(ImagesPerSecond)},
      {"top1_accuracy", R.Top1},
      {"top5_accuracy", R.Top5}};
  if (R.SkippedRecords >= 0)
    Scalars.push_back(
        {"data/corrupt_records_skipped", static_cast<float>(R.SkippedRecords)});
  Progress.print(EventsOutput.note(Events->scalars(R.Step, Scalars)));
  return Status::success();
}

Status LoggingHook::end(int64_t) {
  if (Events)
    Progress.print(EventsOutput.note(Events->close()));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// PeriodicHook, CheckpointHook
//===----------------------------------------------------------------------===//

Status PeriodicHook::afterStep(const StepResult &R) {
  ++Steps;
  if (Every > 0 && R.Step % Every == 0)
    return act(R.Step);
  return Status::success();
}

Status PeriodicHook::end(int64_t LastStep) {
  if (Steps > 0 && latestStep() != LastStep)
    return act(LastStep);
  return Status::success();
}

CheckpointHook::CheckpointHook(const Hparams &H, std::string Dir,
                               int64_t StartPosition,
                               const std::vector<runtime::TensorRecord> &State,
                               const runtime::ArenaAccess &Arena,
                               CheckpointState &Latest, ProgressLine &Progress)
    : PeriodicHook(H.getInt("save_checkpoints_steps")), H(H),
      Dir(std::move(Dir)), StartPosition(StartPosition), State(State),
      Arena(Arena), Latest(Latest), Progress(Progress) {}

Status CheckpointHook::act(int64_t Step) {
  Checkpoint C;
  C.Step = Step;
  C.DataPosition = StartPosition + steps();
  C.Seed = static_cast<uint64_t>(H.getInt("seed"));
  std::vector<runtime::HostRegion> Regions;
  C.Tensors = arenaTensors(State, Arena, Regions);
  std::vector<std::string> Removed;
  std::string Path;
  if (Status S = saveCheckpoint(Dir, C, H.getInt("keep_checkpoint_max"), Path,
                                Removed);
      !S.ok()) {
    if (!S.isIoError())
      return S;
    const std::string Resume = Latest.Step >= 0
                                   ? "resume " + Latest.Path + " (step " +
                                         std::to_string(Latest.Step) + ")"
                                   : "start again";
    return Status::ioError(
        S.message() + "; training stopped after step " + std::to_string(Step) +
        "; once the disk has room (or its fault is fixed), " + Resume +
        " with the same command");
  }
  Latest.Path = Path;
  Latest.Step = Step;
  Progress.erase();
  std::printf("train.bin: saved checkpoint %s (step %lld)\n",
              Latest.Path.c_str(), static_cast<long long>(Step));
  for (const std::string &Path : Removed)
    std::printf("train.bin: removed %s (keep_checkpoint_max=%s)\n",
                Path.c_str(), H.text("keep_checkpoint_max").c_str());
  std::fflush(stdout);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// TraceHook
//===----------------------------------------------------------------------===//

TraceHook::TraceHook(std::string Dir, int64_t ProfileEvery,
                     int64_t StepsPerCall, bool PrintPlacement,
                     std::string DeviceName, ProgressLine &Progress)
    : Dir(std::move(Dir)), ProfileEvery(ProfileEvery),
      StepsPerCall(StepsPerCall), PrintPlacement(PrintPlacement),
      DeviceName(std::move(DeviceName)), Progress(Progress) {}

Status TraceHook::beforeCall(int64_t First) {
  // A call is profiled when one of its steps is a multiple of ProfileEvery.
  Profile = ProfileEvery > 0 &&
            (First + StepsPerCall - 1) / ProfileEvery * ProfileEvery >= First;
  Tracing = Profile || PrintPlacement;
  if (Tracing)
    fnn_trace_enable(1);
  return Status::success();
}

Status TraceHook::afterCall(const CallSpan &Call) {
  if (!Tracing)
    return Status::success();
  std::vector<fnn_trace_span> Kernels = collectKernelSpans();
  fnn_trace_enable(0);
  Tracing = false;
  if (PrintPlacement) {
    std::set<std::string> Seen;
    for (const fnn_trace_span &Span : Kernels)
      if (Seen.insert(Span.name).second)
        std::printf("device placement: %s: %s\n", Span.name,
                    DeviceName.c_str());
    if (Seen.empty())
      std::printf("device placement: the step reported no kernels; it runs "
                  "on %s\n",
                  DeviceName.c_str());
    PrintPlacement = false;
  }
  if (!Profile)
    return Status::success();
  const int64_t Step = Call.FirstStep;
  std::vector<TimelineSpan> Spans = {
      {"step " + std::to_string(Step), "step", 0, Call.Start, Call.End},
      {"data wait", "input", 1, Call.Start, Call.WaitEnd}};
  for (const fnn_trace_span &Kernel : Kernels)
    Spans.push_back({Kernel.name, "kernel", 2, Kernel.start_ns, Kernel.end_ns});
  std::string Path = Dir + "/timeline-step-" + std::to_string(Step) + ".json";
  Status Written =
      writeChromeTrace(Path, "train.bin step " + std::to_string(Step),
                       {"train.bin", "input", "compiled step"}, Spans);
  Progress.print(Timelines.note(Written));
  if (Written.ok())
    Progress.print("train.bin: timeline of step " + std::to_string(Step) +
                   " (" + std::to_string(Kernels.size()) +
                   " kernel spans): " + Path);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// SummaryHook
//===----------------------------------------------------------------------===//

SummaryHook::SummaryHook(int64_t BatchSize, int64_t StartStep,
                         const LossScaleHook *LossScale,
                         const EvalSummary &Eval, const CheckpointState &Latest,
                         ProgressLine &Progress)
    : BatchSize(BatchSize), StartStep(StartStep), LossScale(LossScale),
      Eval(Eval), Latest(Latest), Progress(Progress), Start(fnn_trace_now_ns()),
      LastTime(Start) {}

Status SummaryHook::afterStep(const StepResult &R) {
  ++Steps;
  LossSum += R.Loss;
  WaitSeconds += R.WaitSeconds;
  Last = R;
  LastTime = fnn_trace_now_ns();
  return Status::success();
}

Status SummaryHook::end(int64_t LastStep) {
  const double Seconds = static_cast<double>(LastTime - Start) * 1e-9;
  const double ImagesPerSecond =
      Seconds > 0 ? Steps * BatchSize / Seconds : 0.0;
  Progress.erase();
  std::printf("train.bin: %lld steps in %.2f s, %.1f images/s\n",
              static_cast<long long>(Steps), Seconds, ImagesPerSecond);
  if (Steps == 0)
    return Status::success();
  // No "loss=" here: scripts count the step lines by it.
  std::printf("train.bin: summary: steps %lld-%lld; last step: loss %.6f, "
              "top1 %.4f, top5 %.4f; mean loss %.6f; %.1f images/s, data "
              "wait %.1f%%",
              static_cast<long long>(StartStep + 1),
              static_cast<long long>(LastStep), Last.Loss, Last.Top1, Last.Top5,
              LossSum / static_cast<double>(Steps), ImagesPerSecond,
              Seconds > 0 ? 100.0 * WaitSeconds / Seconds : 0.0);
  if (LossScale)
    std::printf("; %lld updates skipped on overflow, loss scale %g",
                static_cast<long long>(LossScale->skippedUpdates()),
                LossScale->lossScale());
  if (Last.SkippedRecords >= 0)
    std::printf("; %lld damaged records skipped by this process "
                "(skip_corrupt_records)",
                static_cast<long long>(Last.SkippedRecords));
  if (Eval.Step >= 0)
    std::printf("; eval at step %lld: top1 %.4f, top5 %.4f, loss %.6f",
                static_cast<long long>(Eval.Step), Eval.Top1, Eval.Top5,
                Eval.Loss);
  if (!Latest.Path.empty())
    std::printf("; checkpoint %s", Latest.Path.c_str());
  std::printf("\n");
  return Status::success();
}

} // namespace fastnn::trainer
