//===- OnnxInitializers.h - train.bin's init_from_onnx ----------*- C++ -*-===//
//
// Reads the floating-point initializers of an ONNX model (their data inline
// or in external data files beside it) as tensors named like the state
// records the importer made of them, for restoreTensors' Initialize mode.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_ONNXINITIALIZERS_H
#define FASTNN_TRAINER_ONNXINITIALIZERS_H

#include "fastnn/trainer/Checkpoint.h"

#include <string>
#include <vector>

namespace fastnn::trainer {

struct OnnxInitializers {
  /// One per floating-point initializer, Role -1 (ONNX has none), and one
  /// per Identity node that copies one: the importer names the parameter it
  /// unties after the Identity's output. Data points into Storage.
  std::vector<StateTensor> Tensors;
  std::vector<std::vector<unsigned char>> Storage;
};

/// Reads Path; every error names the file (or its external data file) and
/// the initializer.
Status readOnnxInitializers(const std::string &Path, OnnxInitializers &Out);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_ONNXINITIALIZERS_H
