//===- CudaDriver.cpp - The CUDA Driver API, loaded at first use ----------===//

#include "CudaDriver.h"

#include "fa/Transforms/GridDependency.h"
#include "fa/Transforms/TensorCoreLimits.h"

#include "llvm/ADT/Twine.h"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace fa::cuda {
namespace {

/// The driver entry points fa uses, resolved with dlsym.
struct Driver {
#define FA_CUDA_FUNCTIONS(X)                                                   \
  X(cuInit, "cuInit")                                                          \
  X(cuDriverGetVersion, "cuDriverGetVersion")                                  \
  X(cuDeviceGetCount, "cuDeviceGetCount")                                      \
  X(cuDeviceGet, "cuDeviceGet")                                                \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                              \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                      \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                                        \
  X(cuCtxSetLimit, "cuCtxSetLimit")                                            \
  X(cuGetErrorString, "cuGetErrorString")                                      \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx")                                  \
  X(cuModuleUnload, "cuModuleUnload")                                          \
  X(cuModuleGetFunction, "cuModuleGetFunction")                                \
  X(cuModuleGetGlobal, "cuModuleGetGlobal_v2")                                 \
  X(cuLaunchKernel, "cuLaunchKernel")                                          \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                                  \
  X(cuStreamCreate, "cuStreamCreate")                                          \
  X(cuStreamDestroy, "cuStreamDestroy_v2")                                     \
  X(cuStreamSynchronize, "cuStreamSynchronize")                                \
  X(cuMemAlloc, "cuMemAlloc_v2")                                               \
  X(cuMemFree, "cuMemFree_v2")                                                 \
  X(cuMemAllocAsync, "cuMemAllocAsync")                                        \
  X(cuMemFreeAsync, "cuMemFreeAsync")                                          \
  X(cuMemPoolCreate, "cuMemPoolCreate")                                        \
  X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute")                            \
  X(cuMemPoolTrimTo, "cuMemPoolTrimTo")                                        \
  X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync")                        \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                           \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                                           \
  X(cuEventCreate, "cuEventCreate")                                            \
  X(cuEventRecord, "cuEventRecord")                                            \
  X(cuEventSynchronize, "cuEventSynchronize")                                  \
  X(cuEventElapsedTime, "cuEventElapsedTime")                                  \
  X(cuEventDestroy, "cuEventDestroy_v2")
#define FA_DECLARE(name, symbol) decltype(&::name) name = nullptr;
  FA_CUDA_FUNCTIONS(FA_DECLARE)
#undef FA_DECLARE

  /// Resolved apart: drivers older than CUDA 12 lack it, and only the
  /// Hopper kernels need it.
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled = nullptr;
  /// Also apart (CUDA 11.8 on): programmatic dependent launch needs it.
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;

  bool loaded = false;
  std::string failure; // why the driver is unusable, once known
  CUcontext context = nullptr;
  CUdevice device = 0;
};

Driver &driver() {
  static Driver d;
  return d;
}

/// Kernel timing: CUDA events around each launch while it is on, read back
/// (waiting for the stop events) when the time is taken.
struct KernelTiming {
  std::mutex mutex;
  bool enabled = false;
  std::vector<std::pair<CUevent, CUevent>> pending;
  double totalMs = 0;
};

KernelTiming &kernelTiming() {
  static KernelTiming t;
  return t;
}

/// Bytes of workspace fa holds (allocated, not yet freed, in host order):
/// it lives outside the caller's allocator, so memory reports add it.
struct WorkspaceUse {
  std::mutex mutex;
  std::map<CUdeviceptr, std::uint64_t> live;
  std::uint64_t current = 0, peak = 0;
};

WorkspaceUse &workspaceUse() {
  static WorkspaceUse w;
  return w;
}

