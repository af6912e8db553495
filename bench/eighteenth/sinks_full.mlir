// gpt-oss attention: 64 query heads over 8 key/value heads, head dim 64,
// and a learnable sink logit per query head that joins the softmax
// denominator. Layers alternate between a 128-key sliding window and full
// causal attention; both kernels carry their backward for training.

fa.kernel @sinks_full_sliding {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks mask causal
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
  func.func @backward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %o: tensor<?x64x?x64xbf16>, %lse: tensor<?x64x?xf32>, %dO: tensor<?x64x?x64xbf16>, %sinks: tensor<64xf32>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) {
    %dq, %dk, %dv, %dsinks = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %sinks mask causal
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>, tensor<?x64x?x64xbf16>, tensor<64xf32>)
        -> (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>)
    return %dq, %dk, %dv, %dsinks : tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>
  }
}

fa.kernel @sinks_full_full {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks mask causal
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
  func.func @backward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %o: tensor<?x64x?x64xbf16>, %lse: tensor<?x64x?xf32>, %dO: tensor<?x64x?x64xbf16>, %sinks: tensor<64xf32>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) {
    %dq, %dk, %dv, %dsinks = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %sinks mask causal
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>, tensor<?x64x?x64xbf16>, tensor<64xf32>)
        -> (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>)
    return %dq, %dk, %dv, %dsinks : tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>
  }
}
