//===- Tile.cpp - fa kernels to online-softmax tile loops -----------------===//
//
// Lowers every fa.kernel function to a destination-passing func.func over
// strided memrefs whose body is scf loops over tiles. The mask never exists
// as data: it is the bounds of the key-tile (or query-tile) loops plus a
// per-element predicate on boundary tiles only.
//
//===----------------------------------------------------------------------===//

#include "TileBuilder.h"

#include "fa/Dialect/FA/FAOps.h"
#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>
#include <functional>

namespace fa {
#define GEN_PASS_DEF_FATILE
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;
using namespace fa;

namespace {

/// Emits the tile loops of one entry function. Index arithmetic is signed:
/// the causal offset Sk - Sq may be negative.
class TileEmitter : public TileBuilder {
public:
  TileEmitter(ImplicitLocOpBuilder &b, Type accType, int64_t blockM,
              int64_t blockN, bool hoistScratch, bool branchedTiles)
      : TileBuilder(b, accType, blockN), blockM(blockM),
        hoistScratch(hoistScratch), branchedTiles(branchedTiles) {}

  /// Loads `memref[indices]` converted to the accumulator type.
  Value load(Value memref, ValueRange indices) {
    Value v = memref::LoadOp::create(b, memref, indices);
    if (v.getType() != acc)
      v = arith::ExtFOp::create(b, acc, v);
    return v;
  }
  /// Stores an accumulator-typed `v` into `memref[indices]`.
  void store(Value v, Value memref, ValueRange indices) {
    Type elt = cast<MemRefType>(memref.getType()).getElementType();
    if (elt != acc)
      v = arith::TruncFOp::create(b, elt, v);
    memref::StoreOp::create(b, v, memref, indices);
  }

  /// A tile-sized scratch buffer for one iteration of a parallel loop.
  /// With `hoistScratch` (the host) it is allocated once, before the loop,
  /// so the stack does not grow with the iteration count; otherwise (a GPU
  /// thread per iteration) it lives in the iteration.
  Value scratch(ArrayRef<int64_t> shape, ValueRange dynamicSizes) {
    OpBuilder::InsertionGuard guard(b);
    if (hoistScratch && currentParallel)
      b.setInsertionPoint(currentParallel);
    return memref::AllocaOp::create(b, MemRefType::get(shape, acc),
                                    dynamicSizes);
  }

  using TileBuilder::loop;

  /// A loop nest over [0, ubs) whose iterations are independent: the unit a
  /// GPU maps to a grid. Callers put tiles first and batch last: the first
  /// dimension varies fastest, so neighbouring blocks share a head's K/V in
  /// L2. The nest is one loop over the product, decoded into `body`'s
  /// indices: as a grid, one dimension, since y and z stop at 65535, which
  /// B or H alone may pass.
  scf::ParallelOp parallel(ValueRange ubs,
                           llvm::function_ref<void(ValueRange)> body) {
    Value count = ubs.front();
    for (Value ub : ubs.drop_front())
      count = mul(count, ub);
    auto par = scf::ParallelOp::create(b, idx(0), count, idx(1));
    OpBuilder::InsertionGuard guard(b);
    currentParallel = par;
    b.setInsertionPoint(par.getBody()->getTerminator());
    body(delinearize(par.getInductionVars().front(), ubs));
    currentParallel = nullptr;
    return par;
  }
  /// Names a backward loop (`fa.loop`) for passes that specialise it.
  static void tag(Operation *op, StringRef name) {
    op->setAttr(kLoopAttrName, StringAttr::get(op->getContext(), name));
  }

  /// sum_d a[d] * b[d] over [0, n).
  Value dot(Value n, llvm::function_ref<Value(Value)> a,
            llvm::function_ref<Value(Value)> bv) {
    return reduce(n, flt(0.0), [&](Value d, Value sum) {
      return fadd(sum, fmul(a(d), bv(d)));
    });
  }

  //===--------------------------------------------------------------------===//
  // Forward: the online softmax.
  //===--------------------------------------------------------------------===//

