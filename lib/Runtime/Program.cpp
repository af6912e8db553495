//===- Program.cpp - Compile specs and run their kernels ------------------===//

#include "fa/Runtime.h"

#include "Autotune.h"
#include "CudaDriver.h"
#include "HostCode.h"
#include "KernelCache.h"
#include "Ptxas.h"

#include "fa/Conversion/Pipelines.h"
#include "fa/Dialect/FA/FAOps.h"
#include "fa/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

using namespace mlir;

namespace fa {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  }
  return "?";
}

std::optional<DType> parseDType(const std::string &name) {
  for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I32})
    if (name == dtypeName(d))
      return d;
  return std::nullopt;
}

std::size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
    return 8;
  }
  return 0;
}

DType accumulatorDType(DType dtype) {
  return dtype == DType::F64 ? DType::F64 : DType::F32;
}

Tensor Tensor::contiguous(void *data, DType dtype,
                          std::vector<int64_t> sizes) {
  Tensor t;
  t.data = data;
  t.dtype = dtype;
  t.strides.assign(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i)
    t.strides[i] = t.strides[i + 1] * sizes[i + 1];
  t.sizes = std::move(sizes);
  return t;
}

static Type toMlirType(MLIRContext *ctx, DType dtype) {
  if (dtype == DType::I32)
    return IntegerType::get(ctx, 32);
  return parseElementTypeName(ctx, dtypeName(dtype));
}

static std::optional<DType> fromMlirType(Type type) {
  for (DType d : {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I32})
    if (toMlirType(type.getContext(), d) == type)
      return d;
  return std::nullopt;
}

/// The dialects, extensions and LLVM IR translations fa's pipelines use;
/// built once per process, not per compiled spec.
static const DialectRegistry &registry() {
  static const DialectRegistry instance = [] {
    DialectRegistry r;
    r.insert<FADialect>();
    registerAllDialects(r);
    registerAllExtensions(r);
    registerAllToLLVMIRTranslations(r);
    return r;
  }();
  return instance;
}

/// One thread pool for every context fa makes: a process holding many
/// compiled variants keeps one set of worker threads, not one per variant.
static llvm::ThreadPoolInterface &sharedThreadPool() {
  static llvm::DefaultThreadPool pool;
  return pool;
}

/// A context for fa's pipelines, on the shared thread pool. Dialects load
/// as the parser and the passes ask for them (loading all of them took
/// most of a cache hit's parse time).
static void initContext(MLIRContext &context) {
  context.setThreadPool(sharedThreadPool());
}

struct Program::Impl {
  MLIRContext context;
  /// The verified, specialised spec: the source of launch-time checks.
  OwningOpRef<ModuleOp> spec;
  std::unique_ptr<HostCode> host;
  std::vector<KernelInfo> kernels;
  DType dtype = DType::F32;
  Target target = Target::CPU;
  std::string cacheStatus;
  /// Shapes already checked, per entry function.
  std::set<std::string> validated;
  /// (kernel, entry, D, reason) of the scalar fallbacks already logged.
  std::set<std::string> fallbacksLogged;
  /// Packed entry points of the host code, looked up at first use.
  llvm::StringMap<HostCode::Packed> entryPoints;
  std::mutex mutex;

  // Autotuning (GPU): what compiled this program, the hash prefix of its
  // tuning entries, the tuned config per shape class, and the programs
  // compiled with configs other than this one's.
  std::string specText, bufferName;
  CompileOptions options;
  std::string tuningKey;
  /// (kernel, entry, D, Sq, Sk, B*Hq bounds) -> its config.
  using ShapeClass =
      std::tuple<std::string, Entry, int64_t, uint64_t, uint64_t, uint64_t>;
  std::map<ShapeClass, TileConfig> tuned;
  std::map<TileConfig, std::unique_ptr<Program>> configured;

  // The code (Program::compile's second half, which build() runs): its
  // cache key and target arch, and how long the parse took (for
  // FA_COMPILE_TIMES). A program that takes the shipped table's configs
  // builds its own code, the compiler's default config, only when a call
  // takes that config: many first calls take a row's, and the default's
  // lowering and ptxas (about a second at D 128) would be thrown away.
  std::string codeKey, arch;
  double parseSeconds = 0;
  /// Lowers the spec with `options`, or loads it from the kernel cache,
  /// and links the host code (which loads the GPU kernels); true at once
  /// when that was done.
  bool build(std::string &error);

  Impl() : context(registry(), MLIRContext::Threading::DISABLED) {
    initContext(context);
  }

  /// The packed call of a validated entry.
  bool invoke(const std::string &kernelName, const std::string &entryName,
              const std::vector<Tensor> &args, std::string &error,
              std::optional<std::uintptr_t> stream);
  /// The host code's packed entry of `kernelName`'s `entryName` (looked
  /// up once), or null with `error` set.
  HostCode::Packed entryPoint(const std::string &kernelName,
                              const std::string &entryName,
                              std::string &error);
  /// Calls `entry` on `packed` (memref descriptors) on the caller's
  /// `stream`, and collects the launches' error.
  bool call(HostCode::Packed entry, void **packed,
            const std::string &kernelName, const std::string &entryName,
            std::string &error, std::optional<std::uintptr_t> stream);
  /// What run() decides before its launch, under `mutex`: the program
  /// (this one, or one compiled with the config of the arguments' shape
  /// class) whose code takes `args`; null with `error` and `failure` set
  /// where run() fails before launching.
  Impl *resolve(const std::string &kernelName, Entry entry,
                const std::string &entryName, const std::vector<Tensor> &args,
                std::string &error, std::optional<std::uintptr_t> stream,
                RunFailure *failure);

  /// The config of a GPU call whose operands the tensor-core kernels do
  /// not take, where this program lacks the scalar fallback kernels: the
  /// compiler's tiles with them (tuning has nothing to choose there). None
  /// for every other call.
  std::optional<TileConfig> fallbackConfig(func::FuncOp fn,
                                           bool layoutOk) const;
  /// The tensor-core dispatch's operand test (TensorCoreEmitter::
  /// isVectorFriendly) on every [B, H, S, D] operand: unit stride on D,
  /// the other strides whole 16-byte chunks, a 16-byte aligned start. It
  /// checks at least the operands the dispatch does, so a layout it
  /// passes takes the kernels.
  bool layoutSuitsKernels(const std::vector<Tensor> &args) const;
  /// Says once per kernel, entry, head dim and reason on stderr when the
  /// GPU program will run these operands (of `layoutOk`) on its scalar
  /// loops.
  void logScalarFallback(const std::string &kernelName, Entry entry,
                         const std::string &entryName, func::FuncOp fn,
                         const std::vector<Tensor> &args, bool layoutOk);
  /// Whether this GPU program's tensor-core kernels are wgmma's (the
  /// generation its options resolve to on this device; asked once).
  bool runsWgmma() {
    if (!wgmmaGeneration)
      wgmmaGeneration = resolveTensorCoreGeneration(options.mmaGeneration,
                                                    cuda::deviceArch()) ==
                        "wgmma";
    return *wgmmaGeneration;
  }
  std::optional<bool> wgmmaGeneration;
  /// The config to run `args` with: the default unless autotuning applies,
  /// then the one tuned for their shape class (tuned now if none is known).
  /// Nullopt with `error` set when tuning failed.
  std::optional<TileConfig> chooseConfig(const std::string &kernelName,
                                         Entry entry,
                                         const std::string &entryName,
                                         const std::vector<Tensor> &args,
                                         std::optional<std::uintptr_t> stream,
                                         std::string &error);
  /// This spec compiled with `config`: this program for the default, else
  /// one compiled at first use (its validation is this one's: same spec).
  Impl *withConfig(const TileConfig &config, std::string &error);
  /// Compiles the configs not compiled yet at once, one thread each (up to
  /// the machine's cores): tuning's compiles would otherwise add up. A
  /// config that fails is left out; withConfig then says why.
  void compileConfigs(const std::vector<TileConfig> &configs,
                      llvm::function_ref<void(const std::string &)> progress);
  CompileOptions optionsFor(const TileConfig &config) const;

