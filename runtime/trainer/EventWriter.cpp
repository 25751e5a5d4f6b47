//===- EventWriter.cpp - TensorBoard event files --------------------------===//

#include "fastnn/trainer/EventWriter.h"
#include "fastnn/trainer/event.pb.h"

#include "fastnn/data/RecordIO.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

namespace fastnn::trainer {

namespace fs = std::filesystem;

namespace {

double wallTime() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string errnoText() { return std::strerror(errno); }

} // namespace

EventWriter::EventWriter(std::string Dir) : Dir(std::move(Dir)) {}

EventWriter::~EventWriter() {
  if (Fd >= 0)
    ::close(Fd);
}

Status EventWriter::createFile() {
  std::error_code Ec;
  fs::create_directories(Dir, Ec);
  if (Ec)
    return Status::ioError(Dir +
                           ": cannot create the directory for "
                           "TensorBoard events: " +
                           Ec.message());
  char Host[256] = "localhost";
  if (gethostname(Host, sizeof(Host) - 1) != 0)
    Host[0] = '\0';
  Host[sizeof(Host) - 1] = '\0';
  // TensorFlow's name; a second writer in the same second (a run restarted
  // at once, or this one after a file it could not repair) must not write
  // into another's file.
  const std::string Name = Dir + "/events.out.tfevents." +
                           std::to_string(static_cast<int64_t>(wallTime())) +
                           "." + Host;
  for (int Attempt = 0;; ++Attempt) {
    std::string Candidate = Name;
    if (Attempt > 0)
      Candidate += "." + std::to_string(getpid());
    if (Attempt > 1)
      Candidate += "." + std::to_string(Attempt);
    // O_APPEND: after a cut back the next event goes where the cut ended.
    Fd = ::open(Candidate.c_str(),
                O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (Fd >= 0) {
      Path = Candidate;
      Bytes = 0;
      return Status::success();
    }
    if (errno != EEXIST || Attempt == 100)
      return Status::ioError(
          Candidate +
          ": cannot create the TensorBoard event file: " + errnoText());
  }
}

Status EventWriter::append(const std::string *Event) {
  if (Closed)
    return Status::error(Dir + ": TensorBoard event written after close");
  if (Fd < 0)
    if (Status S = createFile(); !S.ok())
      return S;
  std::string Records;
  if (Bytes == 0) {
    tensorboard::Event Version;
    Version.set_wall_time(wallTime());
    Version.set_file_version("brain.Event:2");
    data::appendFramedRecord(Records, Version.SerializeAsString());
  }
  if (PendingStart >= 0) {
    tensorboard::Event Start;
    Start.set_wall_time(wallTime());
    Start.set_step(PendingStart);
    Start.mutable_session_log()->set_status(tensorboard::SessionLog::START);
    data::appendFramedRecord(Records, Start.SerializeAsString());
  }
  if (Event)
    data::appendFramedRecord(Records, *Event);
  size_t Done = 0;
  while (Done < Records.size()) {
    ssize_t N = ::write(Fd, Records.data() + Done, Records.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return cutBack(errnoText());
    if (N == 0)
      return cutBack("the write made no progress");
    Done += static_cast<size_t>(N);
  }
  Bytes += Records.size();
  PendingStart = -1;
  return Status::success();
}

Status EventWriter::cutBack(const std::string &Why) {
  std::string Message = Path + ": cannot write a TensorBoard event: " + Why;
  if (::ftruncate(Fd, static_cast<off_t>(Bytes)) == 0)
    return Status::ioError(Message);
  Message += "; cannot cut the file back to its last whole event (" +
             errnoText() + "): the next event starts a new file";
  ::close(Fd);
  Fd = -1;
  return Status::ioError(Message);
}

Status
EventWriter::scalars(int64_t Step,
                     const std::vector<std::pair<std::string, float>> &Values) {
  tensorboard::Event Event;
  Event.set_wall_time(wallTime());
  Event.set_step(Step);
  tensorboard::Summary *Summary = Event.mutable_summary();
  for (const auto &[Tag, Value] : Values) {
    tensorboard::SummaryValue *V = Summary->add_value();
    V->set_tag(Tag);
    V->set_simple_value(Value);
  }
  std::string Serialized = Event.SerializeAsString();
  return append(&Serialized);
}

Status EventWriter::sessionStart(int64_t Step) {
  PendingStart = Step;
  return append(nullptr);
}

Status EventWriter::close() {
  Closed = true;
  if (Fd < 0)
    return Status::success();
  int Synced = ::fsync(Fd);
  std::string Why = Synced != 0 ? errnoText() : "";
  if (::close(Fd) != 0 && Synced == 0) {
    Synced = -1;
    Why = errnoText();
  }
  Fd = -1;
  if (Synced != 0)
    return Status::ioError(Path +
                           ": cannot write the TensorBoard events to "
                           "the disk (at fsync or close): " +
                           Why);
  return Status::success();
}

} // namespace fastnn::trainer