  /// What the online-softmax loop needs to know about its operands.
  struct OnlineSoftmax {
    Value rowsTotal, cols, width; // Sq (or M), Sk (or N), D (or P)
    /// Score of (row i, key j) in base-2 units.
    std::function<Value(Value, Value)> score;
    /// value[j][c] for output column c.
    std::function<Value(Value, Value)> value;
    /// Initial running max (base 2) and sum of a row: the learnable sink.
    std::function<std::pair<Value, Value>()> init;
    std::function<void(Value, Value, Value)> storeOut; // (i, c, value)
    std::function<void(Value, Value)> storeLse;        // (i, lse) or null
    /// Visits the key tiles of rows [m0, m0 + rows): (n0, masked, keyHi,
    /// maskWhen), as TileBuilder::keyTiles with `branched`.
    std::function<void(Value, Value,
                       llvm::function_ref<void(Value, bool, Value, Value)>)>
        keyTiles;
    /// Whether (i, j) survives the mask on a boundary tile.
    std::function<Value(Value, Value)> allowed;
  };

  struct Scratch {
    Value acc, m, l, s;
  };

  Scratch forwardScratch(Value width) {
    return {scratch({blockM, ShapedType::kDynamic}, width),
            scratch({blockM}, {}), scratch({blockM}, {}),
            scratch({blockN}, {})};
  }

  /// One query tile of the online softmax: rows [m0, m0 + rows).
  void onlineSoftmaxTile(const OnlineSoftmax &os, const Scratch &sc, Value m0,
                         Value rows) {
    loop(rows, [&](Value r) {
      auto [m, l] = os.init();
      memref::StoreOp::create(b, m, sc.m, r);
      memref::StoreOp::create(b, l, sc.l, r);
      loop(os.width, [&](Value c) {
        memref::StoreOp::create(b, flt(0.0), sc.acc, ValueRange{r, c});
      });
    });
    os.keyTiles(
        m0, rows, [&](Value n0, bool masked, Value keyHi, Value maskWhen) {
          Value cols = tileExtent(n0, keyHi, blockN, masked, maskWhen);
          loop(rows, [&](Value r) {
            Value i = add(m0, r);
            Value rowMax = reduce(cols, negInf(), [&](Value c, Value mx) {
              Value j = add(n0, c);
              Value s = os.score(i, j);
              if (masked)
                s = select(maskedWhere(os.allowed(i, j), maskWhen), s,
                           negInf());
              memref::StoreOp::create(b, s, sc.s, c);
              return fmax(mx, s);
            });
            Value mOld = memref::LoadOp::create(b, sc.m, r);
            Value mNew = fmax(mOld, rowMax);
            // A row with nothing visible yet keeps m = -inf; subtract 0 then so
            // exp2(-inf - -inf) never makes a NaN.
            Value isEmpty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                                  mNew, negInf());
            Value mSafe = select(isEmpty, flt(0.0), mNew);
            Value alpha = exp2(fsub(mOld, mSafe));
            Value sum = reduce(cols, flt(0.0), [&](Value c, Value total) {
              Value p = exp2(fsub(memref::LoadOp::create(b, sc.s, c), mSafe));
              memref::StoreOp::create(b, p, sc.s, c);
              return fadd(total, p);
            });
            Value lOld = memref::LoadOp::create(b, sc.l, r);
            memref::StoreOp::create(b, fadd(fmul(alpha, lOld), sum), sc.l, r);
            memref::StoreOp::create(b, mNew, sc.m, r);
            loop(os.width, [&](Value c) {
              Value a0 = fmul(
                  alpha, memref::LoadOp::create(b, sc.acc, ValueRange{r, c}));
              Value a = reduce(cols, a0, [&](Value cc, Value total) {
                Value p = memref::LoadOp::create(b, sc.s, cc);
                return fadd(total, fmul(p, os.value(add(n0, cc), c)));
              });
              memref::StoreOp::create(b, a, sc.acc, ValueRange{r, c});
            });
          });
        });
    // o = acc / l and lse = (m + log2 l) ln 2; an empty row gives o = 0 and
    // lse = -inf. A NaN l (a NaN sink logit, an infinite score) is not
    // empty: its o and lse are NaN (the unordered compare), never 0, -inf.
    loop(rows, [&](Value r) {
      Value i = add(m0, r);
      Value l = memref::LoadOp::create(b, sc.l, r);
      Value positive =
          arith::CmpFOp::create(b, arith::CmpFPredicate::UGT, l, flt(0.0));
      Value inv = select(positive, arith::DivFOp::create(b, flt(1.0), l),
                         flt(0.0));
      loop(os.width, [&](Value c) {
        os.storeOut(i, c,
                    fmul(memref::LoadOp::create(b, sc.acc, ValueRange{r, c}),
                         inv));
      });
      if (os.storeLse) {
        Value m = memref::LoadOp::create(b, sc.m, r);
        Value lse = fmul(fadd(m, math::Log2Op::create(b, l)), flt(kLn2));
        os.storeLse(i, select(positive, lse, negInf()));
      }
    });
  }

