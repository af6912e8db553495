//===- HalfFloatTest.cpp - fa-run's bf16/f16 conversions ------------------===//
//
// fa-run's conversions between double and the 16-bit formats
// (tools/fa-run/HalfFloat.h) against llvm::APFloat, which they replace:
// every 16-bit pattern to double, and double to 16 bits at each pattern,
// at each midpoint between neighbours (ties to even) and beside it, and on
// random doubles over and past each format's range.
//
//===----------------------------------------------------------------------===//

#include "HalfFloat.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace fa::half;

namespace {

struct Case {
  const char *name;
  Format format;
  const llvm::fltSemantics &(*semantics)();
};
const Case kCases[] = {{"bf16", kBFloat16, llvm::APFloat::BFloat},
                       {"f16", kFloat16, llvm::APFloat::IEEEhalf}};

uint16_t apFromDouble(double x, const Case &c) {
  llvm::APFloat f(x);
  bool lost;
  f.convert(c.semantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

double apToDouble(uint16_t h, const Case &c) {
  llvm::APFloat f(c.semantics(), llvm::APInt(16, h));
  bool lost;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return f.convertToDouble();
}

bool sameBits(double a, double b) {
  return std::memcmp(&a, &b, 8) == 0;
}

/// NaNs agree as NaNs (quiet, of the same sign); other values bit for bit.
void expectSame(uint16_t got, uint16_t want, Format format, double x) {
  int nanExponent = (1 << format.exponentBits) - 1;
  auto isNan = [&](uint16_t h) {
    return ((h >> format.mantissaBits) & nanExponent) == nanExponent &&
           (h & ((1 << format.mantissaBits) - 1));
  };
  if (isNan(want)) {
    EXPECT_TRUE(isNan(got)) << x;
    EXPECT_EQ(got >> 15, want >> 15) << x;
    return;
  }
  EXPECT_EQ(got, want) << "x = " << x;
}

TEST(HalfFloat, EveryPatternToDouble) {
  for (const Case &c : kCases)
    for (uint32_t h = 0; h < 65536; ++h) {
      double got = toDouble(static_cast<uint16_t>(h), c.format);
      double want = apToDouble(static_cast<uint16_t>(h), c);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << c.name << " " << h;
      else
        EXPECT_TRUE(sameBits(got, want)) << c.name << " " << h;
    }
}

TEST(HalfFloat, PatternsMidpointsAndNeighbours) {
  for (const Case &c : kCases)
    for (uint32_t h = 0; h < 65535; ++h) {
      double lo = apToDouble(static_cast<uint16_t>(h), c);
      double hi = apToDouble(static_cast<uint16_t>(h + 1), c);
      if (std::isnan(lo) || std::isnan(hi) || std::isinf(lo) ||
          (h & 0x7fff) == 0x7fff)
        continue;
      double mid = lo + (hi - lo) / 2; // exact: a few more bits than h's
      for (double x : {lo, mid, std::nextafter(mid, lo),
                       std::nextafter(mid, hi)})
        for (double s : {x, -x})
          expectSame(fromDouble(s, c.format), apFromDouble(s, c), c.format,
                     s);
    }
}

TEST(HalfFloat, RandomDoublesAndSpecials) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> exponent(-160, 140);
  std::uniform_int_distribution<uint64_t> mantissa(0, (uint64_t(1) << 52) - 1);
  for (const Case &c : kCases) {
    for (int i = 0; i < 400000; ++i) {
      double x = std::ldexp(1.0 + std::ldexp(double(mantissa(rng)), -52),
                            exponent(rng));
      for (double s : {x, -x})
        expectSame(fromDouble(s, c.format), apFromDouble(s, c), c.format, s);
    }
    for (double x : {0.0, -0.0, double(INFINITY), -double(INFINITY),
                     double(NAN), -double(NAN), 1e-320,
                     -1e-320, 65504.0, 65520.0, 65519.99, 3.3895313892515355e38,
                     3.4e38, 1e300, std::ldexp(1.0, -24), std::ldexp(1.0, -25),
                     std::ldexp(1.5, -25), std::ldexp(1.0, -133),
                     std::ldexp(1.0, -134), std::ldexp(1.0, -126)})
      expectSame(fromDouble(x, c.format), apFromDouble(x, c), c.format, x);
  }
}

} // namespace
