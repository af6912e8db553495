//===- WgmmaEmitter.h - What every wgmma (sm_90a) kernel shares -*- C++ -*-===//
//
// The Hopper machinery the wgmma forward (WgmmaForward.cpp) and backward
// (WgmmaBackward.cpp) build on: warpgroup GEMMs, tensor maps, mbarriers and
// TMA, and the warp-specialised block they share: one producer warpgroup
// and `shape.warps / 4 - 1` consumer warpgroups of 64 rows each.
//
// The block's shared memory holds "fixed" tiles, copied once (the forward's
// Q; dK/dV's K and V; dQ's Q and dO), and a ring of `kvStages` stages of two
// "streamed" tiles each (the forward's and dQ's K and V; dK/dV's Q and dO),
// which the producer refills tile by tile. mbarriers carry the hand-offs:
// "fixed landed", and per stage and streamed tile "landed" (TMA completes
// its transactions) and "free" (every consumer thread arrives once its
// warpgroup's wgmma reads of it are done). Producer and consumers walk the
// same tiles: the block's tile t sits in stage t % kvStages, in that stage's
// round t / kvStages, whose parity the barrier waits name.
//
// Tensor maps: at each launch the host code has the runtime make one per
// operand (faTensorMapEncode, through cuTensorMapEncodeTiled) and passes it
// by value; fa-kernel-tensor-maps makes that parameter a grid-constant
// byval one, whose address TMA takes. A map the driver refuses launches
// nothing and fails the call with the driver's reason.
//
// Shared tiles use a swizzle both wgmma's descriptors and TMA name, of the
// widest segment W in {128, 64, 32} bytes that divides a row of D: a tile
// of R rows x D is D * size / W column blocks of R rows x W bytes, and
// 16-byte chunk c of row r sits at chunk c ^ ((r % 8) >> log2(128 / W)) of
// its segment (the XOR of address bits 4.. with bits 7..). TMA writes one
// box of W bytes x R rows per column block. Tiles start on the swizzles'
// 1024-byte period. So every head dim that is a multiple of 16 up to 256
// runs here: 64, 128, 192, 256 on 128-byte segments, 32 and 96 on 64-byte
// ones, 80 on 32-byte ones.
//
// Matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the
// start address >> 4, 16-29 the leading-dimension byte offset >> 4, 32-45
// the stride-dimension byte offset >> 4, 62-63 the swizzle (1: 128 bytes,
// 2: 64, 3: 32). K-major operands (rows of the contraction's k): the stride
// offset is 8 W (8 rows); a 16-wide k step inside a column block moves the
// start by 32 bytes. MN-major operands (a tile whose rows are the k of the
// contraction, read through the transpose bit): the leading offset is the
// distance between column blocks, the stride offset 8 W between 8-row
// groups.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_TRANSFORMS_WGMMAEMITTER_H
#define FA_LIB_TRANSFORMS_WGMMAEMITTER_H

#include "TensorCoreEmitter.h"

namespace fa::tensor_core {

/// Rows per consumer warpgroup: wgmma's M.
constexpr int64_t kGroupRows = 64;

class WgmmaEmitter : public TensorCoreEmitter {
public:
  WgmmaEmitter(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
               KernelShape shape)
      : TensorCoreEmitter(b, element, headDim, shape, /*allowTf32=*/false),
        segmentBytes(swizzleSegmentBytes(headDim * elementBytes())),
        fixedSlots(shape.fixedSlots) {}

protected:
  /// The swizzle's row segment W: a column block's bytes per row.
  int64_t segmentBytes;
  /// Copies of the fixed tiles, each with its own barriers and item slot
  /// (KernelShape::fixedSlots): a persistent block's work item `round`
  /// takes copy round % fixedSlots.
  int64_t fixedSlots;
  /// Whether the producer keeps 32 registers beside two consumers
  /// (wgmmaForwardWideProducer; set by the forward).
  bool wideProducer = false;

