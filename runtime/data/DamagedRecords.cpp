//===- DamagedRecords.cpp - The input pipeline's damaged records ----------===//

#include "DamagedRecords.h"

#include <algorithm>

namespace fastnn::data {

bool Damage::operator<(const Damage &O) const {
  if (Pos != O.Pos)
    return Pos < O.Pos;
  if (Undecodable != O.Undecodable)
    return !Undecodable;
  return Order < O.Order;
}

Status DamagedRecords::account(uint64_t End) {
  auto Due = std::partition(Pending.begin(), Pending.end(),
                            [&](const Damage &D) { return D.Pos < End; });
  std::sort(Pending.begin(), Due);
  Status Result;
  for (auto It = Pending.begin(); It != Due; ++It) {
    if (It->Undecodable &&
        !UndecodableSeen.insert({It->File, It->Offset}).second)
      continue;
    const uint64_t Number = Unreadable + Undecodable + 1;
    if (Number > Limit) {
      std::string Msg = It->Message;
      if (Limit > 0)
        Msg += "; that is damaged record " + std::to_string(Number) +
               " and at most " + std::to_string(Limit) + " are skipped";
      Result = Status::error(Msg + Advice);
      break;
    }
    (It->Undecodable ? Undecodable : Unreadable)++;
    Last = It->Message;
    SkippedRecord R{Number, It->Message};
    if (Skipped.size() < Pipeline::MaxPendingSkips)
      Skipped.push_back(std::move(R));
    else
      Skipped.back() = std::move(R);
  }
  Pending.erase(Pending.begin(), Due);
  return Result;
}

std::vector<SkippedRecord> DamagedRecords::takeSkipped() {
  std::vector<SkippedRecord> Out;
  Out.swap(Skipped);
  return Out;
}

} // namespace fastnn::data
