// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-schedule=serial wgmma-groups=2 dq-atomics" | FileCheck %s
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-schedule=serial wgmma-groups=2 dq-atomics=false" | FileCheck %s --check-prefix=DQKERNEL
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-schedule=serial wgmma-groups=2 dq-atomics deterministic" | FileCheck %s --check-prefix=DQKERNEL
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-block-n=64 wgmma-groups=1 wgmma-schedule=serial" | FileCheck %s --check-prefix=SMALL
// RUN: fa-opt %s --fa-specialize-element-type=element-type=f32 --fa-tile --fa-gpu-tensor-core=generation=wgmma | FileCheck %s --check-prefix=F32
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core=generation=hmma 2>&1 | FileCheck %s --check-prefix=BADGEN
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core="generation=wgmma wgmma-groups=4" 2>&1 | FileCheck %s --check-prefix=BADGROUPS
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core="generation=wgmma wgmma-block-n=24" 2>&1 | FileCheck %s --check-prefix=BADBLOCK
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-stages=3 wgmma-groups=2" | FileCheck %s --check-prefix=PIPE
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core=generation=wgmma | FileCheck %s --check-prefix=THREE
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core="generation=wgmma wgmma-stages=4" 2>&1 | FileCheck %s --check-prefix=BADSTAGES
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core="generation=wgmma wgmma-schedule=eager" 2>&1 | FileCheck %s --check-prefix=BADSCHEDULE
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core=generation=wgmma --canonicalize --cse | FileCheck %s --check-prefix=GRID
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core="generation=wgmma grid-section=-1" 2>&1 | FileCheck %s --check-prefix=BADSECTION
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-persistent=false" --canonicalize --cse | FileCheck %s --check-prefix=ONEBLOCK
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-block-n=176" | FileCheck %s --check-prefix=WIDE
// BADGEN: error: fa-gpu-tensor-core: generation must be mma-sync or wgmma, got 'hmma'
// BADGROUPS: error: fa-gpu-tensor-core: wgmma-groups must be 0 (by head dim) or 1 to 3, got 4
// BADBLOCK: error: fa-gpu-tensor-core: wgmma-block-n must be 0 (by head dim) or a multiple of 16 up to 256, got 24
// BADSTAGES: error: fa-gpu-tensor-core: wgmma-stages must be 0 (two where they fit) or 1 to 3, got 4
// BADSCHEDULE: error: fa-gpu-tensor-core: wgmma-schedule must be auto, serial or pipelined, got 'eager'
// BADSECTION: error: fa-gpu-tensor-core: grid-section must be 0 (the default) or more, got -1