  /// Checks `args` against the entry by re-verifying its fa op with the
  /// run-time sizes, so launch errors read like compile-time ones.
  bool validate(KernelOp kernel, func::FuncOp fn, const std::string &entry,
                const std::vector<Tensor> &args, std::string &error);
};

Program::Program() : impl(std::make_unique<Impl>()) {}
Program::~Program() = default;

const std::vector<KernelInfo> &Program::kernels() const {
  return impl->kernels;
}

DType Program::dtype() const { return impl->dtype; }
std::string Program::cacheStatus() const {
  if (impl->host)
    return impl->cacheStatus;
  // A program on the shipped table whose default config no call took: the
  // status of the configs that ran instead.
  std::string status;
  for (const auto &[config, program] : impl->configured)
    if (program && program->impl->host)
      status += (status.empty() ? "" : "; ") + program->impl->cacheStatus;
  return status.empty()
             ? "not built yet (a program on the shipped table builds "
               "the config of its first call's shape class)"
             : status;
}
Target Program::target() const { return impl->target; }

/// An entry's argument: its name and its dimensions' names, as the op's
/// verifier relates them (equal names, equal sizes).
struct ArgumentInfo {
  const char *name;
  const char *dims;
};

/// An entry's arguments: its op's inputs, then its outputs.
static std::vector<ArgumentInfo> arguments(Operation *compute) {
  const char *queries = "B Hq Sq D", *keys = "B Hkv Sk D";
  const char *rows = "B Hq Sq", *heads = "Hq";
  std::vector<ArgumentInfo> args;
  if (auto op = dyn_cast<AttentionOp>(compute)) {
    const char *pages = "pages Hkv P D";
    args = {{"q", queries},
            {"k", op.getBlockTable() ? pages : keys},
            {"v", op.getBlockTable() ? pages : keys}};
    if (op.getSinks())
      args.push_back({"sinks", heads});
    if (op.getKeyLengths())
      args.push_back({"key_lengths", "B"});
    if (op.getBlockTable())
      args.push_back({"block_table", "B N"});
    if (op.getQueryStarts())
      args.insert(args.end(), {{"query_starts", "N+1"}, {"key_starts", "N+1"}});
    if (op.getKNew())
      args.insert(args.end(),
                  {{"k_new", "B Hkv Snew D"}, {"v_new", "B Hkv Snew D"}});
    args.insert(args.end(), {{"o", queries}, {"lse", rows}});
  } else if (auto op = dyn_cast<AttentionGradOp>(compute)) {
    args = {{"q", queries}, {"k", keys},  {"v", keys},
            {"o", queries}, {"lse", rows}, {"dO", queries}};
    if (op.getSinks())
      args.push_back({"sinks", heads});
    args.insert(args.end(), {{"dq", queries}, {"dk", keys}, {"dv", keys}});
    if (op.getSinks())
      args.push_back({"dsinks", heads});
  } else {
    args = {{"x", "B M N"}, {"v", "B N P"}, {"out", "B M P"}};
  }
  return args;
}

static std::vector<std::string> argumentNames(Operation *compute) {
  std::vector<std::string> names;
  for (const ArgumentInfo &arg : arguments(compute))
    names.push_back(arg.name);
  return names;
}

/// A tensor type's sizes, -1 where dynamic.
static std::vector<int64_t> sizesOf(Type type) {
  std::vector<int64_t> sizes;
  for (int64_t s : cast<ShapedType>(type).getShape())
    sizes.push_back(ShapedType::isDynamic(s) ? -1 : s);
  return sizes;
}

static KernelInfo describe(KernelOp kernel) {
  KernelInfo info;
  info.name = kernel.getSymName().str();
  func::FuncOp forward = kernel.getForward();
  info.hasBackward = static_cast<bool>(kernel.getBackward());
  Operation *compute = KernelOp::getComputeOp(forward);
  if (auto op = dyn_cast<AttentionOp>(compute)) {
    info.causal = op.getMask() == MaskKind::causal;
    info.window = op.getWindow();
    info.sinkTokens = op.getSinkTokens();
    info.learnableSinks = static_cast<bool>(op.getSinks());
    info.keyLengths = static_cast<bool>(op.getKeyLengths());
    info.blockTable = static_cast<bool>(op.getBlockTable());
    info.packedSequences = static_cast<bool>(op.getQueryStarts());
    info.appends = static_cast<bool>(op.getKNew());
    if (auto scale = op.getScale())
      info.scale = scale->convertToDouble();
  } else {
    info.softmaxMatmul = true;
  }
  std::vector<std::string> names = argumentNames(compute);
  info.argNames.assign(names.begin(),
                       names.begin() + compute->getNumOperands());
  for (Type t : forward.getArgumentTypes())
    info.argSizes.push_back(sizesOf(t));
  return info;
}

/// Parses and verifies a spec and specialises it to `dtype` (when given);
/// `resolved` is the element type it ends with. Diagnostics go to `error`
/// as `file:line:col: error: ...`.
static OwningOpRef<ModuleOp> loadSpec(MLIRContext *ctx,
                                      const std::string &specText,
                                      const std::string &bufferName,
                                      std::optional<DType> dtype,
                                      DType &resolved, std::string &error) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(specText, bufferName),
      llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, ctx, diagStream);
  auto fail = [&](const std::string &message) {
    error = diagnostics.empty() ? message : diagnostics;
    return nullptr;
  };
  OwningOpRef<ModuleOp> spec = parseSourceFile<ModuleOp>(sourceMgr, ctx);
  if (!spec)
    return fail(bufferName + ": error: could not parse the spec");
  auto kernels = spec->getOps<KernelOp>();
  if (kernels.empty())
    return fail(bufferName + ": error: the spec holds no fa.kernel");
  // The spec's element type is the first forward argument's.
  KernelOp first = *kernels.begin();
  Type specElement =
      cast<ShapedType>(first.getForward().getArgumentTypes()[0])
          .getElementType();
  std::optional<DType> element = dtype ? dtype : fromMlirType(specElement);
  if (!element || *element == DType::I32)
    return fail(bufferName + ": error: the element type must be f16, bf16, "
                             "f32 or f64");
  resolved = *element;
  if (dtype) {
    PassManager pm(ctx);
    FASpecializeElementTypeOptions specialize;
    specialize.elementType = dtypeName(*dtype);
    pm.addPass(createFASpecializeElementType(specialize));
    if (failed(pm.run(*spec)))
      return fail(bufferName + ": error: element-type specialisation failed");
  }
  return spec;
}

