//===- InputStaging.cpp - Batches into a model's input tensors ------------===//

#include "InputStaging.h"

#include "fastnn/runtime/model.h"

#include <algorithm>
#include <cstring>

namespace fastnn::trainer {

namespace {

/// float to IEEE half, rounding to nearest even.
uint16_t toHalf(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  uint32_t Sign = (Bits >> 16) & 0x8000u;
  int32_t Exponent = static_cast<int32_t>((Bits >> 23) & 0xffu) - 127 + 15;
  uint32_t Mantissa = Bits & 0x7fffffu;
  if (Exponent >= 31)
    return static_cast<uint16_t>(Sign | 0x7c00u);
  if (Exponent <= 0) {
    if (Exponent < -10)
      return static_cast<uint16_t>(Sign);
    Mantissa |= 0x800000u;
    uint32_t Shift = static_cast<uint32_t>(14 - Exponent);
    uint32_t Half = Mantissa >> Shift;
    uint32_t Rest = Mantissa & ((1u << Shift) - 1);
    uint32_t Midpoint = 1u << (Shift - 1);
    if (Rest > Midpoint || (Rest == Midpoint && (Half & 1u)))
      ++Half;
    return static_cast<uint16_t>(Sign | Half);
  }
  uint32_t Half =
      Sign | (static_cast<uint32_t>(Exponent) << 10) | (Mantissa >> 13);
  uint32_t Rest = Mantissa & 0x1fffu;
  // A carry out of the mantissa correctly bumps the exponent.
  if (Rest > 0x1000u || (Rest == 0x1000u && (Half & 1u)))
    ++Half;
  return static_cast<uint16_t>(Half);
}

/// float to bfloat16, rounding to nearest even.
uint16_t toBfloat16(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  Bits += 0x7fffu + ((Bits >> 16) & 1u);
  return static_cast<uint16_t>(Bits >> 16);
}

} // namespace

InputStaging::InputStaging(const runtime::TensorRecord &ImagesIn,
                           const runtime::TensorRecord &LabelsIn,
                           unsigned char *Arena)
    : ImagesRecord(ImagesIn), LabelsRecord(LabelsIn), Arena(Arena),
      BatchSize(LabelsIn.numElements()),
      SampleElements(ImagesIn.numElements() / LabelsIn.numElements()),
      Images(reinterpret_cast<float *>(Arena + ImagesIn.offset)),
      Labels(reinterpret_cast<int64_t *>(Arena + LabelsIn.offset)) {
  if (ImagesIn.dtype != FNN_F32) {
    StagedImages.resize(static_cast<size_t>(ImagesIn.numElements()));
    Images = StagedImages.data();
  }
  if (LabelsIn.dtype != FNN_I64) {
    StagedLabels.resize(static_cast<size_t>(BatchSize));
    Labels = StagedLabels.data();
  }
}

void InputStaging::store(int64_t Size) {
  std::fill(Images + Size * SampleElements, Images + BatchSize * SampleElements,
            0.0f);
  std::fill(Labels + Size, Labels + BatchSize, 0);
  if (ImagesRecord.dtype != FNN_F32) {
    auto *Out = reinterpret_cast<uint16_t *>(Arena + ImagesRecord.offset);
    for (int64_t I = 0; I < BatchSize * SampleElements; ++I)
      Out[I] = ImagesRecord.dtype == FNN_F16 ? toHalf(Images[I])
                                             : toBfloat16(Images[I]);
  }
  if (LabelsRecord.dtype != FNN_I64) {
    auto *Out = reinterpret_cast<int32_t *>(Arena + LabelsRecord.offset);
    for (int64_t I = 0; I < BatchSize; ++I)
      Out[I] = static_cast<int32_t>(Labels[I]);
  }
}

} // namespace fastnn::trainer
