//===- ExactSumTest.cpp - ExactSum ----------------------------------------===//

#include "fastnn/trainer/ExactSum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using fastnn::trainer::ExactSum;

namespace {

double sumOf(const std::vector<float> &Values) {
  ExactSum Sum;
  for (float Value : Values)
    Sum.add(Value);
  return Sum.value();
}

bool sameBits(double A, double B) { return std::memcmp(&A, &B, 8) == 0; }

/// Floats of every magnitude and sign, subnormals included.
std::vector<float> wideValues(size_t Count, uint64_t Seed) {
  std::mt19937_64 Random(Seed);
  std::vector<float> Values(Count);
  for (float &Value : Values) {
    uint32_t Bits = static_cast<uint32_t>(Random());
    // Exponents 0..254: no infinities or NaNs.
    if (((Bits >> 23) & 0xff) == 0xff)
      Bits &= ~(uint32_t(1) << 23);
    std::memcpy(&Value, &Bits, 4);
  }
  return Values;
}

TEST(ExactSumTest, IsExactWhereADoubleSumIsNot) {
  // 2^100 + 1 - 2^100 is 1; a double accumulator loses the 1.
  EXPECT_EQ(sumOf({0x1p100f, 1.0f, -0x1p100f}), 1.0);
  EXPECT_EQ(sumOf({0x1p-149f, 0x1p127f, -0x1p127f}), 0x1p-149);
  // A million times 0.1f: 24 + 20 bits, exact in a double.
  std::vector<float> Tenths(1000000, 0.1f);
  EXPECT_EQ(sumOf(Tenths), 1000000.0 * static_cast<double>(0.1f));
  EXPECT_EQ(sumOf({}), 0.0);
  EXPECT_EQ(sumOf({-3.5f, 1.25f}), -2.25);
}

TEST(ExactSumTest, DoesNotDependOnTheOrder) {
  std::vector<float> Values = wideValues(20000, 1);
  const double Forward = sumOf(Values);
  std::reverse(Values.begin(), Values.end());
  EXPECT_TRUE(sameBits(sumOf(Values), Forward));
  std::shuffle(Values.begin(), Values.end(), std::mt19937_64(2));
  EXPECT_TRUE(sameBits(sumOf(Values), Forward));
  // Losses: non-negative, of similar size, where double sums do differ by
  // the order.
  std::vector<float> Losses(20000);
  std::mt19937_64 Random(3);
  std::uniform_real_distribution<float> Uniform(0.0f, 5.0f);
  for (float &Loss : Losses)
    Loss = Uniform(Random);
  const double LossSum = sumOf(Losses);
  std::shuffle(Losses.begin(), Losses.end(), Random);
  EXPECT_TRUE(sameBits(sumOf(Losses), LossSum));
}

TEST(ExactSumTest, SharesAddWordByWord) {
  // What K workers' allreduce of words() does: each sums its share,
  // normalises, and the words add up.
  std::vector<float> Values = wideValues(9999, 4);
  for (int Workers : {2, 3, 7}) {
    std::vector<ExactSum> Shares(static_cast<size_t>(Workers));
    for (size_t I = 0; I < Values.size(); ++I)
      Shares[I % Shares.size()].add(Values[I]);
    ExactSum Total;
    for (ExactSum &Share : Shares) {
      Share.normalize();
      for (int W = 0; W < ExactSum::Words; ++W)
        Total.words()[W] += Share.words()[W];
    }
    EXPECT_TRUE(sameBits(Total.value(), sumOf(Values))) << Workers;
  }
}

TEST(ExactSumTest, NonFiniteValues) {
  const float Inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(sumOf({1.0f, std::nanf("")})));
  EXPECT_EQ(sumOf({1.0f, Inf, 0x1p127f}),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(sumOf({-Inf, 2.0f}), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(sumOf({Inf, -Inf})));
  // Finite values beyond float's range are fine: the sum is a double.
  EXPECT_EQ(sumOf({0x1p127f, 0x1p127f}), 0x1p128);
}

} // namespace
