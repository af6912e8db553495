//===- Ptxas.h - Kernels assembled by ptxas ahead of the driver -*- C++ -*-===//
//
// The driver JIT-compiles PTX under one lock: a spec's kernels, loaded one
// after another, cost the sum of their ptxas times (1.4-3.2 s for a
// variant's forward and backward on the H100 machine, bench/NOTES.md), and
// loading them from several threads takes as long. Where a ptxas is at
// hand, fa runs one per kernel at once and loads the cubins, which the
// driver takes as they are; the kernel cache then keeps machine code.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_RUNTIME_PTXAS_H
#define FA_LIB_RUNTIME_PTXAS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace fa {

/// The ptxas fa may use: $FA_PTXAS (set empty to use none), else the CUDA
/// toolkit's (CUDA_ROOT, CUDA_HOME, CUDA_PATH, /usr/local/cuda), else one
/// on PATH; empty when there is none.
std::string findPtxas();

/// The CUDA release of `ptxas` in cuDriverGetVersion's units (12040 for
/// 12.4), from `ptxas --version`; 0 when it does not say.
int ptxasRelease(llvm::StringRef ptxas);

/// Assembles `ptx` for `arch` (sm_XY[a]) into `cubin`. False with `error`
/// naming the kernel and ptxas's message on failure.
bool assemblePtx(llvm::StringRef ptxas, llvm::StringRef arch,
                 llvm::StringRef name, llvm::StringRef ptx, std::string &cubin,
                 std::string &error);

/// Replaces the PTX objects of `module`'s gpu.binary ops by cubins for
/// `arch`, one ptxas per kernel at once. A kernel ptxas fails on keeps its
/// PTX, which the driver JIT-compiles as before; `note` says which.
/// Returns how many were assembled.
int assembleKernels(mlir::ModuleOp module, llvm::StringRef ptxas,
                    llvm::StringRef arch, std::string &note);

} // namespace fa

#endif // FA_LIB_RUNTIME_PTXAS_H
