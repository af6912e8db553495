//===- TileBuilder.h - Index math, masks and key-tile phases ----*- C++ -*-===//
//
// What every lowering of an fa op to tile loops shares: the variant
// attributes, small builders, and the mask as loop bounds (which key tiles
// a block of query rows visits, which of them need a per-element
// predicate, and that predicate). fa-tile (scalar tiles) and
// fa-gpu-tensor-core (warp-level MMA tiles) both build on it, so the two
// agree on every mask by construction.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_TRANSFORMS_TILEBUILDER_H
#define FA_LIB_TRANSFORMS_TILEBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>
#include <optional>

namespace fa {

constexpr double kLog2E = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

/// The variant attributes that shape loop bounds and predicates.
struct Variant {
  bool causal = false;
  std::optional<int64_t> window;
  int64_t sinkTokens = 0;
  std::optional<double> scale;

  /// Whether the mask has phases past a causal one's: a window's lower
  /// edge or sink tokens.
  bool windowOrSinkTokens() const { return window || sinkTokens > 0; }

  /// Reads fa.attention's / fa.attention_grad's variant attributes.
  static Variant fromOp(mlir::Operation *op);
  /// Reads them from the copy fa-tile leaves on a tiled entry
  /// (`fa.variant`); null when the entry has none.
  static std::optional<Variant> fromEntry(mlir::Operation *entry);
};

/// The name of the entry attribute holding the variant's attributes.
inline constexpr llvm::StringLiteral kVariantAttrName = "fa.variant";
/// fa-tile names the pieces of a backward entry (`fa.loop`): the D =
/// rowsum(dO * o) buffer and the loop that fills it, the dK/dV loop, the dQ
/// loop and the learnable sinks' gradient loop.
inline constexpr llvm::StringLiteral kLoopAttrName = "fa.loop";
inline constexpr llvm::StringLiteral kRowDotBufferName = "row_dot";
inline constexpr llvm::StringLiteral kRowDotLoopName = "row_dot.sum";
inline constexpr llvm::StringLiteral kDkDvLoopName = "dk_dv";
inline constexpr llvm::StringLiteral kDqLoopName = "dq";
inline constexpr llvm::StringLiteral kSinkGradLoopName = "dsinks";

class TileBuilder {
public:
  TileBuilder(mlir::ImplicitLocOpBuilder &b, mlir::Type accType,
              int64_t blockN)
      : b(b), acc(mlir::cast<mlir::FloatType>(accType)), blockN(blockN) {}

  //===--------------------------------------------------------------------===//
  // Small builders; index arithmetic is signed (the causal offset Sk - Sq
  // may be negative).
  //===--------------------------------------------------------------------===//

