//===- TensorCoreEmitter.h - What every tensor-core kernel shares -*- C++ -*-===//
//
// The per-thread view both MMA generations share. An mma.sync m16n8k16
// accumulator tile and each 8-column slice of a wgmma m64nNk16 accumulator
// (per warp of the warpgroup, 16 rows) have the same register layout
// ("groupID" g = lane / 4, "threadID_in_group" t = lane % 4):
//   C (16x8):       c0,c1 = (g, 2t..2t+1), c2,c3 = (g+8, 2t..2t+1)
// and so do mma.sync's A fragment and wgmma's A-from-registers fragment:
//   A (16x16, row): a0 = (g, 2t..2t+1), a1 = (g+8, 2t..), a2 = (g, 2t+8..),
//                   a3 = (g+8, 2t+8..)
// So the online softmax, the mask of a boundary tile, P as the next MMA's A
// operand, the O state and the epilogue are written once here (defined in
// TensorCoreEmitter.cpp), and each generation (MmaSync.cpp; WgmmaEmitter,
// WgmmaForward and WgmmaBackward) adds how it stages tiles and multiplies.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_TRANSFORMS_TENSORCOREEMITTER_H
#define FA_LIB_TRANSFORMS_TENSORCOREEMITTER_H

#include "TileBuilder.h"

#include "fa/Transforms/TensorCoreLimits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <memory>

namespace fa::tensor_core {

// This header is private to lib/Transforms; its code is written against
// MLIR the way the pass files are.
using namespace mlir;
/// Query rows per dQ block and keys per dK/dV block: 4 warps of 16. The
/// forward's warps (16 query rows each) are the pass's forward-warps.
constexpr int64_t kBlockM = 64;
constexpr int64_t kWarps = 4;

/// Tiles and warps of one kernel: keys per shared K/V tile (or per dK/dV
/// block, 16 per warp), warps per block, and the dK/dV kernel's query rows
/// per shared Q/dO tile.
struct KernelShape {
  int64_t blockN;
  int64_t warps = kWarps;
  /// Rows of a shared Q tile: the dK/dV kernel's per streamed Q/dO tile;
  /// the mma.sync forward's for the block where its Q fragments do not stay
  /// in registers (0 where they do).
  int64_t queryRows = 0;
  /// The forward's K/V tiles in shared memory at once (1 or 2).
  int64_t kvStages = 1;
  /// Copies of the wgmma forward's Q tile (1 or 2): with two, a persistent
  /// block's producer copies its next item's Q while the consumers still
  /// read this one's.
  int64_t fixedSlots = 1;
  /// (batch, head) pairs whose query tiles a forward grid interleaves
  /// (queryBlock).
  int64_t gridSection = kGridSectionPairs;
  /// A phase's tiles in one loop, the edge tiles masked under a branch
  /// (TileBuilder::branchedPhase), instead of three loops.
  bool branchedTiles = false;
};

/// The runtime's function `name` (CudaDriver.cpp, fa_export_runtime.c) as
/// the module around `b` declares it, declared there at first use.
inline func::FuncOp runtimeFunction(OpBuilder &b, StringRef name,
                                    FunctionType type) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  if (auto declared = module.lookupSymbol<func::FuncOp>(name))
    return declared;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto declared = func::FuncOp::create(b, b.getUnknownLoc(), name, type);
  declared.setPrivate();
  return declared;
}

/// The GPU's SMs as the runtime counts them (faMultiprocessorCount; 0
/// where the driver does not say), an index at `b`.
inline Value multiprocessorCount(ImplicitLocOpBuilder &b) {
  func::FuncOp count = runtimeFunction(b, "faMultiprocessorCount",
                                       b.getFunctionType({}, {b.getI32Type()}));
  return arith::IndexCastOp::create(
      b, b.getIndexType(), func::CallOp::create(b, count, {}).getResult(0));
}

/// Operands of a forward entry: q, k, v[, sinks], o, lse.
struct ForwardArgs {
  Value q, k, v, sinks, keyLengths, blockTable, o, lse;
  /// Packed sequences (fa.attention's query_starts/key_starts), or null.
  Value queryStarts, keyStarts;
  /// fa.attention's `append`: new keys and values, or null.
  Value kNew, vNew;
};

/// The split-KV forward (decode): `count` blocks share each query block's
/// keys, each writing its normalised o and lse to f32 partials of shape
/// [B, count * Hq, Sq, D] and [B, count * Hq, Sq] (split s of head h at
/// head s * Hq + h), which a second kernel merges by lse into o and lse.
struct SplitKv {
  Value count, partialO, partialLse;
};

/// Operands of a backward entry the kernels use, fa-tile's D buffer, and
/// the forward's output (which only the kernels that compute D read).
struct GradArgs {
  Value q, k, v, lse, dO, dq, dk, dv, rowDot, o;
};

