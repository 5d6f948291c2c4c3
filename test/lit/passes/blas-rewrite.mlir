// RUN: tinymlir-opt %s --tinymlir-blas-rewrite | FileCheck %s

// Row-major memref products become one tinymlir_sgemm / tinymlir_dgemm call:
// (batch, m, n, k, A, lda, batch stride A, B, ldb, ..., C, ldc, ...).
// CHECK: func.func private @tinymlir_dgemm(i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64)
// CHECK: func.func private @tinymlir_sgemm(i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64)

// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.matmul
// CHECK-DAG: memref.extract_strided_metadata %arg0
// CHECK-DAG: memref.extract_aligned_pointer_as_index %arg0
// CHECK-DAG: %[[M:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 8 : i64
// CHECK: llvm.inttoptr
// CHECK: call @tinymlir_sgemm(%{{.*}}, %[[M]], %[[N]], %[[K]],
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<16x8xf32>, %b: memref<8x4xf32>, %c: memref<16x4xf32>) {
  linalg.matmul ins(%a, %b : memref<16x8xf32>, memref<8x4xf32>) outs(%c : memref<16x4xf32>)
  return
}

// CHECK-LABEL: func.func @batch
// CHECK: call @tinymlir_dgemm
// CHECK-NOT: linalg.batch_matmul
func.func @batch(%a: memref<2x16x8xf64>, %b: memref<2x8x4xf64>, %c: memref<2x16x4xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<2x16x8xf64>, memref<2x8x4xf64>) outs(%c : memref<2x16x4xf64>)
  return
}

// Mixed precision is not BLAS's: left alone.
// CHECK-LABEL: func.func @mixed
// CHECK: linalg.matmul
func.func @mixed(%a: memref<64x8xf64>, %b: memref<8x4xf32>, %c: memref<64x4xf64>) {
  linalg.matmul ins(%a, %b : memref<64x8xf64>, memref<8x4xf32>) outs(%c : memref<64x4xf64>)
  return
}
