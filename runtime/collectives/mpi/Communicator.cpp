//===- Communicator.cpp - the job's processes over MPI --------------------===//

#include "Communicator.h"

#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/LastError.h"
#include "fastnn/runtime/abi.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace fastnn::collectives {

namespace {

/// Whether a launcher started this process as part of a job: OpenMPI's
/// mpirun sets OMPI_*, PMIx and PMI launchers (Slurm's srun, MPICH's
/// hydra) PMIX_*/PMI_*. A process started alone does not initialise MPI,
/// which would cost a singleton start-up (about half a second with
/// OpenMPI) for nothing.
bool launched() {
  for (const char *Name :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(Name))
      return true;
  return false;
}

/// MPI counts are int: larger buffers go in pieces.
constexpr int64_t MaxCount = INT_MAX;

/// The tags of the questions about how far a worker is, and their answers.
constexpr int QuestionTag = 1, AnswerTag = 2;

/// A worker alive in a collective answers within a poll interval; one that
/// has not answered after this long is stopped, or busy elsewhere.
constexpr std::chrono::seconds AnswerGrace(1);
/// How long a worker that missed its deadline waits for the first worker
/// that arrived, which reports for all (their deadlines end close together
/// when they wait in the same collective), before it reports itself.
constexpr std::chrono::seconds ReportGrace(3);

/// A gap this long between two polls means that this process was not
/// running (stopped by SIGSTOP, say, until SIGCONT): that time is not the
/// other workers' delay, and the deadline moves by it.
constexpr std::chrono::seconds NotRunningGap(1);

using Clock = std::chrono::steady_clock;

} // namespace

Communicator &Communicator::get() {
  // Never destroyed: a process that exits while a collective blocks the
  // communication thread must not wait to join it.
  static Communicator *Instance = new Communicator();
  return *Instance;
}

bool Communicator::init(int *Argc, char ***Argv, std::string &Error) {
  if (Joined)
    return true;
  Joined = true;
  if (Argv && *Argv && (*Argv)[0]) {
    Program = (*Argv)[0];
    Program = Program.substr(Program.find_last_of('/') + 1);
  }
  if (!launched())
    return true;
  Mpi = MpiLibrary::load(Error);
  if (!Mpi)
    return false;
  int Provided = MPI_THREAD_SINGLE;
  int Code = Mpi->InitThread(Argc, Argv, MPI_THREAD_MULTIPLE, &Provided);
  if (Code != MPI_SUCCESS) {
    Error = "MPI_Init_thread: " + Mpi->errorText(Code);
    return false;
  }
  InMpi = true;
  // Collectives run on the communication thread, other calls on the
  // caller's, never at the same time.
  if (Provided < MPI_THREAD_SERIALIZED) {
    Error = "the MPI library offers thread level " + std::to_string(Provided) +
            "; fastnn needs MPI_THREAD_SERIALIZED (" +
            std::to_string(MPI_THREAD_SERIALIZED) + ") or more";
    return false;
  }
  // A failed collective returns, so that the message names this rank and
  // the likely cause before the job ends.
  Mpi->CommSetErrhandler(Mpi->CommWorld, Mpi->ErrorsReturn);
  Mpi->CommRank(Mpi->CommWorld, &Rank);
  Mpi->CommSize(Mpi->CommWorld, &Size);
  MPI_Comm Local;
  if (Mpi->CommSplitType(Mpi->CommWorld, MPI_COMM_TYPE_SHARED, Rank,
                         Mpi->InfoNull, &Local) == MPI_SUCCESS) {
    Mpi->CommRank(Local, &LocalRank);
    Mpi->CommFree(&Local);
  }
  if (Size > 1) {
    if (int Code = Mpi->CommDup(Mpi->CommWorld, &Watch); Code != MPI_SUCCESS) {
      Error = "MPI_Comm_dup: " + Mpi->errorText(Code);
      return false;
    }
    Answers.assign(static_cast<size_t>(Size), 0);
    AnswerRequests.assign(static_cast<size_t>(Size), Mpi->RequestNull);
    Question = Mpi->RequestNull;
    Mpi->Irecv(&QuestionBuffer, 1, Mpi->Int64, MPI_ANY_SOURCE, QuestionTag,
               Watch, &Question);
  }
  return true;
}

