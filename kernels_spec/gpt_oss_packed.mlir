// gpt-oss prefill over packed sequences: gpt_oss.mlir's two layers (64
// query heads over 8 key/value heads, head dim 64, a learnable sink logit
// per query head) over sequences of different lengths packed end to end
// (query_starts/key_starts, flash-attn's cu_seqlens): q, k and v are one
// batch entry of the sequences' rows, and each sequence attends within
// itself. Forward only.

fa.kernel @gpt_oss_packed_sliding {
  func.func @forward(%q: tensor<1x64x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %sinks: tensor<64xf32>, %query_starts: tensor<?xi32>, %key_starts: tensor<?xi32>)
      -> (tensor<1x64x?x64xbf16>, tensor<1x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks query_starts %query_starts key_starts %key_starts mask causal window 128
        : (tensor<1x64x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<64xf32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<1x64x?x64xbf16>, tensor<1x64x?xf32>)
    return %o, %lse : tensor<1x64x?x64xbf16>, tensor<1x64x?xf32>
  }
}

fa.kernel @gpt_oss_packed_full {
  func.func @forward(%q: tensor<1x64x?x64xbf16>, %k: tensor<1x8x?x64xbf16>, %v: tensor<1x8x?x64xbf16>, %sinks: tensor<64xf32>, %query_starts: tensor<?xi32>, %key_starts: tensor<?xi32>)
      -> (tensor<1x64x?x64xbf16>, tensor<1x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks query_starts %query_starts key_starts %key_starts mask causal
        : (tensor<1x64x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<1x8x?x64xbf16>, tensor<64xf32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<1x64x?x64xbf16>, tensor<1x64x?xf32>)
    return %o, %lse : tensor<1x64x?x64xbf16>, tensor<1x64x?xf32>
  }
}
