//===- Pipelines.h - fa lowering pipelines ----------------------*- C++ -*-===//

#ifndef FA_CONVERSION_PIPELINES_H
#define FA_CONVERSION_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace fa {
struct CpuPipelineOptions : mlir::PassPipelineOptions<CpuPipelineOptions> {
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("query rows per tile"),
                         llvm::cl::init(16)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("keys per tile"),
                         llvm::cl::init(32)};
};

/// fa kernels -> tile loops -> LLVM dialect for the host CPU.
void buildCpuPipeline(mlir::OpPassManager &pm,
                      const CpuPipelineOptions &options);

/// Registers `fa-lower-to-cpu` for fa-opt.
void registerPipelines();
} // namespace fa

#endif // FA_CONVERSION_PIPELINES_H
