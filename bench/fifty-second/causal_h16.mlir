// Causal attention: query i sees keys j <= i + (Sk - Sq), bottom-right
// aligned when Sq != Sk. Every size is dynamic (MHA, GQA and MQA shapes).

fa.kernel @causal {
  func.func @forward(%q: tensor<?x16x?x?xbf16>, %k: tensor<?x16x?x?xbf16>, %v: tensor<?x16x?x?xbf16>)
      -> (tensor<?x16x?x?xbf16>, tensor<?x16x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal
        : (tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>) -> (tensor<?x16x?x?xbf16>, tensor<?x16x?xf32>)
    return %o, %lse : tensor<?x16x?x?xbf16>, tensor<?x16x?xf32>
  }
  func.func @backward(%q: tensor<?x16x?x?xbf16>, %k: tensor<?x16x?x?xbf16>, %v: tensor<?x16x?x?xbf16>, %o: tensor<?x16x?x?xbf16>, %lse: tensor<?x16x?xf32>, %dO: tensor<?x16x?x?xbf16>)
      -> (tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal
        : (tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>, tensor<?x16x?xf32>, tensor<?x16x?x?xbf16>)
        -> (tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>)
    return %dq, %dk, %dv : tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>, tensor<?x16x?x?xbf16>
  }
}
