//===- fa-run.cpp - Compile a spec, run it, check it ----------------------===//
//
// fa-run <spec> [--kernel NAME] [--shape B,Hq,Hkv,Sq,Sk,D[;...]]
//        [--dtype f32|f64|bf16|f16] [--backward] [--target cpu|gpu|auto]
//        [--seed N] [--check] [--gradcheck]
//
// Makes fresh random inputs, runs each kernel, and with --check compares
// every output with a naive float64 reference, printing the max relative
// error (max |got - ref| / max |ref|) and failing when one exceeds the
// dtype's tolerance.
//
//===----------------------------------------------------------------------===//

#include "HalfFloat.h"
#include "Reference.h"
#include "fa/Runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

using namespace llvm;

static cl::OptionCategory faRunCategory("fa-run options");

static cl::opt<std::string> specPath(cl::cat(faRunCategory), cl::Positional, cl::desc("<spec.mlir>"),
                                     cl::Required);
static cl::opt<std::string>
    kernelName(cl::cat(faRunCategory), "kernel", cl::desc("run only this kernel (default: all)"));
static cl::opt<std::string> shapeList(
    cl::cat(faRunCategory), "shape",
    cl::desc("B,Hq,Hkv,Sq,Sk,D (softmax_matmul: B,M,N,P); several separated "
             "by ';'. Defaults fill what the spec leaves dynamic."));
static cl::opt<std::string> dtypeName(cl::cat(faRunCategory), "dtype",
                                      cl::desc("f16, bf16, f32 or f64"),
                                      cl::init(""));
static cl::opt<bool> backward(cl::cat(faRunCategory), "backward", cl::desc("also run the backward"));
static cl::opt<std::string> targetName(cl::cat(faRunCategory), "target", cl::desc("cpu, gpu or auto"),
                                       cl::init("auto"));
static cl::opt<unsigned> seed(cl::cat(faRunCategory), "seed", cl::desc("random seed"), cl::init(0));
static cl::opt<bool> check(cl::cat(faRunCategory), "check",
                           cl::desc("compare with a float64 reference"));
static cl::opt<bool> gradcheck(
    cl::cat(faRunCategory), "gradcheck",
    cl::desc("finite-difference check of the backward (needs --dtype f64)"));
static cl::opt<bool> cacheReport(
    cl::cat(faRunCategory), "cache-report",
    cl::desc("say, after the runs, whether the kernel cache held the "
             "compiled spec"));
static cl::opt<unsigned> repeat(
    cl::cat(faRunCategory), "repeat",
    cl::desc("time each entry over N more runs after a warm-up and print "
             "the median (the default 0 times the single checked run)"),
    cl::init(0));
static cl::opt<int64_t>
    blockM(cl::cat(faRunCategory), "block-m", cl::desc("query rows per tile (default: the target's)"),
           cl::init(0));
static cl::opt<int64_t>
    blockN(cl::cat(faRunCategory), "block-n", cl::desc("keys per tile (default: the target's)"),
           cl::init(0));
static cl::opt<int64_t> mmaBlockN(
    cl::cat(faRunCategory), "mma-block-n",
    cl::desc("keys per shared-memory tile of the tensor-core kernels, a "
             "multiple of 16: the tuner times 32 (mma.sync forwards), 64 and "
             "128 (default: the tuning table's, or 64 with FA_AUTOTUNE=0; "
             "the split-KV kernels take 64 or more)"),
    cl::init(0));
static cl::opt<int64_t> mmaWarps(
    cl::cat(faRunCategory), "mma-warps",
    cl::desc("warps per tensor-core forward block, 4 or 8 (default: "
             "the tuning table's, or 4 with FA_AUTOTUNE=0)"),
    cl::init(0));
static cl::opt<int64_t> mmaSharedBytes(
    cl::cat(faRunCategory), "mma-shared-bytes",
    cl::desc("shared memory the tensor-core kernels' tiles may use, >= 49152 "
             "(above it, dynamic shared memory; default: the tuning table's, "
             "or 49152 with FA_AUTOTUNE=0)"),
    cl::init(0));
static cl::opt<int64_t> mmaKvStages(
    cl::cat(faRunCategory), "mma-kv-stages",
    cl::desc("K/V tiles of the tensor-core forward in shared memory at once, "
             "1 or 2 (default: the tuning table's, or 1 with FA_AUTOTUNE=0); "
             "the wgmma forward takes 1 to 3 (default: 2 where they fit)"),
    cl::init(0));
static cl::opt<std::string> wgmmaSchedule(
    cl::cat(faRunCategory), "wgmma-schedule",
    cl::desc("the wgmma forward's consumer schedule: auto (default: the "
             "compiler's, by head dim and mask), pipelined (tile t's softmax "
             "under tile t-1's P V) or serial"),
    cl::init("auto"));