/// The ptxas whose cubins this driver loads (its CUDA release not newer
/// than the driver's), with its release; empty when there is none: the
/// driver then JIT-compiles the PTX. Asked once per process.
static const std::pair<std::string, int> &usablePtxas() {
  static const std::pair<std::string, int> found = [] {
    std::string ptxas = findPtxas();
    if (ptxas.empty())
      return std::pair<std::string, int>();
    int release = ptxasRelease(ptxas);
    int driver = std::atoi(cuda::driverVersion().c_str());
    if (release == 0 || release > driver)
      return std::pair<std::string, int>();
    return std::make_pair(ptxas, release);
  }();
  return found;
}

/// An entry's name in specs, pipelines and messages.
static const char *entryName(Entry entry) {
  return entry == Entry::Forward ? "forward" : "backward";
}

/// The pipelines' `entries` option for `only`.
static std::string entriesName(std::optional<Entry> only) {
  return only ? entryName(*only) : "all";
}

/// The spec's function of `entry` in `kernel` (null where it has none).
static func::FuncOp entryFunction(KernelOp kernel, Entry entry) {
  return entry == Entry::Forward ? kernel.getForward() : kernel.getBackward();
}

/// The lowering of a spec for the host CPU or for GPU `arch`.
static void buildPipeline(PassManager &pm, bool gpu, const std::string &arch,
                          const CompileOptions &options) {
  // FA_COMPILE_TIMES=2 also prints MLIR's time per pass of each lowering.
  const char *passTimes = std::getenv("FA_COMPILE_TIMES");
  if (passTimes && std::string(passTimes) == "2")
    pm.enableTiming();
  // Tile sizes of 0 keep the target's defaults.
  auto setTiles = [&](auto &targetOptions) {
    if (options.blockM > 0)
      targetOptions.blockM = options.blockM;
    if (options.blockN > 0)
      targetOptions.blockN = options.blockN;
    targetOptions.entries = entriesName(options.onlyEntry);
    targetOptions.branchedTiles = options.branchedTiles;
  };
  if (gpu) {
    GpuPipelineOptions gpuOptions;
    setTiles(gpuOptions);
    gpuOptions.tensorCoreBlockN = options.mmaBlockN;
    gpuOptions.tensorCoreWarps = options.mmaWarps;
    gpuOptions.allowTf32 = options.allowTf32;
    gpuOptions.deterministic = options.deterministic;
    gpuOptions.dqAtomics = options.dqAtomics;
    gpuOptions.splitKv = options.splitKv;
    gpuOptions.scalarFallback = options.scalarFallback;
    gpuOptions.tensorCoreSharedBytes = options.mmaSharedBytes;
    gpuOptions.tensorCoreKvStages = options.mmaKvStages;
    gpuOptions.tensorCoreGeneration = options.mmaGeneration;
    gpuOptions.wgmmaSchedule = options.wgmmaSchedule;
    gpuOptions.wgmmaGroups = options.wgmmaGroups;
    gpuOptions.gridSection = options.gridSection;
    gpuOptions.wgmmaPersistent = options.wgmmaPersistent;
    gpuOptions.chip = arch;
    buildGpuPipeline(pm, gpuOptions);
    return;
  }
  CpuPipelineOptions cpu;
  setTiles(cpu);
  buildCpuPipeline(pm, cpu);
}

/// This machine's CPU features, "+avx2,-avx512f,...": the CPU kernels'
/// objects use them, so their cache entries name them.
static const std::string &hostCpuFeatures() {
  static const std::string features = [] {
    std::vector<std::string> names;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      names.push_back((feature.second ? "+" : "-") + feature.first().str());
    llvm::sort(names);
    return llvm::join(names, ",");
  }();
  return features;
}

using Clock = std::chrono::steady_clock;

/// Seconds since `since`, for FA_COMPILE_TIMES.
static double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::unique_ptr<Program> Program::compile(const std::string &specText,
                                          const std::string &bufferName,
                                          const CompileOptions &requested,
                                          std::string &error) {
  // FA_BRANCHED_TILES=1 (or 0) sets CompileOptions::branchedTiles for every
  // program, so that whole suites and benchmarks compare both forms.
  CompileOptions options = requested;
  if (const char *branched = std::getenv("FA_BRANCHED_TILES");
      branched && (branched[0] == '0' || branched[0] == '1') && !branched[1])
    options.branchedTiles = branched[0] == '1';
  Clock::time_point start = Clock::now();
  std::unique_ptr<Program> program(new Program());
  Impl &impl = *program->impl;
  MLIRContext *ctx = &impl.context;
  impl.spec = loadSpec(ctx, specText, bufferName, options.dtype, impl.dtype,
                       error);
  if (!impl.spec)
    return nullptr;
  auto fail = [&](const std::string &message) {
    error = message;
    return nullptr;
  };
  for (KernelOp kernel : impl.spec->getOps<KernelOp>())
    impl.kernels.push_back(describe(kernel));

  std::string noGpu;
  bool useGpu = false;
  if (options.target == Target::GPU) {
    if (!cuda::ensureInitialized(noGpu))
      return fail("error: target gpu: " + noGpu);
    useGpu = true;
  } else if (options.target == Target::Auto) {
    useGpu = cuda::ensureInitialized(noGpu);
  }
  impl.target = useGpu ? Target::GPU : Target::CPU;

  // Everything that decides the compiled code goes into the cache key.
  std::string specialised;
  llvm::raw_string_ostream specStream(specialised);
  impl.spec->print(specStream);
  std::string arch =
      useGpu ? cuda::deviceArch() : llvm::sys::getHostCPUName().str();
  std::string driver = useGpu ? cuda::driverVersion() : "";
  std::string tiles =
      std::to_string(options.blockM) + "x" + std::to_string(options.blockN) +
      " mma " + std::to_string(options.mmaBlockN) + "x" +
      std::to_string(options.mmaWarps) + " smem " +
      std::to_string(options.mmaSharedBytes) + " stages " +
      std::to_string(options.mmaKvStages) + (options.allowTf32 ? " tf32" : "") +
      (options.deterministic ? " deterministic" : "") +
      (options.dqAtomics ? "" : " dq-kernel") +
      (options.splitKv ? " split-kv" : "") +
      (options.scalarFallback ? " scalar-fallback" : "") + " gen " +
      options.mmaGeneration + " schedule " + options.wgmmaSchedule +
      (options.branchedTiles ? " branched" : "") + " groups " +
      std::to_string(options.wgmmaGroups) + " section " +
      std::to_string(options.gridSection) +
      (options.wgmmaPersistent ? "" : " one-block-per-item") + " entries " +
      entriesName(options.onlyEntry);
  // Cubins made by a ptxas are its release's machine code.
  std::string assembler = useGpu && !usablePtxas().first.empty()
                              ? "ptxas " + std::to_string(usablePtxas().second)
                              : "driver JIT";
  std::string key = KernelCache::hashKey({compilerId(), LLVM_VERSION_STRING,
                                          useGpu ? "gpu" : "cpu", arch, driver,
                                          tiles, assembler, specialised});
  impl.specText = specText;
  impl.bufferName = bufferName;
  impl.options = options;
  using Tuning = CompileOptions::Tuning;
  std::string autotuneEnv =
      std::getenv("FA_AUTOTUNE") ? std::getenv("FA_AUTOTUNE") : "";
  bool byHand = options.mmaBlockN || options.mmaWarps ||
                options.mmaSharedBytes || options.mmaKvStages ||
                options.wgmmaGroups || options.gridSection;
  Tuning tuning = options.tuning;
  if (autotuneEnv == "0" || !useGpu || byHand)
    tuning = Tuning::Off;
  else if (autotuneEnv == "1")
    tuning = Tuning::Measure;
  impl.options.tuning = tuning;
  // Measured entries hang off the compiled program's key (only a measuring
  // program needs one).
  if (tuning == Tuning::Measure)
    impl.tuningKey = KernelCache::hashKey({"tune", key});
  impl.codeKey = key;
  impl.arch = arch;
  impl.parseSeconds = seconds(start);
  // A measuring program times the default beside every other candidate:
  // it builds it now, as it always did.
  if (tuning != Tuning::Table && !impl.build(error))
    return nullptr;
  return program;
}

