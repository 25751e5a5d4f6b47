//===- TfInteropTest.cpp - TFRecords against TensorFlow itself ------------===//
//
// Runs test/runtime/tf_interop.py with FASTNN_PYTHON (the project .venv,
// where scripts/install-deps.sh installs tensorflow-cpu). Fails, with the
// script's message, when that Python has no TensorFlow.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "fastnn/data/Pipeline.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>

using namespace fastnn::data;
using namespace fastnn::data::test;

namespace {

const int N = 20;

/// Mirrors expected_example(i) in tf_interop.py.
Example expectedExample(int I) {
  Example E;
  std::string Pair;
  for (int K = 0; K < I; ++K)
    Pair += std::string("\0\xff", 2);
  addBytesFeature(E, "bytes", {"rec" + std::to_string(I), Pair});
  addInt64Feature(E, "int64", {I, -I, (int64_t(1) << 40) + I, INT64_MIN});
  addFloatFeature(E, "float", {I * 0.5f, -1.25f, 1e-30f, 3.4e38f});
  addInt64Feature(E, "empty", {});
  return E;
}

/// Runs the script; returns its exit status.
int runPython(const std::string &Mode, const std::string &Dir,
              std::string &Output) {
  std::string Cmd = std::string("'") + FASTNN_PYTHON + "' '" +
                    FASTNN_TEST_SOURCE_DIR + "/tf_interop.py' " + Mode + " '" +
                    Dir + "' 2>&1";
  FILE *P = popen(Cmd.c_str(), "r");
  if (!P)
    return -1;
  char Buf[4096];
  size_t Got;
  while ((Got = fread(Buf, 1, sizeof(Buf), P)) > 0)
    Output.append(Buf, Got);
  int Rc = pclose(P);
  return WIFEXITED(Rc) ? WEXITSTATUS(Rc) : -1;
}

} // namespace

TEST(TfInterop, ReadsWhatTensorFlowWrites) {
  TempDir D;
  std::string Out;
  int Rc = runPython("write", D.Path.string(), Out);
  ASSERT_EQ(Rc, 0) << Out;
  for (const char *Name : {"plain", "gzip", "zlib"}) {
    std::string Path = D.file(std::string("tf-") + Name + ".tfrecord");
    Compression C;
    ASSERT_TRUE(detectCompression(Path, C).ok());
    EXPECT_STREQ(compressionName(C),
                 std::string(Name) == "plain" ? "none" : Name);
    std::vector<std::string> Recs;
    Status S = readAll(Path, Recs, C);
    ASSERT_TRUE(S.ok()) << S.message();
    ASSERT_EQ(Recs.size(), size_t(N)) << Name;
    for (int I = 0; I < N; ++I) {
      Example Got;
      ASSERT_TRUE(parseExample(Recs[I], Got).ok());
      Example Want = expectedExample(I);
      const auto &G = Got.features().feature();
      const auto &W = Want.features().feature();
      ASSERT_EQ(G.size(), W.size());
      for (const char *K : {"bytes", "int64", "float", "empty"})
        EXPECT_EQ(G.at(K).SerializeAsString(), W.at(K).SerializeAsString())
            << Name << " record " << I << " feature " << K;
      EXPECT_EQ(G.at("float").float_list().value(3), 3.4e38f);
      EXPECT_EQ(G.at("int64").int64_list().value(3), INT64_MIN);
    }
  }
}

TEST(TfInterop, TensorFlowReadsWhatFastnnWrites) {
  TempDir D;
  for (auto [Name, C] :
       {std::pair<const char *, Compression>{"plain", Compression::None},
        {"gzip", Compression::Gzip},
        {"zlib", Compression::Zlib}}) {
    std::vector<std::string> Recs;
    for (int I = 0; I < N; ++I)
      Recs.push_back(expectedExample(I).SerializeAsString());
    writeRecords(D.file(std::string("cpp-") + Name + ".tfrecord"), Recs, C);
  }
  // A class-folder dataset (PNG and JPEG, gray and RGB) through the tool.
  std::filesystem::path Src = D.Path / "src";
  for (int Cls = 0; Cls < 3; ++Cls) {
    std::filesystem::create_directories(Src / ("class" + std::to_string(Cls)));
    for (int I = 0; I < 4; ++I) {
      int H = 10 + I, W = 12 + Cls, Ch = I % 2 ? 3 : 1;
      std::vector<uint8_t> Px = testPixels(H, W, Ch, I);
      std::string Enc;
      bool Png = I < 2;
      ASSERT_TRUE((Png ? encodePng(Px.data(), H, W, Ch, Enc)
                       : encodeJpeg(Px.data(), H, W, Ch, 90, Enc))
                      .ok());
      writeFile((Src / ("class" + std::to_string(Cls)) /
                 ("img" + std::to_string(I) + (Png ? ".png" : ".JPG")))
                    .string(),
                Enc);
    }
  }
  std::string Cmd = std::string("'") + FASTNN_DATA_TOOL +
                    "' convert --format=folder --input='" + Src.string() +
                    "' --output='" + D.Path.string() +
                    "' --name=conv --shards=2 --validation-count=3 "
                    "--no-progress > /dev/null";
  ASSERT_EQ(std::system(Cmd.c_str()), 0);
  std::string Out;
  int Rc = runPython("read", D.Path.string(), Out);
  EXPECT_EQ(Rc, 0) << Out;
}

