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

constexpr int64_t kKiB = 1024;
constexpr int64_t kH100Shared = 227 * kKiB;

TEST(AutotuneCandidates, FollowTheKernelsLimits) {
  // No tensor-core kernels: nothing to tune.
  EXPECT_TRUE(tuningCandidates(DType::F32, 64, Entry::Forward, kH100Shared)
                  .empty());
  EXPECT_TRUE(tuningCandidates(DType::BF16, 40, Entry::Forward, kH100Shared)
                  .empty());
  // D 192 and 256 have an mma.sync forward but no mma.sync backward.
  EXPECT_TRUE(tuningCandidates(DType::BF16, 192, Entry::Backward, kH100Shared)
                  .empty());
  // D 96's rows are padded by a chunk (104 elements): 64-key tiles take
  // 2 x 64 x 208 bytes.
  EXPECT_EQ(tuningCandidates(DType::BF16, 96, Entry::Forward, kH100Shared)[4],
            (TileConfig{128, 4, 1, 2 * 128 * 208}));
  // D 256: the default in 48 KiB first, then tiles beside a shared Q tile
  // of 16 rows a warp (4 warps: 32 KiB), those past 227 KiB left out.
  EXPECT_EQ(tuningCandidates(DType::BF16, 256, Entry::Forward, kH100Shared),
            (std::vector<TileConfig>{{64, 4, 1, 48 * kKiB},
                                     {64, 4, 1, 96 * kKiB},
                                     {64, 4, 2, 160 * kKiB},
                                     {64, 8, 1, 128 * kKiB},
                                     {64, 8, 2, 192 * kKiB},
                                     {128, 4, 1, 160 * kKiB},
                                     {128, 8, 1, 192 * kKiB},
                                     {32, 4, 1, 64 * kKiB},
                                     {32, 4, 2, 96 * kKiB}}));
  // D 128 forward: each candidate asks for the shared memory its K/V tiles
  // need (2 tiles x stages x block-n x 128 x 2 bytes), at least 48 KiB;
  // 32-key tiles (for short windows) come last.
  EXPECT_EQ(tuningCandidates(DType::BF16, 128, Entry::Forward, kH100Shared),
            (std::vector<TileConfig>{{64, 4, 1, 48 * kKiB},
                                     {64, 4, 2, 64 * kKiB},
                                     {64, 8, 1, 48 * kKiB},
                                     {64, 8, 2, 64 * kKiB},
                                     {128, 4, 1, 64 * kKiB},
                                     {128, 4, 2, 128 * kKiB},
                                     {128, 8, 1, 64 * kKiB},
                                     {128, 8, 2, 128 * kKiB},
                                     {32, 4, 1, 48 * kKiB},
                                     {32, 4, 2, 48 * kKiB}}));
  // A GPU that offers a block only 64 KiB drops the 128 KiB ones, and one
  // with the bare 48 KiB keeps what fits there.
  EXPECT_EQ(
      tuningCandidates(DType::BF16, 128, Entry::Forward, 64 * kKiB).size(),
      8u);
  EXPECT_EQ(tuningCandidates(DType::BF16, 128, Entry::Forward, 48 * kKiB),
            (std::vector<TileConfig>{{64, 4, 1, 48 * kKiB},
                                     {64, 8, 1, 48 * kKiB},
                                     {32, 4, 1, 48 * kKiB},
                                     {32, 4, 2, 48 * kKiB}}));
  // D 128 backward: full dK/dV tiles (64 keys and 64 query rows of K, V, Q
  // and dO) need 64 KiB; so do 128-key dQ tiles.
  EXPECT_EQ(tuningCandidates(DType::F16, 128, Entry::Backward, kH100Shared),
            (std::vector<TileConfig>{{64, 4, 1, 48 * kKiB},
                                     {64, 4, 1, 64 * kKiB},
                                     {128, 4, 1, 64 * kKiB}}));
  EXPECT_TRUE(
      tuningCandidates(DType::F16, 128, Entry::Backward, 48 * kKiB).empty());
  // D 64: everything single-stage fits 48 KiB; warps and stages only
  // matter forward.
  EXPECT_EQ(tuningCandidates(DType::F16, 64, Entry::Forward, kH100Shared),
            (std::vector<TileConfig>{{64, 4, 1, 48 * kKiB},
                                     {64, 4, 2, 48 * kKiB},
                                     {64, 8, 1, 48 * kKiB},
                                     {64, 8, 2, 48 * kKiB},
                                     {128, 4, 1, 48 * kKiB},
                                     {128, 4, 2, 64 * kKiB},
                                     {128, 8, 1, 48 * kKiB},
                                     {128, 8, 2, 64 * kKiB},
                                     {32, 4, 1, 48 * kKiB},
                                     {32, 4, 2, 48 * kKiB}}));
  EXPECT_EQ(tuningCandidates(DType::F16, 64, Entry::Backward, kH100Shared),
            (std::vector<TileConfig>{{64, 4, 1, 48 * kKiB},
                                     {128, 4, 1, 48 * kKiB}}));
  // Forwards on wgmma (16-bit on sm_90a) tune its consumer warpgroups and
  // grid order, at every head dim it covers: up to D 80 the compiler's
  // choice (3) and 2, each with the default sections and one pair after
  // another; past D 80 only the grid order (the compiler's 2). Then its K/V
  // tiles with the compiler's warpgroups: the other block-n with the
  // compiler's stages, and three stages where they fit beside Q (warps 0:
  // the wgmma kernel's own knobs, not mma.sync's; block-n 0: the
  // compiler's).
  TileConfig sectionsOff{0, 0, 0, 0};
  sectionsOff.gridSection = 1;
  TileConfig twoGroups{0, 0, 0, 0};
  twoGroups.wgmmaGroups = 2;
  TileConfig twoGroupsSectionsOff = twoGroups;
  twoGroupsSectionsOff.gridSection = 1;
  // The candidates at `headDim`: the warpgroup and grid-order ones (with
  // two groups where the compiler takes three), then `tiles`.
  auto expectWgmmaForward = [&](DType dtype, int64_t headDim, bool threeGroups,
                                std::vector<TileConfig> tiles) {
    std::vector<TileConfig> expected = {TileConfig(), sectionsOff};
    if (threeGroups)
      expected.insert(expected.end(), {twoGroups, twoGroupsSectionsOff});
    expected.insert(expected.end(), tiles.begin(), tiles.end());
    EXPECT_EQ(tuningCandidates(dtype, headDim, Entry::Forward, kH100Shared,
                               /*wgmma=*/true),
              expected)
        << "D " << headDim;
  };
  // D 64: three consumers of 128 keys; 64 keys, and three stages of each
  // (192 rows of Q and 3 x 2 x 128 x 64 x 2 bytes of K/V: 120 KiB).
  expectWgmmaForward(DType::BF16, 64, true,
                     {{0, 0, 3, 0}, {64, 0, 0, 0}, {64, 0, 3, 0}});
  // D 80: three consumers take 112 keys, with no registers to spare for a
  // third stage of them.
  expectWgmmaForward(DType::BF16, 80, true, {{64, 0, 0, 0}, {64, 0, 3, 0}});
  // D 32 takes 128 keys as D 64 does; 64 is the other choice.
  expectWgmmaForward(DType::F16, 32, true,
                     {{0, 0, 3, 0}, {64, 0, 0, 0}, {64, 0, 3, 0}});
  expectWgmmaForward(DType::F16, 96, false,
                     {{0, 0, 3, 0}, {64, 0, 0, 0}, {64, 0, 3, 0}});
  // D 128: three stages of 128 keys need 32 KiB of Q and 192 KiB of K/V,
  // which with the barriers and the swizzle's alignment still fit 227 KiB;
  // its 64-key tiles come with three stages only (two spilled).
  expectWgmmaForward(DType::F16, 128, false, {{0, 0, 3, 0}, {64, 0, 3, 0}});
  // D 192 keeps 64 keys (O's registers); three stages fit (48 + 144 KiB).
  expectWgmmaForward(DType::BF16, 192, false, {{0, 0, 3, 0}});
  // D 256: a third stage would not fit beside Q (64 + 192 KiB).
  expectWgmmaForward(DType::BF16, 256, false, {});
  // A block with less shared memory drops what does not fit it.
  EXPECT_EQ(
      tuningCandidates(DType::BF16, 96, Entry::Forward, 96 * kKiB,
                       /*wgmma=*/true),
      (std::vector<TileConfig>{TileConfig(), sectionsOff, {64, 0, 0, 0}}));
  EXPECT_EQ((TileConfig{64, 0, 3, 0}).str(/*wgmma=*/true),
            "block-n 64, stages 3");
  EXPECT_EQ((TileConfig{64, 0, 0, 0}).str(/*wgmma=*/true),
            "block-n 64, the compiler's stages");
  EXPECT_EQ((TileConfig{0, 0, 3, 0}).str(/*wgmma=*/true),
            "the compiler's block-n, stages 3");
  // The wgmma backward (D 32 to 128) tunes dQ's path instead: the default,
  // TMA reduce-adds from the dK/dV kernel, or dQ's own kernel; not where
  // the backward must be deterministic (or was compiled with dQ's own
  // kernel), which leaves only the default. mma.sync's tiles do not reach
  // it, nor does the tuning past D 128, where dQ always has its own kernel.
  TileConfig dqKernel{0, 0, 0, 0};
  dqKernel.dqKernel = 1;
  for (int64_t headDim : {32, 64, 80, 96, 128})
    EXPECT_EQ(tuningCandidates(DType::BF16, headDim, Entry::Backward,
                               kH100Shared, /*wgmma=*/true),
              (std::vector<TileConfig>{TileConfig(), dqKernel}));
  EXPECT_TRUE(tuningCandidates(DType::BF16, 128, Entry::Backward, kH100Shared,
                               /*wgmma=*/true, /*dqByAtomics=*/false)
                  .empty());
  EXPECT_TRUE(tuningCandidates(DType::BF16, 256, Entry::Backward, kH100Shared,
                               /*wgmma=*/true)
                  .empty());
  EXPECT_EQ(dqKernel.str(), "the compiler's tiles, dQ's own kernel");
  // The default is the program as compiled: on wgmma, the compiler's tiles.
  EXPECT_EQ(TileConfig().str(/*wgmma=*/true), "the compiler's tiles");
  EXPECT_EQ(TileConfig().str(), "block-n 64, warps 4, stages 1, shared 48 KiB");
  // The split-KV kernels ride on a config (run() sets them for the shapes
  // that split): a program of their own, whatever the tiles.
  TileConfig decode;
  decode.splitKv = 1;
  EXPECT_NE(decode, TileConfig());
  EXPECT_EQ(decode.str(/*wgmma=*/true),
            "the compiler's tiles, split-KV decode kernels");
  EXPECT_EQ(decode.str(),
            "block-n 64, warps 4, stages 1, shared 48 KiB, split-KV decode "
            "kernels");
  // f32 stays on mma.sync's knobs.
  EXPECT_TRUE(tuningCandidates(DType::F32, 64, Entry::Forward, kH100Shared,
                               /*wgmma=*/true)
                  .empty());
  EXPECT_EQ(twoGroupsSectionsOff.str(),
            "the compiler's tiles, wgmma groups 2, grid section 1");
  // The default comes first: it is what FA_AUTOTUNE=0 runs.
  for (int64_t headDim : {64, 128})
    for (Entry entry : {Entry::Forward, Entry::Backward})
      EXPECT_EQ(tuningCandidates(DType::BF16, headDim, entry, kH100Shared)
                    .front(),
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
  EXPECT_EQ(lines[1],
            "[2/3] block-n 64, warps 8, stages 1, shared 48 KiB: 1.000 ms");

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
  ASSERT_TRUE(storeTunedConfig(cache, key, {128, 8, 2, 128 * kKiB}, error))
      << error;
  auto loaded = loadTunedConfig(cache, key);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(*loaded, (TileConfig{128, 8, 2, 128 * kKiB}));
  ASSERT_TRUE(storeTunedConfig(cache, key, {64, 4, 1, 48 * kKiB, 2, 1}, error))
      << error;
  loaded = loadTunedConfig(cache, key);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(*loaded, (TileConfig{64, 4, 1, 48 * kKiB, 2, 1}));
  ASSERT_TRUE(storeTunedConfig(cache, key, {0, 0, 0, 0, 0, 0, 1}, error))
      << error;
  loaded = loadTunedConfig(cache, key);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(*loaded, (TileConfig{0, 0, 0, 0, 0, 0, 1}));

  // A checksummed entry whose payload is not a config is not trusted, nor
  // is one in a format before stages and shared memory, or before wgmma
  // groups and grid sections, or dQ's path, were tuned, or while reduce-adds
  // were not dQ's default path (version 4, whose dq-atomics field the
  // current dq-kernel field inverts); nor a dq-kernel field other than 0 or
  // 1.
  ASSERT_TRUE(cache.store(key, "fa-tune 5 block-n 64 warps\n", error));
  EXPECT_FALSE(loadTunedConfig(cache, key));
  ASSERT_TRUE(cache.store(key,
                          "fa-tune 3 block-n 64 warps 4 stages 1 shared "
                          "49152 groups 0 section 0\n",
                          error));
  EXPECT_FALSE(loadTunedConfig(cache, key));
  ASSERT_TRUE(cache.store(key,
                          "fa-tune 5 block-n 0 warps 0 stages 0 shared 0 "
                          "groups 0 section 0 dq-kernel 2\n",
                          error));
  EXPECT_FALSE(loadTunedConfig(cache, key));
  ASSERT_TRUE(cache.store(key,
                          "fa-tune 4 block-n 0 warps 0 stages 0 shared 0 "
                          "groups 0 section 0 dq-atomics 1\n",
                          error));
  EXPECT_FALSE(loadTunedConfig(cache, key));
  ASSERT_TRUE(cache.store(
      key, "fa-tune 2 block-n 64 warps 4 stages 1 shared 49152\n", error));
  EXPECT_FALSE(loadTunedConfig(cache, key));
  ASSERT_TRUE(cache.store(key, "fa-tune 1 block-n 64 warps 8\n", error));
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

namespace {

TEST(ShippedTable, EveryRowIsACandidateOfItsClass) {
  // Each row names the default or a config the tuner times for its class
  // today (Program's choice of candidates: the wgmma backward, or the wgmma
  // forward where a window that short still runs it, else mma.sync's), on
  // the Hopper GPU the table was measured on. A row no candidate list has
  // (one edited by hand, or left from an older format or list) would build
  // a program no tuning run picks, without an error anywhere.
  std::vector<std::pair<TableShape, TileConfig>> rows = shippedRows();
  ASSERT_FALSE(rows.empty());
  for (const auto &[shape, config] : rows) {
    ASSERT_EQ(shape.arch, "sm_90a") << tableRow(shape, config, "");
    std::optional<int64_t> window;
    if (shape.mask == "window")
      window = static_cast<int64_t>(shape.window);
    bool wgmma = tunesWgmma(shape.entry, shape.headDim, window);
    std::vector<TileConfig> candidates = tuningCandidates(
        DType::BF16, shape.headDim, shape.entry, kH100Shared, wgmma);
    EXPECT_TRUE(config == TileConfig() ||
                llvm::is_contained(candidates, config))
        << tableRow(shape, config, config.str(wgmma));
  }
}

TEST(ShippedTable, NearestRowOfTheSameVariantOrNone) {
  // The table names the GPU and date it was measured on.
  EXPECT_NE(std::string(shippedTableSource()).find("H100"), std::string::npos);
  // A row of the table (causal D 128 forward at S 16k) comes back as it is.
  TableShape shape{"sm_90a", Entry::Forward, 128,   "causal",
                   0,        16384,          16384, 16};
  std::optional<TileConfig> exact = shippedConfig(shape);
  ASSERT_TRUE(exact.has_value());
  EXPECT_EQ(exact->gridSection, 1);
  // A class the table lacks (S 32k, B*Hq 8) takes the nearest: S 16k's.
  shape.sq = shape.sk = 32768;
  shape.bh = 8;
  EXPECT_EQ(shippedConfig(shape), exact);
  // Another GPU, head dim, mask or window class has no row.
  for (TableShape other :
       {TableShape{"sm_80", Entry::Forward, 128, "causal", 0, 16384, 16384, 16},
        TableShape{"sm_90a", Entry::Forward, 40, "causal", 0, 16384, 16384, 16},
        TableShape{"sm_90a", Entry::Forward, 128, "window", 512, 16384, 16384,
                   16}})
    EXPECT_FALSE(shippedConfig(other).has_value());
  // FA_TUNING_RECORD writes rows in the table's own form.
  TileConfig dqKernel{0, 0, 0, 0};
  dqKernel.dqKernel = 1;
  EXPECT_EQ(
      tableRow({"sm_90a", Entry::Backward, 64, "window", 128, 4096, 4096, 256},
               dqKernel, "note"),
      "    {\"sm_90a\", Entry::Backward, 64, \"window\", 128, 4096, "
      "4096, 256, {0, 0, 0, 0, 0, 0, 1}}, // note");
}

TEST(TensorCoreCoverage, ScalarFallbackReasons) {
  using tensor_core::scalarFallbackReason;
  // Every head dim the issue lists runs on the tensor cores, 16-bit and
  // f32, forward on both generations; mma.sync's backward stops at 128.
  for (int64_t headDim : {32, 64, 80, 96, 128, 192, 256}) {
    for (bool wgmma : {false, true}) {
      EXPECT_EQ(scalarFallbackReason(false, 2, headDim, wgmma, true), nullptr);
      EXPECT_EQ(scalarFallbackReason(false, 4, headDim, wgmma, true), nullptr);
    }
    EXPECT_EQ(scalarFallbackReason(true, 2, headDim, /*wgmma=*/true, true),
              nullptr);
  }
  EXPECT_EQ(scalarFallbackReason(true, 2, 128, false, true), nullptr);
  EXPECT_STREQ(scalarFallbackReason(true, 2, 192, false, true),
               "the mma.sync backward takes D = 32, 64, 80, 96 and 128");
  EXPECT_STREQ(scalarFallbackReason(true, 4, 256, true, true),
               "the mma.sync backward takes D = 32, 64, 80, 96 and 128");
  EXPECT_STREQ(scalarFallbackReason(false, 2, 40, true, true),
               "the wgmma kernels take D = 32, 64, 80, 96, 128, 192 and 256");
  EXPECT_STREQ(scalarFallbackReason(false, 2, 48, false, true),
               "the mma.sync forward takes D = 32, 64, 80, 96, 128, 192 and "
               "256");
  EXPECT_STREQ(scalarFallbackReason(false, 8, 64, true, true),
               "f64 has no tensor-core kernel");
  EXPECT_STREQ(scalarFallbackReason(false, 2, 64, true, false),
               "an operand is not unit-stride on D with 16-byte aligned "
               "strides and start");
}

TEST(TensorCoreCoverage, ShortWindowsSendD64ToMmaSync) {
  using tensor_core::wgmmaForwardRuns;
  // gpt-oss's 128-key window at D 64 runs mma.sync on sm_90a, and the
  // tuner offers mma.sync's knobs for it; D 128 stays on wgmma.
  EXPECT_FALSE(wgmmaForwardRuns(64, 128));
  EXPECT_FALSE(wgmmaForwardRuns(64, tensor_core::kShortWindow - 1));
  EXPECT_TRUE(wgmmaForwardRuns(64, tensor_core::kShortWindow));
  EXPECT_TRUE(wgmmaForwardRuns(64, std::nullopt));
  EXPECT_TRUE(wgmmaForwardRuns(128, 128));
  EXPECT_FALSE(wgmmaForwardRuns(48, std::nullopt));
}

} // namespace
