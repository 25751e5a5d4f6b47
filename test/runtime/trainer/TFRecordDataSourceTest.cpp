//===- TFRecordDataSourceTest.cpp - train.bin's TFRecord input ------------===//
//
// A tiny MNIST-like set written with fastnn_data's writer: 64 grayscale 28x28
// PNG records in FastNN's schema whose first pixel is the record's number,
// so that every batch value can be traced back to its record.
//
//===----------------------------------------------------------------------===//

#include "fastnn/trainer/TFRecordDataSource.h"
#include "fastnn/data/Example.h"
#include "fastnn/data/Image.h"
#include "fastnn/data/RecordIO.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

using namespace fastnn;
using namespace fastnn::trainer;

namespace {

constexpr int NumRecords = 64, Side = 28, Batch = 16;

uint8_t pixel(int Record, int Index) {
  return Index == 0 ? static_cast<uint8_t>(Record)
                    : static_cast<uint8_t>((Record * 7 + Index * 3) & 255);
}

void writeFile(const std::string &Path, int First, int Step,
               data::Compression Comp = data::Compression::None) {
  data::Status Err;
  auto Writer = data::RecordWriter::open(Path, Comp, Err);
  ASSERT_TRUE(Writer) << Err.message();
  for (int R = First; R < NumRecords; R += Step) {
    std::vector<uint8_t> Pixels(Side * Side);
    for (int I = 0; I < Side * Side; ++I)
      Pixels[I] = pixel(R, I);
    std::string Png;
    ASSERT_TRUE(data::encodePng(Pixels.data(), Side, Side, 1, Png).ok());
    ASSERT_TRUE(
        Writer->write(data::makeImageExample(Png, "png", R % 10, Side, Side))
            .ok());
  }
  ASSERT_TRUE(Writer->close().ok());
}

class TFRecordDataSourceTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Template = ::testing::TempDir() + "tfrecord_source_XXXXXX";
    ASSERT_TRUE(mkdtemp(Template.data()));
    Dir = Template;
    // Records alternate between the two training shards; the test split
    // beside them must not be read.
    writeFile(Dir + "/tiny-train-00000-of-00002.tfrecord", 0, 2);
    writeFile(Dir + "/tiny-train-00001-of-00002.tfrecord", 1, 2);
    writeFile(Dir + "/tiny-test-00000-of-00001.tfrecord", 0, 8);
    std::ofstream(Dir + "/README.txt") << "not a record file\n";
  }
  void TearDown() override { std::filesystem::remove_all(Dir); }

  Hparams hparams(const std::string &Extra = "") {
    Hparams H;
    std::string Text = "dataset_name=mnist\ndataset_dir=" + Dir +
                       "\npreprocessing_name=lenet\nnum_classes=10\n"
                       "num_epochs=2\nseed=7\nshuffle_buffer_size=64\n"
                       "num_preprocessing_threads=3\nprefetch_buffer_size=2\n"
                       "num_parallel_batches=2\n";
    // Extra lines replace the defaults above key by key.
    std::string Merged;
    size_t Begin = 0;
    while (Begin < Text.size()) {
      size_t End = Text.find('\n', Begin);
      std::string Line = Text.substr(Begin, End - Begin);
      std::string Key = Line.substr(0, Line.find('='));
      if (("\n" + Extra).find("\n" + Key + "=") == std::string::npos)
        Merged += Line + "\n";
      Begin = End + 1;
    }
    EXPECT_TRUE(H.parseText(Merged + Extra, "test.txt").ok());
    return H;
  }

  std::unique_ptr<TFRecordDataSource> create(const Hparams &H,
                                             std::vector<int64_t> Shape = {
                                                 Batch, 1, Side, Side}) {
    std::unique_ptr<TFRecordDataSource> Source;
    Status S = TFRecordDataSource::create(H, Shape, Source);
    EXPECT_TRUE(S.ok()) << S.message();
    return Source;
  }

  std::string createError(const Hparams &H,
                          std::vector<int64_t> Shape = {Batch, 1, Side, Side}) {
    std::unique_ptr<TFRecordDataSource> Source;
    Status S = TFRecordDataSource::create(H, Shape, Source);
    EXPECT_FALSE(S.ok());
    return S.message();
  }

  struct Pulled {
    std::vector<std::vector<float>> Images;
    std::vector<std::vector<int64_t>> Labels;
  };

  /// Every batch until the end of the data.
  static Pulled pullAll(DataSource &Source, size_t Elements) {
    Pulled P;
    for (;;) {
      std::vector<float> Images(Batch * Elements);
      std::vector<int64_t> Labels(Batch);
      int64_t Size = 0;
      Status S = Source.next(Images.data(), Labels.data(), Size);
      EXPECT_TRUE(S.ok()) << S.message();
      if (!S.ok() || Size == 0 || P.Images.size() > 100)
        return P;
      Images.resize(Size * Elements);
      Labels.resize(Size);
      P.Images.push_back(std::move(Images));
      P.Labels.push_back(std::move(Labels));
    }
  }

  std::string Dir;
};

