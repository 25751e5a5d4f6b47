//===- ObservabilityTest.cpp - TensorBoard events and timelines -----------===//
//
// The files are read back by their real consumers in FASTNN_PYTHON (the
// project's .venv, where scripts/install-deps.sh installs tensorboard):
// TensorBoard's EventAccumulator for the events and Python's json for the
// timelines. A consumer that is missing fails the test. Writes that fail
// (WriteFaults.h) leave files the consumers still read.
//
//===----------------------------------------------------------------------===//

#include "fastnn/trainer/BestEffortOutput.h"
#include "fastnn/trainer/EventWriter.h"
#include "fastnn/trainer/Timeline.h"

#include "WriteFaults.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace fastnn::trainer;
using namespace fastnn::trainer::test;

namespace {

namespace fs = std::filesystem;

class ObservabilityTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string Template = ::testing::TempDir() + "observability_XXXXXX";
    ASSERT_TRUE(mkdtemp(Template.data()));
    Dir = Template;
  }
  void TearDown() override { fs::remove_all(Dir); }

  /// Runs a Python script (written to a file, so quoting is no issue);
  /// its stdout, and Ok false when it failed.
  std::string python(const std::string &Script, bool &Ok) {
    std::string Path = Dir + "/script.py";
    std::ofstream(Path) << Script;
    std::string Command =
        std::string(FASTNN_PYTHON) + " " + Path + " 2>" + Dir + "/stderr.txt";
    FILE *Pipe = popen(Command.c_str(), "r");
    std::string Output;
    char Buffer[4096];
    size_t N;
    while (Pipe && (N = fread(Buffer, 1, sizeof(Buffer), Pipe)) > 0)
      Output.append(Buffer, N);
    Ok = Pipe && pclose(Pipe) == 0;
    return Output;
  }

  /// What the last python() call wrote to stderr.
  std::string errors() const {
    std::ifstream File(Dir + "/stderr.txt");
    return std::string(std::istreambuf_iterator<char>(File), {});
  }

  /// What TensorBoard's loader reads from the event file Path, one line per
  /// event: "file_version", "session_log STEP" or "summary STEP TAG VALUE".
  std::string events(const std::string &Path) {
    bool Ok = false;
    std::string Output =
        python("import os\n"
               "os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
               "from tensorboard.backend.event_processing.event_file_loader "
               "import LegacyEventFileLoader\n"
               "for e in LegacyEventFileLoader('" +
                   Path +
                   "').Load():\n"
                   "    what = e.WhichOneof('what')\n"
                   "    if what == 'summary':\n"
                   "        for v in e.summary.value:\n"
                   "            print(what, e.step, v.tag, v.simple_value)\n"
                   "    else:\n"
                   "        print(what if what == 'file_version' else\n"
                   "              f'{what} {e.step}')\n",
               Ok);
    EXPECT_TRUE(Ok) << FASTNN_PYTHON
                    << " could not read the events: " << errors();
    return Output;
  }

  std::string Dir;
};

TEST_F(ObservabilityTest, TensorBoardReadsTheScalars) {
  EventWriter Writer(Dir + "/run");
  // Nothing is created before the first write.
  EXPECT_EQ(Writer.path(), "");
  EXPECT_FALSE(fs::exists(Dir + "/run"));
  Status S = Writer.scalars(10, {{"loss", 2.5f}, {"top1_accuracy", 0.25f}});
  ASSERT_TRUE(S.ok()) << S.message();
  std::string Name = fs::path(Writer.path()).filename().string();
  EXPECT_EQ(Name.rfind("events.out.tfevents.", 0), 0u) << Name;
  ASSERT_TRUE(Writer.scalars(20, {{"loss", 1.75f}}).ok());
  // Readable while open: each event is written through.
  EXPECT_GT(fs::file_size(Writer.path()), 60u);

  ASSERT_TRUE(Writer.scalars(30, {{"loss", 1.5f}}).ok());
  // A run resumed at step 20 (in the same second: another file) replaces
  // the steps from 20 on.
  EventWriter Second(Dir + "/run");
  ASSERT_TRUE(Second.sessionStart(20).ok());
  EXPECT_NE(Second.path(), Writer.path());
  ASSERT_TRUE(Second.scalars(20, {{"loss", 1.25f}}).ok());
  ASSERT_TRUE(Writer.close().ok());
  ASSERT_TRUE(Second.close().ok());
  EXPECT_FALSE(Writer.scalars(40, {{"loss", 1.0f}}).ok());

  bool Ok = false;
  std::string Output =
      python("import os\n"
             "os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
             "from tensorboard.backend.event_processing.event_accumulator "
             "import EventAccumulator\n"
             "acc = EventAccumulator('" +
                 Dir +
                 "/run')\n"
                 "acc.Reload()\n"
                 "for tag in sorted(acc.Tags()['scalars']):\n"
                 "    for e in acc.Scalars(tag):\n"
                 "        print(tag, e.step, repr(e.value))\n",
             Ok);
  // The project's scripts install tensorboard into FASTNN_PYTHON (.venv).
  ASSERT_TRUE(Ok) << FASTNN_PYTHON
                  << " could not read the events: " << errors();
  EXPECT_EQ(Output, "loss 10 2.5\nloss 20 1.25\ntop1_accuracy 10 0.25\n");
}

