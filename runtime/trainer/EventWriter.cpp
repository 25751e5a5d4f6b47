//===- EventWriter.cpp - TensorBoard event files --------------------------===//

#include "fastnn/trainer/EventWriter.h"
#include "fastnn/trainer/event.pb.h"

#include <chrono>
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

} // namespace

EventWriter::~EventWriter() = default;

Status EventWriter::open(const std::string &Dir,
                         std::unique_ptr<EventWriter> &Out) {
  std::error_code Ec;
  fs::create_directories(Dir, Ec);
  if (Ec)
    return Status::error(Dir +
                         ": cannot create the directory: " + Ec.message());
  char Host[256] = "localhost";
  if (gethostname(Host, sizeof(Host) - 1) != 0)
    Host[0] = '\0';
  Host[sizeof(Host) - 1] = '\0';
  double Now = wallTime();
  // TensorFlow's name; a second writer in the same second (a run restarted
  // at once) must not truncate the first one's events.
  std::string Path = Dir + "/events.out.tfevents." +
                     std::to_string(static_cast<int64_t>(Now)) + "." + Host;
  if (fs::exists(Path, Ec))
    Path += "." + std::to_string(getpid());

  std::unique_ptr<EventWriter> Writer(new EventWriter());
  Writer->Path = Path;
  Status Err;
  Writer->Writer = data::RecordWriter::open(Path, data::Compression::None, Err);
  if (!Writer->Writer)
    return Err;
  tensorboard::Event Version;
  Version.set_wall_time(Now);
  Version.set_file_version("brain.Event:2");
  if (Status S = Writer->write(Version.SerializeAsString()); !S.ok())
    return S;
  Out = std::move(Writer);
  return Status::success();
}

Status EventWriter::write(const std::string &Event) {
  if (Status S = Writer->write(Event); !S.ok())
    return S;
  return Writer->flush();
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
  return write(Event.SerializeAsString());
}

Status EventWriter::sessionStart(int64_t Step) {
  tensorboard::Event Event;
  Event.set_wall_time(wallTime());
  Event.set_step(Step);
  Event.mutable_session_log()->set_status(tensorboard::SessionLog::START);
  return write(Event.SerializeAsString());
}

Status EventWriter::close() { return Writer->close(); }

} // namespace fastnn::trainer
