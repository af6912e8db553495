//===- TileBuilder.cpp - Index math, masks and key-tile phases ------------===//

#include "TileBuilder.h"

#include "fa/Dialect/FA/FAOps.h"

using namespace mlir;

namespace fa {

Variant Variant::fromOp(Operation *op) {
  Variant v;
  auto read = [&](auto typed) {
    v.causal = typed.getMask() == MaskKind::causal;
    v.window = typed.getWindow();
    v.sinkTokens = typed.getSinkTokens();
    if (auto scale = typed.getScale())
      v.scale = scale->convertToDouble();
  };
  if (auto fwd = dyn_cast<AttentionOp>(op))
    read(fwd);
  else if (auto bwd = dyn_cast<AttentionGradOp>(op))
    read(bwd);
  return v;
}

std::optional<Variant> Variant::fromEntry(Operation *entry) {
  auto dict = entry->getAttrOfType<DictionaryAttr>(kVariantAttrName);
  if (!dict)
    return std::nullopt;
  Variant v;
  if (auto mask = dict.getAs<IntegerAttr>("mask"))
    v.causal = mask.getInt() == static_cast<int64_t>(MaskKind::causal);
  if (auto window = dict.getAs<IntegerAttr>("window"))
    v.window = window.getInt();
  if (auto sinkTokens = dict.getAs<IntegerAttr>("sink_tokens"))
    v.sinkTokens = sinkTokens.getInt();
  if (auto scale = dict.getAs<FloatAttr>("scale"))
    v.scale = scale.getValueAsDouble();
  return v;
}

scf::ForOp TileBuilder::loop(Value lb, Value ub, Value step,
                             llvm::function_ref<void(Value)> body) {
  auto forOp = scf::ForOp::create(b, lb, ub, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forOp.getBody()->getTerminator());
  body(forOp.getInductionVar());
  return forOp;
}

Value TileBuilder::reduce(Value ub, Value init,
                          llvm::function_ref<Value(Value, Value)> step) {
  auto forOp = scf::ForOp::create(b, idx(0), ub, idx(1), ValueRange{init});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(forOp.getBody());
  Value next = step(forOp.getInductionVar(), forOp.getRegionIterArgs()[0]);
  scf::YieldOp::create(b, next);
  return forOp.getResult(0);
}

/// Where `phase` splits [lo, hi): the leading masked tiles end at
/// `leadEnd` (the first tile boundary at or past innerLo), the unmasked
/// ones at `midEnd` (the last whole tile before innerHi).
static std::pair<Value, Value> phaseSplit(TileBuilder &t, Value lo, Value hi,
                                          Value innerLo, Value innerHi,
                                          int64_t block) {
  Value zero = t.idx(0);
  Value lead =
      t.mul(t.ceilDiv(t.max(t.sub(innerLo, lo), zero), block), t.idx(block));
  Value leadEnd = t.min(hi, t.add(lo, lead));
  Value innerEnd = t.min(innerHi, hi);
  Value full = t.mul(t.floorDiv(t.max(t.sub(innerEnd, leadEnd), zero), block),
                     t.idx(block));
  return {leadEnd, t.add(leadEnd, full)};
}

void TileBuilder::phase(StringRef name, Value lo, Value hi, Value innerLo,
                        Value innerHi, int64_t block,
                        llvm::function_ref<void(Value, bool)> tile,
                        bool leadingMasked) {
  if (!leadingMasked) {
    // Where innerLo is lo itself there are no leading tiles to mask; else
    // the loop stays, whatever the caller believed.
    edgePhase(name, lo, hi, innerLo, innerHi, block,
              [&](Value start, TileEdge edge) {
                tile(start, edge != TileEdge::Inner);
              });
    return;
  }
  std::pair<Value, Value> split =
      phaseSplit(*this, lo, hi, innerLo, innerHi, block);
  Value leadEnd = split.first, midEnd = split.second;
  Value step = idx(block);
  auto tag = [&](scf::ForOp forOp, StringRef path) {
    forOp->setAttr("fa.tiles", b.getStringAttr(name + "." + path));
  };
  // The masked tiles, leading then trailing, walked by one loop with the
  // unmasked loop run at the turn between them: same order, two copies of
  // the tile's code instead of three.
  Value leadTiles = ceilDiv(sub(leadEnd, lo), block);
  Value trailTiles = ceilDiv(sub(hi, midEnd), block);
  Value turns = add(add(leadTiles, trailTiles), idx(1));
  scf::ForOp outer = loop(idx(0), turns, idx(1), [&](Value t) {
    auto turn = scf::IfOp::create(
        b, cmp(arith::CmpIPredicate::eq, t, leadTiles), /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(turn.thenBlock());
    tag(loop(leadEnd, midEnd, step,
             [&](Value start) { tile(start, /*masked=*/false); }),
        "unmasked");
    b.setInsertionPointToStart(turn.elseBlock());
    Value leading = cmp(arith::CmpIPredicate::slt, t, leadTiles);
    Value trailing = sub(t, add(leadTiles, idx(1)));
    tile(select(leading, add(lo, mul(t, step)),
                add(midEnd, mul(trailing, step))),
         true);
  });
  tag(outer, "masked");
}

void TileBuilder::edgePhase(StringRef name, Value lo, Value hi, Value innerLo,
                            Value innerHi, int64_t block,
                            llvm::function_ref<void(Value, TileEdge)> tile) {
  std::pair<Value, Value> split =
      phaseSplit(*this, lo, hi, innerLo, innerHi, block);
  Value leadEnd = split.first, midEnd = split.second;
  auto tiles = [&](Value from, Value to, TileEdge edge) {
    scf::ForOp forOp =
        loop(from, to, idx(block), [&](Value start) { tile(start, edge); });
    StringRef path = edge == TileEdge::Inner ? ".unmasked" : ".masked";
    forOp->setAttr("fa.tiles", b.getStringAttr(name + path));
  };
  if (innerLo != lo)
    tiles(lo, leadEnd, TileEdge::Leading);
  tiles(leadEnd, midEnd, TileEdge::Inner);
  tiles(midEnd, hi, TileEdge::Trailing);
}

void TileBuilder::branchedPhase(StringRef name, Value lo, Value hi,
                                Value innerLo, Value innerHi, int64_t block,
                                llvm::function_ref<void(Value, Value)> tile) {
  std::pair<Value, Value> split =
      phaseSplit(*this, lo, hi, innerLo, innerHi, block);
  Value leadEnd = split.first, midEnd = split.second;
  scf::ForOp forOp = loop(lo, hi, idx(block), [&](Value start) {
    tile(start,
         arith::OrIOp::create(b, cmp(arith::CmpIPredicate::slt, start, leadEnd),
                              cmp(arith::CmpIPredicate::sge, start, midEnd)));
  });
  forOp->setAttr("fa.tiles", b.getStringAttr(name + ".branched"));
}

SmallVector<Value, 3> TileBuilder::delinearize(Value linear,
                                               ValueRange extents) {
  SmallVector<Value, 3> indices;
  for (Value extent : extents.drop_back()) {
    indices.push_back(arith::RemUIOp::create(b, linear, extent));
    linear = arith::DivUIOp::create(b, linear, extent);
  }
  indices.push_back(linear);
  return indices;
}

TileBuilder::Dims TileBuilder::attentionDims(Value q, Value k) {
  Dims dims;
  dims.batch = dim(q, 0);
  dims.hq = dim(q, 1);
  dims.sq = dim(q, 2);
  dims.d = dim(q, 3);
  dims.hkv = dim(k, 1);
  dims.sk = dim(k, 2);
  dims.group = arith::DivSIOp::create(b, dims.hq, dims.hkv);
  dims.offset = sub(dims.sk, dims.sq);
  dims.queryStart = dims.keyStart = idx(0);
  return dims;
}

Value TileBuilder::sequenceBlockCount(const Dims &dims, Value queryStarts,
                                      int64_t rowsPerBlock) {
  Value sequences = sub(dim(queryStarts, 0), idx(1));
  return add(floorDiv(dims.sq, rowsPerBlock), sequences);
}

TileBuilder::SequenceBlock
TileBuilder::sequenceBlock(const Dims &dims, Value queryStarts, Value keyStarts,
                           Value block, int64_t rowsPerBlock) {
  auto offsetAt = [&](Value starts, Value s, Value lo, Value hi) {
    Value at = arith::IndexCastOp::create(b, b.getIndexType(),
                                          memref::LoadOp::create(b, starts, s));
    return clamp(at, lo, hi);
  };
  Value zero = idx(0), one = idx(1);
  // V(s), from sequence s's clamped first row.
  auto firstBlock = [&](Value start, Value s) {
    return add(floorDiv(start, rowsPerBlock), s);
  };
  // The last sequence s in [0, N) with firstBlock(s) <= block: lo keeps
  // that property, hi the opposite (or N).
  Type index = b.getIndexType();
  Value sequences = sub(dim(queryStarts, 0), one);
  auto search = scf::WhileOp::create(b, TypeRange{index, index},
                                     ValueRange{zero, sequences});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&search.getBefore(), {}, {index, index},
                                  {b.getLoc(), b.getLoc()});
    Value lo = before->getArgument(0), hi = before->getArgument(1);
    scf::ConditionOp::create(b,
                             cmp(arith::CmpIPredicate::sgt, sub(hi, lo), one),
                             ValueRange{lo, hi});
    Block *after = b.createBlock(&search.getAfter(), {}, {index, index},
                                 {b.getLoc(), b.getLoc()});
    lo = after->getArgument(0);
    hi = after->getArgument(1);
    Value mid = arith::DivUIOp::create(b, add(lo, hi), idx(2));
    Value below =
        cmp(arith::CmpIPredicate::sle,
            firstBlock(offsetAt(queryStarts, mid, zero, dims.sq), mid), block);
    scf::YieldOp::create(
        b, ValueRange{select(below, mid, lo), select(below, hi, mid)});
  }
  Value s = search.getResult(0), next = add(s, one);
  SequenceBlock seq;
  seq.dims = dims;
  seq.dims.queryStart = offsetAt(queryStarts, s, zero, dims.sq);
  seq.dims.sq = offsetAt(queryStarts, next, seq.dims.queryStart, dims.sq);
  seq.dims.keyStart = offsetAt(keyStarts, s, zero, dims.sk);
  seq.dims.sk = offsetAt(keyStarts, next, seq.dims.keyStart, dims.sk);
  seq.dims.offset = sub(seq.dims.sk, seq.dims.sq);
  Value inSequence = sub(block, firstBlock(seq.dims.queryStart, s));
  seq.m0 = add(seq.dims.queryStart, mul(inSequence, idx(rowsPerBlock)));
  // Only a malformed first start (above 0) puts a block before its
  // sequence's first: it gets no rows, as a spare block does.
  seq.rows = select(cmp(arith::CmpIPredicate::slt, inSequence, zero), zero,
                    clamp(sub(seq.dims.sq, seq.m0), zero, idx(rowsPerBlock)));
  // A block without rows visits no keys either.
  seq.dims.sk = select(cmp(arith::CmpIPredicate::sgt, seq.rows, zero),
                       seq.dims.sk, seq.dims.keyStart);
  return seq;
}