static cl::opt<bool> branchedTiles(
    cl::cat(faRunCategory), "branched-tiles",
    cl::desc("the forwards and the wgmma backward walk each phase's tiles "
             "in one loop, masking the edge tiles under a branch (about "
             "half the kernels' code and ptxas time)"),
    cl::init(false));
static cl::opt<bool> wgmmaPersistent(
    cl::cat(faRunCategory), "wgmma-persistent",
    cl::desc("the wgmma forward's and dQ kernel's (D <= 128) grids are "
             "persistent: one block per SM "
             "drawing query blocks (default; false: one block each)"),
    cl::init(true));
static cl::opt<int64_t> wgmmaGroups(
    cl::cat(faRunCategory), "wgmma-groups",
    cl::desc("the wgmma forward's consumer warpgroups per block, 64 query "
             "rows each: 1 to 3 (0: the compiler's choice)"),
    cl::init(0));
static cl::opt<int64_t> gridSection(
    cl::cat(faRunCategory), "grid-section",
    cl::desc("forward grids: (batch, head) pairs whose query tiles run "
             "interleaved, the longest causal tiles first (0: the "
             "compiler's choice; 1: one pair after another)"),
    cl::init(0));
static cl::opt<std::string> mmaGeneration(
    cl::cat(faRunCategory), "mma-generation",
    cl::desc("MMA generation of the tensor-core kernels: auto (wgmma forwards "
             "on sm_90a, else mma.sync), mma-sync or wgmma"),
    cl::init("auto"));
static cl::opt<bool> allowTf32(
    cl::cat(faRunCategory), "allow-tf32",
    cl::desc("f32 on the GPU: one tf32 MMA per product (faster, 10-bit "
             "mantissa; checked at f16's tolerance) instead of three"),
    cl::init(false));
static cl::opt<bool>
    deterministic(cl::cat(faRunCategory), "deterministic",
                  cl::desc("backward: the same bits from run to run (overrides "
                           "--dq-atomics)"),
                  cl::init(false));
static cl::opt<bool> dqAtomics(
    cl::cat(faRunCategory), "dq-atomics",
    cl::desc("the wgmma backward's dK/dV kernel adds dQ by f32 TMA "
             "reduce-adds (D up to 128; not deterministic; on by default); "
             "--dq-atomics=false: dQ's own kernel"),
    cl::init(true));

namespace {

[[noreturn]] void die(const std::string &message) {
  errs() << "fa-run: " << message << "\n";
  std::exit(1);
}

/// `sizes` joined by `separator`: "2,8,555" for a shape.
std::string joinSizes(const std::vector<int64_t> &sizes, StringRef separator) {
  return llvm::join(
      llvm::map_range(sizes, [](int64_t size) { return std::to_string(size); }),
      separator);
}

//===----------------------------------------------------------------------===//
// Host tensors in any fa dtype.
//===----------------------------------------------------------------------===//

/// The 16-bit formats' bit layouts (HalfFloat.h).
fa::half::Format halfFormat(fa::DType dtype) {
  return dtype == fa::DType::BF16 ? fa::half::kBFloat16 : fa::half::kFloat16;
}

struct HostTensor {
  fa::DType dtype;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> bytes;