bool Program::Impl::build(std::string &error) {
  if (host)
    return true;
  auto fail = [&](const std::string &message) {
    error = message;
    return false;
  };
  Clock::time_point start = Clock::now();
  bool useGpu = target == Target::GPU;
  // The link loads the kernels' modules into the context current on this
  // thread: a tuner's pool thread or a caller's new one has none yet.
  std::string noGpu;
  if (useGpu && !cuda::ensureInitialized(noGpu))
    return fail("error: target gpu: " + noGpu);
  KernelCache cache(KernelCache::defaultDirectory());
  Clock::time_point lowerStart = Clock::now();
  int assembled = 0;
  double assembleSeconds = 0;
  // The host code: the CPU kernels, or the GPU launches' glue, which at O0
  // compiles in about half O2's time and launches as fast (bench/NOTES.md).
  // FA_HOST_OPT (0-3) overrides.
  HostObjectOptions objectOptions;
  objectOptions.optLevel = useGpu ? 0 : 2;
  if (const char *level = std::getenv("FA_HOST_OPT");
      level && level[0] >= '0' && level[0] <= '3' && !level[1])
    objectOptions.optLevel = level[0] - '0';
  objectOptions.hostCpu = !useGpu;
  objectOptions.forLoader = true;
  std::string key = KernelCache::hashKey(
      {codeKey, "host object", std::to_string(objectOptions.optLevel),
       useGpu ? "" : hostCpuFeatures()});
  // The cache keeps the host object, the kernels' PTX or cubins inside it:
  // a hit links it and runs.
  std::string object;
  KernelCache::Lookup lookup = cache.load(key, object);
  double lowerSeconds = seconds(lowerStart); // the cache's load, on a hit
  double codegenSeconds = 0, linkSeconds = 0;
  auto linkObject = [&]() -> llvm::Error {
    if (useGpu)
      cuda::takeModuleLoadSeconds();
    Clock::time_point linkStart = Clock::now();
    auto loaded = HostCode::load(object, useGpu);
    linkSeconds = seconds(linkStart);
    if (!loaded)
      return loaded.takeError();
    host = std::move(*loaded);
    return llvm::Error::success();
  };
  if (lookup == KernelCache::Lookup::Hit) {
    // A checksummed entry that still fails to link (another LLVM wrote it,
    // say) is rebuilt like a corrupt one.
    if (llvm::Error e = linkObject()) {
      llvm::consumeError(std::move(e));
      lookup = KernelCache::Lookup::Corrupt;
    } else {
      cacheStatus = "hit";
    }
  }
  if (lookup != KernelCache::Lookup::Hit) {
    OwningOpRef<ModuleOp> lowered = cast<ModuleOp>(spec->clone());
    PassManager pm(&context);
    buildPipeline(pm, useGpu, arch, options);
    if (failed(pm.run(*lowered)))
      return fail(bufferName + ": error: lowering for the " +
                  (useGpu ? "GPU" : "CPU") + " failed");
    if (useGpu && !usablePtxas().first.empty()) {
      Clock::time_point assembleStart = Clock::now();
      std::string note;
      assembled = assembleKernels(*lowered, usablePtxas().first, arch, note);
      assembleSeconds = seconds(assembleStart);
      // Those kernels load as PTX, JIT-compiled by the driver: slower to
      // load, never wrong.
      if (!note.empty())
        logLine("fa: note: " + bufferName + ": " + note);
    }
    lowerSeconds = seconds(lowerStart);
    Clock::time_point codegenStart = Clock::now();
    auto emitted = emitHostObject(*lowered, objectOptions);
    if (!emitted)
      return fail(bufferName + ": error: compiling the host code failed: " +
                  llvm::toString(emitted.takeError()));
    object = std::move(*emitted);
    codegenSeconds = seconds(codegenStart);
    std::string storeError;
    if (cache.directory().empty())
      cacheStatus = "not cached (no cache directory)";
    else if (!cache.store(key, object, storeError))
      cacheStatus = "not cached (" + storeError + ")";
    else
      cacheStatus = lookup == KernelCache::Lookup::Corrupt
                        ? "rebuilt corrupt entry"
                        : "miss";
    if (llvm::Error e = linkObject())
      return fail("error: linking the host code failed: " +
                  llvm::toString(std::move(e)));
  }
  if (!cache.directory().empty())
    cacheStatus += " " + cache.pathFor(key);
  if (useGpu) {
    // The kernels' modules load in the host code's constructors, run by
    // the link, so that a PTX error surfaces at compile time.
    std::string load = cuda::takeLaunchError();
    if (!load.empty()) {
      host.reset(); // not built: a later call tries again and says why
      return fail("error: loading the GPU kernels failed: " + load);
    }
  }
  // FA_COMPILE_TIMES=1: where a compile's time went, for cold starts and
  // cache hits alike (bench_compile.py records the line).
  const char *timesEnv = std::getenv("FA_COMPILE_TIMES");
  if (timesEnv && *timesEnv && std::string(timesEnv) != "0") {
    double moduleLoad = useGpu ? cuda::takeModuleLoadSeconds() : 0;
    llvm::errs() << llvm::formatv(
        "fa: compile times: {0} total {1:F3} s: parse {2:F3} s, {3} {4:F3} "
        "s, host codegen {5:F3} s, host link {6:F3} s",
        bufferName, parseSeconds + seconds(start), parseSeconds,
        lookup == KernelCache::Lookup::Hit ? "cache load" : "lowering",
        lowerSeconds - assembleSeconds, codegenSeconds,
        linkSeconds - moduleLoad);
    if (assembled)
      llvm::errs() << llvm::formatv(", ptxas {0:F3} s ({1} kernels at once)",
                                    assembleSeconds, assembled);
    if (useGpu)
      llvm::errs() << llvm::formatv(", GPU module load {0:F3} s", moduleLoad);
    llvm::errs() << "\n";
  }
  return true;
}