// The forward's grid is one-dimensional (B or H alone may pass grid y/z's
// 65535) and persistent: its items are the query tiles of every (batch,
// head) pair, its blocks one per SM (fewer where the items are fewer; one
// per item where the runtime counts no SM), and a one-block kernel zeroes
// the counter the items past the grid's first are drawn from only where
// there are more items than blocks. The producer's thread decodes each
// item (block b's first is b; its copy of Q is its round mod 2) in sections
// of 8 pairs: within a section
// tile by tile across the pairs, causal tiles with the most keys first.
// GRID-LABEL: func.func @gqa_forward(
// GRID: %[[TILES:[0-9]+]] = arith.ceildivsi %{{.*}}, %c192 : index
// GRID: %[[PAIRS:[0-9]+]] = arith.muli %{{.*}}, %c32 : index
// GRID: %[[WORK:[0-9]+]] = arith.muli %[[TILES]], %[[PAIRS]] : index
// GRID: %[[SMS32:[0-9]+]] = func.call @faMultiprocessorCount() : () -> i32
// GRID: %[[SMS:[0-9]+]] = arith.index_cast %[[SMS32]] : i32 to index
// GRID: %[[ANY:[0-9]+]] = arith.cmpi sgt, %[[SMS]], %c0 : index
// GRID: %[[FEWER:[0-9]+]] = arith.minsi %[[WORK]], %[[SMS]] : index
// GRID: %[[BLOCKS:[0-9]+]] = arith.select %[[ANY]], %[[FEWER]], %[[WORK]] : index
// GRID: %[[MORE:[0-9]+]] = arith.cmpi ugt, %[[WORK]], %[[BLOCKS]] : index
// GRID: scf.if %[[MORE]]
// GRID: gpu.launch {{.*}} in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) {{.*}} module(@gqa_forward_wgmma_d32_schedule)
// GRID: gpu.launch blocks(%[[B:[a-z0-9]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], %{{.*}} = %c1, %{{.*}} = %c1)
// GRID: scf.while ({{.*}} = %c0, {{.*}} = %c0, {{.*}} = %[[B]])
// GRID: ^bb0({{.*}}: index, {{.*}}: index, %[[L:[a-z0-9]+]]: index):
// GRID-NEXT: %[[SECTION:[0-9]+]] = arith.muli %[[TILES]], %c8 : index
// GRID-NEXT: %[[S:[0-9]+]] = arith.divui %[[L]], %[[SECTION]] : index
// GRID-NEXT: %[[FIRST:[0-9]+]] = arith.muli %[[S]], %c8 : index
// GRID-NEXT: %[[LEFT:[0-9]+]] = arith.subi %[[PAIRS]], %[[FIRST]] : index
// GRID-NEXT: %[[WIDTH:[0-9]+]] = arith.minsi %[[LEFT]], %c8 : index
// GRID-NEXT: %[[IN:[0-9]+]] = arith.remui %[[L]], %[[SECTION]] : index
// GRID-NEXT: %[[RANK:[0-9]+]] = arith.divui %[[IN]], %[[WIDTH]] : index
// GRID-NEXT: %[[INPAIR:[0-9]+]] = arith.remui %[[IN]], %[[WIDTH]] : index
// GRID-NEXT: %[[PAIR:[0-9]+]] = arith.addi %[[FIRST]], %[[INPAIR]] : index
// GRID-NEXT: %[[LAST:[0-9]+]] = arith.subi %[[TILES]], %c1 : index
// GRID-NEXT: %[[TILE:[0-9]+]] = arith.subi %[[LAST]], %[[RANK]] : index
// GRID-NEXT: arith.remui %[[PAIR]], %c32 : index
// GRID-NEXT: arith.divui %[[PAIR]], %c32 : index
// GRID: arith.muli %[[TILE]], %c192 : index
// wgmma-persistent=false: a block per item, each running its own (no
// counter, no kernel to zero it, no atomic).
// ONEBLOCK-LABEL: func.func @gqa_forward(
// ONEBLOCK-NOT: memref.alloc
// ONEBLOCK: %[[TILES:[0-9]+]] = arith.ceildivsi %{{.*}}, %c192 : index
// ONEBLOCK: %[[PAIRS:[0-9]+]] = arith.muli %{{.*}}, %c32 : index
// ONEBLOCK: %[[WORK:[0-9]+]] = arith.muli %[[TILES]], %[[PAIRS]] : index
// ONEBLOCK-NOT: _schedule
// ONEBLOCK: gpu.launch blocks(%[[B:[a-z0-9]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[WORK]], %{{.*}} = %c1, %{{.*}} = %c1)
// ONEBLOCK-NOT: memref.atomic_rmw
// ONEBLOCK: module(@gqa_forward_wgmma_d64)
// The dK/dV grid likewise, over (key blocks, kv heads, batch): sections of
// 8 (batch, kv head) pairs, key block by key block across a section's
// pairs, the first key blocks (under a causal mask the longest) first.
// GRID-LABEL: func.func @gqa_backward(
// GRID: gpu.launch blocks(%[[BL:[a-z0-9]+]], {{.*}} module(@gqa_backward_wgmma_dk_dv_d128)
// GRID: %[[BSECTION:[0-9]+]] = arith.muli %{{[0-9]+}}, %c8 : index
// GRID-NEXT: %[[BS:[0-9]+]] = arith.divui %[[BL]], %[[BSECTION]] : index
// GRID-NEXT: %[[BFIRST:[0-9]+]] = arith.muli %[[BS]], %c8 : index
// GRID-NEXT: %[[BLEFT:[0-9]+]] = arith.subi %{{[0-9]+}}, %[[BFIRST]] : index
// GRID-NEXT: %[[BWIDTH:[0-9]+]] = arith.minsi %[[BLEFT]], %c8 : index
// GRID-NEXT: %[[BIN:[0-9]+]] = arith.remui %[[BL]], %[[BSECTION]] : index
// GRID-NEXT: %[[KEYBLOCK:[0-9]+]] = arith.divui %[[BIN]], %[[BWIDTH]] : index
// GRID-NEXT: %[[BINPAIR:[0-9]+]] = arith.remui %[[BIN]], %[[BWIDTH]] : index
// GRID-NEXT: %[[BPAIR:[0-9]+]] = arith.addi %[[BFIRST]], %[[BINPAIR]] : index
// GRID-NEXT: arith.remui %[[BPAIR]], %c8 : index
// GRID-NEXT: arith.divui %[[BPAIR]], %c8 : index
// GRID-NEXT: arith.muli %[[KEYBLOCK]], %c128 : index

