//===- GpuModulesToBinary.cpp - GPU modules to PTX, in parallel -----------===//
//
// Upstream's gpu-module-to-binary walks the modules one after another; a
// spec's kernels are independent LLVM modules, so they serialize at once
// here, then become gpu.binary ops in their original order.
//
//===----------------------------------------------------------------------===//

#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"

namespace fa {
#define GEN_PASS_DEF_FAGPUMODULESTOBINARY
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;

namespace {
struct GpuModulesToBinary
    : fa::impl::FAGpuModulesToBinaryBase<GpuModulesToBinary> {
  using FAGpuModulesToBinaryBase::FAGpuModulesToBinaryBase;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(top.getOps<gpu::GPUModuleOp>());
    // Built before the threads start, which only read it.
    SymbolTable table(top);
    gpu::TargetOptions options(toolkitPath, /*librariesToLink=*/{},
                               /*cmdOptions=*/{}, /*elfSection=*/{},
                               gpu::CompilationTarget::Assembly,
                               [&]() -> SymbolTable * { return &table; });
    std::vector<SmallVector<Attribute>> objects(modules.size());
    LogicalResult serialized = failableParallelForEachN(
        &getContext(), 0, modules.size(), [&](size_t i) -> LogicalResult {
          gpu::GPUModuleOp module = modules[i];
          ArrayAttr targets = module.getTargetsAttr();
          if (!targets || targets.empty())
            return module.emitError()
                   << "GPU module '" << module.getName() << "' has no target";
          for (Attribute target : targets) {
            auto serializer = dyn_cast<gpu::TargetAttrInterface>(target);
            if (!serializer)
              return module.emitError()
                     << "GPU module '" << module.getName() << "': target "
                     << target << " cannot serialize it";
            std::optional<SmallVector<char, 0>> ptx =
                serializer.serializeToObject(module, options);
            if (!ptx)
              return module.emitError() << "GPU module '" << module.getName()
                                        << "' failed to serialize to PTX";
            Attribute object = serializer.createObject(module, *ptx, options);
            if (!object)
              return module.emitError() << "GPU module '" << module.getName()
                                        << "': no object for target " << target;
            objects[i].push_back(object);
          }
          return success();
        });
    if (failed(serialized))
      return signalPassFailure();
    OpBuilder builder(&getContext());
    for (auto [module, moduleObjects] : llvm::zip(modules, objects)) {
      builder.setInsertionPointAfter(module);
      gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                            module.getOffloadingHandlerAttr(),
                            builder.getArrayAttr(moduleObjects));
      module.erase();
    }
  }
};
} // namespace