bool Program::Impl::validate(KernelOp kernel, func::FuncOp fn,
                             const std::string &entry,
                             const std::vector<Tensor> &args,
                             std::string &error) {
  Operation *compute = KernelOp::getComputeOp(fn);
  // Messages are built only on failure: this runs on every launch.
  auto prefix = [&] {
    return "kernel '" + kernel.getSymName().str() + "' " + entry + ": ";
  };
  size_t numInputs = compute->getNumOperands();
  size_t expected = numInputs + compute->getNumResults();
  if (args.size() != expected) {
    error = prefix() + "expected " + std::to_string(expected) +
            " tensors (inputs then outputs), got " +
            std::to_string(args.size());
    return false;
  }
  SmallVector<Type> specTypes(fn.getArgumentTypes());
  llvm::append_range(specTypes, fn.getResultTypes());
  std::string key = entry;
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor &t = args[i];
    auto name = [&] {
      return "'" + argumentNames(compute)[i] + "' (argument #" +
             std::to_string(i) + ")";
    };
    if (!t.data) {
      error = prefix() + name() + " has no data";
      return false;
    }
    if (t.strides.size() != t.sizes.size()) {
      error = prefix() + name() + " has " + std::to_string(t.sizes.size()) +
              " sizes but " + std::to_string(t.strides.size()) + " strides";
      return false;
    }
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      if (t.sizes[d] < 1) {
        error = prefix() + name() + " has size " + std::to_string(t.sizes[d]) +
                " in dim " + std::to_string(d) +
                "; fa needs non-empty tensors";
        return false;
      }
    }
    // Sizes the spec fixes must match; the verifier below only relates the
    // arguments to each other.
    auto specType = cast<RankedTensorType>(specTypes[i]);
    if (static_cast<int64_t>(t.sizes.size()) != specType.getRank()) {
      error = prefix() + name() + " has rank " + std::to_string(t.sizes.size()) +
              ", the spec declares " + std::to_string(specType.getRank());
      return false;
    }
    for (auto [d, size] : llvm::enumerate(specType.getShape())) {
      if (!ShapedType::isDynamic(size) && size != t.sizes[d]) {
        error = prefix() + name() + " has size " + std::to_string(t.sizes[d]) +
                " in dim " + std::to_string(d) + ", the spec fixes it to " +
                std::to_string(size);
        return false;
      }
    }
    key += std::string("|") + dtypeName(t.dtype);
    for (int64_t s : t.sizes)
      key += "," + std::to_string(s);
  }
  if (validated.count(key))
    return true;

  // Clone the fa op with the run-time types into a scratch function and run
  // its verifier.
  OpBuilder b(&context);
  OwningOpRef<ModuleOp> scratch(ModuleOp::create(b.getUnknownLoc()));
  b.setInsertionPointToEnd(scratch->getBody());
  SmallVector<Type> inputTypes;
  for (size_t i = 0; i < numInputs; ++i)
    inputTypes.push_back(RankedTensorType::get(
        args[i].sizes, toMlirType(&context, args[i].dtype)));
  auto check = func::FuncOp::create(
      b, fn.getLoc(), "check", FunctionType::get(&context, inputTypes, {}));
  Block *body = check.addEntryBlock();
  b.setInsertionPointToEnd(body);
  IRMapping mapping;
  mapping.map(compute->getOperands(), body->getArguments());
  Operation *clone = b.clone(*compute, mapping);
  for (auto [result, arg] :
       llvm::zip(clone->getResults(), ArrayRef(args).drop_front(numInputs)))
    result.setType(
        RankedTensorType::get(arg.sizes, toMlirType(&context, arg.dtype)));
  std::string message;
  {
    ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    if (failed(verify(clone))) {
      error = prefix() + message;
      return false;
    }
  }
  validated.insert(key);
  return true;
}

/// Whether a GPU forward of `args` takes the split-KV kernels
/// (tensor_core::takesSplitKv, with keySplits over blocks of a kv head's
/// group of query heads, counted at the default 64 rows and 64-key tiles):
/// this decides whether a program with them is compiled, so that other
/// shapes never wait on them; their host code decides how many splits.
static bool takesSplitKvKernels(Operation *compute,
                                const std::vector<Tensor> &args) {
  if (!compute || args.size() < 3 || args[0].sizes.size() != 4 ||
      args[1].sizes.size() != 4)
    return false;
  auto op = dyn_cast<AttentionOp>(compute);
  // Packed sequences have none (GpuTensorCore's specialiseForward).
  if (op && op.getQueryStarts())
    return false;
  int64_t batch = args[0].sizes[0], hq = args[0].sizes[1],
          sq = args[0].sizes[2], hkv = args[1].sizes[1], sk = args[1].sizes[2];
  // A paged cache's keys per sequence: its table's pages times their size.
  if (op && op.getBlockTable()) {
    unsigned table = 3 + (op.getSinks() ? 1 : 0) + 1;
    if (args.size() <= table || args[table].sizes.size() != 2)
      return false;
    sk *= args[table].sizes[1];
  }
  int64_t sms = cuda::multiprocessorCount();
  if (sms <= 0 || hkv <= 0 || hq % hkv)
    return false;
  constexpr int64_t kRows = 64, kKeys = tensor_core::kSplitKvMinBlockN;
  std::optional<int64_t> window;
  int64_t sinkTokens = 0;
  if (auto attr = compute->getAttrOfType<IntegerAttr>("window"))
    window = attr.getInt();
  if (auto tokens = compute->getAttrOfType<IntegerAttr>("sink_tokens"))
    sinkTokens = tokens.getInt();
  int64_t group = hq / hkv, headDim = args[0].sizes[3];
  bool paged = op && op.getBlockTable(), appends = op && op.getKNew();
  auto headsDynamic = [&](unsigned operand) {
    auto type = dyn_cast<ShapedType>(compute->getOperand(operand).getType());
    return !type || !type.hasRank() || type.isDynamicDim(1);
  };
  return tensor_core::takesSplitKv(
      tensor_core::forwardKeySplitsOf(
          tensor_core::IntegerOps(), batch, sq, group, hkv, sk, window,
          sinkTokens, kRows, kKeys, sms,
          tensor_core::splitKvBlocksPerSmOf(
              tensor_core::IntegerOps(), headDim, paged, appends,
              tensor_core::splitKvMaskedDynamicHeads(
                  window, sinkTokens, headsDynamic(0) || headsDynamic(1)))),
      sq, group, headDim);
}

Program::Impl *Program::Impl::resolve(const std::string &kernelName,
                                      Entry entry, const std::string &name,
                                      const std::vector<Tensor> &args,
                                      std::string &error,
                                      std::optional<std::uintptr_t> stream,
                                      RunFailure *failure) {
  if (failure)
    *failure = RunFailure::Arguments;
  KernelOp kernel = spec->lookupSymbol<KernelOp>(kernelName);
  if (!kernel) {
    error = "no kernel named '" + kernelName + "' in the spec";
    return nullptr;
  }
  func::FuncOp fn = entryFunction(kernel, entry);
  if (!fn) {
    error = "kernel '" + kernelName + "' has no backward";
    return nullptr;
  }
  if (options.onlyEntry && *options.onlyEntry != entry) {
    error = "kernel '" + kernelName + "': this program was compiled for its " +
            entriesName(options.onlyEntry) + " only, not its " + name;
    return nullptr;
  }
  if (!validate(kernel, fn, name, args, error))
    return nullptr;
  // Past here the arguments are good: what fails is a compile, the
  // tuner's timing, or a launch.
  if (failure)
    *failure = RunFailure::Device;
  std::optional<TileConfig> config;
  if (target == Target::GPU) {
    bool layoutOk = layoutSuitsKernels(args);
    logScalarFallback(kernelName, entry, name, fn, args, layoutOk);
    config = fallbackConfig(fn, layoutOk);
  }
  if (!config)
    config = chooseConfig(kernelName, entry, name, args, stream, error);
  if (!config)
    return nullptr;
  if (target == Target::GPU && entry == Entry::Forward && !options.splitKv &&
      takesSplitKvKernels(KernelOp::getComputeOp(fn), args))
    config->splitKv = 1;
  return withConfig(*config, error);
}

