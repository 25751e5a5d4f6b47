//===- CheckpointTest.cpp - Checkpoint files, directories and restores ----===//

#include "fastnn/trainer/Checkpoint.h"
#include "fastnn/runtime/model.h"

#include "WriteFaults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace fastnn;
using namespace fastnn::trainer;
using namespace fastnn::trainer::test;
using runtime::TensorRecord;

namespace {

namespace fs = std::filesystem;

bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(In), {});
}

void writeFile(const std::string &Path, const std::string &Bytes) {
  std::ofstream(Path, std::ios::binary) << Bytes;
}

TensorRecord record(const std::string &Name, int64_t Role,
                    std::vector<int64_t> Shape, int64_t Offset,
                    int64_t Dtype = FNN_F32) {
  TensorRecord R;
  R.name = Name;
  R.kind = Role;
  R.dtype = Dtype;
  R.shape = std::move(Shape);
  R.offset = Offset;
  return R;
}

/// A small model's state: a conv filter, a bias, a statistic, two slots and
/// a classifier, laid out in an arena whose bytes count up.
class CheckpointTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Template = ::testing::TempDir() + "checkpoint_XXXXXX";
    ASSERT_TRUE(mkdtemp(Template.data()));
    Dir = Template;
    std::string Error;
    Device = runtime::createModelDevice(0, Error);
    ASSERT_TRUE(Device) << Error;
    State = {record("conv/w", FNN_STATE_TRAINABLE, {4, 1, 3, 3}, 0),
             record("conv/b", FNN_STATE_TRAINABLE, {4}, 144),
             record("bn/mean", FNN_STATE_STATISTIC, {4}, 160),
             record("conv/w/Momentum", FNN_STATE_SLOT, {4, 1, 3, 3}, 176),
             record("step_count", FNN_STATE_SLOT, {}, 320, FNN_I64),
             record("fc/w", FNN_STATE_TRAINABLE, {10, 4}, 328)};
    Arena.resize(488);
    for (size_t I = 0; I < Arena.size(); ++I)
      Arena[I] = static_cast<unsigned char>(I * 7 + 1);
  }
  void TearDown() override {
    fs::remove_all(Dir);
    fnn_device_destroy(Device);
  }

  /// Host vectors stand for arenas: the CPU device addresses host memory.
  runtime::ArenaAccess access(std::vector<unsigned char> &Memory) {
    return runtime::ArenaAccess(Device, Memory.data());
  }

  Checkpoint make(int64_t Step) {
    Checkpoint C;
    C.Step = Step;
    C.DataPosition = Step + 1;
    C.Seed = 42;
    C.Tensors = arenaTensors(State, access(Arena), Regions);
    return C;
  }

  std::string save(int64_t Step, int64_t Keep = 5) {
    std::string Path;
    std::vector<std::string> Removed;
    Status S = saveCheckpoint(Dir, make(Step), Keep, Path, Removed);
    EXPECT_TRUE(S.ok()) << S.message();
    return Path;
  }

  std::string readError(const std::string &Path) {
    Checkpoint C;
    Status S = readCheckpoint(Path, C);
    EXPECT_FALSE(S.ok());
    EXPECT_EQ(S.message().find('\n'), std::string::npos) << S.message();
    EXPECT_EQ(S.message().rfind(Path + ": ", 0), 0u) << S.message();
    return S.message();
  }

  std::string Dir;
  std::vector<TensorRecord> State;
  std::vector<unsigned char> Arena;
  fnn_device *Device = nullptr;
  std::vector<runtime::HostRegion> Regions;
};

