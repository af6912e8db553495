//===- TensorCoreLimitsTest.cpp - Rules the kernels build in IR -----------===//
//
// TensorCoreLimits.h writes some rules once over any arithmetic; the
// kernels build them in IR (TileBuilder::IndexOps) and these tests ask them
// on int64_t (IntegerOps) against the plain definitions they rewrite.
//
//===----------------------------------------------------------------------===//

#include "fa/Transforms/TensorCoreLimits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

using namespace fa::tensor_core;

namespace {

/// TileBuilder::allowed on integers: key j visible to query row i.
bool allowed(int64_t i, int64_t j, int64_t sk, int64_t offset,
             int64_t keyStart, bool causal, std::optional<int64_t> window,
             int64_t sinkTokens) {
  bool ok = j < sk;
  int64_t diag = i + offset;
  if (causal)
    ok = ok && j <= diag;
  if (window) {
    bool inWindow = j > diag - *window;
    if (sinkTokens > 0)
      inWindow = inWindow || j < keyStart + sinkTokens;
    ok = ok && inWindow;
  }
  return ok;
}

/// A mask's variant and the sizes it reads.
struct MaskCase {
  bool causal;
  std::optional<int64_t> window;
  int64_t sinkTokens, offset, sk, keyStart;
};

/// Calls `check` on every mask case: causal or not, no window or 1 to 1000
/// keys, 0 to 4 sink tokens (with a window), offsets Sk - Sq of both signs,
/// Sk from 0, two key starts.
template <typename Check> void forEachMaskCase(Check check) {
  const std::optional<int64_t> windows[] = {std::nullopt, 1, 3, 16, 1000};
  for (bool causal : {false, true})
    for (std::optional<int64_t> window : windows)
      for (int64_t sinkTokens : {0, 1, 4})
        for (int64_t offset : {-5, 0, 7})
          for (int64_t sk : {0, 1, 9, 40})
            for (int64_t keyStart : {0, 3})
              if (window || !sinkTokens) // sink tokens need a window
                check(
                    MaskCase{causal, window, sinkTokens, offset, sk, keyStart});
}

std::string describe(const MaskCase &m) {
  return "causal " + std::to_string(m.causal) + " window " +
         std::to_string(m.window.value_or(-1)) + " sinks " +
         std::to_string(m.sinkTokens) + " offset " + std::to_string(m.offset) +
         " sk " + std::to_string(m.sk) + " keyStart " +
         std::to_string(m.keyStart);
}

constexpr int64_t kWidth = 16; // two 8-column accumulator tiles

TEST(KeyOffsetBounds, AgreeWithTheMaskOnEveryKeyOfATile) {
  int64_t checked = 0;
  forEachMaskCase([&](const MaskCase &m) {
    for (int64_t keyHi : {0, 5, 24, 64})
      for (int64_t row = -2; row < 36; ++row)
        for (int64_t base = -20; base < 48; base += 3) {
          auto bounds = keyOffsetBoundsOf(IntegerOps(), base, kWidth, row, m.sk,
                                          m.offset, keyHi, m.keyStart, m.causal,
                                          m.window, m.sinkTokens);
          for (int64_t c = 0; c < kWidth; ++c, ++checked) {
            int64_t j = base + c;
            bool expected = allowed(row, j, m.sk, m.offset, m.keyStart,
                                    m.causal, m.window, m.sinkTokens) &&
                            j < keyHi;
            ASSERT_EQ(keyOffsetVisibleOf(IntegerOps(), bounds, c, m.window,
                                         m.sinkTokens),
                      expected)
                << describe(m) << " keyHi " << keyHi << " row " << row
                << " key " << j;
          }
          // The bounds fit 32 bits whatever the 64-bit inputs.
          for (int64_t bound : {bounds.hi, bounds.lo, bounds.sinkHi})
            EXPECT_TRUE(bound >= 0 && bound <= kWidth);
        }
  });
  EXPECT_GT(checked, 1000000);
}

TEST(QueryOffsetBounds, AgreeWithTheMaskOnEveryQueryOfATile) {
  int64_t checked = 0;
  forEachMaskCase([&](const MaskCase &m) {
    for (int64_t sq : {0, 1, 9, 40})
      for (int64_t key = -2; key < 44; ++key)
        for (int64_t base = -20; base < 48; base += 3) {
          auto bounds = queryOffsetBoundsOf(IntegerOps(), base, kWidth, key, sq,
                                            m.sk, m.offset, m.keyStart,
                                            m.causal, m.window, m.sinkTokens);
          for (int64_t c = 0; c < kWidth; ++c, ++checked) {
            int64_t i = base + c;
            bool expected = allowed(i, key, m.sk, m.offset, m.keyStart,
                                    m.causal, m.window, m.sinkTokens) &&
                            i < sq;
            ASSERT_EQ(queryOffsetVisibleOf(IntegerOps(), bounds, c, m.causal),
                      expected)
                << describe(m) << " sq " << sq << " key " << key << " query "
                << i;
          }
          EXPECT_TRUE(bounds.hi >= 0 && bounds.hi <= kWidth && bounds.lo >= 0 &&
                      bounds.lo <= kWidth);
        }
  });
  EXPECT_GT(checked, 1000000);
}

/// TileBuilder::keyPhases's window phase and phaseSplit on integers: the
/// tiles [lo, hi) of query rows [m0, m0 + rows), and where edgePhase's
/// loops part.
struct WindowPhase {
  int64_t lo, hi, leadEnd, midEnd;
};
WindowPhase windowPhase(int64_t m0, int64_t rows, int64_t sk, int64_t offset,
                        int64_t window, int64_t blockN) {
  auto clamp = [](int64_t x, int64_t lo, int64_t hi) {
    return std::min(std::max(x, lo), hi);
  };
  auto ceilDiv = [](int64_t x, int64_t d) { return (x + d - 1) / d; };
  int64_t lastRow = m0 + rows - 1;
  int64_t hi = clamp(lastRow + offset + 1, 0, sk);
  int64_t lo = clamp(m0 + offset - window + 1, 0, hi);
  int64_t innerLo = clamp(lastRow + offset - window + 1, lo, hi);
  int64_t innerHi = clamp(m0 + offset + 1, lo, hi);
  int64_t lead = ceilDiv(std::max<int64_t>(innerLo - lo, 0), blockN) * blockN;
  int64_t leadEnd = std::min(hi, lo + lead);
  int64_t full =
      std::max<int64_t>(std::min(innerHi, hi) - leadEnd, 0) / blockN * blockN;
  return {lo, hi, leadEnd, leadEnd + full};
}

TEST(KeyEdge, ApartWindowEdgesNeedOneBoundEach) {
  // A block's tiles masked against their own edge where windowEdgesApart
  // holds (the leading ones against the window's, the trailing ones
  // against the upper bounds), the inner ones not at all, agree with the
  // whole mask on every key of every row of the block.
  int64_t checked = 0;
  for (int64_t blockN : {64, 128})
    for (int64_t rows : {64, 128, 192})
      for (int64_t window :
           {rows + blockN - 2, rows + blockN + 50, int64_t(1000)})
        for (int64_t sinkTokens : {0, 4})
          for (int64_t offset = -70; offset < 140; offset += 3)
            for (int64_t sk : {1, 200, 777}) {
              int64_t sq = sk - offset;
              if (sq <= 0)
                continue;
              ASSERT_TRUE(windowEdgesApart(window, rows, blockN));
              for (int64_t m0 = 0; m0 < sq; m0 += rows) {
                int64_t blockRows = std::min(rows, sq - m0);
                WindowPhase p =
                    windowPhase(m0, blockRows, sk, offset, window, blockN);
                for (int64_t n0 = p.lo; n0 < p.hi; n0 += blockN) {
                  KeyEdge edge = n0 < p.leadEnd  ? KeyEdge::Lower
                                 : n0 < p.midEnd ? KeyEdge::Both
                                                 : KeyEdge::Upper;
                  bool masked = n0 < p.leadEnd || n0 >= p.midEnd;
                  for (int64_t row = m0; row < m0 + blockRows; ++row) {
                    auto bounds = keyOffsetBoundsOf(
                        IntegerOps(), n0, blockN, row, sk, offset, p.hi,
                        /*keyStart=*/int64_t(0), /*causal=*/true, window,
                        sinkTokens);
                    for (int64_t c = 0; c < blockN; ++c, ++checked) {
                      int64_t j = n0 + c;
                      // Keys at or past hi are no tile's of this phase.
                      bool expected = allowed(row, j, sk, offset, 0, true,
                                              window, sinkTokens) &&
                                      j < p.hi;
                      bool seen = !masked ||
                                  keyOffsetVisibleOf(IntegerOps(), bounds, c,
                                                     window, sinkTokens, edge);
                      ASSERT_EQ(seen, expected)
                          << "block-n " << blockN << " rows " << rows
                          << " window " << window << " sinks " << sinkTokens
                          << " offset " << offset << " sk " << sk << " m0 "
                          << m0 << " tile " << n0 << " row " << row << " key "
                          << j;
                    }
                  }
                }
              }
            }
  EXPECT_GT(checked, 1000000);
}

} // namespace
