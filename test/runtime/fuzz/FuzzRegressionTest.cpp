//===- FuzzRegressionTest.cpp - The inputs that crashed the fuzz targets --===//
//
// Each input a fuzz target crashed on (fuzz/regressions/<target>, stored as
// the target hands it to the parser, CRC included) now gets one clean line
// naming the file and what is wrong.
//
//===----------------------------------------------------------------------===//

#include "fastnn/trainer/Checkpoint.h"
#include "fastnn/trainer/Hparams.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace fastnn::trainer;

namespace {

const std::string Regressions = FASTNN_TEST_SOURCE_DIR "/fuzz/regressions/";

TEST(FuzzRegression, CheckpointDimsWhoseProductOverflows) {
  std::string Path = Regressions + "CheckpointFuzzer/dims-product-overflow";
  Checkpoint C;
  Status S = readCheckpoint(Path, C);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), Path +
                             ": corrupt checkpoint: tensor 'conv/w' [2, 1, 1, "
                             "1152921504606846978] holds 0 bytes");
  EXPECT_EQ(S.message().find('\n'), std::string::npos);
}

// Costed its length times every key's before the suggestion skipped keys
// too different in length to be a typo of it.
TEST(FuzzRegression, HparamsLongUnknownKey) {
  std::ifstream In(Regressions + "HparamsFuzzer/long-unknown-key");
  std::stringstream Text;
  Text << In.rdbuf();
  Hparams H;
  Status S = H.parseText(Text.str(), "run.txt");
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), "run.txt:3: unknown key '" + std::string(16000, 'x') +
                             "' (see --help)");
}

} // namespace
