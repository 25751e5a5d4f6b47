//===- Communicator.h - the job's processes over MPI -----------*- C++ -*-===//
//
// The state behind abi.h's fnn_comm_* calls: which process of how many this
// is, and the thread that runs the allreduces generated code starts. That
// thread takes them in the order they were started (every process starts
// the same ones in the same order, so the collectives match) and drives
// each MPI_Iallreduce to its end while the caller goes on computing: MPI's
// non-blocking collectives progress only inside MPI calls, which the
// compute kernels do not make.
//
// Gradients of half-precision types (float16, bfloat16) travel in their
// own type, half the bytes of float32; MPI has no arithmetic on them, so
// their sum is a reduce-scatter (an all-to-all of the buckets' chunks),
// each worker adding up its chunk's K values in float in rank order and
// rounding once, and an allgather of the rounded chunks. Every element is
// then the float32 reduction of the same values rounded once to the type,
// computed by one worker for all, so every worker holds the same bits;
// a tree of pairwise sums in the narrow type would round log2(K) times
// and store partial sums that overflow float16 sooner.
//
// Every collective, on that thread or the caller's, polls to its end under
// a deadline (fnn_comm_set_deadline). A worker whose collective misses it
// asks the others, point to point on a communicator of its own, how many
// collectives each has started; they answer from inside their own
// collectives' polling (a worker stopped or computing does not answer), so
// the message can name the workers that did not arrive, at no cost to the
// collectives that complete in time. Answering inside the polling keeps to
// one thread in MPI at a time: MPI_THREAD_SERIALIZED suffices.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H
#define FASTNN_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H

#include "MpiLibrary.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fastnn::collectives {

/// One in-place allreduce a kernel repeats every step.
struct AllReduceJob {
  void *Buffer = nullptr;
  int64_t Count = 0;
  /// FNN_F32, FNN_F64, FNN_F16 or FNN_BF16.
  int64_t Dtype = 0;
  bool Mean = false;
  /// Set by start, cleared by the communication thread; guarded by the
  /// communicator's mutex.
  bool InFlight = false;
};

class Communicator {
public:
  /// The process's communicator (the ABI's one piece of global state); a
  /// job of one until init() joins a launched job.
  static Communicator &get();

  /// See fnn_comm_init. Returns false with Error set.
  bool init(int *Argc, char ***Argv, std::string &Error);
  int rank() const { return Rank; }
  int size() const { return Size; }
  int localRank() const { return LocalRank; }
  /// The program's name (argv[0]'s last component), for messages.
  const std::string &program() const { return Program; }
  bool broadcast(void *Buffer, size_t Bytes, int Root, std::string &Error);
  /// See fnn_comm_allreduce_sum: int64 (Double false) or double elements.
  bool allreduceSum(void *Buffer, int64_t Count, bool Double,
                    std::string &Error);
  /// See fnn_comm_set_deadline and fnn_comm_set_step.
  void setDeadline(double Seconds) { DeadlineSeconds = Seconds; }
  void setStep(int64_t Step) { CurrentStep = Step; }
  [[noreturn]] void abort(int Code);
  /// Waits for every worker (under the deadline) and leaves the job.
  void finalize();

  /// Makes room for one more job in flight (called at kernel creation, so
  /// that start never allocates), of Count elements of Dtype.
  void reserve(int64_t Count, int64_t Dtype);
  /// Hands the job to the communication thread.
  void start(AllReduceJob &Job);
  /// Returns once the job is done.
  void wait(AllReduceJob &Job);

private:
  Communicator() = default;
  void run();
  void reduce(AllReduceJob &Job);
  /// The reduce-scatter and allgather of up to INT_MAX float16 or bfloat16
  /// elements.
  void reduceHalves(uint16_t *Data, int Count, int64_t Dtype, bool Mean);
  /// Counts a collective about to start, for the others' questions.
  void starting() {
    CollectivesStarted.fetch_add(1, std::memory_order_relaxed);
  }
  /// Drives the non-blocking collective just started (What: its kind, for
  /// messages) to its end, or ends the job at the deadline; returns MPI's
  /// code.
  int complete(MPI_Request &Request, const char *What);
  /// Answers the questions of workers whose collective missed its deadline.
  void answerQuestions();
  /// Asks the others how far they are, names those that have not reached
  /// collective number Collective in one line and ends the job.
  [[noreturn]] void missedDeadline(const char *What, int64_t Collective);
  /// Prints one line naming this rank and ends the job.
  [[noreturn]] void failed(const std::string &What, int MpiError);

  bool Joined = false;
  /// The loaded MPI (null in a process started alone), and whether MPI is
  /// initialised and not yet finalised.
  std::unique_ptr<const MpiLibrary> Mpi;
  bool InMpi = false;
  int Rank = 0, Size = 1, LocalRank = 0;
  std::string Program = "fastnn";

  /// The deadline in seconds (0: none) and the step the trainer is at (-1:
  /// before the first), read by both threads.
  std::atomic<double> DeadlineSeconds{0};
  std::atomic<int64_t> CurrentStep{-1};
  /// Collectives this worker has started, as the others count them: every
  /// worker starts the same ones in the same order.
  std::atomic<int64_t> CollectivesStarted{0};
  /// Questions and answers about how far a worker is go on a duplicate of
  /// MPI_COMM_WORLD, apart from everything else (both set in a job of
  /// several only).
  MPI_Comm Watch{};
  MPI_Request Question{};
  int64_t QuestionBuffer = 0;
  /// One answer to each worker (each asks once: then the job ends).
  std::vector<int64_t> Answers;
  std::vector<MPI_Request> AnswerRequests;

  std::mutex Mutex;
  std::condition_variable Started, Finished;
  /// A ring of the jobs started and not yet taken, sized for every kernel.
  std::vector<AllReduceJob *> Queue;
  size_t Head = 0, Queued = 0;
  bool Stopping = false;
  std::thread Thread;

  /// The half-precision reduction's chunks as each worker receives them
  /// (sized for the largest job), and the collectives' counts and
  /// displacements per worker: the chunks' and this worker's chunk's.
  std::vector<uint16_t> Chunks;
  std::vector<int> ChunkCounts, ChunkOffsets, OwnCounts, OwnOffsets;
};

} // namespace fastnn::collectives

#endif // FASTNN_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H
