//===- Runtime.h - fa's public C++ API --------------------------*- C++ -*-===//
//
// Compile a spec for a target and run its kernels on caller-owned buffers.
// Only the standard library appears here: the Python module and exported
// kernels include this header without MLIR's.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_H
#define FA_RUNTIME_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fa {

/// Element types of tensors: the floating types fa computes in, and I32
/// for index operands (key_lengths).
enum class DType { F16, BF16, F32, F64, I32 };

/// "f16", "bf16", "f32", "f64", "i32".
const char *dtypeName(DType dtype);
std::optional<DType> parseDType(const std::string &name);
std::size_t dtypeSize(DType dtype);
/// The type of lse, sinks and dsinks for inputs of `dtype`.
DType accumulatorDType(DType dtype);

enum class Target { CPU, GPU, Auto };

/// A caller-owned strided tensor; sizes and strides count elements.
struct Tensor {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;

  /// A row-major (contiguous) view of `data`.
  static Tensor contiguous(void *data, DType dtype,
                           std::vector<int64_t> sizes);
};

enum class Entry { Forward, Backward };

/// Why Program::run failed: its arguments (the caller's to mend), or what
/// came after they were checked: the device and its driver (a refused
/// launch, memory that could not be had), or compiling for it.
enum class RunFailure { Arguments, Device };

/// What a named kernel of a spec computes, read from the spec.
struct KernelInfo {
  std::string name;
  bool softmaxMatmul = false;
  bool hasBackward = false;
  bool causal = false;
  std::optional<int64_t> window;
  int64_t sinkTokens = 0;
  bool learnableSinks = false;
  /// fa.attention takes key_lengths (one key count per batch entry).
  bool keyLengths = false;
  /// fa.attention takes a block_table: k and v are pages.
  bool blockTable = false;
  /// fa.attention takes query_starts and key_starts: q, k and v hold
  /// packed sequences of different lengths.
  bool packedSequences = false;
  /// fa.attention takes `append`: new keys and values it writes into the
  /// caches (k and v) in place.
  bool appends = false;
  std::optional<double> scale;
  /// Forward argument names in call order and their sizes (-1: dynamic).
  std::vector<std::string> argNames;
  std::vector<std::vector<int64_t>> argSizes;
};

