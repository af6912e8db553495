//===- MmaSync.cpp - Attention on mma.sync (sm_80 and later) --------------===//
//
// Warp-level kernels on mma.sync m16n8k16 (m16n8k8 tf32 for f32), ldmatrix
// and cp.async: the forward, and the backward's dK/dV and dQ loops.
//
// Fragment layouts (PTX ISA, mma.m16n8k16): A and C as in
// TensorCoreEmitter.h, and
//   B (16x8, col):  b0 = (k 2t..2t+1, n g), b1 = (k 2t+8.., n g)
// so the S accumulators of two neighbouring 8-key tiles are exactly the A
// fragment of P for the next MMA, and each thread owns rows g and g+8.
//
//
// f32 inputs run on tf32 mma.sync m16n8k8, whose A (16x8) is a0 = (g, t),
// a1 = (g+8, t), a2 = (g, t+4), a3 = (g+8, t+4) and B (8x8) b0 = (k t, n g),
// b1 = (k t+4, n g). The contraction may visit k in any order that A and B
// share, so k = t and t+4 stand for columns 2t and 2t+1 of each 8: every
// f16 operand register above (a pair of neighbouring k) becomes a pair of
// f32 registers in the same place, each 16-wide k-step two m16n8k8, and P
// still comes straight from the S accumulators. ldmatrix moves 16-bit
// rows, so f32 fragments are read from shared memory by plain loads at the
// same swizzled addresses. Unless tf32 is allowed, each product is three
// MMAs on a hi/lo split of both operands (hi = tf32(x), lo = tf32(x - hi)),
// which keeps f32 accuracy.
//
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//

#include "TensorCoreEmitter.h"

using namespace mlir;
using namespace fa;
using namespace fa::tensor_core;

namespace {

class MmaSyncEmitter : public TensorCoreEmitter, public MmaSyncKernels {
public:
  using TensorCoreEmitter::TensorCoreEmitter;

  /// Launches the forward kernel for this head dim; outlining names its
  /// module and function `kernelName`.
  void emitForward(const Variant &variant, ForwardArgs args,
                   StringRef kernelName) override {
    Dims dims = forwardRows(args);
    bool packed = packsGroups(variant, args, /*split=*/false);
    std::array<Value, 3> grid =
        packed ? std::array<Value, 3>{packedTiles(dims), dims.hkv, dims.batch}
               : forwardGrid(args, dims, 16 * warps);
    launch(
        grid, forwardTileRows(), kernelName,
        [&](gpu::LaunchOp launch, ArrayRef<Value> shared) {
          emitBody(variant, args, dims, grid[0], launch, shared,
                   /*split=*/nullptr, packed);
        },
        forwardBuffers(dims));
  }

  void emitSplitForward(const Variant &variant, ForwardArgs args,
                        const SplitKv &split, StringRef kernelName,
                        StringRef mergeName) override {
    Dims dims = forwardRows(args);
    bool packed = packsGroups(variant, args, /*split=*/true);
    Value tiles = packed ? packedTiles(dims) : ceilDiv(dims.sq, 16 * warps);
    launch(
        {mul(tiles, split.count), packed ? dims.hkv : dims.hq, dims.batch},
        forwardTileRows(), kernelName,
        [&](gpu::LaunchOp launch, ArrayRef<Value> shared) {
          emitBody(variant, args, dims, tiles, launch, shared, &split, packed);
        },
        forwardBuffers(dims, holdsWarpStates(/*split=*/true, packed)));
    emitSplitMerge(args, dims, split, mergeName);
  }

  /// Launches the dK/dV kernel: a block per (key tile, kv head, batch),
  /// each warp owning 16 keys, visiting the query tiles of every query head
  /// of its group.
  void emitDkDv(const Variant &variant, GradArgs args,
                StringRef kernelName) override {
    for (Value *m : {&args.q, &args.k, &args.v, &args.dO, &args.dk, &args.dv})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    Value tiles = ceilDiv(dims.sk, blockN);
    launch({tiles, dims.hkv, dims.batch},
           {blockN, blockN, queryRows, queryRows}, kernelName,
           [&](gpu::LaunchOp launch, ArrayRef<Value> shared) {
             emitDkDvBody(variant, args, dims, tiles, launch, shared);
           });
  }

