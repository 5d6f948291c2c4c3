// RUN: tinymlir-opt %s --tinymlir-gpu-emulate-on-host | FileCheck %s

// The launch becomes host loops over the grid; a kernel with a barrier runs
// each block as an OpenMP team of block-size threads whose number comes from
// the runtime (checked against the team); gpu.barrier is omp.barrier, device
// allocations are host ones, and the GPU module is gone.
// CHECK: func.func private @tinymlirGpuEmuThread(i64) -> i64
// CHECK-LABEL: func.func @kernel
// CHECK: memref.alloc() : memref<64xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[BLOCK:.*]] = %{{.*}} to %c2
// CHECK: omp.parallel num_threads
// CHECK: %[[T:.*]] = func.call @tinymlirGpuEmuThread
// CHECK: arith.muli %[[BLOCK]], %c32
// CHECK: omp.barrier
// CHECK: memref.store
// CHECK: omp.terminator
// CHECK: memref.dealloc
// CHECK-NOT: gpu.
module attributes {gpu.container_module} {
  func.func @kernel(%out: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %d = gpu.alloc () : memref<64xf32>
    gpu.launch_func @kernels::@fill blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1) args(%d : memref<64xf32>)
    memref.copy %d, %out : memref<64xf32> to memref<64xf32>
    gpu.dealloc %d : memref<64xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @fill(%buf: memref<64xf32>) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %n = gpu.block_dim x
      %bn = arith.muli %b, %n : index
      %i = arith.addi %bn, %t : index
      %v = arith.index_cast %i : index to i32
      %f = arith.sitofp %v : i32 to f32
      gpu.barrier
      memref.store %f, %buf[%i] : memref<64xf32>
      gpu.return
    }
  }
}