bool Program::run(const std::string &kernelName, Entry entry,
                  const std::vector<Tensor> &args, std::string &error,
                  std::optional<std::uintptr_t> stream, RunFailure *failure) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  std::string name = entryName(entry);
  Impl *configured =
      impl->resolve(kernelName, entry, name, args, error, stream, failure);
  return configured && configured->invoke(kernelName, name, args, error, stream);
}

/// A packed entry's arguments (HostCode::Packed): one strided memref
/// descriptor per tensor, {allocated, aligned, offset, sizes[rank],
/// strides[rank]}, and the pointers to them. Fixed in memory once packed
/// (the pointers point into it), so neither copied nor moved.
class PackedArguments {
public:
  PackedArguments() = default;
  PackedArguments(const PackedArguments &) = delete;
  PackedArguments &operator=(const PackedArguments &) = delete;

  void pack(const std::vector<Tensor> &args) {
    descriptors.clear();
    descriptors.reserve(args.size());
    for (const Tensor &t : args) {
      std::vector<int64_t> desc = {reinterpret_cast<intptr_t>(t.data),
                                   reinterpret_cast<intptr_t>(t.data), 0};
      desc.insert(desc.end(), t.sizes.begin(), t.sizes.end());
      desc.insert(desc.end(), t.strides.begin(), t.strides.end());
      descriptors.push_back(std::move(desc));
    }
    pointers.clear();
    for (auto &desc : descriptors)
      pointers.push_back(desc.data());
    packed.clear();
    for (void *&p : pointers)
      packed.push_back(&p);
  }
  /// Points argument `i`'s descriptor at `data`.
  void setData(size_t i, void *data) {
    descriptors[i][0] = descriptors[i][1] = reinterpret_cast<intptr_t>(data);
  }
  void **data() { return packed.data(); }

private:
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> pointers;
  std::vector<void *> packed;
};

/// A bound entry: the program whose code runs it, its packed entry point,
/// and its arguments packed, whose pointers run() fills in.
struct BoundCall::Impl {
  Program *program;         // bind()'s, for its mutex and a checked run
  Program::Impl *configured; // the program whose code takes the arguments
  HostCode::Packed entry;
  std::string kernelName;
  Entry which;
  std::string entryName;
  std::vector<Tensor> args; // bind's, pointers aside
  /// Whether the tensor-core dispatch takes bind's arguments; a start that
  /// changes it takes Program::run, which chooses anew.
  bool layoutOk;
  PackedArguments packed;
};

BoundCall::BoundCall(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
BoundCall::~BoundCall() = default;

std::size_t BoundCall::arity() const { return impl->args.size(); }

std::unique_ptr<BoundCall> Program::bind(const std::string &kernelName,
                                         Entry entry,
                                         const std::vector<Tensor> &args,
                                         std::string &error,
                                         std::optional<std::uintptr_t> stream,
                                         RunFailure *failure) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  std::string name = entryName(entry);
  Impl *configured =
      impl->resolve(kernelName, entry, name, args, error, stream, failure);
  if (!configured)
    return nullptr;
  HostCode::Packed entryPoint = configured->entryPoint(kernelName, name, error);
  if (!entryPoint)
    return nullptr;
  auto bound = std::make_unique<BoundCall::Impl>();
  bound->program = this;
  bound->configured = configured;
  bound->entry = entryPoint;
  bound->kernelName = kernelName;
  bound->which = entry;
  bound->entryName = name;
  bound->args = args;
  bound->layoutOk =
      impl->target != Target::GPU || impl->layoutSuitsKernels(args);
  bound->packed.pack(args);
  return std::unique_ptr<BoundCall>(new BoundCall(std::move(bound)));
}

bool BoundCall::run(const std::vector<void *> &data, std::string &error,
                    std::optional<std::uintptr_t> stream,
                    RunFailure *failure) {
  Impl &b = *impl;
  if (failure)
    *failure = RunFailure::Arguments;
  if (data.size() != b.args.size()) {
    error = "kernel '" + b.kernelName + "' " + b.entryName + ": bound to " +
            std::to_string(b.args.size()) + " tensors, got " +
            std::to_string(data.size()) + " pointers";
    return false;
  }
  for (size_t i = 0; i < data.size(); ++i) {
    if (!data[i]) {
      error = "kernel '" + b.kernelName + "' " + b.entryName +
              ": argument #" + std::to_string(i) + " has no data";
      return false;
    }
  }
  Program::Impl &program = *b.program->impl;
  std::unique_lock<std::mutex> lock(program.mutex);
  for (size_t i = 0; i < data.size(); ++i)
    b.args[i].data = data[i];
  if (program.target == Target::GPU &&
      program.layoutSuitsKernels(b.args) != b.layoutOk) {
    std::vector<Tensor> args = b.args;
    lock.unlock();
    return b.program->run(b.kernelName, b.which, args, error, stream,
                          failure);
  }
  if (failure)
    *failure = RunFailure::Device;
  for (size_t i = 0; i < data.size(); ++i)
    b.packed.setData(i, data[i]);
  return b.configured->call(b.entry, b.packed.data(), b.kernelName,
                            b.entryName, error, stream);
}

bool Program::prepare(const std::string &kernelName, Entry entry,
                      const std::vector<Tensor> &args, std::string &error) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  KernelOp kernel = impl->spec->lookupSymbol<KernelOp>(kernelName);
  func::FuncOp fn = kernel ? entryFunction(kernel, entry) : func::FuncOp();
  std::string name = entryName(entry);
  if (!fn || (impl->options.onlyEntry && *impl->options.onlyEntry != entry)) {
    error = "kernel '" + kernelName + "' has no " + name + " here";
    return false;
  }
  if (!impl->validate(kernel, fn, name, args, error))
    return false;
  std::optional<TileConfig> config;
  if (impl->target == Target::GPU)
    config = impl->fallbackConfig(fn, impl->layoutSuitsKernels(args));
  // Measuring needs the caller's data: that waits for run().
  if (!config && impl->options.tuning == CompileOptions::Tuning::Measure)
    return true;
  if (!config)
    config =
        impl->chooseConfig(kernelName, entry, name, args, std::nullopt, error);
  return config && impl->withConfig(*config, error);
}

bool Program::Impl::layoutSuitsKernels(const std::vector<Tensor> &args) const {
  int64_t bytes = dtypeSize(dtype);
  for (const Tensor &t : args) {
    if (t.sizes.size() != 4)
      continue;
    if (t.strides[3] != 1 || reinterpret_cast<std::uintptr_t>(t.data) % 16 != 0)
      return false;
    for (int d = 0; d < 3; ++d)
      if ((t.strides[d] * bytes) % 16 != 0)
        return false;
  }
  return true;
}

std::optional<TileConfig> Program::Impl::fallbackConfig(func::FuncOp fn,
                                                        bool layoutOk) const {
  if (layoutOk || options.scalarFallback ||
      !isa<AttentionOp, AttentionGradOp>(KernelOp::getComputeOp(fn)))
    return std::nullopt;
  TileConfig config;
  config.scalarFallback = 1;
  return config;
}