struct CompileOptions {
  /// Element type to specialise the spec to; the spec's own when unset.
  std::optional<DType> dtype;
  Target target = Target::Auto;
  /// Tile sizes of the scalar tile loops; 0 takes the target's default.
  int64_t blockM = 0;
  int64_t blockN = 0;
  /// The tensor-core kernels' config (GPU, f16/bf16): keys per shared-memory
  /// tile and warps per forward block (4 or 8); 0 takes the default, or the
  /// autotuner's choice.
  int64_t mmaBlockN = 0;
  int64_t mmaWarps = 0;
  /// Shared memory the tensor-core kernels' tiles may use (0: the 48 KiB
  /// every block has, or the autotuner's choice; more is dynamic shared
  /// memory, which lets wider tiles take the tensor cores, up to what the
  /// GPU offers a block).
  int64_t mmaSharedBytes = 0;
  /// K/V tiles of the tensor-core forward in shared memory at once (0: 1,
  /// or the autotuner's choice; 2 double buffers them, loading the next
  /// tile while this one computes). The wgmma forward takes 1 to 3 (0: 2
  /// where they fit).
  int64_t mmaKvStages = 0;
  /// The wgmma forward's consumer schedule: "pipelined" (tile t's softmax
  /// under tile t - 1's P V, the consumers taking turns), "serial" (each
  /// tile's softmax between its two GEMMs), or "auto" (the compiler's
  /// choice by head dim and mask).
  std::string wgmmaSchedule = "auto";
  /// The tensor-core forwards and the wgmma backward (and fa-tile's scalar
  /// forward) walk each phase's tiles in one loop, masking the edge tiles
  /// under a uniform branch, instead of a loop each for the leading masked,
  /// unmasked and trailing masked tiles: about half the kernels' code and
  /// ptxas time.
  bool branchedTiles = false;
  /// The wgmma forward's consumer warpgroups per block (64 query rows
  /// each), 1 to 3; 0: the compiler's choice.
  int64_t wgmmaGroups = 0;
  /// Forward grids: (batch, head) pairs whose query tiles run interleaved,
  /// the longest causal tiles first; 0: the compiler's choice.
  int64_t gridSection = 0;
  /// The wgmma forward's and dQ kernel's (D <= 128) grids are persistent:
  /// one block per SM, each drawing
  /// query blocks from a counter (false: one block per query block).
  bool wgmmaPersistent = true;
  /// The MMA generation of the tensor-core kernels: "auto" (wgmma
  /// forwards on sm_90a, mma.sync elsewhere), "mma-sync" or "wgmma".
  std::string mmaGeneration = "auto";
  /// f32 on the GPU: the tensor cores take tf32 (10-bit mantissa) inputs.
  /// Off, each product is three tf32 MMAs on hi/lo halves of the operands,
  /// which keeps f32 accuracy; on, one (about 3x the speed, errors near
  /// f16's, like PyTorch's allow_tf32).
  bool allowTf32 = false;
  /// The backward gives the same bits from run to run: dQ's own kernel, not
  /// dQ by atomics (it overrides dqAtomics).
  bool deterministic = false;
  /// The wgmma backward's dK/dV kernel adds dQ into an f32 accumulator by
  /// TMA reduce-adds, where its blocks hold whole rows of dS (D up to 128);
  /// false: dQ's own kernel, which needs no atomics. On by default: faster
  /// at every causal and full shape the tuner measured (by 0.4-16% on an
  /// H200); the tuner also times dQ's own kernel, which wins under some
  /// windows (bench/NOTES.md).
  bool dqAtomics = true;
  /// Forwards carry the split-KV kernels for decode shapes (few query
  /// blocks, many keys): fa-compile's exports do. A program compiled
  /// without them compiles them at run() of the first shape that splits
  /// (Program's TileConfig::splitKv), so other shapes never wait on them.
  bool splitKv = false;
  /// GPU programs carry fa-tile's scalar loops beside the tensor-core
  /// kernels of the spec's fixed head dim, for operands those kernels do
  /// not take (a stride or start not 16-byte aligned, D not unit-stride).
  /// Off by default: run() of such operands compiles a program with them
  /// (Program's TileConfig::scalarFallback), so that every other call's
  /// compile skips them; exports always carry them.
  bool scalarFallback = false;
  /// The entry to compile alone (both when unset): a JIT caller compiles
  /// a variant's backward when a backward is first asked for, not with
  /// its forward. run() of the other entry fails and says so.
  std::optional<Entry> onlyEntry;
  /// How run() picks the tensor-core config of each new shape class (head
  /// dim, and powers of two bounding Sq, Sk and B*Hq; GPU, f16/bf16).
  enum class Tuning {
    /// The compiler's default config.
    Off,
    /// The config of fa's shipped table of tuned configs for this GPU
    /// architecture (its nearest shape class of the same entry, head dim
    /// and mask), else the default: no call waits on tuning.
    Table,
    /// The candidates timed on the caller's arguments at the class's first
    /// call (seconds), the fastest kept in memory and in the kernel cache,
    /// where later processes find it.
    Measure,
  };
  /// FA_AUTOTUNE=0 makes it Off and FA_AUTOTUNE=1 Measure; a config given
  /// by hand (mmaBlockN, ..., gridSection) and the CPU make it Off.
  Tuning tuning = Tuning::Table;
};

/// Whether fa can launch kernels here (a CUDA driver and a device). When
/// not, `why` (if given) says why.
bool gpuAvailable(std::string *why = nullptr);

