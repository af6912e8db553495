//===- TensorCoreLimits.h - What fa-gpu-tensor-core covers ------*- C++ -*-===//
//
// The head dims and tile sizes fa-gpu-tensor-core builds kernels for, shared
// with the runtime's autotuner so that it only offers configs the pass
// honours. Plain C++: no MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TRANSFORMS_TENSORCORELIMITS_H
#define FA_TRANSFORMS_TENSORCORELIMITS_H

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace fa::tensor_core {

/// Head dims with an mma.sync forward (sm_80 and later; f32 on Hopper):
/// multiples of 16, whose O accumulators (D / 2 registers a thread) and Q
/// fragments (D / 4) leave room for S up to D 256.
inline constexpr int64_t kHeadDims[] = {32, 64, 80, 96, 128, 192, 256};

/// Past this head dim the mma.sync forward reads Q's fragments from a
/// shared tile at each key tile instead of holding them (D / 4 registers a
/// thread) beside O: at D 192 and 256 ptxas spilled them.
inline constexpr int64_t kMmaSyncQueryRegisterHeadDim = 128;
inline constexpr bool mmaSyncQueryInShared(int64_t headDim) {
  return headDim > kMmaSyncQueryRegisterHeadDim;
}

/// Head dims with an mma.sync backward: its dK/dV kernel keeps dK and dV
/// (D / 2 registers a thread each) and K and V's fragments (D / 8 each)
/// beside S^T and dP^T, which past D 128 spills.
inline constexpr int64_t kMmaSyncBackwardHeadDims[] = {32, 64, 80, 96, 128};

/// Elements of a 16-byte chunk, the unit of cp.async and of the swizzle.
inline constexpr int64_t chunkElements(int64_t elementBytes) {
  return 16 / elementBytes;
}

/// Whether rows of `headDim` elements take the XOR swizzle (chunk c of row r
/// at c ^ (r % 8)): they must be whole periods of 8 chunks.
inline constexpr bool swizzlesRows(int64_t headDim, int64_t elementBytes) {
  return (headDim / chunkElements(elementBytes)) % 8 == 0;
}

/// Elements per row of an mma.sync kernel's shared tile: the head dim, plus
/// one chunk of padding where the rows do not swizzle (D 32, 80 and 96 in
/// 16-bit types). Those rows are then an odd number of chunks apart, so the
/// 8 rows an ldmatrix reads at one column still land in 8 distinct 16-byte
/// bank groups.
inline constexpr int64_t sharedRowElements(int64_t headDim,
                                           int64_t elementBytes) {
  return headDim +
         (swizzlesRows(headDim, elementBytes) ? 0 : chunkElements(elementBytes));
}

/// Head dims with a wgmma forward (sm_90a): multiples of 16 whose O
/// accumulators (D / 2 registers a thread) leave room for the rest.
inline constexpr int64_t kWgmmaHeadDims[] = {32, 64, 80, 96, 128, 192, 256};

/// The wgmma forward's keys per tile unless one is asked for, with `groups`
/// consumer warpgroups: S of 64 x 128 per warpgroup up to D 128, 64 x 64
/// beyond, where O takes the registers (measured with the warp-specialised
/// kernel, bench/NOTES.md: full D 64 at 4k on the H100, 359 TFLOP/s with 128
/// keys, 305 with 64; D 32 at 4k on the H200, 128 keys 22-28% faster than
/// 64, a tile's fixed costs weighing most where its GEMMs are shortest).
/// Three consumers past D 64 have 160 registers for O's D / 2 beside S and
/// P, which hold 112 keys at D 80 and 96 at D 96 without spills (128 spill
/// 64-252 bytes) in the pipelined schedule, where S of the next tile is live
/// beside P of this one; the `serial` schedule holds 128 at D 80 (ptxas
/// 13.0, test/fa-compile/spills.test).
inline constexpr int64_t wgmmaDefaultBlockN(int64_t headDim,
                                            int64_t groups = 2,
                                            bool serial = false) {
  if (groups > 2 && headDim > 64)
    return headDim <= 80 ? (serial ? 128 : 112) : 96;
  return headDim <= 128 ? 128 : 64;
}

/// The shared memory a block may opt into on sm_90 (227 KiB): the wgmma
/// forward's budget.
inline constexpr int64_t kHopperSharedBytes = 227 * 1024;

/// The period every wgmma/TMA swizzle repeats within: the wgmma forward's
/// shared tiles start on it.
inline constexpr int64_t kSwizzlePeriod = 1024;

/// Bytes of a wgmma block's mbarriers: its fixed tiles landed, per stage
/// each of the two streamed tiles landed and free again, the fixed tiles
/// free again; and the 8-byte slot through which a persistent block's
/// producer names its consumers' next work item; with two copies of the
/// fixed tiles, the second copy's two barriers and slot.
inline constexpr int64_t wgmmaBarrierBytes(int64_t stages,
                                           int64_t fixedSlots = 1) {
  return 8 * (1 + 4 * stages + 1 + 1) + 8 * 3 * (fixedSlots - 1);
}

/// Bytes a wgmma block's shared memory holds: fixed tiles of `fixedRows`
/// rows in all, `stages` pairs of streamed tiles of `streamRows` rows,
/// `scratchBytes` of the kernel's own, the mbarriers, and room to align the
/// tiles to the swizzle period.
/// `fixedSlots` copies of the fixed tiles (a persistent block copies its
/// next item's into the other while its consumers read this one's).
inline constexpr int64_t wgmmaSharedBytes(int64_t fixedRows, int64_t streamRows,
                                          int64_t stages, int64_t headDim,
                                          int64_t elementBytes,
                                          int64_t scratchBytes = 0,
                                          int64_t fixedSlots = 1) {
  return (fixedSlots * fixedRows + 2 * stages * streamRows) * headDim *
             elementBytes +
         scratchBytes + wgmmaBarrierBytes(stages, fixedSlots) + kSwizzlePeriod;
}

/// The wgmma forward's: Q's tile of `queryRows` fixed (in `fixedSlots`
/// copies), K and V tiles of `blockN` keys streamed.
inline constexpr int64_t wgmmaForwardSharedBytes(int64_t queryRows,
                                                 int64_t blockN,
                                                 int64_t stages,
                                                 int64_t headDim,
                                                 int64_t elementBytes,
                                                 int64_t fixedSlots = 1) {
  return wgmmaSharedBytes(queryRows, blockN, stages, headDim, elementBytes,
                          /*scratchBytes=*/0, fixedSlots);
}

/// Bytes of the wgmma forward's output staging: a tile of 64 rows of O per
/// consumer warpgroup, in Q's swizzled layout, which TMA stores to global
/// memory while the warpgroup goes on (WgmmaForward.cpp).
inline constexpr int64_t
wgmmaOutputStagingBytes(int64_t groups, int64_t headDim, int64_t elementBytes) {
  return groups * 64 * headDim * elementBytes;
}
/// The head dims from which the wgmma forward stores O through its staging
/// tile (where that fits: not at D 256). H200, fa-run A/B against global
/// stores (bench/NOTES.md, thirty-first session): D 128 causal +4.5% (S 4k)
/// and +9.3% (1k), mha +1.2% and +3.7%, GQA causal +2.7%; D 64 even to
/// slower (causal -0.7%, full +0.4%, window 4096 0, window 1024 + 4 sink
/// tokens -3.0% and -4.3%, gpt-oss full -1.8%), where the softmax, not the
/// epilogue, holds three consumers. D 80 (three consumers) keeps D 64's
/// stores: staged with two copies of Q it measured 2.7% slower at full 4k,
/// 2.0% at causal 4k, 7.0% faster at causal 1k (H100, fa-run, one round;
/// bench/NOTES.md, thirty-second session).
inline constexpr int64_t kWgmmaStagedOutputMinHeadDim = 96;

/// Whether a persistent wgmma forward at head dim `headDim` keeps two
/// copies of Q (KernelShape::fixedSlots), so that its producer copies the
/// next item's Q while the consumers finish this one's. H200, fa-run A/B
/// (bench/NOTES.md): up to D 64 (twenty-sixth session: causal +2.0%, GQA
/// causal +2.6%, window 1024 + 4 sink tokens +6.1%, window 512 +11.6%); at
/// D 128 it lost 0.7-2.0% then, but once O left through TMA stores the
/// epilogue no longer hid Q's copy (thirty-first session, beside the
/// staging: mha D 96 +6.6%, causal D 128 1k +1.8%, 4k +0.7%, the rest
/// even). D 80 keeps one copy (two measured 4.8% slower at full 4k and
/// 2.2% at causal 4k, H100, thirty-second session), D 192 and 256 too: a
/// second would take the staging's room.
inline constexpr bool wgmmaTwoQCopies(int64_t headDim) {
  return headDim <= 64 ||
         (headDim >= kWgmmaStagedOutputMinHeadDim && headDim <= 128);
}

/// The head dims up to which the wgmma dQ kernel's grid is persistent (a
/// block per SM drawing query blocks, as the forward's), where the pass
/// builds persistent grids. Its producer then keeps 32 registers (24
/// spilled 4-12 bytes); past D 128 the consumers' 232 spilled 4-20 bytes
/// at D 192, so those keep a block per query block. H200, fa-run backward
/// (bench/NOTES.md, forty-second session): gpt-oss's 128-key window +10%,
/// causal D 64 +6%, D 128 and window 4096 even.
inline constexpr int64_t kWgmmaPersistentDqMaxHeadDim = 128;

/// Head dims with a wgmma backward (sm_90a). The dK/dV kernel keeps dK and
/// dV (D / 2 registers a thread each) in registers across its query tiles,
/// which leaves room for S^T and dP^T up to D 128; past it the block's two
/// consumers share 64 keys and each accumulates half of dK's and dV's
/// columns (WgmmaBackward.cpp).
inline constexpr int64_t kWgmmaBackwardHeadDims[] = {32,  64,  80, 96,
                                                     128, 192, 256};
/// Whether the wgmma dK/dV kernel's blocks hold whole rows of dK, dV and
/// dS at this head dim, which dQ by atomics needs.
inline constexpr bool wgmmaDkDvWholeRows(int64_t headDim) {
  return headDim <= 128;
}
/// The wgmma backward kernels' consumer warpgroups (64 keys, or 64 query
/// rows, each).
inline constexpr int64_t kWgmmaBackwardGroups = 2;
/// The wgmma dK/dV kernel's query rows per streamed Q/dO tile: 128 up to D
/// 64, where a consumer's S^T and dP^T of 64 keys by 128 rows (64
/// registers a thread each) fit beside dK and dV (D / 2 each), so that each
/// tile's fixed costs (the wait on its group, the named barrier, the row
/// statistics) cover twice the GEMM work and its wgmmas are n 128; else
/// 64. With dQ by TMA reduce-adds (`withDq`) too, the dS^T tile goes to
/// shared memory as two tiles of 64 rows (a row of each one 128-byte
/// swizzle segment) and dQ's product is one per 64 rows: H200, mha and
/// causal 4x32x4k D 64 backward +8% against 64-row tiles (bench/NOTES.md,
/// forty-eighth session). Not under a window or sink tokens
/// (`bandOrSinks`), whose extra mask phases spill more there (ptxas 13.0:
/// swa 96, streaming 116, gpt-oss's sliding layer 108 bytes at D 64) and
/// which were not run on a GPU at 128 rows with dQ.
inline constexpr int64_t wgmmaDkDvQueryRows(int64_t headDim, bool withDq,
                                            bool bandOrSinks) {
  return headDim <= 64 && !(withDq && bandOrSinks) ? 128 : 64;
}
/// The wgmma dK/dV kernel's keys per block: 64 per consumer where its
/// blocks hold whole rows, else the 64 both consumers share.
inline constexpr int64_t wgmmaDkDvBlockN(int64_t headDim) {
  return wgmmaDkDvWholeRows(headDim) ? 64 * kWgmmaBackwardGroups : 64;
}
/// The wgmma dK/dV kernel double-buffers what its consumers write to
/// shared memory per query tile (row statistics, dS^T), so that tile t + 1's
/// may be written while tile t's is still read.
inline constexpr int64_t kWgmmaDkDvBuffers = 2;
/// The query rows of a tile whose S^T and dP^T (and so whose row
/// statistics) one consumer of the wgmma dK/dV kernel takes: all of them
/// where its blocks hold whole rows, else half (the consumers share the
/// block's keys).
inline constexpr int64_t wgmmaDkDvScoreRows(int64_t headDim,
                                            int64_t queryRows) {
  return wgmmaDkDvWholeRows(headDim) ? queryRows : queryRows / 2;
}
/// Shared bytes of one buffer of the wgmma dK/dV kernel's row statistics:
/// the base-2 lse and D (f32 each) of a consumer's `scoreRows`.
inline constexpr int64_t wgmmaDkDvStatisticsBufferBytes(int64_t scoreRows) {
  return 2 * scoreRows * 4;
}
/// All of them: kWgmmaDkDvBuffers buffers per consumer warpgroup.
inline constexpr int64_t wgmmaDkDvStatisticsBytes(int64_t scoreRows) {
  return kWgmmaBackwardGroups * kWgmmaDkDvBuffers *
         wgmmaDkDvStatisticsBufferBytes(scoreRows);
}
/// Shared bytes the wgmma dK/dV kernel keeps beside its tiles: the row
/// statistics; where its blocks do not hold whole rows, kWgmmaDkDvBuffers
/// pairs of P^T and dS^T tiles of `blockN` keys by `queryRows` rows, which
/// both consumers write and read; and when it computes dQ too
/// kWgmmaDkDvBuffers dS^T tiles and the f32 dQ tile of `queryRows` x
/// `headDim` that TMA adds into the accumulator.
inline constexpr int64_t
wgmmaDkDvScratchBytes(int64_t blockN, int64_t queryRows, int64_t headDim,
                      int64_t elementBytes, bool withDq) {
  int64_t tileBytes = blockN * queryRows * elementBytes;
  return wgmmaDkDvStatisticsBytes(wgmmaDkDvScoreRows(headDim, queryRows)) +
         (wgmmaDkDvWholeRows(headDim) ? 0 : kWgmmaDkDvBuffers * 2 * tileBytes) +
         (withDq ? kWgmmaDkDvBuffers * tileBytes + queryRows * headDim * 4 : 0);
}
/// The wgmma dQ kernel's keys per streamed K/V tile: S and dP (blockN / 2
/// registers each) beside dQ's D / 2.
inline constexpr int64_t wgmmaDqBlockN(int64_t headDim) {
  return headDim <= 64 ? 128 : headDim <= 192 ? 64 : 32;
}

/// Where the wgmma dQ kernel computes D (o a third fixed tile beside Q and
/// dO) and learnable sinks need dsinks' partials, its scratch bytes: per
/// consumer warpgroup two buffers (an item's, the next item's) of its four
/// warps' sums.
inline constexpr int64_t kWgmmaDqSinkScratchBytes =
    kWgmmaBackwardGroups * 2 * 4 * 4;

/// The wgmma forward's registers per thread after setmaxnreg, by consumer
/// warpgroups: the producer warpgroup, which only issues TMA copies, gives
/// back all but few; the consumers take the rest of the 64K register file.
/// Two consumers: 128 x 24 + 256 x 240; three: 128 x 32 + 384 x 160. The
/// consumers' setmaxnreg.inc waits until the producer's .dec gave back what
/// they take beyond the count at entry (the register file over the block's
/// threads, 168 a thread with two consumers), so a producer keeping more
/// than 24 beside two consumers of 240 hangs the block (seen: the
/// twenty-sixth session's first try at 32). A `wideProducer` keeps 32
/// beside two consumers of 232: the forward's, where its K/V tile rows take
/// more than two TMA boxes up to D 192 (wgmmaForwardWideProducer).
inline constexpr int32_t wgmmaProducerRegisters(int64_t groups,
                                                bool wideProducer = false) {
  return groups <= 2 && !wideProducer ? 24 : 32;
}
inline constexpr int32_t wgmmaConsumerRegisters(int64_t groups,
                                                bool wideProducer = false) {
  return groups > 2 ? 160 : wideProducer ? 232 : 240;
}
/// Whether the wgmma forward's producer keeps 32 registers beside two
/// consumers: where each K/V tile takes more than two TMA boxes (D 80: 5
/// of 32 bytes a row, D 96: 3 of 64, D 192: 3 of 128), its 24 registers
/// spilled 4-40 bytes an item (mha and vit at D 96 and 192, streaming at D
/// 80-192; ptxas 13.0); their consumers fit in 232 without spills, and at D
/// 256 they need 240 for O's 128. So does a ring of three stages (the
/// tuner's candidates), whose slot and round take a division by three: 24
/// spilled 4-16 bytes (mha, swa and streaming at D 32-128).
inline constexpr bool wgmmaForwardWideProducer(int64_t headDim,
                                               int64_t tmaBoxesPerRow,
                                               int64_t stages = 2) {
  return (tmaBoxesPerRow > 2 || !llvm::isPowerOf2_64(stages)) && headDim <= 192;
}
/// Registers a thread of a block of `groups` consumers and a producer holds
/// at entry (.minnctapersm 1: the register file over its threads, in
/// ptxas's steps of 8).
inline constexpr int32_t wgmmaEntryRegisters(int64_t groups) {
  return static_cast<int32_t>(65536 / (128 * (groups + 1)) / 8 * 8);
}
/// What the producer gives back covers what the consumers take.
inline constexpr bool wgmmaRegistersBalance(int64_t groups,
                                            bool wideProducer = false) {
  return 128 * (wgmmaEntryRegisters(groups) -
                wgmmaProducerRegisters(groups, wideProducer)) >=
         128 * groups *
             (wgmmaConsumerRegisters(groups, wideProducer) -
              wgmmaEntryRegisters(groups));
}
static_assert(wgmmaRegistersBalance(2) && wgmmaRegistersBalance(3) &&
              wgmmaRegistersBalance(2, /*wideProducer=*/true));
/// Windows shorter than this many keys run the mma.sync forward at these
/// head dims, even on Hopper: its 64-row blocks, several to an SM, waste
/// fewer masked pairs (gpt-oss's 128-key window at D 64: 0.387 ms against
/// wgmma's 0.49; D 128 is not measured yet and stays on wgmma).
inline constexpr int64_t kShortWindow = 256;
inline constexpr int64_t kShortWindowMmaSyncHeadDims[] = {64};
/// The split-KV forward (decode): where a forward's query blocks leave
/// the GPU's SMs idle, each block's keys go to up to kMaxKeySplits blocks,
/// as many as one wave of the blocks the SMs hold at once
/// (splitKvBlocksPerSmOf), each with at least kMinSplitKeyTiles key tiles
/// (fewer would spend more on the merge than they save).
inline constexpr int64_t kMaxKeySplits = 64;
inline constexpr int64_t kMinSplitKeyTiles = 4;
/// The fewest keys a split-KV block's tiles hold, whatever the config's
/// block-n (a short window's forward takes 32): the runtime counts the
/// splits at this many (Program.cpp, takesSplitKvKernels), and the
/// block's warps share a tile at 16 keys each (MmaSync.cpp, splitsKeys).
inline constexpr int64_t kSplitKvMinBlockN = 64;
/// The split-KV blocks of 128 threads one SM holds at once, as ptxas 13.0
/// assembles fa.decode's kernels (test/fa-compile/split-kv-registers.test
/// checks it): 4 at D 32 (3 appending new keys: 130 registers), 3 at D 64
/// (162 registers: 3 blocks' worth of the 64K register file), 2 above
/// (169 at D 80, 234-255 at D 128); a paged cache 3 at D 32 and 2 above
/// (187 registers at D 64). A window or sink tokens over head counts the
/// spec leaves dynamic (swa.mlir, streaming.mlir; `maskedDynamicHeads`)
/// hold one block fewer up to D 64: 3 at D 32, 2 at D 64 (fixed heads, as
/// fa.decode's and the Python API's specs have them, keep 4 and 3). Not
/// forced with `.minnctapersm`: held to 3 blocks, the D 64 sliding-window
/// kernel spilled 24 bytes that it does not spill unasked at the same 168
/// registers.
template <typename Ops, typename Num>
constexpr Num splitKvBlocksPerSmOf(const Ops &ops, Num headDim, bool paged,
                                   bool appends, bool maskedDynamicHeads) {
  if (paged)
    return ops.select(ops.lessEqual(headDim, ops.constant(32)), ops.constant(3),
                      ops.constant(2));
  return ops.select(
      ops.lessEqual(headDim, ops.constant(32)),
      ops.constant(appends || maskedDynamicHeads ? 3 : 4),
      ops.select(ops.lessEqual(headDim, ops.constant(64)),
                 ops.constant(maskedDynamicHeads ? 2 : 3), ops.constant(2)));
}
/// splitKvBlocksPerSmOf's `maskedDynamicHeads`, for the host code and the
/// runtime alike: a window or sink tokens, and head counts the spec leaves
/// dynamic (in q or k).
inline constexpr bool splitKvMaskedDynamicHeads(std::optional<int64_t> window,
                                                int64_t sinkTokens,
                                                bool dynamicHeads) {
  return (window || sinkTokens > 0) && dynamicHeads;
}
/// Its blocks double-buffer their K/V tiles (a decode block is bound by its
/// loads) in up to this much shared memory, which every GPU from sm_80 on
/// gives a block that opts in.
inline constexpr int64_t kSplitKvSharedBytes = 96 * 1024;
/// The split-KV rules below are written once over any kind of number:
/// `ops` gives constant, add, sub, mul, ceilDiv, floorDiv, min, clamp,
/// lessThan, lessEqual, greaterThan, andOf, orOf and select for it. The runtime asks them
/// on int64_t (IntegerOps) before compiling the split kernels; those kernels'
/// host code builds them in IR (GpuTensorCore.cpp), so the two cannot
/// drift apart.
struct IntegerOps {
  constexpr int64_t constant(int64_t v) const { return v; }
  constexpr int64_t add(int64_t x, int64_t y) const { return x + y; }
  constexpr int64_t sub(int64_t x, int64_t y) const { return x - y; }
  constexpr int64_t mul(int64_t x, int64_t y) const { return x * y; }
  constexpr int64_t ceilDiv(int64_t x, int64_t y) const {
    return (x + y - 1) / y; // operands positive here
  }
  constexpr int64_t floorDiv(int64_t x, int64_t y) const { return x / y; }
  constexpr int64_t min(int64_t x, int64_t y) const { return std::min(x, y); }
  constexpr int64_t clamp(int64_t x, int64_t lo, int64_t hi) const {
    return std::clamp(x, lo, hi);
  }
  constexpr bool lessThan(int64_t x, int64_t y) const { return x < y; }
  constexpr bool lessEqual(int64_t x, int64_t y) const { return x <= y; }
  constexpr bool greaterThan(int64_t x, int64_t y) const { return x > y; }
  constexpr bool andOf(bool x, bool y) const { return x && y; }
  constexpr bool orOf(bool x, bool y) const { return x || y; }
  constexpr int64_t select(bool c, int64_t x, int64_t y) const {
    return c ? x : y;
  }
};
/// The split count for `queryBlocks` blocks whose rows see `keyTiles` key
/// tiles on `sms` SMs holding `blocksPerSm` each (1: no split): where the
/// blocks leave SMs idle, as many splits as fit the blocks in one wave,
/// each with at least kMinSplitKeyTiles key tiles, at most kMaxKeySplits.
/// One wave, because a decode block is bound by its loads: a second wave
/// of a few blocks ran them alone at the end (gpt-oss at B 1, 128k keys:
/// 400 blocks where the SMs hold 396). `queryBlocks` is at least 1 (the
/// runtime refuses empty tensors first).
template <typename Ops, typename Num>
constexpr Num keySplitsOf(const Ops &ops, Num queryBlocks, Num keyTiles,
                          Num sms, Num blocksPerSm) {
  Num wanted = ops.floorDiv(ops.mul(sms, blocksPerSm), queryBlocks);
  Num splits = ops.clamp(
      ops.min(wanted, ops.floorDiv(keyTiles, ops.constant(kMinSplitKeyTiles))),
      ops.constant(1), ops.constant(kMaxKeySplits));
  return ops.select(ops.lessThan(queryBlocks, sms), splits, ops.constant(1));
}
/// keySplitsOf a forward's shape: its split blocks hold a kv head's group
/// of query heads, `rowsPerBlock` rows each, and a row sees the keys of
/// its window and sink tokens where it has a window, in tiles of
/// `keysPerTile`.
template <typename Ops, typename Num>
constexpr Num forwardKeySplitsOf(const Ops &ops, Num batch, Num sq, Num group,
                                 Num hkv, Num sk, std::optional<int64_t> window,
                                 int64_t sinkTokens, int64_t rowsPerBlock,
                                 int64_t keysPerTile, Num sms,
                                 Num blocksPerSm) {
  Num queryBlocks =
      ops.mul(ops.ceilDiv(ops.mul(sq, group), ops.constant(rowsPerBlock)),
              ops.mul(hkv, batch));
  Num keys = sk;
  if (window)
    keys = ops.min(keys, ops.add(sq, ops.constant(*window + sinkTokens)));
  return keySplitsOf(ops, queryBlocks,
                     ops.ceilDiv(keys, ops.constant(keysPerTile)), sms,
                     blocksPerSm);
}
/// Whether a forward takes the split-KV kernels, even unsplit: where its
/// keys split, and where a kv head's group of query heads is wider than
/// one (GQA) with few query positions, so that one split-KV block holds
/// every row of the group's positions (sq * group of them, within
/// kPackedGroupRows, Q in registers) and reads their K/V once, where the
/// other forwards read it once per query head.
inline constexpr int64_t kPackedGroupRows = 64;
template <typename Ops, typename Num>
constexpr auto takesSplitKvOf(const Ops &ops, Num splits, Num sq, Num group,
                              Num headDim) {
  auto packs = ops.andOf(
      ops.andOf(
          ops.greaterThan(group, ops.constant(1)),
          ops.lessEqual(ops.mul(sq, group), ops.constant(kPackedGroupRows))),
      ops.lessEqual(headDim, ops.constant(kMmaSyncQueryRegisterHeadDim)));
  return ops.orOf(ops.greaterThan(splits, ops.constant(1)), packs);
}
inline constexpr bool takesSplitKv(int64_t splits, int64_t sq, int64_t group,
                                   int64_t headDim) {
  return takesSplitKvOf(IntegerOps(), splits, sq, group, headDim);
}
static_assert(forwardKeySplitsOf(IntegerOps(), int64_t(1), int64_t(1),
                                 int64_t(7), int64_t(4), int64_t(8191),
                                 std::nullopt, 0, 64, 64, int64_t(132),
                                 int64_t(2)) == 32 &&
              forwardKeySplitsOf(IntegerOps(), int64_t(1), int64_t(1),
                                 int64_t(7), int64_t(4), int64_t(8191),
                                 std::optional<int64_t>(128), 0, 64, 64,
                                 int64_t(132), int64_t(2)) == 1);
/// keySplitsOf over integers.
constexpr int64_t keySplits(int64_t queryBlocks, int64_t keyTiles, int64_t sms,
                            int64_t blocksPerSm) {
  return keySplitsOf(IntegerOps(), queryBlocks, keyTiles, sms, blocksPerSm);
}
// One wave: gpt-oss (8 kv heads) at B 1 and 128k keys, 3 blocks an SM:
// 49 splits, 392 blocks of the 396 the SMs hold; Llama's D 128, 2 an SM:
// 33 splits, 264 blocks.
static_assert(
    keySplits(8, 2048, 132, 3) == 49 && keySplits(8, 2048, 132, 2) == 33 &&
    keySplits(1, 100, 132, 3) == 25 && keySplits(132, 100, 132, 3) == 1 &&
    keySplits(10, 8, 132, 3) == 2 && keySplits(10, 800, 0, 3) == 1 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(32), false, false, false) == 4 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(64), false, false, false) == 3 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(80), false, false, false) == 2 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(32), false, true, false) == 3 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(128), false, false, false) == 2 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(64), false, true, false) == 3 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(80), false, true, false) == 2 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(32), true, true, false) == 3 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(64), true, false, false) == 2 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(32), false, false, true) == 3 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(64), false, false, true) == 2 &&
    splitKvBlocksPerSmOf(IntegerOps(), int64_t(80), false, false, true) == 2 &&
    takesSplitKv(1, 1, 8, 128) && !takesSplitKv(1, 1000, 1, 128));
