//===- Pipeline.cpp - The prefetching TFRecord input pipeline -------------===//

#include "fastnn/data/Pipeline.h"
#include "DamagedRecords.h"
#include "fastnn/data/Image.h"
#include "fastnn/data/RecordIndex.h"
#include "fastnn/runtime/AlignedBuffer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <numeric>
#include <set>
#include <thread>

namespace fastnn::data {

namespace {

using Clock = std::chrono::steady_clock;

/// A record on its way to a worker, with where it came from for errors.
struct Record {
  std::string Data;
  int File = -1;
  uint64_t Offset = 0;
};

/// A cached record keeps its offset for the messages of later epochs.
struct CachedRecord {
  std::string Data;
  uint64_t Offset = 0;
};

struct Slot {
  BatchBuffer Buf;
  int Done = 0;  // Positions finished (written or given up).
  int Holes = 0; // Positions given up: undecodable records.
  std::vector<uint8_t> Valid;
};

} // namespace

struct Pipeline::Impl {
  PipelineOptions Opt;
  std::vector<std::string> Shard;
  std::vector<Compression> ShardComp;
  std::vector<std::string> Notices;

  // Sharding by record: Shard holds every file, FirstRecord[F] is the
  // number of file F's first record among all (one past the last at the
  // end), and the reader opens the files it needs, a few at a time.
  bool ByRecord = false;
  std::vector<RecordIndex> Indexes;
  std::vector<uint64_t> FirstRecord;
  std::vector<std::unique_ptr<RecordFile>> Open;
  std::deque<int> OpenOrder;
  static constexpr size_t MaxOpenFiles = 64;
  std::vector<std::string> RecordCache;
  std::vector<uint8_t> RecordCached;
  size_t SampleElems = 0;
  size_t SampleBytes = 0;
  Clock::time_point Start = Clock::now();

  // Everything below is guarded by M; samples are processed outside it.
  mutable std::mutex M;
  std::condition_variable QueueNotEmpty, QueueNotFull, SlotFree, BatchReady;
  std::deque<Record> Queue;
  size_t QueueCap = 0;
  size_t QueueBytes = 0;
  bool QueueClosed = false;
  uint64_t NextPos = 0;
  /// Records the reader still drops before the first position (StartBatch).
  uint64_t RecordsToSkip = 0;
  bool EndKnown = false;
  uint64_t EndPos = 0;
  uint64_t ConsumeSeq = 0;
  uint64_t ReleasedSeq = 0;
  bool Acquired = false;
  bool Stopping = false;
  Status Error;
  std::vector<Slot> Slots;
  std::vector<runtime::AlignedBuffer> Owned;
  double WaitSeconds = 0;
  uint64_t Batches = 0, Samples = 0;
  size_t PeakRecordBytes = 0;
  DamagedRecords Damaged;

  // Reader thread only: its position (records it handed on, the dropped
  // ones too) and the distinct records it dropped as damaged.
  uint64_t ReaderPos = 0;
  std::set<std::pair<int, uint64_t>> ReaderSeen;
  uint64_t ReaderOrder = 0;

  // Reader-side counters, published for stats().
  std::atomic<uint64_t> RecordsRead{0}, BytesRead{0}, Epoch{0};
  std::atomic<size_t> ShuffleBytes{0}, ShuffleFill{0}, CacheBytes{0};

  std::thread Reader;
  std::vector<std::thread> Workers;

  bool halted() const { return Stopping || !Error.ok(); }
  /// Picks this worker's files, or indexes all for sharding by record.
  Status chooseShard();

  void fail(const Status &S) {
    std::lock_guard<std::mutex> L(M);
    if (Error.ok())
      Error = S;
    wakeAll();
  }
  void wakeAll() {
    QueueNotEmpty.notify_all();
    QueueNotFull.notify_all();
    SlotFree.notify_all();
    BatchReady.notify_all();
  }
  /// Accounts the damage before position End (see DamagedRecords); its
  /// error stops the pipeline.
  Status accountDamage(uint64_t End) {
    Status S = Damaged.account(End);
    if (!S.ok() && Error.ok()) {
      Error = S;
      wakeAll();
    }
    return S;
  }

  //===--------------------------------------------------------------------===//
  // Reader: shard, interleave, cache, shuffle
  //===--------------------------------------------------------------------===//

  /// Hands a record to the workers; false when the pipeline is stopping.
  bool push(Record &&R) {
    ++ReaderPos;
    if (RecordsToSkip > 0) {
      --RecordsToSkip;
      return true;
    }
    std::unique_lock<std::mutex> L(M);
    QueueNotFull.wait(L, [&] { return halted() || Queue.size() < QueueCap; });
    if (halted())
      return false;
    QueueBytes += R.Data.size();
    PeakRecordBytes = std::max(PeakRecordBytes, QueueBytes + ShuffleBytes);
    Queue.push_back(std::move(R));
    QueueNotEmpty.notify_one();
    return true;
  }

