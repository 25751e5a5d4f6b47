//===- StopSignal.cpp - SIGTERM and SIGINT as a request to stop -----------===//

#include "fastnn/trainer/StopSignal.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace fastnn::trainer {

namespace {

std::atomic<int> Received{0};
std::atomic<bool> Armed{false};
// The signals the watcher takes: SIGTERM and SIGINT, less those the process
// started with ignored.
sigset_t Watched;

void say(const char *Text) {
  // A failed write changes nothing about the stop.
  ssize_t Ignored = ::write(STDERR_FILENO, Text, std::strlen(Text));
  (void)Ignored;
}

/// Ends the process the way Signal's default action would, so that the
/// parent sees a process killed by it.
[[noreturn]] void dieOf(int Signal) {
  sigset_t One;
  sigemptyset(&One);
  sigaddset(&One, Signal);
  pthread_sigmask(SIG_UNBLOCK, &One, nullptr);
  std::raise(Signal);
  ::_exit(128 + Signal);
}

[[noreturn]] void watch() {
  for (;;) {
    int Signal = 0;
    if (sigwait(&Watched, &Signal) != 0)
      continue;
    if (!Armed.load())
      dieOf(Signal);
    int None = 0;
    if (!Received.compare_exchange_strong(None, Signal))
      ::_exit(128 + Signal);
    say(Signal == SIGINT ? "train.bin: SIGINT: " : "train.bin: SIGTERM: ");
    say("stopping after the step in flight; a second signal ends train.bin at "
        "once\n");
  }
}

} // namespace

void watchStopSignals() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    sigemptyset(&Watched);
    for (int Signal : {SIGTERM, SIGINT}) {
      struct sigaction Current {};
      sigaction(Signal, nullptr, &Current);
      // nohup, or a background job of a script: that choice of the caller
      // stands.
      if (Current.sa_handler != SIG_IGN)
        sigaddset(&Watched, Signal);
    }
    // Threads started from here on (the loader's, OpenMP's, MPI's) inherit
    // the mask.
    pthread_sigmask(SIG_BLOCK, &Watched, nullptr);
    std::thread(watch).detach();
  });
}

StopSignals::StopSignals() {
  watchStopSignals();
  Received.store(0);
  Armed.store(true);
}

StopSignals::~StopSignals() { Armed.store(false); }

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
