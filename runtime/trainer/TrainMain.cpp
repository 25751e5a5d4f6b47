//===- TrainMain.cpp - main() of train.bin --------------------------------===//
//
// train.bin [--hparams FILE] [--key=value]... [--help] [--print-config]
//
// Runs a model compiled by fastnnc for training: each fnn_model_run is one
// step (forward, backward, optimizer update) on the arena's "images",
// "labels", "learning_rate" and "step" inputs, giving "loss", "top1" and
// "top5". The hyperparameters come from the file, the flags (which win) and
// the compiled configuration, which they may not contradict.
//
//===----------------------------------------------------------------------===//

#include "fastnn/runtime/ModelTables.h"
#include "fastnn/runtime/model.h"
#include "fastnn/trainer/DataSource.h"
#include "fastnn/trainer/Hparams.h"
#include "fastnn/trainer/LearningRate.h"
#include "fastnn/trainer/TFRecordDataSource.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace fastnn::trainer;
using fastnn::runtime::TensorRecord;

/// Prints every line of Message as its own error line and exits with 1.
[[noreturn]] void fail(const std::string &Message) {
  std::stringstream Lines(Message);
  std::string Line;
  while (std::getline(Lines, Line))
    std::fprintf(stderr, "train.bin: error: %s\n", Line.c_str());
  std::exit(1);
}

std::string shapeText(const std::vector<int64_t> &Shape) {
  std::string Text = "[";
  for (size_t I = 0; I < Shape.size(); ++I)
    Text += (I ? ", " : "") + std::to_string(Shape[I]);
  return Text + "]";
}

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

/// float to IEEE half, rounding to nearest even.
uint16_t toHalf(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  uint32_t Sign = (Bits >> 16) & 0x8000u;
  int32_t Exponent = static_cast<int32_t>((Bits >> 23) & 0xffu) - 127 + 15;
  uint32_t Mantissa = Bits & 0x7fffffu;
  if (Exponent >= 31)
    return static_cast<uint16_t>(Sign | 0x7c00u);
  if (Exponent <= 0) {
    if (Exponent < -10)
      return static_cast<uint16_t>(Sign);
    Mantissa |= 0x800000u;
    uint32_t Shift = static_cast<uint32_t>(14 - Exponent);
    uint32_t Half = Mantissa >> Shift;
    uint32_t Rest = Mantissa & ((1u << Shift) - 1);
    uint32_t Midpoint = 1u << (Shift - 1);
    if (Rest > Midpoint || (Rest == Midpoint && (Half & 1u)))
      ++Half;
    return static_cast<uint16_t>(Sign | Half);
  }
  uint32_t Half =
      Sign | (static_cast<uint32_t>(Exponent) << 10) | (Mantissa >> 13);
  uint32_t Rest = Mantissa & 0x1fffu;
  // A carry out of the mantissa correctly bumps the exponent.
  if (Rest > 0x1000u || (Rest == 0x1000u && (Half & 1u)))
    ++Half;
  return static_cast<uint16_t>(Half);
}

/// float to bfloat16, rounding to nearest even.
uint16_t toBfloat16(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  Bits += 0x7fffu + ((Bits >> 16) & 1u);
  return static_cast<uint16_t>(Bits >> 16);
}

/// Converts a batch that the source could not write into the arena
/// directly (half-precision images, int32 labels) into the element types of
/// the model's inputs.
void storeBatch(const TensorRecord &ImagesRecord,
                const TensorRecord &LabelsRecord, const float *Images,
                const int64_t *Labels, unsigned char *Arena) {
  unsigned char *ImagesOut = Arena + ImagesRecord.offset;
  if (ImagesRecord.dtype != FNN_F32) {
    int64_t N = ImagesRecord.numElements();
    auto *Out = reinterpret_cast<uint16_t *>(ImagesOut);
    for (int64_t I = 0; I < N; ++I)
      Out[I] = ImagesRecord.dtype == FNN_F16 ? toHalf(Images[I])
                                             : toBfloat16(Images[I]);
  }
  unsigned char *LabelsOut = Arena + LabelsRecord.offset;
  int64_t Batch = LabelsRecord.numElements();
  if (LabelsRecord.dtype != FNN_I64) {
    auto *Out = reinterpret_cast<int32_t *>(LabelsOut);
    for (int64_t I = 0; I < Batch; ++I)
      Out[I] = static_cast<int32_t>(Labels[I]);
  }
}

void printUsage() {
  std::printf(
      "usage: train.bin [--hparams FILE] [--key=value]... [--help] "
      "[--print-config]\n\n"
      "Trains the compiled model. Hyperparameters come from FILE (key=value "
      "lines,\nblank lines and # comments) and from --key=value flags, which "
      "override the\nfile. --print-config prints the effective "
      "configuration and exits.\n\n");
  std::printf("%s", hparamsHelp().c_str());
  std::string Compiled = fnn_model_config;
  if (!Compiled.empty())
    std::printf("\nThis train.bin was compiled with:\n%s%s", Compiled.c_str(),
                Compiled.back() == '\n' ? "" : "\n");
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

bool hasHook(const Hparams &H, const std::string &Hook) {
  std::string Hooks = "," + H.getString("hooks") + ",";
  Hooks.erase(std::remove(Hooks.begin(), Hooks.end(), ' '), Hooks.end());
  return Hooks.find("," + Hook + ",") != std::string::npos;
}

} // namespace