  // TF's shuffle: fill the buffer, then each new element replaces a random
  // one, which is emitted. Drained at the end of each epoch so that every
  // epoch holds every record exactly once.
  std::vector<Record> ShuffleBuf;
  Rng ShuffleRng{0};

  bool emit(Record &&R) {
    RecordsRead++;
    BytesRead += R.Data.size();
    size_t Cap = static_cast<size_t>(std::max(1, Opt.ShuffleBufferSize));
    if (Cap <= 1)
      return push(std::move(R));
    if (ShuffleBuf.size() < Cap) {
      ShuffleBytes += R.Data.size();
      ShuffleBuf.push_back(std::move(R));
      ShuffleFill = ShuffleBuf.size();
      return true;
    }
    size_t J = ShuffleRng.below(Cap);
    std::swap(ShuffleBuf[J], R);
    ShuffleBytes += ShuffleBuf[J].Data.size();
    ShuffleBytes -= R.Data.size();
    return push(std::move(R));
  }

  bool drainShuffle() {
    while (!ShuffleBuf.empty()) {
      size_t J = ShuffleRng.below(ShuffleBuf.size());
      Record R = std::move(ShuffleBuf[J]);
      ShuffleBuf[J] = std::move(ShuffleBuf.back());
      ShuffleBuf.pop_back();
      ShuffleBytes -= R.Data.size();
      ShuffleFill = ShuffleBuf.size();
      if (!push(std::move(R)))
        return false;
    }
    return true;
  }

  std::vector<std::vector<CachedRecord>> Cache;
  std::vector<uint8_t> Cached;

  struct Cursor {
    int File;
    std::unique_ptr<RecordReader> Reader;
    size_t CacheIndex = 0;
  };

  /// Opens shard file \p F; false (with the error recorded) when it cannot
  /// be opened, which is no damaged record.
  bool openCursor(int F, Cursor &C) {
    C.File = F;
    C.CacheIndex = 0;
    C.Reader.reset();
    if (Opt.UseCaching && Cached[F])
      return true;
    if (Opt.UseCaching)
      Cache[F].clear();
    RecordReaderOptions RO;
    RO.Comp = ShardComp[F];
    RO.MaxRecordBytes = Opt.MaxRecordBytes;
    Status S;
    C.Reader = RecordReader::open(Shard[F], RO, S);
    if (!C.Reader) {
      fail(S);
      return false;
    }
    return true;
  }

  /// Next record of a cursor; 1 = record, 0 = file done, -1 = stop (the
  /// damaged records past the limit are met: the stream ends there, and
  /// the consumer fails at them).
  int readCursor(Cursor &C, Record &Out) {
    if (!C.Reader) {
      auto &Recs = Cache[C.File];
      if (C.CacheIndex >= Recs.size())
        return 0;
      const CachedRecord &Cached = Recs[C.CacheIndex++];
      Out.Data = Cached.Data;
      Out.File = C.File;
      Out.Offset = Cached.Offset;
      return 1;
    }
    for (;;) {
      Out.Offset = C.Reader->offset();
      Status S;
      switch (C.Reader->next(Out.Data, S)) {
      case RecordReader::Result::Record:
        Out.File = C.File;
        if (Opt.UseCaching) {
          Cache[C.File].push_back({Out.Data, Out.Offset});
          CacheBytes += Out.Data.size();
        }
        return 1;
      case RecordReader::Result::End:
        if (Opt.UseCaching)
          Cached[C.File] = 1;
        return 0;
      case RecordReader::Result::Corrupt:
        // Later epochs meet the same damage (a partially read file is not
        // cached); it counts once.
        if (ReaderSeen.insert({C.File, Out.Offset}).second) {
          std::lock_guard<std::mutex> L(M);
          Damaged.note({ReaderPos, false, ReaderOrder++, C.File, Out.Offset,
                        S.message()});
          if (ReaderSeen.size() > Opt.SkipCorruptRecords)
            return -1;
        }
        // A lost framing leaves the rest of the file unreadable.
        if (!C.Reader->canContinue())
          return 0;
        continue;
      }
    }
  }

