//===- TFRecordDataSource.cpp - Training batches from TFRecord files ------===//

#include "fastnn/trainer/TFRecordDataSource.h"

#include "fastnn/data/Crc32c.h"
#include "fastnn/data/DatasetSpec.h"
#include "fastnn/data/Preprocess.h"
#include "fastnn/data/RecordIO.h"
#include "fastnn/data/RecordIndex.h"
#include "fastnn/runtime/ShapeText.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <system_error>

namespace fastnn::trainer {

namespace fs = std::filesystem;
using runtime::shapeText;

namespace {

std::string trim(const std::string &Text) {
  size_t Begin = Text.find_first_not_of(" \t");
  if (Begin == std::string::npos)
    return "";
  return Text.substr(Begin, Text.find_last_not_of(" \t") - Begin + 1);
}

/// "run.txt:3: dataset_dir=/x: " - where a key was set, for messages.
std::string where(const Hparams &H, const std::string &Key) {
  return H.origin(Key) + ": " + Key + "=" + H.text(Key) + ": ";
}

bool contains(const std::string &Name, const char *Part) {
  return Name.find(Part) != std::string::npos;
}

/// Whether a file of dataset_dir holds records of the split, and whether it
/// is named after the split (see the header).
bool isCandidate(InputSplit Split, const std::string &Name) {
  if (data::isRecordIndexFile(Name))
    return false;
  if (contains(Name, ".tfrecord"))
    return true;
  if (Split == InputSplit::Train)
    return Name.rfind("train-", 0) == 0;
  return Name.rfind("test-", 0) == 0 || Name.rfind("validation-", 0) == 0;
}

bool isNamedForSplit(InputSplit Split, const std::string &Name) {
  if (Split == InputSplit::Train)
    return contains(Name, "train");
  return contains(Name, "test") || contains(Name, "validation");
}

/// Counts an uncompressed file by its headers: 8-byte length, 4-byte masked
/// CRC of the length, then length bytes of data and a 4-byte data CRC. With
/// SkipDamaged a broken header ends the count instead of failing it (a
/// failing system call still fails it).
Status countUncompressed(const std::string &Path, int64_t &Count,
                         bool SkipDamaged) {
  std::error_code Ec;
  uint64_t Size = fs::file_size(Path, Ec);
  if (Ec)
    return Status::error(Path + ": " + Ec.message());
  std::FILE *File = std::fopen(Path.c_str(), "rb");
  if (!File)
    return Status::error(Path + ": " + std::strerror(errno));
  Status Result;
  bool SystemError = false;
  uint64_t Offset = 0;
  while (Offset < Size) {
    unsigned char Header[12];
    if (Size - Offset < sizeof(Header) ||
        std::fread(Header, 1, sizeof(Header), File) != sizeof(Header)) {
      Result = Status::error(Path + ": byte offset " + std::to_string(Offset) +
                             ": truncated record header");
      break;
    }
    uint64_t Length = 0;
    uint32_t Crc = 0;
    for (int I = 7; I >= 0; --I)
      Length = Length << 8 | Header[I];
    for (int I = 11; I >= 8; --I)
      Crc = Crc << 8 | Header[I];
    if (data::maskCrc(data::crc32c(Header, 8)) != Crc) {
      Result = Status::error(Path + ": byte offset " + std::to_string(Offset) +
                             ": corrupt record: length CRC mismatch");
      break;
    }
    uint64_t Rest = Size - Offset - sizeof(Header);
    if (Length > Rest || Rest - Length < 4) {
      Result = Status::error(Path + ": byte offset " + std::to_string(Offset) +
                             ": record of " + std::to_string(Length) +
                             " bytes runs past the end of the file");
      break;
    }
    Offset += sizeof(Header) + Length + 4;
    if (fseeko(File, static_cast<off_t>(Offset), SEEK_SET) != 0) {
      Result = Status::error(Path + ": byte offset " + std::to_string(Offset) +
                             ": " + std::strerror(errno));
      SystemError = true;
      break;
    }
    ++Count;
  }
  std::fclose(File);
  return SkipDamaged && !SystemError ? Status::success() : Result;
}

/// The files of a split: FilesKey's list, or dataset_dir's files (see the
/// header).
Status listSplitFiles(const Hparams &H, InputSplit Split,
                      std::vector<std::string> &Files) {
  const std::string FilesKey =
      Split == InputSplit::Train ? "train_files" : "eval_files";
  Files.clear();
  std::string Dir;
  if (H.isSet("dataset_dir")) {
    Dir = H.getString("dataset_dir");
    if (Dir.rfind("file://", 0) == 0)
      Dir = Dir.substr(7);
    else if (Dir.find("://") != std::string::npos)
      return Status::error(where(H, "dataset_dir") +
                           "only local directories and file:// URIs can be "
                           "read");
  }

  if (H.isSet(FilesKey)) {
    std::string List = H.getString(FilesKey);
    size_t Begin = 0;
    while (Begin <= List.size()) {
      size_t Comma = std::min(List.find(',', Begin), List.size());
      std::string Name = trim(List.substr(Begin, Comma - Begin));
      Begin = Comma + 1;
      if (Name.empty())
        continue;
      std::string Path =
          Dir.empty() || Name.front() == '/' ? Name : Dir + "/" + Name;
      std::error_code Ec;
      if (!fs::is_regular_file(Path, Ec))
        return Status::error(where(H, FilesKey) + "'" + Path +
                             "' is not a file");
      Files.push_back(Path);
    }
    if (Files.empty())
      return Status::error(where(H, FilesKey) + "names no file");
    return Status::success();
  }

  if (Dir.empty())
    return Status::error(where(H, "dataset_name") +
                         "the records are read from dataset_dir, which is "
                         "not set");
  std::error_code Ec;
  fs::directory_iterator It(Dir, Ec), End;
  if (Ec)
    return Status::error(where(H, "dataset_dir") + Ec.message());
  std::vector<std::string> Candidates, Named;
  for (; It != End; It.increment(Ec)) {
    if (Ec)
      return Status::error(where(H, "dataset_dir") + Ec.message());
    std::string Name = It->path().filename().string();
    std::error_code TypeEc;
    if (!It->is_regular_file(TypeEc) || !isCandidate(Split, Name))
      continue;
    Candidates.push_back(It->path().string());
    if (isNamedForSplit(Split, Name))
      Named.push_back(It->path().string());
  }
  // Training falls back to every record file of an unsplit directory;
  // evaluating on them would measure the training set.
  Files = Named.empty() && Split == InputSplit::Train ? Candidates : Named;
  if (Files.empty())
    return Status::error(
        where(H, "dataset_dir") +
        (Split == InputSplit::Train
             ? "no *.tfrecord* or train-* files; name them with train_files"
             : "no *test* or *validation* record files to evaluate on; name "
               "them with eval_files"));
  std::sort(Files.begin(), Files.end());
  return Status::success();
}

} // namespace

Status listTrainFiles(const Hparams &H, std::vector<std::string> &Files) {
  return listSplitFiles(H, InputSplit::Train, Files);
}

Status listEvalFiles(const Hparams &H, std::vector<std::string> &Files) {
  return listSplitFiles(H, InputSplit::Eval, Files);
}

Status shardsByRecord(const Hparams &H, const std::vector<std::string> &Files,
                      bool &ByRecord) {
  ByRecord = H.getString("shard_by") == "record";
  for (size_t F = 0; ByRecord && F < Files.size(); ++F) {
    data::Compression Comp;
    if (Status S = data::detectCompression(Files[F], Comp); !S.ok())
      return S;
    ByRecord = Comp == data::Compression::None;
  }
  return Status::success();
}

Status countRecords(const std::vector<std::string> &Files, int64_t &Count,
                    bool SkipDamaged) {
  Count = 0;
  for (const std::string &Path : Files) {
    data::Compression Comp;
    if (Status S = data::detectCompression(Path, Comp); !S.ok())
      return S;
    if (Comp == data::Compression::None) {
      if (Status S = countUncompressed(Path, Count, SkipDamaged); !S.ok())
        return S;
      continue;
    }
    data::RecordReaderOptions Options;
    Options.Comp = Comp;
    Status Err;
    std::unique_ptr<data::RecordReader> Reader =
        data::RecordReader::open(Path, Options, Err);
    if (!Reader)
      return Err;
    std::string Record;
    for (;;) {
      data::RecordReader::Result R = Reader->next(Record, Err);
      if (R == data::RecordReader::Result::End)
        break;
      if (R == data::RecordReader::Result::Corrupt) {
        if (!SkipDamaged)
          return Err;
        if (!Reader->canContinue())
          break;
        continue;
      }
      ++Count;
    }
  }
  return Status::success();
}

Status createDataSource(const Hparams &H,
                        const std::vector<int64_t> &ImageShape,
                        InputSplit Split, int64_t StartBatch,
                        std::unique_ptr<DataSource> &Out,
                        std::string &Description, InputShard Shard) {
  if (H.getString("dataset_name") != "mock") {
    std::unique_ptr<TFRecordDataSource> Records;
    if (Status S = TFRecordDataSource::create(H, ImageShape, Records, Split,
                                              StartBatch, Shard);
        !S.ok())
      return S;
    Description = Records->describe();
    Out = std::move(Records);
    return Status::success();
  }
  int64_t BatchSize = ImageShape.empty() ? 1 : ImageShape[0];
  int64_t SampleElements = 1;
  for (size_t I = 1; I < ImageShape.size(); ++I)
    SampleElements *= ImageShape[I];
  // The workers of a job train on slices of the job's batches and evaluate
  // the pool one process evaluates, a batch each in turn.
  const bool Eval = Split == InputSplit::Eval;
  const InputShard PoolShard = Eval ? InputShard() : Shard;
  // num_sample_per_epoch sizes the mock dataset (one batch of it is the
  // fixed batch of an overfitting check); otherwise a default pool.
  int64_t PoolBatches =
      H.isSet("num_sample_per_epoch")
          ? std::max<int64_t>(1, H.getInt("num_sample_per_epoch") /
                                     (BatchSize * PoolShard.Count))
          : MockDataSource::DefaultPoolBatches;
  auto Mock = std::make_unique<MockDataSource>(
      BatchSize, SampleElements, H.getInt("num_classes"),
      static_cast<uint64_t>(H.getInt("seed")), PoolBatches,
      MockDataSource::DefaultPoolBytes, PoolShard);
  Mock->skip(StartBatch);
  if (Eval)
    Mock->endAfterOnePass(Shard);
  Description =
      Eval ? "mock data (evaluation: one pass over the pool of " +
                 std::to_string(Mock->samplesPerEpoch()) + " samples" +
                 (Shard.Count > 1
                      ? ", batch i on worker i % " + std::to_string(Shard.Count)
                      : "") +
                 ")"
           : "mock data";
  Out = std::move(Mock);
  return Status::success();
}

TFRecordDataSource::~TFRecordDataSource() = default;

Status TFRecordDataSource::create(const Hparams &H,
                                  const std::vector<int64_t> &ImageShape,
                                  std::unique_ptr<TFRecordDataSource> &Out,
                                  InputSplit Split, int64_t StartBatch,
                                  InputShard Shard) {
  std::unique_ptr<TFRecordDataSource> Source(new TFRecordDataSource());
  data::PipelineOptions Options;
  const std::string &Name = H.getString("dataset_name");
  if (Status S = data::loadDatasetSpec(Name, Options.Spec); !S.ok())
    return Status::error(where(H, "dataset_name") + S.message());

  if (ImageShape.size() != 4 || (ImageShape[1] != 1 && ImageShape[1] != 3) ||
      ImageShape[2] <= 0 || ImageShape[3] <= 0)
    return Status::error("the model's images " + shapeText(ImageShape) +
                         " are not NCHW with 1 or 3 channels, the layout "
                         "the input pipeline writes");
  const int Channels = static_cast<int>(ImageShape[1]);
  const int Height = static_cast<int>(ImageShape[2]);
  const int Width = static_cast<int>(ImageShape[3]);
  const data::DatasetSpec &Spec = Options.Spec;
  if (Spec.Channels && Spec.Channels != Channels)
    return Status::error(where(H, "dataset_name") + "the records hold " +
                         std::to_string(Spec.Channels) +
                         "-channel images but the model's " + "images " +
                         shapeText(ImageShape) + " (NCHW) have " +
                         std::to_string(Channels));

  data::PreprocessKind Kind;
  std::string PreprocessingName =
      H.isSet("preprocessing_name") ? H.getString("preprocessing_name") : "";
  if (Status S = data::resolvePreprocessing(PreprocessingName,
                                            H.getString("model_name"), Kind);
      !S.ok())
    return Status::error(where(H, "preprocessing_name") + S.message());
  // Every named preprocessing crops or resizes to the output size (TF-slim
  // passes the network's image size); "none" is meant to leave the pixels
  // as stored, so a size that differs points at the wrong model or dataset
  // rather than at a wanted resize.
  if (Kind == data::PreprocessKind::None && Spec.Height &&
      (Spec.Height != Height || Spec.Width != Width))
    return Status::error(
        where(H, "dataset_name") + "the records hold " +
        std::to_string(Spec.Height) + "x" + std::to_string(Spec.Width) +
        " images but the model's images " + shapeText(ImageShape) + " are " +
        std::to_string(Height) + "x" + std::to_string(Width) +
        " and preprocessing none keeps the size; set preprocessing_name "
        "(lenet crops or pads, inception, vgg and cifarnet crop and resize)");

  Source->NumClasses = H.getInt("num_classes");
  Source->SkipLimit = H.getInt("skip_corrupt_records");
  if (Spec.NumClasses > Source->NumClasses)
    return Status::error(where(H, "num_classes") + "dataset " + Spec.Name +
                         " has " + std::to_string(Spec.NumClasses) +
                         " classes, more than the model's");

  const bool Training = Split == InputSplit::Train;
  Source->Shard = Shard;
  if (Status S = listSplitFiles(H, Split, Source->Files); !S.ok())
    return S;

  Source->BatchSize = ImageShape[0];
  Source->Split = Split;
  Source->DatasetName = Spec.Name;
  Source->Preprocessing = data::preprocessingName(Kind);
  Options.Files = Source->Files;
  Options.Rank = static_cast<int>(Shard.Rank);
  Options.WorldSize = static_cast<int>(Shard.Count);
  Options.Sharding = H.getString("shard_by") == "file" ? data::ShardBy::File
                                                       : data::ShardBy::Record;
  Options.BatchSize = static_cast<int>(ImageShape[0]);
  Options.Shape.Height = Height;
  Options.Shape.Width = Width;
  Options.Shape.Channels = Channels;
  Options.Shape.Order = data::Layout::NCHW;
  Options.Preprocess = Kind;
  Options.Training = Training;
  // The compiled training step has a static batch; evaluation pads a last
  // partial batch and counts only its samples.
  Options.DropRemainder = Training;
  Options.NumThreads = static_cast<int>(H.getInt("num_preprocessing_threads"));
  Options.NumParallelBatches =
      static_cast<int>(H.getInt("num_parallel_batches"));
  Options.PrefetchBatches = static_cast<int>(H.getInt("prefetch_buffer_size"));
  Options.ShuffleBufferSize =
      Training ? static_cast<int>(H.getInt("shuffle_buffer_size")) : 0;
  Options.ShuffleFiles = Training;
  Options.UseCaching = Training && H.getBool("datasets_use_caching");
  Options.NumEpochs = Training ? static_cast<int>(H.getInt("num_epochs")) : 1;
  Options.Seed = static_cast<uint64_t>(H.getInt("seed"));
  Options.StartBatch = static_cast<uint64_t>(StartBatch);
  Options.SkipCorruptRecords = static_cast<uint64_t>(Source->SkipLimit);
  Options.SkipCorruptAdvice =
      Source->SkipLimit == 0
          ? "; repair or remove the file, or set skip_corrupt_records=N to "
            "skip up to N damaged records"
          : " (skip_corrupt_records=" + H.text("skip_corrupt_records") +
                " from " + H.origin("skip_corrupt_records") +
                ", counted by each worker): the limit is reached; repair or "
                "remove the file, or raise skip_corrupt_records";

  Status Err;
  Source->Input = data::Pipeline::create(Options, Err);
  if (!Source->Input)
    return Err;
  for (const std::string &Line : Source->Input->notices())
    std::printf("train.bin: %s\n", Line.c_str());
  std::fflush(stdout);

  const int64_t K = Shard.Count;
  if (Training && H.isSet("num_sample_per_epoch")) {
    Source->SamplesPerEpoch = H.getInt("num_sample_per_epoch") / K;
  } else if (Source->Input->shardsByRecord()) {
    // The indexes count the records: the shares differ by one at most, and
    // every worker takes the smallest.
    const int64_t N = static_cast<int64_t>(Source->Input->recordsPerEpoch());
    Source->SamplesPerEpoch = Training ? N / K : N;
    Source->Counted = true;
  } else {
    // Every worker counts every worker's files, so that all take the
    // smallest share without talking to each other.
    std::vector<int64_t> Shares(static_cast<size_t>(K));
    for (size_t F = 0; F < Source->Files.size(); ++F) {
      int64_t Count = 0;
      if (Status S =
              countRecords({Source->Files[F]}, Count, Source->SkipLimit > 0);
          !S.ok())
        return S;
      Shares[F % Shares.size()] += Count;
    }
    // An evaluation reads each worker's files once: all records count.
    Source->SamplesPerEpoch =
        Training ? *std::min_element(Shares.begin(), Shares.end())
                 : std::accumulate(Shares.begin(), Shares.end(), int64_t(0));
    Source->Counted = true;
  }
  Out = std::move(Source);
  return Status::success();
}

Status TFRecordDataSource::next(float *Images, int64_t *Labels, int64_t &Size) {
  data::BatchView View;
  Size = 0;
  Status Acquired = Input->acquire(View);
  // Before an error, so that the log holds every record skipped before it.
  logSkipped();
  if (!Acquired.ok())
    return Acquired;
  if (View.Size == 0) {
    if (Split == InputSplit::Eval && skippedRecords() > 0)
      std::printf("train.bin: the evaluation pass skipped %lld damaged "
                  "records (skip_corrupt_records=%lld); its samples exclude "
                  "them\n",
                  static_cast<long long>(skippedRecords()),
                  static_cast<long long>(SkipLimit));
    return Status::success();
  }
  // A spec without num_classes leaves labels unchecked, and a label out of
  // range would index past the logits in the loss.
  for (int I = 0; I < View.Size; ++I)
    if (View.Labels[I] < 0 || View.Labels[I] >= NumClasses) {
      Status S = Status::error(
          "data: batch " + std::to_string(View.Index) + ", sample " +
          std::to_string(I) + ": label " + std::to_string(View.Labels[I]) +
          " is outside [0, " + std::to_string(NumClasses) +
          ") (num_classes); check the spec's label_offset and num_classes");
      Input->release(View);
      return S;
    }
  std::memcpy(Images, View.Images, Input->sampleBytes() * View.Size);
  std::copy(View.Labels, View.Labels + View.Size, Labels);
  Size = View.Size;
  Input->release(View);
  return Status::success();
}

int64_t TFRecordDataSource::skippedRecords() const {
  if (SkipLimit == 0)
    return -1;
  data::PipelineStats S = Input->stats();
  return static_cast<int64_t>(S.CorruptRecordsSkipped + S.BadSamplesSkipped);
}

void TFRecordDataSource::logSkipped() {
  // A flood of damage must not flood the log: the first ones each get a
  // line, then one line at most every LogIntervalNs says how many more.
  constexpr uint64_t LoggedInFull = 10;
  constexpr int64_t LogIntervalNs = 10'000'000'000;
  for (const data::SkippedRecord &R : Input->takeSkipped()) {
    const int64_t Now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    if (R.Number > LoggedInFull + 1 && Now - LastLineNs < LogIntervalNs)
      continue;
    std::string Line =
        "train.bin: skipped damaged record " + std::to_string(R.Number) +
        " of the " + (Split == InputSplit::Eval ? "evaluation" : "training") +
        " input (skip_corrupt_records=" + std::to_string(SkipLimit) +
        "): " + R.Message;
    if (R.Number > LastLogged + 1)
      Line += " (and " + std::to_string(R.Number - LastLogged - 1) +
              " more since the previous line)";
    if (R.Number == LoggedInFull + 1)
      Line += "; from here on a line every 10 s at most, and the summary "
              "counts them all";
    std::printf("%s\n", Line.c_str());
    LastLogged = R.Number;
    LastLineNs = Now;
  }
  std::fflush(stdout);
}

std::string TFRecordDataSource::describe() const {
  const data::OutputShape &Shape = Input->shape();
  std::string K = std::to_string(Shard.Count);
  const std::string Mine =
      Input->shardsByRecord()
          ? "the records p with p % " + K +
                " == " + std::to_string(Shard.Rank) + " of each pass"
          : "the files i with i % " + K + " == " + std::to_string(Shard.Rank);
  std::string Worker =
      Shard.Count == 1 ? ""
      : Split == InputSplit::Eval
          ? " shared by " + K + " workers (this one, rank " +
                std::to_string(Shard.Rank) + ", evaluates " + Mine + ")"
          : " for each of " + K + " workers (this one, rank " +
                std::to_string(Shard.Rank) + ", reads " + Mine + ")";
  return DatasetName + (Split == InputSplit::Eval ? " (evaluation)" : "") +
         ": " + std::to_string(Files.size()) + " file" +
         (Files.size() == 1 ? "" : "s") + ", " +
         std::to_string(SamplesPerEpoch) +
         (Counted ? " records" : " samples per epoch (num_sample_per_epoch)") +
         Worker + ", preprocessing " + Preprocessing + ", images " +
         std::to_string(Shape.Channels) + "x" + std::to_string(Shape.Height) +
         "x" + std::to_string(Shape.Width) + " (CHW)" +
         (SkipLimit > 0 ? ", skipping up to " + std::to_string(SkipLimit) +
                              " damaged records (skip_corrupt_records)"
                        : "");
}

} // namespace fastnn::trainer
