//===- Crc32c.h - CRC-32C (Castagnoli) as TFRecord uses it ------*- C++ -*-===//

#ifndef FASTNN_DATA_CRC32C_H
#define FASTNN_DATA_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace fastnn::data {

/// Extends \p Crc (0 for a fresh checksum) over \p Size bytes at \p Data.
uint32_t crc32cExtend(uint32_t Crc, const void *Data, size_t Size);
inline uint32_t crc32c(const void *Data, size_t Size) {
  return crc32cExtend(0, Data, Size);
}

/// TFRecord stores CRCs "masked" (TensorFlow's crc32c::Mask): rotating and
/// adding a constant keeps a CRC of data that itself holds CRCs from being
/// trivially self-consistent.
inline uint32_t maskCrc(uint32_t Crc) {
  return ((Crc >> 15) | (Crc << 17)) + 0xa282ead8u;
}
inline uint32_t unmaskCrc(uint32_t Masked) {
  uint32_t Rot = Masked - 0xa282ead8u;
  return (Rot >> 17) | (Rot << 15);
}

} // namespace fastnn::data

#endif // FASTNN_DATA_CRC32C_H