TEST_F(TFRecordDataSourceTest, ListsTheTrainingSplit) {
  std::vector<std::string> Files;
  ASSERT_TRUE(listTrainFiles(hparams(), Files).ok());
  EXPECT_EQ(Files, (std::vector<std::string>{
                       Dir + "/tiny-train-00000-of-00002.tfrecord",
                       Dir + "/tiny-train-00001-of-00002.tfrecord"}));

  ASSERT_TRUE(listTrainFiles(hparams("dataset_dir=file://" + Dir +
                                     "\ntrain_files=tiny-test-00000-of-"
                                     "00001.tfrecord, " +
                                     Dir +
                                     "/tiny-train-00000-of-00002."
                                     "tfrecord\n"),
                             Files)
                  .ok());
  EXPECT_EQ(Files, (std::vector<std::string>{
                       Dir + "/tiny-test-00000-of-00001.tfrecord",
                       Dir + "/tiny-train-00000-of-00002.tfrecord"}));

  Status Missing =
      listTrainFiles(hparams("train_files=nope.tfrecord\n"), Files);
  ASSERT_FALSE(Missing.ok());
  EXPECT_NE(Missing.message().find("test.txt:"), std::string::npos);
  EXPECT_NE(Missing.message().find("nope.tfrecord"), std::string::npos);

  std::filesystem::create_directory(Dir + "/empty");
  Status Empty =
      listTrainFiles(hparams("dataset_dir=" + Dir + "/empty\n"), Files);
  ASSERT_FALSE(Empty.ok());
  EXPECT_NE(Empty.message().find("no *.tfrecord*"), std::string::npos);

  EXPECT_FALSE(
      listTrainFiles(hparams("dataset_dir=oss://bucket/x\n"), Files).ok());
}

TEST_F(TFRecordDataSourceTest, ListsTheEvaluationSplit) {
  std::vector<std::string> Files;
  ASSERT_TRUE(listEvalFiles(hparams(), Files).ok());
  EXPECT_EQ(Files, (std::vector<std::string>{
                       Dir + "/tiny-test-00000-of-00001.tfrecord"}));

  ASSERT_TRUE(
      listEvalFiles(hparams("eval_files=tiny-train-00001-of-00002.tfrecord\n"),
                    Files)
          .ok());
  EXPECT_EQ(Files, (std::vector<std::string>{
                       Dir + "/tiny-train-00001-of-00002.tfrecord"}));

  // TF-slim's and ImageNet's names for the held-out split.
  std::filesystem::create_directory(Dir + "/slim");
  writeFile(Dir + "/slim/flowers_validation_00000-of-00001.tfrecord", 0, 8);
  writeFile(Dir + "/slim/validation-00000-of-00001", 0, 8);
  writeFile(Dir + "/slim/flowers_train_00000-of-00001.tfrecord", 0, 8);
  ASSERT_TRUE(
      listEvalFiles(hparams("dataset_dir=" + Dir + "/slim\n"), Files).ok());
  EXPECT_EQ(Files, (std::vector<std::string>{
                       Dir + "/slim/flowers_validation_00000-of-00001.tfrecord",
                       Dir + "/slim/validation-00000-of-00001"}));

  // A directory of training files only has nothing to evaluate on.
  std::filesystem::create_directory(Dir + "/train-only");
  writeFile(Dir + "/train-only/a.tfrecord", 0, 8);
  Status S =
      listEvalFiles(hparams("dataset_dir=" + Dir + "/train-only\n"), Files);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("test.txt:"), std::string::npos) << S.message();
  EXPECT_NE(S.message().find("eval_files"), std::string::npos) << S.message();
  Status Missing = listEvalFiles(hparams("eval_files=nope\n"), Files);
  ASSERT_FALSE(Missing.ok());
  EXPECT_NE(Missing.message().find("eval_files=nope"), std::string::npos)
      << Missing.message();
}

