//===- StopSignal.h - SIGTERM and SIGINT as a request to stop ---*- C++ -*-===//
//
// A scheduler that reclaims a machine sends SIGTERM and waits a grace period
// before SIGKILL; a person presses Ctrl-C (SIGINT). While a StopSignals
// lives, either signal only records that a stop was asked for: the loop
// reads the request after each call of the compiled step, the run saves a
// checkpoint and ends with 128+signal. A second signal while stopping ends
// the process at once with the same code: every file the trainer writes is
// replaced atomically (AtomicFile.h), so the previous checkpoint stays
// whole.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_STOPSIGNAL_H
#define FASTNN_TRAINER_STOPSIGNAL_H

#include <csignal>

namespace fastnn::trainer {

/// Catches SIGTERM and SIGINT (sigaction) from construction to destruction,
/// which restores the handlers before it; a signal the process started with
/// ignored stays ignored. One at a time.
class StopSignals {
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;

  /// The first signal caught, 0 for none.
  static int received();

private:
  struct sigaction PreviousTerm, PreviousInt;
};

/// "SIGTERM", "SIGINT", else "a signal".
const char *stopSignalName(int Signal);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_STOPSIGNAL_H