  bool readEpoch(uint64_t E) {
    std::vector<int> Order(Shard.size());
    for (size_t I = 0; I < Order.size(); ++I)
      Order[I] = static_cast<int>(I);
    if (Opt.ShuffleFiles) {
      Rng R = Rng::forSample(Opt.Seed ^ 0x5bd1e995u, E);
      for (size_t I = Order.size(); I > 1; --I)
        std::swap(Order[I - 1], Order[R.below(I)]);
    }
    // Interleave with block length 1: a finished file's place in the cycle
    // goes to the next file, as tf.data's interleave does.
    std::vector<Cursor> Active;
    size_t NextFile = 0;
    auto openNext = [&](Cursor &C) -> bool {
      while (NextFile < Order.size()) {
        if (openCursor(Order[NextFile++], C))
          return true;
        if (halted())
          return false;
      }
      return false;
    };
    size_t Cycle = static_cast<size_t>(std::max(1, Opt.CycleLength));
    while (Active.size() < Cycle) {
      Cursor C;
      if (!openNext(C))
        break;
      Active.push_back(std::move(C));
    }
    size_t I = 0;
    Record R;
    while (!Active.empty()) {
      if (halted())
        return false;
      I %= Active.size();
      int Got = readCursor(Active[I], R);
      if (Got < 0)
        return false;
      if (Got == 0) {
        if (!openNext(Active[I]))
          Active.erase(Active.begin() + I);
        continue;
      }
      if (!emit(std::move(R)))
        return false;
      R = Record();
      ++I;
    }
    return !halted();
  }

  //===--------------------------------------------------------------------===//
  // Reader, sharding by record
  //===--------------------------------------------------------------------===//

  uint64_t totalRecords() const { return FirstRecord.back(); }

  /// This worker's records of epoch \p E in stream order, as numbers among
  /// all records: the epoch's order dealt out to the workers.
  std::vector<uint64_t> epochRecords(uint64_t E) const {
    const uint64_t N = totalRecords();
    std::vector<uint64_t> Order(N);
    if (Opt.ShuffleBufferSize > 1) {
      std::iota(Order.begin(), Order.end(), uint64_t(0));
      Rng R = Rng::forSample(Opt.Seed ^ 0x7f4a7c159e3779b9ull, E);
      for (uint64_t I = N; I > 1; --I)
        std::swap(Order[I - 1], Order[R.below(I)]);
    } else {
      std::vector<int> Files(Shard.size());
      std::iota(Files.begin(), Files.end(), 0);
      if (Opt.ShuffleFiles) {
        Rng R = Rng::forSample(Opt.Seed ^ 0x5bd1e995u, E);
        for (size_t I = Files.size(); I > 1; --I)
          std::swap(Files[I - 1], Files[R.below(I)]);
      }
      size_t At = 0;
      for (int F : Files)
        for (uint64_t G = FirstRecord[F]; G < FirstRecord[F + 1]; ++G)
          Order[At++] = G;
    }
    const uint64_t K = Opt.WorldSize;
    std::vector<uint64_t> Mine;
    Mine.reserve(N / K + 1);
    for (uint64_t P = Opt.Rank; P < N; P += K)
      Mine.push_back(Order[P]);
    return Mine;
  }

  /// The file of record \p G and its number in that file.
  std::pair<int, size_t> locate(uint64_t G) const {
    auto It = std::upper_bound(FirstRecord.begin(), FirstRecord.end(), G);
    const int F = static_cast<int>(It - FirstRecord.begin()) - 1;
    return {F, static_cast<size_t>(G - FirstRecord[F])};
  }

  RecordFile *openRecordFile(int F, Status &Err) {
    if (Open[F])
      return Open[F].get();
    if (OpenOrder.size() >= MaxOpenFiles) {
      Open[OpenOrder.front()].reset();
      OpenOrder.pop_front();
    }
    Open[F] = RecordFile::open(Shard[F], Opt.MaxRecordBytes, Err);
    if (Open[F])
      OpenOrder.push_back(F);
    return Open[F].get();
  }

  /// Notes a damaged record the reader drops, once however often it is
  /// met; false when it is one past the limit (the stream ends there).
  bool noteDropped(int F, uint64_t Offset, const std::string &Message) {
    if (!ReaderSeen.insert({F, Offset}).second)
      return true;
    std::lock_guard<std::mutex> L(M);
    Damaged.note({ReaderPos, false, ReaderOrder++, F, Offset, Message});
    return ReaderSeen.size() <= Opt.SkipCorruptRecords;
  }

  /// The damaged records the indexes list, each noted by one worker (the
  /// one whose share holds the record after it in file order), before the
  /// first position: met at the start, as they were while indexing.
  bool noteIndexedDamage() {
    for (size_t F = 0; F < Indexes.size(); ++F)
      for (uint64_t D : Indexes[F].Damaged) {
        const std::vector<uint64_t> &Offsets = Indexes[F].Offsets;
        const uint64_t After =
            FirstRecord[F] +
            (std::lower_bound(Offsets.begin(), Offsets.end(), D) -
             Offsets.begin());
        if (After % Opt.WorldSize != uint64_t(Opt.Rank))
          continue;
        Status Err;
        std::string Message = Shard[F] + ": byte offset " + std::to_string(D) +
                              ": corrupt record";
        if (RecordFile *RF = openRecordFile(static_cast<int>(F), Err)) {
          std::string Ignored;
          if (RF->readAt(D, 0, Ignored, Err) == RecordReader::Result::Corrupt)
            Message = Err.message();
        }
        if (!noteDropped(static_cast<int>(F), D, Message))
          return false;
      }
    return true;
  }

