//===- TensorCoreEmitter.cpp - What every tensor-core kernel shares -------===//
//
// The shared helpers' definitions (TensorCoreEmitter.h says what they
// share and why): kept out of the header that MmaSync.cpp, the wgmma
// files and GpuTensorCore.cpp include, so that a change here rebuilds one
// file.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreEmitter.h"

namespace fa::tensor_core {

Value TensorCoreEmitter::isVectorFriendly(Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
  Value ok = cmp(arith::CmpIPredicate::eq, meta.getStrides()[3], idx(1));
  auto both = [&](Value c) { ok = arith::AndIOp::create(b, ok, c); };
  for (int64_t d = 0; d < 3; ++d)
    both(cmp(arith::CmpIPredicate::eq,
             remi(meta.getStrides()[d], chunkElements()), idx(0)));
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
  Value start = add(base, mul(meta.getOffset(), idx(elementBytes())));
  both(cmp(arith::CmpIPredicate::eq, arith::RemUIOp::create(b, start, idx(16)),
           idx(0)));
  return ok;
}

Value TensorCoreEmitter::withUnitStride(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t dyn = ShapedType::kDynamic;
  auto layout = StridedLayoutAttr::get(b.getContext(), dyn, {dyn, dyn, dyn, 1});
  auto unitType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
  SmallVector<OpFoldResult> sizes;
  for (auto [size, value] : llvm::zip(type.getShape(), meta.getSizes()))
    sizes.push_back(ShapedType::isDynamic(size)
                        ? OpFoldResult(value)
                        : OpFoldResult(b.getIndexAttr(size)));
  SmallVector<OpFoldResult> strides(meta.getStrides().begin(),
                                    meta.getStrides().begin() + 3);
  strides.push_back(b.getIndexAttr(1));
  return memref::ReinterpretCastOp::create(
      b, unitType, memref, OpFoldResult(meta.getOffset()), sizes, strides);
}

SmallVector<Value> TensorCoreEmitter::maskedOrNot(
    bool masked, Value maskWhen, int64_t count,
    llvm::function_ref<SmallVector<Value>(bool)> build) {
  if (!masked || !maskWhen)
    return build(masked);
  auto ifOp =
      scf::IfOp::create(b, SmallVector<Type>(count, b.getF32Type()), maskWhen,
                        /*withElseRegion=*/true);
  for (bool inThen : {true, false}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(inThen ? ifOp.thenBlock() : ifOp.elseBlock());
    scf::YieldOp::create(b, build(inThen));
  }
  return SmallVector<Value>(ifOp.getResults());
}

void TensorCoreEmitter::launch(
    ArrayRef<Value> extents, ArrayRef<int64_t> tileRows, StringRef kernelName,
    llvm::function_ref<void(gpu::LaunchOp, ArrayRef<Value>)> body,
    ArrayRef<MemRefType> buffers) {
  SmallVector<Type> tileTypes;
  for (int64_t rows : tileRows)
    tileTypes.push_back(MemRefType::get({rows, sharedRowElements()}, element,
                                        AffineMap(), workgroupSpace()));
  llvm::append_range(tileTypes, buffers);
  auto bytesOf = [](Type type) {
    auto memref = cast<MemRefType>(type);
    return memref.getNumElements() * (memref.getElementTypeBitWidth() / 8);
  };
  int64_t bytes = 0;
  for (Type type : tileTypes)
    bytes += bytesOf(type);
  bool dynamic = bytes > tensor_core::kStaticSharedBytes;
  launchBlocks(extents, dynamic ? bytes : 0,
               dynamic ? ArrayRef<Type>() : ArrayRef<Type>(tileTypes),
               kernelName, [&](gpu::LaunchOp launch) {
                 SmallVector<Value> tiles(launch.getWorkgroupAttributions());
                 if (dynamic) {
                   Value base = dynamicShared();
                   int64_t offset = 0;
                   for (Type type : tileTypes) {
                     tiles.push_back(memref::ViewOp::create(
                         b, type, base, idx(offset), ValueRange{}));
                     offset += bytesOf(type);
                   }
                 }
                 body(launch, tiles);
               });
}

void TensorCoreEmitter::launchBlocks(
    ArrayRef<Value> extents, int64_t dynamicBytes,
    ArrayRef<Type> workgroupTypes, StringRef kernelName,
    llvm::function_ref<void(gpu::LaunchOp)> body) {
  Value one = idx(1);
  auto name = FlatSymbolRefAttr::get(b.getContext(), kernelName);
  Value bytes = dynamicBytes ? arith::ConstantIntOp::create(b, b.getI32Type(),
                                                            dynamicBytes)
                             : Value();
  Value blocks = mul(extents[0], mul(extents[1], extents[2]));
  auto launch = gpu::LaunchOp::create(
      b, blocks, one, one, idx(32 * warps), one, one, bytes,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, workgroupTypes,
      /*privateAttributions=*/{}, /*clusterSizeX=*/nullptr,
      /*clusterSizeY=*/nullptr, /*clusterSizeZ=*/nullptr, name, name);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  kernelEntry = &launch.getBody().front();
  setUpThread(launch, extents);
  body(launch);
  kernelEntry = nullptr;
  gpu::TerminatorOp::create(b);
}

gpu::AddressSpaceAttr TensorCoreEmitter::workgroupSpace() {
  return gpu::AddressSpaceAttr::get(b.getContext(),
                                    gpu::AddressSpace::Workgroup);
}

Value TensorCoreEmitter::dynamicShared() {
  return gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                         workgroupSpace()));
}

