//===- WgmmaEmitter.cpp - What every wgmma (sm_90a) kernel shares ---------===//
//
// See WgmmaEmitter.h for the block, the swizzle and the descriptors.
//
//===----------------------------------------------------------------------===//

#include "WgmmaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace fa;
using namespace fa::tensor_core;

/// Suspend-time hint of a barrier wait, in nanoseconds.
static constexpr int64_t kWaitTicks = 0x989680;

int64_t WgmmaEmitter::swizzleSegmentBytes(int64_t rowBytes) {
  for (int64_t w : {128, 64, 32})
    if (rowBytes % w == 0)
      return w;
  llvm_unreachable("wgmma head dims are multiples of 16");
}

//===----------------------------------------------------------------------===//
// Warpgroup GEMMs.
//===----------------------------------------------------------------------===//

Value WgmmaEmitter::descriptor(Value address, int64_t leading, int64_t stride,
                               std::optional<int64_t> mode) {
  Value start = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, toI64(address), i64(4)), i64(0x3FFF));
  int64_t fields = ((leading >> 4) << 16) | ((stride >> 4) << 32) |
                   (mode.value_or(swizzleMode()) << 62);
  return arith::OrIOp::create(b, start, i64(fields));
}

Value WgmmaEmitter::descriptorAt(Value base, int64_t offset) {
  assert(offset % 16 == 0 && "wgmma matrices start on 16-byte boundaries");
  if (offset == 0)
    return base;
  Value low = arith::AddIOp::create(
      b, arith::TruncIOp::create(b, b.getI32Type(), base), i32(offset >> 4));
  Value high = arith::AndIOp::create(b, base, i64(~int64_t(0xFFFFFFFF)));
  return arith::OrIOp::create(b, high,
                              arith::ExtUIOp::create(b, b.getI64Type(), low));
}

Value WgmmaEmitter::opaque(Value value) {
  Value moved =
      LLVM::InlineAsmOp::create(
          b, b.getI64Type(), ValueRange{toI64(value)}, "mov.b64 $0, $1;",
          "=l,l", /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr())
          .getResult(0);
  return toIndex(moved);
}

Value WgmmaEmitter::issueSharedProduct(
    int64_t kSteps, int64_t n, NVVM::MMALayout layoutA, NVVM::MMALayout layoutB,
    llvm::function_ref<std::pair<Value, Value>(int64_t)> descriptors,
    Value acc) {
  MLIRContext *ctx = b.getContext();
  auto accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n / 2, b.getF32Type()));
  bool overwrite = !acc;
  if (overwrite)
    acc = LLVM::PoisonOp::create(b, accType);
  for (int64_t kk = 0; kk < kSteps; ++kk) {
    auto [aDesc, bDesc] = descriptors(kk);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, accType, acc, aDesc, bDesc,
        NVVM::MMAShapeAttr::get(ctx, kGroupRows, n, 16), wgmmaType(),
        wgmmaType(), NVVM::WGMMATypes::f32,
        // The first k step overwrites the accumulator unless given one.
        kk == 0 && overwrite ? NVVM::WGMMAScaleOut::zero
                             : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, layoutA, layoutB,
        /*satfinite=*/nullptr);
  }
  return acc;
}

Value WgmmaEmitter::issueRowProduct(Value a, int64_t aRows, Value bTile,
                                    int64_t bRows, int64_t n) {
  // Both K-major: A row-major, B column-major.
  return issueSharedProduct(
      headDim / 16, n, NVVM::MMALayout::row, NVVM::MMALayout::col,
      [&, aBase = descriptor(a, 16, 8 * segmentBytes),
       bBase = descriptor(bTile, 16, 8 * segmentBytes)](int64_t kk) {
        return std::pair{descriptorAt(aBase, columnBytes(kk * 16, aRows)),
                         descriptorAt(bBase, columnBytes(kk * 16, bRows))};
      });
}

SmallVector<SmallVector<Value, 4>>
WgmmaEmitter::accumulatorTiles(Value acc, int64_t n) {
  SmallVector<SmallVector<Value, 4>> tiles(n / 8);
  for (int64_t nt = 0; nt < n / 8; ++nt)
    for (int64_t e = 0; e < 4; ++e)
      tiles[nt].push_back(LLVM::ExtractValueOp::create(b, acc, nt * 4 + e));
  return tiles;
}

