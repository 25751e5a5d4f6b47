//===- LastError.h - the message behind fnn_last_error ----------*- C++ -*-===//
//
// Every backend's ABI functions record why they failed here; the message is
// per thread, as errno is.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_LASTERROR_H
#define FASTNN_RUNTIME_LASTERROR_H

#include <string>

namespace fastnn::runtime {

void setLastError(const std::string &Message) noexcept;
void clearLastError() noexcept;

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_LASTERROR_H