  /// The rows [m0, m0 + rows) of query tile `mt` of `rowsTotal` rows.
  std::pair<Value, Value> queryTile(Value mt, Value rowsTotal) {
    Value m0 = mul(mt, idx(blockM));
    return {m0, min(idx(blockM), sub(rowsTotal, m0))};
  }

  /// fa.attention's optional operands.
  struct ForwardOperands {
    Value sinks, keyLengths, blockTable, queryStarts, keyStarts, kNew, vNew;
  };

  /// fa.attention's `append`: the new keys and values of each sequence
  /// into its cache rows from appendAt (TileBuilder::batchDims), before the
  /// attention loops read them there.
  void emitAppend(const Dims &allDims, Value k, Value val,
                  const ForwardOperands &opt) {
    parallel({dim(opt.kNew, 2), allDims.hkv, allDims.batch},
             [&](ValueRange iv) {
               Value s = iv[0], g = iv[1], bi = iv[2];
               Dims dims = batchDims(allDims, opt.keyLengths, bi, opt.kNew);
               std::pair<Value, Value> at =
                   keyRow(dims, bi, add(dims.appendAt, s));
               loop(allDims.d, [&](Value c) {
                 for (auto [from, to] :
                      {std::pair{opt.kNew, k}, std::pair{opt.vNew, val}})
                   store(load(from, {bi, g, s, c}), to,
                         {at.first, g, at.second, c});
               });
             });
  }

  void emitAttentionForward(const Variant &v, Value q, Value k, Value val,
                            const ForwardOperands &opt, Value o, Value lse) {
    Dims allDims = pagedDims(attentionDims(q, k), opt.blockTable, k);
    if (opt.kNew)
      emitAppend(allDims, k, val, opt);
    Value scale = fmul(scoreScale(v, allDims.d), flt(kLog2E));
    // Rows [m0, m0 + rows) of query head h of batch entry bi.
    auto emitBlock = [&](const Dims &dims, Value bi, Value h, Value m0,
                         Value rows) {
      Value g = arith::DivSIOp::create(b, h, dims.group);
      Scratch sc = forwardScratch(dims.d);
      OnlineSoftmax os;
      os.width = dims.d;
      os.score = [&](Value i, Value j) {
        std::pair<Value, Value> key = keyRow(dims, bi, j);
        Value s = dot(
            dims.d,
            [&](Value d) {
              return load(q, {bi, h, i, d});
            },
            [&](Value d) {
              return load(k, {key.first, g, key.second, d});
            });
        return fmul(s, scale);
      };
      os.value = [&](Value j, Value c) {
        auto [first, row] = keyRow(dims, bi, j);
        return load(val, {first, g, row, c});
      };
      os.init = [&]() -> std::pair<Value, Value> {
        if (!opt.sinks)
          return {negInf(), flt(0.0)};
        return {fmul(load(opt.sinks, {h}), flt(kLog2E)), flt(1.0)};
      };
      os.storeOut = [&](Value i, Value c, Value x) {
        store(x, o, {bi, h, i, c});
      };
      os.storeLse = [&](Value i, Value x) { store(x, lse, {bi, h, i}); };
      os.keyTiles = [&](Value m0, Value rows,
                        llvm::function_ref<void(Value, bool, Value, Value)> t) {
        keyTiles(v, dims, m0, rows, branchedTiles, t);
      };
      os.allowed = [&](Value i, Value j) { return allowed(v, dims, i, j); };
      onlineSoftmaxTile(os, sc, m0, rows);
    };
    if (opt.queryStarts) {
      // Packed sequences: blocks over the sequences' rows, all of batch
      // entry 0.
      parallel(
          {sequenceBlockCount(allDims, opt.queryStarts, blockM), allDims.hq},
          [&](ValueRange iv) {
            SequenceBlock seq = sequenceBlock(allDims, opt.queryStarts,
                                              opt.keyStarts, iv[0], blockM);
            emitBlock(seq.dims, idx(0), iv[1], seq.m0, seq.rows);
          });
      return;
    }
    parallel({ceilDiv(allDims.sq, blockM), allDims.hq, allDims.batch},
             [&](ValueRange iv) {
               Value bi = iv[2];
               Dims dims = batchDims(allDims, opt.keyLengths, bi, opt.kNew);
               auto [m0, rows] = queryTile(iv[0], dims.sq);
               emitBlock(dims, bi, iv[1], m0, rows);
             });
  }