TEST_F(TFRecordDataSourceTest, CountsRecords) {
  int64_t Count = 0;
  ASSERT_TRUE(countRecords({Dir + "/tiny-train-00000-of-00002.tfrecord",
                            Dir + "/tiny-train-00001-of-00002.tfrecord"},
                           Count)
                  .ok());
  EXPECT_EQ(Count, NumRecords);

  writeFile(Dir + "/gz.tfrecord", 0, 4, data::Compression::Gzip);
  ASSERT_TRUE(countRecords({Dir + "/gz.tfrecord"}, Count).ok());
  EXPECT_EQ(Count, NumRecords / 4);

  // A file cut inside its last record.
  std::string Cut = Dir + "/tiny-test-00000-of-00001.tfrecord";
  std::filesystem::resize_file(Cut, std::filesystem::file_size(Cut) - 10);
  Status S = countRecords({Cut}, Count);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find(Cut + ": byte offset "), std::string::npos)
      << S.message();
}

TEST_F(TFRecordDataSourceTest, TwoEpochsThenEndOfData) {
  std::unique_ptr<TFRecordDataSource> Source = create(hparams());
  ASSERT_TRUE(Source);
  EXPECT_EQ(Source->samplesPerEpoch(), NumRecords);
  EXPECT_NE(Source->describe().find("2 files, 64 records, preprocessing "
                                    "lenet, images 1x28x28"),
            std::string::npos)
      << Source->describe();

  Pulled P = pullAll(*Source, Side * Side);
  ASSERT_EQ(P.Images.size(), 2u * NumRecords / Batch);
  std::vector<std::vector<int>> EpochRecords(2);
  for (size_t B = 0; B < P.Images.size(); ++B)
    for (int S = 0; S < Batch; ++S) {
      const float *Image = P.Images[B].data() + S * Side * Side;
      // lenet preprocessing: (pixel - 128) / 128, exact in float.
      int Record = static_cast<int>(std::lround(Image[0] * 128 + 128));
      ASSERT_GE(Record, 0);
      ASSERT_LT(Record, NumRecords);
      EXPECT_EQ(P.Labels[B][S], Record % 10);
      for (int I = 0; I < Side * Side; ++I) {
        ASSERT_GE(Image[I], -1.0f);
        ASSERT_LT(Image[I], 1.0f);
        ASSERT_EQ(Image[I], (pixel(Record, I) - 128.0f) / 128.0f)
            << "record " << Record << " pixel " << I;
      }
      EpochRecords[B / (NumRecords / Batch)].push_back(Record);
    }
  std::vector<int> All(NumRecords);
  for (int R = 0; R < NumRecords; ++R)
    All[R] = R;
  for (std::vector<int> &Epoch : EpochRecords) {
    // Shuffled, yet every record exactly once per epoch.
    EXPECT_NE(Epoch, All);
    std::sort(Epoch.begin(), Epoch.end());
    EXPECT_EQ(Epoch, All);
  }

  // The end stays the end.
  std::vector<float> Images(Batch * Side * Side);
  std::vector<int64_t> Labels(Batch);
  int64_t Size = -1;
  ASSERT_TRUE(Source->next(Images.data(), Labels.data(), Size).ok());
  EXPECT_EQ(Size, 0);
  EXPECT_EQ(Source->stats().Samples, 2u * NumRecords);
}

