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
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H
#define FASTNN_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H

#include <mpi.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace fastnn::collectives {

/// One in-place allreduce a kernel repeats every step.
struct AllReduceJob {
  void *Buffer = nullptr;
  int64_t Count = 0;
  bool Double = false;
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
  bool broadcast(void *Buffer, size_t Bytes, int Root, std::string &Error);
  [[noreturn]] void abort(int Code);
  void finalize();

  /// Makes room for one more job in flight (called at kernel creation, so
  /// that start never allocates).
  void reserve();
  /// Hands the job to the communication thread.
  void start(AllReduceJob &Job);
  /// Returns once the job is done.
  void wait(AllReduceJob &Job);

private:
  Communicator() = default;
  void run();
  void reduce(AllReduceJob &Job);
  /// Drives a non-blocking collective to its end; returns MPI's code.
  int complete(MPI_Request &Request);
  /// Prints one line naming this rank and ends the job.
  [[noreturn]] void failed(const std::string &What, int MpiError);

  bool Joined = false, Mpi = false;
  int Rank = 0, Size = 1, LocalRank = 0;
  std::string Program = "fastnn";

  std::mutex Mutex;
  std::condition_variable Started, Finished;
  /// A ring of the jobs started and not yet taken, sized for every kernel.
  std::vector<AllReduceJob *> Queue;
  size_t Head = 0, Queued = 0;
  bool Stopping = false;
  std::thread Thread;
};

} // namespace fastnn::collectives

#endif // FASTNN_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H