  /// Launches the dQ kernel: a block per (query tile, query head, batch),
  /// visiting the key tiles of the forward.
  void emitDq(const Variant &variant, GradArgs args,
              StringRef kernelName) override {
    for (Value *m : {&args.q, &args.k, &args.v, &args.dO, &args.dq})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    Value tiles = ceilDiv(dims.sq, kBlockM);
    launch({tiles, dims.hq, dims.batch}, {blockN, blockN}, kernelName,
           [&](gpu::LaunchOp launch, ArrayRef<Value> shared) {
             emitDqBody(variant, args, dims, tiles, launch, shared);
           });
  }

private:
  /// Whether a forward block's rows are a kv head's whole group
  /// (packedGroupRows) rather than one query head's: where Q's fragments
  /// stay in registers, for the split-KV forward (a decode step's few
  /// query rows) and under a window (each block's keys are the window
  /// over its rows, so a block of one head's rows reads about block-rows +
  /// window keys for block-rows rows; a group's rows at the same few
  /// positions read about window keys for as many rows). K/V then go
  /// through each block once per group instead of once per query head:
  /// gpt-oss's window-128 forward ran 1.5% faster (bench/NOTES.md, fiftieth
  /// session; its blocks are bound by their latency, not by K/V's reads).
  /// Not over packed sequences, whose blocks are a sequence's rows.
  bool packsGroups(const Variant &variant, const ForwardArgs &args,
                   bool split) const {
    return queryRows == 0 && !args.queryStarts &&
           (split || variant.window.has_value());
  }
  /// The packed forward's blocks per (kv head, batch entry): its group's
  /// rows at every query position.
  Value packedTiles(const Dims &dims) {
    return ceilDiv(mul(dims.sq, dims.group), 16 * warps);
  }
  /// The forwards' row operands with their unit stride made known (q, k, v,
  /// o and append's new rows), and the dims of the (paged) cache.
  Dims forwardRows(ForwardArgs &args) {
    for (Value *m :
         {&args.q, &args.k, &args.v, &args.o, &args.kNew, &args.vNew})
      if (*m)
        *m = withUnitStride(*m);
    return pagedDims(attentionDims(args.q, args.k), args.blockTable, args.k);
  }
  /// The forward's shared tiles' rows: K's and V's stages, and Q's where
  /// its fragments do not stay in registers.
  SmallVector<int64_t, 3> forwardTileRows() const {
    SmallVector<int64_t, 3> rows = {kvStages * blockN, kvStages * blockN};
    if (queryRows > 0)
      rows.push_back(queryRows);
    return rows;
  }
  /// The forward's shared buffers beside its tiles: a paged cache's ring of
  /// block-table entries (pageRing) where its K/V tiles are pipelined; with
  /// `warpStates`, the split-KV forward's warpStates after it.
  SmallVector<MemRefType, 2> forwardBuffers(const Dims &dims,
                                            bool warpStates = false) {
    SmallVector<MemRefType, 2> buffers;
    if (ringsPages(dims))
      buffers.push_back(MemRefType::get({tensor_core::kPageRingTiles, blockN},
                                        b.getI32Type(), AffineMap(),
                                        workgroupSpace()));
    if (warpStates)
      buffers.push_back(MemRefType::get({warps - 1, 4 + headDim / 2, 32},
                                        b.getF32Type(), AffineMap(),
                                        workgroupSpace()));
    return buffers;
  }
  /// Whether the forward's pipelined K/V tiles of a paged cache come with
  /// pageRing.
  bool ringsPages(const Dims &dims) const {
    return dims.blockTable && kvStages == 2;
  }
  /// Whether a forward's blocks hold warpStates: the split-KV forward's
  /// where they pack a group's rows and splitsKeys().
  bool holdsWarpStates(bool split, bool packed) const {
    return split && packed && splitsKeys();
  }
  /// Whether the split-KV forward's warps may share each key tile when a
  /// block's packed rows fit one warp's 16 (a decode step's group of query
  /// heads at one position, or a few): each warp then runs the rows of
  /// warp 0 over its own keysPerWarp() keys of every tile, with a state of
  /// its own, and warp 0 merges the states at the end (mergeWarpStates).
  /// Pipelined tiles and Q in registers only.
  bool splitsKeys() const {
    return kvStages == 2 && queryRows == 0 && blockN % (16 * warps) == 0;
  }
  int64_t keysPerWarp() const { return blockN / warps; }
  /// Rows [first, first + rows) of a shared [rows][headDim] tile.
  Value tileSlice(Value tile, Value first, int64_t rows) {
    SmallVector<OpFoldResult> offsets = {OpFoldResult(first),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(rows),
                                       b.getIndexAttr(headDim)};
    SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1)};
    return memref::SubViewOp::create(b, tile, offsets, sizes, strides);
  }
  /// The forward's shared K and V tiles.
  Value keys, values;
  /// kPageRingTiles tiles' block-table entries, one per key row: those of
  /// tile i of a pipelined phase in slot i % kPageRingTiles; null where the
  /// cache is not paged or the tiles are not pipelined.
  Value pageRing;
  /// ldmatrix row addresses of this lane; `swizzle` is their row % 8.
  Value keyLoadRow, keyLoadChunk, valueLoadRow, valueLoadChunk, swizzle;
  /// Q's A fragments, per 16-wide step of D, where they stay in registers;
  /// else the block's shared Q tile (KernelShape::queryRows).
  SmallVector<SmallVector<Value, 4>> qFrag;
  Value queries, queriesRow0;
  /// The split-KV forward's: whether any of this warp's 16 rows is one of
  /// the block's (an i1, the same in every lane). A decode step's packed
  /// group fills one warp's rows or fewer (gpt-oss's 8 query heads of one
  /// position); the other warps only copy K/V tiles, where they would
  /// compute on rows that are never stored, taking shared-memory reads
  /// from the warp that has rows.
  Value warpHasRows;
  /// The split-KV forward's, where splitsKeys(): whether this block's warps
  /// share each key tile (an i1, the same in the whole block), and the
  /// shared buffer through which warps 1.. hand warp 0 their states: [warp
  /// - 1][m of rows g, g + 8, l of both, then O's headDim / 2 values][lane].
  Value keySplit, warpStates;

  /// The shared launch, with each thread's ldmatrix row addresses set up
  /// before `body`.
  void launch(ArrayRef<Value> extents, ArrayRef<int64_t> tileRows,
              StringRef kernelName,
              llvm::function_ref<void(gpu::LaunchOp, ArrayRef<Value>)> body,
              ArrayRef<MemRefType> buffers = {}) {
    TensorCoreEmitter::launch(
        extents, tileRows, kernelName,
        [&](gpu::LaunchOp launchOp, ArrayRef<Value> tiles) {
          // ldmatrix row addresses: lane L feeds row L % 8 of matrix L / 8.
          swizzle = remi(lane, 8);
          Value matrix = divi(lane, 8);
          keyLoadRow = add(mul(divi(matrix, 2), idx(8)), swizzle);
          keyLoadChunk = remi(matrix, 2);
          valueLoadRow = add(mul(remi(matrix, 2), idx(8)), swizzle);
          valueLoadChunk = divi(matrix, 2);
          body(launchOp, tiles);
        },
        buffers);
  }

  /// B fragments of n-tiles 2np and 2np+1 at k-step kk from a tile stored
  /// [n][k] (K for S = Q K^T).
  SmallVector<Value, 4> fragBFromRows(Value tile, int64_t np, int64_t kk) {
    return matrices(tile, idx(np * 16), kk * 16, /*columnOrder=*/false,
                    /*transpose=*/false);
  }
  /// B fragments of n-tiles 2np and 2np+1 at k-step kk from a tile stored
  /// [k][n] (V for O += P V), through ldmatrix's transpose.
  SmallVector<Value, 4> fragBFromCols(Value tile, int64_t kk, int64_t np) {
    return matrices(tile, idx(kk * 16), np * 16, /*columnOrder=*/true,
                    /*transpose=*/true);
  }
  /// The A fragment of rows [row0, row0 + 16) at k-step kk from a tile
  /// stored [m][k]; row0 is a multiple of 16.
  SmallVector<Value, 4> fragA(Value tile, Value row0, int64_t kk) {
    return matrices(tile, row0, kk * 16, /*columnOrder=*/true,
                    /*transpose=*/false);
  }
  /// The four 8x8 matrices of the 16x16 block at (row0, col0) of a shared
  /// tile as operand registers: matrix m is the block's quarter m in row
  /// order (m = 2 * rowHalf + colHalf) or, with `columnOrder`, in column
  /// order; `transpose` gives each lane a column pair instead of a row pair.
  SmallVector<Value, 4> matrices(Value tile, Value row0, int64_t col0,
                                 bool columnOrder, bool transpose) {
    if (!element.isF32()) {
      Value row = add(row0, columnOrder ? valueLoadRow : keyLoadRow);
      Value chunk = add(idx(col0 / 8),
                        columnOrder ? valueLoadChunk : keyLoadChunk);
      return ldmatrix(tile, row, sharedChunkColumn(chunk, swizzle), transpose);
    }
    SmallVector<Value, 4> regs;
    for (int64_t m = 0; m < 4; ++m) {
      int64_t rowHalf = columnOrder ? m % 2 : m / 2;
      int64_t colHalf = columnOrder ? m / 2 : m % 2;
      Value row = add(row0, idx(8 * rowHalf));
      Value col = idx(col0 + 8 * colHalf);
      if (!transpose) {
        row = add(row, quadRank);
        col = add(col, mul(quadTid, idx(2)));
        regs.push_back(vector::LoadOp::create(
            b, VectorType::get({2}, element), tile,
            ValueRange{row, swizzledColumn(row, col)},
            /*nontemporal=*/false, llvm::Align(8)));
        continue;
      }
      row = add(row, mul(quadTid, idx(2)));
      col = add(col, quadRank);
      Value pair[2];
      for (int64_t i = 0; i < 2; ++i) {
        Value r = add(row, idx(i));
        pair[i] = memref::LoadOp::create(
            b, tile, ValueRange{r, swizzledColumn(r, col)});
      }
      regs.push_back(vector::FromElementsOp::create(
          b, VectorType::get({2}, element), ValueRange{pair[0], pair[1]}));
    }
    return regs;
  }
  /// Where column `col` of row `row` of a shared tile is: its chunk where
  /// sharedChunkColumn puts it, so that the 8 rows an 8x8 matrix spans sit
  /// in distinct banks.
  Value swizzledColumn(Value row, Value col) {
    int64_t chunk = chunkElements();
    return add(sharedChunkColumn(divi(col, chunk), remi(row, 8)),
               remi(col, chunk));
  }
  /// A fragments of rows `rowOf` of memref[batch, head] per 16-wide k step
  /// of D, read from global memory (rows past `rowsTotal` read the last
  /// row: they feed only rows whose results are never stored).
  /// `headOf`: the head of every row, or of each of this lane's two rows.
  SmallVector<SmallVector<Value, 4>> rowFragments(Value memref,
                                                  ArrayRef<Value> headOf,
                                                  ArrayRef<Value> rowOf,
                                                  Value rowsTotal) {
    Value lastRow = sub(rowsTotal, idx(1));
    SmallVector<SmallVector<Value, 4>> frags(headDim / 16);
    for (int64_t kk = 0; kk < headDim / 16; ++kk)
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t r = 0; r < 2; ++r) {
          Value col = add(idx(kk * 16 + half * 8), mul(quadTid, idx(2)));
          frags[kk].push_back(
              loadPair(memref, {batchIdx, headOf[r % headOf.size()],
                                min(rowOf[r], lastRow), col}));
        }
    return frags;
  }
  /// acc[nt] += a * B(nt) over n-tiles of `rowsB` rows of a [n][k] tile.
  void mmaRows(ArrayRef<SmallVector<Value, 4>> a, Value tile, int64_t rowsB,
               MutableArrayRef<SmallVector<Value, 4>> acc) {
    mmaRows([&](int64_t kk) { return a[kk]; }, tile, rowsB, acc);
  }
  /// The same with A's fragment of k-step kk from `aAt(kk)`, taken as the
  /// step begins, so that only one step's are live.
  void mmaRows(llvm::function_ref<SmallVector<Value, 4>(int64_t)> aAt,
               Value tile, int64_t rowsB,
               MutableArrayRef<SmallVector<Value, 4>> acc) {
    for (int64_t kk = 0; kk < headDim / 16; ++kk) {
      SmallVector<Value, 4> a = aAt(kk);
      for (int64_t np = 0; np < rowsB / 16; ++np) {
        SmallVector<Value, 4> frag = fragBFromRows(tile, np, kk);
        mma(a, {frag[0], frag[1]}, acc[2 * np]);
        mma(a, {frag[2], frag[3]}, acc[2 * np + 1]);
      }
    }
  }
  /// out[dt] += A(acc) * tile over the headDim / 8 n-tiles of a [k][n]
  /// tile of `rowsK` rows; out is register state indexed dt * 4 + e.
  void mmaCols(ArrayRef<SmallVector<Value, 4>> acc, Value tile, int64_t rowsK,
               Value out) {
    for (int64_t kk = 0; kk < rowsK / 16; ++kk) {
      SmallVector<Value, 4> a = fragAFromAcc(acc, kk);
      for (int64_t dp = 0; dp < headDim / 16; ++dp) {
        SmallVector<Value, 4> frag = fragBFromCols(tile, kk, dp);
        for (int64_t half = 0; half < 2; ++half) {
          int64_t dt = 2 * dp + half;
          SmallVector<Value, 4> c;
          for (int64_t e = 0; e < 4; ++e)
            c.push_back(loadState(out, dt * 4 + e));
          mma(a, {frag[2 * half], frag[2 * half + 1]}, c);
          for (int64_t e = 0; e < 4; ++e)
            storeState(c[e], out, dt * 4 + e);
        }
      }
    }
  }
  NVVM::MMATypes mmaType() const {
    return element.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  }
  SmallVector<Value, 4> ldmatrix(Value buffer, Value row, Value col,
                                 bool transpose) {
    auto type = VectorType::get({4, 2}, element);
    Value frag = nvgpu::LdMatrixOp::create(b, type, buffer, ValueRange{row, col},
                                           transpose, 4);
    SmallVector<Value, 4> regs;
    for (int64_t i = 0; i < 4; ++i)
      regs.push_back(asOperand(vector::ExtractOp::create(b, frag, i)));
    return regs;
  }
  /// c += a * b on one 16x8x16 tile: one m16n8k16, or for f32 two tf32
  /// m16n8k8 (k = t, t+4 of each half being columns 2t, 2t+1; see the top).
  void mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
           MutableArrayRef<Value> c) {
    if (!element.isF32()) {
      mmaSync(a, bFrag, c, 16, mmaType());
      return;
    }
    auto at = [&](Value pair, int64_t i) -> Value {
      return vector::ExtractOp::create(b, pair, i);
    };
    for (int64_t half = 0; half < 2; ++half) {
      Value aHalf[] = {at(a[2 * half], 0), at(a[2 * half + 1], 0),
                       at(a[2 * half], 1), at(a[2 * half + 1], 1)};
      Value bHalf[] = {at(bFrag[half], 0), at(bFrag[half], 1)};
      mmaF32(aHalf, bHalf, c);
    }
  }
  /// c += a * b on one m16n8k8 of f32 operands through tf32: once, or as
  /// a_lo b_hi + a_hi b_lo + a_hi b_hi (the small terms first), which
  /// leaves only the a_lo b_lo term (below f32 rounding) out.
  void mmaF32(ArrayRef<Value> a, ArrayRef<Value> bFrag,
              MutableArrayRef<Value> c) {
    SmallVector<Value, 4> aHi, aLo, bHi, bLo;
    splitTf32(a, aHi, aLo);
    splitTf32(bFrag, bHi, bLo);
    if (splitF32) {
      mmaSync(aLo, bHi, c, 8, NVVM::MMATypes::tf32);
      mmaSync(aHi, bLo, c, 8, NVVM::MMATypes::tf32);
    }
    mmaSync(aHi, bHi, c, 8, NVVM::MMATypes::tf32);
  }
  /// tf32 registers (i32) of `values` rounded to nearest, and with the
  /// split on, of what that rounding left.
  void splitTf32(ArrayRef<Value> values, SmallVectorImpl<Value> &hi,
                 SmallVectorImpl<Value> &lo) {
    auto tf32 = [&](Value x) -> Value {
      return NVVM::ConvertFloatToTF32Op::create(
          b, b.getI32Type(), x, NVVM::FPRoundingMode::RNA,
          NVVM::SaturationMode::NONE, /*relu=*/false);
    };
    for (Value x : values) {
      hi.push_back(tf32(x));
      if (splitF32)
        lo.push_back(tf32(fsub(
            x, arith::BitcastOp::create(b, b.getF32Type(), hi.back()))));
    }
  }
  /// c += a * b on one mma.sync of shape 16 x 8 x k.
  void mmaSync(ArrayRef<Value> a, ArrayRef<Value> bFrag,
               MutableArrayRef<Value> c, int64_t k, NVVM::MMATypes type) {
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, resultType, a, bFrag, c, ArrayRef<int64_t>{16, 8, k},
        std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    for (int64_t i = 0; i < 4; ++i)
      c[i] = LLVM::ExtractValueOp::create(b, d, i);
  }
  /// The forward block's body; with `split`, split (block % count) of the
  /// keys of query block (block / count), written to the partials; with
  /// `packed`, its rows a kv head's group (packsGroups).
  void emitBody(const Variant &variant, const ForwardArgs &args,
                const Dims &allDims, Value tiles, gpu::LaunchOp launch,
                ArrayRef<Value> shared, const SplitKv *split, bool packed) {
    // A packed sequence's body goes inside an scf.if.
    OpBuilder::InsertionGuard guard(b);
    keys = shared[0];
    values = shared[1];
    size_t tileCount = forwardTileRows().size();
    pageRing = ringsPages(allDims) ? shared[tileCount] : Value();
    warpStates = holdsWarpStates(split, packed) ? shared.back() : Value();
    keySplit = Value();
    Value linear = launch.getBlockIds().x, splitIndex;
    if (split) {
      splitIndex = remi(linear, split->count);
      linear = divi(linear, split->count);
    }
    QueryBlock block;
    Dims dims;
    warpHasRows = Value();
    if (packed) {
      block = packedGroupRows(allDims, tiles, linear, 16 * warps,
                              /*mayShareKeys=*/bool(warpStates));
      dims = batchDims(allDims, args.keyLengths, batchIdx, args.kNew);
    } else {
      // From here on Sk is the block's batch entry's (key_lengths) or
      // sequence's.
      std::tie(block, dims) =
          forwardBlock(variant, args, allDims, tiles, linear, 16 * warps);
    }
    if (args.queryStarts) {
      // A sequence's spare block (no rows) stops here, all its threads
      // alike.
      auto hasRows = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::sgt, block.rows, idx(0)), false);
      b.setInsertionPointToStart(hasRows.thenBlock());
    }
    Value head = block.head, m0 = block.m0, rows = block.rows;
    std::array<Value, 2> rowOf = block.rowOf;
    if (split)
      warpHasRows = cmp(arith::CmpIPredicate::ult, mul(warp, idx(16)),
                        packed ? block.packedRows : rows);
    SmallVector<Value, 2> headOf = {head};
    if (block.headOf[0])
      headOf.assign(block.headOf.begin(), block.headOf.end());
    Value scaleLog2 = toBase2(scoreScale(variant, idx(headDim)));
    if (args.kNew) {
      // The block at row 0 of each kv head's first query head (of split 0)
      // writes the new keys and values.
      Value writes = arith::AndIOp::create(
          b, cmp(arith::CmpIPredicate::eq, m0, idx(0)),
          cmp(arith::CmpIPredicate::eq, remi(head, allDims.group), idx(0)));
      if (split)
        writes = arith::AndIOp::create(
            b, writes, cmp(arith::CmpIPredicate::eq, splitIndex, idx(0)));
      appendRows(args, dims, writes);
    }

    // Q fragments, read once from global memory; past
    // kMmaSyncQueryRegisterHeadDim Q lands in shared memory instead (its
    // own cp.async group, which the first key tile's wait covers).
    if (queryRows > 0) {
      queries = shared[2];
      queriesRow0 = mul(warp, idx(16));
      loadTile(args.q, queries, m0, dims.sq, head);
    } else {
      qFrag = rowFragments(args.q, headOf, rowOf, dims.sq);
    }

    // A learnable sink joins once, in the merge.
    State state = initForwardState(split ? Value() : args.sinks, headOf);

    SmallVector<KeyPhase, 2> phases = keyPhases(variant, dims, m0, rows);
    if (split)
      phases = splitKeyPhases(phases, splitIndex, split->count);
    for (const KeyPhase &p : phases) {
      if (kvStages == 2) {
        emitPipelinedPhase(variant, args, dims, state, scaleLog2, rowOf, p);
        continue;
      }
      auto nonEmpty = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, p.lo, p.hi), false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nonEmpty.thenBlock());
        loadTile(args.k, keys, p.lo, dims.sk, kvHead, &dims, args.kNew);
      }
      phaseTiles(p, blockN, [&](Value n0, bool masked, Value maskWhen) {
        emitTile(variant, args, dims, state, scaleLog2, rowOf, n0,
                 masked ? p.keyHi : Value(), maskWhen, p.hi);
      });
    }

    if (!split) {
      storeForward(state, args, dims, headOf, rowOf);
      return;
    }
    ForwardArgs partial = args;
    partial.o = split->partialO;
    partial.lse = split->partialLse;
    SmallVector<Value, 2> partialHeadOf;
    for (Value h : headOf)
      partialHeadOf.push_back(add(mul(splitIndex, dims.hq), h));
    OpBuilder::InsertionGuard storeGuard(b);
    if (keySplit) {
      mergeWarpStates(state);
      // Warp 0 holds the merged rows; the others' copies of them are stale.
      Value stale = arith::AndIOp::create(
          b, keySplit, cmp(arith::CmpIPredicate::ne, warp, idx(0)));
      Value stores = notOf(stale);
      b.setInsertionPointToStart(
          scf::IfOp::create(b, stores, false).thenBlock());
    }
    storeForward(state, partial, dims, partialHeadOf, rowOf);
  }

  /// Where the block's warps shared its key tiles (keySplit), warp 0's
  /// state becomes that of all its keys: warps 1.. store theirs in
  /// warpStates, and warp 0 rescales each to the rows' largest m and adds
  /// them up, in warp order. Every lane holds the same rows and columns in
  /// every warp (the mma.sync fragments), so each merges its own values.
  void mergeWarpStates(const State &state) {
    auto merging = scf::IfOp::create(b, keySplit, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(merging.thenBlock());
    int64_t values = 4 + headDim / 2;
    auto at = [&](Value w, int64_t i) {
      return SmallVector<Value, 3>{w, idx(i), lane};
    };
    {
      auto others = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::ne, warp, idx(0)), false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(others.thenBlock());
      Value w = sub(warp, idx(1));
      for (int64_t i = 0; i < 4; ++i)
        memref::StoreOp::create(b, loadState(state.stats, i), warpStates,
                                at(w, i));
      for (int64_t i = 4; i < values; ++i)
        memref::StoreOp::create(b, loadState(state.out, i - 4), warpStates,
                                at(w, i));
    }
    gpu::BarrierOp::create(b);
    auto first = scf::IfOp::create(
        b, cmp(arith::CmpIPredicate::eq, warp, idx(0)), false);
    b.setInsertionPointToStart(first.thenBlock());
    for (int64_t r = 0; r < 2; ++r) {
      SmallVector<Value, 4> m = {loadState(state.stats, r)};
      for (int64_t w = 0; w < warps - 1; ++w)
        m.push_back(memref::LoadOp::create(b, warpStates, at(idx(w), r)));
      Value top = m[0];
      for (Value x : ArrayRef<Value>(m).drop_front())
        top = fmaxnum(top, x);
      // Rows no warp saw a key of keep m = -inf (and l = 0).
      Value base = finiteOr(top, flt(0.0));
      SmallVector<Value, 4> factor;
      for (Value x : m)
        factor.push_back(exp2Ftz(fsub(x, base)));
      auto sum = [&](int64_t stateIndex, Value state, int64_t bufferIndex) {
        Value total = fmul(factor[0], loadState(state, stateIndex));
        for (int64_t w = 0; w < warps - 1; ++w)
          total = math::FmaOp::create(
              b, factor[w + 1],
              memref::LoadOp::create(b, warpStates, at(idx(w), bufferIndex)),
              total);
        storeState(total, state, stateIndex);
      };
      sum(2 + r, state.stats, 2 + r);
      for (int64_t dt = 0; dt < headDim / 8; ++dt)
        for (int64_t e = 2 * r; e < 2 * r + 2; ++e)
          sum(dt * 4 + e, state.out, 4 + dt * 4 + e);
      storeState(top, state.stats, r);
    }
  }

  /// The query rows of a split-KV block that packs a kv head's group:
  /// block row r is query position m0 + r / group of query head
  /// kvHead * group + r % group, so the group's rows of one position sit
  /// side by side, and the block's positions are [m0, m0 + rows). Blocks
  /// go tile by tile within a (kv head, batch) pair; sets kvHead and
  /// batchIdx, and headOf to this lane's rows' heads.
  QueryBlock packedGroupRows(const Dims &dims, Value tiles, Value linear,
                             int64_t rowsPerBlock, bool mayShareKeys = false) {
    Value tile = remi(linear, tiles), pair = divi(linear, tiles);
    kvHead = remi(pair, dims.hkv);
    batchIdx = divi(pair, dims.hkv);
    Value r0 = mul(tile, idx(rowsPerBlock));
    Value end = min(add(r0, idx(rowsPerBlock)), mul(dims.sq, dims.group));
    // Where the warps share the key tiles, each holds warp 0's rows.
    Value rowWarp = warp;
    if (mayShareKeys) {
      keySplit = cmp(arith::CmpIPredicate::ule, sub(end, r0), idx(16));
      rowWarp = select(keySplit, idx(0), warp);
    }
    QueryBlock q;
    q.head = mul(kvHead, dims.group);
    q.m0 = divi(r0, dims.group);
    q.rows = sub(add(divi(sub(end, idx(1)), dims.group), idx(1)), q.m0);
    q.packedRows = sub(end, r0);
    std::array<Value, 2> packed = laneRows(add(r0, mul(rowWarp, idx(16))));
    for (int64_t r = 0; r < 2; ++r) {
      q.rowOf[r] = divi(packed[r], dims.group);
      q.headOf[r] = add(q.head, remi(packed[r], dims.group));
    }
    return q;
  }

  /// The merge of the split-KV forward's partials: a block per (query row,
  /// head, batch). With m = max(max_s lse_s, sink),
  ///   o = sum_s e^(lse_s - m) o_s / l,  l = sum_s e^(lse_s - m) + e^(sink -
  ///   m), lse = m + ln l;
  /// a row no split saw (and no sink) gets o = 0 and lse = -inf, as the
  /// forward gives it. The threads form `groups` groups of headDim / 4,
  /// each thread one 16-byte quad of D's columns: group g takes splits g,
  /// g + groups, ... (mergeSplitsPerThread at most), loads their lse and
  /// its quad of their o up front (in chunks of kMergeLoads splits up to
  /// the count, so the kernel waits on memory once), and merges them
  /// against its own largest lse; group 0 then merges the groups' m, l
  /// and O in group order, the sink logit joining once. Every sum runs in
  /// one fixed order for a given split count, so the result does not
  /// depend on which block ran first. A thread per split's lse and one
  /// column per thread took 3.6-3.8 us a B 1 decode step (bench/NOTES.md,
  /// fifty-third session): 64 scalar loads and a 64-term chain a thread.
  void emitSplitMerge(const ForwardArgs &args, const Dims &dims,
                      const SplitKv &split, StringRef kernelName) {
    constexpr int64_t kMergeLoads = 4;
    int64_t quads = headDim / 4;
    int64_t groups = mergeGroups();
    int64_t perThread = mergeSplitsPerThread();
    assert(headDim % 4 == 0 && groups >= 1 && "whole quads, one group");
    auto f32 = b.getF32Type();
    auto quadF32 = quadType(f32);
    // Each group's O (its quads side by side), and its m and l.
    auto groupOutType = MemRefType::get({groups, headDim}, f32, AffineMap(),
                                        workgroupSpace());
    auto groupStatsType =
        MemRefType::get({2, groups}, f32, AffineMap(), workgroupSpace());
    Value o = withUnitStride(args.o);
    launchBlocks(
        {dims.sq, dims.hq, dims.batch}, 0, {groupOutType, groupStatsType},
        kernelName, [&](gpu::LaunchOp launch) {
          Value groupOut = launch.getWorkgroupAttributions()[0];
          Value groupStats = launch.getWorkgroupAttributions()[1];
          Value row = blockCoord[0], head = blockCoord[1];
          // Threads past the last whole group (D 80, 96, 192) take group
          // `groups`, which has no splits.
          Value group = min(divi(tid, quads), idx(groups));
          Value grouped = cmp(arith::CmpIPredicate::ult, group, idx(groups));
          Value col = mul(remi(tid, quads), idx(4));
          Value last = sub(split.count, idx(1));
          auto splitOf = [&](int64_t i) {
            return add(group, idx(i * groups));
          };
          SmallVector<Value> lse, parts;
          for (int64_t c = 0; c < perThread; c += kMergeLoads) {
            int64_t n = std::min(kMergeLoads, perThread - c);
            SmallVector<Type> types(n, f32);
            types.append(n, quadF32);
            auto chunk = scf::IfOp::create(
                b, types,
                arith::AndIOp::create(b, grouped,
                                      cmp(arith::CmpIPredicate::ult,
                                          splitOf(c), split.count)),
                /*withElseRegion=*/true);
            {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(chunk.thenBlock());
              SmallVector<Value> loaded(2 * n);
              for (int64_t u = 0; u < n; ++u) {
                Value s = min(splitOf(c + u), last);
                Value partialHead = add(mul(s, dims.hq), head);
                SmallVector<Value, 3> at = {batchIdx, partialHead, row};
                loaded[u] = memref::LoadOp::create(b, split.partialLse, at);
                loaded[n + u] = vector::LoadOp::create(
                    b, quadF32, split.partialO,
                    ValueRange{batchIdx, partialHead, row, col},
                    /*nontemporal=*/false, llvm::Align(16));
              }
              scf::YieldOp::create(b, loaded);
              b.setInsertionPointToStart(chunk.elseBlock());
              SmallVector<Value> none(n, negInf());
              none.append(n, zeroQuad());
              scf::YieldOp::create(b, none);
            }
            for (int64_t u = 0; u < n; ++u) {
              // A split past the count in a chunk that began below it.
              Value mine = cmp(arith::CmpIPredicate::ult, splitOf(c + u),
                               split.count);
              lse.push_back(select(mine, chunk.getResult(u), negInf()));
              parts.push_back(chunk.getResult(n + u));
            }
          }
          // This thread's splits against their largest lse (0 where none
          // saw a key: every weight is then 0).
          Value m = lse.front();
          for (Value x : ArrayRef<Value>(lse).drop_front())
            m = fmax(m, x);
          Value base = finiteOr(m, flt(0.0));
          Value l = flt(0.0), out = zeroQuad();
          for (auto [x, part] : llvm::zip(lse, parts)) {
            Value w = math::ExpOp::create(b, fsub(x, base));
            l = fadd(l, w);
            out = math::FmaOp::create(
                b, vector::BroadcastOp::create(b, quadF32, w), part, out);
          }
          {
            auto writer = scf::IfOp::create(b, grouped, false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(writer.thenBlock());
            vector::StoreOp::create(b, out, groupOut, ValueRange{group, col});
            auto first = scf::IfOp::create(
                b, cmp(arith::CmpIPredicate::eq, col, idx(0)), false);
            b.setInsertionPointToStart(first.thenBlock());
            memref::StoreOp::create(b, m, groupStats,
                                    ValueRange{idx(0), group});
            memref::StoreOp::create(b, l, groupStats,
                                    ValueRange{idx(1), group});
          }
          gpu::BarrierOp::create(b);
          auto merger = scf::IfOp::create(
              b, cmp(arith::CmpIPredicate::ult, tid, idx(quads)), false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(merger.thenBlock());
          Value sink = args.sinks ? Value(memref::LoadOp::create(
                                        b, args.sinks, ValueRange{head}))
                                  : negInf();
          SmallVector<Value> groupM;
          Value top = sink;
          for (int64_t g = 0; g < groups; ++g) {
            groupM.push_back(memref::LoadOp::create(
                b, groupStats, ValueRange{idx(0), idx(g)}));
            top = fmax(top, groupM.back());
          }
          // Every term is 0 when top is -inf: no split saw a key. A NaN
          // top (a NaN sink logit) is not that: o and lse come out NaN.
          Value seen = arith::CmpFOp::create(b, arith::CmpFPredicate::UGT,
                                             top, negInf());
          Value topBase = select(seen, top, flt(0.0));
          Value total = math::ExpOp::create(b, fsub(sink, topBase));
          Value merged = zeroQuad();
          for (int64_t g = 0; g < groups; ++g) {
            Value factor = math::ExpOp::create(b, fsub(groupM[g], topBase));
            Value groupL = memref::LoadOp::create(b, groupStats,
                                                  ValueRange{idx(1), idx(g)});
            total = math::FmaOp::create(b, factor, groupL, total);
            Value part = vector::LoadOp::create(b, quadF32, groupOut,
                                                ValueRange{idx(g), col});
            merged = math::FmaOp::create(
                b, vector::BroadcastOp::create(b, quadF32, factor), part,
                merged);
          }
          Value inv = select(seen, arith::DivFOp::create(b, flt(1.0), total),
                             flt(0.0));
          Value scaled = arith::MulFOp::create(
              b, merged, vector::BroadcastOp::create(b, quadF32, inv));
          if (!element.isF32())
            scaled = arith::TruncFOp::create(b, quadType(element), scaled);
          // Four elements: 8 bytes of bf16 or f16, 16 of f32.
          vector::StoreOp::create(
              b, scaled, o, ValueRange{batchIdx, head, row, col},
              /*nontemporal=*/false,
              llvm::Align(element.getIntOrFloatBitWidth() / 2));
          auto rowWriter = scf::IfOp::create(
              b, cmp(arith::CmpIPredicate::eq, tid, idx(0)), false);
          b.setInsertionPointToStart(rowWriter.thenBlock());
          Value rowLse = fadd(top, math::LogOp::create(b, total));
          memref::StoreOp::create(b, select(seen, rowLse, negInf()), args.lse,
                                  ValueRange{batchIdx, head, row});
        });
  }

  /// The split merge's groups of threads (headDim / 4 each, one per quad of
  /// D) and the splits each thread takes at most.
  int64_t mergeGroups() const {
    return std::max<int64_t>(32 * warps / (headDim / 4), 1);
  }
  int64_t mergeSplitsPerThread() const {
    return llvm::divideCeil(tensor_core::kMaxKeySplits, mergeGroups());
  }
  /// x where it is finite or NaN, else `otherwise` (an lse of -inf).
  Value finiteOr(Value x, Value otherwise) {
    return select(
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, x, negInf()),
        otherwise, x);
  }

  /// S = Q K^T against the key tile at n0 held in `keyTile` (masked when
  /// `keyHi` is set, where `maskWhen` holds when that is set) and the
  /// online-softmax step: returns P in the S registers, with O and the row
  /// statistics rescaled.
  SmallVector<SmallVector<Value, 4>>
  softmaxTile(const Variant &variant, const Dims &dims, const State &state,
              Value scaleLog2, ArrayRef<Value> rowOf, Value n0, Value keyHi,
              Value maskWhen, Value keyTile, int64_t tileKeys = 0) {
    if (!tileKeys)
      tileKeys = blockN;
    // S = Q K^T: tileKeys / 8 accumulator tiles of 16 x 8.
    int64_t nTiles = tileKeys / 8;
    SmallVector<SmallVector<Value, 4>> s = zeroTiles(nTiles);
    if (queries)
      mmaRows([&](int64_t kk) { return fragA(queries, queriesRow0, kk); },
              keyTile, tileKeys, s);
    else
      mmaRows(qFrag, keyTile, tileKeys, s);

    onlineSoftmax(variant, dims, state, scaleLog2, rowOf, n0, keyHi, s,
                  /*deferredAlpha=*/nullptr, maskWhen);
    return s;
  }

  /// Key phase `p` with two K/V stages: `keys` and `values` hold two tiles
  /// each, tile i of the phase in slot i % 2. The copies of tile i + 2 go
  /// out once every warp is done with tile i, so one tile's copies are in
  /// flight while another computes. Each step commits one group (empty
  /// past the phase), so "all but the newest group landed" always means
  /// "this tile landed".
  ///
  /// A paged cache's block-table entries join that pipeline through
  /// pageRing: tile i + 4's entries are copied with tile i + 2's rows, so
  /// they have landed two steps later, when tile i + 4's rows go out. (A
  /// table load issued one step ahead, in registers, did not return within
  /// a decode step's short math: each copy waited for it, and paged decode
  /// ran at half the contiguous rate.)
  void emitPipelinedPhase(const Variant &variant, const ForwardArgs &args,
                          const Dims &dims, const State &state,
                          Value scaleLog2, ArrayRef<Value> rowOf,
                          const KeyPhase &p) {
    auto slotOf = [&](Value tile, Value slot) {
      return tileSlice(tile, mul(slot, idx(blockN)), blockN);
    };
    // The ring slot of the phase's tile at `start`.
    auto ringSlotOf = [&](Value start) {
      return remi(divi(sub(start, p.lo), blockN), tensor_core::kPageRingTiles);
    };
    // The block table as one unit-stride row, which cp.async reads entry by
    // entry whatever the table's strides.
    Value table, tableStrides[2];
    if (pageRing) {
      auto meta = memref::ExtractStridedMetadataOp::create(b, dims.blockTable);
      tableStrides[0] = meta.getStrides()[0];
      tableStrides[1] = meta.getStrides()[1];
      Value extent =
          add(add(mul(sub(meta.getSizes()[0], idx(1)), tableStrides[0]),
                  mul(sub(meta.getSizes()[1], idx(1)), tableStrides[1])),
              idx(1));
      auto flatType = MemRefType::get(
          {ShapedType::kDynamic}, b.getI32Type(),
          StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}));
      table = memref::ReinterpretCastOp::create(
          b, flatType, meta.getBaseBuffer(), OpFoldResult(meta.getOffset()),
          ArrayRef<OpFoldResult>{extent},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    }
    // The entries of the tile at `start`, one per row (rows past the keys
    // clamp to the last), copied into its ring slot; left uncommitted.
    auto copyPageEntries = [&](Value start) {
      auto inPhase = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, start, p.hi), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inPhase.thenBlock());
      Value ringSlot = ringSlotOf(start);
      loop(tid, idx(blockN), idx(32 * warps), [&](Value row) {
        Value key = min(add(start, row), sub(dims.sk, idx(1)));
        Value entry = arith::DivUIOp::create(b, key, dims.pageSize);
        Value at =
            add(mul(batchIdx, tableStrides[0]), mul(entry, tableStrides[1]));
        nvgpu::DeviceAsyncCopyOp::create(
            b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), pageRing,
            ValueRange{ringSlot, row}, table, ValueRange{at}, b.getIndexAttr(1),
            Value(), UnitAttr());
      });
    };
    // The K and V rows of the tile at `start` into K/V slot `slot`, a paged
    // cache's read through its entries in the ring (`fromRing`) or looked
    // up now; with `entriesAt`, the entries of the tile there go out in the
    // same group.
    auto copyKeysAndValues = [&](Value start, Value slot, bool fromRing,
                                 Value entriesAt) {
      auto inPhase = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, start, p.hi), false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(inPhase.thenBlock());
        TileRows rows = dims.blockTable && !fromRing
                            ? lookUpPages(blockN, start, dims.sk, dims)
                            : TileRows{blockN, start, dims.sk, {}};
        if (fromRing) {
          rows.pageRing = pageRing;
          rows.pageRingSlot = ringSlotOf(start);
        }
        copyTileRows(args.k, slotOf(keys, slot), kvHead, rows, &dims,
                     args.kNew);
        copyTileRows(args.v, slotOf(values, slot), kvHead, rows, &dims,
                     args.vNew);
      }
      if (entriesAt)
        copyPageEntries(entriesAt);
      NVVM::CpAsyncCommitGroupOp::create(b);
    };
    // Tiles 0 and 1 look their entries up themselves; tiles 2 and 3's
    // entries ride with them.
    for (int64_t i : {0, 1})
      copyKeysAndValues(add(p.lo, idx(i * blockN)), idx(i), /*fromRing=*/false,
                        pageRing ? add(p.lo, idx((i + 2) * blockN)) : Value());
    phaseTiles(p, blockN, [&](Value n0, bool masked, Value maskWhen) {
      Value slot = remi(divi(sub(n0, p.lo), blockN), 2);
      Value next = add(n0, idx(2 * blockN));
      NVVM::CpAsyncWaitGroupOp::create(b, 1);
      gpu::BarrierOp::create(b); // tile n0 (and tile n0 + 2's entries) landed
      Value keyHi = masked ? p.keyHi : Value();
      {
        OpBuilder::InsertionGuard guard(b);
        if (keySplit) {
          // This warp's keys of the tile, against warp 0's rows.
          auto shares = scf::IfOp::create(b, keySplit, /*withElseRegion=*/true);
          b.setInsertionPointToStart(shares.thenBlock());
          Value first = mul(warp, idx(keysPerWarp()));
          auto mine = [&](Value tile) {
            return tileSlice(tile, first, keysPerWarp());
          };
          SmallVector<SmallVector<Value, 4>> s = softmaxTile(
              variant, dims, state, scaleLog2, rowOf, add(n0, first), keyHi,
              maskWhen, mine(slotOf(keys, slot)), keysPerWarp());
          mmaCols(s, mine(slotOf(values, slot)), keysPerWarp(), state.out);
          b.setInsertionPointToStart(shares.elseBlock());
        }
        if (warpHasRows)
          b.setInsertionPointToStart(
              scf::IfOp::create(b, warpHasRows, false).thenBlock());
        SmallVector<SmallVector<Value, 4>> s =
            softmaxTile(variant, dims, state, scaleLog2, rowOf, n0, keyHi,
                        maskWhen, slotOf(keys, slot));
        mmaCols(s, slotOf(values, slot), blockN, state.out);
      }
      gpu::BarrierOp::create(b); // every warp is done with the slot
      copyKeysAndValues(next, slot, bool(pageRing),
                        pageRing ? add(n0, idx(4 * blockN)) : Value());
    });
  }

  /// One key tile [n0, n0 + blockN): K is in (or arriving in) `keys`.
  /// `keyHi` is set on boundary tiles, whose scores are predicated (where
  /// `maskWhen` holds, when that is set).
  void emitTile(const Variant &variant, const ForwardArgs &args,
                const Dims &dims, const State &state, Value scaleLog2,
                ArrayRef<Value> rowOf, Value n0, Value keyHi, Value maskWhen,
                Value phaseHi) {
    waitTiles(); // K(n0) landed; every warp is done with V of the last tile
    loadTile(args.v, values, n0, dims.sk, kvHead, &dims, args.vNew);
    SmallVector<SmallVector<Value, 4>> s = softmaxTile(
        variant, dims, state, scaleLog2, rowOf, n0, keyHi, maskWhen, keys);
    waitTiles(); // V(n0) landed; every warp is done with K(n0)
    Value next = add(n0, idx(blockN));
    auto more =
        scf::IfOp::create(b, cmp(arith::CmpIPredicate::slt, next, phaseHi),
                          false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(more.thenBlock());
      loadTile(args.k, keys, next, dims.sk, kvHead, &dims, args.kNew);
    }

    // O += P V, P taken from the S registers.
    mmaCols(s, values, blockN, state.out);
  }

  void emitDkDvBody(const Variant &variant, const GradArgs &args,
                    const Dims &dims, Value keyTiles, gpu::LaunchOp launch,
                    ArrayRef<Value> tiles) {
    Value kTile = tiles[0], vTile = tiles[1], qTile = tiles[2],
          dOTile = tiles[3];
    Value n0 =
        mul(keyBlockTile(dims, keyTiles, launch.getBlockIds().x), idx(blockN));
    Value cols = min(idx(blockN), sub(dims.sk, n0));
    Value warpKey = mul(warp, idx(16));
    std::array<Value, 2> keyOf = laneRows(add(n0, warpKey));
    Value scale = scoreScale(variant, idx(headDim));
    Value scaleLog2 = toBase2(scale);

    loadTile(args.k, kTile, n0, dims.sk, kvHead);
    loadTile(args.v, vTile, n0, dims.sk, kvHead);
    Value dk = zeroState(), dv = zeroState();
    loop(dims.group, [&](Value member) {
      Value head = add(mul(kvHead, dims.group), member);
      queryTiles(variant, dims, n0, cols, queryRows,
                 [&](Value m0, bool masked) {
        stageTiles({args.q, args.dO}, {qTile, dOTile}, m0, dims.sq, head);
        // S^T = K Q^T and dP^T = V dO^T: this warp's 16 keys x queryRows.
        int64_t nTiles = queryRows / 8;
        SmallVector<SmallVector<Value, 4>> s = zeroTiles(nTiles),
                                           dp = zeroTiles(nTiles);
        SmallVector<SmallVector<Value, 4>> kFrag, vFrag;
        for (int64_t kk = 0; kk < headDim / 16; ++kk) {
          kFrag.push_back(fragA(kTile, warpKey, kk));
          vFrag.push_back(fragA(vTile, warpKey, kk));
        }
        mmaRows(kFrag, qTile, queryRows, s);
        mmaRows(vFrag, dOTile, queryRows, dp);
        keyMajorGrads(variant, dims, args, head, m0, masked, keyOf,
                      scaleLog2, s, dp);
        // dV += P^T dO, dK += dS^T Q (scaled at the end).
        mmaCols(s, dOTile, queryRows, dv);
        mmaCols(dp, qTile, queryRows, dk);
      });
    });
    Value one = flt(1.0);
    storeRows(dk, {scale, scale}, args.dk, kvHead, keyOf, dims.sk);
    storeRows(dv, {one, one}, args.dv, kvHead, keyOf, dims.sk);
  }

  void emitDqBody(const Variant &variant, const GradArgs &args,
                  const Dims &dims, Value queryTiles, gpu::LaunchOp launch,
                  ArrayRef<Value> tiles) {
    Value kTile = tiles[0], vTile = tiles[1];
    // The forward's order: the longest causal tiles first.
    QueryBlock block = queryBlock(variant, dims, queryTiles, launch, kBlockM);
    Value head = block.head, m0 = block.m0, rows = block.rows;
    std::array<Value, 2> rowOf = block.rowOf;
    Value scale = scoreScale(variant, idx(headDim));
    Value scaleLog2 = toBase2(scale);

    SmallVector<SmallVector<Value, 4>> qFrags =
        rowFragments(args.q, head, rowOf, dims.sq);
    SmallVector<SmallVector<Value, 4>> dOFrags =
        rowFragments(args.dO, head, rowOf, dims.sq);
    LaneRowStatistics stats = laneRowStatistics(args, dims, head, rowOf);
    Value dq = zeroState();
    keyTiles(variant, dims, m0, rows, [&](Value n0, bool masked,
                                          Value keyHi) {
      stageTiles({args.k, args.v}, {kTile, vTile}, n0, dims.sk, kvHead);
      int64_t nTiles = blockN / 8;
      SmallVector<SmallVector<Value, 4>> s = zeroTiles(nTiles),
                                         dp = zeroTiles(nTiles);
      mmaRows(qFrags, kTile, blockN, s);
      mmaRows(dOFrags, vTile, blockN, dp);
      queryMajorGrads(variant, dims, rowOf, n0, masked ? keyHi : Value(),
                      stats.lse2, stats.rowDot, scaleLog2, s, dp);
      // dQ += dS K (scaled at the end).
      mmaCols(dp, kTile, blockN, dq);
    });
    storeRows(dq, {scale, scale}, args.dq, head, rowOf, dims.sq);
  }
};

} // namespace

std::unique_ptr<MmaSyncKernels>
fa::tensor_core::createMmaSyncKernels(ImplicitLocOpBuilder &b, Type element,
                                      int64_t headDim, KernelShape shape,
                                      bool allowTf32) {
  return std::make_unique<MmaSyncEmitter>(b, element, headDim, shape,
                                          allowTf32);
}
