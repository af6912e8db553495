// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core=split-kv --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma split-kv" --canonicalize --cse | FileCheck %s --check-prefix=HOPPER

// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core | FileCheck %s --check-prefix=OFF
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="split-kv block-n=32" --canonicalize --cse | FileCheck %s --check-prefix=NARROW

// A config of 32-key tiles (the shipped table's for short windows) is the
// forward's: the split-KV kernel keeps two stages of 64 keys, at which the
// host counts its splits (and the runtime, Program.cpp) and its warps share
// a tile.
// NARROW-LABEL: func.func @gqa_forward(
// NARROW: %[[ROWS:[0-9]+]] = arith.muli %{{.*}}, %c4 : index
// NARROW: arith.ceildivsi %[[ROWS]], %c64 : index
// NARROW: %[[KEYTILES:[0-9]+]] = arith.ceildivsi %{{.*}}, %c64 : index
// NARROW: arith.floordivsi %[[KEYTILES]], %c4 : index
// NARROW: gpu.launch {{.*}} module(@gqa_forward_split_kv_d64) function(@gqa_forward_split_kv_d64) workgroup(%{{.*}} : memref<128x64xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x64xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<3x36x32xf32, #gpu.address_space<workgroup>>)
// NARROW: gpu.launch {{.*}} module(@gqa_forward_mma_d64) function(@gqa_forward_mma_d64) workgroup(%{{.*}} : memref<32x64xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x64xbf16, #gpu.address_space<workgroup>>)

