//===- Wgmma.cpp - Attention forward on wgmma (sm_90a) --------------------===//
//
// The Hopper forward: a block of `warps / 4` consumer warpgroups, each
// owning 64 query rows, over K/V tiles of block-n keys staged in shared
// memory two deep. Per key tile:
//   S = Q K^T   wgmma.mma_async m64n<block-n>k16, Q and K from shared memory
//               (NVVM's wgmma op; both K-major)
//   online softmax on the S registers (TensorCoreEmitter: the same code as
//               mma.sync's, since each 8-column slice of a wgmma accumulator
//               has mma.sync's C layout)
//   O += P V    wgmma.mma_async m64n<D>k16 with P from registers (the RS
//               form, which NVVM has no op for: one instruction through
//               inline PTX) and V from shared memory in its stored layout
//               (MN-major, through the transpose bit)
//
// Shared tiles use a swizzle both wgmma's descriptors and TMA name, of the
// widest segment W in {128, 64, 32} bytes that divides a row of D: a tile
// of R rows x D is D * size / W column blocks of R rows x W bytes, and
// 16-byte chunk c of row r sits at chunk c ^ ((r % 8) >> log2(128 / W)) of
// its segment (the XOR of address bits 4.. with bits 7..). Tiles start on
// the swizzles' 1024-byte period. So every head dim that is a multiple of
// 16 up to 256 runs here: 64, 128, 192, 256 on 128-byte segments, 32 and 96
// on 64-byte ones, 80 on 32-byte ones.
//
// Matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the
// start address >> 4, 16-29 the leading-dimension byte offset >> 4, 32-45
// the stride-dimension byte offset >> 4, 62-63 the swizzle (1: 128 bytes,
// 2: 64, 3: 32). K-major (Q, K): the stride offset is 8 W (8 rows); a
// 16-wide k step inside a column block moves the start by 32 bytes.
// MN-major (V): the leading offset is the distance between column blocks,
// the stride offset 8 W between 8-key row groups.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreEmitter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace fa;
using namespace fa::tensor_core;

namespace {

/// Query rows per consumer warpgroup: wgmma's M.
constexpr int64_t kGroupRows = 64;

class WgmmaEmitter : public TensorCoreEmitter {
public:
  WgmmaEmitter(ImplicitLocOpBuilder &b, Type element, int64_t headDim,
               KernelShape shape)
      : TensorCoreEmitter(b, element, headDim, shape, /*allowTf32=*/false),
        segmentBytes(swizzleSegmentBytes(headDim * elementBytes())) {}

  /// Launches the forward kernel for this head dim, named `kernelName`.
  void emitForward(const Variant &variant, ForwardArgs args,
                   StringRef kernelName) {
    for (Value *m : {&args.q, &args.k, &args.v, &args.o})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    Value tiles = ceilDiv(dims.sq, queryRows);
    int64_t bytes = wgmmaForwardSharedBytes(queryRows, blockN, kvStages,
                                            headDim, elementBytes());
    launchBlocks({tiles, dims.hq, dims.batch}, bytes, /*workgroupTypes=*/{},
                 kernelName, [&](gpu::LaunchOp launch) {
                   emitBody(variant, args, dims, tiles, launch);
                 });
  }

private:
  /// The swizzle's row segment W: a column block's bytes per row.
  int64_t segmentBytes;

  /// The widest swizzle segment (128, 64 or 32 bytes) that divides a row.
  static int64_t swizzleSegmentBytes(int64_t rowBytes) {
    for (int64_t w : {128, 64, 32})
      if (rowBytes % w == 0)
        return w;
    llvm_unreachable("wgmma head dims are multiples of 16");
  }
  /// The descriptor's swizzle field for the segment.
  int64_t swizzleMode() const {
    return segmentBytes == 128 ? 1 : segmentBytes == 64 ? 2 : 3;
  }
  /// Elements per column block of a shared tile.
  int64_t blockElements() const { return segmentBytes / elementBytes(); }
  int64_t columnBlocks() const { return headDim / blockElements(); }
  int64_t tileBytes(int64_t rows) const {
    return rows * headDim * elementBytes();
  }

  /// A shared tile: `count` tiles of `rows` x headDim at byte `offset` of
  /// `base`, as [count][column block][row][element].
  Value sharedTiles(Value base, Value offset, int64_t count, int64_t rows) {
    auto type = MemRefType::get({count, columnBlocks(), rows, blockElements()},
                                element, AffineMap(), workgroupSpace());
    return memref::ViewOp::create(b, type, base, offset, ValueRange{});
  }

