//===- Status.h - Error value of the data pipeline --------------*- C++ -*-===//
//
// Every failure in fastnn_data is one line that names the file and the byte
// offset (or the spec line) and says what is wrong. Functions return a Status
// instead of throwing so that the C ABI above them never sees an exception.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DATA_STATUS_H
#define FASTNN_DATA_STATUS_H

#include <string>
#include <utility>

namespace fastnn::data {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string Message) {
    Status S;
    S.Failed = true;
    S.Message = std::move(Message);
    return S;
  }
  /// A system call that failed on a file being written (a full disk, an I/O
  /// error): callers that exit on it use a code of its own (train.bin: 74,
  /// sysexits' EX_IOERR), so that a script can tell it from bad input.
  static Status ioError(std::string Message) {
    Status S = error(std::move(Message));
    S.Io = true;
    return S;
  }
  bool ok() const { return !Failed; }
  bool isIoError() const { return Io; }
  const std::string &message() const { return Message; }

private:
  bool Failed = false;
  bool Io = false;
  std::string Message;
};

} // namespace fastnn::data

#endif // FASTNN_DATA_STATUS_H