// With split-kv, decode-like shapes take the split-KV forward ahead of
// every other kernel (the JIT compiles a program with it for the first
// shape that splits; fa-compile's exports carry it).
// The host asks the runtime for the SMs, counts the split kernel's blocks
// (query positions times the group of 4 query heads a block packs, over
// 64 rows, per kv head and batch) and, where they leave SMs idle, splits
// each block's keys into as many blocks as fit one wave of the 3 an SM
// holds at D 64, at least 4 key tiles of 64 each, at most 64 splits.
// CHECK-LABEL: func.func @gqa_forward(
// CHECK: %[[SMS:[0-9]+]] = call @faMultiprocessorCount() : () -> i32
// CHECK: %[[SMSIDX:[0-9]+]] = arith.index_cast %[[SMS]] : i32 to index
// CHECK: %[[ROWS:[0-9]+]] = arith.muli %[[SQ:[a-z0-9_]+]], %c4 : index
// CHECK: %[[TILES:[0-9]+]] = arith.ceildivsi %[[ROWS]], %c64 : index
// CHECK: %[[PAIRS:[0-9]+]] = arith.muli %{{.*}}, %c8 : index
// CHECK: %[[BLOCKS:[0-9]+]] = arith.muli %[[TILES]], %[[PAIRS]] : index
// CHECK: %[[KEYTILES:[0-9]+]] = arith.ceildivsi %{{.*}}, %c64 : index
// CHECK: %[[WANTED:[0-9]+]] = arith.muli %[[SMSIDX]], %c3 : index
// CHECK: arith.floordivsi %[[WANTED]], %[[BLOCKS]] : index
// CHECK: arith.floordivsi %[[KEYTILES]], %c4 : index
// CHECK: %[[CLAMPED:[0-9]+]] = arith.minsi %{{.*}}, %c64 : index
// CHECK: %[[IDLE:[0-9]+]] = arith.cmpi slt, %[[BLOCKS]], %[[SMSIDX]] : index
// CHECK: %[[SPLITS:[0-9]+]] = arith.select %[[IDLE]], %[[CLAMPED]], %c1 : index
// Unsplit too where a block packs the group's rows of every position
// (4 query heads, D 64: Sq * 4 rows within 64): K/V read once per group.
// CHECK: %[[PACKS:[0-9]+]] = arith.cmpi sle, %[[ROWS]], %c64 : index
// CHECK: %[[SPLIT:[0-9]+]] = arith.cmpi sgt, %[[SPLITS]], %c1 : index
// CHECK: %[[EITHER:[0-9]+]] = arith.ori %[[SPLIT]], %[[PACKS]] : i1
// CHECK: %[[USE:[0-9]+]] = arith.andi %{{.*}}, %[[EITHER]] : i1
// CHECK: scf.if %[[USE]] {
// The f32 partials: a head per (split, query head).
// CHECK: %[[HEADS:[0-9]+]] = arith.muli %[[SPLITS]], %c32 : index
// CHECK: %[[PO:[a-z0-9_]+]] = memref.alloc(%{{.*}}, %[[HEADS]], %{{.*}}) : memref<?x?x?x64xf32>
// CHECK: %[[PL:[a-z0-9_]+]] = memref.alloc(%{{.*}}, %[[HEADS]], %{{.*}}) : memref<?x?x?xf32>
// Two K/V stages of 64 keys; the learnable sinks are the merge's alone.
// CHECK: gpu.launch {{.*}} module(@gqa_forward_split_kv_d64) function(@gqa_forward_split_kv_d64) workgroup(%{{.*}} : memref<128x64xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<128x64xbf16, #gpu.address_space<workgroup>>, %[[WS:[a-z0-9_]+]] : memref<3x36x32xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.load %arg3
// Where the block's packed rows fit one warp's 16 (a decode step's 4 heads
// of one position), every warp takes warp 0's rows and 16 keys of each
// tile; else a warp runs a tile's math only where one of its rows is among
// the block's (up to 64). The other warps copy K/V and meet the barriers.
// CHECK: %[[WARP:[0-9]+]] = arith.divui %arg9, %c32 : index
// CHECK: %[[R0:[0-9]+]] = arith.muli %{{.*}}, %c64 : index
// CHECK: %[[END:[0-9]+]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[PACKED:[0-9]+]] = arith.subi %[[END]], %[[R0]] : index
// CHECK: %[[SHARE:[0-9]+]] = arith.cmpi ule, %[[PACKED]], %c16 : index
// CHECK: %[[ROWWARP:[0-9]+]] = arith.select %[[SHARE]], %c0, %[[WARP]] : index
// CHECK: arith.muli %[[ROWWARP]], %c16 : index
// CHECK: %[[FIRST:[0-9]+]] = arith.muli %[[WARP]], %c16 : index
// CHECK: %[[HAS:[0-9]+]] = arith.cmpi ult, %[[FIRST]], %[[PACKED]] : index
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if %[[SHARE]] {
// CHECK: %[[SLOT:[a-z0-9_]+]] = memref.subview %arg18[%{{.*}}, 0] [64, 64] [1, 1]
// CHECK: %[[MINE:[a-z0-9_]+]] = memref.subview %[[SLOT]][%[[FIRST]], 0] [16, 64] [1, 1]
// CHECK: nvgpu.ldmatrix %[[MINE]]
// CHECK: nvvm.mma.sync
// CHECK: } else {
// CHECK-NEXT: scf.if %[[HAS]] {
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// After the keys, warps 1-3 hand their m, l and O to warp 0, which merges
// them (weights exp2(m_w - max m)) before the partial's stores.
// CHECK: scf.if %[[SHARE]] {
// CHECK: %[[OTHER:[0-9]+]] = arith.cmpi ne, %[[WARP]], %c0 : index
// CHECK-NEXT: scf.if %[[OTHER]] {
// CHECK-COUNT-36: memref.store %{{.*}}, %[[WS]][
// CHECK: gpu.barrier
// CHECK-NEXT: %[[ZERO:[0-9]+]] = arith.cmpi eq, %[[WARP]], %c0 : index
// CHECK-NEXT: scf.if %[[ZERO]] {
// CHECK-COUNT-3: memref.load %[[WS]][
// CHECK: arith.maxnumf
// CHECK: llvm.nvvm.ex2.approx.ftz.f
// CHECK: math.fma
// CHECK: vector.store %{{.*}}, %[[PO]]
// CHECK: memref.store %{{.*}}, %[[PL]]
// CHECK: gpu.terminator
// The merge: a block per (row, head, batch), its threads 8 groups of the
// 16 quads of D. Group g loads the lse and its quad of o of splits g, g +
// 8, ... (8 a thread: kMaxKeySplits / 8, in two chunks of 4 up to the
// count) before merging them against its own largest lse; group 0 then
// merges the groups' m, l and O in group order, the sink logit joining
// once.
// CHECK: gpu.launch {{.*}} module(@gqa_forward_split_kv_d64_merge) function(@gqa_forward_split_kv_d64_merge) workgroup(%[[GO:[a-z0-9_]+]] : memref<8x64xf32, #gpu.address_space<workgroup>>, %[[GS:[a-z0-9_]+]] : memref<2x8xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[GROUP:[0-9]+]] = arith.minsi %{{.*}}, %c8 : index
// CHECK: scf.if
// CHECK-COUNT-4: vector.load %[[PO]]{{.*}} {alignment = 16 : i64}
// CHECK: scf.if
// CHECK-COUNT-4: vector.load %[[PO]]
// CHECK-NOT: vector.load %[[PO]]
// CHECK: math.exp
// CHECK: vector.store %{{.*}}, %[[GO]][%[[GROUP]],
// CHECK: memref.store %{{.*}}, %[[GS]][%c0, %[[GROUP]]]
// CHECK: memref.store %{{.*}}, %[[GS]][%c1, %[[GROUP]]]
// CHECK: gpu.barrier
// CHECK: memref.load %arg3
// CHECK-COUNT-8: memref.load %[[GS]][%c0,
// CHECK: math.exp
// CHECK: vector.store %{{.*}}, %[[O:[a-z0-9_]+]][
// CHECK-SAME: memref<?x32x?x64xbf16
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %arg5
// CHECK: gpu.terminator
// CHECK: memref.dealloc %[[PO]]
// CHECK: memref.dealloc %[[PL]]
// CHECK: } else {
// CHECK: function(@gqa_forward_mma_d64)

// A window over head counts the spec leaves dynamic holds one split block
// an SM fewer at D 64 (2, not 3: ptxas gives it more registers; the
// count is TensorCoreLimits.h's splitKvBlocksPerSmOf).
// CHECK-LABEL: func.func @swa_forward(
// CHECK: %[[SWASMS:[0-9]+]] = call @faMultiprocessorCount() : () -> i32
// CHECK: %[[SWASMSIDX:[0-9]+]] = arith.index_cast %[[SWASMS]] : i32 to index
// CHECK: arith.muli %[[SWASMSIDX]], %c2 : index
// CHECK: function(@swa_forward_split_kv_d64)

// OFF-LABEL: func.func @gqa_forward(
// OFF-NOT: faMultiprocessorCount
// OFF-NOT: split_kv
// OFF: function(@gqa_forward_mma_d64)

// On Hopper too it is the first kernel, on mma.sync, before the wgmma one.
// HOPPER-LABEL: func.func @gqa_forward(
// HOPPER: call @faMultiprocessorCount()
// HOPPER: function(@gqa_forward_split_kv_d64)
// HOPPER: function(@gqa_forward_split_kv_d64_merge)
// HOPPER: } else {
// HOPPER: function(@gqa_forward_wgmma_d64)

fa.kernel @gqa {
  func.func @forward(%q: tensor<?x32x?x64xbf16>, %k: tensor<?x8x?x64xbf16>,
                     %v: tensor<?x8x?x64xbf16>, %s: tensor<32xf32>)
      -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %s mask causal
        : (tensor<?x32x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<32xf32>)
        -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>
  }
}

fa.kernel @swa {
  func.func @forward(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                     %v: tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 4096
        : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>)
        -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  }
}
