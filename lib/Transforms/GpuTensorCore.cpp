//===- GpuTensorCore.cpp - Attention on the tensor cores ------------------===//
//
// Gives each f16/bf16/f32 attention entry of fa-tile warp-level kernels
// (mma.sync m16n8k16; m16n8k8 tf32 for f32; ldmatrix, cp.async) for the
// head dims and layouts
// they support, dispatched at run time in front of the scalar tile loops,
// which stay as the path for every other shape: the forward, and the
// backward's dK/dV and dQ loops. The variant's mask comes from
// TileBuilder's key and query phases, exactly as in fa-tile.
//
// Fragment layouts (PTX ISA, mma.m16n8k16, "groupID" g = lane / 4,
// "threadID_in_group" t = lane % 4):
//   A (16x16, row): a0 = (g, 2t..2t+1), a1 = (g+8, 2t..), a2 = (g, 2t+8..),
//                   a3 = (g+8, 2t+8..)
//   B (16x8, col):  b0 = (k 2t..2t+1, n g), b1 = (k 2t+8.., n g)
//   C (16x8):       c0,c1 = (g, 2t..2t+1), c2,c3 = (g+8, 2t..2t+1)
// so the S accumulators of two neighbouring 8-key tiles are exactly the A
// fragment of P for the next MMA, and each thread owns rows g and g+8.
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

#include "TileBuilder.h"

#include "fa/Dialect/FA/FAOps.h"
#include "fa/Transforms/Passes.h"
#include "fa/Transforms/TensorCoreLimits.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <array>

namespace fa {
#define GEN_PASS_DEF_FAGPUTENSORCORE
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;
using namespace fa;

namespace {

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
  int64_t queryRows = 0;
  /// The forward's K/V tiles in shared memory at once (1 or 2).
  int64_t kvStages = 1;
};

/// Operands of a forward entry: q, k, v[, sinks], o, lse.
struct ForwardArgs {
  Value q, k, v, sinks, o, lse;
};

/// Operands of a backward entry the kernels use, and fa-tile's D buffer.
struct GradArgs {
  Value q, k, v, lse, dO, dq, dk, dv, rowDot;
};

class KernelEmitter : public TileBuilder {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
                KernelShape shape, bool allowTf32)
      : TileBuilder(b, b.getF32Type(), shape.blockN), element(element),
        headDim(headDim), warps(shape.warps), queryRows(shape.queryRows),
        kvStages(shape.kvStages), splitF32(!allowTf32) {}

  /// Whether `memref` may take the fast path: unit stride on D, the other
  /// strides multiples of 16 bytes and a 16-byte aligned start (cp.async
  /// and ldmatrix move 16 bytes; stores move 2 elements).
  Value isVectorFriendly(Value memref) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
    Value ok = cmp(arith::CmpIPredicate::eq, meta.getStrides()[3], idx(1));
    auto both = [&](Value c) { ok = arith::AndIOp::create(b, ok, c); };
    for (int64_t d = 0; d < 3; ++d)
      both(cmp(arith::CmpIPredicate::eq,
               remi(meta.getStrides()[d], chunkElements()), idx(0)));
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
    Value start = add(base, mul(meta.getOffset(), idx(elementBytes())));
    both(cmp(arith::CmpIPredicate::eq, arith::RemUIOp::create(b, start, idx(16)),
             idx(0)));
    return ok;
  }

  /// `memref` with its unit innermost stride in the type, which vector
  /// loads and stores, cp.async and ldmatrix need to see.
  Value withUnitStride(Value memref) {
    auto type = cast<MemRefType>(memref.getType());
    int64_t dyn = ShapedType::kDynamic;
    auto layout = StridedLayoutAttr::get(b.getContext(), dyn,
                                         {dyn, dyn, dyn, 1});
    auto unitType = MemRefType::get(type.getShape(), type.getElementType(),
                                    layout);
    auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
    SmallVector<OpFoldResult> sizes;
    for (auto [size, value] : llvm::zip(type.getShape(), meta.getSizes()))
      sizes.push_back(ShapedType::isDynamic(size)
                          ? OpFoldResult(value)
                          : OpFoldResult(b.getIndexAttr(size)));
    SmallVector<OpFoldResult> strides(meta.getStrides().begin(),
                                      meta.getStrides().begin() + 3);
    strides.push_back(b.getIndexAttr(1));
    return memref::ReinterpretCastOp::create(b, unitType, memref,
                                             OpFoldResult(meta.getOffset()),
                                             sizes, strides);
  }

  /// Launches the forward kernel for this head dim; outlining names its
  /// module and function `kernelName`.
  void emitForward(const Variant &variant, ForwardArgs args,
                   StringRef kernelName) {
    for (Value *m : {&args.q, &args.k, &args.v, &args.o})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    Value tiles = ceilDiv(dims.sq, 16 * warps);
    launch({tiles, dims.hq, dims.batch},
           {kvStages * blockN, kvStages * blockN}, kernelName,
           [&](gpu::LaunchOp launch, ArrayRef<Value> shared) {
             emitBody(variant, args, dims, tiles, launch, shared);
           });
  }

  /// Launches the dK/dV kernel: a block per (key tile, kv head, batch),
  /// each warp owning 16 keys, visiting the query tiles of every query head
  /// of its group.
  void emitDkDv(const Variant &variant, GradArgs args, StringRef kernelName) {
    for (Value *m : {&args.q, &args.k, &args.v, &args.dO, &args.dk, &args.dv})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    launch({ceilDiv(dims.sk, blockN), dims.hkv, dims.batch},
           {blockN, blockN, queryRows, queryRows}, kernelName,
           [&](gpu::LaunchOp launch, ArrayRef<Value> shared) {
             emitDkDvBody(variant, args, dims, launch, shared);
           });
  }

  /// Launches the dQ kernel: a block per (query tile, query head, batch),
  /// visiting the key tiles of the forward.
  void emitDq(const Variant &variant, GradArgs args, StringRef kernelName) {
    for (Value *m : {&args.q, &args.k, &args.v, &args.dO, &args.dq})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    launch({ceilDiv(dims.sq, kBlockM), dims.hq, dims.batch}, {blockN, blockN},
           kernelName, [&](gpu::LaunchOp launch, ArrayRef<Value> shared) {
             emitDqBody(variant, args, dims, launch, shared);
           });
  }