  /// cp.async copies of rows [start, start + rows) of source[batch, head]
  /// into tile `slot` of `tiles` in the swizzled layout.
  void copySwizzled(Value source, Value tiles, Value slot, int64_t rows,
                    Value start, Value limit, Value head) {
    int64_t perBlock = segmentBytes / 16;
    int64_t shift = llvm::Log2_64(128 / segmentBytes);
    copyRows(source, tiles, rows, start, limit, head,
             [&](Value row, Value chunk) -> SmallVector<Value, 3> {
               Value within = xori(remi(chunk, perBlock),
                                   divi(remi(row, 8), int64_t(1) << shift));
               return {slot, divi(chunk, perBlock), row,
                       mul(within, idx(chunkElements()))};
             });
  }

  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, b.getI64Type(), v);
  }

  /// The wgmma descriptor of the matrix at shared byte `address` in the
  /// tiles' swizzle, with the given leading and stride byte offsets.
  Value descriptor(Value address, int64_t leading, int64_t stride) {
    Value addr = arith::IndexCastUIOp::create(b, b.getI64Type(), address);
    Value start = arith::AndIOp::create(
        b, arith::ShRUIOp::create(b, addr, i64(4)), i64(0x3FFF));
    int64_t fields = ((leading >> 4) << 16) | ((stride >> 4) << 32) |
                     (swizzleMode() << 62);
    return arith::OrIOp::create(b, start, i64(fields));
  }

  NVVM::WGMMATypes wgmmaType() const {
    return element.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  }

  /// S = Q K^T for this warpgroup's 64 rows against the K tile at `keys`
  /// (shared byte address): blockN / 8 accumulator tiles of 16 x 8 per
  /// warp.
  SmallVector<SmallVector<Value, 4>> scores(Value queries, Value keys) {
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    auto accType = LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(blockN / 2, f32));
    Value acc = LLVM::ZeroOp::create(b, accType);
    NVVM::WgmmaFenceAlignedOp::create(b);
    for (int64_t kk = 0; kk < headDim / 16; ++kk) {
      int64_t column = (kk * 16) / blockElements();
      int64_t within = (kk * 16) % blockElements() * elementBytes();
      Value a = descriptor(
          add(queries, idx(column * queryRows * segmentBytes + within)), 16,
          8 * segmentBytes);
      Value bDesc = descriptor(
          add(keys, idx(column * blockN * segmentBytes + within)), 16,
          8 * segmentBytes);
      acc = NVVM::WgmmaMmaAsyncOp::create(
          b, accType, acc, a, bDesc,
          NVVM::MMAShapeAttr::get(ctx, kGroupRows, blockN, 16), wgmmaType(),
          wgmmaType(), NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::col,
          /*satfinite=*/nullptr);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    SmallVector<SmallVector<Value, 4>> s(blockN / 8);
    for (int64_t nt = 0; nt < blockN / 8; ++nt)
      for (int64_t e = 0; e < 4; ++e)
        s[nt].push_back(LLVM::ExtractValueOp::create(b, acc, nt * 4 + e));
    return s;
  }

  /// One wgmma m64n<headDim>k16 with A from registers (`a`, four 32-bit
  /// registers of two elements) and B at descriptor `bDesc`, transposed
  /// (MN-major): acc += A B.
  Value mmaRegisterA(Value acc, ArrayRef<Value> a, Value bDesc) {
    int64_t n = headDim / 2;
    std::string asmText = "{\n.reg .pred p;\nsetp.ne.b32 p, $" +
                          std::to_string(n + 5) +
                          ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                          std::to_string(headDim) + "k16.f32." +
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
    constraints.push_back("r");
    for (int64_t i = 0; i < n; ++i)
      constraints.push_back(std::to_string(i));
    SmallVector<Value> operands(a.begin(), a.end());
    operands.push_back(bDesc);
    operands.push_back(arith::ConstantIntOp::create(b, b.getI32Type(), 1));
    for (int64_t i = 0; i < n; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(b, acc, i));
    return LLVM::InlineAsmOp::create(
               b, acc.getType(), operands, asmText,
               llvm::join(constraints, ","), /*has_side_effects=*/true,
               /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
               LLVM::AsmDialectAttr::get(b.getContext(),
                                         LLVM::AsmDialect::AD_ATT),
               /*operand_attrs=*/ArrayAttr())
        .getResult(0);
  }

  /// O += P V: P in the S registers (rounded to the element type), V the
  /// tile at `values` (shared byte address), O this thread's state.
  void accumulate(ArrayRef<SmallVector<Value, 4>> p, Value values,
                  Value out) {
    int64_t n = headDim / 2;
    MLIRContext *ctx = b.getContext();
    auto accType = LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(n, b.getF32Type()));
    Value acc = LLVM::PoisonOp::create(b, accType);
    for (int64_t i = 0; i < n; ++i)
      acc = LLVM::InsertValueOp::create(b, acc, loadState(out, i), i);
    // Every A register is written before the fence: wgmma may read none
    // that changed after it.
    SmallVector<SmallVector<Value, 4>> aRegs;
    for (int64_t kk = 0; kk < blockN / 16; ++kk) {
      SmallVector<Value, 4> &a = aRegs.emplace_back();
      for (Value reg : fragAFromAcc(p, kk))
        a.push_back(reg.getType().isInteger(32)
                        ? reg
                        : LLVM::BitcastOp::create(b, b.getI32Type(), reg));
    }
    NVVM::WgmmaFenceAlignedOp::create(b);
    for (int64_t kk = 0; kk < blockN / 16; ++kk) {
      Value bDesc = descriptor(add(values, idx(kk * 16 * segmentBytes)),
                               blockN * segmentBytes, 8 * segmentBytes);
      acc = mmaRegisterA(acc, aRegs[kk], bDesc);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
    NVVM::WgmmaWaitGroupSyncOp::create(b, 0);
    for (int64_t i = 0; i < n; ++i)
      storeState(LLVM::ExtractValueOp::create(b, acc, i), out, i);
  }

  /// Every thread's cp.async copies landed and are visible to wgmma (the
  /// async proxy), once all but the newest `pending` groups are done.
  void waitCopies(int64_t pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, pending);
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKindAttr::get(b.getContext(),
                                    NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b);
  }

  void emitBody(const Variant &variant, const ForwardArgs &args,
                const Dims &dims, Value tiles, gpu::LaunchOp launch) {
    // Dynamic shared memory, its tiles aligned to the swizzle's period.
    Value base = dynamicShared();
    Value baseAddress =
        memref::ExtractAlignedPointerAsIndexOp::create(b, base);
    Value pad = remi(sub(idx(kSwizzlePeriod), remi(baseAddress,
                                                    kSwizzlePeriod)),
                     kSwizzlePeriod);
    int64_t keysOffset = tileBytes(queryRows);
    int64_t valuesOffset = keysOffset + kvStages * tileBytes(blockN);
    Value qTile = sharedTiles(base, pad, 1, queryRows);
    Value kTiles = sharedTiles(base, add(pad, idx(keysOffset)), kvStages,
                               blockN);
    Value vTiles = sharedTiles(base, add(pad, idx(valuesOffset)), kvStages,
                               blockN);
    Value aligned = add(baseAddress, pad);
    Value group = divi(warp, 4);
    Value queries =
        add(aligned, mul(group, idx(kGroupRows * segmentBytes)));
    // The shared byte address of K or V stage `slot`.
    auto stageAt = [&](int64_t offset, Value slot) {
      return add(aligned, add(idx(offset), mul(slot, idx(tileBytes(blockN)))));
    };

    // Warp w of the block owns rows 16w..16w+15 (warpgroup w / 4's M).
    QueryBlock block = queryBlock(variant, dims, tiles, launch, queryRows);
    Value head = block.head, m0 = block.m0, rows = block.rows;
    std::array<Value, 2> rowOf = block.rowOf;
    Value scaleLog2 = toBase2(scoreScale(variant, idx(headDim)));

    // Q once, as its own group; the first tile's wait covers it.
    copySwizzled(args.q, qTile, idx(0), queryRows, m0, dims.sq, head);
    NVVM::CpAsyncCommitGroupOp::create(b);

    State state = initForwardState(args.sinks, head);
    for (const KeyPhase &p : keyPhases(variant, dims, m0, rows)) {
      // Tile i of the phase in slot i % stages; the copies of tile i +
      // stages go out once every warp is done with tile i. Each step
      // commits one group (empty past the phase), so "all but the newest
      // stages - 1 groups landed" always means "this tile landed".
      auto copyKeysAndValues = [&](Value start, Value slot) {
        auto inPhase = scf::IfOp::create(
            b, cmp(arith::CmpIPredicate::slt, start, p.hi), false);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(inPhase.thenBlock());
          copySwizzled(args.k, kTiles, slot, blockN, start, dims.sk, kvHead);
          copySwizzled(args.v, vTiles, slot, blockN, start, dims.sk, kvHead);
        }
        NVVM::CpAsyncCommitGroupOp::create(b);
      };
      for (int64_t s = 0; s < kvStages; ++s)
        copyKeysAndValues(add(p.lo, idx(s * blockN)), idx(s));
      phase(p.name, p.lo, p.hi, p.innerLo, p.innerHi, blockN,
            [&](Value n0, bool masked) {
              Value slot = remi(divi(sub(n0, p.lo), blockN), kvStages);
              waitCopies(kvStages - 1); // tile n0 landed for every warp
              SmallVector<SmallVector<Value, 4>> s =
                  scores(queries, stageAt(keysOffset, slot));
              onlineSoftmax(variant, dims, state, scaleLog2, rowOf, n0,
                            masked ? p.keyHi : Value(), s);
              accumulate(s, stageAt(valuesOffset, slot), state.out);
              gpu::BarrierOp::create(b); // every warp is done with the slot
              copyKeysAndValues(add(n0, idx(kvStages * blockN)), slot);
            });
    }
    storeForward(state, args, dims, head, rowOf);
  }
};

} // namespace

void fa::tensor_core::emitWgmmaForward(ImplicitLocOpBuilder &b, Type element,
                                       int64_t headDim, KernelShape shape,
                                       const Variant &variant,
                                       ForwardArgs args, StringRef name) {
  WgmmaEmitter(b, element, headDim, shape).emitForward(variant, args, name);
}
