//===- FADialect.h - The fa dialect -----------------------------*- C++ -*-===//

#ifndef FA_DIALECT_FA_FADIALECT_H
#define FA_DIALECT_FA_FADIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "fa/Dialect/FA/FADialect.h.inc"

#endif // FA_DIALECT_FA_FADIALECT_H
