// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core=generation=wgmma | FileCheck %s
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-block-n=64 wgmma-groups=1" | FileCheck %s --check-prefix=SMALL
// RUN: fa-opt %s --fa-specialize-element-type=element-type=f32 --fa-tile --fa-gpu-tensor-core=generation=wgmma | FileCheck %s --check-prefix=F32
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core=generation=hmma 2>&1 | FileCheck %s --check-prefix=BADGEN
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core="generation=wgmma wgmma-groups=3" 2>&1 | FileCheck %s --check-prefix=BADGROUPS
// RUN: not fa-opt %s --fa-tile --fa-gpu-tensor-core="generation=wgmma wgmma-block-n=24" 2>&1 | FileCheck %s --check-prefix=BADBLOCK
// BADGEN: error: fa-gpu-tensor-core: generation must be mma-sync or wgmma, got 'hmma'
// BADGROUPS: error: fa-gpu-tensor-core: wgmma-groups must be 1 or 2, got 3
// BADBLOCK: error: fa-gpu-tensor-core: wgmma-block-n must be 0 (by head dim) or a multiple of 16 up to 256, got 24

// generation=wgmma: the 16-bit forward gets one wgmma kernel per head dim
// (32 to 256), each a block of two consumer warpgroups (256 threads, 128
// query rows) with its tiles in dynamic shared memory (Q, then two K and two
// V stages, plus 1 KiB of alignment), in front of the scalar loops; per key
// tile it waits for the copies, fences them for the async proxy, runs S =
// Q K^T on wgmma from shared memory (K-major both), the online softmax, and
// O += P V on wgmma with P from registers (inline PTX, transposed V).
// CHECK-LABEL: func.func @gqa_forward(
// CHECK: threads({{.*}}) in ({{.*}} = %c256{{.*}}) dynamic_shared_memory_size %c25600_i32 module(@gqa_forward_wgmma_d32)
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: module(@gqa_forward_wgmma_d64)
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: dynamic_shared_memory_size %c103424_i32 module(@gqa_forward_wgmma_d80)
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16
// CHECK: module(@gqa_forward_wgmma_d96)
// CHECK: module(@gqa_forward_wgmma_d128)
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: module(@gqa_forward_wgmma_d192)
// CHECK: wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16
// CHECK: module(@gqa_forward_wgmma_d256)
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// The backward stays on mma.sync.
// CHECK-LABEL: func.func @gqa_backward(
// CHECK-NOT: wgmma
// CHECK: nvvm.mma.sync

// One warpgroup and 64-key tiles where asked.
// SMALL-LABEL: func.func @gqa_forward(
// SMALL: threads({{.*}}) in ({{.*}} = %c128{{.*}}) dynamic_shared_memory_size %c{{[0-9]+}}_i32 module(@gqa_forward_wgmma_d32)
// SMALL: module(@gqa_forward_wgmma_d128)
// SMALL: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>

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
