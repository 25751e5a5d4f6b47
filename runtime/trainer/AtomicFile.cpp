//===- AtomicFile.cpp - Files that appear whole or not at all -------------===//

#include "fastnn/trainer/AtomicFile.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace fastnn::trainer {

namespace {

std::string errnoText() { return std::strerror(errno); }

/// fsyncs a directory so that a rename in it is durable.
Status syncDirectory(const std::string &Dir) {
  int Fd = ::open(Dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (Fd < 0)
    return Status::error(
        Dir + ": cannot open the directory to sync it: " + errnoText());
  int Rc = ::fsync(Fd);
  std::string Why = Rc != 0 ? errnoText() : "";
  ::close(Fd);
  if (Rc != 0)
    return Status::error(Dir + ": cannot sync the directory: " + Why);
  return Status::success();
}

} // namespace

Status
writeFileAtomically(const std::string &Path,
                    const std::vector<std::pair<const void *, size_t>> &Pieces,
                    size_t CrashAfterBytes) {
  std::string Temp = Path + AtomicTempSuffix;
  int Fd = ::open(Temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (Fd < 0)
    return Status::error(Temp + ": cannot create: " + errnoText());
  auto fail = [&](const std::string &What) {
    std::string Why = errnoText();
    ::close(Fd);
    ::unlink(Temp.c_str());
    return Status::error(Temp + ": " + What + ": " + Why);
  };
  size_t Written = 0;
  for (const auto &[Data, Size] : Pieces) {
    const char *At = static_cast<const char *>(Data);
    size_t Left = Size;
    while (Left > 0) {
      size_t Chunk = std::min<size_t>(Left, size_t(1) << 26);
      if (CrashAfterBytes != SIZE_MAX)
        Chunk = std::min(Chunk, CrashAfterBytes - Written);
      ssize_t N = ::write(Fd, At, Chunk);
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0)
        return fail("write failed");
      At += N;
      Left -= static_cast<size_t>(N);
      Written += static_cast<size_t>(N);
      if (Written == CrashAfterBytes) {
        ::fsync(Fd);
        std::raise(SIGKILL);
      }
    }
  }
  if (::fsync(Fd) != 0)
    return fail("fsync failed");
  if (::close(Fd) != 0) {
    std::string Why = errnoText();
    ::unlink(Temp.c_str());
    return Status::error(Temp + ": close failed: " + Why);
  }
  if (std::rename(Temp.c_str(), Path.c_str()) != 0) {
    std::string Why = errnoText();
    ::unlink(Temp.c_str());
    return Status::error(Path + ": cannot rename " + Temp +
                         " into place: " + Why);
  }
  std::filesystem::path Parent = std::filesystem::path(Path).parent_path();
  return syncDirectory(Parent.empty() ? "." : Parent.string());
}

} // namespace fastnn::trainer