// With shard_by=file, a worker of a data-parallel job reads every K-th
// file; all workers count the smallest share, so that they run as many
// steps.
TEST_F(TFRecordDataSourceTest, WorkersReadTheirFilesAndCountTheSmallestShare) {
  writeFile(Dir + "/tiny-train-00002-of-00003.tfrecord", 0, 16);
  std::vector<std::set<int>> Seen(2);
  for (int64_t Rank : {0, 1}) {
    std::unique_ptr<TFRecordDataSource> Source;
    Status S = TFRecordDataSource::create(
        hparams("num_epochs=1\nshard_by=file\n"), {Batch, 1, Side, Side},
        Source, InputSplit::Train, 0, {Rank, 2});
    ASSERT_TRUE(S.ok()) << S.message();
    // Worker 0 has files 0 and 2 (32 + 4 records), worker 1 file 1 (32).
    EXPECT_EQ(Source->samplesPerEpoch(), NumRecords / 2);
    EXPECT_NE(Source->describe().find("32 records for each of 2 workers "
                                      "(this one, rank " +
                                      std::to_string(Rank) +
                                      ", reads the files i with i % 2 == " +
                                      std::to_string(Rank) + ")"),
              std::string::npos)
        << Source->describe();
    Pulled P = pullAll(*Source, Side * Side);
    for (const std::vector<float> &Images : P.Images)
      for (int Sample = 0; Sample < Batch; ++Sample)
        Seen[Rank].insert(static_cast<int>(
            std::lround(Images[Sample * Side * Side] * 128 + 128)));
  }
  // Files sort by name: 00000 holds the even records, 00001 the odd ones.
  for (int Record : Seen[0])
    EXPECT_EQ(Record % 2, 0) << Record;
  for (int Record : Seen[1])
    EXPECT_EQ(Record % 2, 1) << Record;
  EXPECT_EQ(Seen[1].size(), size_t(NumRecords / 2));
}

// By record (the default), the workers deal out the records whatever the
// file sizes: 32 + 32 + 4 give each 34, disjoint, and the index files
// written beside the data are not taken for data.
TEST_F(TFRecordDataSourceTest, WorkersShareTheRecordsWhateverTheFileSizes) {
  writeFile(Dir + "/tiny-train-00002-of-00003.tfrecord", 0, 16);
  std::vector<std::multiset<int>> Seen(2);
  for (int64_t Rank : {0, 1}) {
    std::unique_ptr<TFRecordDataSource> Source;
    Status S = TFRecordDataSource::create(
        hparams("num_epochs=1\nshuffle_buffer_size=0\n"), {2, 1, Side, Side},
        Source, InputSplit::Train, 0, {Rank, 2});
    ASSERT_TRUE(S.ok()) << S.message();
    EXPECT_EQ(Source->samplesPerEpoch(), (NumRecords + 4) / 2);
    EXPECT_NE(Source->describe().find("34 records for each of 2 workers "
                                      "(this one, rank " +
                                      std::to_string(Rank) +
                                      ", reads the records p with p % 2 == " +
                                      std::to_string(Rank) + " of each pass)"),
              std::string::npos)
        << Source->describe();
    EXPECT_EQ(Source->files().size(), 3u);
    Pulled P = pullAll(*Source, Side * Side);
    for (const std::vector<float> &Images : P.Images)
      for (int Sample = 0; Sample < 2; ++Sample)
        Seen[Rank].insert(static_cast<int>(
            std::lround(Images[Sample * Side * Side] * 128 + 128)));
    EXPECT_EQ(Seen[Rank].size(), 34u);
  }
  // Every record once: the third file repeats records 0, 16, 32 and 48.
  std::multiset<int> All(Seen[0].begin(), Seen[0].end()), Expected;
  All.insert(Seen[1].begin(), Seen[1].end());
  for (int R = 0; R < NumRecords; ++R)
    Expected.insert(R);
  Expected.insert({0, 16, 32, 48});
  EXPECT_EQ(All, Expected);
}

// With num_sample_per_epoch, each worker's share of it.
TEST_F(TFRecordDataSourceTest, GivenEpochSizeIsSharedByTheWorkers) {
  std::unique_ptr<TFRecordDataSource> Source;
  Status S = TFRecordDataSource::create(hparams("num_sample_per_epoch=60\n"),
                                        {Batch, 1, Side, Side}, Source,
                                        InputSplit::Train, 0, {1, 2});
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Source->samplesPerEpoch(), 30);
}

