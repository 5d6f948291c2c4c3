// RUN: tinymlir-opt %s --tinymlir-small-products | FileCheck %s
// RUN: tinymlir-opt %s --tinymlir-small-products=max-rows=2 | FileCheck %s --check-prefix=TWO
// RUN: tinymlir-opt %s --tinymlir-small-products=stream-rows=4 | FileCheck %s --check-prefix=STREAM
// RUN: tinymlir-opt %s --tinymlir-small-products="stream-rows=4 vector-bits=512" | FileCheck %s --check-prefix=V512

// A matrix-vector product (one row) streams the weights in column blocks run
// by an scf.parallel.
// CHECK-LABEL: func.func @gemv
// CHECK-NOT: linalg.matmul
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: memref.load %arg1
// CHECK: llvm.intr.fmuladd
// TWO-LABEL: func.func @gemv
// TWO-NOT: linalg.matmul
func.func @gemv(%a: memref<1x6xf32>, %b: memref<6x256xf32>, %c: memref<1x256xf32>) {
  linalg.matmul ins(%a, %b : memref<1x6xf32>, memref<6x256xf32>) outs(%c : memref<1x256xf32>)
  return
}

// Float64 rows against float32 weights, 4 rows: at most max-rows (default 16)
// are lowered, reading the weights as float32 and widening them.
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: linalg.matmul
// CHECK: memref.load %arg1{{.*}} : memref<6x256xf32>
// CHECK-NEXT: arith.extf {{.*}} : f32 to f64
// More rows than max-rows: the weights are converted once into a float64
// buffer, then the product is an ordinary one (BLAS's).
// TWO-LABEL: func.func @mixed
// TWO: %[[WIDE:.*]] = memref.alloc() : memref<6x256xf64>
// TWO: linalg.generic {{.*}} ins(%arg1 : memref<6x256xf32>) outs(%[[WIDE]] : memref<6x256xf64>)
// TWO: arith.extf
// TWO: linalg.matmul ins(%arg0, %[[WIDE]] : memref<4x6xf64>, memref<6x256xf64>) outs(%arg2 : memref<4x256xf64>)
// TWO-NEXT: memref.dealloc %[[WIDE]]
func.func @mixed(%a: memref<4x6xf64>, %b: memref<6x256xf32>, %c: memref<4x256xf64>) {
  linalg.matmul ins(%a, %b : memref<4x6xf64>, memref<6x256xf32>) outs(%c : memref<4x256xf64>)
  return
}

// Same precision with several rows: BLAS's, left alone -- unless stream-rows
// allows them (sequences decoded together: each row as a one-row product).
// One row against weights (K, N) with K a multiple of 32: row chunks in
// parallel, passes of 8 rows of B, and the columns a cache line (16) at a
// time, each of the 8 rows prefetched 8 lines ahead (the last column at most).
// CHECK-LABEL: func.func @one_row_prefetches
// CHECK: scf.for {{.*}} to %c256 step %c16
// CHECK: %[[AHEAD:.*]] = arith.minui %{{.*}}, %c255 : index
// CHECK-COUNT-8: memref.prefetch %arg1[%{{.*}}, %[[AHEAD]]], read, locality<3>, data : memref<64x256xf32>
// CHECK: llvm.intr.fmuladd
func.func @one_row_prefetches(%a: memref<1x64xf64>, %b: memref<64x256xf32>, %c: memref<1x256xf64>) {
  linalg.matmul ins(%a, %b : memref<1x64xf64>, memref<64x256xf32>) outs(%c : memref<1x256xf64>)
  return
}

// CHECK-LABEL: func.func @gemm
// TWO-LABEL: func.func @gemm
// CHECK: linalg.matmul
// STREAM-LABEL: func.func @gemm
// STREAM-NOT: linalg.matmul
// STREAM: scf.parallel
// STREAM-LABEL: func.func @mixed_transposed
func.func @gemm(%a: memref<4x6xf32>, %b: memref<6x256xf32>, %c: memref<4x256xf32>) {
  linalg.matmul ins(%a, %b : memref<4x6xf32>, memref<6x256xf32>) outs(%c : memref<4x256xf32>)
  return
}