void Program::Impl::logScalarFallback(const std::string &kernelName,
                                      Entry entry, const std::string &entryName,
                                      func::FuncOp fn,
                                      const std::vector<Tensor> &args,
                                      bool layoutOk) {
  if (!isa<AttentionOp, AttentionGradOp>(KernelOp::getComputeOp(fn)))
    return;
  int64_t bytes = dtypeSize(dtype);
  int64_t headDim = args[0].sizes[3];
  const char *reason = tensor_core::scalarFallbackReason(
      entry == Entry::Backward, bytes, headDim, runsWgmma(), layoutOk);
  if (!reason)
    return;
  std::string line = "fa: note: kernel '" + kernelName + "' " + entryName +
                     " at D " + std::to_string(headDim) + " (" +
                     dtypeName(dtype) +
                     ") runs the scalar GPU loops, far slower than the "
                     "tensor cores: " +
                     reason;
  if (fallbacksLogged.insert(line).second)
    logLine(line);
}

CompileOptions Program::Impl::optionsFor(const TileConfig &config) const {
  CompileOptions tuned = options;
  tuned.target = Target::GPU;
  tuned.tuning = CompileOptions::Tuning::Off;
  if (config.splitKv)
    tuned.splitKv = true;
  if (config.scalarFallback)
    tuned.scalarFallback = true;
  // The compiler's own tiles, with the split-KV or fallback kernels beside
  // them.
  if (config.defaultTiles())
    return tuned;
  tuned.mmaBlockN = config.blockN;
  tuned.mmaWarps = config.warps;
  tuned.mmaKvStages = config.kvStages;
  tuned.mmaSharedBytes = config.sharedBytes;
  if (config.wgmmaGroups)
    tuned.wgmmaGroups = config.wgmmaGroups;
  if (config.gridSection)
    tuned.gridSection = config.gridSection;
  if (config.dqKernel)
    tuned.dqAtomics = false;
  return tuned;
}

Program::Impl *Program::Impl::withConfig(const TileConfig &config,
                                         std::string &error) {
  if (config == TileConfig())
    return build(error) ? this : nullptr;
  std::unique_ptr<Program> &program = configured[config];
  if (!program)
    program = Program::compile(specText, bufferName, optionsFor(config), error);
  return program ? program->impl.get() : nullptr;
}

void Program::Impl::compileConfigs(
    const std::vector<TileConfig> &configs,
    llvm::function_ref<void(const std::string &)> progress) {
  std::vector<TileConfig> missing;
  for (const TileConfig &config : configs)
    if (config != TileConfig() && !configured.count(config))
      missing.push_back(config);
  if (missing.size() < 2)
    return;
  progress("compiling " + std::to_string(missing.size()) + " configs at once");
  std::vector<std::unique_ptr<Program>> programs(missing.size());
  {
    llvm::ThreadPoolStrategy threads =
        llvm::hardware_concurrency(missing.size());
    threads.Limit = true; // no more threads than cores
    llvm::DefaultThreadPool pool(threads);
    for (size_t i = 0; i < missing.size(); ++i)
      pool.async([&, i] {
        std::string error; // withConfig recompiles a failure to report it
        programs[i] = Program::compile(specText, bufferName,
                                       optionsFor(missing[i]), error);
      });
    pool.wait();
  }
  for (size_t i = 0; i < missing.size(); ++i)
    if (programs[i])
      configured[missing[i]] = std::move(programs[i]);
}

