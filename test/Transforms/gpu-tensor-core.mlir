// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core | FileCheck %s
// RUN: fa-opt %s --fa-specialize-element-type=element-type=f32 --fa-tile --fa-gpu-tensor-core | FileCheck %s --check-prefix=F32
// RUN: fa-opt %s --fa-specialize-element-type=element-type=f32 --fa-tile --fa-gpu-tensor-core=allow-tf32=true | FileCheck %s --check-prefix=TF32
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core=block-n=24 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: fa-opt %s --fa-tile --fa-gpu-tensor-core=block-n=128 | FileCheck %s --check-prefix=WIDE
// RUN: fa-opt %s --fa-tile --fa-gpu-tensor-core="block-n=128 shared-bytes=98304" | FileCheck %s --check-prefix=DYN
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core=shared-bytes=1024 2>&1 | FileCheck %s --check-prefix=BADSHARED
// RUN: fa-opt %s --fa-tile --fa-gpu-tensor-core=kv-stages=2 | FileCheck %s --check-prefix=STAGES
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core=kv-stages=3 2>&1 | FileCheck %s --check-prefix=BADSTAGES
// RUN: fa-opt %s --fa-tile --fa-gpu-tensor-core=forward-warps=8 | FileCheck %s --check-prefix=WARPS8
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core=forward-warps=6 2>&1 | FileCheck %s --check-prefix=BADWARPS
// RUN: fa-opt %s --fa-tile --fa-gpu-tensor-core | FileCheck %s --check-prefix=DIMS
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core --canonicalize --cse | FileCheck %s --check-prefix=GRID
// BAD: error: fa-gpu-tensor-core: block-n must be a positive multiple of 16, got 24
// BADWARPS: error: fa-gpu-tensor-core: forward-warps must be 4 or 8, got 6
// BADSTAGES: error: fa-gpu-tensor-core: kv-stages must be 1 or 2, got 3
// BADSHARED: error: fa-gpu-tensor-core: shared-bytes must be at least 49152 (what every block has), got 1024

// kv-stages = 2: the forward's K and V tiles hold two key tiles each
// (D = 128 takes 32-key tiles to fit 48 KiB); two tiles' copies go out
// before the loop, each step waits for all but the newest copy group,
// computes on its slot (a subview), and refills the slot two tiles ahead,
// always committing one group.
// STAGES-LABEL: func.func @gqa_forward(
// STAGES: function(@gqa_forward_mma_d64) workgroup({{.*}} : memref<128x64xbf16, {{.*}}, {{.*}} : memref<128x64xbf16
// STAGES: nvvm.cp.async.commit.group
// STAGES: nvvm.cp.async.commit.group
// STAGES: scf.for
// STAGES: nvvm.cp.async.wait.group 1
// STAGES-NEXT: gpu.barrier
// STAGES: memref.subview {{.*}} : memref<128x64xbf16, #gpu.address_space<workgroup>> to memref<64x64xbf16, strided<[64, 1], offset: ?>, #gpu.address_space<workgroup>>
// STAGES: nvvm.mma.sync
// STAGES: gpu.barrier
// STAGES: nvvm.cp.async.commit.group
// STAGES: function(@gqa_forward_mma_d128) workgroup({{.*}} : memref<64x128xbf16, {{.*}}, {{.*}} : memref<64x128xbf16
// STAGES-LABEL: func.func @gqa_backward(

// shared-bytes above 48 KiB: tiles that need more than static shared
// memory become views into dynamic shared memory, whose size the launch
// passes; tiles within 48 KiB stay workgroup attributions.
// DYN-LABEL: func.func @gqa_forward(
// DYN: function(@gqa_forward_mma_d64) workgroup({{.*}} : memref<128x64xbf16
// DYN: %[[BYTES:.*]] = arith.constant 65536 : i32
// DYN: gpu.launch {{.*}} dynamic_shared_memory_size %[[BYTES]]
// DYN-NOT: workgroup(
// DYN: %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// DYN: memref.view %[[BASE]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x128xbf16, #gpu.address_space<workgroup>>
// DYN: memref.view %[[BASE]][%c32768{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x128xbf16, #gpu.address_space<workgroup>>

// 8 forward warps: 256 threads over query tiles of 128 rows; the backward
// kernels keep 4 warps.
// WARPS8-LABEL: func.func @gqa_forward(
// WARPS8: %[[THREADS:.*]] = arith.constant 256 : index
// WARPS8: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %[[THREADS]], {{.*}}) module(@gqa_forward_mma_d64)
// WARPS8-LABEL: func.func @gqa_backward(
// WARPS8: %[[BTHREADS:.*]] = arith.constant 128 : index
// WARPS8: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %[[BTHREADS]], {{.*}}) module(@gqa_backward_mma_dk_dv_d64)

