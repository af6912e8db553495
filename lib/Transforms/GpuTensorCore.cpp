//===- GpuTensorCore.cpp - Attention forwards on the tensor cores ---------===//
//
// Gives each f16/bf16 forward attention entry of fa-tile a warp-level
// kernel (mma.sync m16n8k16, ldmatrix, cp.async) for the head dims and
// layouts it supports, dispatched at run time in front of the scalar tile
// loops, which stay as the path for every other shape. The variant's mask
// comes from TileBuilder's key phases, exactly as in fa-tile.
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
//===----------------------------------------------------------------------===//

#include "TileBuilder.h"

#include "fa/Dialect/FA/FAOps.h"
#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace fa {
#define GEN_PASS_DEF_FAGPUTENSORCORE
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;
using namespace fa;

namespace {

/// Query rows per thread block: 4 warps of 16 rows.
constexpr int64_t kBlockM = 64;
constexpr int64_t kWarps = 4;
constexpr int64_t kThreads = 32 * kWarps;
/// Head dims with a tensor-core kernel. The shared-memory swizzle needs at
/// least 8 chunks of 8 elements per row; the registers of 16 rows x D
/// accumulators per warp bound it above.
constexpr int64_t kHeadDims[] = {64, 128};

/// Operands of a forward entry: q, k, v[, sinks], o, lse.
struct ForwardArgs {
  Value q, k, v, sinks, o, lse;
};

class KernelEmitter : public TileBuilder {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
                int64_t blockN)
      : TileBuilder(b, b.getF32Type(), blockN), element(element),
        headDim(headDim) {}

  /// Whether `memref` may take the fast path: unit stride on D, the other
  /// strides multiples of 8 elements and a 16-byte aligned start (cp.async
  /// and ldmatrix move 16 bytes; stores move 4).
  Value isVectorFriendly(Value memref) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
    Value ok = cmp(arith::CmpIPredicate::eq, meta.getStrides()[3], idx(1));
    auto both = [&](Value c) { ok = arith::AndIOp::create(b, ok, c); };
    for (int64_t d = 0; d < 3; ++d)
      both(cmp(arith::CmpIPredicate::eq,
               arith::RemUIOp::create(b, meta.getStrides()[d], idx(8)),
               idx(0)));
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

  /// Launches the kernel for this head dim; outlining names its module and
  /// function `kernelName`.
  void emitLaunch(const Variant &variant, ForwardArgs args,
                  StringRef kernelName) {
    args.q = withUnitStride(args.q);
    args.k = withUnitStride(args.k);
    args.v = withUnitStride(args.v);
    args.o = withUnitStride(args.o);
    Dims dims = attentionDims(args.q, args.k);
    Value tiles = ceilDiv(dims.sq, kBlockM);
    Value one = idx(1);
    auto shared = MemRefType::get(
        {blockN, headDim}, element, AffineMap(),
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Workgroup));
    auto launch = gpu::LaunchOp::create(
        b, tiles, dims.hq, dims.batch, idx(kThreads), one, one,
        /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
        /*asyncDependencies=*/{}, TypeRange{shared, shared},
        /*privateAttributions=*/{}, /*clusterSizeX=*/nullptr,
        /*clusterSizeY=*/nullptr, /*clusterSizeZ=*/nullptr,
        FlatSymbolRefAttr::get(b.getContext(), kernelName),
        FlatSymbolRefAttr::get(b.getContext(), kernelName));
    OpBuilder::InsertionGuard guard(b);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    keys = launch.getWorkgroupAttributions()[0];
    values = launch.getWorkgroupAttributions()[1];
    emitBody(variant, args, dims, tiles, launch);
    gpu::TerminatorOp::create(b);
  }