  /// Record \p G into \p Out: 1 = record, 0 = damaged (noted), -1 = stop.
  int readRecord(uint64_t G, Record &Out) {
    auto [F, I] = locate(G);
    Out.File = F;
    Out.Offset = Indexes[F].Offsets[I];
    if (Opt.UseCaching && RecordCached[G]) {
      Out.Data = RecordCache[G];
      return 1;
    }
    Status Err;
    RecordFile *RF = openRecordFile(F, Err);
    if (!RF) {
      fail(Err);
      return -1;
    }
    if (RF->readAt(Out.Offset, Indexes[F].span(I), Out.Data, Err) !=
        RecordReader::Result::Record)
      return noteDropped(F, Out.Offset, Err.message()) ? 0 : -1;
    if (Opt.UseCaching) {
      RecordCache[G] = Out.Data;
      RecordCached[G] = 1;
      CacheBytes += Out.Data.size();
    }
    return 1;
  }

  bool recordEpoch(uint64_t E) {
    const uint64_t N = totalRecords(), K = Opt.WorldSize;
    const uint64_t Share = N / K + (uint64_t(Opt.Rank) < N % K ? 1 : 0);
    // Resuming: the records before the start position are skipped by
    // number, without reading them (whole epochs without ordering them).
    const uint64_t Skip = std::min(RecordsToSkip, Share);
    RecordsToSkip -= Skip;
    ReaderPos += Skip;
    if (Skip == Share)
      return true;
    const std::vector<uint64_t> Mine = epochRecords(E);
    for (size_t J = Skip; J < Mine.size(); ++J) {
      if (halted())
        return false;
      Record R;
      const int Got = readRecord(Mine[J], R);
      if (Got < 0)
        return false;
      if (Got == 0)
        continue;
      RecordsRead++;
      BytesRead += R.Data.size();
      if (!push(std::move(R)))
        return false;
    }
    return !halted();
  }

  bool mockEpoch() {
    uint64_t Total = Opt.MockSamplesPerEpoch;
    uint64_t W = Opt.WorldSize, Rk = Opt.Rank;
    uint64_t Mine = Total / W + (Rk < Total % W ? 1 : 0);
    for (uint64_t I = 0; I < Mine; ++I) {
      Record R;
      R.Offset = I;
      if (!emit(std::move(R)))
        return false;
    }
    return true;
  }

  void readerMain() {
    ShuffleRng = Rng::forSample(Opt.Seed, 0x51ull << 40);
    for (uint64_t E = 0; Opt.NumEpochs == 0 || E < uint64_t(Opt.NumEpochs);
         ++E) {
      Epoch = E;
      if (ByRecord && E == 0 && !noteIndexedDamage())
        break;
      bool Ok = Opt.Spec.Mock ? mockEpoch()
                : ByRecord    ? recordEpoch(E)
                              : readEpoch(E);
      if (!Ok || !drainShuffle())
        break;
    }
    // Ends the stream at the end of the data or where the damage passed
    // the limit; a stop or an error wakes everyone on its own.
    std::lock_guard<std::mutex> L(M);
    QueueClosed = true;
    QueueNotEmpty.notify_all();
  }

  //===--------------------------------------------------------------------===//
  // Workers: map-and-batch into the ring
  //===--------------------------------------------------------------------===//

  /// Pops a record and takes the next batch position for it.
  bool pop(Record &R, uint64_t &Pos) {
    std::unique_lock<std::mutex> L(M);
    QueueNotEmpty.wait(
        L, [&] { return halted() || !Queue.empty() || QueueClosed; });
    if (halted())
      return false;
    if (Queue.empty()) {
      if (!EndKnown) {
        EndKnown = true;
        EndPos = NextPos;
        BatchReady.notify_all();
      }
      return false;
    }
    R = std::move(Queue.front());
    Queue.pop_front();
    QueueBytes -= R.Data.size();
    QueueNotFull.notify_one();
    Pos = NextPos++;
    return true;
  }

  std::string origin(const Record &R) const {
    if (Opt.Spec.Mock)
      return "mock sample";
    if (R.File < 0)
      return "record";
    return Shard[R.File] + ": byte offset " + std::to_string(R.Offset);
  }

  struct WorkerState {
    ImageDecoder Decoder;
    std::vector<uint8_t> Pixels;
    Example Ex;
  };