void TensorCoreEmitter::setUpThread(gpu::LaunchOp launch,
                                    ArrayRef<Value> extents) {
  tid = launch.getThreadIds().x;
  // With uniformWarpIndex, the warp's index through lane 0's copy
  // (shfl.sync.idx): ptxas then knows it is the same across the warp and
  // keeps what derives from it (warpgroup, tile and descriptor addresses)
  // in uniform registers.
  warp = divi(tid, 32);
  if (uniformWarpIndex)
    warp = arith::IndexCastUIOp::create(
        b, b.getIndexType(),
        gpu::ShuffleOp::create(
            b, arith::IndexCastUIOp::create(b, b.getI32Type(), warp), 0, 32,
            gpu::ShuffleMode::IDX)
            .getShuffleResult());
  lane = remi(tid, 32);
  quadRank = divi(lane, 4); // g
  quadTid = remi(lane, 4);  // t
  SmallVector<Value, 3> coord =
      delinearize(launch.getBlockIds().x, ValueRange(extents));
  blockCoord = {coord[0], coord[1], coord[2]};
  batchIdx = blockCoord[2];
}

std::pair<Value, Value>
TensorCoreEmitter::sectionedBlock(Value linear, Value tiles, Value pairs) {
  Value sectionBlocks = mul(idx(gridSection), tiles);
  Value firstPair = mul(divi(linear, sectionBlocks), idx(gridSection));
  Value width = min(idx(gridSection), sub(pairs, firstPair));
  Value inSection = remi(linear, sectionBlocks);
  return {divi(inSection, width), add(firstPair, remi(inSection, width))};
}

Value TensorCoreEmitter::keyBlockTile(const Dims &dims, Value tiles,
                                      Value linear) {
  auto [tile, pair] = sectionedBlock(linear, tiles, mul(dims.hkv, dims.batch));
  kvHead = remi(pair, dims.hkv);
  batchIdx = divi(pair, dims.hkv);
  return tile;
}

TensorCoreEmitter::QueryBlock
TensorCoreEmitter::queryBlock(const Variant &variant, const Dims &dims,
                              Value tiles, gpu::LaunchOp launch,
                              int64_t rowsPerBlock) {
  return queryBlock(variant, dims, tiles, launch.getBlockIds().x, rowsPerBlock);
}

