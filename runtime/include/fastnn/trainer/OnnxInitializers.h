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

/// Starts the trainable parameters and statistics of State from the ONNX
/// model at Path (RestoreMode::Initialize: each must be there by name with
/// its dtype and shape); errors name the file as Described
/// ("init_from_onnx=FILE", "--init-from-onnx FILE"). Restored counts what was
/// written; Warning is one line about initializers the model has no
/// parameter for (their count and first names), empty when there are none.
Status loadOnnxWeights(const std::string &Path, const std::string &Described,
                       const std::vector<runtime::TensorRecord> &State,
                       const runtime::ArenaAccess &Arena, int64_t &Restored,
                       std::string &Warning);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_ONNXINITIALIZERS_H