TEST(TfInterop, DecodesAndPreprocessesJpegsAsTensorFlow) {
  TempDir D;
  std::string Out;
  int Rc = runPython("images", D.Path.string(), Out);
  ASSERT_EQ(Rc, 0) << Out;
  // JPEG_CASES of tf_interop.py.
  const std::string Names[] = {"420", "444", "progressive", "gray"};
  ImageDecoder Dec;
  std::vector<std::string> Recs;
  for (int N = 0; N < 4; ++N) {
    std::string Jpeg = readFile(D.file(Names[N] + ".jpg"));
    std::string Rgb = readFile(D.file(Names[N] + ".rgb"));
    int H = 0, W = 0;
    ASSERT_TRUE(Dec.readHeader(Jpeg.data(), Jpeg.size(), H, W).ok());
    ASSERT_EQ(Rgb.size(), size_t(H) * W * 3);
    // Crops equal TensorFlow's decode_jpeg and a slice, bit for bit.
    // (TensorFlow's own decode_and_crop_jpeg differs from that by up to ~11
    // levels in the first and last columns of 4:2:0 crops: it decodes no
    // column beyond the crop.)
    Rng R(N);
    for (int K = 0; K < 30; ++K) {
      PixelRect C{0, 0, H, W};
      if (K > 0) {
        C.Height = 1 + int(R.below(H));
        C.Width = 1 + int(R.below(W));
        C.Y = int(R.below(H - C.Height + 1));
        C.X = int(R.below(W - C.Width + 1));
      }
      std::vector<uint8_t> Px;
      PixelView V;
      Status S = Dec.decodeCrop(Jpeg.data(), Jpeg.size(), 3, C, Px, V);
      ASSERT_TRUE(S.ok()) << S.message();
      int Diff = 0;
      for (int Y = 0; Y < C.Height; ++Y)
        Diff += std::memcmp(V.Data + Y * V.RowStride,
                            Rgb.data() + (size_t(C.Y + Y) * W + C.X) * 3,
                            size_t(C.Width) * 3) != 0;
      EXPECT_EQ(Diff, 0) << Names[N] << ": crop " << C.Width << "x" << C.Height
                         << " at (" << C.X << ", " << C.Y << ")";
    }
    Recs.push_back(makeImageExample(Jpeg, "jpeg", N, H, W));
  }
  // Inception's evaluation preprocessing through the pipeline (central crop
  // decoded alone) against TensorFlow's ops.
  writeRecords(D.file("eval.tfrecord"), Recs);
  PipelineOptions O;
  ASSERT_TRUE(builtinDatasetSpec("flowers", O.Spec));
  O.Files = {D.file("eval.tfrecord")};
  O.Shape = {40, 56, 3, Layout::NHWC};
  O.Preprocess = PreprocessKind::Inception;
  O.Training = false;
  O.BatchSize = 1;
  O.ShuffleBufferSize = 0;
  Status S;
  auto P = Pipeline::create(O, S);
  ASSERT_TRUE(P) << S.message();
  for (int N = 0; N < 4; ++N) {
    BatchView B;
    ASSERT_TRUE(P->acquire(B).ok());
    ASSERT_EQ(B.Size, 1);
    std::string Want = readFile(D.file(Names[N] + ".eval"));
    ASSERT_EQ(Want.size(), O.Shape.elements() * sizeof(float));
    const float *Got = static_cast<const float *>(B.Images);
    float MaxDiff = 0;
    for (size_t I = 0; I < O.Shape.elements(); ++I) {
      float Ref;
      std::memcpy(&Ref, Want.data() + I * sizeof(float), sizeof(float));
      MaxDiff = std::max(MaxDiff, std::fabs(Got[I] - Ref));
    }
    EXPECT_LT(MaxDiff, 1e-5f) << Names[N];
    P->release(B);
  }
}
