// The wgmma forward's default schedule (wgmma-schedule=auto,
// tensor_core::wgmmaForwardSerialByDefault): three consumers at D 80
// without a causal mask run the serial schedule with 128-key tiles (no
// ping-pong barriers between the consumers, no lazy-rescale vote); asked
// for, the pipelined schedule takes 112. Causal D 80 stays pipelined
// (gpu-tensor-core-wgmma.mlir's THREE prefix).
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core=generation=wgmma | FileCheck %s --check-prefix=AUTO
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-schedule=serial" | FileCheck %s --check-prefix=AUTO
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma wgmma-schedule=pipelined" | FileCheck %s --check-prefix=PIPE

// AUTO: dynamic_shared_memory_size %c113752_i32 module(@full_forward_wgmma_d80)
// AUTO: nvvm.setmaxregister  increase 160
// AUTO-NOT: nvvm.barrier.arrive
// AUTO-NOT: nvvm.vote.sync
// AUTO: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// AUTO-NOT: nvvm.barrier.arrive
// AUTO-NOT: nvvm.vote.sync

// PIPE: dynamic_shared_memory_size %c103512_i32 module(@full_forward_wgmma_d80)
// PIPE: nvvm.setmaxregister  increase 160
// PIPE: nvvm.barrier.arrive
// PIPE: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 112, k = 16>
// PIPE: nvvm.vote.sync

fa.kernel @full {
  func.func @forward(%q: tensor<?x16x?x80xbf16>, %k: tensor<?x16x?x80xbf16>,
                     %v: tensor<?x16x?x80xbf16>)
      -> (tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v
        : (tensor<?x16x?x80xbf16>, tensor<?x16x?x80xbf16>, tensor<?x16x?x80xbf16>)
        -> (tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>)
    return %o, %lse : tensor<?x16x?x80xbf16>, tensor<?x16x?xf32>
  }
}
