//===- LearningRateTest.cpp - Learning-rate schedules ---------------------===//
//
// Hand-computed values of each schedule, and TF-slim's two decays against
// tf.compat.v1.train.exponential_decay / polynomial_decay computed by
// TensorFlow itself (FASTNN_PYTHON, the project's .venv, has tensorflow-cpu;
// without it the comparison fails).
//
//===----------------------------------------------------------------------===//

#include "fastnn/trainer/LearningRate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace fastnn::trainer;

namespace {

LearningRateOptions options(DecayType Type, double Rate, int64_t DecaySteps) {
  LearningRateOptions O;
  O.Type = Type;
  O.LearningRate = Rate;
  O.DecaySteps = DecaySteps;
  return O;
}

TEST(LearningRateTest, Fixed) {
  LearningRateSchedule S(options(DecayType::Fixed, 0.05, 3));
  for (int64_t Step : {1, 2, 100, 100000})
    EXPECT_DOUBLE_EQ(S.at(Step), 0.05);
}

TEST(LearningRateTest, ExponentialIsAStaircase) {
  LearningRateOptions O = options(DecayType::Exponential, 0.1, 20);
  O.DecayFactor = 0.5;
  LearningRateSchedule S(O);
  // Step n runs at global_step n - 1.
  EXPECT_DOUBLE_EQ(S.at(1), 0.1);
  EXPECT_DOUBLE_EQ(S.at(20), 0.1);
  EXPECT_DOUBLE_EQ(S.at(21), 0.05);
  EXPECT_DOUBLE_EQ(S.at(40), 0.05);
  EXPECT_DOUBLE_EQ(S.at(41), 0.025);
  EXPECT_DOUBLE_EQ(S.at(201), 0.1 / 1024);
}

TEST(LearningRateTest, PolynomialEndsAtEndLearningRate) {
  LearningRateOptions O = options(DecayType::Polynomial, 0.1, 20);
  O.EndLearningRate = 0.01;
  LearningRateSchedule S(O);
  EXPECT_DOUBLE_EQ(S.at(1), 0.1);
  EXPECT_DOUBLE_EQ(S.at(11), 0.055); // (0.1 - 0.01) * (1 - 10/20) + 0.01
  EXPECT_DOUBLE_EQ(S.at(16), 0.0325);
  EXPECT_DOUBLE_EQ(S.at(21), 0.01);
  EXPECT_DOUBLE_EQ(S.at(500), 0.01); // cycle=False: it stays at the end
}

TEST(LearningRateTest, T2tWarmupStartsAtAHundredth) {
  LearningRateOptions O = options(DecayType::Fixed, 1.0, 1);
  O.WarmupSteps = 10;
  LearningRateSchedule S(O);
  EXPECT_NEAR(S.at(1), 0.01, 1e-15);
  EXPECT_NEAR(S.at(6), 0.1, 1e-15); // 0.01 ^ (5 / 10)
  EXPECT_NEAR(S.at(10), std::pow(0.01, 0.1), 1e-15);
  EXPECT_DOUBLE_EQ(S.at(11), 1.0);
  EXPECT_DOUBLE_EQ(S.at(50), 1.0);
  // Strictly increasing up to the rate.
  for (int64_t Step = 1; Step < 11; ++Step)
    EXPECT_LT(S.at(Step), S.at(Step + 1));
}

TEST(LearningRateTest, WarmupThenExponentialDecay) {
  LearningRateOptions O = options(DecayType::Exponential, 0.2, 4);
  O.DecayFactor = 0.5;
  O.WarmupSteps = 2;
  LearningRateSchedule S(O);
  EXPECT_NEAR(S.at(1), 0.002, 1e-17); // g=0: lr/100
  EXPECT_NEAR(S.at(2), 0.02, 1e-16);  // g=1: lr/10
  EXPECT_DOUBLE_EQ(S.at(3), 0.2);     // g=2
  EXPECT_DOUBLE_EQ(S.at(5), 0.1);     // g=4: one decay
}

TEST(LearningRateTest, Luong234) {
  // T=100: decay starts at g=66 (int(200/3)); 4 halvings every int(34/4)=8.
  LearningRateOptions O = options(DecayType::Exponential, 0.8, 1);
  O.Scheme = DecayScheme::Luong234;
  O.TrainSteps = 100;
  LearningRateSchedule S(O);
  EXPECT_DOUBLE_EQ(S.at(1), 0.8);
  EXPECT_DOUBLE_EQ(S.at(66), 0.8);  // g=65
  EXPECT_DOUBLE_EQ(S.at(67), 0.8);  // g=66: 0.5^0
  EXPECT_DOUBLE_EQ(S.at(74), 0.8);  // g=73
  EXPECT_DOUBLE_EQ(S.at(75), 0.4);  // g=74
  EXPECT_DOUBLE_EQ(S.at(83), 0.2);  // g=82
  EXPECT_DOUBLE_EQ(S.at(91), 0.1);  // g=90
  EXPECT_DOUBLE_EQ(S.at(99), 0.05); // g=98: 4 halvings
  EXPECT_DOUBLE_EQ(S.at(100), 0.05);
}

TEST(LearningRateTest, Luong5AndLuong10) {
  LearningRateOptions O = options(DecayType::Exponential, 1.0, 1);
  O.TrainSteps = 100;
  O.Scheme = DecayScheme::Luong5; // from g=50, every 10
  LearningRateSchedule Five(O);
  EXPECT_DOUBLE_EQ(Five.at(50), 1.0);
  EXPECT_DOUBLE_EQ(Five.at(51), 1.0);
  EXPECT_DOUBLE_EQ(Five.at(61), 0.5);
  EXPECT_DOUBLE_EQ(Five.at(100), 1.0 / 16); // g=99: floor(49/10)=4
  O.Scheme = DecayScheme::Luong10;          // from g=50, every 5
  LearningRateSchedule Ten(O);
  EXPECT_DOUBLE_EQ(Ten.at(56), 0.5);
  EXPECT_DOUBLE_EQ(Ten.at(100), 1.0 / 512); // g=99: floor(49/5)=9
  // Too short for 10 halvings: one per step, never a division by zero.
  O.TrainSteps = 10;
  LearningRateSchedule Short(O);
  EXPECT_DOUBLE_EQ(Short.at(5), 1.0);
  EXPECT_DOUBLE_EQ(Short.at(10), 1.0 / 16);
}

TEST(LearningRateTest, FromHparams) {
  Hparams H;
  ASSERT_TRUE(H.parseText("batch_size=10\nlearning_rate=0.1\n"
                          "learning_rate_decay_factor=0.5\n",
                          "run.txt")
                  .ok());
  LearningRateOptions O;
  // Exponential decay needs an epoch size: from the key or the input.
  Status S = LearningRateSchedule::fromHparams(H, 0, 100, O);
  ASSERT_FALSE(S.ok());
  EXPECT_TRUE(S.message().find("needs num_sample_per_epoch") !=
              std::string::npos)
      << S.message();
  ASSERT_TRUE(LearningRateSchedule::fromHparams(H, 50, 100, O).ok());
  EXPECT_EQ(O.DecaySteps, 10); // int(50 * 2.0 / 10)
  EXPECT_EQ(O.WarmupSteps, 0);
  ASSERT_TRUE(
      H.parseFlags({"--num_sample_per_epoch=100", "--warmup_steps=5"}).ok());
  ASSERT_TRUE(LearningRateSchedule::fromHparams(H, 50, 100, O).ok());
  EXPECT_EQ(O.DecaySteps, 20);
  EXPECT_EQ(O.WarmupSteps, 5); // warmup_scheme defaults to t2t
  EXPECT_DOUBLE_EQ(LearningRateSchedule(O).at(21), 0.05);

  Hparams Tiny;
  ASSERT_TRUE(
      Tiny.parseText("batch_size=10\nnum_sample_per_epoch=4\n", "t").ok());
  S = LearningRateSchedule::fromHparams(Tiny, 0, 100, O);
  EXPECT_TRUE(S.message().find("t:2: num_sample_per_epoch:") == 0)
      << S.message();

  // Fixed and the luong schemes need no epoch size.
  Hparams Fixed;
  ASSERT_TRUE(Fixed.parseText("learning_rate_decay_type=fixed\n", "f").ok());
  EXPECT_TRUE(LearningRateSchedule::fromHparams(Fixed, 0, 100, O).ok());
  Hparams Luong;
  ASSERT_TRUE(Luong.parseText("decay_scheme=luong234\n", "l").ok());
  ASSERT_TRUE(LearningRateSchedule::fromHparams(Luong, 0, 300, O).ok());
  EXPECT_EQ(O.Scheme, DecayScheme::Luong234);
  EXPECT_EQ(O.TrainSteps, 300);
}

/// Runs Python with TensorFlow; empty when it is not available.
/// Runs \p Script with FASTNN_PYTHON; returns whether it succeeded, with
/// its output and errors in \p Output.
bool runPython(const std::string &Script, std::string &Output) {
  std::string Command =
      std::string(FASTNN_PYTHON) + " -c '" + Script + "' 2>&1";
  FILE *Pipe = popen(Command.c_str(), "r");
  if (!Pipe)
    return false;
  char Buffer[4096];
  size_t N;
  while ((N = fread(Buffer, 1, sizeof(Buffer), Pipe)) > 0)
    Output.append(Buffer, N);
  return pclose(Pipe) == 0;
}

TEST(LearningRateTest, MatchesTensorFlow) {
  // TF-slim's calls: exponential_decay(lr, g, D, factor, staircase=True) and
  // polynomial_decay(lr, g, D, end, power=1.0, cycle=False).
  const char *Script =
      "import os\n"
      "os.environ[\"TF_CPP_MIN_LOG_LEVEL\"] = \"3\"\n"
      "import tensorflow as tf\n"
      "tf.compat.v1.disable_eager_execution()\n"
      "g = tf.compat.v1.placeholder(tf.int64, [])\n"
      "e = tf.compat.v1.train.exponential_decay(0.01, g, 781, 0.94, "
      "staircase=True)\n"
      "p = tf.compat.v1.train.polynomial_decay(0.01, g, 781, 0.0001, "
      "power=1.0, cycle=False)\n"
      "with tf.compat.v1.Session() as s:\n"
      "  for step in [0, 1, 780, 781, 782, 1562, 5000, 40000]:\n"
      "    a, b = s.run([e, p], {g: step})\n"
      "    print(step, repr(float(a)), repr(float(b)))\n";
  // The project's scripts install TensorFlow into FASTNN_PYTHON (.venv), so
  // a failure here is a broken setup, reported rather than skipped.
  std::string Output;
  ASSERT_TRUE(runPython(Script, Output))
      << FASTNN_PYTHON << " could not run TensorFlow's decays "
      << "(scripts/install-deps.sh installs tensorflow-cpu): " << Output;
  // num_sample_per_epoch 50000 (cifar10), batch 128: int(50000*2/128) = 781.
  LearningRateOptions E = options(DecayType::Exponential, 0.01, 781);
  LearningRateOptions P = options(DecayType::Polynomial, 0.01, 781);
  LearningRateSchedule Exponential(E), Polynomial(P);
  std::istringstream Lines(Output);
  int64_t GlobalStep;
  double TfExponential, TfPolynomial;
  int Compared = 0;
  while (Lines >> GlobalStep >> TfExponential >> TfPolynomial) {
    // TensorFlow computes in float32, so its error scales with the
    // operands (the initial rate), not with the decayed result.
    EXPECT_NEAR(Exponential.at(GlobalStep + 1), TfExponential, 2e-6 * 0.01)
        << "global_step " << GlobalStep;
    EXPECT_NEAR(Polynomial.at(GlobalStep + 1), TfPolynomial, 2e-6 * 0.01)
        << "global_step " << GlobalStep;
    ++Compared;
  }
  EXPECT_EQ(Compared, 8);
}

} // namespace
