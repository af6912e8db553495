//===- WgmmaForward.cpp - Attention forward on wgmma (sm_90a) -------------===//
//
// The Hopper forward, warp-specialised (WgmmaEmitter.h): the fixed tile is
// the block's Q, of `queryRows` rows, 64 per consumer warpgroup; the
// streamed tiles are K (0) and V (1) of block-n keys. Per key tile each
// consumer runs:
//   S = Q K^T   wgmma.mma_async m64n<block-n>k16, Q and K from shared memory
//               (NVVM's wgmma op; both K-major)
//   online softmax on the S registers (TensorCoreEmitter: the same code as
//               mma.sync's, since each 8-column slice of a wgmma accumulator
//               has mma.sync's C layout), while V may still be landing
//   O += P V    wgmma.mma_async m64n<D>k16 with P from registers (the RS
//               form) and V from shared memory in its stored layout
//               (MN-major, through the transpose bit)
// Producer and consumers walk the same key tiles, TileBuilder's phases.
//
//===----------------------------------------------------------------------===//

#include "WgmmaEmitter.h"

using namespace mlir;
using namespace fa;
using namespace fa::tensor_core;

namespace {

/// The streamed tiles: K and V of each key tile.
constexpr int64_t kKeys = 0, kValues = 1;

class WgmmaForwardEmitter : public WgmmaEmitter {
public:
  WgmmaForwardEmitter(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
                      KernelShape shape, bool pipelined, bool persistent)
      : WgmmaEmitter(b, element, headDim, shape), pipelined(pipelined),
        persistent(persistent) {
    wideProducer =
        wgmmaForwardWideProducer(headDim, columnBlocks(), shape.kvStages);
    uniformWarpIndex = !wideProducer && headDim < 256;
  }

  /// Launches the forward kernel for this head dim, named `kernelName`,
  /// once the driver made Q, K and V's tensor maps: a persistent grid of
  /// one block per SM (the registers hold one), each taking query blocks
  /// in the grid's order until none is left (produceWorkItems), so that
  /// its producer copies the next block's Q and first K/V tiles under the
  /// last block's final tiles and epilogue.
  void emitForward(const Variant &variant, ForwardArgs args,
                   StringRef kernelName) {
    for (Value *m : {&args.q, &args.k, &args.v, &args.o})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    std::array<Value, 3> grid = forwardGrid(args, dims, queryRows);
    Value work = mul(grid[0], mul(grid[1], grid[2]));
    // Not persistent, every block has one item (its own) and draws none.
    Value blocks, counter;
    std::tie(blocks, counter) = workGrid(work, persistent, kernelName);
    // O goes out through a shared tile per consumer and TMA from D 96 on
    // (kWgmmaStagedOutputMinHeadDim), where that tile fits beside Q and the
    // stages (not at D 256). Not for packed sequences: a block's rows past
    // its sequence's end are the next sequence's, which TMA, clipping at
    // the tensor's end only, would write.
    int64_t stagingBytes =
        wgmmaOutputStagingBytes(groups(), headDim, elementBytes());
    stagedOutput = headDim >= kWgmmaStagedOutputMinHeadDim &&
                   !args.queryStarts &&
                   wgmmaSharedBytes(queryRows, blockN, kvStages, headDim,
                                    elementBytes(), stagingBytes,
                                    fixedSlots) <= kHopperSharedBytes;
    SmallVector<MapOperand, 4> operands = {
        {args.q, 0, queryRows}, {args.k, 1, blockN}, {args.v, 2, blockN}};
    if (stagedOutput)
      operands.push_back({args.o, 5, kGroupRows});
    launchWithTensorMaps(
        operands, {blocks, idx(1), idx(1)}, {queryRows}, blockN,
        stagedOutput ? stagingBytes : 0, kernelName,
        [&](gpu::LaunchOp launch, ArrayRef<Value> maps,
            const SharedLayout &at) {
          outputMap = stagedOutput ? maps[3] : Value();
          splitRoles(
              [&] {
                electedThread([&] {
                  produceWorkItems(
                      launch, at, work, counter, [&](const WorkItem &item) {
                        auto [block, blockDims] =
                            forwardBlock(variant, args, dims, grid[0],
                                         item.linear, queryRows);
                        return produceQueryBlock(variant, blockDims, block, at,
                                                 {maps[0]}, {maps[1], maps[2]},
                                                 item.firstTile,
                                                 fixedSlotOf(item.round).first);
                      });
                });
              },
              [&] {
                Value group = enterConsumer();
                // Ping-pong turns go round the warpgroups tile after tile,
                // across the block's items: warpgroup 0 goes first (the
                // last hands it the first turn), and takes the turn the
                // last tile hands on once no item is left.
                if (pingPongs())
                  onGroup(group, groups() - 1, [&] { passTurn(idx(0)); });
                consumeWorkItems(at, work, [&](const WorkItem &item) {
                  return emitConsumer(variant, args, dims, grid[0], group, item,
                                      at);
                });
                if (stagedOutput)
                  onGroupLeader(
                      [&] {
                        // The staging tile must outlive the last store.
                        NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, UnitAttr());
                      },
                      /*testInPlace=*/true);
                if (pingPongs())
                  onGroup(group, 0, [&] { waitTurn(group); });
              });
        });
    if (counter)
      memref::DeallocOp::create(b, counter);
  }

private:
  /// Whether tile t's softmax runs under tile t - 1's P V.
  bool pipelined;
  /// Whether the epilogue stores O through a shared staging tile per
  /// consumer and TMA (storeOutputStaged), and O's tensor map for it.
  bool stagedOutput = false;
  Value outputMap;
  /// Whether the grid has a block per SM rather than per query block.
  bool persistent;

