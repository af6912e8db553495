// Grouped-query causal attention with 32 query heads sharing 8 key/value
// heads (4 query heads per group, as in Llama-3-8B). Batch, sequence
// lengths and head dim stay dynamic.

fa.kernel @gqa_causal {
  func.func @forward(%q: tensor<?x32x?x?xbf16>, %k: tensor<?x8x?x?xbf16>, %v: tensor<?x8x?x?xbf16>)
      -> (tensor<?x32x?x?xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal
        : (tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>) -> (tensor<?x32x?x?xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x?xbf16>, tensor<?x32x?xf32>
  }
  func.func @backward(%q: tensor<?x32x?x?xbf16>, %k: tensor<?x8x?x?xbf16>, %v: tensor<?x8x?x?xbf16>, %o: tensor<?x32x?x?xbf16>, %lse: tensor<?x32x?xf32>, %dO: tensor<?x32x?x?xbf16>)
      -> (tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal
        : (tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x32x?x?xbf16>, tensor<?x32x?xf32>, tensor<?x32x?x?xbf16>)
        -> (tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>)
    return %dq, %dk, %dv : tensor<?x32x?x?xbf16>, tensor<?x8x?x?xbf16>, tensor<?x8x?x?xbf16>
  }
}