/// The shared helpers of the tensor-core kernels; each generation derives
/// from it.
class TensorCoreEmitter : public TileBuilder {
public:
  TensorCoreEmitter(mlir::ImplicitLocOpBuilder &b, mlir::Type element,
                    int64_t headDim, KernelShape shape, bool allowTf32)
      : TileBuilder(b, b.getF32Type(), shape.blockN), element(element),
        headDim(headDim), warps(shape.warps), queryRows(shape.queryRows),
        kvStages(shape.kvStages), gridSection(shape.gridSection),
        branchedTiles(shape.branchedTiles), splitF32(!allowTf32) {}

  /// Whether `memref` may take the fast path: unit stride on D, the other
  /// strides multiples of 16 bytes and a 16-byte aligned start (cp.async
  /// and ldmatrix move 16 bytes; stores move 2 elements).
  Value isVectorFriendly(Value memref);

  /// `memref` with its unit innermost stride in the type, which vector
  /// loads and stores, cp.async and ldmatrix need to see.
  Value withUnitStride(Value memref);

protected:
  Type element;
  int64_t headDim;
  /// Warps per block; each owns 16 rows (or keys).
  int64_t warps;
  /// Query rows per shared Q/dO tile of the dK/dV kernel.
  int64_t queryRows;
  /// The forward's K/V stages.
  int64_t kvStages;
  /// (batch, head) pairs per section of a forward grid.
  int64_t gridSection;
  /// Phases in one loop each (phaseTiles).
  bool branchedTiles;
  /// f32 products as three tf32 MMAs on hi/lo halves (else one).
  bool splitF32;

  /// TileBuilder::phaseTiles in this kernel's form (branchedTiles).
  void phaseTiles(const TilePhase &p, int64_t block,
                  llvm::function_ref<void(Value, bool, Value)> tile) {
    TileBuilder::phaseTiles(p, block, branchedTiles, tile);
  }
  /// `build(true)` where `maskWhen` holds and `build(false)` elsewhere,
  /// as an scf.if yielding their `count` f32 values, or `build(masked)`
  /// alone where there is nothing to decide. The branch holds no wgmma
  /// accumulator in flight, so ptxas keeps the GEMMs asynchronous.
  SmallVector<Value>
  maskedOrNot(bool masked, Value maskWhen, int64_t count,
              llvm::function_ref<SmallVector<Value>(bool)> build);
  // Per-thread values, set up at the top of the kernel.
  Value tid, warp, lane, quadRank, quadTid, batchIdx, kvHead;
  /// Whether setUpThread takes the warp index through lane 0's copy, so
  /// that ptxas keeps its derived addresses in uniform registers: the
  /// wgmma forward's, but for its wide producers (three stages, or more
  /// than two TMA boxes a row) and D 256, where it spilled 4-12 bytes, as
  /// the backward's kernels did 8-72 (ptxas 13.0). Its tile loops run
  /// 2-6% fewer instructions at D 64 and 128.
  bool uniformWarpIndex = false;
  /// This block's point of its launch's extents (launchBlocks).
  std::array<Value, 3> blockCoord;
  /// The entry block of the kernel being built.
  Block *kernelEntry = nullptr;

  /// A gpu.launch of `warps` warps per block over `extents` (launchBlocks)
  /// with one shared tile of rows x headDim elements per entry of
  /// `tileRows`, named `kernelName`; `body` fills it with the per-thread
  /// values set up and the tiles. Tiles within the 48 KiB a block gets
  /// without asking are workgroup attributions; beyond that, views into
  /// dynamic shared memory, whose size the launch passes (the runtime raises
  /// the kernel's limit). `buffers` (shared memrefs of any element type)
  /// follow the tiles, in the tiles' memory and in `body`'s list.
  void launch(ArrayRef<Value> extents, ArrayRef<int64_t> tileRows,
              StringRef kernelName,
              llvm::function_ref<void(gpu::LaunchOp, ArrayRef<Value>)> body,
              ArrayRef<MemRefType> buffers = {});

  /// A gpu.launch of `warps` warps per block, one block per point of
  /// `extents` (three of them), named `kernelName`, with `dynamicBytes` of
  /// dynamic shared memory (none when 0) and `workgroupTypes` as workgroup
  /// attributions; `body` fills it with the per-thread values set up.
  ///
  /// The grid is one-dimensional, the first extent fastest (blockCoord
  /// decodes it): grid y and z stop at 65535, which B or H alone may pass,
  /// while x goes to 2^31 - 1 (the runtime refuses more by name).
  void launchBlocks(ArrayRef<Value> extents, int64_t dynamicBytes,
                    ArrayRef<Type> workgroupTypes, StringRef kernelName,
                    llvm::function_ref<void(gpu::LaunchOp)> body);

  gpu::AddressSpaceAttr workgroupSpace();
  /// The block's dynamic shared memory as bytes.
  Value dynamicShared();

  /// The per-thread values every kernel starts from.
  void setUpThread(gpu::LaunchOp launch, ArrayRef<Value> extents);