/// A boundary key tile's mask for one query row, as bounds on the offsets
/// c in [0, width) of a lane's keys j = base + c within the tile: key j is
/// visible to query row `row` (TileBuilder::allowed: j < Sk; j <= row +
/// offset under a causal mask; under a window of W keys, j > row + offset
/// - W or, with T sink tokens, j < keyStart + T) and below the phase's
/// `keyHi` iff c < hi and, under a window, c >= lo or c < sinkHi. Each
/// bound is clamped to [0, width], which keeps every answer for c in
/// [0, width) and lets the kernels compare in 32 bits: one compare of a
/// constant c a bound per element and row, where allowed's form took three
/// 64-bit compares and their address arithmetic (848 instructions a masked
/// tile against 447 unmasked, causal D 64 wgmma forward, SASS).
template <typename Num> struct KeyOffsetBounds {
  Num hi, lo, sinkHi;
};
/// `limit` as a bound on offsets c in [0, width) from `base`: c < bound iff
/// base + c < limit, and likewise >=, clamped to [0, width].
template <typename Ops, typename Num>
constexpr Num offsetBoundOf(const Ops &ops, Num base, int64_t width,
                            Num limit) {
  return ops.clamp(ops.sub(limit, base), ops.constant(0), ops.constant(width));
}
template <typename Ops, typename Num>
constexpr KeyOffsetBounds<Num>
keyOffsetBoundsOf(const Ops &ops, Num base, int64_t width, Num row, Num sk,
                  Num offset, Num keyHi, Num keyStart, bool causal,
                  std::optional<int64_t> window, int64_t sinkTokens) {
  Num diag = ops.add(row, offset);
  Num hi = ops.min(sk, keyHi);
  if (causal)
    hi = ops.min(hi, ops.add(diag, ops.constant(1)));
  KeyOffsetBounds<Num> bounds{offsetBoundOf(ops, base, width, hi), Num(),
                              Num()};
  if (window) {
    bounds.lo = offsetBoundOf(ops, base, width,
                              ops.add(diag, ops.constant(1 - *window)));
    if (sinkTokens > 0)
      bounds.sinkHi = offsetBoundOf(
          ops, base, width, ops.add(keyStart, ops.constant(sinkTokens)));
  }
  return bounds;
}
/// Which bounds of keyOffsetBoundsOf a boundary key tile's keys can cross:
/// all of them, or, where a walk of a window's tiles keeps its two edges
/// apart (windowEdgesApart), the window's lower edge with its sink tokens
/// alone (the leading tiles) or the upper bounds alone (Sk, keyHi and the
/// diagonal: the trailing tiles, whose keys lie inside every row's window).
/// A compare and its predicate combine fewer per element (bench/NOTES.md,
/// sixtieth session).
enum class KeyEdge { Both, Lower, Upper };
/// Whether offset `c` passes `bounds` (keyOffsetBoundsOf of a variant with
/// `window` and `sinkTokens`), on a tile whose keys can cross `edge`.
template <typename Ops, typename Num>
constexpr auto
keyOffsetVisibleOf(const Ops &ops, const KeyOffsetBounds<Num> &bounds, Num c,
                   std::optional<int64_t> window, int64_t sinkTokens,
                   KeyEdge edge = KeyEdge::Both) {
  auto ok = ops.lessThan(c, bounds.hi);
  if (!window || edge == KeyEdge::Upper)
    return ok;
  auto inWindow = ops.lessEqual(bounds.lo, c);
  if (sinkTokens > 0)
    inWindow = ops.orOf(inWindow, ops.lessThan(c, bounds.sinkHi));
  if (edge == KeyEdge::Lower)
    return inWindow;
  return ops.andOf(ok, inWindow);
}
/// Whether the key tiles of a block of `rows` query rows (TileBuilder's key
/// phases: blockN-key tiles from the block's first window key) keep a
/// window of `window` keys apart from the diagonal: every leading tile
/// (before the inner range) lies left of the block's first diagonal, so it
/// needs the window's bound alone. Their keys end below innerLo + blockN - 1,
/// where innerLo, the last row's window edge, lies rows - W past the first
/// row's diagonal; so they lie at or left of that diagonal when W >= rows +
/// blockN - 2, and then below Sk and the phase's keyHi too. (The trailing
/// tiles, past the inner range, never cross a window's edge.)
constexpr bool windowEdgesApart(std::optional<int64_t> window, int64_t rows,
                                int64_t blockN) {
  return window && *window >= rows + blockN - 2;
}
static_assert(windowEdgesApart(4096, 64, 128) &&
              windowEdgesApart(190, 64, 128) &&
              !windowEdgesApart(189, 64, 128) &&
              !windowEdgesApart(std::nullopt, 64, 128));

