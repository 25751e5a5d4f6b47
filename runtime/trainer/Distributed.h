//===- Distributed.h - One worker of a data-parallel job --------*- C++ -*-===//
//
// `mpirun -np K ./train.bin --hparams run.txt` starts K workers of one job;
// the compiled step averages gradients and metrics over them. Here is what
// the loop around it does differently per worker: the chief (rank 0) alone
// restores, saves checkpoints, writes TensorBoard events and the log, and
// evaluates; the worker profile_at_task writes timelines; each worker reads
// its share of the training files; and the chief's restored state reaches
// every worker by broadcast, so that workers on other hosts need no access
// to train_dir. A process started alone is a job of one.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_DISTRIBUTED_H
#define FASTNN_TRAINER_DISTRIBUTED_H

#include "fastnn/runtime/ModelDevice.h"
#include "fastnn/runtime/ModelTables.h"
#include "fastnn/trainer/DataSource.h"
#include "fastnn/trainer/Hparams.h"

#include <string>
#include <vector>

namespace fastnn::trainer {

/// Joins the job the launcher started, before anything else, and leaves it
/// when the process exits; the workers but the chief print nothing on
/// stdout from then on (errors still go to stderr).
void joinJob(int &Argc, char **&Argv);

/// This worker's settings: task_index is its rank (a task_index given
/// otherwise is an error), a job of several needs enable_paisoar=True, and
/// its collectives get collective_timeout_s as their deadline.
Status applyWorker(Hparams &H);

bool isChief();
/// The share of the training input this worker reads.
InputShard trainingShard();

/// Gives every worker the chief's model state, step and input position
/// (what the chief restored, or the initial state).
void shareState(const std::vector<runtime::TensorRecord> &State,
                const runtime::ArenaAccess &Arena, int64_t &Step,
                int64_t &Position);

/// Ends the job unless every worker ends step Step with the chief's
/// trainable parameters and slots (optimizer state, the loss scale), the
/// invariant of data-parallel training that a worker deciding alone (an
/// update the others skipped on overflow) would break; batch-norm
/// statistics are each worker's own. A job of several compares one digest
/// per worker and the chief says so in one line; a job of one nothing.
void checkWorkersAgree(const std::vector<runtime::TensorRecord> &State,
                       const runtime::ArenaAccess &Arena, int64_t Step);

/// The signal that asks the job to stop: the first worker's, in rank order,
/// that received one (Signal on this worker, 0 for none), so that every
/// worker stops after the same step. A job of several exchanges one int per
/// worker for it (a broadcast from each); a job of one nothing.
int agreeOnStop(int Signal);

/// A worker's input ended before step Step, which every worker runs: ends
/// the job (the others would wait for it in the next allreduce).
void endOfInput(int64_t Step);

/// "rank 1 of 4: " in a job of several, "" alone: the start of a failing
/// worker's messages.
std::string workerPrefix();
/// Ends the job with Code: in a job of several every worker ends.
[[noreturn]] void endJob(int Code);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_DISTRIBUTED_H