  /// The query rows a forward block owns: `rowsPerBlock` from m0 of head
  /// `head`, of which `rows` exist; warp w owns rows m0 + 16w to
  /// m0 + 16w + 15, this lane `rowOf`. Sets kvHead and batchIdx.
  ///
  /// Forward blocks, launched over (tiles, heads, batch), run in order of
  /// their linear index, which this decodes in its own order:
  /// the (batch, head) pairs go in sections of gridSection, and
  /// within a section tile by tile across its pairs, causal tiles with the
  /// most keys first. The longest blocks so start early and the last wave
  /// is short ones, while a section's pairs keep their K/V in L2.
  struct QueryBlock {
    Value head, m0, rows;
    std::array<Value, 2> rowOf;
    /// Where a block holds several heads (the split-KV forward's packed
    /// groups), this lane's rows' heads; else null.
    std::array<Value, 2> headOf;
    /// Where a block packs a group's rows: how many of its rows it holds
    /// (rows above counts query positions).
    Value packedRows;
  };
  /// Block `linear` of a grid of `tiles` blocks for each of `pairs`
  /// (batch, head) pairs, in sections of gridSection pairs, tile by tile
  /// across a section's pairs: (its tile, its pair). Tile 0 of each pair in
  /// a section runs first, so a grid whose low tiles are its longest
  /// starts them early and ends on short ones.
  std::pair<Value, Value> sectionedBlock(Value linear, Value tiles,
                                         Value pairs);
  /// The dK/dV block at grid point `linear` of a grid of `tiles` blocks
  /// per (batch, kv head) pair, in sectionedBlock's order: under a causal
  /// mask (and with sink tokens) a pair's first key blocks see the most
  /// query tiles, so they start early and the last wave is short blocks.
  /// (In key block order within each pair, the long blocks of the last
  /// pairs ran last: 22% of the SMs' time idle in gpt-oss's causal GQA
  /// dK/dV, ncu.) Sets kvHead and batchIdx; returns the block's tile.
  Value keyBlockTile(const Dims &dims, Value tiles, Value linear);
  QueryBlock queryBlock(const Variant &variant, const Dims &dims, Value tiles,
                        gpu::LaunchOp launch, int64_t rowsPerBlock);
  /// The same for block `linear` of the grid's order.
  QueryBlock queryBlock(const Variant &variant, const Dims &dims, Value tiles,
                        Value linear, int64_t rowsPerBlock);
  /// The forward grid's extents: (query blocks of `rowsPerBlock` rows,
  /// heads, batch entries), or over packed sequences (sequenceBlockCount
  /// blocks, heads, 1).
  std::array<Value, 3> forwardGrid(const ForwardArgs &args, const Dims &dims,
                                   int64_t rowsPerBlock);
  /// The forward block at grid point `linear` of forwardGrid (whose first
  /// extent is `tiles`) and the dims it runs under: queryBlock, with Sk
  /// its batch entry's where key_lengths give it; or over packed sequences
  /// its sequence's block (TileBuilder::sequenceBlock), all of batch entry
  /// 0, run from the grid's last block, which under a causal mask have the
  /// most keys. Sets kvHead and batchIdx.
  std::pair<QueryBlock, Dims> forwardBlock(const Variant &variant,
                                           const ForwardArgs &args,
                                           const Dims &allDims, Value tiles,
                                           Value linear, int64_t rowsPerBlock);
  /// The two rows this lane owns among the warp's 16 starting at `first`:
  /// first + g and first + g + 8.
  std::array<Value, 2> laneRows(Value first) {
    return {add(first, quadRank), add(first, add(quadRank, idx(8)))};
  }
  /// `x` (a natural-log-domain value) times log2 e.
  Value toBase2(Value x) { return fmul(x, flt(kLog2E)); }
  /// A mask bound (keyOffsetBoundsOf, queryOffsetBoundsOf: in [0, 8
  /// nTiles]) in 32 bits, through a move LLVM cannot look through: knowing
  /// the range it folded the truncation away, which left two-instruction
  /// 64-bit compares of each element. Null stays null.
  Value narrowBound(Value bound);
  /// A boundary tile's mask for this lane's rows `rowOf` and its keys of
  /// the `nTiles` 8-key accumulator tiles at n0 below `keyHi`: per row the
  /// bounds (keyOffsetBoundsOf, in i32) on the offsets c = 8 nt + e % 2 of
  /// keys n0 + 2 quadTid + c, computed once a tile.
  using KeyTileMask = std::array<tensor_core::KeyOffsetBounds<Value>, 2>;
  KeyTileMask keyTileMask(const Variant &variant, const Dims &dims,
                          ArrayRef<Value> rowOf, Value n0, Value keyHi,
                          int64_t nTiles);
  /// Whether accumulator element (nt, e) survives `mask`: a compare or two
  /// of its constant offset (one where its tile can cross one `edge` alone).
  Value keyTileVisible(const Variant &variant, const KeyTileMask &mask,
                       int64_t nt, int64_t e,
                       tensor_core::KeyEdge edge = tensor_core::KeyEdge::Both);
  /// The forward's lse in base 2 and D = rowsum(dO * o) of query row `row`
  /// of this block's head.
  std::pair<Value, Value> rowStatistics(const GradArgs &args, Value head,
                                        Value row);
  /// rowStatistics's lse alone.
  Value rowLse2(const GradArgs &args, Value head, Value row);
  /// `x` widened to the accumulator type where it is narrower than f32.
  Value toF32(Value x) {
    return x.getType().isF32() ? x : arith::ExtFOp::create(b, acc, x);
  }
  /// log2(e) times sinks[head], in f32.
  Value sinkLogit2(Value sinks, Value head) {
    return toBase2(toF32(memref::LoadOp::create(b, sinks, head)));
  }
  /// dsinks' term of a row, exp(sink - lse) d, from the sink as sinkLogit2
  /// gives it and the row's lse in base 2.
  Value sinkTerm(Value sink2, Value lse2, Value d) {
    return fmul(exp2(fsub(sink2, lse2)), d);
  }