TEST_F(CheckpointTest, RoundTrip) {
  std::string Path = Dir + "/one";
  ASSERT_TRUE(writeCheckpoint(Path, make(7)).ok());
  EXPECT_FALSE(fs::exists(Path + ".tmp"));
  Checkpoint C;
  Status S = readCheckpoint(Path, C);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(C.Step, 7);
  EXPECT_EQ(C.DataPosition, 8);
  EXPECT_EQ(C.Seed, 42u);
  ASSERT_EQ(C.Tensors.size(), State.size());
  for (size_t I = 0; I < State.size(); ++I) {
    const StateTensor &T = C.Tensors[I];
    EXPECT_EQ(T.Name, State[I].name);
    EXPECT_EQ(T.Role, State[I].kind);
    EXPECT_EQ(T.Dtype, State[I].dtype);
    EXPECT_EQ(T.Shape, State[I].shape);
    ASSERT_EQ(T.Bytes, static_cast<uint64_t>(State[I].numElements() *
                                             runtime::dtypeBytes(T.Dtype)));
    EXPECT_EQ(std::memcmp(T.Data, Arena.data() + State[I].offset, T.Bytes), 0)
        << T.Name;
  }
  // The same state gives the same bytes: runs can be compared by file.
  ASSERT_TRUE(writeCheckpoint(Dir + "/two", make(7)).ok());
  EXPECT_EQ(readFile(Path), readFile(Dir + "/two"));
  // A moved checkpoint keeps its tensors.
  Checkpoint Moved = std::move(C);
  EXPECT_EQ(std::memcmp(Moved.Tensors[0].Data, Arena.data(), 144), 0);
}

TEST_F(CheckpointTest, AStagedArenaGivesTheSameState) {
  // A device the host cannot address: the tensors are copies, the file the
  // same, and restoring writes through to the arena.
  const runtime::ArenaAccess Staged(Device, Arena.data(), false);
  std::vector<runtime::HostRegion> Copies;
  Checkpoint C = make(7);
  C.Tensors = arenaTensors(State, Staged, Copies);
  for (size_t I = 0; I < State.size(); ++I) {
    EXPECT_NE(C.Tensors[I].Data, Arena.data() + State[I].offset);
    EXPECT_EQ(std::memcmp(C.Tensors[I].Data, Arena.data() + State[I].offset,
                          C.Tensors[I].Bytes),
              0)
        << State[I].name;
  }
  ASSERT_TRUE(writeCheckpoint(Dir + "/staged", C).ok());
  ASSERT_TRUE(writeCheckpoint(Dir + "/direct", make(7)).ok());
  EXPECT_EQ(readFile(Dir + "/staged"), readFile(Dir + "/direct"));

  std::vector<unsigned char> Target(Arena.size(), 0);
  RestoreReport Report;
  Status S = restoreTensors(C.Tensors, "ck", State,
                            runtime::ArenaAccess(Device, Target.data(), false),
                            RestoreMode::Resume, Report);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Target, Arena);
}

TEST_F(CheckpointTest, DamageIsRefusedNamingTheFile) {
  std::string Path = Dir + "/ckpt";
  ASSERT_TRUE(writeCheckpoint(Path, make(3)).ok());
  const std::string Good = readFile(Path);

  std::string Flipped = Good;
  Flipped[Good.size() / 2] ^= 0x10;
  writeFile(Path, Flipped);
  EXPECT_TRUE(contains(readError(Path), "CRC-32C mismatch"));

  writeFile(Path, Good.substr(0, Good.size() - 100));
  EXPECT_TRUE(contains(readError(Path), "truncated or damaged checkpoint"));
  writeFile(Path, Good.substr(0, 20));
  EXPECT_TRUE(contains(readError(Path), "less than its header"));
  writeFile(Path, Good + "x");
  EXPECT_TRUE(contains(readError(Path), "truncated or damaged"));

  std::string Version = Good;
  Version[8] = 2;
  writeFile(Path, Version);
  EXPECT_TRUE(contains(readError(Path), "format version 2; this train.bin "
                                        "reads version 1"));

  writeFile(Path, "PK\3\4 not a checkpoint at all");
  EXPECT_TRUE(contains(readError(Path), "not a fastnn checkpoint"));
  EXPECT_TRUE(contains(readError(Dir + "/missing"), "cannot read"));
}

