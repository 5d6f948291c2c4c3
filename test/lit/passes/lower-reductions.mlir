// RUN: tinymlir-opt %s --tinymlir-lower-reductions | FileCheck %s

// A row maximum: an scf.parallel over the rows around an scf.for over the
// row that carries the accumulator (loaded before, stored after).
// CHECK-LABEL: func.func @row_max
// CHECK-NOT: linalg.reduce
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK: %[[INIT:.*]] = memref.load %arg1[%[[I]]]
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%[[X:.*]] = %[[INIT]]) -> (f32)
// CHECK: arith.maximumf
// CHECK: scf.yield
// CHECK: memref.store %[[ACC]], %arg1[%[[I]]]
func.func @row_max(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.reduce ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %m = arith.maximumf %in, %init : f32
      linalg.yield %m : f32
    }
  return
}
