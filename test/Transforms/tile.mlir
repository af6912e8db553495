// RUN: fa-opt %s --fa-tile="block-m=16 block-n=32" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="hoist-scratch=false" | FileCheck %s --check-prefix=ITER
// RUN: not fa-opt %s --fa-tile=block-m=0 2>&1 | FileCheck %s --check-prefix=BAD
// Without hoisting, scratch is allocated inside each parallel iteration.
// ITER-LABEL: func.func @streaming_forward(
// ITER: scf.parallel
// ITER: memref.alloca(%{{.*}}) : memref<16x?xf32>
// BAD: error: fa-tile: block-m and block-n must be >= 1, got 0 and 32

// Masks are loop bounds and tile predicates: per query tile, a sink phase
// (keys [0, min(T, window start))), then the window: masked tiles at the
// window edge, unmasked interior tiles, masked tiles at the diagonal. The
// window's masked tiles, at both edges, share one loop, which runs the
// unmasked loop at its turn between them (one copy of the masked tile, not
// two). The causal predicate (`cmpi sle`) exists only in masked tiles;
// scratch is tile-sized and nothing is heap-allocated.

// CHECK-LABEL: func.func @streaming_forward(
// CHECK-SAME: %{{.*}}: memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
// GQA: the kv head is the query head divided by the group size.
// CHECK: %[[GROUP:[0-9]+]] = arith.divsi %{{.*}}, %{{.*}} : index
// CHECK: %[[TILES:[0-9]+]] = arith.ceildivsi
// CHECK: %[[TH:[0-9]+]] = arith.muli %[[TILES]], %[[HQ:[a-z0-9_]+]] : index
// CHECK: %[[ALL:[0-9]+]] = arith.muli %[[TH]], %{{.*}} : index
// CHECK-NOT: memref.alloc(
// CHECK: memref.alloca(%{{.*}}) : memref<16x?xf32>
// CHECK: memref.alloca() : memref<32xf32>
// Iterations over (batch, head, query tile) are independent: one parallel
// loop over their product (a one-dimensional grid on the GPU), the query
// tile varying fastest, decoded into the three.
// CHECK: scf.parallel (%[[L:arg[0-9]+]]) = (%c0) to (%[[ALL]]) step (%c1)
// CHECK-NEXT: arith.remui %[[L]], %[[TILES]] : index
// CHECK-NEXT: %[[REST:[0-9]+]] = arith.divui %[[L]], %[[TILES]] : index
// CHECK-NEXT: %[[H:[0-9]+]] = arith.remui %[[REST]], %[[HQ]] : index
// CHECK-NEXT: %[[B:[0-9]+]] = arith.divui %[[REST]], %[[HQ]] : index
// CHECK: arith.divsi %[[H]], %[[GROUP]] : index
// The sink phase starts inside: no leading masked loop.
// CHECK-NOT: arith.cmpi sle
// CHECK: } {fa.tiles = "sink_keys.unmasked"}
// CHECK: arith.cmpi sle
// CHECK: } {fa.tiles = "sink_keys.masked"}
// CHECK: %[[TURN:.*]] = arith.cmpi eq
// CHECK-NEXT: scf.if %[[TURN]] {
// CHECK-NOT: arith.cmpi sle
// CHECK: } {fa.tiles = "keys.unmasked"}
// CHECK-NEXT: } else {
// CHECK: arith.cmpi sle
// CHECK: math.exp2
// CHECK: } {fa.tiles = "keys.masked"}
// CHECK-NOT: fa.tiles
// The epilogue: lse = (m + log2 l) ln 2.
// CHECK: math.log2
// CHECK-NOT: memref.alloc(
// CHECK: return
fa.kernel @streaming {
  func.func @forward(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 64 sink_tokens 4 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  }
}

// Learnable sinks seed the running max (in base 2) and the sum with 1.
// Without a mask there is no sink phase and no causal predicate at all.
// CHECK-LABEL: func.func @learnable_forward(
// CHECK-SAME: %{{.*}}: memref<8xf32, strided<[?], offset: ?>>
// CHECK-NOT: sink_keys
// CHECK-NOT: arith.cmpi sle
// CHECK: memref.load %{{.*}} : memref<8xf32, strided<[?], offset: ?>>
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK-NOT: fa.tiles
// CHECK: } {fa.tiles = "keys.unmasked"}
// CHECK: } {fa.tiles = "keys.masked"}
// CHECK-NOT: fa.tiles
// CHECK: return
fa.kernel @learnable {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %s: tensor<8xf32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %s : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<8xf32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
}

// The backward: the one heap buffer is D = rowsum(dO * o), [B, Hq, Sq]; the
// dK/dV loop owns key tiles and walks the query tiles of each query head of
// its group (masked/unmasked like the forward's key tiles); the dQ loop
// owns query tiles and walks the forward's key tiles. A key tile's query
// tiles start on the diagonal, masked, so its masked tiles share a loop
// as the window's keys do.
// CHECK-LABEL: func.func @causal_backward(
// CHECK: memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) {fa.loop = "row_dot"} : memref<?x?x?xf32>
// CHECK-NOT: memref.alloc(
// CHECK-NOT: arith.cmpi sle
// CHECK: } {fa.tiles = "queries.unmasked"}
// CHECK-NEXT: } else {
// CHECK: arith.cmpi sle
// CHECK: } {fa.tiles = "queries.masked"}
// CHECK-NOT: fa.tiles = "queries
// CHECK: } {fa.tiles = "keys.unmasked"}
// CHECK: } {fa.tiles = "keys.masked"}
// CHECK-NOT: fa.tiles
// CHECK: memref.dealloc
// CHECK-NOT: memref.alloc(
// CHECK: return
fa.kernel @causal {
  func.func @forward(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  }
  func.func @backward(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>, %o: tensor<?x?x?x?xf32>, %lse: tensor<?x?x?xf32>, %dO: tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
    return %dq, %dk, %dv : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
  }
}