TEST_F(ObservabilityTest, AFailedEventIsCutOffAndTheNextOneWritten) {
  EventWriter Writer(Dir + "/run");
  ASSERT_TRUE(Writer.scalars(10, {{"loss", 2.5f}}).ok());
  const auto Whole = fs::file_size(Writer.path());
  {
    // The next event crosses the limit: part of it is written, then EFBIG.
    FileSizeLimit Limit(Whole + 20);
    Status S = Writer.scalars(20, {{"loss", 2.0f}});
    ASSERT_FALSE(S.ok());
    EXPECT_TRUE(S.isIoError());
    EXPECT_EQ(S.message(), Writer.path() + ": cannot write a TensorBoard "
                                           "event: File too large");
    EXPECT_EQ(fs::file_size(Writer.path()), Whole);
  }
  ASSERT_TRUE(Writer.scalars(30, {{"loss", 1.5f}}).ok());
  ASSERT_TRUE(Writer.close().ok());
  EXPECT_EQ(events(Writer.path()), "file_version\n"
                                   "summary 10 loss 2.5\n"
                                   "summary 30 loss 1.5\n");
}

TEST_F(ObservabilityTest, AStartThatFailsGoesAheadOfTheNextEvent) {
  EventWriter Writer(Dir + "/run");
  {
    // Not a byte fits: the file is created and stays empty.
    FileSizeLimit Limit(0);
    ASSERT_FALSE(Writer.sessionStart(5).ok());
    EXPECT_EQ(fs::file_size(Writer.path()), 0u);
    ASSERT_FALSE(Writer.scalars(6, {{"loss", 3.0f}}).ok());
  }
  ASSERT_TRUE(Writer.scalars(7, {{"loss", 2.0f}}).ok());
  ASSERT_TRUE(Writer.close().ok());
  EXPECT_EQ(events(Writer.path()), "file_version\n"
                                   "session_log 5\n"
                                   "summary 7 loss 2.0\n");
}

TEST_F(ObservabilityTest, AnEventDirectoryThatCannotBeMadeIsAnIoError) {
  std::ofstream(Dir + "/file") << "not a directory";
  EventWriter Writer(Dir + "/file/run");
  Status S = Writer.scalars(1, {{"loss", 1.0f}});
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(S.isIoError());
  EXPECT_EQ(
      S.message().rfind(Dir + "/file/run: cannot create the directory", 0), 0u)
      << S.message();
}

TEST_F(ObservabilityTest, BestEffortOutputWarnsOncePerFailingStretch) {
  BestEffortOutput Output("timelines");
  const Status Full = Status::ioError("t.json: cannot write: No space left");
  EXPECT_EQ(Output.note(Status::success()), "");
  EXPECT_EQ(Output.note(Full),
            "train.bin: warning: t.json: cannot write: No space left; "
            "timelines are dropped until one can be written; training goes "
            "on");
  EXPECT_EQ(Output.note(Full), "");
  EXPECT_EQ(Output.note(Status::success()),
            "train.bin: timelines are written again after 2 failed writes");
  EXPECT_EQ(Output.note(Status::success()), "");
  EXPECT_NE(Output.note(Full), "");
  EXPECT_EQ(Output.note(Status::success()),
            "train.bin: timelines are written again after 1 failed write");
}

TEST_F(ObservabilityTest, ATimelineOnAFullDiskLeavesThePreviousFile) {
  std::string Path = Dir + "/timeline-step-3.json";
  std::ofstream(Path) << "previous";
  linkToDevFull(Path + ".tmp");
  Status S = writeChromeTrace(Path, "train.bin step 3", {"step"},
                              {{"step 3", "step", 0, 0, 1000}});
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(S.isIoError());
  EXPECT_EQ(S.message(), Path +
                             ": cannot write: No space left on device "
                             "(writing " +
                             Path + ".tmp failed; it is removed)");
  EXPECT_FALSE(fs::exists(fs::symlink_status(Path + ".tmp")));
  std::ifstream In(Path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(In), {}), "previous");
}

TEST_F(ObservabilityTest, TimelineIsChromeTraceJson) {
  std::vector<TimelineSpan> Spans = {
      {"step 3", "step", 0, 1000000, 1900000},
      {"data wait", "input", 1, 1000000, 1250500},
      {"conv2d \"conv1\"/Conv2D", "kernel", 2, 1300000, 1400000},
      {"matmul fc\\1", "kernel", 2, 1400000, 1800000}};
  std::string Json =
      chromeTraceJson("train.bin step 3", {"step", "input", "kernels"}, Spans);
  EXPECT_NE(Json.find("\"dur\": 250.500"), std::string::npos) << Json;
  std::string Path = Dir + "/timeline-step-3.json";
  Status S = writeChromeTrace(Path, "train.bin step 3",
                              {"step", "input", "kernels"}, Spans);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_FALSE(fs::exists(Path + ".tmp"));

  bool Ok = false;
  std::string Output = python(
      "import json\n"
      "t = json.load(open('" +
          Path +
          "'))\n"
          "for e in t['traceEvents']:\n"
          "    if e['ph'] == 'X':\n"
          "        print(e['cat'], e['tid'], e['ts'], e['dur'], e['name'])\n"
          "    else:\n"
          "        print(e['ph'], e['name'], e['args']['name'])\n",
      Ok);
  ASSERT_TRUE(Ok) << FASTNN_PYTHON
                  << " could not read the timeline: " << errors();
  EXPECT_EQ(Output, "M process_name train.bin step 3\n"
                    "M thread_name step\n"
                    "M thread_name input\n"
                    "M thread_name kernels\n"
                    "step 0 0.0 900.0 step 3\n"
                    "input 1 0.0 250.5 data wait\n"
                    "kernel 2 300.0 100.0 conv2d \"conv1\"/Conv2D\n"
                    "kernel 2 400.0 400.0 matmul fc\\1\n");
}

} // namespace
