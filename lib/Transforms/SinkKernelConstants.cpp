//===- SinkKernelConstants.cpp - Constants back into named launches -------===//

#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"

namespace fa {
#define GEN_PASS_DEF_FASINKKERNELCONSTANTS
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;

namespace {
struct SinkKernelConstants
    : fa::impl::FASinkKernelConstantsBase<SinkKernelConstants> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::LaunchOp launch) {
      if (!launch.getFunction())
        return;
      // Every constant without operands: arith's, and the poison struct a
      // wgmma that overwrites its accumulator takes (as an argument, its
      // values were moved into the accumulator's registers before each
      // such wgmma, and between two groups' wgmmas those moves had ptxas
      // serialise them: C7513).
      if (failed(sinkOperationsIntoLaunchOp(launch, [](Operation *op) {
            return op->hasTrait<OpTrait::ConstantLike>() &&
                   op->getNumOperands() == 0;
          })))
        signalPassFailure();
    });
  }
};
} // namespace
