//===- WgmmaBackward.cpp - Attention backward on wgmma (sm_90a) -----------===//
//
// The Hopper backward: two warp-specialised kernels (WgmmaEmitter.h), each
// recomputing S and dP from the forward's lse, every GEMM on wgmma.
//
// dK/dV: a block per (key block, kv head, batch), the longest first
// (keyBlockTile); each consumer warpgroup owns 64 keys of the block, whose
// K and V are the fixed tiles. The streamed tiles are Q (0) and dO (1) of
// each query tile that can see the block (TileBuilder's query phase: the
// mask as loop bounds), over every query head of the kv head's group. Per
// query tile:
//   S^T = K Q^T, dP^T = V dO^T   wgmma from shared memory (both K-major),
//                                one group
//   P^T, dS^T                    in the accumulators (keyMajorGrads)
//   dV += P^T dO, dK += dS^T Q   wgmma with A from registers and B (dO, Q)
//                                read MN-major, one group
// dK and dV stay in registers until the block's last tile. Query tiles are
// 128 rows up to D 64, else 64 (wgmmaDkDvQueryRows): at D 64 the larger
// tile ran the backward 8-13% faster with dQ's own kernel (bench/NOTES.md,
// thirty-seventh session), 8% with dQ added here (forty-eighth).
//
// dQ: a query block per (row block, head, batch), ordered as the
// forward's (queryBlock); up to D 128 on a persistent grid that draws them
// as the forward's does (kWgmmaPersistentDqMaxHeadDim), so that the next
// block's Q, dO and first K/V tiles land while this one finishes: short
// windows' blocks see two or three key tiles, and copied one after another
// their Q and dO waited in front of each. The fixed tiles are Q and dO, the
// streamed ones K (0) and V (1) of each key tile the forward visits. Per key
// tile:
//   S = Q K^T, dP = dO V^T       one group; V is free once it is done
//   P, dS                        (queryMajorGrads)
//   dQ += dS K                   A from registers, K read MN-major
// Where o fits beside them as a third fixed tile (persistent, D 32-96), the
// dQ kernel computes each block's D = rowsum(dO o) from the shared tiles
// before its first key tile, writes it (and dsinks' partials) for the
// dK/dV kernel, and runs first: the D kernel's pass over o and dO (70 us of
// gpt-oss's window-128 backward on the H200) becomes o's TMA copy beside
// Q and dO. H200 (bench/NOTES.md, forty-fourth session): that backward
// +7%, causal D 64 +5%, D 96 +2%.
//
// Both scale dK and dQ by the softmax scale once, at the end.
//
// With dq-atomics the dK/dV kernel computes dQ instead (accumulateDq): per
// query tile each consumer puts its dS^T in shared memory, and after a
// named barrier multiplies all 128 keys' dS by its share of K's columns,
// puts the f32 product in a shared tile and has TMA add it into an f32
// accumulator. 3% faster than the dQ kernel at D 128, 8% slower at D 64
// (bench/NOTES.md): the tuner picks.
//
// Past D 128 the dK/dV block's two consumers share its 64 keys
// (halvesColumns): each takes S^T and dP^T for half of the query tile's
// rows, both put P^T and dS^T in shared memory, and each multiplies them
// by its half of dO's and Q's columns (accumulateColumnHalves). dQ stays
// in its own kernel there.
//
// Each consumer reads its tile's lse and D from a shared buffer its
// threads fill (one load each), and takes the fixed tiles' addresses
// through an opaque move per tile: both keep the loop's registers for the
// accumulators (ptxas spilled the hoisted descriptors and loaded values).
//
//===----------------------------------------------------------------------===//

#include "WgmmaEmitter.h"

using namespace mlir;
using namespace fa;
using namespace fa::tensor_core;

namespace {

class WgmmaBackwardEmitter : public WgmmaEmitter {
public:
  using WgmmaEmitter::WgmmaEmitter;