  /// The widest swizzle segment (128, 64 or 32 bytes) that divides a row.
  static int64_t swizzleSegmentBytes(int64_t rowBytes);
  /// The descriptor's swizzle field for the segment.
  int64_t swizzleMode() const {
    return segmentBytes == 128 ? 1 : segmentBytes == 64 ? 2 : 3;
  }
  /// Elements per column block of a shared tile.
  int64_t blockElements() const { return segmentBytes / elementBytes(); }
  int64_t columnBlocks() const { return headDim / blockElements(); }
  /// Consumer warpgroups.
  int64_t groups() const { return warps / 4 - 1; }
  /// The byte offset of column `column` in a headDim-wide shared tile of
  /// `rows` rows: its column block's, then the column's within the block.
  int64_t columnBytes(int64_t column, int64_t rows) const {
    return column / blockElements() * rows * segmentBytes +
           column % blockElements() * elementBytes();
  }
  int64_t tileBytes(int64_t rows) const {
    return rows * headDim * elementBytes();
  }
  /// The shared byte offset of row `row` (a multiple of 8) of a tile of
  /// `rows` rows at `tile`: rows lie within each column block.
  Value rowAt(Value tile, Value row) {
    return add(tile, mul(row, idx(segmentBytes)));
  }
  /// `value` through an opaque move: the same number, which LLVM cannot see
  /// is loop-invariant. Shared addresses of the fixed tiles pass through it
  /// in a loop body so that the wgmma descriptors and store addresses made
  /// from them are made there, where used, rather than hoisted before the
  /// loop and held (or spilled) across it beside the accumulators.
  Value opaque(Value value);
  /// The width of the sink keys' tile, where the forward and dQ kernels
  /// run it on fewer keys than block-n: the sink phase is a tile of its
  /// own (TileBuilder::keyPhases), and with a few sink tokens
  /// (StreamingLLM's 4) a block-n tile would multiply, exponentiate and
  /// mask block-n keys to keep those few. Its products with K and V^T run
  /// at wgmma n = the tokens rounded up to 16, its product with K or V at
  /// as many k; the stage still lands whole tiles (the producer copies
  /// every tile alike). 0 where the sink tile runs whole.
  int64_t sinkTileWidth(const Variant &variant) const {
    int64_t width = llvm::alignTo(variant.sinkTokens, 16);
    return variant.sinkTokens > 0 && width < blockN ? width : 0;
  }
  /// The byte offset of 16-byte chunk `chunk` of row `row` in a column
  /// block of `segment` bytes per row, swizzled as above.
  Value swizzledAt(Value row, Value chunk, int64_t segment) {
    Value phase = divi(remi(row, 8), 128 / segment);
    return add(mul(row, idx(segment)), mul(xori(chunk, phase), idx(16)));
  }

  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, b.getI64Type(), v);
  }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, b.getI32Type(), v);
  }
  Value toI64(Value index) {
    return arith::IndexCastUIOp::create(b, b.getI64Type(), index);
  }

  //===--------------------------------------------------------------------===//
  // Warpgroup GEMMs.
  //===--------------------------------------------------------------------===//

  /// The wgmma descriptor of the matrix at shared byte `address` in the
  /// tiles' swizzle (or the one of `mode`, the descriptor's field), with the
  /// given leading and stride byte offsets.
  Value descriptor(Value address, int64_t leading, int64_t stride,
                   std::optional<int64_t> mode = std::nullopt);
  /// The descriptor of the matrix `offset` bytes (a multiple of 16) past
  /// the one `base` describes: one 32-bit add to its low word, which holds
  /// the start address in 16-byte units below 256 KiB, so nothing carries
  /// into the other fields. Building each k step's descriptor from its
  /// address instead cost ptxas a shift, a mask, two adds and a move per
  /// wgmma.
  Value descriptorAt(Value base, int64_t offset);
  NVVM::WGMMATypes wgmmaType() const {
    return element.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  }
  /// wgmma.fence: orders this thread's register writes before the wgmma
  /// ops that read them (accumulators, A from registers).
  void fence() { NVVM::WgmmaFenceAlignedOp::create(b); }
  /// Commits the wgmma ops issued since the last commit as one group.
  void commit() { NVVM::WgmmaGroupSyncAlignedOp::create(b); }
  /// Waits until at most `pending` of this warpgroup's wgmma groups run.
  void waitGroups(int64_t pending) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, pending);
  }

  /// Issues `kSteps` wgmma m64n`n`k16 without fence or commit, both operands
  /// in shared memory read as `layoutA` and `layoutB`, step kk's
  /// descriptors from `descriptors(kk)`; the first step overwrites the
  /// accumulator, which it returns, unless `acc` gives one to add to.
  Value issueSharedProduct(
      int64_t kSteps, int64_t n, NVVM::MMALayout layoutA,
      NVVM::MMALayout layoutB,
      llvm::function_ref<std::pair<Value, Value>(int64_t)> descriptors,
      Value acc = Value());
  /// Issues A B^T (m64 n`n` over k = headDim) without fence or commit: A
  /// the 64 rows at shared byte `a` of a tile of `aRows` rows, B the `n`
  /// rows at `bTile` of a tile of `bRows` rows, both K-major (rows along
  /// the head dim). Returns the accumulator, valid once its group is
  /// waited for; it overwrites what it holds (no zeroing needed).
  Value issueRowProduct(Value a, int64_t aRows, Value bTile, int64_t bRows,
                        int64_t n);
  /// An m64n`n` accumulator as n / 8 tiles of 16 x 8 per warp.
  SmallVector<SmallVector<Value, 4>> accumulatorTiles(Value acc, int64_t n);
  /// Accumulator tiles as wgmma's A-from-registers operand: per 16-wide k
  /// step, four 32-bit registers of two elements.
  SmallVector<SmallVector<Value, 4>>
  registerOperand(ArrayRef<SmallVector<Value, 4>> tiles);
  /// Issues out += A B without fence or commit: A from registers
  /// (registerOperand, one entry per k step), B the [k][columns] tile of
  /// `bRows` rows at `bTile` (columns: the head dim's unless given; a part
  /// of a wider tile starts at a column block), read MN-major through the
  /// transpose bit; `out` is register state of columns / 2 values, holding
  /// the result once the group is waited for.
  void issueRegisterProduct(ArrayRef<SmallVector<Value, 4>> aRegs, Value bTile,
                            int64_t bRows, Value out,
                            std::optional<int64_t> columns = std::nullopt);
  /// Issues A B (m64 n`n` over k = `kRows`) without fence or commit, both
  /// operands MN-major (rows along k) and read through the transpose bits:
  /// A the tile at `a` whose `kRows` rows are 64 16-bit elements in one
  /// 128-byte swizzle segment, B columns [column, column + n) of the
  /// headDim-wide tile of `bRows` rows at `bTile` (a range inside one
  /// column block, or whole column blocks). Returns the accumulator, valid
  /// once its group is waited for.
  Value issueTransposedProduct(Value a, int64_t kRows, Value bTile,
                               int64_t bRows, int64_t column, int64_t n);
  /// Issues out += A B without fence or commit: A the tile at `a` of 64
  /// rows of `kRows` 16-bit elements in one 128-byte swizzle segment each,
  /// read K-major; B the n columns from shared byte `b0` on of a
  /// headDim-wide tile of `kRows` rows (whole column blocks or a range
  /// inside one, as issueTransposedProduct's), read MN-major through the
  /// transpose bit. `out` is register state of n / 2 values, which hold the
  /// product once the group is waited for.
  void issueKeyMajorProduct(Value a, int64_t kRows, Value b0, int64_t n,
                            Value out);
  /// Register state of n / 2 values (n accumulator columns) as a wgmma
  /// accumulator, and an accumulator back into its state.
  Value loadAccumulator(Value state, int64_t n);
  void storeAccumulator(Value acc, Value state);
  //===--------------------------------------------------------------------===//
  // Tensor maps.
  //===--------------------------------------------------------------------===//

  /// CUtensorMap as the LLVM struct fa-kernel-tensor-maps recognises.
  Type tensorMapType();
  LLVM::LLVMPointerType pointerType(unsigned space = 0) {
    return LLVM::LLVMPointerType::get(b.getContext(), space);
  }
  /// An operand TMA reads or reduces into: the [batch, head, row, column]
  /// memref, its name for the runtime's messages (faTensorMapEncode: 0 q,
  /// 1 k, 2 v, 3 do, 4 the dQ accumulator, 5 o) and the rows of its boxes. Its
  /// boxes are one column block of the tiles' swizzle, or, for an f32
  /// operand (`f32Columns` set: 8, 16 or 32), that many columns in the
  /// swizzle whose segment is their bytes (32, 64 or 128).
  struct MapOperand {
    Value memref;
    int64_t name;
    int64_t boxRows;
    int64_t f32Columns = 0;
  };
  struct SharedLayout;
  /// Host code: makes the operands' tensor maps and, when the driver made
  /// them all, launches `warps` warps per block over `extents`, with the
  /// dynamic shared memory of fixed tiles of `fixedRows`, kvStages stages
  /// of two streamed tiles of `streamRows` and `scratchBytes` of the
  /// kernel's own (setUpShared); `body`
  /// gets the maps' addresses in the kernel (kernelTensorMap), in the
  /// operands' order, and the layout.
  void
  launchWithTensorMaps(ArrayRef<MapOperand> operands, ArrayRef<Value> extents,
                       ArrayRef<int64_t> fixedRows, int64_t streamRows,
                       int64_t scratchBytes, StringRef kernelName,
                       llvm::function_ref<void(gpu::LaunchOp, ArrayRef<Value>,
                                               const SharedLayout &)>
                           body);
  /// Kernel code: the address of a tensor map the kernel took by value.
  /// fa-kernel-tensor-maps replaces this slot by the parameter itself.
  Value kernelTensorMap(Value map);

  //===--------------------------------------------------------------------===//
  // mbarriers and TMA.
  //===--------------------------------------------------------------------===//

  /// Shared byte address `address` as a shared-space pointer.
  Value sharedPointer(Value address) {
    return LLVM::IntToPtrOp::create(b, pointerType(3), toI64(address));
  }
  /// Waits until `barrier` completed its phase of parity `parity`.
  void waitBarrier(Value barrier, Value parity);
  /// Arrives on `barrier`, telling it to expect `bytes` more of TMA
  /// transactions.
  void expectBytes(Value barrier, int64_t bytes);
  /// Waits at named barrier `id` (0 is the block's) until `threads`
  /// threads have arrived.
  void namedBarrier(Value id, int64_t threads);
  void namedBarrier(int64_t id, int64_t threads) {
    namedBarrier(idx(id), threads);
  }
  /// Arrives at named barrier `id` without waiting: it completes once
  /// `threads` threads have arrived or waited there.
  void arriveNamed(Value id, int64_t threads) {
    NVVM::BarrierArriveOp::create(b, toI32(id), i32(threads));
  }
  /// Every consumer thread arrives on `barrier` once.
  void arriveOn(Value barrier) {
    NVVM::MBarrierArriveOp::create(b, /*res=*/Type(), barrier,
                                   /*count=*/Value());
  }
  /// TMA copies of rows [row, row + rows) of (head, batch) through `map`
  /// into the tile at shared byte `address`, one box per column block,
  /// completing on `landed`. Rows past the operand's end arrive as zeros.
  void loadTileAsync(Value map, Value address, int64_t rows, Value row,
                     Value head, Value landed);

  //===--------------------------------------------------------------------===//
  // The warp-specialised block.
  //===--------------------------------------------------------------------===//

  /// Where a block's shared memory holds what: byte offsets from the
  /// swizzle-aligned shared address `aligned`.
  struct SharedLayout {
    Value aligned;
    SmallVector<int64_t, 2> fixed, fixedRows; // each fixed tile (copy 0)
    int64_t fixedBytes = 0; // one copy's fixed tiles
    std::array<int64_t, 2> streamed; // each streamed tile's first stage
    int64_t streamRows = 0;
    int64_t scratch = 0; // the kernel's own bytes (1024-byte aligned)
    int64_t barriers = 0;
  };
  /// A stage's barriers, per streamed tile: it landed (TMA completes it),
  /// or is free again (every consumer thread arrives).
  enum class StageEvent : int64_t { Landed, Free };

  /// Lays the block's shared memory out (fixedSlots copies of the fixed
  /// tiles of `fixedRows` each, kvStages stages of two streamed tiles of
  /// `streamRows`, `scratchBytes`, the barriers) and has one thread set the
  /// barriers up for every thread to see.
  SharedLayout setUpShared(ArrayRef<int64_t> fixedRows, int64_t streamRows,
                           int64_t scratchBytes);
  /// The barriers and item slot of fixed-tile copy `slot` (an index; 0
  /// where there is one copy) lie at these 8-byte offsets from at.barriers
  /// (copy 0's around the stages' barriers, at 1 + 4 * kvStages on; the
  /// second copy's three after them).
  /// With `inPlace` the offset is made where used (an opaque move), not
  /// hoisted and held across the loops before it.
  Value fixedBarrier(const SharedLayout &at, Value slot, int64_t first,
                     int64_t copyOffset, bool inPlace = false) {
    Value offset =
        add(idx(at.barriers + 8 * first), mul(slot, idx(8 * copyOffset)));
    return sharedPointer(add(at.aligned, inPlace ? opaque(offset) : offset));
  }
  /// Fixed-tile copy `slot` landed: the producer's arrival with its bytes
  /// (or, past a persistent block's last item, without).
  Value fixedLanded(const SharedLayout &at, Value slot, bool inPlace = false) {
    return fixedBarrier(at, slot, 0, 3 + 4 * kvStages, inPlace);
  }
  Value fixedLanded(const SharedLayout &at) {
    return fixedLanded(at, idx(0));
  }
  /// Fixed-tile copy `slot` is free again: every consumer thread arrives
  /// once its warpgroup's reads of it are done (persistent blocks, whose
  /// producer then copies a later item's there).
  Value fixedFree(const SharedLayout &at, Value slot) {
    return fixedBarrier(at, slot, 1 + 4 * kvStages, 3);
  }
  /// The shared i64 through which a persistent block's producer names its
  /// consumers' work item of fixed-tile copy `slot` (64 bits, like the
  /// counter: a grid's items may pass 2^31 where its launch no longer does).
  Value nextItemSlot(const SharedLayout &at, Value slot) {
    return fixedBarrier(at, slot, 2 + 4 * kvStages, 3);
  }
  Value stageBarrier(const SharedLayout &at, int64_t tile, StageEvent event,
                     Value slot);
  /// The shared byte address of streamed tile `tile` (0 or 1) of stage
  /// `slot`.
  Value stageAt(const SharedLayout &at, int64_t tile, Value slot) {
    return add(at.aligned, add(idx(at.streamed[tile]),
                               mul(slot, idx(tileBytes(at.streamRows)))));
  }
  /// The shared byte address of fixed tile `tile` of copy `slot`.
  Value fixedAt(const SharedLayout &at, int64_t tile, Value slot) {
    return add(at.aligned,
               add(idx(at.fixed[tile]), mul(slot, idx(at.fixedBytes))));
  }
  Value fixedAt(const SharedLayout &at, int64_t tile) {
    return fixedAt(at, tile, idx(0));
  }
  Value scratchAt(const SharedLayout &at) {
    return add(at.aligned, idx(at.scratch));
  }
  /// The stage of the block's streamed tile `count`, and the parity of that
  /// stage's round the tile is in.
  std::pair<Value, Value> stageOf(Value count) {
    return {remi(count, kvStages), remi(divi(count, kvStages), 2)};
  }
  /// The tiles of `block` rows that cover [lo, hi).
  Value tileCount(Value lo, Value hi, int64_t block) {
    return ceilDiv(max(sub(hi, lo), idx(0)), block);
  }
  /// Waits until both streamed tiles of the block's tile `count` landed;
  /// returns its stage.
  Value waitStreamed(const SharedLayout &at, Value count);
  /// Frees streamed tile `tile` of stage `slot` for the producer.
  void release(const SharedLayout &at, int64_t tile, Value slot) {
    arriveOn(stageBarrier(at, tile, StageEvent::Free, slot));
  }

  /// A fixed tile's copy: rows [row, row + rows) of (head, batch) through
  /// `map` into fixed tile `tile`.
  struct FixedCopy {
    Value map;
    int64_t tile;
    Value row, head;
  };
  /// What the producer visits: calls its argument once per streamed tile,
  /// in the consumers' order, with the block's tile count, the first row
  /// and the head of both streamed tiles.
  using StreamVisitor = llvm::function_ref<void(
      llvm::function_ref<void(Value count, Value row, Value head)>)>;
  /// What a consumer does on one key tile: `tile(n0, keyHi, maskWhen,
  /// count, width, edge)`, masked below keyHi where set (where maskWhen
  /// holds, when set) against the bounds that `edge` says its keys can
  /// cross, on the block's tile `count`'s first `width` keys.
  using KeyTileVisitor = llvm::function_ref<void(
      Value, Value, Value, Value, int64_t, tensor_core::KeyEdge)>;
  /// The consumers' walk of the key tiles streamKeyTiles copies (the
  /// forward's and dQ's): each phase's tiles as phaseTiles visits them,
  /// block-n wide, but a sink phase that sinkTileWidth narrows as one tile
  /// of that width (or none, under a branch), masked, after which
  /// `afterNarrowSinks` (where given) takes the tile count. With
  /// `apartEdges`, a window's tiles run in edgePhase's three loops
  /// where the window keeps its edges apart (windowEdgesApart), each masked
  /// tile against its own edge. Returns the tiles' count.
  Value
  consumeKeyTiles(const Variant &variant, const Dims &dims, Value m0,
                  Value rows, bool apartEdges, KeyTileVisitor tile,
                  llvm::function_ref<void(Value)> afterNarrowSinks = nullptr);
  /// Calls `copy` for each key tile that query rows [m0, m0 + rows) visit
  /// (TileBuilder's key phases), with the block's tile count, the tile's
  /// first key and kvHead: the streamed tiles of the forward and of dQ
  /// (a sink phase of one narrow tile under a branch, as consumeKeyTiles
  /// walks it). Returns the tiles' count.
  Value streamKeyTiles(const Variant &variant, const Dims &dims, Value m0,
                       Value rows,
                       llvm::function_ref<void(Value, Value, Value)> copy);
  /// The producer warpgroup: one thread issues the fixed tiles' copies
  /// (completing on fixedLanded), then each streamed tile's pair into its
  /// stage once the consumers freed that stage's pair of the round before.
  void emitProducer(const SharedLayout &at, ArrayRef<FixedCopy> fixed,
                    std::array<Value, 2> streamMaps, StreamVisitor visit) {
    electedThread(
        [&] { produce(at, fixed, streamMaps, visit, idx(0), idx(0)); });
  }
  /// The producer of `block`, a block of query rows (queryBlock or
  /// forwardBlock): fixed tile i through `fixedMaps[i]` at the block's rows
  /// and head, K and V streamed through `streamMaps` over the key tiles
  /// those rows visit (streamKeyTiles): the forward's and dQ's. Its first
  /// streamed tile is the block's tile `firstTile` (a persistent block's
  /// count goes on across its items), its fixed tiles copy `fixedSlot`.
  /// Returns its streamed tiles' count.
  Value produceQueryBlock(const Variant &variant, const Dims &dims,
                          const QueryBlock &block, const SharedLayout &at,
                          ArrayRef<Value> fixedMaps,
                          std::array<Value, 2> streamMaps, Value firstTile,
                          Value fixedSlot);
  void emitQueryBlockProducer(const Variant &variant, const Dims &dims,
                              const QueryBlock &block, const SharedLayout &at,
                              ArrayRef<Value> fixedMaps,
                              std::array<Value, 2> streamMaps) {
    electedThread([&] {
      produceQueryBlock(variant, dims, block, at, fixedMaps, streamMaps,
                        idx(0), idx(0));
    });
  }
  /// What emitProducer's thread does, its streamed tiles counted from
  /// `firstTile`, its fixed tiles into copy `fixedSlot`.
  void produce(const SharedLayout &at, ArrayRef<FixedCopy> fixed,
               std::array<Value, 2> streamMaps, StreamVisitor visit,
               Value firstTile, Value fixedSlot);
  /// Runs `body` on the block's thread 0 alone (in a warp-specialised
  /// block, the producer warpgroup's).
  void electedThread(llvm::function_ref<void()> body);
  /// Runs `body` on the first thread of this consumer warpgroup. With
  /// `testInPlace` the test is made where it stands (an opaque move of the
  /// thread index): LLVM would hoist it out of a loop and hold its register
  /// across the loops inside (at D 80 ptxas spilled it).
  void onGroupLeader(llvm::function_ref<void()> body, bool testInPlace = false);
  /// Orders this thread's generic-proxy shared writes before the async
  /// proxy's reads (wgmma operands, TMA sources).
  void fenceSharedForAsync();

  /// A persistent grid's blocks for `work` items: one per SM (the
  /// runtime's faMultiprocessorCount), fewer where the work is less, and
  /// one per item where the count is unknown (0).
  Value persistentBlocks(Value work) {
    Value sms = multiprocessorCount(b);
    return select(cmp(arith::CmpIPredicate::sgt, sms, idx(0)), min(work, sms),
                  work);
  }
  /// The blocks of a grid over `work` items (grid-order indices) and the
  /// counter produceWorkItems draws items from: a block per item and no
  /// counter unless `persistent`; else persistentBlocks, and a counter
  /// zeroed ahead of the kernel (by kernel `kernelName`_schedule, where
  /// the items outnumber the blocks), which the caller frees after it.
  std::pair<Value, Value> workGrid(Value work, bool persistent,
                                   StringRef kernelName) {
    if (!persistent)
      return {work, Value()};
    Value blocks = persistentBlocks(work);
    Value counter =
        memref::AllocOp::create(b, MemRefType::get({1}, b.getI64Type()));
    zeroCounter(counter, cmp(arith::CmpIPredicate::ugt, work, blocks),
                (kernelName + "_schedule").str());
    return {blocks, counter};
  }
  /// Where `needed`, a one-block kernel named `name` zeroes (its thread 0)
  /// the i64 at `counter` (produceWorkItems's), ahead of the kernel that
  /// draws from it on its stream.
  void zeroCounter(Value counter, Value needed, StringRef name) {
    auto ifOp = scf::IfOp::create(b, needed, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    launchBlocks({idx(1), idx(1), idx(1)}, /*dynamicBytes=*/0,
                 /*workgroupTypes=*/{}, name, [&](gpu::LaunchOp) {
                   electedThread([&] {
                     memref::StoreOp::create(b, i64(0), counter, idx(0));
                   });
                 });
  }

  /// A persistent block's work item: its index in the grid's order, how
  /// many items the block ran before it (`round`: fixedSlotOf says which
  /// copy of the fixed tiles it takes) and the streamed tiles those had
  /// (`firstTile`: this item's first tile's count).
  struct WorkItem {
    Value linear, round, firstTile;
  };
  /// A persistent grid's blocks take `work` items (grid-order indices)
  /// until none is left: block b its first item b, and each later one from
  /// `counter` (a zeroed global i64: the items past the grid's first are
  /// handed out in order, each once, to whichever block asks first, so the
  /// long items that lead the order start first and blocks that drew short
  /// ones take more). The producer's thread draws them, tells the
  /// consumers through nextItemSlot and fixedLanded, and copies each
  /// item's fixed tiles once the consumers freed the copy it takes
  /// (fixedFree): with two copies, the next item's are copied while the
  /// consumers still read this one's. `body` emits an item's work and
  /// returns its streamed tiles. Without a `counter` the grid must have a
  /// block per item.
  void produceWorkItems(gpu::LaunchOp launch, const SharedLayout &at,
                        Value work, Value counter,
                        llvm::function_ref<Value(const WorkItem &)> body);
  /// The consumers' side: each waits for its item's fixed tiles, and stops
  /// at the producer's item past the last. `body` must arrive on fixedFree
  /// of the item's copy once its fixed tiles are read.
  void consumeWorkItems(const SharedLayout &at, Value work,
                        llvm::function_ref<Value(const WorkItem &)> body);
  /// Starts the body of a work-item loop, whose after-region takes (round,
  /// firstTile, linear), at the builder; returns its item.
  WorkItem beginWorkItem(scf::WhileOp items);
  /// The fixed-tile copy of work item `round` (round % fixedSlots), and the
  /// parity of that copy's barriers' phase (its uses before, mod 2). Made
  /// where used, through an opaque move, from the round the item loops
  /// keep anyway: no register holds a copy's index or address across the
  /// consumers' tile loop or in the producer's 24 (a build that kept it
  /// spilled 4 bytes at D 128).
  std::pair<Value, Value> fixedSlotOf(Value round) {
    if (fixedSlots > 1)
      round = opaque(round);
    return {remi(round, fixedSlots), remi(divi(round, fixedSlots), 2)};
  }
  /// Enters a consumer warpgroup: takes the registers, and counts its
  /// threads and warps from 0 (warp w owns rows 16w.. 16w + 15 of the
  /// block's consumer rows, warpgroup w / 4's M). Returns its warpgroup.
  Value enterConsumer();
  /// Splits the block into the producer (warpgroup 0, which gives its
  /// registers back first) and consumers. Past this point no barrier spans the block: the producer's idle warps have
  /// left.
  void splitRoles(llvm::function_ref<void()> producer,
                  llvm::function_ref<void()> consumer);
};

} // namespace fa::tensor_core

#endif // FA_LIB_TRANSFORMS_WGMMAEMITTER_H
