//===- TensorCoreLimitsTest.cpp - Rules the kernels build in IR -----------===//
//
// TensorCoreLimits.h writes some rules once over any arithmetic; the
// kernels build them in IR (TileBuilder::IndexOps) and these tests ask them
// on int64_t (IntegerOps) against the plain definitions they rewrite.
//
//===----------------------------------------------------------------------===//

#include "fa/Transforms/TensorCoreLimits.h"

#include <gtest/gtest.h>

#include <optional>

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

TEST(KeyOffsetBounds, AgreeWithTheMaskOnEveryKeyOfATile) {
  constexpr int64_t kWidth = 16; // two 8-key accumulator tiles
  const std::optional<int64_t> windows[] = {std::nullopt, 1, 3, 16, 1000};
  int64_t checked = 0;
  for (bool causal : {false, true})
    for (std::optional<int64_t> window : windows)
      for (int64_t sinkTokens : {0, 1, 4})
        for (int64_t offset : {-5, 0, 7})
          for (int64_t sk : {0, 1, 9, 40})
            for (int64_t keyStart : {0, 3})
              for (int64_t keyHi : {0, 5, 24, 64})
                for (int64_t row = -2; row < 36; ++row)
                  for (int64_t base = -20; base < 48; base += 3) {
                    if (sinkTokens && !window)
                      continue; // sink tokens need a window
                    auto bounds = keyOffsetBoundsOf(
                        IntegerOps(), base, kWidth, row, sk, offset, keyHi,
                        keyStart, causal, window, sinkTokens);
                    for (int64_t c = 0; c < kWidth; ++c) {
                      int64_t j = base + c;
                      bool expected = allowed(row, j, sk, offset, keyStart,
                                              causal, window, sinkTokens) &&
                                      j < keyHi;
                      ASSERT_EQ(keyOffsetVisibleOf(IntegerOps(), bounds, c,
                                                   window, sinkTokens),
                                expected)
                          << "causal " << causal << " window "
                          << window.value_or(-1) << " sinks " << sinkTokens
                          << " offset " << offset << " sk " << sk
                          << " keyStart " << keyStart << " keyHi " << keyHi
                          << " row " << row << " key " << j;
                      ++checked;
                    }
                    // The bounds fit 32 bits whatever the 64-bit inputs.
                    for (int64_t bound : {bounds.hi, bounds.lo, bounds.sinkHi})
                      EXPECT_TRUE(bound >= 0 && bound <= kWidth);
                  }
  EXPECT_GT(checked, 1000000);
}

TEST(QueryOffsetBounds, AgreeWithTheMaskOnEveryQueryOfATile) {
  constexpr int64_t kWidth = 16;
  const std::optional<int64_t> windows[] = {std::nullopt, 1, 3, 16, 1000};
  int64_t checked = 0;
  for (bool causal : {false, true})
    for (std::optional<int64_t> window : windows)
      for (int64_t sinkTokens : {0, 1, 4})
        for (int64_t offset : {-5, 0, 7})
          for (int64_t sq : {0, 1, 9, 40})
            for (int64_t sk : {1, 9, 40})
              for (int64_t keyStart : {0, 3})
                for (int64_t key = -2; key < 44; ++key)
                  for (int64_t base = -20; base < 48; base += 3) {
                    if (sinkTokens && !window)
                      continue;
                    auto bounds = queryOffsetBoundsOf(
                        IntegerOps(), base, kWidth, key, sq, sk, offset,
                        keyStart, causal, window, sinkTokens);
                    for (int64_t c = 0; c < kWidth; ++c) {
                      int64_t i = base + c;
                      bool expected = allowed(i, key, sk, offset, keyStart,
                                              causal, window, sinkTokens) &&
                                      i < sq;
                      ASSERT_EQ(queryOffsetVisibleOf(IntegerOps(), bounds, c,
                                                     causal),
                                expected)
                          << "causal " << causal << " window "
                          << window.value_or(-1) << " sinks " << sinkTokens
                          << " offset " << offset << " sq " << sq << " sk "
                          << sk << " keyStart " << keyStart << " key " << key
                          << " query " << i;
                      ++checked;
                    }
                    EXPECT_TRUE(bounds.hi >= 0 && bounds.hi <= kWidth &&
                                bounds.lo >= 0 && bounds.lo <= kWidth);
                  }
  EXPECT_GT(checked, 1000000);
}

} // namespace
