// gpt-oss's sliding layer at several windows, forward only: the forward's
// time against the key tiles a block visits (bench/twenty-sixth/baseline.sh).

fa.kernel @sliding_w64 {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks mask causal window 64
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}

fa.kernel @sliding_w128 {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks mask causal window 128
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}

fa.kernel @sliding_w192 {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks mask causal window 192
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}

fa.kernel @sliding_w256 {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks mask causal window 256
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}

fa.kernel @sliding_w384 {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks mask causal window 384
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}
