// gpt-oss window 128 as the Python API wrote it before the fifty-second
// session: the head counts dynamic (kernels_spec/gpt_oss.mlir fixes 64 / 8).
fa.kernel @attention {
  func.func @forward(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %s: tensor<?xf32>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %s mask causal window 128 : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?xf32>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
  }
  func.func @backward(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %o: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>, %dO: tensor<?x?x?x64xbf16>, %s: tensor<?xf32>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?xf32>) {
    %r0, %r1, %r2, %r3 = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %s mask causal window 128 : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xbf16>, tensor<?xf32>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?xf32>)
    return %r0, %r1, %r2, %r3 : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?xf32>
  }
}

