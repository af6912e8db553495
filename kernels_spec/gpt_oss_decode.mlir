// gpt-oss decode: gpt_oss.mlir's two layers (64 query heads over 8 key/value
// heads, head dim 64, a learnable sink logit per query head) over KV caches
// filled to a length per sequence (key_lengths): a few query rows per
// sequence, the last positions of each, against its cache. Forward only.

fa.kernel @gpt_oss_decode_sliding {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>, %lengths: tensor<?xi32>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks key_lengths %lengths mask causal window 128
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>, tensor<?xi32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}

fa.kernel @gpt_oss_decode_full {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>, %lengths: tensor<?xi32>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks key_lengths %lengths mask causal
        : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>, tensor<?xi32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}

// The full layer over a paged cache (vLLM's and FlashInfer's layout, taken
// transposed): pages of 16 keys, [pages, 8, 16, 64]; sequence b's key j is
// row j mod 16 of page %table[b, j / 16].
fa.kernel @gpt_oss_decode_paged {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x16x64xbf16>, %v: tensor<?x8x16x64xbf16>, %sinks: tensor<64xf32>, %lengths: tensor<?xi32>, %table: tensor<?x?xi32>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks key_lengths %lengths block_table %table mask causal
        : (tensor<?x64x?x64xbf16>, tensor<?x8x16x64xbf16>, tensor<?x8x16x64xbf16>, tensor<64xf32>, tensor<?xi32>, tensor<?x?xi32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}

// A decode step that writes its own keys: the full layer over the paged
// cache with `append`, the step's Sq new keys and values written into each
// sequence's pages at its length by the attention kernels, and attended to
// there with the cache's keys (Sk = length + Sq).
fa.kernel @gpt_oss_decode_append {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x16x64xbf16>, %v: tensor<?x8x16x64xbf16>, %sinks: tensor<64xf32>, %lengths: tensor<?xi32>, %table: tensor<?x?xi32>, %k_new: tensor<?x8x?x64xbf16>, %v_new: tensor<?x8x?x64xbf16>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks key_lengths %lengths block_table %table append %k_new, %v_new mask causal
        : (tensor<?x64x?x64xbf16>, tensor<?x8x16x64xbf16>, tensor<?x8x16x64xbf16>, tensor<64xf32>, tensor<?xi32>, tensor<?x?xi32>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
}