// Transposed float32 weights (x @ w.T) with more rows than max-rows: widened
// into (K, N) order, so that the product is a plain one.
// CHECK-LABEL: func.func @mixed_transposed
// CHECK-NOT: linalg.matmul
// TWO-LABEL: func.func @mixed_transposed
// TWO: %[[WIDE:.*]] = memref.alloc() : memref<6x256xf64>
// TWO: linalg.generic {indexing_maps = [#[[$T:.*]], #{{.*}}]{{.*}} ins(%arg1 : memref<256x6xf32>) outs(%[[WIDE]] : memref<6x256xf64>)
// TWO: linalg.matmul ins(%arg0, %[[WIDE]] : memref<4x6xf64>, memref<6x256xf64>)
func.func @mixed_transposed(%a: memref<4x6xf64>, %b: memref<256x6xf32>, %c: memref<4x256xf64>) {
  linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                 affine_map<(i, j, k) -> (i, j)>]
    ins(%a, %b : memref<4x6xf64>, memref<256x6xf32>) outs(%c : memref<4x256xf64>)
  return
}

// One row against a transposed copy of the weights (x @ w.T in float32): the
// product reads w through transposed maps and the copy goes.
// CHECK-LABEL: func.func @gemv_transposed_copy
// CHECK-NOT: linalg.transpose
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel
// CHECK: memref.load %arg1{{.*}} : memref<256x6xf32>
// With several rows the copy stays, for BLAS; with stream-rows=4 it goes.
// CHECK-LABEL: func.func @gemm_transposed_copy
// CHECK: linalg.transpose
// CHECK: linalg.matmul
// STREAM-LABEL: func.func @gemm_transposed_copy
// STREAM-NOT: linalg.transpose
// STREAM-NOT: memref.alloc
// STREAM: scf.parallel
// STREAM: memref.load %arg1{{.*}} : memref<256x6xf32>
func.func @gemv_transposed_copy(%a: memref<1x6xf32>, %w: memref<256x6xf32>, %c: memref<1x256xf32>) {
  %t = memref.alloc() : memref<6x256xf32>
  linalg.transpose ins(%w : memref<256x6xf32>) outs(%t : memref<6x256xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<1x6xf32>, memref<6x256xf32>) outs(%c : memref<1x256xf32>)
  memref.dealloc %t : memref<6x256xf32>
  return
}
func.func @gemm_transposed_copy(%a: memref<4x6xf32>, %w: memref<256x6xf32>, %c: memref<4x256xf32>) {
  %t = memref.alloc() : memref<6x256xf32>
  linalg.transpose ins(%w : memref<256x6xf32>) outs(%t : memref<6x256xf32>) permutation = [1, 0]
  linalg.matmul ins(%a, %t : memref<4x6xf32>, memref<6x256xf32>) outs(%c : memref<4x256xf32>)
  memref.dealloc %t : memref<6x256xf32>
  return
}

