// RUN: tinymlir-opt %s --tinymlir-gpu-map-parallel-loops | FileCheck %s

// The loop is tiled (blocks outside, threads inside; 4 x 8 fits one block)
// and both levels are mapped: the innermost dimension to x.
// CHECK-LABEL: func.func @kernel
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: memref.store
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}
func.func @kernel(%m: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    memref.store %zero, %m[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}