/// The stream-ordered pool workspaces come from: fa's own, which keeps
/// freed memory for the next call. The device's default pool gives memory
/// back at every synchronisation (release threshold 0), and mapping it
/// again cost each backward called after a sync 0.2-0.4 ms (bench/NOTES.md,
/// eighteenth session). Null, and the default pool used, where the driver
/// refuses a pool of fa's own.
CUmemoryPool workspacePool() {
  static CUmemoryPool pool = [] {
    Driver &d = driver();
    CUmemPoolProps props = {};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = d.device;
    CUmemoryPool created = nullptr;
    if (d.cuMemPoolCreate(&created, &props) != CUDA_SUCCESS)
      return CUmemoryPool(nullptr);
    cuuint64_t keepAll = ~cuuint64_t(0);
    d.cuMemPoolSetAttribute(created, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                            &keepAll);
    return created;
  }();
  return pool;
}

/// One stream-ordered allocation from workspacePool(); when the device is
/// out of memory, the pool first gives back what no call holds, and the
/// allocation is tried once more.
CUresult allocateWorkspace(CUdeviceptr &pointer, std::uint64_t bytes,
                           CUstream stream) {
  Driver &d = driver();
  CUmemoryPool pool = workspacePool();
  if (!pool)
    return d.cuMemAllocAsync(&pointer, bytes, stream);
  CUresult result = d.cuMemAllocFromPoolAsync(&pointer, bytes, pool, stream);
  if (result != CUDA_ERROR_OUT_OF_MEMORY)
    return result;
  d.cuMemPoolTrimTo(pool, 0);
  return d.cuMemAllocFromPoolAsync(&pointer, bytes, pool, stream);
}

/// The stream the calling thread asked fa to launch on (ScopedCallerStream).
/// While set, the generated host code's streams are this one: it is neither
/// created, destroyed nor waited for, so the caller's work stays ordered
/// with fa's and the call returns once the kernels are queued.
struct CallerStream {
  bool set = false;
  CUstream stream = nullptr;
};
thread_local CallerStream callerStream;

bool isCallerStream(void *stream) {
  return callerStream.set && static_cast<CUstream>(stream) == callerStream.stream;
}

std::mutex &kernelRecordsMutex() {
  static std::mutex m;
  return m;
}
/// Fault injection for tests. Each injected fault is counted by an
/// environment variable: the process's first N chances to fail do.
/// - FA_INJECT_WORKSPACE_FAILURES: workspace allocations fail as out of
///   memory, so that a test sees what a real one does without filling the
///   GPU (torch's own allocations, larger, would fail first).
/// - FA_INJECT_LAUNCH_FAILURES: kernels launch with a block of 2048
///   threads, past every device's 1024, so that the driver itself refuses
///   them (a real CUDA_ERROR_INVALID_VALUE, which leaves the context
///   usable).
enum class InjectedFault { Workspace, Launch };

bool injectedFailure(InjectedFault fault) {
  auto count = [](const char *variable) {
    const char *value = std::getenv(variable);
    return value ? std::atol(value) : 0L;
  };
  static std::atomic<long> left[] = {{count("FA_INJECT_WORKSPACE_FAILURES")},
                                     {count("FA_INJECT_LAUNCH_FAILURES")}};
  return left[static_cast<int>(fault)].fetch_sub(1) > 0;
}

/// The first failure on this thread since it last took one: runtime calls
/// run on the thread of the host code that made them, so concurrent
/// compiles and launches each see their own.
std::string &pendingError() {
  thread_local std::string e;
  return e;
}
/// What fa knows of a loaded kernel: its name, for error messages, the
/// dynamic shared memory it may take (raised once, at the first launch
/// that needs more, instead of at every launch), and whether it launches
/// as a programmatic dependent of the kernel before it (decided once, when
/// it is looked up: programmaticLaunch).
struct KernelRecord {
  std::string name;
  CUmodule module = nullptr;
  int32_t sharedLimit = tensor_core::kStaticSharedBytes;
  bool dependent = false;
};
std::map<CUfunction, KernelRecord> &kernelRecords() {
  static std::map<CUfunction, KernelRecord> records;
  return records;
}

std::string describe(CUresult result) {
  const char *text = nullptr;
  if (driver().cuGetErrorString)
    driver().cuGetErrorString(result, &text);
  return std::to_string(static_cast<int>(result)) +
         (text ? std::string(" (") + text + ")" : std::string());
}

