//===- fa-compile.cpp - Compile a spec's kernels ahead of time ------------===//
//
// fa-compile <spec> [--arch sm_90] [--dtype bf16] [--kernel NAME]
//            [--emit ptx|export] [-o FILE|DIR|-]
//
// --emit ptx (the default for `-o -` and `-o FILE.ptx`) prints the PTX of
// every GPU kernel of a spec (no GPU needed), each module preceded by a
// `// fa-compile: <module>` line.
//
// --emit export (the default for any other -o) writes into directory DIR
// everything a C program needs to run the spec's entry points without MLIR:
// <spec>.ptx, one <module>.cubin per kernel module when ptxas is on PATH,
// <spec>.o (the host code that launches the kernels), <spec>.h (its entry
// points), and fa_export.h / fa_export_runtime.c (the Driver API runtime the
// host code calls).
//
//===----------------------------------------------------------------------===//

#include "Ptxas.h"
#include "fa/Runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <utility>

using namespace llvm;

/// fa_export.h and fa_export_runtime.c (lib/Export), embedded at build time.
static const std::pair<const char *, const char *> exportRuntimeFiles[] = {
#include "ExportRuntime.inc"
};

static cl::OptionCategory faCompileCategory("fa-compile options");

static cl::opt<std::string> specPath(cl::cat(faCompileCategory), cl::Positional, cl::desc("<spec.mlir>"),
                                     cl::Required);
static cl::opt<std::string> arch(cl::cat(faCompileCategory), "arch", cl::desc("GPU arch, sm_XY"),
                                 cl::init("sm_90"));
static cl::opt<std::string> dtypeName(cl::cat(faCompileCategory), "dtype",
                                      cl::desc("f16, bf16, f32 or f64"));
static cl::opt<std::string> kernelName(
    cl::cat(faCompileCategory), "kernel", cl::desc("only this kernel's modules (default: all)"));
static cl::opt<std::string> emit(
    cl::cat(faCompileCategory), "emit",
    cl::desc("what to write: ptx (to a file) or export (into a directory); "
             "default: ptx for -o - and *.ptx, else export"));
static cl::opt<bool> allowTf32(
    cl::cat(faCompileCategory), "allow-tf32",
    cl::desc("f32: one tf32 MMA per product (10-bit mantissa) instead of "
             "three"),
    cl::init(false));
static cl::opt<bool>
    deterministic(cl::cat(faCompileCategory), "deterministic",
                  cl::desc("backward: the same bits from run to run (overrides "
                           "--dq-atomics)"),
                  cl::init(false));
static cl::opt<bool> dqAtomics(
    cl::cat(faCompileCategory), "dq-atomics",
    cl::desc("the wgmma backward's dK/dV kernel adds dQ by f32 TMA "
             "reduce-adds (D up to 128; not deterministic; on by default); "
             "--dq-atomics=false: dQ's own kernel"),
    cl::init(true));
static cl::opt<bool> splitKv(
    cl::cat(faCompileCategory), "split-kv",
    cl::desc("forwards carry the split-KV kernels for decode shapes (few "
             "query blocks, many keys); on by default"),
    cl::init(true));
static cl::opt<bool> scalarFallback(
    cl::cat(faCompileCategory), "scalar-fallback",
    cl::desc("--emit ptx: the scalar loops beside the tensor-core kernels "
             "of a fixed head dim, for layouts they do not take (exports "
             "always carry them; the JIT compiles them when such a layout "
             "comes); on by default"),
    cl::init(true));
static cl::opt<bool> branchedTiles(
    cl::cat(faCompileCategory), "branched-tiles",
    cl::desc("the forwards and the wgmma backward walk each phase's tiles "
             "in one loop, masking the edge tiles under a branch"),
    cl::init(false));
static cl::opt<bool> wgmmaPersistent(
    cl::cat(faCompileCategory), "wgmma-persistent",
    cl::desc("the wgmma forward's and dQ kernel's (D <= 128) grids are "
             "persistent: one block per SM "
             "drawing query blocks (default; false: one block each)"),
    cl::init(true));
static cl::opt<std::string> outputPath(cl::cat(faCompileCategory), "o",
                                       cl::desc("output file or directory"),
                                       cl::init("-"));