// Several rows against (K, N) weights with K a multiple of 32 (the chunked
// loop): the rows share each pass over the weights in register blocks, each
// weight vector loaded once (float32, widened) for a block of rows; a
// multiply-add (fused where the CPU has FMA) per term.
// STREAM-LABEL: func.func @rows_share_weights
// STREAM-NOT: linalg.matmul
// STREAM: scf.parallel
// STREAM: vector.load %{{.*}} : memref<4x4x256xf64>, vector<8xf64>
// The first block of rows prefetches each weight vector's row 8 lines ahead.
// STREAM: %[[AHEAD:.*]] = arith.minui %{{.*}}, %c255 : index
// STREAM-NEXT: memref.prefetch %arg1[%{{.*}}, %[[AHEAD]]], read, locality<3>, data : memref<64x256xf32>
// STREAM: %[[W:.*]] = vector.load %arg1[{{.*}}] : memref<64x256xf32>, vector<8xf32>
// STREAM: arith.extf %[[W]] : vector<8xf32> to vector<8xf64>
// STREAM: vector.broadcast {{.*}} : f64 to vector<8xf64>
// STREAM: llvm.intr.fmuladd({{.*}}) : (vector<8xf64>, vector<8xf64>, vector<8xf64>) -> vector<8xf64>
// STREAM: vector.store {{.*}} : memref<4x4x256xf64>, vector<8xf64>
// With vector-bits=512 (AVX-512 CPUs) the blocks' vectors have 16 lanes.
// V512-LABEL: func.func @rows_share_weights
// V512: %[[W:.*]] = vector.load %arg1[{{.*}}] : memref<64x256xf32>, vector<16xf32>
// V512: arith.extf %[[W]] : vector<16xf32> to vector<16xf64>
// V512: llvm.intr.fmuladd({{.*}}) : (vector<16xf64>, vector<16xf64>, vector<16xf64>) -> vector<16xf64>
func.func @rows_share_weights(%a: memref<4x64xf64>, %b: memref<64x256xf32>, %c: memref<4x256xf64>) {
  linalg.matmul ins(%a, %b : memref<4x64xf64>, memref<64x256xf32>) outs(%c : memref<4x256xf64>)
  return
}

// Weights whose rows are not contiguous (a strided view): no vector loads,
// the scalar loop.
// STREAM-LABEL: func.func @strided_weights
// STREAM-NOT: vector.load
// STREAM: memref.load %arg1
// STREAM-NOT: vector.load
// STREAM: return
func.func @strided_weights(%a: memref<4x64xf64>, %b: memref<64x256xf32, strided<[1, 64]>>, %c: memref<4x256xf64>) {
  linalg.matmul ins(%a, %b : memref<4x64xf64>, memref<64x256xf32, strided<[1, 64]>>) outs(%c : memref<4x256xf64>)
  return
}

// x @ w.T with K a multiple of the lanes (256 bits: 8 of float32, 4 of
// float64): dot products in tiles of 4 weight rows x 2 rows, each accumulated
// in lanes over k, then reduced into C; of the 6 weight rows, the 2 past the
// last whole tile go in a second parallel loop, one at a time.
// STREAM-LABEL: func.func @tied_dot_tiles
// STREAM-NOT: linalg.matmul
// STREAM: scf.parallel {{.*}} to (%c4{{.*}}) step (%c4{{.*}})
// STREAM: :8 = scf.for
// The next tile's weight rows (the last row at most) are prefetched at each k.
// STREAM: %[[NEXT:.*]] = arith.minui
// STREAM: memref.prefetch %arg1[%[[NEXT]], %{{.*}}], read, locality<3>, data : memref<6x16xf32>
// STREAM: vector.load %arg1[{{.*}}] : memref<6x16xf32>, vector<4xf32>
// STREAM: arith.extf {{.*}} : vector<4xf32> to vector<4xf64>
// STREAM: vector.load %arg0[{{.*}}] : memref<3x16xf64>, vector<4xf64>
// STREAM: llvm.intr.fmuladd({{.*}}) : (vector<4xf64>, vector<4xf64>, vector<4xf64>) -> vector<4xf64>
// STREAM: vector.reduction <add>, {{.*}} fastmath<reassoc> : vector<4xf64> into f64
// STREAM: scf.parallel {{.*}} = (%c4{{.*}}) to (%c6{{.*}}) step (%c1{{.*}})
// STREAM: vector.reduction <add>
// STREAM: return
// On AVX-512 (vector-bits=512) float64 dot products take 4 rows a block: the
// 3 rows in one, 3 x 4 dot products.
// V512-LABEL: func.func @tied_dot_tiles
// V512: :12 = scf.for
func.func @tied_dot_tiles(%a: memref<3x16xf64>, %w: memref<6x16xf32>, %c: memref<3x6xf64>) {
  linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                 affine_map<(i, j, k) -> (i, j)>]
    ins(%a, %w : memref<3x16xf64>, memref<6x16xf32>) outs(%c : memref<3x6xf64>)
  return
}

