// Decode steps as fa.decode's specs give them (python/fa/spec.py,
// decode_spec; the head counts dynamic): over a paged cache (pages of 16
// keys), with and without `append`, and with `append` over a contiguous
// cache, at the head dim split_kv_blocks.py fixes (the last extent of q, k,
// v and the new rows).
fa.kernel @paged_decode {
  func.func @forward(%q: tensor<?x?x?x?xbf16>, %k: tensor<?x?x16x?xbf16>, %v: tensor<?x?x16x?xbf16>, %lengths: tensor<?xi32>, %table: tensor<?x?xi32>)
      -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %lengths block_table %table mask causal
        : (tensor<?x?x?x?xbf16>, tensor<?x?x16x?xbf16>, tensor<?x?x16x?xbf16>, tensor<?xi32>, tensor<?x?xi32>) -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>
  }
}
fa.kernel @paged_decode_append {
  func.func @forward(%q: tensor<?x?x?x?xbf16>, %k: tensor<?x?x16x?xbf16>, %v: tensor<?x?x16x?xbf16>, %lengths: tensor<?xi32>, %table: tensor<?x?xi32>, %k_new: tensor<?x?x?x?xbf16>, %v_new: tensor<?x?x?x?xbf16>)
      -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %lengths block_table %table append %k_new, %v_new mask causal
        : (tensor<?x?x?x?xbf16>, tensor<?x?x16x?xbf16>, tensor<?x?x16x?xbf16>, tensor<?xi32>, tensor<?x?xi32>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>) -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>
  }
}
fa.kernel @decode_append {
  func.func @forward(%q: tensor<?x?x?x?xbf16>, %k: tensor<?x?x?x?xbf16>, %v: tensor<?x?x?x?xbf16>, %lengths: tensor<?xi32>, %k_new: tensor<?x?x?x?xbf16>, %v_new: tensor<?x?x?x?xbf16>)
      -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %lengths append %k_new, %v_new mask causal
        : (tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?xi32>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>) -> (tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xbf16>, tensor<?x?x?xf32>
  }
}
