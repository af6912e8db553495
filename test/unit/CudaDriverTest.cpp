//===- CudaDriverTest.cpp - The launch checks that need no GPU -----------===//

#include "../../lib/Runtime/CudaDriver.h"

#include <gtest/gtest.h>

#include <string>

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
