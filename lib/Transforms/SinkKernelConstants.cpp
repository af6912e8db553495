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
      if (failed(sinkOperationsIntoLaunchOp(launch, [](Operation *op) {
            return isa<arith::ConstantOp>(op);
          })))
        signalPassFailure();
    });
  }
};
} // namespace