std::optional<TileConfig>
Program::Impl::chooseConfig(const std::string &kernelName, Entry entry,
                            const std::string &entryName,
                            const std::vector<Tensor> &args,
                            std::optional<std::uintptr_t> stream,
                            std::string &error) {
  const std::vector<int64_t> &q = args[0].sizes;
  if (options.tuning == CompileOptions::Tuning::Off || q.size() != 4)
    return TileConfig();
  // Shape class: the head dim and powers of two bounding Sq, Sk and B*Hq.
  ShapeClass shape{kernelName,
                   entry,
                   q[3],
                   llvm::PowerOf2Ceil(q[2]),
                   llvm::PowerOf2Ceil(args[1].sizes[2]),
                   llvm::PowerOf2Ceil(q[0] * q[1])};
  auto known = tuned.find(shape);
  if (known != tuned.end())
    return known->second;
  // A forward the pass sends to mma.sync on sm_90a all the same (a short
  // window) tunes mma.sync's knobs, not the wgmma kernel's.
  std::optional<int64_t> window;
  bool causal = false;
  for (const KernelInfo &info : kernels)
    if (info.name == kernelName) {
      window = info.window;
      causal = info.causal;
    }
  bool wgmma = runsWgmma() && tunesWgmma(entry, q[3], window);
  std::vector<TileConfig> candidates = tuningCandidates(
      dtype, q[3], entry, cuda::maxSharedBytesPerBlock(), wgmma,
      /*dqByAtomics=*/!options.deterministic && options.dqAtomics);
  if (candidates.empty())
    return tuned[shape] = TileConfig();
  TableShape tableShape{cuda::deviceArch(),
                        entry,
                        q[3],
                        window   ? "window"
                        : causal ? "causal"
                                 : "full",
                        window ? llvm::PowerOf2Ceil(*window) : 0,
                        std::get<3>(shape),
                        std::get<4>(shape),
                        std::get<5>(shape)};
  if (options.tuning == CompileOptions::Tuning::Table) {
    // A row naming a config this build would not offer here (another
    // build's candidates, or dQ by atomics for a deterministic backward)
    // leaves the default.
    std::optional<TileConfig> row = shippedConfig(tableShape);
    return tuned[shape] = row && llvm::is_contained(candidates, *row)
                              ? *row
                              : TileConfig();
  }

  std::string shapeName =
      kernelName + " " + entryName + " D " + std::to_string(q[3]) +
      " Sq<=" + std::to_string(std::get<3>(shape)) +
      " Sk<=" + std::to_string(std::get<4>(shape)) +
      " B*Hq<=" + std::to_string(std::get<5>(shape));
  KernelCache cache(KernelCache::defaultDirectory());
  std::string key = KernelCache::hashKey({tuningKey, shapeName});
  if (std::optional<TileConfig> stored = loadTunedConfig(cache, key))
    return tuned[shape] = *stored;
  auto log = [&](const std::string &line) {
    logLine("fa: autotuning " + shapeName + ": " + line);
  };

  // Time each candidate on these arguments (each run rewrites only the
  // outputs) once the caller's stream has produced them.
  compileConfigs(candidates, log);
  cuda::synchronize(stream);
  bool timing = cuda::setKernelTiming(true);
  auto timeMs = [&](const TileConfig &config) -> double {
    Impl *configured = withConfig(config, error);
    if (!configured)
      return -1;
    std::vector<double> times;
    for (int i = 0; i < 6; ++i) {
      bool ok = configured->invoke(kernelName, entryName, args, error,
                                   std::nullopt);
      double ms = cuda::takeKernelTimeMs();
      if (!ok)
        return -1;
      if (i > 0) // the first run warms up
        times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
  std::optional<TileConfig> best = pickFastest(candidates, timeMs, log, wgmma);
  cuda::setKernelTiming(timing);
  if (!best)
    return std::nullopt; // `error` says why the candidates failed
  error.clear();
  log("chose " + best->str(wgmma));
  std::string storeError; // no cache directory: nothing stored, no error
  if (!storeTunedConfig(cache, key, *best, storeError))
    log("could not store the choice: " + storeError);
  // FA_TUNING_RECORD=<file>: the choice as a row of the shipped table
  // (bench/make_tuning_table.py collects them).
  if (const char *record = std::getenv("FA_TUNING_RECORD"); record && *record) {
    std::error_code ec;
    llvm::raw_fd_ostream out(record, ec, llvm::sys::fs::OF_Append);
    if (ec)
      log("could not record the choice in " + std::string(record) + ": " +
          ec.message());
    else
      out << tableRow(tableShape, *best, shapeName) << "\n";
  }
  return tuned[shape] = *best;
}

HostCode::Packed Program::Impl::entryPoint(const std::string &kernelName,
                                           const std::string &entryName,
                                           std::string &error) {
  std::string symbol = kernelName + "_" + entryName;
  auto &entry = entryPoints[symbol];
  if (!entry) {
    auto found = host->packed(symbol);
    if (!found) {
      entryPoints.erase(symbol);
      error = "could not run " + symbol + ": " +
              llvm::toString(found.takeError());
      return nullptr;
    }
    entry = *found;
  }
  return entry;
}

bool Program::Impl::call(HostCode::Packed entry, void **packed,
                         const std::string &kernelName,
                         const std::string &entryName, std::string &error,
                         std::optional<std::uintptr_t> stream) {
  // The calling thread may be new to CUDA (its context is per thread).
  if (target == Target::GPU && !cuda::ensureInitialized(error))
    return false;
  {
    cuda::ScopedCallerStream onStream(target == Target::GPU ? stream
                                                            : std::nullopt);
    entry(packed);
  }
  if (target == Target::GPU) {
    std::string launch = cuda::takeLaunchError();
    if (!launch.empty()) {
      error = "kernel '" + kernelName + "' " + entryName + ": " + launch;
      return false;
    }
  }
  return true;
}

bool Program::Impl::invoke(const std::string &kernelName,
                           const std::string &entryName,
                           const std::vector<Tensor> &args, std::string &error,
                           std::optional<std::uintptr_t> stream) {
  HostCode::Packed entry = entryPoint(kernelName, entryName, error);
  if (!entry)
    return false;
  PackedArguments packed;
  packed.pack(args);
  return call(entry, packed.data(), kernelName, entryName, error, stream);
}

/// Lowers a spec for GPU `arch` (PTX embedded in host code that launches
/// it through the mgpu* runtime); `entries` (when given) receives the
/// entry points, read before lowering.
static OwningOpRef<ModuleOp>
lowerForArch(MLIRContext &context, const std::string &specText,
             const std::string &bufferName, const CompileOptions &options,
             const std::string &arch, std::vector<ExportedEntry> *entries,
             std::string &error) {
  DType dtype;
  OwningOpRef<ModuleOp> module = loadSpec(&context, specText, bufferName,
                                          options.dtype, dtype, error);
  if (!module)
    return nullptr;
  if (entries) {
    for (KernelOp kernel : module->getOps<KernelOp>()) {
      for (Entry which : {Entry::Forward, Entry::Backward}) {
        func::FuncOp fn = entryFunction(kernel, which);
        if (!fn)
          continue;
        ExportedEntry entry;
        entry.kernel = kernel.getSymName().str();
        entry.entry = entryName(which);
        entry.symbol = "_mlir_ciface_" + entry.kernel + "_" + entry.entry;
        Operation *compute = KernelOp::getComputeOp(fn);
        for (const ArgumentInfo &arg : arguments(compute)) {
          entry.argNames.push_back(arg.name);
          entry.argDims.push_back(arg.dims);
        }
        entry.numInputs = compute->getNumOperands();
        SmallVector<Type> types(fn.getArgumentTypes());
        llvm::append_range(types, fn.getResultTypes());
        for (Type t : types) {
          entry.argSizes.push_back(sizesOf(t));
          entry.argTypes.push_back(
              *fromMlirType(cast<ShapedType>(t).getElementType()));
        }
        entries->push_back(std::move(entry));
      }
    }
  }
  std::string diagnostics;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });
  PassManager pm(&context);
  buildPipeline(pm, /*gpu=*/true, arch, options);
  if (failed(pm.run(*module))) {
    error = bufferName + ": error: lowering for " + arch + " failed: " +
            diagnostics;
    return nullptr;
  }
  return module;
}

static void collectPtx(ModuleOp module, std::vector<PtxModule> &modules) {
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      modules.push_back({binary.getSymName().str(),
                         cast<gpu::ObjectAttr>(object).getObject().str()});
  });
}

bool compileToPtx(const std::string &specText, const std::string &bufferName,
                  const CompileOptions &options, const std::string &arch,
                  std::vector<PtxModule> &modules, std::string &error) {
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  initContext(context);
  OwningOpRef<ModuleOp> module = lowerForArch(context, specText, bufferName,
                                              options, arch, nullptr, error);
  if (!module)
    return false;
  collectPtx(*module, modules);
  return true;
}

bool compileForExport(const std::string &specText,
                      const std::string &bufferName,
                      const CompileOptions &options, const std::string &arch,
                      ExportedSpec &exported, std::string &error) {
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  initContext(context);
  // An export's entries take any layout: nothing recompiles them.
  CompileOptions exportOptions = options;
  exportOptions.scalarFallback = true;
  OwningOpRef<ModuleOp> module =
      lowerForArch(context, specText, bufferName, exportOptions, arch,
                   &exported.entries, error);
  if (!module)
    return false;
  collectPtx(*module, exported.modules);

  // A generic CPU of the host's triple: the object may run elsewhere. It
  // keeps its constructors (the system's loader runs them).
  HostObjectOptions objectOptions;
  auto object = emitHostObject(*module, objectOptions);
  if (!object) {
    error = bufferName + ": error: " + llvm::toString(object.takeError());
    return false;
  }
  exported.hostObject = std::move(*object);
  return true;
}

static std::atomic<void (*)(const std::string &)> logHandler{nullptr};

void setLogHandler(void (*handler)(const std::string &line)) {
  logHandler.store(handler);
}

void logLine(const std::string &line) {
  if (auto handler = logHandler.load())
    handler(line);
  else
    llvm::errs() << line << "\n";
}

bool gpuAvailable(std::string *why) {
  std::string error;
  bool ok = cuda::ensureInitialized(error);
  if (!ok && why)
    *why = error;
  return ok;
}

void setKernelTiming(bool enabled) { cuda::setKernelTiming(enabled); }

double takeKernelTime() { return cuda::takeKernelTimeMs(); }
std::uint64_t workspacePeakBytes() { return cuda::workspacePeakBytes(); }
void resetWorkspacePeak() { cuda::resetWorkspacePeak(); }
void releaseWorkspaceMemory() { cuda::releaseWorkspaceMemory(); }

std::unique_ptr<DeviceBuffer> DeviceBuffer::allocate(std::size_t bytes,
                                                     std::string &error) {
  void *pointer = cuda::allocate(bytes, error);
  if (!pointer)
    return nullptr;
  return std::unique_ptr<DeviceBuffer>(new DeviceBuffer(pointer, bytes));
}

DeviceBuffer::~DeviceBuffer() { cuda::release(pointer); }

bool DeviceBuffer::upload(const void *host, std::string &error) {
  return cuda::copyToDevice(pointer, host, bytes, error);
}

bool DeviceBuffer::download(void *host, std::string &error) const {
  return cuda::copyToHost(host, pointer, bytes, error);
}

} // namespace fa
