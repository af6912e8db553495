//===- BackwardPreprocess.cpp - The backward's row reductions on the GPU --===//
//
// Two reductions frame the backward's GEMM kernels, on either MMA
// generation; both are memory-bound, so what matters is how they read:
//
// D = rowsum(dO * o): a block per 64 query rows of one (head, batch); eight
// lanes share a row and read it in 16-byte chunks (lane l takes chunks l,
// l + 8, ...), so each warp load covers four rows' 128 contiguous bytes,
// and a three-step shuffle sums the row. Any head dim that is a whole
// number of chunks runs here; one kernel serves them all.
//
// dsinks[h] = -sum over (batch, row) of exp(sink[h] - lse) D: the D kernel
// weighs each row's D as it has it and sums its block's rows into one
// partial per block; a second kernel, a block per head, sums a head's
// partials. Both sum in a fixed order (shuffles, then the warps' sums
// through shared memory), so the result is the same bits from run to run.
// (A first form walked every row of a head in one block, a load's latency
// a row: 74 us of gpt-oss's backward at 2 x 8k rows; bench/NOTES.md.) Where
// D falls back to the scalar loop, the per-head kernel walks the rows
// itself.
//
// Where dQ accumulates in f32 (the wgmma dK/dV kernel's TMA reduce-adds), two
// elementwise kernels frame it: one zeroes the accumulator, one writes
// dq = scale * accumulator in the output's type; a block per 64 rows of a
// (batch, head), as the D kernel's, each thread taking four consecutive
// elements of a row at a time. Their blocks and the D kernel's cover the
// same rows, so the D kernel zeroes the accumulator itself where it runs,
// and the zero kernel runs only where D falls back to the scalar loop.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreEmitter.h"

using namespace mlir;
using namespace fa;
using namespace fa::tensor_core;

namespace {

/// Warps per block of both kernels.
constexpr int64_t kPreprocessWarps = 4;
/// Lanes that share a row of the D kernel, and rows per block: a block's
/// dsinks terms make one partial.
constexpr int64_t kLanesPerRow = 8;
constexpr int64_t kRowDotBlockRows = kSinkPartialRows;

/// The D kernel's blocks over `rows` rows of a (batch, head).
Value rowBlockCount(ImplicitLocOpBuilder &b, Value rows) {
  return arith::CeilDivSIOp::create(
      b, rows, arith::ConstantIndexOp::create(b, kRowDotBlockRows));
}

class PreprocessEmitter : public TensorCoreEmitter {
public:
  PreprocessEmitter(ImplicitLocOpBuilder &b, Type element)
      : TensorCoreEmitter(b, element, /*headDim=*/0,
                          KernelShape{/*blockN=*/16, kPreprocessWarps},
                          /*allowTf32=*/false) {}

  // The per-head kernel's rows form takes them from outside.
  using TensorCoreEmitter::sinkLogit2;

