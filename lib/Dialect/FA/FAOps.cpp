//===- FAOps.cpp - fa dialect operations ----------------------------------===//
//
// Verifiers. Shapes may be dynamic: every check here compares only the sizes
// that are known, and the runtime repeats the same checks with the same
// wording at launch for the sizes that are not.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/FAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace fa;

bool fa::isSupportedElementType(Type type) {
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(type);
}

FloatType fa::getAccumulatorType(Type element) {
  if (element.isF64())
    return Float64Type::get(element.getContext());
  return Float32Type::get(element.getContext());
}

Type fa::parseElementTypeName(MLIRContext *context, StringRef name) {
  Builder b(context);
  return llvm::StringSwitch<Type>(name)
      .Case("f16", b.getF16Type())
      .Case("bf16", b.getBF16Type())
      .Case("f32", b.getF32Type())
      .Case("f64", b.getF64Type())
      .Default(Type());
}

bool fa::isAccumulatorTyped(Value value) {
  Operation *owner = value.getDefiningOp();
  if (auto attention = dyn_cast_or_null<AttentionOp>(owner))
    return value == attention.getLse();
  if (auto grad = dyn_cast_or_null<AttentionGradOp>(owner))
    return value == grad.getDsinks();
  for (Operation *user : value.getUsers()) {
    if (auto attention = dyn_cast<AttentionOp>(user))
      return value == attention.getSinks();
    if (auto grad = dyn_cast<AttentionGradOp>(user))
      return value == grad.getLse() || value == grad.getSinks();
  }
  return false;
}

