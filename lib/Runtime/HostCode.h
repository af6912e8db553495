//===- HostCode.h - fa's host code as an object file, JIT-linked ---------===//
//
// The host side of a program (the CPU kernels, or the GPU launches' glue
// with the kernels' PTX or cubins inside) is compiled once to an object
// file, which the kernel cache keeps; a program links that object into a
// JIT of its own. A cache hit thus translates, optimises and generates no
// code: it links an object (bench/NOTES.md, seventeenth session).
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_HOSTCODE_H
#define FA_RUNTIME_HOSTCODE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace fa {

/// How emitHostObject makes an object.
struct HostObjectOptions {
  /// LLVM's optimisation level, 0-3.
  unsigned optLevel = 2;
  /// Code for this machine's CPU and its features (the CPU kernels, whose
  /// cache key names both), or for any CPU of the process's triple (the
  /// GPU glue and exports: the object may run on another machine).
  bool hostCpu = false;
  /// For HostCode::load: the global constructors and destructors become
  /// the functions `__fa_host_init` and `__fa_host_fini`, and each
  /// C-interface entry `_mlir_ciface_<name>` gets a packed form
  /// `__fa_packed_<name>(void **args)` (args[i] points at argument i, and
  /// past them at the result, if any). Without it (exports) the object
  /// keeps its constructors for the system's loader.
  bool forLoader = false;
};

/// The object file of a lowered module's host code. The code carries no
/// unwind tables: it never throws and is never unwound through, and a JIT
/// that registers .eh_frame leaves the process's unwinder pointing into
/// freed code once the program is gone (the heap corruption of issue 15).
llvm::Expected<std::string> emitHostObject(mlir::ModuleOp lowered,
                                           const HostObjectOptions &options);

/// An object made with `forLoader`, linked into a JIT of its own against
/// this process's symbols (and the mgpu* runtime of fa's CUDA driver when
/// `withGpuRuntime`), its constructors run. Destroying it runs its
/// destructors (the GPU glue unloads its CUDA modules), then frees it.
class HostCode {
public:
  using Packed = void (*)(void **);

  static llvm::Expected<std::unique_ptr<HostCode>> load(llvm::StringRef object,
                                                        bool withGpuRuntime);
  ~HostCode();

  /// The packed form of entry `_mlir_ciface_<name>`.
  llvm::Expected<Packed> packed(llvm::StringRef name);

private:
  HostCode() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*fini)() = nullptr;
};

} // namespace fa

#endif // FA_RUNTIME_HOSTCODE_H
