// RUN: tinymlir-opt %s --tinymlir-straight-line-dealloc | FileCheck %s

// Each buffer is freed right after the last use of it or of a view of it
// (here the copy out of a subview), not at the end of the function.
// CHECK-LABEL: func.func @updates
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf64>
// CHECK: %[[T:.*]] = memref.alloc() : memref<2xf64>
// CHECK: %[[V:.*]] = memref.subview %[[A]]
// CHECK: memref.copy %[[T]], %[[V]]
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK: memref.copy %[[A]], %arg1
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @updates(%arg0: memref<4x4xf64>, %arg1: memref<4x4xf64>) {
  %a = memref.alloc() : memref<4x4xf64>
  memref.copy %arg0, %a : memref<4x4xf64> to memref<4x4xf64>
  %t = memref.alloc() : memref<2xf64>
  %v = memref.subview %a[1, 0] [1, 2] [1, 2] : memref<4x4xf64> to memref<2xf64, strided<[2], offset: 4>>
  memref.copy %t, %v : memref<2xf64> to memref<2xf64, strided<[2], offset: 4>>
  memref.copy %a, %arg1 : memref<4x4xf64> to memref<4x4xf64>
  return
}