SmallVector<SmallVector<Value, 4>>
WgmmaEmitter::registerOperand(ArrayRef<SmallVector<Value, 4>> tiles) {
  SmallVector<SmallVector<Value, 4>> regs(tiles.size() / 2);
  for (int64_t kk = 0; kk < int64_t(regs.size()); ++kk)
    for (Value reg : fragAFromAcc(tiles, kk))
      regs[kk].push_back(reg.getType().isInteger(32)
                             ? reg
                             : LLVM::BitcastOp::create(b, b.getI32Type(),
                                                       reg));
  return regs;
}

/// One wgmma m64n<columns>k16 with A from registers (`a`, four 32-bit
/// registers of two elements) and B at descriptor `bDesc`, transposed
/// (MN-major): acc += A B. NVVM has no op for the register-A form: one
/// instruction through inline PTX. It always accumulates: its scale-d
/// predicate is set from an immediate. (From a register operand LLVM moved
/// a 1 into a register ahead of each wgmma; with two groups issued back to
/// back, that move fell between them and ptxas serialised both, C7513.)
static Value mmaRegisterA(ImplicitLocOpBuilder &b, Type element,
                          int64_t columns, Value acc, ArrayRef<Value> a,
                          Value bDesc) {
  int64_t n = columns / 2;
  std::string asmText = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                        "wgmma.mma_async.sync.aligned.m64n" +
                        std::to_string(columns) + "k16.f32." +
                        (element.isBF16() ? "bf16.bf16" : "f16.f16") + " {";
  SmallVector<std::string> regs;
  for (int64_t i = 0; i < n; ++i)
    regs.push_back("$" + std::to_string(i));
  asmText += llvm::join(regs, ", ") + "}, {$" + std::to_string(n) + ", $" +
             std::to_string(n + 1) + ", $" + std::to_string(n + 2) + ", $" +
             std::to_string(n + 3) + "}, $" + std::to_string(n + 4) +
             ", p, 1, 1, 1;\n}";
  SmallVector<std::string> constraints(n, "=f");
  for (int i = 0; i < 4; ++i)
    constraints.push_back("r");
  constraints.push_back("l");
  for (int64_t i = 0; i < n; ++i)
    constraints.push_back(std::to_string(i));
  SmallVector<Value> operands(a.begin(), a.end());
  operands.push_back(bDesc);
  for (int64_t i = 0; i < n; ++i)
    operands.push_back(LLVM::ExtractValueOp::create(b, acc, i));
  return LLVM::InlineAsmOp::create(
             b, acc.getType(), operands, asmText, llvm::join(constraints, ","),
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

void WgmmaEmitter::issueRegisterProduct(ArrayRef<SmallVector<Value, 4>> aRegs,
                                        Value bTile, int64_t bRows, Value out,
                                        std::optional<int64_t> columns) {
  int64_t width = columns.value_or(headDim);
  Value acc = loadAccumulator(out, width);
  Value bBase = descriptor(bTile, bRows * segmentBytes, 8 * segmentBytes);
  for (auto [kk, a] : llvm::enumerate(aRegs))
    acc = mmaRegisterA(b, element, width, acc, a,
                       descriptorAt(bBase, kk * 16 * segmentBytes));
  storeAccumulator(acc, out);
}

Value WgmmaEmitter::issueTransposedProduct(Value a, int64_t kRows, Value bTile,
                                           int64_t bRows, int64_t column,
                                           int64_t n) {
  // A's 64 columns are one 128-byte segment: only its 8-row groups step.
  constexpr int64_t aRowBytes = 128, aSwizzle128 = 1;
  int64_t bStart = columnBytes(column, bRows);
  // Both MN-major: A transposed (col), B transposed (row).
  return issueSharedProduct(
      kRows / 16, n, NVVM::MMALayout::col, NVVM::MMALayout::row,
      [&, aBase = descriptor(a, kRows * aRowBytes, 8 * aRowBytes, aSwizzle128),
       bBase = descriptor(bTile, bRows * segmentBytes, 8 * segmentBytes)](
          int64_t kk) {
        return std::pair{descriptorAt(aBase, kk * 16 * aRowBytes),
                         descriptorAt(bBase, bStart + kk * 16 * segmentBytes)};
      });
}

void WgmmaEmitter::issueKeyMajorProduct(Value a, int64_t kRows, Value b0,
                                        int64_t n, Value out) {
  // A's rows are one 128-byte segment: a k step moves 16 elements along it.
  constexpr int64_t aRowBytes = 128, aSwizzle128 = 1;
  Value acc = loadAccumulator(out, n);
  // A K-major (row), B transposed (row).
  acc = issueSharedProduct(
      kRows / 16, n, NVVM::MMALayout::row, NVVM::MMALayout::row,
      [&, aBase = descriptor(a, 16, 8 * aRowBytes, aSwizzle128),
       bBase =
           descriptor(b0, kRows * segmentBytes, 8 * segmentBytes)](int64_t kk) {
        return std::pair{descriptorAt(aBase, kk * 16 * elementBytes()),
                         descriptorAt(bBase, kk * 16 * segmentBytes)};
      },
      acc);
  storeAccumulator(acc, out);
}

Value WgmmaEmitter::loadAccumulator(Value state, int64_t n) {
  auto accType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(n / 2, b.getF32Type()));
  Value acc = LLVM::PoisonOp::create(b, accType);
  for (int64_t i = 0; i < n / 2; ++i)
    acc = LLVM::InsertValueOp::create(b, acc, loadState(state, i), i);
  return acc;
}

void WgmmaEmitter::storeAccumulator(Value acc, Value state) {
  int64_t values = cast<LLVM::LLVMStructType>(acc.getType()).getBody().size();
  for (int64_t i = 0; i < values; ++i)
    storeState(LLVM::ExtractValueOp::create(b, acc, i), state, i);
}

//===----------------------------------------------------------------------===//
// Tensor maps.
//===----------------------------------------------------------------------===//

Type WgmmaEmitter::tensorMapType() {
  MLIRContext *ctx = b.getContext();
  auto type = LLVM::LLVMStructType::getIdentified(ctx, kTensorMapTypeName);
  if (!type.isInitialized())
    (void)type.setBody(
        {LLVM::LLVMArrayType::get(b.getI64Type(), kTensorMapBytes / 8)},
        /*isPacked=*/false);
  return type;
}

void WgmmaEmitter::launchWithTensorMaps(
    ArrayRef<MapOperand> operands, ArrayRef<Value> extents,
    ArrayRef<int64_t> fixedRows, int64_t streamRows, int64_t scratchBytes,
    StringRef kernelName,
    llvm::function_ref<void(gpu::LaunchOp, ArrayRef<Value>,
                            const SharedLayout &)>
        body) {
  SmallVector<Type> inputs(14, b.getI64Type());
  inputs[0] = pointerType();
  func::FuncOp encode = runtimeFunction(
      b, "faTensorMapEncode", b.getFunctionType(inputs, {b.getI32Type()}));

  SmallVector<Value, 4> slots;
  Value ok;
  for (const MapOperand &operand : operands) {
    int64_t size = operand.f32Columns ? 4 : elementBytes();
    int64_t boxColumns =
        operand.f32Columns ? operand.f32Columns : blockElements();
    auto meta = memref::ExtractStridedMetadataOp::create(b, operand.memref);
    Value address =
        add(memref::ExtractAlignedPointerAsIndexOp::create(b, operand.memref),
            mul(meta.getOffset(), idx(size)));
    Value slot = LLVM::AllocaOp::create(b, pointerType(), tensorMapType(),
                                        i32(1), kTensorMapAlign);
    auto bytes = [&](Value stride) { return toI64(mul(stride, idx(size))); };
    ValueRange sizes = meta.getSizes(), strides = meta.getStrides();
    SmallVector<Value> args = {slot,
                               toI64(address),
                               i64(operand.name),
                               i64(size),
                               i64(boxColumns * size),
                               i64(boxColumns),
                               i64(operand.boxRows),
                               toI64(sizes[3]),
                               toI64(sizes[2]),
                               toI64(sizes[1]),
                               toI64(sizes[0]),
                               bytes(strides[2]),
                               bytes(strides[1]),
                               bytes(strides[0])};
    Value status = func::CallOp::create(b, encode, args).getResult(0);
    Value made = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, status,
                                       i32(0));
    ok = ok ? arith::AndIOp::create(b, ok, made) : made;
    slots.push_back(slot);
  }
  auto encoded = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(encoded.thenBlock());
  SmallVector<Value, 4> maps;
  for (Value slot : slots)
    maps.push_back(LLVM::LoadOp::create(b, tensorMapType(), slot));
  int64_t fixedTotal = 0;
  for (int64_t rows : fixedRows)
    fixedTotal += rows;
  int64_t sharedBytes =
      wgmmaSharedBytes(fixedTotal, streamRows, kvStages, headDim,
                       elementBytes(), scratchBytes, fixedSlots);
  launchBlocks(extents, sharedBytes, /*workgroupTypes=*/{}, kernelName,
               [&](gpu::LaunchOp launch) {
                 SmallVector<Value, 4> kernelMaps;
                 for (Value map : maps)
                   kernelMaps.push_back(kernelTensorMap(map));
                 body(launch, kernelMaps,
                      setUpShared(fixedRows, streamRows, scratchBytes));
               });
}

