//===- Autotune.h - Tensor-core tile configs and their tuning ---*- C++ -*-===//
//
// The tensor-core kernels take two knobs: keys per shared-memory tile
// (block-n) and warps per forward block. For a new shape class, Program::run
// times each candidate on the caller's real arguments and keeps the fastest
// in the kernel cache, so later processes start with it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_RUNTIME_AUTOTUNE_H
#define FA_LIB_RUNTIME_AUTOTUNE_H

#include "KernelCache.h"

#include "fa/Runtime.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>
#include <vector>

namespace fa {

struct TileConfig {
  int64_t blockN = 64;
  int64_t warps = 4;

  bool operator==(const TileConfig &other) const {
    return blockN == other.blockN && warps == other.warps;
  }
  bool operator!=(const TileConfig &other) const { return !(*this == other); }
  /// "block-n 64, warps 4".
  std::string str() const;
};

/// The configs worth timing for an entry of `dtype` with head dim
/// `headDim` (the default first); empty when only the default applies
/// (f32/f64, head dims without tensor-core kernels). Warps only change the
/// forward; block-n values whose K/V tiles do not fit static shared memory
/// are left out (tensor_core::tilesFit: fa-gpu-tensor-core skips them).
std::vector<TileConfig> tuningCandidates(DType dtype, int64_t headDim,
                                         Entry entry);

/// The config stored under `key`, when a valid entry is there.
std::optional<TileConfig> loadTunedConfig(const KernelCache &cache,
                                          llvm::StringRef key);
/// Stores `config` under `key` (atomically, checksummed, like kernels).
bool storeTunedConfig(const KernelCache &cache, llvm::StringRef key,
                      const TileConfig &config, std::string &error);

/// The candidate `timeMs` rates fastest; a candidate it rates < 0 (failed)
/// is skipped. `progress` gets one line per candidate. Returns nullopt when
/// every candidate failed.
std::optional<TileConfig>
pickFastest(const std::vector<TileConfig> &candidates,
            llvm::function_ref<double(const TileConfig &)> timeMs,
            llvm::function_ref<void(const std::string &)> progress);

} // namespace fa

#endif // FA_LIB_RUNTIME_AUTOTUNE_H
