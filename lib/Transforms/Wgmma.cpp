//===- Wgmma.cpp - Attention forward on wgmma (sm_90a) --------------------===//
//
// The Hopper forward, warp-specialised: a block of one producer warpgroup
// and `queryRows / 64` consumer warpgroups, each consumer owning 64 query
// rows. The producer gives its registers back (setmaxnreg) and one of its
// threads issues every copy by TMA (cp.async.bulk.tensor): Q once, then the
// K and V tiles of block-n keys into a ring of `kvStages` shared stages.
// mbarriers carry the hand-offs: "Q landed", and per stage "K landed",
// "V landed" (TMA completes their transactions) and "stage free" (every
// consumer thread arrives once its warpgroup's wgmma reads of the stage are
// done). The consumers take the registers (setmaxnreg) and, per key tile:
//   S = Q K^T   wgmma.mma_async m64n<block-n>k16, Q and K from shared memory
//               (NVVM's wgmma op; both K-major)
//   online softmax on the S registers (TensorCoreEmitter: the same code as
//               mma.sync's, since each 8-column slice of a wgmma accumulator
//               has mma.sync's C layout), while V may still be landing
//   O += P V    wgmma.mma_async m64n<D>k16 with P from registers (the RS
//               form, which NVVM has no op for: one instruction through
//               inline PTX) and V from shared memory in its stored layout
//               (MN-major, through the transpose bit)
// Producer and consumers walk the same key tiles, TileBuilder's phases:
// tile t of the block (counted over its phases) sits in stage t % kvStages,
// in that stage's round t / kvStages, whose parity the barrier waits name.
//
// Tensor maps: at each launch the host code has the runtime make one per
// operand (faTensorMapEncode, through cuTensorMapEncodeTiled) and passes it
// by value; fa-kernel-tensor-maps makes that parameter a grid-constant
// byval one, whose address TMA takes. A map the driver refuses launches
// nothing and fails the call with the driver's reason.
//
// Shared tiles use a swizzle both wgmma's descriptors and TMA name, of the
// widest segment W in {128, 64, 32} bytes that divides a row of D: a tile
// of R rows x D is D * size / W column blocks of R rows x W bytes, and
// 16-byte chunk c of row r sits at chunk c ^ ((r % 8) >> log2(128 / W)) of
// its segment (the XOR of address bits 4.. with bits 7..). TMA writes one
// box of W bytes x R rows per column block. Tiles start on the swizzles'
// 1024-byte period. So every head dim that is a multiple of 16 up to 256
// runs here: 64, 128, 192, 256 on 128-byte segments, 32 and 96 on 64-byte
// ones, 80 on 32-byte ones.
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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
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
               KernelShape shape, bool pipelined)
      : TensorCoreEmitter(b, element, headDim, shape, /*allowTf32=*/false),
        segmentBytes(swizzleSegmentBytes(headDim * elementBytes())),
        pipelined(pipelined) {}

  /// Launches the forward kernel for this head dim, named `kernelName`,
  /// once the driver made Q, K and V's tensor maps.
  void emitForward(const Variant &variant, ForwardArgs args,
                   StringRef kernelName) {
    for (Value *m : {&args.q, &args.k, &args.v, &args.o})
      *m = withUnitStride(*m);
    Dims dims = attentionDims(args.q, args.k);
    Value tiles = ceilDiv(dims.sq, queryRows);
    int64_t bytes = wgmmaForwardSharedBytes(queryRows, blockN, kvStages,
                                            headDim, elementBytes());
    HostTensorMap maps[] = {hostTensorMap(args.q, 0, queryRows),
                            hostTensorMap(args.k, 1, blockN),
                            hostTensorMap(args.v, 2, blockN)};
    Value ok = arith::AndIOp::create(
        b, maps[0].ok, arith::AndIOp::create(b, maps[1].ok, maps[2].ok));
    auto encoded = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(encoded.thenBlock());
    SmallVector<Value, 3> values;
    for (const HostTensorMap &map : maps)
      values.push_back(LLVM::LoadOp::create(b, tensorMapType(), map.slot));
    launchBlocks({tiles, dims.hq, dims.batch}, bytes, /*workgroupTypes=*/{},
                 kernelName, [&](gpu::LaunchOp launch) {
                   emitBody(variant, args, dims, tiles, values, launch);
                 });
  }

