//===- GpuPipeline.cpp - fa kernels to PTX and host launches --------------===//
//
// The first GPU path: every independent iteration of a tiled entry (a query
// tile of one head, a key tile of one kv head, ...) becomes one GPU thread
// block running the tile loops. Correct for every variant; the tensor-core
// mapping replaces the body of these kernels later.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Pipelines.h"
#include "fa/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir;

std::string fa::findCudaRoot() {
  SmallVector<std::string> candidates;
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(var))
      candidates.push_back(value);
  candidates.push_back("/usr/local/cuda");
  for (const std::string &root : candidates) {
    SmallString<128> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice",
                            "libdevice.10.bc");
    if (llvm::sys::fs::exists(libdevice))
      return root;
  }
  return "";
}

std::string fa::resolveTensorCoreGeneration(StringRef requested,
                                            StringRef chip) {
  if (requested != "auto")
    return requested.str();
  return chip == "sm_90a" ? "wgmma" : "mma-sync";
}

void fa::buildGpuPipeline(OpPassManager &pm,
                          const GpuPipelineOptions &options) {
  FATileOptions tile;
  tile.blockM = options.blockM;
  tile.blockN = options.blockN;
  tile.hoistScratch = false;
  tile.entries = options.entries;
  tile.branchedTiles = options.branchedTiles;
  pm.addPass(createFATile(tile));
  // Forwards and backwards of the head dims it supports: tensor-core
  // kernels (tf32 for f32).
  FAGpuTensorCoreOptions tensorCore;
  if (options.tensorCoreBlockN > 0) {
    tensorCore.blockN = options.tensorCoreBlockN;
    tensorCore.wgmmaBlockN = options.tensorCoreBlockN;
  }
  if (options.tensorCoreWarps > 0)
    tensorCore.forwardWarps = options.tensorCoreWarps;
  tensorCore.allowTf32 = options.allowTf32;
  tensorCore.deterministic = options.deterministic;
  tensorCore.dqAtomics = options.dqAtomics;
  tensorCore.splitKv = options.splitKv;
  tensorCore.scalarFallback = options.scalarFallback;
  if (options.tensorCoreSharedBytes > 0)
    tensorCore.sharedBytes = options.tensorCoreSharedBytes;
  tensorCore.generation = resolveTensorCoreGeneration(
      options.tensorCoreGeneration, options.chip);
  // The stages are the forward's, on whichever generation runs it.
  if (options.tensorCoreKvStages > 0) {
    if (tensorCore.generation == "wgmma")
      tensorCore.wgmmaStages = options.tensorCoreKvStages;
    else
      tensorCore.kvStages = options.tensorCoreKvStages;
  }
  tensorCore.wgmmaSchedule = options.wgmmaSchedule;
  tensorCore.branchedTiles = options.branchedTiles;
  if (options.wgmmaGroups > 0)
    tensorCore.wgmmaGroups = options.wgmmaGroups;
  tensorCore.gridSection = options.gridSection;
  tensorCore.wgmmaPersistent = options.wgmmaPersistent;
  pm.addPass(createFAGpuTensorCore(tensorCore));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // One thread block per iteration of each parallel loop.
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addNestedPass<func::FuncOp>(createFADeviceWorkspace());
  pm.addNestedPass<func::FuncOp>(createFASinkKernelConstants());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass()); // from expand-strided-metadata
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Kernels: NVVM, with math from libdevice.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // NVVM ops that lower to inline PTX (the mbarrier waits), TMA's tensor
  // maps as grid-constant parameters, the register count at entry that
  // setmaxnreg needs, and each kernel a programmatic dependent of the one
  // before (sm_90+).
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(fa::createFAKernelTensorMaps());
  kernels.addPass(fa::createFAKernelRegisterBudget());
  kernels.addPass(fa::createFAKernelGridDependency());

  // Host: launches through the mgpu* runtime; kernels to embedded PTX.
  pm.addPass(createGpuToLLVMConversionPass());
  // PTX text, every module at once; ptxas or the driver assembles it.
  fa::FAGpuModulesToBinaryOptions binary;
  binary.toolkitPath =
      options.cudaRoot.empty() ? findCudaRoot() : std::string(options.cudaRoot);
  pm.addPass(fa::createFAGpuModulesToBinary(binary));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}