/// Records the first failure of a runtime call; later ones follow from it.
/// The context is a Twine: call sites on the launch path build no string
/// unless the call failed.
bool check(CUresult result, const char *call, const llvm::Twine &context) {
  if (result == CUDA_SUCCESS)
    return true;
  std::string where = context.str();
  if (pendingError().empty())
    pendingError() = std::string(call) + " failed" +
                     (where.empty() ? "" : " for " + where) + ": " +
                     describe(result);
  return false;
}

/// check() for a call on kernel `f`, named in the message as `what` and
/// the kernel's name, which is looked up only when the call failed.
/// Kernel `f`'s name, or "" where it was never looked up by name.
std::string kernelName(CUfunction f) {
  std::lock_guard<std::mutex> lock(kernelRecordsMutex());
  auto it = kernelRecords().find(f);
  return it != kernelRecords().end() ? it->second.name : std::string();
}

bool checkKernel(CUresult result, const char *call, CUfunction f,
                 const char *what = "kernel ") {
  if (result == CUDA_SUCCESS)
    return true;
  return check(result, call, what + kernelName(f));
}

bool load(std::string &error) {
  Driver &d = driver();
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char *why = dlerror();
    error = std::string("cannot load the CUDA driver (libcuda.so.1): ") +
            (why ? why : "unknown error");
    return false;
  }
#define FA_RESOLVE(name, symbol)                                               \
  d.name = reinterpret_cast<decltype(d.name)>(dlsym(handle, symbol));          \
  if (!d.name) {                                                               \
    error = "the CUDA driver lacks " symbol;                                   \
    return false;                                                              \
  }
  FA_CUDA_FUNCTIONS(FA_RESOLVE)
#undef FA_RESOLVE
  d.cuTensorMapEncodeTiled = reinterpret_cast<decltype(
      d.cuTensorMapEncodeTiled)>(dlsym(handle, "cuTensorMapEncodeTiled"));
  d.cuLaunchKernelEx = reinterpret_cast<decltype(d.cuLaunchKernelEx)>(
      dlsym(handle, "cuLaunchKernelEx"));
  CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) {
    error = "cuInit failed: " + describe(r);
    return false;
  }
  int count = 0;
  r = d.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    error = "no CUDA device is visible" +
            (r != CUDA_SUCCESS ? ": " + describe(r) : std::string());
    return false;
  }
  if ((r = d.cuDeviceGet(&d.device, 0)) != CUDA_SUCCESS ||
      (r = d.cuDevicePrimaryCtxRetain(&d.context, d.device)) !=
          CUDA_SUCCESS ||
      (r = d.cuCtxSetCurrent(d.context)) != CUDA_SUCCESS) {
    error = "cannot open device 0: " + describe(r);
    return false;
  }
  // Kernels keep per-thread tile scratch sized by the run-time head dim on
  // the stack (the default 1 KiB holds too little).
  if ((r = d.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 8192)) != CUDA_SUCCESS) {
    error = "cuCtxSetLimit(CU_LIMIT_STACK_SIZE) failed: " + describe(r);
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The mgpu* ABI of MLIR's GPU-to-LLVM lowering.
//===----------------------------------------------------------------------===//

/// Seconds this thread spent in the driver loading (JIT-compiling) modules.
thread_local double moduleLoadSeconds = 0;

extern "C" void *faMgpuModuleLoadJIT(void *ptx, int optLevel) {
  Driver &d = driver();
  auto start = std::chrono::steady_clock::now();
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(
                        std::clamp(optLevel, 0, 4)))};
  CUmodule module = nullptr;
  CUresult r = d.cuModuleLoadDataEx(&module, ptx, 3, options, values);
  moduleLoadSeconds += std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  check(r, "cuModuleLoadDataEx",
        std::string("generated PTX") + (log[0] ? std::string(": ") + log : ""));
  return module;
}

extern "C" void *faMgpuModuleLoad(void *data, size_t) {
  return faMgpuModuleLoadJIT(data, 4);
}

