//===- FADialect.td - The fa dialect -----------------------*- tablegen -*-===//
//
// The fa dialect describes an attention variant once (mask, grouped-query
// heads, sliding window, sink tokens, learnable sink logits), forward and
// backward, at the level of whole tensors. The fa-tile passes lower it to
// online-softmax tile loops.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_FADIALECT_TD
#define FA_DIALECT_FA_FADIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def FA_Dialect : Dialect {
  let name = "fa";
  let cppNamespace = "::fa";
  let summary = "FlashAttention-style attention variants";
  let description = [{
    `fa.attention`, `fa.attention_grad` and `fa.softmax_matmul` state what
    to compute; `fa.kernel` groups the forward and backward of one named
    variant in a spec file.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def FA_MaskKind : I32EnumAttr<"MaskKind", "which keys a query may attend to", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"causal", 1>
  ]> {
  let cppNamespace = "::fa";
}

class FA_Op<string mnemonic, list<Trait> traits = []>
    : Op<FA_Dialect, mnemonic, traits>;

#endif // FA_DIALECT_FA_FADIALECT_TD
