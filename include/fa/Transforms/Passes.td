//===- Passes.td - fa transformation passes ----------------*- tablegen -*-===//

#ifndef FA_TRANSFORMS_PASSES_TD
#define FA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FASpecializeElementType : Pass<"fa-specialize-element-type", "::mlir::ModuleOp"> {
  let summary = "Re-type every fa.kernel to another input element type";
  let description = [{
    A spec names a default element type; this pass specialises the same
    variant to another one (what the JIT and `fa-run --dtype` do). q, k, v,
    o, dO and their gradients take `element-type`; lse, sinks and dsinks take
    its accumulator type (f64 for f64, f32 otherwise).
  }];
  let options = [
    Option<"elementType", "element-type", "std::string", "\"f32\"",
           "f16, bf16, f32 or f64">
  ];
}

#endif // FA_TRANSFORMS_PASSES_TD
