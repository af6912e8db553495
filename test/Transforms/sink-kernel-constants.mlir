// RUN: fa-opt %s --pass-pipeline="builtin.module(func.func(fa-sink-kernel-constants))" | FileCheck %s

// Constants used by a named launch (fa-gpu-tensor-core's) are cloned into
// it (arith's, and poison structs such as wgmma's overwritten
// accumulators); an unnamed launch keeps capturing them; non-constant
// values are left alone in both.

// CHECK-LABEL: func.func @launches(
// CHECK-SAME: %[[N:.*]]: index, %[[M:.*]]: memref<8xf32>)
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[F:.*]] = arith.constant 2.5
// CHECK: gpu.launch
// CHECK-SAME: module(@named) function(@named)
// CHECK: %[[INNER:.*]] = arith.constant 2.5
// CHECK: %[[I3:.*]] = arith.constant 3 : index
// CHECK: %[[POISON:.*]] = llvm.mlir.poison : !llvm.struct<(f32, f32)>
// CHECK: memref.store %[[INNER]], %[[M]][%[[I3]]]
// CHECK: memref.store %[[INNER]], %[[M]][%[[N]]]
// CHECK: llvm.extractvalue %[[POISON]][1]
// CHECK: gpu.launch
// CHECK-NOT: arith.constant
// CHECK: memref.store %[[F]], %[[M]][%[[C3]]]
func.func @launches(%n: index, %m: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %f = arith.constant 2.5 : f32
  %acc = llvm.mlir.poison : !llvm.struct<(f32, f32)>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             module(@named) function(@named) {
    memref.store %f, %m[%c3] : memref<8xf32>
    memref.store %f, %m[%n] : memref<8xf32>
    %e = llvm.extractvalue %acc[1] : !llvm.struct<(f32, f32)>
    memref.store %e, %m[%c1] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %m[%c3] : memref<8xf32>
    gpu.terminator
  }
  return
}
