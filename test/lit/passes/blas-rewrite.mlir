// RUN: tinymlir-opt %s --tinymlir-blas-rewrite | FileCheck %s

// Row-major memref products become one tinymlir_sgemm / tinymlir_dgemm call:
// (batch, m, n, k, A, lda, batch stride A, B, ldb, ..., C, ldc, ...).
// (batch, m, n, k, A, lda, batch stride A, B, ldb, ..., C, ldc, ..., alpha, beta).
// Matrix-vector pairs (see @atax): tinymlir_dgemv2.
// CHECK: func.func private @tinymlir_dgemv2(i64, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, f64, f64, !llvm.ptr, i64, !llvm.ptr, f64, f64)
// CHECK: func.func private @tinymlir_dgemm(i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f64, f64)
// CHECK: func.func private @tinymlir_sgemm(i64, i64, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f64, f64)

// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.matmul
// CHECK-DAG: memref.extract_strided_metadata %arg0
// CHECK-DAG: memref.extract_aligned_pointer_as_index %arg0
// CHECK-DAG: %[[M:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 8 : i64
// CHECK: llvm.inttoptr
// CHECK: %[[ALPHA:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: call @tinymlir_sgemm(%{{.*}}, %[[M]], %[[N]], %[[K]], {{.*}}, %[[ALPHA]], %[[BETA]])
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

#id = affine_map<(i, j) -> (i, j)>

// PolyBench's gemm as bufferized: T = 1.5 * A into a temporary, C zero-filled,
// C += T @ B, then D = C + 1.2 * D in place. One call: alpha 1.5 reading A,
// beta 1.2 into D; the fill, the scaling and the epilogue are gone.
// CHECK-LABEL: func.func @gemm
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.generic
// CHECK-DAG: memref.extract_aligned_pointer_as_index %arg0
// CHECK-DAG: memref.extract_aligned_pointer_as_index %arg2
// CHECK: %[[ALPHA:.*]] = arith.constant 1.500000e+00 : f64
// CHECK-NEXT: %[[BETA:.*]] = arith.constant 1.200000e+00 : f64
// CHECK-NEXT: call @tinymlir_dgemm({{.*}}, %[[ALPHA]], %[[BETA]])
// CHECK-NOT: linalg.generic
func.func @gemm(%a: memref<8x8xf64>, %b: memref<8x8xf64>, %d: memref<8x8xf64>) {
  %zero = arith.constant 0.0 : f64
  %s = arith.constant 1.5 : f64
  %t = arith.constant 1.2 : f64
  %tmp = memref.alloc() : memref<8x8xf64>
  %c = memref.alloc() : memref<8x8xf64>
  linalg.fill ins(%zero : f64) outs(%c : memref<8x8xf64>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x8xf64>) outs(%tmp : memref<8x8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = arith.mulf %x, %s : f64
    linalg.yield %y : f64
  }
  linalg.matmul ins(%tmp, %b : memref<8x8xf64>, memref<8x8xf64>) outs(%c : memref<8x8xf64>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %d : memref<8x8xf64>, memref<8x8xf64>) outs(%d : memref<8x8xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %p = arith.mulf %y, %t : f64
    %q = arith.addf %x, %p : f64
    linalg.yield %q : f64
  }
  memref.dealloc %tmp : memref<8x8xf64>
  memref.dealloc %c : memref<8x8xf64>
  return
}