TEST_F(CheckpointTest, DirectoryKeepsTheNewestAndAnIndex) {
  for (int64_t Step : {10, 20, 30, 40, 50})
    save(Step, 3);
  for (int64_t Step : {10, 20})
    EXPECT_FALSE(fs::exists(Dir + "/model.ckpt-" + std::to_string(Step)));
  for (int64_t Step : {30, 40, 50})
    EXPECT_TRUE(fs::exists(Dir + "/model.ckpt-" + std::to_string(Step)));
  // TensorFlow's index syntax.
  EXPECT_EQ(readFile(Dir + "/checkpoint"),
            "model_checkpoint_path: \"model.ckpt-50\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-30\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-40\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-50\"\n");
  std::vector<std::string> Paths;
  ASSERT_TRUE(listCheckpoints(Dir, Paths).ok());
  EXPECT_EQ(Paths, (std::vector<std::string>{Dir + "/model.ckpt-30",
                                             Dir + "/model.ckpt-40",
                                             Dir + "/model.ckpt-50"}));

  Checkpoint C;
  std::string Path;
  bool Found = false;
  std::vector<std::string> Warnings;
  ASSERT_TRUE(loadLatestCheckpoint(Dir, C, Path, Found, Warnings).ok());
  EXPECT_TRUE(Found);
  EXPECT_EQ(Path, Dir + "/model.ckpt-50");
  EXPECT_EQ(C.Step, 50);
  EXPECT_TRUE(Warnings.empty());

  // keep_checkpoint_max=0 keeps every one; saving a step again replaces it.
  save(60, 0);
  save(60, 0);
  ASSERT_TRUE(listCheckpoints(Dir, Paths).ok());
  EXPECT_EQ(Paths.size(), 4u);
  EXPECT_EQ(Paths.back(), Dir + "/model.ckpt-60");
}

TEST_F(CheckpointTest, EmptyOrMissingDirectoryHasNone) {
  Checkpoint C;
  std::string Path;
  bool Found = true;
  std::vector<std::string> Warnings;
  ASSERT_TRUE(loadLatestCheckpoint(Dir, C, Path, Found, Warnings).ok());
  EXPECT_FALSE(Found);
  ASSERT_TRUE(
      loadLatestCheckpoint(Dir + "/nope", C, Path, Found, Warnings).ok());
  EXPECT_FALSE(Found);
}

TEST_F(CheckpointTest, WithoutAnIndexTheDirectoryIsScanned) {
  save(5);
  save(12);
  fs::remove(Dir + "/checkpoint");
  writeFile(Dir + "/model.ckpt-9x", "not ours");
  Checkpoint C;
  std::string Path;
  bool Found = false;
  std::vector<std::string> Warnings;
  ASSERT_TRUE(loadLatestCheckpoint(Dir, C, Path, Found, Warnings).ok());
  EXPECT_EQ(C.Step, 12);
  writeFile(Dir + "/checkpoint", "model_checkpoint_path \"x\"\n");
  Status S = loadLatestCheckpoint(Dir, C, Path, Found, Warnings);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), Dir + "/checkpoint:1: not a checkpoint "
                                          "index line"))
      << S.message();
}

TEST_F(CheckpointTest, AnUnreadableLatestFallsBackAndSaysSo) {
  save(10);
  std::string Latest = save(20);
  std::string Bytes = readFile(Latest);
  writeFile(Latest, Bytes.substr(0, Bytes.size() / 2));
  Checkpoint C;
  std::string Path;
  bool Found = false;
  std::vector<std::string> Warnings;
  ASSERT_TRUE(loadLatestCheckpoint(Dir, C, Path, Found, Warnings).ok());
  EXPECT_EQ(C.Step, 10);
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_TRUE(contains(Warnings[0], Latest + ": truncated or damaged"))
      << Warnings[0];
  EXPECT_TRUE(
      contains(Warnings[0], "using the older " + Dir + "/model.ckpt-10"))
      << Warnings[0];

  // None readable: an error naming each.
  writeFile(Dir + "/model.ckpt-10", "junk");
  Status S = loadLatestCheckpoint(Dir, C, Path, Found, Warnings);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), Latest + ": truncated")) << S.message();
  EXPECT_TRUE(contains(S.message(), Dir + "/model.ckpt-10: not a fastnn"))
      << S.message();
  EXPECT_TRUE(contains(S.message(), "no readable checkpoint to resume"));
}

