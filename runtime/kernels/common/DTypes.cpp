//===- DTypes.cpp - ABI element types and layouts -------------------------===//

#include "fastnn/runtime/DTypes.h"

#include "fastnn/runtime/abi.h"

#include <cmath>
#include <cstring>

int64_t fastnn::runtime::dtypeBytes(int64_t Dtype) {
  switch (Dtype) {
  case FNN_F64:
  case FNN_I64:
    return 8;
  case FNN_F32:
  case FNN_I32:
    return 4;
  case FNN_F16:
  case FNN_BF16:
  case FNN_I16:
    return 2;
  default:
    return 1;
  }
}

const char *fastnn::runtime::layoutName(int64_t Layout) {
  return Layout == FNN_NHWC ? "NHWC" : Layout == FNN_NCHW ? "NCHW" : "?";
}

float fastnn::runtime::halfToFloat(uint16_t Half) {
  uint32_t Sign = static_cast<uint32_t>(Half & 0x8000u) << 16;
  uint32_t Exponent = (Half >> 10) & 0x1fu;
  uint32_t Mantissa = Half & 0x3ffu;
  uint32_t Bits;
  if (Exponent == 0x1f) {
    Bits = Sign | 0x7f800000u | (Mantissa << 13);
  } else if (Exponent != 0) {
    Bits = Sign | ((Exponent + 112) << 23) | (Mantissa << 13);
  } else {
    // Zero or subnormal: the mantissa times 2^-24, exact in float.
    float Value = static_cast<float>(Mantissa) * (1.0f / 16777216.0f);
    std::memcpy(&Bits, &Value, 4);
    Bits |= Sign;
  }
  float Result;
  std::memcpy(&Result, &Bits, 4);
  return Result;
}

uint16_t fastnn::runtime::floatToHalf(float Value) {
  uint32_t Bits;
  std::memcpy(&Bits, &Value, 4);
  uint32_t Sign = (Bits >> 16) & 0x8000u;
  uint32_t Magnitude = Bits & 0x7fffffffu;
  if (Magnitude > 0x7f800000u)
    return static_cast<uint16_t>(Sign | 0x7e00u);
  if (Magnitude >= 0x477ff000u) // rounds to >= 65520: infinity
    return static_cast<uint16_t>(Sign | 0x7c00u);
  if (Magnitude < 0x38800000u) {
    // Subnormal half (or zero): round Magnitude * 2^24 to an integer.
    float Abs;
    std::memcpy(&Abs, &Magnitude, 4);
    return static_cast<uint16_t>(
        Sign | static_cast<uint32_t>(std::nearbyint(Abs * 16777216.0f)));
  }
  uint32_t Rounded = Magnitude + 0xfffu + ((Magnitude >> 13) & 1u);
  return static_cast<uint16_t>(Sign | ((Rounded - 0x38000000u) >> 13));
}