  void emitSoftmaxMatmul(Value x, Value val, Value out) {
    Value batch = dim(x, 0), rowsTotal = dim(x, 1), n = dim(x, 2);
    Value width = dim(val, 2);
    parallel({ceilDiv(rowsTotal, blockM), batch}, [&](ValueRange iv) {
      Value bi = iv[1];
      Scratch sc = forwardScratch(width);
      OnlineSoftmax os;
      os.width = width;
      os.score = [&](Value i, Value j) {
        return fmul(load(x, {bi, i, j}), flt(kLog2E));
      };
      os.value = [&](Value j, Value c) { return load(val, {bi, j, c}); };
      os.init = [&]() -> std::pair<Value, Value> {
        return {negInf(), flt(0.0)};
      };
      os.storeOut = [&](Value i, Value c, Value y) {
        store(y, out, {bi, i, c});
      };
      os.keyTiles = [&](Value, Value,
                        llvm::function_ref<void(Value, bool, Value, Value)> t) {
        Value zero = idx(0);
        phase("keys", zero, n, zero, n, blockN,
              [&](Value n0, bool masked) { t(n0, masked, n, Value()); });
      };
      os.allowed = [&](Value, Value j) {
        return cmp(arith::CmpIPredicate::slt, j, n);
      };
      auto [m0, rows] = queryTile(iv[0], rowsTotal);
      onlineSoftmaxTile(os, sc, m0, rows);
    });
  }

  //===--------------------------------------------------------------------===//
  // Backward.
  //===--------------------------------------------------------------------===//

  struct GradOperands {
    Value q, k, v, o, lse, dO, sinks, dq, dk, dv, dsinks;
  };

  /// P_ij (0 when masked) and dS_ij for rows of head h, kv head g.
  std::pair<Value, Value> probAndGrad(const GradOperands &op, const Dims &dims,
                                      Value scaleLog2, Value bi, Value h,
                                      Value g, Value i, Value j, Value lse2,
                                      Value di, Value mask) {
    Value s = dot(
        dims.d, [&](Value d) { return load(op.q, {bi, h, i, d}); },
        [&](Value d) { return load(op.k, {bi, g, j, d}); });
    Value p = exp2(fsub(fmul(s, scaleLog2), lse2));
    if (mask)
      p = select(mask, p, flt(0.0));
    Value dp = dot(
        dims.d, [&](Value d) { return load(op.dO, {bi, h, i, d}); },
        [&](Value d) { return load(op.v, {bi, g, j, d}); });
    return {p, fmul(p, fsub(dp, di))};
  }