bool Communicator::broadcast(void *Buffer, size_t Bytes, int Root,
                             std::string &Error) {
  if (Size == 1)
    return true;
  char *Data = static_cast<char *>(Buffer);
  for (size_t Done = 0; Done < Bytes;) {
    int Piece = static_cast<int>(
        std::min<size_t>(Bytes - Done, static_cast<size_t>(MaxCount)));
    MPI_Request Request;
    starting();
    int Code = Mpi->Ibcast(Data + Done, Piece, Mpi->Byte, Root, Mpi->CommWorld,
                           &Request);
    if (Code == MPI_SUCCESS)
      Code = complete(Request, "broadcast");
    if (Code != MPI_SUCCESS) {
      Error = "broadcast of " + std::to_string(Bytes) + " bytes from rank " +
              std::to_string(Root) + ": " + Mpi->errorText(Code);
      return false;
    }
    Done += static_cast<size_t>(Piece);
  }
  return true;
}

bool Communicator::allreduceSum(void *Buffer, int64_t Count, bool Double,
                                std::string &Error) {
  if (Size == 1)
    return true;
  const size_t ElementBytes = Double ? sizeof(double) : sizeof(int64_t);
  MPI_Datatype Type = Double ? Mpi->Double : Mpi->Int64;
  char *Data = static_cast<char *>(Buffer);
  for (int64_t Done = 0; Done < Count;) {
    int Piece = static_cast<int>(std::min(Count - Done, MaxCount));
    MPI_Request Request;
    starting();
    int Code = Mpi->Iallreduce(MPI_IN_PLACE,
                               Data + static_cast<size_t>(Done) * ElementBytes,
                               Piece, Type, Mpi->Sum, Mpi->CommWorld, &Request);
    if (Code == MPI_SUCCESS)
      Code = complete(Request, "allreduce");
    if (Code != MPI_SUCCESS) {
      Error = "allreduce of " + std::to_string(Count) +
              " elements: " + Mpi->errorText(Code);
      return false;
    }
    Done += Piece;
  }
  return true;
}

void Communicator::abort(int Code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (InMpi)
    Mpi->Abort(Mpi->CommWorld, Code);
  std::exit(Code);
}

void Communicator::finalize() {
  if (Thread.joinable()) {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Stopping = true;
    }
    Started.notify_all();
    Thread.join();
  }
  if (InMpi) {
    if (Size > 1) {
      // MPI_Finalize waits for every process without a deadline: the
      // barrier gives a worker that never gets here one.
      MPI_Request Request;
      starting();
      int Code = Mpi->Ibarrier(Mpi->CommWorld, &Request);
      if (Code == MPI_SUCCESS)
        Code = complete(Request, "barrier");
      if (Code != MPI_SUCCESS)
        failed("the barrier before leaving the job", Code);
      if (Question != Mpi->RequestNull) {
        Mpi->Cancel(&Question);
        Mpi->Wait(&Question, MPI_STATUS_IGNORE);
      }
      for (MPI_Request &Answer : AnswerRequests)
        if (Answer != Mpi->RequestNull)
          Mpi->RequestFree(&Answer);
      Mpi->CommFree(&Watch);
    }
    Mpi->Finalize();
    InMpi = false;
  }
}

void Communicator::reserve(int64_t Count, int64_t Dtype) {
  if (Size == 1)
    return;
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Dtype == FNN_F16 || Dtype == FNN_BF16) {
    // Each worker receives K chunks of at most ceil(piece / K) elements.
    const int64_t Piece = std::min(Count, MaxCount);
    const size_t Received = static_cast<size_t>((Piece + Size - 1) / Size) *
                            static_cast<size_t>(Size);
    Chunks.resize(std::max(Chunks.size(), Received));
    for (std::vector<int> *Counts :
         {&ChunkCounts, &ChunkOffsets, &OwnCounts, &OwnOffsets})
      Counts->resize(static_cast<size_t>(Size));
  }
  // Kernels are made at init, when nothing is in flight: the ring can grow
  // without reordering it.
  Queue.resize(Queue.size() + 1);
  Head = 0;
  if (!Thread.joinable())
    Thread = std::thread([this] { run(); });
}

void Communicator::start(AllReduceJob &Job) {
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (Job.InFlight || Queued == Queue.size())
      failed("starting an allreduce that is already in flight", MPI_SUCCESS);
    Job.InFlight = true;
    Queue[(Head + Queued) % Queue.size()] = &Job;
    ++Queued;
  }
  Started.notify_one();
}

void Communicator::wait(AllReduceJob &Job) {
  std::unique_lock<std::mutex> Lock(Mutex);
  Finished.wait(Lock, [&] { return !Job.InFlight; });
}

