//===- TFRecordDataSource.h - Training batches from TFRecord files -*- C++ -*-//
//
// The DataSource of every dataset_name but mock: fastnn::data's pipeline
// reads the files of dataset_dir, parses them with the dataset's spec,
// decodes and preprocesses into NCHW float32 batches of the model's image
// shape: the training split with the training preprocessing, shuffled, in
// full batches over num_epochs; or the evaluation split with the evaluation
// preprocessing, in file order, once, with a last partial batch.
//
// Which training files: train_files, comma-separated, each relative to
// dataset_dir unless absolute. Without train_files, the regular files of
// dataset_dir whose names contain ".tfrecord" or start with "train-"
// (TF-slim's "train-00000-of-01024"); when some of those names contain
// "train", only those, so that a directory holding both splits (fastnn-data
// convert writes NAME-train-* beside NAME-test-*) trains on the training
// split. Which evaluation files: eval_files likewise, or the files of
// dataset_dir whose names contain ".tfrecord" or start with "test-" or
// "validation-", and contain "test" or "validation" (NAME-test-*, TF-slim's
// flowers_validation_*, ImageNet's validation-*).
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_TFRECORDDATASOURCE_H
#define FASTNN_TRAINER_TFRECORDDATASOURCE_H

#include "fastnn/data/Pipeline.h"
#include "fastnn/trainer/DataSource.h"
#include "fastnn/trainer/Hparams.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastnn::trainer {

enum class InputSplit { Train, Eval };

/// The training files that dataset_dir and train_files name (see the file
/// comment), sorted by name when listed from the directory. dataset_dir may
/// be a file:// URI.
Status listTrainFiles(const Hparams &H, std::vector<std::string> &Files);
/// The evaluation files that dataset_dir and eval_files name.
Status listEvalFiles(const Hparams &H, std::vector<std::string> &Files);

/// Whether the workers share Files by record: shard_by=record and every
/// file uncompressed (compressed ones allow no reading by offset; the
/// pipeline then shares the files, as with shard_by=file).
Status shardsByRecord(const Hparams &H, const std::vector<std::string> &Files,
                      bool &ByRecord);

/// Records in the TFRecord files. Uncompressed files are walked by their
/// record headers (each length CRC checked, the data skipped), so counting
/// costs a seek per record; compressed ones are read through. A damaged
/// record is an error, unless SkipDamaged: then a file's count ends where
/// its framing does, and a compressed record whose CRC fails is left out,
/// as the input pipeline skips them.
Status countRecords(const std::vector<std::string> &Files, int64_t &Count,
                    bool SkipDamaged = false);

/// The source dataset_name asks for: synthetic batches (mock; its pool is
/// also the evaluation set) or the split's TFRecords. The stream starts at
/// batch StartBatch; Description is a line for the log. A worker of a
/// data-parallel job reads its Shard of the split: of the training split to
/// train on a slice of the job's batches, of the evaluation split to
/// evaluate its part of the records one process evaluates.
Status createDataSource(const Hparams &H,
                        const std::vector<int64_t> &ImageShape,
                        InputSplit Split, int64_t StartBatch,
                        std::unique_ptr<DataSource> &Out,
                        std::string &Description, InputShard Shard = {});

class TFRecordDataSource : public DataSource {
public:
  /// ImageShape is the model's images input, [batch, channels, height,
  /// width]; the preprocessing writes exactly that shape, so a dataset whose
  /// images have another channel count, or another size when no
  /// preprocessing adapts it, is refused here. A training stream starts at
  /// batch StartBatch, where a run that consumed StartBatch batches stands:
  /// the records before it are skipped by number (shard_by=record) or read
  /// but not decoded (shard_by=file). Worker Shard.Rank of a data-parallel
  /// job of Shard.Count workers trains on, or evaluates, the records at
  /// positions p with p % Shard.Count == Shard.Rank of each pass's order
  /// (shard_by=record, the default, see data::ShardBy), or the files whose
  /// index i in the list has i % Shard.Count == Shard.Rank (shard_by=file;
  /// a worker with none is refused: an evaluation leaves it out instead).
  static Status create(const Hparams &H, const std::vector<int64_t> &ImageShape,
                       std::unique_ptr<TFRecordDataSource> &Out,
                       InputSplit Split = InputSplit::Train,
                       int64_t StartBatch = 0, InputShard Shard = {});
  ~TFRecordDataSource() override;

  /// Training ends after num_epochs passes (less a last partial batch),
  /// evaluation after one pass (with its last partial batch). With
  /// skip_corrupt_records, each damaged record skipped gets a line on
  /// stdout (the first ten, then one every ten seconds at most) and the
  /// one past the limit is the error; an evaluation ends with a line that
  /// counts them.
  Status next(float *Images, int64_t *Labels, int64_t &Size) override;
  /// Training: num_sample_per_epoch when given, else the records of the
  /// files; evaluation: the records of all the files. A training worker of
  /// a job of K counts its share: num_sample_per_epoch / K, or the smallest
  /// worker's records (N / K by record, its files' by file), so that every
  /// worker runs as many steps.
  int64_t samplesPerEpoch() const override { return SamplesPerEpoch; }
  /// -1 with skip_corrupt_records=0.
  int64_t skippedRecords() const override;

  data::PipelineStats stats() const { return Input->stats(); }
  const std::vector<std::string> &files() const { return Files; }
  /// One line for the start of the log: dataset, files, records,
  /// preprocessing and output shape.
  std::string describe() const;

private:
  TFRecordDataSource() = default;
  /// Prints the lines about the records skipped since the previous call.
  void logSkipped();

  std::unique_ptr<data::Pipeline> Input;
  std::vector<std::string> Files;
  std::string DatasetName, Preprocessing;
  InputSplit Split = InputSplit::Train;
  InputShard Shard;
  int64_t BatchSize = 0, NumClasses = 0, SamplesPerEpoch = 0;
  bool Counted = false;
  int64_t SkipLimit = 0;
  uint64_t LastLogged = 0;
  int64_t LastLineNs = 0;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_TFRECORDDATASOURCE_H
