//===- CudaDriver.h - The CUDA Driver API, loaded at first use --*- C++ -*-===//
//
// libcuda.so.1 is opened with dlopen the first time a GPU entry point needs
// it, so fa builds, imports and tests on machines without a GPU and says
// clearly why when a launch is asked for there.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_RUNTIME_CUDADRIVER_H
#define FA_LIB_RUNTIME_CUDADRIVER_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/Shared/ExecutorSymbolDef.h"

namespace fa::cuda {

/// Loads the driver, initialises it and makes device 0's primary context
/// current. Returns false with the reason in `error` when there is no usable
/// GPU.
bool ensureInitialized(std::string &error);

/// "sm_XY" for device 0 (after ensureInitialized).
std::string deviceArch();

/// The driver's CUDA version, e.g. "13000" (after ensureInitialized).
std::string driverVersion();

/// The shared memory a block of device 0 may use when its kernel opts in
/// (at least the 48 KiB every block has; after ensureInitialized).
int64_t maxSharedBytesPerBlock();

/// Seconds this thread has spent in the driver loading GPU modules (its JIT
/// of their PTX) since the last call.
double takeModuleLoadSeconds();

/// Takes the first error a generated host function's runtime calls hit on
/// this thread since the last call (empty when none).
std::string takeLaunchError();

/// Why a grid of (x, y, z) blocks cannot launch (CUDA's limits: x below
/// 2^31, y and z at most 65535, each at least 1), or "" when it can.
std::string gridLimitError(std::int64_t x, std::int64_t y, std::int64_t z);

/// The mgpu* functions that MLIR's GPU-to-LLVM lowering calls, implemented
/// on the dynamically loaded driver, for the JIT's symbol table.
llvm::orc::SymbolMap runtimeSymbols(llvm::orc::MangleAndInterner interner);

/// While set (on this thread), generated host code launches on the caller's
/// CUstream (0: the legacy default stream) and does not wait for it; unset
/// (nullopt), it creates a stream of its own and waits before returning.
class ScopedCallerStream {
public:
  explicit ScopedCallerStream(std::optional<std::uintptr_t> stream);
  ~ScopedCallerStream();
  ScopedCallerStream(const ScopedCallerStream &) = delete;
  ScopedCallerStream &operator=(const ScopedCallerStream &) = delete;

private:
  bool active;
};

/// Waits for `stream` (a caller's CUstream; nothing when unset).
void synchronize(std::optional<std::uintptr_t> stream);

/// While on, every launch is bracketed by CUDA events on its stream.
/// Returns whether it was on.
bool setKernelTiming(bool enabled);
/// The kernel time in milliseconds since the last call (waits for the timed
/// kernels to finish).
double takeKernelTimeMs();
/// See fa::workspacePeakBytes and fa::resetWorkspacePeak.
std::uint64_t workspacePeakBytes();
void resetWorkspacePeak();
/// The device's SMs; 0 where the driver does not say.
int multiprocessorCount();
/// See fa::releaseWorkspaceMemory.
void releaseWorkspaceMemory();

/// The tensor maps (CUtensorMap, 128 bytes) a thread encoded last, by what
/// they encode: the operand's address, element size, swizzle, box, sizes and
/// byte strides. A launch whose operands repeat a recent launch's copies
/// their maps instead of having the driver encode them again. A map is a
/// function of those fields alone, so an entry stays right when its buffer
/// is freed and another is allocated at its address.
class TensorMapCache {
public:
  static constexpr int kEntries = 16;
  static constexpr int kMapBytes = 128;
  using Key = std::array<std::int64_t, 12>;
  /// Copies the map encoded for `key` into `map`; false where none is kept.
  bool find(const Key &key, void *map) const;
  /// Keeps `map` for `key`, in place of the entry kept longest.
  void insert(const Key &key, const void *map);

private:
  struct Entry {
    alignas(64) unsigned char map[kMapBytes];
    Key key;
    bool used = false;
  };
  std::array<Entry, kEntries> entries;
  int next = 0;
};

/// Device memory for callers that hold host data (fa-run, tests).
void *allocate(std::size_t bytes, std::string &error);
void release(void *pointer);
bool copyToDevice(void *device, const void *host, std::size_t bytes,
                  std::string &error);
bool copyToHost(void *host, const void *device, std::size_t bytes,
                std::string &error);

} // namespace fa::cuda

#endif // FA_LIB_RUNTIME_CUDADRIVER_H
