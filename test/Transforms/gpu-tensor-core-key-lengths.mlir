// RUN: fa-opt %s --fa-tile="hoist-scratch=false" --fa-gpu-tensor-core="generation=wgmma split-kv" --canonicalize --cse | FileCheck %s

// A cache filled to a length per batch entry (key_lengths): the split-KV
// forward and mma.sync's forward each load their block's entry's length,
// and the wgmma forward is not emitted (its TMA would read the entry's last
// key tile whole, past the length, into whatever the cache holds there;
// mma.sync's copies stop at it). The scalar loop stays as the fallback.
// CHECK-LABEL: func.func @cache_forward(
// CHECK-SAME: %[[LENGTHS:[^:]*]]: memref<?xi32, strided<[?], offset: ?>>
// CHECK-NOT: wgmma
// CHECK: gpu.launch {{.*}} module(@cache_forward_split_kv_d64)
// CHECK: memref.load %[[LENGTHS]][%{{.*}}] : memref<?xi32
// CHECK: gpu.terminator
// CHECK: gpu.launch {{.*}} module(@cache_forward_split_kv_d64_merge)
// CHECK-NOT: wgmma
// CHECK: gpu.launch {{.*}} module(@cache_forward_mma_d64)
// CHECK: memref.load %[[LENGTHS]][%{{.*}}] : memref<?xi32
// CHECK: gpu.terminator
// CHECK-NOT: wgmma
// CHECK: scf.parallel
// CHECK: memref.load %[[LENGTHS]][%{{.*}}] : memref<?xi32
fa.kernel @cache {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %n: tensor<?xi32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %n mask causal : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?xi32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
}

// A paged cache (block_table): the copies of K/V rows go through the
// table. Row j of a tile is page table[b, j / P] (clamped to the cache's
// pages), row j mod P; Sk for the split count is N * P.
// CHECK-LABEL: func.func @paged_forward(
// CHECK-SAME: %[[TABLE:[^:]*]]: memref<?x?xi32, strided<[?, ?], offset: ?>>
// CHECK: %[[PAGES:.*]] = memref.dim %[[TABLE]], %c1
// CHECK: arith.muli %[[PAGES]], %c16 : index
// CHECK: gpu.launch {{.*}} module(@paged_forward_split_kv_d64)
// CHECK: %[[SLOT:.*]] = arith.divui %{{.*}}, %c16 : index
// CHECK: %[[PAGE:.*]] = memref.load %[[TABLE]][%{{.*}}, %[[SLOT]]]
// CHECK: %[[PAGEIDX:.*]] = arith.index_cast %[[PAGE]] : i32 to index
// CHECK: arith.maxsi %[[PAGEIDX]], %c0 : index
// CHECK: arith.remui %{{.*}}, %c16 : index
// CHECK: nvgpu.device_async_copy
// The loop looks up the pages of the tile two ahead before it waits for
// its own, so those loads run under its math; the copies after the math
// take them (no table load between the barrier and the copies).
// CHECK: scf.for
// CHECK: memref.load %[[TABLE]]
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK-NOT: memref.load %[[TABLE]]
// CHECK: nvgpu.device_async_copy
// CHECK-NOT: wgmma
// CHECK: gpu.launch {{.*}} module(@paged_forward_mma_d64)
// CHECK: memref.load %[[TABLE]]
fa.kernel @paged {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x16x64xbf16>, %v: tensor<?x2x16x64xbf16>, %n: tensor<?xi32>, %t: tensor<?x?xi32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %n block_table %t mask causal : (tensor<?x8x?x64xbf16>, tensor<?x2x16x64xbf16>, tensor<?x2x16x64xbf16>, tensor<?xi32>, tensor<?x?xi32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
}

// A step that writes its own keys (append, paged): the block at query row 0
// of each kv head's first query head (and split 0) stores the new keys and
// values into the cache's pages at the sequence's length, and every block's
// copies take the rows from there on from the new keys and values, not from
// the cache another block writes.
// CHECK-LABEL: func.func @step_forward(
// CHECK-SAME: %[[KCACHE:[^:]*]]: memref<?x2x16x64xbf16
// CHECK-SAME: %[[VCACHE:[^:]*]]: memref<?x2x16x64xbf16
// CHECK-SAME: %[[KNEW:[^:]*]]: memref<?x2x?x64xbf16
// CHECK: gpu.launch {{.*}} module(@step_forward_split_kv_d64)
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<?x2x16x64xbf16
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<?x2x16x64xbf16
// CHECK: %[[NEW:.*]] = arith.cmpi sge,
// CHECK: scf.if %[[NEW]] {
// CHECK: nvgpu.device_async_copy {{.*}} : memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>> to memref
// CHECK: } else {
// CHECK: nvgpu.device_async_copy {{.*}} : memref<?x2x16x64xbf16, strided<[?, ?, ?, 1], offset: ?>> to memref
// CHECK: gpu.launch {{.*}} module(@step_forward_mma_d64)
fa.kernel @step {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x16x64xbf16>, %v: tensor<?x2x16x64xbf16>, %n: tensor<?xi32>, %t: tensor<?x?xi32>, %kn: tensor<?x2x?x64xbf16>, %vn: tensor<?x2x?x64xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %n block_table %t append %kn, %vn mask causal : (tensor<?x8x?x64xbf16>, tensor<?x2x16x64xbf16>, tensor<?x2x16x64xbf16>, tensor<?xi32>, tensor<?x?xi32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
}