// block-n = 128: K and V tiles of 128 x 128 bf16 would need 64 KiB of
// shared memory, so D = 128 forwards and dQ take tiles of 64 keys; dK/dV
// blocks own 64 keys whatever block-n is.
// WIDE-LABEL: func.func @gqa_forward(
// WIDE: function(@gqa_forward_mma_d64) workgroup({{.*}} : memref<128x64xbf16
// WIDE: function(@gqa_forward_mma_d128) workgroup({{.*}} : memref<64x128xbf16
// WIDE-LABEL: func.func @gqa_backward(
// WIDE: function(@gqa_backward_mma_dk_dv_d64) workgroup({{.*}} : memref<64x64xbf16
// WIDE: function(@gqa_backward_mma_dk_dv_d128)
// WIDE: function(@gqa_backward_mma_dq_d64) workgroup({{.*}} : memref<128x64xbf16
// WIDE: function(@gqa_backward_mma_dq_d128) workgroup({{.*}} : memref<64x128xbf16

// f32 entries run on tf32 m16n8k8 MMAs; f32 tiles take half the keys at
// D = 128 to fit 48 KiB (and dK/dV blocks 2 warps of 16 keys with 16
// query rows). Each product is three MMAs on the operands' hi and lo tf32
// halves, small terms first: lo*hi, hi*lo, hi*hi.
// F32-LABEL: func.func @gqa_forward(
// F32: function(@gqa_forward_mma_d64) workgroup({{.*}} : memref<64x64xf32, {{.*}}, {{.*}} : memref<64x64xf32
// F32: %[[AHI:.*]] = nvvm.convert.float.to.tf32 %[[A:[0-9]+]] {rnd = #nvvm.fp_rnd_mode<rna>}
// F32: %[[AHIF:.*]] = arith.bitcast %[[AHI]] : i32 to f32
// F32: %[[ALOF:.*]] = arith.subf %[[A]], %[[AHIF]] : f32
// F32: %[[ALO:.*]] = nvvm.convert.float.to.tf32 %[[ALOF]]
// F32: nvvm.mma.sync A[%[[ALO]], {{.*}}]  B[{{.*}}] {{.*}} multiplicandAPtxType = #nvvm.mma_type<tf32>, {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 8>
// F32-NEXT: llvm.extractvalue
// F32-NEXT: llvm.extractvalue
// F32-NEXT: llvm.extractvalue
// F32-NEXT: llvm.extractvalue
// F32-NEXT: nvvm.mma.sync A[%[[AHI]], {{.*}}]
// F32: nvvm.mma.sync A[%[[AHI]], {{.*}}]
// F32: function(@gqa_forward_mma_d128) workgroup({{.*}} : memref<32x128xf32, {{.*}}, {{.*}} : memref<32x128xf32
// F32-LABEL: func.func @gqa_backward(
// F32: gpu.launch blocks({{.*}}) threads({{.*}}) in ({{.*}} = %c64{{(_[0-9]+)?}}, {{.*}}) {{.*}} function(@gqa_backward_mma_dk_dv_d128) workgroup({{.*}} : memref<32x128xf32, {{.*}}, {{.*}} : memref<32x128xf32, {{.*}}, {{.*}} : memref<16x128xf32, {{.*}}, {{.*}} : memref<16x128xf32
// F32: function(@gqa_backward_mma_dq_d128) workgroup({{.*}} : memref<32x128xf32

// With tf32 allowed, one MMA per product on the rounded operands.
// TF32-LABEL: func.func @gqa_forward(
// TF32: %[[AHI:.*]] = nvvm.convert.float.to.tf32
// TF32-NOT: arith.subf
// TF32: nvvm.mma.sync A[%[[AHI]], {{.*}}]  B[{{.*}}] {{.*}} shape = #nvvm.shape<m = 16, n = 8, k = 8>
// TF32-NOT: arith.subf
// TF32: nvvm.mma.sync