  //===--------------------------------------------------------------------===//
  // Backward. P = exp2(S * scale log2 e - lse log2 e) from the forward's
  // lse, dS = P (dP - D) with dP = dO V^T and D = rowsum(dO * o).
  //===--------------------------------------------------------------------===//

  /// P and dS of accumulator element (nt, e) of S and dP, given the lse (in
  /// base 2) and D of its query row; zero where `ok` is false. P flushes
  /// below 2^-126 (exp2Ftz): the fixups of the exact form were 96 of the
  /// 814 instructions a dK/dV warp issued per tile (ncu, D 128).
  std::pair<Value, Value> probAndGrad(Value s, Value dp, Value scaleLog2,
                                      Value lse2, Value rowDot, Value ok);
  /// The dK/dV kernels' step: P^T and dS^T in place of the S^T = K Q^T and
  /// dP^T = V dO^T accumulator tiles of this lane's keys `keyOf` (rows) by
  /// the query tile at m0 of `head` (columns); a masked tile predicates each
  /// element, and queries past Sq.
  void keyMajorGrads(const Variant &variant, const Dims &dims,
                     const GradArgs &args, Value head, Value m0, bool masked,
                     ArrayRef<Value> keyOf, Value scaleLog2,
                     MutableArrayRef<SmallVector<Value, 4>> s,
                     MutableArrayRef<SmallVector<Value, 4>> dp);
  /// The base-2 lse and D of the tile's query column `column` (m0 + its
  /// `offset` + 2 t).
  using ColumnStatistics =
      llvm::function_ref<std::pair<Value, Value>(Value column, int64_t offset)>;
  /// (`maskWhen`: as in TensorCoreEmitter::phaseTiles.)
  void keyMajorGrads(const Variant &variant, const Dims &dims, Value m0,
                     bool masked, Value maskWhen, ArrayRef<Value> keyOf,
                     Value scaleLog2, MutableArrayRef<SmallVector<Value, 4>> s,
                     MutableArrayRef<SmallVector<Value, 4>> dp,
                     ColumnStatistics statisticsOf);
  /// The dQ kernels' step: P and dS in place of the S = Q K^T and dP =
  /// dO V^T accumulator tiles of rows `rowOf` (whose base-2 lse and D are
  /// `lse2` and `rowDot`) by the key tile at n0; `keyHi` is set on masked
  /// tiles (`maskWhen`: as in TensorCoreEmitter::phaseTiles).
  void queryMajorGrads(const Variant &variant, const Dims &dims,
                       ArrayRef<Value> rowOf, Value n0, Value keyHi,
                       ArrayRef<Value> lse2, ArrayRef<Value> rowDot,
                       Value scaleLog2,
                       MutableArrayRef<SmallVector<Value, 4>> s,
                       MutableArrayRef<SmallVector<Value, 4>> dp,
                       Value maskWhen = Value());

  /// rowStatistics of this lane's rows `rowOf` (rows past Sq read the
  /// last row's): the lse in base 2 of each, and D of each (unless
  /// `withRowDot` is false: a kernel that computes D leaves it null).
  struct LaneRowStatistics {
    std::array<Value, 2> lse2, rowDot;
  };
  LaneRowStatistics laneRowStatistics(const GradArgs &args, const Dims &dims,
                                      Value head, ArrayRef<Value> rowOf,
                                      bool withRowDot = true);