/// Spells a size for diagnostics: `?` when dynamic.
static std::string sizeStr(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

/// True when two sizes are both known and differ.
static bool conflict(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Checks that `value`, named `name` in messages, is a tensor of `rank`
/// with a supported element type; `layout` spells the expected dimensions.
static LogicalResult verifyOperandRank(Operation *op, StringRef name,
                                       Value value, int64_t rank,
                                       StringRef layout) {
  RankedTensorType type = tensorType(value);
  if (type.getRank() != rank)
    return op->emitOpError() << "'" << name << "' must be a rank-" << rank
                             << " tensor " << layout << ", got " << type;
  if (!isSupportedElementType(type.getElementType()))
    return op->emitOpError()
           << "'" << name << "' has element type " << type.getElementType()
           << "; fa supports f16, bf16, f32 and f64";
  return success();
}

static LogicalResult verifySameElementType(Operation *op, StringRef name,
                                           Value value, StringRef refName,
                                           Value ref) {
  Type got = tensorType(value).getElementType();
  Type want = tensorType(ref).getElementType();
  if (got != want)
    return op->emitOpError() << "'" << name << "' element type " << got
                             << " differs from '" << refName
                             << "' element type " << want;
  return success();
}

/// Checks the q/k/v layout shared by the forward and the backward.
/// `paged`: k and v are [pages, Hkv, P, D], not q's batch.
static LogicalResult verifyQKV(Operation *op, Value q, Value k, Value v,
                               bool paged = false) {
  if (failed(verifyOperandRank(op, "q", q, 4, "[B, Hq, Sq, D]")) ||
      failed(verifyOperandRank(op, "k", k, 4, "[B, Hkv, Sk, D]")) ||
      failed(verifyOperandRank(op, "v", v, 4, "[B, Hkv, Sk, D]")) ||
      failed(verifySameElementType(op, "k", k, "q", q)) ||
      failed(verifySameElementType(op, "v", v, "q", q)))
    return failure();
  ArrayRef<int64_t> qs = tensorType(q).getShape();
  ArrayRef<int64_t> ks = tensorType(k).getShape();
  ArrayRef<int64_t> vs = tensorType(v).getShape();
  // A static extent of 0 is refused here, by name: the lowering has no
  // block to launch for it, and a runtime call with it would be refused as
  // an empty tensor anyway.
  static constexpr const char *kQueryDims[] = {"B", "Hq", "Sq", "D"};
  static constexpr const char *kKeyDims[] = {"B", "Hkv", "Sk", "D"};
  static constexpr const char *kPagedDims[] = {"pages", "Hkv", "P", "D"};
  for (auto [name, shape, dims] :
       {std::tuple{"q", qs, kQueryDims},
        std::tuple{"k", ks, paged ? kPagedDims : kKeyDims},
        std::tuple{"v", vs, paged ? kPagedDims : kKeyDims}})
    for (int64_t i = 0; i < 4; ++i)
      if (shape[i] == 0)
        return op->emitOpError() << "'" << name << "' has " << dims[i]
                                 << " = 0; every extent must be at least 1";
  for (auto [name, shape] : {std::pair{"k", ks}, std::pair{"v", vs}})
    if (!paged && conflict(qs[0], shape[0]))
      return op->emitOpError() << "batch sizes differ: 'q' has B = "
                               << sizeStr(qs[0]) << ", '" << name
                               << "' has B = " << sizeStr(shape[0]);
  if (paged && conflict(ks[0], vs[0]))
    return op->emitOpError()
           << "'k' and 'v' page counts differ: " << sizeStr(ks[0]) << " vs "
           << sizeStr(vs[0]);
  if (conflict(ks[1], vs[1]))
    return op->emitOpError() << "'k' and 'v' head counts differ: "
                             << sizeStr(ks[1]) << " vs " << sizeStr(vs[1]);
  if (conflict(ks[2], vs[2]))
    return op->emitOpError() << "'k' and 'v' sequence lengths differ: "
                             << sizeStr(ks[2]) << " vs " << sizeStr(vs[2]);
  int64_t hq = qs[1], hkv = ks[1];
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      hq % hkv != 0)
    return op->emitOpError()
           << "query heads (Hq = " << hq
           << ") must be a multiple of key/value heads (Hkv = " << hkv << ")";
  for (auto [name, shape] : {std::pair{"k", ks}, std::pair{"v", vs}})
    if (conflict(qs[3], shape[3]))
      return op->emitOpError() << "head dims differ: 'q' has D = "
                               << sizeStr(qs[3]) << ", '" << name
                               << "' has D = " << sizeStr(shape[3]);
  return success();
}

/// Checks the variant attributes.
static LogicalResult verifyVariant(Operation *op, MaskKind mask,
                                   std::optional<int64_t> window,
                                   int64_t sinkTokens,
                                   std::optional<APFloat> scale) {
  if (window && *window < 1)
    return op->emitOpError() << "window must be >= 1, got " << *window;
  if (window && mask != MaskKind::causal)
    return op->emitOpError()
           << "window requires mask causal (the window ends at the diagonal)";
  if (sinkTokens < 0)
    return op->emitOpError() << "sink_tokens must be >= 0, got "
                             << sinkTokens;
  if (sinkTokens > 0 && !window)
    return op->emitOpError() << "sink_tokens requires a window (without one "
                                "every key is already visible)";
  if (scale) {
    double s = scale->convertToDouble();
    if (!std::isfinite(s) || s <= 0.0)
      return op->emitOpError()
             << "scale must be a positive finite number, got " << s;
  }
  return success();
}

/// Checks that `value` is a tensor of exactly `expected`.
static LogicalResult verifyExactType(Operation *op, StringRef name,
                                     Value value, Type expected,
                                     StringRef meaning) {
  if (value.getType() != expected)
    return op->emitOpError() << "'" << name << "' must be " << expected
                             << " (" << meaning << "), got "
                             << value.getType();
  return success();
}

/// The type of the per-row statistics (lse) for queries of type `q`.
static RankedTensorType statsType(Value q) {
  RankedTensorType qt = tensorType(q);
  return RankedTensorType::get(qt.getShape().take_front(3),
                               getAccumulatorType(qt.getElementType()));
}

static LogicalResult verifySinks(Operation *op, StringRef name, Value sinks,
                                 Value q) {
  RankedTensorType qt = tensorType(q);
  auto expected = RankedTensorType::get(
      {qt.getDimSize(1)}, getAccumulatorType(qt.getElementType()));
  return verifyExactType(op, name, sinks, expected,
                         "one logit per query head, in the accumulator type");
}

/// What fa.attention and fa.attention_grad share: q/k/v, the variant
/// attributes, the sinks, and the forward's o and lse.
template <typename OpT>
static LogicalResult verifyAttentionOperands(OpT op, Value o, Value lse,
                                             bool paged = false) {
  Operation *raw = op.getOperation();
  if (failed(verifyQKV(raw, op.getQ(), op.getK(), op.getV(), paged)) ||
      failed(verifyVariant(raw, op.getMask(), op.getWindow(),
                           op.getSinkTokens(), op.getScale())))
    return failure();
  if (op.getSinks() &&
      failed(verifySinks(raw, "sinks", op.getSinks(), op.getQ())))
    return failure();
  if (failed(verifyExactType(raw, "o", o, op.getQ().getType(),
                             "the type of 'q'")) ||
      failed(verifyExactType(raw, "lse", lse, statsType(op.getQ()),
                             "[B, Hq, Sq] in the accumulator type")))
    return failure();
  return success();
}

LogicalResult AttentionOp::verify() {
  bool paged = static_cast<bool>(getBlockTable());
  if (failed(verifyAttentionOperands(*this, getO(), getLse(), paged)))
    return failure();
  Type i32 = IntegerType::get(getContext(), 32);
  int64_t batch = tensorType(getQ()).getDimSize(0);
  if (getKeyLengths() &&
      failed(verifyExactType(*this, "key_lengths", getKeyLengths(),
                             RankedTensorType::get({batch}, i32),
                             "one key count per batch entry")))
    return failure();
  if (failed(verifySequenceStarts()) || failed(verifyAppend()))
    return failure();
  if (!paged)
    return success();
  if (!getKeyLengths())
    return emitOpError() << "block_table needs key_lengths (how far each "
                            "sequence fills its pages)";
  auto table = dyn_cast<RankedTensorType>(getBlockTable().getType());
  if (!table || table.getRank() != 2 || table.getElementType() != i32 ||
      conflict(table.getDimSize(0), batch))
    return emitOpError() << "'block_table' must be a tensor of i32 [B, "
                            "pages per sequence] with B = "
                         << sizeStr(batch) << ", got "
                         << getBlockTable().getType();
  return success();
}

LogicalResult AttentionOp::verifySequenceStarts() {
  Value queryStarts = getQueryStarts(), keyStarts = getKeyStarts();
  if (!queryStarts && !keyStarts)
    return success();
  if (!queryStarts || !keyStarts)
    return emitOpError() << "query_starts and key_starts come together (the "
                            "packed sequences' rows in q and in k/v)";
  if (getKeyLengths() || getBlockTable())
    return emitOpError() << "query_starts/key_starts do not combine with "
                         << (getKeyLengths() ? "key_lengths" : "block_table")
                         << " (each packed sequence's keys are its own rows)";
  for (auto [name, starts] : {std::pair{"query_starts", queryStarts},
                              std::pair{"key_starts", keyStarts}}) {
    auto type = dyn_cast<RankedTensorType>(starts.getType());
    if (!type || type.getRank() != 1 || !type.getElementType().isInteger(32))
      return emitOpError() << "'" << name
                           << "' must be a 1-D tensor of i32 (N + 1 row "
                              "offsets of N packed sequences), got "
                           << starts.getType();
    int64_t size = type.getDimSize(0);
    if (!ShapedType::isDynamic(size) && size < 2)
      return emitOpError() << "'" << name << "' has " << size
                           << " entries; N packed sequences need N + 1 >= 2";
  }
  int64_t queryCount = tensorType(queryStarts).getDimSize(0);
  int64_t keyCount = tensorType(keyStarts).getDimSize(0);
  if (conflict(queryCount, keyCount))
    return emitOpError() << "'query_starts' has " << queryCount
                         << " entries and 'key_starts' " << keyCount
                         << "; both are N + 1 for N sequences";
  for (auto [name, tensor] : {std::pair{"q", getQ()}, std::pair{"k", getK()}})
    if (conflict(tensorType(tensor).getDimSize(0), 1))
      return emitOpError() << "with query_starts, '" << name
                           << "' holds the packed sequences as one batch "
                              "entry: B must be 1, got "
                           << sizeStr(tensorType(tensor).getDimSize(0));
  return success();
}

LogicalResult AttentionOp::verifyAppend() {
  Value kNew = getKNew(), vNew = getVNew();
  if (!kNew && !vNew)
    return success();
  if (!kNew || !vNew)
    return emitOpError() << "append takes new keys and new values";
  if (!getKeyLengths())
    return emitOpError() << "append needs key_lengths (where each "
                            "sequence's new keys go)";
  if (failed(verifyOperandRank(*this, "append's keys", kNew, 4,
                               "[B, Hkv, Snew, D]")) ||
      failed(verifySameElementType(*this, "append's keys", kNew, "q", getQ())))
    return failure();
  if (failed(verifyExactType(*this, "append's values", vNew, kNew.getType(),
                             "the type of append's keys")))
    return failure();
  ArrayRef<int64_t> news = tensorType(kNew).getShape();
  ArrayRef<int64_t> qs = tensorType(getQ()).getShape();
  ArrayRef<int64_t> ks = tensorType(getK()).getShape();
  if (conflict(news[0], qs[0]) || conflict(news[1], ks[1]) ||
      conflict(news[3], ks[3]))
    return emitOpError() << "append's keys must be [B, Hkv, Snew, D] with "
                            "q's B and the cache's Hkv and D, got "
                         << kNew.getType();
  // A sequence's cache holds Sk rows, or N pages of P in a paged one.
  int64_t capacity = ks[2];
  if (getBlockTable()) {
    int64_t pages = tensorType(getBlockTable()).getDimSize(1);
    capacity = ShapedType::isDynamic(pages) || ShapedType::isDynamic(ks[2])
                   ? ShapedType::kDynamic
                   : pages * ks[2];
  }
  if (!ShapedType::isDynamic(news[2]) && !ShapedType::isDynamic(capacity) &&
      news[2] > capacity)
    return emitOpError() << "append's " << news[2]
                         << " new keys do not fit a cache of " << capacity
                         << " keys per sequence";
  return success();
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  // `append` writes the caches in place; the op is otherwise pure.
  if (getKNew())
    effects.emplace_back(MemoryEffects::Write::get());
}

LogicalResult AttentionGradOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyAttentionOperands(*this, getO(), getLse())))
    return failure();
  if (static_cast<bool>(getSinks()) != static_cast<bool>(getDsinks()))
    return op->emitOpError()
           << "'dsinks' result must be present exactly when 'sinks' is given";
  Type qType = getQ().getType();
  if (failed(verifyExactType(op, "dO", getDO(), qType, "the type of 'q'")) ||
      failed(verifyExactType(op, "dq", getDq(), qType, "the type of 'q'")) ||
      failed(verifyExactType(op, "dk", getDk(), getK().getType(),
                             "the type of 'k'")) ||
      failed(verifyExactType(op, "dv", getDv(), getV().getType(),
                             "the type of 'v'")))
    return failure();
  if (getDsinks() &&
      failed(verifyExactType(op, "dsinks", getDsinks(), getSinks().getType(),
                             "the type of 'sinks'")))
    return failure();
  return success();
}