Value WgmmaEmitter::kernelTensorMap(Value map) {
  Value slot = LLVM::AllocaOp::create(b, pointerType(), tensorMapType(),
                                      i32(1), kTensorMapAlign);
  LLVM::StoreOp::create(b, map, slot);
  return slot;
}

//===----------------------------------------------------------------------===//
// mbarriers and TMA.
//===----------------------------------------------------------------------===//

void WgmmaEmitter::waitBarrier(Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(b, barrier, toI32(parity),
                                        i32(kWaitTicks));
}

void WgmmaEmitter::namedBarrier(Value id, int64_t threads) {
  std::optional<int64_t> fixed = getConstantIntValue(id);
  NVVM::BarrierOp::create(b, Type(), fixed ? i32(*fixed) : toI32(id),
                          i32(threads), /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

void WgmmaEmitter::expectBytes(Value barrier, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(
      b, /*res=*/Type(), barrier, i32(bytes), NVVM::MemScopeKind::CTA,
      /*relaxed=*/false, /*predicate=*/Value());
}

void WgmmaEmitter::loadTileAsync(Value map, Value address, int64_t rows,
                                 Value row, Value head, Value landed) {
  auto cluster =
      pointerType(static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  for (int64_t c = 0; c < columnBlocks(); ++c) {
    // A CTA's shared window lies inside its cluster's: sm_90's form of the
    // copy names the destination there.
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, cluster, sharedPointer(add(address, idx(c * rows * segmentBytes))));
    SmallVector<Value, 4> box = {i32(c * blockElements()), toI32(row),
                                 toI32(head), toI32(batchIdx)};
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, dst, map, box, landed, /*im2colOffsets=*/ValueRange{},
        /*multicastMask=*/Value(), /*l2CacheHint=*/Value(),
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, /*group=*/nullptr,
        /*predicate=*/Value());
  }
}

//===----------------------------------------------------------------------===//
// The warp-specialised block.
//===----------------------------------------------------------------------===//

WgmmaEmitter::SharedLayout
WgmmaEmitter::setUpShared(ArrayRef<int64_t> fixedRows, int64_t streamRows,
                          int64_t scratchBytes) {
  // Dynamic shared memory, its tiles aligned to the swizzle's period.
  Value base = dynamicShared();
  Value baseAddress = memref::ExtractAlignedPointerAsIndexOp::create(b, base);
  Value pad = remi(sub(idx(kSwizzlePeriod), remi(baseAddress, kSwizzlePeriod)),
                   kSwizzlePeriod);
  SharedLayout at;
  at.aligned = add(baseAddress, pad);
  at.streamRows = streamRows;
  int64_t offset = 0;
  for (int64_t rows : fixedRows) {
    at.fixed.push_back(offset);
    at.fixedRows.push_back(rows);
    offset += tileBytes(rows);
  }
  at.fixedBytes = offset;
  offset *= fixedSlots;
  for (int64_t tile = 0; tile < 2; ++tile) {
    at.streamed[tile] = offset;
    offset += kvStages * tileBytes(streamRows);
  }
  at.scratch = offset;
  at.barriers = offset + scratchBytes;

  // One thread sets the barriers up; every thread sees them set.
  electedThread([&] {
    for (int64_t slot = 0; slot < fixedSlots; ++slot) {
      NVVM::MBarrierInitOp::create(b, fixedLanded(at, idx(slot)), i32(1),
                                   Value());
      NVVM::MBarrierInitOp::create(b, fixedFree(at, idx(slot)),
                                   i32(128 * groups()), Value());
    }
    for (int64_t s = 0; s < kvStages; ++s)
      for (int64_t tile = 0; tile < 2; ++tile) {
        NVVM::MBarrierInitOp::create(
            b, stageBarrier(at, tile, StageEvent::Landed, idx(s)), i32(1),
            Value());
        NVVM::MBarrierInitOp::create(
            b, stageBarrier(at, tile, StageEvent::Free, idx(s)),
            i32(128 * groups()), Value());
      }
  });
  NVVM::FenceMbarrierInitOp::create(b);
  gpu::BarrierOp::create(b);
  return at;
}

Value WgmmaEmitter::stageBarrier(const SharedLayout &at, int64_t tile,
                                 StageEvent event, Value slot) {
  int64_t kind = 2 * static_cast<int64_t>(event) + tile;
  int64_t first = at.barriers + 8 * (1 + kind * kvStages);
  return sharedPointer(add(at.aligned, add(idx(first), mul(slot, idx(8)))));
}

Value WgmmaEmitter::waitStreamed(const SharedLayout &at, Value count) {
  auto [slot, parity] = stageOf(count);
  for (int64_t tile = 0; tile < 2; ++tile)
    waitBarrier(stageBarrier(at, tile, StageEvent::Landed, slot), parity);
  return slot;
}

void WgmmaEmitter::electedThread(llvm::function_ref<void()> body) {
  auto elected = scf::IfOp::create(
      b, cmp(arith::CmpIPredicate::eq, tid, idx(0)), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(elected.thenBlock());
  body();
}

void WgmmaEmitter::onGroupLeader(llvm::function_ref<void()> body,
                                 bool testInPlace) {
  Value thread = testInPlace ? opaque(tid) : tid;
  auto leader = scf::IfOp::create(
      b, cmp(arith::CmpIPredicate::eq, remi(thread, 128), idx(0)), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(leader.thenBlock());
  body();
}

void WgmmaEmitter::fenceSharedForAsync() {
  NVVM::FenceProxyOp::create(
      b,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

void WgmmaEmitter::produce(const SharedLayout &at, ArrayRef<FixedCopy> fixed,
                           std::array<Value, 2> streamMaps, StreamVisitor visit,
                           Value firstTile, Value fixedSlot) {
  int64_t fixedBytes = 0;
  for (const FixedCopy &copy : fixed)
    fixedBytes += tileBytes(at.fixedRows[copy.tile]);
  Value landed = fixedLanded(at, fixedSlot);
  expectBytes(landed, fixedBytes);
  for (const FixedCopy &copy : fixed)
    loadTileAsync(copy.map, fixedAt(at, copy.tile, fixedSlot),
                  at.fixedRows[copy.tile], copy.row, copy.head, landed);
  visit([&](Value count, Value row, Value head) {
    auto [slot, parity] = stageOf(add(firstTile, count));
    // The round before is free once the consumers said so; the first
    // round's wait (parity 1 of a fresh barrier) passes at once.
    Value before = xori(parity, idx(1));
    for (int64_t tile = 0; tile < 2; ++tile) {
      waitBarrier(stageBarrier(at, tile, StageEvent::Free, slot), before);
      Value landed = stageBarrier(at, tile, StageEvent::Landed, slot);
      expectBytes(landed, tileBytes(at.streamRows));
      loadTileAsync(streamMaps[tile], stageAt(at, tile, slot), at.streamRows, row,
                    head, landed);
    }
  });
}

Value WgmmaEmitter::consumeKeyTiles(
    const Variant &variant, const Dims &dims, Value m0, Value rows,
    bool apartEdges, KeyTileVisitor tile,
    llvm::function_ref<void(Value)> afterNarrowSinks) {
  using tensor_core::KeyEdge;
  int64_t sinkWidth = sinkTileWidth(variant);
  SmallVector<KeyPhase, 2> phases = keyPhases(variant, dims, m0, rows);
  Value done = idx(0); // tiles of the earlier phases
  for (const KeyPhase &p : phases) {
    if (sinkWidth > 0 && &p == &phases.front()) {
      // The sink phase: fewer sink tokens than a tile, so one narrow tile
      // or none.
      auto any = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, p.lo, p.hi), false);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(any.thenBlock());
        tile(p.lo, p.keyHi, /*maskWhen=*/Value(), done, sinkWidth,
             KeyEdge::Both);
      }
      done = add(done, tileCount(p.lo, p.hi, blockN));
      if (afterNarrowSinks)
        afterNarrowSinks(done);
      continue;
    }
    auto count = [&](Value n0) {
      return add(done, divi(sub(n0, p.lo), blockN));
    };
    if (apartEdges && !branchedTiles && p.leadingMasked &&
        tensor_core::windowEdgesApart(variant.window, queryRows, blockN))
      edgePhase(p.name, p.lo, p.hi, p.innerLo, p.innerHi, blockN,
                [&](Value n0, TileEdge edge) {
                  bool masked = edge != TileEdge::Inner;
                  tile(n0, masked ? p.keyHi : Value(), /*maskWhen=*/Value(),
                       count(n0), blockN,
                       edge == TileEdge::Leading    ? KeyEdge::Lower
                       : edge == TileEdge::Trailing ? KeyEdge::Upper
                                                    : KeyEdge::Both);
                });
    else
      phaseTiles(p, blockN, [&](Value n0, bool masked, Value maskWhen) {
        tile(n0, masked ? p.keyHi : Value(), maskWhen, count(n0), blockN,
             KeyEdge::Both);
      });
    done = add(done, tileCount(p.lo, p.hi, blockN));
  }
  return done;
}

Value WgmmaEmitter::streamKeyTiles(
    const Variant &variant, const Dims &dims, Value m0, Value rows,
    llvm::function_ref<void(Value, Value, Value)> copy) {
  Value done = idx(0); // tiles of the earlier phases
  SmallVector<KeyPhase, 2> phases = keyPhases(variant, dims, m0, rows);
  for (const KeyPhase &p : phases) {
    // A sink phase the consumers take as one narrow tile (consumeKeyTiles)
    // is one tile or none: a branch, where a loop's bounds and step held
    // registers that the 24 of the forward's producer at D 256 spilled
    // (streaming, 32 bytes; ptxas 13.0).
    if (sinkTileWidth(variant) > 0 && &p == &phases.front()) {
      auto any = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::slt, p.lo, p.hi), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(any.thenBlock());
      copy(done, p.lo, kvHead);
    } else {
      loop(p.lo, p.hi, idx(blockN), [&](Value n0) {
        copy(add(done, divi(sub(n0, p.lo), blockN)), n0, kvHead);
      });
    }
    // Without a mask a single phase's tile count is every item's (Sk's
    // tiles): LLVM hoisted it before the producer's item loop, where the
    // 24 registers beside D 256's consumers spilled it (mha and vit, 4
    // bytes). Through an opaque move it is made per item from Sk, a kernel
    // parameter. Not behind a sink phase: streaming then spilled 4-8 bytes
    // at D 80 and 128 (ptxas 13.0).
    Value hi = phases.size() == 1 ? opaque(p.hi) : p.hi;
    done = add(done, tileCount(p.lo, hi, blockN));
  }
  return done;
}

Value WgmmaEmitter::produceQueryBlock(const Variant &variant, const Dims &dims,
                                      const QueryBlock &block,
                                      const SharedLayout &at,
                                      ArrayRef<Value> fixedMaps,
                                      std::array<Value, 2> streamMaps,
                                      Value firstTile, Value fixedSlot) {
  SmallVector<FixedCopy, 2> fixed;
  for (auto [tile, map] : llvm::enumerate(fixedMaps))
    fixed.push_back({map, int64_t(tile), block.m0, block.head});
  Value tiles;
  produce(
      at, fixed, streamMaps,
      [&](auto copy) {
        tiles = streamKeyTiles(variant, dims, block.m0, block.rows, copy);
      },
      firstTile, fixedSlot);
  return tiles;
}

WgmmaEmitter::WorkItem WgmmaEmitter::beginWorkItem(scf::WhileOp items) {
  Type index = b.getIndexType();
  Block *after = b.createBlock(&items.getAfter(), {}, {index, index, index},
                               {b.getLoc(), b.getLoc(), b.getLoc()});
  return {after->getArgument(2), after->getArgument(0), after->getArgument(1)};
}

void WgmmaEmitter::produceWorkItems(
    gpu::LaunchOp launch, const SharedLayout &at, Value work, Value counter,
    llvm::function_ref<Value(const WorkItem &)> body) {
  Value blocks = launch.getGridSizeX();
  Type index = b.getIndexType();
  auto items =
      scf::WhileOp::create(b, TypeRange{index, index, index},
                           ValueRange{idx(0), idx(0), launch.getBlockIds().x});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&items.getBefore(), {}, {index, index, index},
                                  {b.getLoc(), b.getLoc(), b.getLoc()});
    Value round = before->getArgument(0), item = before->getArgument(2);
    auto [slot, parity] = fixedSlotOf(round);
    // The copy is the consumers' until they freed it from its last item
    // (the first use's wait, parity 1 of a fresh barrier, passes).
    waitBarrier(fixedFree(at, slot), xori(parity, idx(1)));
    LLVM::StoreOp::create(b, toI64(item), nextItemSlot(at, slot));
    Value more = cmp(arith::CmpIPredicate::ult, item, work);
    // Past the last item the consumers learn so from fixedLanded's phase
    // alone: its one arrival, no copies.
    auto last = scf::IfOp::create(b, more, /*withElseRegion=*/true);
    b.setInsertionPointToStart(last.elseBlock());
    // Its address made here: held from the producer's start to its end
    // it spilled in the producer's 32 registers (streaming at D 80).
    arriveOn(fixedLanded(at, slot, /*inPlace=*/true));
    b.setInsertionPointAfter(last);
    scf::ConditionOp::create(b, more, before->getArguments());
  }
  {
    OpBuilder::InsertionGuard guard(b);
    WorkItem item = beginWorkItem(items);
    Value tiles = body(item);
    // The grid's blocks took the first `blocks` items; the counter hands
    // out the rest (none where the grid covers the work: no atomic then;
    // nor without a counter, where it always does).
    if (!counter) {
      scf::YieldOp::create(b, ValueRange{add(item.round, idx(1)),
                                         add(item.firstTile, tiles), work});
      return;
    }
    auto draw = scf::IfOp::create(b, TypeRange{index},
                                  cmp(arith::CmpIPredicate::ugt, work, blocks),
                                  /*withElseRegion=*/true);
    b.setInsertionPointToStart(draw.thenBlock());
    Value drawn = memref::AtomicRMWOp::create(
        b, arith::AtomicRMWKind::addi, i64(1), counter, ValueRange{idx(0)});
    scf::YieldOp::create(
        b, add(blocks, arith::IndexCastUIOp::create(b, index, drawn)));
    b.setInsertionPointToStart(draw.elseBlock());
    scf::YieldOp::create(b, work);
    b.setInsertionPointAfter(draw);
    scf::YieldOp::create(b, ValueRange{add(item.round, idx(1)),
                                       add(item.firstTile, tiles),
                                       draw.getResult(0)});
  }
}

