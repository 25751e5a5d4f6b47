//===- PreprocessTest.cpp - Shapes and ranges of every function -----------===//

#include "TestUtil.h"

#include "fastnn/data/Preprocess.h"

#include <algorithm>
#include <cmath>

using namespace fastnn::data;
using namespace fastnn::data::test;

namespace {

struct Range {
  float Lo, Hi;
};

struct Case {
  PreprocessKind Kind;
  bool Training;
  Range Expect; // Every output value must lie inside.
};

std::vector<float> run(PreprocessKind K, bool Training, int SH, int SW, int OH,
                       int OW, int C, Layout L, uint64_t Seed = 1) {
  std::vector<uint8_t> Src = testPixels(SH, SW, C);
  ImageRef Img;
  Img.U8 = Src.data();
  Img.Height = SH, Img.Width = SW, Img.Channels = C;
  OutputShape Sh{OH, OW, C, L};
  // Poison: every element must be written.
  std::vector<float> Out(Sh.elements(), std::nanf(""));
  Rng R(Seed);
  Status S = preprocessImage(K, Training, Img, Sh, R, Out.data());
  EXPECT_TRUE(S.ok()) << S.message();
  return Out;
}

} // namespace

TEST(Preprocess, EveryFunctionShapeAndRange) {
  const Case Cases[] = {
      {PreprocessKind::None, true, {0, 1}},
      {PreprocessKind::Inception, true, {-1, 1}},
      {PreprocessKind::Inception, false, {-1, 1}},
      {PreprocessKind::Vgg, true, {-124, 256 - 103.94f}},
      {PreprocessKind::Vgg, false, {-124, 256 - 103.94f}},
      {PreprocessKind::Cifarnet, true, {-60, 60}},
      {PreprocessKind::Cifarnet, false, {-60, 60}},
      {PreprocessKind::Lenet, true, {-1, 1}},
      {PreprocessKind::Lenet, false, {-1, 1}},
  };
  for (const Case &C : Cases)
    for (int Ch : {1, 3})
      for (Layout L : {Layout::NHWC, Layout::NCHW})
        for (auto [SH, SW, OH, OW] : {std::array<int, 4>{40, 60, 32, 32},
                                      {300, 200, 224, 224},
                                      {20, 20, 28, 28}}) {
          if (C.Kind == PreprocessKind::Vgg && OH > 200)
            continue; // Covered; keep the test quick.
          auto Out = run(C.Kind, C.Training, SH, SW, OH, OW, Ch, L);
          ASSERT_EQ(Out.size(), size_t(OH) * OW * Ch);
          float Lo = 1e30f, Hi = -1e30f;
          for (float V : Out) {
            ASSERT_FALSE(std::isnan(V)) << preprocessingName(C.Kind);
            Lo = std::min(Lo, V);
            Hi = std::max(Hi, V);
          }
          EXPECT_GE(Lo, C.Expect.Lo) << preprocessingName(C.Kind);
          EXPECT_LE(Hi, C.Expect.Hi) << preprocessingName(C.Kind);
          EXPECT_LT(Lo, Hi) << preprocessingName(C.Kind); // Not constant.
        }
}

TEST(Preprocess, EvalIsDeterministicTrainDependsOnSeed) {
  for (PreprocessKind K : {PreprocessKind::Inception, PreprocessKind::Vgg,
                           PreprocessKind::Cifarnet}) {
    auto A = run(K, false, 64, 80, 32, 32, 3, Layout::NHWC, 1);
    auto B = run(K, false, 64, 80, 32, 32, 3, Layout::NHWC, 2);
    EXPECT_EQ(A, B) << preprocessingName(K);
    auto T1 = run(K, true, 64, 80, 32, 32, 3, Layout::NHWC, 1);
    auto T1b = run(K, true, 64, 80, 32, 32, 3, Layout::NHWC, 1);
    auto T2 = run(K, true, 64, 80, 32, 32, 3, Layout::NHWC, 2);
    EXPECT_EQ(T1, T1b) << preprocessingName(K);
    EXPECT_NE(T1, T2) << preprocessingName(K);
  }
}

TEST(Preprocess, IdentityKeepsPixelsExactly) {
  // Same size, no preprocessing: every pixel / 255, NCHW equals transposed
  // NHWC.
  std::vector<uint8_t> Src = testPixels(28, 28, 3);
  auto Nhwc = run(PreprocessKind::None, true, 28, 28, 28, 28, 3, Layout::NHWC);
  auto Nchw = run(PreprocessKind::None, true, 28, 28, 28, 28, 3, Layout::NCHW);
  for (int P = 0; P < 28 * 28; ++P)
    for (int C = 0; C < 3; ++C) {
      EXPECT_FLOAT_EQ(Nhwc[P * 3 + C], Src[P * 3 + C] / 255.0f);
      EXPECT_EQ(Nchw[C * 28 * 28 + P], Nhwc[P * 3 + C]);
    }
}

TEST(Preprocess, LenetPadsWithZeroPixels) {
  // 20x20 into 28x28: a 4-pixel border of padded zeros, (0-128)/128 = -1.
  auto Out = run(PreprocessKind::Lenet, false, 20, 20, 28, 28, 1, Layout::NHWC);
  EXPECT_EQ(Out[0], -1.0f);
  EXPECT_EQ(Out[27 * 28 + 27], -1.0f);
  std::vector<uint8_t> Src = testPixels(20, 20, 1);
  EXPECT_FLOAT_EQ(Out[4 * 28 + 4], (Src[0] - 128.0f) / 128.0f);
}

