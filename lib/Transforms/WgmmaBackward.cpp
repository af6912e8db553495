//===- WgmmaBackward.cpp - Attention backward on wgmma (sm_90a) -----------===//
//
// The Hopper backward: two warp-specialised kernels (WgmmaEmitter.h), each
// recomputing S and dP from the forward's lse, every GEMM on wgmma.
//
// dK/dV: a block per (key block, kv head, batch); each consumer warpgroup
// owns 64 keys of the block, whose K and V are the fixed tiles. The
// streamed tiles are Q (0) and dO (1) of each query tile that can see the
// block (TileBuilder's query phase: the mask as loop bounds), over every
// query head of the kv head's group. Per query tile:
//   S^T = K Q^T, dP^T = V dO^T   wgmma from shared memory (both K-major),
//                                one group
//   P^T, dS^T                    in the accumulators (keyMajorGrads)
//   dV += P^T dO, dK += dS^T Q   wgmma with A from registers and B (dO, Q)
//                                read MN-major, one group
// dK and dV stay in registers until the block's last tile.
//
// dQ: a block per (query block, head, batch), ordered as the forward's
// (queryBlock); the fixed tiles are Q and dO, the streamed ones K (0) and V
// (1) of each key tile the forward visits. Per key tile:
//   S = Q K^T, dP = dO V^T       one group; V is free once it is done
//   P, dS                        (queryMajorGrads)
//   dQ += dS K                   A from registers, K read MN-major
//
// Both scale dK and dQ by the softmax scale once, at the end.
//
// With dq-atomics the dK/dV kernel computes dQ instead (accumulateDq): per
// query tile each consumer puts its dS^T in shared memory, and after a
// named barrier multiplies all 128 keys' dS by its share of K's columns,
// adding the product into an f32 accumulator by atomics. Correct, but its
// registers spill and it runs slower than the dQ kernel (bench/NOTES.md).
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
    launchWithTensorMaps(
        {{args.k, 1, blockN},
         {args.v, 2, blockN},
         {args.q, 0, queryRows},
         {args.dO, 3, queryRows}},
        {ceilDiv(dims.sk, blockN), dims.hkv, dims.batch}, {blockN, blockN},
        queryRows,
        wgmmaDkDvScratchBytes(blockN, queryRows, elementBytes(),
                              /*withDq=*/bool(dqAccum)),
        name, [&](gpu::LaunchOp, ArrayRef<Value> maps, const SharedLayout &at) {
          kvHead = blockCoord[1];
          Value n0 = mul(blockCoord[0], idx(blockN));
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
                Value groupKeys = mul(group, idx(kGroupRows));
                Value keys = rowAt(fixedAt(at, 0), groupKeys);
                Value values = rowAt(fixedAt(at, 1), groupKeys);
                std::array<Value, 2> keyOf =
                    laneRows(add(n0, mul(warp, idx(16))));
                Value scale = scoreScale(variant, idx(headDim));
                Value scaleLog2 = toBase2(scale);
                Value dk = zeroState(), dv = zeroState();
                waitBarrier(fixedLanded(at), idx(0));
                loop(dims.group, [&](Value member) {
                  Value head = add(mul(kvHead, dims.group), member);
                  phase(queries.name, queries.lo, queries.hi, queries.innerLo,
                        queries.innerHi, queryRows, [&](Value m0, bool masked) {
                          Value count = countOf(member, m0);
                          Value slot = waitStreamed(at, count);
                          Value qTile = stageAt(at, kQueries, slot);
                          Value dOTile = stageAt(at, kGrads, slot);
                          fence();
                          Value sAcc = issueRowProduct(keys, blockN, qTile,
                                                       queryRows, queryRows);
                          Value dpAcc = issueRowProduct(
                              values, blockN, dOTile, queryRows, queryRows);
                          commit();
                          waitGroups(0);
                          auto s = accumulatorTiles(sAcc, queryRows);
                          auto dp = accumulatorTiles(dpAcc, queryRows);
                          keyMajorGrads(variant, dims, args, head, m0, masked,
                                        keyOf, scaleLog2, s, dp);
                          auto pRegs = registerOperand(s);
                          auto dsRegs = registerOperand(dp);
                          fence();
                          issueRegisterProduct(pRegs, dOTile, queryRows, dv);
                          issueRegisterProduct(dsRegs, qTile, queryRows, dk);
                          commit();
                          if (dqAccum)
                            accumulateDq(at, dsRegs, count, group, head, m0,
                                         dims, dqAccum);
                          waitGroups(0);
                          release(at, kQueries, slot);
                          release(at, kGrads, slot);
                        });
                });
                Value one = flt(1.0);
                storeRows(dk, {scale, scale}, args.dk, kvHead, keyOf,
                          dims.sk);
                storeRows(dv, {one, one}, args.dv, kvHead, keyOf, dims.sk);
              });
        });
  }

  /// Launches the dQ kernel: queryRows rows per block, 64 per consumer
  /// warpgroup, over key tiles of blockN.
  void emitDq(const Variant &variant, GradArgs args, StringRef name) {
    for (Value *m : {&args.q, &args.k, &args.v, &args.dO, &args.dq})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    Value tiles = ceilDiv(dims.sq, queryRows);
    launchWithTensorMaps(
        {{args.q, 0, queryRows},
         {args.dO, 3, queryRows},
         {args.k, 1, blockN},
         {args.v, 2, blockN}},
        {tiles, dims.hq, dims.batch}, {queryRows, queryRows}, blockN,
        /*scratchBytes=*/0, name,
        [&](gpu::LaunchOp launch, ArrayRef<Value> maps,
            const SharedLayout &at) {
          splitRoles(
              [&] {
                emitQueryBlockProducer(variant, dims, tiles, launch, at,
                                       {maps[0], maps[1]}, {maps[2], maps[3]});
              },
              [&] {
                Value group = enterConsumer();
                Value groupRows = mul(group, idx(kGroupRows));
                Value queries = rowAt(fixedAt(at, 0), groupRows);
                Value grads = rowAt(fixedAt(at, 1), groupRows);
                QueryBlock block =
                    queryBlock(variant, dims, tiles, launch, queryRows);
                Value scale = scoreScale(variant, idx(headDim));
                Value scaleLog2 = toBase2(scale);
                LaneRowStatistics stats =
                    laneRowStatistics(args, dims, block.head, block.rowOf);
                Value dq = zeroState();
                waitBarrier(fixedLanded(at), idx(0));
                Value done = idx(0); // tiles of the earlier phases
                for (const KeyPhase &p :
                     keyPhases(variant, dims, block.m0, block.rows)) {
                  phase(p.name, p.lo, p.hi, p.innerLo, p.innerHi, blockN,
                        [&](Value n0, bool masked) {
                          Value slot = waitStreamed(
                              at, add(done, divi(sub(n0, p.lo), blockN)));
                          Value kTile = stageAt(at, kKeys, slot);
                          Value vTile = stageAt(at, kValues, slot);
                          fence();
                          Value sAcc = issueRowProduct(queries, queryRows,
                                                       kTile, blockN, blockN);
                          Value dpAcc = issueRowProduct(grads, queryRows,
                                                        vTile, blockN, blockN);
                          commit();
                          waitGroups(0);
                          release(at, kValues, slot);
                          auto s = accumulatorTiles(sAcc, blockN);
                          auto dp = accumulatorTiles(dpAcc, blockN);
                          queryMajorGrads(variant, dims, block.rowOf, n0,
                                          masked ? p.keyHi : Value(),
                                          stats.lse2, stats.rowDot, scaleLog2,
                                          s, dp);
                          auto dsRegs = registerOperand(dp);
                          fence();
                          issueRegisterProduct(dsRegs, kTile, blockN, dq);
                          commit();
                          waitGroups(0);
                          release(at, kKeys, slot);
                        });
                  done = add(done, tileCount(p.lo, p.hi, blockN));
                }
                storeRows(dq, {scale, scale}, args.dq, block.head,
                          block.rowOf, dims.sq);
              });
        });
  }