  /// The A fragment of P (or dS) for k-step kk from the accumulators of
  /// n-tiles 2kk and 2kk+1.
  SmallVector<Value, 4> fragAFromAcc(ArrayRef<SmallVector<Value, 4>> acc,
                                     int64_t kk);
  /// A private f32 buffer of `n` elements at the top of the kernel: LLVM
  /// turns only the entry block's allocas into registers, and a kernel may
  /// build its state inside a branch (the wgmma forward's consumers).
  Value privateBuffer(int64_t n);
  /// Register state of `columns` / 8 accumulator tiles (default: the head
  /// dim's), zeroed.
  Value zeroState(std::optional<int64_t> columns = std::nullopt);
  /// A row's two accumulator values in 8-column tile `dt` of register
  /// state `state` (row g for r = 0, g + 8 for r = 1), times `factor`.
  std::pair<Value, Value> scaledPair(Value state, int64_t dt, int64_t r,
                                     Value factor);
  /// Stores rows `rowOf` of register state, row r times `factor[r]`, into
  /// memref[batch, head, row, :], rows below `rowsTotal` only; a state of
  /// `columns` (default: the head dim) goes to the columns from `column0`
  /// on.
  /// `headOf`: the head of every row, or of each of this lane's two rows
  /// (the split-KV forward's blocks hold several heads).
  void storeRows(Value state, ArrayRef<Value> factor, Value memref,
                 ArrayRef<Value> headOf, ArrayRef<Value> rowOf, Value rowsTotal,
                 std::optional<int64_t> columns = std::nullopt,
                 Value column0 = Value());

  int64_t elementBytes() const {
    return element.getIntOrFloatBitWidth() / 8;
  }
  /// Elements per 16-byte chunk: the unit of cp.async and of the swizzle.
  int64_t chunkElements() const {
    return tensor_core::chunkElements(elementBytes());
  }
  /// Elements per row of a shared tile (tensor_core::sharedRowElements).
  int64_t sharedRowElements() const {
    return tensor_core::sharedRowElements(headDim, elementBytes());
  }
  /// The column of a shared tile where 16-byte chunk `chunk` of row `row`
  /// starts: chunk ^ (row % 8) where the rows swizzle, else the chunk itself
  /// (the rows are padded instead). `rowMod8` is row % 8 where the caller
  /// has it.
  Value sharedChunkColumn(Value chunk, Value rowMod8);
  /// An f32 value in the element type.
  Value toElement(Value x) {
    return element.isF32() ? x : arith::TruncFOp::create(b, element, x);
  }
  Value fmaxnum(Value x, Value y) {
    return arith::MaxNumFOp::create(b, x, y);
  }

  /// Two f32 values rounded to the element type, as an MMA operand
  /// register.
  Value pack(Value lo, Value hi);
  /// NVVM's mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs as
  /// the i32 that holds them; f32 pairs stay vector<2xf32> until mma()
  /// splits them into tf32 registers.
  Value asOperand(Value pair);
  /// Two elements of `memref[indices...]` as an MMA operand register.
  Value loadPair(Value memref, ValueRange indices);
  /// `x` reduced with `op` over the aligned group of `lanes` lanes (a power
  /// of two up to 32) this lane is in, by XOR shuffles; every lane of the
  /// group gets the result.
  Value laneReduce(Value x, int32_t lanes,
                   llvm::function_ref<Value(Value, Value)> op);
  /// `x` reduced with `op` over the four lanes of this lane's quad.
  Value quadReduce(Value x, llvm::function_ref<Value(Value, Value)> op) {
    return laneReduce(x, 4, op);
  }
  /// 2^x flushing subnormal results to zero: ex2.approx.ftz. The form
  /// without ftz costs ptxas a range test and two scalings around each
  /// MUFU.EX2, and a probability below 2^-126 adds nothing to a row.
  Value exp2Ftz(Value x);
  /// `values` reduced with `op` pairwise: a tree log2(n) deep, not a chain n
  /// long, so that the row statistics' latency does not grow with the tile
  /// width (only two or three consumer warps share a scheduler to hide it).
  Value treeReduce(SmallVector<Value> values,
                   llvm::function_ref<Value(Value, Value)> op);
  Value xori(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }
  /// Four values of `type` side by side (a 16-byte quad of f32), and four
  /// f32 zeros.
  static VectorType quadType(Type type) { return VectorType::get({4}, type); }
  Value zeroQuad() {
    return arith::ConstantOp::create(
        b, cast<TypedAttr>(b.getZeroAttr(quadType(b.getF32Type()))));
  }
  Value divi(Value x, int64_t d) {
    return arith::DivUIOp::create(b, x, idx(d));
  }
  Value remi(Value x, int64_t d) {
    return arith::RemUIOp::create(b, x, idx(d));
  }
  Value divi(Value x, Value d) { return arith::DivUIOp::create(b, x, d); }
  Value remi(Value x, Value d) { return arith::RemUIOp::create(b, x, d); }
  /// An index as i32, and an integer of any width as an index, both
  /// unsigned.
  Value toI32(Value index) {
    return arith::IndexCastUIOp::create(b, b.getI32Type(), index);
  }
  Value toIndex(Value x) {
    return arith::IndexCastUIOp::create(b, b.getIndexType(), x);
  }

