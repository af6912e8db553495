// Llama-style decode (32 query heads over 8 kv heads, D 128), paged (pages
// of 16 keys) and contiguous: the paged-decode measurements of the
// twenty-fifth session (bench/twenty-fifth/decode.sh).
fa.kernel @llama_paged {
  func.func @forward(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x16x128xbf16>, %v: tensor<?x8x16x128xbf16>, %lengths: tensor<?xi32>, %table: tensor<?x?xi32>)
      -> (tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %lengths block_table %table mask causal
        : (tensor<?x32x?x128xbf16>, tensor<?x8x16x128xbf16>, tensor<?x8x16x128xbf16>, tensor<?xi32>, tensor<?x?xi32>) -> (tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
  }
}
fa.kernel @llama_flat {
  func.func @forward(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %lengths: tensor<?xi32>)
      -> (tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %lengths mask causal
        : (tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?xi32>) -> (tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
  }
}