private:
  /// dS^T tiles in shared memory (keys x query rows,
  /// wgmmaDkDvScratchBytes): two, so that a warpgroup may write tile
  /// t + 1's while the other still reads tile t's.
  static constexpr int64_t kDsBuffers = 2;
  int64_t dsTileBytes() const { return blockN * queryRows * elementBytes(); }

  /// dQ[m0 .., :] += dS K for the tile whose dS^T this warpgroup holds in
  /// `dsRegs` (registerOperand, its 64 keys by the tile's query rows):
  /// both warpgroups put theirs in the tile's shared dS^T buffer, then
  /// each multiplies all 128 keys by its share of K's columns and adds the
  /// product to `dqAccum` with atomics (rows below Sq).
  void accumulateDq(const SharedLayout &at,
                    ArrayRef<SmallVector<Value, 4>> dsRegs, Value count,
                    Value group, Value head, Value m0, const Dims &dims,
                    Value dqAccum) {
    assert(queryRows == 64 && "a dS^T row is one 128-byte segment");
    Value buffer =
        add(scratchAt(at), mul(remi(count, kDsBuffers), idx(dsTileBytes())));
    // Key row r of the block, chunk c of its 128 bytes, at chunk c ^ (r % 8)
    // (the 128-byte swizzle); this lane's rows are 16 warp + g (+ 8).
    Value row = add(mul(warp, idx(16)), quadRank);
    for (auto [kk, regs] : llvm::enumerate(dsRegs))
      for (int64_t i = 0; i < 4; ++i) {
        Value r = add(row, idx(8 * (i % 2)));
        Value chunk = xori(idx(2 * kk + i / 2), quadRank);
        Value address =
            add(buffer, add(mul(r, idx(128)),
                            add(mul(chunk, idx(16)), mul(quadTid, idx(4)))));
        LLVM::StoreOp::create(b, regs[i], sharedPointer(address));
      }
    // wgmma reads shared memory through the async proxy.
    NVVM::FenceProxyOp::create(
        b,
        NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    NVVM::BarrierOp::create(b, Type(), i32(kDsBarrier), i32(128 * groups()),
                            /*reductionOp=*/nullptr,
                            /*reductionPredicate=*/Value());
    // dV and dK's group done, its P^T and dS^T registers are free for dQ's
    // accumulator: dK, dV and dQ would not fit the registers at once.
    waitGroups(0);
    Value keyTile = fixedAt(at, 0);
    // Column shares: whole column blocks where there are two or more, else
    // halves of the one.
    int64_t blocks = columnBlocks();
    int64_t first =
        blocks >= 2 ? (blocks + 1) / 2 * blockElements() : headDim / 2;
    auto slice = scf::IfOp::create(
        b, cmp(arith::CmpIPredicate::eq, group, idx(0)), true);
    for (auto [block, column, width] :
         {std::tuple{slice.thenBlock(), int64_t(0), first},
          std::tuple{slice.elseBlock(), first, headDim - first}}) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(block->getTerminator());
      fence();
      Value acc = issueTransposedProduct(buffer, blockN, keyTile, blockN,
                                         column, width);
      commit();
      waitGroups(0);
      std::array<Value, 2> rowOf =
          laneRows(add(m0, mul(remi(warp, 4), idx(16))));
      auto tiles = accumulatorTiles(acc, width);
      for (int64_t r = 0; r < 2; ++r) {
        auto inRows = scf::IfOp::create(
            b, cmp(arith::CmpIPredicate::slt, rowOf[r], dims.sq), false);
        OpBuilder::InsertionGuard rowGuard(b);
        b.setInsertionPointToStart(inRows.thenBlock());
        for (auto [nt, tile] : llvm::enumerate(tiles))
          for (int64_t e = 0; e < 2; ++e) {
            Value col =
                add(idx(column + int64_t(nt) * 8 + e), mul(quadTid, idx(2)));
            memref::AtomicRMWOp::create(
                b, arith::AtomicRMWKind::addf, tile[2 * r + e], dqAccum,
                ValueRange{batchIdx, head, rowOf[r], col});
          }
      }
    }
  }

  /// The named barrier the consumers meet at once every dS^T is in shared
  /// memory (0 is the block's).
  static constexpr int64_t kDsBarrier = 1;
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
                                  StringRef name) {
  WgmmaBackwardEmitter(b, element, headDim, shape).emitDq(variant, args, name);
}
