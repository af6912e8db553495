//===- Passes.h - fa transformation passes ----------------------*- C++ -*-===//

#ifndef FA_TRANSFORMS_PASSES_H
#define FA_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"
#include <memory>

namespace fa {
#define GEN_PASS_DECL
#include "fa/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

#endif // FA_TRANSFORMS_PASSES_H
