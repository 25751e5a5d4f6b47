//===- EventWriter.h - TensorBoard event files ------------------*- C++ -*-===//
//
// TensorBoard reads a directory's events.out.tfevents.* files: TFRecord
// files of Event protos, the first naming the format ("brain.Event:2"),
// the others carrying summaries. train.bin writes scalar summaries (loss,
// learning rate, throughput, accuracies) with the step they belong to.
//
// Each event is one write(2) of whole records, so that TensorBoard, which
// reads the growing file, sees it at once and never half of it: a write
// that fails (a full disk) is cut back to the last whole record, and the
// next event is tried as usual.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_EVENTWRITER_H
#define FASTNN_TRAINER_EVENTWRITER_H

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
  /// Events go to Dir/events.out.tfevents.<unix time>.<hostname> (".<pid>"
  /// added when that name is taken), which the first write creates with
  /// Dir and its parents, beginning with the file version event.
  explicit EventWriter(std::string Dir);
  EventWriter(const EventWriter &) = delete;
  EventWriter &operator=(const EventWriter &) = delete;
  ~EventWriter();

  /// One event at Step holding a scalar per (tag, value).
  Status scalars(int64_t Step,
                 const std::vector<std::pair<std::string, float>> &Values);
  /// TensorFlow's SessionLog START: a run that begins at Step. TensorBoard
  /// drops the events of Step and later that earlier files hold (an
  /// interrupted run's steps after its last checkpoint). When it cannot be
  /// written, it goes ahead of the next event.
  Status sessionStart(int64_t Step);
  /// fsyncs and closes the file; later writes fail.
  Status close();
  /// The file; "" until a write created it.
  const std::string &path() const { return Path; }

private:
  /// Appends Event (none: only what is pending) after the version event of
  /// a new file and a pending START.
  Status append(const std::string *Event);
  Status createFile();
  /// Cuts the file back to its whole records after a failed write (Why);
  /// where that fails too, the next event starts a new file.
  Status cutBack(const std::string &Why);

  const std::string Dir;
  std::string Path;
  int Fd = -1;
  bool Closed = false;
  /// The bytes of whole records in the file.
  uint64_t Bytes = 0;
  /// The step of a SessionLog START not yet written, -1 for none.
  int64_t PendingStart = -1;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_EVENTWRITER_H