TEST_F(TFRecordDataSourceTest, SeedDecidesTheStream) {
  Pulled A = pullAll(*create(hparams()), Side * Side);
  Pulled B =
      pullAll(*create(hparams("num_preprocessing_threads=1\n")), Side * Side);
  Pulled C = pullAll(*create(hparams("seed=8\n")), Side * Side);
  EXPECT_EQ(A.Images, B.Images);
  EXPECT_EQ(A.Labels, B.Labels);
  EXPECT_NE(A.Labels, C.Labels);
}

TEST_F(TFRecordDataSourceTest, StartBatchContinuesTheStream) {
  Pulled Full = pullAll(*create(hparams()), Side * Side);
  ASSERT_EQ(Full.Images.size(), 8u);
  // Inside the first epoch and inside the second.
  for (int64_t Start : {3, 5}) {
    std::unique_ptr<TFRecordDataSource> Source;
    Status S = TFRecordDataSource::create(hparams(), {Batch, 1, Side, Side},
                                          Source, InputSplit::Train, Start);
    ASSERT_TRUE(S.ok()) << S.message();
    Pulled Tail = pullAll(*Source, Side * Side);
    EXPECT_EQ(Tail.Images, decltype(Full.Images)(Full.Images.begin() + Start,
                                                 Full.Images.end()));
    EXPECT_EQ(Tail.Labels, decltype(Full.Labels)(Full.Labels.begin() + Start,
                                                 Full.Labels.end()));
  }
}

TEST_F(TFRecordDataSourceTest, EvaluationIsOneOrderedPassWithAPartialBatch) {
  std::unique_ptr<TFRecordDataSource> Source;
  // Training keys do not shape the evaluation pass.
  Status S = TFRecordDataSource::create(
      hparams("num_epochs=3\nnum_sample_per_epoch=1000\n"),
      {Batch, 1, Side, Side}, Source, InputSplit::Eval);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Source->samplesPerEpoch(), NumRecords / 8);
  EXPECT_NE(Source->describe().find("(evaluation): 1 file, 8 records"),
            std::string::npos)
      << Source->describe();
  Pulled P = pullAll(*Source, Side * Side);
  ASSERT_EQ(P.Images.size(), 1u);
  ASSERT_EQ(P.Labels[0].size(), size_t(NumRecords / 8));
  for (int I = 0; I < NumRecords / 8; ++I) {
    int Record = I * 8; // The file's order.
    EXPECT_EQ(P.Labels[0][I], Record % 10);
    const float *Image = P.Images[0].data() + I * Side * Side;
    for (int J = 0; J < Side * Side; ++J)
      ASSERT_EQ(Image[J], (pixel(Record, J) - 128.0f) / 128.0f);
  }
}

TEST_F(TFRecordDataSourceTest, NoPreprocessingScalesToUnitRange) {
  Pulled P = pullAll(*create(hparams("preprocessing_name=none\nnum_epochs=1\n"
                                     "num_sample_per_epoch=1000\n")),
                     Side * Side);
  ASSERT_EQ(P.Images.size(), size_t(NumRecords / Batch));
  for (const std::vector<float> &Images : P.Images)
    for (float V : Images) {
      ASSERT_GE(V, 0.0f);
      ASSERT_LE(V, 1.0f);
    }
}

TEST_F(TFRecordDataSourceTest, GivenEpochSizeIsNotCounted) {
  std::unique_ptr<TFRecordDataSource> Source =
      create(hparams("num_sample_per_epoch=1000\n"));
  EXPECT_EQ(Source->samplesPerEpoch(), 1000);
}

TEST_F(TFRecordDataSourceTest, ShapeMismatchesAreErrors) {
  std::string Channels = createError(hparams(), {Batch, 3, Side, Side});
  EXPECT_NE(Channels.find("1-channel images but the model's images [16, 3, "
                          "28, 28]"),
            std::string::npos)
      << Channels;
  std::string Size =
      createError(hparams("preprocessing_name=none\n"), {Batch, 1, 32, 32});
  EXPECT_NE(Size.find("28x28 images but the model's images [16, 1, 32, 32]"),
            std::string::npos)
      << Size;
  std::string Layout = createError(hparams(), {Batch, Side, Side, 1});
  EXPECT_NE(Layout.find("not NCHW"), std::string::npos) << Layout;

  // lenet's crop-or-pad adapts the size: padding lands at -1.
  std::unique_ptr<TFRecordDataSource> Padded =
      create(hparams(), {Batch, 1, 32, 32});
  ASSERT_TRUE(Padded);
  std::vector<float> Images(Batch * 32 * 32);
  std::vector<int64_t> Labels(Batch);
  int64_t Got = 0;
  ASSERT_TRUE(Padded->next(Images.data(), Labels.data(), Got).ok());
  EXPECT_EQ(Got, Batch);
}

