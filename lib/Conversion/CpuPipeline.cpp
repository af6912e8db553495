//===- CpuPipeline.cpp - fa kernels to LLVM for the host ------------------===//

#include "fa/Conversion/Pipelines.h"
#include "fa/Transforms/Passes.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void fa::buildCpuPipeline(OpPassManager &pm,
                          const CpuPipelineOptions &options) {
  FATileOptions tile;
  tile.blockM = options.blockM;
  tile.blockN = options.blockN;
  tile.entries = options.entries;
  tile.branchedTiles = options.branchedTiles;
  pm.addPass(createFATile(tile));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLoopInvariantCodeMotionPass());
  pm.addPass(createSCFToControlFlowPass());
  // bf16 conversions become integer ops so no host bf16 support is needed.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void fa::registerPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "fa-lower-to-cpu",
      "Lower fa kernels to tile loops and then to the LLVM dialect for the "
      "host CPU",
      buildCpuPipeline);
  PassPipelineRegistration<GpuPipelineOptions>(
      "fa-lower-to-gpu",
      "Lower fa kernels to tile loops, GPU kernels and PTX, with host code "
      "that launches them through the mgpu* runtime",
      buildGpuPipeline);
}