extern "C" void faMgpuModuleUnload(void *module) {
  {
    std::lock_guard<std::mutex> lock(kernelRecordsMutex());
    auto &records = kernelRecords();
    for (auto it = records.begin(); it != records.end();)
      it = it->second.module == module ? records.erase(it) : std::next(it);
  }
  if (module)
    check(driver().cuModuleUnload(static_cast<CUmodule>(module)),
          "cuModuleUnload", "");
}

/// Whether `module`'s kernels launch as programmatic dependents of the
/// kernel before them on their stream: they wait for it at entry (the
/// module holds GridDependency.h's marker), the driver has
/// cuLaunchKernelEx, and FA_PROGRAMMATIC_LAUNCH is not 0 (README).
static bool programmaticLaunch(CUmodule module) {
  static const bool enabled = [] {
    const char *value = std::getenv("FA_PROGRAMMATIC_LAUNCH");
    return !value || std::strcmp(value, "0") != 0;
  }();
  // Not through check(): a module without the marker is no failure.
  CUdeviceptr marker = 0;
  size_t bytes = 0;
  return enabled && driver().cuLaunchKernelEx &&
         driver().cuModuleGetGlobal(&marker, &bytes, module,
                                    kGridDependencyMarker) == CUDA_SUCCESS;
}

extern "C" void *faMgpuModuleGetFunction(void *module, const char *name) {
  CUfunction function = nullptr;
  if (!module)
    return nullptr; // the load already reported why
  if (check(driver().cuModuleGetFunction(&function,
                                         static_cast<CUmodule>(module), name),
            "cuModuleGetFunction", std::string("kernel ") + name)) {
    std::lock_guard<std::mutex> lock(kernelRecordsMutex());
    KernelRecord &record = kernelRecords()[function];
    // A handle of an unloaded module's kernel may come back for another.
    if (record.module != module)
      record = KernelRecord{name, static_cast<CUmodule>(module),
                            tensor_core::kStaticSharedBytes,
                            programmaticLaunch(static_cast<CUmodule>(module))};
  }
  return function;
}

/// What a launch of `f` reads of its record, under one lock: the dynamic
/// shared memory it may take already and whether it launches as a
/// programmatic dependent (a kernel fa never recorded: neither).
struct LaunchFacts {
  int32_t sharedLimit = tensor_core::kStaticSharedBytes;
  bool dependent = false;
};
static LaunchFacts launchFacts(CUfunction f) {
  std::lock_guard<std::mutex> lock(kernelRecordsMutex());
  auto it = kernelRecords().find(f);
  if (it == kernelRecords().end())
    return {};
  return {it->second.sharedLimit, it->second.dependent};
}

/// Lets `f` take `bytes` of dynamic shared memory and records it: a launch
/// calls it only above the recorded limit (launchFacts), so once per kernel
/// and size (the attribute stays set).
static bool raiseSharedLimit(CUfunction f, int32_t bytes) {
  if (!checkKernel(driver().cuFuncSetAttribute(
                       f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                       bytes),
                   "cuFuncSetAttribute", f))
    return false;
  std::lock_guard<std::mutex> lock(kernelRecordsMutex());
  // Only a kernel faMgpuModuleGetFunction recorded: a record made here
  // would outlive its module's unload.
  auto it = kernelRecords().find(f);
  if (it != kernelRecords().end())
    it->second.sharedLimit = std::max(it->second.sharedLimit, bytes);
  return true;
}