TEST_F(TFRecordDataSourceTest, ConfigurationErrorsNameTheKey) {
  std::string Classes = createError(hparams("num_classes=5\n"));
  EXPECT_NE(Classes.find("test.txt:"), std::string::npos) << Classes;
  EXPECT_NE(Classes.find("num_classes=5"), std::string::npos) << Classes;
  std::string Spec = createError(hparams("dataset_name=imagenet\n"));
  EXPECT_NE(Spec.find("dataset_name=imagenet"), std::string::npos) << Spec;
  std::string NoDir = createError(hparams("dataset_dir=" + Dir + "/none\n"));
  EXPECT_NE(NoDir.find("/none"), std::string::npos) << NoDir;
}

TEST_F(TFRecordDataSourceTest, LabelsBeyondNumClassesStop) {
  // A user spec without num_classes leaves the labels to the trainer.
  std::ofstream(Dir + "/digits.spec") << "name = digits\nheight = 28\n"
                                         "width = 28\nchannels = 1\n";
  std::unique_ptr<TFRecordDataSource> Source =
      create(hparams("dataset_name=" + Dir +
                     "/digits.spec\nnum_classes=5\n"
                     "shuffle_buffer_size=0\n"));
  ASSERT_TRUE(Source);
  std::vector<float> Images(Batch * Side * Side);
  std::vector<int64_t> Labels(Batch);
  int64_t Size = 0;
  Status S = Source->next(Images.data(), Labels.data(), Size);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("is outside [0, 5)"), std::string::npos)
      << S.message();
}

//===----------------------------------------------------------------------===//
// Damaged records: skip_corrupt_records
//===----------------------------------------------------------------------===//

/// Byte offsets of the records of an uncompressed file, by their headers.
std::vector<uint64_t> recordOffsets(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  std::string Bytes((std::istreambuf_iterator<char>(In)),
                    std::istreambuf_iterator<char>());
  std::vector<uint64_t> Offsets;
  for (uint64_t At = 0; At + 12 <= Bytes.size();) {
    uint64_t Length = 0;
    for (int I = 7; I >= 0; --I)
      Length = Length << 8 | static_cast<unsigned char>(Bytes[At + I]);
    Offsets.push_back(At);
    At += 12 + Length + 4;
  }
  return Offsets;
}

/// Flips a bit of byte Within (from the record's start; -1: the last byte
/// of its data CRC) of each record Indices of Path.
void damage(const std::string &Path, const std::vector<int> &Indices,
            int64_t Within = -1) {
  std::vector<uint64_t> Offsets = recordOffsets(Path);
  std::fstream F(Path, std::ios::in | std::ios::out | std::ios::binary);
  for (int Index : Indices) {
    uint64_t End = static_cast<size_t>(Index) + 1 < Offsets.size()
                       ? Offsets[Index + 1]
                       : std::filesystem::file_size(Path);
    uint64_t At = Within < 0 ? End - 1 : Offsets[Index] + Within;
    char C = 0;
    F.seekg(static_cast<std::streamoff>(At));
    F.get(C);
    F.seekp(static_cast<std::streamoff>(At));
    F.put(static_cast<char>(C ^ 0x10));
  }
}

/// Pulls batches until the end or an error, which it returns; Batches gets
/// how many came.
Status pullUntilError(DataSource &Source, size_t &Batches) {
  std::vector<float> Images(Batch * Side * Side);
  std::vector<int64_t> Labels(Batch);
  Batches = 0;
  for (;;) {
    int64_t Size = 0;
    if (Status S = Source.next(Images.data(), Labels.data(), Size); !S.ok())
      return S;
    if (Size == 0)
      return Status::success();
    ++Batches;
  }
}

size_t countOf(const std::string &Text, const std::string &Part) {
  size_t N = 0;
  for (size_t At = Text.find(Part); At != std::string::npos;
       At = Text.find(Part, At + 1))
    ++N;
  return N;
}

