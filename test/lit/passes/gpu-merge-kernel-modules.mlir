// RUN: tinymlir-opt %s --tinymlir-gpu-merge-kernel-modules | FileCheck %s

// Two outlined kernels end up in one gpu.module @kernels, and the launches
// name them there.
// CHECK-LABEL: func.func @kernel
// CHECK: gpu.launch_func @kernels::@first
// CHECK: gpu.launch_func @kernels::@second
// CHECK: gpu.module @kernels {
// CHECK: gpu.func @first
// CHECK: gpu.func @second
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @kernel() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @second::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @first {
    gpu.func @first() kernel {
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @second() kernel {
      gpu.return
    }
  }
}
