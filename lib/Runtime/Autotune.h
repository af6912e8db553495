//===- Autotune.h - Tensor-core tile configs and their tuning ---*- C++ -*-===//
//
// The tensor-core kernels take four knobs: keys per shared-memory K/V tile
// (block-n), warps per forward block, the forward's K/V pipeline depth
// (stages) and the shared memory a block asks for (beyond the static 48 KiB
// it is dynamic, up to what the GPU offers). For a new shape class,
// Program::run times each candidate on the caller's real arguments and
// keeps the fastest in the kernel cache, so later processes start with it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_RUNTIME_AUTOTUNE_H
#define FA_LIB_RUNTIME_AUTOTUNE_H

#include "KernelCache.h"

#include "fa/Runtime.h"
#include "fa/Transforms/TensorCoreLimits.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace fa {

struct TileConfig {
  int64_t blockN = 64;
  int64_t warps = 4;
  int64_t kvStages = 1;
  int64_t sharedBytes = tensor_core::kStaticSharedBytes;

  bool operator==(const TileConfig &other) const {
    return blockN == other.blockN && warps == other.warps &&
           kvStages == other.kvStages && sharedBytes == other.sharedBytes;
  }
  bool operator!=(const TileConfig &other) const { return !(*this == other); }
  bool operator<(const TileConfig &other) const {
    return std::tie(blockN, warps, kvStages, sharedBytes) <
           std::tie(other.blockN, other.warps, other.kvStages,
                    other.sharedBytes);
  }
  /// "block-n 64, warps 4, stages 1, shared 48 KiB".
  std::string str() const;
};

/// The configs worth timing for an entry of `dtype` with head dim `headDim`
/// on a GPU whose blocks may use up to `maxSharedBytes` (the default
/// first); empty when only the default applies (f32/f64, head dims without
/// tensor-core kernels). Each asks for the shared memory its full tiles
/// need (tensor_core::forwardSharedBytes, backwardSharedBytes), and is left
/// out where the GPU has less. Warps and stages only change the forward;
/// the backward also tries its default block-n with full dK/dV tiles.
std::vector<TileConfig> tuningCandidates(DType dtype, int64_t headDim,
                                         Entry entry, int64_t maxSharedBytes);

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
