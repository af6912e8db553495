//===- GpuTensorCore.cpp - Attention on the tensor cores ------------------===//
//
// Gives each f16/bf16/f32 attention entry of fa-tile tensor-core kernels
// for the head dims and layouts they support, dispatched at run time in
// front of the scalar tile loops, which stay as the path for every other
// shape: the forward, and the backward's dK/dV and dQ loops. The MMA
// generation is chosen once, by the `generation` option: mma.sync
// (MmaSync.cpp, sm_80 and later) or wgmma (Wgmma.cpp, sm_90a; forwards of
// 16-bit types). The helpers both share are TensorCoreEmitter.h. The
// variant's mask comes from TileBuilder's key and query phases, exactly as
// in fa-tile.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreEmitter.h"

#include "fa/Dialect/FA/FAOps.h"
#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace fa {
#define GEN_PASS_DEF_FAGPUTENSORCORE
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;
using namespace fa;
using tensor_core::ForwardArgs;
using tensor_core::GradArgs;
using tensor_core::KernelShape;

namespace {

struct GpuTensorCore : fa::impl::FAGpuTensorCoreBase<GpuTensorCore> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    auto reject = [&](const Twine &what, int64_t got) {
      return emitError(UnknownLoc::get(context))
             << "fa-gpu-tensor-core: " << what << ", got " << got;
    };
    auto rejectName = [&](const Twine &what, StringRef got) {
      return emitError(UnknownLoc::get(context))
             << "fa-gpu-tensor-core: " << what << ", got '" << got << "'";
    };
    if (blockN < 16 || blockN % 16 != 0)
      return reject("block-n must be a positive multiple of 16", blockN);
    if (sharedBytes < tensor_core::kStaticSharedBytes)
      return reject("shared-bytes must be at least " +
                        Twine(tensor_core::kStaticSharedBytes) +
                        " (what every block has)",
                    sharedBytes);
    if (kvStages != 1 && kvStages != 2)
      return reject("kv-stages must be 1 or 2", kvStages);
    if (generation != "mma-sync" && generation != "wgmma")
      return rejectName("generation must be mma-sync or wgmma", generation);
    if (wgmmaBlockN != 0 &&
        (wgmmaBlockN < 16 || wgmmaBlockN > 256 || wgmmaBlockN % 16 != 0))
      return reject("wgmma-block-n must be 0 (by head dim) or a multiple of "
                    "16 up to 256",
                    wgmmaBlockN);
    if (wgmmaStages < 0 || wgmmaStages > 3)
      return reject("wgmma-stages must be 0 (two where they fit) or 1 to 3",
                    wgmmaStages);
    if (wgmmaSchedule != "auto" && wgmmaSchedule != "serial" &&
        wgmmaSchedule != "pipelined")
      return rejectName("wgmma-schedule must be auto, serial or pipelined",
                        wgmmaSchedule);
    if (wgmmaGroups < 0 || wgmmaGroups > tensor_core::kMaxWgmmaGroups)
      return reject("wgmma-groups must be 0 (by head dim) or 1 to 3",
                    wgmmaGroups);
    if (gridSection < 0)
      return reject("grid-section must be 0 (the default) or more",
                    gridSection);
    if (forwardWarps != 4 && forwardWarps != 8)
      return reject("forward-warps must be 4 or 8", forwardWarps);
    return success();
  }

  void runOnOperation() override {
    for (func::FuncOp fn : getOperation().getOps<func::FuncOp>()) {
      auto entry = fn->getAttrOfType<StringAttr>("fa.entry");
      std::optional<Variant> variant = Variant::fromEntry(fn);
      if (!entry || !variant)
        continue;
      Type element =
          cast<MemRefType>(fn.getArgumentTypes()[0]).getElementType();
      if (!element.isF16() && !element.isBF16() && !element.isF32())
        continue;
      if (entry.getValue() == "forward")
        specialiseForward(fn, *variant, element);
      else
        specialiseBackward(fn, *variant, element);
    }
    settleLayoutFallbacks();
  }

  /// Marks, without scalar-fallback, a dispatch's scf.if whose condition
  /// comes down to the operands' layout (the spec fixes D and a kernel
  /// takes it): its else branch runs only for layouts the kernels refuse.
  static constexpr StringLiteral kLayoutFallbackAttr = "fa.layout_fallback";

  /// The head dim `d` (a memref.dim) has where the spec fixes it.
  static std::optional<int64_t> staticHeadDim(Value d) {
    auto dim = d.getDefiningOp<memref::DimOp>();
    if (!dim)
      return std::nullopt;
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return std::nullopt;
    int64_t size =
        cast<MemRefType>(dim.getSource().getType()).getDimSize(*index);
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    return size;
  }

  /// The else branch of each marked dispatch (marked only without
  /// scalar-fallback) records an error instead of holding the scalar
  /// loops: a JIT runs those layouts on a program compiled with them
  /// (Program::run), so that every other call's compile skips them. Inner
  /// dispatches come first (a post-order walk), before an outer branch
  /// takes them along.
  void settleLayoutFallbacks() {
    if (scalarFallback)
      return;
    SmallVector<scf::IfOp> marked;
    getOperation().walk([&](scf::IfOp ifOp) {
      if (ifOp->removeAttr(kLayoutFallbackAttr))
        marked.push_back(ifOp);
    });
    for (scf::IfOp ifOp : marked) {
      Block *fallback = ifOp.elseBlock();
      // Last op first: its operands' definers outlive their uses.
      while (Operation *op = fallback->getTerminator()->getPrevNode())
        op->erase();
      OpBuilder b = OpBuilder::atBlockTerminator(fallback);
      func::CallOp::create(
          b, ifOp.getLoc(),
          tensor_core::runtimeFunction(b, "faScalarFallbackMissing",
                                       b.getFunctionType({}, {})),
          ValueRange());
    }
  }

  /// Emits one kernel for a head dim and shape where `b` stands.
  using EmitKernel = llvm::function_ref<void(
      ImplicitLocOpBuilder &b, int64_t headDim, const KernelShape &shape,
      StringRef kernelName)>;
  /// The tiles and warps of a kernel for a head dim and element size, or
  /// none when its tiles cannot fit the pass's shared-bytes.
  using PlanKernel = llvm::function_ref<std::optional<KernelShape>(
      int64_t headDim, int64_t elementBytes)>;

  /// Whether `d` is, at run time, one of `headDims` for which `holds` does
  /// (false where none does).
  static Value headDimAmong(ImplicitLocOpBuilder &b, Value d,
                            ArrayRef<int64_t> headDims,
                            llvm::function_ref<bool(int64_t)> holds) {
    Value among = arith::ConstantIntOp::create(b, b.getI1Type(), 0);
    for (int64_t headDim : headDims)
      if (holds(headDim))
        among = arith::OrIOp::create(
            b, among,
            arith::CmpIOp::create(b, arith::CmpIPredicate::eq, d,
                                  arith::ConstantIndexOp::create(b, headDim)));
    return among;
  }

  /// An scf.if on `condition` (with an else branch where `withElse`),
  /// marked kLayoutFallbackAttr where `layoutAlone` (the condition comes
  /// down to the operands' layout) and there is no scalar fallback.
  scf::IfOp layoutBranch(ImplicitLocOpBuilder &b, Value condition,
                         bool withElse, bool layoutAlone) {
    auto ifOp = scf::IfOp::create(b, condition, withElse);
    if (layoutAlone && !scalarFallback)
      ifOp->setAttr(kLayoutFallbackAttr, b.getUnitAttr());
    return ifOp;
  }

  /// Replaces the ops [first, last) of a block with `if (layoutOk and
  /// D == d0) <kernel d0> else if (layoutOk and D == d1) <kernel d1> ...
  /// else <the ops>` over `headDims`, built at `first`. Kernels are named
  /// <prefix>_d<D>; head dims `plan` gives no shape keep the ops.
  /// Returns the block that ends up holding [first, last) (the chain's
  /// fallback), or null where no head dim fits and nothing moved. Unless
  /// `layoutOk` is more than the layout (`onlyLayout` false), a fallback
  /// beside the spec's fixed D is marked (kLayoutFallbackAttr) without
  /// scalar-fallback.
  Block *dispatch(Operation *first, Operation *last, Value layoutOk, Value d,
                  Type element, StringRef prefix, ArrayRef<int64_t> headDims,
                  PlanKernel plan, EmitKernel emit, bool onlyLayout = true) {
    ImplicitLocOpBuilder b(first->getLoc(), first);
    Block *block = first->getBlock();
    Block *fallback = nullptr;
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    // Where the spec fixes D (the JIT's specs do), only its kernel is
    // built: the others' branches would fold away, after costing their
    // emission and canonicalization.
    std::optional<int64_t> staticD = staticHeadDim(d);
    for (int64_t headDim : headDims) {
      if (staticD && headDim != *staticD)
        continue;
      std::optional<KernelShape> shape = plan(headDim, bytes);
      if (!shape)
        continue;
      Value here = arith::AndIOp::create(
          b, layoutOk,
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, d,
                                arith::ConstantIndexOp::create(b, headDim)));
      scf::IfOp ifOp = layoutBranch(b, here, /*withElse=*/true,
                                    /*layoutAlone=*/staticD && onlyLayout);
      shape->branchedTiles = branchedTiles;
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        emit(b, headDim, *shape, (prefix + "_d" + Twine(headDim)).str());
      }
      fallback = ifOp.elseBlock();
      b.setInsertionPointToStart(fallback);
    }
    if (!fallback)
      return nullptr; // no head dim fits: the ops stay as they are
    fallback->getOperations().splice(fallback->getTerminator()->getIterator(),
                                     block->getOperations(),
                                     first->getIterator(), last->getIterator());
    return fallback;
  }

  /// Whether every one of `operands` suits the kernels, computed at `at`.
  Value layoutCheck(Operation *at, Type element, ArrayRef<Value> operands) {
    ImplicitLocOpBuilder b(at->getLoc(), at);
    tensor_core::TensorCoreEmitter checks(b, element, /*headDim=*/0,
                                          tensor_core::KernelShape{blockN},
                                          allowTf32);
    Value ok = checks.isVectorFriendly(operands[0]);
    for (Value operand : operands.drop_front())
      ok = arith::AndIOp::create(b, ok, checks.isVectorFriendly(operand));
    return ok;
  }

  /// A K/V tile of up to block-n keys, fewer where f32 tiles (or `stages`
  /// of them) would not fit.
  std::optional<KernelShape> keyTileShape(int64_t headDim, int64_t bytes,
                                          int64_t warps, int64_t stages = 1,
                                          int64_t otherBytes = 0) {
    int64_t rows = tensor_core::fittingTileRows(
        blockN, headDim, bytes, (sharedBytes - otherBytes) / stages);
    if (!rows)
      return std::nullopt;
    return KernelShape{rows, warps, /*queryRows=*/0, stages};
  }

  /// The mma.sync forward's shape: past kMmaSyncQueryRegisterHeadDim a
  /// shared Q tile beside the K/V tiles where both fit, else (f32 in the
  /// static 48 KiB) Q's fragments in registers, spilled but on the tensor
  /// cores. A paged cache's table entries take their ring's bytes first.
  std::optional<KernelShape> mmaSyncForwardShape(int64_t headDim, int64_t bytes,
                                                 bool paged) {
    int64_t ringBytes = pageRingBytes(paged, kvStages, blockN);
    int64_t queryBytes =
        tensor_core::queryTileBytes(forwardWarps, headDim, bytes);
    if (queryBytes > 0)
      if (std::optional<KernelShape> shape = keyTileShape(
              headDim, bytes, forwardWarps, kvStages, queryBytes + ringBytes)) {
        shape->queryRows = 16 * forwardWarps;
        return shape;
      }
    return keyTileShape(headDim, bytes, forwardWarps, kvStages, ringBytes);
  }

  /// The shared bytes of a paged cache's ring of block-table entries, which
  /// the mma.sync forward keeps where its K/V tiles of `keys` rows are
  /// pipelined (two stages; MmaSync.cpp, forwardBuffers).
  int64_t pageRingBytes(bool paged, int64_t stages, int64_t keys) const {
    return paged && stages == 2 ? tensor_core::pageRingBytes(keys) : 0;
  }

  /// The split-KV forward's keys per tile: the pass's, but never fewer
  /// than kSplitKvMinBlockN (a short window's 32-key config is the
  /// windowed forward's, not a decode step's).
  int64_t splitKvBlockN() const {
    return std::max<int64_t>(blockN, tensor_core::kSplitKvMinBlockN);
  }

  /// The split-KV forward's shape: the mma.sync forward's with two K/V
  /// stages in up to kSplitKvSharedBytes, else the forward's own.
  std::optional<KernelShape> splitKvShape(int64_t headDim, int64_t bytes,
                                          bool paged) {
    int64_t queryBytes =
        tensor_core::queryTileBytes(forwardWarps, headDim, bytes);
    int64_t keys = splitKvBlockN();
    int64_t ringBytes = pageRingBytes(paged, /*stages=*/2, keys);
    int64_t budget =
        std::max<int64_t>(sharedBytes, tensor_core::kSplitKvSharedBytes);
    if (int64_t rows = tensor_core::fittingTileRows(
            keys, headDim, bytes, (budget - queryBytes - ringBytes) / 2))
      return KernelShape{rows, forwardWarps, queryBytes ? 16 * forwardWarps : 0,
                         /*kvStages=*/2};
    return mmaSyncForwardShape(headDim, bytes, paged);
  }

  /// A forward's `shape` with the pass's grid section.
  KernelShape withGridSection(KernelShape shape) const {
    if (gridSection > 0)
      shape.gridSection = gridSection;
    return shape;
  }

  /// Whether forwards of `element` run on wgmma: the pass's generation
  /// says so, and the type is 16-bit (f32 stays on mma.sync's tf32).
  bool useWgmma(Type element) const {
    return generation == "wgmma" && !element.isF32();
  }

  /// Whether the wgmma forward of `headDim` with `groups` consumers runs
  /// the pipelined schedule: as asked, or by default
  /// (tensor_core::wgmmaForwardSerialByDefault).
  bool wgmmaPipelines(const Variant &variant, int64_t headDim,
                      int64_t groups) {
    if (wgmmaSchedule != "auto")
      return wgmmaSchedule == "pipelined";
    return !tensor_core::wgmmaForwardSerialByDefault(headDim, groups,
                                                     variant.causal);
  }

  /// The wgmma forward's shape: a producer and `wgmma-groups` consumer
  /// warpgroups, `wgmma-stages` (0: two) K/V stages of block-n keys (fewer
  /// keys, then one stage, where they and Q's tile would not fit sm_90's
  /// shared memory). The forward of this
  /// generation always runs on sm_90a, so its budget is that chip's.
  std::optional<KernelShape> wgmmaForwardShape(const Variant &variant,
                                               int64_t headDim,
                                               int64_t bytes) {
    int64_t groups = tensor_core::wgmmaGroupsFor(
        headDim, wgmmaGroups, variant.window, variant.sinkTokens);
    int64_t queryRows = 64 * groups;
    int64_t keys = wgmmaBlockN > 0 ? int64_t(wgmmaBlockN)
                                   : tensor_core::wgmmaDefaultBlockN(
                                         headDim, groups,
                                         !wgmmaPipelines(variant, headDim,
                                                         groups));
    SmallVector<int64_t, 2> stageCounts = {2, 1};
    if (wgmmaStages > 0)
      stageCounts = {wgmmaStages};
    for (int64_t stages : stageCounts)
      for (int64_t rows = keys; rows >= 16;
           rows = tensor_core::smallerTileRows(rows))
        if (tensor_core::wgmmaForwardSharedBytes(queryRows, rows, stages,
                                                 headDim, bytes) <=
            tensor_core::kHopperSharedBytes) {
          KernelShape shape{rows, 4 * (groups + 1), queryRows, stages};
          // A persistent block takes a second copy of Q where it fits
          // beside the same stages and K/V tiles (at the head dims where
          // that measured faster): its producer then copies the next
          // item's Q while the consumers finish this one, not after.
          if (wgmmaPersistent &&
              tensor_core::wgmmaTwoQCopies(headDim) &&
              tensor_core::wgmmaForwardSharedBytes(queryRows, rows, stages,
                                                   headDim, bytes, 2) <=
                  tensor_core::kHopperSharedBytes)
            shape.fixedSlots = 2;
          return shape;
        }
    return std::nullopt;
  }


  /// The blocks the split-KV forward splits each query block's keys
  /// into, computed at `b` as tensor_core::keySplitsOf: 1 (no split) where
  /// its query blocks fill the GPU's SMs (the runtime's faMultiprocessorCount),
  /// else as many as one wave of the blocks the SMs hold at head dim `d`
  /// (splitKvBlocksPerSmOf), with at least kMinSplitKeyTiles key tiles each
  /// (of the pass's block-n keys, counted over the keys the variant lets a
  /// row see).
  Value keySplits(ImplicitLocOpBuilder &b, const Variant &variant,
                  const TileBuilder::Dims &dims, Value d, bool paged,
                  bool appends, bool dynamicHeads) {
    TileBuilder t(b, b.getF32Type(), splitKvBlockN());
    Value sms = tensor_core::multiprocessorCount(b);
    // The split kernel's blocks hold a kv head's group of query heads
    // (MmaSync.cpp, packedGroupRows), 16 rows per warp.
    return tensor_core::forwardKeySplitsOf(
        t.indexOps(), dims.batch, dims.sq, dims.group, dims.hkv, dims.sk,
        variant.window, variant.sinkTokens, 16 * forwardWarps,
        splitKvBlockN(), sms,
        tensor_core::splitKvBlocksPerSmOf(
            t.indexOps(), d, paged, appends,
            tensor_core::splitKvMaskedDynamicHeads(
                variant.window, variant.sinkTokens, dynamicHeads)));
  }

  /// Decode-like shapes (query blocks fewer than the SMs, many keys each;
  /// or a GQA group's few positions, which a block packs) take the
  /// split-KV forward on mma.sync, ahead of every other kernel: `if
  /// (layoutOk and takesSplitKv and D == d) <split-KV d> ... else <the
  /// ops>`. Returns the block that holds the ops then, or null.
  Block *splitKvDispatch(Operation *first, Operation *last, Value layoutOk,
                         Value d, Type element, const Variant &variant,
                         const ForwardArgs &args, StringRef prefix) {
    ImplicitLocOpBuilder b(first->getLoc(), first);
    TileBuilder t(b, b.getF32Type(), blockN);
    TileBuilder::Dims dims =
        t.pagedDims(t.attentionDims(args.q, args.k), args.blockTable, args.k);
    auto headsDynamic = [](Value memref) {
      return cast<MemRefType>(memref.getType()).isDynamicDim(1);
    };
    Value splits =
        keySplits(b, variant, dims, d, bool(args.blockTable), bool(args.kNew),
                  headsDynamic(args.q) || headsDynamic(args.k));
    // (A block's 16 * forwardWarps rows are at least kPackedGroupRows.)
    Value split = arith::AndIOp::create(
        b, layoutOk,
        tensor_core::takesSplitKvOf(t.indexOps(), splits, dims.sq, dims.group,
                                    d));
    return dispatch(
        first, last, split, d, element, (prefix + "_split_kv").str(),
        tensor_core::kHeadDims,
        [&](int64_t headDim, int64_t bytes) {
          return splitKvShape(headDim, bytes, bool(args.blockTable));
        },
        [&](ImplicitLocOpBuilder &b, int64_t headDim, const KernelShape &shape,
            StringRef name) {
          TileBuilder t(b, b.getF32Type(), blockN);
          Value heads = t.mul(splits, dims.hq);
          Value partialO = memref::AllocOp::create(
              b,
              MemRefType::get(SmallVector<int64_t>(4, ShapedType::kDynamic),
                              b.getF32Type()),
              ValueRange{dims.batch, heads, dims.sq, t.idx(headDim)});
          Value partialLse = memref::AllocOp::create(
              b,
              MemRefType::get(SmallVector<int64_t>(3, ShapedType::kDynamic),
                              b.getF32Type()),
              ValueRange{dims.batch, heads, dims.sq});
          tensor_core::createMmaSyncKernels(b, element, headDim, shape,
                                            allowTf32)
              ->emitSplitForward(variant, args, {splits, partialO, partialLse},
                                 name, (name + "_merge").str());
          memref::DeallocOp::create(b, partialO);
          memref::DeallocOp::create(b, partialLse);
        },
        /*onlyLayout=*/false);
  }

  /// The whole forward body becomes the fallback of the kernels.
  void specialiseForward(func::FuncOp fn, const Variant &variant,
                         Type element) {
    Block &body = fn.front();
    ValueRange a = body.getArguments();
    // q, k, v, [sinks], [key_lengths], [block_table], [query_starts,
    // key_starts], [new keys, new values], o, lse: the optional ones told
    // apart by type (float logits, float 4-D new rows, an i32 table) and by
    // how many 1-D i32 ones there are (the verifier lets key_lengths and
    // the starts come only alone).
    ForwardArgs args;
    args.q = a[0];
    args.k = a[1];
    args.v = a[2];
    args.o = a[a.size() - 2];
    args.lse = a.back();
    SmallVector<Value, 2> counts;
    for (Value optional : a.drop_front(3).drop_back(2)) {
      auto type = cast<MemRefType>(optional.getType());
      if (isa<FloatType>(type.getElementType()) && type.getRank() == 1)
        args.sinks = optional;
      else if (isa<FloatType>(type.getElementType()))
        (args.kNew ? args.vNew : args.kNew) = optional;
      else if (type.getRank() == 1)
        counts.push_back(optional);
      else
        args.blockTable = optional;
    }
    if (counts.size() == 2) {
      args.queryStarts = counts[0];
      args.keyStarts = counts[1];
    } else if (counts.size() == 1) {
      args.keyLengths = counts[0];
    }
    Operation *first = &body.front();
    SmallVector<Value, 6> rowOperands = {args.q, args.k, args.v, args.o};
    if (args.kNew)
      rowOperands.append({args.kNew, args.vNew});
    Value layoutOk = layoutCheck(first, element, rowOperands);
    ImplicitLocOpBuilder b(fn.getLoc(), first);
    Value d = memref::DimOp::create(b, args.q, 3);
    Operation *last = body.getTerminator();
    // Packed sequences have no split-KV kernels: their blocks are per
    // sequence, their keys a prefill's.
    if (splitKv && !args.queryStarts)
      if (Block *rest = splitKvDispatch(first, last, layoutOk, d, element,
                                        variant, args, fn.getSymName())) {
        first = &rest->front();
        last = rest->getTerminator();
      }
    // The wgmma forward's TMA reads a batch entry's last key tile whole,
    // past its key_lengths into whatever the cache holds there (NaN in an
    // unwritten slot reaches o through P = 0): those entries take mma.sync,
    // whose copies stop at the entry's last key. (Packed sequences take
    // it: past a sequence's last key its tiles read the next sequence's
    // rows, which its mask gives P = 0.)
    if (useWgmma(element) && !args.keyLengths) {
      // Under a short window mma.sync's 64-row blocks, several to an SM,
      // beat wgmma's blocks of 128 rows where both run (bench/NOTES.md):
      // those head dims go on to the mma.sync chain below.
      SmallVector<int64_t> headDims;
      for (int64_t headDim : tensor_core::kWgmmaHeadDims)
        if (tensor_core::wgmmaForwardRuns(headDim, variant.window))
          headDims.push_back(headDim);
      Block *rest = dispatch(
          first, last, layoutOk, d, element, (fn.getSymName() + "_wgmma").str(),
          headDims,
          [&](int64_t headDim, int64_t bytes) {
            return wgmmaForwardShape(variant, headDim, bytes);
          },
          [&](ImplicitLocOpBuilder &b, int64_t headDim,
              const KernelShape &shape, StringRef name) {
            tensor_core::emitWgmmaForward(
                b, element, headDim, withGridSection(shape),
                wgmmaPipelines(variant, headDim, shape.queryRows / 64),
                wgmmaPersistent, variant, args, name);
          });
      // Where the wgmma kernel took every head dim, or the spec's fixed
      // one, an mma.sync kernel in its fallback would never run.
      std::optional<int64_t> fixedD = staticHeadDim(d);
      if (headDims.size() == std::size(tensor_core::kWgmmaHeadDims) ||
          (rest && fixedD && llvm::is_contained(headDims, *fixedD)))
        return;
      if (rest) {
        first = &rest->front();
        last = rest->getTerminator();
      }
    }
    dispatch(
        first, last, layoutOk, d, element, (fn.getSymName() + "_mma").str(),
        tensor_core::kHeadDims,
        [&](int64_t headDim, int64_t bytes) {
          return mmaSyncForwardShape(headDim, bytes, bool(args.blockTable));
        },
        [&](ImplicitLocOpBuilder &b, int64_t headDim, const KernelShape &shape,
            StringRef name) {
          tensor_core::createMmaSyncKernels(b, element, headDim,
                                            withGridSection(shape), allowTf32)
              ->emitForward(variant, args, name);
        });
  }

  /// The f32 dQ accumulator of the wgmma dK/dV kernels, which add dQ into
  /// it by TMA reduce-adds.
  struct DqAccumulator {
    Value buffer;
    /// Whether a wgmma dK/dV kernel takes it (else it has no elements).
    Value used;
    /// The first op after dQ's loop that is the accumulator's, where dQ's
    /// dispatch chain must end.
    Operation *copy = nullptr;
  };

  /// fa-tile's D loop becomes the fallback of a kernel for operands whose
  /// rows are whole 16-byte chunks; its dsinks loop gives way to a kernel,
  /// which takes any shape. Where `rowDotInDq` holds at run time, the wgmma
  /// dQ kernel computes D (and dsinks' partials) instead of the D kernel.
  /// Given an f32 dQ accumulator (`accum`), the D kernel zeroes it, and the
  /// zero kernel does where the D kernel does not run. Returns dsinks'
  /// terms (none without learnable sinks), whose partials are summed into
  /// dsinks and freed at the end of the entry.
  tensor_core::SinkTerms
  specialiseRowReductions(Value o, Value sinks, Value dsinks, Type element,
                          const GradArgs &args, Operation *rowDotLoop,
                          Operation *sinkGrad, Value rowDotInDq,
                          const DqAccumulator *accum, StringRef prefix) {
    ImplicitLocOpBuilder b(rowDotLoop->getLoc(), rowDotLoop);
    int64_t chunk = 16 / (element.getIntOrFloatBitWidth() / 8);
    Value d = memref::DimOp::create(b, args.dO, 3);
    Value wholeChunks = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, d, arith::ConstantIndexOp::create(b, chunk)),
        arith::ConstantIndexOp::create(b, 0));
    Value ok = arith::AndIOp::create(
        b, layoutCheck(rowDotLoop, element, {o, args.dO}), wholeChunks);
    // With learnable sinks, the D kernel also sums dsinks' terms per block
    // into `partials`, and a kernel sums those per head.
    tensor_core::SinkTerms sinkTerms;
    if (sinkGrad) {
      Value lseDim[3];
      for (int64_t i = 0; i < 3; ++i)
        lseDim[i] = memref::DimOp::create(b, args.lse, i);
      sinkTerms = {
          args.lse, sinks,
          memref::AllocOp::create(
              b,
              MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                              b.getF32Type()),
              ValueRange{lseDim[1], tensor_core::sinkPartialsPerHead(
                                        b, lseDim[0], lseDim[2])})};
    }
    // The D kernel runs where the dQ kernel does not compute D (which
    // implies `ok`: o and dO suit its tiles).
    TileBuilder t(b, b.getF32Type(), blockN);
    Value rowDotKernel =
        rowDotInDq ? arith::AndIOp::create(b, ok, t.notOf(rowDotInDq)) : ok;
    // Where the spec fixes D in whole chunks, `ok` is the layout's alone.
    std::optional<int64_t> fixedD = staticHeadDim(d);
    bool layoutAlone = fixedD && *fixedD % chunk == 0;
    // Without scalar fallback there, an `ok` that fails stops the call
    // (kLayoutFallbackAttr), and the zero kernel would never run.
    if (accum && (scalarFallback || !layoutAlone)) {
      Value zeroKernel =
          arith::AndIOp::create(b, accum->used, t.notOf(rowDotKernel));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(
          scf::IfOp::create(b, zeroKernel, /*withElseRegion=*/false)
              .thenBlock());
      tensor_core::emitZeroKernel(b, accum->buffer,
                                  (prefix + "_wgmma_dq_zero").str());
    }
    scf::IfOp ifOp = layoutBranch(b, ok, /*withElse=*/true, layoutAlone);
    std::string sinkKernel = prefix.str() + "_dsinks";
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      if (rowDotInDq)
        b.setInsertionPointToStart(
            scf::IfOp::create(b, rowDotKernel, /*withElseRegion=*/false)
                .thenBlock());
      tensor_core::emitRowDotKernel(b, element, o, args.dO, args.rowDot,
                                    sinkGrad ? &sinkTerms : nullptr,
                                    accum ? accum->buffer : Value(),
                                    (prefix + "_row_dot").str());
    }
    rowDotLoop->moveBefore(ifOp.elseBlock()->getTerminator());
    if (!sinkGrad)
      return sinkTerms;
    // Where D came from the scalar loop, dsinks walks its rows.
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    tensor_core::emitSinkGradientKernel(b, args.lse, args.rowDot, sinks, dsinks,
                                        sinkKernel + "_rows");
    // Else the partials are summed once the last kernel that writes them
    // (the D kernel's, or dQ's after the dK/dV kernel) is queued.
    b.setInsertionPoint(ifOp->getBlock()->getTerminator());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(
          scf::IfOp::create(b, ok, /*withElseRegion=*/false).thenBlock());
      tensor_core::emitSinkPartialsSumKernel(b, sinkTerms.partials, dsinks,
                                             sinkKernel);
    }
    memref::DeallocOp::create(b, sinkTerms.partials);
    sinkGrad->erase();
    return sinkTerms;
  }

  /// Allocates the accumulator before `first` (empty where no wgmma dK/dV
  /// kernel runs: the head dim is not one of `plan`'s, or the layout does
  /// not suit), and before `last` (past dQ's loop) scales it into dq and
  /// frees it: one kernel, whatever the head dim. The D kernel zeroes it
  /// (specialiseRowReductions).
  DqAccumulator setUpDqAccumulator(Operation *first, Operation *last,
                                   Value layoutOk, Value d, Type element,
                                   const GradArgs &args, const Variant &variant,
                                   StringRef prefix, PlanKernel plan) {
    ImplicitLocOpBuilder b(first->getLoc(), first);
    TileBuilder scalars(b, b.getF32Type(), blockN);
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    Value used = arith::AndIOp::create(
        b,
        headDimAmong(
            b, d, tensor_core::kWgmmaBackwardHeadDims,
            [&](int64_t headDim) { return bool(plan(headDim, bytes)); }),
        layoutOk);
    SmallVector<Value, 4> sizes;
    for (int64_t i = 0; i < 4; ++i)
      sizes.push_back(scalars.select(used, memref::DimOp::create(b, args.q, i),
                                     scalars.idx(0)));
    int64_t dyn = ShapedType::kDynamic;
    DqAccumulator accum;
    accum.buffer = memref::AllocOp::create(
        b, MemRefType::get({dyn, dyn, dyn, dyn}, b.getF32Type()), sizes);
    auto onlyIfUsed = [&](llvm::function_ref<void()> body) {
      auto ifOp = scf::IfOp::create(b, used, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      body();
      return ifOp.getOperation();
    };
    accum.used = used;
    b.setInsertionPoint(last);
    accum.copy = onlyIfUsed([&] {
      Value scale = scalars.scoreScale(variant, d);
      tensor_core::emitScaledCopyKernel(b, element, accum.buffer, args.dq,
                                        scale,
                                        (prefix + "_wgmma_dq_copy").str());
    });
    memref::DeallocOp::create(b, accum.buffer);
    return accum;
  }

  /// fa-tile's dK/dV and dQ loops each become the fallback of kernels, and
  /// its D and dsinks loops kernels of their own (specialiseRowReductions).
  void specialiseBackward(func::FuncOp fn, const Variant &variant,
                          Type element) {
    Block &body = fn.front();
    ValueRange a = body.getArguments();
    bool sinks = a.size() == 11;
    unsigned out = sinks ? 7 : 6;
    GradArgs args{a[0],   a[1],       a[2],       a[4],    a[5],
                  a[out], a[out + 1], a[out + 2], Value(), a[3]};
    Operation *rowDotLoop = nullptr, *dkdv = nullptr, *dq = nullptr,
              *sinkGrad = nullptr;
    for (Operation &op : body) {
      auto name = op.getAttrOfType<StringAttr>(kLoopAttrName);
      if (!name)
        continue;
      if (name.getValue() == kRowDotBufferName)
        args.rowDot = op.getResult(0);
      else if (name.getValue() == kRowDotLoopName)
        rowDotLoop = &op;
      else if (name.getValue() == kDkDvLoopName)
        dkdv = &op;
      else if (name.getValue() == kDqLoopName)
        dq = &op;
      else if (name.getValue() == kSinkGradLoopName)
        sinkGrad = &op;
    }
    if (!args.rowDot || !rowDotLoop || !dkdv || !dq || (sinks && !sinkGrad))
      return; // not fa-tile's backward: leave it scalar
    std::string prefix = fn.getSymName().str();
    Operation *first = &body.front();
    Value layoutOk =
        layoutCheck(first, element,
                    {args.q, args.k, args.v, args.dO, args.dq, args.dk,
                     args.dv});
    ImplicitLocOpBuilder b(fn.getLoc(), first);
    Value d = memref::DimOp::create(b, args.q, 3);
    // dK/dV blocks own 16 keys per warp, whatever block-n is: 4 warps
    // where K, V and Q, dO tiles of at least 16 rows fit, else 2, with the
    // most query rows (up to 64) that fit beside them.
    auto dkdvShape = [&](int64_t headDim,
                         int64_t bytes) -> std::optional<KernelShape> {
      for (int64_t warps : {tensor_core::kDkDvWarps,
                            tensor_core::kDkDvWarps / 2})
        for (int64_t queryRows : {tensor_core::kDkDvQueryRows,
                                  tensor_core::kDkDvQueryRows / 2,
                                  tensor_core::kDkDvQueryRows / 4})
          if (tensor_core::tilesFit(16 * warps + queryRows, headDim, bytes,
                                    sharedBytes))
            return KernelShape{16 * warps, warps, queryRows};
      return std::nullopt;
    };
    // The dK/dV and dQ loops' blocks from their first op to their last, and
    // the head dims the mma.sync chains take.
    SmallVector<int64_t> mmaHeadDims(
        std::begin(tensor_core::kMmaSyncBackwardHeadDims),
        std::end(tensor_core::kMmaSyncBackwardHeadDims));
    std::pair<Operation *, Operation *> dkdvOps = {dkdv, dkdv->getNextNode()};
    std::pair<Operation *, Operation *> dqOps = {dq, dq->getNextNode()};
    using tensor_core::KernelShape;
    int64_t groups = tensor_core::kWgmmaBackwardGroups;
    int64_t warps = 4 * (groups + 1);
    // With dq-atomics the dK/dV kernel adds dQ into an f32 accumulator
    // by atomics, and dQ's chain has nothing left to do where it ran.
    bool atomicDq = dqAtomics && !deterministic;
    // dQ by atomics where the dK/dV blocks hold whole rows of dS (D up
    // to 128); D 192 and 256 keep the dQ kernel.
    auto atomicAt = [&](int64_t headDim) {
      return atomicDq && tensor_core::wgmmaDkDvWholeRows(headDim);
    };
    // `shape` with two streamed stages where its shared bytes
    // (`sharedBytes(shape)`) fit, else one (D 256).
    auto withStages = [](KernelShape shape,
                         auto sharedBytes) -> std::optional<KernelShape> {
      for (int64_t stages : {2, 1}) {
        shape.kvStages = stages;
        if (sharedBytes(shape) <= tensor_core::kHopperSharedBytes)
          return shape;
      }
      return std::nullopt;
    };
    auto dkdvPlan = [&](int64_t headDim,
                        int64_t bytes) -> std::optional<KernelShape> {
      return withStages(
          KernelShape{
              tensor_core::wgmmaDkDvBlockN(headDim), warps,
              tensor_core::wgmmaDkDvQueryRows(headDim, atomicAt(headDim),
                                              variant.windowOrSinkTokens())},
          [&](const KernelShape &shape) {
            return tensor_core::wgmmaSharedBytes(
                2 * shape.blockN, shape.queryRows, shape.kvStages, headDim,
                bytes,
                tensor_core::wgmmaDkDvScratchBytes(shape.blockN,
                                                   shape.queryRows, headDim,
                                                   bytes, atomicAt(headDim)));
          });
    };
    auto atomicPlan = [&](int64_t headDim,
                          int64_t bytes) -> std::optional<KernelShape> {
      if (!atomicAt(headDim))
        return std::nullopt;
      return dkdvPlan(headDim, bytes);
    };
    auto persistentDq = [&](int64_t headDim) {
      return wgmmaPersistent &&
             headDim <= tensor_core::kWgmmaPersistentDqMaxHeadDim;
    };
    // The dQ kernel's shape; `computesRowDot`: with o as a third fixed
    // tile (and the scratch of dsinks' partials).
    auto dqPlan = [&](int64_t headDim, int64_t bytes,
                      bool computesRowDot) -> std::optional<KernelShape> {
      if (atomicAt(headDim))
        return std::nullopt;
      int64_t fixedTiles = computesRowDot ? 3 : 2;
      int64_t scratch =
          computesRowDot && sinks ? tensor_core::kWgmmaDqSinkScratchBytes : 0;
      auto dqBytes = [&](const KernelShape &shape) {
        return tensor_core::wgmmaSharedBytes(
            fixedTiles * shape.queryRows, shape.blockN, shape.kvStages, headDim,
            bytes, scratch, shape.fixedSlots);
      };
      std::optional<KernelShape> shape = withStages(
          KernelShape{tensor_core::wgmmaDqBlockN(headDim), warps, 64 * groups},
          dqBytes);
      if (!shape)
        return std::nullopt;
      // A persistent block takes a second copy of its fixed tiles where it
      // fits beside the same stages, as the forward's does of Q.
      KernelShape twoCopies = *shape;
      twoCopies.fixedSlots = 2;
      if (persistentDq(headDim) &&
          dqBytes(twoCopies) <= tensor_core::kHopperSharedBytes)
        shape = twoCopies;
      return withGridSection(*shape);
    };
    // Whether the dQ kernel computes D at this head dim, which it then runs
    // before the dK/dV kernel: its persistent form, where o's tile costs
    // it neither a stage nor its second copy of the fixed tiles (D 32 to
    // 96). The D kernel's pass over o and dO (memory-bound: 70 us of
    // gpt-oss's window-128 backward on the H200) becomes o's TMA copies
    // beside the item's Q and dO.
    auto rowDotInDq = [&](int64_t headDim, int64_t bytes) {
      if (!useWgmma(element) || !persistentDq(headDim) ||
          !dkdvPlan(headDim, bytes))
        return false;
      std::optional<KernelShape> plain = dqPlan(headDim, bytes, false);
      std::optional<KernelShape> fused = dqPlan(headDim, bytes, true);
      return plain && fused && fused->kvStages == plain->kvStages &&
             fused->fixedSlots == plain->fixedSlots;
    };
    int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    std::optional<int64_t> staticD = staticHeadDim(d);
    // o's layout suits TMA (the runtime checks it with the others': a
    // program without scalar fallback sees only layouts that suit).
    Value oOk = layoutCheck(first, element, {args.o});
    auto computesRowDotAt = [&](int64_t headDim) {
      return (!staticD || headDim == *staticD) &&
             rowDotInDq(headDim, elementBytes);
    };
    Value dqComputesRowDot;
    if (llvm::any_of(tensor_core::kWgmmaBackwardHeadDims, computesRowDotAt))
      dqComputesRowDot = arith::AndIOp::create(
          b,
          headDimAmong(b, d, tensor_core::kWgmmaBackwardHeadDims,
                       computesRowDotAt),
          arith::AndIOp::create(b, layoutOk, oOk));
    DqAccumulator accum;
    if (atomicDq && useWgmma(element)) {
      accum = setUpDqAccumulator(rowDotLoop, dqOps.second, layoutOk, d,
                                 element, args, variant, prefix, atomicPlan);
      dqOps.second = accum.copy;
    }
    tensor_core::SinkTerms sinkTerms = specialiseRowReductions(
        args.o, sinks ? a[6] : Value(), sinks ? a[10] : Value(), element, args,
        rowDotLoop, sinkGrad, dqComputesRowDot, accum.buffer ? &accum : nullptr,
        prefix);
    if (useWgmma(element)) {
      // Head dims past the wgmma kernels' go on to the mma.sync chains.
      auto chain = [](Block *rest, std::pair<Operation *, Operation *> &ops) {
        if (rest)
          ops = {&rest->front(), rest->getTerminator()};
      };
      // Emits `body` under `condition`, with an else branch where
      // `fallback` is given; a branch on o's layout alone is marked as the
      // dispatch's are (kLayoutFallbackAttr).
      auto onLayout = [&](ImplicitLocOpBuilder &b, Value condition,
                          llvm::function_ref<void()> then,
                          llvm::function_ref<void()> fallback) {
        scf::IfOp ifOp = layoutBranch(b, condition, bool(fallback),
                                      /*layoutAlone=*/fallback && staticD);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        then();
        if (fallback) {
          b.setInsertionPointToStart(ifOp.elseBlock());
          fallback();
        }
      };
      auto emitDq = [&](ImplicitLocOpBuilder &b, int64_t headDim,
                        const KernelShape &shape, bool computesRowDot,
                        StringRef name) {
        tensor_core::emitWgmmaDq(b, element, headDim, shape, variant, args,
                                 persistentDq(headDim), computesRowDot,
                                 sinks ? &sinkTerms : nullptr, name);
      };
      chain(dispatch(dkdvOps.first, dkdvOps.second, layoutOk, d, element,
                     prefix + "_wgmma_dk_dv",
                     tensor_core::kWgmmaBackwardHeadDims, dkdvPlan,
                     [&](ImplicitLocOpBuilder &b, int64_t headDim,
                         const KernelShape &shape, StringRef name) {
                       // Where dQ computes D, its kernel runs first.
                       if (rowDotInDq(headDim, elementBytes)) {
                         KernelShape dqShape =
                             *dqPlan(headDim, elementBytes, true);
                         dqShape.branchedTiles = shape.branchedTiles;
                         onLayout(
                             b, oOk,
                             [&] {
                               emitDq(b, headDim, dqShape,
                                      /*computesRowDot=*/true,
                                      (prefix + "_wgmma_dq_row_dot_d" +
                                       Twine(headDim))
                                          .str());
                             },
                             nullptr);
                       }
                       tensor_core::emitWgmmaDkDv(
                           b, element, headDim, shape, variant, args,
                           atomicAt(headDim) ? accum.buffer : Value(), name);
                     }),
            dkdvOps);
      llvm::erase_if(mmaHeadDims, [](int64_t headDim) {
        return llvm::is_contained(tensor_core::kWgmmaBackwardHeadDims,
                                  headDim);
      });
      if (atomicDq)
        chain(dispatch(dqOps.first, dqOps.second, layoutOk, d, element,
                       prefix + "_wgmma_dq",
                       tensor_core::kWgmmaBackwardHeadDims, atomicPlan,
                       [](ImplicitLocOpBuilder &, int64_t, const KernelShape &,
                          StringRef) {}),
              dqOps);
      chain(dispatch(
                dqOps.first, dqOps.second, layoutOk, d, element,
                prefix + "_wgmma_dq", tensor_core::kWgmmaBackwardHeadDims,
                [&](int64_t headDim, int64_t bytes) {
                  return dqPlan(headDim, bytes, /*computesRowDot=*/false);
                },
                [&](ImplicitLocOpBuilder &b, int64_t headDim,
                    const KernelShape &shape, StringRef name) {
                  auto readsRowDot = [&] {
                    emitDq(b, headDim, shape, /*computesRowDot=*/false, name);
                  };
                  if (!rowDotInDq(headDim, elementBytes))
                    return readsRowDot();
                  // Ran before the dK/dV kernel where o's layout suits.
                  onLayout(
                      b, oOk, [] {}, readsRowDot);
                }),
            dqOps);
    }
    dispatch(dkdvOps.first, dkdvOps.second, layoutOk, d, element,
             prefix + "_mma_dk_dv", mmaHeadDims, dkdvShape,
             [&](ImplicitLocOpBuilder &b, int64_t headDim,
                 const KernelShape &shape, StringRef name) {
               tensor_core::createMmaSyncKernels(b, element, headDim, shape,
                                                 allowTf32)
                   ->emitDkDv(variant, args, name);
             });
    dispatch(dqOps.first, dqOps.second, layoutOk, d, element,
             prefix + "_mma_dq", mmaHeadDims,
             [&](int64_t headDim, int64_t bytes) {
               return keyTileShape(headDim, bytes, tensor_core::kWarps);
             },
             [&](ImplicitLocOpBuilder &b, int64_t headDim,
                 const KernelShape &shape, StringRef name) {
               tensor_core::createMmaSyncKernels(b, element, headDim, shape,
                                                 allowTf32)
                   ->emitDq(variant, args, name);
             });
  }
};

} // namespace
