//===- Evaluate.cpp - The evaluation pass of train.bin --------------------===//

#include "Evaluate.h"
#include "Distributed.h"

#include "fastnn/runtime/ShapeText.h"
#include "fastnn/runtime/model.h"
#include "fastnn/trainer/ExactSum.h"
#include "fastnn/trainer/InputStaging.h"
#include "fastnn/trainer/TFRecordDataSource.h"

#include <chrono>
#include <cstdio>

namespace fastnn::trainer {

using runtime::shapeText;
using runtime::TensorRecord;

std::string evalLine(int64_t Step, const EvalResult &Result) {
  char Line[256];
  std::snprintf(Line, sizeof(Line),
                "eval: step=%lld samples=%lld top1=%.6f top5=%.6f loss=%.6f",
                static_cast<long long>(Step),
                static_cast<long long>(Result.Samples), Result.Top1,
                Result.Top5, Result.Loss);
  return Line;
}

Status Evaluator::create(fnn_device *Device, std::unique_ptr<Evaluator> &Out) {
  std::unique_ptr<Evaluator> E(new Evaluator());
  E->Device = Device;
  E->Io = runtime::readTensorRecords(fnn_eval_io, fnn_eval_io_names);
  E->State = runtime::readTensorRecords(fnn_eval_state, fnn_eval_state_names);
  const TensorRecord *Images =
      runtime::findTensorRecord(E->Io, FNN_IO_INPUT, "images");
  const TensorRecord *Labels =
      runtime::findTensorRecord(E->Io, FNN_IO_INPUT, "labels");
  if (!Images || !Labels || Labels->shape.size() != 1 ||
      Images->shape.empty() || Images->shape[0] != Labels->shape[0] ||
      (Labels->dtype != FNN_I64 && Labels->dtype != FNN_I32))
    return Status::error("the evaluation step has no images and labels "
                         "inputs of one batch; recompile the model with "
                         "this fastnnc");
  for (const char *Name : {"loss", "top1", "top5"}) {
    const TensorRecord *Output =
        runtime::findTensorRecord(E->Io, FNN_IO_OUTPUT, Name);
    if (!Output || Output->dtype != FNN_F32 ||
        Output->shape != std::vector<int64_t>{Labels->shape[0]})
      return Status::error(std::string("the evaluation step has no per-sample "
                                       "float output '") +
                           Name + "' " + shapeText(Labels->shape) +
                           "; recompile the model with this fastnnc");
  }
  E->Arena = static_cast<unsigned char *>(
      fnn_device_alloc(Device, static_cast<size_t>(fnn_eval_arena_bytes)));
  if (!E->Arena)
    return Status::error("cannot allocate the " +
                         std::to_string(fnn_eval_arena_bytes) +
                         "-byte evaluation arena");
  if (fnn_eval_init(Device, E->Arena) != 0)
    return Status::error(
        std::string("cannot initialise the evaluation step: ") +
        fnn_last_error());
  E->Initialised = true;
  Out = std::move(E);
  return Status::success();
}

Evaluator::~Evaluator() {
  if (Initialised)
    fnn_eval_release();
  if (Arena)
    fnn_device_free(Device, Arena);
}

Status Evaluator::load(const std::vector<StateTensor> &From,
                       const std::string &FromName) {
  RestoreReport Report;
  return restoreTensors(From, FromName, State,
                        runtime::ArenaAccess(Device, Arena),
                        RestoreMode::Evaluate, Report);
}

void Evaluator::shareChiefState(int64_t &Step) {
  int64_t Position = 0;
  shareState(State, runtime::ArenaAccess(Device, Arena), Step, Position);
}

namespace {

/// Whether this worker has none of the evaluation files: sharing them by
/// file, with fewer files than workers, the workers beyond them evaluate
/// nothing (by record every worker has its share).
Status hasNoEvalFiles(const Hparams &H, const InputShard &Shard, bool &None) {
  None = false;
  if (Shard.Count == 1 || H.getString("dataset_name") == "mock")
    return Status::success();
  std::vector<std::string> Files;
  if (Status S = listEvalFiles(H, Files); !S.ok())
    return S;
  bool ByRecord = false;
  if (Status S = shardsByRecord(H, Files, ByRecord); !S.ok())
    return S;
  None = !ByRecord && Shard.Rank >= static_cast<int64_t>(Files.size());
  return Status::success();
}

/// The job's sums: every worker's exact sums of the loss, top-1 and top-5
/// outputs and its sample count, added up in one int64 allreduce.
Status addUpWorkers(ExactSum (&Sums)[3], int64_t &Samples) {
  int64_t Words[3 * ExactSum::Words + 1];
  for (int I = 0; I < 3; ++I) {
    Sums[I].normalize();
    std::copy_n(Sums[I].words(), ExactSum::Words, Words + I * ExactSum::Words);
  }
  Words[3 * ExactSum::Words] = Samples;
  if (fnn_comm_allreduce_sum(Words, 3 * ExactSum::Words + 1, FNN_I64) != 0)
    return Status::error(
        workerPrefix() +
        "cannot add up the workers' evaluations: " + fnn_last_error());
  for (int I = 0; I < 3; ++I)
    std::copy_n(Words + I * ExactSum::Words, ExactSum::Words, Sums[I].words());
  Samples = Words[3 * ExactSum::Words];
  return Status::success();
}

} // namespace

Status Evaluator::run(const Hparams &H, EvalResult &Out,
                      std::string &Description) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point Start = Clock::now();
  Out = EvalResult();
  const TensorRecord &Images =
      *runtime::findTensorRecord(Io, FNN_IO_INPUT, "images");
  const TensorRecord &Labels =
      *runtime::findTensorRecord(Io, FNN_IO_INPUT, "labels");
  // Each worker evaluates its share of what one process evaluates (the
  // records p with p % K == rank, or the files i so with shard_by=file, or
  // the mock pool's batches so), and the
  // exact sums make the job's result that process's to the last bit.
  const InputShard Shard = trainingShard();
  bool Idle = false;
  if (Status S = hasNoEvalFiles(H, Shard, Idle); !S.ok())
    return S;
  std::unique_ptr<DataSource> Source;
  std::string Line;
  if (!Idle)
    if (Status S = createDataSource(H, Images.shape, InputSplit::Eval, 0,
                                    Source, Line, Shard);
        !S.ok())
      return S;
  if (Description.empty())
    Description = Line;

