//===- ModelTables.cpp - reading a compiled model's tables ----------------===//

#include "fastnn/runtime/ModelTables.h"
#include "fastnn/runtime/model.h"

namespace fastnn::runtime {

int64_t TensorRecord::numElements() const {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

int64_t TensorRecord::bytes() const {
  return numElements() * dtypeBytes(dtype);
}

std::vector<TensorRecord> readTensorRecords(const int64_t *table,
                                            const char *names) {
  std::vector<TensorRecord> records;
  const int64_t *words = table + 1;
  for (int64_t i = 0; i < table[0]; ++i, words += FNN_IO_RECORD_WORDS) {
    TensorRecord record;
    record.kind = words[0];
    record.dtype = words[1];
    record.shape.assign(words + 3, words + 3 + words[2]);
    record.offset = words[3 + FNN_MAX_RANK];
    record.name.assign(names + words[4 + FNN_MAX_RANK],
                       static_cast<size_t>(words[5 + FNN_MAX_RANK]));
    records.push_back(record);
  }
  return records;
}

const TensorRecord *findTensorRecord(const std::vector<TensorRecord> &records,
                                     int64_t kind, const std::string &name) {
  for (const TensorRecord &record : records)
    if (record.kind == kind && record.name == name)
      return &record;
  return nullptr;
}

} // namespace fastnn::runtime
