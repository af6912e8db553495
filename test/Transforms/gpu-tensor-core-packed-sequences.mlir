// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma split-kv" --canonicalize --cse | FileCheck %s

// Packed sequences (query_starts/key_starts): mma.sync's forward launches
// floor(rows / 64) + N blocks per head (a sequence owns the blocks from
// floor(start / 64) + s, at least ceil(length / 64) of them), and each block
// finds its sequence by a binary search over the query starts; a block
// with no rows (a sequence's spare one) skips its body. Neither the wgmma
// forward (its TMA tiles would run into the next sequence's rows) nor the
// split-KV forward is emitted. The scalar loop stays as the fallback, with
// the same blocks.
// CHECK-LABEL: func.func @packed_forward(
// CHECK-SAME: %[[Q:[^:]*]]: memref<1x8x?x64xbf16
// CHECK-SAME: %[[QSTARTS:[^:]*]]: memref<?xi32, strided<[?], offset: ?>>,
// CHECK-SAME: %[[KSTARTS:[^:]*]]: memref<?xi32, strided<[?], offset: ?>>
// CHECK-NOT: wgmma
// CHECK-NOT: split_kv
// CHECK: %[[N1:.*]] = memref.dim %[[QSTARTS]], %c0
// CHECK: %[[N:.*]] = arith.subi %[[N1]], %c1 : index
// CHECK: %[[FULL:.*]] = arith.floordivsi %{{.*}}, %c64 : index
// CHECK: %[[BLOCKS:.*]] = arith.addi %[[FULL]], %[[N]] : index
// CHECK: %[[GRID:.*]] = arith.muli %[[BLOCKS]], %c8 : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %c1, %{{.*}} = %c1) {{.*}} module(@packed_forward_mma_d64)
// CHECK: scf.while (%{{.*}} = %c0, %{{.*}} = %[[N]])
// CHECK: memref.load %[[QSTARTS]]
// CHECK: arith.floordivsi %{{.*}}, %c64 : index
// CHECK: memref.load %[[KSTARTS]]
// CHECK: scf.if
// CHECK: nvvm.mma.sync
// CHECK: gpu.terminator
// CHECK-NOT: wgmma
// CHECK: scf.parallel
// CHECK: scf.while
fa.kernel @packed {
  func.func @forward(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v query_starts %cq key_starts %ck mask causal : (tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<?xi32>, tensor<?xi32>) -> (tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>)
    return %o, %lse : tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>
  }
}