private:
  Type element;
  int64_t headDim;
  /// Warps per block; each owns 16 rows (or keys).
  int64_t warps;
  /// Query rows per shared Q/dO tile of the dK/dV kernel.
  int64_t queryRows;
  /// The forward's K/V stages.
  int64_t kvStages;
  /// f32 products as three tf32 MMAs on hi/lo halves (else one).
  bool splitF32;
  /// The forward's shared K and V tiles.
  Value keys, values;
  // Per-thread values, set up at the top of the kernel.
  Value tid, warp, lane, quadRank, quadTid, batchIdx, kvHead;
  Value keyLoadRow, keyLoadChunk, valueLoadRow, valueLoadChunk, swizzle;
  /// Q's A fragments, per 16-wide step of D.
  SmallVector<SmallVector<Value, 4>> qFrag;

  /// A gpu.launch of `warps` warps per block over `grid` with one shared tile of
  /// rows x headDim elements per entry of `tileRows`, named `kernelName`;
  /// `body` fills it with the per-thread values set up and the tiles. Tiles
  /// within the 48 KiB a block gets without asking are workgroup
  /// attributions; beyond that, views into dynamic shared memory, whose
  /// size the launch passes (the runtime raises the kernel's limit).
  void launch(ArrayRef<Value> grid, ArrayRef<int64_t> tileRows,
              StringRef kernelName,
              llvm::function_ref<void(gpu::LaunchOp, ArrayRef<Value>)> body) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    SmallVector<Type> tileTypes;
    int64_t bytes = 0;
    for (int64_t rows : tileRows) {
      tileTypes.push_back(
          MemRefType::get({rows, headDim}, element, AffineMap(), workgroup));
      bytes += rows * headDim * elementBytes();
    }
    bool dynamic = bytes > tensor_core::kStaticSharedBytes;
    Value one = idx(1);
    auto name = FlatSymbolRefAttr::get(b.getContext(), kernelName);
    Value dynamicBytes =
        dynamic ? arith::ConstantIntOp::create(b, b.getI32Type(), bytes)
                : Value();
    auto launch = gpu::LaunchOp::create(
        b, grid[0], grid[1], grid[2], idx(32 * warps), one, one, dynamicBytes,
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
        dynamic ? ArrayRef<Type>() : ArrayRef<Type>(tileTypes),
        /*privateAttributions=*/{}, /*clusterSizeX=*/nullptr,
        /*clusterSizeY=*/nullptr, /*clusterSizeZ=*/nullptr, name, name);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    SmallVector<Value> tiles(launch.getWorkgroupAttributions());
    if (dynamic) {
      Value base = gpu::DynamicSharedMemoryOp::create(
          b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             AffineMap(), workgroup));
      int64_t offset = 0;
      for (Type type : tileTypes) {
        tiles.push_back(memref::ViewOp::create(b, type, base, idx(offset),
                                               ValueRange{}));
        offset += cast<MemRefType>(type).getNumElements() * elementBytes();
      }
    }
    tid = launch.getThreadIds().x;
    warp = divi(tid, 32);
    lane = remi(tid, 32);
    quadRank = divi(lane, 4); // g
    quadTid = remi(lane, 4);  // t
    // ldmatrix row addresses: lane L feeds row L % 8 of matrix L / 8.
    swizzle = remi(lane, 8);
    Value matrix = divi(lane, 8);
    keyLoadRow = add(mul(divi(matrix, 2), idx(8)), swizzle);
    keyLoadChunk = remi(matrix, 2);
    valueLoadRow = add(mul(remi(matrix, 2), idx(8)), swizzle);
    valueLoadChunk = divi(matrix, 2);
    batchIdx = launch.getBlockIds().z;
    body(launch, tiles);
    gpu::TerminatorOp::create(b);
  }

  /// The two rows this lane owns among the warp's 16 starting at `first`:
  /// first + g and first + g + 8.
  std::array<Value, 2> laneRows(Value first) {
    return {add(first, quadRank), add(first, add(quadRank, idx(8)))};
  }
  /// `x` (a natural-log-domain value) times log2 e.
  Value toBase2(Value x) { return fmul(x, flt(kLog2E)); }
  /// Whether accumulator element (nt, e) of the key tile at n0 survives the
  /// mask on a boundary tile: rows `rowOf`, keys below `keyHi`.
  Value keyTileMask(const Variant &variant, const Dims &dims,
                    ArrayRef<Value> rowOf, Value n0, int64_t nt, int64_t e,
                    Value keyHi) {
    Value j = add(add(n0, idx(nt * 8 + e % 2)), mul(quadTid, idx(2)));
    return arith::AndIOp::create(b, allowed(variant, dims, rowOf[e / 2], j),
                                 cmp(arith::CmpIPredicate::slt, j, keyHi));
  }
  /// The forward's lse in base 2 and D = rowsum(dO * o) of query row `row`
  /// of this block's head.
  std::pair<Value, Value> rowStatistics(const GradArgs &args, Value head,
                                        Value row) {
    Value lse = memref::LoadOp::create(b, args.lse,
                                       ValueRange{batchIdx, head, row});
    return {toBase2(lse),
            memref::LoadOp::create(b, args.rowDot,
                                   ValueRange{batchIdx, head, row})};
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
      return ldmatrix(tile, row, mul(xori(chunk, swizzle), idx(8)),
                      transpose);
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
  /// Where column `col` of row `row` of a shared tile is: 16-byte chunk c
  /// of row r lands at chunk c ^ (r % 8), so the 8 rows an 8x8 matrix
  /// spans sit in distinct banks.
  Value swizzledColumn(Value row, Value col) {
    int64_t chunk = chunkElements();
    return add(mul(xori(divi(col, chunk), remi(row, 8)), idx(chunk)),
               remi(col, chunk));
  }
  /// The A fragment of P (or dS) for k-step kk from the accumulators of
  /// n-tiles 2kk and 2kk+1.
  SmallVector<Value, 4> fragAFromAcc(ArrayRef<SmallVector<Value, 4>> acc,
                                     int64_t kk) {
    return {pack(acc[2 * kk][0], acc[2 * kk][1]),
            pack(acc[2 * kk][2], acc[2 * kk][3]),
            pack(acc[2 * kk + 1][0], acc[2 * kk + 1][1]),
            pack(acc[2 * kk + 1][2], acc[2 * kk + 1][3])};
  }
  /// A fragments of rows `rowOf` (g, g+8 of this warp's 16), read once from
  /// global memory; rows past `rowsTotal` read its last row (finite values
  /// whose results are never stored).
  SmallVector<SmallVector<Value, 4>> rowFragments(Value memref, Value head,
                                                  ArrayRef<Value> rowOf,
                                                  Value rowsTotal) {
    Value lastRow = sub(rowsTotal, idx(1));
    SmallVector<SmallVector<Value, 4>> frags(headDim / 16);
    for (int64_t kk = 0; kk < headDim / 16; ++kk)
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t r = 0; r < 2; ++r) {
          Value col = add(idx(kk * 16 + half * 8), mul(quadTid, idx(2)));
          frags[kk].push_back(loadPair(
              memref, {batchIdx, head, min(rowOf[r], lastRow), col}));
        }
    return frags;
  }
  /// acc[nt] += a * B(nt) over n-tiles of `rowsB` rows of a [n][k] tile.
  void mmaRows(ArrayRef<SmallVector<Value, 4>> a, Value tile, int64_t rowsB,
               MutableArrayRef<SmallVector<Value, 4>> acc) {
    for (int64_t kk = 0; kk < headDim / 16; ++kk)
      for (int64_t np = 0; np < rowsB / 16; ++np) {
        SmallVector<Value, 4> frag = fragBFromRows(tile, np, kk);
        mma(a[kk], {frag[0], frag[1]}, acc[2 * np]);
        mma(a[kk], {frag[2], frag[3]}, acc[2 * np + 1]);
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
  /// Register state of headDim / 8 accumulator tiles, zeroed.
  Value zeroState() {
    Value state = memref::AllocaOp::create(
        b, MemRefType::get({headDim / 2}, b.getF32Type()));
    for (int64_t i = 0; i < headDim / 2; ++i)
      storeState(flt(0.0), state, i);
    return state;
  }
  /// Stores rows `rowOf` of register state, row r times `factor[r]`, into
  /// memref[batch, head, row, :], rows below `rowsTotal` only.
  void storeRows(Value state, ArrayRef<Value> factor, Value memref,
                 Value head, ArrayRef<Value> rowOf, Value rowsTotal) {
    auto pair = VectorType::get({2}, element);
    for (int64_t r = 0; r < 2; ++r) {
      auto inRows = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, rowOf[r], rowsTotal), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inRows.thenBlock());
      for (int64_t dt = 0; dt < headDim / 8; ++dt) {
        Value lo = fmul(loadState(state, dt * 4 + 2 * r), factor[r]);
        Value hi = fmul(loadState(state, dt * 4 + 2 * r + 1), factor[r]);
        Value v = vector::FromElementsOp::create(
            b, pair, ValueRange{toElement(lo), toElement(hi)});
        Value col = add(idx(dt * 8), mul(quadTid, idx(2)));
        vector::StoreOp::create(b, v, memref,
                                ValueRange{batchIdx, head, rowOf[r], col},
                                /*nontemporal=*/false,
                                llvm::Align(2 * elementBytes()));
      }
    }
  }

  int64_t elementBytes() const {
    return element.getIntOrFloatBitWidth() / 8;
  }
  /// Elements per 16-byte chunk: the unit of cp.async and of the swizzle.
  int64_t chunkElements() const { return 16 / elementBytes(); }
  /// An f32 value in the element type.
  Value toElement(Value x) {
    return element.isF32() ? x : arith::TruncFOp::create(b, element, x);
  }
  NVVM::MMATypes mmaType() const {
    return element.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  }
  Value fmaxnum(Value x, Value y) {
    return arith::MaxNumFOp::create(b, x, y);
  }

  /// Two f32 values rounded to the element type, as an MMA operand
  /// register.
  Value pack(Value lo, Value hi) {
    auto pair = VectorType::get({2}, element);
    return asOperand(vector::FromElementsOp::create(
        b, pair, ValueRange{toElement(lo), toElement(hi)}));
  }
  /// NVVM's mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs as
  /// the i32 that holds them; f32 pairs stay vector<2xf32> until mma()
  /// splits them into tf32 registers.
  Value asOperand(Value pair) {
    if (!element.isBF16())
      return pair;
    return LLVM::BitcastOp::create(b, b.getI32Type(), pair);
  }
  /// Two elements of `memref[indices...]` as an MMA operand register.
  Value loadPair(Value memref, ValueRange indices) {
    auto pair = VectorType::get({2}, element);
    return asOperand(vector::LoadOp::create(b, pair, memref, indices,
                                            /*nontemporal=*/false,
                                            llvm::Align(2 * elementBytes())));
  }
  /// Four 8x8 matrices from shared memory; each lane gives one row address.
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
  /// The reduction of `x` over the 4 lanes that share a row.
  Value quadReduce(Value x, llvm::function_ref<Value(Value, Value)> op) {
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, x, offset, 32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = op(x, other);
    }
    return x;
  }
  Value xori(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }
  Value divi(Value x, int64_t d) {
    return arith::DivUIOp::create(b, x, idx(d));
  }
  Value remi(Value x, int64_t d) {
    return arith::RemUIOp::create(b, x, idx(d));
  }

  /// Issues the cp.async copies of rows [start, start + rows) of
  /// source[batch, head] into `tile` (rows past `limit` are zero filled, so
  /// a partial last tile contributes nothing) and commits them as one
  /// group. Chunk c of row r lands at chunk c ^ (r % 8).
  void loadTile(Value source, Value tile, Value start, Value limit,
                Value head) {
    copyTile(source, tile, start, limit, head);
    NVVM::CpAsyncCommitGroupOp::create(b);
  }
  /// loadTile's copies, left uncommitted.
  void copyTile(Value source, Value tile, Value start, Value limit,
                Value head) {
    int64_t rows = cast<MemRefType>(tile.getType()).getDimSize(0);
    int64_t chunkSize = chunkElements();
    int64_t chunksPerRow = headDim / chunkSize;
    int64_t rowsPerPass = 32 * warps / chunksPerRow;
    Value chunk = remi(tid, chunksPerRow);
    Value firstRow = divi(tid, chunksPerRow);
    Value lastRow = sub(limit, idx(1));
    for (int64_t pass = 0; pass * rowsPerPass < rows; ++pass) {
      Value row = add(firstRow, idx(pass * rowsPerPass));
      // A tile shorter than one pass leaves the surplus threads idle.
      std::optional<OpBuilder::InsertionGuard> guard;
      if ((pass + 1) * rowsPerPass > rows) {
        auto inTile = scf::IfOp::create(
            b, cmp(arith::CmpIPredicate::slt, row, idx(rows)), false);
        guard.emplace(b);
        b.setInsertionPointToStart(inTile.thenBlock());
      }
      Value srcRow = add(start, row);
      Value inRange = cmp(arith::CmpIPredicate::slt, srcRow, limit);
      Value srcElements = select(inRange, idx(chunkSize), idx(0));
      Value dstCol = mul(xori(chunk, remi(row, 8)), idx(chunkSize));
      nvgpu::DeviceAsyncCopyOp::create(
          b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tile,
          ValueRange{row, dstCol}, source,
          ValueRange{batchIdx, head, min(srcRow, lastRow),
                     mul(chunk, idx(chunkSize))},
          b.getIndexAttr(chunkSize), srcElements, b.getUnitAttr());
    }
  }
  /// Once every warp is done with `tiles`, refills them with rows
  /// [start, start + rows) of `sources` and waits for the copies.
  void stageTiles(ArrayRef<Value> sources, ArrayRef<Value> tiles, Value start,
                  Value limit, Value head) {
    gpu::BarrierOp::create(b);
    for (auto [source, tile] : llvm::zip(sources, tiles))
      loadTile(source, tile, start, limit, head);
    waitTiles();
  }
  /// `nTiles` zeroed 16x8 f32 accumulator tiles (per thread: 4 values).
  SmallVector<SmallVector<Value, 4>> zeroTiles(int64_t nTiles) {
    return SmallVector<SmallVector<Value, 4>>(
        nTiles, SmallVector<Value, 4>(4, flt(0.0)));
  }
  /// Waits for every committed copy, then for every warp.
  void waitTiles() {
    NVVM::CpAsyncWaitGroupOp::create(b, 0);
    gpu::BarrierOp::create(b);
  }

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

  void emitBody(const Variant &variant, const ForwardArgs &args,
                const Dims &dims, Value tiles, gpu::LaunchOp launch,
                ArrayRef<Value> shared) {
    keys = shared[0];
    values = shared[1];
    gpu::KernelDim3 block = launch.getBlockIds();
    // Causal blocks with the most keys first: they finish last otherwise.
    Value tile = block.x;
    if (variant.causal)
      tile = sub(sub(tiles, idx(1)), block.x);
    Value head = block.y;
    kvHead = arith::DivUIOp::create(b, head, dims.group);
    Value m0 = mul(tile, idx(16 * warps));
    Value rows = min(idx(16 * warps), sub(dims.sq, m0));
    std::array<Value, 2> rowOf = laneRows(add(m0, mul(warp, idx(16))));
    Value scaleLog2 = toBase2(scoreScale(variant, idx(headDim)));

    // Q fragments, read once from global memory.
    qFrag = rowFragments(args.q, head, rowOf, dims.sq);

    State state;
    state.out = zeroState();
    state.stats = memref::AllocaOp::create(
        b, MemRefType::get({4}, b.getF32Type()));
    // A learnable sink starts each row at m = sink, l = 1 (one lane of the
    // quad holds the 1: l is summed over the quad at the end).
    Value mInit = negInf(), lInit = flt(0.0);
    if (args.sinks) {
      mInit = toBase2(memref::LoadOp::create(b, args.sinks, head));
      lInit = select(cmp(arith::CmpIPredicate::eq, quadTid, idx(0)),
                     flt(1.0), flt(0.0));
    }
    for (int64_t r = 0; r < 2; ++r) {
      storeState(mInit, state.stats, r);
      storeState(lInit, state.stats, 2 + r);
    }

    for (const KeyPhase &p : keyPhases(variant, dims, m0, rows)) {
      if (kvStages == 2) {
        emitPipelinedPhase(variant, args, dims, state, scaleLog2, rowOf, p);
        continue;
      }
      auto nonEmpty = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, p.lo, p.hi), false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nonEmpty.thenBlock());
        loadTile(args.k, keys, p.lo, dims.sk, kvHead);
      }
      phase(p.name, p.lo, p.hi, p.innerLo, p.innerHi, blockN,
            [&](Value n0, bool masked) {
              emitTile(variant, args, dims, state, scaleLog2, rowOf, n0,
                       masked ? p.keyHi : Value(), p.hi);
            });
    }

    // o = acc / l, lse = (m + log2 l) ln 2; empty rows: o = 0, lse = -inf.
    Value l[2], positive[2], inv[2];
    for (int64_t r = 0; r < 2; ++r) {
      l[r] = quadReduce(loadState(state.stats, 2 + r),
                        [&](Value x, Value y) { return fadd(x, y); });
      positive[r] =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l[r], flt(0.0));
      inv[r] = select(positive[r], arith::DivFOp::create(b, flt(1.0), l[r]),
                      flt(0.0));
    }
    storeRows(state.out, inv, args.o, head, rowOf, dims.sq);
    for (int64_t r = 0; r < 2; ++r) {
      Value writes = arith::AndIOp::create(
          b, cmp(arith::CmpIPredicate::slt, rowOf[r], dims.sq),
          cmp(arith::CmpIPredicate::eq, quadTid, idx(0)));
      auto writer = scf::IfOp::create(b, writes, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(writer.thenBlock());
      Value m = loadState(state.stats, r);
      Value lse = fmul(fadd(m, math::Log2Op::create(b, l[r])), flt(kLn2));
      memref::StoreOp::create(b, select(positive[r], lse, negInf()), args.lse,
                              ValueRange{batchIdx, head, rowOf[r]});
    }
  }

  /// S = Q K^T against the key tile at n0 held in `keyTile` (masked when
  /// `keyHi` is set) and the online-softmax step: returns P in the S
  /// registers, with O and the row statistics rescaled.
  SmallVector<SmallVector<Value, 4>>
  softmaxTile(const Variant &variant, const Dims &dims, const State &state,
              Value scaleLog2, ArrayRef<Value> rowOf, Value n0, Value keyHi,
              Value keyTile) {
    // S = Q K^T: blockN / 8 accumulator tiles of 16 x 8.
    int64_t nTiles = blockN / 8;
    SmallVector<SmallVector<Value, 4>> s = zeroTiles(nTiles);
    mmaRows(qFrag, keyTile, blockN, s);

    // The scale is positive (the verifier says so), so the row max commutes
    // with scaling: scores stay unscaled and exp2(s * scale - m) is one FMA
    // per element.
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t e = 0; e < 4; ++e) {
        if (keyHi)
          s[nt][e] =
              select(keyTileMask(variant, dims, rowOf, n0, nt, e, keyHi),
                     s[nt][e], negInf());
      }

    // Online softmax of rows g (e = 0, 1) and g + 8 (e = 2, 3).
    for (int64_t r = 0; r < 2; ++r) {
      Value rowMax = negInf();
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t e = 2 * r; e < 2 * r + 2; ++e)
          rowMax = fmaxnum(rowMax, s[nt][e]);
      rowMax = quadReduce(rowMax,
                          [&](Value x, Value y) { return fmaxnum(x, y); });
      rowMax = fmul(rowMax, scaleLog2);
      Value mOld = loadState(state.stats, r);
      Value mNew = fmaxnum(mOld, rowMax);
      // A row with nothing visible yet keeps m = -inf; subtract 0 then so
      // exp2(-inf - -inf) never makes a NaN.
      Value isEmpty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                            mNew, negInf());
      Value mSafe = select(isEmpty, flt(0.0), mNew);
      Value alpha = exp2(fsub(mOld, mSafe));
      Value sum = flt(0.0);
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t e = 2 * r; e < 2 * r + 2; ++e) {
          s[nt][e] = exp2(math::FmaOp::create(
              b, s[nt][e], scaleLog2, arith::NegFOp::create(b, mSafe)));
          sum = fadd(sum, s[nt][e]);
        }
      Value lOld = loadState(state.stats, 2 + r);
      storeState(fadd(fmul(alpha, lOld), sum), state.stats, 2 + r);
      storeState(mNew, state.stats, r);
      for (int64_t dt = 0; dt < headDim / 8; ++dt)
        for (int64_t e = 2 * r; e < 2 * r + 2; ++e)
          storeState(fmul(alpha, loadState(state.out, dt * 4 + e)), state.out,
                     dt * 4 + e);
    }

    return s;
  }

  /// Key phase `p` with two K/V stages: `keys` and `values` hold two tiles
  /// each, tile i of the phase in slot i % 2. The copies of tile i + 2 go
  /// out once every warp is done with tile i, so one tile's copies are in
  /// flight while another computes. Each step commits one group (empty
  /// past the phase), so "all but the newest group landed" always means
  /// "this tile landed".
  void emitPipelinedPhase(const Variant &variant, const ForwardArgs &args,
                          const Dims &dims, const State &state,
                          Value scaleLog2, ArrayRef<Value> rowOf,
                          const KeyPhase &p) {
    auto slotOf = [&](Value tile, Value slot) -> Value {
      SmallVector<OpFoldResult> offsets = {OpFoldResult(mul(slot, idx(blockN))),
                                           b.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes = {b.getIndexAttr(blockN),
                                         b.getIndexAttr(headDim)};
      SmallVector<OpFoldResult> strides = {b.getIndexAttr(1),
                                           b.getIndexAttr(1)};
      return memref::SubViewOp::create(b, tile, offsets, sizes, strides);
    };
    auto copyKeysAndValues = [&](Value start, Value slot) {
      auto inPhase = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, start, p.hi), false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(inPhase.thenBlock());
        copyTile(args.k, slotOf(keys, slot), start, dims.sk, kvHead);
        copyTile(args.v, slotOf(values, slot), start, dims.sk, kvHead);
      }
      NVVM::CpAsyncCommitGroupOp::create(b);
    };
    copyKeysAndValues(p.lo, idx(0));
    copyKeysAndValues(add(p.lo, idx(blockN)), idx(1));
    phase(p.name, p.lo, p.hi, p.innerLo, p.innerHi, blockN,
          [&](Value n0, bool masked) {
            Value slot = remi(divi(sub(n0, p.lo), blockN), 2);
            NVVM::CpAsyncWaitGroupOp::create(b, 1);
            gpu::BarrierOp::create(b); // tile n0 landed for every warp
            SmallVector<SmallVector<Value, 4>> s =
                softmaxTile(variant, dims, state, scaleLog2, rowOf, n0,
                            masked ? p.keyHi : Value(), slotOf(keys, slot));
            mmaCols(s, slotOf(values, slot), blockN, state.out);
            gpu::BarrierOp::create(b); // every warp is done with the slot
            copyKeysAndValues(add(n0, idx(2 * blockN)), slot);
          });
  }

  /// One key tile [n0, n0 + blockN): K is in (or arriving in) `keys`.
  /// `keyHi` is set on boundary tiles, whose scores are predicated.
  void emitTile(const Variant &variant, const ForwardArgs &args,
                const Dims &dims, const State &state, Value scaleLog2,
                ArrayRef<Value> rowOf, Value n0, Value keyHi, Value phaseHi) {
    waitTiles(); // K(n0) landed; every warp is done with V of the last tile
    loadTile(args.v, values, n0, dims.sk, kvHead);
    SmallVector<SmallVector<Value, 4>> s = softmaxTile(
        variant, dims, state, scaleLog2, rowOf, n0, keyHi, keys);
    waitTiles(); // V(n0) landed; every warp is done with K(n0)
    Value next = add(n0, idx(blockN));
    auto more =
        scf::IfOp::create(b, cmp(arith::CmpIPredicate::slt, next, phaseHi),
                          false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(more.thenBlock());
      loadTile(args.k, keys, next, dims.sk, kvHead);
    }

    // O += P V, P taken from the S registers.
    mmaCols(s, values, blockN, state.out);
  }


  //===--------------------------------------------------------------------===//
  // Backward. P = exp2(S * scale log2 e - lse log2 e) from the forward's
  // lse, dS = P (dP - D) with dP = dO V^T and D = rowsum(dO * o).
  //===--------------------------------------------------------------------===//

  /// P and dS of accumulator element (nt, e) of S and dP, given the lse (in
  /// base 2) and D of its query row; zero where `ok` is false.
  std::pair<Value, Value> probAndGrad(Value s, Value dp, Value scaleLog2,
                                      Value lse2, Value rowDot, Value ok) {
    Value p = exp2(math::FmaOp::create(b, s, scaleLog2,
                                       arith::NegFOp::create(b, lse2)));
    if (ok)
      p = select(ok, p, flt(0.0));
    return {p, fmul(p, fsub(dp, rowDot))};
  }

  void emitDkDvBody(const Variant &variant, const GradArgs &args,
                    const Dims &dims, gpu::LaunchOp launch,
                    ArrayRef<Value> tiles) {
    Value kTile = tiles[0], vTile = tiles[1], qTile = tiles[2],
          dOTile = tiles[3];
    Value kvh = launch.getBlockIds().y;
    Value n0 = mul(launch.getBlockIds().x, idx(blockN));
    Value cols = min(idx(blockN), sub(dims.sk, n0));
    Value warpKey = mul(warp, idx(16));
    std::array<Value, 2> keyOf = laneRows(add(n0, warpKey));
    Value scale = scoreScale(variant, idx(headDim));
    Value scaleLog2 = toBase2(scale);
    Value lastRow = sub(dims.sq, idx(1));

    loadTile(args.k, kTile, n0, dims.sk, kvh);
    loadTile(args.v, vTile, n0, dims.sk, kvh);
    Value dk = zeroState(), dv = zeroState();
    loop(dims.group, [&](Value member) {
      Value head = add(mul(kvh, dims.group), member);
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
        for (int64_t nt = 0; nt < nTiles; ++nt)
          for (int64_t col = 0; col < 2; ++col) {
            Value i = add(add(m0, idx(nt * 8 + col)), mul(quadTid, idx(2)));
            auto [lse2, rowDot] = rowStatistics(args, head, min(i, lastRow));
            for (int64_t half = 0; half < 2; ++half) {
              int64_t e = 2 * half + col;
              Value ok;
              if (masked)
                ok = arith::AndIOp::create(
                    b, allowed(variant, dims, i, keyOf[half]),
                    cmp(arith::CmpIPredicate::slt, i, dims.sq));
              std::tie(s[nt][e], dp[nt][e]) = probAndGrad(
                  s[nt][e], dp[nt][e], scaleLog2, lse2, rowDot, ok);
            }
          }
        // dV += P^T dO, dK += dS^T Q (scaled at the end).
        mmaCols(s, dOTile, queryRows, dv);
        mmaCols(dp, qTile, queryRows, dk);
      });
    });
    Value one = flt(1.0);
    storeRows(dk, {scale, scale}, args.dk, kvh, keyOf, dims.sk);
    storeRows(dv, {one, one}, args.dv, kvh, keyOf, dims.sk);
  }

  void emitDqBody(const Variant &variant, const GradArgs &args,
                  const Dims &dims, gpu::LaunchOp launch,
                  ArrayRef<Value> tiles) {
    Value kTile = tiles[0], vTile = tiles[1];
    Value head = launch.getBlockIds().y;
    kvHead = arith::DivUIOp::create(b, head, dims.group);
    Value m0 = mul(launch.getBlockIds().x, idx(kBlockM));
    Value rows = min(idx(kBlockM), sub(dims.sq, m0));
    std::array<Value, 2> rowOf = laneRows(add(m0, mul(warp, idx(16))));
    Value scale = scoreScale(variant, idx(headDim));
    Value scaleLog2 = toBase2(scale);
    Value lastRow = sub(dims.sq, idx(1));

    SmallVector<SmallVector<Value, 4>> qFrags =
        rowFragments(args.q, head, rowOf, dims.sq);
    SmallVector<SmallVector<Value, 4>> dOFrags =
        rowFragments(args.dO, head, rowOf, dims.sq);
    Value lse2[2], rowDot[2];
    for (int64_t r = 0; r < 2; ++r)
      std::tie(lse2[r], rowDot[r]) =
          rowStatistics(args, head, min(rowOf[r], lastRow));
    Value dq = zeroState();
    keyTiles(variant, dims, m0, rows, [&](Value n0, bool masked,
                                          Value keyHi) {
      stageTiles({args.k, args.v}, {kTile, vTile}, n0, dims.sk, kvHead);
      int64_t nTiles = blockN / 8;
      SmallVector<SmallVector<Value, 4>> s = zeroTiles(nTiles),
                                         dp = zeroTiles(nTiles);
      mmaRows(qFrags, kTile, blockN, s);
      mmaRows(dOFrags, vTile, blockN, dp);
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t e = 0; e < 4; ++e) {
          Value ok = masked ? keyTileMask(variant, dims, rowOf, n0, nt, e,
                                          keyHi)
                            : Value();
          std::tie(s[nt][e], dp[nt][e]) = probAndGrad(
              s[nt][e], dp[nt][e], scaleLog2, lse2[e / 2], rowDot[e / 2], ok);
        }
      // dQ += dS K (scaled at the end).
      mmaCols(dp, kTile, blockN, dq);
    });
    storeRows(dq, {scale, scale}, args.dq, head, rowOf, dims.sq);
  }
};

