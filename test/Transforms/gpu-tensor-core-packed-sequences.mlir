// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=mma-sync split-kv" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma split-kv" --canonicalize --cse | FileCheck %s --check-prefix=WGMMA

// Packed sequences (query_starts/key_starts): the forward launches
// floor(rows / R) + N blocks per head for blocks of R rows (a sequence owns
// the blocks from floor(start / R) + s, at least ceil(length / R) of them),
// and each block finds its sequence by a binary search over the query
// starts. The split-KV forward is not emitted. The scalar loop stays as
// the fallback, with the same blocks.
//
// mma.sync: blocks of 64 rows; a block with no rows (a sequence's spare
// one) skips its body.
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
// CHECK: scf.parallel
// CHECK: scf.while
//
// wgmma: blocks of 64 rows per consumer warpgroup; the producer and the consumers each find the
// block's sequence, and the producer's TMA copies start at its rows (the
// mask gives the next sequence's keys in a last tile P = 0).
// WGMMA-LABEL: func.func @packed_forward(
// WGMMA-SAME: %[[QSTARTS:[^:]*]]: memref<?xi32, strided<[?], offset: ?>>,
// WGMMA-NOT: split_kv
// WGMMA: arith.floordivsi %{{.*}}, %c{{[0-9]+}} : index
// WGMMA: gpu.launch {{.*}} module(@packed_forward_wgmma_d64)
// WGMMA: nvvm.setmaxregister decrease
// WGMMA: scf.while
// WGMMA: memref.load %[[QSTARTS]]
// WGMMA: nvvm.cp.async.bulk.tensor.shared.cluster.global
// WGMMA: nvvm.setmaxregister increase
// WGMMA: scf.while
// WGMMA: memref.load %[[QSTARTS]]
// WGMMA: nvvm.wgmma.mma_async
fa.kernel @packed {
  func.func @forward(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %v: tensor<1x2x?x64xbf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v query_starts %cq key_starts %ck mask causal : (tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<?xi32>, tensor<?xi32>) -> (tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>)
    return %o, %lse : tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>
  }
}
