//===- OnnxExport.h - train.bin --export-onnx -------------------*- C++ -*-===//
//
// Writes the ONNX model train.bin was compiled from (fnn_model_onnx) with
// the values of the trainable parameters and batch-norm statistics of a
// checkpoint, so that any ONNX runtime can serve the trained model.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_ONNXEXPORT_H
#define FASTNN_TRAINER_ONNXEXPORT_H

#include "fastnn/trainer/Checkpoint.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastnn::trainer {

/// Fills the template (a serialized ModelProto whose parameter initializers
/// have no data) from the trainable and statistic tensors of State and
/// writes it to Path atomically. A
/// parameter the importer untied from an Identity (its record is named after
/// the Identity's output) becomes an initializer of that name in place of
/// the Identity. Optimizer slots are not part of the model.
Status exportOnnx(const std::string &Path, const char *Template,
                  int64_t TemplateBytes, const std::vector<StateTensor> &State);

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_ONNXEXPORT_H