  void emitRowDot(Value o, Value dO, Value rowDot, const SinkTerms *sinkTerms,
                  Value dqAccum, StringRef name) {
    o = withUnitStride(o);
    dO = withUnitStride(dO);
    Value rows = dim(dO, 2);
    Value chunks = divi(dim(dO, 3), chunkElements());
    SmallVector<Type, 1> workgroup;
    if (sinkTerms)
      workgroup.push_back(warpSumsType());
    launchBlocks(
        {rowBlockCount(b, rows), dim(dO, 1), dim(dO, 0)}, /*dynamicBytes=*/0,
        workgroup, name, [&](gpu::LaunchOp launch) {
          constexpr int64_t rowsPerPass = 32 * kPreprocessWarps / kLanesPerRow;
          Value head = blockCoord[1];
          Value sink2 =
              sinkTerms ? sinkLogit2(sinkTerms->sinks, head) : Value();
          Value weighted = flt(0.0);
          Value laneInRow = remi(lane, kLanesPerRow);
          Value first = add(mul(blockCoord[0], idx(kRowDotBlockRows)),
                            divi(tid, kLanesPerRow));
          Value lastRow = sub(rows, idx(1));
          auto chunkType = VectorType::get({chunkElements()}, element);
          // Each pass's loads are independent of the others': unrolled,
          // they are all in flight at once.
          for (int64_t pass = 0; pass < kRowDotBlockRows / rowsPerPass;
               ++pass) {
            Value row = add(first, idx(pass * rowsPerPass));
            Value at = min(row, lastRow);
            auto chunkLoop = scf::ForOp::create(
                b, laneInRow, chunks, idx(kLanesPerRow), ValueRange{flt(0.0)},
                [&](OpBuilder &, Location, Value chunk, ValueRange carried) {
                  Value col = mul(chunk, idx(chunkElements()));
                  auto read = [&](Value memref) {
                    return vector::LoadOp::create(
                        b, chunkType, memref,
                        ValueRange{batchIdx, head, at, col},
                        /*nontemporal=*/false, llvm::Align(16));
                  };
                  Value g = read(dO), y = read(o);
                  Value sum = carried.front();
                  for (int64_t e = 0; e < chunkElements(); ++e)
                    sum = math::FmaOp::create(b, toF32(extract(g, e)),
                                              toF32(extract(y, e)), sum);
                  scf::YieldOp::create(b, sum);
                });
            Value sum =
                laneReduce(chunkLoop.getResult(0), kLanesPerRow,
                           [&](Value x, Value y) { return fadd(x, y); });
            Value owner = arith::AndIOp::create(
                b, cmp(arith::CmpIPredicate::eq, laneInRow, idx(0)),
                cmp(arith::CmpIPredicate::slt, row, rows));
            {
              auto store = scf::IfOp::create(b, owner, false);
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(store.thenBlock());
              memref::StoreOp::create(b, sum, rowDot,
                                      ValueRange{batchIdx, head, row});
            }
            // The row's owner weighs its D; the rows of each pass join in
            // order.
            if (sinkTerms)
              weighted = fadd(
                  weighted,
                  arith::SelectOp::create(b, owner,
                                          rowSinkTerm(sink2, sinkTerms->lse,
                                                      batchIdx, head, at, sum),
                                          flt(0.0)));
          }
          // The accumulator's zeros after D's loads: stored before them,
          // the kernel took 72.5 us at 4 x 16 x 4k rows of D 128 against
          // 68.5 after, the two kernels' 36.8 + 31.8 (ncu, H200;
          // bench/NOTES.md, fifty-fifth session).
          if (dqAccum)
            forEachQuadOfBlock(dqAccum,
                               [&](ValueRange at) { storeZeros(dqAccum, at); });
          if (!sinkTerms)
            return;
          blockSum(weighted, launch.getWorkgroupAttributions().front(),
                   [&](Value total) {
                     Value block =
                         sinkPartialIndex(b, batchIdx, rows, blockCoord[0]);
                     memref::StoreOp::create(b, total, sinkTerms->partials,
                                             ValueRange{head, block});
                   });
        });
  }

  /// dsinks[h] = -(the sum of `count` terms of head h, `term(head, i)`
  /// giving the i-th): a block per head, each thread striding over the
  /// terms.
  void emitHeadSums(Value heads, Value count, Value dsinks, StringRef name,
                    llvm::function_ref<Value(Value, Value)> term) {
    constexpr int64_t threads = 32 * kPreprocessWarps;
    launchBlocks(
        {heads, idx(1), idx(1)}, /*dynamicBytes=*/0, {warpSumsType()}, name,
        [&](gpu::LaunchOp launch) {
          Value head = blockCoord[0];
          auto termLoop = scf::ForOp::create(
              b, tid, count, idx(threads), ValueRange{flt(0.0)},
              [&](OpBuilder &, Location, Value i, ValueRange carried) {
                scf::YieldOp::create(b, fadd(carried.front(), term(head, i)));
              });
          blockSum(termLoop.getResult(0),
                   launch.getWorkgroupAttributions().front(), [&](Value total) {
                     Type out =
                         cast<MemRefType>(dsinks.getType()).getElementType();
                     Value grad = arith::NegFOp::create(b, total);
                     if (out != grad.getType())
                       grad = arith::TruncFOp::create(b, out, grad);
                     memref::StoreOp::create(b, grad, dsinks, head);
                   });
        });
  }

