// RUN: fa-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(fa-kernel-tensor-maps))" --verify-diagnostics | FileCheck %s

// A tensor map taken by value and stored to a stack slot for TMA becomes a
// grid-constant byval parameter, and the slot's users use it directly.
// Other parameters and functions are left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.func @load(%[[MAP:.*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.struct<"fa.tensor_map", (array<16 x i64>)>, nvvm.grid_constant}, %[[DST:.*]]: !llvm.ptr<7>, %[[BAR:.*]]: !llvm.ptr<3>, %{{.*}}: !llvm.array<16 x i64>)
// CHECK-NOT: llvm.alloca
// CHECK-NOT: llvm.store
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[DST]], %[[MAP]], %[[BAR]], box
// CHECK: llvm.func @untouched(%{{.*}}: !llvm.ptr)
gpu.module @kernels {
  llvm.func @load(%map: !llvm.struct<"fa.tensor_map", (array<16 x i64>)>,
                  %dst: !llvm.ptr<7>, %bar: !llvm.ptr<3>,
                  %plain: !llvm.array<16 x i64>) attributes {nvvm.kernel} {
    %one = llvm.mlir.constant(1 : i32) : i32
    %zero = llvm.mlir.constant(0 : i32) : i32
    %slot = llvm.alloca %one x !llvm.struct<"fa.tensor_map", (array<16 x i64>)> {alignment = 64 : i64} : (i32) -> !llvm.ptr
    llvm.store %map, %slot : !llvm.struct<"fa.tensor_map", (array<16 x i64>)>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %slot, %bar, box[%zero, %zero, %zero, %zero] : !llvm.ptr<7>, !llvm.ptr
    llvm.return
  }
  llvm.func @untouched(%p: !llvm.ptr) {
    llvm.return
  }
}

// -----

// A tensor map read as a value (not through its slot) cannot become a
// param-space pointer.
gpu.module @misused {
  // expected-error @+1 {{fa-kernel-tensor-maps: parameter 0 of bad is a tensor map used other than by one store into a stack slot}}
  llvm.func @bad(%map: !llvm.struct<"fa.tensor_map", (array<16 x i64>)>) attributes {nvvm.kernel} {
    %word = llvm.extractvalue %map[0, 0] : !llvm.struct<"fa.tensor_map", (array<16 x i64>)>
    llvm.return
  }
}
