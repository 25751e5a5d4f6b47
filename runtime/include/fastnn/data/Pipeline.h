//===- Pipeline.h - The prefetching TFRecord input pipeline -----*- C++ -*-===//
//
// files (sharded by rank) -> interleave -> [cache] -> shuffle buffer
//   (or, sharded by record: this worker's records of the epoch's order,
//   read by offset -> [cache])
//   -> record queue -> N threads: parse, decode, preprocess, write the sample
//      straight into its slot of a batch ring (map-and-batch fused)
//   -> the trainer takes whole batches in order (prefetch = ring size).
//
// Positions in the batch stream are handed out in record order, and each
// sample's random numbers derive from (seed, position), so with a seed the
// batches are the same whatever the thread count or timing, and a stream
// started at batch N (StartBatch) is the tail of the full one.
//
// Damaged records keep that true. One the reader cannot frame or whose CRC
// fails never gets a position; one whose Example or image cannot be decoded
// keeps its position, and its place in the batch is filled with a copy of
// another sample of the batch (or, where batches may be short, closed up).
// Each is accounted, in stream order, when the consumer reaches the batch
// it lies before or in: counted once however many epochs meet it again,
// and the one past SkipCorruptRecords fails that batch. The batches, the
// count and the failing batch are therefore the same whatever the timing.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DATA_PIPELINE_H
#define FASTNN_DATA_PIPELINE_H

#include "fastnn/data/DatasetSpec.h"
#include "fastnn/data/Preprocess.h"
#include "fastnn/data/RecordIO.h"
#include "fastnn/data/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastnn::data {

/// One slot of the staging ring: room for BatchSize images and labels.
struct BatchBuffer {
  void *Images = nullptr;
  int32_t *Labels = nullptr;
};

/// How the workers divide an epoch's records.
enum class ShardBy {
  /// Files i with i % WorldSize == Rank are this worker's (its files'
  /// sizes decide its share).
  File,
  /// The epoch's records, all files' in file order or globally shuffled,
  /// are dealt out: worker r reads those at p with p % WorldSize == r, so
  /// shares differ by one record at most. Reads each record by its offset
  /// from the file's RecordIndex (built and saved beside it if missing);
  /// compressed files allow no random access and shard by file (a notice).
  Record,
};

struct PipelineOptions {
  DatasetSpec Spec;
  std::vector<std::string> Files;
  /// Per file from its first bytes unless false; then Comp applies to all.
  bool DetectCompression = true;
  Compression Comp = Compression::None;
  uint64_t MaxRecordBytes = uint64_t(1) << 30;
  int Rank = 0, WorldSize = 1;
  ShardBy Sharding = ShardBy::File;

  int BatchSize = 32;
  /// Zero sizes take the spec's natural size.
  OutputShape Shape;
  ElementType Type = ElementType::Float32;
  PreprocessKind Preprocess = PreprocessKind::None;
  bool Training = true;
  /// Drop a last partial batch (static shapes want full batches); every
  /// other batch is then full, an undecodable record's place filled with a
  /// copy of another sample of its batch. Without it the place is closed
  /// up and the batch is short.
  bool DropRemainder = true;

  int NumThreads = 2;         ///< num_preprocessing_threads
  int NumParallelBatches = 2; ///< records queued for the threads, in batches
  int PrefetchBatches = 2;    ///< prefetch_buffer_size: batches in the ring
  /// Samples; <= 1 keeps the file order. Sharding by record, > 1 shuffles
  /// all records of each epoch at once instead (seeded by Seed and epoch).
  int ShuffleBufferSize = 1024;
  bool ShuffleFiles = true; ///< reshuffle the files each epoch
  /// Files read round-robin at a time (sharding by file).
  int CycleLength = 4;
  bool UseCaching = false; ///< keep the encoded records in memory after epoch 1
  int NumEpochs = 1;       ///< 0 repeats forever
  uint64_t Seed = 0;
  /// The stream starts at this batch (how a resumed run continues where it
  /// stopped): sharding by file, the records before it are read and
  /// shuffled as usual, so that the order after them is unchanged, but not
  /// decoded; by record they are skipped by number, unread. Damaged
  /// records the reader meets before it are accounted at the first batch;
  /// undecodable ones before it are not met.
  uint64_t StartBatch = 0;
  /// Damaged records skipped (see the file comment): a record that cannot
  /// be framed or fails its CRC (a bad length CRC or a truncation ends its
  /// file: the framing after it cannot be trusted), or whose Example or
  /// image cannot be decoded. The next one fails the stream; 0 fails it at
  /// the first.
  uint64_t SkipCorruptRecords = 0;
  /// Appended to the error of the damaged record that fails the stream:
  /// what to do, in the caller's terms.
  std::string SkipCorruptAdvice;