LogicalResult SoftmaxMatmulOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyOperandRank(op, "x", getX(), 3, "[B, M, N]")) ||
      failed(verifyOperandRank(op, "v", getV(), 3, "[B, N, P]")) ||
      failed(verifySameElementType(op, "v", getV(), "x", getX())))
    return failure();
  ArrayRef<int64_t> xs = getX().getType().getShape();
  ArrayRef<int64_t> vs = getV().getType().getShape();
  if (conflict(xs[0], vs[0]))
    return op->emitOpError() << "batch sizes differ: 'x' has B = "
                             << sizeStr(xs[0]) << ", 'v' has B = " << sizeStr(vs[0]);
  if (conflict(xs[2], vs[1]))
    return op->emitOpError()
           << "'x' has N = " << sizeStr(xs[2]) << " columns but 'v' has N = "
           << sizeStr(vs[1]) << " rows";
  auto expected = RankedTensorType::get({xs[0], xs[1], vs[2]},
                                        getX().getType().getElementType());
  return verifyExactType(op, "result", getResult(), expected, "[B, M, P]");
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

RegionKind KernelOp::getRegionKind(unsigned) { return RegionKind::Graph; }

func::FuncOp KernelOp::getForward() {
  return lookupSymbol<func::FuncOp>("forward");
}

