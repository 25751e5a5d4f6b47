//===- HparamsTest.cpp - Hyperparameter files, flags and compiled config --===//

#include "fastnn/trainer/Hparams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

using namespace fastnn::trainer;

namespace {

bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

/// A value each key accepts, and values it refuses, derived from the table
/// so that a key added later is covered too.
std::string goodValue(const HparamSpec &Spec) {
  switch (Spec.Type) {
  case HparamType::Bool:
    return "False";
  case HparamType::Int:
    return std::to_string(
        static_cast<int64_t>(std::isfinite(Spec.Min) ? Spec.Min + 3 : 3));
  case HparamType::Float:
    return Spec.Max <= 0 ? "-0.25" : "0.5";
  case HparamType::String:
    if (Spec.Choices) {
      std::string Choices = Spec.Choices;
      return Choices.substr(Choices.rfind(',') + 1);
    }
    return "some_value";
  }
  return "";
}

TEST(HparamsTest, EveryHparamsMdKeyIsInTheTable) {
  // shared/HPARAMS.md, every table, plus the keys it names in its text.
  const char *Keys[] = {"dataset_name",
                        "dataset_dir",
                        "num_sample_per_epoch",
                        "num_classes",
                        "train_files",
                        "preprocessing_name",
                        "shuffle_buffer_size",
                        "num_parallel_batches",
                        "prefetch_buffer_size",
                        "num_preprocessing_threads",
                        "datasets_use_caching",
                        "task_type",
                        "model_name",
                        "num_epochs",
                        "weight_decay",
                        "max_gradient_norm",
                        "batch_size",
                        "model_dir",
                        "ckpt_file_name",
                        "warmup_steps",
                        "warmup_scheme",
                        "decay_scheme",
                        "learning_rate_decay_factor",
                        "learning_rate_decay_type",
                        "learning_rate",
                        "end_learning_rate",
                        "optimizer",
                        "adadelta_rho",
                        "adagrad_initial_accumulator_value",
                        "adam_beta1",
                        "adam_beta2",
                        "opt_epsilon",
                        "ftrl_learning_rate_power",
                        "ftrl_initial_accumulator_value",
                        "ftrl_l1",
                        "ftrl_l2",
                        "momentum",
                        "rmsprop_momentum",
                        "rmsprop_decay",
                        "stop_at_step",
                        "log_loss_every_n_iters",
                        "profile_every_n_iters",
                        "profile_at_task",
                        "log_device_placement",
                        "print_model_statistics",
                        "hooks",
                        "use_fp16",
                        "loss_scale",
                        "enable_paisoar",
                        "protocol",
                        "job_name",
                        "iterations_per_loop",
                        "save_checkpoints_steps",
                        "seed",
                        "deterministic"};
  for (const char *Key : Keys)
    EXPECT_NE(findHparam(Key), nullptr) << Key;
}

TEST(HparamsTest, DefaultsMatchHparamsMd) {
  Hparams H;
  EXPECT_EQ(H.getString("dataset_name"), "mock");
  EXPECT_FALSE(H.isSet("dataset_dir"));
  EXPECT_FALSE(H.isSet("num_sample_per_epoch"));
  EXPECT_EQ(H.getInt("num_classes"), 100);
  EXPECT_EQ(H.getInt("shuffle_buffer_size"), 1024);
  EXPECT_EQ(H.getInt("num_parallel_batches"), 8);
  EXPECT_EQ(H.getInt("prefetch_buffer_size"), 32);
  EXPECT_EQ(H.getInt("num_preprocessing_threads"), 16);
  EXPECT_FALSE(H.getBool("datasets_use_caching"));
  EXPECT_EQ(H.getString("task_type"), "pretrain");
  EXPECT_EQ(H.getString("model_name"), "inception_resnet_v2");
  EXPECT_EQ(H.getInt("num_epochs"), 100);
  EXPECT_DOUBLE_EQ(H.getFloat("weight_decay"), 0.00004);
  EXPECT_FALSE(H.isSet("max_gradient_norm"));
  EXPECT_EQ(H.getInt("batch_size"), 32);
  EXPECT_EQ(H.getInt("warmup_steps"), 0);
  EXPECT_DOUBLE_EQ(H.getFloat("learning_rate_decay_factor"), 0.94);
  EXPECT_EQ(H.getString("learning_rate_decay_type"), "exponential");
  EXPECT_DOUBLE_EQ(H.getFloat("learning_rate"), 0.01);
  EXPECT_DOUBLE_EQ(H.getFloat("end_learning_rate"), 0.0001);
  EXPECT_EQ(H.getString("optimizer"), "rmsprop");
  EXPECT_DOUBLE_EQ(H.getFloat("opt_epsilon"), 1.0);
  EXPECT_DOUBLE_EQ(H.getFloat("ftrl_learning_rate_power"), -0.5);
  EXPECT_EQ(H.getInt("stop_at_step"), 100);
  EXPECT_EQ(H.getInt("log_loss_every_n_iters"), 10);
  EXPECT_EQ(H.getString("hooks"),
            "StopAtStepHook,ProfilerHook,LoggingTensorHook,"
            "CheckpointSaverHook");
  EXPECT_TRUE(H.getBool("use_fp16"));
  EXPECT_DOUBLE_EQ(H.getFloat("loss_scale"), 1.0);
  EXPECT_TRUE(H.getBool("enable_paisoar"));
  EXPECT_EQ(H.getString("protocol"), "grpc");
  EXPECT_EQ(H.getString("job_name"), "worker");
  EXPECT_EQ(H.getInt("iterations_per_loop"), 1);
  for (const HparamSpec &Spec : hparamSpecs()) {
    EXPECT_EQ(H.isSet(Spec.Name), Spec.Default != nullptr) << Spec.Name;
    Hparams::Value V;
    if (Spec.Default)
      EXPECT_TRUE(parseHparamValue(Spec, Spec.Default, "default", V).ok())
          << Spec.Name;
  }
}

TEST(HparamsTest, EveryKeyAcceptsAGoodValue) {
  for (const HparamSpec &Spec : hparamSpecs()) {
    Hparams H;
    std::string Line = std::string(Spec.Name) + "=" + goodValue(Spec);
    Status S = H.parseText(Line + "\n", "good.txt");
    EXPECT_TRUE(S.ok()) << Line << ": " << S.message();
    EXPECT_TRUE(H.isGiven(Spec.Name));
    EXPECT_EQ(H.origin(Spec.Name), "good.txt:1");
  }
}

TEST(HparamsTest, EveryKeyRefusesABadValue) {
  for (const HparamSpec &Spec : hparamSpecs()) {
    std::vector<std::string> Bad;
    switch (Spec.Type) {
    case HparamType::Bool:
      Bad = {"yes", "TRUE", "2"};
      break;
    case HparamType::Int:
      Bad = {"1.5", "ten", "3e2"};
      if (std::isfinite(Spec.Min))
        Bad.push_back(std::to_string(static_cast<int64_t>(Spec.Min) - 1));
      break;
    case HparamType::Float:
      Bad = {"abc", "0.1.2", "nan", "inf"};
      if (std::isfinite(Spec.Min))
        Bad.push_back(std::to_string(Spec.Min - 1));
      if (std::isfinite(Spec.Max))
        Bad.push_back(std::to_string(Spec.Max + 1));
      break;
    case HparamType::String:
      if (Spec.Choices)
        Bad = {"bogus"};
      else if (Spec.Default)
        Bad = {""};
      break;
    }
    for (const std::string &Value : Bad) {
      Hparams H;
      Status S =
          H.parseText("\n" + std::string(Spec.Name) + "=" + Value, "bad.txt");
      ASSERT_FALSE(S.ok()) << Spec.Name << "=" << Value;
      EXPECT_EQ(S.message().rfind(std::string("bad.txt:2: ") + Spec.Name, 0),
                0u)
          << S.message();
      EXPECT_EQ(S.message().find('\n'), std::string::npos) << S.message();
    }
  }
}

TEST(HparamsTest, MessagesSayWhatIsWrong) {
  Hparams H;
  Status S = H.parseText("batch_size=abc\n"
                         "adam_beta1=1.0\n"
                         "optimizer=lamb\n"
                         "use_fp16=yes\n"
                         "hooks=StopAtStepHook,TimerHook\n"
                         "learning_rate_decay_factor=0\n",
                         "run.txt");
  ASSERT_FALSE(S.ok());
  const std::string &M = S.message();
  EXPECT_TRUE(contains(M, "run.txt:1: batch_size: expects an integer, got "
                          "'abc'"))
      << M;
  EXPECT_TRUE(contains(M, "run.txt:2: adam_beta1: 1.0 is out of range "
                          "(expects [0.0, 1.0))"))
      << M;
  EXPECT_TRUE(contains(M, "run.txt:3: optimizer: 'lamb' is not one of "
                          "adadelta,adagrad,adam,ftrl,momentum,sgd,rmsprop,"
                          "adamweightdecay"))
      << M;
  EXPECT_TRUE(contains(M, "run.txt:4: use_fp16: expects a bool")) << M;
  EXPECT_TRUE(contains(M, "run.txt:5: hooks: 'TimerHook' is not one of")) << M;
  EXPECT_TRUE(contains(M, "run.txt:6: learning_rate_decay_factor: 0 is out "
                          "of range (expects (0.0, 1.0])"))
      << M;
  // One line per error, all of them reported.
  EXPECT_EQ(std::count(M.begin(), M.end(), '\n'), 5);
}

TEST(HparamsTest, TfStyleBools) {
  for (const char *True : {"True", "true", "1"}) {
    Hparams H;
    ASSERT_TRUE(H.parseText(std::string("use_fp16=") + True, "f").ok());
    EXPECT_TRUE(H.getBool("use_fp16"));
  }
  for (const char *False : {"False", "false", "0"}) {
    Hparams H;
    ASSERT_TRUE(H.parseText(std::string("use_fp16=") + False, "f").ok());
    EXPECT_FALSE(H.getBool("use_fp16"));
  }
}

TEST(HparamsTest, UnknownKeySuggestsTheClosest) {
  Hparams H;
  // The seed document's own example misspells enable_paisoar.
  Status S = H.parseText("batch_size=128\nenable_paisora=True\n", "seed.txt");
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), "seed.txt:2: unknown key 'enable_paisora' (did you "
                         "mean 'enable_paisoar'?)");
  S = H.parseText("learning_rate_decay=0.5", "f");
  EXPECT_TRUE(contains(S.message(), "did you mean 'learning_rate_decay_type'"))
      << S.message();
  S = H.parseText("completely_unrelated_thing=1", "f");
  EXPECT_TRUE(contains(S.message(), "(see --help)")) << S.message();
  EXPECT_EQ(closestHparam("batchsize"), "batch_size");
  EXPECT_EQ(closestHparam("xyz"), "");
}