private:
  /// The swizzle's row segment W: a column block's bytes per row.
  int64_t segmentBytes;
  /// Whether tile t's softmax runs under tile t - 1's P V.
  bool pipelined;

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
  /// Consumer warpgroups: one per 64 query rows.
  int64_t groups() const { return queryRows / kGroupRows; }
  int64_t tileBytes(int64_t rows) const {
    return rows * headDim * elementBytes();
  }

  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, b.getI64Type(), v);
  }

  /// The wgmma descriptor of the matrix at shared byte `address` in the
  /// tiles' swizzle, with the given leading and stride byte offsets.
  Value descriptor(Value address, int64_t leading, int64_t stride) {
    Value start = arith::AndIOp::create(
        b, arith::ShRUIOp::create(b, toI64(address), i64(4)), i64(0x3FFF));
    int64_t fields = ((leading >> 4) << 16) | ((stride >> 4) << 32) |
                     (swizzleMode() << 62);
    return arith::OrIOp::create(b, start, i64(fields));
  }

  NVVM::WGMMATypes wgmmaType() const {
    return element.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  }

  /// Issues S = Q K^T for this warpgroup's 64 rows against the K tile at
  /// `keys` (shared byte address) as one wgmma group; the result is valid
  /// once the group is waited for.
  Value issueScores(Value queries, Value keys) {
    MLIRContext *ctx = b.getContext();
    auto accType = LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(blockN / 2, b.getF32Type()));
    Value acc = LLVM::PoisonOp::create(b, accType);
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
          wgmmaType(), NVVM::WGMMATypes::f32,
          // The first k step overwrites S, so nothing zeroes it each tile.
          kk == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::col,
          /*satfinite=*/nullptr);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
    return acc;
  }
  /// S's accumulator as blockN / 8 tiles of 16 x 8 per warp.
  SmallVector<SmallVector<Value, 4>> scoreTiles(Value acc) {
    SmallVector<SmallVector<Value, 4>> s(blockN / 8);
    for (int64_t nt = 0; nt < blockN / 8; ++nt)
      for (int64_t e = 0; e < 4; ++e)
        s[nt].push_back(LLVM::ExtractValueOp::create(b, acc, nt * 4 + e));
    return s;
  }
  /// Waits until at most `pending` of this warpgroup's wgmma groups run.
  void waitGroups(int64_t pending) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, pending);
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
    operands.push_back(i32(1)); // scale-d: accumulate
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

  /// P as the PV wgmma's A operand: blockN / 16 k steps of four 32-bit
  /// registers, each two elements, kept in a private buffer (as f32 bit
  /// patterns) from one tile's softmax to the next tile's issue.
  void storeP(ArrayRef<SmallVector<Value, 4>> p, Value buffer) {
    for (int64_t kk = 0; kk < blockN / 16; ++kk)
      for (auto [i, reg] : llvm::enumerate(fragAFromAcc(p, kk))) {
        Value bits = reg.getType().isInteger(32)
                         ? reg
                         : LLVM::BitcastOp::create(b, b.getI32Type(), reg);
        storeState(LLVM::BitcastOp::create(b, b.getF32Type(), bits), buffer,
                   kk * 4 + i);
      }
  }

  /// Issues O += P V as one wgmma group: P from `pBuffer` (storeP), V the
  /// tile at `values` (shared byte address), O this thread's state, which
  /// holds the result once the group is waited for.
  void issueValues(Value pBuffer, Value values, Value out) {
    int64_t n = headDim / 2;
    MLIRContext *ctx = b.getContext();
    auto accType = LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(n, b.getF32Type()));
    Value acc = LLVM::PoisonOp::create(b, accType);
    for (int64_t i = 0; i < n; ++i)
      acc = LLVM::InsertValueOp::create(b, acc, loadState(out, i), i);
    // Every A register is read before the fence: wgmma may read none that
    // changed after it.
    SmallVector<SmallVector<Value, 4>> aRegs(blockN / 16);
    for (int64_t kk = 0; kk < blockN / 16; ++kk)
      for (int64_t i = 0; i < 4; ++i)
        aRegs[kk].push_back(LLVM::BitcastOp::create(
            b, b.getI32Type(), loadState(pBuffer, kk * 4 + i)));
    NVVM::WgmmaFenceAlignedOp::create(b);
    for (int64_t kk = 0; kk < blockN / 16; ++kk) {
      Value bDesc = descriptor(add(values, idx(kk * 16 * segmentBytes)),
                               blockN * segmentBytes, 8 * segmentBytes);
      acc = mmaRegisterA(acc, aRegs[kk], bDesc);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b);
    for (int64_t i = 0; i < n; ++i)
      storeState(LLVM::ExtractValueOp::create(b, acc, i), out, i);
  }

  //===--------------------------------------------------------------------===//
  // Tensor maps.
  //===--------------------------------------------------------------------===//

  /// CUtensorMap as the LLVM struct fa-kernel-tensor-maps recognises.
  Type tensorMapType() {
    MLIRContext *ctx = b.getContext();
    auto type = LLVM::LLVMStructType::getIdentified(ctx, kTensorMapTypeName);
    if (!type.isInitialized())
      (void)type.setBody({LLVM::LLVMArrayType::get(b.getI64Type(),
                                                   kTensorMapBytes / 8)},
                         /*isPacked=*/false);
    return type;
  }
  LLVM::LLVMPointerType pointerType(unsigned space = 0) {
    return LLVM::LLVMPointerType::get(b.getContext(), space);
  }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, b.getI32Type(), v);
  }
  Value toI32(Value index) {
    return arith::IndexCastUIOp::create(b, b.getI32Type(), index);
  }
  Value toI64(Value index) {
    return arith::IndexCastUIOp::create(b, b.getI64Type(), index);
  }

  /// The runtime's faTensorMapEncode (CudaDriver.cpp, fa_export_runtime.c),
  /// declared once per module.
  func::FuncOp encodeFunction() {
    auto module =
        b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
    StringRef name = "faTensorMapEncode";
    if (auto fn = module.lookupSymbol<func::FuncOp>(name))
      return fn;
    SmallVector<Type> inputs(14, b.getI64Type());
    inputs[0] = pointerType();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto fn = func::FuncOp::create(
        b, name, b.getFunctionType(inputs, {b.getI32Type()}));
    fn.setPrivate();
    return fn;
  }

  /// A tensor map the host code filled (`slot`) and whether the driver
  /// made it (`ok`).
  struct HostTensorMap {
    Value slot, ok;
  };
  /// Host code: the map of [batch, head, row, column] operand `operand`
  /// (0 q, 1 k, 2 v, for the runtime's messages) read in boxes of one
  /// column block by `boxRows` rows.
  HostTensorMap hostTensorMap(Value memref, int64_t operand,
                              int64_t boxRows) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
    Value address =
        add(memref::ExtractAlignedPointerAsIndexOp::create(b, memref),
            mul(meta.getOffset(), idx(elementBytes())));
    Value slot = LLVM::AllocaOp::create(b, pointerType(), tensorMapType(),
                                        i32(1), kTensorMapAlign);
    auto bytes = [&](Value stride) {
      return toI64(mul(stride, idx(elementBytes())));
    };
    ValueRange sizes = meta.getSizes(), strides = meta.getStrides();
    SmallVector<Value> operands = {slot,
                                   toI64(address),
                                   i64(operand),
                                   i64(elementBytes()),
                                   i64(segmentBytes),
                                   i64(blockElements()),
                                   i64(boxRows),
                                   toI64(sizes[3]),
                                   toI64(sizes[2]),
                                   toI64(sizes[1]),
                                   toI64(sizes[0]),
                                   bytes(strides[2]),
                                   bytes(strides[1]),
                                   bytes(strides[0])};
    Value status =
        func::CallOp::create(b, encodeFunction(), operands).getResult(0);
    return {slot, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, status,
                                        i32(0))};
  }

  /// Kernel code: the address of a tensor map the kernel took by value.
  /// fa-kernel-tensor-maps replaces this slot by the parameter itself.
  Value kernelTensorMap(Value map) {
    Value slot = LLVM::AllocaOp::create(b, pointerType(), tensorMapType(),
                                        i32(1), kTensorMapAlign);
    LLVM::StoreOp::create(b, map, slot);
    return slot;
  }

  //===--------------------------------------------------------------------===//
  // mbarriers and TMA.
  //===--------------------------------------------------------------------===//

  /// Suspend-time hint of a barrier wait, in nanoseconds.
  static constexpr int64_t kWaitTicks = 0x989680;

  /// Shared byte address `address` as a shared-space pointer.
  Value sharedPointer(Value address) {
    return LLVM::IntToPtrOp::create(b, pointerType(3), toI64(address));
  }
  /// Waits until `barrier` completed its phase of parity `parity`.
  void waitBarrier(Value barrier, Value parity) {
    NVVM::MBarrierTryWaitParityOp::create(b, barrier, toI32(parity),
                                          i32(kWaitTicks));
  }
  /// Arrives on `barrier`, telling it to expect `bytes` more of TMA
  /// transactions.
  void expectBytes(Value barrier, int64_t bytes) {
    NVVM::MBarrierArriveExpectTxOp::create(
        b, /*res=*/Type(), barrier, i32(bytes), NVVM::MemScopeKind::CTA,
        /*relaxed=*/false, /*predicate=*/Value());
  }
  /// TMA copies of rows [row, row + rows) of (head, batch) through `map`
  /// into the tile at shared byte `address`, one box per column block,
  /// completing on `landed`. Rows past the operand's end arrive as zeros.
  void loadTileAsync(Value map, Value address, int64_t rows, Value row,
                     Value head, Value landed) {
    auto cluster = pointerType(
        static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
    for (int64_t c = 0; c < columnBlocks(); ++c) {
      // A CTA's shared window lies inside its cluster's: sm_90's form of
      // the copy names the destination there.
      Value dst = LLVM::AddrSpaceCastOp::create(
          b, cluster,
          sharedPointer(add(address, idx(c * rows * segmentBytes))));
      SmallVector<Value, 4> box = {i32(c * blockElements()), toI32(row),
                                   toI32(head), toI32(batchIdx)};
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, dst, map, box, landed, /*im2colOffsets=*/ValueRange{},
          /*multicastMask=*/Value(), /*l2CacheHint=*/Value(),
          NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, /*group=*/nullptr,
          /*predicate=*/Value());
    }
  }

  /// Where a block's shared memory holds what: byte offsets from the
  /// swizzle-aligned shared address `aligned`.
  struct SharedLayout {
    Value aligned;
    int64_t keys, values, barriers;
  };
  /// A stage's barriers: its K or V tile landed (TMA completes them), or is
  /// free again (every consumer thread arrives).
  enum class StageBarrier : int64_t {
    KeysLanded,
    ValuesLanded,
    KeysFree,
    ValuesFree
  };
  Value qLanded(const SharedLayout &at) {
    return sharedPointer(add(at.aligned, idx(at.barriers)));
  }
  Value stageBarrier(const SharedLayout &at, StageBarrier kind, Value slot) {
    int64_t first =
        at.barriers + 8 * (1 + static_cast<int64_t>(kind) * kvStages);
    return sharedPointer(add(at.aligned, add(idx(first), mul(slot, idx(8)))));
  }
  /// The shared byte address of K or V stage `slot`.
  Value stageAt(const SharedLayout &at, int64_t offset, Value slot) {
    return add(at.aligned,
               add(idx(offset), mul(slot, idx(tileBytes(blockN)))));
  }
  /// The stage of the block's tile `count`, and the parity of that stage's
  /// round the tile is in.
  std::pair<Value, Value> stageOf(Value count) {
    return {remi(count, kvStages), remi(divi(count, kvStages), 2)};
  }
  /// The tiles a key phase visits.
  Value tileCount(const KeyPhase &p) {
    return ceilDiv(max(sub(p.hi, p.lo), idx(0)), blockN);
  }

  void emitBody(const Variant &variant, const ForwardArgs &args,
                const Dims &dims, Value tiles, ArrayRef<Value> maps,
                gpu::LaunchOp launch) {
    // Dynamic shared memory, its tiles aligned to the swizzle's period.
    Value base = dynamicShared();
    Value baseAddress =
        memref::ExtractAlignedPointerAsIndexOp::create(b, base);
    Value pad = remi(sub(idx(kSwizzlePeriod), remi(baseAddress,
                                                    kSwizzlePeriod)),
                     kSwizzlePeriod);
    SharedLayout at;
    at.aligned = add(baseAddress, pad);
    at.keys = tileBytes(queryRows);
    at.values = at.keys + kvStages * tileBytes(blockN);
    at.barriers = at.values + kvStages * tileBytes(blockN);
    int64_t consumerThreads = 128 * groups();

    // One thread sets the barriers up; every thread sees them set.
    {
      auto first = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::eq, tid, idx(0)), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(first.thenBlock());
      NVVM::MBarrierInitOp::create(b, qLanded(at), i32(1), Value());
      for (int64_t s = 0; s < kvStages; ++s) {
        for (StageBarrier kind :
             {StageBarrier::KeysLanded, StageBarrier::ValuesLanded})
          NVVM::MBarrierInitOp::create(b, stageBarrier(at, kind, idx(s)),
                                       i32(1), Value());
        for (StageBarrier kind :
             {StageBarrier::KeysFree, StageBarrier::ValuesFree})
          NVVM::MBarrierInitOp::create(b, stageBarrier(at, kind, idx(s)),
                                       i32(consumerThreads), Value());
      }
    }
    NVVM::FenceMbarrierInitOp::create(b);
    gpu::BarrierOp::create(b);

    // Warpgroup 0 produces, the others consume. Past this point no barrier
    // spans the block: the producer's idle warps have left.
    auto roles =
        scf::IfOp::create(b, cmp(arith::CmpIPredicate::ult, tid, idx(128)),
                          /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    emitProducer(variant, dims, tiles, maps, at, launch);
    b.setInsertionPointToStart(roles.elseBlock());
    emitConsumer(variant, args, dims, tiles, at, launch);
  }

  /// The producer warpgroup: one thread issues Q's copy, then each K and V
  /// tile's into its stage once the consumers freed that stage's tile of
  /// the round before.
  void emitProducer(const Variant &variant, const Dims &dims, Value tiles,
                    ArrayRef<Value> maps, const SharedLayout &at,
                    gpu::LaunchOp launch) {
    NVVM::SetMaxRegisterOp::create(b, wgmmaProducerRegisters(groups()),
                                   NVVM::SetMaxRegisterAction::decrease);
    auto elected = scf::IfOp::create(
        b, cmp(arith::CmpIPredicate::eq, tid, idx(0)), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(elected.thenBlock());
    Value qMap = kernelTensorMap(maps[0]);
    Value kMap = kernelTensorMap(maps[1]);
    Value vMap = kernelTensorMap(maps[2]);
    QueryBlock block = queryBlock(variant, dims, tiles, launch, queryRows);
    expectBytes(qLanded(at), tileBytes(queryRows));
    loadTileAsync(qMap, at.aligned, queryRows, block.m0, block.head,
                  qLanded(at));
    Value done = idx(0); // tiles of the earlier phases
    for (const KeyPhase &p : keyPhases(variant, dims, block.m0, block.rows)) {
      loop(p.lo, p.hi, idx(blockN), [&](Value n0) {
        auto [slot, parity] = stageOf(add(done, divi(sub(n0, p.lo), blockN)));
        // The round before is free once the consumers said so; the first
        // round's wait (parity 1 of a fresh barrier) passes at once.
        Value before = xori(parity, idx(1));
        for (auto [free, landed, map, offset] :
             {std::tuple(StageBarrier::KeysFree, StageBarrier::KeysLanded,
                         kMap, at.keys),
              std::tuple(StageBarrier::ValuesFree, StageBarrier::ValuesLanded,
                         vMap, at.values)}) {
          waitBarrier(stageBarrier(at, free, slot), before);
          Value landedBarrier = stageBarrier(at, landed, slot);
          expectBytes(landedBarrier, tileBytes(blockN));
          loadTileAsync(map, stageAt(at, offset, slot), blockN, n0, kvHead,
                        landedBarrier);
        }
      });
      done = add(done, tileCount(p));
    }
  }

  /// A consumer warpgroup: 64 query rows over every key tile as it lands.
  /// Serial: per tile, S = Q K^T, its softmax, O += P V, each waited for.
  /// Pipelined: tile t's softmax runs while the tensor cores do tile
  /// t - 1's P V:
  ///   issue S_t = Q K_t^T; issue O += P_{t-1} V_{t-1}
  ///   wait for S_t (K_t is free); softmax of S_t into P_t
  ///   wait for P V (V_{t-1} is free); O *= alpha_t
  /// and the last tile's P V after the loop. Tile 0 has no P V before it:
  /// its P is zero (the buffer starts so) and it multiplies K_0's tile, which
  /// has landed and holds finite values, so O stays zero without a branch
  /// around the wgmma (whose accumulators must not cross one unwaited).
  /// With two or three consumers they take turns to issue (ping-pong), so
  /// one's softmax has the tensor cores' other GEMMs under it.
  void emitConsumer(const Variant &variant, const ForwardArgs &args,
                    const Dims &dims, Value tiles, const SharedLayout &at,
                    gpu::LaunchOp launch) {
    NVVM::SetMaxRegisterOp::create(b, wgmmaConsumerRegisters(groups()),
                                   NVVM::SetMaxRegisterAction::increase);
    // The consumers' threads and warps count from 0: warp w owns rows
    // 16w..16w+15 of the block (warpgroup w / 4's M).
    tid = sub(tid, idx(128));
    warp = sub(warp, idx(4));
    Value queries =
        add(at.aligned, mul(divi(warp, 4), idx(kGroupRows * segmentBytes)));
    QueryBlock block = queryBlock(variant, dims, tiles, launch, queryRows);
    Value head = block.head;
    std::array<Value, 2> rowOf = block.rowOf;
    Value scaleLog2 = toBase2(scoreScale(variant, idx(headDim)));
    State state = initForwardState(args.sinks, head);
    Value pBuffer = privateBuffer(blockN / 4);
    for (int64_t i = 0; i < blockN / 4; ++i)
      storeState(flt(0.0), pBuffer, i);
    SmallVector<KeyPhase, 2> phases =
        keyPhases(variant, dims, block.m0, block.rows);
    waitBarrier(qLanded(at), idx(0));
    // The block's tiles, over its phases.
    Value total = idx(0);
    for (const KeyPhase &p : phases)
      total = add(total, tileCount(p));
    // Ping-pong (pipelined, two or three consumers): the warpgroups take
    // turns, in order, to issue a tile's GEMMs, so one's softmax runs under
    // the others'.
    Value group = divi(warp, 4);
    bool pingPong = pipelined && groups() >= 2;
    if (pingPong) {
      // Warpgroup 0 goes first: the last hands it the first turn.
      auto first = scf::IfOp::create(
          b,
          arith::AndIOp::create(
              b, cmp(arith::CmpIPredicate::eq, group, idx(groups() - 1)),
              cmp(arith::CmpIPredicate::sgt, total, idx(0))),
          false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(first.thenBlock());
      passTurn(idx(0));
    }
    TileStep step{variant, dims,    state, scaleLog2, rowOf, at,
                  queries, pBuffer, group, total,     pingPong};
    Value done = idx(0); // tiles of the earlier phases
    for (const KeyPhase &p : phases) {
      phase(p.name, p.lo, p.hi, p.innerLo, p.innerHi, blockN,
            [&](Value n0, bool masked) {
              Value count = add(done, divi(sub(n0, p.lo), blockN));
              Value keyHi = masked ? p.keyHi : Value();
              if (pipelined)
                pipelinedTile(step, n0, keyHi, count);
              else
                serialTile(step, n0, keyHi, count);
            });
      done = add(done, tileCount(p));
    }
    // The last tile's P V.
    if (pipelined) {
      auto any = scf::IfOp::create(
          b, cmp(arith::CmpIPredicate::sgt, total, idx(0)), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(any.thenBlock());
      auto [slot, parity] = stageOf(sub(total, idx(1)));
      waitBarrier(stageBarrier(at, StageBarrier::ValuesLanded, slot), parity);
      issueValues(pBuffer, stageAt(at, at.values, slot), state.out);
      waitGroups(0);
    }
    storeForward(state, args, dims, head, rowOf);
  }

  /// What a consumer's steps over its block's tiles share.
  struct TileStep {
    const Variant &variant;
    const Dims &dims;
    const State &state;
    Value scaleLog2;
    std::array<Value, 2> rowOf;
    const SharedLayout &at;
    Value queries, pBuffer;
    Value group, total; // this consumer warpgroup; the block's tiles
    bool pingPong;
  };
  /// The serial schedule's step on the block's tile `count`, at key n0
  /// (masked below `keyHi` when set).
  void serialTile(const TileStep &step, Value n0, Value keyHi, Value count) {
    const SharedLayout &at = step.at;
    auto [slot, parity] = stageOf(count);
    waitBarrier(stageBarrier(at, StageBarrier::KeysLanded, slot), parity);
    Value scoreAcc = issueScores(step.queries, stageAt(at, at.keys, slot));
    waitGroups(0);
    arriveOn(stageBarrier(at, StageBarrier::KeysFree, slot));
    SmallVector<SmallVector<Value, 4>> s = scoreTiles(scoreAcc);
    onlineSoftmax(step.variant, step.dims, step.state, step.scaleLog2,
                  step.rowOf, n0, keyHi, s);
    storeP(s, step.pBuffer);
    waitBarrier(stageBarrier(at, StageBarrier::ValuesLanded, slot), parity);
    issueValues(step.pBuffer, stageAt(at, at.values, slot), step.state.out);
    waitGroups(0);
    arriveOn(stageBarrier(at, StageBarrier::ValuesFree, slot));
  }
  /// The pipelined schedule's step on the block's tile `count` (t), at key
  /// n0: S_t is issued, then tile t - 1's P V, and S_t's softmax runs
  /// under that P V.
  void pipelinedTile(const TileStep &step, Value n0, Value keyHi,
                     Value count) {
    const SharedLayout &at = step.at;
    auto [slot, parity] = stageOf(count);
    Value later = cmp(arith::CmpIPredicate::ne, count, idx(0));
    // Tile t - 1's stage and parity (t + 2 stages - 1 keeps the parity and
    // never underflows).
    auto [prevSlot, prevParity] = stageOf(add(count, idx(2 * kvStages - 1)));
    Value keys = stageAt(at, at.keys, slot);
    waitBarrier(stageBarrier(at, StageBarrier::KeysLanded, slot), parity);
    if (step.pingPong)
      waitTurn(step.group);
    Value scoreAcc = issueScores(step.queries, keys);
    // Tile 0 has no V to wait for: the barrier of the stage it names may
    // already be a round ahead.
    {
      auto wait = scf::IfOp::create(b, later, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(wait.thenBlock());
      waitBarrier(stageBarrier(at, StageBarrier::ValuesLanded, prevSlot),
                  prevParity);
    }
    issueValues(step.pBuffer,
                select(later, stageAt(at, at.values, prevSlot), keys),
                step.state.out);
    if (step.pingPong) {
      // Every turn taken is handed over once: the last warpgroup's last one
      // has no taker (warpgroup 0 is done).
      Value lastGroup = idx(groups() - 1);
      Value handsOver = arith::OrIOp::create(
          b, cmp(arith::CmpIPredicate::ne, step.group, lastGroup),
          cmp(arith::CmpIPredicate::ult, add(count, idx(1)), step.total));
      auto hand = scf::IfOp::create(b, handsOver, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(hand.thenBlock());
      // The next warpgroup's turn, the last's going round to 0 (a select,
      // not a remainder: no division on the loop).
      passTurn(select(cmp(arith::CmpIPredicate::eq, step.group, lastGroup),
                      idx(0), add(step.group, idx(1))));
    }
    waitGroups(1);
    arriveOn(stageBarrier(at, StageBarrier::KeysFree, slot));
    SmallVector<SmallVector<Value, 4>> s = scoreTiles(scoreAcc);
    std::array<Value, 2> alpha;
    onlineSoftmax(step.variant, step.dims, step.state, step.scaleLog2,
                  step.rowOf, n0, keyHi, s, &alpha);
    storeP(s, step.pBuffer);
    waitGroups(0);
    {
      auto release = scf::IfOp::create(b, later, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(release.thenBlock());
      arriveOn(stageBarrier(at, StageBarrier::ValuesFree, prevSlot));
    }
    for (int64_t r = 0; r < 2; ++r)
      rescaleRow(step.state, r, alpha[r]);
  }
  /// Consumer warpgroup g's turn barrier: named barrier 1 + g (0 is the
  /// block's).
  Value turnBarrier(Value group) { return toI32(add(group, idx(1))); }
  /// Waits for this warpgroup's turn to issue its GEMMs.
  void waitTurn(Value group) {
    NVVM::BarrierOp::create(b, Type(), turnBarrier(group), i32(256),
                            /*reductionOp=*/nullptr,
                            /*reductionPredicate=*/Value());
  }
  /// Gives consumer warpgroup `to` its turn: arrives on its turn barrier,
  /// which its 128 threads and these 128 complete.
  void passTurn(Value to) {
    NVVM::BarrierArriveOp::create(b, turnBarrier(to), i32(256));
  }
  /// Every consumer thread arrives on `barrier` once.
  void arriveOn(Value barrier) {
    NVVM::MBarrierArriveOp::create(b, /*res=*/Type(), barrier,
                                   /*count=*/Value());
  }
};

} // namespace

void fa::tensor_core::emitWgmmaForward(ImplicitLocOpBuilder &b, Type element,
                                       int64_t headDim, KernelShape shape,
                                       bool pipelined, const Variant &variant,
                                       ForwardArgs args, StringRef name) {
  WgmmaEmitter(b, element, headDim, shape, pipelined)
      .emitForward(variant, args, name);
}