extern "C" void faMgpuLaunchKernel(void *function, intptr_t gridX,
                                   intptr_t gridY, intptr_t gridZ,
                                   intptr_t blockX, intptr_t blockY,
                                   intptr_t blockZ, int32_t smem, void *stream,
                                   void **params, void **extra, size_t) {
  // An earlier step of this call failed (a workspace not allocated, a
  // module not loaded): its kernels would run on memory nobody made, and
  // a fault there would poison the context for every later call.
  if (!function || !pendingError().empty())
    return;
  Driver &d = driver();
  auto f = static_cast<CUfunction>(function);
  // Refused here by name rather than by the driver's
  // CUDA_ERROR_INVALID_VALUE (or a silent cast to unsigned).
  if (std::string why = gridLimitError(gridX, gridY, gridZ); !why.empty()) {
    if (pendingError().empty())
      pendingError() = "cannot launch kernel " + kernelName(f) + ": " + why;
    return;
  }
  // Above 48 KiB of dynamic shared memory a kernel must opt in.
  LaunchFacts known = launchFacts(f);
  if (smem > known.sharedLimit && !raiseSharedLimit(f, smem))
    return;
  auto cuStream = static_cast<CUstream>(stream);
  KernelTiming &timing = kernelTiming();
  std::pair<CUevent, CUevent> events{nullptr, nullptr};
  {
    std::lock_guard<std::mutex> lock(timing.mutex);
    if (timing.enabled &&
        checkKernel(d.cuEventCreate(&events.first, CU_EVENT_DEFAULT),
                    "cuEventCreate", f, "timing kernel ") &&
        checkKernel(d.cuEventCreate(&events.second, CU_EVENT_DEFAULT),
                    "cuEventCreate", f, "timing kernel "))
      checkKernel(d.cuEventRecord(events.first, cuStream), "cuEventRecord", f,
                  "timing kernel ");
  }
  if (injectedFailure(InjectedFault::Launch))
    blockX = 2048;
  if (known.dependent) {
    CUlaunchAttribute dependent = {};
    dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    dependent.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {};
    config.gridDimX = gridX;
    config.gridDimY = gridY;
    config.gridDimZ = gridZ;
    config.blockDimX = blockX;
    config.blockDimY = blockY;
    config.blockDimZ = blockZ;
    config.sharedMemBytes = smem;
    config.hStream = cuStream;
    config.attrs = &dependent;
    config.numAttrs = 1;
    checkKernel(d.cuLaunchKernelEx(&config, f, params, extra),
                "cuLaunchKernelEx", f);
  } else {
    checkKernel(d.cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ,
                                 smem, cuStream, params, extra),
                "cuLaunchKernel", f);
  }
  if (events.second) {
    checkKernel(d.cuEventRecord(events.second, cuStream), "cuEventRecord", f,
                "timing kernel ");
    std::lock_guard<std::mutex> lock(timing.mutex);
    timing.pending.push_back(events);
  }
}

/// The tensor map of a [batch, heads, rows, columns] operand (strides in
/// bytes, columns contiguous) read in boxes of boxColumns x boxRows with
/// the given swizzle (32, 64 or 128 bytes), written to `map` (CUtensorMap's
/// 128 bytes). Returns 0, with the error recorded, when the driver refuses
/// it; the host code then launches nothing. `operand` names it: 0 q, 1 k,
/// 2 v, 3 do, 4 the f32 dQ accumulator. Four-byte elements are f32, which
/// TMA's reductions add as floats.
extern "C" int32_t faTensorMapEncode(void *map, uint64_t address,
                                     int64_t operand, int64_t elementBytes,
                                     int64_t swizzleBytes, int64_t boxColumns,
                                     int64_t boxRows, int64_t columns,
                                     int64_t rows, int64_t heads,
                                     int64_t batch, int64_t rowStride,
                                     int64_t headStride, int64_t batchStride) {
  static const char *const names[] = {"q", "k", "v", "do", "dq accumulator",
                                      "o"};
  const char *name = operand >= 0 && operand < int64_t(std::size(names))
                         ? names[operand]
                         : "operand";
  // Per thread: launches on one thread reuse their operands' maps, and
  // no lock sits on the launch path.
  thread_local TensorMapCache cache;
  TensorMapCache::Key key = {int64_t(address), elementBytes, swizzleBytes,
                             boxColumns,       boxRows,      columns,
                             rows,             heads,        batch,
                             rowStride,        headStride,   batchStride};
  if (cache.find(key, map))
    return 1;
  Driver &d = driver();
  if (!d.cuTensorMapEncodeTiled) {
    if (pendingError().empty())
      pendingError() = std::string("the CUDA driver lacks "
                                   "cuTensorMapEncodeTiled, which the Hopper "
                                   "kernels need for ") +
                       name + " (a CUDA 12 driver or newer has it)";
    return 0;
  }
  CUtensorMapDataType type = elementBytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                             : elementBytes == 4
                                 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
  CUtensorMapSwizzle swizzle = swizzleBytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                               : swizzleBytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                                    : CU_TENSOR_MAP_SWIZZLE_32B;
  cuuint64_t dims[4] = {cuuint64_t(columns), cuuint64_t(rows),
                        cuuint64_t(heads), cuuint64_t(batch)};
  cuuint64_t strides[3] = {cuuint64_t(rowStride), cuuint64_t(headStride),
                           cuuint64_t(batchStride)};
  cuuint32_t box[4] = {cuuint32_t(boxColumns), cuuint32_t(boxRows), 1, 1};
  cuuint32_t unit[4] = {1, 1, 1, 1};
  CUresult r = d.cuTensorMapEncodeTiled(
      static_cast<CUtensorMap *>(map), type, 4,
      reinterpret_cast<void *>(address), dims, strides, box, unit,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r == CUDA_SUCCESS)
    cache.insert(key, map);
  return check(r, "cuTensorMapEncodeTiled",
               llvm::Twine(name) + " of shape [" + llvm::Twine(batch) + ", " +
                   llvm::Twine(heads) + ", " + llvm::Twine(rows) + ", " +
                   llvm::Twine(columns) + "], byte strides [" +
                   llvm::Twine(batchStride) + ", " + llvm::Twine(headStride) +
                   ", " + llvm::Twine(rowStride) + ", " +
                   llvm::Twine(elementBytes) + "]")
             ? 1
             : 0;
}

