// RUN: fa-opt %s -split-input-file -verify-diagnostics
// Every verifier message of fa.kernel.

// expected-error @+1 {{'fa.kernel' op may hold only func.func @forward and func.func @backward, found 'func.func' @helper}}
fa.kernel @k {
  func.func @helper() {
    return
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op may hold only func.func @forward and func.func @backward, found 'arith.constant'}}
fa.kernel @k {
  %c = arith.constant 0 : index
}

// -----

// expected-error @+1 {{'fa.kernel' op @k has no func.func @forward}}
fa.kernel @k {
}

// -----

// The forward must take its arguments in order: the runtime passes q, k, v.
// expected-error @+1 {{'fa.kernel' op @forward must hold exactly one fa op that takes the function's arguments in order, followed by a func.return of its results}}
fa.kernel @k {
  func.func @forward(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
    %o, %lse = fa.attention %q, %v, %k : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
    return %o, %lse : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @forward must hold exactly one fa op that takes the function's arguments in order, followed by a func.return of its results}}
fa.kernel @k {
  func.func @forward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
    %r = fa.softmax_matmul %x, %v : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    %s = fa.softmax_matmul %r, %v : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    return %s : tensor<?x?x?xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @forward must hold exactly one fa op that takes the function's arguments in order, followed by a func.return of its results}}
fa.kernel @k {
  func.func private @forward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
}

// -----

// expected-error @+1 {{'fa.kernel' op @forward must hold fa.attention or fa.softmax_matmul, not fa.attention_grad}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>, %o: tensor<1x1x4x8xf32>, %lse: tensor<1x1x4xf32>, %dO: tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>, tensor<1x1x4x8xf32>) -> (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
    return %dq, %dk, %dv : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @backward must hold fa.attention_grad and needs an fa.attention in @forward}}
fa.kernel @k {
  func.func @forward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
    %r = fa.softmax_matmul %x, %v : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    return %r : tensor<?x?x?xf32>
  }
  func.func @backward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
    %r = fa.softmax_matmul %x, %v : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    return %r : tensor<?x?x?xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @backward's mask differs from @forward's}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
    return %o, %lse : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  }
  func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO  : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
    return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @backward's window differs from @forward's}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 8 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
    return %o, %lse : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  }
  func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal window 4 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
    return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @backward's sink_tokens differs from @forward's}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal window 8 sink_tokens 1 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
    return %o, %lse : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  }
  func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal window 8 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
    return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @backward's scale differs from @forward's}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
    %o, %lse = fa.attention %q, %k, %v scale 0.5 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
    return %o, %lse : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  }
  func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO scale 0.25 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
    return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @backward's sinks differs from @forward's}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %s: tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %s mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<4xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
    return %o, %lse : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  }
  func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
    return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @backward's 'k' type differs from @forward's}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
    %o, %lse = fa.attention %q, %k, %v mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
    return %o, %lse : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  }
  func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<?x2x8x16xf32>, %v: tensor<?x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<?x2x8x16xf32>, tensor<?x2x8x16xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal : (tensor<1x4x8x16xf32>, tensor<?x2x8x16xf32>, tensor<?x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<?x2x8x16xf32>, tensor<?x2x8x16xf32>)
    return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<?x2x8x16xf32>, tensor<?x2x8x16xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @forward's key_lengths have no backward: a kernel with them holds only @forward}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %n: tensor<1xi32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
    %o, %lse = fa.attention %q, %k, %v key_lengths %n mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1xi32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
    return %o, %lse : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  }
  func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
    return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  }
}

// -----

// expected-error @+1 {{'fa.kernel' op @forward's query_starts/key_starts have no backward: a kernel with them holds only @forward}}
fa.kernel @k {
  func.func @forward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %cq: tensor<2xi32>, %ck: tensor<2xi32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>) {
    %o, %lse = fa.attention %q, %k, %v query_starts %cq key_starts %ck mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
    return %o, %lse : tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  }
  func.func @backward(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x4x8x16xf32>, %lse: tensor<1x4x8xf32>, %dO: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
    %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %lse, %dO mask causal : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>, tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
    return %dq, %dk, %dv : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  }
}