TEST_F(TFRecordDataSourceTest, SkipCorruptRecordsIsACountAtLeastZero) {
  for (const char *Bad : {"-1", "1.5", "some"}) {
    Hparams H;
    Status S = H.parseText(std::string("skip_corrupt_records=") + Bad + "\n",
                           "run.txt");
    ASSERT_FALSE(S.ok()) << Bad;
    EXPECT_EQ(S.message().find('\n'), std::string::npos) << S.message();
    EXPECT_EQ(S.message().rfind("run.txt:1: skip_corrupt_records", 0), 0u)
        << S.message();
  }
  EXPECT_EQ(Hparams().getInt("skip_corrupt_records"), 0);
}

TEST_F(TFRecordDataSourceTest, ADamagedRecordStopsTheInputByDefault) {
  const std::string File = Dir + "/tiny-train-00000-of-00002.tfrecord";
  const std::vector<uint64_t> Offsets = recordOffsets(File);
  damage(File, {3});
  std::unique_ptr<TFRecordDataSource> Source = create(hparams());
  ASSERT_TRUE(Source);
  EXPECT_EQ(Source->skippedRecords(), -1);
  size_t Batches = 0;
  Status S = pullUntilError(*Source, Batches);
  EXPECT_EQ(S.message(), File + ": byte offset " + std::to_string(Offsets[3]) +
                             ": corrupt record: data CRC mismatch; repair or "
                             "remove the file, or set skip_corrupt_records=N "
                             "to skip up to N damaged records");
  // It lies before the first position: the shuffle buffer still filled.
  EXPECT_EQ(Batches, 0u);
}

TEST_F(TFRecordDataSourceTest, DamagedRecordsAreSkippedUpToTheLimit) {
  const std::string File = Dir + "/tiny-train-00000-of-00002.tfrecord";
  const std::vector<uint64_t> Offsets = recordOffsets(File);
  damage(File, {3, 20});
  const std::string At = File + ": byte offset ";

  ::testing::internal::CaptureStdout();
  std::unique_ptr<TFRecordDataSource> Source =
      create(hparams("skip_corrupt_records=2\n"));
  ASSERT_TRUE(Source);
  EXPECT_NE(Source->describe().find(
                "skipping up to 2 damaged records (skip_corrupt_records)"),
            std::string::npos)
      << Source->describe();
  size_t Batches = 0;
  Status S = pullUntilError(*Source, Batches);
  std::string Log = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(S.ok()) << S.message();
  // The first run indexes the files: a line before the damage's.
  const std::string Indexed = "train.bin: data pipeline: indexed the records";
  ASSERT_EQ(Log.rfind(Indexed, 0), 0u) << Log;
  Log.erase(0, Log.find('\n') + 1);
  // 62 good records in each of 2 epochs; each damaged one counts once.
  EXPECT_EQ(Batches, size_t(2 * 62 / Batch));
  EXPECT_EQ(Source->skippedRecords(), 2);
  EXPECT_EQ(Log, "train.bin: skipped damaged record 1 of the training input "
                 "(skip_corrupt_records=2): " +
                     At + std::to_string(Offsets[3]) +
                     ": corrupt record: data CRC mismatch\n"
                     "train.bin: skipped damaged record 2 of the training "
                     "input (skip_corrupt_records=2): " +
                     At + std::to_string(Offsets[20]) +
                     ": corrupt record: data CRC mismatch\n");

  ::testing::internal::CaptureStdout();
  Source = create(hparams("skip_corrupt_records=1\n"));
  S = pullUntilError(*Source, Batches);
  Log = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(S.message(),
            At + std::to_string(Offsets[20]) +
                ": corrupt record: data CRC mismatch; that is damaged record 2 "
                "and at most 1 are skipped (skip_corrupt_records=1 from "
                "test.txt:11, counted by each worker): the limit is reached; "
                "repair or remove the file, or raise skip_corrupt_records");
  // The first was skipped and logged before the error.
  EXPECT_EQ(countOf(Log, "skipped damaged record 1 of"), 1u) << Log;
  EXPECT_EQ(Source->skippedRecords(), 1);
}