// Not folded: a temporary read again after the product, an epilogue whose D
// the product reads, and a fill that something reads before the product.
// The second product's fill is read by nothing before it: beta 0 there.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: memref.copy
// CHECK: %[[A1:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[B1:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: call @tinymlir_dgemm({{.*}}, %[[A1]], %[[B1]])
// CHECK: linalg.generic
// CHECK: %[[A2:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[B2:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: call @tinymlir_dgemm({{.*}}, %[[A2]], %[[B2]])
// CHECK: linalg.generic
func.func @kept(%a: memref<8x8xf64>, %b: memref<8x8xf64>, %d: memref<8x8xf64>, %e: memref<8x8xf64>) {
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %tmp = memref.alloc() : memref<8x8xf64>
  %c = memref.alloc() : memref<8x8xf64>
  linalg.fill ins(%zero : f64) outs(%c : memref<8x8xf64>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x8xf64>) outs(%tmp : memref<8x8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = arith.mulf %x, %two : f64
    linalg.yield %y : f64
  }
  memref.copy %c, %e : memref<8x8xf64> to memref<8x8xf64>
  linalg.matmul ins(%tmp, %b : memref<8x8xf64>, memref<8x8xf64>) outs(%c : memref<8x8xf64>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%tmp : memref<8x8xf64>) outs(%e : memref<8x8xf64>) {
  ^bb0(%x: f64, %o: f64):
    linalg.yield %x : f64
  }
  %c2 = memref.alloc() : memref<8x8xf64>
  linalg.fill ins(%zero : f64) outs(%c2 : memref<8x8xf64>)
  linalg.matmul ins(%d, %b : memref<8x8xf64>, memref<8x8xf64>) outs(%c2 : memref<8x8xf64>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c2, %d : memref<8x8xf64>, memref<8x8xf64>) outs(%d : memref<8x8xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %q = arith.addf %x, %y : f64
    linalg.yield %q : f64
  }
  memref.dealloc %tmp : memref<8x8xf64>
  memref.dealloc %c : memref<8x8xf64>
  memref.dealloc %c2 : memref<8x8xf64>
  return
}

// gesummv (alpha * A @ x + beta * B @ x) as bufferized: both scalings write
// one temporary, each read by one product before the next overwrites it.
// Both fold: BLAS reads A and B, and nothing writes a scaled matrix.
// CHECK-LABEL: func.func @reused
// CHECK-NOT: linalg.generic
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[A1:.*]] = arith.constant 1.500000e+00 : f64
// CHECK-NEXT: %[[B1:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: call @tinymlir_dgemm({{.*}}, %[[A1]], %[[B1]])
// CHECK-NOT: linalg.generic
// CHECK: memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[A2:.*]] = arith.constant 1.200000e+00 : f64
// CHECK-NEXT: %[[B2:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: call @tinymlir_dgemm({{.*}}, %[[A2]], %[[B2]])
func.func @reused(%a: memref<8x8xf64>, %b: memref<8x8xf64>, %x: memref<8x1xf64>) -> (memref<8x1xf64>, memref<8x1xf64>) {
  %zero = arith.constant 0.0 : f64
  %s = arith.constant 1.5 : f64
  %u = arith.constant 1.2 : f64
  %c1 = memref.alloc() : memref<8x1xf64>
  linalg.fill ins(%zero : f64) outs(%c1 : memref<8x1xf64>)
  %t = memref.alloc() : memref<8x8xf64>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x8xf64>) outs(%t : memref<8x8xf64>) {
  ^bb0(%v: f64, %o: f64):
    %y = arith.mulf %v, %s : f64
    linalg.yield %y : f64
  }
  linalg.matmul ins(%t, %x : memref<8x8xf64>, memref<8x1xf64>) outs(%c1 : memref<8x1xf64>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<8x8xf64>) outs(%t : memref<8x8xf64>) {
  ^bb0(%v: f64, %o: f64):
    %y = arith.mulf %v, %u : f64
    linalg.yield %y : f64
  }
  %c2 = memref.alloc() : memref<8x1xf64>
  linalg.fill ins(%zero : f64) outs(%c2 : memref<8x1xf64>)
  linalg.matmul ins(%t, %x : memref<8x8xf64>, memref<8x1xf64>) outs(%c2 : memref<8x1xf64>)
  memref.dealloc %t : memref<8x8xf64>
  return %c1, %c2 : memref<8x1xf64>, memref<8x1xf64>
}

// A zero factor is not folded (0 * inf is NaN; BLAS's alpha 0 skips A @ B).
// CHECK-LABEL: func.func @zero
// CHECK: linalg.generic
// CHECK: call @tinymlir_dgemm
func.func @zero(%a: memref<8x8xf64>, %b: memref<8x8xf64>, %c: memref<8x8xf64>) {
  %zero = arith.constant 0.0 : f64
  %tmp = memref.alloc() : memref<8x8xf64>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x8xf64>) outs(%tmp : memref<8x8xf64>) {
  ^bb0(%x: f64, %o: f64):
    %y = arith.mulf %x, %zero : f64
    linalg.yield %y : f64
  }
  linalg.matmul ins(%tmp, %b : memref<8x8xf64>, memref<8x8xf64>) outs(%c : memref<8x8xf64>)
  memref.dealloc %tmp : memref<8x8xf64>
  return
}

