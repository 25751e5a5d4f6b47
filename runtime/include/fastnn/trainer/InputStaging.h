//===- InputStaging.h - Batches into a model's input tensors ----*- C++ -*-===//
//
// Data sources write float32 images and int64 labels into host memory. When
// the model's "images" and "labels" inputs have those types the batch goes
// straight into the host memory bound for them (on the CPU the arena itself,
// so nothing is copied); otherwise (half-precision images, int32 labels) it
// is staged here and converted.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_INPUTSTAGING_H
#define FASTNN_TRAINER_INPUTSTAGING_H

#include "fastnn/runtime/ModelDevice.h"
#include "fastnn/runtime/ModelTables.h"

#include <cstdint>
#include <vector>

namespace fastnn::trainer {

class InputStaging {
public:
  /// Batches for the model inputs Images and Labels of Arena.
  InputStaging(const runtime::TensorRecord &Images,
               const runtime::TensorRecord &Labels,
               const runtime::ArenaAccess &Arena);

  /// Where the data source writes the next batch for the arena's inputs.
  float *images() { return images(ImagesRegion.data()); }
  int64_t *labels() { return labels(LabelsRegion.data()); }
  /// Completes a batch of Size samples in the arena (see store below).
  void store(int64_t Size);
  /// The byte sizes of the model's "images" and "labels" inputs.
  size_t imagesBytes() const { return ImagesRegion.size(); }
  size_t labelsBytes() const { return LabelsRegion.size(); }

  /// Where the data source writes the next batch bound for ImagesOut and
  /// LabelsOut, host memory of the inputs' types (fnn_input_next's
  /// buffers): that memory itself where its type is the source's, else a
  /// staging buffer.
  float *images(void *ImagesOut);
  int64_t *labels(void *LabelsOut);
  /// Completes a batch of Size samples in ImagesOut and LabelsOut: a partial
  /// batch is padded with zero images of label 0, staged values are
  /// converted.
  void store(int64_t Size, void *ImagesOut, void *LabelsOut);

private:
  int64_t ImagesDtype;
  runtime::HostRegion ImagesRegion, LabelsRegion;
  int64_t BatchSize, SampleElements;
  std::vector<float> StagedImages;
  std::vector<int64_t> StagedLabels;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_INPUTSTAGING_H
