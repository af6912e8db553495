// Vision-transformer attention: no mask, head dim 64; batch, heads and the
// sequence length (197 = 14x14 patches + class token for ViT-B/16) are
// given at run time.

fa.kernel @vit {
  func.func @forward(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v
        : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) -> (tensor<?x?x?x64xf32>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x64xf32>, tensor<?x?x?xf32>
  }
  func.func @backward(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>, %v: tensor<?x?x?x64xf32>, %o: tensor<?x?x?x64xf32>, %lse: tensor<?x?x?xf32>, %dO: tensor<?x?x?x64xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO
        : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?x64xf32>)
        -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>)
    return %dq, %dk, %dv : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>
  }
}