TEST_F(TFRecordDataSourceTest, AFloodOfDamageIsCountedExactlyAndLoggedLess) {
  const std::string File = Dir + "/tiny-train-00000-of-00002.tfrecord";
  std::vector<int> Damaged;
  for (int I = 0; I < 15; ++I)
    Damaged.push_back(2 * I);
  damage(File, Damaged);
  ::testing::internal::CaptureStdout();
  std::unique_ptr<TFRecordDataSource> Source =
      create(hparams("skip_corrupt_records=20\nnum_epochs=1\n"));
  size_t Batches = 0;
  Status S = pullUntilError(*Source, Batches);
  std::string Log = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Source->skippedRecords(), 15);
  EXPECT_EQ(countOf(Log, "train.bin: skipped damaged record "), 11u) << Log;
  EXPECT_EQ(countOf(Log, "record 11 of the training input"), 1u) << Log;
  EXPECT_EQ(countOf(Log, "from here on a line every 10 s at most"), 1u) << Log;
}

TEST_F(TFRecordDataSourceTest, AResumedStreamSkipsTheSameRecords) {
  damage(Dir + "/tiny-train-00000-of-00002.tfrecord", {3, 20});
  const Hparams H = hparams("skip_corrupt_records=2\n");
  ::testing::internal::CaptureStdout();
  Pulled Full = pullAll(*create(H), Side * Side);
  ASSERT_EQ(Full.Images.size(), size_t(2 * 62 / Batch));
  for (int64_t Start : {2, 5}) {
    std::unique_ptr<TFRecordDataSource> Source;
    Status S = TFRecordDataSource::create(H, {Batch, 1, Side, Side}, Source,
                                          InputSplit::Train, Start);
    ASSERT_TRUE(S.ok()) << S.message();
    Pulled Tail = pullAll(*Source, Side * Side);
    EXPECT_EQ(Tail.Images, decltype(Full.Images)(Full.Images.begin() + Start,
                                                 Full.Images.end()));
    EXPECT_EQ(Tail.Labels, decltype(Full.Labels)(Full.Labels.begin() + Start,
                                                 Full.Labels.end()));
    // Reading the records before the start meets the damage again.
    EXPECT_EQ(Source->skippedRecords(), 2);
  }
  ::testing::internal::GetCapturedStdout();
}

TEST_F(TFRecordDataSourceTest, TheEvaluationPassSaysWhatItSkipped) {
  damage(Dir + "/tiny-test-00000-of-00001.tfrecord", {2});
  std::unique_ptr<TFRecordDataSource> Source;
  ::testing::internal::CaptureStdout();
  Status S = TFRecordDataSource::create(hparams("skip_corrupt_records=1\n"),
                                        {Batch, 1, Side, Side}, Source,
                                        InputSplit::Eval);
  ASSERT_TRUE(S.ok()) << S.message();
  Pulled P = pullAll(*Source, Side * Side);
  std::string Log = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(P.Labels.size(), 1u);
  EXPECT_EQ(P.Labels[0].size(), size_t(NumRecords / 8 - 1));
  EXPECT_EQ(countOf(Log, "of the evaluation input (skip_corrupt_records=1)"),
            1u)
      << Log;
  EXPECT_EQ(countOf(Log, "train.bin: the evaluation pass skipped 1 damaged "
                         "records (skip_corrupt_records=1)"),
            1u)
      << Log;
}

TEST_F(TFRecordDataSourceTest, CountingWhileSkippingStopsAtABrokenFraming) {
  const std::string File = Dir + "/tiny-train-00000-of-00002.tfrecord";
  damage(File, {5}, 9); // The length CRC.
  int64_t Count = 0;
  Status S = countRecords({File}, Count);
  EXPECT_NE(S.message().find("length CRC mismatch"), std::string::npos)
      << S.message();
  ASSERT_TRUE(countRecords({File}, Count, true).ok());
  EXPECT_EQ(Count, 5);
  // The run counts 5 + 32 records an epoch and trains on them.
  std::unique_ptr<TFRecordDataSource> Source =
      create(hparams("skip_corrupt_records=1\nnum_epochs=1\n"));
  ASSERT_TRUE(Source);
  EXPECT_EQ(Source->samplesPerEpoch(), 5 + 32);
}

} // namespace
