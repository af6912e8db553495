//===- KernelTensorMaps.cpp - Tensor maps as grid-constant parameters -----===//
//
// TMA takes a tensor map's address, and the address must be in the param,
// const or global space. A kernel that takes the map by value and spills it
// to a stack slot would hand TMA a local address, so the parameter becomes
// a byval pointer marked nvvm.grid_constant: NVPTX keeps it in the param
// space and gives its generic address (cvta.param).
//
//===----------------------------------------------------------------------===//

#include "fa/Transforms/Passes.h"
#include "fa/Transforms/TensorCoreLimits.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace fa {
#define GEN_PASS_DEF_FAKERNELTENSORMAPS
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;

namespace {

bool isTensorMap(Type type) {
  auto st = dyn_cast<LLVM::LLVMStructType>(type);
  return st && st.isIdentified() &&
         st.getName() == fa::tensor_core::kTensorMapTypeName;
}

struct KernelTensorMaps
    : fa::impl::FAKernelTensorMapsBase<KernelTensorMaps> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<LLVM::LLVMFuncOp>())
      if (!fn.isExternal() && failed(rewrite(fn)))
        return signalPassFailure();
  }

  /// Makes each tensor-map parameter of `fn` a grid-constant byval pointer
  /// and its slot that pointer.
  LogicalResult rewrite(LLVM::LLVMFuncOp fn) {
    LLVM::LLVMFunctionType type = fn.getFunctionType();
    SmallVector<Type> params(type.getParams());
    Block &entry = fn.getBody().front();
    auto pointer = LLVM::LLVMPointerType::get(fn.getContext());
    bool changed = false;
    for (auto [i, param] : llvm::enumerate(params)) {
      if (!isTensorMap(param))
        continue;
      BlockArgument arg = entry.getArgument(i);
      // Each use stores the map into a stack slot that nothing else writes.
      SmallVector<std::pair<LLVM::StoreOp, LLVM::AllocaOp>> slots;
      for (Operation *user : arg.getUsers()) {
        auto store = dyn_cast<LLVM::StoreOp>(user);
        auto slot = store && store.getValue() == arg
                        ? store.getAddr().getDefiningOp<LLVM::AllocaOp>()
                        : LLVM::AllocaOp();
        if (!slot || llvm::any_of(slot->getUsers(), [&](Operation *op) {
              return op != store && isa<LLVM::StoreOp>(op);
            }))
          return fn.emitError("fa-kernel-tensor-maps: parameter ")
                 << i << " of " << fn.getSymName()
                 << " is a tensor map used other than by one store into a "
                    "stack slot";
        slots.emplace_back(store, slot);
      }
      arg.setType(pointer);
      for (auto [store, slot] : slots) {
        store.erase();
        slot.replaceAllUsesWith(arg);
        slot.erase();
      }
      fn.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(param));
      fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                    IntegerAttr::get(IntegerType::get(fn.getContext(), 64),
                                     fa::tensor_core::kTensorMapAlign));
      fn.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                    UnitAttr::get(fn.getContext()));
      params[i] = pointer;
      changed = true;
    }
    if (changed)
      fn.setFunctionType(LLVM::LLVMFunctionType::get(
          type.getReturnType(), params, type.isVarArg()));
    return success();
  }
};

} // namespace