static int fail(const std::string &message) {
  errs() << "fa-compile: " << message << "\n";
  return 1;
}

/// Writes `contents` to `dir`/`name`; false (with a message) on failure.
static bool writeFile(StringRef dir, StringRef name, StringRef contents) {
  SmallString<256> path(dir);
  sys::path::append(path, name);
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (!ec) {
    os << contents;
    os.close();
    ec = os.error();
  }
  if (ec)
    errs() << "fa-compile: cannot write '" << path << "': " << ec.message()
           << "\n";
  return !ec;
}

/// Writes the modules of `kernel` (every one when empty) as PTX text, each
/// after a "// fa-compile: <module>" line; returns how many it wrote.
static unsigned printModules(raw_ostream &os,
                             ArrayRef<fa::PtxModule> modules,
                             StringRef kernel = "") {
  unsigned written = 0;
  for (const fa::PtxModule &module : modules) {
    // Modules are named <kernel>_<entry>_kernel[_N].
    if (!kernel.empty() &&
        !StringRef(module.name).starts_with((kernel + "_").str()))
      continue;
    os << "// fa-compile: " << module.name << "\n" << module.ptx;
    ++written;
  }
  return written;
}

static bool isCIdentifier(StringRef name) {
  return !name.empty() && !isDigit(name.front()) &&
         all_of(name, [](char c) { return isAlnum(c) || c == '_'; });
}

/// The C header of an export: one declaration of each entry point's C
/// interface and a wrapper returning the runtime's status.
static std::string exportHeader(StringRef stem, const fa::ExportedSpec &spec) {
  std::string text;
  raw_string_ostream os(text);
  // writeExport made `stem` a C identifier, so the guard is one too.
  std::string guard = "FA_EXPORT_" + stem.upper() + "_H";
  os << "/* " << stem << ".h - generated by fa-compile from " << specPath
     << " for " << arch << ". */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"fa_export.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n"
     << "#endif\n";
  for (const fa::ExportedEntry &entry : spec.entries) {
    os << "\n/* " << entry.kernel << " " << entry.entry << ":";
    std::string params;
    std::string args;
    for (size_t i = 0; i < entry.argNames.size(); ++i) {
      const std::vector<int64_t> &sizes = entry.argSizes[i];
      os << "\n *   " << entry.argNames[i]
         << (i < entry.numInputs ? " " : " (output) ")
         << fa::dtypeName(entry.argTypes[i]) << " [";
      for (size_t d = 0; d < sizes.size(); ++d)
        os << (d ? ", " : "") << (sizes[d] < 0 ? "?" : std::to_string(sizes[d]));
      os << "]";
      params += (i ? ", fa_tensor" : "fa_tensor") +
                std::to_string(sizes.size()) + " *" + entry.argNames[i];
      args += (i ? ", " : "") + entry.argNames[i];
    }
    std::string wrapper = "fa_" + entry.kernel + "_" + entry.entry;
    os << "\n * Device memory, unit stride on the last dimension; shapes are "
          "checked\n * against the spec first (equal names, equal sizes). "
          "Launches on a stream\n * of its own and waits for it; returns 0, "
          "or -1 with fa_export_last_error(). */\n"
       << "void " << entry.symbol << "(" << params << ");\n"
       << "static inline int " << wrapper << "(" << params << ") {\n";
    for (size_t i = 0; i < entry.argNames.size(); ++i) {
      os << "  static const int64_t " << entry.argNames[i] << "_fixed[] = {";
      for (size_t d = 0; d < entry.argSizes[i].size(); ++d)
        os << (d ? ", " : "") << entry.argSizes[i][d];
      os << "};\n";
    }
    os << "  const fa_export_arg args[] = {\n";
    for (size_t i = 0; i < entry.argNames.size(); ++i) {
      const std::string &name = entry.argNames[i];
      os << "      {\"" << name << "\", " << name << ", " << name << " ? "
         << name << "->data : 0, " << entry.argSizes[i].size() << ", " << name
         << " ? " << name << "->sizes : 0, " << name << " ? " << name
         << "->strides : 0, \"" << entry.argDims[i] << "\", " << name
         << "_fixed},\n";
    }
    os << "  };\n  if (fa_export_check_args(\"" << wrapper << "\", args, "
       << entry.argNames.size() << "))\n    return -1;\n  " << entry.symbol
       << "(" << args << ");\n  return fa_export_status();\n}\n";
  }
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return text;
}