// The forward: a layout check (unit stride on D, strides % 8, 16-byte
// alignment), then one kernel per head dim, then the scalar loops.
// CHECK-LABEL: func.func @gqa_forward(
// CHECK: memref.extract_strided_metadata
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: arith.remui %{{.*}}, %c16
// CHECK: %[[D:.*]] = memref.dim %{{.*}}, %c3
// CHECK: arith.cmpi eq, %[[D]], %c64
// CHECK: scf.if
// CHECK: memref.reinterpret_cast {{.*}} to memref<?x32x?x?xbf16, strided<[?, ?, ?, 1], offset: ?>>
// CHECK: gpu.launch blocks
// CHECK-SAME: threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) module(@gqa_forward_mma_d64) function(@gqa_forward_mma_d64) workgroup({{.*}} : memref<64x64xbf16, #gpu.address_space<workgroup>>, {{.*}} : memref<64x64xbf16, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: nvvm.cp.async.commit.group
// CHECK: fa.tiles = "keys.masked"
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK: gpu.shuffle xor
// CHECK: math.fma
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: fa.tiles = "keys.unmasked"
// CHECK: vector.store
// CHECK: module(@gqa_forward_mma_d128) function(@gqa_forward_mma_d128)
// CHECK: workgroup({{.*}} : memref<64x128xbf16, #gpu.address_space<workgroup>>
// The scalar fallback.
// CHECK: } else {
// CHECK: scf.parallel

// The backward: D = rowsum(dO * o), dK/dV and dQ each get kernels in front
// of their scalar loops (dK/dV tiles Q and dO by 32 rows at D = 128). D's
// kernel serves every head dim of whole 16-byte chunks: eight lanes a row,
// one 16-byte load each, summed by shuffles.
// CHECK-LABEL: func.func @gqa_backward(
// CHECK: memref.alloc({{.*}}) {fa.loop = "row_dot"}
// CHECK: module(@gqa_backward_row_dot) function(@gqa_backward_row_dot)
// CHECK: vector.load {{.*}} vector<8xbf16>
// CHECK: gpu.shuffle xor
// CHECK: } else {
// CHECK: fa.loop = "row_dot.sum"
// CHECK: module(@gqa_backward_mma_dk_dv_d64) function(@gqa_backward_mma_dk_dv_d64)
// CHECK: fa.tiles = "queries.masked"
// CHECK: module(@gqa_backward_mma_dk_dv_d128) function(@gqa_backward_mma_dk_dv_d128)
// CHECK-SAME: memref<64x128xbf16, #gpu.address_space<workgroup>>, {{.*}} : memref<64x128xbf16, #gpu.address_space<workgroup>>, {{.*}} : memref<32x128xbf16, #gpu.address_space<workgroup>>
// CHECK: fa.loop = "dk_dv"
// CHECK: module(@gqa_backward_mma_dq_d64) function(@gqa_backward_mma_dq_d64)
// CHECK: module(@gqa_backward_mma_dq_d128) function(@gqa_backward_mma_dq_d128)
// CHECK: fa.loop = "dq"

// The backward grids run in the forward's order (TensorCoreEmitter's
// sectionedBlock): the dK/dV blocks in sections of 8 (batch, kv head)
// pairs, key block by key block across a section's pairs, the first key
// blocks (under a causal mask the longest) first; the dQ blocks likewise
// over (batch, query head) pairs, the last (longest) query tiles first.
// GRID-LABEL: func.func @gqa_backward(
// GRID: gpu.launch blocks(%[[KL:[a-z0-9]+]], {{.*}} module(@gqa_backward_mma_dk_dv_d128)
// GRID: %[[KS:[0-9]+]] = arith.divui %[[KL]], %[[KSECTION:[0-9]+]] : index
// GRID-NEXT: %[[KFIRST:[0-9]+]] = arith.muli %[[KS]], %c8 : index
// GRID-NEXT: %[[KLEFT:[0-9]+]] = arith.subi %{{[0-9]+}}, %[[KFIRST]] : index
// GRID-NEXT: %[[KWIDTH:[0-9]+]] = arith.minsi %[[KLEFT]], %c8 : index
// GRID-NEXT: %[[KIN:[0-9]+]] = arith.remui %[[KL]], %[[KSECTION]] : index
// GRID-NEXT: %[[KEYBLOCK:[0-9]+]] = arith.divui %[[KIN]], %[[KWIDTH]] : index
// GRID-NEXT: %[[KINPAIR:[0-9]+]] = arith.remui %[[KIN]], %[[KWIDTH]] : index
// GRID-NEXT: %[[KPAIR:[0-9]+]] = arith.addi %[[KFIRST]], %[[KINPAIR]] : index
// GRID-NEXT: arith.remui %[[KPAIR]], %c8 : index
// GRID-NEXT: arith.divui %[[KPAIR]], %c8 : index
// GRID-NEXT: arith.muli %[[KEYBLOCK]], %c64 : index
// GRID: gpu.launch blocks(%[[QL:[a-z0-9]+]], {{.*}} module(@gqa_backward_mma_dq_d128)
// GRID: %[[QS:[0-9]+]] = arith.divui %[[QL]], %[[QSECTION:[0-9]+]] : index
// GRID-NEXT: %[[QFIRST:[0-9]+]] = arith.muli %[[QS]], %c8 : index
// GRID-NEXT: %[[QLEFT:[0-9]+]] = arith.subi %{{[0-9]+}}, %[[QFIRST]] : index
// GRID-NEXT: %[[QWIDTH:[0-9]+]] = arith.minsi %[[QLEFT]], %c8 : index
// GRID-NEXT: %[[QIN:[0-9]+]] = arith.remui %[[QL]], %[[QSECTION]] : index
// GRID-NEXT: %[[QRANK:[0-9]+]] = arith.divui %[[QIN]], %[[QWIDTH]] : index
// GRID-NEXT: %[[QINPAIR:[0-9]+]] = arith.remui %[[QIN]], %[[QWIDTH]] : index
// GRID-NEXT: %[[QPAIR:[0-9]+]] = arith.addi %[[QFIRST]], %[[QINPAIR]] : index
// GRID-NEXT: %[[QLAST:[0-9]+]] = arith.subi %{{[0-9]+}}, %c1 : index
// GRID-NEXT: %[[QTILE:[0-9]+]] = arith.subi %[[QLAST]], %[[QRANK]] : index
// GRID-NEXT: arith.remui %[[QPAIR]], %c32 : index
// GRID-NEXT: arith.divui %[[QPAIR]], %c32 : index
// GRID: arith.muli %[[QTILE]], %c64 : index

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

