// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="scalar-fallback=false" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core --canonicalize --cse | FileCheck %s --check-prefix=KEEP
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma scalar-fallback=false dq-atomics=false" --canonicalize --cse | FileCheck %s --check-prefix=HOPPER
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma" | FileCheck %s --check-prefix=UNBUILT

// Without scalar-fallback, a spec that fixes D (as the JIT's do) keeps no
// scalar loops beside the kernels of that D: the else branch of their
// dispatch, reached only by layouts the kernels refuse, records an error
// instead, and the runtime compiles a program with the loops for such
// operands (Program::run). The learnable-sink gradient comes from the D
// kernel's partials; its form that walks D's rows goes with D's fallback
// loop.
// CHECK-LABEL: func.func @fixed_forward(
// CHECK: gpu.launch {{.*}} module(@fixed_forward_mma_d64)
// CHECK: } else {
// CHECK-NEXT: func.call @faScalarFallbackMissing() : () -> ()
// CHECK-NEXT: }
// CHECK-NOT: scf.parallel
// CHECK-LABEL: func.func @fixed_backward(
// CHECK: gpu.launch {{.*}} module(@fixed_backward_row_dot)
// CHECK: } else {
// CHECK-NEXT: func.call @faScalarFallbackMissing() : () -> ()
// CHECK-NEXT: }
// CHECK: gpu.launch {{.*}} module(@fixed_backward_mma_dk_dv_d64)
// CHECK: gpu.launch {{.*}} module(@fixed_backward_mma_dq_d64)
// CHECK: } else {
// CHECK-NEXT: func.call @faScalarFallbackMissing() : () -> ()
// CHECK: gpu.launch {{.*}} module(@fixed_backward_dsinks)
// CHECK-NOT: scf.parallel
// CHECK-NOT: dsinks_rows
// A spec that leaves D open keeps its scalar loops for the head dims no
// kernel takes.
// CHECK-LABEL: func.func @dynamic_forward(
// CHECK-NOT: faScalarFallbackMissing
// CHECK: gpu.launch {{.*}} module(@dynamic_forward_mma_d256)
// CHECK: } else {
// CHECK: scf.parallel

// By default (fa-compile's exports) the scalar loops stay.
// KEEP-NOT: faScalarFallbackMissing
// KEEP-LABEL: func.func @fixed_forward(
// KEEP: gpu.launch {{.*}} module(@fixed_forward_mma_d64)
// KEEP: } else {
// KEEP: scf.parallel

// On wgmma the same.
// HOPPER-LABEL: func.func @fixed_forward(
// HOPPER: gpu.launch {{.*}} module(@fixed_forward_wgmma_d64)
// HOPPER: func.call @faScalarFallbackMissing() : () -> ()
// HOPPER-NOT: scf.parallel
// Up to D 96 the dQ kernel computes D (the D kernel stays for an o whose
// layout it does not take) and runs before the dK/dV kernel; its form that
// reads D goes with that layout, so without scalar-fallback it is not
// built.
// HOPPER-LABEL: func.func @fixed_backward(
// HOPPER: gpu.launch {{.*}} module(@fixed_backward_row_dot)
// HOPPER: gpu.launch {{.*}} module(@fixed_backward_wgmma_dq_row_dot_d64)
// HOPPER: gpu.launch {{.*}} module(@fixed_backward_wgmma_dk_dv_d64)
// HOPPER-NOT: fixed_backward_wgmma_dq_d64
// HOPPER: func.call @faScalarFallbackMissing() : () -> ()
// HOPPER-NOT: fixed_backward_wgmma_dq_d64
// HOPPER: gpu.launch {{.*}} module(@fixed_backward_dsinks)
// HOPPER-NOT: scf.parallel
// HOPPER-LABEL: func.func @short_window_forward(
// HOPPER: gpu.launch {{.*}} module(@short_window_forward_wgmma_d128)
// HOPPER-NOT: _mma_d128
// HOPPER: func.call @faScalarFallbackMissing() : () -> ()
// HOPPER-NOT: scf.parallel
// HOPPER-LABEL: func.func @dynamic_forward(

// Where the wgmma forward takes the fixed D, the pass builds no mma.sync
// kernel in its fallback for canonicalization to fold away later.
// UNBUILT-LABEL: func.func @short_window_forward(
// UNBUILT: gpu.launch {{.*}} module(@short_window_forward_wgmma_d128)
// UNBUILT-NOT: short_window_forward_mma_d128
// UNBUILT-LABEL: func.func @dynamic_forward(

fa.kernel @fixed {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                     %v: tensor<?x2x?x64xbf16>, %s: tensor<8xf32>)
      -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %s mask causal
        : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>)
        -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
  func.func @backward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                      %v: tensor<?x2x?x64xbf16>, %o: tensor<?x8x?x64xbf16>,
                      %lse: tensor<?x8x?xf32>, %do: tensor<?x8x?x64xbf16>,
                      %s: tensor<8xf32>)
      -> (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>) {
    %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %do sinks %s mask causal
        : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x64xbf16>, tensor<8xf32>)
        -> (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>)
    return %dq, %dk, %dv, %ds : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>
  }
}

fa.kernel @short_window {
  func.func @forward(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x4x?x128xbf16>,
                     %v: tensor<?x4x?x128xbf16>)
      -> (tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 128
        : (tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>)
        -> (tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>)
    return %o, %lse : tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>
  }
}

fa.kernel @dynamic {
  func.func @forward(%q: tensor<?x?x?x?xbf16>, %k: tensor<?x?x?x?xbf16>,
                     %v: tensor<?x?x?x?xbf16>)
      -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal
        : (tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>)
        -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>
  }
}
