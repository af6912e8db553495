//===- DeviceWorkspace.cpp - Host workspaces to GPU memory ----------------===//

#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace fa {
#define GEN_PASS_DEF_FADEVICEWORKSPACE
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;

namespace {
struct DeviceWorkspace : fa::impl::FADeviceWorkspaceBase<DeviceWorkspace> {
  void runOnOperation() override {
    SmallVector<Operation *> allocations;
    getOperation().walk([&](Operation *op) {
      // Kernel bodies keep their own (per-thread) allocations.
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (isa<memref::AllocOp, memref::DeallocOp>(op))
        allocations.push_back(op);
    });
    // The runtime lowering takes the asynchronous forms: start a stream,
    // allocate or free on it, and wait for it right away.
    Type token = gpu::AsyncTokenType::get(&getContext());
    for (Operation *op : allocations) {
      ImplicitLocOpBuilder b(op->getLoc(), op);
      Value start = gpu::WaitOp::create(b, token, ValueRange{}).getAsyncToken();
      Value done;
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        auto device = gpu::AllocOp::create(
            b, alloc.getType(), token, ValueRange{start},
            alloc.getDynamicSizes(), alloc.getSymbolOperands(),
            /*hostShared=*/nullptr);
        alloc.replaceAllUsesWith(device.getMemref());
        done = device.getAsyncToken();
      } else {
        done = gpu::DeallocOp::create(b, token, ValueRange{start},
                                      cast<memref::DeallocOp>(op).getMemref())
                   .getAsyncToken();
      }
      gpu::WaitOp::create(b, Type(), ValueRange{done});
      op->erase();
    }
  }
};
} // namespace