// softmax_matmul runs the same online loop over the columns of x.
// CHECK-LABEL: func.func @smm_forward(
// CHECK-NOT: memref.alloc(
// CHECK: } {fa.tiles = "keys.unmasked"}
// CHECK: } {fa.tiles = "keys.masked"}
fa.kernel @smm {
  func.func @forward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
    %r = fa.softmax_matmul %x, %v : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    return %r : tensor<?x?x?xf32>
  }
}

// A cache filled to a length per batch entry: each block loads its entry's
// key count, clamps it to [0, Sk], and bounds its key tiles and the causal
// offset by it (never by the buffer's Sk).
// CHECK-LABEL: func.func @cache_forward(
// CHECK-SAME: %[[LENGTHS:[^:]*]]: memref<?xi32, strided<[?], offset: ?>>
// CHECK: %[[SK:.*]] = memref.dim %{{.*}}, %c2 : memref<?x2x?x64xbf16
// CHECK: scf.parallel
// CHECK: %[[N:.*]] = memref.load %[[LENGTHS]][
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
// CHECK: %[[LO:.*]] = arith.maxsi %[[NI]], %c0 : index
// CHECK: %[[KEYS:.*]] = arith.minsi %[[LO]], %[[SK]] : index
// CHECK: arith.subi %[[KEYS]], %{{.*}} : index
// CHECK: } {fa.tiles = "keys.masked"}
fa.kernel @cache {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %n: tensor<?xi32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %n mask causal : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?xi32>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
}

// Packed sequences: blocks over (floor(rows / 16) + N, heads), each finding
// its sequence by a binary search over the query starts; the first key
// tile starts at the sequence's first key row (or the block's key end,
// where that is before it) and the causal bound uses its end rows (key end
// - query end), all clamped to the rows there are.
// CHECK-LABEL: func.func @packed_forward(
// CHECK-SAME: %[[QSTARTS:[^:]*]]: memref<?xi32, strided<[?], offset: ?>>,
// CHECK-SAME: %[[KSTARTS:[^:]*]]: memref<?xi32, strided<[?], offset: ?>>
// CHECK: %[[N1:.*]] = memref.dim %[[QSTARTS]], %c0
// CHECK: %[[N:.*]] = arith.subi %[[N1]], %c1 : index
// CHECK: scf.parallel
// CHECK: %[[SEARCH:.*]]:2 = scf.while (%{{.*}} = %c0, %{{.*}} = %[[N]])
// CHECK: %[[K0:.*]] = memref.load %[[KSTARTS]][%[[SEARCH]]#0]
// CHECK: %[[K0IDX:.*]] = arith.index_cast %[[K0]] : i32 to index
// CHECK: %[[KLO:.*]] = arith.maxsi %[[K0IDX]], %c0 : index
// CHECK: %[[KSTART:.*]] = arith.minsi %[[KLO]], %{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.minsi %{{.*}}, %[[KSTART]] : index
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %c32
// CHECK: memref.load %{{.*}}[%c0, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x?x?x?xf32
fa.kernel @packed {
  func.func @forward(%q: tensor<1x?x?x?xf32>, %k: tensor<1x?x?x?xf32>, %v: tensor<1x?x?x?xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<1x?x?x?xf32>, tensor<1x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v query_starts %cq key_starts %ck mask causal : (tensor<1x?x?x?xf32>, tensor<1x?x?x?xf32>, tensor<1x?x?x?xf32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<1x?x?x?xf32>, tensor<1x?x?xf32>)
    return %o, %lse : tensor<1x?x?x?xf32>, tensor<1x?x?xf32>
  }
}

// append: a loop over (new row, kv head, batch entry) first stores the new
// keys and values at the entry's length clamped to [0, Sk - Snew]; the
// attention loops then read them from the cache, over length + Snew keys.
// CHECK-LABEL: func.func @step_forward(
// CHECK-SAME: %[[K:[^:]*]]: memref<?x2x?x64xbf16
// CHECK-SAME: %[[LENGTHS:[^:]*]]: memref<?xi32, strided<[?], offset: ?>>,
// CHECK-SAME: %[[KNEW:[^:]*]]: memref<?x2x?x64xbf16
// CHECK: %[[SNEW:.*]] = memref.dim %[[KNEW]], %c2
// CHECK: scf.parallel
// CHECK: %[[N:.*]] = memref.load %[[LENGTHS]]
// CHECK: %[[ROOM:.*]] = arith.subi %{{.*}}, %[[SNEW]] : index
// CHECK: memref.store %{{.*}}, %[[K]]
// CHECK: scf.reduce
// CHECK: scf.parallel
fa.kernel @step {
  func.func @forward(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %n: tensor<?xi32>, %kn: tensor<?x2x?x64xbf16>, %vn: tensor<?x2x?x64xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %n append %kn, %vn mask causal : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?xi32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
    return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>
  }
}