void Communicator::run() {
  for (;;) {
    AllReduceJob *Job;
    {
      std::unique_lock<std::mutex> Lock(Mutex);
      Started.wait(Lock, [&] { return Stopping || Queued > 0; });
      if (Queued == 0)
        return;
      Job = Queue[Head];
      Head = (Head + 1) % Queue.size();
      --Queued;
    }
    reduce(*Job);
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Job->InFlight = false;
    }
    Finished.notify_all();
  }
}

int Communicator::complete(MPI_Request &Request, const char *What) {
  // MPI's blocking calls poll without pause until the peers' data arrives,
  // and beside compute kernels that keep the worker's cores busy that
  // polling took about half a core. Polling with short sleeps costs the
  // kernels almost nothing and a collective at most a poll interval per
  // round of messages.
  constexpr int EagerPolls = 16;
  const timespec Interval = {0, 50'000};
  const int64_t Collective = CollectivesStarted.load(std::memory_order_relaxed);
  const double Deadline = DeadlineSeconds.load(std::memory_order_relaxed);
  Clock::time_point Start = Clock::now(), LastPoll = Start;
  for (int Polls = 0;; ++Polls) {
    int Done = 0;
    if (int Code = Mpi->Test(&Request, &Done, MPI_STATUS_IGNORE);
        Code != MPI_SUCCESS)
      return Code;
    if (Done)
      return MPI_SUCCESS;
    // A collective that completes while polling eagerly (most of them)
    // pays for neither questions nor the clock.
    if (Polls < EagerPolls)
      continue;
    answerQuestions();
    const Clock::time_point Now = Clock::now();
    if (Now - LastPoll > NotRunningGap)
      Start += Now - LastPoll;
    LastPoll = Now;
    if (Deadline > 0 &&
        std::chrono::duration<double>(Now - Start).count() > Deadline)
      missedDeadline(What, Collective);
    nanosleep(&Interval, nullptr);
  }
}

void Communicator::answerQuestions() {
  // No question is posted in a job of one, nor after a failed MPI_Irecv.
  if (Question == Mpi->RequestNull)
    return;
  for (;;) {
    int Asked = 0;
    MPI_Status Status;
    if (Mpi->Test(&Question, &Asked, &Status) != MPI_SUCCESS || !Asked)
      return;
    const int From = Status.MPI_SOURCE;
    if (AnswerRequests[From] == Mpi->RequestNull) {
      Answers[From] = CollectivesStarted.load(std::memory_order_relaxed);
      Mpi->Isend(&Answers[From], 1, Mpi->Int64, From, AnswerTag, Watch,
                 &AnswerRequests[From]);
    }
    if (Mpi->Irecv(&QuestionBuffer, 1, Mpi->Int64, MPI_ANY_SOURCE, QuestionTag,
                   Watch, &Question) != MPI_SUCCESS) {
      Question = Mpi->RequestNull;
      return;
    }
  }
}

void Communicator::missedDeadline(const char *What, int64_t Collective) {
  // Once per process: the job ends below. Allocating here is fine.
  std::vector<int64_t> Reached(static_cast<size_t>(Size), -1);
  std::vector<MPI_Request> Asks(static_cast<size_t>(Size), Mpi->RequestNull),
      Replies(static_cast<size_t>(Size), Mpi->RequestNull);
  int64_t Asking = Collective;
  for (int Peer = 0; Peer < Size; ++Peer) {
    if (Peer == Rank)
      continue;
    Mpi->Isend(&Asking, 1, Mpi->Int64, Peer, QuestionTag, Watch, &Asks[Peer]);
    Mpi->Irecv(&Reached[Peer], 1, Mpi->Int64, Peer, AnswerTag, Watch,
               &Replies[Peer]);
  }
  const timespec Interval = {0, 1'000'000};
  for (Clock::time_point Until = Clock::now() + AnswerGrace;
       Clock::now() < Until;) {
    bool All = true;
    for (MPI_Request &Reply : Replies) {
      int Done = 1;
      if (Reply != Mpi->RequestNull &&
          Mpi->Test(&Reply, &Done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        Done = 0;
      All = All && Done;
    }
    if (All)
      break;
    answerQuestions();
    nanosleep(&Interval, nullptr);
  }
  // A worker that has started as many collectives as this one is waiting in
  // this collective too (or, the root of a broadcast, past it).
  std::string Missing;
  int FirstArrived = Rank;
  for (int Peer = 0; Peer < Size; ++Peer) {
    if (Peer == Rank)
      continue;
    if (Replies[Peer] == Mpi->RequestNull && Reached[Peer] >= Collective) {
      FirstArrived = std::min(FirstArrived, Peer);
      continue;
    }
    Missing += (Missing.empty() ? "" : ", ") + std::to_string(Peer);
  }
  if (FirstArrived != Rank)
    for (Clock::time_point Until = Clock::now() + ReportGrace;
         Clock::now() < Until;) {
      answerQuestions();
      nanosleep(&Interval, nullptr);
    }
  const int64_t Step = CurrentStep.load(std::memory_order_relaxed);
  std::fprintf(
      stderr,
      "%s: error: rank %d of %d: collective %s %s did not complete in %g s; "
      "ranks not arriving: %s; ending the job\n",
      Program.c_str(), Rank, Size, What,
      Step < 0 ? "before the first step"
               : ("at step " + std::to_string(Step)).c_str(),
      DeadlineSeconds.load(std::memory_order_relaxed),
      Missing.empty() ? "none (all are in it: MPI itself does not progress)"
                      : Missing.c_str());
  abort(1);
}

void Communicator::reduce(AllReduceJob &Job) {
  if (Job.Dtype == FNN_F16 || Job.Dtype == FNN_BF16) {
    uint16_t *Data = static_cast<uint16_t *>(Job.Buffer);
    for (int64_t Done = 0; Done < Job.Count;) {
      int Piece = static_cast<int>(std::min(Job.Count - Done, MaxCount));
      reduceHalves(Data + Done, Piece, Job.Dtype, Job.Mean);
      Done += Piece;
    }
    return;
  }
  const bool Double = Job.Dtype == FNN_F64;
  const size_t ElementBytes = Double ? sizeof(double) : sizeof(float);
  MPI_Datatype Type = Double ? Mpi->Double : Mpi->Float;
  char *Data = static_cast<char *>(Job.Buffer);
  for (int64_t Done = 0; Done < Job.Count;) {
    int Piece = static_cast<int>(std::min(Job.Count - Done, MaxCount));
    MPI_Request Request;
    starting();
    int Code = Mpi->Iallreduce(MPI_IN_PLACE,
                               Data + static_cast<size_t>(Done) * ElementBytes,
                               Piece, Type, Mpi->Sum, Mpi->CommWorld, &Request);
    if (Code == MPI_SUCCESS)
      Code = complete(Request, "allreduce");
    if (Code != MPI_SUCCESS)
      failed("the allreduce of " +
                 std::to_string(static_cast<size_t>(Job.Count) * ElementBytes) +
                 " bytes",
             Code);
    Done += Piece;
  }
  if (!Job.Mean)
    return;
  if (Double) {
    double Scale = 1.0 / Size;
    double *Values = static_cast<double *>(Job.Buffer);
    for (int64_t I = 0; I < Job.Count; ++I)
      Values[I] *= Scale;
  } else {
    float Scale = 1.0f / static_cast<float>(Size);
    float *Values = static_cast<float *>(Job.Buffer);
    for (int64_t I = 0; I < Job.Count; ++I)
      Values[I] *= Scale;
  }
}

void Communicator::reduceHalves(uint16_t *Data, int Count, int64_t Dtype,
                                bool Mean) {
  using runtime::bfloat16ToFloat;
  using runtime::floatToBfloat16;
  using runtime::floatToHalf;
  using runtime::halfToFloat;
  float (*ToFloat)(uint16_t) =
      Dtype == FNN_BF16 ? bfloat16ToFloat : halfToFloat;
  uint16_t (*FromFloat)(float) =
      Dtype == FNN_BF16 ? floatToBfloat16 : floatToHalf;
  // Worker p reduces chunk p, elements [p * Chunk, (p + 1) * Chunk), the
  // last one shorter (or empty).
  const int64_t Chunk = (static_cast<int64_t>(Count) + Size - 1) / Size;
  for (int P = 0; P < Size; ++P) {
    const int64_t Begin = std::min<int64_t>(P * Chunk, Count);
    ChunkOffsets[P] = static_cast<int>(Begin);
    ChunkCounts[P] =
        static_cast<int>(std::min<int64_t>(Begin + Chunk, Count) - Begin);
  }
  const int Own = ChunkCounts[Rank];
  for (int P = 0; P < Size; ++P) {
    OwnCounts[P] = Own;
    OwnOffsets[P] = P * Own;
  }
  auto check = [&](int Code) {
    if (Code != MPI_SUCCESS)
      failed("the allreduce of " +
                 std::to_string(static_cast<size_t>(Count) * 2) + " bytes",
             Code);
  };
  MPI_Request Request;
  starting();
  int Code =
      Mpi->Ialltoallv(Data, ChunkCounts.data(), ChunkOffsets.data(),
                      Mpi->Uint16, Chunks.data(), OwnCounts.data(),
                      OwnOffsets.data(), Mpi->Uint16, Mpi->CommWorld, &Request);
  if (Code == MPI_SUCCESS)
    Code = complete(Request, "allreduce");
  check(Code);
  // In rank order from the first worker's value, as a float32 sum would
  // be (a -0 of every worker stays -0); inf and NaN propagate.
  const float Scale = 1.0f / static_cast<float>(Size);
  uint16_t *Reduced = Data + ChunkOffsets[Rank];
  for (int I = 0; I < Own; ++I) {
    float Sum = ToFloat(Chunks[static_cast<size_t>(I)]);
    for (int P = 1; P < Size; ++P)
      Sum += ToFloat(Chunks[static_cast<size_t>(P) * Own + I]);
    Reduced[I] = FromFloat(Mean ? Sum * Scale : Sum);
  }
  starting();
  Code = Mpi->Iallgatherv(MPI_IN_PLACE, 0, Mpi->DatatypeNull, Data,
                          ChunkCounts.data(), ChunkOffsets.data(), Mpi->Uint16,
                          Mpi->CommWorld, &Request);
  if (Code == MPI_SUCCESS)
    Code = complete(Request, "allreduce");
  check(Code);
}

void Communicator::failed(const std::string &What, int MpiError) {
  std::fprintf(stderr, "%s: error: rank %d of %d: %s%s\n", Program.c_str(),
               Rank, Size, What.c_str(),
               MpiError == MPI_SUCCESS
                   ? ""
                   : (" failed: " + Mpi->errorText(MpiError) +
                      "; another worker has probably died or been killed "
                      "(the launcher's message names it)")
                         .c_str());
  abort(1);
}

} // namespace fastnn::collectives

using fastnn::collectives::Communicator;
using fastnn::runtime::clearLastError;
using fastnn::runtime::setLastError;

extern "C" int64_t fnn_comm_init(int *Argc, char ***Argv) {
  clearLastError();
  std::string Error;
  if (!Communicator::get().init(Argc, Argv, Error)) {
    setLastError("fnn_comm_init: " + Error);
    return -1;
  }
  return 0;
}

extern "C" int64_t fnn_comm_rank(void) { return Communicator::get().rank(); }

extern "C" int64_t fnn_comm_size(void) { return Communicator::get().size(); }

extern "C" int64_t fnn_comm_local_rank(void) {
  return Communicator::get().localRank();
}

extern "C" int64_t fnn_comm_broadcast(void *Buffer, size_t Bytes,
                                      int64_t Root) {
  clearLastError();
  std::string Error;
  if (!Communicator::get().broadcast(Buffer, Bytes, static_cast<int>(Root),
                                     Error)) {
    setLastError("fnn_comm_broadcast: " + Error);
    return -1;
  }
  return 0;
}

extern "C" int64_t fnn_comm_allreduce_sum(void *Buffer, int64_t Count,
                                          int64_t Dtype) {
  clearLastError();
  std::string Error;
  if (Dtype != FNN_I64 && Dtype != FNN_F64)
    Error = "dtype " + std::to_string(Dtype) + " is neither int64 nor float64";
  else if (Count < 0)
    Error = "negative count " + std::to_string(Count);
  else
    Communicator::get().allreduceSum(Buffer, Count, Dtype == FNN_F64, Error);
  if (!Error.empty()) {
    setLastError("fnn_comm_allreduce_sum: " + Error);
    return -1;
  }
  return 0;
}

extern "C" void fnn_comm_set_deadline(double Seconds) {
  Communicator::get().setDeadline(Seconds > 0 ? Seconds : 0);
}

extern "C" void fnn_comm_set_step(int64_t Step) {
  Communicator::get().setStep(Step);
}

extern "C" void fnn_comm_abort(int64_t Code) {
  Communicator::get().abort(static_cast<int>(Code));
}

extern "C" void fnn_comm_finalize(void) { Communicator::get().finalize(); }
