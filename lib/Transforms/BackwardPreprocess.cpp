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
// dsinks[h] = -sum over (batch, row) of exp(sink[h] - lse) D: a block per
// head whose threads stride over the rows, summed by shuffles and through
// shared memory in a fixed order, so the result is the same bits from run
// to run.
//
// Where dQ accumulates in f32 (the wgmma dK/dV kernel's TMA reduce-adds), two
// elementwise kernels frame it: one zeroes the accumulator, one writes
// dq = scale * accumulator in the output's type; each thread takes four
// consecutive elements of a row.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreEmitter.h"

using namespace mlir;
using namespace fa;
using namespace fa::tensor_core;

namespace {

/// Warps per block of both kernels.
constexpr int64_t kPreprocessWarps = 4;
/// Lanes that share a row of the D kernel, and rows per block.
constexpr int64_t kLanesPerRow = 8;
constexpr int64_t kRowDotBlockRows = 64;

class PreprocessEmitter : public TensorCoreEmitter {
public:
  PreprocessEmitter(ImplicitLocOpBuilder &b, Type element)
      : TensorCoreEmitter(b, element, /*headDim=*/0,
                          KernelShape{/*blockN=*/16, kPreprocessWarps},
                          /*allowTf32=*/false) {}

  void emitRowDot(Value o, Value dO, Value rowDot, StringRef name) {
    o = withUnitStride(o);
    dO = withUnitStride(dO);
    Value rows = dim(dO, 2);
    Value chunks = divi(dim(dO, 3), chunkElements());
    launchBlocks(
        {ceilDiv(rows, kRowDotBlockRows), dim(dO, 1), dim(dO, 0)},
        /*dynamicBytes=*/0, /*workgroupTypes=*/{}, name, [&](gpu::LaunchOp) {
          constexpr int64_t rowsPerPass = 32 * kPreprocessWarps / kLanesPerRow;
          Value head = blockCoord[1];
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
            auto store = scf::IfOp::create(b, owner, false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(store.thenBlock());
            memref::StoreOp::create(b, sum, rowDot,
                                    ValueRange{batchIdx, head, row});
          }
        });
  }

