fa.kernel @k {
  func.func @forward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
    %r = fa.softmax_matmull %x, %v : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    return %r : tensor<?x?x?xf32>
  }
}
