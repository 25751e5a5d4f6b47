//===- StopSignal.h - SIGTERM and SIGINT as a request to stop ---*- C++ -*-===//
//
// A scheduler that reclaims a machine sends SIGTERM and waits a grace period
// before SIGKILL; a person presses Ctrl-C (SIGINT). While a StopSignals
// lives, either signal only records that a stop was asked for: the loop
// reads the request after each call of the compiled step, the run saves a
// checkpoint and ends with 128+signal. A second signal while stopping ends
// the process at once with the same code: every file the trainer writes is
// replaced atomically (AtomicFile.h), so the previous checkpoint stays
// whole. Outside a StopSignals either signal ends the process as its
// default action does.
//
// No thread but one watcher ever takes the signals (sigwait): a handler
// run on a compute thread would push its frame where the stack pointer
// is, and oneDNN 2.x's GEMM kernels point it into a heap buffer while they
// run (oneDNN issue #4845, fixed in 3.11), so a signal there corrupted the
// heap.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_STOPSIGNAL_H
#define FASTNN_TRAINER_STOPSIGNAL_H

#include <csignal>

namespace fastnn::trainer {

/// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread
/// it starts afterwards, and starts the thread that waits for them. Call it
/// first in main, before any other thread starts; later calls do nothing.
/// A signal the process started with ignored stays ignored.
void watchStopSignals();

/// Turns SIGTERM and SIGINT into a request to stop from construction to
/// destruction (watchStopSignals first if main did not). One at a time.
class StopSignals {
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;

  /// The first signal caught, 0 for none.
  static int received();
};

/// "SIGTERM", "SIGINT", else "a signal".
const char *stopSignalName(int Signal);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_STOPSIGNAL_H
