//===- StepHooksTest.cpp - The training loop's step and hooks -------------===//

#include "fastnn/trainer/StepHooks.h"
#include "fastnn/trainer/Checkpoint.h"
#include "fastnn/trainer/StopSignal.h"
#include "fastnn/trainer/TrainingHooks.h"

#include "fastnn/runtime/model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <limits>
#include <pthread.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace fastnn::trainer;
namespace fs = std::filesystem;

/// Records every call it sees as a line of Log.
class RecordingHook : public StepHook {
public:
  RecordingHook(std::string Name, std::vector<std::string> &Log,
                int64_t FailAtStep = -1)
      : Name(std::move(Name)), Log(Log), FailAtStep(FailAtStep) {}
  Status beforeCall(int64_t First) override {
    Log.push_back(Name + " before " + std::to_string(First));
    return Status::success();
  }
  Status afterCall(const CallSpan &Call) override {
    Log.push_back(Name + " call " + std::to_string(Call.FirstStep));
    return Status::success();
  }
  Status afterStep(const StepResult &R) override {
    Log.push_back(Name + " step " + std::to_string(R.Step));
    if (R.Step == FailAtStep)
      return Status::error(Name + " failed at " + std::to_string(R.Step));
    return Status::success();
  }
  Status end(int64_t LastStep) override {
    Log.push_back(Name + " end " + std::to_string(LastStep));
    return Status::success();
  }

private:
  std::string Name;
  std::vector<std::string> &Log;
  int64_t FailAtStep;
};

/// A compiled step of StepsPerCall steps whose input lasts InputSteps.
class FakeStep : public StepCall {
public:
  FakeStep(int64_t StepsPerCall, int64_t InputSteps,
           std::vector<std::string> &Log)
      : StepsPerCall(StepsPerCall), InputSteps(InputSteps), Log(Log) {}
  Status run(int64_t First, CallSpan &Span,
             std::vector<StepResult> &Results) override {
    Log.push_back("run " + std::to_string(First));
    if (First > InputSteps)
      return Status::success();
    Span.FirstStep = First;
    for (int64_t Step = First; Step < First + StepsPerCall; ++Step) {
      StepResult R;
      R.Step = Step;
      R.Loss = 1.0f / static_cast<float>(Step);
      Results.push_back(R);
    }
    return Status::success();
  }

private:
  int64_t StepsPerCall, InputSteps;
  std::vector<std::string> &Log;
};

int NeverStop() { return 0; }

TEST(StepHooksTest, EachCallThenItsStepsThroughEveryHookInOrder) {
  std::vector<std::string> Log;
  StepHooks Hooks;
  Hooks.add(std::make_unique<RecordingHook>("a", Log));
  Hooks.add(std::make_unique<RecordingHook>("b", Log));
  FakeStep Step(2, 100, Log);
  LoopEnd End;
  // A resumed run: steps 5 to 8 in calls of two.
  ASSERT_TRUE(runSteps(Step, Hooks, 5, 8, NeverStop, End).ok());
  EXPECT_FALSE(End.InputEnded);
  EXPECT_EQ(End.StopSignal, 0);
  EXPECT_EQ(End.LastStep, 8);
  ASSERT_TRUE(Hooks.end(End.LastStep).ok());
  EXPECT_EQ(
      Log, (std::vector<std::string>{
               "a before 5", "b before 5", "run 5",    "a call 5", "b call 5",
               "a step 5",   "b step 5",   "a step 6", "b step 6", "a before 7",
               "b before 7", "run 7",      "a call 7", "b call 7", "a step 7",
               "b step 7",   "a step 8",   "b step 8", "a end 8",  "b end 8"}));
}

TEST(StepHooksTest, TheInputEndingStopsTheLoopBeforeItsHooks) {
  std::vector<std::string> Log;
  StepHooks Hooks;
  Hooks.add(std::make_unique<RecordingHook>("a", Log));
  FakeStep Step(1, 2, Log);
  LoopEnd End;
  ASSERT_TRUE(runSteps(Step, Hooks, 1, 10, NeverStop, End).ok());
  EXPECT_TRUE(End.InputEnded);
  EXPECT_EQ(End.LastStep, 2);
  EXPECT_EQ(Log.back(), "run 3");
  EXPECT_EQ(Log[Log.size() - 2], "a before 3");

  // An input that ends at once runs no step.
  Log.clear();
  FakeStep Empty(1, 0, Log);
  ASSERT_TRUE(runSteps(Empty, Hooks, 1, 10, NeverStop, End).ok());
  EXPECT_TRUE(End.InputEnded);
  EXPECT_EQ(End.LastStep, 0);
}