  /// Launches the dK/dV kernel: blockN keys per block, 64 per consumer
  /// warpgroup, over query tiles of queryRows; with `dqAccum` it adds each
  /// tile's dS K (unscaled) into it too.
  void emitDkDv(const Variant &variant, GradArgs args, Value dqAccum,
                StringRef name) {
    for (Value *m : {&args.q, &args.k, &args.v, &args.dO, &args.dk, &args.dv})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    SmallVector<MapOperand, 5> operands = {{args.k, 1, blockN},
                                           {args.v, 2, blockN},
                                           {args.q, 0, queryRows},
                                           {args.dO, 3, queryRows}};
    if (dqAccum)
      operands.push_back({dqAccum, 4, queryRows, dqBoxColumns()});
    assert((!dqAccum || !halvesColumns()) &&
           "dq-atomics needs whole rows of dS");
    Value tiles = ceilDiv(dims.sk, blockN);
    launchWithTensorMaps(
        operands, {tiles, dims.hkv, dims.batch}, {blockN, blockN}, queryRows,
        wgmmaDkDvScratchBytes(blockN, queryRows, headDim, elementBytes(),
                              /*withDq=*/bool(dqAccum)),
        name,
        [&](gpu::LaunchOp launch, ArrayRef<Value> maps,
            const SharedLayout &at) {
          Value n0 = mul(keyBlockTile(dims, tiles, launch.getBlockIds().x),
                         idx(blockN));
          TilePhase queries = queryPhase(
              variant, dims, n0, min(idx(blockN), sub(dims.sk, n0)));
          // Every query head of the group visits the same tiles.
          Value perHead = tileCount(queries.lo, queries.hi, queryRows);
          auto countOf = [&](Value member, Value m0) {
            return add(mul(member, perHead),
                       divi(sub(m0, queries.lo), queryRows));
          };
          splitRoles(
              [&] {
                emitProducer(
                    at, {{maps[0], 0, n0, kvHead}, {maps[1], 1, n0, kvHead}},
                    {maps[2], maps[3]}, [&](auto copy) {
                      loop(dims.group, [&](Value member) {
                        Value head = add(mul(kvHead, dims.group), member);
                        loop(queries.lo, queries.hi, idx(queryRows),
                             [&](Value m0) {
                               copy(countOf(member, m0), m0, head);
                             });
                      });
                    });
              },
              [&] {
                Value group = enterConsumer();
                bool halves = halvesColumns();
                // This warpgroup's 64 keys (of them warp w % 4's rows 16 (w
                // % 4)..: the block's own where both share them), and the
                // query rows of the tile its S^T and dP^T take.
                Value groupKeys = halves ? idx(0) : mul(group, idx(kGroupRows));
                Value keys = rowAt(fixedAt(at, 0), groupKeys);
                Value values = rowAt(fixedAt(at, 1), groupKeys);
                std::array<Value, 2> keyOf = laneRows(
                    add(n0, mul(halves ? remi(warp, 4) : warp, idx(16))));
                int64_t scoreRows = this->scoreRows();
                Value firstScoreRow =
                    halves ? mul(group, idx(scoreRows)) : idx(0);
                Value scale = scoreScale(variant, idx(headDim));
                Value scaleLog2 = toBase2(scale);
                // dK's and dV's columns this warpgroup accumulates, a
                // register state per piece.
                SmallVector<ColumnPiece, 2> pieces = columnPieces();
                SmallVector<Value, 2> dk, dv;
                // With dQ added here in one slice per warpgroup, dK's
                // product queues behind dQ's, so that the f32 dQ tile's
                // stores and its reduction run under it (causal D 128
                // backward +5%). Not under a window or sink tokens: their
                // extra mask phases' loops then spill the dS^T registers
                // held across the barrier (swa D 128 -4%, streaming -12%).
                bool dkBehindDq = dqAccum && dqSlicesEvenly() &&
                                  !variant.windowOrSinkTokens();
                for (const ColumnPiece &piece : pieces) {
                  dk.push_back(zeroState(piece.n));
                  dv.push_back(zeroState(piece.n));
                }
                waitBarrier(fixedLanded(at), idx(0));
                loop(dims.group, [&](Value member) {
                  Value head = add(mul(kvHead, dims.group), member);
                  phaseTiles(
                      queries, queryRows,
                      [&](Value m0, bool masked, Value maskWhen) {
                        Value count = countOf(member, m0);
                        Value firstRow = add(m0, firstScoreRow);
                        SmallVector<LoadedStatistic, 2> loaded =
                            loadRowStatistics(args, dims, head, firstRow);
                        Value slot = waitStreamed(at, count);
                        Value qTile = stageAt(at, kQueries, slot);
                        Value dOTile = stageAt(at, kGrads, slot);
                        fence();
                        Value sAcc = issueRowProduct(
                            opaque(keys), blockN, rowAt(qTile, firstScoreRow),
                            queryRows, scoreRows);
                        Value dpAcc = issueRowProduct(
                            opaque(values), blockN,
                            rowAt(dOTile, firstScoreRow), queryRows, scoreRows);
                        commit();
                        waitGroups(0);
                        auto s = accumulatorTiles(sAcc, scoreRows);
                        auto dp = accumulatorTiles(dpAcc, scoreRows);
                        Value stats = storeRowStatistics(at, group, count,
                                                         loaded, s[0][0]);
                        keyMajorGrads(variant, dims, firstRow, masked, maskWhen,
                                      keyOf, scaleLog2, s, dp,
                                      [&](Value, int64_t offset) {
                                        return sharedRowStatistics(stats,
                                                                   offset);
                                      });
                        auto pRegs = registerOperand(s);
                        auto dsRegs = registerOperand(dp);
                        if (halves) {
                          accumulateColumnHalves(at, pRegs, dsRegs, count,
                                                 group, qTile, dOTile, dk, dv);
                        } else {
                          fence();
                          issueRegisterProduct(pRegs, dOTile, queryRows, dv[0]);
                          if (!dkBehindDq)
                            issueRegisterProduct(dsRegs, qTile, queryRows,
                                                 dk[0]);
                          commit();
                        }
                        auto issueDk = [&] {
                          issueRegisterProduct(dsRegs, qTile, queryRows, dk[0]);
                          commit();
                        };
                        if (dqAccum)
                          accumulateDq(
                              at, dsRegs, count, group, head, m0, maps[4],
                              dkBehindDq ? function_ref<void()>(issueDk)
                                         : nullptr);
                        waitGroups(0);
                        release(at, kQueries, slot);
                        release(at, kGrads, slot);
                      });
                });
                if (dqAccum)
                  onGroupLeader([&] {
                    // The shared dQ tile must outlive its last reduction.
                    NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, UnitAttr());
                  });
                Value one = flt(1.0);
                for (auto [piece, dkPiece, dvPiece] :
                     llvm::zip_equal(pieces, dk, dv)) {
                  Value column0 =
                      pieceOf(group, piece.first[0], piece.first[1]);
                  storeRows(dkPiece, {scale, scale}, args.dk, kvHead, keyOf,
                            dims.sk, piece.n, column0);
                  storeRows(dvPiece, {one, one}, args.dv, kvHead, keyOf,
                            dims.sk, piece.n, column0);
                }
              });
        });
  }

