//===- FAOps.td - fa dialect operations --------------------*- tablegen -*-===//

#ifndef FA_DIALECT_FA_FAOPS_TD
#define FA_DIALECT_FA_FAOPS_TD

include "fa/Dialect/FA/FADialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// The variant attributes shared by the forward and the backward op.
defvar FA_VariantAttrs = (ins
  DefaultValuedAttr<FA_MaskKind, "::fa::MaskKind::none">:$mask,
  OptionalAttr<I64Attr>:$window,
  DefaultValuedAttr<I64Attr, "0">:$sink_tokens,
  OptionalAttr<F64Attr>:$scale);

defvar FA_VariantFormat = !strconcat(
  "(`mask` $mask^)? (`window` $window^)? (`sink_tokens` $sink_tokens^)? ",
  "(`scale` $scale^)?");

def FA_AttentionOp : FA_Op<"attention", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "scaled dot-product attention with online softmax semantics";
  let description = [{
    `o = softmax(scale * q k^T + mask) v` per (batch, query head), with the
    key/value head `h / (Hq / Hkv)` (grouped-query attention when Hq > Hkv).
    `lse` is the log-sum-exp of each row, saved for the backward.

    - `mask causal`: key j is visible to query i when `j <= i + (Sk - Sq)`.
    - `window W` (needs `mask causal`): the W keys ending at the diagonal.
    - `sink_tokens T` (needs a window): the first T keys stay visible.
    - `sinks %s`: a learnable logit per query head that joins the softmax
      denominator but carries no value.
    - `scale`: defaults to 1/sqrt(D).
    - `key_lengths %n` (tensor<Bxi32>): batch b's sequence is its first
      n[b] keys (a KV cache filled to different lengths); the keys past it
      are never read, and Sk in the masks above is n[b]. A length outside
      [0, Sk] is taken as its nearest end. Forward only: a kernel with it
      has no @backward.
    - `block_table %t` (tensor<BxNxi32>, needs key_lengths): a paged cache.
      k and v are [pages, Hkv, P, D]: pages of P keys, and batch b's key j
      is row j mod P of page t[b, j / P]. Sk is N * P. A page index outside
      [0, pages) is taken as its nearest end.
    - `query_starts %cq key_starts %ck` (tensor<(N+1)xi32> each): packed
      sequences of different lengths (flash-attn's cu_seqlens). q, o and
      lse hold one batch entry whose rows are N sequences end to end:
      sequence s is query rows [cq[s], cq[s+1]) and key rows
      [ck[s], ck[s+1]), and attends only within itself, with Sq and Sk in
      the masks above its own lengths (causal stays bottom-right aligned
      per sequence). Starts are clamped to the tensors' rows and ends to
      [start, rows], so no row outside them is read. Forward only; not
      with key_lengths or block_table.
    - `append %kn, %vn` (needs key_lengths; [B, Hkv, Snew, D] each): a
      decode step's new keys and values, written into the cache in place
      at rows p[b] .. p[b] + Snew, p[b] = key_lengths[b] clamped to
      [0, Sk - Snew] (through the block table where paged), and attended
      to with the cache's first p[b] keys: Sk in the masks is p[b] + Snew.
      The op then writes its k and v operands' buffers; without `append`
      it has no memory effects.

    ```mlir
    %o, %lse = fa.attention %q, %k, %v mask causal window 4096
        : (tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>)
          -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>)
    ```
  }];
  let arguments = !con((ins
    AnyRankedTensor:$q, AnyRankedTensor:$k, AnyRankedTensor:$v,
    Optional<AnyRankedTensor>:$sinks,
    Optional<AnyRankedTensor>:$key_lengths,
    Optional<AnyRankedTensor>:$block_table,
    Optional<AnyRankedTensor>:$query_starts,
    Optional<AnyRankedTensor>:$key_starts,
    Optional<AnyRankedTensor>:$k_new,
    Optional<AnyRankedTensor>:$v_new), FA_VariantAttrs);
  let results = (outs AnyRankedTensor:$o, AnyRankedTensor:$lse);
  let assemblyFormat = !strconcat("$q `,` $k `,` $v (`sinks` $sinks^)? ",
    "(`key_lengths` $key_lengths^)? (`block_table` $block_table^)? ",
    "(`query_starts` $query_starts^)? (`key_starts` $key_starts^)? ",
    "(`append` $k_new^ `,` $v_new)? ",
    FA_VariantFormat, " attr-dict `:` functional-type(operands, results)");
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Checks query_starts and key_starts (the packed sequences).
    ::llvm::LogicalResult verifySequenceStarts();
    /// Checks `append` (the new keys and values).
    ::llvm::LogicalResult verifyAppend();
  }];
}

def FA_AttentionGradOp : FA_Op<"attention_grad", [Pure]> {
  let summary = "gradients of fa.attention by recomputation";
  let description = [{
    Given the forward's inputs, its outputs `o` and `lse`, and the gradient
    `dO` of `o`, computes dq, dk, dv and, with learnable sinks, dsinks.
    The variant attributes mean what they mean on `fa.attention`.
  }];
  let arguments = !con((ins
    AnyRankedTensor:$q, AnyRankedTensor:$k, AnyRankedTensor:$v,
    AnyRankedTensor:$o, AnyRankedTensor:$lse, AnyRankedTensor:$dO,
    Optional<AnyRankedTensor>:$sinks), FA_VariantAttrs);
  let results = (outs AnyRankedTensor:$dq, AnyRankedTensor:$dk,
                      AnyRankedTensor:$dv, Optional<AnyRankedTensor>:$dsinks);
  let assemblyFormat = !strconcat(
    "$q `,` $k `,` $v `,` $o `,` $lse `,` $dO (`sinks` $sinks^)? ",
    FA_VariantFormat, " attr-dict `:` functional-type(operands, results)");
  let hasVerifier = 1;
}

def FA_SoftmaxMatmulOp : FA_Op<"softmax_matmul", [Pure]> {
  let summary = "softmax(x) @ v over the last axis of x, fused";
  let description = [{
    x [B, M, N], v [B, N, P] -> [B, M, P]; softmax(x) is never materialised.
  }];
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$v);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
    "$x `,` $v attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def FA_KernelOp : FA_Op<"kernel", [IsolatedFromAbove, SymbolTable, Symbol,
    NoTerminator, SingleBlock, NoRegionArguments,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "a named attention variant: its forward and its backward";
  let description = [{
    Holds a `func.func @forward` and, optionally, a `func.func @backward`.
    Each function holds exactly one fa compute op and returns its results:
    `forward` an `fa.attention` or `fa.softmax_matmul`, `backward` an
    `fa.attention_grad` whose variant matches the forward's.

    ```mlir
    fa.kernel @causal {
      func.func @forward(%q: ..., %k: ..., %v: ...) -> (...) { ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The forward entry point (always present after verification).
    ::mlir::func::FuncOp getForward();
    /// The backward entry point, or null.
    ::mlir::func::FuncOp getBackward();
    /// The single fa compute op of `fn`.
    static ::mlir::Operation *getComputeOp(::mlir::func::FuncOp fn);
  }];
}

#endif // FA_DIALECT_FA_FAOPS_TD