// Every head dim from 32 to 256 has a forward kernel, in this order. Rows
// of whole 128-byte swizzle periods (D 64, 128, 192, 256 in bf16) swizzle;
// D 32, 80 and 96 pad each row by one 16-byte chunk (an odd stride in
// chunks) and copy no XOR. Past D 128 the block's Q is a shared tile of 16
// rows a warp, whose fragments ldmatrix reads per key tile, and the K/V
// tiles shrink to fit beside it. The backward's kernels go to D 128.
// DIMS-LABEL: func.func @gqa_forward(
// DIMS: arith.cmpi eq, %{{.*}}, %c32
// DIMS: function(@gqa_forward_mma_d32) workgroup({{.*}} : memref<64x40xbf16, {{.*}}, {{.*}} : memref<64x40xbf16
// DIMS-NOT: arith.xori
// DIMS: nvgpu.device_async_copy
// DIMS: function(@gqa_forward_mma_d64) workgroup({{.*}} : memref<64x64xbf16
// DIMS: arith.xori
// DIMS: nvgpu.device_async_copy
// DIMS: function(@gqa_forward_mma_d80) workgroup({{.*}} : memref<64x88xbf16, {{.*}}, {{.*}} : memref<64x88xbf16
// DIMS-NOT: arith.xori
// DIMS: function(@gqa_forward_mma_d96) workgroup({{.*}} : memref<64x104xbf16, {{.*}}, {{.*}} : memref<64x104xbf16
// DIMS-NOT: arith.xori
// DIMS: function(@gqa_forward_mma_d128) workgroup({{.*}} : memref<64x128xbf16, {{.*}}, {{.*}} : memref<64x128xbf16
// DIMS: function(@gqa_forward_mma_d192) workgroup({{.*}} : memref<32x192xbf16, {{.*}}, {{.*}} : memref<32x192xbf16, {{.*}}, {{.*}} : memref<64x192xbf16
// DIMS: nvgpu.device_async_copy
// DIMS: nvvm.cp.async.commit.group
// DIMS: nvgpu.ldmatrix
// DIMS: function(@gqa_forward_mma_d256) workgroup({{.*}} : memref<16x256xbf16, {{.*}}, {{.*}} : memref<16x256xbf16, {{.*}}, {{.*}} : memref<64x256xbf16
// DIMS: } else {
// DIMS: scf.parallel
// DIMS-LABEL: func.func @gqa_backward(
// DIMS: module(@gqa_backward_mma_dk_dv_d32)
// DIMS: module(@gqa_backward_mma_dk_dv_d80) function(@gqa_backward_mma_dk_dv_d80) workgroup({{.*}} : memref<64x88xbf16
// DIMS: module(@gqa_backward_mma_dk_dv_d96)
// DIMS: module(@gqa_backward_mma_dk_dv_d128)
// DIMS-NOT: _mma_dk_dv_d192
// DIMS: module(@gqa_backward_mma_dq_d32)