TensorCoreEmitter::QueryBlock
TensorCoreEmitter::queryBlock(const Variant &variant, const Dims &dims,
                              Value tiles, Value linear, int64_t rowsPerBlock) {
  auto [tile, pair] = sectionedBlock(linear, tiles, mul(dims.hq, dims.batch));
  if (variant.causal)
    tile = sub(sub(tiles, idx(1)), tile);
  QueryBlock q;
  q.head = remi(pair, dims.hq);
  batchIdx = divi(pair, dims.hq);
  kvHead = divi(q.head, dims.group);
  q.m0 = mul(tile, idx(rowsPerBlock));
  q.rows = min(idx(rowsPerBlock), sub(dims.sq, q.m0));
  q.rowOf = laneRows(add(q.m0, mul(warp, idx(16))));
  return q;
}

std::array<Value, 3> TensorCoreEmitter::forwardGrid(const ForwardArgs &args,
                                                    const Dims &dims,
                                                    int64_t rowsPerBlock) {
  if (args.queryStarts)
    return {sequenceBlockCount(dims, args.queryStarts, rowsPerBlock), dims.hq,
            idx(1)};
  return {ceilDiv(dims.sq, rowsPerBlock), dims.hq, dims.batch};
}

std::pair<TensorCoreEmitter::QueryBlock, TensorCoreEmitter::Dims>
TensorCoreEmitter::forwardBlock(const Variant &variant, const ForwardArgs &args,
                                const Dims &allDims, Value tiles, Value linear,
                                int64_t rowsPerBlock) {
  if (!args.queryStarts) {
    QueryBlock block =
        queryBlock(variant, allDims, tiles, linear, rowsPerBlock);
    return {block, batchDims(allDims, args.keyLengths, batchIdx, args.kNew)};
  }
  Value index = sub(sub(tiles, idx(1)), remi(linear, tiles));
  SequenceBlock seq = sequenceBlock(allDims, args.queryStarts, args.keyStarts,
                                    index, rowsPerBlock);
  QueryBlock q;
  q.head = divi(linear, tiles);
  batchIdx = idx(0);
  kvHead = divi(q.head, allDims.group);
  q.m0 = seq.m0;
  q.rows = seq.rows;
  q.rowOf = laneRows(add(q.m0, mul(warp, idx(16))));
  return {q, seq.dims};
}