TEST(HparamsTest, CommentsBlankLinesAndSpaces) {
  Hparams H;
  Status S = H.parseText("# a comment\n\n  batch_size = 64  \r\n"
                         "\t# indented comment\nmodel_name=lenet\n",
                         "f.txt");
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(H.getInt("batch_size"), 64);
  EXPECT_EQ(H.origin("batch_size"), "f.txt:3");
  EXPECT_EQ(H.origin("model_name"), "f.txt:5");
  S = H.parseText("just_a_word\n", "g.txt");
  EXPECT_EQ(S.message(), "g.txt:1: expects key=value, got 'just_a_word'");
}

TEST(HparamsTest, DuplicateKeyIsAnError) {
  Hparams H;
  Status S =
      H.parseText("batch_size=64\noptimizer=sgd\nbatch_size=64\n", "dup.txt");
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), "dup.txt:3: batch_size: duplicate key (first given "
                         "at dup.txt:1)");
  S = H.parseFlags({"--seed=1", "--seed=2"});
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "--seed: seed: duplicate flag"))
      << S.message();
}

TEST(HparamsTest, FlagsOverrideTheFile) {
  Hparams H;
  ASSERT_TRUE(H.parseText("batch_size=64\noptimizer=sgd\n", "run.txt").ok());
  ASSERT_TRUE(
      H.parseFlags({"--batch_size=16", "--print_model_statistics"}).ok());
  EXPECT_EQ(H.getInt("batch_size"), 16);
  EXPECT_EQ(H.origin("batch_size"), "--batch_size");
  EXPECT_EQ(H.getString("optimizer"), "sgd");
  EXPECT_TRUE(H.getBool("print_model_statistics"));

  Status S = H.parseFlags({"--batch_sise=8"});
  EXPECT_EQ(S.message(), "--batch_sise: unknown key 'batch_sise' (did you "
                         "mean 'batch_size'?)");
  S = H.parseFlags({"--batch_size"});
  EXPECT_EQ(S.message(), "--batch_size: batch_size: expects "
                         "--batch_size=VALUE");
  S = H.parseFlags({"--learning_rate=-1"});
  EXPECT_TRUE(contains(S.message(), "--learning_rate: learning_rate: -1 is "
                                    "out of range"))
      << S.message();
}