  /// Issues S = Q K^T for this warpgroup's 64 rows against the first
  /// `width` keys of the K tile at `keys` (shared byte address) as one
  /// wgmma group; the result is valid once the group is waited for.
  Value issueScores(Value queries, Value keys, int64_t width) {
    fence();
    Value acc = issueRowProduct(queries, queryRows, keys, blockN, width);
    commit();
    return acc;
  }

  /// P as the PV wgmma's A operand, kept in a private buffer (as f32 bit
  /// patterns) from one tile's softmax to the next tile's issue.
  void storeP(ArrayRef<SmallVector<Value, 4>> p, Value buffer) {
    for (auto [kk, regs] : llvm::enumerate(registerOperand(p)))
      for (auto [i, reg] : llvm::enumerate(regs))
        storeState(LLVM::BitcastOp::create(b, b.getF32Type(), reg), buffer,
                   kk * 4 + i);
  }

  /// Issues O += P V as one wgmma group: P's first `width` columns from
  /// `pBuffer` (storeP), V the first `width` rows of the tile at `values`
  /// (shared byte address), O this thread's state, which holds the result
  /// once the group is waited for.
  void issueValues(Value pBuffer, Value values, Value out, int64_t width) {
    // Every A register is read before the fence: wgmma may read none that
    // changed after it.
    SmallVector<SmallVector<Value, 4>> aRegs(width / 16);
    for (int64_t kk = 0; kk < width / 16; ++kk)
      for (int64_t i = 0; i < 4; ++i)
        aRegs[kk].push_back(LLVM::BitcastOp::create(
            b, b.getI32Type(), loadState(pBuffer, kk * 4 + i)));
    fence();
    issueRegisterProduct(aRegs, values, blockN, out);
    commit();
  }