Value TensorCoreEmitter::narrowBound(Value bound) {
  if (!bound)
    return bound;
  return LLVM::InlineAsmOp::create(
             b, b.getI32Type(),
             ValueRange{arith::IndexCastOp::create(b, b.getI32Type(), bound)},
             "mov.b32 $0, $1;", "=r,r", /*has_side_effects=*/false,
             /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

TensorCoreEmitter::KeyTileMask
TensorCoreEmitter::keyTileMask(const Variant &variant, const Dims &dims,
                               ArrayRef<Value> rowOf, Value n0, Value keyHi,
                               int64_t nTiles) {
  Value base = add(n0, mul(quadTid, idx(2)));
  KeyTileMask mask;
  for (int64_t r = 0; r < 2; ++r) {
    auto bounds = tensor_core::keyOffsetBoundsOf(
        indexOps(), base, 8 * nTiles, rowOf[r], dims.sk, dims.offset, keyHi,
        dims.keyStart, variant.causal, variant.window, variant.sinkTokens);
    mask[r] = {narrowBound(bounds.hi), narrowBound(bounds.lo),
               narrowBound(bounds.sinkHi)};
  }
  return mask;
}

Value TensorCoreEmitter::keyTileVisible(const Variant &variant,
                                        const KeyTileMask &mask, int64_t nt,
                                        int64_t e, tensor_core::KeyEdge edge) {
  Value c = arith::ConstantIntOp::create(b, nt * 8 + e % 2, 32);
  return tensor_core::keyOffsetVisibleOf(
      indexOps(), mask[e / 2], c, variant.window, variant.sinkTokens, edge);
}

Value TensorCoreEmitter::rowLse2(const GradArgs &args, Value head, Value row) {
  return toBase2(
      memref::LoadOp::create(b, args.lse, ValueRange{batchIdx, head, row}));
}

std::pair<Value, Value>
TensorCoreEmitter::rowStatistics(const GradArgs &args, Value head, Value row) {
  return {
      rowLse2(args, head, row),
      memref::LoadOp::create(b, args.rowDot, ValueRange{batchIdx, head, row})};
}

std::pair<Value, Value> TensorCoreEmitter::probAndGrad(Value s, Value dp,
                                                       Value scaleLog2,
                                                       Value lse2, Value rowDot,
                                                       Value ok) {
  Value p = exp2Ftz(
      math::FmaOp::create(b, s, scaleLog2, arith::NegFOp::create(b, lse2)));
  if (ok)
    p = select(ok, p, flt(0.0));
  return {p, fmul(p, fsub(dp, rowDot))};
}

void TensorCoreEmitter::keyMajorGrads(
    const Variant &variant, const Dims &dims, const GradArgs &args, Value head,
    Value m0, bool masked, ArrayRef<Value> keyOf, Value scaleLog2,
    MutableArrayRef<SmallVector<Value, 4>> s,
    MutableArrayRef<SmallVector<Value, 4>> dp) {
  Value lastRow = sub(dims.sq, idx(1));
  keyMajorGrads(variant, dims, m0, masked, Value(), keyOf, scaleLog2, s, dp,
                [&](Value column, int64_t) {
                  return rowStatistics(args, head, min(column, lastRow));
                });
}

void TensorCoreEmitter::keyMajorGrads(const Variant &variant, const Dims &dims,
                                      Value m0, bool masked, Value maskWhen,
                                      ArrayRef<Value> keyOf, Value scaleLog2,
                                      MutableArrayRef<SmallVector<Value, 4>> s,
                                      MutableArrayRef<SmallVector<Value, 4>> dp,
                                      ColumnStatistics statisticsOf) {
  int64_t nTiles = s.size();
  auto column = [&](int64_t nt, int64_t col) {
    return add(add(m0, idx(nt * 8 + col)), mul(quadTid, idx(2)));
  };
  // Under a branch each column's statistics are read once, before it;
  // else where each column needs them, as few live at once as can be.
  SmallVector<std::pair<Value, Value>> statistics;
  if (masked && maskWhen)
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t col = 0; col < 2; ++col)
        statistics.push_back(statisticsOf(column(nt, col), nt * 8 + col));
  SmallVector<Value> grads =
      maskedOrNot(masked, maskWhen, 2 * nTiles * 4, [&](bool maskHere) {
        SmallVector<Value> out(2 * nTiles * 4);
        // Per key, bounds on the tile's query offsets (queryOffsetBoundsOf,
        // in 32 bits): a compare or two of each element's constant offset.
        std::array<tensor_core::KeyOffsetBounds<Value>, 2> bounds;
        if (maskHere)
          for (int64_t half = 0; half < 2; ++half) {
            auto ofKey = tensor_core::queryOffsetBoundsOf(
                indexOps(), add(m0, mul(quadTid, idx(2))), 8 * nTiles,
                keyOf[half], dims.sq, dims.sk, dims.offset, dims.keyStart,
                variant.causal, variant.window, variant.sinkTokens);
            bounds[half] = {narrowBound(ofKey.hi), narrowBound(ofKey.lo),
                            Value()};
          }
        for (int64_t nt = 0; nt < nTiles; ++nt)
          for (int64_t col = 0; col < 2; ++col) {
            Value i = column(nt, col);
            auto [lse2, rowDot] = statistics.empty()
                                      ? statisticsOf(i, nt * 8 + col)
                                      : statistics[nt * 2 + col];
            for (int64_t half = 0; half < 2; ++half) {
              int64_t e = 2 * half + col;
              Value ok;
              if (maskHere)
                ok = tensor_core::queryOffsetVisibleOf(
                    indexOps(), bounds[half],
                    arith::ConstantIntOp::create(b, nt * 8 + col, 32)
                        .getResult(),
                    variant.causal);
              std::tie(out[nt * 4 + e], out[(nTiles + nt) * 4 + e]) =
                  probAndGrad(s[nt][e], dp[nt][e], scaleLog2, lse2, rowDot, ok);
            }
          }
        return out;
      });
  for (int64_t nt = 0; nt < nTiles; ++nt)
    for (int64_t e = 0; e < 4; ++e) {
      s[nt][e] = grads[nt * 4 + e];
      dp[nt][e] = grads[(nTiles + nt) * 4 + e];
    }
}

void TensorCoreEmitter::queryMajorGrads(
    const Variant &variant, const Dims &dims, ArrayRef<Value> rowOf, Value n0,
    Value keyHi, ArrayRef<Value> lse2, ArrayRef<Value> rowDot, Value scaleLog2,
    MutableArrayRef<SmallVector<Value, 4>> s,
    MutableArrayRef<SmallVector<Value, 4>> dp, Value maskWhen) {
  int64_t nTiles = s.size();
  SmallVector<Value> grads =
      maskedOrNot(bool(keyHi), maskWhen, 2 * nTiles * 4, [&](bool maskHere) {
        SmallVector<Value> out(2 * nTiles * 4);
        KeyTileMask mask;
        if (maskHere)
          mask = keyTileMask(variant, dims, rowOf, n0, keyHi, nTiles);
        for (int64_t nt = 0; nt < nTiles; ++nt)
          for (int64_t e = 0; e < 4; ++e) {
            Value ok =
                maskHere ? keyTileVisible(variant, mask, nt, e) : Value();
            std::tie(out[nt * 4 + e], out[(nTiles + nt) * 4 + e]) = probAndGrad(
                s[nt][e], dp[nt][e], scaleLog2, lse2[e / 2], rowDot[e / 2], ok);
          }
        return out;
      });
  for (int64_t nt = 0; nt < nTiles; ++nt)
    for (int64_t e = 0; e < 4; ++e) {
      s[nt][e] = grads[nt * 4 + e];
      dp[nt][e] = grads[(nTiles + nt) * 4 + e];
    }
}

TensorCoreEmitter::LaneRowStatistics
TensorCoreEmitter::laneRowStatistics(const GradArgs &args, const Dims &dims,
                                     Value head, ArrayRef<Value> rowOf,
                                     bool withRowDot) {
  Value lastRow = sub(dims.sq, idx(1));
  LaneRowStatistics stats;
  for (int64_t r = 0; r < 2; ++r) {
    Value row = min(rowOf[r], lastRow);
    if (withRowDot)
      std::tie(stats.lse2[r], stats.rowDot[r]) = rowStatistics(args, head, row);
    else
      stats.lse2[r] = rowLse2(args, head, row);
  }
  return stats;
}

SmallVector<Value, 4>
TensorCoreEmitter::fragAFromAcc(ArrayRef<SmallVector<Value, 4>> acc,
                                int64_t kk) {
  return {pack(acc[2 * kk][0], acc[2 * kk][1]),
          pack(acc[2 * kk][2], acc[2 * kk][3]),
          pack(acc[2 * kk + 1][0], acc[2 * kk + 1][1]),
          pack(acc[2 * kk + 1][2], acc[2 * kk + 1][3])};
}

Value TensorCoreEmitter::privateBuffer(int64_t n) {
  OpBuilder::InsertionGuard guard(b);
  if (kernelEntry)
    b.setInsertionPointToStart(kernelEntry);
  return memref::AllocaOp::create(b, MemRefType::get({n}, b.getF32Type()));
}

Value TensorCoreEmitter::zeroState(std::optional<int64_t> columns) {
  int64_t n = columns.value_or(headDim) / 2;
  Value state = privateBuffer(n);
  for (int64_t i = 0; i < n; ++i)
    storeState(flt(0.0), state, i);
  return state;
}

std::pair<Value, Value> TensorCoreEmitter::scaledPair(Value state, int64_t dt,
                                                      int64_t r, Value factor) {
  return {fmul(loadState(state, dt * 4 + 2 * r), factor),
          fmul(loadState(state, dt * 4 + 2 * r + 1), factor)};
}

void TensorCoreEmitter::storeRows(Value state, ArrayRef<Value> factor,
                                  Value memref, ArrayRef<Value> headOf,
                                  ArrayRef<Value> rowOf, Value rowsTotal,
                                  std::optional<int64_t> columns,
                                  Value column0) {
  // The split-KV forward's partial outputs are f32, whatever the inputs.
  Type stored = cast<MemRefType>(memref.getType()).getElementType();
  auto pair = VectorType::get({2}, stored);
  auto convert = [&](Value x) { return stored.isF32() ? x : toElement(x); };
  for (int64_t r = 0; r < 2; ++r) {
    auto inRows = scf::IfOp::create(
        b, cmp(arith::CmpIPredicate::slt, rowOf[r], rowsTotal), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(inRows.thenBlock());
    for (int64_t dt = 0; dt < columns.value_or(headDim) / 8; ++dt) {
      auto [lo, hi] = scaledPair(state, dt, r, factor[r]);
      Value v = vector::FromElementsOp::create(
          b, pair, ValueRange{convert(lo), convert(hi)});
      Value col = add(idx(dt * 8), mul(quadTid, idx(2)));
      if (column0)
        col = add(col, column0);
      vector::StoreOp::create(
          b, v, memref,
          ValueRange{batchIdx, headOf[r % headOf.size()], rowOf[r], col},
          /*nontemporal=*/false,
          llvm::Align(2 * stored.getIntOrFloatBitWidth() / 8));
    }
  }
}

Value TensorCoreEmitter::sharedChunkColumn(Value chunk, Value rowMod8) {
  if (tensor_core::swizzlesRows(headDim, elementBytes()))
    chunk = xori(chunk, rowMod8);
  return mul(chunk, idx(chunkElements()));
}

Value TensorCoreEmitter::pack(Value lo, Value hi) {
  auto pair = VectorType::get({2}, element);
  return asOperand(vector::FromElementsOp::create(
      b, pair, ValueRange{toElement(lo), toElement(hi)}));
}

Value TensorCoreEmitter::asOperand(Value pair) {
  if (!element.isBF16())
    return pair;
  return LLVM::BitcastOp::create(b, b.getI32Type(), pair);
}

Value TensorCoreEmitter::loadPair(Value memref, ValueRange indices) {
  auto pair = VectorType::get({2}, element);
  return asOperand(vector::LoadOp::create(b, pair, memref, indices,
                                          /*nontemporal=*/false,
                                          llvm::Align(2 * elementBytes())));
}

Value TensorCoreEmitter::laneReduce(
    Value x, int32_t lanes, llvm::function_ref<Value(Value, Value)> op) {
  for (int32_t offset = 1; offset < lanes; offset *= 2) {
    Value other =
        gpu::ShuffleOp::create(b, x, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = op(x, other);
  }
  return x;
}

Value TensorCoreEmitter::exp2Ftz(Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, b.getF32Type(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"),
             ValueRange{x})
      .getResult(0);
}

Value TensorCoreEmitter::treeReduce(
    SmallVector<Value> values, llvm::function_ref<Value(Value, Value)> op) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(op(values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

std::pair<Value, Value> TensorCoreEmitter::passChunk(int64_t first) {
  int64_t chunksPerRow = headDim / chunkElements();
  if ((32 * warps) % chunksPerRow == 0)
    return {add(divi(tid, chunksPerRow), idx(first / chunksPerRow)),
            remi(tid, chunksPerRow)};
  Value linear = add(tid, idx(first));
  return {divi(linear, chunksPerRow), remi(linear, chunksPerRow)};
}

TensorCoreEmitter::TileRows TensorCoreEmitter::lookUpPages(int64_t rows,
                                                           Value start,
                                                           Value limit,
                                                           const Dims &keys) {
  TileRows out{rows, start, limit, {}};
  for (int64_t first = 0; first < tileChunks(rows); first += 32 * warps) {
    Value clamped = min(add(start, passChunk(first).first), sub(limit, idx(1)));
    out.pageEntries.push_back(pageEntry(keys, batchIdx, clamped));
  }
  return out;
}

void TensorCoreEmitter::appendRows(const ForwardArgs &args, const Dims &dims,
                                   Value writes) {
  auto writer = scf::IfOp::create(b, writes, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(writer.thenBlock());
  Value count = mul(memref::DimOp::create(b, args.kNew, 2), idx(headDim));
  loop(tid, count, idx(32 * warps), [&](Value e) {
    Value s = divi(e, headDim), c = remi(e, headDim);
    auto [first, at] = keyRow(dims, batchIdx, add(dims.appendAt, s));
    for (auto [from, to] :
         {std::pair{args.kNew, args.k}, std::pair{args.vNew, args.v}})
      memref::StoreOp::create(
          b,
          memref::LoadOp::create(b, from, ValueRange{batchIdx, kvHead, s, c}),
          to, ValueRange{first, kvHead, at, c});
  });
}

void TensorCoreEmitter::stageTiles(ArrayRef<Value> sources,
                                   ArrayRef<Value> tiles, Value start,
                                   Value limit, Value head) {
  gpu::BarrierOp::create(b);
  for (auto [source, tile] : llvm::zip(sources, tiles))
    loadTile(source, tile, start, limit, head);
  waitTiles();
}

SmallVector<SmallVector<Value, 4>>
TensorCoreEmitter::zeroTiles(int64_t nTiles) {
  return SmallVector<SmallVector<Value, 4>>(nTiles,
                                            SmallVector<Value, 4>(4, flt(0.0)));
}

void TensorCoreEmitter::waitTiles() {
  NVVM::CpAsyncWaitGroupOp::create(b, 0);
  gpu::BarrierOp::create(b);
}

TensorCoreEmitter::State
TensorCoreEmitter::initForwardState(Value sinks, ArrayRef<Value> headOf) {
  State state;
  state.out = zeroState();
  state.stats = privateBuffer(4);
  std::array<Value, 2> mInit = {negInf(), negInf()};
  Value lInit = flt(0.0);
  if (sinks) {
    auto sinkOf = [&](Value head) {
      return toBase2(memref::LoadOp::create(b, sinks, head));
    };
    mInit[0] = sinkOf(headOf[0]);
    mInit[1] = headOf.size() > 1 ? sinkOf(headOf[1]) : mInit[0];
    lInit = select(cmp(arith::CmpIPredicate::eq, quadTid, idx(0)), flt(1.0),
                   flt(0.0));
  }
  for (int64_t r = 0; r < 2; ++r) {
    storeState(mInit[r], state.stats, r);
    storeState(lInit, state.stats, 2 + r);
  }
  return state;
}

void TensorCoreEmitter::onlineSoftmax(const Variant &variant, const Dims &dims,
                                      const State &state, Value scaleLog2,
                                      ArrayRef<Value> rowOf, Value n0,
                                      Value keyHi,
                                      MutableArrayRef<SmallVector<Value, 4>> s,
                                      std::array<Value, 2> *deferredAlpha,
                                      Value maskWhen, Value *warpRescales,
                                      tensor_core::KeyEdge edge) {
  int64_t nTiles = s.size();
  // The scale is positive (the verifier says so), so the row max commutes
  // with scaling: scores stay unscaled and exp2(s * scale - m) is one FMA
  // per element.
  SmallVector<Value> scores =
      maskedOrNot(bool(keyHi), maskWhen, nTiles * 4, [&](bool masked) {
        SmallVector<Value> out;
        KeyTileMask mask;
        if (masked)
          mask = keyTileMask(variant, dims, rowOf, n0, keyHi, nTiles);
        for (int64_t nt = 0; nt < nTiles; ++nt)
          for (int64_t e = 0; e < 4; ++e)
            out.push_back(
                masked ? select(keyTileVisible(variant, mask, nt, e, edge),
                                s[nt][e], negInf())
                       : s[nt][e]);
        return out;
      });
  for (int64_t nt = 0; nt < nTiles; ++nt)
    for (int64_t e = 0; e < 4; ++e)
      s[nt][e] = scores[nt * 4 + e];

  // Online softmax of rows g (e = 0, 1) and g + 8 (e = 2, 3).
  Value moves; // lazy: whether this thread's rows moved their m
  for (int64_t r = 0; r < 2; ++r) {
    auto max = [&](Value x, Value y) { return fmaxnum(x, y); };
    SmallVector<Value> row;
    for (int64_t nt = 0; nt < nTiles; ++nt)
      row.append({s[nt][2 * r], s[nt][2 * r + 1]});
    Value rowMax = quadReduce(treeReduce(row, max), max);
    rowMax = fmul(rowMax, scaleLog2);
    Value mOld = loadState(state.stats, r);
    Value mNew = fmaxnum(mOld, rowMax);
    if (warpRescales) {
      // Lazy: m moves only past the threshold (ordered: a row still empty,
      // -inf - -inf, does not move; its first visible tile, inf, does).
      Value move = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                         fsub(mNew, mOld),
                                         flt(kLazyRescaleLog2));
      mNew = select(move, mNew, mOld);
      moves = moves ? arith::OrIOp::create(b, moves, move) : move;
    }
    // A row with nothing visible yet keeps m = -inf; subtract 0 then so
    // exp2(-inf - -inf) never makes a NaN.
    Value isEmpty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, mNew, negInf());
    Value mSafe = select(isEmpty, flt(0.0), mNew);
    Value alpha = exp2Ftz(fsub(mOld, mSafe));
    Value negM = arith::NegFOp::create(b, mSafe);
    row.clear();
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t e = 2 * r; e < 2 * r + 2; ++e) {
        s[nt][e] = exp2Ftz(math::FmaOp::create(b, s[nt][e], scaleLog2, negM));
        row.push_back(s[nt][e]);
      }
    Value sum = treeReduce(row, [&](Value x, Value y) { return fadd(x, y); });
    Value lOld = loadState(state.stats, 2 + r);
    storeState(fadd(fmul(alpha, lOld), sum), state.stats, 2 + r);
    storeState(mNew, state.stats, r);
    if (deferredAlpha)
      (*deferredAlpha)[r] = alpha;
    else
      rescaleRow(state, r, alpha);
  }
  if (warpRescales)
    *warpRescales = NVVM::VoteSyncOp::create(
        b, b.getI1Type(), arith::ConstantIntOp::create(b, b.getI32Type(), -1),
        moves, NVVM::VoteSyncKind::any);
}

void TensorCoreEmitter::rescaleRow(const State &state, int64_t r, Value alpha) {
  for (int64_t dt = 0; dt < headDim / 8; ++dt)
    for (int64_t e = 2 * r; e < 2 * r + 2; ++e)
      storeState(fmul(alpha, loadState(state.out, dt * 4 + e)), state.out,
                 dt * 4 + e);
}

void TensorCoreEmitter::storeForward(
    const State &state, const ForwardArgs &args, const Dims &dims,
    ArrayRef<Value> headOf, ArrayRef<Value> rowOf,
    llvm::function_ref<void(std::array<Value, 2>)> storeOut) {
  // o = acc / l, lse = (m + log2 l) ln 2; empty rows: o = 0, lse = -inf;
  // a NaN l is not empty (the unordered compare): o and lse are NaN.
  Value l[2], positive[2];
  std::array<Value, 2> inv;
  for (int64_t r = 0; r < 2; ++r) {
    l[r] = quadReduce(loadState(state.stats, 2 + r),
                      [&](Value x, Value y) { return fadd(x, y); });
    positive[r] =
        arith::CmpFOp::create(b, arith::CmpFPredicate::UGT, l[r], flt(0.0));
    inv[r] =
        select(positive[r], arith::DivFOp::create(b, flt(1.0), l[r]), flt(0.0));
  }
  if (storeOut)
    storeOut(inv);
  else
    storeRows(state.out, inv, args.o, headOf, rowOf, dims.sq);
  for (int64_t r = 0; r < 2; ++r) {
    Value writes = arith::AndIOp::create(
        b, cmp(arith::CmpIPredicate::slt, rowOf[r], dims.sq),
        cmp(arith::CmpIPredicate::eq, quadTid, idx(0)));
    auto writer = scf::IfOp::create(b, writes, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(writer.thenBlock());
    Value m = loadState(state.stats, r);
    Value lse = fmul(fadd(m, math::Log2Op::create(b, l[r])), flt(kLn2));
    memref::StoreOp::create(
        b, select(positive[r], lse, negInf()), args.lse,
        ValueRange{batchIdx, headOf[r % headOf.size()], rowOf[r]});
  }
}

} // namespace fa::tensor_core