TEST(Preprocess, CifarnetIsStandardised) {
  auto Out =
      run(PreprocessKind::Cifarnet, true, 32, 32, 32, 32, 3, Layout::NCHW);
  double Sum = 0, Sq = 0;
  for (float V : Out)
    Sum += V, Sq += double(V) * V;
  double Mean = Sum / Out.size();
  EXPECT_NEAR(Mean, 0.0, 1e-4);
  EXPECT_NEAR(Sq / Out.size() - Mean * Mean, 1.0, 1e-3);
}

TEST(Preprocess, FactoryNames) {
  PreprocessKind K;
  ASSERT_TRUE(resolvePreprocessing("", "inception_resnet_v2", K).ok());
  EXPECT_EQ(K, PreprocessKind::Inception);
  ASSERT_TRUE(resolvePreprocessing("", "resnet_v1_50", K).ok());
  EXPECT_EQ(K, PreprocessKind::Vgg);
  ASSERT_TRUE(resolvePreprocessing("lenet", "vgg_16", K).ok());
  EXPECT_EQ(K, PreprocessKind::Lenet);
  ASSERT_TRUE(resolvePreprocessing("none", "vgg_16", K).ok());
  EXPECT_EQ(K, PreprocessKind::None);
  EXPECT_FALSE(resolvePreprocessing("inceptoin", "", K).ok());
}

TEST(Preprocess, InceptionReadsOnlyItsCrop) {
  // Inception crops, then resizes the crop (as TF-slim does with tensors):
  // the plan names the crop before any pixel is decoded, sampling it alone
  // gives the whole image's result, and pixels outside it do not matter.
  const int H = 50, W = 70;
  OutputShape Sh{24, 32, 3, Layout::NHWC};
  for (bool Training : {true, false})
    for (uint64_t Seed : {1, 2, 3}) {
      std::vector<uint8_t> Src = testPixels(H, W, 3, int(Seed));
      ImageRef Whole;
      Whole.U8 = Src.data();
      Whole.Height = H, Whole.Width = W, Whole.Channels = 3;
      std::vector<float> A(Sh.elements()), B(Sh.elements()), C(Sh.elements());
      Rng R1(Seed), R2(Seed), R3(Seed);
      ASSERT_TRUE(preprocessImage(PreprocessKind::Inception, Training, Whole,
                                  Sh, R1, A.data())
                      .ok());
      PreprocessPlan Plan;
      ASSERT_TRUE(planPreprocessing(PreprocessKind::Inception, Training, H, W,
                                    Sh, R2, Plan)
                      .ok());
      const PixelRect &S = Plan.Source;
      ASSERT_TRUE(S.Y >= 0 && S.X >= 0 && S.Height > 0 && S.Width > 0 &&
                  S.Y + S.Height <= H && S.X + S.Width <= W);
      if (!Training) // central_crop(0.875)
        EXPECT_TRUE(S.Y == 3 && S.X == 4 && S.Height == 44 && S.Width == 62);
      std::vector<uint8_t> Crop;
      for (int Y = S.Y; Y < S.Y + S.Height; ++Y)
        Crop.insert(Crop.end(), Src.begin() + (Y * W + S.X) * 3,
                    Src.begin() + (Y * W + S.X + S.Width) * 3);
      ImageRef Part;
      Part.U8 = Crop.data();
      Part.Height = S.Height, Part.Width = S.Width, Part.Channels = 3;
      ASSERT_TRUE(applyPreprocessing(Plan, Part, Sh, B.data()).ok());
      EXPECT_EQ(A, B) << "seed " << Seed;
      for (int Y = 0; Y < H; ++Y)
        for (int X = 0; X < W; ++X)
          if (Y < S.Y || Y >= S.Y + S.Height || X < S.X || X >= S.X + S.Width)
            std::fill_n(Src.begin() + (Y * W + X) * 3, 3, 0);
      ASSERT_TRUE(preprocessImage(PreprocessKind::Inception, Training, Whole,
                                  Sh, R3, C.data())
                      .ok());
      EXPECT_EQ(A, C) << "seed " << Seed;
      Part.Width -= 1;
      EXPECT_FALSE(applyPreprocessing(Plan, Part, Sh, B.data()).ok());
    }
  // The other functions read the whole image.
  for (PreprocessKind K : {PreprocessKind::Vgg, PreprocessKind::Cifarnet,
                           PreprocessKind::Lenet, PreprocessKind::None}) {
    Rng R(1);
    PreprocessPlan Plan;
    ASSERT_TRUE(planPreprocessing(K, true, H, W, Sh, R, Plan).ok());
    EXPECT_TRUE(Plan.Source.Y == 0 && Plan.Source.X == 0 &&
                Plan.Source.Height == H && Plan.Source.Width == W)
        << preprocessingName(K);
  }
}

TEST(Preprocess, LayoutsGiveTheSameBits) {
  // RGB into NHWC takes the vectorised pixel-pair path, NCHW the planar one:
  // they must agree bit for bit, in every build (an odd width covers the
  // lone last pixel). Cifarnet is left out: its standardisation sums the
  // whole output in memory order.
  for (PreprocessKind K : {PreprocessKind::None, PreprocessKind::Inception,
                           PreprocessKind::Vgg, PreprocessKind::Lenet})
    for (bool Training : {true, false}) {
      auto Nhwc = run(K, Training, 50, 70, 24, 33, 3, Layout::NHWC, 3);
      auto Nchw = run(K, Training, 50, 70, 24, 33, 3, Layout::NCHW, 3);
      const int Plane = 24 * 33;
      int Diff = 0;
      for (int P = 0; P < Plane; ++P)
        for (int C = 0; C < 3; ++C)
          Diff += Nhwc[P * 3 + C] != Nchw[C * Plane + P];
      EXPECT_EQ(Diff, 0) << preprocessingName(K)
                         << (Training ? " training" : " evaluation");
    }
}