  Status process(const Record &R, uint64_t Pos, Slot &S, int Idx,
                 WorkerState &W) {
    float *Dst = static_cast<float *>(S.Buf.Images) + Idx * SampleElems;
    int32_t *Label = S.Buf.Labels + Idx;
    Rng Rand = Rng::forSample(Opt.Seed, Pos);
    if (Opt.Spec.Mock) {
      // Cheap deterministic pixels in [-1, 1]: mock data measures the
      // trainer, not a random number generator.
      uint64_t Base = Rand.next();
      for (size_t I = 0; I < SampleElems; ++I)
        Dst[I] = float((Base + I * 7) & 255) * (2.0f / 255.0f) - 1.0f;
      *Label = static_cast<int32_t>(
          Rand.below(static_cast<uint64_t>(std::max(1, Opt.MockNumClasses))));
      return Status::success();
    }
    if (Status St = parseExample(R.Data, W.Ex); !St.ok())
      return St;
    SampleView V;
    if (Status St = extractSample(W.Ex, Opt.Spec, V); !St.ok())
      return St;
    ImageRef Img;
    PreprocessPlan Plan;
    switch (V.Kind) {
    case ImageKind::Encoded: {
      // Planned from the header, so that only the pixels the preprocessing
      // reads are decoded (inception's crops: TensorFlow's
      // decode_and_crop_jpeg). Decoding to the output's channel count lets
      // libjpeg-turbo and libpng convert gray<->RGB for free.
      int H = 0, Wd = 0;
      if (Status St =
              W.Decoder.readHeader(V.Bytes.data(), V.Bytes.size(), H, Wd);
          !St.ok())
        return St;
      if (Status St = planPreprocessing(Opt.Preprocess, Opt.Training, H, Wd,
                                        Opt.Shape, Rand, Plan);
          !St.ok())
        return St;
      PixelView Px;
      if (Status St = W.Decoder.decodeCrop(V.Bytes.data(), V.Bytes.size(),
                                           Opt.Shape.Channels, Plan.Source,
                                           W.Pixels, Px);
          !St.ok())
        return St;
      Img.U8 = Px.Data;
      Img.Height = Px.Height, Img.Width = Px.Width, Img.Channels = Px.Channels;
      Img.RowStride = Px.RowStride;
      break;
    }
    case ImageKind::Raw:
      Img.U8 = reinterpret_cast<const uint8_t *>(V.Bytes.data());
      Img.Height = Opt.Spec.Height, Img.Width = Opt.Spec.Width;
      Img.Channels = Opt.Spec.Channels;
      break;
    case ImageKind::FloatList:
      Img.F32 = V.Floats;
      Img.FloatScale = Opt.Spec.FloatScale;
      Img.Height = Opt.Spec.Height, Img.Width = Opt.Spec.Width;
      Img.Channels = Opt.Spec.Channels;
      break;
    }
    // Decoded images are planned and cropped already; the others are whole.
    Status St = V.Kind == ImageKind::Encoded
                    ? applyPreprocessing(Plan, Img, Opt.Shape, Dst)
                    : preprocessImage(Opt.Preprocess, Opt.Training, Img,
                                      Opt.Shape, Rand, Dst);
    if (!St.ok())
      return St;
    *Label = static_cast<int32_t>(V.Label);
    return Status::success();
  }

  void workerMain() {
    WorkerState W;
    Record R;
    for (;;) {
      uint64_t Pos = 0;
      if (!pop(R, Pos))
        return;
      const uint64_t Seq = Pos / Opt.BatchSize;
      const int Idx = static_cast<int>(Pos % Opt.BatchSize);
      Slot *S;
      {
        std::unique_lock<std::mutex> L(M);
        SlotFree.wait(
            L, [&] { return halted() || Seq < ReleasedSeq + Slots.size(); });
        if (halted())
          return;
        S = &Slots[Seq % Slots.size()];
      }
      Status St = process(R, Pos, *S, Idx, W);
      const bool Ok = St.ok();
      std::lock_guard<std::mutex> L(M);
      if (!Ok)
        Damaged.note(
            {Pos, true, 0, R.File, R.Offset, origin(R) + ": " + St.message()});
      S->Valid[Idx] = Ok;
      S->Holes += !Ok;
      S->Done++;
      // Only a finished batch can satisfy the consumer (the end of the data
      // and errors notify on their own); waking it for every sample costs a
      // context switch per image.
      if (ready(Seq))
        BatchReady.notify_all();
    }
  }

  //===--------------------------------------------------------------------===//
  // Consumer
  //===--------------------------------------------------------------------===//

  /// Positions batch \p Seq will get: B, fewer at the end, 0 past it.
  int expected(uint64_t Seq) const {
    const uint64_t B = Opt.BatchSize;
    if (!EndKnown)
      return static_cast<int>(B);
    if (EndPos <= Seq * B)
      return 0;
    return static_cast<int>(std::min<uint64_t>(B, EndPos - Seq * B));
  }

  bool ready(uint64_t Seq) const {
    int E = expected(Seq);
    return E > 0 && Slots[Seq % Slots.size()].Done == E;
  }

