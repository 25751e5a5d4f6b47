//===- MockDataSourceTest.cpp - Synthetic batches of dataset_name=mock ----===//

#include "fastnn/trainer/DataSource.h"

#include <gtest/gtest.h>

#include <vector>

using namespace fastnn::trainer;

namespace {

struct Batch {
  std::vector<float> Images;
  std::vector<int64_t> Labels;
};

Batch nextBatch(DataSource &Source, int64_t BatchSize, int64_t Elements) {
  Batch B;
  B.Images.resize(BatchSize * Elements);
  B.Labels.resize(BatchSize);
  int64_t Size = 0;
  EXPECT_TRUE(Source.next(B.Images.data(), B.Labels.data(), Size).ok());
  EXPECT_EQ(Size, BatchSize);
  return B;
}

TEST(MockDataSourceTest, SameSeedSameStream) {
  MockDataSource A(4, 48, 10, 7), B(4, 48, 10, 7);
  for (int I = 0; I < 20; ++I) {
    Batch X = nextBatch(A, 4, 48), Y = nextBatch(B, 4, 48);
    EXPECT_EQ(X.Images, Y.Images);
    EXPECT_EQ(X.Labels, Y.Labels);
  }
}

TEST(MockDataSourceTest, OtherSeedOtherStream) {
  MockDataSource A(4, 48, 10, 7), B(4, 48, 10, 8);
  EXPECT_NE(nextBatch(A, 4, 48).Images, nextBatch(B, 4, 48).Images);
}

TEST(MockDataSourceTest, ValuesAndLabelsInRange) {
  MockDataSource Source(8, 300, 5, 1);
  for (int I = 0; I < 4; ++I) {
    Batch B = nextBatch(Source, 8, 300);
    for (float V : B.Images) {
      EXPECT_GE(V, -1.0f);
      EXPECT_LE(V, 1.0f);
    }
    for (int64_t L : B.Labels) {
      EXPECT_GE(L, 0);
      EXPECT_LT(L, 5);
    }
  }
}

TEST(MockDataSourceTest, PoolIsReplayedInOrder) {
  MockDataSource Source(2, 16, 3, 5, /*MaxPoolBatches=*/3);
  ASSERT_EQ(Source.poolBatches(), 3);
  EXPECT_EQ(Source.samplesPerEpoch(), 6);
  std::vector<Batch> First;
  for (int I = 0; I < 3; ++I)
    First.push_back(nextBatch(Source, 2, 16));
  EXPECT_NE(First[0].Images, First[1].Images);
  for (int I = 0; I < 3; ++I) {
    Batch Again = nextBatch(Source, 2, 16);
    EXPECT_EQ(Again.Images, First[I].Images);
    EXPECT_EQ(Again.Labels, First[I].Labels);
  }
}

TEST(MockDataSourceTest, SkipContinuesTheStream) {
  MockDataSource Full(2, 16, 3, 5, /*MaxPoolBatches=*/3);
  std::vector<Batch> Stream;
  for (int I = 0; I < 8; ++I)
    Stream.push_back(nextBatch(Full, 2, 16));
  for (int Start : {1, 3, 5}) {
    MockDataSource Resumed(2, 16, 3, 5, 3);
    Resumed.skip(Start);
    for (int I = Start; I < 8; ++I) {
      Batch B = nextBatch(Resumed, 2, 16);
      EXPECT_EQ(B.Images, Stream[I].Images) << Start << " " << I;
      EXPECT_EQ(B.Labels, Stream[I].Labels) << Start << " " << I;
    }
  }
}

TEST(MockDataSourceTest, OnePassEndsAfterThePool) {
  MockDataSource Source(2, 16, 3, 5, /*MaxPoolBatches=*/3);
  Source.endAfterOnePass();
  for (int I = 0; I < 3; ++I)
    nextBatch(Source, 2, 16);
  std::vector<float> Images(32);
  std::vector<int64_t> Labels(2);
  int64_t Size = -1;
  ASSERT_TRUE(Source.next(Images.data(), Labels.data(), Size).ok());
  EXPECT_EQ(Size, 0);
}

// K workers evaluating one pool: worker r gets the batches i % K == r of
// the single pass, so together they see each batch once.
TEST(MockDataSourceTest, WorkersShareOnePass) {
  MockDataSource Whole(2, 16, 3, 5, /*MaxPoolBatches=*/5);
  Whole.endAfterOnePass();
  std::vector<Batch> Pass;
  for (int I = 0; I < 5; ++I)
    Pass.push_back(nextBatch(Whole, 2, 16));
  std::vector<float> Images(32);
  std::vector<int64_t> Labels(2);
  for (int64_t Workers : {2, 3, 7}) {
    for (int64_t Rank = 0; Rank < Workers; ++Rank) {
      MockDataSource Share(2, 16, 3, 5, 5);
      Share.endAfterOnePass({Rank, Workers});
      for (int64_t I = Rank; I < 5; I += Workers) {
        Batch B = nextBatch(Share, 2, 16);
        EXPECT_EQ(B.Images, Pass[I].Images) << Workers << " " << Rank;
        EXPECT_EQ(B.Labels, Pass[I].Labels) << Workers << " " << Rank;
      }
      int64_t Size = -1;
      ASSERT_TRUE(Share.next(Images.data(), Labels.data(), Size).ok());
      EXPECT_EQ(Size, 0) << Workers << " " << Rank;
    }
  }
}

TEST(MockDataSourceTest, PoolFitsTheByteBudget) {
  // 4 samples of 1000 floats = 16000 bytes a batch; 40000 bytes hold 2.
  MockDataSource Source(4, 1000, 10, 0, 16, 40000);
  EXPECT_EQ(Source.poolBatches(), 2);
  MockDataSource Huge(4, 1000, 10, 0, 16, 100);
  EXPECT_EQ(Huge.poolBatches(), 1);
}

// Two workers of batch 2 train on the samples of one worker of batch 4:
// worker r's batches are the r-th halves of that worker's batches.
TEST(MockDataSourceTest, WorkersShareTheBatchesOfOneWorker) {
  MockDataSource One(4, 16, 3, 5, /*MaxPoolBatches=*/3);
  MockDataSource First(2, 16, 3, 5, 3, MockDataSource::DefaultPoolBytes,
                       InputShard{0, 2});
  MockDataSource Second(2, 16, 3, 5, 3, MockDataSource::DefaultPoolBytes,
                        InputShard{1, 2});
  EXPECT_EQ(First.samplesPerEpoch(), 6);
  for (int I = 0; I < 5; ++I) {
    Batch Whole = nextBatch(One, 4, 16);
    Batch A = nextBatch(First, 2, 16), B = nextBatch(Second, 2, 16);
    A.Images.insert(A.Images.end(), B.Images.begin(), B.Images.end());
    A.Labels.insert(A.Labels.end(), B.Labels.begin(), B.Labels.end());
    EXPECT_EQ(A.Images, Whole.Images) << "batch " << I;
    EXPECT_EQ(A.Labels, Whole.Labels) << "batch " << I;
  }
}

// The classes differ in brightness, so a model can learn more than the pool.
TEST(MockDataSourceTest, LabelsAreLearnableFromTheImages) {
  const int64_t Elements = 256;
  MockDataSource Source(16, Elements, 2, 3);
  for (int I = 0; I < 4; ++I) {
    Batch B = nextBatch(Source, 16, Elements);
    for (int64_t S = 0; S < 16; ++S) {
      double Mean = 0;
      for (int64_t E = 0; E < Elements; ++E)
        Mean += B.Images[S * Elements + E];
      Mean /= Elements;
      EXPECT_EQ(Mean > 0, B.Labels[S] == 1) << "sample " << S;
    }
  }
}

} // namespace
