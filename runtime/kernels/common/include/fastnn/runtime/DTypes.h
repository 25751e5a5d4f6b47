//===- DTypes.h - ABI element types and layouts -----------------*- C++ -*-===//
//
// What every backend and driver needs to know about fnn_dtype and
// fnn_layout values beyond their numbers: element sizes, names for
// messages, and the bits of float16 and bfloat16 (which host code converts
// without help from any kernel library).
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_RUNTIME_DTYPES_H
#define FASTNN_RUNTIME_DTYPES_H

#include <cstdint>
#include <cstring>

namespace fastnn::runtime {

/// Bytes of one element of an fnn_dtype (1 for a value abi.h does not
/// define).
int64_t dtypeBytes(int64_t Dtype);

/// "NCHW", "NHWC", or "?" for a value abi.h does not define.
const char *layoutName(int64_t Layout);

/// float16 bits to float, exactly (every half is a float).
float halfToFloat(uint16_t Half);
/// float to float16 bits, rounding to nearest even; overflow gives infinity
/// (as the hardware conversion does), NaN stays NaN.
uint16_t floatToHalf(float Value);
/// bfloat16 bits to float, exactly (a bfloat16 is a float's top half).
/// Inline, as the next, so that conversion loops vectorize.
inline float bfloat16ToFloat(uint16_t Bfloat16) {
  uint32_t Bits = static_cast<uint32_t>(Bfloat16) << 16;
  float Result;
  std::memcpy(&Result, &Bits, 4);
  return Result;
}
/// float to bfloat16 bits, rounding to nearest even; NaN stays NaN.
inline uint16_t floatToBfloat16(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  // Rounding would carry a NaN's mantissa into the exponent (or the sign).
  if ((Bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((Bits >> 16) | 0x40u);
  Bits += 0x7fffu + ((Bits >> 16) & 1u);
  return static_cast<uint16_t>(Bits >> 16);
}

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_DTYPES_H
