//===- AutotuneTest.cpp - Tile-config candidates and tuning entries -------===//

#include "../../lib/Runtime/Autotune.h"
#include "TempDirectoryTest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

using namespace fa;

namespace {

using AutotuneTest = TempDirectoryTest;

TEST(AutotuneCandidates, FollowTheKernelsLimits) {
  // No tensor-core kernels: nothing to tune.
  EXPECT_TRUE(tuningCandidates(DType::F32, 64, Entry::Forward).empty());
  EXPECT_TRUE(tuningCandidates(DType::BF16, 96, Entry::Forward).empty());
  // D 128: two 128-key tiles overflow 48 KiB, so only warps vary.
  EXPECT_EQ(tuningCandidates(DType::BF16, 128, Entry::Forward),
            (std::vector<TileConfig>{{64, 4}, {64, 8}}));
  EXPECT_TRUE(tuningCandidates(DType::F16, 128, Entry::Backward).empty());
  // D 64: both tiles and both warp counts; warps only matter forward.
  EXPECT_EQ(tuningCandidates(DType::F16, 64, Entry::Forward),
            (std::vector<TileConfig>{{64, 4}, {64, 8}, {128, 4}, {128, 8}}));
  EXPECT_EQ(tuningCandidates(DType::F16, 64, Entry::Backward),
            (std::vector<TileConfig>{{64, 4}, {128, 4}}));
  // The default comes first: it is what FA_AUTOTUNE=0 runs.
  EXPECT_EQ(tuningCandidates(DType::BF16, 64, Entry::Forward).front(),
            TileConfig());
}

TEST(AutotunePick, FastestWinsAndFailuresAreSkipped) {
  std::vector<TileConfig> candidates{{64, 4}, {64, 8}, {128, 4}};
  std::vector<std::string> lines;
  auto log = [&](const std::string &line) { lines.push_back(line); };
  auto best = pickFastest(
      candidates,
      [](const TileConfig &c) { return c.warps == 8 ? 1.0 : 2.0; }, log);
  ASSERT_TRUE(best);
  EXPECT_EQ(*best, (TileConfig{64, 8}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "[2/3] block-n 64, warps 8: 1.000 ms");

  best = pickFastest(
      candidates,
      [](const TileConfig &c) { return c.blockN == 128 ? 3.0 : -1.0; }, log);
  ASSERT_TRUE(best);
  EXPECT_EQ(*best, (TileConfig{128, 4}));
  EXPECT_FALSE(pickFastest(
      candidates, [](const TileConfig &) { return -1.0; }, log));
}

TEST_F(AutotuneTest, ChoiceRoundTripsAndCorruptEntriesAreNotTrusted) {
  KernelCache cache(directory);
  std::string error;
  std::string key = KernelCache::hashKey({"tune", "causal forward D 64"});
  EXPECT_FALSE(loadTunedConfig(cache, key));
  ASSERT_TRUE(storeTunedConfig(cache, key, {128, 8}, error)) << error;
  auto loaded = loadTunedConfig(cache, key);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(*loaded, (TileConfig{128, 8}));

  // A checksummed entry whose payload is not a config is not trusted.
  ASSERT_TRUE(cache.store(key, "fa-tune 1 block-n 64 warps\n", error));
  EXPECT_FALSE(loadTunedConfig(cache, key));
  // Bytes flipped on disk: the checksum fails and the entry goes.
  ASSERT_TRUE(storeTunedConfig(cache, key, {64, 4}, error));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cache.pathFor(key), ec, llvm::sys::fs::OF_Append);
    ASSERT_FALSE(ec);
    os << "x";
  }
  EXPECT_FALSE(loadTunedConfig(cache, key));
  EXPECT_FALSE(llvm::sys::fs::exists(cache.pathFor(key)));
}

TEST_F(AutotuneTest, TwoProcessesTuningOneKeyLeaveAValidEntry) {
  KernelCache cache(directory);
  std::string key = KernelCache::hashKey({"tune", "shared shape class"});
  std::vector<pid_t> children;
  for (int64_t warps : {4, 8}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::string error;
      for (int i = 0; i < 200; ++i)
        if (!storeTunedConfig(cache, key, {64, warps}, error))
          _exit(1);
      _exit(0);
    }
    children.push_back(pid);
  }
  // Readers meanwhile see no entry or a whole one, never a torn one.
  for (int i = 0; i < 200; ++i) {
    std::string payload;
    if (cache.load(key, payload) == KernelCache::Lookup::Hit)
      EXPECT_TRUE(loadTunedConfig(cache, key));
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto loaded = loadTunedConfig(cache, key);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->blockN, 64);
  EXPECT_TRUE(loaded->warps == 4 || loaded->warps == 8);
}

} // namespace
