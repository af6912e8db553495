// RUN: fa-opt %s --fa-specialize-element-type=element-type=f64 | FileCheck %s --check-prefix=F64
// RUN: fa-opt %s --fa-specialize-element-type=element-type=f16 | FileCheck %s --check-prefix=F16
// RUN: not fa-opt %s --fa-specialize-element-type=element-type=i8 2>&1 | FileCheck %s --check-prefix=BAD

// Inputs take the new element type; lse, sinks and dsinks its accumulator
// type (f64 for f64, f32 otherwise).

// F64: func.func @forward(%{{.*}}: tensor<?x64x?x64xf64>, %{{.*}}: tensor<?x8x?x64xf64>, %{{.*}}: tensor<?x8x?x64xf64>, %{{.*}}: tensor<64xf64>) -> (tensor<?x64x?x64xf64>, tensor<?x64x?xf64>)
// F64: func.func @backward({{.*}}%{{.*}}: tensor<?x64x?xf64>, %{{.*}}: tensor<?x64x?x64xf64>, %{{.*}}: tensor<64xf64>) -> (tensor<?x64x?x64xf64>, tensor<?x8x?x64xf64>, tensor<?x8x?x64xf64>, tensor<64xf64>)
// F16: func.func @forward(%{{.*}}: tensor<?x64x?x64xf16>, %{{.*}}: tensor<?x8x?x64xf16>, %{{.*}}: tensor<?x8x?x64xf16>, %{{.*}}: tensor<64xf32>) -> (tensor<?x64x?x64xf16>, tensor<?x64x?xf32>)
// F16: fa.attention_grad {{.*}} -> (tensor<?x64x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<64xf32>)
// BAD: error: fa-specialize-element-type: unknown element-type 'i8'; expected f16, bf16, f32 or f64
fa.kernel @gpt_oss {
  func.func @forward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %sinks: tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v sinks %sinks mask causal window 128 : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>)
    return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>
  }
  func.func @backward(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x8x?x64xbf16>, %v: tensor<?x8x?x64xbf16>, %o: tensor<?x64x?x64xbf16>, %lse: tensor<?x64x?xf32>, %dO: tensor<?x64x?x64xbf16>, %sinks: tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>) {
    %dq, %dk, %dv, %dsinks = fa.attention_grad %q, %k, %v, %o, %lse, %dO sinks %sinks mask causal window 128 : (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x64x?x64xbf16>, tensor<?x64x?xf32>, tensor<?x64x?x64xbf16>, tensor<64xf32>) -> (tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>)
    return %dq, %dk, %dv, %dsinks : tensor<?x64x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>, tensor<64xf32>
  }
}