/// The transposed form, for the dK/dV kernels' tiles (rows of keys,
/// columns of queries): bounds on the offsets c in [0, width) of a lane's
/// queries i = base + c such that key `key` is visible to query i
/// (TileBuilder::allowed, as above) and i < Sq iff lo <= c < hi. The causal
/// term bounds c below, the window's above (unless `key` is a sink token,
/// which every later query sees); a key past Sk is seen by none.
template <typename Ops, typename Num>
constexpr KeyOffsetBounds<Num>
queryOffsetBoundsOf(const Ops &ops, Num base, int64_t width, Num key, Num sq,
                    Num sk, Num offset, Num keyStart, bool causal,
                    std::optional<int64_t> window, int64_t sinkTokens) {
  // key <= i + offset, i.e. i >= key - offset.
  Num first = ops.sub(key, offset);
  Num end = sq;
  if (window) {
    // key > i + offset - W, i.e. i < key - offset + W.
    Num windowEnd = ops.add(first, ops.constant(*window));
    if (sinkTokens > 0)
      windowEnd = ops.select(
          ops.lessThan(key, ops.add(keyStart, ops.constant(sinkTokens))), sq,
          windowEnd);
    end = ops.min(end, windowEnd);
  }
  end = ops.select(ops.lessThan(key, sk), end, base);
  return {offsetBoundOf(ops, base, width, end),
          causal ? offsetBoundOf(ops, base, width, first) : ops.constant(0),
          Num()};
}
/// Whether query offset `c` passes `bounds` (queryOffsetBoundsOf).
template <typename Ops, typename Num>
constexpr auto queryOffsetVisibleOf(const Ops &ops,
                                    const KeyOffsetBounds<Num> &bounds, Num c,
                                    bool causal) {
  auto ok = ops.lessThan(c, bounds.hi);
  return causal ? ops.andOf(ok, ops.lessEqual(bounds.lo, c)) : ok;
}