  /// sinkTerm of row [bi, head, row], its lse loaded from `lse`.
  Value rowSinkTerm(Value sink2, Value lse, Value bi, Value head, Value row,
                    Value d) {
    return sinkTerm(
        sink2,
        toBase2(memref::LoadOp::create(b, lse, ValueRange{bi, head, row})), d);
  }

  /// Zeroes the [batch, head, row, D] f32 buffer `accum` (identity layout,
  /// D a multiple of 4).
  void emitZero(Value accum, StringRef name) {
    forEachQuad(accum, name,
                [&](ValueRange at) { storeZeros(accum, at); });
  }

  /// dq = scale * accum, in dq's element type (dq of unit stride on D and
  /// 16-byte rows, as the tensor-core kernels take it).
  void emitScaledCopy(Value accum, Value dq, Value scale, StringRef name) {
    dq = withUnitStride(dq);
    forEachQuad(accum, name, [&](ValueRange at) {
      Value x = vector::LoadOp::create(b, quadType(b.getF32Type()), accum, at,
                                       /*nontemporal=*/false, llvm::Align(16));
      Value factor = vector::BroadcastOp::create(b, x.getType(), scale);
      Value y = arith::MulFOp::create(b, x, factor);
      if (!element.isF32())
        y = arith::TruncFOp::create(b, quadType(element), y);
      vector::StoreOp::create(b, y, dq, at, /*nontemporal=*/false,
                              llvm::Align(4 * elementBytes()));
    });
  }

private:
  /// The warps' sums of blockSum, in shared memory.
  Type warpSumsType() {
    return MemRefType::get({kPreprocessWarps}, b.getF32Type(), AffineMap(),
                           workgroupSpace());
  }
  /// The sum of every thread's `x` over the block, in a fixed order (the
  /// lanes by shuffles, then the warps in turn), handed to `use` on thread
  /// 0 alone; `warpSums` is warpSumsType's.
  void blockSum(Value x, Value warpSums, llvm::function_ref<void(Value)> use) {
    Value sum = laneReduce(x, 32, [&](Value x, Value y) { return fadd(x, y); });
    {
      auto first = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::eq, lane, idx(0)), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(first.thenBlock());
      memref::StoreOp::create(b, sum, warpSums, warp);
    }
    gpu::BarrierOp::create(b);
    auto leader =
        scf::IfOp::create(b, cmp(arith::CmpIPredicate::eq, tid, idx(0)), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(leader.thenBlock());
    Value total = flt(0.0);
    for (int64_t w = 0; w < kPreprocessWarps; ++w)
      total = fadd(total, memref::LoadOp::create(b, warpSums, idx(w)));
    use(total);
  }
  /// A kernel over the [batch, head, row, D] `shape`: a block per
  /// kRowDotBlockRows rows of a (batch, head), as the D kernel's, whose
  /// threads stride over those rows' quads (four consecutive elements);
  /// `body` gets a quad's first index. A quad's row and column in the block
  /// take one 32-bit division. (A thread a quad, its index delinearised by
  /// 64-bit divisions, made the f32 dQ accumulator's zeroing and copy
  /// bound by those: 2.7 and 3.2 TB/s on the H200, bench/NOTES.md,
  /// forty-sixth session.)
  void forEachQuad(Value shape, StringRef name,
                   llvm::function_ref<void(ValueRange)> body) {
    launchBlocks({rowBlockCount(b, dim(shape, 2)), dim(shape, 1),
                  dim(shape, 0)},
                 0, {}, name,
                 [&](gpu::LaunchOp) { forEachQuadOfBlock(shape, body); });
  }
  /// forEachQuad's loop in the block of a kernel over the same rows: the
  /// block's threads over its quads of `shape` (none past its rows, so a
  /// shape of no rows takes none).
  void forEachQuadOfBlock(Value shape,
                          llvm::function_ref<void(ValueRange)> body) {
    constexpr int64_t threads = 32 * kPreprocessWarps;
    Value quadsPerRow = divi(dim(shape, 3), 4);
    Value rows = dim(shape, 2);
    Value first = mul(blockCoord[0], idx(kRowDotBlockRows));
    Value quads = mul(
        arith::MaxSIOp::create(
            b, min(idx(kRowDotBlockRows), sub(rows, first)), idx(0)),
        quadsPerRow);
    Value perRow = toI32(quadsPerRow);
    scf::ForOp::create(
        b, tid, quads, idx(threads), ValueRange{},
        [&](OpBuilder &, Location, Value quad, ValueRange) {
          Value at = toI32(quad);
          Value row =
              add(first, toIndex(arith::DivUIOp::create(b, at, perRow)));
          Value col =
              mul(toIndex(arith::RemUIOp::create(b, at, perRow)), idx(4));
          body(ValueRange{batchIdx, blockCoord[1], row, col});
          scf::YieldOp::create(b);
        });
  }
  /// Four f32 zeros into the f32 buffer `accum` at `at`.
  void storeZeros(Value accum, ValueRange at) {
    vector::StoreOp::create(b, zeroQuad(), accum, at, /*nontemporal=*/false,
                            llvm::Align(16));
  }