  void emitAttentionBackward(const Variant &v, const GradOperands &op) {
    Dims dims = attentionDims(op.q, op.k);
    Value scale = scoreScale(v, dims.d);
    Value scaleLog2 = fmul(scale, flt(kLog2E));
    Value log2e = flt(kLog2E);

    // Preprocess: D = rowsum(dO * o), O(B * Hq * Sq).
    Value rowDot = memref::AllocOp::create(
        b,
        MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic,
                         ShapedType::kDynamic},
                        acc),
        ValueRange{dims.batch, dims.hq, dims.sq});
    tag(rowDot.getDefiningOp(), kRowDotBufferName);
    auto rowDotLoop = parallel({dims.sq, dims.hq, dims.batch}, [&](ValueRange
                                                                       iv) {
      Value bi = iv[2], h = iv[1], i = iv[0];
      Value d = dot(
          dims.d, [&](Value c) { return load(op.dO, {bi, h, i, c}); },
          [&](Value c) { return load(op.o, {bi, h, i, c}); });
      memref::StoreOp::create(b, d, rowDot, ValueRange{bi, h, i});
    });
    tag(rowDotLoop, kRowDotLoopName);

    // P and dS of row i of head h (kv head g) against keys n0 + [0, cols),
    // from the row's lse and D, masked as phaseTiles says (`masked`,
    // `maskWhen`): use(c, j, p, ds) for each key.
    auto rowGrads =
        [&](Value bi, Value h, Value g, Value i, Value n0, Value cols,
            bool masked, Value maskWhen,
            llvm::function_ref<void(Value, Value, Value, Value)> use) {
          Value lse2 = fmul(load(op.lse, {bi, h, i}), log2e);
          Value di = memref::LoadOp::create(b, rowDot, ValueRange{bi, h, i});
          loop(cols, [&](Value c) {
            Value j = add(n0, c);
            Value mask = masked ? maskedWhere(allowed(v, dims, i, j), maskWhen)
                                : Value();
            auto [p, ds] = probAndGrad(op, dims, scaleLog2, bi, h, g, i, j,
                                       lse2, di, mask);
            use(c, j, p, ds);
          });
        };

    // dK/dV: each key tile of a kv head sums over the query tiles of every
    // query head of its group.
    auto dkdv = parallel({ceilDiv(dims.sk, blockN), dims.hkv, dims.batch},
             [&](ValueRange iv) {
          Value bi = iv[2], g = iv[1], nt = iv[0];
          Value dkAcc = scratch({blockN, ShapedType::kDynamic}, dims.d);
          Value dvAcc = scratch({blockN, ShapedType::kDynamic}, dims.d);
          Value n0 = mul(nt, idx(blockN));
          Value cols = min(idx(blockN), sub(dims.sk, n0));
          loop(cols, [&](Value c) {
            loop(dims.d, [&](Value d) {
              memref::StoreOp::create(b, flt(0.0), dkAcc, ValueRange{c, d});
              memref::StoreOp::create(b, flt(0.0), dvAcc, ValueRange{c, d});
            });
          });
          loop(dims.group, [&](Value member) {
            Value h = add(mul(g, dims.group), member);
            queryTiles(
                v, dims, n0, cols, blockM, branchedTiles,
                [&](Value m0, bool masked, Value maskWhen) {
                  Value rows =
                      tileExtent(m0, dims.sq, blockM, masked, maskWhen);
                  loop(rows, [&](Value r) {
                    Value i = add(m0, r);
                    rowGrads(
                        bi, h, g, i, n0, cols, masked, maskWhen,
                        [&](Value c, Value, Value p, Value ds) {
                          Value dsScaled = fmul(ds, scale);
                          loop(dims.d, [&](Value d) {
                            Value dvOld = memref::LoadOp::create(
                                b, dvAcc, ValueRange{c, d});
                            Value dkOld = memref::LoadOp::create(
                                b, dkAcc, ValueRange{c, d});
                            memref::StoreOp::create(
                                b,
                                fadd(dvOld,
                                     fmul(p, load(op.dO, {bi, h, i, d}))),
                                dvAcc, ValueRange{c, d});
                            memref::StoreOp::create(
                                b,
                                fadd(dkOld,
                                     fmul(dsScaled, load(op.q, {bi, h, i, d}))),
                                dkAcc, ValueRange{c, d});
                          });
                        });
                  });
                });
          });
          loop(cols, [&](Value c) {
            loop(dims.d, [&](Value d) {
              Value j = add(n0, c);
              store(memref::LoadOp::create(b, dkAcc, ValueRange{c, d}), op.dk,
                    {bi, g, j, d});
              store(memref::LoadOp::create(b, dvAcc, ValueRange{c, d}), op.dv,
                    {bi, g, j, d});
            });
          });
    });