  /// NaN-poisoned (poison) unless `poisoned` is false, for a caller that
  /// writes every element itself.
  HostTensor(fa::DType dtype, std::vector<int64_t> sizes, bool poisoned = true)
      : dtype(dtype), sizes(std::move(sizes)) {
    // Sizes from --shape multiply past int64 easily: checked here, so that
    // a wrapped count never sizes a tensor that the kernel then overruns.
    int64_t count = 1, byteCount = 0;
    bool overflows = false;
    for (int64_t size : this->sizes)
      overflows |= llvm::MulOverflow(count, size, count);
    overflows |= llvm::MulOverflow(
        count, static_cast<int64_t>(fa::dtypeSize(dtype)), byteCount);
    if (overflows)
      die("--shape: a host tensor of sizes [" + joinSizes(this->sizes, ", ") +
          "] has more bytes than 2^63");
    bytes.resize(byteCount);
    if (poisoned)
      poison();
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
  /// Fills with NaN so an element the kernel forgets to write shows up:
  /// element 0's bits, copied over the rest in doubling spans.
  void poison() {
    if (bytes.empty())
      return;
    set(0, std::numeric_limits<double>::quiet_NaN());
    for (size_t filled = fa::dtypeSize(dtype); filled < bytes.size();
         filled *= 2)
      std::memcpy(bytes.data() + filled, bytes.data(),
                  std::min(filled, bytes.size() - filled));
  }
  void set(int64_t i, double x) {
    uint8_t *p = &bytes[i * fa::dtypeSize(dtype)];
    switch (dtype) {
    case fa::DType::F64:
      std::memcpy(p, &x, 8);
      break;
    case fa::DType::I32: {
      // Poison (NaN) has no int32: the most negative one stands for it.
      int32_t n = std::isnan(x) ? std::numeric_limits<int32_t>::min()
                                : static_cast<int32_t>(x);
      std::memcpy(p, &n, 4);
      break;
    }
    case fa::DType::F32: {
      float f = static_cast<float>(x);
      std::memcpy(p, &f, 4);
      break;
    }
    case fa::DType::BF16:
    case fa::DType::F16: {
      uint16_t h = fa::half::fromDouble(x, halfFormat(dtype));
      std::memcpy(p, &h, 2);
      break;
    }
    }
  }
  double get(int64_t i) const {
    const uint8_t *p = &bytes[i * fa::dtypeSize(dtype)];
    switch (dtype) {
    case fa::DType::F64: {
      double x;
      std::memcpy(&x, p, 8);
      return x;
    }
    case fa::DType::I32: {
      int32_t n;
      std::memcpy(&n, p, 4);
      return n;
    }
    case fa::DType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case fa::DType::BF16:
    case fa::DType::F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return fa::half::toDouble(h, halfFormat(dtype));
    }
    }
    return 0;
  }
  /// Stores `values` rounded to the dtype.
  void assign(const std::vector<double> &values) {
    for (int64_t i = 0; i < numel(); ++i)
      set(i, values[i]);
  }
  std::vector<double> values() const {
    std::vector<double> out(numel());
    for (int64_t i = 0; i < numel(); ++i)
      out[i] = get(i);
    return out;
  }
  fa::Tensor view() {
    return fa::Tensor::contiguous(bytes.data(), dtype, sizes);
  }
};

/// SplitMix64 (Steele, Lea and Flood): a 64-bit generator whose state is
/// one counter, so that each chunk of a tensor starts its own stream from
/// the tensor's seed and its index.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1]: 53 random bits, never 0 (Box-Muller takes its log).
  double uniform() { return double((next() >> 11) + 1) * 0x1p-53; }
};

/// Random values already rounded to `dtype`, as the kernel will see them:
/// normal, by Box-Muller, in chunks of their own streams (seeded by one
/// draw of `rng` and the chunk's index), filled by several threads at once,
/// so that the values do not depend on the thread count. std::
/// normal_distribution over mt19937_64 took about 60 ns a value, the most
/// of fa-run's time at decode shapes (two caches of 134M elements).
HostTensor randomTensor(fa::DType dtype, std::vector<int64_t> sizes,
                        std::mt19937_64 &rng, double stddev = 1.0) {
  HostTensor t(dtype, std::move(sizes), /*poisoned=*/false);
  const uint64_t seed = rng();
  const int64_t n = t.numel();
  constexpr int64_t kChunk = int64_t(1) << 20; // even: values come in pairs
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  auto fill = [&](int64_t chunk) {
    SplitMix64 gen{seed ^ (uint64_t(chunk) * 0xd1b54a32d192ed03ULL)};
    int64_t end = std::min(n, (chunk + 1) * kChunk);
    for (int64_t i = chunk * kChunk; i < end; i += 2) {
      double r = stddev * std::sqrt(-2.0 * std::log(gen.uniform()));
      double angle = 2.0 * llvm::numbers::pi * gen.uniform();
      t.set(i, r * std::cos(angle));
      if (i + 1 < end)
        t.set(i + 1, r * std::sin(angle));
    }
  };
  int64_t threads = std::min<int64_t>(
      chunks, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<int64_t> nextChunk{0};
  auto worker = [&] {
    for (int64_t c; (c = nextChunk.fetch_add(1)) < chunks;)
      fill(c);
  };
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
  return t;
}

/// max |got - ref| / max |ref|; matching infinities count as exact.
double relativeError(const std::vector<double> &got,
                     const std::vector<double> &ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isinf(ref[i]) || std::isinf(got[i])) {
      if (got[i] != ref[i])
        return INFINITY;
      continue;
    }
    if (std::isnan(got[i]))
      return NAN;
    num = std::max(num, std::abs(got[i] - ref[i]));
    den = std::max(den, std::abs(ref[i]));
  }
  return den > 0 ? num / den : num;
}

double tolerance(fa::DType dtype) {
  switch (dtype) {
  case fa::DType::F64:
    return 1e-10;
  case fa::DType::F32:
    // tf32 operands carry f16's 10-bit mantissa.
    return allowTf32 ? tolerance(fa::DType::F16) : 1e-4;
  case fa::DType::F16:
    return 5e-3;
  case fa::DType::BF16:
    return 3e-2;
  case fa::DType::I32:
    return 0;
  }
  return 0;
}

struct Checker {
  bool failed = false;
  void report(const std::string &what, const std::vector<double> &got,
              const std::vector<double> &ref, double tol) {
    double err = relativeError(got, ref);
    bool bad = !(err <= tol);
    failed |= bad;
    outs() << " " << what << "=" << format("%.2e", err) << (bad ? "(FAIL)" : "");
  }
};

