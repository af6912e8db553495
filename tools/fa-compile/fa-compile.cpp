//===- fa-compile.cpp - Compile a spec's kernels ahead of time ------------===//
//
// fa-compile <spec> [--arch sm_90] [--dtype bf16] [--kernel NAME]
//            [--emit ptx] [-o FILE|-]
//
// Prints the PTX of every GPU kernel of a spec (no GPU needed), each module
// preceded by a `// fa-compile: <module>` line.
//
//===----------------------------------------------------------------------===//

#include "fa/Runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory faCompileCategory("fa-compile options");

static cl::opt<std::string> specPath(cl::cat(faCompileCategory), cl::Positional, cl::desc("<spec.mlir>"),
                                     cl::Required);
static cl::opt<std::string> arch(cl::cat(faCompileCategory), "arch", cl::desc("GPU arch, sm_XY"),
                                 cl::init("sm_90"));
static cl::opt<std::string> dtypeName(cl::cat(faCompileCategory), "dtype",
                                      cl::desc("f16, bf16, f32 or f64"));
static cl::opt<std::string> kernelName(
    cl::cat(faCompileCategory), "kernel", cl::desc("only this kernel's modules (default: all)"));
static cl::opt<std::string> emit(cl::cat(faCompileCategory), "emit", cl::desc("what to write: ptx"),
                                 cl::init("ptx"));
static cl::opt<std::string> outputPath(cl::cat(faCompileCategory), "o", cl::desc("output file"),
                                       cl::init("-"));

static int fail(const std::string &message) {
  errs() << "fa-compile: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(faCompileCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "fa-compile: compile an fa spec's kernels\n");
  if (emit != "ptx")
    return fail("--emit: unknown '" + emit + "'; expected ptx");
  if (!StringRef(arch).starts_with("sm_"))
    return fail("--arch: '" + arch + "' is not of the form sm_XY");
  fa::CompileOptions options;
  if (!dtypeName.empty() && !(options.dtype = fa::parseDType(dtypeName)))
    return fail("--dtype: unknown '" + dtypeName +
                "'; expected f16, bf16, f32 or f64");
  auto file = MemoryBuffer::getFile(specPath);
  if (!file)
    return fail("cannot read '" + specPath + "': " +
                file.getError().message());

  std::vector<fa::PtxModule> modules;
  std::string error;
  if (!fa::compileToPtx((*file)->getBuffer().str(), specPath, options, arch,
                        modules, error)) {
    errs() << error;
    return 1;
  }
  std::error_code ec;
  ToolOutputFile out(outputPath, ec, sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + outputPath + "': " + ec.message());
  bool wrote = false;
  for (const fa::PtxModule &module : modules) {
    // Modules are named <kernel>_<entry>_kernel[_N].
    if (!kernelName.empty() &&
        !StringRef(module.name).starts_with(kernelName + "_"))
      continue;
    out.os() << "// fa-compile: " << module.name << "\n" << module.ptx;
    wrote = true;
  }
  if (!wrote)
    return fail("no kernel named '" + kernelName + "' in " + specPath);
  out.keep();
  return 0;
}
