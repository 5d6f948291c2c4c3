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

// A reduction fused with its producer (a generic with a reduction iterator,
// reduced dimension first): the same loops, parallel dimension outside, the
// producer's work inside the loop that carries the accumulator.
// CHECK-LABEL: func.func @fused_column_sum_of_squares
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[J:.*]]) =
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: memref.store {{.*}}, %arg1[%[[J]]]
#in = affine_map<(d0, d1) -> (d0, d1)>
#column = affine_map<(d0, d1) -> (d1)>
func.func @fused_column_sum_of_squares(%x: memref<4x8xf64>, %out: memref<8xf64>) {
  linalg.generic {indexing_maps = [#in, #column], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8xf64>) outs(%out : memref<8xf64>) {
  ^bb0(%v: f64, %acc: f64):
    %s = arith.mulf %v, %v : f64
    %r = arith.addf %s, %acc : f64
    linalg.yield %r : f64
  }
  return
}