    tag(dkdv, kDkDvLoopName);

    // dQ: each query tile loops over the key tiles the forward visited.
    auto dq = parallel({ceilDiv(dims.sq, blockM), dims.hq, dims.batch},
             [&](ValueRange iv) {
          Value bi = iv[2], h = iv[1];
          Value g = arith::DivSIOp::create(b, h, dims.group);
          Value dqAcc = scratch({blockM, ShapedType::kDynamic}, dims.d);
          Value m0, rows;
          std::tie(m0, rows) = queryTile(iv[0], dims.sq);
          loop(rows, [&](Value r) {
            loop(dims.d, [&](Value d) {
              memref::StoreOp::create(b, flt(0.0), dqAcc, ValueRange{r, d});
            });
          });
          keyTiles(
              v, dims, m0, rows, branchedTiles,
              [&](Value n0, bool masked, Value keyHi, Value maskWhen) {
                Value cols = tileExtent(n0, keyHi, blockN, masked, maskWhen);
                loop(rows, [&](Value r) {
                  Value i = add(m0, r);
                  rowGrads(
                      bi, h, g, i, n0, cols, masked, maskWhen,
                      [&](Value, Value j, Value, Value ds) {
                        loop(dims.d, [&](Value d) {
                          Value old = memref::LoadOp::create(b, dqAcc,
                                                             ValueRange{r, d});
                          memref::StoreOp::create(
                              b, fadd(old, fmul(ds, load(op.k, {bi, g, j, d}))),
                              dqAcc, ValueRange{r, d});
                        });
                      });
                });
              });
          loop(rows, [&](Value r) {
            loop(dims.d, [&](Value d) {
              Value x = memref::LoadOp::create(b, dqAcc, ValueRange{r, d});
              store(fmul(x, scale), op.dq, {bi, h, add(m0, r), d});
            });
          });
    });

    tag(dq, kDqLoopName);

    // dsink_h = -sum_{b,i} exp(sink_h - lse_i) * D_i.
    if (op.sinks) {
      auto sinkGrad = parallel({dims.hq}, [&](ValueRange iv) {
        Value h = iv[0];
        Value sink2 = fmul(load(op.sinks, {h}), log2e);
        Value total = reduce(dims.batch, flt(0.0), [&](Value bi, Value sum) {
          return reduce(dims.sq, sum, [&](Value i, Value s) {
            Value lse2 = fmul(load(op.lse, {bi, h, i}), log2e);
            Value di = memref::LoadOp::create(b, rowDot, ValueRange{bi, h, i});
            return fadd(s, fmul(exp2(fsub(sink2, lse2)), di));
          });
        });
        store(arith::NegFOp::create(b, total), op.dsinks, {h});
      });
      tag(sinkGrad, kSinkGradLoopName);
    }
    memref::DeallocOp::create(b, rowDot);
  }

private:
  int64_t blockM;
  bool hoistScratch;
  /// Key and query phases in one loop each (TileBuilder::phaseTiles).
  bool branchedTiles;
  Operation *currentParallel = nullptr;
};