TEST(HparamsTest, NoneUnsetsOptionalKeys) {
  Hparams H;
  ASSERT_TRUE(H.parseText("max_gradient_norm=5\n", "a").ok());
  EXPECT_DOUBLE_EQ(H.getFloat("max_gradient_norm"), 5.0);
  ASSERT_TRUE(H.parseFlags({"--max_gradient_norm=None"}).ok());
  EXPECT_FALSE(H.isSet("max_gradient_norm"));
  EXPECT_FALSE(H.parseText("batch_size=None", "b").ok());
}

TEST(HparamsTest, LowerCaseNoneIsAStringValue) {
  Hparams H;
  ASSERT_TRUE(H.parseText("preprocessing_name=none\n", "a").ok());
  EXPECT_TRUE(H.isSet("preprocessing_name"));
  EXPECT_EQ(H.getString("preprocessing_name"), "none");
  ASSERT_TRUE(H.parseFlags({"--preprocessing_name=None"}).ok());
  EXPECT_FALSE(H.isSet("preprocessing_name"));
}

TEST(HparamsTest, ParseFileNamesThePath) {
  std::string Path = ::testing::TempDir() + "hparams_test.txt";
  {
    std::ofstream File(Path);
    File << "batch_size=8\n\nnum_classes=0\n";
  }
  Hparams H;
  Status S = H.parseFile(Path);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), Path + ":3: num_classes: 0 is out of range "
                                "(expects >= 1)");
  EXPECT_EQ(H.getInt("batch_size"), 8);
  std::remove(Path.c_str());
  S = H.parseFile(Path);
  EXPECT_EQ(S.message(), Path + ": cannot open the hyperparameter file");
}

