// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma scalar-fallback=false branched-tiles dq-atomics=false" | FileCheck %s
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma scalar-fallback=false" | FileCheck %s --check-prefix=LOOPS

// With branched-tiles the wgmma forward's consumers walk the window's key
// phase in one loop: the tile's GEMMs and softmax once, the mask applied
// under a branch on the tiles the three-loop form runs masked (before the
// first tile boundary past the last row's window edge, or from the last
// whole tile left of the first row's diagonal). The branch yields S whole,
// so no wgmma accumulator crosses it. The sink phase (4 tokens, fewer than
// a tile) is one narrow tile before them either way (wgmma n 16, no loop).
// The producer's loops are the same either way.
// CHECK-LABEL: func.func @swa_forward(
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>, D[<f32>, <zero>]
// CHECK-NOT: fa.tiles = "sink_keys
// CHECK: scf.for
// CHECK: %[[LEAD:.*]] = arith.cmpi slt, %[[N0:[a-z0-9_]+]], %{{.*}} : index
// CHECK: %[[TRAIL:.*]] = arith.cmpi sge, %[[N0]], %{{.*}} : index
// CHECK: %[[EDGE:.*]] = arith.ori %[[LEAD]], %[[TRAIL]] : i1
// CHECK: nvvm.wgmma.mma_async
// CHECK: scf.if %[[EDGE]] -> (f32,
// CHECK: arith.select
// CHECK: } else {
// CHECK-NEXT: scf.yield
// CHECK: } {fa.tiles = "keys.branched"}
// CHECK-NOT: "keys.masked"
// CHECK-NOT: "keys.unmasked"
// The mma.sync forward (D 64 under a short window) likewise; and the wgmma
// backward: its dQ kernel (which computes D at D 64, and runs first) over
// key tiles, P and dS (128 values a lane), its dK/dV kernel over query
// tiles, branching P^T and dS^T (128: 128-row query tiles up to D 64).
// CHECK-LABEL: func.func @gpt_forward(
// CHECK: gpu.launch {{.*}} module(@gpt_forward_mma_d64)
// CHECK: scf.if %{{.*}} -> (f32,
// CHECK: } {fa.tiles = "keys.branched"}
// CHECK-LABEL: func.func @gpt_backward(
// CHECK: gpu.launch {{.*}} module(@gpt_backward_wgmma_dq_row_dot_d64)
// CHECK: scf.if %{{[0-9]+}} -> ({{(f32, ){127}f32}})
// CHECK: } {fa.tiles = "keys.branched"}
// CHECK: gpu.launch {{.*}} module(@gpt_backward_wgmma_dk_dv_d64)
// CHECK: scf.if %{{[0-9]+}} -> ({{(f32, ){127}f32}})
// CHECK: } {fa.tiles = "queries.branched"}
// CHECK-NOT: .masked"

// By default, two loops per phase: where a phase starts inside (the sink
// keys, but where the wgmma forward runs them as one narrow tile) an
// unmasked loop and a trailing masked one; where it may start with masked
// tiles (a window's keys, a causal key tile's queries) one loop over the
// masked tiles at both edges, which runs the unmasked loop at its turn
// between them (TileBuilder::phase), but in the wgmma forward, where a
// window keeps its edges apart (tensor_core::windowEdgesApart; 1024 keys
// here), three loops, each edge's masked tiles masked against that edge
// alone (TileBuilder::edgePhase; gpu-tensor-core-wgmma-window.mlir).
// LOOPS-LABEL: func.func @swa_forward(
// LOOPS-NOT: .branched"
// LOOPS: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>, D[<f32>, <zero>]
// LOOPS-NOT: fa.tiles = "sink_keys
// LOOPS: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// LOOPS: } {fa.tiles = "keys.masked"}
// LOOPS-NOT: fa.tiles
// LOOPS: nvvm.wgmma.mma_async
// LOOPS: } {fa.tiles = "keys.unmasked"}
// LOOPS-NOT: fa.tiles
// LOOPS: nvvm.wgmma.mma_async
// LOOPS: } {fa.tiles = "keys.masked"}
// LOOPS-NOT: .branched"
// LOOPS-LABEL: func.func @gpt_backward(
// LOOPS: } {fa.tiles = "queries.unmasked"}
// LOOPS-NEXT: } else {
// LOOPS: } {fa.tiles = "queries.masked"}
// LOOPS-NOT: .branched"

fa.kernel @swa {
  func.func @forward(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>,
                     %v: tensor<?x2x?x128xbf16>)
      -> (tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 1024 sink_tokens 4
        : (tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>)
        -> (tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>
  }
}

fa.kernel @gpt {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                     %v: tensor<?x2x?x64xbf16>, %s: tensor<8xf32>)
      -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %s mask causal window 128
        : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>)
        -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
  func.func @backward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                      %v: tensor<?x2x?x64xbf16>, %o: tensor<?x8x?x64xbf16>,
                      %lse: tensor<?x8x?xf32>, %do: tensor<?x8x?x64xbf16>,
                      %s: tensor<8xf32>)
      -> (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>) {
    %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %do sinks %s mask causal window 128
        : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>, tensor<?x8x?x64xbf16>, tensor<8xf32>)
        -> (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>)
    return %dq, %dk, %dv, %ds : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>
  }
}
