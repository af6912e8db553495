// Windows a few key tiles wide, with and without sink tokens and learnable
// sinks, so that a query tile's keys have leading masked, unmasked and
// trailing masked tiles (branched-tiles.test).

fa.kernel @window {
  func.func @forward(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>)
      -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 40
        : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  }
}

fa.kernel @window_sink_tokens {
  func.func @forward(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>)
      -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 20 sink_tokens 3
        : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  }
}

fa.kernel @window_learnable_sinks {
  func.func @forward(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>, %s: tensor<?xf32>)
      -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %s mask causal window 33
        : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  }
}