// generation=wgmma: the 16-bit forward gets one wgmma kernel per head dim
// (32 to 256), in front of the scalar loops. The host asks the runtime for
// Q, K and V's tensor maps (operand 0, 1, 2; 2-byte elements; the swizzle
// segment and its elements; Q's box of 128 rows, K's and V's of block-n)
// and launches only when all three were made (from D 96 on O's too,
// its boxes 64 rows, a consumer's). The grid is persistent: as
// many blocks as the runtime counts SMs (fewer where the query blocks are
// fewer), after a one-block kernel zeroes the counter they draw their
// items past the first from (only where there are more items than
// blocks). Each block is one producer and two consumer warpgroups (384
// threads, 128 query rows), its tiles in dynamic shared memory (two
// copies of Q, two K and two V stages, twelve mbarriers and two item
// slots, 1 KiB of alignment). One thread sets the barriers up; the
// producer gives registers back and, per item, names it in the slot of
// the item's copy of Q (items alternate between the two) once the
// consumers freed that copy from the item two before, issues Q's TMA copy
// into it, then each K and V tile's
// once its stage is free, and draws the next item (atomic add); the
// consumers take registers, wait for each item's Q (or the end), read the
// slot, and per key tile wait for K,
// run S = Q K^T on wgmma from shared memory (K-major both), free K, run the
// online softmax, wait for V, run O += P V on wgmma with P from registers
// (inline PTX, transposed V) and free V.
// CHECK-LABEL: func.func @gqa_forward(
// CHECK: %[[SMS:.*]] = func.call @faMultiprocessorCount() : () -> i32
// CHECK: %[[COUNTER:.*]] = memref.alloc() : memref<1xi64>
// CHECK: scf.if
// CHECK: gpu.launch {{.*}} module(@gqa_forward_wgmma_d32_schedule)
// CHECK: memref.store %c0_i64{{.*}}, %[[COUNTER]][%c0{{.*}}] : memref<1xi64>
// CHECK: func.call @faTensorMapEncode({{.*}}, %c0_i64, %c2_i64, %c64_i64, %c32_i64, %c128_i64,
// CHECK: func.call @faTensorMapEncode({{.*}}, %c1_i64, %c2_i64{{.*}}, %c64_i64{{.*}}, %c32_i64{{.*}}, %c128_i64{{.*}},
// CHECK: func.call @faTensorMapEncode({{.*}}, %c2_i64{{.*}}, %c2_i64{{.*}}, %c64_i64{{.*}}, %c32_i64{{.*}}, %c128_i64{{.*}},
// CHECK: scf.if
// CHECK: llvm.load {{.*}} : !llvm.ptr -> !llvm.struct<"fa.tensor_map", (array<16 x i64>)>
// CHECK: threads({{.*}}) in ({{.*}} = %c384{{.*}}) dynamic_shared_memory_size %c50288_i32 module(@gqa_forward_wgmma_d32)
// CHECK-COUNT-3: llvm.store {{.*}} : !llvm.struct<"fa.tensor_map", (array<16 x i64>)>, !llvm.ptr
// CHECK: gpu.dynamic_shared_memory
// CHECK-COUNT-12: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.store {{.*}} : i64, !llvm.ptr<3>
// CHECK: nvvm.mbarrier.arrive
// CHECK: scf.condition
// CHECK: nvvm.mbarrier.arrive.expect_tx {{.*}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx {{.*}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: memref.atomic_rmw addi %c1_i64{{.*}}, %[[COUNTER]][%c0{{.*}}] : (i64, memref<1xi64>) -> i64
// CHECK: nvvm.setmaxregister  increase 240
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i64
// CHECK: scf.condition
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// The first k step of S = Q K^T overwrites the accumulator, the rest add.
// Each operand's descriptor is made once; a later k step adds its offset
// (bytes / 16: 32 bytes here) to the descriptor's low word alone.
// CHECK: nvvm.wgmma.mma_async [[A0:%[0-9]+]], [[B0:%[0-9]+]], {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: [[LOW:%[0-9]+]] = arith.trunci [[A0]] : i64 to i32
// CHECK: arith.addi [[LOW]], %c2_i32{{.*}} : i32
// CHECK: arith.andi [[A0]], %c-4294967296_i64{{.*}} : i64
// CHECK: arith.ori
// CHECK: arith.trunci [[B0]] : i64 to i32
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// Up to D 80 each thread stores O's rows from its accumulators.
// CHECK-NOT: nvvm.stmatrix
// CHECK: vector.store {{.*}} : memref<?x32x?x?xbf16, {{.*}}>, vector<2xbf16>
// CHECK: gpu.terminator
// Two copies of Q up to D 64 (16 KiB each at D 64) and at D 96 and 128
// (beside the output staging); one at D 80 (not measured) and past D 128,
// where a second would take the staging's room.
// CHECK: dynamic_shared_memory_size %c99440_i32 module(@gqa_forward_wgmma_d64)
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: dynamic_shared_memory_size %c103512_i32 module(@gqa_forward_wgmma_d80)
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16
// CHECK: module(@gqa_forward_wgmma_d96)
// CHECK: dynamic_shared_memory_size %c230512_i32 module(@gqa_forward_wgmma_d128)
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// From D 96 on (kWgmmaStagedOutputMinHeadDim) O leaves through TMA stores.
// The epilogue: once the item before's store read the consumer's staging
// tile (its leader waits, its 128 threads meet), O's 64 rows times 1 / l
// go in by stmatrix (eight x4 at D 128), are fenced for the async proxy, and
// leave by one TMA store per column block, committed as a group; the
// block waits for its last store before it exits.
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-8: nvvm.stmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta {{.*}}, box[%c0_i32{{.*}}, {{.*}}, {{.*}}, {{.*}}] : !llvm.ptr, <3>
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta {{.*}}, box[%c64_i32{{.*}}, {{.*}}, {{.*}}, {{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NEXT: }
// CHECK: gpu.terminator
// CHECK: module(@gqa_forward_wgmma_d192)
// CHECK: wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16
// CHECK: module(@gqa_forward_wgmma_d256)
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// The backward's dK/dV and dQ loops run on wgmma up to D 128, and nothing
// on mma.sync: dK/dV takes K and V (boxes of its 128 keys) once and streams
// Q and dO (boxes of 128 query rows up to D 64, else 64); per query tile
// S^T = K Q^T and dP^T = V dO^T (m64n128 here, both from shared memory),
// then dV += P^T dO and dK += dS^T Q with A from registers (m64n<D>, a k
// step per 16 query rows). With dq-atomics (the default) it computes dQ
// too: dS^T into shared memory (after the dK/dV kernels' tiles and
// stages: two buffers, each two tiles of 128 keys x 64 query rows x 2
// bytes, and the f32 dQ tile of 128 x D x 4), fenced for the async proxy,
// named barrier 1 between both consumers once the last tile's reductions
// read the dQ tile (dV's product issued before it), then each consumer's
// half of dQ's
// columns, a product per 64 query rows (2 x m64n16 at D 32) with both
// operands transposed, dK's product (A from registers) queued behind
// them, and once dQ's group is done (wait 1) its products stored as f32
// pairs into the swizzled dQ tile (boxes of 16 columns by 128 rows, the
// 64-byte swizzle; rows of odd phase store the box's other tile, by
// selects), fenced again, the consumer's named
// barrier (2 + its warpgroup), and one thread has TMA add the boxes into
// the accumulator (its tensor map: name 4, 4-byte elements). D's halves
// being equal, that code comes once per tile, the warpgroup's columns
// and barrier by offsets (a branch per warpgroup where they are not, as
// at D 80 and 96). A kernel
// zeroes the accumulator before and one scales it into dq after (both
// whatever the head dim; a block per 64 rows, threads striding over their
// 16-byte quads, a 32-bit division each); dQ's loop keeps only its
// fallback.
// CHECK-LABEL: func.func @gqa_backward(
// CHECK: memref.alloc({{.*}}) : memref<?x?x?x?xf32>
// CHECK: module(@gqa_backward_wgmma_dq_zero)
// CHECK: scf.for
// CHECK: arith.divui {{.*}} : i32
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<?x?x?x?xf32>, vector<4xf32>
// CHECK: func.call @faTensorMapEncode({{.*}}, %c1_i64, %c2_i64, %c64_i64, %c32_i64, %c128_i64,
// CHECK: func.call @faTensorMapEncode({{.*}}, %c2_i64{{.*}}, %c2_i64{{.*}}, %c64_i64{{.*}}, %c32_i64{{.*}}, %c128_i64{{.*}},
// CHECK: func.call @faTensorMapEncode({{.*}}, %c0_i64, %c2_i64{{.*}}, %c64_i64{{.*}}, %c32_i64{{.*}}, %c128_i64{{.*}},
// CHECK: func.call @faTensorMapEncode({{.*}}, %c3_i64, %c2_i64{{.*}}, %c64_i64{{.*}}, %c32_i64{{.*}}, %c128_i64{{.*}},
// CHECK: func.call @faTensorMapEncode({{.*}}, %c4_i64, %c4_i64{{.*}}, %c64_i64{{.*}}, %c16_i64{{.*}}, %c128_i64{{.*}},
// CHECK: threads({{.*}}) in ({{.*}} = %c384{{.*}}) dynamic_shared_memory_size %c136280_i32 module(@gqa_backward_wgmma_dk_dv_d32)
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK: nvvm.setmaxregister  increase 240
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wgmma.mma_async
// CHECK: llvm.store {{.*}} : i32, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>, {{.*}} A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: arith.select
// CHECK-COUNT-8: llvm.store {{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{[0-9]+}} number_of_threads = %c128_i32
// CHECK: nvvm.cp.async.bulk.tensor.reduce {{.*}} {redKind = #nvvm.tma_redux_kind<add>}
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: memref.atomic_rmw
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mbarrier.arrive
// CHECK: module(@gqa_backward_wgmma_dk_dv_d128)
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// In 128-byte boxes (32 columns: D 64, 96 and 128) the odd rows store the
// tile two over (its chunks ^ 4, each value a select), so that no two rows
// of a half-warp's store share banks.
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: %[[ODD:.*]] = arith.cmpi ne
// CHECK: arith.xori %{{.*}}, %{{.*}} : index
// CHECK: arith.select %[[ODD]]
// CHECK: llvm.insertelement
// CHECK: arith.select %[[ODD]]
// CHECK: llvm.insertelement
// CHECK: llvm.store {{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// Past D 128 the two consumers share a block's 64 keys: each takes S^T
// and dP^T for half of the tile's query rows (n 32, over the whole head
// dim), both put P^T and dS^T in shared memory, and each multiplies them,
// A from shared memory, by its half of dO's and Q's columns (n 128 at D
// 256). Two Q/dO stages fit beside them. These keep the dQ kernel
// whatever dq-atomics says.
// CHECK-NOT: module(@gqa_backward_wgmma_dq_d{{(32|64|80|96|128)[)]}}
// CHECK: dynamic_shared_memory_size %c231512_i32 module(@gqa_backward_wgmma_dk_dv_d256)
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-16: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK: nvvm.barrier id = %c1_i32{{.*}} number_of_threads = %c256_i32
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>, {{.*}} A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-NOT: nvvm.cp.async.bulk.tensor.reduce
// CHECK: module(@gqa_backward_wgmma_dq_d192)
// CHECK: module(@gqa_backward_wgmma_dq_d256)
// The copy follows dQ's whole dispatch chain (an scf.if per head dim, the
// fallback loop in the innermost else), not the fallback alone.
// CHECK: } {fa.loop = "dq"}
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: scf.if
// CHECK: module(@gqa_backward_wgmma_dq_copy)
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<?x?x?x?xf32>, vector<4xf32>
// CHECK: arith.truncf {{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: memref.dealloc

// With `dq-atomics=false` (and with `deterministic`, whatever dq-atomics
// says) the dK/dV kernel leaves dQ to a kernel of its own, which takes Q
// and dO once and streams K and V.
// Up to D 96 that kernel also computes D, from o as a third fixed tile
// (its tensor map, operand 5): each lane reads 16-byte chunks of its rows
// of o and dO, the quad's sums join by shuffles, and the quad's first lane
// stores the row's D. It runs before the dK/dV kernel, which reads D.
// DQKERNEL-LABEL: func.func @gqa_backward(
// DQKERNEL: func.call @faTensorMapEncode({{.*}}, %c5_i64, %c2_i64{{.*}}, %c64_i64{{.*}}, %c32_i64{{.*}}, %c128_i64
// DQKERNEL: module(@gqa_backward_wgmma_dq_row_dot_d32)
// DQKERNEL-COUNT-2: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// DQKERNEL: gpu.shuffle  xor {{.*}}, %c1_i32
// DQKERNEL: gpu.shuffle  xor {{.*}}, %c2_i32
// DQKERNEL: memref.store {{.*}} : memref<?x?x?xf32>
// DQKERNEL: dynamic_shared_memory_size %c54360_i32 module(@gqa_backward_wgmma_dk_dv_d32)
// Up to D 64 its query tiles are 128 rows (two Q/dO stages of 8 KiB each
// at D 32): S^T = K Q^T is n 128.
// DQKERNEL: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// DQKERNEL-NOT: memref.atomic_rmw
// DQKERNEL: module(@gqa_backward_wgmma_dq_row_dot_d64_schedule)
// The dQ kernel that reads D stays for an o whose layout TMA refuses.
// DQKERNEL: func.call @faTensorMapEncode({{.*}}, %c0_i64, %c2_i64, %c64_i64, %c32_i64, %c128_i64,
// DQKERNEL: module(@gqa_backward_wgmma_dq_d32)
// DQKERNEL-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// DQKERNEL: nvvm.wgmma.wait.group.sync.aligned 0
// DQKERNEL: nvvm.mbarrier.arrive
// DQKERNEL-COUNT-8: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// DQKERNEL: module(@gqa_backward_wgmma_dq_d128)
// DQKERNEL: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// DQKERNEL-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync

// A block-n whose two stages do not fit steps down to a multiple of 16
// keys: 176 keys at D 128, 80 (not 88, then 44) at D 192 and 256.
// WIDE-LABEL: func.func @gqa_forward(
// WIDE: module(@gqa_forward_wgmma_d128)
// WIDE: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 176, k = 16>
// WIDE: module(@gqa_forward_wgmma_d192)
// WIDE: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 80, k = 16>
// WIDE: module(@gqa_forward_wgmma_d256)
// WIDE: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 80, k = 16>

// One consumer warpgroup (and the producer) and 64-key tiles where asked.
// SMALL-LABEL: func.func @gqa_forward(
// SMALL: threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c{{[0-9]+}}_i32 module(@gqa_forward_wgmma_d32)
// SMALL: module(@gqa_forward_wgmma_d128)
// SMALL: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>

// Pipelined consumers, three stages: warpgroup 1 hands warpgroup 0 the
// first turn; per tile, a warpgroup waits for its turn (named barrier 1 +
// its index, 256 threads), issues S's group and the previous tile's P V
// group, hands the turn over, and only then waits for S (one group left
// in flight); the P V is waited for after the softmax; the last tile's P V
// follows the loop. The turns go on across a block's items; warpgroup 0
// takes the last one once no item is left.
// Three consumers (192 query rows, 160 registers each) up to D 80 (with
// 112-key tiles past D 64: 80 x 112 x 2 bytes a K or V stage); two past
// it, where three are slower (D 96) or would not hold O, S and P.
// THREE-LABEL: func.func @gqa_forward(
// THREE: in ({{.*}} = %c512{{.*}}) dynamic_shared_memory_size %c58480_i32 module(@gqa_forward_wgmma_d32)
// THREE: nvvm.setmaxregister  decrease 32
// THREE: nvvm.setmaxregister  increase 160
// THREE: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// THREE: in ({{.*}} = %c512{{.*}}) dynamic_shared_memory_size %c115824_i32 module(@gqa_forward_wgmma_d64)
// The warp index through lane 0's copy, so that ptxas keeps what derives
// from it in uniform registers; not for D 80's wide producer (it spilled).
// THREE: gpu.shuffle  idx %{{.*}}, %c0_i32{{.*}}, %c32_i32 : i32
// THREE-NOT: gpu.shuffle  idx
// THREE: in ({{.*}} = %c512{{.*}}) dynamic_shared_memory_size %c103512_i32 module(@gqa_forward_wgmma_d80)
// THREE: nvvm.setmaxregister  increase 160
// THREE: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 112, k = 16>
// THREE: in ({{.*}} = %c384{{.*}}) dynamic_shared_memory_size %c173168_i32 module(@gqa_forward_wgmma_d96)
// THREE: nvvm.setmaxregister  increase 240

// PIPE-LABEL: func.func @gqa_forward(
// PIPE: dynamic_shared_memory_size %c66704_i32 module(@gqa_forward_wgmma_d32)
// PIPE-COUNT-16: nvvm.mbarrier.init
// Three stages keep the producer at 32 registers beside consumers of 232
// (wgmmaForwardWideProducer: their slot arithmetic divides by three).
// PIPE: nvvm.setmaxregister  decrease 32
// PIPE: nvvm.setmaxregister  increase 232
// PIPE: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// PIPE: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// PIPE: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// PIPE: nvvm.wgmma.commit.group.sync.aligned
// PIPE-NOT: nvvm.wgmma.wait.group
// PIPE: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PIPE: nvvm.wgmma.commit.group.sync.aligned
// PIPE: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// PIPE: nvvm.wgmma.wait.group.sync.aligned 1
// The lazy rescale: m moves past 8 (base-2 logits) only, and O's rows are
// rescaled under a branch the warp agrees on, once the P V is waited for.
// PIPE: arith.cmpf ogt, %{{.*}}, %cst{{.*}} : f32
// PIPE: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// PIPE: %[[MOVES:.*]] = nvvm.vote.sync  any %c-1_i32, %{{.*}} -> i1
// PIPE: nvvm.wgmma.wait.group.sync.aligned 0
// PIPE: scf.if %[[MOVES]] {
// PIPE-NEXT: %{{.*}} = arith.constant 0 : index
// PIPE-NEXT: %[[O0:.*]] = memref.load %{{.*}} : memref<16xf32>
// PIPE-NEXT: arith.mulf %{{.*}}, %[[O0]] : f32
// PIPE: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// PIPE: nvvm.wgmma.wait.group.sync.aligned 0
// PIPE: module(@gqa_forward_wgmma_d64)

// f32 stays on mma.sync's tf32 kernels.
// F32-LABEL: func.func @gqa_forward(
// F32-NOT: wgmma
// F32: function(@gqa_forward_mma_d64)

fa.kernel @gqa {
  func.func @forward(%q: tensor<?x32x?x?xbf16>, %k: tensor<?x8x?x?xbf16>,
                     %v: tensor<?x8x?x?xbf16>)
      -> (tensor<?x32x?x?xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal
        : (tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>)
        -> (tensor<?x32x?x?xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x?xbf16>, tensor<?x32x?xf32>
  }
  func.func @backward(%q: tensor<?x32x?x?xbf16>, %k: tensor<?x8x?x?xbf16>,
                      %v: tensor<?x8x?x?xbf16>, %o: tensor<?x32x?x?xbf16>,
                      %lse: tensor<?x32x?xf32>, %do: tensor<?x32x?x?xbf16>)
      -> (tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do mask causal
        : (tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>,
           tensor<?x32x?x?xbf16>, tensor<?x32x?xf32>, tensor<?x32x?x?xbf16>)
        -> (tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>)
    return %dq, %dk, %dv : tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>
  }
}
