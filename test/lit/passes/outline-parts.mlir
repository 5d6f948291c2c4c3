// RUN: tinymlir-opt %s --split-input-file --tinymlir-outline-parts="min-ops=1 part-ops=4" | FileCheck %s

// A straight-line kernel cut into parts of about 4 nested operations. The
// constants and the view of the argument stay in the kernel and are computed
// again in each part that reads them; the scalar loaded in the first part and
// read in the second is returned by one and passed to the other.
// CHECK-LABEL: func.func private @kernel_part0(%arg0: memref<4x4xf64>) -> f64
// CHECK-SAME: attributes {tinymlir.part}
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[V:.*]] = memref.subview %arg0[1, 0] [1, 4] [1, 1]
// CHECK: %[[X:.*]] = memref.load %arg0[%[[C0]], %[[C1]]]
// CHECK: %[[S:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[X]]) -> (f64)
// CHECK: memref.load %[[V]]
// CHECK: return %[[S]] : f64
// CHECK-LABEL: func.func private @kernel_part1(%arg0: f64, %arg1: memref<4x4xf64>)
// CHECK: %[[Y:.*]] = arith.mulf %arg0, %arg0
// CHECK: memref.store %[[Y]], %arg1
// CHECK-LABEL: func.func @kernel(%arg0: memref<4x4xf64>, %arg1: memref<4x4xf64>)
// (the constants and the view stay, unused, for canonicalize to remove)
// CHECK: %[[R:.*]] = call @kernel_part0(%arg1) : (memref<4x4xf64>) -> f64
// CHECK-NEXT: call @kernel_part1(%[[R]], %arg1) : (f64, memref<4x4xf64>) -> ()
// CHECK-NEXT: return
func.func @kernel(%in: memref<4x4xf64>, %out: memref<4x4xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %row = memref.subview %out[1, 0] [1, 4] [1, 1] : memref<4x4xf64> to memref<1x4xf64, strided<[4, 1], offset: 4>>
  %x = memref.load %out[%c0, %c1] : memref<4x4xf64>
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x) -> (f64) {
    %e = memref.load %row[%c0, %i] : memref<1x4xf64, strided<[4, 1], offset: 4>>
    %t = arith.addf %a, %e : f64
    scf.yield %t : f64
  }
  %y = arith.mulf %s, %s : f64
  memref.store %y, %out[%c1, %c1] : memref<4x4xf64>
  return
}

// -----

// The constants a part computes again count toward its weight, once each:
// each store weighs 1, and the first two read three constants, so a part of 4
// holds two stores, and the next part (which computes its own) two more.
// CHECK-LABEL: func.func private @kernel_part0(%arg0: memref<4x4xf64>)
// CHECK-COUNT-2: memref.store
// CHECK-NOT: memref.store
// CHECK: return
// CHECK-LABEL: func.func private @kernel_part1(%arg0: memref<4x4xf64>)
// CHECK-COUNT-2: memref.store
// CHECK-NOT: memref.store
// CHECK: return
func.func @kernel(%out: memref<4x4xf64>) {
  %f = arith.constant 1.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  memref.store %f, %out[%c0, %c0] : memref<4x4xf64>
  memref.store %f, %out[%c1, %c1] : memref<4x4xf64>
  memref.store %f, %out[%c2, %c2] : memref<4x4xf64>
  memref.store %f, %out[%c3, %c3] : memref<4x4xf64>
  return
}

// Under min-ops: left alone.
// RUN: tinymlir-opt %s --split-input-file --tinymlir-outline-parts | FileCheck %s --check-prefix=SMALL
// SMALL-NOT: kernel_part