TEST(HparamsTest, CrossKeyChecks) {
  Hparams H;
  ASSERT_TRUE(H.parseText("iterations_per_loop=3\nstop_at_step=100\n"
                          "save_checkpoints_steps=30\n",
                          "loop.txt")
                  .ok());
  Status S = H.validate();
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), "loop.txt:2: stop_at_step=100 is not a multiple of "
                         "iterations_per_loop=3 (set at loop.txt:1)");

  Hparams D;
  ASSERT_TRUE(D.parseText("decay_scheme=luong5\n"
                          "learning_rate_decay_type=polynomial\n",
                          "lr.txt")
                  .ok());
  S = D.validate();
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(contains(S.message(), "lr.txt:1: decay_scheme: luong5 needs "
                                    "learning_rate_decay_type=exponential"))
      << S.message();
  EXPECT_TRUE(Hparams().validate().ok());
}

TEST(HparamsTest, CheckpointAndEvaluationKeys) {
  Hparams H;
  EXPECT_FALSE(H.isSet("train_dir"));
  EXPECT_FALSE(H.isSet("eval_files"));
  EXPECT_EQ(H.getInt("save_checkpoints_steps"), 1000);
  EXPECT_EQ(H.getInt("keep_checkpoint_max"), 5);
  EXPECT_EQ(H.getInt("eval_every_n_iters"), 0);
  ASSERT_TRUE(H.parseText("train_dir=file:///tmp/run\nkeep_checkpoint_max=0\n"
                          "save_checkpoints_steps=0\neval_every_n_iters=50\n"
                          "eval_files=a-test.tfrecord,b-test.tfrecord\n"
                          "task_type=finetune\nmodel_dir=/tmp/pretrained\n"
                          "ckpt_file_name=model.ckpt-100\n",
                          "good.txt")
                  .ok());
  EXPECT_TRUE(H.validate().ok()) << H.validate().message();

  auto error = [](const std::string &Text) {
    Hparams Bad;
    Status S = Bad.parseText(Text, "bad.txt");
    if (S.ok())
      S = Bad.validate();
    EXPECT_FALSE(S.ok()) << Text;
    EXPECT_EQ(S.message().find('\n'), std::string::npos) << S.message();
    return S.message();
  };
  EXPECT_EQ(error("keep_checkpoint_max=-1\n"),
            "bad.txt:1: keep_checkpoint_max: -1 is out of range (expects >= "
            "0)");
  EXPECT_EQ(error("eval_every_n_iters=ten\n"),
            "bad.txt:1: eval_every_n_iters: expects an integer, got 'ten'");
  EXPECT_EQ(error("collective_timeout_s=-5\n"),
            "bad.txt:1: collective_timeout_s: -5 is out of range (expects >= "
            "0)");
  EXPECT_EQ(error("collective_timeout_s=1.5\n"),
            "bad.txt:1: collective_timeout_s: expects an integer, got '1.5'");
  EXPECT_EQ(error("iterations_per_loop=4\nstop_at_step=100\n"
                  "save_checkpoints_steps=100\neval_every_n_iters=10\n"),
            "bad.txt:4: eval_every_n_iters=10 is not a multiple of "
            "iterations_per_loop=4 (set at bad.txt:1)");
  EXPECT_TRUE(contains(error("task_type=finetune\n"),
                       "bad.txt:1: task_type=finetune needs model_dir"));
  EXPECT_TRUE(contains(error("ckpt_file_name=model.ckpt-5\n"),
                       "bad.txt:1: ckpt_file_name=model.ckpt-5 is only "
                       "restored with task_type=finetune"));
  EXPECT_TRUE(contains(error("train_dir=oss://bucket/run\n"),
                       "bad.txt:1: train_dir=oss://bucket/run: only local "
                       "directories"));
  EXPECT_TRUE(contains(error("model_dir=hdfs://x\n"), "bad.txt:1: model_dir"));
}