  const runtime::ArenaAccess Access(Device, Arena);
  InputStaging Input(Images, Labels, Access);
  auto output = [&](const char *Name) {
    return runtime::HostRegion(
        Access, *runtime::findTensorRecord(Io, FNN_IO_OUTPUT, Name));
  };
  runtime::HostRegion LossOut = output("loss"), Top1Out = output("top1"),
                      Top5Out = output("top5");
  const auto *Loss = reinterpret_cast<const float *>(LossOut.data());
  const auto *Top1 = reinterpret_cast<const float *>(Top1Out.data());
  const auto *Top5 = reinterpret_cast<const float *>(Top5Out.data());
  ExactSum Sums[3];
  for (; Source;) {
    int64_t Size = 0;
    if (Status S = Source->next(Input.images(), Input.labels(), Size); !S.ok())
      return S;
    if (Size == 0)
      break;
    Input.store(Size);
    fnn_eval_run(Arena);
    fnn_device_synchronize(Device);
    for (runtime::HostRegion *Out : {&LossOut, &Top1Out, &Top5Out})
      Out->load();
    // Only the batch's real samples count; padding fills the rest.
    for (int64_t I = 0; I < Size; ++I) {
      Sums[0].add(Loss[I]);
      Sums[1].add(Top1[I]);
      Sums[2].add(Top5[I]);
    }
    Out.Samples += Size;
  }
  if (Status S = addUpWorkers(Sums, Out.Samples); !S.ok())
    return S;
  if (Out.Samples == 0)
    return Status::error("the evaluation data is empty (" + Description + ")");
  Out.Loss = Sums[0].value() / static_cast<double>(Out.Samples);
  Out.Top1 = Sums[1].value() / static_cast<double>(Out.Samples);
  Out.Top5 = Sums[2].value() / static_cast<double>(Out.Samples);
  Out.Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
  return Status::success();
}

std::vector<std::pair<std::string, float>> evalScalars(const EvalResult &R) {
  return {{"loss", static_cast<float>(R.Loss)},
          {"top1_accuracy", static_cast<float>(R.Top1)},
          {"top5_accuracy", static_cast<float>(R.Top5)}};
}

EvalHook::EvalHook(const Hparams &H, std::string Dir,
                   const std::vector<runtime::TensorRecord> &State,
                   const runtime::ArenaAccess &Arena, EvalSummary &Latest,
                   ProgressLine &Progress)
    : PeriodicHook(H.getInt("eval_every_n_iters")), H(H), Dir(std::move(Dir)),
      State(State), Arena(Arena), Latest(Latest), Progress(Progress) {}

Status EvalHook::end(int64_t LastStep) {
  if (Status S = PeriodicHook::end(LastStep); !S.ok())
    return S;
  return stop(LastStep);
}

Status EvalHook::stop(int64_t) {
  if (Events)
    Progress.print(EventsOutput.note(Events->close()));
  return Status::success();
}

Status EvalHook::act(int64_t Step) {
  if (!Eval)
    if (Status S = Evaluator::create(Arena.device(), Eval); !S.ok())
      return S;
  std::vector<runtime::HostRegion> Regions;
  if (Status S =
          Eval->load(arenaTensors(State, Arena, Regions), "the training step");
      !S.ok())
    return S;
  // The workers' batch-norm statistics differ: all evaluate the chief's,
  // the ones its checkpoints hold.
  Eval->shareChiefState(Step);
  EvalResult Result;
  std::string Description;
  if (Status S = Eval->run(H, Result, Description); !S.ok())
    return S;
  Progress.erase();
  if (Latest.Step < 0)
    std::printf("train.bin: %s\n", Description.c_str());
  Latest = {Step, Result.Top1, Result.Top5, Result.Loss};
  std::printf("%s\n", evalLine(Step, Result).c_str());
  std::fflush(stdout);
  if (Dir.empty() || !isChief())
    return Status::success();
  if (!Events)
    Events = std::make_unique<EventWriter>(Dir + "/eval");
  Progress.print(EventsOutput.note(Events->scalars(Step, evalScalars(Result))));
  return Status::success();
}

} // namespace fastnn::trainer