func::FuncOp KernelOp::getBackward() {
  return lookupSymbol<func::FuncOp>("backward");
}

Operation *KernelOp::getComputeOp(func::FuncOp fn) {
  if (fn.isExternal())
    return nullptr;
  Operation &first = fn.getBody().front().front();
  if (isa<AttentionOp, AttentionGradOp, SoftmaxMatmulOp>(first))
    return &first;
  return nullptr;
}

/// Checks that `fn` is `args -> one fa op -> return its results`, with the
/// op taking the arguments in order: the runtime relies on that signature.
static LogicalResult verifyEntryBody(KernelOp kernel, func::FuncOp fn) {
  auto fail = [&]() {
    return kernel.emitOpError()
           << "@" << fn.getSymName()
           << " must hold exactly one fa op that takes the function's "
              "arguments in order, followed by a func.return of its results";
  };
  if (fn.isExternal() || !fn.getBody().hasOneBlock())
    return fail();
  Block &body = fn.getBody().front();
  Operation *compute = KernelOp::getComputeOp(fn);
  if (!compute || body.getOperations().size() != 2)
    return fail();
  auto ret = dyn_cast<func::ReturnOp>(body.back());
  if (!ret || ret.getOperands() != compute->getResults() ||
      compute->getOperands() != ValueRange(body.getArguments()))
    return fail();
  return success();
}