/// (batch, head) pairs whose query tiles a forward grid interleaves, the
/// longest causal tiles of the section first (queryBlock), by default:
/// enough blocks per section to fill the GPU's last wave with short ones,
/// few enough pairs that a section's K/V streams share L2. With 1, one
/// pair's tiles run after another's.
inline constexpr int64_t kGridSectionPairs = 8;
/// Consumer warpgroups of the wgmma forward, at most.
inline constexpr int64_t kMaxWgmmaGroups = 3;
/// Three consumers hold O (D / 2 registers) beside S and P in their 160
/// registers up to D 96, past D 64 with fewer keys a tile
/// (wgmmaDefaultBlockN); past D 96 ptxas spills, and at D 256 cannot compile
/// the RS wgmma.
inline constexpr int64_t kWgmmaThreeGroupsMaxHeadDim = 96;
/// The head dims that take three consumers by default: the softmax, as long
/// as at D 128 while the GEMMs are shorter, needs two other consumers'
/// GEMMs under it (bench/NOTES.md: D 64 +6-12%; H200, D 80 with 112-key
/// tiles, causal +3.5% and full +16% over two consumers of 128 keys; D 96
/// with 96 keys, causal -6%, full even).
inline constexpr int64_t kWgmmaThreeGroupsDefaultMaxHeadDim = 80;
/// The consumer warpgroups a block of head dim `headDim` runs when
/// `requested` are asked for (0: the default): at most three, up to
/// kWgmmaThreeGroupsMaxHeadDim. By default three up to
/// kWgmmaThreeGroupsDefaultMaxHeadDim, but two under a window of fewer than
/// kWideWindow keys, where a 192-row block's item is short and its masked
/// edge tiles a large share (H200, D 64, 2x32x8k, two against three:
/// window 512 +26%, 1024 +14%, 2048 +7%, 4096 even), and with sink tokens,
/// whose phase's masked loop beside the window's pushes three consumers past
/// their 160 registers (streaming at D 64 spilled 216 bytes in its tile loops;
/// H100, the autotuner's timings of one run: 0.837 ms with three, 0.602 ms with
/// two).
inline constexpr int64_t kWideWindow = 4096;
inline constexpr int64_t wgmmaGroupsFor(int64_t headDim, int64_t requested,
                                        std::optional<int64_t> window,
                                        int64_t sinkTokens = 0) {
  if (requested > 0)
    return std::min(requested, headDim <= kWgmmaThreeGroupsMaxHeadDim
                                   ? kMaxWgmmaGroups
                                   : int64_t(2));
  bool narrow = (window && *window < kWideWindow) || sinkTokens > 0;
  return headDim <= kWgmmaThreeGroupsDefaultMaxHeadDim && !narrow
             ? kMaxWgmmaGroups
             : 2;
}
/// Whether the wgmma forward's consumers run the serial schedule by
/// default (`wgmma-schedule=auto`) rather than the pipelined one: three
/// consumers at D 80 without a causal mask, where the serial schedule's 128
/// keys a tile beat the pipelined one's 112 (H200, 4x16x4k, three rounds,
/// bench/NOTES.md fifty-eighth session: full 532-534 against 516-517 TFLOP/s;
/// causal loses, 420-427 against 437-440; D 64, 96 and 128 lose 10-20%).
inline constexpr bool wgmmaForwardSerialByDefault(int64_t headDim,
                                                  int64_t groups, bool causal) {
  return headDim == 80 && groups == kMaxWgmmaGroups && !causal;
}
static_assert(wgmmaGroupsFor(80, 0, std::nullopt) == 3 &&
              wgmmaDefaultBlockN(80, 3) == 112 &&
              wgmmaDefaultBlockN(80, 3, /*serial=*/true) == 128 &&
              wgmmaForwardSerialByDefault(80, 3, false) &&
              !wgmmaForwardSerialByDefault(80, 3, true) &&
              !wgmmaForwardSerialByDefault(80, 2, false) &&
              wgmmaGroupsFor(96, 0, std::nullopt) == 2 &&
              wgmmaGroupsFor(96, 3, std::nullopt) == 3 &&
              wgmmaDefaultBlockN(96, 3) == 96 &&
              wgmmaGroupsFor(128, 3, std::nullopt) == 2 &&
              wgmmaGroupsFor(80, 0, std::optional<int64_t>(1024)) == 2);

