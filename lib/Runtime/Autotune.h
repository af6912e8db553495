//===- Autotune.h - Tensor-core tile configs and their tuning ---*- C++ -*-===//
//
// The mma.sync kernels take four knobs: keys per shared-memory K/V tile
// (block-n), warps per forward block, the forward's K/V pipeline depth
// (stages) and the shared memory a block asks for (beyond the static 48 KiB
// it is dynamic, up to what the GPU offers). The wgmma forward takes its
// consumer warpgroups (query rows per block), and every forward the order
// of its grid (grid-section: (batch, head) pairs interleaved, longest
// causal tiles first, or one pair after another); the wgmma backward its
// dQ path (TMA reduce-adds from the dK/dV kernel, the default where the
// backward need not be deterministic, or dQ's own kernel). For a new shape
// class, Program::run times each candidate on the caller's real arguments
// and keeps the fastest in the kernel cache, so later processes start with
// it.
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

/// A config: mma.sync's tiles (block-n 0: the compiler's choice, what the
/// wgmma candidates keep), the wgmma forward's knobs and the wgmma
/// backward's dQ path.
struct TileConfig {
  int64_t blockN = 64;
  int64_t warps = 4;
  int64_t kvStages = 1;
  int64_t sharedBytes = tensor_core::kStaticSharedBytes;
  /// The wgmma forward's consumer warpgroups; 0: the compiler's choice.
  int64_t wgmmaGroups = 0;
  /// Forward grids' (batch, head) pairs per section; 0: the compiler's.
  int64_t gridSection = 0;
  /// 1: the wgmma backward takes dQ's own kernel instead of the default,
  /// TMA reduce-adds from the dK/dV kernel (CompileOptions::dqAtomics off).
  int64_t dqKernel = 0;
  /// 1: the forward carries the split-KV kernels (CompileOptions::splitKv).
  /// Not a tuned knob: run() sets it for the shapes that split, so it is
  /// never in the table or the tuning record.
  int64_t splitKv = 0;
  /// 1: the program carries the scalar fallback kernels
  /// (CompileOptions::scalarFallback). Not a tuned knob either: run() sets
  /// it, on the compiler's tiles, for operands the tensor cores refuse.
  int64_t scalarFallback = 0;

  auto fields() const {
    return std::tie(blockN, warps, kvStages, sharedBytes, wgmmaGroups,
                    gridSection, dqKernel, splitKv, scalarFallback);
  }
  bool operator==(const TileConfig &other) const {
    return fields() == other.fields();
  }
  bool operator!=(const TileConfig &other) const { return !(*this == other); }
  /// Whether the tiles are the compiler's own (whatever splitKv and
  /// scalarFallback say).
  bool defaultTiles() const {
    TileConfig tiles = *this;
    tiles.splitKv = 0;
    tiles.scalarFallback = 0;
    return tiles == TileConfig();
  }
  bool operator<(const TileConfig &other) const {
    return fields() < other.fields();
  }
  /// "block-n 64, warps 4, stages 1, shared 48 KiB", then the wgmma
  /// groups and grid section where they are not the compiler's choice, and
  /// dQ's path where it is dQ's own kernel. The default config is the
  /// program as compiled, whose wgmma kernels (`wgmma`) take the
  /// compiler's tiles, not mma.sync's numbers: it reads so there.
  std::string str(bool wgmma = false) const;
};

/// Whether an entry on a GPU whose 16-bit kernels run on wgmma tunes the
/// wgmma kernels' knobs: the backward always, a forward unless its window
/// is short enough that the pass sends it to mma.sync all the same.
inline bool tunesWgmma(Entry entry, int64_t headDim,
                       std::optional<int64_t> window) {
  return entry == Entry::Backward ||
         tensor_core::wgmmaForwardRuns(headDim, window);
}

/// The configs worth timing for an entry of `dtype` with head dim `headDim`
/// on a GPU whose blocks may use up to `maxSharedBytes` (the default
/// first); empty when only the default applies (f32/f64, head dims without
/// tensor-core kernels). Each asks for the shared memory its full tiles
/// need (tensor_core::forwardSharedBytes, backwardSharedBytes), and is left
/// out where the GPU has less. Warps and stages only change the forward;
/// the backward also tries its default block-n with full dK/dV tiles.
/// Where the tensor-core kernels run on wgmma (`wgmma`: 16-bit on
/// sm_90a), the forward's candidates are consumer warpgroups (2, and 3 up
/// to D 80) by grid order (sections of pairs, or one pair after another),
/// and the wgmma forward's block-n and stages (warps 0: that kernel's
/// tiles, not mma.sync's) instead, and the backward's at the wgmma backward's
/// head dims its default, dQ by TMA reduce-adds from the dK/dV kernel,
/// against dQ's own kernel; only where `dqByAtomics` (the default: not a
/// deterministic backward, nor one compiled with dQ's own kernel already).
std::vector<TileConfig> tuningCandidates(DType dtype, int64_t headDim,
                                         Entry entry, int64_t maxSharedBytes,
                                         bool wgmma = false,
                                         bool dqByAtomics = true);

/// The config stored under `key`, when a valid entry is there.
std::optional<TileConfig> loadTunedConfig(const KernelCache &cache,
                                          llvm::StringRef key);
/// Stores `config` under `key` (atomically, checksummed, like kernels).
bool storeTunedConfig(const KernelCache &cache, llvm::StringRef key,
                      const TileConfig &config, std::string &error);

/// A shape class of a variant, as the shipped table of tuned configs keys
/// it: the GPU arch, the entry, the head dim, the mask (`full`, `causal`,
/// or `window` with the window's power-of-two ceiling) and the powers of
/// two bounding Sq, Sk and B*Hq. Sinks and the element type (the table's
/// rows are bf16's; f16 runs the same kernels) are not part of it.
struct TableShape {
  std::string arch;
  Entry entry = Entry::Forward;
  int64_t headDim = 0;
  std::string mask;
  uint64_t window = 0;
  uint64_t sq = 0, sk = 0, bh = 0;
};

/// The table's config for `shape`: among its rows of the same arch, entry,
/// head dim, mask and window class, the one whose sequence and batch
/// classes are nearest (in powers of two); nullopt where it has none.
std::optional<TileConfig> shippedConfig(const TableShape &shape);

/// Where the shipped table came from (its GPU and date).
const char *shippedTableSource();

/// Every row of the shipped table, as its shape class and config.
std::vector<std::pair<TableShape, TileConfig>> shippedRows();

/// `config` as a row of the shipped table (TunedConfigs.inc), ending in a
/// comment with `note`: what FA_TUNING_RECORD collects.
std::string tableRow(const TableShape &shape, const TileConfig &config,
                     const std::string &note);

/// The candidate `timeMs` rates fastest; a candidate it rates < 0 (failed)
/// is skipped. `progress` gets one line per candidate (str(wgmma)).
/// Returns nullopt when every candidate failed.
std::optional<TileConfig>
pickFastest(const std::vector<TileConfig> &candidates,
            llvm::function_ref<double(const TileConfig &)> timeMs,
            llvm::function_ref<void(const std::string &)> progress,
            bool wgmma = false);

} // namespace fa

#endif // FA_LIB_RUNTIME_AUTOTUNE_H
