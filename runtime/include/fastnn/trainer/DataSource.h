//===- DataSource.h - Where the trainer's batches come from -----*- C++ -*-===//
//
// The training loop asks a DataSource for one batch per step. The mock source
// (dataset_name=mock) synthesises batches here; the TFRecord pipeline of
// runtime/data plugs in behind the same interface.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_DATASOURCE_H
#define FASTNN_TRAINER_DATASOURCE_H

#include "fastnn/data/Status.h"

#include <cstdint>
#include <vector>

namespace fastnn::trainer {

using data::Status;

/// The share of the training input that one worker of a data-parallel job
/// reads: worker Rank of Count.
struct InputShard {
  int64_t Rank = 0, Count = 1;
};

class DataSource {
public:
  virtual ~DataSource() = default;
  /// Writes the next batch: up to BatchSize samples of SampleElements floats
  /// each into Images and their class indices into Labels, and sets Size to
  /// the samples written: BatchSize, fewer only for the last batch of an
  /// evaluation pass (or one whose damaged records were skipped), 0
  /// (nothing written) when the input is exhausted.
  virtual Status next(float *Images, int64_t *Labels, int64_t &Size) = 0;
  /// Samples in one epoch, or 0 when the source does not know.
  virtual int64_t samplesPerEpoch() const = 0;
  /// The damaged records skipped so far (skip_corrupt_records), each
  /// counted once; -1 for a source that skips none.
  virtual int64_t skippedRecords() const { return -1; }
};

/// Synthetic batches that a model can learn: a fixed pool of distinct
/// batches is replayed in order (so a model can overfit them, the check
/// that a training step works), and each image's brightness is tied to its
/// label (so the classes are separable beyond memorisation). Values are
/// uniform noise in [-1, 1] shifted toward the class's level, labels uniform
/// below NumClasses; everything derives from the seed, so two sources with
/// the same arguments give the same stream. A worker of a data-parallel
/// job of K workers with batch b gets its slice of each batch of the stream
/// of one worker with batch K * b, so that the job trains on the same
/// samples as that worker.
class MockDataSource : public DataSource {
public:
  /// The pool holds up to MaxPoolBatches batches (of the job: K * b
  /// samples) and no more than MaxPoolBytes of images (at least one batch).
  static constexpr int64_t DefaultPoolBatches = 16;
  static constexpr int64_t DefaultPoolBytes = int64_t(64) << 20;

  MockDataSource(int64_t BatchSize, int64_t SampleElements, int64_t NumClasses,
                 uint64_t Seed, int64_t MaxPoolBatches = DefaultPoolBatches,
                 int64_t MaxPoolBytes = DefaultPoolBytes,
                 InputShard Shard = {});

  Status next(float *Images, int64_t *Labels, int64_t &Size) override;
  /// This worker's samples of the pool, which one pass goes through.
  int64_t samplesPerEpoch() const override;
  int64_t poolBatches() const { return PoolBatches; }
  /// Continues where a stream that gave Batches batches stands (a resumed
  /// run).
  void skip(int64_t Batches);
  /// Ends the stream after one pass over the pool (an evaluation pass), of
  /// which it gives the batches i with i % Share.Count == Share.Rank: the
  /// K workers of a job evaluate the pool of one process between them.
  void endAfterOnePass(InputShard Share = {}) {
    OnePass = true;
    PassShare = Share;
  }

private:
  int64_t BatchSize, SampleElements, PoolBatches;
  InputShard Shard, PassShare;
  int64_t Next = 0, Given = 0;
  bool OnePass = false;
  std::vector<float> Images;
  std::vector<int64_t> Labels;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_DATASOURCE_H