/// Compares one variant attribute of the backward with the forward's.
template <typename T>
static LogicalResult checkSame(KernelOp kernel, StringRef what, const T &fwd,
                               const T &bwd) {
  if (fwd == bwd)
    return success();
  return kernel.emitOpError()
         << "@backward's " << what << " differs from @forward's";
}

LogicalResult KernelOp::verifyRegions() {
  for (Operation &op : getBody().front()) {
    auto fn = dyn_cast<func::FuncOp>(op);
    if (!fn || (fn.getSymName() != "forward" && fn.getSymName() != "backward"))
      return emitOpError() << "may hold only func.func @forward and "
                              "func.func @backward, found '"
                           << op.getName() << "'"
                           << (fn ? (" @" + fn.getSymName()).str() : "");
  }
  func::FuncOp forward = getForward();
  if (!forward)
    return emitOpError() << "@" << getSymName()
                         << " has no func.func @forward";
  if (failed(verifyEntryBody(*this, forward)))
    return failure();
  Operation *fwdOp = getComputeOp(forward);
  if (isa<AttentionGradOp>(fwdOp))
    return emitOpError() << "@forward must hold fa.attention or "
                            "fa.softmax_matmul, not fa.attention_grad";
  func::FuncOp backward = getBackward();
  if (!backward)
    return success();
  if (failed(verifyEntryBody(*this, backward)))
    return failure();
  auto bwd = dyn_cast<AttentionGradOp>(getComputeOp(backward));
  auto fwd = dyn_cast<AttentionOp>(fwdOp);
  if (!bwd || !fwd)
    return emitOpError() << "@backward must hold fa.attention_grad and "
                            "needs an fa.attention in @forward";
  if (fwd.getKeyLengths() || fwd.getQueryStarts())
    return emitOpError() << "@forward's "
                         << (fwd.getKeyLengths() ? "key_lengths"
                                                 : "query_starts/key_starts")
                         << " have no backward: a kernel with them holds "
                            "only @forward";
  if (failed(checkSame(*this, "mask", fwd.getMask(), bwd.getMask())) ||
      failed(checkSame(*this, "window", fwd.getWindow(), bwd.getWindow())) ||
      failed(checkSame(*this, "sink_tokens", fwd.getSinkTokens(),
                       bwd.getSinkTokens())) ||
      failed(checkSame(*this, "scale", fwd.getScaleAttr(),
                       bwd.getScaleAttr())) ||
      failed(checkSame(*this, "sinks", static_cast<bool>(fwd.getSinks()),
                       static_cast<bool>(bwd.getSinks()))))
    return failure();
  if (failed(checkSame(*this, "'q' type", fwd.getQ().getType(),
                       bwd.getQ().getType())) ||
      failed(checkSame(*this, "'k' type", fwd.getK().getType(),
                       bwd.getK().getType())) ||
      failed(checkSame(*this, "'v' type", fwd.getV().getType(),
                       bwd.getV().getType())))
    return failure();
  return success();
}

#define GET_OP_CLASSES
#include "fa/Dialect/FA/FAOps.cpp.inc"
