//===- InputStaging.h - Batches into a model's input tensors ----*- C++ -*-===//
//
// Data sources write float32 images and int64 labels. When the model's
// "images" and "labels" inputs have those types the batch goes straight
// into the arena; otherwise (half-precision images, int32 labels) it is
// staged here and converted.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_INPUTSTAGING_H
#define FASTNN_TRAINER_INPUTSTAGING_H

#include "fastnn/runtime/ModelTables.h"

#include <cstdint>
#include <vector>

namespace fastnn::trainer {

class InputStaging {
public:
  InputStaging(const runtime::TensorRecord &Images,
               const runtime::TensorRecord &Labels, unsigned char *Arena);

  /// Where the data source writes the next batch.
  float *images() { return Images; }
  int64_t *labels() { return Labels; }

  /// Completes a batch of Size samples in the arena: a partial batch is
  /// padded with zero images of label 0, staged values are converted.
  void store(int64_t Size);

private:
  const runtime::TensorRecord &ImagesRecord, &LabelsRecord;
  unsigned char *Arena;
  int64_t BatchSize, SampleElements;
  float *Images;
  int64_t *Labels;
  std::vector<float> StagedImages;
  std::vector<int64_t> StagedLabels;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_INPUTSTAGING_H
