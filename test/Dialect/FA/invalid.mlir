// RUN: fa-opt %s -split-input-file -verify-diagnostics
// Every verifier message of fa.attention, fa.attention_grad and
// fa.softmax_matmul, one case each.

func.func @f(%q: tensor<8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{'q' must be a rank-4 tensor [B, Hq, Sq, D], got 'tensor<8x16x64xf32>'}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{'k' must be a rank-4 tensor [B, Hkv, Sk, D]}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x32x64xf32>) {
  // expected-error @+1 {{'v' must be a rank-4 tensor [B, Hkv, Sk, D]}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xi32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{'q' has element type 'i32'; fa supports f16, bf16, f32 and f64}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xi32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{'k' element type 'f16' differs from 'q' element type 'f32'}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xbf16>) {
  // expected-error @+1 {{'v' element type 'bf16' differs from 'q' element type 'f32'}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xbf16>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<3x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{batch sizes differ: 'q' has B = 2, 'k' has B = 3}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<3x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<3x2x32x64xf32>) {
  // expected-error @+1 {{batch sizes differ: 'q' has B = 2, 'v' has B = 3}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<3x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x4x32x64xf32>) {
  // expected-error @+1 {{'k' and 'v' head counts differ: 2 vs 4}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x4x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x33x64xf32>) {
  // expected-error @+1 {{'k' and 'v' sequence lengths differ: 32 vs 33}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x33x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x0x32x64xf32>, %v: tensor<2x0x32x64xf32>) {
  // expected-error @+1 {{'k' has Hkv = 0; every extent must be at least 1}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x0x32x64xf32>, tensor<2x0x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// Empty static extents are refused by name: none has a block to launch.
func.func @f(%q: tensor<0x8x16x64xf32>, %k: tensor<0x2x32x64xf32>, %v: tensor<0x2x32x64xf32>) {
  // expected-error @+1 {{'q' has B = 0; every extent must be at least 1}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<0x8x16x64xf32>, tensor<0x2x32x64xf32>, tensor<0x2x32x64xf32>) -> (tensor<0x8x16x64xf32>, tensor<0x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x0x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{'q' has Sq = 0; every extent must be at least 1}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x0x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x0x64xf32>, tensor<2x8x0xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x?xf32>, %k: tensor<2x2x0x?xf32>, %v: tensor<2x2x0x?xf32>) {
  // expected-error @+1 {{'k' has Sk = 0; every extent must be at least 1}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x?xf32>, tensor<2x2x0x?xf32>, tensor<2x2x0x?xf32>) -> (tensor<2x8x16x?xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<?x?x?x0xbf16>, %k: tensor<?x?x?x0xbf16>, %v: tensor<?x?x?x0xbf16>, %o: tensor<?x?x?x0xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x0xbf16>) {
  // expected-error @+1 {{'q' has D = 0; every extent must be at least 1}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %do : (tensor<?x?x?x0xbf16>, tensor<?x?x?x0xbf16>, tensor<?x?x?x0xbf16>, tensor<?x?x?x0xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x0xbf16>) -> (tensor<?x?x?x0xbf16>, tensor<?x?x?x0xbf16>, tensor<?x?x?x0xbf16>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x3x32x64xf32>, %v: tensor<2x3x32x64xf32>) {
  // expected-error @+1 {{query heads (Hq = 8) must be a multiple of key/value heads (Hkv = 3)}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x3x32x64xf32>, tensor<2x3x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x128xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{head dims differ: 'q' has D = 64, 'k' has D = 128}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x128xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x32xf32>) {
  // expected-error @+1 {{head dims differ: 'q' has D = 64, 'v' has D = 32}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x32xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{window must be >= 1, got 0}}
  %o, %lse = fa.attention %q, %k, %v mask causal window 0 : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{window requires mask causal (the window ends at the diagonal)}}
  %o, %lse = fa.attention %q, %k, %v window 16 : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{sink_tokens must be >= 0, got -1}}
  %o, %lse = fa.attention %q, %k, %v mask causal window 16 sink_tokens -1 : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{sink_tokens requires a window (without one every key is already visible)}}
  %o, %lse = fa.attention %q, %k, %v mask causal sink_tokens 4 : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{scale must be a positive finite number, got -1}}
  %o, %lse = fa.attention %q, %k, %v scale -1.0 : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{scale must be a positive finite number, got 0}}
  %o, %lse = fa.attention %q, %k, %v scale 0.0 : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'sinks' must be 'tensor<8xf32>' (one logit per query head, in the accumulator type), got 'tensor<2xf32>'}}
  %o, %lse = fa.attention %q, %k, %v sinks %s : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<2xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %s: tensor<8xbf16>) {
  // expected-error @+1 {{'sinks' must be 'tensor<8xf32>' (one logit per query head, in the accumulator type), got 'tensor<8xbf16>'}}
  %o, %lse = fa.attention %q, %k, %v sinks %s : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<8xbf16>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{'o' must be 'tensor<2x8x16x64xf32>' (the type of 'q'), got 'tensor<2x8x16x32xf32>'}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+1 {{'lse' must be 'tensor<2x8x16xf32>' ([B, Hq, Sq] in the accumulator type), got 'tensor<2x8x16xf16>'}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf16>)
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf64>, %k: tensor<2x2x32x64xf64>, %v: tensor<2x2x32x64xf64>) {
  // expected-error @+1 {{'lse' must be 'tensor<2x8x16xf64>' ([B, Hq, Sq] in the accumulator type), got 'tensor<2x8x16xf32>'}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<2x8x16x64xf64>, tensor<2x2x32x64xf64>, tensor<2x2x32x64xf64>) -> (tensor<2x8x16x64xf64>, tensor<2x8x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<?x6x?x?xf32>, %k: tensor<?x4x?x?xf32>, %v: tensor<?x4x?x?xf32>) {
  // expected-error @+1 {{query heads (Hq = 6) must be a multiple of key/value heads (Hkv = 4)}}
  %o, %lse = fa.attention %q, %k, %v : (tensor<?x6x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> (tensor<?x6x?x?xf32>, tensor<?x6x?xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'dsinks' result must be present exactly when 'sinks' is given}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) {
  // expected-error @+1 {{'dsinks' result must be present exactly when 'sinks' is given}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x8xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'o' must be 'tensor<1x4x8x16xf32>' (the type of 'q'), got 'tensor<1x4x8x8xf32>'}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x9xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'lse' must be 'tensor<1x4x8xf32>' ([B, Hq, Sq] in the accumulator type), got 'tensor<1x4x9xf32>'}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x9xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf16>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'dO' must be 'tensor<1x4x8x16xf32>' (the type of 'q'), got 'tensor<1x4x8x16xf16>'}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf16>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'dq' must be 'tensor<1x4x8x16xf32>' (the type of 'q'), got 'tensor<1x2x8x16xf32>'}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'dk' must be 'tensor<1x2x8x16xf32>' (the type of 'k'), got 'tensor<1x4x8x16xf32>'}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'dv' must be 'tensor<1x2x8x16xf32>' (the type of 'v'), got 'tensor<1x2x7x16xf32>'}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x7x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'dsinks' must be 'tensor<4xf32>' (the type of 'sinks'), got 'tensor<4xf64>'}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf64>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'sinks' must be 'tensor<4xf32>' (one logit per query head, in the accumulator type), got 'tensor<3xf32>'}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<3xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<3xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{window requires mask causal (the window ends at the diagonal)}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s window 4 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @g(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x8xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{head dims differ: 'q' has D = 16, 'k' has D = 8}}
  %dq, %dk, %dv, %ds = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>)
  return
}