TEST(HparamsTest, CompileTimeKeys) {
  std::vector<std::string> CompileTime;
  for (const HparamSpec &Spec : hparamSpecs())
    if (Spec.CompileTime)
      CompileTime.push_back(Spec.Name);
  std::vector<std::string> Expected = {"num_classes",
                                       "weight_decay",
                                       "max_gradient_norm",
                                       "batch_size",
                                       "optimizer",
                                       "adadelta_rho",
                                       "adagrad_initial_accumulator_value",
                                       "adam_beta1",
                                       "adam_beta2",
                                       "opt_epsilon",
                                       "ftrl_learning_rate_power",
                                       "ftrl_initial_accumulator_value",
                                       "ftrl_l1",
                                       "ftrl_l2",
                                       "momentum",
                                       "rmsprop_momentum",
                                       "rmsprop_decay",
                                       "use_fp16",
                                       "loss_scale",
                                       "precision",
                                       "dynamic_loss_scale",
                                       "allreduce_bucket_bytes",
                                       "memory_budget_mb",
                                       "iterations_per_loop"};
  EXPECT_EQ(CompileTime, Expected);
}

TEST(HparamsTest, CompiledContradictionIsRefused) {
  const std::string Compiled = "batch_size=32\noptimizer=sgd\n"
                               "weight_decay=4e-05\nmax_gradient_norm=None\n"
                               "use_fp16=False\n";
  Hparams H;
  ASSERT_TRUE(H.parseText("weight_decay=0.00004\nbatch_size=64\n"
                          "use_fp16=false\n",
                          "run.txt")
                  .ok());
  ASSERT_TRUE(H.parseFlags({"--max_gradient_norm=5"}).ok());
  Status S = H.applyCompiled(Compiled);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(),
            "run.txt:2: batch_size=64 contradicts the compiled model, built "
            "with batch_size=32 (recompile with fastnnc to change it)\n"
            "--max_gradient_norm: max_gradient_norm=5.0 contradicts the "
            "compiled model, built with max_gradient_norm=None (recompile "
            "with fastnnc to change it)");

  // Equal values in other spellings agree; keys not given take the
  // compiled value.
  Hparams Same;
  ASSERT_TRUE(Same.parseText("weight_decay=0.00004\nuse_fp16=0\n", "r").ok());
  S = Same.applyCompiled(Compiled);
  ASSERT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Same.getString("optimizer"), "sgd");
  EXPECT_EQ(Same.origin("optimizer"), "compiled configuration");
  EXPECT_EQ(Same.origin("weight_decay"), "r:1");

  Hparams Unknown;
  S = Unknown.applyCompiled("batch_size=8\nfuture_key=1\n");
  EXPECT_TRUE(contains(S.message(), "compiled configuration:2: 'future_key=1' "
                                    "is not a key=value line"))
      << S.message();
}

