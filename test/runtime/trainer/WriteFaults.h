//===- WriteFaults.h - Failing writes for the trainer's tests ---*- C++ -*-===//
//
// Two faults a test can give a write without a mount: a path whose
// temporary file is a symbolic link to /dev/full (every write fails with
// ENOSPC), and a file-size limit (RLIMIT_FSIZE: the write that crosses it
// is cut short, the next fails with EFBIG), which is also a partial write.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TEST_RUNTIME_TRAINER_WRITEFAULTS_H
#define FASTNN_TEST_RUNTIME_TRAINER_WRITEFAULTS_H

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace fastnn::trainer::test {

/// Makes Path a symbolic link to /dev/full.
inline void linkToDevFull(const std::string &Path) {
  ASSERT_EQ(::symlink("/dev/full", Path.c_str()), 0) << Path;
}

/// Limits the size of the files this process writes to Bytes while alive;
/// SIGXFSZ is ignored meanwhile, as train.bin does, so that writes past the
/// limit fail with EFBIG instead of ending the process.
class FileSizeLimit {
public:
  explicit FileSizeLimit(rlim_t Bytes) {
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &Saved), 0);
    OldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit Limit = Saved;
    Limit.rlim_cur = Bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &Limit), 0);
  }
  ~FileSizeLimit() {
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &Saved), 0);
    std::signal(SIGXFSZ, OldHandler);
  }
  FileSizeLimit(const FileSizeLimit &) = delete;
  FileSizeLimit &operator=(const FileSizeLimit &) = delete;

private:
  rlimit Saved{};
  void (*OldHandler)(int) = SIG_DFL;
};

} // namespace fastnn::trainer::test

#endif // FASTNN_TEST_RUNTIME_TRAINER_WRITEFAULTS_H
