// RUN: fa-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(fa-kernel-grid-dependency))" | FileCheck %s
// RUN: fa-opt %s --split-input-file --pass-pipeline="builtin.module(gpu.module(fa-kernel-grid-dependency))" | FileCheck %s --check-prefix=NO-TRIGGER

// NO-TRIGGER-NOT: launch_dependents

// On sm_90a every kernel waits for the one before ahead of its first
// instruction, and lets no dependent start early; device functions are
// left alone, and the module gets the marker the runtime looks for.
// CHECK-LABEL: gpu.module @hopper
// CHECK: llvm.mlir.global external constant @fa_grid_dependency(1 : i32) {addr_space = 1 : i32, alignment = 4 : i64} : i32
// CHECK: llvm.func @helper()
// CHECK-NEXT: llvm.return
// CHECK: llvm.func @kernel(%{{.*}}: !llvm.ptr) attributes {nvvm.kernel}
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "griddepcontrol.wait;", "~{memory}"  : () -> ()
// CHECK-NEXT: llvm.mlir.constant
// CHECK: llvm.func @second() attributes {nvvm.kernel}
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "griddepcontrol.wait;", "~{memory}"  : () -> ()
// CHECK-NEXT: llvm.return
gpu.module @hopper [#nvvm.target<chip = "sm_90a">] {
  llvm.func @helper() {
    llvm.return
  }
  llvm.func @kernel(%out: !llvm.ptr) attributes {nvvm.kernel} {
    %one = llvm.mlir.constant(1.0 : f32) : f32
    llvm.store %one, %out : f32, !llvm.ptr
    llvm.return
  }
  llvm.func @second() attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// Before sm_90 (no griddepcontrol) and without a target, nothing changes.
// CHECK-LABEL: gpu.module @ampere
// CHECK-NOT: griddepcontrol
// CHECK-NOT: fa_grid_dependency
// CHECK-LABEL: gpu.module @untargeted
// CHECK-NOT: griddepcontrol
// CHECK-NOT: fa_grid_dependency
gpu.module @ampere [#nvvm.target<chip = "sm_80">] {
  llvm.func @kernel() attributes {nvvm.kernel} {
    llvm.return
  }
}
gpu.module @untargeted {
  llvm.func @kernel() attributes {nvvm.kernel} {
    llvm.return
  }
}