TileBuilder::Dims TileBuilder::pagedDims(const Dims &dims, Value blockTable,
                                         Value k) {
  if (!blockTable)
    return dims;
  Dims paged = dims;
  paged.blockTable = blockTable;
  paged.pages = dim(k, 0);
  paged.pageSize = dim(k, 2);
  paged.sk = mul(dim(blockTable, 1), paged.pageSize);
  paged.offset = sub(paged.sk, dims.sq);
  return paged;
}

std::pair<Value, Value> TileBuilder::keyRow(const Dims &dims, Value batch,
                                            Value j) {
  if (!dims.blockTable)
    return {batch, j};
  return pageRow(dims, pageEntry(dims, batch, j), j);
}

Value TileBuilder::pageEntry(const Dims &dims, Value batch, Value j) {
  Value slot = arith::DivUIOp::create(b, j, dims.pageSize);
  return memref::LoadOp::create(b, dims.blockTable, ValueRange{batch, slot});
}

std::pair<Value, Value> TileBuilder::pageRow(const Dims &dims, Value entry,
                                             Value j) {
  Value page = arith::IndexCastOp::create(b, b.getIndexType(), entry);
  return {clamp(page, idx(0), sub(dims.pages, idx(1))),
          arith::RemUIOp::create(b, j, dims.pageSize)};
}