  /// Issues the cp.async copies of rows [start, start + rows) of
  /// source[batch, head] into `tile` (rows past `limit` are zero filled, so
  /// a partial last tile contributes nothing) and commits them as one
  /// group. Chunk c of row r lands at sharedChunkColumn. With `keys`, the
  /// rows are keys, found through its block table where it has one
  /// (TileBuilder::keyRow); with `appended` too (`append`'s new keys or
  /// values), the rows from keys->appendAt on come from it: a block
  /// reads the new rows where they are, not where another block writes
  /// them (appendRows).
  void loadTile(Value source, Value tile, Value start, Value limit, Value head,
                const Dims *keys = nullptr, Value appended = {}) {
    copyTile(source, tile, start, limit, head, keys, appended);
    NVVM::CpAsyncCommitGroupOp::create(b);
  }
  /// A tile copy's source rows [start, start + rows), those from `limit` on
  /// zero filled; for paged keys, each pass's block-table entry where it
  /// was loaded ahead of the copies (lookUpPages), one per pass: every
  /// thread copies one 16-byte chunk a pass.
  /// Or the entry of each row, loaded ahead into shared memory: row r's
  /// at pageRing[pageRingSlot, r].
  struct TileRows {
    int64_t rows;
    Value start, limit;
    SmallVector<Value, 8> pageEntries;
    Value pageRing, pageRingSlot;
  };
  /// This thread's row of the tile and chunk of the row in the pass that
  /// starts at chunk `first` of the tile (passes go in row order; where the
  /// threads split into whole rows, each keeps its chunk column).
  std::pair<Value, Value> passChunk(int64_t first);
  /// Chunks of a tile of `rows` rows.
  int64_t tileChunks(int64_t rows) {
    return rows * (headDim / chunkElements());
  }
  /// The rows of a copy of rows [start, start + `rows`) of paged `keys`,
  /// with their block-table entries loaded now (rows past the end clamp
  /// into the table): loads that a copy issued later need not wait for.
  TileRows lookUpPages(int64_t rows, Value start, Value limit,
                       const Dims &keys);
  /// loadTile's copies, left uncommitted, spread over every thread of the
  /// block.
  void copyTile(Value source, Value tile, Value start, Value limit, Value head,
                const Dims *keys = nullptr, Value appended = {}) {
    int64_t rows = cast<MemRefType>(tile.getType()).getDimSize(0);
    copyTileRows(source, tile, head, TileRows{rows, start, limit, {}}, keys,
                 appended);
  }
  /// copyTile's copies of rows `from` (lookUpPages's entries taken where
  /// it has them).
  void copyTileRows(Value source, Value tile, Value head, const TileRows &from,
                    const Dims *keys = nullptr, Value appended = {}) {
    int64_t chunkSize = chunkElements();
    int64_t threads = 32 * warps;
    int64_t chunks = tileChunks(from.rows);
    Value lastRow = sub(from.limit, idx(1));
    for (int64_t first = 0, pass = 0; first < chunks;
         first += threads, ++pass) {
      Value row, chunk; // captured below: no structured bindings
      std::tie(row, chunk) = passChunk(first);
      // A last pass past the tile's end leaves the surplus threads idle.
      std::optional<OpBuilder::InsertionGuard> guard;
      if (first + threads > chunks) {
        auto inTile = scf::IfOp::create(
            b, cmp(arith::CmpIPredicate::slt, row, idx(from.rows)), false);
        guard.emplace(b);
        b.setInsertionPointToStart(inTile.thenBlock());
      }
      Value srcRow = add(from.start, row);
      Value inRange = cmp(arith::CmpIPredicate::slt, srcRow, from.limit);
      Value srcElements = select(inRange, idx(chunkSize), idx(0));
      Value clamped = min(srcRow, lastRow);
      auto copy = [&](Value from, Value first, Value at) {
        nvgpu::DeviceAsyncCopyOp::create(
            b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tile,
            ValueRange{row, sharedChunkColumn(chunk, remi(row, 8))}, from,
            ValueRange{first, head, at, mul(chunk, idx(chunkSize))},
            b.getIndexAttr(chunkSize), srcElements, b.getUnitAttr());
      };
      // With `appended`, the cache's copy goes in the else branch; the
      // guard leaves the branches once it is emitted.
      std::optional<OpBuilder::InsertionGuard> inBranches;
      if (appended) {
        auto isNew = scf::IfOp::create(
            b, cmp(arith::CmpIPredicate::sge, clamped, keys->appendAt),
            /*withElseRegion=*/true);
        inBranches.emplace(b);
        b.setInsertionPointToStart(isNew.thenBlock());
        copy(appended, batchIdx, sub(clamped, keys->appendAt));
        b.setInsertionPointToStart(isNew.elseBlock());
      }
      auto [batchOrPage, at] =
          !keys           ? std::pair{batchIdx, clamped}
          : from.pageRing ? pageRow(*keys,
                                    memref::LoadOp::create(
                                        b, from.pageRing,
                                        ValueRange{from.pageRingSlot, row}),
                                    clamped)
          : from.pageEntries.empty()
              ? keyRow(*keys, batchIdx, clamped)
              : pageRow(*keys, from.pageEntries[pass], clamped);
      copy(source, batchOrPage, at);
    }
  }
  /// fa.attention's `append`: where `writes` holds (one block per kv head
  /// and batch entry), the block stores the new keys and values of its kv
  /// head into the cache rows from dims.appendAt (through the block table
  /// where paged). Every block reads those rows from the new keys and
  /// values (copyTile's `appended`), so none waits for the stores.
  void appendRows(const ForwardArgs &args, const Dims &dims, Value writes);
  /// Once every warp is done with `tiles`, refills them with rows
  /// [start, start + rows) of `sources` and waits for the copies.
  void stageTiles(ArrayRef<Value> sources, ArrayRef<Value> tiles, Value start,
                  Value limit, Value head);
  /// `nTiles` zeroed 16x8 f32 accumulator tiles (per thread: 4 values).
  SmallVector<SmallVector<Value, 4>> zeroTiles(int64_t nTiles);
  /// Waits for every committed copy, then for every warp.
  void waitTiles();

