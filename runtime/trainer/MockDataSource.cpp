//===- MockDataSource.cpp - Synthetic, learnable training batches ---------===//

#include "fastnn/trainer/DataSource.h"

#include <algorithm>
#include <cstring>
#include <random>

namespace fastnn::trainer {

MockDataSource::MockDataSource(int64_t BatchSize, int64_t SampleElements,
                               int64_t NumClasses, uint64_t Seed,
                               int64_t MaxPoolBatches, int64_t MaxPoolBytes,
                               InputShard Shard)
    : BatchSize(BatchSize), SampleElements(SampleElements), Shard(Shard) {
  // The pool is the job's: every worker draws all of it and keeps its
  // slice of each batch.
  int64_t JobBatch = BatchSize * Shard.Count;
  int64_t BatchBytes =
      JobBatch * SampleElements * static_cast<int64_t>(sizeof(float));
  PoolBatches = std::max<int64_t>(
      1, std::min(MaxPoolBatches,
                  MaxPoolBytes / std::max<int64_t>(1, BatchBytes)));
  int64_t Samples = PoolBatches * JobBatch;
  Images.resize(static_cast<size_t>(Samples * SampleElements));
  Labels.resize(static_cast<size_t>(Samples));

  // mt19937_64 and the integer draw below are fully specified by the C++
  // standard, so the stream is the same with every standard library; the
  // real distributions are not, hence the explicit scaling.
  std::mt19937_64 Random(Seed);
  auto uniform = [&] {
    return static_cast<float>(
        static_cast<double>(Random() >> 11) * (2.0 / 9007199254740992.0) - 1.0);
  };
  for (int64_t S = 0; S < Samples; ++S) {
    int64_t Label =
        static_cast<int64_t>(Random() % static_cast<uint64_t>(NumClasses));
    Labels[S] = Label;
    // The class's brightness level in [-1, 1]; half noise, half level keeps
    // every value in [-1, 1].
    float Level =
        NumClasses > 1
            ? static_cast<float>(2.0 * static_cast<double>(Label) /
                                     static_cast<double>(NumClasses - 1) -
                                 1.0)
            : 0.0f;
    float *Image = Images.data() + S * SampleElements;
    for (int64_t E = 0; E < SampleElements; ++E)
      Image[E] = 0.5f * uniform() + 0.5f * Level;
  }
}

Status MockDataSource::next(float *OutImages, int64_t *OutLabels,
                            int64_t &Size) {
  Size = 0;
  if (OnePass) {
    for (; Given < PoolBatches && Given % PassShare.Count != PassShare.Rank;
         ++Given)
      Next = (Next + 1) % PoolBatches;
    if (Given == PoolBatches)
      return Status::success();
  }
  ++Given;
  Size = BatchSize;
  int64_t First = (Next * Shard.Count + Shard.Rank) * BatchSize;
  Next = (Next + 1) % PoolBatches;
  std::memcpy(OutImages, Images.data() + First * SampleElements,
              static_cast<size_t>(BatchSize * SampleElements) * sizeof(float));
  std::memcpy(OutLabels, Labels.data() + First,
              static_cast<size_t>(BatchSize) * sizeof(int64_t));
  return Status::success();
}

void MockDataSource::skip(int64_t Batches) {
  Next = (Next + Batches % PoolBatches) % PoolBatches;
}

int64_t MockDataSource::samplesPerEpoch() const {
  return PoolBatches * BatchSize;
}

} // namespace fastnn::trainer