void WgmmaEmitter::consumeWorkItems(
    const SharedLayout &at, Value work,
    llvm::function_ref<Value(const WorkItem &)> body) {
  Type index = b.getIndexType();
  auto items = scf::WhileOp::create(b, TypeRange{index, index, index},
                                    ValueRange{idx(0), idx(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&items.getBefore(), {}, {index, index},
                                  {b.getLoc(), b.getLoc()});
    Value round = before->getArgument(0);
    auto [slot, parity] = fixedSlotOf(round);
    waitBarrier(fixedLanded(at, slot), parity);
    Value item = arith::IndexCastUIOp::create(
        b, index,
        LLVM::LoadOp::create(b, b.getI64Type(), nextItemSlot(at, slot)));
    scf::ConditionOp::create(b, cmp(arith::CmpIPredicate::ult, item, work),
                             ValueRange{round, before->getArgument(1), item});
  }
  OpBuilder::InsertionGuard guard(b);
  WorkItem item = beginWorkItem(items);
  Value tiles = body(item);
  scf::YieldOp::create(
      b, ValueRange{add(item.round, idx(1)), add(item.firstTile, tiles)});
}

Value WgmmaEmitter::enterConsumer() {
  NVVM::SetMaxRegisterOp::create(b,
                                 wgmmaConsumerRegisters(groups(), wideProducer),
                                 NVVM::SetMaxRegisterAction::increase);
  tid = sub(tid, idx(128));
  warp = sub(warp, idx(4));
  return divi(warp, 4);
}

void WgmmaEmitter::splitRoles(llvm::function_ref<void()> producer,
                              llvm::function_ref<void()> consumer) {
  auto roles =
      scf::IfOp::create(b, cmp(arith::CmpIPredicate::ult, tid, idx(128)),
                        /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(roles.thenBlock());
  // The producer only issues copies: it gives back all but few registers.
  NVVM::SetMaxRegisterOp::create(b,
                                 wgmmaProducerRegisters(groups(), wideProducer),
                                 NVVM::SetMaxRegisterAction::decrease);
  producer();
  b.setInsertionPointToStart(roles.elseBlock());
  consumer();
}