  mlir::Value idx(int64_t v) {
    return mlir::arith::ConstantIndexOp::create(b, v);
  }
  mlir::Value flt(double v) {
    return mlir::arith::ConstantOp::create(b, acc, b.getFloatAttr(acc, v));
  }
  mlir::Value negInf() { return flt(-INFINITY); }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubIOp::create(b, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, x, y);
  }
  mlir::Value min(mlir::Value x, mlir::Value y) {
    return mlir::arith::MinSIOp::create(b, x, y);
  }
  mlir::Value max(mlir::Value x, mlir::Value y) {
    return mlir::arith::MaxSIOp::create(b, x, y);
  }
  mlir::Value clamp(mlir::Value x, mlir::Value lo, mlir::Value hi) {
    return min(max(x, lo), hi);
  }
  mlir::Value ceilDiv(mlir::Value x, int64_t d) {
    return mlir::arith::CeilDivSIOp::create(b, x, idx(d));
  }
  mlir::Value floorDiv(mlir::Value x, int64_t d) {
    return mlir::arith::FloorDivSIOp::create(b, x, idx(d));
  }
  mlir::Value cmp(mlir::arith::CmpIPredicate p, mlir::Value x,
                  mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, p, x, y);
  }
  mlir::Value fadd(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddFOp::create(b, x, y);
  }
  mlir::Value fsub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubFOp::create(b, x, y);
  }
  mlir::Value fmul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulFOp::create(b, x, y);
  }
  mlir::Value fmax(mlir::Value x, mlir::Value y) {
    return mlir::arith::MaximumFOp::create(b, x, y);
  }
  mlir::Value exp2(mlir::Value x) { return mlir::math::Exp2Op::create(b, x); }
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, c, x, y);
  }
  mlir::Value dim(mlir::Value memref, int64_t i) {
    return mlir::memref::DimOp::create(b, memref, i);
  }

  /// for (iv = lb; iv < ub; iv += step) body(iv)
  mlir::scf::ForOp loop(mlir::Value lb, mlir::Value ub, mlir::Value step,
                        llvm::function_ref<void(mlir::Value)> body);
  void loop(mlir::Value ub, llvm::function_ref<void(mlir::Value)> body) {
    loop(idx(0), ub, idx(1), body);
  }
  /// Folds `step(iv, carried)` over [0, ub) starting from `init`.
  mlir::Value
  reduce(mlir::Value ub, mlir::Value init,
         llvm::function_ref<mlir::Value(mlir::Value, mlir::Value)> step);

  //===--------------------------------------------------------------------===//
  // Phases: a range of tiles split into masked and unmasked loops.
  //===--------------------------------------------------------------------===//

  /// Visits the tiles of size `block` that start at `lo` and cover [lo, hi).
  /// Tiles wholly inside [innerLo, innerHi) run `tile(start, /*masked=*/
  /// false)`; the leading and trailing tiles around them run with
  /// `masked = true`. A masked tile may be partial; an unmasked one never is.
  /// Each loop is tagged `fa.tiles = "<name>.masked"` or `"<name>.unmasked"`
  /// so the IR says which path it is. Where `leadingMasked` (innerLo may
  /// lie past lo, as at a window's or a diagonal's leading edge), the
  /// leading and trailing masked tiles share one loop, which runs the
  /// unmasked loop at its turn between them: the same tiles in the same
  /// order, with the masked tile's code emitted once, not twice. Otherwise
  /// the leading loop is left out where innerLo is lo itself (it could
  /// never run).
  void phase(llvm::StringRef name, mlir::Value lo, mlir::Value hi,
             mlir::Value innerLo, mlir::Value innerHi, int64_t block,
             llvm::function_ref<void(mlir::Value, bool)> tile,
             bool leadingMasked = false);
  /// Which part of a phase a tile lies in (edgePhase).
  enum class TileEdge { Leading, Inner, Trailing };
  /// `phase`'s tiles in its three loops, leading masked, unmasked and
  /// trailing masked, as `tile(start, edge)`: the masked tile's code twice,
  /// so that each copy can mask against its own edge alone. The leading
  /// loop is left out where innerLo is lo itself.
  void edgePhase(llvm::StringRef name, mlir::Value lo, mlir::Value hi,
                 mlir::Value innerLo, mlir::Value innerHi, int64_t block,
                 llvm::function_ref<void(mlir::Value, TileEdge)> tile);
  /// `phase`'s tiles in one loop, in the same order: `tile(start, edge)`
  /// with `edge` an i1 that holds on the tiles `phase` runs masked. The
  /// tile's code is emitted once instead of three times (twice where the
  /// leading loop folds away), which halves a kernel's size and its ptxas
  /// time, for a uniform branch per tile. The loop is tagged
  /// `fa.tiles = "<name>.branched"`.
  void branchedPhase(llvm::StringRef name, mlir::Value lo, mlir::Value hi,
                     mlir::Value innerLo, mlir::Value innerHi, int64_t block,
                     llvm::function_ref<void(mlir::Value, mlir::Value)> tile);

  //===--------------------------------------------------------------------===//
  // The mask.
  //===--------------------------------------------------------------------===//

  /// The indices of `linear` in [0, extents), the first varying fastest:
  /// the decode of a loop nest, or a grid, flattened over their product.
  llvm::SmallVector<mlir::Value, 3> delinearize(mlir::Value linear,
                                                mlir::ValueRange extents);

  /// Sizes shared by every attention entry. Query rows run over
  /// [queryStart, sq) and keys over [keyStart, sk): from 0, except in a
  /// packed sequence (sequenceBlock), whose rows are those of the packed
  /// tensors. The causal offset is sk - sq either way.
  struct Dims {
    mlir::Value batch, hq, hkv, sq, sk, d, group, offset;
    mlir::Value queryStart, keyStart;
    /// A paged cache (fa.attention's block_table): k and v are [pages,
    /// Hkv, pageSize, D]; null otherwise.
    mlir::Value blockTable, pages, pageSize;
    /// fa.attention's `append`: the cache row its new keys start at (keys
    /// from there to sk are the new ones); null otherwise.
    mlir::Value appendAt;
  };
  Dims attentionDims(mlir::Value q, mlir::Value k);
  /// attentionDims over a paged cache: Sk is the table's pages per
  /// sequence times the page size. `dims` where `blockTable` is null.
  Dims pagedDims(const Dims &dims, mlir::Value blockTable, mlir::Value k);
  /// The first two indices of key j of batch entry `batch` in k and v:
  /// (batch, j), or in a paged cache (the page the table names, clamped to
  /// the cache's pages, and j's row in it).
  std::pair<mlir::Value, mlir::Value> keyRow(const Dims &dims,
                                             mlir::Value batch, mlir::Value j);
  /// The block-table entry (i32) of paged key j of batch entry `batch`.
  mlir::Value pageEntry(const Dims &dims, mlir::Value batch, mlir::Value j);
  /// keyRow's indices of paged key j whose block-table entry (i32) is
  /// `entry`.
  std::pair<mlir::Value, mlir::Value> pageRow(const Dims &dims,
                                              mlir::Value entry, mlir::Value j);
  /// Batch entry `batch`'s dims: Sk (and the causal offset) from
  /// fa.attention's `key_lengths`, clamped to [0, Sk], where it has them;
  /// `dims` where `keyLengths` is null. Every bound, predicate and load
  /// limit built from the result stops at the batch's last key. With
  /// `newKeys` (`append`, [B, Hkv, Snew, D]) the new keys go at appendAt =
  /// the length clamped to [0, Sk - Snew], and Sk is appendAt + Snew.
  Dims batchDims(const Dims &dims, mlir::Value keyLengths, mlir::Value batch,
                 mlir::Value newKeys = {});

  /// fa.attention's packed sequences (query_starts/key_starts, N + 1
  /// offsets each). Their query blocks of `rowsPerBlock` rows go on one
  /// grid axis: sequence s owns blocks [V(s), V(s + 1)) with V(s) =
  /// floor(starts[s] / rows) + s, which is at least its ceil(length /
  /// rows) blocks and at most one more, so the grid, V(N) <= floor(rows of
  /// q / rowsPerBlock) + N blocks, needs no pass over the lengths.
  mlir::Value sequenceBlockCount(const Dims &dims, mlir::Value queryStarts,
                                 int64_t rowsPerBlock);
  /// Block `block` of that grid: its sequence's dims (queryStart and sq
  /// its first and end row in q, keyStart and sk in k and v, every offset
  /// clamped to the rows there are), its first row m0 and its row count
  /// (0 for a sequence's spare block, whose sk is then keyStart: no keys).
  /// The sequence comes from a binary search of V over the starts.
  struct SequenceBlock {
    Dims dims;
    mlir::Value m0, rows;
  };
  SequenceBlock sequenceBlock(const Dims &dims, mlir::Value queryStarts,
                              mlir::Value keyStarts, mlir::Value block,
                              int64_t rowsPerBlock);

  /// Whether query row i may see key j (both absolute), for boundary tiles.
  mlir::Value allowed(const Variant &v, const Dims &dims, mlir::Value i,
                      mlir::Value j);

  /// A range of tiles: [lo, hi), of which [innerLo, innerHi) need no
  /// predicate.
  struct TilePhase {
    llvm::StringRef name;
    mlir::Value lo, hi, innerLo, innerHi;
    /// Whether a kernel may walk it in one loop (branchedPhase). Not the
    /// sink phase: with it branched too, ptxas serialised the wgmma
    /// forward's GEMMs for want of registers (C7511; bench/NOTES.md), and
    /// it is a tile or two.
    bool branchable = true;
    /// Whether tiles before innerLo may need the mask (`phase`).
    bool leadingMasked = false;
  };
  /// A range of key tiles; keys at or past `keyHi` belong to no tile of
  /// this phase.
  struct KeyPhase : TilePhase {
    mlir::Value keyHi;
  };
  /// The key phases of query rows [m0, m0 + rows): a sink phase over
  /// [0, min(T, lo)) (with sink tokens), then the causal/window range.
  llvm::SmallVector<KeyPhase, 2> keyPhases(const Variant &v, const Dims &dims,
                                           mlir::Value m0, mlir::Value rows);
  /// Split `index` of `count` of a query block's key phases, for the
  /// split-KV forward: the last phase's tiles go in `count` runs of equal
  /// length (the last ones shorter or empty), each still on the phase's
  /// tile grid, so that the splits' tiles are the phase's, each in one
  /// split, masked exactly where it was; the phases before it (sink keys,
  /// a tile or two) go whole to split 0.
  llvm::SmallVector<KeyPhase, 2> splitKeyPhases(llvm::ArrayRef<KeyPhase> phases,
                                                mlir::Value index,
                                                mlir::Value count);
  /// Visits every key tile of `keyPhases` as tile(start, masked, keyHi).
  void keyTiles(const Variant &v, const Dims &dims, mlir::Value m0,
                mlir::Value rows,
                llvm::function_ref<void(mlir::Value, bool, mlir::Value)> tile);
  /// The tiles of phase `p` as `phase` visits them, or where `branched`
  /// and `p` is branchable in one loop (branchedPhase):
  /// `tile(start, masked, maskWhen)`, where a `masked` tile's code masks,
  /// always when `maskWhen` is null, else where that i1 holds.
  void
  phaseTiles(const TilePhase &p, int64_t block, bool branched,
             llvm::function_ref<void(mlir::Value, bool, mlir::Value)> tile);
  /// For a tile phaseTiles runs masked: `ok`, the mask's verdict, where
  /// `maskWhen` holds (or always, where it is null), else true.
  mlir::Value maskedWhere(mlir::Value ok, mlir::Value maskWhen) {
    if (!maskWhen)
      return ok;
    return mlir::arith::OrIOp::create(b, ok, notOf(maskWhen));
  }
  /// The i1 `flag` negated.
  mlir::Value notOf(mlir::Value flag) {
    return mlir::arith::XOrIOp::create(
        b, flag, mlir::arith::ConstantIntOp::create(b, b.getI1Type(), 1));
  }
  /// The rows or keys of the tile at `start` (`block` of them) in a range
  /// that ends at `hi`: the whole tile where phaseTiles runs it unmasked,
  /// else those before `hi` (where `maskWhen` holds, when that is set).
  mlir::Value tileExtent(mlir::Value start, mlir::Value hi, int64_t block,
                         bool masked, mlir::Value maskWhen) {
    if (!masked)
      return idx(block);
    mlir::Value partial = min(idx(block), sub(hi, start));
    return maskWhen ? select(maskWhen, partial, idx(block)) : partial;
  }
  /// queryTiles through phaseTiles: `tile(m0, masked, maskWhen)`.
  void
  queryTiles(const Variant &v, const Dims &dims, mlir::Value n0,
             mlir::Value cols, int64_t blockM, bool branched,
             llvm::function_ref<void(mlir::Value, bool, mlir::Value)> tile);
  /// keyTiles through phaseTiles: `tile(n0, masked, keyHi, maskWhen)`.
  void
  keyTiles(const Variant &v, const Dims &dims, mlir::Value m0, mlir::Value rows,
           bool branched,
           llvm::function_ref<void(mlir::Value, bool, mlir::Value, mlir::Value)>
               tile);

  /// The range of query rows that may see keys [n0, n0 + cols) (a tile of
  /// blockN keys, or the partial last one), for the backward's dK/dV.
  /// Masked tiles may extend past Sq.
  TilePhase queryPhase(const Variant &v, const Dims &dims, mlir::Value n0,
                       mlir::Value cols);
  /// Visits the query tiles of `blockM` rows that may see keys
  /// [n0, n0 + cols) (a tile of blockN keys, or the partial last one), for
  /// the backward's dK/dV: tile(start, masked). Masked tiles may extend
  /// past Sq.
  void queryTiles(const Variant &v, const Dims &dims, mlir::Value n0,
                  mlir::Value cols, int64_t blockM,
                  llvm::function_ref<void(mlir::Value, bool)> tile);

  /// The softmax scale: the attribute, or 1/sqrt(D), in the accumulator
  /// type.
  mlir::Value scoreScale(const Variant &v, mlir::Value d);

  /// The rules TensorCoreLimits.h writes over any arithmetic (keySplitsOf,
  /// keyOffsetBoundsOf) as index IR at this builder's point; the runtime
  /// and the unit tests ask the same rules on int64_t (IntegerOps).
  struct IndexOps {
    TileBuilder &t;
    mlir::Value constant(int64_t v) const { return t.idx(v); }
    mlir::Value add(mlir::Value x, mlir::Value y) const { return t.add(x, y); }
    mlir::Value sub(mlir::Value x, mlir::Value y) const { return t.sub(x, y); }
    mlir::Value mul(mlir::Value x, mlir::Value y) const { return t.mul(x, y); }
    mlir::Value ceilDiv(mlir::Value x, mlir::Value y) const {
      return mlir::arith::CeilDivSIOp::create(t.b, x, y);
    }
    mlir::Value floorDiv(mlir::Value x, mlir::Value y) const {
      return mlir::arith::FloorDivSIOp::create(t.b, x, y);
    }
    mlir::Value min(mlir::Value x, mlir::Value y) const { return t.min(x, y); }
    mlir::Value clamp(mlir::Value x, mlir::Value lo, mlir::Value hi) const {
      return t.clamp(x, lo, hi);
    }
    mlir::Value lessThan(mlir::Value x, mlir::Value y) const {
      return t.cmp(mlir::arith::CmpIPredicate::slt, x, y);
    }
    mlir::Value lessEqual(mlir::Value x, mlir::Value y) const {
      return t.cmp(mlir::arith::CmpIPredicate::sle, x, y);
    }
    mlir::Value greaterThan(mlir::Value x, mlir::Value y) const {
      return t.cmp(mlir::arith::CmpIPredicate::sgt, x, y);
    }
    mlir::Value andOf(mlir::Value x, mlir::Value y) const {
      return mlir::arith::AndIOp::create(t.b, x, y);
    }
    mlir::Value orOf(mlir::Value x, mlir::Value y) const {
      return mlir::arith::OrIOp::create(t.b, x, y);
    }
    mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) const {
      return t.select(c, x, y);
    }
  };
  IndexOps indexOps() { return IndexOps{*this}; }

protected:
  mlir::ImplicitLocOpBuilder &b;
  mlir::FloatType acc;
  int64_t blockN;
};

} // namespace fa

#endif // FA_LIB_TRANSFORMS_TILEBUILDER_H