TEST(StepHooksTest, TheFirstErrorStopsTheLoopAndTheLaterHooks) {
  std::vector<std::string> Log;
  StepHooks Hooks;
  Hooks.add(std::make_unique<RecordingHook>("a", Log, 2));
  Hooks.add(std::make_unique<RecordingHook>("b", Log));
  FakeStep Step(1, 100, Log);
  LoopEnd End;
  Status S = runSteps(Step, Hooks, 1, 5, NeverStop, End);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), "a failed at 2");
  EXPECT_EQ(End.LastStep, 1);
  EXPECT_EQ(Log.back(), "a step 2");
}

TEST(StepHooksTest, AStopEndsTheLoopAfterTheWholeCallInFlight) {
  std::vector<std::string> Log;
  StepHooks Hooks;
  Hooks.add(std::make_unique<RecordingHook>("a", Log));
  // A sunk loop of three steps a call; the stop comes during the second.
  FakeStep Step(3, 100, Log);
  int Asked = 0;
  LoopEnd End;
  ASSERT_TRUE(
      runSteps(
          Step, Hooks, 1, 30, [&] { return ++Asked == 2 ? SIGTERM : 0; }, End)
          .ok());
  EXPECT_EQ(End.StopSignal, SIGTERM);
  EXPECT_EQ(End.LastStep, 6);
  EXPECT_FALSE(End.InputEnded);
  EXPECT_EQ(Log.back(), "a step 6");
  // By default a hook does at a stop what it does at the end.
  ASSERT_TRUE(Hooks.stop(End.LastStep).ok());
  EXPECT_EQ(Log.back(), "a end 6");

  // The loop does not ask after its last call: there is nothing to stop.
  Log.clear();
  Asked = 0;
  ASSERT_TRUE(runSteps(
                  Step, Hooks, 1, 6, [&] { return ++Asked, SIGINT; }, End)
                  .ok());
  EXPECT_EQ(Asked, 1);
  EXPECT_EQ(End.StopSignal, SIGINT);
  EXPECT_EQ(End.LastStep, 3);
  ASSERT_TRUE(runSteps(
                  Step, Hooks, 4, 6, [&] { return ++Asked, SIGINT; }, End)
                  .ok());
  EXPECT_EQ(Asked, 1);
  EXPECT_EQ(End.StopSignal, 0);
  EXPECT_EQ(End.LastStep, 6);
}

namespace {

/// Sends Signal to the process, as kill(1) and a scheduler do (the watcher
/// never sees a signal raise() sends to one thread), and waits for the
/// watcher to record it.
int signalAndWait(int Signal) {
  kill(getpid(), Signal);
  for (int Waited = 0; Waited < 500 && StopSignals::received() == 0; ++Waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return StopSignals::received();
}

[[noreturn]] void waitForTheEnd() {
  for (;;)
    std::this_thread::sleep_for(std::chrono::seconds(1));
}

/// As in a process that starts with SIGTERM and SIGINT unblocked, their
/// default actions: a death test's child inherits the parent's mask.
void freshSignals() {
  sigset_t Both;
  sigemptyset(&Both);
  sigaddset(&Both, SIGTERM);
  sigaddset(&Both, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &Both, nullptr);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
}

} // namespace

// Each death test runs in a process of its own that watches the signals
// from its start, as train.bin does.
TEST(StopSignalsTest, TheFirstSignalIsRecordedTheSecondEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        freshSignals();
        StopSignals Signals;
        if (StopSignals::received() != 0 || signalAndWait(SIGINT) != SIGINT)
          std::_Exit(1);
        kill(getpid(), SIGTERM);
        waitForTheEnd();
      },
      testing::ExitedWithCode(128 + SIGTERM), "SIGINT: stopping after");
  EXPECT_STREQ(stopSignalName(SIGINT), "SIGINT");
  EXPECT_STREQ(stopSignalName(SIGTERM), "SIGTERM");
}

TEST(StopSignalsTest, OutsideAStopSignalsASignalEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        freshSignals();
        watchStopSignals();
        kill(getpid(), SIGTERM);
        waitForTheEnd();
      },
      testing::KilledBySignal(SIGTERM), "");
  EXPECT_EXIT(
      {
        freshSignals();
        { StopSignals Signals; }
        kill(getpid(), SIGINT);
        waitForTheEnd();
      },
      testing::KilledBySignal(SIGINT), "");
}

TEST(StopSignalsTest, ASignalIgnoredAtTheStartStaysIgnored) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        freshSignals();
        std::signal(SIGINT, SIG_IGN);
        StopSignals Signals;
        kill(getpid(), SIGINT);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (StopSignals::received() != 0)
          std::_Exit(1);
        std::_Exit(signalAndWait(SIGTERM) == SIGTERM ? 0 : 2);
      },
      testing::ExitedWithCode(0), "");
}

