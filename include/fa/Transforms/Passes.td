//===- Passes.td - fa transformation passes ----------------*- tablegen -*-===//

#ifndef FA_TRANSFORMS_PASSES_TD
#define FA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FASpecializeElementType : Pass<"fa-specialize-element-type", "::mlir::ModuleOp"> {
  let summary = "Re-type every fa.kernel to another input element type";
  let description = [{
    A spec names a default element type; this pass specialises the same
    variant to another one (what the JIT and `fa-run --dtype` do). q, k, v,
    o, dO and their gradients take `element-type`; lse, sinks and dsinks take
    its accumulator type (f64 for f64, f32 otherwise).
  }];
  let options = [
    Option<"elementType", "element-type", "std::string", "\"f32\"",
           "f16, bf16, f32 or f64">
  ];
}

def FATile : Pass<"fa-tile", "::mlir::ModuleOp"> {
  let summary = "Lower fa kernels to online-softmax tile loops on memrefs";
  let description = [{
    Each `fa.kernel @K` function `F` becomes a top-level `func.func @K_F`
    in destination-passing style: the inputs as strided memrefs (any
    strides), then one memref per result, written in place.

    Forward (and fa.softmax_matmul): per (batch, query head, query tile) a
    loop over key tiles carrying the running max m, the sum l and the
    accumulator in base-2 units (scale * log2 e folded into the scores), then
    o = acc / l and lse = (m + log2 l) * ln 2. Masks are loop bounds and tile
    predicates: key tiles wholly outside the causal/window region are never
    visited, tiles wholly inside run without a predicate, and only boundary
    tiles (diagonal, window edge, ragged last tile) are predicated. Sink
    tokens are a separate leading phase. The key/value head of query head h
    is h / (Hq / Hkv).

    Backward: a preprocess D = rowsum(dO * o), a dK/dV loop that owns key
    tiles and visits the query tiles of every query head of its group, a dQ
    loop that owns query tiles, and the dsinks reduction. No Sq x Sk buffer
    is ever allocated; scratch is tile-sized.

    `entries=forward` (or `backward`) lowers that entry of each kernel only:
    the runtime compiles a backward when one is first asked for.
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", "16", "query rows per tile">,
    Option<"blockN", "block-n", "int64_t", "32", "keys per tile">,
    Option<"hoistScratch", "hoist-scratch", "bool", "true",
           "allocate tile scratch once before each parallel loop (host); "
           "false keeps it per iteration (one GPU thread per iteration)">,
    Option<"entries", "entries", "std::string", "\"all\"",
           "the entries to lower: all, forward or backward (the others are "
           "dropped, so that a JIT builds only what is called)">,
    Option<"branchedTiles", "branched-tiles", "bool", "false",
           "the forward's key phases in one loop each, the edge tiles "
           "masked under a per-tile predicate (TileBuilder::branchedPhase, "
           "as fa-gpu-tensor-core's option of that name)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect"];
}

def FAGpuTensorCore : Pass<"fa-gpu-tensor-core", "::mlir::ModuleOp"> {
  let summary = "Run attention forwards and backwards on the tensor cores";
  let description = [{
    Runs after fa-tile, on its tiled entries. A dispatch on the run-time
    head dim and layout goes in front of the scalar tile loops: when D is
    one of 32, 64, 80, 96, 128, 192 and 256 (the backward: up to 128),
    every operand the kernels touch has a unit stride on D, the other
    strides are multiples of 16 bytes and the data are 16-byte aligned, a
    warp-level kernel (`<entry>_mma_*_d<D>`) runs instead; any other shape
    keeps the scalar loops.

    f16 and bf16 run on mma.sync m16n8k16; f32 on tf32 m16n8k8 with the
    same fragment layout (each k pair of f16 is two tf32 registers), read
    from shared memory by plain loads instead of ldmatrix, and by default
    three MMAs per product on hi/lo tf32 halves (f32 accuracy); with
    `allow-tf32`, one. Shared tiles shrink (K/V tiles halve, dK/dV blocks
    drop to 2 warps) until they fit `shared-bytes` (default: the 48 KiB of
    static shared memory; above that the tiles are views into dynamic
    shared memory and the launch asks for it).

    Forward (FlashAttention-2): one block of `forward-warps` warps per
    (query tile of 16 rows per warp, query head, batch), causal blocks in decreasing order of work;
    each warp owns 16 query rows with Q in registers; K and V tiles of
    `block-n` keys are staged in shared memory by cp.async (zero filled past
    Sk; the V copy overlaps Q K^T, the next K copy overlaps P V) with an XOR
    swizzle so ldmatrix is conflict free (rows of whole 128-byte periods;
    other rows, as D 32, 80 and 96 in 16-bit types, are padded by one
    16-byte chunk instead, an odd stride that spreads 8 rows over the
    banks just as well); S = Q K^T and O += P V are
    mma.sync m16n8k16 with f32 accumulators, P reused from the S registers;
    the online softmax runs in registers in base 2 (one FMA and one exp2
    per score) with quad shuffles.

    Backward: fa-tile's dK/dV loop (`fa.loop = "dk_dv"`) becomes a block per
    (key tile, kv head, batch) whose warps own 16 keys each and visit the
    query tiles of every query head of the group (S^T = K Q^T, dP^T =
    V dO^T, dV += P^T dO, dK += dS^T Q); its dQ loop (`fa.loop = "dq"`)
    becomes a block per query tile (S = Q K^T, dP = dO V^T, dQ += dS K). P
    comes from the forward's lse. D = rowsum(dO * o) gets a kernel of its
    own (`<entry>_row_dot`: eight lanes a row on 16-byte loads) in front of
    fa-tile's loop, and dsinks one that replaces it (`<entry>_dsinks`, a
    block per head reduced in a fixed order).

    With `generation=wgmma` (sm_90a), the f16/bf16 forwards instead get a
    warp-specialised wgmma kernel (`<entry>_wgmma_d<D>`) for every head dim
    that is a multiple of 16 from 32 to 256: a producer warpgroup that gives
    its registers back (setmaxnreg) and issues TMA copies of Q and of K/V
    tiles of `wgmma-block-n` keys (0: 128 at D 64 to 128, else 64) into
    `wgmma-stages` stages (0: two where they fit) of dynamic shared memory,
    in the wgmma swizzle (128, 64 or 32-byte segments, the widest that
    divides a row); mbarriers say when a tile landed and when its stage is
    free again; `wgmma-groups` consumer warpgroups of 64 query rows take the
    registers and run S = Q K^T as wgmma.mma_async with both operands in
    shared memory and O += P V with P from registers and V transposed from
    shared memory: by default tile t's softmax under tile t-1's P V, with
    the consumers taking turns (named barriers) to issue their GEMMs
    (ping-pong), or serially per tile with `wgmma-schedule=serial`. Under
    windows shorter than 256 keys D 64 keeps the mma.sync forward, whose
    64-row blocks share an SM. The host code has the runtime
    make Q, K and V's tensor maps (`faTensorMapEncode`) at each launch and
    passes them by value (see fa-kernel-tensor-maps); it launches nothing
    when the driver refuses one. The f16/bf16 backward's dK/dV and dQ loops
    get warp-specialised wgmma kernels as well at the same head dims
    (`<entry>_wgmma_dk_dv_d<D>`, `<entry>_wgmma_dq_d<D>`): dK/dV blocks of
    128 keys (64 per consumer) hold K and V and stream Q and dO tiles of 64
    rows over the query tiles that see them; past D 128 a block per 64
    columns of dK and dV, each recomputing S^T and dP^T over the whole head
    dim, and dQ always from its own kernel. By default (`dq-atomics`, and
    not `deterministic`) and up to D 128 the dK/dV kernel computes dQ too:
    both consumers put their dS^T tile in shared memory, each multiplies it
    by half of K's columns on wgmma, puts the f32 product in a shared tile
    and has TMA add it into an f32 accumulator
    (cp.reduce.async.bulk.tensor), which the D kernel zeroes before
    (`_row_dot`; `_wgmma_dq_zero` where D takes the scalar loop) and a
    kernel scales into dq after (`_wgmma_dq_copy`); faster than
    dQ's own kernel at every causal and full shape measured, slower under
    some windows (bench/NOTES.md), so the tuner times both. Otherwise
    (`deterministic`, `dq-atomics=false`, or past D 128) dQ comes from a
    kernel of its own, with one owner per element and the same bits from
    run to run: blocks of 128 rows hold Q and dO and stream K and V over
    the forward's key tiles (`<entry>_wgmma_dq_d<D>`). Where its grid is
    persistent and o fits as a third fixed tile without costing a stage or
    the second copy (D 32-96), the dQ kernel also computes D = rowsum(dO *
    o) and dsinks' partials, and runs before the dK/dV kernel, in place of
    the D kernel (`<entry>_wgmma_dq_row_dot_d<D>`). f32 stays on mma.sync,
    whose kernels never use atomics.

    Key and query tiles and their predicates are the phases fa-tile uses
    (TileBuilder: the variant's mask as loop bounds), so only boundary tiles
    are predicated.
  }];
  let options = [
    Option<"blockN", "block-n", "int64_t", "64",
           "keys per shared-memory tile (a multiple of 16)">,
    Option<"forwardWarps", "forward-warps", "int64_t", "4",
           "warps per forward block, 16 query rows each (4 or 8)">,
    Option<"kvStages", "kv-stages", "int64_t", "1",
           "forward K/V tiles in shared memory at once: 1 (V's copy overlaps "
           "Q K^T, the next K's P V) or 2 (double buffered, the copies of "
           "tile i + 2 overlap tile i + 1)">,
    Option<"sharedBytes", "shared-bytes", "int64_t", "49152",
           "shared memory a block's tiles may use; above 48 KiB they are "
           "dynamic shared memory (the GPU must offer that much)">,
    Option<"allowTf32", "allow-tf32", "bool", "false",
           "f32 inputs: one tf32 MMA per product (10-bit mantissa) instead "
           "of three on a hi/lo split (f32 accuracy)">,
    Option<"generation", "generation", "std::string", "\"mma-sync\"",
           "the MMA generation: mma-sync (sm_80 and later) or wgmma "
           "(sm_90a: f16/bf16 forwards and backwards up to D 128 on "
           "wgmma, everything else on mma.sync)">,
    Option<"wgmmaBlockN", "wgmma-block-n", "int64_t", "0",
           "wgmma forward: keys per K/V tile, a multiple of 16 up to 256 "
           "(0: 128 at D 64 to 128, else 64)">,
    Option<"wgmmaGroups", "wgmma-groups", "int64_t", "0",
           "wgmma forward: consumer warpgroups per block, 64 query rows "
           "each: 1 to 3, at most 2 past D 64 (0: 3 up to D 64, 2 under a "
           "window of fewer than 1024 keys, with sink tokens and past D "
           "64)">,
    Option<"wgmmaPersistent", "wgmma-persistent", "bool", "true",
           "wgmma forward and dQ kernel (D <= 128): a persistent grid, one "
           "block per SM drawing query "
           "blocks from a counter, each block's next Q and K/V copied under "
           "its last tiles (false: one block per query block)">,
    Option<"gridSection", "grid-section", "int64_t", "0",
           "forward grids: (batch, head) pairs whose query tiles run "
           "interleaved, the longest causal tiles first (0: 8; 1: one "
           "pair's tiles after another's)">,
    Option<"wgmmaStages", "wgmma-stages", "int64_t", "0",
           "wgmma forward: K/V stages, 1 to 3 (0: 2, or 1 where two do not "
           "fit); fewer keys per tile where they would not fit">,
    Option<"branchedTiles", "branched-tiles", "bool", "false",
           "the forwards and the wgmma backward: one loop over each phase's "
           "tiles, the edge tiles masked under a uniform branch, instead of "
           "a loop each for the leading masked, unmasked and trailing "
           "masked tiles (about half the kernels' code and ptxas time; "
           "bench/NOTES.md)">,
    Option<"wgmmaSchedule", "wgmma-schedule", "std::string", "\"auto\"",
           "wgmma forward: the consumers' schedule, pipelined (tile t's "
           "softmax under tile t-1's P V, the consumer warpgroups taking "
           "turns to issue their GEMMs), serial (each tile's softmax "
           "between its two GEMMs), or auto (the default: pipelined but "
           "where serial measured faster, "
           "tensor_core::wgmmaForwardSerialByDefault); bench/NOTES.md has "
           "both's numbers">,
    Option<"dqAtomics", "dq-atomics", "bool", "true",
           "wgmma backward: the dK/dV kernel adds dQ into an f32 "
           "accumulator by TMA reduce-adds (the default; not "
           "deterministic); false: dQ's own kernel">,
    Option<"deterministic", "deterministic", "bool", "false",
           "backward: the same bits from run to run (overrides dq-atomics)">,
    Option<"splitKv", "split-kv", "bool", "false",
           "forwards: the split-KV kernels for decode shapes in front of the "
           "others (`<entry>_split_kv_d<D>` and its merge), taken where "
           "the query blocks leave SMs idle">,
    Option<"scalarFallback", "scalar-fallback", "bool", "true",
           "keep fa-tile's scalar loops as the fallback of kernels that "
           "take the spec's fixed head dim, for operands whose layout the "
           "kernels do not take; off, such a fallback instead records an "
           "error at run time (faScalarFallbackMissing), and the caller "
           "runs those operands on a program compiled with it">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::vector::VectorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
}

def FASinkKernelConstants : Pass<"fa-sink-kernel-constants", "::mlir::func::FuncOp"> {
  let summary = "Put constants back into fa-gpu-tensor-core's launches";
  let description = [{
    The canonicalizer hoists constants out of `gpu.launch` bodies (they are
    not isolated from above), so outlining would pass them as kernel
    arguments. The tensor-core kernels index their register state with
    them: as arguments the state goes to local memory. A wgmma that
    overwrites its accumulator takes a poison struct (`llvm.mlir.poison`),
    which as an argument is moved into the accumulator's registers before
    each such wgmma. This clones the constants (every op that is
    ConstantLike and has no operands) a named launch (`function` set, as
    fa-gpu-tensor-core's are) uses into its body; other launches keep their
    arguments.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FADeviceWorkspace : Pass<"fa-device-workspace", "::mlir::func::FuncOp"> {
  let summary = "Put the host function's workspaces in GPU memory";
  let description = [{
    After the parallel loops of a tiled entry became `gpu.launch`es, the
    buffers the host function allocates (the backward's D = rowsum(dO * o))
    are read and written by kernels only: allocate them with `gpu.alloc` and
    free them with `gpu.dealloc` instead of `memref.alloc`/`memref.dealloc`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FAGpuModulesToBinary : Pass<"fa-gpu-modules-to-binary", "::mlir::ModuleOp"> {
  let summary = "Serialize every GPU module to PTX at once";
  let description = [{
    What MLIR's `gpu-module-to-binary` does with `format=isa`, with the
    modules serialized in parallel on the context's threads: each
    `gpu.module` becomes a `gpu.binary` of the same name holding one object
    per target (its PTX). Each module is its own LLVM module and NVPTX
    codegen (the largest take 0.1-0.3 s), and a variant's backward has six:
    one after another they were half of a cold compile's lowering
    (bench/NOTES.md). Errors name the module.
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", "\"\"",
           "the CUDA toolkit, whose libdevice kernels link when they call it">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FAKernelTensorMaps : Pass<"fa-kernel-tensor-maps", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass TMA tensor maps to kernels as grid-constant parameters";
  let description = [{
    Runs on kernels in the LLVM dialect (after convert-gpu-to-nvvm). The
    Hopper forward takes each CUtensorMap by value, as the identified struct
    `!llvm.struct<"fa.tensor_map", (array<16 x i64>)>`, and stores it to a
    stack slot whose address its TMA copies name. TMA reads a tensor map
    only from the param, const or global space, never from the stack: this
    turns each such parameter into `!llvm.ptr {llvm.byval = <the struct>,
    llvm.align = 64, nvvm.grid_constant}`, a 128-byte parameter whose
    address the kernel takes in the param space (`cvta.param`), and lets
    the slot's users use that address. The host's launch is unchanged: it
    already passes a pointer to the 128 bytes.

    A tensor-map parameter used other than by one store into a stack slot is
    an error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def FAKernelGridDependency : Pass<"fa-kernel-grid-dependency", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Make each kernel a programmatic dependent of the one before it (sm_90+)";
  let description = [{
    Runs on kernels in the LLVM dialect, in a module whose NVVM target is
    sm_90 or later (elsewhere it does nothing). A call of fa's is a chain of
    short kernels (the backward's row reduction, dQ's zeroing, dK/dV and
    dQ's conversion; split-KV decode and its merge), and each launch
    normally starts only once the kernel before has drained. Launched as a
    programmatic dependent (the runtime sets
    `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`), the driver
    readies the next kernel's launch while the one before still runs.

    Each kernel's entry gets `griddepcontrol.wait` before anything else,
    as inline PTX with a memory clobber (LLVM's intrinsic is declared as
    touching no memory, which would let a load move above it): nothing of
    the kernel reads or writes memory before the kernel before it has
    finished and its writes are visible. Without a programmatic
    launch it returns at once. No kernel issues
    `griddepcontrol.launch_dependents`, so the next kernel's blocks are
    placed only once this one's have all exited: placed earlier (a trigger
    at entry), they took SMs the one-wave grids (split-KV decode, the
    persistent forward) had counted on, and graph-replayed decode steps ran
    2 us slower (bench/NOTES.md, forty-first session).

    The module gets the external global `fa_grid_dependency`
    (GridDependency.h), which the runtime looks for: a kernel of a module
    without it (an older cache entry, a target before sm_90) launches as
    before.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

def FAKernelRegisterBudget : Pass<"fa-kernel-register-budget", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Fix the register count at entry of kernels that move registers between warpgroups";
  let description = [{
    Runs on kernels in the LLVM dialect. A warp-specialised kernel gives a
    warpgroup's registers to the others with `setmaxnreg`, which ptxas
    honours only when it knows the kernel's register count at entry: with
    `.maxntid` alone it may choose fewer registers than the block could
    have, and then drops every `setmaxnreg` of the kernel ("'setmaxnreg'
    ignored; unable to determine register count at entry", C7508), leaving
    all warps at the entry count and the consumers spilling. Every kernel
    holding an `nvvm.setmaxregister` gets `nvvm.minctasm = 1`
    (`.minnctapersm 1`): with `.maxntid` that fixes the entry count at the
    register file over the block's threads, the count the `setmaxnreg`
    amounts are planned from (wgmmaConsumerRegisters). A kernel that already
    names a minimum is left alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // FA_TRANSFORMS_PASSES_TD
