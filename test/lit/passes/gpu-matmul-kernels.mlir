// RUN: tinymlir-opt %s --tinymlir-gpu-matmul-kernels | FileCheck %s

// A memref product becomes a gpu.launch of 16x16 threads with two
// workgroup-memory tiles (A and B), staged between barriers.
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: linalg.matmul
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in (%{{.*}} = %c16, %{{.*}} = %c16{{.*}}, %{{.*}} = %c1{{.*}}) {{.*}}workgroup(%[[TA:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[TB:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK: memref.store {{.*}}, %[[TA]]
// CHECK: memref.store {{.*}}, %[[TB]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[TA]]
// CHECK: gpu.barrier
// CHECK: gpu.terminator
// CHECK-NOT: linalg.matmul
func.func @kernel(%a: memref<16x8xf32>, %b: memref<8x4xf32>, %c: memref<16x4xf32>) {
  linalg.matmul ins(%a, %b : memref<16x8xf32>, memref<8x4xf32>) outs(%c : memref<16x4xf32>)
  return
}
