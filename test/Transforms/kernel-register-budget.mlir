// RUN: fa-opt %s --pass-pipeline="builtin.module(gpu.module(fa-kernel-register-budget))" | FileCheck %s

// A kernel that moves registers with setmaxnreg gets one block per SM as
// its minimum (.minnctapersm 1), which fixes its register count at entry;
// one that names a minimum already, and one without setmaxnreg, are left
// alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.func @specialised() attributes {nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: llvm.func @named() attributes {nvvm.kernel, nvvm.minctasm = 2 : i32}
// CHECK: llvm.func @plain() attributes {nvvm.kernel}
gpu.module @kernels {
  llvm.func @specialised() attributes {nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>} {
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %producer = llvm.icmp "ult" %tid, %c0 : i32
    llvm.cond_br %producer, ^give, ^take
  ^give:
    nvvm.setmaxregister decrease 24
    llvm.return
  ^take:
    nvvm.setmaxregister increase 240
    llvm.return
  }
  llvm.func @named() attributes {nvvm.kernel, nvvm.minctasm = 2 : i32} {
    nvvm.setmaxregister increase 240
    llvm.return
  }
  llvm.func @plain() attributes {nvvm.kernel} {
    llvm.return
  }
}