  /// Gives the consumed batch's slot back to the workers (under M).
  void releaseSlot() {
    Slot &S = Slots[ConsumeSeq % Slots.size()];
    S.Done = 0;
    S.Holes = 0;
    ConsumeSeq++;
    ReleasedSeq = ConsumeSeq;
    SlotFree.notify_all();
  }

  /// A batch that must be full: each undecodable record's place gets a copy
  /// of one of the batch's decoded samples, the holes taking them in turn.
  Status fillHoles(Slot &S, uint64_t Seq) {
    std::vector<int> Decoded;
    for (int R = 0; R < Opt.BatchSize; ++R)
      if (S.Valid[R])
        Decoded.push_back(R);
    if (Decoded.empty())
      return Status::error(
          "data pipeline: batch " + std::to_string(Seq) + ": none of its " +
          std::to_string(Opt.BatchSize) +
          " records could be decoded, so the batch cannot be filled with "
          "copies of its other samples");
    auto *Img = static_cast<char *>(S.Buf.Images);
    size_t Next = 0;
    for (int R = 0; R < Opt.BatchSize; ++R) {
      if (S.Valid[R])
        continue;
      const int From = Decoded[Next++ % Decoded.size()];
      std::memcpy(Img + R * SampleBytes, Img + From * SampleBytes, SampleBytes);
      S.Buf.Labels[R] = S.Buf.Labels[From];
    }
    return Status::success();
  }

  /// A batch that may be short: closes the gaps so that it is a prefix of
  /// its decoded samples; returns their count.
  int closeHoles(Slot &S, int Size) {
    int W = 0;
    auto *Img = static_cast<char *>(S.Buf.Images);
    for (int R = 0; R < Size; ++R) {
      if (!S.Valid[R])
        continue;
      if (W != R) {
        std::memmove(Img + W * SampleBytes, Img + R * SampleBytes, SampleBytes);
        S.Buf.Labels[W] = S.Buf.Labels[R];
      }
      ++W;
    }
    return W;
  }

