// RUN: tinymlir-opt %s --tinymlir-small-products | FileCheck %s
// RUN: tinymlir-opt %s --tinymlir-small-products=max-rows=2 | FileCheck %s --check-prefix=TWO

// A matrix-vector product (one row) streams the weights in column blocks run
// by an scf.parallel.
// CHECK-LABEL: func.func @gemv
// CHECK-NOT: linalg.matmul
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: memref.load %arg1
// CHECK: arith.mulf
// CHECK: arith.addf
// TWO-LABEL: func.func @gemv
// TWO-NOT: linalg.matmul
func.func @gemv(%a: memref<1x6xf32>, %b: memref<6x256xf32>, %c: memref<1x256xf32>) {
  linalg.matmul ins(%a, %b : memref<1x6xf32>, memref<6x256xf32>) outs(%c : memref<1x256xf32>)
  return
}

// Float64 rows against float32 weights, 4 rows: at most max-rows (default 32)
// are lowered, reading the weights as float32 and widening them.
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: linalg.matmul
// CHECK: memref.load %arg1{{.*}} : memref<6x256xf32>
// CHECK-NEXT: arith.extf {{.*}} : f32 to f64
// TWO-LABEL: func.func @mixed
// TWO: linalg.matmul
func.func @mixed(%a: memref<4x6xf64>, %b: memref<6x256xf32>, %c: memref<4x256xf64>) {
  linalg.matmul ins(%a, %b : memref<4x6xf64>, memref<6x256xf32>) outs(%c : memref<4x256xf64>)
  return
}

// Same precision with several rows: BLAS's, left alone.
// CHECK-LABEL: func.func @gemm
// TWO-LABEL: func.func @gemm
// CHECK: linalg.matmul
func.func @gemm(%a: memref<4x6xf32>, %b: memref<6x256xf32>, %c: memref<4x256xf32>) {
  linalg.matmul ins(%a, %b : memref<4x6xf32>, memref<6x256xf32>) outs(%c : memref<4x256xf32>)
  return
}