  /// Launches the dQ kernel: queryRows rows per query block, 64 per
  /// consumer warpgroup, over key tiles of blockN; with `persistent`, a
  /// block per SM taking query blocks in the grid's order as the forward's
  /// blocks do (produceWorkItems), so that the producer copies the next
  /// block's Q, dO and first K/V tiles while the consumers finish this
  /// one's. With `computesRowDot`, o is a third fixed tile and each
  /// consumer computes its rows' D from it and dO (rowDotOfFixedTiles).
  void emitDq(const Variant &variant, GradArgs args, bool persistent,
              bool computesRowDot, const SinkTerms *sinkTerms, StringRef name) {
    assert((persistent || !computesRowDot) &&
           "D in the dQ kernel is the persistent form's");
    for (Value *m : {&args.q, &args.k, &args.v, &args.dO, &args.dq})
      *m = withUnitStride(*m);
    // The producer's item loop (four tensor maps, the counter, the item's
    // copy and first tile) spilled 4-12 bytes in 24 registers.
    wideProducer = persistent;
    Dims dims = attentionDims(args.q, args.k);
    Value tiles = ceilDiv(dims.sq, queryRows);
    Value work = mul(tiles, mul(dims.hq, dims.batch));
    Value blocks, counter;
    std::tie(blocks, counter) = workGrid(work, persistent, name);
    SmallVector<MapOperand, 5> operands = {{args.q, 0, queryRows},
                                           {args.dO, 3, queryRows},
                                           {args.k, 1, blockN},
                                           {args.v, 2, blockN}};
    SmallVector<int64_t, 3> fixedRows = {queryRows, queryRows};
    if (computesRowDot) {
      args.o = withUnitStride(args.o);
      operands.push_back({args.o, 5, queryRows});
      fixedRows.push_back(queryRows);
    }
    const SinkTerms *partials = computesRowDot ? sinkTerms : nullptr;
    launchWithTensorMaps(
        operands, {blocks, idx(1), idx(1)}, fixedRows, blockN,
        partials ? kWgmmaDqSinkScratchBytes : 0, name,
        [&](gpu::LaunchOp launch, ArrayRef<Value> maps,
            const SharedLayout &at) {
          SmallVector<Value, 3> fixedMaps = {maps[0], maps[1]};
          if (computesRowDot)
            fixedMaps.push_back(maps[4]);
          // Not persistent, a block runs its own query block alone, without
          // the item loops (which spilled past D 128, where this form runs).
          if (!persistent) {
            splitRoles(
                [&] {
                  emitQueryBlockProducer(
                      variant, dims,
                      queryBlock(variant, dims, tiles, launch, queryRows), at,
                      fixedMaps, {maps[2], maps[3]});
                },
                [&] {
                  Value group = enterConsumer();
                  waitBarrier(fixedLanded(at), idx(0));
                  emitDqConsumer(
                      variant, args, dims, tiles, group,
                      WorkItem{launch.getBlockIds().x, idx(0), idx(0)}, at,
                      /*freesFixed=*/false, /*computesRowDot=*/false, nullptr);
                });
            return;
          }
          splitRoles(
              [&] {
                electedThread([&] {
                  produceWorkItems(
                      launch, at, work, counter, [&](const WorkItem &item) {
                        return produceQueryBlock(
                            variant, dims,
                            queryBlock(variant, dims, tiles, item.linear,
                                       queryRows),
                            at, fixedMaps, {maps[2], maps[3]}, item.firstTile,
                            fixedSlotOf(item.round).first);
                      });
                });
              },
              [&] {
                Value group = enterConsumer();
                consumeWorkItems(at, work, [&](const WorkItem &item) {
                  return emitDqConsumer(variant, args, dims, tiles, group, item,
                                        at, /*freesFixed=*/true, computesRowDot,
                                        partials);
                });
              });
        });
    if (counter)
      memref::DeallocOp::create(b, counter);
  }

private:
  /// A dQ consumer warpgroup on work item `item`: its 64 rows of the query
  /// block over every key tile as it lands. Returns the item's key tiles;
  /// with `freesFixed`, arrives on fixedFree once Q and dO are read. With
  /// `computesRowDot` its rows' D comes from the fixed o and dO tiles, and
  /// goes to args.rowDot (and, given `sinkTerms`, their partial).
  Value emitDqConsumer(const Variant &variant, const GradArgs &args,
                       const Dims &dims, Value tiles, Value group,
                       const WorkItem &item, const SharedLayout &at,
                       bool freesFixed, bool computesRowDot,
                       const SinkTerms *sinkTerms) {
    QueryBlock block = queryBlock(variant, dims, tiles, item.linear, queryRows);
    Value scale = scoreScale(variant, idx(headDim));
    Value scaleLog2 = toBase2(scale);
    LaneRowStatistics stats =
        laneRowStatistics(args, dims, block.head, block.rowOf, !computesRowDot);
    if (computesRowDot) {
      stats.rowDot =
          rowDotOfFixedTiles(at, fixedSlotOf(item.round).first, group);
      writeRowDot(args, dims, block, group, item.round, stats, at, sinkTerms);
    }
    Value dq = zeroState();
    // This warpgroup's rows of the item's copy of Q and dO (fixedSlotOf,
    // made where used).
    auto fixedRows = [&](int64_t tile) {
      return rowAt(fixedAt(at, tile, fixedSlotOf(item.round).first),
                   mul(group, idx(kGroupRows)));
    };
    // Tile `count` at key n0 (masked below `keyHi` when set, where
    // `maskWhen` holds when set), on its first `width` keys.
    auto keyTile = [&](Value n0, Value keyHi, Value maskWhen, Value count,
                       int64_t width, tensor_core::KeyEdge edge) {
      assert(edge == tensor_core::KeyEdge::Both && "dQ masks both edges");
      Value slot = waitStreamed(at, add(item.firstTile, count));
      Value kTile = stageAt(at, kKeys, slot);
      Value vTile = stageAt(at, kValues, slot);
      fence();
      Value sAcc =
          issueRowProduct(fixedRows(0), queryRows, kTile, blockN, width);
      Value dpAcc =
          issueRowProduct(fixedRows(1), queryRows, vTile, blockN, width);
      commit();
      waitGroups(0);
      release(at, kValues, slot);
      auto s = accumulatorTiles(sAcc, width);
      auto dp = accumulatorTiles(dpAcc, width);
      queryMajorGrads(variant, dims, block.rowOf, n0, keyHi, stats.lse2,
                      stats.rowDot, scaleLog2, s, dp, maskWhen);
      auto dsRegs = registerOperand(dp);
      fence();
      issueRegisterProduct(dsRegs, kTile, blockN, dq);
      commit();
      waitGroups(0);
      release(at, kKeys, slot);
    };
    Value total = consumeKeyTiles(variant, dims, block.m0, block.rows,
                                  /*apartEdges=*/false, keyTile);
    // Every product with Q and dO was waited for: the producer may copy a
    // later block's into this copy.
    if (freesFixed)
      arriveOn(fixedFree(at, fixedSlotOf(item.round).first));
    storeRows(dq, {scale, scale}, args.dq, block.head, block.rowOf, dims.sq);
    return total;
  }