TEST_F(CheckpointTest, AWriteKilledHalfwayLeavesThePreviousOne) {
  save(10);
  const std::string Index = readFile(Dir + "/checkpoint");
  pid_t Child = fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    setenv("FASTNN_TEST_KILL_IN_CHECKPOINT", "20", 1);
    std::string Path;
    std::vector<std::string> Removed;
    (void)saveCheckpoint(Dir, make(20), 5, Path, Removed);
    _exit(0); // Not reached: the hook kills the process.
  }
  int Wait = 0;
  ASSERT_EQ(waitpid(Child, &Wait, 0), Child);
  ASSERT_TRUE(WIFSIGNALED(Wait));
  EXPECT_EQ(WTERMSIG(Wait), SIGKILL);

  // Half a file under the temporary name; the index and the previous
  // checkpoint untouched.
  std::string Temp = Dir + "/model.ckpt-20.tmp";
  ASSERT_TRUE(fs::exists(Temp));
  EXPECT_FALSE(fs::exists(Dir + "/model.ckpt-20"));
  EXPECT_EQ(readFile(Dir + "/checkpoint"), Index);
  Checkpoint C;
  std::string Path;
  bool Found = false;
  std::vector<std::string> Warnings;
  ASSERT_TRUE(loadLatestCheckpoint(Dir, C, Path, Found, Warnings).ok());
  EXPECT_EQ(C.Step, 10);
  EXPECT_TRUE(Warnings.empty());

  std::vector<std::string> Removed;
  ASSERT_TRUE(removeIncompleteWrites(Dir, Removed).ok());
  EXPECT_EQ(Removed, std::vector<std::string>{Temp});
  EXPECT_FALSE(fs::exists(Temp));
  EXPECT_TRUE(fs::exists(Dir + "/model.ckpt-10"));
}

/// A save that fails leaves the directory as it was: the previous
/// checkpoint, the index naming it, no temporary file and no unindexed new
/// checkpoint. Returns the failure's message.
class CheckpointWriteFaultTest : public CheckpointTest {
protected:
  std::string failedSave(int64_t Step, int64_t Keep = 5) {
    const std::string Index = readFile(Dir + "/checkpoint");
    std::string Path;
    std::vector<std::string> Removed;
    Status S = saveCheckpoint(Dir, make(Step), Keep, Path, Removed);
    EXPECT_FALSE(S.ok());
    EXPECT_TRUE(S.isIoError());
    EXPECT_EQ(S.message().find('\n'), std::string::npos) << S.message();
    EXPECT_TRUE(Removed.empty());
    EXPECT_EQ(readFile(Dir + "/checkpoint"), Index);
    std::vector<std::string> Left;
    for (const auto &Entry : fs::directory_iterator(Dir))
      Left.push_back(Entry.path().filename().string());
    std::sort(Left.begin(), Left.end());
    EXPECT_EQ(Left, (std::vector<std::string>{"checkpoint", "model.ckpt-10"}));
    Checkpoint C;
    bool Found = false;
    std::vector<std::string> Warnings;
    EXPECT_TRUE(loadLatestCheckpoint(Dir, C, Path, Found, Warnings).ok());
    EXPECT_EQ(C.Step, 10);
    return S.message();
  }
};

TEST_F(CheckpointWriteFaultTest, ACheckpointOnAFullDisk) {
  save(10);
  const std::string Path = Dir + "/model.ckpt-20";
  linkToDevFull(Path + ".tmp");
  EXPECT_EQ(failedSave(20), Path +
                                ": cannot write: No space left on device "
                                "(writing " +
                                Path + ".tmp failed; it is removed)");
}

TEST_F(CheckpointWriteFaultTest, AnIndexOnAFullDiskKeepsTheOldestToo) {
  save(10);
  // With keep_checkpoint_max=1 the new checkpoint would replace the old
  // one: the index must be written before model.ckpt-10 goes.
  linkToDevFull(Dir + "/checkpoint.tmp");
  EXPECT_EQ(failedSave(20, 1),
            Dir +
                "/checkpoint: cannot write: No space left on device "
                "(writing " +
                Dir + "/checkpoint.tmp failed; it is removed)");
}

TEST_F(CheckpointWriteFaultTest, AShortWriteThenEFBIG) {
  save(10);
  FileSizeLimit Limit(100);
  EXPECT_TRUE(contains(failedSave(20), ": cannot write: File too large "
                                       "(writing " +
                                           Dir + "/model.ckpt-20.tmp"));
}

TEST_F(CheckpointWriteFaultTest, ARenameThatFails) {
  save(10);
  // A directory in the way (with a file in it) refuses the rename.
  const std::string Path = Dir + "/model.ckpt-20";
  fs::create_directories(Path + "/x");
  Status S = writeCheckpoint(Path, make(20));
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(S.isIoError());
  EXPECT_TRUE(contains(S.message(), Path + ": cannot write: ")) << S.message();
  EXPECT_TRUE(contains(S.message(),
                       "(renaming " + Path + ".tmp failed; it is removed)"))
      << S.message();
  EXPECT_FALSE(fs::exists(Path + ".tmp"));
  fs::remove_all(Path);
  // The directory is then as the failed save leaves it.
  linkToDevFull(Path + ".tmp");
  failedSave(20);
}