// On AVX-512, 5 to 8 rows of float64 make one block with tiles of 2 weight
// rows: 8 x 2 dot products, each weight vector read once for every row.
// V512-LABEL: func.func @all_rows_dot_tiles
// V512: scf.parallel {{.*}} to (%c6{{.*}}) step (%c2{{.*}})
// V512: :16 = scf.for
// V512-NOT: scf.for
// V512: return
func.func @all_rows_dot_tiles(%a: memref<8x16xf64>, %w: memref<6x16xf32>, %c: memref<8x6xf64>) {
  linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                 affine_map<(i, j, k) -> (i, j)>]
    ins(%a, %w : memref<8x16xf64>, memref<6x16xf32>) outs(%c : memref<8x6xf64>)
  return
}

// Float32 dot products take vector-bits' lanes (16 at 512); float64 ones stay
// in 256 bits (above: 4 lanes, at either width).
// STREAM-LABEL: func.func @dot_tiles_f32
// STREAM: vector.reduction <add>, {{.*}} : vector<8xf32> into f32
// V512-LABEL: func.func @dot_tiles_f32
// V512: vector.load %arg1[{{.*}}] : memref<6x32xf32>, vector<16xf32>
// V512: vector.reduction <add>, {{.*}} : vector<16xf32> into f32
// V512-LABEL: func.func @tied_dot_tiles_again
// V512: vector.reduction <add>, {{.*}} : vector<4xf64> into f64
func.func @dot_tiles_f32(%a: memref<3x32xf32>, %w: memref<6x32xf32>, %c: memref<3x6xf32>) {
  linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                 affine_map<(i, j, k) -> (i, j)>]
    ins(%a, %w : memref<3x32xf32>, memref<6x32xf32>) outs(%c : memref<3x6xf32>)
  return
}
func.func @tied_dot_tiles_again(%a: memref<3x16xf64>, %w: memref<6x16xf32>, %c: memref<3x6xf64>) {
  linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                 affine_map<(i, j, k) -> (i, j)>]
    ins(%a, %w : memref<3x16xf64>, memref<6x16xf32>) outs(%c : memref<3x6xf64>)
  return
}

// Sizes the wider vectors do not divide keep 256-bit ones: N = 48 columns
// (16 lanes x 2 vectors do not divide it), K = 24 (16 lanes do not).
// V512-LABEL: func.func @narrow_sizes
// V512: vector.load %arg1[{{.*}}] : memref<64x48xf32>, vector<8xf32>
// V512: vector.reduction <add>, {{.*}} : vector<8xf32> into f32
func.func @narrow_sizes(%a: memref<4x64xf64>, %b: memref<64x48xf32>, %c: memref<4x48xf64>,
                        %x: memref<3x24xf32>, %w: memref<6x24xf32>, %y: memref<3x6xf32>) {
  linalg.matmul ins(%a, %b : memref<4x64xf64>, memref<64x48xf32>) outs(%c : memref<4x48xf64>)
  linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                 affine_map<(i, j, k) -> (i, j)>]
    ins(%x, %w : memref<3x24xf32>, memref<6x24xf32>) outs(%y : memref<3x6xf32>)
  return
}

// The transposed copy as both operands (x.T @ x.T of a (1, 1) x): the copy
// stays, since the rows read it too (folding it away left the rows reading
// an erased buffer: a crash).
// CHECK-LABEL: func.func @gemv_transposed_copy_twice
// CHECK: memref.alloc
// CHECK: linalg.transpose
func.func @gemv_transposed_copy_twice(%w: memref<1x1xf32>, %c: memref<1x1xf32>) {
  %t = memref.alloc() : memref<1x1xf32>
  linalg.transpose ins(%w : memref<1x1xf32>) outs(%t : memref<1x1xf32>) permutation = [1, 0]
  linalg.matmul ins(%t, %t : memref<1x1xf32>, memref<1x1xf32>) outs(%c : memref<1x1xf32>)
  memref.dealloc %t : memref<1x1xf32>
  return
}