/// The device's SMs, which the split-KV forward's host code sizes its grid
/// by; 0 (no split) where the driver does not say.
extern "C" int32_t faMultiprocessorCount() {
  static const int32_t count = [] {
    int value = 0;
    Driver &d = driver();
    if (!d.loaded ||
        d.cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                               d.device) != CUDA_SUCCESS)
      return 0;
    return int32_t(value);
  }();
  return count;
}

/// Reached by a program compiled without the scalar fallback kernels
/// (CompileOptions::scalarFallback) on operands that need them: the call
/// fails instead of leaving its outputs unwritten. Program::run sends such
/// operands to a program with them, so this is fa's bug, not the caller's.
extern "C" void faScalarFallbackMissing() {
  if (pendingError().empty())
    pendingError() = "internal error: operands the tensor-core kernels do "
                     "not take reached a program compiled without the "
                     "scalar fallback kernels";
}

extern "C" void *faMgpuStreamCreate() {
  if (callerStream.set)
    return callerStream.stream;
  CUstream stream = nullptr;
  check(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
        "cuStreamCreate", "");
  return stream;
}

extern "C" void faMgpuStreamDestroy(void *stream) {
  if (stream && !isCallerStream(stream))
    check(driver().cuStreamDestroy(static_cast<CUstream>(stream)),
          "cuStreamDestroy", "");
}

extern "C" void faMgpuStreamSynchronize(void *stream) {
  if (!stream || isCallerStream(stream))
    return;
  check(driver().cuStreamSynchronize(static_cast<CUstream>(stream)),
        "cuStreamSynchronize", "the launched kernels");
}

// Workspaces are stream-ordered, so that on a caller's stream they are
// neither freed under running kernels nor make the call wait.
extern "C" void *faMgpuMemAlloc(uint64_t bytes, void *stream, bool) {
  CUdeviceptr pointer = 0;
  if (bytes == 0)
    return nullptr;
  CUresult result =
      injectedFailure(InjectedFault::Workspace)
          ? CUDA_ERROR_OUT_OF_MEMORY
          : allocateWorkspace(pointer, bytes, static_cast<CUstream>(stream));
  if (!check(result, "cuMemAllocFromPoolAsync",
             llvm::Twine(bytes) + " bytes of workspace"))
    return nullptr;
  WorkspaceUse &use = workspaceUse();
  std::lock_guard<std::mutex> lock(use.mutex);
  use.live[pointer] = bytes;
  use.current += bytes;
  use.peak = std::max(use.peak, use.current);
  return reinterpret_cast<void *>(pointer);
}

