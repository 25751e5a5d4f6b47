//===- ModelTables.h - reading a compiled model's tables --------*- C++ -*-===//
//
// The drivers (infer.bin, train.bin, test step runners) read the tensor
// records of fastnn/runtime/model.h through this one decoder.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_MODELTABLES_H
#define FASTNN_RUNTIME_MODELTABLES_H

#include "fastnn/runtime/DTypes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::runtime {

/// One record of fnn_model_io or fnn_model_state.
struct TensorRecord {
  int64_t kind = 0; // fnn_io_kind or fnn_state_role
  int64_t dtype = 0;
  std::vector<int64_t> shape;
  int64_t offset = 0;
  std::string name;

  int64_t numElements() const;
  /// The tensor's size in the arena.
  int64_t bytes() const;
};

/// Decodes a table laid out as model.h describes (count, then records).
std::vector<TensorRecord> readTensorRecords(const int64_t *table,
                                            const char *names);

/// The record of `kind` named `name`, or null.
const TensorRecord *findTensorRecord(const std::vector<TensorRecord> &records,
                                     int64_t kind, const std::string &name);

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_MODELTABLES_H