#v = affine_map<(i) -> (i)>

// atax's (A @ x) @ A as bufferized: the second product reads the first's
// result through a reshape. One pass over A: a tinymlir_dgemv2 call
// (m, k, A, lda, v, incv, c, incc, alphaP, betaP, w, incw, d, alphaQ, betaQ)
// with w the same buffer as c, both fills gone (beta 0).
// CHECK-LABEL: func.func @atax
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK: %[[AP:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[BP:.*]] = arith.constant 0.000000e+00 : f64
// CHECK: %[[AQ:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[BQ:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: call @tinymlir_dgemv2(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[AP]], %[[BP]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[AQ]], %[[BQ]])
// CHECK-NOT: call
// CHECK: return
func.func @atax(%a: memref<12x10xf64>, %x: memref<10x1xf64>, %y: memref<1x10xf64>) {
  %zero = arith.constant 0.0 : f64
  %s = memref.alloc() : memref<2xi64>
  %t = memref.alloc() : memref<12x1xf64>
  linalg.fill ins(%zero : f64) outs(%t : memref<12x1xf64>)
  linalg.fill ins(%zero : f64) outs(%y : memref<1x10xf64>)
  linalg.matmul ins(%a, %x : memref<12x10xf64>, memref<10x1xf64>) outs(%t : memref<12x1xf64>)
  %row = memref.reshape %t(%s) : (memref<12x1xf64>, memref<2xi64>) -> memref<1x12xf64>
  linalg.matmul ins(%row, %a : memref<1x12xf64>, memref<12x10xf64>) outs(%y : memref<1x10xf64>)
  memref.dealloc %t : memref<12x1xf64>
  return
}

// mvt's x1 += A @ y1; x2 += y2 @ A: each product's result is added to a
// vector through a reshape; each writes into its vector instead (beta 1,
// through an expand_shape of it), and both are one pass.
// CHECK-LABEL: func.func @mvt
// CHECK-NOT: linalg.generic
// CHECK-DAG: memref.expand_shape %arg2 {{\[\[}}0, 1]] output_shape [12, 1]
// CHECK-DAG: memref.expand_shape %arg3 {{\[\[}}0, 1]] output_shape [1, 12]
// CHECK: %[[AP:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[BP:.*]] = arith.constant 1.000000e+00 : f64
// CHECK: %[[AQ:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[BQ:.*]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: call @tinymlir_dgemv2(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[AP]], %[[BP]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[AQ]], %[[BQ]])
// CHECK-NOT: linalg.generic
func.func @mvt(%a: memref<12x12xf64>, %y1: memref<12x1xf64>, %x1: memref<12xf64>, %x2: memref<12xf64>, %y2: memref<1x12xf64>) {
  %zero = arith.constant 0.0 : f64
  %s = memref.alloc() : memref<1xi64>
  %c1 = memref.alloc() : memref<12x1xf64>
  linalg.fill ins(%zero : f64) outs(%c1 : memref<12x1xf64>)
  linalg.matmul ins(%a, %y1 : memref<12x12xf64>, memref<12x1xf64>) outs(%c1 : memref<12x1xf64>)
  %v1 = memref.reshape %c1(%s) : (memref<12x1xf64>, memref<1xi64>) -> memref<12xf64>
  linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%x1, %v1 : memref<12xf64>, memref<12xf64>) outs(%x1 : memref<12xf64>) {
  ^bb0(%p: f64, %q: f64, %o: f64):
    %r = arith.addf %p, %q : f64
    linalg.yield %r : f64
  }
  %c2 = memref.alloc() : memref<1x12xf64>
  linalg.fill ins(%zero : f64) outs(%c2 : memref<1x12xf64>)
  linalg.matmul ins(%y2, %a : memref<1x12xf64>, memref<12x12xf64>) outs(%c2 : memref<1x12xf64>)
  %v2 = memref.reshape %c2(%s) : (memref<1x12xf64>, memref<1xi64>) -> memref<12xf64>
  linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]}
      ins(%x2, %v2 : memref<12xf64>, memref<12xf64>) outs(%x2 : memref<12xf64>) {
  ^bb0(%p: f64, %q: f64, %o: f64):
    %r = arith.addf %p, %q : f64
    linalg.yield %r : f64
  }
  memref.dealloc %c1 : memref<12x1xf64>
  memref.dealloc %c2 : memref<1x12xf64>
  return
}