TEST_F(CheckpointTest, ResumeNeedsExactlyTheModelsState) {
  Checkpoint C = make(1);
  std::vector<unsigned char> Target(Arena.size(), 0);
  RestoreReport Report;
  Status S = restoreTensors(C.Tensors, "ck", State, access(Target),
                            RestoreMode::Resume, Report);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Report.Restored, 6);
  EXPECT_EQ(Target, Arena);

  std::vector<TensorRecord> Other = State;
  Other[5].shape = {5, 4};
  S = restoreTensors(C.Tensors, "ck", Other, access(Target),
                     RestoreMode::Resume, Report);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "ck: tensor 'fc/w': checkpoint trainable "
                                    "dtype 0 [10, 4] vs model trainable "
                                    "dtype 0 [5, 4]"))
      << S.message();
  EXPECT_TRUE(contains(S.message(), "another train_dir")) << S.message();

  Other = State;
  Other.pop_back();
  S = restoreTensors(C.Tensors, "ck", Other, access(Target),
                     RestoreMode::Resume, Report);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "holds tensor 'fc/w'")) << S.message();

  Other = State;
  Other[3].name = "conv/w/Adam";
  S = restoreTensors(C.Tensors, "ck", Other, access(Target),
                     RestoreMode::Resume, Report);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "has no tensor 'conv/w/Adam'"));
}

TEST_F(CheckpointTest, FinetuneSkipsWhatDiffersAndTheSlots) {
  Checkpoint C = make(1);
  // A model with another classifier and a layer the checkpoint lacks.
  std::vector<TensorRecord> Model = State;
  Model[5].shape = {5, 4};
  Model.push_back(record("extra/b", FNN_STATE_TRAINABLE, {2}, 480));
  std::vector<unsigned char> Target(Arena.size(), 0);
  RestoreReport Report;
  Status S = restoreTensors(C.Tensors, "ck", Model, access(Target),
                            RestoreMode::Finetune, Report);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Report.Restored, 3);
  ASSERT_EQ(Report.Skipped.size(), 1u);
  EXPECT_EQ(Report.Skipped[0], "'fc/w': checkpoint trainable dtype 0 [10, 4] "
                               "vs model trainable dtype 0 [5, 4]");
  EXPECT_EQ(Report.Missing, std::vector<std::string>{"extra/b"});
  // Parameters and statistics copied; slots and the classifier untouched.
  EXPECT_EQ(std::memcmp(Target.data(), Arena.data(), 176), 0);
  for (size_t I = 176; I < Target.size(); ++I)
    ASSERT_EQ(Target[I], 0) << I;

  std::vector<TensorRecord> Unrelated = {
      record("other", FNN_STATE_TRAINABLE, {3}, 0)};
  S = restoreTensors(C.Tensors, "ck", Unrelated, access(Target),
                     RestoreMode::Finetune, Report);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "no tensor matches")) << S.message();
}

TEST_F(CheckpointTest, EvaluateFillsTheEvaluationModel) {
  Checkpoint C = make(1);
  // The evaluation arena holds parameters and statistics elsewhere.
  std::vector<TensorRecord> Eval = {
      record("fc/w", FNN_STATE_TRAINABLE, {10, 4}, 0),
      record("bn/mean", FNN_STATE_STATISTIC, {4}, 160),
      record("conv/w", FNN_STATE_TRAINABLE, {4, 1, 3, 3}, 176),
      record("conv/b", FNN_STATE_TRAINABLE, {4}, 320)};
  std::vector<unsigned char> Target(336, 0);
  RestoreReport Report;
  Status S = restoreTensors(C.Tensors, "ck", Eval, access(Target),
                            RestoreMode::Evaluate, Report);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Report.Restored, 4);
  EXPECT_EQ(std::memcmp(Target.data(), Arena.data() + 328, 160), 0);
  EXPECT_EQ(std::memcmp(Target.data() + 176, Arena.data(), 144), 0);

  Eval[0].shape = {5, 4};
  S = restoreTensors(C.Tensors, "ck", Eval, access(Target),
                     RestoreMode::Evaluate, Report);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "'fc/w'")) << S.message();
}

} // namespace