  int readyBatches() const {
    int N = 0;
    for (uint64_t S = ConsumeSeq + (Acquired ? 1 : 0);
         S < ReleasedSeq + Slots.size() && ready(S); ++S)
      ++N;
    return N;
  }
};

Status Pipeline::Impl::chooseShard() {
  const PipelineOptions &O = Opt;
  ByRecord = O.Sharding == ShardBy::Record;
  auto compressionOf = [&](const std::string &F, Compression &C) {
    C = O.Comp;
    return O.DetectCompression ? detectCompression(F, C) : Status::success();
  };
  if (ByRecord) {
    for (const std::string &F : O.Files) {
      Compression C;
      if (Status S = compressionOf(F, C); !S.ok())
        return S;
      if (C != Compression::None) {
        Notices.push_back(
            "data pipeline: " + F + " is " + compressionName(C) +
            "-compressed, which allows no reading by record offset: the "
            "workers share the files (shard_by=file) instead of the "
            "records; store the records uncompressed to shard by record");
        ByRecord = false;
        break;
      }
    }
  }
  if (!ByRecord) {
    for (size_t F = 0; F < O.Files.size(); ++F)
      if (F % O.WorldSize == size_t(O.Rank))
        Shard.push_back(O.Files[F]);
    if (Shard.empty())
      return Status::error("data pipeline: rank " + std::to_string(O.Rank) +
                           " of " + std::to_string(O.WorldSize) +
                           " gets none of the " +
                           std::to_string(O.Files.size()) +
                           " files; give at least one file per worker");
    for (const std::string &F : Shard) {
      Compression C;
      if (Status S = compressionOf(F, C); !S.ok())
        return S;
      ShardComp.push_back(C);
    }
    Cache.resize(Shard.size());
    Cached.assign(Shard.size(), 0);
    return Status::success();
  }

  Shard = O.Files;
  ShardComp.assign(Shard.size(), Compression::None);
  if (Shard.empty())
    return Status::error("data pipeline: no files to read");
  Indexes.resize(Shard.size());
  FirstRecord.assign(1, 0);
  const Clock::time_point Begin = Clock::now();
  size_t Built = 0;
  for (size_t F = 0; F < Shard.size(); ++F) {
    std::string Notice;
    bool Scanned = false;
    if (Status S = loadRecordIndex(Shard[F], O.MaxRecordBytes, Indexes[F],
                                   Notice, Scanned);
        !S.ok())
      return S;
    Built += Scanned;
    if (!Notice.empty())
      Notices.push_back("data pipeline: " + Notice);
    FirstRecord.push_back(FirstRecord.back() + Indexes[F].Offsets.size());
  }
  if (Built > 0) {
    char Seconds[32];
    std::snprintf(Seconds, sizeof(Seconds), "%.2f",
                  std::chrono::duration<double>(Clock::now() - Begin).count());
    Notices.push_back("data pipeline: indexed the records of " +
                      std::to_string(Built) + " of " +
                      std::to_string(Shard.size()) + " files in " + Seconds +
                      " s (FILE.fnnidx beside each; fastnn-data index builds "
                      "them ahead)");
  }
  Open.resize(Shard.size());
  if (O.UseCaching) {
    RecordCache.resize(totalRecords());
    RecordCached.assign(totalRecords(), 0);
  }
  return Status::success();
}

Pipeline::Pipeline(std::unique_ptr<Impl> I) : P(std::move(I)) {}

Pipeline::~Pipeline() { stop(); }

std::unique_ptr<Pipeline> Pipeline::create(const PipelineOptions &Options,
                                           Status &Err) {
  auto I = std::make_unique<Impl>();
  PipelineOptions &O = I->Opt;
  O = Options;
  auto bad = [&](const std::string &Msg) {
    Err = Status::error("data pipeline: " + Msg);
    return nullptr;
  };
  if (O.BatchSize <= 0)
    return bad("batch_size must be positive");
  if (O.NumThreads <= 0)
    return bad("num_preprocessing_threads must be positive");
  if (O.WorldSize <= 0 || O.Rank < 0 || O.Rank >= O.WorldSize)
    return bad("rank " + std::to_string(O.Rank) + " is outside world size " +
               std::to_string(O.WorldSize));
  if (O.Type != ElementType::Float32)
    return bad("only float32 batches are supported");
  OutputShape &Sh = O.Shape;
  if (!Sh.Height)
    Sh.Height = O.Spec.Height;
  if (!Sh.Width)
    Sh.Width = O.Spec.Width;
  if (!Sh.Channels)
    Sh.Channels = O.Spec.Channels ? O.Spec.Channels : 3;
  if (Sh.Height <= 0 || Sh.Width <= 0)
    return bad("dataset '" + O.Spec.Name +
               "' has no fixed image size: set the output height and width");
  if (Sh.Channels != 1 && Sh.Channels != 3)
    return bad("output images must have 1 or 3 channels");
  if (O.Spec.Kind != ImageKind::Encoded && O.Spec.Channels != Sh.Channels &&
      O.Spec.Channels != 1)
    return bad("cannot feed " + std::to_string(O.Spec.Channels) +
               "-channel images into " + std::to_string(Sh.Channels) +
               " channels");
  if (!O.Spec.Mock) {
    if (Status S = I->chooseShard(); !S.ok()) {
      Err = S;
      return nullptr;
    }
  }

  I->SampleElems = Sh.elements();
  I->SampleBytes = I->SampleElems * elementSize(O.Type);
  I->QueueCap =
      static_cast<size_t>(std::max(1, O.NumParallelBatches)) * O.BatchSize +
      O.NumThreads;
  if (!O.StagingBuffers.empty()) {
    for (const BatchBuffer &B : O.StagingBuffers) {
      if (!B.Images || !B.Labels)
        return bad("a staging buffer has no memory");
      I->Slots.push_back(Slot{B, 0, 0, {}});
    }
  } else {
    size_t N = static_cast<size_t>(std::max(1, O.PrefetchBatches));
    for (size_t S = 0; S < N; ++S) {
      // 64-byte alignment suits AVX-512 loads in the kernels that read it.
      runtime::AlignedBuffer Img, Lab;
      try {
        Img = runtime::allocateAligned(I->SampleBytes * O.BatchSize);
        Lab = runtime::allocateAligned(sizeof(int32_t) * O.BatchSize);
      } catch (const std::bad_alloc &) {
        return bad("cannot allocate the prefetch ring");
      }
      I->Slots.push_back(
          Slot{{Img.get(), static_cast<int32_t *>(Lab.get())}, 0, 0, {}});
      I->Owned.push_back(std::move(Img));
      I->Owned.push_back(std::move(Lab));
    }
  }
  for (Slot &S : I->Slots)
    S.Valid.assign(O.BatchSize, 0);
  I->Damaged = DamagedRecords(O.SkipCorruptRecords, O.SkipCorruptAdvice);
  I->RecordsToSkip = O.StartBatch * static_cast<uint64_t>(O.BatchSize);
  I->NextPos = I->RecordsToSkip;
  I->ConsumeSeq = I->ReleasedSeq = O.StartBatch;

  Impl *Raw = I.get();
  Raw->Reader = std::thread([Raw] { Raw->readerMain(); });
  for (int T = 0; T < O.NumThreads; ++T)
    Raw->Workers.emplace_back([Raw] { Raw->workerMain(); });
  Err = Status::success();
  return std::unique_ptr<Pipeline>(new Pipeline(std::move(I)));
}

void Pipeline::stop() {
  if (!P)
    return;
  {
    std::lock_guard<std::mutex> L(P->M);
    P->Stopping = true;
    P->wakeAll();
  }
  if (P->Reader.joinable())
    P->Reader.join();
  for (std::thread &T : P->Workers)
    if (T.joinable())
      T.join();
}

Status Pipeline::acquire(BatchView &Out) {
  Impl &I = *P;
  Out = BatchView();
  std::unique_lock<std::mutex> L(I.M);
  if (I.Acquired)
    return Status::error("data pipeline: acquire() before release() of the "
                         "previous batch");
  const uint64_t B = I.Opt.BatchSize;
  for (;;) {
    const uint64_t Seq = I.ConsumeSeq;
    auto Begin = Clock::now();
    I.BatchReady.wait(L, [&] {
      return I.halted() || I.ready(Seq) || (I.EndKnown && I.expected(Seq) == 0);
    });
    I.WaitSeconds +=
        std::chrono::duration<double>(Clock::now() - Begin).count();
    if (!I.Error.ok())
      return I.Error;
    if (I.Stopping)
      return Status::error("data pipeline: stopped");
    // Past the end everything met is due: damage after the last record too.
    const bool End = !I.ready(Seq);
    if (Status D = I.accountDamage(End ? UINT64_MAX : (Seq + 1) * B); !D.ok())
      return D;
    if (End)
      return Status::success();
    Slot &S = I.Slots[Seq % I.Slots.size()];
    const int Expected = I.expected(Seq);
    const bool Full = Expected == I.Opt.BatchSize;
    int Size = Expected;
    if (S.Holes && I.Opt.DropRemainder && Full) {
      if (Status F = I.fillHoles(S, Seq); !F.ok())
        return I.Error = F;
    } else if (S.Holes) {
      Size = I.closeHoles(S, Expected);
    }
    if (I.Opt.DropRemainder && !Full) {
      // The last partial batch: nothing more will come.
      if (Status D = I.accountDamage(UINT64_MAX); !D.ok())
        return D;
      return Status::success();
    }
    if (Size == 0) {
      // Every record of a batch that may be short was undecodable: on to
      // the next one.
      I.releaseSlot();
      continue;
    }
    I.Acquired = true;
    I.Batches++;
    I.Samples += Size;
    Out.Images = S.Buf.Images;
    Out.Labels = S.Buf.Labels;
    Out.Size = Size;
    Out.Index = Seq;
    return Status::success();
  }
}

void Pipeline::release(const BatchView &View) {
  Impl &I = *P;
  std::lock_guard<std::mutex> L(I.M);
  if (!I.Acquired || View.Index != I.ConsumeSeq)
    return;
  I.Acquired = false;
  I.releaseSlot();
}

Status Pipeline::nextBatch(void *Images, int32_t *Labels, int &Size) {
  BatchView V;
  Size = 0;
  if (Status S = acquire(V); !S.ok() || V.Size == 0)
    return S;
  std::memcpy(Images, V.Images, V.Size * P->SampleBytes);
  std::memcpy(Labels, V.Labels, V.Size * sizeof(int32_t));
  Size = V.Size;
  release(V);
  return Status::success();
}

PipelineStats Pipeline::stats() const {
  const Impl &I = *P;
  PipelineStats S;
  std::lock_guard<std::mutex> L(I.M);
  S.ElapsedSeconds =
      std::chrono::duration<double>(Clock::now() - I.Start).count();
  S.Batches = I.Batches;
  S.Samples = I.Samples;
  S.ImagesPerSecond = S.ElapsedSeconds > 0 ? I.Samples / S.ElapsedSeconds : 0;
  S.WaitSeconds = I.WaitSeconds;
  S.RecordsRead = I.RecordsRead;
  S.BytesRead = I.BytesRead;
  S.CorruptRecordsSkipped = I.Damaged.unreadable();
  S.BadSamplesSkipped = I.Damaged.undecodable();
  S.ReadyBatches = I.readyBatches();
  S.RecordQueueDepth = I.Queue.size();
  S.ShuffleBufferFill = I.ShuffleFill;
  S.Epoch = I.Epoch;
  S.CacheBytes = I.CacheBytes;
  S.RingBytes =
      I.Slots.size() * (I.SampleBytes + sizeof(int32_t)) * I.Opt.BatchSize;
  S.PeakRecordBytes = I.PeakRecordBytes;
  S.LastSkipMessage = I.Damaged.lastMessage();
  return S;
}

std::vector<SkippedRecord> Pipeline::takeSkipped() {
  std::lock_guard<std::mutex> L(P->M);
  return P->Damaged.takeSkipped();
}

const std::vector<std::string> &Pipeline::notices() const { return P->Notices; }
bool Pipeline::shardsByRecord() const { return P->ByRecord; }
uint64_t Pipeline::recordsPerEpoch() const {
  return P->ByRecord ? P->totalRecords() : 0;
}

const OutputShape &Pipeline::shape() const { return P->Opt.Shape; }
size_t Pipeline::sampleBytes() const { return P->SampleBytes; }

} // namespace fastnn::data
