// A JIT builds only what is called: `entries=forward` lowers the forward
// alone (no backward kernel, no backward host entry), `entries=backward`
// the backward alone, and a spec whose D is fixed builds that head dim's
// tensor-core kernels only, not the seven every dynamic-D module holds:
// with the scalar kernels for operands they do not take by default (an
// export's), without them under `scalar-fallback=false` (the JIT's, which
// compiles a program with them for such operands). The D kernel zeroes
// the dQ accumulator; the zero kernel runs only beside D's scalar loop, so
// the JIT's program has none.
// RUN: fa-opt %s --fa-lower-to-gpu="chip=sm_90a entries=forward" | FileCheck %s --check-prefix=FWD
// RUN: fa-opt %s --fa-lower-to-gpu="chip=sm_90a entries=backward" | FileCheck %s --check-prefix=BWD
// RUN: fa-opt %s --fa-lower-to-cpu="entries=forward" | FileCheck %s --check-prefix=CPU
// RUN: fa-opt %s --fa-lower-to-gpu="chip=sm_90a" | FileCheck %s --check-prefix=ALL
// RUN: fa-opt %s --fa-lower-to-gpu="chip=sm_90a scalar-fallback=false" | FileCheck %s --check-prefix=JIT
// RUN: not fa-opt %s --fa-tile="entries=both" 2>&1 | FileCheck %s --check-prefix=BAD

// FWD-NOT: attention_backward
// FWD: llvm.func @_mlir_ciface_attention_forward
// FWD-NOT: attention_backward
// FWD: gpu.binary @attention_forward_wgmma_d128_schedule
// FWD: gpu.binary @attention_forward_wgmma_d128{{ }}
// FWD-NOT: gpu.binary @attention_forward_{{wgmma|mma}}_d{{[0-9]+}}
// FWD-NOT: attention_backward

// BWD-NOT: attention_forward
// BWD: llvm.func @_mlir_ciface_attention_backward
// BWD-NOT: attention_forward
// BWD: gpu.binary @attention_backward_wgmma_dq_zero
// BWD: gpu.binary @attention_backward_row_dot
// BWD: gpu.binary @attention_backward_wgmma_dk_dv_d128
// BWD-NOT: _d{{(32|64|80|96|192|256)}}
// BWD: gpu.binary @attention_backward_wgmma_dq_copy
// BWD-NOT: attention_forward

// CPU-NOT: attention_backward
// CPU: llvm.func @_mlir_ciface_attention_forward
// CPU-NOT: attention_backward

// ALL: gpu.binary @attention_forward_wgmma_d128
// ALL: gpu.binary @attention_forward_kernel
// ALL: gpu.binary @attention_backward_wgmma_dq_zero
// ALL: gpu.binary @attention_backward_row_dot
// ALL: gpu.binary @attention_backward_kernel
// ALL: gpu.binary @attention_backward_wgmma_dk_dv_d128
// ALL: gpu.binary @attention_backward_kernel_0
// ALL: gpu.binary @attention_backward_wgmma_dq_copy
// ALL: gpu.binary @attention_backward_kernel_1

// JIT: llvm.call @faScalarFallbackMissing()
// JIT-NOT: gpu.binary @attention_{{forward|backward}}_kernel
// JIT: gpu.binary @attention_forward_wgmma_d128
// JIT-NOT: gpu.binary @attention_{{forward|backward}}_kernel
// JIT-NOT: attention_backward_wgmma_dq_zero
// JIT: gpu.binary @attention_backward_row_dot
// JIT-NOT: attention_backward_wgmma_dq_zero
// JIT-NOT: gpu.binary @attention_{{forward|backward}}_kernel
// JIT: gpu.binary @attention_backward_wgmma_dk_dv_d128
// JIT-NOT: gpu.binary @attention_{{forward|backward}}_kernel
// JIT: gpu.binary @attention_backward_wgmma_dq_copy
// JIT-NOT: gpu.binary @attention_{{forward|backward}}_kernel

// BAD: error: fa-tile: entries must be all, forward or backward, got 'both'

fa.kernel @attention {
  func.func @forward(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
  }
  func.func @backward(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x128xbf16>, %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>, %dO: tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x128xbf16>) -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>)
    return %dq, %dk, %dv : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
  }
}
