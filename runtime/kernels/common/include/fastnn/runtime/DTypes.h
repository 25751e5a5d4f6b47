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
float bfloat16ToFloat(uint16_t Bfloat16);
/// float to bfloat16 bits, rounding to nearest even; NaN stays NaN.
uint16_t floatToBfloat16(float Value);

} // namespace fastnn::runtime

#endif // FASTNN_RUNTIME_DTYPES_H
