// RUN: not tinymlir-opt %s --tinymlir-gpu-check-host --split-input-file 2>&1 | FileCheck %s

// A host function that only launches kernels passes.
// CHECK-NOT: error: {{.*}}@launches_only
module attributes {gpu.container_module} {
  func.func @launches_only(%arg0: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    return
  }
  gpu.module @k {
    gpu.func @k(%arg0: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A loop left on the host fails the check.
// CHECK: error: 'scf.{{(for|yield)}}' is left in the host function (every loop and every buffer must be on the GPU)
func.func @host_loop(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
  }
  return
}