extern "C" void faMgpuMemFree(void *pointer, void *stream) {
  if (!pointer)
    return;
  auto address = reinterpret_cast<CUdeviceptr>(pointer);
  check(driver().cuMemFreeAsync(address, static_cast<CUstream>(stream)),
        "cuMemFreeAsync", "");
  WorkspaceUse &use = workspaceUse();
  std::lock_guard<std::mutex> lock(use.mutex);
  auto it = use.live.find(address);
  if (it == use.live.end())
    return;
  use.current -= it->second;
  use.live.erase(it);
}

} // namespace

static_assert(sizeof(CUtensorMap) == TensorMapCache::kMapBytes,
              "TensorMapCache keeps whole CUtensorMaps");

bool TensorMapCache::find(const Key &key, void *map) const {
  for (const Entry &e : entries)
    if (e.used && e.key == key) {
      std::memcpy(map, e.map, kMapBytes);
      return true;
    }
  return false;
}

void TensorMapCache::insert(const Key &key, const void *map) {
  Entry &e = entries[next];
  next = (next + 1) % kEntries;
  std::memcpy(e.map, map, kMapBytes);
  e.key = key;
  e.used = true;
}

bool setKernelTiming(bool enabled) {
  KernelTiming &timing = kernelTiming();
  std::lock_guard<std::mutex> lock(timing.mutex);
  return std::exchange(timing.enabled, enabled);
}

std::uint64_t workspacePeakBytes() {
  WorkspaceUse &use = workspaceUse();
  std::lock_guard<std::mutex> lock(use.mutex);
  return use.peak;
}

void resetWorkspacePeak() {
  WorkspaceUse &use = workspaceUse();
  std::lock_guard<std::mutex> lock(use.mutex);
  use.peak = use.current;
}

int multiprocessorCount() { return faMultiprocessorCount(); }

void releaseWorkspaceMemory() {
  Driver &d = driver();
  if (!d.loaded || !d.context)
    return;
  if (CUmemoryPool pool = workspacePool())
    d.cuMemPoolTrimTo(pool, 0);
}

void synchronize(std::optional<std::uintptr_t> stream) {
  if (stream)
    check(driver().cuStreamSynchronize(reinterpret_cast<CUstream>(*stream)),
          "cuStreamSynchronize", "the caller's stream");
}

double takeKernelTimeMs() {
  Driver &d = driver();
  KernelTiming &timing = kernelTiming();
  std::lock_guard<std::mutex> lock(timing.mutex);
  for (auto [start, stop] : timing.pending) {
    float ms = 0;
    if (check(d.cuEventSynchronize(stop), "cuEventSynchronize",
              "kernel timing") &&
        check(d.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime",
              "kernel timing"))
      timing.totalMs += ms;
    d.cuEventDestroy(start);
    d.cuEventDestroy(stop);
  }
  timing.pending.clear();
  return std::exchange(timing.totalMs, 0.0);
}

ScopedCallerStream::ScopedCallerStream(std::optional<std::uintptr_t> stream)
    : active(stream.has_value()) {
  if (active)
    callerStream = {true, reinterpret_cast<CUstream>(*stream)};
}

ScopedCallerStream::~ScopedCallerStream() {
  if (active)
    callerStream = {};
}

bool ensureInitialized(std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    Driver &d = driver();
    d.loaded = load(d.failure);
  });
  Driver &d = driver();
  if (!d.loaded) {
    error = d.failure;
    return false;
  }
  // The context is current per thread: a thread of fa's own (parallel
  // compiles) or a caller's that never touched CUDA needs it made so.
  thread_local bool current = false;
  if (!current) {
    CUresult r = d.cuCtxSetCurrent(d.context);
    if (r != CUDA_SUCCESS) {
      error = "cannot make device 0's context current: " + describe(r);
      return false;
    }
    current = true;
  }
  return true;
}

// Both are fixed for the life of the process: asked once.
std::string deviceArch() {
  static const std::string arch = [] {
    Driver &d = driver();
    int major = 0, minor = 0;
    d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           d.device);
    d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           d.device);
    // sm_90's arch-specific target, which wgmma and setmaxnreg need; the
    // kernels built for it run only on 9.0 devices, which is this one.
    std::string suffix = major == 9 && minor == 0 ? "a" : "";
    return "sm_" + std::to_string(major) + std::to_string(minor) + suffix;
  }();
  return arch;
}