/// Parses "a,b,c;d,e,f" into shapes of `arity` positive sizes.
std::vector<std::vector<int64_t>> parseShapes(const std::string &text,
                                              size_t arity) {
  std::vector<std::vector<int64_t>> shapes;
  SmallVector<StringRef> groups;
  StringRef(text).split(groups, ';', -1, false);
  for (StringRef group : groups) {
    SmallVector<StringRef> parts;
    group.split(parts, ',');
    std::vector<int64_t> shape;
    for (StringRef part : parts) {
      int64_t v;
      if (part.trim().getAsInteger(10, v) || v < 1)
        die("--shape: '" + group.str() + "' must be " +
            std::to_string(arity) + " positive integers separated by ','");
      shape.push_back(v);
    }
    if (shape.size() != arity)
      die("--shape: '" + group.str() + "' has " +
          std::to_string(shape.size()) + " sizes, expected " +
          std::to_string(arity));
    shapes.push_back(shape);
  }
  return shapes;
}

struct Runner {
  fa::Program &program;
  Checker checker;
  std::mt19937_64 rng;

  void run(const fa::KernelInfo &info, const std::vector<int64_t> &shape) {
    if (info.softmaxMatmul)
      return runSoftmaxMatmul(info, shape);
    runAttention(info, shape);
  }

  /// Runs on host tensors; on the GPU through device copies of them (every
  /// tensor goes up, poisoned outputs included, and comes back). Returns the
  /// median time over 1 + --repeat runs (after one warm-up run when
  /// repeating), in milliseconds: GPU time of the kernels (CUDA events) on
  /// the GPU, wall time of the call on the CPU.
  double call(const std::string &kernel, fa::Entry entry,
              std::vector<HostTensor *> tensors) {
    std::vector<fa::Tensor> args;
    std::vector<std::unique_ptr<fa::DeviceBuffer>> device;
    std::string error;
    for (HostTensor *t : tensors) {
      args.push_back(t->view());
      if (program.target() != fa::Target::GPU)
        continue;
      device.push_back(fa::DeviceBuffer::allocate(t->bytes.size(), error));
      if (!device.back() || !device.back()->upload(t->bytes.data(), error))
        die(error);
      args.back().data = device.back()->data();
    }
    // On the GPU, the time is the kernels' own (CUDA events around each
    // launch); on the CPU, the call's wall time.
    bool gpu = program.target() == fa::Target::GPU;
    fa::setKernelTiming(gpu);
    (void)fa::takeKernelTime();
    std::vector<double> times;
    for (unsigned i = 0; i < 1 + (repeat ? repeat + 1 : 0); ++i) {
      auto start = std::chrono::steady_clock::now();
      if (!program.run(kernel, entry, args, error))
        die(error);
      times.push_back(gpu ? fa::takeKernelTime()
                          : std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - start)
                                .count());
    }
    fa::setKernelTiming(false);
    for (size_t i = 0; i < device.size(); ++i)
      if (!device[i]->download(tensors[i]->bytes.data(), error))
        die(error);
    if (repeat)
      times.erase(times.begin()); // warm-up
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

  void runSoftmaxMatmul(const fa::KernelInfo &info,
                        const std::vector<int64_t> &s) {
    fa::DType dt = program.dtype();
    HostTensor x = randomTensor(dt, {s[0], s[1], s[2]}, rng);
    HostTensor v = randomTensor(dt, {s[0], s[2], s[3]}, rng);
    HostTensor out(dt, {s[0], s[1], s[3]});
    double ms = call(info.name, fa::Entry::Forward, {&x, &v, &out});
    outs() << info.name << " shape=" << joinSizes(s, ",")
           << " dtype=" << fa::dtypeName(dt) << format(" time=%.1fms", ms);
    if (check)
      checker.report("out", out.values(),
                     fa::reference::softmaxMatmul(s[0], s[1], s[2], s[3],
                                                  x.values(), v.values()),
                     tolerance(dt));
    outs() << "\n";
  }