/// Where fa's notes (a scalar fallback, a kernel ptxas could not assemble)
/// and the autotuner's progress go, a line at a time, each starting "fa: ":
/// stderr by default, `handler` once set (a null one restores stderr). It
/// may be called from any thread that compiles or runs a Program. The
/// Python package routes the lines to `logging`. FA_COMPILE_TIMES's lines
/// stay on stderr.
void setLogHandler(void (*handler)(const std::string &line));
/// Sends `line` where setLogHandler says.
void logLine(const std::string &line);

/// Kernel timing for benchmarks: while on, each GPU kernel launch is
/// bracketed by CUDA events on its stream (a small cost per launch).
void setKernelTiming(bool enabled);
/// The GPU time of the kernels launched since the last call (and since
/// timing was turned on), in milliseconds.
double takeKernelTime();
/// The most bytes of device workspace fa held at once since the last
/// resetWorkspacePeak() (workspaces come from the driver, outside the
/// caller's allocator).
std::uint64_t workspacePeakBytes();
/// Restarts workspacePeakBytes() from what fa holds now.
void resetWorkspacePeak();
/// Gives the device memory that fa's workspace pool keeps between calls
/// (the high-water mark of its workspaces, reused by the next call) back
/// to the driver. fa does so itself before an allocation would fail.
void releaseWorkspaceMemory();

/// Device memory for the GPU target's arguments.
class DeviceBuffer {
public:
  /// Null with `error` set when the allocation (or the driver) fails.
  static std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes,
                                                std::string &error);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *data() const { return pointer; }
  std::size_t size() const { return bytes; }
  /// Copies size() bytes from the host.
  bool upload(const void *host, std::string &error);
  /// Copies size() bytes to the host.
  bool download(void *host, std::string &error) const;

private:
  DeviceBuffer(void *pointer, std::size_t bytes)
      : pointer(pointer), bytes(bytes) {}
  void *pointer;
  std::size_t bytes;
};

/// The PTX of one GPU module (a kernel of a spec's entry).
struct PtxModule {
  std::string name;
  std::string ptx;
};

/// Compiles every kernel of a spec to PTX for `arch` ("sm_90", ...) without
/// needing a GPU. Returns false with `error` set on failure.
bool compileToPtx(const std::string &specText, const std::string &bufferName,
                  const CompileOptions &options, const std::string &arch,
                  std::vector<PtxModule> &modules, std::string &error);

/// An entry point of an exported spec: its C symbol (MLIR's C interface:
/// one pointer to a strided descriptor per argument) and its arguments.
struct ExportedEntry {
  std::string kernel;
  std::string entry; // "forward" or "backward"
  std::string symbol;
  std::vector<std::string> argNames;      // inputs, then outputs
  /// Each argument's dimension names, space separated ("B Hq Sq D"):
  /// dimensions of one name must have one size.
  std::vector<std::string> argDims;
  std::size_t numInputs = 0;
  std::vector<std::vector<int64_t>> argSizes; // -1: dynamic
  std::vector<DType> argTypes;
};

/// A spec compiled for export: its kernels' PTX and a relocatable host
/// object (generic x86-64/the host's triple, position independent) whose
/// entry points launch them through the mgpu* runtime functions.
struct ExportedSpec {
  std::vector<PtxModule> modules;
  std::string hostObject;
  std::vector<ExportedEntry> entries;
};

/// Compiles a spec for `arch` into an ExportedSpec, without needing a GPU.
bool compileForExport(const std::string &specText,
                      const std::string &bufferName,
                      const CompileOptions &options, const std::string &arch,
                      ExportedSpec &exported, std::string &error);

class Program;

/// One entry of a Program bound to its arguments' dtypes, sizes and
/// strides (Program::bind): a call loop that repeats one signature (a
/// model's layers, a decode step) passes the data pointers alone, and
/// the checks and the config choice bind() made are not made again.
class BoundCall {
public:
  ~BoundCall();
  BoundCall(const BoundCall &) = delete;
  BoundCall &operator=(const BoundCall &) = delete;