// Not one pass: A @ (w @ A) (the column product reads the row product's
// result), and two products with a write of A between them.
// CHECK-LABEL: func.func @apart
// CHECK-NOT: tinymlir_dgemv2
// CHECK-COUNT-4: call @tinymlir_dgemm
// CHECK-NOT: tinymlir_dgemv2
// CHECK: return
func.func @apart(%a: memref<12x12xf64>, %w: memref<1x12xf64>, %c: memref<12x1xf64>, %x: memref<12x1xf64>, %d: memref<1x12xf64>) {
  %s = memref.alloc() : memref<2xi64>
  %one = arith.constant 1.0 : f64
  %t = memref.alloc() : memref<1x12xf64>
  linalg.matmul ins(%w, %a : memref<1x12xf64>, memref<12x12xf64>) outs(%t : memref<1x12xf64>)
  %col = memref.reshape %t(%s) : (memref<1x12xf64>, memref<2xi64>) -> memref<12x1xf64>
  linalg.matmul ins(%a, %col : memref<12x12xf64>, memref<12x1xf64>) outs(%c : memref<12x1xf64>)
  memref.dealloc %t : memref<1x12xf64>
  linalg.fill ins(%one : f64) outs(%x : memref<12x1xf64>)
  linalg.matmul ins(%a, %x : memref<12x12xf64>, memref<12x1xf64>) outs(%x : memref<12x1xf64>)
  linalg.fill ins(%one : f64) outs(%a : memref<12x12xf64>)
  linalg.matmul ins(%w, %a : memref<1x12xf64>, memref<12x12xf64>) outs(%d : memref<1x12xf64>)
  return
}

// doitgen's A[r] = A[r] @ C4 as bufferized in a loop: the slice copied out
// to be reshaped, C a copy of zeros filled once above the loop, the result
// copied back. The product reads the slice in place (a collapse_shape of
// it) with beta 0; the copy out stays (the slice is also the product's
// input).
// CHECK-LABEL: func.func @slices
// CHECK: linalg.fill
// CHECK: scf.for
// CHECK-NOT: memref.copy
// CHECK: %[[ROW:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<1x8x8xf64, strided<[64, 8, 1], offset: ?>> into memref<8x8xf64, strided<[8, 1], offset: ?>>
// CHECK: memref.extract_aligned_pointer_as_index %[[ROW]]
// CHECK: %[[BETA:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: call @tinymlir_dgemm({{.*}}, %[[BETA]])
// CHECK: memref.copy
// CHECK-NOT: memref.copy
func.func @slices(%a: memref<4x8x8xf64>, %w: memref<8x8xf64>) {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %shape2 = memref.alloc() : memref<2xi64>
  %shape3 = memref.alloc() : memref<3xi64>
  %zeros = memref.alloc() : memref<8x8xf64>
  linalg.fill ins(%zero : f64) outs(%zeros : memref<8x8xf64>)
  scf.for %r = %c0 to %c4 step %c1 {
    %slice = memref.subview %a[%r, 0, 0] [1, 8, 8] [1, 1, 1] : memref<4x8x8xf64> to memref<1x8x8xf64, strided<[64, 8, 1], offset: ?>>
    %t = memref.alloc() : memref<1x8x8xf64>
    memref.copy %slice, %t : memref<1x8x8xf64, strided<[64, 8, 1], offset: ?>> to memref<1x8x8xf64>
    %x = memref.reshape %t(%shape2) : (memref<1x8x8xf64>, memref<2xi64>) -> memref<8x8xf64>
    %c = memref.alloc() : memref<8x8xf64>
    memref.copy %zeros, %c : memref<8x8xf64> to memref<8x8xf64>
    linalg.matmul ins(%x, %w : memref<8x8xf64>, memref<8x8xf64>) outs(%c : memref<8x8xf64>)
    memref.dealloc %t : memref<1x8x8xf64>
    %y = memref.reshape %c(%shape3) : (memref<8x8xf64>, memref<3xi64>) -> memref<1x8x8xf64>
    memref.copy %y, %slice : memref<1x8x8xf64> to memref<1x8x8xf64, strided<[64, 8, 1], offset: ?>>
    memref.dealloc %c : memref<8x8xf64>
  }
  memref.dealloc %zeros : memref<8x8xf64>
  return
}
