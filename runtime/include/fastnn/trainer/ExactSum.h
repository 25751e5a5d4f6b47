//===- ExactSum.h - Order-independent sums of floats ------------*- C++ -*-===//
//
// The exact sum of float values, rounded to double once at the end, so that
// it does not depend on the order the values are added in: the evaluation
// of K workers, each summing its share and adding the sums, gives the mean
// loss of one process to the last bit. Every finite float is an integer
// times 2^-149 below 2^128, so a fixed-point number from 2^-160 to 2^192
// holds any sum of up to 2^62 of them exactly (a superaccumulator, as in
// Kulisch's exact dot product). It is kept in 32-bit limbs of int64 words,
// so that sums of different processes add word by word: an int64
// allreduce of words() is the sum of their sums.
//
//===----------------------------------------------------------------------===//

#ifndef FASTNN_TRAINER_EXACTSUM_H
#define FASTNN_TRAINER_EXACTSUM_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace fastnn::trainer {

class ExactSum {
public:
  /// Limbs of bits [32 i - 160, 32 i - 128), then the counts of NaN, +inf
  /// and -inf values.
  static constexpr int Limbs = 11;
  static constexpr int Words = Limbs + 3;

  void add(float Value) {
    if (std::isnan(Value)) {
      ++Word[Limbs];
      return;
    }
    if (std::isinf(Value)) {
      ++Word[Value > 0 ? Limbs + 1 : Limbs + 2];
      return;
    }
    uint32_t Bits;
    std::memcpy(&Bits, &Value, sizeof(Bits));
    uint32_t Exponent = (Bits >> 23) & 0xff;
    uint64_t Mantissa = Bits & 0x7fffff;
    // Normal: (2^23 + fraction) * 2^(exponent - 150); subnormal: fraction *
    // 2^-149, the exponent of 1.
    if (Exponent != 0)
      Mantissa |= 0x800000;
    else
      Exponent = 1;
    // The mantissa's lowest bit is bit Exponent - 150 of the value, bit
    // Exponent + 10 of the accumulator (11 to 264: limbs 0 to 8).
    const uint32_t Shift = Exponent + 10;
    const uint64_t Scaled = Mantissa << (Shift % 32);
    const int64_t Low = static_cast<int64_t>(Scaled & 0xffffffffu);
    const int64_t High = static_cast<int64_t>(Scaled >> 32);
    int64_t *Limb = Word + Shift / 32;
    if (Bits >> 31) {
      Limb[0] -= Low;
      Limb[1] -= High;
    } else {
      Limb[0] += Low;
      Limb[1] += High;
    }
    // Each addition moves a limb by less than 2^32: carrying every 2^30
    // keeps the limbs far from int64's range.
    if (++Pending == (int64_t(1) << 30))
      normalize();
  }

  /// Carries every limb but the top into [0, 2^32), which makes the words
  /// of equal sums equal. Call it before handing words() to an allreduce,
  /// so that the sum of up to 2^30 processes' words stays in range.
  void normalize() {
    for (int I = 0; I + 1 < Limbs; ++I) {
      // Floor division by 2^32 (an arithmetic shift), also of negatives.
      const int64_t Carry = Word[I] >> 32;
      Word[I] -= Carry * (int64_t(1) << 32);
      Word[I + 1] += Carry;
    }
    Pending = 0;
  }

  /// The sum rounded to double; NaN if a value was NaN or both infinities
  /// were added, else +-inf if one was.
  double value() const {
    if (Word[Limbs] > 0 || (Word[Limbs + 1] > 0 && Word[Limbs + 2] > 0))
      return std::numeric_limits<double>::quiet_NaN();
    if (Word[Limbs + 1] > 0)
      return std::numeric_limits<double>::infinity();
    if (Word[Limbs + 2] > 0)
      return -std::numeric_limits<double>::infinity();
    ExactSum Normal = *this;
    Normal.normalize();
    // The top limb carries the sign; adding from the top down keeps the
    // rounding error within a few units of the last place, and the same
    // words always round the same way.
    double Result = 0;
    for (int I = Limbs - 1; I >= 0; --I)
      Result += std::ldexp(static_cast<double>(Normal.Word[I]), 32 * I - 160);
    return Result;
  }

  /// Words elements: the limbs and the counts of non-finite values.
  int64_t *words() { return Word; }

private:
  int64_t Word[Words] = {};
  int64_t Pending = 0;
};

} // namespace fastnn::trainer

#endif // FASTNN_TRAINER_EXACTSUM_H
