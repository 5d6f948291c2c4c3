// RUN: tinymlir-opt %s --tinymlir-write-into-destination | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// An update's value computed into a temporary, then copied into its box:
// the op writes into the box, and the temporary goes.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: memref.alloc
// CHECK: %[[BOX:.*]] = memref.subview %arg1[1] [4] [1]
// CHECK: linalg.generic {{.*}} ins(%arg0 : memref<4xf64>) outs(%[[BOX]] :
// CHECK-NOT: memref.copy
func.func @forward(%arg0: memref<4xf64>, %arg1: memref<8xf64>) {
  %t = memref.alloc() : memref<4xf64>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : memref<4xf64>) outs(%t : memref<4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %r = arith.mulf %in, %in : f64
    linalg.yield %r : f64
  }
  %box = memref.subview %arg1[1] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 1>>
  memref.copy %t, %box : memref<4xf64> to memref<4xf64, strided<[1], offset: 1>>
  return
}

// a[1:5] += a[0:4]: the op reads another box of the buffer it writes, so
// the value stays in its temporary.
// CHECK-LABEL: func.func @overlap
// CHECK: memref.alloc
// CHECK: memref.copy
func.func @overlap(%arg0: memref<8xf64>) {
  %in = memref.subview %arg0[0] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1]>>
  %t = memref.alloc() : memref<4xf64>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%in : memref<4xf64, strided<[1]>>) outs(%t : memref<4xf64>) {
  ^bb0(%x: f64, %out: f64):
    linalg.yield %x : f64
  }
  %box = memref.subview %arg0[1] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 1>>
  memref.copy %t, %box : memref<4xf64> to memref<4xf64, strided<[1], offset: 1>>
  return
}

// A write between the op and the copy into a buffer the op reads: the op
// must run where it is.
// CHECK-LABEL: func.func @clobbered
// CHECK: memref.alloc
// CHECK: linalg.generic
// CHECK: memref.copy %arg2, %arg0
// CHECK: memref.copy
func.func @clobbered(%arg0: memref<4xf64>, %arg1: memref<4xf64>, %arg2: memref<4xf64>) {
  %t = memref.alloc() : memref<4xf64>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%arg0 : memref<4xf64>) outs(%t : memref<4xf64>) {
  ^bb0(%x: f64, %out: f64):
    linalg.yield %x : f64
  }
  memref.copy %arg2, %arg0 : memref<4xf64> to memref<4xf64>
  memref.copy %t, %arg1 : memref<4xf64> to memref<4xf64>
  return
}

// a[1:5] -= b: the snapshot of the written box, read at the same point of
// an elementwise op, is the box itself.
// CHECK-LABEL: func.func @augmented
// CHECK-NOT: memref.alloc
// CHECK: %[[BOX:.*]] = memref.subview %arg0[1] [4] [1]
// CHECK: linalg.generic {{.*}} ins(%[[BOX]], %arg1 : {{.*}}) outs(%[[BOX]] :
// CHECK-NOT: memref.copy
func.func @augmented(%arg0: memref<8xf64>, %arg1: memref<4xf64>) {
  %box = memref.subview %arg0[1] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 1>>
  %s = memref.alloc() : memref<4xf64>
  memref.copy %box, %s : memref<4xf64, strided<[1], offset: 1>> to memref<4xf64>
  %t = memref.alloc() : memref<4xf64>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%s, %arg1 : memref<4xf64>, memref<4xf64>) outs(%t : memref<4xf64>) {
  ^bb0(%x: f64, %y: f64, %out: f64):
    %r = arith.subf %x, %y : f64
    linalg.yield %r : f64
  }
  memref.copy %t, %box : memref<4xf64> to memref<4xf64, strided<[1], offset: 1>>
  return
}