std::string driverVersion() {
  static const std::string version = [] {
    int v = 0;
    driver().cuDriverGetVersion(&v);
    return std::to_string(v);
  }();
  return version;
}

int64_t maxSharedBytesPerBlock() {
  static const int64_t bytes = [] {
    Driver &d = driver();
    int optIn = 0;
    if (d.cuDeviceGetAttribute(
            &optIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            d.device) != CUDA_SUCCESS)
      optIn = 0;
    return std::max<int64_t>(optIn, tensor_core::kStaticSharedBytes);
  }();
  return bytes;
}

double takeModuleLoadSeconds() {
  return std::exchange(moduleLoadSeconds, 0.0);
}

std::string gridLimitError(std::int64_t x, std::int64_t y, std::int64_t z) {
  constexpr std::int64_t kMaxX = 2147483647, kMaxYZ = 65535;
  if (x >= 1 && x <= kMaxX && y >= 1 && y <= kMaxYZ && z >= 1 &&
      z <= kMaxYZ)
    return "";
  return "a grid of (" + std::to_string(x) + ", " + std::to_string(y) +
         ", " + std::to_string(z) +
         ") blocks is past CUDA's limits (x at most 2147483647, y and z at "
         "most 65535)";
}

std::string takeLaunchError() {
  std::string error;
  std::swap(error, pendingError());
  return error;
}

llvm::orc::SymbolMap runtimeSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char *name, auto *function) {
    symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                               llvm::JITSymbolFlags::Exported};
  };
  add("mgpuModuleLoad", &faMgpuModuleLoad);
  add("mgpuModuleLoadJIT", &faMgpuModuleLoadJIT);
  add("mgpuModuleUnload", &faMgpuModuleUnload);
  add("mgpuModuleGetFunction", &faMgpuModuleGetFunction);
  add("mgpuLaunchKernel", &faMgpuLaunchKernel);
  add("mgpuStreamCreate", &faMgpuStreamCreate);
  add("mgpuStreamDestroy", &faMgpuStreamDestroy);
  add("mgpuStreamSynchronize", &faMgpuStreamSynchronize);
  add("mgpuMemAlloc", &faMgpuMemAlloc);
  add("mgpuMemFree", &faMgpuMemFree);
  add("faTensorMapEncode", &faTensorMapEncode);
  add("faMultiprocessorCount", &faMultiprocessorCount);
  add("faScalarFallbackMissing", &faScalarFallbackMissing);
  return symbols;
}

void *allocate(std::size_t bytes, std::string &error) {
  if (!ensureInitialized(error))
    return nullptr;
  CUdeviceptr pointer = 0;
  CUresult r = driver().cuMemAlloc(&pointer, bytes == 0 ? 1 : bytes);
  if (r != CUDA_SUCCESS) {
    error = "cuMemAlloc of " + std::to_string(bytes) +
            " bytes failed: " + describe(r);
    return nullptr;
  }
  return reinterpret_cast<void *>(pointer);
}

void release(void *pointer) {
  if (pointer && driver().loaded)
    driver().cuMemFree(reinterpret_cast<CUdeviceptr>(pointer));
}

bool copyToDevice(void *device, const void *host, std::size_t bytes,
                  std::string &error) {
  CUresult r = driver().cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(device),
                                     host, bytes);
  if (r != CUDA_SUCCESS)
    error = "cuMemcpyHtoD failed: " + describe(r);
  return r == CUDA_SUCCESS;
}

bool copyToHost(void *host, const void *device, std::size_t bytes,
                std::string &error) {
  CUresult r = driver().cuMemcpyDtoH(
      host, reinterpret_cast<CUdeviceptr>(device), bytes);
  if (r != CUDA_SUCCESS)
    error = "cuMemcpyDtoH failed: " + describe(r);
  return r == CUDA_SUCCESS;
}

} // namespace fa::cuda