TEST(HparamsTest, CompiledConfigRoundTrips) {
  Hparams Compiler;
  ASSERT_TRUE(Compiler
                  .parseText("batch_size=8\noptimizer=momentum\n"
                             "momentum=0.95\nweight_decay=1e-4\n"
                             "max_gradient_norm=2.5\n",
                             "compile.txt")
                  .ok());
  std::string Compiled = Compiler.compiledConfigText();
  EXPECT_TRUE(contains(Compiled, "batch_size=8\n"));
  EXPECT_TRUE(contains(Compiled, "weight_decay=0.0001\n"));
  EXPECT_FALSE(contains(Compiled, "\nlearning_rate="));

  // The same file at run time agrees with what it compiled.
  Hparams Trainer;
  ASSERT_TRUE(Trainer
                  .parseText("batch_size=8\noptimizer=momentum\n"
                             "momentum=0.95\nweight_decay=1e-4\n"
                             "max_gradient_norm=2.5\nlearning_rate=0.1\n",
                             "run.txt")
                  .ok());
  Status S = Trainer.applyCompiled(Compiled);
  EXPECT_TRUE(S.ok()) << S.message();
}

TEST(HparamsTest, PrintConfigReadsBack) {
  Hparams H;
  ASSERT_TRUE(H.parseText("batch_size=8\nlearning_rate=0.1\n", "run.txt").ok());
  std::string Text = H.configText();
  EXPECT_TRUE(contains(Text, "# from run.txt:1\nbatch_size=8\n")) << Text;
  EXPECT_TRUE(contains(Text, "max_gradient_norm=None\n"));
  Hparams Again;
  Status S = Again.parseText(Text, "printed");
  ASSERT_TRUE(S.ok()) << S.message();
  for (const HparamSpec &Spec : hparamSpecs())
    EXPECT_EQ(Again.text(Spec.Name), H.text(Spec.Name)) << Spec.Name;
}

TEST(HparamsTest, HelpListsEveryKeyAndMarksCompileTime) {
  std::string Help = hparamsHelp();
  for (const HparamSpec &Spec : hparamSpecs())
    EXPECT_TRUE(contains(Help, std::string("  ") + Spec.Name + " "))
        << Spec.Name;
  size_t Batch = Help.find("  batch_size ");
  EXPECT_TRUE(contains(Help.substr(Batch, Help.find('\n', Batch) - Batch),
                       "[compile-time]"));
  size_t Rate = Help.find("  learning_rate ");
  EXPECT_FALSE(contains(Help.substr(Rate, Help.find('\n', Rate) - Rate),
                        "[compile-time]"));
  EXPECT_TRUE(contains(Help, "one of fixed,exponential,polynomial"));
}

} // namespace
