//===- Passes.h - fa transformation passes ----------------------*- C++ -*-===//

#ifndef FA_TRANSFORMS_PASSES_H
#define FA_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include <memory>

namespace fa {
#define GEN_PASS_DECL
#include "fa/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

#endif // FA_TRANSFORMS_PASSES_H
