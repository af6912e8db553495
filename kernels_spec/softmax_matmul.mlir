// The fused softmax-matmul of the course homework: softmax(x) @ v over the
// last axis of x [B, M, N], with v [B, N, P], computed by the same online
// softmax loop as attention (softmax(x) is never materialised).

fa.kernel @softmax_matmul {
  func.func @forward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>)
      -> tensor<?x?x?xf32> {
    %out = fa.softmax_matmul %x, %v
        : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    return %out : tensor<?x?x?xf32>
  }
}