  Value extract(Value vector, int64_t e) {
    return vector::ExtractOp::create(b, vector, e);
  }
};

} // namespace

void fa::tensor_core::emitRowDotKernel(ImplicitLocOpBuilder &b, Type element,
                                       Value o, Value dO, Value rowDot,
                                       const SinkTerms *sinkTerms,
                                       Value dqAccum, StringRef name) {
  PreprocessEmitter(b, element)
      .emitRowDot(o, dO, rowDot, sinkTerms, dqAccum, name);
}

void fa::tensor_core::emitZeroKernel(ImplicitLocOpBuilder &b, Value accum,
                                     StringRef name) {
  PreprocessEmitter(b, b.getF32Type()).emitZero(accum, name);
}

void fa::tensor_core::emitScaledCopyKernel(ImplicitLocOpBuilder &b,
                                           Type element, Value accum, Value dq,
                                           Value scale, StringRef name) {
  PreprocessEmitter(b, element).emitScaledCopy(accum, dq, scale, name);
}

Value fa::tensor_core::sinkPartialsPerHead(ImplicitLocOpBuilder &b, Value batch,
                                           Value rows) {
  return arith::MulIOp::create(b, batch, rowBlockCount(b, rows));
}

Value fa::tensor_core::sinkPartialIndex(ImplicitLocOpBuilder &b, Value batch,
                                        Value rows, Value rowBlock) {
  return arith::AddIOp::create(
      b, arith::MulIOp::create(b, batch, rowBlockCount(b, rows)), rowBlock);
}

void fa::tensor_core::emitSinkPartialsSumKernel(ImplicitLocOpBuilder &b,
                                                Value partials, Value dsinks,
                                                StringRef name) {
  PreprocessEmitter e(b, b.getF32Type());
  e.emitHeadSums(
      memref::DimOp::create(b, partials, 0),
      memref::DimOp::create(b, partials, 1), dsinks, name,
      [&](Value head, Value i) {
        return memref::LoadOp::create(b, partials, ValueRange{head, i});
      });
}

void fa::tensor_core::emitSinkGradientKernel(ImplicitLocOpBuilder &b, Value lse,
                                             Value rowDot, Value sinks,
                                             Value dsinks, StringRef name) {
  PreprocessEmitter e(b, b.getF32Type());
  Value rows = memref::DimOp::create(b, lse, 2);
  Value count =
      arith::MulIOp::create(b, memref::DimOp::create(b, lse, 0), rows);
  e.emitHeadSums(
      memref::DimOp::create(b, lse, 1), count, dsinks, name,
      [&](Value head, Value i) {
        Value bi = arith::DivUIOp::create(b, i, rows);
        Value row = arith::RemUIOp::create(b, i, rows);
        Value d = memref::LoadOp::create(b, rowDot, ValueRange{bi, head, row});
        return e.rowSinkTerm(e.sinkLogit2(sinks, head), lse, bi, head, row, d);
      });
}
