//===- InputStaging.cpp - Batches into a model's input tensors ------------===//

#include "fastnn/trainer/InputStaging.h"

#include "fastnn/runtime/DTypes.h"
#include "fastnn/runtime/model.h"

#include <algorithm>

namespace fastnn::trainer {

InputStaging::InputStaging(const runtime::TensorRecord &ImagesIn,
                           const runtime::TensorRecord &LabelsIn,
                           const runtime::ArenaAccess &Arena)
    : ImagesDtype(ImagesIn.dtype), ImagesRegion(Arena, ImagesIn),
      LabelsRegion(Arena, LabelsIn), BatchSize(LabelsIn.numElements()),
      SampleElements(ImagesIn.numElements() / LabelsIn.numElements()) {
  if (ImagesIn.dtype != FNN_F32)
    StagedImages.resize(static_cast<size_t>(ImagesIn.numElements()));
  if (LabelsIn.dtype != FNN_I64)
    StagedLabels.resize(static_cast<size_t>(BatchSize));
}

void InputStaging::store(int64_t Size) {
  store(Size, ImagesRegion.data(), LabelsRegion.data());
  ImagesRegion.store();
  LabelsRegion.store();
}

float *InputStaging::images(void *ImagesOut) {
  return StagedImages.empty() ? static_cast<float *>(ImagesOut)
                              : StagedImages.data();
}

int64_t *InputStaging::labels(void *LabelsOut) {
  return StagedLabels.empty() ? static_cast<int64_t *>(LabelsOut)
                              : StagedLabels.data();
}

void InputStaging::store(int64_t Size, void *ImagesOut, void *LabelsOut) {
  float *Images = images(ImagesOut);
  int64_t *Labels = labels(LabelsOut);
  std::fill(Images + Size * SampleElements, Images + BatchSize * SampleElements,
            0.0f);
  std::fill(Labels + Size, Labels + BatchSize, 0);
  if (!StagedImages.empty()) {
    auto *Out = static_cast<uint16_t *>(ImagesOut);
    for (int64_t I = 0; I < BatchSize * SampleElements; ++I)
      Out[I] = ImagesDtype == FNN_F16 ? runtime::floatToHalf(Images[I])
                                      : runtime::floatToBfloat16(Images[I]);
  }
  if (!StagedLabels.empty()) {
    auto *Out = static_cast<int32_t *>(LabelsOut);
    for (int64_t I = 0; I < BatchSize; ++I)
      Out[I] = static_cast<int32_t>(Labels[I]);
  }
}

} // namespace fastnn::trainer
