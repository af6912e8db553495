//===- SpecializeElementType.cpp - Re-type fa kernels ---------------------===//

#include "fa/Dialect/FA/FAOps.h"
#include "fa/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace fa {
#define GEN_PASS_DEF_FASPECIALIZEELEMENTTYPE
#include "fa/Transforms/Passes.h.inc"
} // namespace fa

using namespace mlir;
using namespace fa;

namespace {
struct SpecializeElementType
    : fa::impl::FASpecializeElementTypeBase<SpecializeElementType> {
  using Base::Base;

  // The option is checked once, when the pipeline is built: it is a
  // command-line error, not a property of any op.
  LogicalResult initialize(MLIRContext *context) override {
    element = parseElementTypeName(context, elementType);
    if (!element)
      return emitError(UnknownLoc::get(context))
             << "fa-specialize-element-type: unknown element-type '"
             << elementType << "'; expected f16, bf16, f32 or f64";
    return success();
  }

  void runOnOperation() override {
    Type accumulator = getAccumulatorType(element);
    auto retype = [&](Value value) {
      auto type = cast<RankedTensorType>(value.getType());
      // Integer operands (key_lengths) keep their type.
      if (!isa<FloatType>(type.getElementType()))
        return;
      value.setType(type.clone(isAccumulatorTyped(value) ? accumulator
                                                         : element));
    };
    getOperation().walk([&](KernelOp kernel) {
      for (func::FuncOp fn : kernel.getOps<func::FuncOp>()) {
        // The kernel verifier guarantees args -> compute op -> return, so
        // re-typing the arguments and the op's results re-types everything.
        Operation *compute = KernelOp::getComputeOp(fn);
        for (BlockArgument arg : fn.getArguments())
          retype(arg);
        for (Value result : compute->getResults())
          retype(result);
        fn.setType(FunctionType::get(&getContext(),
                                     fn.getBody().getArgumentTypes(),
                                     compute->getResultTypes()));
      }
    });
  }

private:
  Type element;
};
} // namespace
