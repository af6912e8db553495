// RUN: fa-opt %s --split-input-file --fa-gpu-modules-to-binary --verify-diagnostics | FileCheck %s
// Every GPU module becomes a gpu.binary of its name, in order, with one
// PTX object per target; the host code around them is left as it was.

// CHECK-LABEL: llvm.func @host
// CHECK: gpu.binary @first [#gpu.object<#nvvm.target<chip = "sm_90a">, {{.*}}assembly = "{{.*}}.target sm_90a{{.*}}.entry first_kernel
// CHECK: gpu.binary @second [#gpu.object<#nvvm.target<chip = "sm_80">, {{.*}}assembly = "{{.*}}.entry second_kernel{{.*}}>, #gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.entry second_kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  llvm.func @host() {
    llvm.return
  }
  gpu.module @first [#nvvm.target<chip = "sm_90a">] {
    llvm.func @first_kernel(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %c = llvm.mlir.constant(1.0 : f32) : f32
      llvm.store %c, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
  gpu.module @second [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_90">] {
    llvm.func @second_kernel() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @below {{GPU module 'untargeted' has no target}}
  gpu.module @untargeted {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