/// Writes the export of `spec` into directory `dir`.
static int writeExport(StringRef dir, const fa::ExportedSpec &spec) {
  for (const fa::ExportedEntry &entry : spec.entries)
    if (!isCIdentifier(entry.kernel))
      return fail("kernel '" + entry.kernel +
                  "' is not a C identifier; rename it to export it");
  if (std::error_code ec = sys::fs::create_directories(dir))
    return fail("cannot create '" + dir.str() + "': " + ec.message());
  std::string stem = sys::path::stem(specPath).str();
  if (!isCIdentifier(stem))
    stem = "spec";
  std::string ptx;
  raw_string_ostream ptxStream(ptx);
  printModules(ptxStream, spec.modules);
  if (!writeFile(dir, stem + ".ptx", ptx) ||
      !writeFile(dir, stem + ".o", spec.hostObject) ||
      !writeFile(dir, stem + ".h", exportHeader(stem, spec)))
    return 1;
  for (auto [name, contents] : exportRuntimeFiles)
    if (!writeFile(dir, name, contents))
      return 1;
  // Cubins, for users who load them themselves; the host object JIT-loads
  // its embedded PTX, which also runs on newer GPUs.
  std::string ptxas = fa::findPtxas();
  if (ptxas.empty()) {
    outs() << "fa-compile: no ptxas (FA_PTXAS, the CUDA toolkit, PATH): no "
              "cubins written\n";
    return 0;
  }
  for (const fa::PtxModule &module : spec.modules) {
    std::string cubin, error;
    if (!fa::assemblePtx(ptxas, arch, module.name, module.ptx, cubin, error))
      return fail(error);
    if (!writeFile(dir, module.name + ".cubin", cubin))
      return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(faCompileCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "fa-compile: compile an fa spec's kernels\n");
  std::string what = emit;
  if (what.empty())
    what = outputPath == "-" || StringRef(outputPath).ends_with(".ptx")
               ? "ptx"
               : "export";
  if (what != "ptx" && what != "export")
    return fail("--emit: unknown '" + what + "'; expected ptx or export");
  if (what == "export" && outputPath == "-")
    return fail("--emit export writes a directory: give it with -o DIR");
  if (!StringRef(arch).starts_with("sm_"))
    return fail("--arch: '" + arch + "' is not of the form sm_XY");
  fa::CompileOptions options;
  if (!dtypeName.empty() && !(options.dtype = fa::parseDType(dtypeName)))
    return fail("--dtype: unknown '" + dtypeName +
                "'; expected f16, bf16, f32 or f64");
  options.allowTf32 = allowTf32;
  options.deterministic = deterministic;
  options.dqAtomics = dqAtomics;
  options.splitKv = splitKv;
  options.scalarFallback = scalarFallback;
  options.branchedTiles = branchedTiles;
  options.wgmmaPersistent = wgmmaPersistent;
  auto file = MemoryBuffer::getFile(specPath);
  if (!file)
    return fail("cannot read '" + specPath + "': " +
                file.getError().message());

  std::string error;
  if (what == "export") {
    if (!kernelName.empty())
      return fail("--kernel: an export holds every kernel of the spec");
    fa::ExportedSpec spec;
    if (!fa::compileForExport((*file)->getBuffer().str(), specPath, options,
                              arch, spec, error)) {
      errs() << error;
      return 1;
    }
    return writeExport(outputPath, spec);
  }

  std::vector<fa::PtxModule> modules;
  if (!fa::compileToPtx((*file)->getBuffer().str(), specPath, options, arch,
                        modules, error)) {
    errs() << error;
    return 1;
  }
  std::error_code ec;
  ToolOutputFile out(outputPath, ec, sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + outputPath + "': " + ec.message());
  if (!printModules(out.os(), modules, kernelName))
    return fail("no kernel named '" + kernelName + "' in " + specPath);
  out.keep();
  return 0;
}
