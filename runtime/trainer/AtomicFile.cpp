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
  const std::string Temp = Path + AtomicTempSuffix;
  // Every failure before the rename leaves Path as it was and removes Temp.
  auto fail = [&](const std::string &Step, const std::string &Why) {
    std::string Cleanup = "it is removed";
    if (::unlink(Temp.c_str()) != 0 && errno != ENOENT)
      Cleanup = "it cannot be removed: " + errnoText();
    return Status::ioError(Path + ": cannot write: " + Why + " (" + Step + " " +
                           Temp + " failed; " + Cleanup + ")");
  };
  int Fd = ::open(Temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (Fd < 0) {
    std::string Why = errnoText();
    return Status::ioError(Path + ": cannot write: " + Why + " (creating " +
                           Temp + " failed)");
  }
  auto failOpen = [&](const std::string &Step, const std::string &Why) {
    ::close(Fd);
    return fail(Step, Why);
  };
  size_t Written = 0;
  for (const auto &[Data, Size] : Pieces) {
    const char *At = static_cast<const char *>(Data);
    size_t Left = Size;
    while (Left > 0) {
      size_t Chunk = std::min<size_t>(Left, size_t(1) << 26);
      if (CrashAfterBytes != SIZE_MAX)
        Chunk = std::min(Chunk, CrashAfterBytes - Written);
      // A short write is continued; the next call reports why it was short.
      ssize_t N = ::write(Fd, At, Chunk);
      if (N < 0 && errno == EINTR)
        continue;
      if (N < 0)
        return failOpen("writing", errnoText());
      if (N == 0)
        return failOpen("writing", "the write made no progress");
      At += N;
      Left -= static_cast<size_t>(N);
      Written += static_cast<size_t>(N);
      if (Written == CrashAfterBytes) {
        ::fsync(Fd);
        std::raise(SIGKILL);
      }
    }
  }
  // A file system that allocates late (NFS, delayed allocation) reports a
  // full disk here rather than at the write.
  if (::fsync(Fd) != 0)
    return failOpen("the fsync of", errnoText());
  if (::close(Fd) != 0)
    return fail("closing", errnoText());
  if (std::rename(Temp.c_str(), Path.c_str()) != 0)
    return fail("renaming", errnoText());
  std::filesystem::path Parent = std::filesystem::path(Path).parent_path();
  std::string Dir = Parent.empty() ? "." : Parent.string();
  if (Status S = syncDirectory(Dir); !S.ok())
    return Status::ioError(Path + ": written, but " + S.message() +
                           " (after a crash the previous file may be back)");
  return Status::success();
}

} // namespace fastnn::trainer