/// The tensor map kernels take by value (CUtensorMap: 128 bytes, 64-byte
/// aligned), as an LLVM struct of this name: fa-kernel-tensor-maps turns
/// kernel parameters of that type into grid-constant byval parameters.
inline constexpr const char kTensorMapTypeName[] = "fa.tensor_map";
inline constexpr int64_t kTensorMapBytes = 128;
inline constexpr int64_t kTensorMapAlign = 64;

/// Static shared memory a block may use without opting in.
inline constexpr int64_t kStaticSharedBytes = 48 * 1024;

/// A paged cache's block-table entries go through shared memory ahead of
/// the K/V copies that need them: one i32 per key row of a tile, in a
/// ring of this many tiles (the tile two ahead of the copies is read while
/// the one four ahead lands), so that a copy never waits on a table load.
inline constexpr int64_t kPageRingTiles = 4;
/// The ring's bytes for tiles of `rows` keys.
inline constexpr int64_t pageRingBytes(int64_t rows) {
  return kPageRingTiles * rows * 4;
}

/// Whether `headDim` is one of `headDims` (a list above).
template <typename HeadDims>
inline constexpr bool covers(const HeadDims &headDims, int64_t headDim) {
  for (int64_t d : headDims)
    if (d == headDim)
      return true;
  return false;
}
inline constexpr bool hasKernel(int64_t headDim) {
  return covers(kHeadDims, headDim);
}
inline constexpr bool hasBackwardKernel(int64_t headDim) {
  return covers(kMmaSyncBackwardHeadDims, headDim);
}
/// Whether a 16-bit forward at `headDim` under `window` runs the wgmma
/// kernel where the pass builds wgmma (sm_90a): not at the head dims that
/// windows shorter than kShortWindow keys send to mma.sync. The pass's
/// dispatch and the autotuner's candidates both follow it.
inline constexpr bool wgmmaForwardRuns(int64_t headDim,
                                       std::optional<int64_t> window) {
  if (!covers(kWgmmaHeadDims, headDim))
    return false;
  return !(window && *window < kShortWindow) ||
         !covers(kShortWindowMmaSyncHeadDims, headDim);
}