struct GpuTensorCore : fa::impl::FAGpuTensorCoreBase<GpuTensorCore> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    if (blockN < 16 || blockN % 16 != 0)
      return emitError(UnknownLoc::get(context))
             << "fa-gpu-tensor-core: block-n must be a positive multiple of "
                "16, got "
             << static_cast<int64_t>(blockN);
    if (sharedBytes < tensor_core::kStaticSharedBytes)
      return emitError(UnknownLoc::get(context))
             << "fa-gpu-tensor-core: shared-bytes must be at least "
             << tensor_core::kStaticSharedBytes << " (what every block has), got "
             << static_cast<int64_t>(sharedBytes);
    if (kvStages != 1 && kvStages != 2)
      return emitError(UnknownLoc::get(context))
             << "fa-gpu-tensor-core: kv-stages must be 1 or 2, got "
             << static_cast<int64_t>(kvStages);
    if (forwardWarps != 4 && forwardWarps != 8)
      return emitError(UnknownLoc::get(context))
             << "fa-gpu-tensor-core: forward-warps must be 4 or 8, got "
             << static_cast<int64_t>(forwardWarps);
    return success();
  }

  void runOnOperation() override {
    for (func::FuncOp fn : getOperation().getOps<func::FuncOp>()) {
      auto entry = fn->getAttrOfType<StringAttr>("fa.entry");
      std::optional<Variant> variant = Variant::fromEntry(fn);
      if (!entry || !variant)
        continue;
      Type element =
          cast<MemRefType>(fn.getArgumentTypes()[0]).getElementType();
      if (!element.isF16() && !element.isBF16() && !element.isF32())
        continue;
      if (entry.getValue() == "forward")
        specialiseForward(fn, *variant, element);
      else
        specialiseBackward(fn, *variant, element);
    }
  }

  using EmitKernel =
      llvm::function_ref<void(KernelEmitter &, StringRef kernelName)>;
  /// The tiles and warps of a kernel for a head dim and element size, or
  /// none when its tiles cannot fit the pass's shared-bytes.
  using PlanKernel = llvm::function_ref<std::optional<KernelShape>(
      int64_t headDim, int64_t elementBytes)>;

  /// Replaces the ops [first, last) of a block with `if (layoutOk and
  /// D == 64) <kernel 64> else if (layoutOk and D == 128) <kernel 128> else
  /// <the ops>`, built at `first`. Kernels are named <prefix>_d<D>; head
  /// dims `plan` gives no shape keep the ops.
  void dispatch(Operation *first, Operation *last, Value layoutOk, Value d,
                Type element, StringRef prefix, PlanKernel plan,
                EmitKernel emit) {
    ImplicitLocOpBuilder b(first->getLoc(), first);
    Block *block = first->getBlock();
    Block *fallback = nullptr;
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    for (int64_t headDim : tensor_core::kHeadDims) {
      std::optional<KernelShape> shape = plan(headDim, bytes);
      if (!shape)
        continue;
      Value here = arith::AndIOp::create(
          b, layoutOk,
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, d,
                                arith::ConstantIndexOp::create(b, headDim)));
      auto ifOp = scf::IfOp::create(b, here, /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        KernelEmitter emitter(b, element, headDim, *shape, allowTf32);
        emit(emitter, (prefix + "_d" + Twine(headDim)).str());
      }
      fallback = ifOp.elseBlock();
      b.setInsertionPointToStart(fallback);
    }
    if (!fallback)
      return; // no head dim fits: the ops stay as they are
    fallback->getOperations().splice(fallback->getTerminator()->getIterator(),
                                     block->getOperations(),
                                     first->getIterator(), last->getIterator());
  }

  /// Whether every one of `operands` suits the kernels, computed at `at`.
  Value layoutCheck(Operation *at, Type element, ArrayRef<Value> operands) {
    ImplicitLocOpBuilder b(at->getLoc(), at);
    KernelEmitter checks(b, element, /*headDim=*/0, KernelShape{blockN},
                         allowTf32);
    Value ok = checks.isVectorFriendly(operands[0]);
    for (Value operand : operands.drop_front())
      ok = arith::AndIOp::create(b, ok, checks.isVectorFriendly(operand));
    return ok;
  }

  /// A K/V tile of up to block-n keys, fewer where f32 tiles (or `stages`
  /// of them) would not fit.
  std::optional<KernelShape> keyTileShape(int64_t headDim, int64_t bytes,
                                          int64_t warps, int64_t stages = 1) {
    int64_t rows = tensor_core::fittingTileRows(blockN, headDim, bytes,
                                                sharedBytes / stages);
    if (!rows)
      return std::nullopt;
    return KernelShape{rows, warps, /*queryRows=*/0, stages};
  }

  /// The whole forward body becomes the fallback of the kernels.
  void specialiseForward(func::FuncOp fn, const Variant &variant,
                         Type element) {
    Block &body = fn.front();
    ValueRange a = body.getArguments();
    bool sinks = a.size() == 6;
    ForwardArgs args{a[0], a[1], a[2], sinks ? a[3] : Value(),
                     a[sinks ? 4 : 3], a[sinks ? 5 : 4]};
    Operation *first = &body.front();
    Value layoutOk = layoutCheck(first, element, {args.q, args.k, args.v,
                                                  args.o});
    ImplicitLocOpBuilder b(fn.getLoc(), first);
    Value d = memref::DimOp::create(b, args.q, 3);
    dispatch(first, body.getTerminator(), layoutOk, d, element,
             (fn.getSymName() + "_mma").str(),
             [&](int64_t headDim, int64_t bytes) {
               return keyTileShape(headDim, bytes, forwardWarps, kvStages);
             },
             [&](KernelEmitter &emitter, StringRef name) {
               emitter.emitForward(variant, args, name);
             });
  }

  /// fa-tile's dK/dV and dQ loops each become the fallback of kernels; the
  /// D preprocess and the dsinks reduction stay as they are.
  void specialiseBackward(func::FuncOp fn, const Variant &variant,
                          Type element) {
    Block &body = fn.front();
    ValueRange a = body.getArguments();
    bool sinks = a.size() == 11;
    unsigned out = sinks ? 7 : 6;
    GradArgs args{a[0], a[1], a[2], a[4], a[5], a[out], a[out + 1],
                  a[out + 2], Value()};
    Operation *dkdv = nullptr, *dq = nullptr;
    for (Operation &op : body) {
      auto name = op.getAttrOfType<StringAttr>(kLoopAttrName);
      if (!name)
        continue;
      if (name.getValue() == kRowDotLoopName)
        args.rowDot = op.getResult(0);
      else if (name.getValue() == kDkDvLoopName)
        dkdv = &op;
      else if (name.getValue() == kDqLoopName)
        dq = &op;
    }
    if (!args.rowDot || !dkdv || !dq)
      return; // not fa-tile's backward: leave it scalar
    Operation *first = &body.front();
    Value layoutOk =
        layoutCheck(first, element,
                    {args.q, args.k, args.v, args.dO, args.dq, args.dk,
                     args.dv});
    ImplicitLocOpBuilder b(fn.getLoc(), first);
    Value d = memref::DimOp::create(b, args.q, 3);
    std::string prefix = fn.getSymName().str();
    // dK/dV blocks own 16 keys per warp, whatever block-n is: 4 warps
    // where K, V and Q, dO tiles of at least 16 rows fit, else 2, with the
    // most query rows (up to 64) that fit beside them.
    auto dkdvShape = [&](int64_t headDim,
                         int64_t bytes) -> std::optional<KernelShape> {
      for (int64_t warps : {tensor_core::kDkDvWarps,
                            tensor_core::kDkDvWarps / 2})
        for (int64_t queryRows : {tensor_core::kDkDvQueryRows,
                                  tensor_core::kDkDvQueryRows / 2,
                                  tensor_core::kDkDvQueryRows / 4})
          if (tensor_core::tilesFit(16 * warps + queryRows, headDim, bytes,
                                    sharedBytes))
            return KernelShape{16 * warps, warps, queryRows};
      return std::nullopt;
    };
    dispatch(dkdv, dkdv->getNextNode(), layoutOk, d, element,
             prefix + "_mma_dk_dv", dkdvShape,
             [&](KernelEmitter &emitter, StringRef name) {
               emitter.emitDkDv(variant, args, name);
             });
    dispatch(dq, dq->getNextNode(), layoutOk, d, element, prefix + "_mma_dq",
             [&](int64_t headDim, int64_t bytes) {
               return keyTileShape(headDim, bytes, kWarps);
             },
             [&](KernelEmitter &emitter, StringRef name) {
               emitter.emitDq(variant, args, name);
             });
  }
};

} // namespace
