//===- FashionMnistTest.cpp - Converting the real Fashion-MNIST -----------===//
//
// Debian's dataset-fashion-mnist (scripts/apt-packages.txt) installs the
// IDX files; fastnn-data converts them and every decoded image and label
// must equal the source. Without the package the test fails: the project's
// scripts install it.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "fastnn/data/DatasetSpec.h"

#include <zlib.h>

using namespace fastnn::data;
using namespace fastnn::data::test;

namespace {

const char *const Source = "/usr/share/datasets/fashion-mnist";

std::string gunzip(const std::string &Path) {
  gzFile F = gzopen(Path.c_str(), "rb");
  std::string Out;
  if (!F)
    return Out;
  char Buf[1 << 16];
  int N;
  while ((N = gzread(F, Buf, sizeof(Buf))) > 0)
    Out.append(Buf, N);
  gzclose(F);
  return Out;
}

} // namespace

TEST(FashionMnist, ConvertedRecordsEqualTheIdxSource) {
  ASSERT_TRUE(std::filesystem::exists(std::string(Source) +
                                      "/train-images-idx3-ubyte.gz"))
      << Source
      << " is missing: install dataset-fashion-mnist "
         "(scripts/install-deps.sh)";
  TempDir D;
  const int Shards = 3;
  std::string Cmd = std::string("'") + FASTNN_DATA_TOOL +
                    "' convert --format=idx --input=" + Source + " --output='" +
                    D.Path.string() +
                    "' --name=fashion-mnist --shards=3 --no-progress";
  ASSERT_EQ(std::system(Cmd.c_str()), 0);

  DatasetSpec Spec;
  ASSERT_TRUE(loadDatasetSpec("mnist", Spec).ok());
  ImageDecoder Dec;
  std::vector<uint8_t> Px;
  for (auto [Split, Prefix, Count] :
       {std::tuple<std::string, std::string, size_t>{"train", "train", 60000},
        {"test", "t10k", 10000}}) {
    std::string Images =
        gunzip(std::string(Source) + "/" + Prefix + "-images-idx3-ubyte.gz");
    std::string Labels =
        gunzip(std::string(Source) + "/" + Prefix + "-labels-idx1-ubyte.gz");
    ASSERT_EQ(Images.size(), 16 + Count * 784);
    ASSERT_EQ(Labels.size(), 8 + Count);
    std::vector<std::vector<std::string>> Recs(Shards);
    size_t Total = 0;
    for (int K = 0; K < Shards; ++K) {
      char Name[128];
      std::snprintf(Name, sizeof(Name),
                    "fashion-mnist-%s-%05d-of-%05d.tfrecord", Split.c_str(), K,
                    Shards);
      Status S = readAll(D.file(Name), Recs[K]);
      ASSERT_TRUE(S.ok()) << S.message();
      Total += Recs[K].size();
    }
    ASSERT_EQ(Total, Count) << Split;
    // Balanced: shard sizes differ by at most one.
    EXPECT_LE(Recs[0].size() - Recs[Shards - 1].size(), 1u);
    Example E;
    size_t Mismatches = 0;
    for (size_t I = 0; I < Count; ++I) {
      // Record i of a split is record i / N of shard i % N.
      const std::string &R = Recs[I % Shards][I / Shards];
      ASSERT_TRUE(parseExample(R, E).ok());
      SampleView V;
      ASSERT_TRUE(extractSample(E, Spec, V).ok());
      EXPECT_EQ(V.Format, "png");
      int H, W;
      ASSERT_TRUE(Dec.decode(V.Bytes.data(), V.Bytes.size(), 1, Px, H, W).ok());
      ASSERT_EQ(H, 28);
      ASSERT_EQ(W, 28);
      Mismatches += V.Label != static_cast<unsigned char>(Labels[8 + I]);
      Mismatches +=
          std::memcmp(Px.data(), Images.data() + 16 + I * 784, 784) != 0;
    }
    EXPECT_EQ(Mismatches, 0u) << Split;
  }
}
