// RUN: fa-opt %s | FileCheck %s
// RUN: fa-opt %s | fa-opt | FileCheck %s
// Each clause of the custom assembly formats prints back as written; default
// values (mask none, sink_tokens 0) are elided.

// CHECK-LABEL: func.func @full
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8x16x64xbf16>
func.func @full(%q: tensor<2x8x16x64xbf16>, %k: tensor<2x8x16x64xbf16>, %v: tensor<2x8x16x64xbf16>) -> tensor<2x8x16x64xbf16> {
  %o, %lse = fa.attention %q, %k, %v mask none sink_tokens 0 : (tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>, tensor<2x8x16x64xbf16>) -> (tensor<2x8x16x64xbf16>, tensor<2x8x16xf32>)
  return %o : tensor<2x8x16x64xbf16>
}

// CHECK-LABEL: func.func @every_clause
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} sinks %{{.*}} mask causal window 16 sink_tokens 4 scale 1.250000e-01 :
func.func @every_clause(%q: tensor<?x32x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>, %s: tensor<32xf32>) -> tensor<?x32x?xf32> {
  %o, %lse = fa.attention %q, %k, %v sinks %s mask causal window 16 sink_tokens 4 scale 0.125 : (tensor<?x32x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<32xf32>) -> (tensor<?x32x?x128xf16>, tensor<?x32x?xf32>)
  return %lse : tensor<?x32x?xf32>
}

// A KV cache filled to a length per batch entry.
// CHECK-LABEL: func.func @key_lengths
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} sinks %{{.*}} key_lengths %{{.*}} mask causal window 128 :
func.func @key_lengths(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %s: tensor<64xf32>, %n: tensor<?xi32>) -> tensor<?x64x?x64xbf16> {
  %o, %lse = fa.attention %q, %k, %v sinks %s key_lengths %n mask causal window 128 : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>, tensor<?xi32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
  return %o : tensor<?x64x?x64xbf16>
}

// Packed sequences of different lengths.
// CHECK-LABEL: func.func @packed_sequences
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} sinks %{{.*}} query_starts %{{.*}} key_starts %{{.*}} mask causal :
func.func @packed_sequences(%q: tensor<1x64x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %s: tensor<64xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x64x?x64xbf16> {
  %o, %lse = fa.attention %q, %k, %v sinks %s query_starts %cq key_starts %ck mask causal : (tensor<1x64x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<64xf32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<1x64x?x64xbf16>, tensor<1x64x?xf32>)
  return %o : tensor<1x64x?x64xbf16>
}

// A decode step that writes its new keys and values into the cache.
// CHECK-LABEL: func.func @append
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} key_lengths %{{.*}} append %{{.*}}, %{{.*}} mask causal :
func.func @append(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>, %n: tensor<?xi32>, %kn: tensor<?x2x?x64xbf16>, %vn: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o, %lse = fa.attention %q, %k, %v key_lengths %n append %kn, %vn mask causal : (tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?xi32>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>) -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>)
  return %o : tensor<?x8x?x64xbf16>
}

// f64 inputs keep their statistics in f64.
// CHECK-LABEL: func.func @grad_f64
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = fa.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} sinks %{{.*}} mask causal :
func.func @grad_f64(%q: tensor<1x4x7x16xf64>, %k: tensor<1x1x9x16xf64>, %v: tensor<1x1x9x16xf64>, %o: tensor<1x4x7x16xf64>, %lse: tensor<1x4x7xf64>, %dO: tensor<1x4x7x16xf64>, %s: tensor<4xf64>) -> tensor<4xf64> {
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x7x16xf64>, tensor<1x1x9x16xf64>, tensor<1x1x9x16xf64>, tensor<1x4x7x16xf64>, tensor<1x4x7xf64>, tensor<1x4x7x16xf64>, tensor<4xf64>) -> (tensor<1x4x7x16xf64>, tensor<1x1x9x16xf64>, tensor<1x1x9x16xf64>, tensor<4xf64>)
  return %ds : tensor<4xf64>
}

// CHECK-LABEL: func.func @softmax_matmul
// CHECK: fa.softmax_matmul %{{.*}}, %{{.*}} : (tensor<16x2048x64xf32>, tensor<16x64x512xf32>) -> tensor<16x2048x512xf32>
func.func @softmax_matmul(%x: tensor<16x2048x64xf32>, %v: tensor<16x64x512xf32>) -> tensor<16x2048x512xf32> {
  %r = fa.softmax_matmul %x, %v : (tensor<16x2048x64xf32>, tensor<16x64x512xf32>) -> tensor<16x2048x512xf32>
  return %r : tensor<16x2048x512xf32>
}
