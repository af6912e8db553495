//===- Pipelines.h - fa lowering pipelines ----------------------*- C++ -*-===//

#ifndef FA_CONVERSION_PIPELINES_H
#define FA_CONVERSION_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace fa {
struct CpuPipelineOptions : mlir::PassPipelineOptions<CpuPipelineOptions> {
  Option<bool> branchedTiles{
      *this, "branched-tiles",
      llvm::cl::desc("the forward's key phases in one loop each, the edge "
                     "tiles masked under a per-tile predicate"),
      llvm::cl::init(false)};
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("query rows per tile"),
                         llvm::cl::init(16)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("keys per tile"),
                         llvm::cl::init(32)};
  Option<std::string> entries{
      *this, "entries",
      llvm::cl::desc("the entries to lower: all, forward or backward"),
      llvm::cl::init("all")};
};

/// fa kernels -> tile loops -> LLVM dialect for the host CPU.
void buildCpuPipeline(mlir::OpPassManager &pm,
                      const CpuPipelineOptions &options);

struct GpuPipelineOptions : mlir::PassPipelineOptions<GpuPipelineOptions> {
  // One thread per tile in this first GPU path: tiles of one row and one key
  // keep each thread's scratch (the accumulator row) small.
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("query rows per tile"),
                         llvm::cl::init(1)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::desc("keys per tile"),
                         llvm::cl::init(1)};
  Option<std::string> entries{
      *this, "entries",
      llvm::cl::desc("the entries to lower: all, forward or backward"),
      llvm::cl::init("all")};
  Option<int64_t> tensorCoreBlockN{
      *this, "tensor-core-block-n",
      llvm::cl::desc("keys per shared-memory tile of the tensor-core "
                     "kernels (0: the pass default)"),
      llvm::cl::init(0)};
  Option<int64_t> tensorCoreWarps{
      *this, "tensor-core-warps",
      llvm::cl::desc("warps per forward block of the tensor-core kernels, 4 "
                     "or 8 (0: the pass default)"),
      llvm::cl::init(0)};
  Option<int64_t> tensorCoreKvStages{
      *this, "tensor-core-kv-stages",
      llvm::cl::desc("K/V tiles of the tensor-core forward in shared memory "
                     "at once: 1 or 2 on mma.sync (0: 1), 1 to 3 on wgmma "
                     "(0: 2 where they fit)"),
      llvm::cl::init(0)};
  Option<int64_t> tensorCoreSharedBytes{
      *this, "tensor-core-shared-bytes",
      llvm::cl::desc("shared memory the tensor-core kernels' tiles may use "
                     "(0: the pass default, 48 KiB; above it, dynamic shared "
                     "memory the GPU must offer)"),
      llvm::cl::init(0)};
  Option<bool> allowTf32{
      *this, "allow-tf32",
      llvm::cl::desc("f32 inputs: one tf32 MMA per product instead of three "
                     "on a hi/lo split (faster, 10-bit mantissa)"),
      llvm::cl::init(false)};
  Option<bool> dqAtomics{
      *this, "dq-atomics",
      llvm::cl::desc("the wgmma backward's dK/dV kernel adds dQ by f32 "
                     "TMA reduce-adds (D up to 128; the default); false: "
                     "dQ's own kernel"),
      llvm::cl::init(true)};
  Option<bool> deterministic{
      *this, "deterministic",
      llvm::cl::desc("backwards give the same bits from run to run "
                     "(overrides dq-atomics)"),
      llvm::cl::init(false)};
  Option<bool> splitKv{
      *this, "split-kv",
      llvm::cl::desc("forwards carry the split-KV kernels for decode "
                     "shapes"),
      llvm::cl::init(false)};
  Option<bool> scalarFallback{
      *this, "scalar-fallback",
      llvm::cl::desc("the scalar loops stay beside kernels that take the "
                     "spec's fixed head dim, for layouts the kernels do not "
                     "take (off: an error at run time there)"),
      llvm::cl::init(true)};
  Option<std::string> tensorCoreGeneration{
      *this, "tensor-core-generation",
      llvm::cl::desc("MMA generation of the tensor-core kernels: auto (wgmma "
                     "on sm_90a, else mma-sync), mma-sync or wgmma"),
      llvm::cl::init("auto")};
  Option<bool> branchedTiles{
      *this, "branched-tiles",
      llvm::cl::desc("the tensor-core kernels' tiles in one loop per phase, "
                     "the edge tiles masked under a branch"),
      llvm::cl::init(false)};
  Option<std::string> wgmmaSchedule{
      *this, "wgmma-schedule",
      llvm::cl::desc("the wgmma forward's consumer schedule: auto "
                     "(default: by head dim and mask), pipelined or serial"),
      llvm::cl::init("auto")};
  Option<int64_t> wgmmaGroups{
      *this, "wgmma-groups",
      llvm::cl::desc("the wgmma forward's consumer warpgroups per block, 64 "
                     "query rows each: 1 to 3 (0: the pass default)"),
      llvm::cl::init(0)};
  Option<bool> wgmmaPersistent{
      *this, "wgmma-persistent",
      llvm::cl::desc("the wgmma forward's and dQ kernel's (D <= 128) grids "
                     "are persistent (one block per "
                     "SM drawing query blocks; false: one block each)"),
      llvm::cl::init(true)};
  Option<int64_t> gridSection{
      *this, "grid-section",
      llvm::cl::desc("forward grids: (batch, head) pairs whose query tiles "
                     "run interleaved, longest causal tiles first (0: the "
                     "pass default)"),
      llvm::cl::init(0)};
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU arch, sm_XX"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features, +ptxNN"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> cudaRoot{
      *this, "cuda-root",
      llvm::cl::desc("CUDA toolkit whose nvvm/libdevice provides f64 and "
                     "precise math (default: findCudaRoot())")};
};

/// The MMA generation of the tensor-core kernels: `requested` unless it is
/// "auto", then wgmma on sm_90a and mma-sync elsewhere.
std::string resolveTensorCoreGeneration(llvm::StringRef requested,
                                        llvm::StringRef chip);

/// The CUDA toolkit with nvvm/libdevice/libdevice.10.bc: $CUDA_ROOT,
/// $CUDA_HOME, $CUDA_PATH, then /usr/local/cuda; empty when none has it.
std::string findCudaRoot();

/// fa kernels -> tile loops -> tensor-core kernels for the f16/bf16
/// forwards they cover, gpu.launch per remaining parallel loop -> NVVM ->
/// PTX embedded in the host module, whose launches call the mgpu* runtime.
void buildGpuPipeline(mlir::OpPassManager &pm,
                      const GpuPipelineOptions &options);

/// Registers `fa-lower-to-cpu` and `fa-lower-to-gpu` for fa-opt.
void registerPipelines();
} // namespace fa

#endif // FA_CONVERSION_PIPELINES_H