// -----

func.func @h(%x: tensor<4x8xf32>, %v: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'x' must be a rank-3 tensor [B, M, N], got 'tensor<4x8xf32>'}}
  %r = fa.softmax_matmul %x, %v : (tensor<4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @h(%x: tensor<2x4x8xf32>, %v: tensor<8x3xf32>) {
  // expected-error @+1 {{'v' must be a rank-3 tensor [B, N, P], got 'tensor<8x3xf32>'}}
  %r = fa.softmax_matmul %x, %v : (tensor<2x4x8xf32>, tensor<8x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @h(%x: tensor<2x4x8xi8>, %v: tensor<2x8x3xi8>) {
  // expected-error @+1 {{'x' has element type 'i8'; fa supports f16, bf16, f32 and f64}}
  %r = fa.softmax_matmul %x, %v : (tensor<2x4x8xi8>, tensor<2x8x3xi8>) -> tensor<2x4x3xi8>
  return
}

// -----

func.func @h(%x: tensor<2x4x8xf32>, %v: tensor<2x8x3xf64>) {
  // expected-error @+1 {{'v' element type 'f64' differs from 'x' element type 'f32'}}
  %r = fa.softmax_matmul %x, %v : (tensor<2x4x8xf32>, tensor<2x8x3xf64>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @h(%x: tensor<2x4x8xf32>, %v: tensor<5x8x3xf32>) {
  // expected-error @+1 {{batch sizes differ: 'x' has B = 2, 'v' has B = 5}}
  %r = fa.softmax_matmul %x, %v : (tensor<2x4x8xf32>, tensor<5x8x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @h(%x: tensor<2x4x8xf32>, %v: tensor<2x9x3xf32>) {
  // expected-error @+1 {{'x' has N = 8 columns but 'v' has N = 9 rows}}
  %r = fa.softmax_matmul %x, %v : (tensor<2x4x8xf32>, tensor<2x9x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @h(%x: tensor<2x4x8xf32>, %v: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'result' must be 'tensor<2x4x3xf32>' ([B, M, P]), got 'tensor<2x4x4xf32>'}}
  %r = fa.softmax_matmul %x, %v : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

func.func @h(%x: tensor<?x4x8xf32>, %v: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'result' must be 'tensor<?x4x3xf32>' ([B, M, P]), got 'tensor<2x4x3xf32>'}}
  %r = fa.softmax_matmul %x, %v : (tensor<?x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %n: tensor<2xi64>) {
  // expected-error @+1 {{'key_lengths' must be 'tensor<2xi32>' (one key count per batch entry), got 'tensor<2xi64>'}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n mask causal : (tensor<2x8x1x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<2xi64>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %n: tensor<3xi32>) {
  // expected-error @+1 {{'key_lengths' must be 'tensor<2xi32>' (one key count per batch entry), got 'tensor<3xi32>'}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n : (tensor<2x8x1x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<3xi32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<9x2x16x64xf32>, %v: tensor<9x2x16x64xf32>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{block_table needs key_lengths (how far each sequence fills its pages)}}
  %o, %lse = fa.attention %q, %k, %v block_table %t : (tensor<2x8x1x64xf32>, tensor<9x2x16x64xf32>, tensor<9x2x16x64xf32>, tensor<2x4xi32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<9x2x16x64xf32>, %v: tensor<9x2x16x64xf32>, %n: tensor<2xi32>, %t: tensor<3x4xi32>) {
  // expected-error @+1 {{'block_table' must be a tensor of i32 [B, pages per sequence] with B = 2, got 'tensor<3x4xi32>'}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n block_table %t : (tensor<2x8x1x64xf32>, tensor<9x2x16x64xf32>, tensor<9x2x16x64xf32>, tensor<2xi32>, tensor<3x4xi32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<9x2x16x64xf32>, %v: tensor<8x2x16x64xf32>, %n: tensor<2xi32>, %t: tensor<2x4xi32>) {
  // expected-error @+1 {{'k' and 'v' page counts differ: 9 vs 8}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n block_table %t : (tensor<2x8x1x64xf32>, tensor<9x2x16x64xf32>, tensor<8x2x16x64xf32>, tensor<2xi32>, tensor<2x4xi32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<1x8x40x64xf32>, %k: tensor<1x2x50x64xf32>, %v: tensor<1x2x50x64xf32>, %cq: tensor<3xi32>) {
  // expected-error @+1 {{query_starts and key_starts come together (the packed sequences' rows in q and in k/v)}}
  %o, %lse = fa.attention %q, %k, %v query_starts %cq : (tensor<1x8x40x64xf32>, tensor<1x2x50x64xf32>, tensor<1x2x50x64xf32>, tensor<3xi32>) -> (tensor<1x8x40x64xf32>, tensor<1x8x40xf32>)
  return
}

// -----

func.func @f(%q: tensor<1x8x40x64xf32>, %k: tensor<1x2x50x64xf32>, %v: tensor<1x2x50x64xf32>, %cq: tensor<3xi32>, %ck: tensor<4xi32>) {
  // expected-error @+1 {{'query_starts' has 3 entries and 'key_starts' 4; both are N + 1 for N sequences}}
  %o, %lse = fa.attention %q, %k, %v query_starts %cq key_starts %ck : (tensor<1x8x40x64xf32>, tensor<1x2x50x64xf32>, tensor<1x2x50x64xf32>, tensor<3xi32>, tensor<4xi32>) -> (tensor<1x8x40x64xf32>, tensor<1x8x40xf32>)
  return
}

// -----

func.func @f(%q: tensor<1x8x40x64xf32>, %k: tensor<1x2x50x64xf32>, %v: tensor<1x2x50x64xf32>, %cq: tensor<3xi64>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'query_starts' must be a 1-D tensor of i32 (N + 1 row offsets of N packed sequences), got 'tensor<3xi64>'}}
  %o, %lse = fa.attention %q, %k, %v query_starts %cq key_starts %ck : (tensor<1x8x40x64xf32>, tensor<1x2x50x64xf32>, tensor<1x2x50x64xf32>, tensor<3xi64>, tensor<3xi32>) -> (tensor<1x8x40x64xf32>, tensor<1x8x40xf32>)
  return
}

// -----

func.func @f(%q: tensor<1x8x40x64xf32>, %k: tensor<1x2x50x64xf32>, %v: tensor<1x2x50x64xf32>, %cq: tensor<1xi32>, %ck: tensor<1xi32>) {
  // expected-error @+1 {{'query_starts' has 1 entries; N packed sequences need N + 1 >= 2}}
  %o, %lse = fa.attention %q, %k, %v query_starts %cq key_starts %ck : (tensor<1x8x40x64xf32>, tensor<1x2x50x64xf32>, tensor<1x2x50x64xf32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<1x8x40x64xf32>, tensor<1x8x40xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x40x64xf32>, %k: tensor<2x2x50x64xf32>, %v: tensor<2x2x50x64xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{with query_starts, 'q' holds the packed sequences as one batch entry: B must be 1, got 2}}
  %o, %lse = fa.attention %q, %k, %v query_starts %cq key_starts %ck : (tensor<2x8x40x64xf32>, tensor<2x2x50x64xf32>, tensor<2x2x50x64xf32>, tensor<3xi32>, tensor<3xi32>) -> (tensor<2x8x40x64xf32>, tensor<2x8x40xf32>)
  return
}

// -----

func.func @f(%q: tensor<1x8x40x64xf32>, %k: tensor<1x2x50x64xf32>, %v: tensor<1x2x50x64xf32>, %n: tensor<1xi32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{query_starts/key_starts do not combine with key_lengths (each packed sequence's keys are its own rows)}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n query_starts %cq key_starts %ck : (tensor<1x8x40x64xf32>, tensor<1x2x50x64xf32>, tensor<1x2x50x64xf32>, tensor<1xi32>, tensor<3xi32>, tensor<3xi32>) -> (tensor<1x8x40x64xf32>, tensor<1x8x40xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %kn: tensor<2x2x1x64xf32>, %vn: tensor<2x2x1x64xf32>) {
  // expected-error @+1 {{append needs key_lengths (where each sequence's new keys go)}}
  %o, %lse = fa.attention %q, %k, %v append %kn, %vn : (tensor<2x8x1x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x1x64xf32>, tensor<2x2x1x64xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %n: tensor<2xi32>, %kn: tensor<2x2x1x64xf32>, %vn: tensor<2x2x2x64xf32>) {
  // expected-error @+1 {{'append's values' must be 'tensor<2x2x1x64xf32>' (the type of append's keys), got 'tensor<2x2x2x64xf32>'}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n append %kn, %vn : (tensor<2x8x1x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<2xi32>, tensor<2x2x1x64xf32>, tensor<2x2x2x64xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %n: tensor<2xi32>, %kn: tensor<2x4x1x64xf32>, %vn: tensor<2x4x1x64xf32>) {
  // expected-error @+1 {{append's keys must be [B, Hkv, Snew, D] with q's B and the cache's Hkv and D, got 'tensor<2x4x1x64xf32>'}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n append %kn, %vn : (tensor<2x8x1x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<2xi32>, tensor<2x4x1x64xf32>, tensor<2x4x1x64xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %n: tensor<2xi32>, %kn: tensor<2x2x33x64xf32>, %vn: tensor<2x2x33x64xf32>) {
  // expected-error @+1 {{append's 33 new keys do not fit a cache of 32 keys per sequence}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n append %kn, %vn : (tensor<2x8x1x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<2xi32>, tensor<2x2x33x64xf32>, tensor<2x2x33x64xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}

// -----

func.func @f(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf32>, %n: tensor<2xi32>, %kn: tensor<2x2x1x64xbf16>, %vn: tensor<2x2x1x64xbf16>) {
  // expected-error @+1 {{'append's keys' element type 'bf16' differs from 'q' element type 'f32'}}
  %o, %lse = fa.attention %q, %k, %v key_lengths %n append %kn, %vn : (tensor<2x8x1x64xf32>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf32>, tensor<2xi32>, tensor<2x2x1x64xbf16>, tensor<2x2x1x64xbf16>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>)
  return
}
