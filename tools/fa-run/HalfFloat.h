//===- HalfFloat.h - bf16 and f16 to and from double ------------*- C++ -*-===//
//
// fa-run's host tensors hold bf16 and f16 elements as their bits. These
// conversions are exact where the value is (a 16-bit value to double), and
// round to nearest, ties to even, where it is not (double to 16 bits),
// straight from the double's bits: the same results as llvm::APFloat's
// convert, which took 100-200 ns an element, the most of fa-run's time at
// decode shapes (2 x 134M cache elements, a minute before the GPU ran).
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FA_RUN_HALFFLOAT_H
#define FA_TOOLS_FA_RUN_HALFFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace fa::half {

/// A 16-bit binary float format: its exponent and stored mantissa bits.
struct Format {
  int exponentBits;
  int mantissaBits;
};
inline constexpr Format kBFloat16 = {8, 7};
inline constexpr Format kFloat16 = {5, 10};

/// `x` rounded to nearest, ties to even, in `format`: its bits. NaN becomes
/// the format's quiet NaN (sign kept), magnitudes past its largest finite
/// value infinity.
inline uint16_t fromDouble(double x, Format format) {
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  const int mb = format.mantissaBits;
  const int maxExponent = (1 << format.exponentBits) - 1;
  const int bias = (1 << (format.exponentBits - 1)) - 1;
  const uint16_t sign = static_cast<uint16_t>((bits >> 63) << 15);
  const uint16_t infinity = static_cast<uint16_t>(maxExponent << mb);
  const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t mantissa = bits & ((uint64_t(1) << 52) - 1);
  if (exponent == 0x7ff)
    return sign | infinity | (mantissa ? uint16_t(1) << (mb - 1) : 0);
  // Zero, and double's subnormals (below 2^-1022), round to zero here.
  if (exponent == 0)
    return sign;
  // The significand with its leading one: value = m * 2^(e - 52).
  uint64_t m = mantissa | (uint64_t(1) << 52);
  int target = exponent - 1023 + bias; // the target's biased exponent
  // Drop the bits below the target's last mantissa bit: 52 - mb of them
  // for a normal result, more for a subnormal one (target exponent 1, the
  // leading one shifted down by 1 - target).
  int shift = 52 - mb + (target < 1 ? 1 - target : 0);
  uint64_t kept = 0;
  if (shift < 64) {
    kept = m >> shift;
    uint64_t rest = m & ((uint64_t(1) << shift) - 1);
    uint64_t half = uint64_t(1) << (shift - 1);
    if (rest > half || (rest == half && (kept & 1)))
      ++kept;
  }
  if (target < 1)
    // Subnormal (or, where rounding carried into bit mb, the smallest
    // normal: exponent field 1, which `kept` spells the same way).
    return sign | static_cast<uint16_t>(kept);
  if (kept >> (mb + 1)) { // rounding carried into the next binade
    kept >>= 1;
    ++target;
  }
  if (target >= maxExponent)
    return sign | infinity;
  return sign | static_cast<uint16_t>(target << mb) |
         static_cast<uint16_t>(kept & ((uint64_t(1) << mb) - 1));
}

/// The value of `h`'s bits in `format`, exactly.
inline double toDouble(uint16_t h, Format format) {
  if (format.exponentBits == 8) {
    // bf16 is float's upper half.
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  const int mb = format.mantissaBits;
  const int maxExponent = (1 << format.exponentBits) - 1;
  const int bias = (1 << (format.exponentBits - 1)) - 1;
  const bool negative = h >> 15;
  const int exponent = (h >> mb) & maxExponent;
  const int mantissa = h & ((1 << mb) - 1);
  double magnitude;
  if (exponent == maxExponent)
    magnitude = mantissa ? NAN : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(mantissa, 1 - bias - mb);
  else
    magnitude = std::ldexp(mantissa | (1 << mb), exponent - bias - mb);
  return negative ? -magnitude : magnitude;
}

} // namespace fa::half

#endif // FA_TOOLS_FA_RUN_HALFFLOAT_H