  void runAttention(const fa::KernelInfo &info,
                    const std::vector<int64_t> &s) {
    fa::DType dt = program.dtype(), acc = fa::accumulatorDType(dt);
    int64_t B = s[0], Hq = s[1], Hkv = s[2], Sq = s[3], Sk = s[4], D = s[5];
    fa::reference::Problem p;
    p.batch = B, p.hq = Hq, p.hkv = Hkv, p.sq = Sq, p.sk = Sk, p.d = D;
    p.causal = info.causal;
    p.window = info.window;
    p.sinkTokens = info.sinkTokens;
    p.scale = info.scale ? *info.scale : 1.0 / std::sqrt(double(D));
    // key_lengths: batch entry 0 sees one key, the last all Sk, the others
    // a random count. With `append` the step's Sq new keys are among them:
    // the lengths passed stop Sq keys short.
    HostTensor keyLengths(fa::DType::I32, {B});
    int64_t appended = info.appends ? Sq : 0;
    if (appended > Sk)
      die("an append spec writes Sq new keys per sequence: Sq (" +
          std::to_string(Sq) + ") must be at most Sk (" + std::to_string(Sk) +
          ")");
    if (info.keyLengths || info.packedSequences) {
      std::uniform_int_distribution<int64_t> count(
          std::max<int64_t>(appended, 1), Sk);
      for (int64_t b = 0; b < B; ++b) {
        p.keyLengths.push_back(b == 0       ? std::max<int64_t>(appended, 1)
                               : b == B - 1 ? Sk
                                            : count(rng));
        keyLengths.set(b, static_cast<double>(p.keyLengths.back() - appended));
      }
    }
    // 2 D per visible (query, key) pair and head for each of the two matrix
    // products (bench/common.py's count).
    double flops = 4.0 * Hq * D * double(fa::reference::visiblePairs(p));

    HostTensor q = randomTensor(dt, {B, Hq, Sq, D}, rng);
    HostTensor k = randomTensor(dt, {B, Hkv, Sk, D}, rng);
    HostTensor v = randomTensor(dt, {B, Hkv, Sk, D}, rng);
    HostTensor sinks = randomTensor(acc, {Hq}, rng);
    HostTensor o(dt, {B, Hq, Sq, D}), lse(acc, {B, Hq, Sq});
    // append: k and v are the caches after the step. Its new rows go to
    // the kernel as k_new and v_new, and the caches it gets hold NaN there
    // until it writes them.
    HostTensor kNew(dt, {B, Hkv, std::max<int64_t>(appended, 1), D});
    HostTensor vNew(dt, kNew.sizes);
    std::optional<HostTensor> kCopy, vCopy;
    if (appended) {
      kCopy.emplace(k);
      vCopy.emplace(v);
    }
    HostTensor &kBefore = appended ? *kCopy : k;
    HostTensor &vBefore = appended ? *vCopy : v;
    for (int64_t b = 0; b < B && appended; ++b)
      for (int64_t h = 0; h < Hkv; ++h)
        for (int64_t j = 0; j < appended; ++j)
          for (int64_t c = 0; c < D; ++c) {
            int64_t from =
                ((b * Hkv + h) * Sk + p.keyLengths[b] - appended + j) * D + c;
            int64_t to = ((b * Hkv + h) * appended + j) * D + c;
            kNew.set(to, k.get(from));
            vNew.set(to, v.get(from));
            kBefore.set(from, std::numeric_limits<double>::quiet_NaN());
            vBefore.set(from, std::numeric_limits<double>::quiet_NaN());
          }
    // block_table: k and v go into a pool of pages of P keys (the spec's,
    // or 16), one spare, in shuffled order; the unowned page and the rows
    // past Sk stay poisoned (NaN), which no kernel may read.
    int64_t pageSize = info.argSizes[1][2] > 0 ? info.argSizes[1][2] : 16;
    int64_t perSequence = (Sk + pageSize - 1) / pageSize;
    HostTensor table(fa::DType::I32, {B, info.blockTable ? perSequence : 1});
    HostTensor kPages(
        dt, {info.blockTable ? B * perSequence + 1 : 1, Hkv, pageSize, D});
    HostTensor vPages(dt, kPages.sizes);
    if (info.blockTable) {
      std::vector<int64_t> order(B * perSequence + 1);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t slot = 0; slot < perSequence; ++slot)
          table.set(b * perSequence + slot,
                    static_cast<double>(order[b * perSequence + slot]));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < Hkv; ++h)
          for (int64_t j = 0; j < Sk; ++j) {
            int64_t page =
                static_cast<int64_t>(table.get(b * perSequence + j / pageSize));
            int64_t from = ((b * Hkv + h) * Sk + j) * D;
            int64_t to = ((page * Hkv + h) * pageSize + j % pageSize) * D;
            for (int64_t c = 0; c < D; ++c) {
              kPages.set(to + c, kBefore.get(from + c));
              vPages.set(to + c, vBefore.get(from + c));
            }
          }
    }
    // Packed sequences (query_starts/key_starts): entry b's Sq query rows
    // and its first key_lengths[b] keys go end to end into one batch entry
    // ([1, H, rows, D]), and o and lse come back out of it for the
    // per-entry reference.
    int64_t packedRows = info.packedSequences ? B * Sq : 1;
    int64_t packedKeys = 0;
    for (int64_t n : p.keyLengths)
      packedKeys += n;
    HostTensor queryStarts(fa::DType::I32, {B + 1});
    HostTensor keyStarts(fa::DType::I32, {B + 1});
    HostTensor qPacked(dt, {1, Hq, packedRows, D});
    HostTensor kPacked(dt, {1, Hkv, std::max<int64_t>(packedKeys, 1), D});
    HostTensor vPacked(dt, kPacked.sizes);
    HostTensor oPacked(dt, qPacked.sizes), lsePacked(acc, {1, Hq, packedRows});
    // Element (b, h, i, c) of a [B, H, rows, D] tensor and (h, row, c) of a
    // packed [1, H, rows, D] one.
    auto at = [&](int64_t b, int64_t h, int64_t heads, int64_t rows,
                  int64_t i) { return ((b * heads + h) * rows + i) * D; };
    auto move = [&](const HostTensor &from, int64_t fromAt, HostTensor &to,
                    int64_t toAt, int64_t count) {
      for (int64_t c = 0; c < count; ++c)
        to.set(toAt + c, from.get(fromAt + c));
    };
    if (info.packedSequences) {
      int64_t keyRow = 0;
      for (int64_t b = 0; b < B; ++b) {
        queryStarts.set(b, static_cast<double>(b * Sq));
        keyStarts.set(b, static_cast<double>(keyRow));
        for (int64_t h = 0; h < Hq; ++h)
          move(q, at(b, h, Hq, Sq, 0), qPacked,
               at(0, h, Hq, packedRows, b * Sq), Sq * D);
        for (int64_t h = 0; h < Hkv; ++h) {
          move(k, at(b, h, Hkv, Sk, 0), kPacked,
               at(0, h, Hkv, packedKeys, keyRow), p.keyLengths[b] * D);
          move(v, at(b, h, Hkv, Sk, 0), vPacked,
               at(0, h, Hkv, packedKeys, keyRow), p.keyLengths[b] * D);
        }
        keyRow += p.keyLengths[b];
      }
      queryStarts.set(B, static_cast<double>(B * Sq));
      keyStarts.set(B, static_cast<double>(keyRow));
    }

    std::vector<HostTensor *> fwdArgs = {&q, &kBefore, &vBefore};
    if (info.blockTable)
      fwdArgs = {&q, &kPages, &vPages};
    if (info.packedSequences)
      fwdArgs = {&qPacked, &kPacked, &vPacked};
    if (info.learnableSinks)
      fwdArgs.push_back(&sinks);
    if (info.keyLengths)
      fwdArgs.push_back(&keyLengths);
    if (info.blockTable)
      fwdArgs.push_back(&table);
    if (info.appends) {
      fwdArgs.push_back(&kNew);
      fwdArgs.push_back(&vNew);
    }
    if (info.packedSequences) {
      fwdArgs.insert(fwdArgs.end(),
                     {&queryStarts, &keyStarts, &oPacked, &lsePacked});
    } else {
      fwdArgs.push_back(&o);
      fwdArgs.push_back(&lse);
    }

    double ms = call(info.name, fa::Entry::Forward, fwdArgs);
    if (info.packedSequences)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < Hq; ++h) {
          move(oPacked, at(0, h, Hq, packedRows, b * Sq), o,
               at(b, h, Hq, Sq, 0), Sq * D);
          for (int64_t i = 0; i < Sq; ++i)
            lse.set((b * Hq + h) * Sq + i,
                    lsePacked.get(h * packedRows + b * Sq + i));
        }
    outs() << info.name << " shape=" << joinSizes(s, ",")
           << " dtype=" << fa::dtypeName(dt) << " target="
           << (program.target() == fa::Target::GPU ? "gpu" : "cpu")
           << format(" fwd=%.3fms", ms)
           << format(" fwd_tflops=%.2f", flops / ms / 1e9);
    std::vector<double> sinkValues = sinks.values();
    const std::vector<double> *sinkPtr =
        info.learnableSinks ? &sinkValues : nullptr;
    // Checking needs the float64 forward; timing alone (--repeat without
    // --check) skips it: it is O(S^2) on the host.
    bool verifies = check || gradcheck;
    fa::reference::Forward ref;
    if (verifies)
      ref = fa::reference::attention(p, q.values(), k.values(), v.values(),
                                     sinkPtr);
    if (check) {
      checker.report("o", o.values(), ref.o, tolerance(dt));
      checker.report("lse", lse.values(), ref.lse, tolerance(acc));
      if (appended) {
        // The caches after the step: every key a sequence now has, the
        // new ones written by the kernel, against k and v.
        std::vector<double> got[2], want[2];
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < Hkv; ++h)
            for (int64_t j = 0; j < p.keyLengths[b]; ++j)
              for (int64_t c = 0; c < D; ++c) {
                int64_t at = ((b * Hkv + h) * Sk + j) * D + c;
                if (info.blockTable) {
                  int64_t page = static_cast<int64_t>(
                      table.get(b * perSequence + j / pageSize));
                  at = ((page * Hkv + h) * pageSize + j % pageSize) * D + c;
                }
                HostTensor &kCache = info.blockTable ? kPages : kBefore;
                HostTensor &vCache = info.blockTable ? vPages : vBefore;
                got[0].push_back(kCache.get(at));
                got[1].push_back(vCache.get(at));
                want[0].push_back(k.get(((b * Hkv + h) * Sk + j) * D + c));
                want[1].push_back(v.get(((b * Hkv + h) * Sk + j) * D + c));
              }
        checker.report("k_cache", got[0], want[0], tolerance(dt));
        checker.report("v_cache", got[1], want[1], tolerance(dt));
      }
    }
    if ((backward || gradcheck) && info.hasBackward) {
      // The backward sees the reference forward's o and lse, rounded as the
      // kernel stores them (fa's own when only timing), and a random dO.
      HostTensor oIn = o, lseIn = lse;
      if (verifies) {
        oIn.assign(ref.o);
        lseIn.assign(ref.lse);
      }
      HostTensor dO = randomTensor(dt, o.sizes, rng);
      HostTensor dq(dt, q.sizes), dk(dt, k.sizes), dv(dt, v.sizes);
      HostTensor dsinks(acc, {Hq});
      std::vector<HostTensor *> bwdArgs = {&q, &k, &v, &oIn, &lseIn, &dO};
      if (info.learnableSinks)
        bwdArgs.push_back(&sinks);
      for (HostTensor *t : {&dq, &dk, &dv})
        bwdArgs.push_back(t);
      if (info.learnableSinks)
        bwdArgs.push_back(&dsinks);
      ms = call(info.name, fa::Entry::Backward, bwdArgs);
      outs() << format(" bwd=%.3fms", ms)
             << format(" bwd_tflops=%.2f", 2.5 * flops / ms / 1e9);
      if (check) {
        fa::reference::Backward g = fa::reference::attentionGrad(
            p, q.values(), k.values(), v.values(), oIn.values(),
            lseIn.values(), dO.values(), sinkPtr);
        checker.report("dq", dq.values(), g.dq, tolerance(dt));
        checker.report("dk", dk.values(), g.dk, tolerance(dt));
        checker.report("dv", dv.values(), g.dv, tolerance(dt));
        if (info.learnableSinks)
          checker.report("dsinks", dsinks.values(), g.dsinks, tolerance(acc));
      }
      if (gradcheck)
        finiteDifferences(info, fwdArgs, dO, {&dq, &dk, &dv, &dsinks});
    }
    outs() << "\n";
  }

  /// Compares the backward with central differences of
  /// L = sum(o * dO) on a sample of elements of q, k, v and sinks.
  void finiteDifferences(const fa::KernelInfo &info,
                         std::vector<HostTensor *> fwdArgs,
                         const HostTensor &dO,
                         std::vector<HostTensor *> grads) {
    if (program.dtype() != fa::DType::F64)
      die("--gradcheck needs --dtype f64");
    HostTensor &o = *fwdArgs[fwdArgs.size() - 2];
    std::vector<double> dOv = dO.values();
    auto loss = [&]() {
      call(info.name, fa::Entry::Forward, fwdArgs);
      double total = 0;
      for (int64_t i = 0; i < o.numel(); ++i)
        total += o.get(i) * dOv[i];
      return total;
    };
    const char *names[] = {"fd_dq", "fd_dk", "fd_dv", "fd_dsinks"};
    size_t numInputs = info.learnableSinks ? 4 : 3;
    for (size_t t = 0; t < numInputs; ++t) {
      HostTensor &x = *fwdArgs[t];
      std::vector<double> analytic = grads[t]->values();
      std::vector<double> sampled, numeric;
      std::uniform_int_distribution<int64_t> pick(0, x.numel() - 1);
      for (int n = 0; n < 12; ++n) {
        int64_t i = pick(rng);
        double x0 = x.get(i), eps = 1e-5;
        x.set(i, x0 + eps);
        double up = loss();
        x.set(i, x0 - eps);
        double down = loss();
        x.set(i, x0);
        numeric.push_back((up - down) / (2 * eps));
        sampled.push_back(analytic[i]);
      }
      // Normalise by the whole gradient's scale, not the sample's.
      double scale = 0;
      for (double g : analytic)
        scale = std::max(scale, std::abs(g));
      double err = 0;
      for (size_t n = 0; n < sampled.size(); ++n)
        err = std::max(err, std::abs(sampled[n] - numeric[n]));
      err = scale > 0 ? err / scale : err;
      bool bad = !(err <= 1e-5);
      checker.failed |= bad;
      outs() << " " << names[t] << "=" << format("%.2e", err)
             << (bad ? "(FAIL)" : "");
    }
  }
};

} // namespace