/// Why fa-gpu-tensor-core's dispatch sends an attention entry (the
/// backward when `backward`) with these operands to the scalar GPU loops,
/// or null when a tensor-core kernel takes them. `layoutOk` is the
/// dispatch's operand test: unit stride on D, the other strides multiples
/// of 16 bytes, 16-byte aligned starts. `wgmma`: the pass's generation.
inline const char *scalarFallbackReason(bool backward, int64_t elementBytes,
                                        int64_t headDim, bool wgmma,
                                        bool layoutOk) {
  if (elementBytes == 8)
    return "f64 has no tensor-core kernel";
  if (!layoutOk)
    return "an operand is not unit-stride on D with 16-byte aligned "
           "strides and start";
  if (wgmma && elementBytes == 2)
    return covers(backward ? kWgmmaBackwardHeadDims : kWgmmaHeadDims,
                  headDim)
               ? nullptr
               : "the wgmma kernels take D = 32, 64, 80, 96, 128, 192 and "
                 "256";
  if (backward)
    return hasBackwardKernel(headDim)
               ? nullptr
               : "the mma.sync backward takes D = 32, 64, 80, 96 and 128";
  return hasKernel(headDim)
             ? nullptr
             : "the mma.sync forward takes D = 32, 64, 80, 96, 128, 192 and "
               "256";
}

