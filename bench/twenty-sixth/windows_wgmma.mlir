// Causal windows on the wgmma forward (MHA, 32 heads, D 64), forward only:
// the forward's time against the key tiles an item visits, and what the
// sink-token phase costs (bench/twenty-sixth/trace.sh).

fa.kernel @w512 {
  func.func @forward(%q: tensor<?x32x?x64xbf16>, %k: tensor<?x32x?x64xbf16>, %v: tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 512
        : (tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>
  }
}

fa.kernel @w1024 {
  func.func @forward(%q: tensor<?x32x?x64xbf16>, %k: tensor<?x32x?x64xbf16>, %v: tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 1024
        : (tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>
  }
}

fa.kernel @w1024s4 {
  func.func @forward(%q: tensor<?x32x?x64xbf16>, %k: tensor<?x32x?x64xbf16>, %v: tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 1024 sink_tokens 4
        : (tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>
  }
}

fa.kernel @w2048 {
  func.func @forward(%q: tensor<?x32x?x64xbf16>, %k: tensor<?x32x?x64xbf16>, %v: tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 2048
        : (tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>
  }
}

fa.kernel @w4096 {
  func.func @forward(%q: tensor<?x32x?x64xbf16>, %k: tensor<?x32x?x64xbf16>, %v: tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 4096
        : (tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>, tensor<?x32x?x64xbf16>) -> (tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>)
    return %o, %lse : tensor<?x32x?x64xbf16>, tensor<?x32x?xf32>
  }
}