int main(int argc, char **argv) {
  // A --shape whose host tensors (or their float64 reference) do not fit
  // this machine's memory ends here with a message, not in std::bad_alloc's
  // abort.
  std::set_new_handler([] {
    die("out of host memory: the --shape's host tensors and float64 "
        "reference do not fit this machine (try fewer or shorter rows)");
  });
  cl::HideUnrelatedOptions(faRunCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "fa-run: compile an fa spec, run its kernels "
                              "on random inputs and check them\n");
  fa::CompileOptions options;
  if (!dtypeName.empty()) {
    options.dtype = fa::parseDType(dtypeName);
    if (!options.dtype)
      die("--dtype: unknown '" + dtypeName + "'; expected f16, bf16, f32 or "
          "f64");
  }
  if (targetName == "cpu")
    options.target = fa::Target::CPU;
  else if (targetName == "gpu")
    options.target = fa::Target::GPU;
  else if (targetName == "auto")
    options.target = fa::Target::Auto;
  else
    die("--target: unknown '" + targetName + "'; expected cpu, gpu or auto");
  if (blockM < 0 || blockN < 0)
    die("--block-m and --block-n must be >= 1 (0 or absent: the target's "
        "default)");
  options.blockM = blockM;
  options.blockN = blockN;
  if (mmaBlockN != 0 && (mmaBlockN < 16 || mmaBlockN % 16 != 0))
    die("--mma-block-n must be a positive multiple of 16, got " +
        std::to_string(mmaBlockN));
  if (mmaWarps != 0 && mmaWarps != 4 && mmaWarps != 8)
    die("--mma-warps must be 4 or 8, got " + std::to_string(mmaWarps));
  options.mmaBlockN = mmaBlockN;
  options.mmaWarps = mmaWarps;
  options.allowTf32 = allowTf32;
  options.deterministic = deterministic;
  options.dqAtomics = dqAtomics;
  if (mmaGeneration != "auto" && mmaGeneration != "mma-sync" &&
      mmaGeneration != "wgmma")
    die("--mma-generation must be auto, mma-sync or wgmma, got '" +
        mmaGeneration + "'");
  options.mmaGeneration = mmaGeneration;
  if (mmaSharedBytes != 0 && mmaSharedBytes < 49152)
    die("--mma-shared-bytes must be at least 49152 (what every block has), "
        "got " + std::to_string(mmaSharedBytes));
  options.mmaSharedBytes = mmaSharedBytes;
  if (mmaKvStages < 0 || mmaKvStages > 3)
    die("--mma-kv-stages must be 1 or 2 (1 to 3 on wgmma), got " +
        std::to_string(mmaKvStages));
  options.mmaKvStages = mmaKvStages;
  if (wgmmaSchedule != "auto" && wgmmaSchedule != "serial" &&
      wgmmaSchedule != "pipelined")
    die("--wgmma-schedule must be auto, serial or pipelined, got '" +
        wgmmaSchedule + "'");
  options.wgmmaSchedule = wgmmaSchedule;
  options.branchedTiles = branchedTiles;
  options.wgmmaPersistent = wgmmaPersistent;
  if (wgmmaGroups < 0 || wgmmaGroups > 3)
    die("--wgmma-groups must be 1 to 3 (0: the compiler's choice), got " +
        std::to_string(wgmmaGroups));
  options.wgmmaGroups = wgmmaGroups;
  if (gridSection < 0)
    die("--grid-section must be 0 (the compiler's choice) or more, got " +
        std::to_string(gridSection));
  options.gridSection = gridSection;

  auto file = MemoryBuffer::getFile(specPath);
  if (!file)
    die("cannot read '" + specPath + "': " + file.getError().message());
  std::string error;
  std::unique_ptr<fa::Program> program = fa::Program::compile(
      (*file)->getBuffer().str(), specPath, options, error);
  if (!program) {
    errs() << error;
    return 1;
  }

  Runner runner{*program, {}, std::mt19937_64(seed)};
  bool ranOne = false;
  for (const fa::KernelInfo &info : program->kernels()) {
    if (!kernelName.empty() && info.name != kernelName)
      continue;
    ranOne = true;
    // Defaults for what the spec leaves dynamic; the spec's static sizes win.
    std::vector<int64_t> shape;
    if (info.softmaxMatmul) {
      shape = {2, 67, 100, 24};
    } else {
      const auto &qs = info.argSizes[0], &ks = info.argSizes[1];
      shape = {2, 8, 2, 100, 100, 32};
      if (qs[1] > 0)
        shape[1] = qs[1];
      if (ks[1] > 0)
        shape[2] = ks[1];
      if (qs[3] > 0)
        shape[5] = qs[3];
    }
    std::vector<std::vector<int64_t>> shapes =
        shapeList.empty() ? std::vector<std::vector<int64_t>>{shape}
                          : parseShapes(shapeList, shape.size());
    for (const auto &s : shapes)
      runner.run(info, s);
  }
  if (!ranOne)
    die("no kernel named '" + kernelName + "' in " + specPath);
  // After the runs: a GPU program on the shipped table builds the configs
  // they take.
  if (cacheReport)
    outs() << "cache: " << program->cacheStatus() << "\n";
  if (runner.checker.failed) {
    errs() << "fa-run: FAILED: an error exceeds the " << fa::dtypeName(
                  program->dtype())
           << " tolerance\n";
    return 1;
  }
  return 0;
}
