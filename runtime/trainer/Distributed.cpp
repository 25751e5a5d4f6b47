//===- Distributed.cpp - train.bin as one worker of a data-parallel job ---===//

#include "Distributed.h"

#include "TrainingRun.h"

#include "fastnn/runtime/abi.h"
#include "fastnn/runtime/model.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace fastnn::trainer {

void joinJob(int &Argc, char **&Argv) {
  if (fnn_comm_init(&Argc, &Argv) != 0)
    fail(std::string("cannot join the job mpirun started: ") +
         fnn_last_error());
  // Every way out of main leaves the job; a failing worker ends it instead
  // (endJob), which does not come back here.
  std::atexit(fnn_comm_finalize);
  // One log for the job, the chief's: K copies of every line interleaved
  // would bury it (Horovod's convention too).
  if (!isChief() && !std::freopen("/dev/null", "w", stdout))
    fail("cannot silence the log of worker " + std::to_string(fnn_comm_rank()));
}

Status applyWorker(Hparams &H) {
  if (fnn_comm_size() == 1)
    return Status::success();
  fnn_comm_set_deadline(static_cast<double>(H.getInt("collective_timeout_s")));
  std::string Rank = std::to_string(fnn_comm_rank());
  if (!H.getBool("enable_paisoar"))
    return Status::error(
        H.origin("enable_paisoar") +
        ": enable_paisoar=False asks for parameter-server training, which "
        "train.bin does not do; under mpirun the workers average their "
        "gradients (enable_paisoar=True)");
  if (H.isGiven("task_index")) {
    if (H.text("task_index") == Rank)
      return Status::success();
    return Status::error(H.origin("task_index") +
                         ": task_index=" + H.text("task_index") +
                         " contradicts this worker's MPI rank " + Rank +
                         "; under mpirun the rank is the task index: remove "
                         "task_index");
  }
  return H.parseFlags({"--task_index=" + Rank});
}

bool isChief() { return fnn_comm_rank() == 0; }

InputShard trainingShard() { return {fnn_comm_rank(), fnn_comm_size()}; }

void shareState(const std::vector<runtime::TensorRecord> &State,
                const runtime::ArenaAccess &Arena, int64_t &Step,
                int64_t &Position) {
  if (fnn_comm_size() == 1)
    return;
  int64_t Counters[2] = {Step, Position};
  bool Ok = fnn_comm_broadcast(Counters, sizeof(Counters), 0) == 0;
  // MPI broadcasts host memory: each tensor goes through a host region (the
  // arena itself on the CPU).
  for (const runtime::TensorRecord &Record : State) {
    runtime::HostRegion Region(Arena, Record);
    Region.load();
    Ok = Ok && fnn_comm_broadcast(Region.data(), Region.size(), 0) == 0;
    Region.store();
  }
  if (!Ok)
    fail(std::string("cannot receive the chief's model state: ") +
         fnn_last_error());
  Step = Counters[0];
  Position = Counters[1];
}

void checkWorkersAgree(const std::vector<runtime::TensorRecord> &State,
                       const runtime::ArenaAccess &Arena, int64_t Step) {
  if (fnn_comm_size() == 1)
    return;
  // FNV-1a over the bytes every worker must hold alike.
  uint64_t Digest = 0xcbf29ce484222325u;
  for (const runtime::TensorRecord &Record : State) {
    if (Record.kind == FNN_STATE_STATISTIC)
      continue;
    runtime::HostRegion Region(Arena, Record);
    Region.load();
    for (size_t I = 0; I < Region.size(); ++I)
      Digest = (Digest ^ Region.data()[I]) * 0x100000001b3u;
  }
  uint64_t ChiefDigest = Digest;
  int64_t Differing = 0;
  bool Ok = fnn_comm_broadcast(&ChiefDigest, sizeof(ChiefDigest), 0) == 0;
  Differing = Digest != ChiefDigest;
  Ok = Ok && fnn_comm_allreduce_sum(&Differing, 1, FNN_I64) == 0;
  if (!Ok)
    fail(workerPrefix() +
         "cannot compare the model state with the other "
         "workers': " +
         fnn_last_error());
  if (!isChief())
    return;
  if (Differing != 0)
    fail("after step " + std::to_string(Step) + ", " +
         std::to_string(Differing) + " of the " +
         std::to_string(fnn_comm_size()) +
         " workers hold trainable parameters, optimizer slots or a loss "
         "scale other than the chief's: the workers diverged");
  std::printf("train.bin: all %lld workers end step %lld with the chief's "
              "parameters, optimizer slots and loss scale\n",
              static_cast<long long>(fnn_comm_size()),
              static_cast<long long>(Step));
}

int agreeOnStop(int Signal) {
  const int64_t Workers = fnn_comm_size();
  if (Workers == 1)
    return Signal;
  int Agreed = 0;
  for (int64_t Root = 0; Root < Workers; ++Root) {
    int32_t Value = static_cast<int32_t>(Signal);
    if (fnn_comm_broadcast(&Value, sizeof(Value), Root) != 0)
      fail(workerPrefix() + "cannot agree on a stop with the other workers: " +
           fnn_last_error());
    if (Agreed == 0)
      Agreed = Value;
  }
  return Agreed;
}

void endOfInput(int64_t Step) {
  if (fnn_comm_size() > 1)
    fail("the input ended before step " + std::to_string(Step) +
         ", which every worker runs: this worker's files hold fewer samples "
         "than its share of num_sample_per_epoch; give every worker files "
         "of similar size, or leave num_sample_per_epoch unset");
}

std::string workerPrefix() {
  if (fnn_comm_size() == 1)
    return "";
  return "rank " + std::to_string(fnn_comm_rank()) + " of " +
         std::to_string(fnn_comm_size()) + ": ";
}

void endJob(int Code) {
  if (fnn_comm_size() > 1)
    fnn_comm_abort(Code);
  std::exit(Code);
}

} // namespace fastnn::trainer
