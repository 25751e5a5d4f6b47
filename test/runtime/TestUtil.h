//===- TestUtil.h - Helpers for the data pipeline tests ---------*- C++ -*-===//

#ifndef FASTNN_TEST_RUNTIME_TESTUTIL_H
#define FASTNN_TEST_RUNTIME_TESTUTIL_H

#include "fastnn/data/Example.h"
#include "fastnn/data/Image.h"
#include "fastnn/data/RecordIO.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fastnn::data::test {

/// A fresh directory per test, removed afterwards.
class TempDir {
public:
  TempDir() {
    const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
    Path = std::filesystem::temp_directory_path() /
           ("fastnn-data-" + std::string(Info->test_suite_name()) + "-" +
            Info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(Path);
    std::filesystem::create_directories(Path);
  }
  ~TempDir() { std::filesystem::remove_all(Path); }
  std::string file(const std::string &Name) const {
    return (Path / Name).string();
  }
  std::filesystem::path Path;
};

inline std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  std::ostringstream S;
  S << In.rdbuf();
  return S.str();
}

inline void writeFile(const std::string &Path, const std::string &Data) {
  std::ofstream Out(Path, std::ios::binary);
  Out << Data;
}

inline void writeRecords(const std::string &Path,
                         const std::vector<std::string> &Records,
                         Compression C = Compression::None) {
  Status S;
  auto W = RecordWriter::open(Path, C, S);
  ASSERT_TRUE(W) << S.message();
  for (const std::string &R : Records)
    ASSERT_TRUE(W->write(R).ok());
  ASSERT_TRUE(W->close().ok());
}

/// Reads every record; stops at the first corruption and returns its error.
inline Status readAll(const std::string &Path, std::vector<std::string> &Out,
                      Compression C = Compression::None) {
  RecordReaderOptions O;
  O.Comp = C;
  Status S;
  auto R = RecordReader::open(Path, O, S);
  if (!R)
    return S;
  std::string Rec;
  for (;;) {
    auto Res = R->next(Rec, S);
    if (Res == RecordReader::Result::End)
      return Status::success();
    if (Res == RecordReader::Result::Corrupt)
      return S;
    Out.push_back(Rec);
  }
}

/// A deterministic test picture, smooth (JPEG-friendly) for Seed 0.
inline std::vector<uint8_t> testPixels(int H, int W, int C, int Seed = 0) {
  std::vector<uint8_t> P(size_t(H) * W * C);
  for (int Y = 0; Y < H; ++Y)
    for (int X = 0; X < W; ++X)
      for (int Ch = 0; Ch < C; ++Ch)
        P[(size_t(Y) * W + X) * C + Ch] = static_cast<uint8_t>(
            (X * 160 / std::max(1, W - 1) + Y * 40 / std::max(1, H - 1) +
             Ch * 20 + Seed * 7) &
            255);
  return P;
}

/// A photo-like test picture: waves that differ per channel plus noise, so
/// that JPEG chroma varies from block to block.
inline std::vector<uint8_t> photoPixels(int H, int W, int C, int Seed = 0) {
  std::vector<uint8_t> P(size_t(H) * W * C);
  uint32_t Noise = 2463534242u + Seed;
  for (int Y = 0; Y < H; ++Y)
    for (int X = 0; X < W; ++X)
      for (int Ch = 0; Ch < C; ++Ch) {
        Noise ^= Noise << 13, Noise ^= Noise >> 17, Noise ^= Noise << 5;
        double V = 128 + 90 * std::sin(0.05 * (X + Y) + Ch + Seed) +
                   20 * std::sin(0.3 * X * (Ch + 1)) + int(Noise % 32) - 16;
        P[(size_t(Y) * W + X) * C + Ch] =
            static_cast<uint8_t>(std::clamp(V, 0.0, 255.0));
      }
  return P;
}

/// A record of FastNN's schema whose PNG encodes label-dependent pixels.
inline std::string pngRecord(int Label, int H = 8, int W = 8, int C = 1) {
  std::vector<uint8_t> Px = testPixels(H, W, C, Label);
  std::string Png;
  EXPECT_TRUE(encodePng(Px.data(), H, W, C, Png).ok());
  return makeImageExample(Png, "png", Label, H, W);
}

} // namespace fastnn::data::test

#endif // FASTNN_TEST_RUNTIME_TESTUTIL_H