  void emitSinkGradient(Value lse, Value rowDot, Value sinks, Value dsinks,
                        StringRef name) {
    Value batch = dim(lse, 0), heads = dim(lse, 1), rows = dim(lse, 2);
    constexpr int64_t threads = 32 * kPreprocessWarps;
    auto partials = MemRefType::get({kPreprocessWarps}, b.getF32Type(),
                                    AffineMap(), workgroupSpace());
    launchBlocks(
        {heads, idx(1), idx(1)}, /*dynamicBytes=*/0, {partials}, name,
        [&](gpu::LaunchOp launch) {
          Value head = blockCoord[0];
          Value sink2 = toBase2(toF32(memref::LoadOp::create(b, sinks, head)));
          // The (batch, row) pairs, flattened; each thread takes every
          // threads-th.
          auto pairLoop = scf::ForOp::create(
              b, tid, mul(batch, rows), idx(threads), ValueRange{flt(0.0)},
              [&](OpBuilder &, Location, Value pair, ValueRange carried) {
                Value bi = divi(pair, rows), i = remi(pair, rows);
                Value lse2 = toBase2(
                    memref::LoadOp::create(b, lse, ValueRange{bi, head, i}));
                Value d =
                    memref::LoadOp::create(b, rowDot, ValueRange{bi, head, i});
                Value sum = math::FmaOp::create(b, exp2(fsub(sink2, lse2)), d,
                                                carried.front());
                scf::YieldOp::create(b, sum);
              });
          Value sum = laneReduce(pairLoop.getResult(0), 32,
                                 [&](Value x, Value y) { return fadd(x, y); });
          Value shared = launch.getWorkgroupAttributions().front();
          {
            auto first = scf::IfOp::create(
                b, cmp(arith::CmpIPredicate::eq, lane, idx(0)), false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(first.thenBlock());
            memref::StoreOp::create(b, sum, shared, warp);
          }
          gpu::BarrierOp::create(b);
          auto leader = scf::IfOp::create(
              b, cmp(arith::CmpIPredicate::eq, tid, idx(0)), false);
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(leader.thenBlock());
          Value total = flt(0.0);
          for (int64_t w = 0; w < kPreprocessWarps; ++w)
            total = fadd(total, memref::LoadOp::create(b, shared, idx(w)));
          Type out = cast<MemRefType>(dsinks.getType()).getElementType();
          Value grad = arith::NegFOp::create(b, total);
          if (out != grad.getType())
            grad = arith::TruncFOp::create(b, out, grad);
          memref::StoreOp::create(b, grad, dsinks, head);
        });
  }

  /// Zeroes the [batch, head, row, D] f32 buffer `accum` (identity layout,
  /// D a multiple of 4).
  void emitZero(Value accum, StringRef name) {
    forEachQuad(accum, name, [&](ValueRange at) {
      Value zeros = arith::ConstantOp::create(
          b, DenseElementsAttr::get(quadType(b.getF32Type()), 0.0f));
      vector::StoreOp::create(b, zeros, accum, at);
    });
  }

  /// dq = scale * accum, in dq's element type (dq of unit stride on D and
  /// 16-byte rows, as the tensor-core kernels take it).
  void emitScaledCopy(Value accum, Value dq, Value scale, StringRef name) {
    dq = withUnitStride(dq);
    forEachQuad(accum, name, [&](ValueRange at) {
      Value x = vector::LoadOp::create(b, quadType(b.getF32Type()), accum, at);
      Value factor = vector::BroadcastOp::create(b, x.getType(), scale);
      Value y = arith::MulFOp::create(b, x, factor);
      if (!element.isF32())
        y = arith::TruncFOp::create(b, quadType(element), y);
      vector::StoreOp::create(b, y, dq, at, /*nontemporal=*/false,
                              llvm::Align(4 * elementBytes()));
    });
  }

private:
  static VectorType quadType(Type type) { return VectorType::get({4}, type); }
  /// A kernel with a thread per four consecutive elements of the rows of
  /// the [batch, head, row, D] `shape`; `body` gets their first index.
  void forEachQuad(Value shape, StringRef name,
                   llvm::function_ref<void(ValueRange)> body) {
    constexpr int64_t threads = 32 * kPreprocessWarps;
    Value quadsPerRow = divi(dim(shape, 3), 4);
    Value rows = mul(dim(shape, 2), mul(dim(shape, 1), dim(shape, 0)));
    Value quads = mul(rows, quadsPerRow);
    launchBlocks({ceilDiv(quads, threads), idx(1), idx(1)}, 0, {}, name,
                 [&](gpu::LaunchOp) {
                   Value quad = add(mul(blockCoord[0], idx(threads)), tid);
                   auto inRange = scf::IfOp::create(
                       b, cmp(arith::CmpIPredicate::slt, quad, quads), false);
                   OpBuilder::InsertionGuard guard(b);
                   b.setInsertionPointToStart(inRange.thenBlock());
                   Value row = divi(quad, quadsPerRow);
                   Value col = mul(remi(quad, quadsPerRow), idx(4));
                   SmallVector<Value, 3> at =
                       delinearize(row, ValueRange{dim(shape, 2), dim(shape, 1),
                                                   dim(shape, 0)});
                   body(ValueRange{at[2], at[1], at[0], col});
                 });
  }

  Value extract(Value vector, int64_t e) {
    return vector::ExtractOp::create(b, vector, e);
  }
  Value toF32(Value x) {
    return x.getType().isF32() ? x : arith::ExtFOp::create(b, acc, x);
  }
};

} // namespace

void fa::tensor_core::emitRowDotKernel(ImplicitLocOpBuilder &b, Type element,
                                       Value o, Value dO, Value rowDot,
                                       StringRef name) {
  PreprocessEmitter(b, element).emitRowDot(o, dO, rowDot, name);
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

void fa::tensor_core::emitSinkGradientKernel(ImplicitLocOpBuilder &b, Value lse,
                                             Value rowDot, Value sinks,
                                             Value dsinks, StringRef name) {
  PreprocessEmitter(b, b.getF32Type())
      .emitSinkGradient(lse, rowDot, sinks, dsinks, name);
}
