// REQUIRES: cuda-libdevice
// RUN: fa-opt %s --fa-lower-to-gpu="chip=sm_90 features=+ptx80" | FileCheck %s
// RUN: fa-opt %s --fa-lower-to-gpu="chip=sm_80 features=+ptx80" | FileCheck %s --check-prefix=SM80
// bf16 inputs are widened to f32 in registers and outputs rounded back.
// RUN: fa-opt %s --fa-lower-to-gpu | FileCheck %s --check-prefix=BF16
// BF16: cvt.f32.bf16
// BF16: cvt.rn.bf16.f32

// The GPU path: each parallel loop of the tiled entry becomes a kernel
// (forward: one; backward: D = rowsum(dO * o), dK/dV, dQ), compiled to PTX
// by LLVM's NVPTX backend and embedded in the host module, whose launches
// go through the mgpu* runtime that fa implements on the CUDA driver.

// CHECK: gpu.binary @gqa_forward_kernel
// CHECK-SAME: .version 8.0
// CHECK-SAME: .target sm_90
// CHECK-SAME: .visible .entry gqa_forward_kernel
// CHECK-SAME: ex2.approx
// The backward's D = rowsum(dO * o) lives in device memory. Its kernel
// (a fallback loop beside it for layouts it does not take) and the dsinks
// kernels are fa-gpu-tensor-core's; they replace scalar loops. The D
// kernel sums dsinks' terms per block into a workspace of partials, which
// the dsinks kernel sums per head once the last kernel that writes them
// is queued; beside the fallback loop, a dsinks kernel walks D's rows.
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func @gqa_backward_row_dot::@gqa_backward_row_dot
// CHECK: gpu.launch_func @gqa_backward_kernel::@gqa_backward_kernel
// CHECK: gpu.launch_func @gqa_backward_dsinks_rows::@gqa_backward_dsinks_rows
// CHECK: gpu.launch_func @gqa_backward_dsinks::@gqa_backward_dsinks
// CHECK: llvm.call @mgpuMemFree
// CHECK: gpu.binary @gqa_backward_row_dot
// CHECK-SAME: ld.global.v4.b32
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: ex2.approx
// CHECK-SAME: bar.sync
// CHECK: gpu.binary @gqa_backward_kernel
// CHECK: gpu.binary @gqa_backward_dsinks_rows
// CHECK-SAME: ex2.approx
// CHECK: gpu.binary @gqa_backward_kernel_0
// CHECK: gpu.binary @gqa_backward_kernel_1
// CHECK: gpu.binary @gqa_backward_dsinks
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: bar.sync
// SM80: .target sm_80
fa.kernel @gqa {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %s: tensor<8xf32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %s mask causal window 128 : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
  func.func @backward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %o: tensor<?x8x?x64xbf16>, %lse: tensor<?x8x?xf32>, %dO: tensor<?x8x?x64xbf16>, %s: tensor<8xf32>) -> (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>) {
    %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal window 128 : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x64xbf16>, tensor<8xf32>) -> (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>)
    return %dq, %dk, %dv, %ds : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>
  }
}
