//===- fa-opt.cpp - The fa optimizer driver -------------------------------===//
//
// mlir-opt with the fa dialect and passes, plus the upstream dialects and
// passes the fa pipelines lower through.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Pipelines.h"
#include "fa/Dialect/FA/FADialect.h"
#include "fa/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

int main(int argc, char **argv) {
  // A verifier error in a hand-written spec should point at the line, not
  // dump the enclosing op in generic form; `--mlir-print-op-on-diagnostic`
  // still turns the dump back on.
  llvm::SmallVector<char *> args(argv, argv + argc);
  bool printOpChosen = llvm::any_of(args, [](llvm::StringRef arg) {
    return arg.contains("mlir-print-op-on-diagnostic");
  });
  static char quietDiagnostics[] = "--mlir-print-op-on-diagnostic=false";
  if (!printOpChosen)
    args.insert(args.begin() + 1, quietDiagnostics);

  mlir::registerAllPasses();
  fa::registerFAPasses();
  fa::registerPipelines();

  mlir::DialectRegistry registry;
  registry.insert<fa::FADialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR, then PTX.
  mlir::registerAllToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(static_cast<int>(args.size()), args.data(), "fa optimizer driver\n", registry));
}