  /// A consumer warpgroup: 64 query rows over every key tile as it lands.
  /// Serial: per tile, S = Q K^T, its softmax, O += P V, each waited for.
  /// Pipelined: tile t's softmax runs while the tensor cores do tile
  /// t - 1's P V:
  ///   issue S_t = Q K_t^T; issue O += P_{t-1} V_{t-1}
  ///   wait for S_t (K_t is free); softmax of S_t into P_t
  ///   wait for P V (V_{t-1} is free); O *= alpha_t
  /// and the last tile's P V after the loop. (ptxas moves the P V wait up
  /// to the row max, so in the SASS only that runs under the P V; a wait
  /// held later measured 4-10% slower: the other consumers' GEMMs are what
  /// a softmax runs under. bench/NOTES.md, twenty-eighth session.) The
  /// pipeline's first tile has no P V before it: its P is zero (the buffer
  /// starts so, or is zeroed again after a narrow sink tile) and it multiplies
  /// the tile's own K, which has landed and holds finite values, so O stays as
  /// it is without a branch around the wgmma (whose accumulators must not cross
  /// one unwaited; a branch around the whole group, the wait count chosen by
  /// it, measured 0-2.4% slower). With two or three consumers they take turns
  /// to issue (ping-pong), so one's softmax has the tensor cores' other GEMMs
  /// under it. A narrow sink tile (sinkTileWidth) comes first, serial and
  /// outside the turns (every consumer runs it, so the turns stay in step); the
  /// pipeline's first tile is the one after it.
  ///
  /// Returns the item's key tiles; arrives on fixedFree once Q is read.
  Value emitConsumer(const Variant &variant, const ForwardArgs &args,
                     const Dims &allDims, Value tiles, Value group,
                     const WorkItem &item, const SharedLayout &at) {
    auto [block, dims] =
        forwardBlock(variant, args, allDims, tiles, item.linear, queryRows);
    Value head = block.head;
    std::array<Value, 2> rowOf = block.rowOf;
    Value scaleLog2 = toBase2(scoreScale(variant, idx(headDim)));
    State state = initForwardState(args.sinks, head);
    Value pBuffer = privateBuffer(blockN / 4);
    // Zeroes P for the first `columns` keys (columns / 4 values a thread).
    auto zeroP = [&](int64_t columns) {
      for (int64_t i = 0; i < columns / 4; ++i)
        storeState(flt(0.0), pBuffer, i);
    };
    zeroP(blockN);
    TileStep step{variant, dims,  state,      scaleLog2,      rowOf, at,
                  pBuffer, group, item.round, item.firstTile, idx(0)};
    Value total = consumeKeyTiles(
        variant, dims, block.m0, block.rows, /*apartEdges=*/true,
        [&](Value n0, Value keyHi, Value maskWhen, Value count, int64_t width,
            tensor_core::KeyEdge edge) {
          if (pipelined && width == blockN)
            pipelinedTile(step, n0, keyHi, maskWhen, count, edge);
          else
            serialTile(step, n0, keyHi, maskWhen, count, width, edge);
        },
        [&](Value count) {
          // The pipeline starts past the narrow sink tile, with its P zero
          // again.
          step.firstPipelined = count;
          if (pipelined)
            zeroP(sinkTileWidth(variant));
        });
    // Every Q K^T of the block was waited for: the producer may copy a
    // later block's Q into this one's copy.
    arriveOn(fixedFree(at, fixedSlotOf(item.round).first));
    // The last tile's P V.
    if (pipelined) {
      auto any = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::sgt, total, step.firstPipelined), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(any.thenBlock());
      auto [slot, parity] = stageOf(sub(add(item.firstTile, total), idx(1)));
      waitBarrier(stageBarrier(at, kValues, StageEvent::Landed, slot), parity);
      issueValues(pBuffer, stageAt(at, kValues, slot), state.out, blockN);
      waitGroups(0);
      // The block's next item streams on through this stage.
      release(at, kValues, slot);
    }
    if (stagedOutput)
      storeForward(state, args, dims, head, rowOf,
                   [&](std::array<Value, 2> inverse) {
                     storeOutputStaged(state, inverse, at, group, rowOf, head);
                   });
    else
      storeForward(state, args, dims, head, rowOf);
    return total;
  }
  /// The named barrier of consumer warpgroup `group` alone, past the turn
  /// barriers (turnBarrier), met around its staging tile's writes.
  Value stagingBarrier(Value group) { return add(group, idx(1 + groups())); }
  /// This warpgroup's 64 rows of O, each times its `inverse` (1 / l), into
  /// its staging tile in Q's swizzled layout, then stored by TMA to its
  /// rows (this lane's: `rowOf`) of `head`, one box per column block (rows past
  /// the end clipped by the map). The store runs on while the warpgroup starts
  /// its next item; the next epilogue waits until it read the tile. In
  /// place of a thread's 4-byte global stores, half of each 32-byte sector,
  /// whose queue held the epilogue (ncu, bench/NOTES.md).
  void storeOutputStaged(const State &state, std::array<Value, 2> inverse,
                         const SharedLayout &at, Value group,
                         std::array<Value, 2> rowOf, Value head) {
    int64_t tileBytes = kGroupRows * headDim * elementBytes();
    // Made here through opaque moves: hoisted out of the item loop they
    // would be held across the tile loops beside the accumulators.
    Value tile = opaque(add(scratchAt(at), mul(group, idx(tileBytes))));
    Value firstRow = opaque(mul(remi(warp, 4), idx(16)));
    Value barrier = stagingBarrier(group);
    onGroupLeader(
        [&] { NVVM::CpAsyncBulkWaitGroupOp::create(b, 0, b.getUnitAttr()); },
        /*testInPlace=*/true);
    namedBarrier(barrier, 128);
    // stmatrix x4 per 16 columns: lane l names row l % 8 of 8 x 8 matrix
    // l / 8, which is rows 8 (m % 2) on, columns 8 (m / 2) on of the
    // warp's 16 x 16 block; the thread gives each matrix its two elements
    // of row g (accumulator tile 2 k + m / 2, row half m % 2).
    auto pair = VectorType::get({2}, element);
    Value matrix = divi(lane, 8);
    Value row = add(firstRow, add(mul(remi(matrix, 2), idx(8)), remi(lane, 8)));
    for (int64_t k = 0; k < headDim / 16; ++k) {
      SmallVector<Value, 4> regs;
      for (int64_t m = 0; m < 4; ++m) {
        auto [lo, hi] = scaledPair(state.out, 2 * k + m / 2, m % 2,
                                   inverse[m % 2]);
        regs.push_back(LLVM::BitcastOp::create(
            b, b.getI32Type(),
            vector::FromElementsOp::create(
                b, pair, ValueRange{toElement(lo), toElement(hi)})));
      }
      // This lane's 16-byte chunk: column 16 k + 8 (matrix / 2).
      Value column = add(idx(16 * k), mul(divi(matrix, 2), idx(8)));
      Value block = divi(column, blockElements());
      Value chunk = divi(remi(column, blockElements()), chunkElements());
      Value address = add(add(tile, mul(block, idx(kGroupRows * segmentBytes))),
                          swizzledAt(row, chunk, segmentBytes));
      NVVM::StMatrixOp::create(
          b, sharedPointer(address), regs,
          NVVM::MMALayoutAttr::get(b.getContext(), NVVM::MMALayout::row),
          NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
          NVVM::LdStMatrixEltTypeAttr::get(b.getContext(),
                                           NVVM::LdStMatrixEltType::B16));
    }
    fenceSharedForAsync();
    namedBarrier(barrier, 128);
    onGroupLeader(
        [&] {
          // The leader's first row is its warpgroup's (rowOf[0]: held for
          // the LSE anyway; m0 held across the tiles spilled at D 80).
          Value groupRow = toI32(rowOf[0]);
          for (int64_t c = 0; c < columnBlocks(); ++c)
            NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
                b, outputMap,
                sharedPointer(add(tile, idx(c * kGroupRows * segmentBytes))),
                ValueRange{i32(c * blockElements()), groupRow, toI32(head),
                           toI32(batchIdx)},
                /*l2CacheHint=*/Value(), NVVM::TMAStoreMode::TILE,
                /*predicate=*/Value());
          NVVM::CpAsyncBulkCommitGroupOp::create(b);
        },
        /*testInPlace=*/true);
  }
  /// What a consumer's steps over its block's tiles share.
  struct TileStep {
    const Variant &variant;
    const Dims &dims;
    const State &state;
    Value scaleLog2;
    std::array<Value, 2> rowOf;
    const SharedLayout &at;
    Value pBuffer;
    Value group;     // this consumer warpgroup
    Value round;     // the block's items before this one (WorkItem)
    Value firstTile; // the block's first tile's count (WorkItem)
    /// The item's first pipelined tile's count: 0, or past a narrow sink
    /// tile (sinkTileWidth), which runs serial before the pipeline.
    Value firstPipelined;
  };
  /// This warpgroup's rows of the item's Q (in its copy, fixedSlotOf).
  Value queriesOf(const TileStep &step) {
    return rowAt(fixedAt(step.at, 0, fixedSlotOf(step.round).first),
                 mul(step.group, idx(kGroupRows)));
  }
  /// The serial schedule's step on the block's tile `count`, at key n0
  /// (masked below `keyHi` when set, where `maskWhen` holds when set,
  /// against the bounds `edge` names), on the tile's first `width` keys.
  void serialTile(const TileStep &step, Value n0, Value keyHi, Value maskWhen,
                  Value count, int64_t width, tensor_core::KeyEdge edge) {
    const SharedLayout &at = step.at;
    auto [slot, parity] = stageOf(add(step.firstTile, count));
    waitBarrier(stageBarrier(at, kKeys, StageEvent::Landed, slot), parity);
    Value scoreAcc =
        issueScores(queriesOf(step), stageAt(at, kKeys, slot), width);
    waitGroups(0);
    release(at, kKeys, slot);
    SmallVector<SmallVector<Value, 4>> s = accumulatorTiles(scoreAcc, width);
    onlineSoftmax(step.variant, step.dims, step.state, step.scaleLog2,
                  step.rowOf, n0, keyHi, s, /*deferredAlpha=*/nullptr, maskWhen,
                  /*warpRescales=*/nullptr, edge);
    storeP(s, step.pBuffer);
    waitBarrier(stageBarrier(at, kValues, StageEvent::Landed, slot), parity);
    issueValues(step.pBuffer, stageAt(at, kValues, slot), step.state.out,
                width);
    waitGroups(0);
    release(at, kValues, slot);
  }
  /// The pipelined schedule's step on the block's tile `count` (t), at key
  /// n0 (masked as in serialTile): S_t is issued, then tile t - 1's P V,
  /// and S_t's softmax runs under that P V.
  void pipelinedTile(const TileStep &step, Value n0, Value keyHi,
                     Value maskWhen, Value count, tensor_core::KeyEdge edge) {
    const SharedLayout &at = step.at;
    Value tile = add(step.firstTile, count);
    auto [slot, parity] = stageOf(tile);
    Value later = cmp(arith::CmpIPredicate::ne, count, step.firstPipelined);
    // Tile t - 1's stage and parity (t + 2 stages - 1 keeps the parity and
    // never underflows).
    auto [prevSlot, prevParity] = stageOf(add(tile, idx(2 * kvStages - 1)));
    Value keys = stageAt(at, kKeys, slot);
    waitBarrier(stageBarrier(at, kKeys, StageEvent::Landed, slot), parity);
    if (pingPongs())
      waitTurn(step.group);
    Value scoreAcc = issueScores(queriesOf(step), keys, blockN);
    // The pipeline's first tile has no V to wait for: the barrier of the
    // stage it names may already be a round ahead (or, after a narrow sink
    // tile, released).
    {
      auto wait = scf::IfOp::create(b, later, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(wait.thenBlock());
      waitBarrier(stageBarrier(at, kValues, StageEvent::Landed, prevSlot),
                  prevParity);
    }
    issueValues(step.pBuffer,
                select(later, stageAt(at, kValues, prevSlot), keys),
                step.state.out, blockN);
    if (pingPongs()) {
      // The next warpgroup's turn, the last's going round to 0 (a select,
      // not a remainder: no division on the loop).
      Value lastGroup = idx(groups() - 1);
      passTurn(select(cmp(arith::CmpIPredicate::eq, step.group, lastGroup),
                      idx(0), add(step.group, idx(1))));
    }
    waitGroups(1);
    release(at, kKeys, slot);
    SmallVector<SmallVector<Value, 4>> s = accumulatorTiles(scoreAcc, blockN);
    std::array<Value, 2> alpha;
    Value rescales;
    onlineSoftmax(step.variant, step.dims, step.state, step.scaleLog2,
                  step.rowOf, n0, keyHi, s, &alpha, maskWhen, &rescales, edge);
    storeP(s, step.pBuffer);
    waitGroups(0);
    {
      auto afterFirst = scf::IfOp::create(b, later, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(afterFirst.thenBlock());
      release(at, kValues, prevSlot);
    }
    // The lazy rescale's factors are all 1 unless a row of the warp moved
    // its m: O's D / 2 multiplies a thread, about one instruction in
    // fourteen of the tile's at D 64, run only then. (O is not in flight
    // here: every P V was waited for above.)
    auto moved = scf::IfOp::create(b, rescales, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(moved.thenBlock());
    for (int64_t r = 0; r < 2; ++r)
      rescaleRow(step.state, r, alpha[r]);
  }
  /// Whether the consumers take turns to issue (pipelined, two or three
  /// consumers), so that one's softmax runs under the others' GEMMs.
  bool pingPongs() const { return pipelined && groups() >= 2; }
  /// Runs `body` on consumer warpgroup `which` (this one being `group`).
  void onGroup(Value group, int64_t which, llvm::function_ref<void()> body) {
    auto on = scf::IfOp::create(
        b, cmp(arith::CmpIPredicate::eq, group, idx(which)), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(on.thenBlock());
    body();
  }
  /// Consumer warpgroup g's turn barrier: named barrier 1 + g (0 is the
  /// block's).
  Value turnBarrier(Value group) { return add(group, idx(1)); }
  /// Waits for this warpgroup's turn to issue its GEMMs.
  void waitTurn(Value group) { namedBarrier(turnBarrier(group), 256); }
  /// Gives consumer warpgroup `to` its turn: arrives on its turn barrier,
  /// which its 128 threads and these 128 complete.
  void passTurn(Value to) { arriveNamed(turnBarrier(to), 256); }
};

} // namespace

void fa::tensor_core::emitWgmmaForward(ImplicitLocOpBuilder &b, Type element,
                                       int64_t headDim, KernelShape shape,
                                       bool pipelined, bool persistent,
                                       const Variant &variant, ForwardArgs args,
                                       StringRef name) {
  WgmmaForwardEmitter(b, element, headDim, shape, pipelined, persistent)
      .emitForward(variant, args, name);
}