  /// Fragment state of one thread. O and the row statistics live in
  /// private memory indexed by constants only, which LLVM's SROA turns
  /// into registers across the tile loops.
  struct State {
    Value out;   // [headDim / 8][4] f32
    Value stats; // m of rows g, g+8, then l of rows g, g+8 (this lane's part)
  };
  Value loadState(Value memref, int64_t i) {
    return memref::LoadOp::create(b, memref, idx(i));
  }
  void storeState(Value v, Value memref, int64_t i) {
    memref::StoreOp::create(b, v, memref, idx(i));
  }

  /// The forward's O and row statistics, with a learnable sink (when
  /// `sinks` is set) starting each row at m = sink, l = 1 (one lane of the
  /// quad holds the 1: l is summed over the quad at the end). `headOf`:
  /// the block's head, or this lane's two rows' heads.
  State initForwardState(Value sinks, ArrayRef<Value> headOf);

  /// The online-softmax step on the S accumulator tiles `s` of the key
  /// tile at n0 (masked when `keyHi` is set; with `maskWhen`, an i1, only
  /// where it holds): leaves P in `s`, with the row statistics rescaled,
  /// and O too unless `deferredAlpha` is given: then it receives each
  /// row's factor, for rescaleRow once O may be touched. With
  /// `warpRescales` (beside `deferredAlpha`), the rescale is lazy: a row
  /// keeps its m until a tile's max passes it by more than
  /// kLazyRescaleLog2, and `warpRescales` receives whether any row of the
  /// warp moved its m (an i1 the warp agrees on), without which every
  /// factor is 1 and O needs no rescaleRow. A masked tile whose keys can
  /// cross one `edge` alone checks that edge's bounds alone.
  void onlineSoftmax(const Variant &variant, const Dims &dims,
                     const State &state, Value scaleLog2, ArrayRef<Value> rowOf,
                     Value n0, Value keyHi,
                     MutableArrayRef<SmallVector<Value, 4>> s,
                     std::array<Value, 2> *deferredAlpha = nullptr,
                     Value maskWhen = Value(), Value *warpRescales = nullptr,
                     tensor_core::KeyEdge edge = tensor_core::KeyEdge::Both);
  /// How far (in base-2 logits) a tile's max may pass a row's m before a
  /// lazy rescale moves it: P then reaches 2^8, which P's 16-bit types and
  /// l and O's f32 hold with room to spare (FlashAttention-4's threshold).
  static constexpr double kLazyRescaleLog2 = 8.0;
  /// O's row g (r = 0) or g + 8 (r = 1) times `alpha`.
  void rescaleRow(const State &state, int64_t r, Value alpha);

  /// The forward's epilogue for rows `rowOf` of `head`: O's rows go out
  /// through `storeOut` (given 1 / l per row) where set, else by
  /// storeRows.
  void storeForward(
      const State &state, const ForwardArgs &args, const Dims &dims,
      ArrayRef<Value> headOf, ArrayRef<Value> rowOf,
      llvm::function_ref<void(std::array<Value, 2>)> storeOut = nullptr);
};

/// The mma.sync kernels (MmaSync.cpp): a forward, and the backward's dK/dV
/// and dQ loops, each launched where the builder stands and named
/// `kernelName`.
class MmaSyncKernels {
public:
  virtual ~MmaSyncKernels() = default;
  virtual void emitForward(const Variant &variant, ForwardArgs args,
                           StringRef kernelName) = 0;
  /// The forward's blocks times `split.count`, each over its split of the
  /// keys (TileBuilder::splitKeyPhases), learnable sinks left to the
  /// merge; then the merge, named `mergeName`.
  virtual void emitSplitForward(const Variant &variant, ForwardArgs args,
                                const SplitKv &split, StringRef kernelName,
                                StringRef mergeName) = 0;
  virtual void emitDkDv(const Variant &variant, GradArgs args,
                        StringRef kernelName) = 0;
  virtual void emitDq(const Variant &variant, GradArgs args,
                      StringRef kernelName) = 0;
};
std::unique_ptr<MmaSyncKernels>
createMmaSyncKernels(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
                     KernelShape shape, bool allowTf32);