/// The dK/dV kernel's full shape: 16 keys per warp, and the query rows of
/// its shared Q and dO tiles. Smaller shared memory takes fewer of both.
inline constexpr int64_t kDkDvWarps = 4;
inline constexpr int64_t kDkDvQueryRows = 64;

/// Bytes of a kernel's two shared tiles of `rows` x `headDim` elements of
/// `elementBytes` each (K and V; or K, V and Q, dO with their rows summed).
inline constexpr int64_t tileBytes(int64_t rows, int64_t headDim,
                                   int64_t elementBytes) {
  return 2 * rows * sharedRowElements(headDim, elementBytes) * elementBytes;
}

/// Whether those tiles fit `sharedBytes` (by default the static shared
/// memory every block has; more is dynamic shared memory, which the GPU
/// must offer).
inline constexpr bool tilesFit(int64_t rows, int64_t headDim,
                               int64_t elementBytes,
                               int64_t sharedBytes = kStaticSharedBytes) {
  return tileBytes(rows, headDim, elementBytes) <= sharedBytes;
}

/// Bytes of the mma.sync forward's shared Q tile (16 rows a warp), where
/// it has one.
inline constexpr int64_t queryTileBytes(int64_t warps, int64_t headDim,
                                        int64_t elementBytes) {
  return mmaSyncQueryInShared(headDim)
             ? 16 * warps * sharedRowElements(headDim, elementBytes) *
                   elementBytes
             : 0;
}