/// A memref of `type`'s shape and element type with any strides and offset.
MemRefType stridedMemRef(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> strides(tensor.getRank(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(type.getContext(),
                                       ShapedType::kDynamic, strides);
  return MemRefType::get(tensor.getShape(), tensor.getElementType(), layout);
}

struct Tile : fa::impl::FATileBase<Tile> {
  using Base::Base;

  // Tile sizes are command-line (or autotuner) input, checked once.
  LogicalResult initialize(MLIRContext *context) override {
    if (blockM < 1 || blockN < 1)
      return emitError(UnknownLoc::get(context))
             << "fa-tile: block-m and block-n must be >= 1, got "
             << static_cast<int64_t>(blockM) << " and "
             << static_cast<int64_t>(blockN);
    return success();
  }

  void runOnOperation() override {
    if (entries != "all" && entries != "forward" && entries != "backward") {
      getOperation().emitError()
          << "fa-tile: entries must be all, forward or backward, got '"
          << entries << "'";
      return signalPassFailure();
    }
    SmallVector<KernelOp> kernels(getOperation().getOps<KernelOp>());
    for (KernelOp kernel : kernels) {
      for (func::FuncOp fn : kernel.getOps<func::FuncOp>())
        if (entries == "all" || fn.getSymName() == entries)
          lowerEntry(kernel, fn);
      kernel.erase();
    }
  }

  /// Emits `@<kernel>_<entry>(inputs..., outputs...)` for one entry.
  void lowerEntry(KernelOp kernel, func::FuncOp fn) {
    Operation *compute = KernelOp::getComputeOp(fn);
    SmallVector<Type> argTypes;
    for (Type t : fn.getArgumentTypes())
      argTypes.push_back(stridedMemRef(t));
    for (Type t : fn.getResultTypes())
      argTypes.push_back(stridedMemRef(t));

    ImplicitLocOpBuilder b(fn.getLoc(), kernel);
    std::string name = (kernel.getSymName() + "_" + fn.getSymName()).str();
    auto entry = func::FuncOp::create(
        b, name, FunctionType::get(&getContext(), argTypes, {}));
    entry->setAttr("fa.kernel", kernel.getSymNameAttr());
    entry->setAttr("fa.entry", fn.getSymNameAttr());
    entry->setAttr("llvm.emit_c_interface", b.getUnitAttr());
    // Later GPU passes specialise attention entries by variant.
    if (isa<AttentionOp, AttentionGradOp>(compute))
      entry->setAttr(kVariantAttrName, compute->getAttrDictionary());
    Block *body = entry.addEntryBlock();
    b.setInsertionPointToStart(body);
    ValueRange args = body->getArguments();

    Type element = cast<ShapedType>(fn.getArgumentTypes()[0]).getElementType();
    TileEmitter emit(b, getAccumulatorType(element), blockM, blockN,
                     hoistScratch, branchedTiles);
    if (auto op = dyn_cast<AttentionOp>(compute)) {
      // q, k, v, [sinks], [key_lengths], [block_table], [query_starts,
      // key_starts], [new keys, new values], o, lse.
      unsigned next = 3;
      auto optional = [&](Value present) {
        return present ? args[next++] : Value();
      };
      TileEmitter::ForwardOperands opt;
      opt.sinks = optional(op.getSinks());
      opt.keyLengths = optional(op.getKeyLengths());
      opt.blockTable = optional(op.getBlockTable());
      opt.queryStarts = optional(op.getQueryStarts());
      opt.keyStarts = optional(op.getKeyStarts());
      opt.kNew = optional(op.getKNew());
      opt.vNew = optional(op.getVNew());
      emit.emitAttentionForward(Variant::fromOp(op), args[0], args[1], args[2],
                                opt, args[next], args[next + 1]);
    } else if (auto op = dyn_cast<AttentionGradOp>(compute)) {
      bool sinks = static_cast<bool>(op.getSinks());
      unsigned out = sinks ? 7 : 6;
      TileEmitter::GradOperands g{args[0], args[1], args[2], args[3],
                                  args[4], args[5],
                                  sinks ? args[6] : Value(), args[out],
                                  args[out + 1], args[out + 2],
                                  sinks ? args[out + 3] : Value()};
      emit.emitAttentionBackward(Variant::fromOp(op), g);
    } else {
      emit.emitSoftmaxMatmul(args[0], args[1], args[2]);
    }
    func::ReturnOp::create(b);
  }
};

} // namespace
