// RUN: tinymlir-opt %s --tinymlir-gpu-move-data-to-device | FileCheck %s

// The input is uploaded (tinymlirGpuInput), the output is a device buffer
// (tinymlirGpuOutput); the launch uses the device memrefs; the result is
// copied back and the call's buffers released.
// CHECK-DAG: func.func private @tinymlirGpuInput(i64, i64) -> i64
// CHECK-DAG: func.func private @tinymlirGpuOutput(i64) -> i64
// CHECK-LABEL: func.func @kernel
// CHECK: call @tinymlirGpuInput(%{{.*}}, %c128_i64)
// CHECK: %[[IN:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<4x8xf32>
// CHECK: %[[DEV:.*]] = call @tinymlirGpuOutput(%c128_i64
// CHECK: %[[OUT:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<4x8xf32>
// CHECK: gpu.launch_func @kernel_kernel::@kernel_kernel {{.*}} args(%[[IN]] : memref<4x8xf32>, %[[OUT]] : memref<4x8xf32>)
// CHECK: call @tinymlirGpuCopyOut(%{{.*}}, %[[DEV]], %{{.*}})
// CHECK: call @tinymlirGpuCallEnd()
module attributes {gpu.container_module} {
  func.func @kernel(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kernel_kernel::@kernel_kernel blocks in (%c1, %c1, %c1) threads in (%c8, %c4, %c1) args(%arg0 : memref<4x8xf32>, %arg1 : memref<4x8xf32>)
    return
  }
  gpu.module @kernel_kernel {
    gpu.func @kernel_kernel(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32>) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %0 = memref.load %arg0[%ty, %tx] : memref<4x8xf32>
      memref.store %0, %arg1[%ty, %tx] : memref<4x8xf32>
      gpu.return
    }
  }
}
