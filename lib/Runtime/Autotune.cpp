//===- Autotune.cpp - Tensor-core tile configs and their tuning -----------===//

#include "Autotune.h"

#include "fa/Transforms/TensorCoreLimits.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdio>

namespace fa {

/// The payload of a tuning entry; anything else is not trusted.
static constexpr const char *kFormat = "fa-tune 1 block-n %lld warps %lld\n";

std::string TileConfig::str() const {
  return "block-n " + std::to_string(blockN) + ", warps " +
         std::to_string(warps);
}

std::vector<TileConfig> tuningCandidates(DType dtype, int64_t headDim,
                                         Entry entry) {
  if ((dtype != DType::F16 && dtype != DType::BF16) ||
      !tensor_core::hasKernel(headDim))
    return {};
  std::vector<TileConfig> candidates;
  for (int64_t blockN : {64, 128}) {
    if (!tensor_core::tilesFit(blockN, headDim, dtypeSize(dtype)))
      continue;
    for (int64_t warps : {4, 8}) {
      if (entry == Entry::Backward && warps != 4)
        continue;
      candidates.push_back({blockN, warps});
    }
  }
  return candidates.size() > 1 ? candidates : std::vector<TileConfig>();
}

std::optional<TileConfig> loadTunedConfig(const KernelCache &cache,
                                          llvm::StringRef key) {
  std::string payload;
  if (cache.load(key, payload) != KernelCache::Lookup::Hit)
    return std::nullopt;
  long long blockN = 0, warps = 0;
  char check[128];
  if (std::sscanf(payload.c_str(), kFormat, &blockN, &warps) != 2)
    return std::nullopt;
  std::snprintf(check, sizeof check, kFormat, blockN, warps);
  if (payload != check)
    return std::nullopt;
  return TileConfig{blockN, warps};
}

bool storeTunedConfig(const KernelCache &cache, llvm::StringRef key,
                      const TileConfig &config, std::string &error) {
  char payload[128];
  std::snprintf(payload, sizeof payload, kFormat,
                static_cast<long long>(config.blockN),
                static_cast<long long>(config.warps));
  return cache.store(key, payload, error);
}

std::optional<TileConfig>
pickFastest(const std::vector<TileConfig> &candidates,
            llvm::function_ref<double(const TileConfig &)> timeMs,
            llvm::function_ref<void(const std::string &)> progress) {
  std::optional<TileConfig> best;
  double bestMs = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    double ms = timeMs(candidates[i]);
    progress("[" + std::to_string(i + 1) + "/" +
             std::to_string(candidates.size()) + "] " + candidates[i].str() +
             ": " + (ms < 0 ? std::string("failed") : llvm::formatv("{0:F3} ms", ms).str()));
    if (ms >= 0 && (!best || ms < bestMs)) {
      best = candidates[i];
      bestMs = ms;
    }
  }
  return best;
}

} // namespace fa
