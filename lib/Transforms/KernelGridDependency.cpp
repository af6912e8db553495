//===- KernelGridDependency.cpp - Programmatic dependent launch at entry --===//
//
// Each kernel of an sm_90+ module waits for the kernel before it ahead of
// its first instruction, so that the runtime may launch it as a
// programmatic dependent; the module's marker tells the runtime so
// (GridDependency.h, Passes.td).
//
//===----------------------------------------------------------------------===//

#include "fa/Transforms/GridDependency.h"
#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace fa {
#define GEN_PASS_DEF_FAKERNELGRIDDEPENDENCY
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;

namespace {

/// The compute capability of an NVVM chip name ("sm_90a": 90), or 0.
int chipArch(StringRef chip) {
  int arch = 0;
  if (!chip.consume_front("sm_") ||
      chip.take_while(llvm::isDigit).getAsInteger(10, arch))
    return 0;
  return arch;
}

bool targetsGridDependency(gpu::GPUModuleOp module) {
  ArrayAttr targets = module.getTargetsAttr();
  return targets && llvm::any_of(targets, [](Attribute target) {
           auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target);
           return nvvm &&
                  chipArch(nvvm.getChip()) >= fa::kGridDependencyMinArch;
         });
}

struct KernelGridDependency
    : fa::impl::FAKernelGridDependencyBase<KernelGridDependency> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    if (!targetsGridDependency(module) ||
        module.lookupSymbol(fa::kGridDependencyMarker))
      return;
    StringRef kernelAttr = NVVM::NVVMDialect::getKernelFuncAttrName();
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      if (fn.isExternal() || !fn->hasAttr(kernelAttr))
        continue;
      // Inline PTX rather than nvvm.griddepcontrol: LLVM declares that
      // intrinsic as touching no memory, so nothing stops it moving a load
      // of the kernel before's output above the wait; the memory clobber
      // does.
      auto b = OpBuilder::atBlockBegin(&fn.getBody().front());
      LLVM::InlineAsmOp::create(
          b, fn.getLoc(), TypeRange(), ValueRange(), "griddepcontrol.wait;",
          "~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
    }
    auto b = OpBuilder::atBlockBegin(module.getBody());
    Type i32 = b.getI32Type();
    LLVM::GlobalOp::create(b, module.getLoc(), i32, /*isConstant=*/true,
                           LLVM::Linkage::External, fa::kGridDependencyMarker,
                           b.getI32IntegerAttr(1), /*alignment=*/4,
                           /*addrSpace=*/1);
  }
};

} // namespace