  /// D = rowsum(dO o) of this lane's two rows (as laneRows numbers them)
  /// of the item's fixed dO (1) and o (2) tiles, copy `slot`: the quad's
  /// lanes take 16-byte chunks t, t + 4, ... of both rows and sum them in
  /// f32, then the quad's sums join (quadReduce), so that each lane of the
  /// quad holds both rows' D. The D kernel's reads of o and dO (bound by
  /// memory: 70 us of gpt-oss's window-128 backward on the H200) become
  /// TMA copies beside the item's Q and dO.
  std::array<Value, 2> rowDotOfFixedTiles(const SharedLayout &at, Value slot,
                                          Value group) {
    assert(elementBytes() == 2 && "wgmma tiles hold 16-bit elements");
    int64_t chunks = headDim * elementBytes() / 16;
    int64_t perSegment = segmentBytes / 16;
    auto chunkType = VectorType::get({16 / elementBytes()}, element);
    std::array<Value, 2> tileRows;
    for (int64_t tile : {1, 2})
      tileRows[tile - 1] =
          rowAt(fixedAt(at, tile, slot), mul(group, idx(kGroupRows)));
    std::array<Value, 2> sums;
    for (int64_t r = 0; r < 2; ++r) {
      Value row = add(add(mul(remi(warp, 4), idx(16)), quadRank), idx(8 * r));
      Value sum = flt(0.0);
      for (int64_t first = 0; first < chunks; first += 4) {
        Value chunk = add(quadTid, idx(first));
        Value inRange;
        if (first + 4 > chunks) { // the last chunks: not every lane has one
          inRange = cmp(arith::CmpIPredicate::ult, chunk, idx(chunks));
          chunk = min(chunk, idx(chunks - 1));
        }
        Value offset =
            add(mul(divi(chunk, perSegment), idx(queryRows * segmentBytes)),
                swizzledAt(row, remi(chunk, perSegment), segmentBytes));
        std::array<Value, 2> loaded;
        for (int64_t i = 0; i < 2; ++i)
          loaded[i] = LLVM::LoadOp::create(
              b, chunkType, sharedPointer(add(tileRows[i], offset)),
              /*alignment=*/16);
        Value part = flt(0.0);
        for (int64_t e = 0; e < chunkType.getNumElements(); ++e) {
          auto widened = [&](Value v) {
            Value narrow = vector::ExtractOp::create(b, v, e);
            return arith::ExtFOp::create(b, b.getF32Type(), narrow);
          };
          part = math::FmaOp::create(b, widened(loaded[0]), widened(loaded[1]),
                                     part);
        }
        sum = fadd(sum, inRange ? select(inRange, part, flt(0.0)) : part);
      }
      sums[r] = quadReduce(sum, [&](Value x, Value y) { return fadd(x, y); });
    }
    return sums;
  }