  /// The number of data pointers run() takes: bind's arguments.
  std::size_t arity() const;
  /// Runs the entry on `data`, one pointer per bound argument in bind's
  /// order, as Program::run would on those arguments with these
  /// pointers (a start the tensor-core kernels cannot take goes through
  /// Program::run and its checks). False with `error` set on failure.
  bool run(const std::vector<void *> &data, std::string &error,
           std::optional<std::uintptr_t> stream = std::nullopt,
           RunFailure *failure = nullptr);

private:
  friend class Program;
  struct Impl;
  explicit BoundCall(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// A spec compiled for one element type and target.
class Program {
public:
  /// Parses, verifies and compiles `specText` (named `bufferName` in
  /// diagnostics). On failure returns null and sets `error` to
  /// `file:line:col: error: ...` lines. A GPU program that takes the
  /// shipped table's configs (FA_AUTOTUNE unset) lowers nothing here: each
  /// run compiles, once, the config its shape class takes, so that a first
  /// call compiles one config, not the default beside it.
  static std::unique_ptr<Program> compile(const std::string &specText,
                                          const std::string &bufferName,
                                          const CompileOptions &options,
                                          std::string &error);
  ~Program();

  const std::vector<KernelInfo> &kernels() const;
  DType dtype() const;
  Target target() const;
  /// How the compiled code was obtained: "hit", "miss" (compiled and
  /// stored), "rebuilt corrupt entry", "not cached (...)", with the entry's
  /// path. A program that takes the shipped table's configs compiles at
  /// its first run the config that run's shape class takes: before that
  /// its status says it is not built yet, after it names the entries of
  /// the configs that ran.
  std::string cacheStatus() const;

  /// Runs `entry` of `kernel` on `args` (host memory for the CPU target,
  /// device memory for the GPU target): the entry's inputs then its outputs
  /// in the spec's order (forward: q, k, v[, sinks], o, lse; backward: q, k,
  /// v, o, lse, dO[, sinks], dq, dk, dv[, dsinks]; softmax_matmul: x, v,
  /// out). Shapes are checked with the verifier's messages. Returns false
  /// and sets `error` on failure.
  ///
  /// GPU target: with `stream` (a CUstream; 0 is the legacy default
  /// stream) the kernels and their workspaces are queued on it and run
  /// returns without waiting, like any CUDA library call, so errors the
  /// kernels hit while running surface at the caller's next synchronization;
  /// without it fa launches on a stream of its own and waits for it.
  ///
  /// `failure`, when given, says on failure which kind it was, for
  /// bindings that raise the two as different errors.
  bool run(const std::string &kernel, Entry entry,
           const std::vector<Tensor> &args, std::string &error,
           std::optional<std::uintptr_t> stream = std::nullopt,
           RunFailure *failure = nullptr);

  /// What run() with arguments of these shapes, dtypes and strides would
  /// do before launching: check them, choose the config of their shape
  /// class (from the shipped table; nothing is timed, so the data is never
  /// read) and compile it where it is not this program's own. A caller that
  /// knows a later call's shapes (a forward's backward) prepares it off
  /// its critical path. False with `error` set when run() would refuse
  /// the arguments.
  bool prepare(const std::string &kernel, Entry entry,
               const std::vector<Tensor> &args, std::string &error);

  /// What run() does before its launch, done once for arguments of
  /// these dtypes, sizes and strides (and starts as aligned as theirs):
  /// the checks, the config of their shape class (tuned on `args` where
  /// tuning is on, which runs the kernels on them) and its compile. Null
  /// with `error` (and `failure`) set where run() would fail there. The
  /// call must not outlive this program.
  std::unique_ptr<BoundCall>
  bind(const std::string &kernel, Entry entry, const std::vector<Tensor> &args,
       std::string &error, std::optional<std::uintptr_t> stream = std::nullopt,
       RunFailure *failure = nullptr);

private:
  friend class BoundCall;
  Program();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace fa

#endif // FA_RUNTIME_H
