//===- FAOps.h - fa dialect operations --------------------------*- C++ -*-===//

#ifndef FA_DIALECT_FA_FAOPS_H
#define FA_DIALECT_FA_FAOPS_H

#include "fa/Dialect/FA/FADialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fa/Dialect/FA/FAEnums.h.inc"

#define GET_OP_CLASSES
#include "fa/Dialect/FA/FAOps.h.inc"

namespace fa {
/// True for the element types fa computes in: f16, bf16, f32, f64.
bool isSupportedElementType(mlir::Type type);
/// The type softmax statistics and sums are kept in for inputs of `element`:
/// f64 for f64, f32 otherwise.
mlir::FloatType getAccumulatorType(mlir::Type element);
/// The element type spelled `name` (f16, bf16, f32 or f64), or null.
mlir::Type parseElementTypeName(mlir::MLIRContext *context,
                                llvm::StringRef name);
/// True when `value` of an fa compute op holds softmax statistics or sink
/// logits (lse, sinks, dsinks), which live in the accumulator type.
bool isAccumulatorTyped(mlir::Value value);
} // namespace fa

#endif // FA_DIALECT_FA_FAOPS_H
