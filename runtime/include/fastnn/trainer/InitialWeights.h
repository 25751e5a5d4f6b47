//===- InitialWeights.h - Weights that start a run --------------*- C++ -*-===//
//
// Where the trainable parameters and batch-norm statistics of a model come
// from when they are not embedded in the executable: the weights file that
// fastnnc --weights=external writes beside it (the checkpoint format of
// Checkpoint.h, step 0, one tensor per trainable parameter and statistic),
// or the initializers of an ONNX model (train.bin's init_from_onnx). Both
// are matched to the model's state records by name (RestoreMode::
// Initialize); optimizer slots are never taken from them.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_INITIALWEIGHTS_H
#define FASTNN_TRAINER_INITIALWEIGHTS_H

#include "fastnn/trainer/Checkpoint.h"

#include <string>
#include <vector>

namespace fastnn::trainer {

/// The suffix fastnnc appends to the executable's name for its weights.
constexpr const char *WeightsFileSuffix = ".weights";

/// Configured if not empty, else this executable's path (/proc/self/exe)
/// followed by WeightsFileSuffix.
std::string weightsFilePath(const std::string &Configured);

/// Loads the weights file at Path into the trainable and statistic records
/// of State. It must hold exactly those records (name, dtype, shape): a
/// missing, truncated or damaged file, or one of another model, is an
/// error naming Path and saying what to do; HowToName says how the user
/// names another file ("weights_file=FILE").
Status loadWeightsFile(const std::string &Path,
                       const std::vector<runtime::TensorRecord> &State,
                       const runtime::ArenaAccess &Arena,
                       const std::string &HowToName);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_INITIALWEIGHTS_H
