//===- StopSignal.cpp - SIGTERM and SIGINT as a request to stop -----------===//

#include "fastnn/trainer/StopSignal.h"

#include <atomic>
#include <cstring>
#include <unistd.h>

namespace fastnn::trainer {

namespace {

// The one piece of global state a signal handler needs. Any thread may run
// the handler, two at once: a lock-free atomic decides which signal was
// first.
std::atomic<int> Received{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "a signal handler may only use lock-free atomics");

void say(const char *Text) {
  // write(2), unlike stdio, is async-signal-safe; a failed write changes
  // nothing about the stop.
  ssize_t Ignored = ::write(STDERR_FILENO, Text, std::strlen(Text));
  (void)Ignored;
}

// Async-signal-safe: a compare-exchange, write and _exit.
extern "C" void onStopSignal(int Signal) {
  int None = 0;
  if (!Received.compare_exchange_strong(None, Signal))
    ::_exit(128 + Signal);
  say(Signal == SIGINT ? "train.bin: SIGINT: " : "train.bin: SIGTERM: ");
  say("stopping after the step in flight; a second signal ends train.bin at "
      "once\n");
}

/// Catches Signal, unless the process started with it ignored (nohup, a
/// background job of a script): that choice of the caller stands.
void catchSignal(int Signal, struct sigaction &Previous) {
  sigaction(Signal, nullptr, &Previous);
  if (Previous.sa_handler == SIG_IGN)
    return;
  struct sigaction Action {};
  Action.sa_handler = onStopSignal;
  // Neither handler interrupts the other: a SIGINT and a SIGTERM in quick
  // succession are a first and a second signal, never two firsts.
  sigemptyset(&Action.sa_mask);
  sigaddset(&Action.sa_mask, SIGTERM);
  sigaddset(&Action.sa_mask, SIGINT);
  // Reads, writes and fsyncs in flight go on instead of failing with EINTR.
  Action.sa_flags = SA_RESTART;
  sigaction(Signal, &Action, nullptr);
}

} // namespace

StopSignals::StopSignals() {
  Received.store(0);
  catchSignal(SIGTERM, PreviousTerm);
  catchSignal(SIGINT, PreviousInt);
}

StopSignals::~StopSignals() {
  sigaction(SIGTERM, &PreviousTerm, nullptr);
  sigaction(SIGINT, &PreviousInt, nullptr);
}

int StopSignals::received() { return Received.load(); }

const char *stopSignalName(int Signal) {
  switch (Signal) {
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  default:
    return "a signal";
  }
}

} // namespace fastnn::trainer
