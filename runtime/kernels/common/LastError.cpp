//===- LastError.cpp - the message behind fnn_last_error ------------------===//

#include "fastnn/runtime/LastError.h"

#include "fastnn/runtime/abi.h"

namespace {
// fnn_last_error is per thread, as errno is, so that two threads creating
// kernels do not read each other's failures.
thread_local std::string LastError;
thread_local const char *LastErrorFallback = nullptr;
} // namespace

void fastnn::runtime::setLastError(const std::string &Message) noexcept {
  try {
    LastError = Message;
    LastErrorFallback = nullptr;
  } catch (const std::exception &) {
    LastErrorFallback = "out of memory while recording an error";
  }
}

void fastnn::runtime::clearLastError() noexcept {
  LastError.clear();
  LastErrorFallback = nullptr;
}

extern "C" const char *fnn_last_error(void) {
  return LastErrorFallback ? LastErrorFallback : LastError.c_str();
}
