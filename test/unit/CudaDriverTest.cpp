//===- CudaDriverTest.cpp - The launch checks that need no GPU -----------===//

#include "../../lib/Runtime/CudaDriver.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <tuple>

using namespace fa::cuda;

namespace {

TEST(GridLimits, InsideTheLimitsLaunches) {
  EXPECT_EQ(gridLimitError(1, 1, 1), "");
  EXPECT_EQ(gridLimitError(2147483647, 65535, 65535), "");
}

TEST(GridLimits, PastThemIsRefusedByName) {
  // B * H in the hundreds of thousands on the z axis, as a batch of short
  // sequences would have it: refused, the grid and the limit named.
  std::string why = gridLimitError(8, 16, 100000);
  EXPECT_NE(why.find("(8, 16, 100000)"), std::string::npos) << why;
  EXPECT_NE(why.find("y and z at most 65535"), std::string::npos) << why;
  EXPECT_NE(gridLimitError(1, 65536, 1), "");
  // Past 2^31 on x, where a cast to unsigned would launch too few blocks.
  EXPECT_NE(gridLimitError(int64_t(1) << 32, 1, 1), "");
  // An empty grid launches nothing that the caller asked for.
  EXPECT_NE(gridLimitError(0, 1, 1), "");
  EXPECT_NE(gridLimitError(1, 1, -1), "");
}

} // namespace

namespace {

TensorMapCache::Key mapKey(std::int64_t address) {
  // An operand of [2, 8, 1000, 128] 2-byte elements, 128-byte swizzle,
  // boxes of 64 columns x 128 rows.
  return {address, 2, 128, 64, 128, 128, 1000, 8, 2, 256, 256000, 2048000};
}

std::array<unsigned char, TensorMapCache::kMapBytes> mapBytes(int seed) {
  std::array<unsigned char, TensorMapCache::kMapBytes> bytes;
  for (int i = 0; i < TensorMapCache::kMapBytes; ++i)
    bytes[i] = static_cast<unsigned char>(seed * 31 + i);
  return bytes;
}

TEST(TensorMapCache, ARepeatedOperandGetsItsMapBack) {
  TensorMapCache cache;
  alignas(64) std::array<unsigned char, TensorMapCache::kMapBytes> got{};
  EXPECT_FALSE(cache.find(mapKey(4096), got.data()));
  auto made = mapBytes(1);
  cache.insert(mapKey(4096), made.data());
  ASSERT_TRUE(cache.find(mapKey(4096), got.data()));
  EXPECT_EQ(got, made);
}

TEST(TensorMapCache, AnyFieldThatDiffersMissesTheEntry) {
  TensorMapCache cache;
  auto made = mapBytes(2);
  cache.insert(mapKey(4096), made.data());
  alignas(64) std::array<unsigned char, TensorMapCache::kMapBytes> got{};
  for (std::size_t field = 0; field < std::tuple_size_v<TensorMapCache::Key>;
       ++field) {
    TensorMapCache::Key other = mapKey(4096);
    other[field] += 16;
    EXPECT_FALSE(cache.find(other, got.data())) << "field " << field;
  }
}

TEST(TensorMapCache, TheEntryKeptLongestMakesRoom) {
  TensorMapCache cache;
  for (int i = 0; i <= TensorMapCache::kEntries; ++i) {
    auto made = mapBytes(i);
    cache.insert(mapKey(4096 * (i + 1)), made.data());
  }
  alignas(64) std::array<unsigned char, TensorMapCache::kMapBytes> got{};
  EXPECT_FALSE(cache.find(mapKey(4096), got.data()));
  for (int i = 1; i <= TensorMapCache::kEntries; ++i) {
    ASSERT_TRUE(cache.find(mapKey(4096 * (i + 1)), got.data())) << i;
    EXPECT_EQ(got, mapBytes(i));
  }
}

} // namespace