private:
  Type element;
  int64_t headDim;
  Value keys, values;
  // Per-thread values, set up at the top of the kernel.
  Value tid, lane, quadRank, quadTid, batchIdx, kvHead;
  Value keyLoadRow, keyLoadChunk, valueLoadRow, valueLoadChunk, swizzle;
  /// Q's A fragments, per 16-wide step of D.
  SmallVector<SmallVector<Value, 4>> qFrag;

  int64_t elementBytes() const {
    return element.getIntOrFloatBitWidth() / 8;
  }
  NVVM::MMATypes mmaType() const {
    return element.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  }
  Value i32(int64_t v) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
  }
  Value fmaxnum(Value x, Value y) {
    return arith::MaxNumFOp::create(b, x, y);
  }

  /// Two f32 values rounded to the element type, as an MMA operand
  /// register.
  Value pack(Value lo, Value hi) {
    auto pair = VectorType::get({2}, element);
    return asOperand(vector::FromElementsOp::create(
        b, pair,
        ValueRange{arith::TruncFOp::create(b, element, lo),
                   arith::TruncFOp::create(b, element, hi)}));
  }
  /// NVVM's mma.sync takes f16 pairs as vector<2xf16> and bf16 pairs as
  /// the i32 that holds them.
  Value asOperand(Value pair) {
    if (element.isF16())
      return pair;
    return LLVM::BitcastOp::create(b, b.getI32Type(), pair);
  }
  /// Two elements of `memref[indices...]` as an MMA operand register.
  Value loadPair(Value memref, ValueRange indices) {
    auto pair = VectorType::get({2}, element);
    return asOperand(vector::LoadOp::create(b, pair, memref, indices,
                                            /*nontemporal=*/false,
                                            llvm::Align(4)));
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
  /// c += a * b on one m16n8k16 tile.
  void mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
           MutableArrayRef<Value> c) {
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), {f32, f32, f32, f32});
    Value d = NVVM::MmaOp::create(
        b, resultType, a, bFrag, c, ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{mmaType(), mmaType()},
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

  /// Issues the cp.async copies of `source` keys [n0, n0 + blockN) of this
  /// block's kv head into `buffer` (rows past Sk are zero filled, so the
  /// partial last tile of V contributes nothing) and commits them as one
  /// group. Chunk c of row r lands at chunk c ^ (r % 8).
  void loadTile(Value source, Value buffer, Value n0, const Dims &dims) {
    int64_t chunksPerRow = headDim / 8;
    int64_t rowsPerPass = kThreads / chunksPerRow;
    Value chunk = remi(tid, chunksPerRow);
    Value firstRow = divi(tid, chunksPerRow);
    Value lastKey = sub(dims.sk, idx(1));
    for (int64_t pass = 0; pass < blockN / rowsPerPass; ++pass) {
      Value row = add(firstRow, idx(pass * rowsPerPass));
      Value key = add(n0, row);
      Value inRange = cmp(arith::CmpIPredicate::slt, key, dims.sk);
      Value srcElements = select(inRange, idx(8), idx(0));
      Value dstCol = mul(xori(chunk, remi(row, 8)), idx(8));
      nvgpu::DeviceAsyncCopyOp::create(
          b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), buffer,
          ValueRange{row, dstCol}, source,
          ValueRange{batchIdx, kvHead, min(key, lastKey), mul(chunk, idx(8))},
          b.getIndexAttr(8), srcElements, b.getUnitAttr());
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
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
                const Dims &dims, Value tiles, gpu::LaunchOp launch) {
    gpu::KernelDim3 block = launch.getBlockIds();
    tid = launch.getThreadIds().x;
    Value warp = divi(tid, 32);
    lane = remi(tid, 32);
    quadRank = divi(lane, 4); // g
    quadTid = remi(lane, 4);  // t
    // Causal blocks with the most keys first: they finish last otherwise.
    Value tile = block.x;
    if (variant.causal)
      tile = sub(sub(tiles, idx(1)), block.x);
    Value head = block.y;
    batchIdx = block.z;
    kvHead = arith::DivUIOp::create(b, head, dims.group);
    Value m0 = mul(tile, idx(kBlockM));
    Value rows = min(idx(kBlockM), sub(dims.sq, m0));
    Value warpRow = add(m0, mul(warp, idx(16)));
    Value rowOf[2] = {add(warpRow, quadRank),
                      add(warpRow, add(quadRank, idx(8)))};
    // ldmatrix row addresses: lane L feeds row L % 8 of matrix L / 8.
    swizzle = remi(lane, 8);
    Value matrix = divi(lane, 8);
    keyLoadRow = add(mul(divi(matrix, 2), idx(8)), swizzle);
    keyLoadChunk = remi(matrix, 2);
    valueLoadRow = add(mul(remi(matrix, 2), idx(8)), swizzle);
    valueLoadChunk = divi(matrix, 2);

    Value scaleLog2 =
        fmul(scoreScale(variant, idx(headDim)), flt(kLog2E));

    // Q fragments, read once from global memory. Rows past Sq read the last
    // row: finite values whose results are never stored.
    Value lastRow = sub(dims.sq, idx(1));
    int64_t kSteps = headDim / 16;
    qFrag.assign(kSteps, {});
    for (int64_t kk = 0; kk < kSteps; ++kk)
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t r = 0; r < 2; ++r) {
          Value col = add(idx(kk * 16 + half * 8), mul(quadTid, idx(2)));
          qFrag[kk].push_back(loadPair(
              args.q, {batchIdx, head, min(rowOf[r], lastRow), col}));
        }

    int64_t outTiles = headDim / 8;
    State state;
    state.out = memref::AllocaOp::create(
        b, MemRefType::get({outTiles * 4}, b.getF32Type()));
    state.stats = memref::AllocaOp::create(
        b, MemRefType::get({4}, b.getF32Type()));
    for (int64_t i = 0; i < outTiles * 4; ++i)
      storeState(flt(0.0), state.out, i);
    // A learnable sink starts each row at m = sink, l = 1 (one lane of the
    // quad holds the 1: l is summed over the quad at the end).
    Value mInit = negInf(), lInit = flt(0.0);
    if (args.sinks) {
      mInit = fmul(memref::LoadOp::create(b, args.sinks, head), flt(kLog2E));
      lInit = select(cmp(arith::CmpIPredicate::eq, quadTid, idx(0)),
                     flt(1.0), flt(0.0));
    }
    for (int64_t r = 0; r < 2; ++r) {
      storeState(mInit, state.stats, r);
      storeState(lInit, state.stats, 2 + r);
    }

    for (const KeyPhase &p : keyPhases(variant, dims, m0, rows)) {
      auto nonEmpty = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, p.lo, p.hi), false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(nonEmpty.thenBlock());
        loadTile(args.k, keys, p.lo, dims);
      }
      phase(p.name, p.lo, p.hi, p.innerLo, p.innerHi, blockN,
            [&](Value n0, bool masked) {
              emitTile(variant, args, dims, state, scaleLog2, rowOf, n0,
                       masked ? p.keyHi : Value(), p.hi);
            });
    }

    // o = acc / l, lse = (m + log2 l) ln 2; empty rows: o = 0, lse = -inf.
    for (int64_t r = 0; r < 2; ++r) {
      Value l = quadReduce(loadState(state.stats, 2 + r),
                           [&](Value x, Value y) { return fadd(x, y); });
      Value positive =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, l, flt(0.0));
      Value inv = select(positive, arith::DivFOp::create(b, flt(1.0), l),
                         flt(0.0));
      auto inRows = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, rowOf[r], dims.sq), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inRows.thenBlock());
      auto pair = VectorType::get({2}, element);
      for (int64_t dt = 0; dt < outTiles; ++dt) {
        Value lo = fmul(loadState(state.out, dt * 4 + 2 * r), inv);
        Value hi = fmul(loadState(state.out, dt * 4 + 2 * r + 1), inv);
        Value v = vector::FromElementsOp::create(
            b, pair,
            ValueRange{arith::TruncFOp::create(b, element, lo),
                       arith::TruncFOp::create(b, element, hi)});
        Value col = add(idx(dt * 8), mul(quadTid, idx(2)));
        vector::StoreOp::create(b, v, args.o,
                                ValueRange{batchIdx, head, rowOf[r], col},
                                /*nontemporal=*/false, llvm::Align(4));
      }
      auto writer = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::eq, quadTid, idx(0)), false);
      b.setInsertionPointToStart(writer.thenBlock());
      Value m = loadState(state.stats, r);
      Value lse = fmul(fadd(m, math::Log2Op::create(b, l)), flt(kLn2));
      memref::StoreOp::create(b, select(positive, lse, negInf()), args.lse,
                              ValueRange{batchIdx, head, rowOf[r]});
    }
  }

  /// One key tile [n0, n0 + blockN): K is in (or arriving in) `keys`.
  /// `keyHi` is set on boundary tiles, whose scores are predicated.
  void emitTile(const Variant &variant, const ForwardArgs &args,
                const Dims &dims, const State &state, Value scaleLog2,
                Value rowOf[2], Value n0, Value keyHi, Value phaseHi) {
    waitTiles(); // K(n0) landed; every warp is done with V of the last tile
    loadTile(args.v, values, n0, dims);

    // S = Q K^T: blockN / 8 accumulator tiles of 16 x 8.
    int64_t nTiles = blockN / 8;
    SmallVector<SmallVector<Value, 4>> s(nTiles,
                                         SmallVector<Value, 4>(4, flt(0.0)));
    for (int64_t kk = 0; kk < headDim / 16; ++kk)
      for (int64_t np = 0; np < nTiles / 2; ++np) {
        Value row = add(idx(np * 16), keyLoadRow);
        Value col = mul(xori(add(idx(kk * 2), keyLoadChunk), swizzle), idx(8));
        SmallVector<Value, 4> frag = ldmatrix(keys, row, col, false);
        mma(qFrag[kk], {frag[0], frag[1]}, s[2 * np]);
        mma(qFrag[kk], {frag[2], frag[3]}, s[2 * np + 1]);
      }

    // With a positive scale the row max commutes with scaling, so scores
    // stay unscaled and exp2(s * scale - m) is one FMA per element; a
    // non-positive scale attribute scales each score first.
    bool scaleFirst = variant.scale && *variant.scale <= 0;
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t e = 0; e < 4; ++e) {
        Value x = scaleFirst ? fmul(s[nt][e], scaleLog2) : s[nt][e];
        if (keyHi) {
          Value j = add(add(n0, idx(nt * 8 + e % 2)), mul(quadTid, idx(2)));
          Value ok = arith::AndIOp::create(
              b, allowed(variant, dims, rowOf[e / 2], j),
              cmp(arith::CmpIPredicate::slt, j, keyHi));
          x = select(ok, x, negInf());
        }
        s[nt][e] = x;
      }

    // Online softmax of rows g (e = 0, 1) and g + 8 (e = 2, 3).
    for (int64_t r = 0; r < 2; ++r) {
      Value rowMax = negInf();
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t e = 2 * r; e < 2 * r + 2; ++e)
          rowMax = fmaxnum(rowMax, s[nt][e]);
      rowMax = quadReduce(rowMax,
                          [&](Value x, Value y) { return fmaxnum(x, y); });
      if (!scaleFirst)
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
          Value shifted =
              scaleFirst ? fsub(s[nt][e], mSafe)
                         : math::FmaOp::create(b, s[nt][e], scaleLog2,
                                               arith::NegFOp::create(b, mSafe));
          s[nt][e] = exp2(shifted);
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

    waitTiles(); // V(n0) landed; every warp is done with K(n0)
    Value next = add(n0, idx(blockN));
    auto more =
        scf::IfOp::create(b, cmp(arith::CmpIPredicate::slt, next, phaseHi),
                          false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(more.thenBlock());
      loadTile(args.k, keys, next, dims);
    }

    // O += P V, P taken from the S registers.
    for (int64_t kk = 0; kk < blockN / 16; ++kk) {
      Value p[4] = {pack(s[2 * kk][0], s[2 * kk][1]),
                    pack(s[2 * kk][2], s[2 * kk][3]),
                    pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                    pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
      for (int64_t dp = 0; dp < headDim / 16; ++dp) {
        Value row = add(idx(kk * 16), valueLoadRow);
        Value col =
            mul(xori(add(idx(dp * 2), valueLoadChunk), swizzle), idx(8));
        SmallVector<Value, 4> frag = ldmatrix(values, row, col, true);
        for (int64_t half = 0; half < 2; ++half) {
          int64_t dt = 2 * dp + half;
          SmallVector<Value, 4> c;
          for (int64_t e = 0; e < 4; ++e)
            c.push_back(loadState(state.out, dt * 4 + e));
          mma(p, {frag[2 * half], frag[2 * half + 1]}, c);
          for (int64_t e = 0; e < 4; ++e)
            storeState(c[e], state.out, dt * 4 + e);
        }
      }
    }
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
    return success();
  }

  void runOnOperation() override {
    for (func::FuncOp fn : getOperation().getOps<func::FuncOp>()) {
      auto entry = fn->getAttrOfType<StringAttr>("fa.entry");
      std::optional<Variant> variant = Variant::fromEntry(fn);
      if (!entry || entry.getValue() != "forward" || !variant)
        continue;
      Type element =
          cast<MemRefType>(fn.getArgumentTypes()[0]).getElementType();
      if (!element.isF16() && !element.isBF16())
        continue;
      dispatch(fn, *variant, element);
    }
  }

  /// Puts `if (fast path for D = 64) ... else if (D = 128) ... else
  /// <scalar tile loops>` in front of the entry's body.
  void dispatch(func::FuncOp fn, const Variant &variant, Type element) {
    Block &body = fn.front();
    Operation *firstOriginal = &body.front();
    Operation *terminator = body.getTerminator();
    ValueRange a = body.getArguments();
    bool sinks = a.size() == 6;
    ForwardArgs args{a[0], a[1], a[2], sinks ? a[3] : Value(),
                     a[sinks ? 4 : 3], a[sinks ? 5 : 4]};

    ImplicitLocOpBuilder b(fn.getLoc(), firstOriginal);
    KernelEmitter checks(b, element, /*headDim=*/0, blockN);
    Value layoutOk = checks.isVectorFriendly(args.q);
    for (Value operand : {args.k, args.v, args.o})
      layoutOk =
          arith::AndIOp::create(b, layoutOk, checks.isVectorFriendly(operand));
    Value d = memref::DimOp::create(b, args.q, 3);

    Block *fallback = nullptr;
    for (int64_t headDim : kHeadDims) {
      Value here = arith::AndIOp::create(
          b, layoutOk,
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, d,
                                arith::ConstantIndexOp::create(b, headDim)));
      auto ifOp = scf::IfOp::create(b, here, /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        KernelEmitter emitter(b, element, headDim, blockN);
        emitter.emitLaunch(variant, args,
                           (fn.getSymName() + "_mma_d" + Twine(headDim)).str());
      }
      fallback = ifOp.elseBlock();
      b.setInsertionPointToStart(fallback);
    }
    fallback->getOperations().splice(fallback->getTerminator()->getIterator(),
                                     body.getOperations(),
                                     firstOriginal->getIterator(),
                                     terminator->getIterator());
  }
};

} // namespace