TileBuilder::Dims TileBuilder::batchDims(const Dims &dims, Value keyLengths,
                                         Value batch, Value newKeys) {
  if (!keyLengths)
    return dims;
  Dims own = dims;
  Value length = arith::IndexCastOp::create(
      b, b.getIndexType(),
      memref::LoadOp::create(b, keyLengths, ValueRange{batch}));
  if (newKeys) {
    // The verifier holds Snew to at most Sk: the new rows fit.
    Value count = dim(newKeys, 2);
    own.appendAt = clamp(length, idx(0), sub(dims.sk, count));
    own.sk = add(own.appendAt, count);
  } else {
    own.sk = clamp(length, idx(0), dims.sk);
  }
  own.offset = sub(own.sk, dims.sq);
  return own;
}

Value TileBuilder::allowed(const Variant &v, const Dims &dims, Value i,
                           Value j) {
  Value ok = cmp(arith::CmpIPredicate::slt, j, dims.sk);
  Value diag = add(i, dims.offset);
  if (v.causal)
    ok = arith::AndIOp::create(b, ok,
                               cmp(arith::CmpIPredicate::sle, j, diag));
  if (v.window) {
    Value inWindow =
        cmp(arith::CmpIPredicate::sgt, j, sub(diag, idx(*v.window)));
    if (v.sinkTokens > 0)
      inWindow =
          arith::OrIOp::create(b, inWindow,
                               cmp(arith::CmpIPredicate::slt, j,
                                   add(dims.keyStart, idx(v.sinkTokens))));
    ok = arith::AndIOp::create(b, ok, inWindow);
  }
  return ok;
}

