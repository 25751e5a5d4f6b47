//===- EventWriter.h - TensorBoard event files ------------------*- C++ -*-===//
//
// TensorBoard reads a directory's events.out.tfevents.* files: TFRecord
// files of Event protos, the first naming the format ("brain.Event:2"),
// the others carrying summaries. train.bin writes scalar summaries (loss,
// learning rate, throughput, accuracies) with the step they belong to.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_EVENTWRITER_H
#define FASTNN_TRAINER_EVENTWRITER_H

#include "fastnn/data/RecordIO.h"
#include "fastnn/data/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fastnn::trainer {

using data::Status;

class EventWriter {
public:
  /// Creates Dir (and its parents) and in it
  /// events.out.tfevents.<unix time>.<hostname>, with ".<pid>" added when
  /// that name is taken, and writes the file version event.
  static Status open(const std::string &Dir, std::unique_ptr<EventWriter> &Out);
  ~EventWriter();

  /// One event at Step holding a scalar per (tag, value); written through to
  /// the file so that TensorBoard sees it while the run goes on.
  Status scalars(int64_t Step,
                 const std::vector<std::pair<std::string, float>> &Values);
  /// TensorFlow's SessionLog START: a run that begins at Step. TensorBoard
  /// drops the events of Step and later that earlier files hold (an
  /// interrupted run's steps after its last checkpoint).
  Status sessionStart(int64_t Step);
  Status close();
  const std::string &path() const { return Path; }

private:
  EventWriter() = default;
  Status write(const std::string &Event);

  std::string Path;
  std::unique_ptr<data::RecordWriter> Writer;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_EVENTWRITER_H
