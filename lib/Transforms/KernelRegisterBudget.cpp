//===- KernelRegisterBudget.cpp - Register count at entry for setmaxnreg --===//
//
// ptxas moves registers between warpgroups at a setmaxnreg only when it
// knows how many each thread holds at the kernel's entry. `.maxntid` bounds
// that count without fixing it; `.minnctapersm 1` beside it fixes it at the
// register file over the block's threads, which is what the consumers'
// setmaxnreg amounts assume (TensorCoreLimits.h).
//
//===----------------------------------------------------------------------===//

#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace fa {
#define GEN_PASS_DEF_FAKERNELREGISTERBUDGET
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;

namespace {

struct KernelRegisterBudget
    : fa::impl::FAKernelRegisterBudgetBase<KernelRegisterBudget> {
  void runOnOperation() override {
    StringRef minimum = NVVM::NVVMDialect::getMinctasmAttrName();
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      if (fn.isExternal() || fn->hasAttr(minimum))
        continue;
      bool movesRegisters = fn.walk([](NVVM::SetMaxRegisterOp) {
                                return WalkResult::interrupt();
                              }).wasInterrupted();
      if (movesRegisters)
        fn->setAttr(minimum,
                    IntegerAttr::get(IntegerType::get(fn.getContext(), 32), 1));
    }
  }
};

} // namespace