// Neither the thread that watches nor any thread started after it, the
// ones that run oneDNN's kernels among them, takes the signals.
TEST(StopSignalsTest, OnlyTheWatcherTakesTheSignals) {
  watchStopSignals();
  sigset_t Started;
  std::thread([&] { pthread_sigmask(SIG_BLOCK, nullptr, &Started); }).join();
  EXPECT_EQ(sigismember(&Started, SIGTERM), 1);
  EXPECT_EQ(sigismember(&Started, SIGINT), 1);
}

TEST(StepHooksTest, ANonFiniteLossStopsTheRun) {
  NanLossHook Hook;
  StepResult R;
  R.Step = 3;
  R.Rate = 0.5f;
  R.Loss = 2.0f;
  EXPECT_TRUE(Hook.afterStep(R).ok());
  R.Loss = std::numeric_limits<float>::quiet_NaN();
  Status S = Hook.afterStep(R);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(
      S.message().rfind("step 3: the loss is nan at learning rate 0.5", 0), 0u)
      << S.message();
  R.Loss = std::numeric_limits<float>::infinity();
  EXPECT_NE(Hook.afterStep(R).message().find("infinite"), std::string::npos);
}

TEST(StepHooksTest, LossScaleCountsTheSkippedUpdates) {
  ProgressLine Progress(false);
  LossScaleHook Hook(Progress);
  StepResult R;
  R.HasLossScale = true;
  for (auto [Scale, Skipped] : {std::pair{1024.0f, 0.0f},
                                {512.0f, 1.0f},
                                {512.0f, 0.0f},
                                {256.0f, 1.0f}}) {
    R.LossScale = Scale;
    R.Skipped = Skipped;
    ++R.Step;
    ASSERT_TRUE(Hook.afterStep(R).ok());
  }
  EXPECT_EQ(Hook.skippedUpdates(), 2);
  EXPECT_EQ(Hook.lossScale(), 256.0f);
}

/// Checkpoints of a two-tensor state at every second step and at the end.
TEST(StepHooksTest, CheckpointsAtTheirStepsAndAfterTheLast) {
  std::string Template = ::testing::TempDir() + "step_hooks_XXXXXX";
  ASSERT_TRUE(mkdtemp(Template.data()));
  const std::string Dir = Template;
  std::string Error;
  fnn_device *Device = fastnn::runtime::createModelDevice(0, Error);
  ASSERT_TRUE(Device) << Error;
  std::vector<fastnn::runtime::TensorRecord> State(2);
  State[0].name = "w";
  State[0].shape = {4};
  State[1].name = "b";
  State[1].shape = {};
  State[1].offset = 16;
  std::vector<float> Arena = {1, 2, 3, 4, 5};
  fastnn::runtime::ArenaAccess Access(
      Device, reinterpret_cast<unsigned char *>(Arena.data()));

  Hparams H;
  ASSERT_TRUE(
      H.parseFlags({"--save_checkpoints_steps=2", "--keep_checkpoint_max=0"})
          .ok());
  ProgressLine Progress(false);
  CheckpointState Latest;
  // A run resumed after step 10 with 30 batches consumed.
  CheckpointHook Hook(H, Dir, 30, State, Access, Latest, Progress);
  StepResult R;
  for (R.Step = 11; R.Step <= 13; ++R.Step) {
    Arena[4] = static_cast<float>(R.Step);
    ASSERT_TRUE(Hook.afterStep(R).ok());
  }
  ASSERT_TRUE(Hook.end(13).ok());
  // Step 12 and the last step, 13; nothing more once it is saved.
  ASSERT_TRUE(Hook.end(13).ok());
  std::vector<std::string> Paths;
  ASSERT_TRUE(listCheckpoints(Dir, Paths).ok());
  ASSERT_EQ(Paths.size(), 2u);
  EXPECT_EQ(Latest.Step, 13);
  EXPECT_EQ(Latest.Path, Paths[1]);
  Checkpoint C;
  ASSERT_TRUE(readCheckpoint(Paths[0], C).ok());
  EXPECT_EQ(C.Step, 12);
  EXPECT_EQ(C.DataPosition, 32);
  ASSERT_EQ(C.Tensors.size(), 2u);
  EXPECT_EQ(reinterpret_cast<const float *>(C.Tensors[1].Data)[0], 12.0f);
  ASSERT_TRUE(readCheckpoint(Paths[1], C).ok());
  EXPECT_EQ(C.Step, 13);
  EXPECT_EQ(C.DataPosition, 33);
  fnn_device_destroy(Device);
  fs::remove_all(Dir);
}

} // namespace