  /// Writes the D of this lane's rows (stats.rowDot, rowDotOfFixedTiles's)
  /// to args.rowDot, from the quad's first lane, for the dK/dV kernel that
  /// runs after this one. Given `sinkTerms`, also the partial of dsinks'
  /// terms exp(sink - lse) D over the warpgroup's 64 rows, as the D
  /// kernel's block of those rows would write it: each warp's by shuffles,
  /// then the four in order by the warpgroup's first thread, through the
  /// item's buffer in shared memory (the round's parity picks it: a warp
  /// that runs ahead writes the next item's into the other).
  void writeRowDot(const GradArgs &args, const Dims &dims,
                   const QueryBlock &block, Value group, Value round,
                   const LaneRowStatistics &stats, const SharedLayout &at,
                   const SinkTerms *sinkTerms) {
    Value first = cmp(arith::CmpIPredicate::eq, quadTid, idx(0));
    std::array<Value, 2> owner;
    for (int64_t r = 0; r < 2; ++r) {
      owner[r] = arith::AndIOp::create(
          b, first, cmp(arith::CmpIPredicate::slt, block.rowOf[r], dims.sq));
      auto store = scf::IfOp::create(b, owner[r], false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(store.thenBlock());
      memref::StoreOp::create(b, stats.rowDot[r], args.rowDot,
                              ValueRange{batchIdx, block.head, block.rowOf[r]});
    }
    if (!sinkTerms)
      return;
    Value sink2 = sinkLogit2(sinkTerms->sinks, block.head);
    Value terms = flt(0.0);
    for (int64_t r = 0; r < 2; ++r)
      terms =
          fadd(terms,
               select(owner[r], sinkTerm(sink2, stats.lse2[r], stats.rowDot[r]),
                      flt(0.0)));
    Value warpSum =
        laneReduce(terms, 32, [&](Value x, Value y) { return fadd(x, y); });
    constexpr int64_t kWarps = kGroupRows / 16;
    Value buffer =
        add(scratchAt(at),
            mul(add(mul(group, idx(2)), remi(round, 2)), idx(kWarps * 4)));
    {
      auto laneZero = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::eq, lane, idx(0)), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(laneZero.thenBlock());
      LLVM::StoreOp::create(
          b, warpSum,
          sharedPointer(add(buffer, mul(remi(warp, kWarps), idx(4)))));
    }
    namedBarrier(add(idx(kGroupBarriers), group), 128);
    Value groupRow0 = add(block.m0, mul(group, idx(kGroupRows)));
    onGroupLeader([&] {
      auto inRange = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, groupRow0, dims.sq), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inRange.thenBlock());
      Value total = flt(0.0);
      for (int64_t w = 0; w < kWarps; ++w)
        total = fadd(
            total, LLVM::LoadOp::create(b, b.getF32Type(),
                                        sharedPointer(add(buffer, idx(4 * w))))
                       .getResult());
      Value partial = sinkPartialIndex(b, batchIdx, dims.sq,
                                       divi(groupRow0, idx(kSinkPartialRows)));
      memref::StoreOp::create(b, total, sinkTerms->partials,
                              ValueRange{block.head, partial});
    });
  }

  /// Whether the block's consumers share its 64 keys, each accumulating
  /// half of dK's and dV's columns (past D 128): whole-width dK and dV of
  /// 64 keys would take 192 or 256 of a consumer's 240 registers, with S^T
  /// and dP^T still to hold. Each computes S^T and dP^T for half of the
  /// tile's query rows, and both put P^T and dS^T in shared memory, from
  /// which each multiplies them by its columns of dO and Q. (Before, a
  /// block per part of 64 columns recomputed S^T and dP^T over the whole
  /// head dim for each part: 2x the GEMM work at D 192, 2.5x at D 256.)
  bool halvesColumns() const { return !wgmmaDkDvWholeRows(headDim); }
  /// The query rows of a tile whose S^T and dP^T one consumer takes.
  int64_t scoreRows() const { return wgmmaDkDvScoreRows(headDim, queryRows); }
  /// A range of dK's and dV's columns a consumer accumulates in a register
  /// state of its own: n columns from first[g] in warpgroup g.
  struct ColumnPiece {
    int64_t n;
    std::array<int64_t, 2> first;
  };
  /// The ranges that make up each consumer's columns: the head dim, or each
  /// consumer's half of it as wgmma n can take it from an MN-major tile
  /// (whole column blocks, or a range inside one: D 192's halves of 96
  /// start and end mid-block, 64 + 32 and 32 + 64). Both consumers' pieces
  /// are taken widest first, so that piece i has one width in both and the
  /// same registers: with a piece's state in other registers in each
  /// (columns in order), ptxas serialised every wgmma of the D 192 kernel
  /// (C7511, too few registers for the wgmma pipeline).
  SmallVector<ColumnPiece, 2> columnPieces() const {
    if (!halvesColumns())
      return {{headDim, {0, 0}}};
    int64_t half = headDim / 2;
    std::array<SmallVector<std::pair<int64_t, int64_t>, 2>, 2> ranges;
    for (int64_t g = 0; g < 2; ++g) {
      for (int64_t column = g * half, end = column + half; column < end;) {
        int64_t within = column % blockElements();
        int64_t n = within == 0
                        ? (end - column) / blockElements() * blockElements()
                        : 0;
        if (n == 0)
          n = std::min(end - column, blockElements() - within);
        ranges[g].push_back({n, column});
        column += n;
      }
      llvm::sort(ranges[g], [](auto x, auto y) { return x.first > y.first; });
    }
    SmallVector<ColumnPiece, 2> pieces;
    for (auto [zero, one] : llvm::zip_equal(ranges[0], ranges[1])) {
      assert(zero.first == one.first && "both consumers' pieces alike");
      pieces.push_back({zero.first, {zero.second, one.second}});
    }
    return pieces;
  }
  /// `first` in warpgroup 0, `second` in warpgroup 1.
  Value pieceOf(Value group, int64_t first, int64_t second) {
    if (first == second)
      return idx(first);
    return arith::SelectOp::create(b,
                                   cmp(arith::CmpIPredicate::eq, group, idx(0)),
                                   idx(first), idx(second));
  }

  /// The scratch bytes (wgmmaDkDvScratchBytes) hold each consumer's row
  /// statistics (kWgmmaDkDvBuffers buffers of a query tile's base-2 lse
  /// then D: a warpgroup may write tile t + 1's while its slowest warp
  /// still reads tile t's), then the dS^T tiles (keys x query rows,
  /// kWgmmaDkDvBuffers: one warpgroup may write tile t + 1's while the
  /// other still reads tile t's) and the dQ tile; where the consumers
  /// halve the columns, pairs of P^T and dS^T tiles instead (gradTilesAt),
  /// buffered alike.
  int64_t statisticsBytes() const {
    return wgmmaDkDvStatisticsBytes(scoreRows());
  }
  int64_t dsTileBytes() const { return blockN * queryRows * elementBytes(); }
  Value dsTileAt(const SharedLayout &at, Value count) {
    return add(scratchAt(at),
               add(idx(statisticsBytes()),
                   mul(remi(count, kWgmmaDkDvBuffers), idx(dsTileBytes()))));
  }
  Value gradTilesAt(const SharedLayout &at, Value count) {
    return add(scratchAt(at),
               add(idx(statisticsBytes()), mul(remi(count, kWgmmaDkDvBuffers),
                                               idx(2 * dsTileBytes()))));
  }
  Value dqTileAt(const SharedLayout &at) {
    return add(scratchAt(at),
               idx(statisticsBytes() + kWgmmaDkDvBuffers * dsTileBytes()));
  }

  /// A value this thread loads for a tile's statistics buffer: value `at`
  /// of [0, 2 scoreRows()), an lse where `isLse` (an i1) holds, else a D.
  struct LoadedStatistic {
    Value at;
    Value isLse;
    Value value;
  };
  /// This thread's share of the lse and D of query rows [first, first +
  /// scoreRows()) of `head` (rows past Sq read the last row's): values
  /// [0, rows) are the lse's, [rows, 2 rows) D's, and thread `lane` takes
  /// lane, lane + 128, ... They are loaded at the top of a tile, before its
  /// wait for Q and dO, and put in shared memory (storeRowStatistics) once
  /// S^T and dP^T are done: loaded after the tile's first wgmmas, their use
  /// held up the issue of dP^T's (ncu, thirty-ninth session: 4% of the
  /// consumers' stall samples at D 128).
  SmallVector<LoadedStatistic, 2> loadRowStatistics(const GradArgs &args,
                                                    const Dims &dims,
                                                    Value head, Value first) {
    int64_t rows = scoreRows();
    Value lane = remi(tid, 128);
    SmallVector<LoadedStatistic, 2> loaded;
    for (int64_t base = 0; base < 2 * rows; base += 128) {
      // Every thread loads (the row is clamped into range); only those
      // below 2 rows store (storeRowStatistics).
      Value at = add(lane, idx(base));
      Value row = min(add(first, remi(at, rows)), sub(dims.sq, idx(1)));
      // A constant where the 128 values are all of one kind (the branch
      // below folds away).
      Value isLse =
          base + 128 <= rows || base >= rows
              ? arith::ConstantIntOp::create(b, base < rows, 1).getResult()
              : cmp(arith::CmpIPredicate::ult, at, idx(rows));
      auto which = scf::IfOp::create(b, TypeRange{b.getF32Type()}, isLse, true);
      OpBuilder::InsertionGuard inner(b);
      for (auto [block, from] : {std::pair(which.thenBlock(), args.lse),
                                 std::pair(which.elseBlock(), args.rowDot)}) {
        b.setInsertionPointToStart(block);
        scf::YieldOp::create(
            b, memref::LoadOp::create(b, from, ValueRange{batchIdx, head, row})
                   .getResult());
      }
      loaded.push_back({at, isLse, which.getResult(0)});
    }
    return loaded;
  }
  /// Puts `loaded` (loadRowStatistics), the lse's in base 2, into this
  /// warpgroup's statistics buffer of the block's tile `count`, and returns
  /// the buffer once the whole warpgroup has written it. Each thread then
  /// reads only the columns it needs, where it needs them, rather than
  /// holding 2 x 16 values across the tile. `landed` is a value of the
  /// tile's S^T: the lse's scale by log2 e is made to depend on it (as
  /// fma(landed, 0, log2 e), which IEEE arithmetic cannot fold), so that
  /// ptxas places it after the wait for S^T; given a constant, it hoisted
  /// the multiply above the tile's first wgmma, where it waited for the
  /// load.
  Value storeRowStatistics(const SharedLayout &at, Value group, Value count,
                           ArrayRef<LoadedStatistic> loaded, Value landed) {
    int64_t rows = scoreRows();
    Value buffer =
        add(scratchAt(at), mul(add(mul(group, idx(kWgmmaDkDvBuffers)),
                                   remi(count, kWgmmaDkDvBuffers)),
                               idx(wgmmaDkDvStatisticsBufferBytes(rows))));
    Value log2e = math::FmaOp::create(b, landed, flt(0.0), flt(kLog2E));
    for (auto [i, statistic] : llvm::enumerate(loaded)) {
      OpBuilder::InsertionGuard guard(b);
      if (2 * rows - 128 * static_cast<int64_t>(i) < 128)
        b.setInsertionPointToStart(
            scf::IfOp::create(
                b, cmp(arith::CmpIPredicate::ult, statistic.at, idx(2 * rows)),
                false)
                .thenBlock());
      Value stored = select(statistic.isLse, fmul(statistic.value, log2e),
                            statistic.value);
      LLVM::StoreOp::create(
          b, stored, sharedPointer(add(buffer, mul(statistic.at, idx(4)))));
    }
    namedBarrier(add(idx(kGroupBarriers), group), 128);
    return buffer;
  }
  /// The base-2 lse and D of the column `offset` + 2 t of the tile whose
  /// statistics are at `buffer`.
  std::pair<Value, Value> sharedRowStatistics(Value buffer, int64_t offset) {
    Value at = add(buffer, mul(add(idx(offset), mul(quadTid, idx(2))), idx(4)));
    auto load = [&](Value address) {
      return LLVM::LoadOp::create(b, b.getF32Type(), sharedPointer(address))
          .getResult();
    };
    return {load(at), load(add(at, idx(scoreRows() * 4)))};
  }

  /// The columns of dQ's head dim each consumer warpgroup multiplies by:
  /// whole column blocks of the tiles where there are two or more, else
  /// halves of the one. Returns the first warpgroup's width.
  int64_t dqFirstColumns() const {
    int64_t blocks = columnBlocks();
    return blocks >= 2 ? (blocks + 1) / 2 * blockElements() : headDim / 2;
  }
  /// The f32 columns of a box of the shared dQ tile, which TMA adds into
  /// the accumulator: the widest of 32, 16 and 8 (a 128-, 64- or 32-byte
  /// swizzle segment) that divides both warpgroups' columns.
  int64_t dqBoxColumns() const {
    int64_t first = dqFirstColumns();
    for (int64_t columns : {32, 16, 8})
      if (first % columns == 0 && (headDim - first) % columns == 0)
        return columns;
    llvm_unreachable("wgmma head dims are multiples of 16");
  }
  /// Whether both warpgroups take equal slices of dQ's columns (D 32, 64
  /// and 128), so that one copy of the dQ code serves both, without a
  /// branch per warpgroup.
  bool dqSlicesEvenly() const { return 2 * dqFirstColumns() == headDim; }

  /// Stores a warpgroup's wgmma A operand (registerOperand: per 16-wide k
  /// step, this lane's rows 16 `rowWarp` + g and + 8) into the key-major
  /// tile at `buffer`, whose rows are 64 16-bit elements in one 128-byte
  /// swizzle segment, from 16-byte chunk `firstChunk` of each row on. Past
  /// 64 columns (128-row query tiles) each 64 go to a tile of their own
  /// (keyMajorPart).
  void storeKeyMajor(Value buffer, Value rowWarp, Value firstChunk,
                     ArrayRef<SmallVector<Value, 4>> regs) {
    Value row = opaque(add(mul(rowWarp, idx(16)), quadRank));
    for (auto [kk, kRegs] : llvm::enumerate(regs))
      for (int64_t i = 0; i < 4; ++i) {
        Value r = add(row, idx(8 * (i % 2)));
        int64_t kChunk = 2 * static_cast<int64_t>(kk) + i / 2;
        Value chunk = add(firstChunk, idx(kChunk % 8));
        Value address =
            add(keyMajorPart(buffer, kChunk / 8),
                add(swizzledAt(r, chunk, 128), mul(quadTid, idx(4))));
        LLVM::StoreOp::create(b, kRegs[i], sharedPointer(address));
      }
  }
  /// Part `part` of a key-major tile at `buffer`: its blockN rows of
  /// columns [64 part, 64 part + 64), 128 bytes each.
  Value keyMajorPart(Value buffer, int64_t part) {
    return add(buffer, idx(part * blockN * 128));
  }

  /// dV += P^T dO and dK += dS^T Q over this warpgroup's half of the
  /// columns (its `dk` and `dv` pieces, columnPieces), for the tile whose
  /// P^T and dS^T it holds for half of the query rows in `pRegs` and
  /// `dsRegs`: both warpgroups put theirs in the tile's shared pair, then
  /// each multiplies the whole of them, A from shared memory, by its
  /// columns of dO and Q. Issues and commits the products; the caller
  /// waits.
  void accumulateColumnHalves(const SharedLayout &at,
                              ArrayRef<SmallVector<Value, 4>> pRegs,
                              ArrayRef<SmallVector<Value, 4>> dsRegs,
                              Value count, Value group, Value qTile,
                              Value dOTile, ArrayRef<Value> dk,
                              ArrayRef<Value> dv) {
    assert(queryRows == 64 && "a P^T row is one 128-byte segment");
    Value pTile = gradTilesAt(at, count);
    Value dsTile = add(pTile, idx(dsTileBytes()));
    // This warpgroup's query rows are 16-byte chunks 4 group.. of a row.
    Value firstChunk = mul(group, idx(queryRows / 2 * elementBytes() / 16));
    Value keyWarp = remi(warp, 4);
    storeKeyMajor(pTile, keyWarp, firstChunk, pRegs);
    storeKeyMajor(dsTile, keyWarp, firstChunk, dsRegs);
    fenceSharedForAsync();
    namedBarrier(kDsBarrier, 128 * groups());
    pTile = opaque(pTile);
    dsTile = opaque(dsTile);
    fence();
    for (auto [tile, operand, out] :
         {std::tuple{pTile, dOTile, dv}, std::tuple{dsTile, qTile, dk}})
      for (auto [piece, state] : llvm::zip_equal(columnPieces(), out)) {
        Value first = opaque(
            add(operand, pieceOf(group, columnBytes(piece.first[0], queryRows),
                                 columnBytes(piece.first[1], queryRows))));
        issueKeyMajorProduct(tile, queryRows, first, piece.n, state);
      }
    commit();
  }

  /// dQ[m0 .., :] += dS K for the tile whose dS^T this warpgroup holds in
  /// `dsRegs` (registerOperand, its 64 keys by the tile's query rows):
  /// both warpgroups put theirs in the tile's shared dS^T buffer (a tile
  /// of 128 keys per 64 query rows), then each multiplies all 128 keys by
  /// its share of K's columns (a product per 64 query rows), puts the f32
  /// product in the shared dQ tile, and has TMA add it into the
  /// accumulator behind `dqMap` (rows past Sq fall outside the map).
  /// Given `issueBehindDq` (only where dqSlicesEvenly), it issues and
  /// commits more products right behind dQ's: then only dQ's group is
  /// waited for before its stores, and the last group is left to the
  /// caller.
  void accumulateDq(const SharedLayout &at,
                    ArrayRef<SmallVector<Value, 4>> dsRegs, Value count,
                    Value group, Value head, Value m0, Value dqMap,
                    function_ref<void()> issueBehindDq) {
    Value buffer = dsTileAt(at, count);
    storeKeyMajor(buffer, warp, idx(0), dsRegs);
    fenceSharedForAsync();
    // The shared dQ tile is free once the last tile's reductions read it;
    // the barrier tells the warpgroup.
    onGroupLeader(
        [&] { NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr()); });
    namedBarrier(kDsBarrier, 128 * groups());
    // dQ's group queues behind dV's (and dK's, where issueBehindDq is not
    // given): the tensor cores run on while this warpgroup waits for the
    // other's dS^T.
    Value keyTile = opaque(fixedAt(at, 0));
    Value dqTile = opaque(dqTileAt(at));
    int64_t first = dqFirstColumns();
    int64_t boxColumns = dqBoxColumns(), boxBytes = 4 * boxColumns;
    // Warpgroup `which`'s slice of dQ's columns: `width` from column
    // which * first on (a whole number of boxes), its K columns and its
    // boxes of the shared dQ tile that far in, after its named barrier.
    auto slice = [&](Value which, int64_t width) {
      Value column0 = mul(which, idx(first));
      fence();
      // A product per 64 of the tile's query rows, each from its own part
      // of the dS^T tile (storeKeyMajor).
      Value keyColumns =
          add(keyTile, mul(which, idx(columnBytes(first, blockN))));
      SmallVector<Value, 2> accs;
      for (int64_t part = 0; part < queryRows / 64; ++part)
        accs.push_back(issueTransposedProduct(keyMajorPart(buffer, part),
                                              blockN, keyColumns, blockN,
                                              /*column=*/0, width));
      commit();
      if (issueBehindDq)
        issueBehindDq();
      waitGroups(issueBehindDq ? 1 : 0);
      Value boxes = add(
          dqTile, mul(which, idx(first / boxColumns * queryRows * boxBytes)));
      // Product p's rows 64 p + 16 (warp % 4) + g (+ 8), columns 8 nt + 2 t
      // (+ 1), into boxes of boxColumns f32 columns by queryRows rows.
      Value rowInWarp = opaque(add(mul(remi(warp, 4), idx(16)), quadRank));
      // The swizzle XORs a row's 16-byte chunks with its phase, (row % 8)
      // / (128 / boxBytes); rows whose phases differ in the lowest bit
      // alone (g and g ^ 1 in 128-byte boxes, g and g ^ 2 in 64-byte ones)
      // put a tile's two chunks in the same banks: a half-warp's stores
      // took two wavefronts where one holds them (ncu, bench/NOTES.md
      // forty-sixth session). So rows of odd phase store the tile half a
      // box over (chunks ^ tilesPerBox) where the others store tile nt;
      // each store's four rows a half-warp then fill the 32 banks once.
      int64_t tilesPerBox = boxColumns / 8;
      bool crossTiles = tilesPerBox >= 2;
      Value oddRow, chunkSwap;
      if (crossTiles) {
        Value oddPhase = remi(divi(quadRank, 128 / boxBytes), 2);
        oddRow = cmp(arith::CmpIPredicate::ne, oddPhase, idx(0));
        chunkSwap = mul(oddPhase, idx(tilesPerBox));
      }
      for (auto [part, acc] : llvm::enumerate(accs)) {
        Value rowInTile = add(rowInWarp, idx(64 * static_cast<int64_t>(part)));
        SmallVector<SmallVector<Value, 4>> tiles = accumulatorTiles(acc, width);
        assert(tiles.size() % tilesPerBox == 0 && "whole boxes");
        for (int64_t nt = 0, tileCount = tiles.size(); nt < tileCount; ++nt) {
          int64_t col = nt * 8;
          int64_t boxStart = col / boxColumns * queryRows * boxBytes;
          Value chunk = idx(col % boxColumns / 4);
          if (crossTiles)
            chunk = xori(chunk, chunkSwap);
          for (int64_t r = 0; r < 2; ++r) {
            Value rr = add(rowInTile, idx(8 * r));
            // Lane t's two columns are 8 bytes into chunk + t / 2.
            Value address =
                add(add(boxes, idx(boxStart)),
                    add(swizzledAt(rr, add(chunk, divi(quadTid, 2)), boxBytes),
                        mul(remi(quadTid, 2), idx(8))));
            Value pair =
                LLVM::PoisonOp::create(b, VectorType::get({2}, b.getF32Type()));
            for (int64_t e = 0; e < 2; ++e) {
              Value value = tiles[nt][2 * r + e];
              if (crossTiles)
                value = arith::SelectOp::create(
                    b, oddRow, tiles[nt ^ (tilesPerBox / 2)][2 * r + e], value);
              pair = LLVM::InsertElementOp::create(b, pair, value, i32(e));
            }
            LLVM::StoreOp::create(b, pair, sharedPointer(address),
                                  /*alignment=*/8);
          }
        }
      }
      fenceSharedForAsync();
      namedBarrier(add(which, idx(kGroupBarriers)), 128);
      onGroupLeader([&] {
        for (int64_t c = 0; c < width; c += boxColumns) {
          Value src = sharedPointer(
              add(boxes, idx(c / boxColumns * queryRows * boxBytes)));
          NVVM::CpAsyncBulkTensorReduceOp::create(
              b, dqMap, src, NVVM::TMAReduxKind::ADD, NVVM::TMAStoreMode::TILE,
              ValueRange{toI32(add(column0, idx(c))), toI32(m0), toI32(head),
                         toI32(batchIdx)},
              /*l2CacheHint=*/Value());
        }
        NVVM::CpAsyncBulkCommitGroupOp::create(b);
      });
    };
    // Equal halves: the warpgroup's slice by offsets, half the dK/dV
    // kernel's dQ code (and of ptxas's time on it) against a branch per
    // warpgroup.
    if (dqSlicesEvenly())
      return slice(group, first);
    assert(!issueBehindDq && "a branch per warpgroup queues nothing behind");
    auto branch = scf::IfOp::create(
        b, cmp(arith::CmpIPredicate::eq, group, idx(0)), true);
    for (auto [block, which, width] :
         {std::tuple{branch.thenBlock(), int64_t(0), first},
          std::tuple{branch.elseBlock(), int64_t(1), headDim - first}}) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(block->getTerminator());
      slice(idx(which), width);
    }
  }

  /// The named barrier the consumers meet at once every dS^T is in shared
  /// memory (0 is the block's).
  static constexpr int64_t kDsBarrier = 1;
  /// The named barriers of each consumer warpgroup alone (kGroupBarriers +
  /// its warpgroup), met once its row statistics, or its dQ tile, are in
  /// shared memory.
  static constexpr int64_t kGroupBarriers = 2;
  /// The streamed tiles: dK/dV's Q and dO, dQ's K and V.
  static constexpr int64_t kQueries = 0, kGrads = 1;
  static constexpr int64_t kKeys = 0, kValues = 1;
};

} // namespace

void fa::tensor_core::emitWgmmaDkDv(ImplicitLocOpBuilder &b, Type element,
                                    int64_t headDim, KernelShape shape,
                                    const Variant &variant, GradArgs args,
                                    Value dqAccum, StringRef name) {
  WgmmaBackwardEmitter(b, element, headDim, shape)
      .emitDkDv(variant, args, dqAccum, name);
}

void fa::tensor_core::emitWgmmaDq(ImplicitLocOpBuilder &b, Type element,
                                  int64_t headDim, KernelShape shape,
                                  const Variant &variant, GradArgs args,
                                  bool persistent, bool computesRowDot,
                                  const SinkTerms *sinkTerms, StringRef name) {
  WgmmaBackwardEmitter(b, element, headDim, shape)
      .emitDq(variant, args, persistent, computesRowDot, sinkTerms, name);
}