SmallVector<TileBuilder::KeyPhase, 2>
TileBuilder::keyPhases(const Variant &v, const Dims &dims, Value m0,
                       Value rows) {
  SmallVector<KeyPhase, 2> phases;
  Value first = dims.keyStart;
  Value lastRow = sub(add(m0, rows), idx(1));
  Value hi = dims.sk;
  if (v.causal)
    hi = clamp(add(add(lastRow, dims.offset), idx(1)), first, dims.sk);
  Value lo = first;
  if (v.window)
    lo = clamp(add(sub(add(m0, dims.offset), idx(*v.window)), idx(1)), first,
               hi);
  if (v.sinkTokens > 0) {
    // Sink keys below the window start are visible to every row of the
    // block (they lie left of the first row's window edge, hence left of
    // every diagonal), so only a partial last tile needs a bound.
    Value sinkHi = min(add(first, idx(v.sinkTokens)), lo);
    phases.push_back(
        {{"sink_keys", first, sinkHi, first, sinkHi, /*branchable=*/false},
         sinkHi});
  }
  // Tiles wholly inside: right of the last row's window edge and left of
  // the first row's diagonal.
  Value innerLo = lo;
  if (v.window)
    innerLo = clamp(
        add(sub(add(lastRow, dims.offset), idx(*v.window)), idx(1)), lo, hi);
  Value innerHi = hi;
  if (v.causal)
    innerHi = clamp(add(add(m0, dims.offset), idx(1)), lo, hi);
  KeyPhase keys{{"keys", lo, hi, innerLo, innerHi}, hi};
  // A block's first key tiles cross its window's edge.
  keys.leadingMasked = v.window.has_value();
  phases.push_back(keys);
  return phases;
}

SmallVector<TileBuilder::KeyPhase, 2>
TileBuilder::splitKeyPhases(ArrayRef<KeyPhase> phases, Value index,
                            Value count) {
  SmallVector<KeyPhase, 2> split(phases.begin(), phases.end());
  Value first = cmp(arith::CmpIPredicate::eq, index, idx(0));
  for (KeyPhase &p : MutableArrayRef<KeyPhase>(split).drop_back())
    p.hi = select(first, p.hi, p.lo);
  KeyPhase &last = split.back();
  Value tiles = ceilDiv(max(sub(last.hi, last.lo), idx(0)), blockN);
  Value perSplit = arith::CeilDivSIOp::create(b, tiles, count);
  Value keys = mul(perSplit, idx(blockN));
  Value lo = min(last.hi, add(last.lo, mul(index, keys)));
  Value hi = min(last.hi, add(lo, keys));
  // A phase that starts inside keeps starting inside (phase then emits no
  // leading masked loop).
  last.innerLo = last.innerLo == last.lo ? lo : clamp(last.innerLo, lo, hi);
  last.innerHi = clamp(last.innerHi, lo, hi);
  last.lo = lo;
  last.hi = hi;
  return split;
}

