//===- Autotune.cpp - Tensor-core tile configs and their tuning -----------===//

#include "Autotune.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

#include <cstdio>

namespace fa {

/// The payload of a tuning entry; anything else is not trusted. Entries of
/// earlier versions (version 2 had no groups or section, 3 no dQ path, 4
/// named reduce-adds, then not the default, in its place) fail to match and
/// are retuned.
static constexpr const char *kFormat =
    "fa-tune 5 block-n %lld warps %lld stages %lld shared %lld groups %lld "
    "section %lld dq-kernel %lld\n";

std::string TileConfig::str(bool wgmma) const {
  std::string text;
  if ((!blockN && !kvStages) || (wgmma && defaultTiles()))
    text = "the compiler's tiles";
  else if (!warps) // The wgmma forward's K/V tiles (wgmmaForwardCandidates).
    text = (blockN ? "block-n " + std::to_string(blockN)
                   : std::string("the compiler's block-n")) +
           (kvStages ? ", stages " + std::to_string(kvStages)
                     : std::string(", the compiler's stages"));
  else
    text = llvm::formatv("block-n {0}, warps {1}, stages {2}, shared {3} KiB",
                         blockN, warps, kvStages, sharedBytes / 1024)
               .str();
  if (wgmmaGroups)
    text += ", wgmma groups " + std::to_string(wgmmaGroups);
  if (gridSection)
    text += ", grid section " + std::to_string(gridSection);
  if (dqKernel)
    text += ", dQ's own kernel";
  if (splitKv)
    text += ", split-KV decode kernels";
  if (scalarFallback)
    text += ", scalar fallback kernels";
  return text;
}

/// The wgmma forward's candidates: the compiler's choice of consumer
/// warpgroups (wgmmaGroupsFor: 3 up to D 80 without a short window, else
/// 2), and 2 where three are possible, each with the compiler's grid
/// sections and with one (batch, head) pair after another. Then, with the
/// compiler's warpgroups and sections, its K/V tiles: the other block-n
/// (64 where it takes more keys; none past D 128, where it takes 64 and O's
/// registers leave no room for more) with the compiler's stages, and three
/// stages of either block-n where they fit beside one copy of Q in
/// `maxSharedBytes` (so that the compiler takes the block-n as asked, not a
/// narrower one).
static std::vector<TileConfig> wgmmaForwardCandidates(int64_t headDim,
                                                      int64_t elementBytes,
                                                      int64_t maxSharedBytes) {
  std::vector<TileConfig> candidates = {TileConfig()};
  auto offer = [&](int64_t groups, int64_t section) {
    // K/V tiles and stages stay the wgmma forward's own (0): mma.sync's
    // 64-key single-stage default would starve it.
    TileConfig config{0, 0, 0, 0};
    config.wgmmaGroups = groups;
    config.gridSection = section;
    candidates.push_back(config);
  };
  offer(0, 1);
  int64_t groups = tensor_core::wgmmaGroupsFor(headDim, 0, std::nullopt);
  if (groups != 2) {
    offer(2, 0);
    offer(2, 1);
  }
  int64_t ownBlockN = tensor_core::wgmmaDefaultBlockN(headDim, groups);
  llvm::SmallVector<int64_t, 2> blockNs = {ownBlockN};
  if (ownBlockN > 64)
    blockNs.push_back(64);
  int64_t budget = std::min(maxSharedBytes, tensor_core::kHopperSharedBytes);
  // The tiles whose kernels spilled (ptxas 13.0; test/fa-compile/
  // spills-tuned.test): three consumers of D 80's own 112 keys have no
  // registers left for a third stage's slot arithmetic (swa, 16 bytes in
  // each), and two stages of 64 keys at D 128 spilled 4 bytes in mha's
  // producer at 24 registers.
  auto spills = [&](int64_t blockN, int64_t stages) {
    return (headDim == 80 && blockN == ownBlockN && stages == 3) ||
           (headDim == 128 && blockN == 64 && !stages);
  };
  for (int64_t blockN : blockNs)
    for (int64_t stages : {0, 3}) {
      // 0: the compiler's stages, two where they fit, else one.
      if ((blockN == ownBlockN && !stages) || spills(blockN, stages) ||
          tensor_core::wgmmaForwardSharedBytes(64 * groups, blockN,
                                               std::max<int64_t>(stages, 1),
                                               headDim, elementBytes) > budget)
        continue;
      // The compiler's block-n goes as 0: mma.sync's kernels in the same
      // program (split-KV, scalar fallback) keep their own tiles then.
      candidates.push_back(
          TileConfig{blockN == ownBlockN ? 0 : blockN, 0, stages, 0});
    }
  return candidates;
}

std::vector<TileConfig> tuningCandidates(DType dtype, int64_t headDim,
                                         Entry entry, int64_t maxSharedBytes,
                                         bool wgmma, bool dqByAtomics) {
  if (dtype != DType::F16 && dtype != DType::BF16)
    return {};
  if (wgmma && entry == Entry::Forward &&
      llvm::is_contained(tensor_core::kWgmmaHeadDims, headDim))
    return wgmmaForwardCandidates(headDim, dtypeSize(dtype), maxSharedBytes);
  if (wgmma && entry == Entry::Backward &&
      llvm::is_contained(tensor_core::kWgmmaBackwardHeadDims, headDim)) {
    // mma.sync's tiles do not reach these kernels: only dQ's path does,
    // where dQ by atomics is built.
    if (!dqByAtomics || !tensor_core::wgmmaDkDvWholeRows(headDim))
      return {};
    TileConfig dqKernel{0, 0, 0, 0};
    dqKernel.dqKernel = 1;
    return {TileConfig(), dqKernel};
  }
  if (entry == Entry::Forward ? !tensor_core::hasKernel(headDim)
                              : !tensor_core::hasBackwardKernel(headDim))
    return {};
  int64_t bytes = dtypeSize(dtype);
  std::vector<TileConfig> candidates;
  auto offer = [&](TileConfig config) {
    if (config.sharedBytes <= maxSharedBytes)
      candidates.push_back(config);
  };
  // Past D 128 the forward's shared Q tile puts even the default block-n
  // past static shared memory; the default (fewer keys in 48 KiB) goes
  // first all the same.
  const TileConfig byDefault;
  if (entry == Entry::Forward &&
      tensor_core::forwardSharedBytes(byDefault.blockN, byDefault.kvStages,
                                      byDefault.warps, headDim, bytes) >
          byDefault.sharedBytes)
    offer(byDefault);
  for (int64_t blockN : {64, 128}) {
    if (entry == Entry::Backward) {
      int64_t full = tensor_core::backwardSharedBytes(blockN, headDim, bytes);
      // The default block-n in static shared memory, then full tiles.
      if (blockN == 64 && full > tensor_core::kStaticSharedBytes)
        offer({blockN, 4, 1, tensor_core::kStaticSharedBytes});
      offer({blockN, 4, 1, full});
      continue;
    }
    for (int64_t warps : {4, 8})
      for (int64_t stages : {1, 2})
        offer({blockN, warps, stages,
               tensor_core::forwardSharedBytes(blockN, stages, warps, headDim,
                                               bytes)});
  }
  // Then 32-key tiles of 4 warps: a short window's blocks visit fewer keys
  // no row sees, and hold fewer registers (gpt-oss's window 128 at D 64:
  // 124 against 165, four blocks an SM; 110 -> 121 TFLOP/s, bench/NOTES.md,
  // fifty-fourth session). The split-KV kernels keep 64-key tiles whatever
  // the config says (kSplitKvMinBlockN).
  if (entry == Entry::Forward)
    for (int64_t stages : {1, 2})
      offer({32, 4, stages,
             tensor_core::forwardSharedBytes(32, stages, 4, headDim, bytes)});
  // The loops' order puts the default first: 64 keys, 4 warps and 1 stage
  // in static shared memory, which every head dim's tiles fit.
  return candidates.size() > 1 ? candidates : std::vector<TileConfig>();
}

std::optional<TileConfig> loadTunedConfig(const KernelCache &cache,
                                          llvm::StringRef key) {
  std::string payload;
  if (cache.load(key, payload) != KernelCache::Lookup::Hit)
    return std::nullopt;
  long long blockN = 0, warps = 0, stages = 0, shared = 0, groups = 0,
            section = 0, dqKernel = 0;
  char check[192];
  if (std::sscanf(payload.c_str(), kFormat, &blockN, &warps, &stages, &shared,
                  &groups, &section, &dqKernel) != 7 ||
      (dqKernel != 0 && dqKernel != 1))
    return std::nullopt;
  std::snprintf(check, sizeof check, kFormat, blockN, warps, stages, shared,
                groups, section, dqKernel);
  if (payload != check)
    return std::nullopt;
  return TileConfig{blockN, warps, stages, shared, groups, section, dqKernel};
}

bool storeTunedConfig(const KernelCache &cache, llvm::StringRef key,
                      const TileConfig &config, std::string &error) {
  char payload[192];
  std::snprintf(payload, sizeof payload, kFormat,
                static_cast<long long>(config.blockN),
                static_cast<long long>(config.warps),
                static_cast<long long>(config.kvStages),
                static_cast<long long>(config.sharedBytes),
                static_cast<long long>(config.wgmmaGroups),
                static_cast<long long>(config.gridSection),
                static_cast<long long>(config.dqKernel));
  return cache.store(key, payload, error);
}

namespace {
/// A row of the shipped table.
struct TableRow {
  const char *arch;
  Entry entry;
  int64_t headDim;
  const char *mask;
  uint64_t window, sq, sk, bh;
  TileConfig config;
};
} // namespace

// Generated on the GPU by bench/make_tuning_table.py; its first lines say
// which GPU and when.
#include "TunedConfigs.inc"

static int64_t log2Distance(uint64_t a, uint64_t b) {
  int64_t d = static_cast<int64_t>(llvm::Log2_64(std::max<uint64_t>(a, 1))) -
              static_cast<int64_t>(llvm::Log2_64(std::max<uint64_t>(b, 1)));
  return d < 0 ? -d : d;
}

std::optional<TileConfig> shippedConfig(const TableShape &shape) {
  std::optional<TileConfig> best;
  int64_t bestDistance = 0;
  for (const TableRow &row : kTunedConfigs) {
    if (shape.arch != row.arch || shape.entry != row.entry ||
        shape.headDim != row.headDim || shape.mask != row.mask ||
        shape.window != row.window)
      continue;
    int64_t distance = log2Distance(shape.sq, row.sq) +
                       log2Distance(shape.sk, row.sk) +
                       log2Distance(shape.bh, row.bh);
    if (!best || distance < bestDistance) {
      best = row.config;
      bestDistance = distance;
    }
  }
  return best;
}

const char *shippedTableSource() { return kTunedConfigsSource; }

std::vector<std::pair<TableShape, TileConfig>> shippedRows() {
  std::vector<std::pair<TableShape, TileConfig>> rows;
  for (const TableRow &row : kTunedConfigs)
    rows.push_back({TableShape{row.arch, row.entry, row.headDim, row.mask,
                               row.window, row.sq, row.sk, row.bh},
                    row.config});
  return rows;
}

std::string tableRow(const TableShape &shape, const TileConfig &config,
                     const std::string &note) {
  return llvm::formatv(
             "    {{\"{0}\", Entry::{1}, {2}, \"{3}\", {4}, {5}, {6}, {7}, "
             "{{{8}, {9}, {10}, {11}, {12}, {13}, {14}}}, // {15}",
             shape.arch, shape.entry == Entry::Forward ? "Forward" : "Backward",
             shape.headDim, shape.mask, shape.window, shape.sq, shape.sk,
             shape.bh, config.blockN, config.warps, config.kvStages,
             config.sharedBytes, config.wgmmaGroups, config.gridSection,
             config.dqKernel, note)
      .str();
}

std::optional<TileConfig>
pickFastest(const std::vector<TileConfig> &candidates,
            llvm::function_ref<double(const TileConfig &)> timeMs,
            llvm::function_ref<void(const std::string &)> progress,
            bool wgmma) {
  std::optional<TileConfig> best;
  double bestMs = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    double ms = timeMs(candidates[i]);
    progress("[" + std::to_string(i + 1) + "/" +
             std::to_string(candidates.size()) + "] " +
             candidates[i].str(wgmma) + ": " +
             (ms < 0 ? std::string("failed")
                     : llvm::formatv("{0:F3} ms", ms).str()));
    if (ms >= 0 && (!best || ms < bestMs)) {
      best = candidates[i];
      bestMs = ms;
    }
  }
  return best;
}

} // namespace fa