/// The wgmma forward (WgmmaForward.cpp, sm_90a): a producer warpgroup and
/// `shape.warps / 4 - 1` consumer warpgroups of 64 query rows each, whose
/// softmax runs under the previous tile's P V when `pipelined`; on a
/// persistent grid of a block per SM when `persistent`, else a block per
/// query block.
void emitWgmmaForward(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
                      KernelShape shape, bool pipelined, bool persistent,
                      const Variant &variant, ForwardArgs args, StringRef name);

/// The backward's row reductions (BackwardPreprocess.cpp), each launched
/// where the builder stands and named `name`: D = rowsum(dO * o) into
/// `rowDot` ([batch, head, row] f32), for `o` and `dO` whose rows are
/// whole 16-byte chunks of unit stride; and dsinks[h] = -sum of
/// exp(sinks[h] - lse) D over every (batch, row) of head h.
///
/// Given `sinkTerms`, the D kernel also sums each of its blocks' terms
/// exp(sinks[h] - lse) D into `partials` ([head, batch * row blocks] f32,
/// sinkPartialsPerHead of them a head), which emitSinkPartialsSumKernel
/// sums into dsinks; emitSinkGradientKernel computes dsinks from `rowDot`
/// alone, where D came from elsewhere.
///
/// Given `dqAccum` (an f32 dQ accumulator, as emitZeroKernel's, of dO's
/// batch, heads and rows, or of no rows at all), the D kernel also zeroes
/// its blocks' rows of it: one launch fewer than the zero kernel's before
/// every backward whose dQ accumulates in f32.
struct SinkTerms {
  Value lse, sinks, partials;
};
void emitRowDotKernel(ImplicitLocOpBuilder &b, Type element, Value o, Value dO,
                      Value rowDot, const SinkTerms *sinkTerms, Value dqAccum,
                      StringRef name);
/// Rows per partial of dsinks' terms: the D kernel's blocks' rows, and a
/// wgmma dQ consumer warpgroup's where that kernel computes D.
inline constexpr int64_t kSinkPartialRows = 64;
/// The partials a head's rows take: ceil(rows / kSinkPartialRows) per
/// batch entry, times the batch; the partial of rows [64 r, 64 r + 64) of
/// batch entry `bi` is bi * ceil(rows / 64) + r.
Value sinkPartialsPerHead(ImplicitLocOpBuilder &b, Value batch, Value rows);
/// The partial of rows [64 rowBlock, 64 rowBlock + 64) of batch entry
/// `batch` among a head's: the D kernel's block's, or the wgmma dQ consumer
/// warpgroup's that computes D.
Value sinkPartialIndex(ImplicitLocOpBuilder &b, Value batch, Value rows,
                       Value rowBlock);
void emitSinkPartialsSumKernel(ImplicitLocOpBuilder &b, Value partials,
                               Value dsinks, StringRef name);
void emitSinkGradientKernel(ImplicitLocOpBuilder &b, Value lse, Value rowDot,
                            Value sinks, Value dsinks, StringRef name);
/// Around an f32 dQ accumulator `accum` ([batch, head, row, D], identity
/// layout, D a multiple of 4): zeroes it, and writes dq = scale * accum in
/// dq's element type.
void emitZeroKernel(ImplicitLocOpBuilder &b, Value accum, StringRef name);
void emitScaledCopyKernel(ImplicitLocOpBuilder &b, Type element, Value accum,
                          Value dq, Value scale, StringRef name);

/// The wgmma backward (WgmmaBackward.cpp, sm_90a): the dK/dV kernel (key
/// blocks of 64 keys per consumer warpgroup over query tiles of
/// `shape.queryRows`) and the dQ kernel (query blocks of 64 rows per
/// consumer warpgroup over key tiles of `shape.blockN`), each launched
/// where the builder stands and named `name`. Given `dqAccum` (an f32
/// [batch, head, row, D] buffer, zeroed), the dK/dV kernel also adds the
/// unscaled dS K into it by TMA reduce-adds.
void emitWgmmaDkDv(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
                   KernelShape shape, const Variant &variant, GradArgs args,
                   Value dqAccum, StringRef name);
/// The dQ kernel's grid is persistent (a block per SM drawing query blocks,
/// as the forward's) when `persistent`. With `computesRowDot` (persistent
/// only) it computes D itself, from o (args.o, a third fixed tile) and dO,
/// rather than reading it, and writes it to args.rowDot for the dK/dV
/// kernel that then runs after it; given `sinkTerms`, it also writes their
/// partials, as the D kernel does. The D kernel is then not launched.
void emitWgmmaDq(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
                 KernelShape shape, const Variant &variant, GradArgs args,
                 bool persistent, bool computesRowDot,
                 const SinkTerms *sinkTerms, StringRef name);

} // namespace fa::tensor_core

#endif // FA_LIB_TRANSFORMS_TENSORCOREEMITTER_H
