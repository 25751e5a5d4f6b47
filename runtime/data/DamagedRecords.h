//===- DamagedRecords.h - The input pipeline's damaged records --*- C++ -*-===//
//
// The skip policy of Pipeline.h in one place. The reader and the workers
// note each damaged record as they meet it, with the position it is to be
// accounted at; the consumer accounts, in stream order, the damage before
// the end of each batch it takes, so that what is counted, and where the
// limit is passed, does not depend on how far ahead the threads are. A
// record counts once however many epochs meet it; the one past the limit
// is the error. Not thread-safe: the pipeline calls it under its lock.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_DATA_DAMAGEDRECORDS_H
#define FASTNN_DATA_DAMAGEDRECORDS_H

#include "fastnn/data/Pipeline.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fastnn::data {

/// A damaged record met on the way.
struct Damage {
  /// Where it is accounted: the record's own position when it could not be
  /// decoded, else (the reader dropped it) the position of the record after
  /// it.
  uint64_t Pos = 0;
  /// It could not be decoded; records the reader dropped before Pos come
  /// before it, in the reader's Order.
  bool Undecodable = false;
  uint64_t Order = 0;
  int File = -1;
  uint64_t Offset = 0;
  std::string Message;

  bool operator<(const Damage &O) const;
};

class DamagedRecords {
public:
  DamagedRecords() = default;
  /// Skips up to Limit; Advice ends the error of the one past it.
  DamagedRecords(uint64_t Limit, std::string Advice)
      : Limit(Limit), Advice(std::move(Advice)) {}

  void note(Damage D) { Pending.push_back(std::move(D)); }
  /// Accounts the damage noted before position End in stream order; the
  /// error names the first damaged record past the limit.
  Status account(uint64_t End);

  /// Accounted so far: records the reader dropped, records not decodable.
  uint64_t unreadable() const { return Unreadable; }
  uint64_t undecodable() const { return Undecodable; }
  const std::string &lastMessage() const { return Last; }
  /// The records skipped since the previous call (Pipeline::takeSkipped).
  std::vector<SkippedRecord> takeSkipped();

private:
  uint64_t Limit = 0;
  std::string Advice;
  std::vector<Damage> Pending;
  /// Undecodable records accounted, by file and offset; the reader keeps
  /// its own set of the records it drops, which it meets in stream order.
  std::set<std::pair<int, uint64_t>> UndecodableSeen;
  uint64_t Unreadable = 0, Undecodable = 0;
  std::string Last;
  std::vector<SkippedRecord> Skipped;
};

} // namespace fastnn::data

#endif // FASTNN_DATA_DAMAGEDRECORDS_H
