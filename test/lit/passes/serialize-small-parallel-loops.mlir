// RUN: tinymlir-opt %s --tinymlir-serialize-small-parallel-loops | FileCheck %s
// RUN: tinymlir-opt %s --tinymlir-serialize-small-parallel-loops=minimum-work=16 | FileCheck %s --check-prefix=SMALL

// 4 x 8 iterations: below the default minimum work (65536), the loop runs on
// one thread as an scf.for nest. With minimum-work=16 it keeps threads over
// its first dimension, and the second becomes an inner scf.for.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// SMALL-LABEL: func.func @small
// SMALL: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}})
// SMALL: scf.for
// SMALL: memref.store
func.func @small(%m: memref<4x8xf32>) {
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

// A trip count known only when the kernel runs counts as large (threads), but
// inside an scf.for (a captured Python loop's slice A[i, :i]) as one: a fork
// and join each iteration would cost more than they spread.
// CHECK-LABEL: func.func @unknown
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @unknown(%m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %m[%i] : memref<?xf32>
    scf.reduce
  }
  scf.for %t = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%t) step (%c1) {
      memref.store %zero, %m[%i] : memref<?xf32>
      scf.reduce
    }
  }
  return
}
