// RUN: tinymlir-opt %s --tinymlir-interchange-scattered-copies | FileCheck %s

// A key cache (S, H, D, P) written at positions P, row by row (index_put's
// loop): interchanged, the row's elements in parallel, the rows in order inside.
// CHECK-LABEL: func.func @keys
// CHECK: scf.parallel (%[[H:.*]], %[[D:.*]]) = (%{{.*}}, %{{.*}}) to (%c12, %c64)
// CHECK-NEXT: scf.for %[[R:.*]] = %{{.*}} to %c256
// CHECK: memref.load %arg2[%[[R]]]
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[H]], %[[D]]] : memref<12x64xf32, strided<[64, 1], offset: ?>>
// CHECK-NEXT: memref.store %[[V]], %{{.*}}[%[[H]], %[[D]]] : memref<12x64xf32, strided<[32768, 512], offset: ?>>
// CHECK-NOT: linalg.copy
func.func @keys(%keys: memref<1x12x64x512xf32>, %rows: memref<256x12x64xf32>, %slots: memref<256xi32>, %positions: memref<256xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %r = %c0 to %c256 step %c1 {
    %s = memref.load %slots[%r] : memref<256xi32>
    %si = arith.index_cast %s : i32 to index
    %p = memref.load %positions[%r] : memref<256xi32>
    %pi = arith.index_cast %p : i32 to index
    %row = memref.subview %rows[%r, 0, 0] [1, 12, 64] [1, 1, 1] : memref<256x12x64xf32> to memref<12x64xf32, strided<[64, 1], offset: ?>>
    %slot = memref.subview %keys[%si, 0, 0, %pi] [1, 12, 64, 1] [1, 1, 1, 1] : memref<1x12x64x512xf32> to memref<12x64xf32, strided<[32768, 512], offset: ?>>
    linalg.copy ins(%row : memref<12x64xf32, strided<[64, 1], offset: ?>>) outs(%slot : memref<12x64xf32, strided<[32768, 512], offset: ?>>)
  }
  return
}

// A value cache (S, H, P, D): each row's slot is contiguous in D already.
// CHECK-LABEL: func.func @values
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: linalg.copy
func.func @values(%values: memref<1x12x512x64xf32>, %rows: memref<256x12x64xf32>, %positions: memref<256xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %r = %c0 to %c256 step %c1 {
    %p = memref.load %positions[%r] : memref<256xi32>
    %pi = arith.index_cast %p : i32 to index
    %row = memref.subview %rows[%r, 0, 0] [1, 12, 64] [1, 1, 1] : memref<256x12x64xf32> to memref<12x64xf32, strided<[64, 1], offset: ?>>
    %slot = memref.subview %values[0, 0, %pi, 0] [1, 12, 1, 64] [1, 1, 1, 1] : memref<1x12x512x64xf32> to memref<12x64xf32, strided<[32768, 1], offset: ?>>
    linalg.copy ins(%row : memref<12x64xf32, strided<[64, 1], offset: ?>>) outs(%slot : memref<12x64xf32, strided<[32768, 1], offset: ?>>)
  }
  return
}

// Rows read from the memref they are written to, as the source or as an
// index: a later row may read what an earlier one wrote, so the whole rows
// keep their order.
// CHECK-LABEL: func.func @reads_its_destination
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @reads_its_destination(%a: memref<8x64x64xf32>, %positions: memref<64xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %r = %c0 to %c64 step %c1 {
    %p = memref.load %positions[%r] : memref<64xi32>
    %pi = arith.index_cast %p : i32 to index
    %row = memref.subview %a[0, %r, 0] [1, 1, 64] [1, 1, 1] : memref<8x64x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    %slot = memref.subview %a[1, 0, %pi] [1, 64, 1] [1, 1, 1] : memref<8x64x64xf32> to memref<64xf32, strided<[64], offset: ?>>
    linalg.copy ins(%row : memref<64xf32, strided<[1], offset: ?>>) outs(%slot : memref<64xf32, strided<[64], offset: ?>>)
  }
  return
}

// CHECK-LABEL: func.func @index_from_destination
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @index_from_destination(%keys: memref<64x512xf32>, %rows: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %r = %c0 to %c256 step %c1 {
    %f = memref.load %keys[%c0, %r] : memref<64x512xf32>
    %p = arith.fptosi %f : f32 to i32
    %pi = arith.index_cast %p : i32 to index
    %row = memref.subview %rows[%r, 0] [1, 64] [1, 1] : memref<256x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    %slot = memref.subview %keys[0, %pi] [64, 1] [1, 1] : memref<64x512xf32> to memref<64xf32, strided<[512], offset: ?>>
    linalg.copy ins(%row : memref<64xf32, strided<[1], offset: ?>>) outs(%slot : memref<64xf32, strided<[512], offset: ?>>)
  }
  return
}

// Anything besides the copy with an effect (here a store) keeps the loop.
// CHECK-LABEL: func.func @other_effects
// CHECK-NOT: scf.parallel
// CHECK: linalg.copy
func.func @other_effects(%keys: memref<64x512xf32>, %rows: memref<256x64xf32>, %log: memref<256xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c7 = arith.constant 7 : i32
  scf.for %r = %c0 to %c256 step %c1 {
    memref.store %c7, %log[%r] : memref<256xi32>
    %row = memref.subview %rows[%r, 0] [1, 64] [1, 1] : memref<256x64xf32> to memref<64xf32, strided<[1], offset: ?>>
    %slot = memref.subview %keys[0, %r] [64, 1] [1, 1] : memref<64x512xf32> to memref<64xf32, strided<[512], offset: ?>>
    linalg.copy ins(%row : memref<64xf32, strided<[1], offset: ?>>) outs(%slot : memref<64xf32, strided<[512], offset: ?>>)
  }
  return
}