/// The shared memory a forward of `warps` warps with `stages` K/V tiles of
/// `blockN` keys needs (at least the static amount, which every block has
/// anyway).
inline constexpr int64_t forwardSharedBytes(int64_t blockN, int64_t stages,
                                            int64_t warps, int64_t headDim,
                                            int64_t elementBytes) {
  return std::max(tileBytes(stages * blockN, headDim, elementBytes) +
                      queryTileBytes(warps, headDim, elementBytes),
                  kStaticSharedBytes);
}

/// The shared memory a backward needs for full tiles in both kernels: dQ's
/// K/V tiles of `blockN` keys and dK/dV's full shape.
inline constexpr int64_t backwardSharedBytes(int64_t blockN, int64_t headDim,
                                             int64_t elementBytes) {
  int64_t dkdvRows = 16 * kDkDvWarps + kDkDvQueryRows;
  return std::max(tileBytes(std::max(blockN, dkdvRows), headDim, elementBytes),
                  kStaticSharedBytes);
}

/// The next smaller tile of keys to try where `rows` do not fit: half as
/// many, rounded down to a multiple of 16 (every MMA k step and wgmma n
/// the tile feeds takes 16 keys; halving 176 would give 88, then 44).
inline constexpr int64_t smallerTileRows(int64_t rows) {
  return rows / 2 / 16 * 16;
}
static_assert(smallerTileRows(128) == 64 && smallerTileRows(176) == 80 &&
              smallerTileRows(80) == 32 && smallerTileRows(16) == 0);

/// The largest tile of at most `requested` rows (smallerTileRows's steps,
/// down to 16) whose two tiles fit; 0 when none does. f32 tiles take half as
/// many rows as f16 ones at the same head dim.
inline constexpr int64_t
fittingTileRows(int64_t requested, int64_t headDim, int64_t elementBytes,
                int64_t sharedBytes = kStaticSharedBytes) {
  for (int64_t rows = requested; rows >= 16; rows = smallerTileRows(rows))
    if (tilesFit(rows, headDim, elementBytes, sharedBytes))
      return rows;
  return 0;
}

} // namespace fa::tensor_core

#endif // FA_TRANSFORMS_TENSORCORELIMITS_H