  uint64_t MockSamplesPerEpoch = 1024; ///< all workers together
  int MockNumClasses = 10;

  /// The trainer's staging ring (e.g. pinned memory); empty: the pipeline
  /// allocates PrefetchBatches slots itself.
  std::vector<BatchBuffer> StagingBuffers;
};

struct BatchView {
  void *Images = nullptr;
  int32_t *Labels = nullptr;
  int Size = 0;       ///< 0: end of data.
  uint64_t Index = 0; ///< Batch number since the start.
};

struct PipelineStats {
  double ElapsedSeconds = 0;
  double ImagesPerSecond = 0;
  double WaitSeconds = 0; ///< Time the trainer spent blocked in acquire().
  uint64_t Batches = 0, Samples = 0;
  uint64_t RecordsRead = 0, BytesRead = 0;
  /// Damaged records skipped in the batches handed out so far: unreadable
  /// (framing, CRC) and undecodable ones, each counted once.
  uint64_t CorruptRecordsSkipped = 0, BadSamplesSkipped = 0;
  int ReadyBatches = 0; ///< Prefetched batches waiting (queue depth).
  size_t RecordQueueDepth = 0;
  size_t ShuffleBufferFill = 0;
  uint64_t Epoch = 0;
  size_t CacheBytes = 0;
  size_t RingBytes = 0; ///< Staging ring (images + labels).
  /// Largest bytes held at once in the record queue plus shuffle buffer.
  size_t PeakRecordBytes = 0;
  std::string LastSkipMessage;
};

/// A damaged record the stream skipped.
struct SkippedRecord {
  uint64_t Number = 0; ///< Its number among the skipped records, from 1.
  std::string Message; ///< "FILE: byte offset N: what is wrong".
};

class Pipeline {
public:
  static std::unique_ptr<Pipeline> create(const PipelineOptions &Options,
                                          Status &Err);
  ~Pipeline();

  /// Blocks until the next batch is complete and hands out its slot; the
  /// batch stays valid until release(). Size 0 means the data is exhausted.
  Status acquire(BatchView &Out);
  void release(const BatchView &View);
  /// acquire + one copy of the batch into caller memory + release.
  Status nextBatch(void *Images, int32_t *Labels, int &Size);

  PipelineStats stats() const;
  /// Lines worth a user's attention from create(): indexes rebuilt or not
  /// saved, record sharding given up for compressed files.
  const std::vector<std::string> &notices() const;
  /// Whether the records are sharded by record (see ShardBy), and then how
  /// many an epoch holds, all workers together.
  bool shardsByRecord() const;
  uint64_t recordsPerEpoch() const;
  /// The damaged records skipped since the previous call, in stream order.
  /// At most MaxPendingSkips wait between calls: past that the latest one
  /// replaces the last kept (stats() counts them all).
  std::vector<SkippedRecord> takeSkipped();
  static constexpr size_t MaxPendingSkips = 64;
  const OutputShape &shape() const;
  size_t sampleBytes() const;
  /// Stops the threads and waits for them; safe to call more than once.
  void stop();

  struct Impl;

private:
  explicit Pipeline(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

} // namespace fastnn::data

#endif // FASTNN_DATA_PIPELINE_H