int main(int argc, char **argv) {
  std::string HparamsFile;
  std::vector<std::string> Flags;
  bool PrintConfig = false;
  for (int I = 1; I < argc; ++I) {
    std::string Arg = argv[I];
    if (Arg == "--help" || Arg == "-h") {
      printUsage();
      return 0;
    }
    if (Arg == "--print-config") {
      PrintConfig = true;
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
  if (!Errors.empty())
    fail(Errors);

  std::vector<TensorRecord> Io =
      fastnn::runtime::readTensorRecords(fnn_model_io, fnn_model_io_names);
  std::vector<TensorRecord> State = fastnn::runtime::readTensorRecords(
      fnn_model_state, fnn_model_state_names);
  const TensorRecord &ImagesIn =
      findTensor(Io, FNN_IO_INPUT, "images", {FNN_F32, FNN_F16, FNN_BF16});
  const TensorRecord &LabelsIn =
      findTensor(Io, FNN_IO_INPUT, "labels", {FNN_I64, FNN_I32});
  const TensorRecord &RateIn =
      findTensor(Io, FNN_IO_INPUT, "learning_rate", {FNN_F32});
  const TensorRecord &StepIn = findTensor(Io, FNN_IO_INPUT, "step", {FNN_I64});
  const TensorRecord &LossOut =
      findTensor(Io, FNN_IO_OUTPUT, "loss", {FNN_F32});
  const TensorRecord &Top1Out =
      findTensor(Io, FNN_IO_OUTPUT, "top1", {FNN_F32});
  const TensorRecord &Top5Out =
      findTensor(Io, FNN_IO_OUTPUT, "top5", {FNN_F32});
  if (ImagesIn.shape.empty() || LabelsIn.shape.size() != 1 ||
      LabelsIn.shape[0] != ImagesIn.shape[0])
    fail("the model's images " + shapeText(ImagesIn.shape) + " and labels " +
         shapeText(LabelsIn.shape) + " do not share a batch dimension");
  // The images' batch dimension is the compiled batch_size even when the
  // configuration does not list it.
  int64_t BatchSize = ImagesIn.shape[0];
  if (H.origin("batch_size") == "compiled configuration" &&
      H.getInt("batch_size") != BatchSize)
    fail("the model is inconsistent: compiled with batch_size=" +
         H.text("batch_size") + " but its images are " +
         shapeText(ImagesIn.shape));
  Status BatchStatus =
      H.applyCompiled("batch_size=" + std::to_string(BatchSize));
  if (!BatchStatus.ok())
    fail(BatchStatus.message());

  if (PrintConfig) {
    std::printf("%s", H.configText().c_str());
    return 0;
  }
  if (H.getString("task_type") != "pretrain")
    fail(H.origin("task_type") + ": task_type=" + H.getString("task_type") +
         ": this trainer cannot restore checkpoints yet; use pretrain");

  int64_t SampleElements = ImagesIn.numElements() / BatchSize;
  std::unique_ptr<DataSource> Source;
  std::string SourceLine = "mock data";
  if (H.getString("dataset_name") == "mock") {
    // num_sample_per_epoch sizes the mock dataset (one batch of it is the
    // fixed batch of an overfitting check); otherwise a default pool.
    int64_t PoolBatches =
        H.isSet("num_sample_per_epoch")
            ? std::max<int64_t>(1, H.getInt("num_sample_per_epoch") / BatchSize)
            : MockDataSource::DefaultPoolBatches;
    Source = std::make_unique<MockDataSource>(
        BatchSize, SampleElements, H.getInt("num_classes"),
        static_cast<uint64_t>(H.getInt("seed")), PoolBatches);
  } else {
    std::unique_ptr<TFRecordDataSource> Records;
    Status SourceStatus =
        TFRecordDataSource::create(H, ImagesIn.shape, Records);
    if (!SourceStatus.ok())
      fail(SourceStatus.message());
    SourceLine = Records->describe();
    Source = std::move(Records);
  }

  // The run ends at stop_at_step (StopAtStepHook) or after num_epochs,
  // whichever comes first.
  int64_t SamplesPerEpoch = H.isSet("num_sample_per_epoch")
                                ? H.getInt("num_sample_per_epoch")
                                : Source->samplesPerEpoch();
  int64_t TrainSteps = -1;
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

  LearningRateOptions RateOptions;
  Status RateStatus = LearningRateSchedule::fromHparams(
      H, Source->samplesPerEpoch(), TrainSteps, RateOptions);
  if (!RateStatus.ok())
    fail(RateStatus.message());
  LearningRateSchedule Schedule(RateOptions);

  if (H.getBool("print_model_statistics"))
    printModelStatistics(State);
  if (H.getBool("log_device_placement"))
    std::printf("device placement: every kernel of the step runs on cpu:0\n");

  fnn_device *Device = fnn_device_create(FNN_DEVICE_CPU, 0);
  if (!Device)
    fail(std::string("cannot create the CPU device: ") + fnn_last_error());
  auto *Arena = static_cast<unsigned char *>(
      fnn_device_alloc(Device, static_cast<size_t>(fnn_model_arena_bytes)));
  if (!Arena)
    fail("cannot allocate the " + std::to_string(fnn_model_arena_bytes) +
         "-byte arena");
  if (fnn_model_init(Device, Arena) != 0)
    fail(std::string("cannot initialise the model: ") + fnn_last_error());

  std::printf("train.bin: %s\n", SourceLine.c_str());
  std::printf("train.bin: %lld steps of batch %lld; %s\n",
              static_cast<long long>(TrainSteps),
              static_cast<long long>(BatchSize), Schedule.describe().c_str());
  std::fflush(stdout);

  int64_t LogEvery =
      hasHook(H, "LoggingTensorHook") ? H.getInt("log_loss_every_n_iters") : 0;
  // The source writes float32 images and int64 labels straight into the
  // arena; other element types are staged here and converted.
  std::vector<float> StagedImages;
  std::vector<int64_t> StagedLabels;
  float *Images = reinterpret_cast<float *>(Arena + ImagesIn.offset);
  int64_t *Labels = reinterpret_cast<int64_t *>(Arena + LabelsIn.offset);
  if (ImagesIn.dtype != FNN_F32) {
    StagedImages.resize(static_cast<size_t>(ImagesIn.numElements()));
    Images = StagedImages.data();
  }
  if (LabelsIn.dtype != FNN_I64) {
    StagedLabels.resize(static_cast<size_t>(BatchSize));
    Labels = StagedLabels.data();
  }
  using Clock = std::chrono::steady_clock;
  Clock::time_point Start = Clock::now(), WindowStart = Start;
  int64_t WindowSteps = 0, Steps = 0;
  // Time spent waiting for (and copying) batches: the share of the step
  // time that a faster input pipeline would win back.
  double WindowWait = 0;
  bool EndOfData = false;
  for (int64_t Step = 1; Step <= TrainSteps; ++Step) {
    Clock::time_point WaitStart = Clock::now();
    int64_t Size = 0;
    Status S = Source->next(Images, Labels, Size);
    WindowWait +=
        std::chrono::duration<double>(Clock::now() - WaitStart).count();
    if (!S.ok())
      fail(S.message());
    if (Size == 0) {
      EndOfData = true;
      break;
    }
    storeBatch(ImagesIn, LabelsIn, Images, Labels, Arena);
    float Rate = static_cast<float>(Schedule.at(Step));
    std::memcpy(Arena + RateIn.offset, &Rate, sizeof(Rate));
    std::memcpy(Arena + StepIn.offset, &Step, sizeof(Step));
    fnn_model_run(Arena);
    fnn_device_synchronize(Device);
    ++Steps;
    ++WindowSteps;

    float Loss, Top1, Top5;
    std::memcpy(&Loss, Arena + LossOut.offset, sizeof(Loss));
    std::memcpy(&Top1, Arena + Top1Out.offset, sizeof(Top1));
    std::memcpy(&Top5, Arena + Top5Out.offset, sizeof(Top5));
    if (!std::isfinite(Loss))
      fail("step " + std::to_string(Step) + ": the loss is " +
           (std::isnan(Loss) ? "nan" : "infinite") + " at learning rate " +
           std::to_string(Rate) +
           "; training stopped (lower learning_rate, set max_gradient_norm "
           "or check the input)");
    if (LogEvery > 0 && (Step % LogEvery == 0 || Step == TrainSteps)) {
      Clock::time_point Now = Clock::now();
      double Seconds = std::chrono::duration<double>(Now - WindowStart).count();
      std::printf("step %lld: loss=%.6f lr=%.6g top1=%.4f top5=%.4f "
                  "images/s=%.1f data_wait=%.1f%%\n",
                  static_cast<long long>(Step), Loss, Rate, Top1, Top5,
                  Seconds > 0 ? WindowSteps * BatchSize / Seconds : 0.0,
                  Seconds > 0 ? 100.0 * WindowWait / Seconds : 0.0);
      std::fflush(stdout);
      WindowStart = Now;
      WindowSteps = 0;
      WindowWait = 0;
    }
  }
  double Seconds = std::chrono::duration<double>(Clock::now() - Start).count();
  if (EndOfData)
    std::printf("train.bin: the input ended after %lld steps (num_epochs=%lld)"
                "\n",
                static_cast<long long>(Steps),
                static_cast<long long>(H.getInt("num_epochs")));
  std::printf("train.bin: %lld steps in %.2f s, %.1f images/s\n",
              static_cast<long long>(Steps), Seconds,
              Seconds > 0 ? Steps * BatchSize / Seconds : 0.0);

  fnn_model_release();
  fnn_device_free(Device, Arena);
  fnn_device_destroy(Device);
  return 0;
}