void TileBuilder::keyTiles(const Variant &v, const Dims &dims, Value m0,
                           Value rows,
                           llvm::function_ref<void(Value, bool, Value)> tile) {
  keyTiles(v, dims, m0, rows, /*branched=*/false,
           [&](Value n0, bool masked, Value keyHi, Value) {
             tile(n0, masked, keyHi);
           });
}

void TileBuilder::phaseTiles(
    const TilePhase &p, int64_t block, bool branched,
    llvm::function_ref<void(Value, bool, Value)> tile) {
  if (branched && p.branchable)
    branchedPhase(p.name, p.lo, p.hi, p.innerLo, p.innerHi, block,
                  [&](Value start, Value edge) { tile(start, true, edge); });
  else
    phase(
        p.name, p.lo, p.hi, p.innerLo, p.innerHi, block,
        [&](Value start, bool masked) { tile(start, masked, Value()); },
        p.leadingMasked);
}

void TileBuilder::keyTiles(
    const Variant &v, const Dims &dims, Value m0, Value rows, bool branched,
    llvm::function_ref<void(Value, bool, Value, Value)> tile) {
  for (const KeyPhase &p : keyPhases(v, dims, m0, rows))
    phaseTiles(p, blockN, branched, [&](Value n0, bool masked, Value when) {
      tile(n0, masked, p.keyHi, when);
    });
}

TileBuilder::TilePhase TileBuilder::queryPhase(const Variant &v,
                                               const Dims &dims, Value n0,
                                               Value cols) {
  Value zero = idx(0);
  Value lo = zero, hi = dims.sq;
  Value innerLo = zero, innerHi = dims.sq;
  Value lastKey = sub(add(n0, cols), idx(1));
  if (v.causal) {
    // Row i sees key j when j <= i + offset.
    lo = clamp(sub(n0, dims.offset), zero, dims.sq);
    innerLo = sub(add(n0, idx(blockN - 1)), dims.offset);
  }
  if (v.window) {
    // Row i sees key j when j > i + offset - W, unless j is a sink key.
    Value w = idx(*v.window);
    Value windowHi = clamp(add(sub(lastKey, dims.offset), w), zero, dims.sq);
    if (v.sinkTokens > 0)
      windowHi = select(cmp(arith::CmpIPredicate::slt, n0, idx(v.sinkTokens)),
                        dims.sq, windowHi);
    hi = windowHi;
    innerHi = add(sub(n0, dims.offset), w);
  }
  lo = min(lo, hi);
  // A partial key tile has no unmasked query tiles.
  Value fullKeys = cmp(arith::CmpIPredicate::eq, cols, idx(blockN));
  innerLo = clamp(innerLo, lo, hi);
  innerHi = select(fullKeys, clamp(innerHi, innerLo, hi), innerLo);
  TilePhase phase{"queries", lo, hi, innerLo, innerHi};
  // A key tile's first query tiles cross its diagonal.
  phase.leadingMasked = v.causal;
  return phase;
}

void TileBuilder::queryTiles(const Variant &v, const Dims &dims, Value n0,
                             Value cols, int64_t blockM,
                             llvm::function_ref<void(Value, bool)> tile) {
  queryTiles(v, dims, n0, cols, blockM, /*branched=*/false,
             [&](Value m0, bool masked, Value) { tile(m0, masked); });
}

void TileBuilder::queryTiles(
    const Variant &v, const Dims &dims, Value n0, Value cols, int64_t blockM,
    bool branched, llvm::function_ref<void(Value, bool, Value)> tile) {
  phaseTiles(queryPhase(v, dims, n0, cols), blockM, branched, tile);
}

Value TileBuilder::scoreScale(const Variant &v, Value d) {
  if (v.scale)
    return flt(*v.scale);
  Value di = arith::IndexCastOp::create(b, b.getI64Type(), d);
  Value df = arith::SIToFPOp::create(b, acc, di);
  return arith::DivFOp::create(b, flt(1.0), math::SqrtOp::create(b, df));
}

} // namespace fa
