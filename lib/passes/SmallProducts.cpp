// After bufferization, before the BLAS rewrite: matrix-vector products (one
// row, as in decoding) and float64 rows against float32 weights with few rows
// (the weights read directly, not converted) become loops that stream the
// weights once, in column blocks or batches run by an scf.parallel (OpenMP).
// GEMV-shaped products are memory-bound: BLAS gains nothing there, and keeping
// them in generated code keeps its thread pool out of the decoding loop.
//
//   C[i, j] += A[i, k] * B[k, j]   for j-blocks (parallel) { for i { for k { for j in block } } }
//   C[i, j] += A[i, k] * B[j, k]   for 4 js (parallel) { for 2 is { 8 dots in vector lanes over k }
//   }
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Vector/IR/VectorOps.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_SMALLPRODUCTSPASS
#define GEN_PASS_DEF_SMALLPRODUCTSPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

constexpr int64_t kColumnBlocks = 4;
/// blas-gemv: float64 x @ B with B of at least this many elements goes to
/// BLAS, and so does a float32 one beside a product B @ v (the two become one
/// pass over B there: tinymlir-blas-rewrite). Measured on 2 cores with NumPy's
/// OpenBLAS: B (1000, 1000), these loops 0.150 ms and gemv 0.154; (2800, 2800)
/// 1.11 and 0.99; B (200, 200) in covariance's loop of 200 products: 7.7 ms a
/// call here, 12.0 on BLAS.
constexpr int64_t kBlasGemvElements = int64_t{1} << 20;
constexpr int64_t kRowChunks = 4;
/// Rows of B per pass over a partial row (measured: 8 streams beat 4 and 16).
constexpr int64_t kRowsPerPass = 8;
/// The one-row loop over a pass's columns goes a cache line of float32 (16
/// columns) at a time and prefetches each of its rows kLineAhead lines ahead,
/// and row blocks prefetch as far ahead in their first block of rows: float64
/// products of float32 weights (the reference's decoding) leave the
/// hardware's prefetcher behind (GPT-2 124M, one row: layers 14.9 -> 12.9 ms
/// a token, 38 -> 41 tokens/s; 8 rows: the block's 28.9 -> 27.4 ms; float32
/// unchanged; 16 lines ahead is slower).
constexpr int64_t kLine = 16, kLineAhead = 8;

/// scf.for from lower to upper by step, with a body that yields nothing.
void forLoop(OpBuilder &b, Location loc, Value lower, Value upper, int64_t step,
             llvm::function_ref<void(OpBuilder &, Location, Value)> body) {
  Value s = arith::ConstantIndexOp::create(b, loc, step);
  scf::ForOp::create(b, loc, lower, upper, s, ValueRange{},
                     [&](OpBuilder &b, Location loc, Value iv, ValueRange) {
                       body(b, loc, iv);
                       scf::YieldOp::create(b, loc);
                     });
}

/// `v` (a scalar or a vector) converted to element type `type`.
Value convertTo(OpBuilder &b, Location loc, Value v, Type type) {
  Type from = getElementTypeOrSelf(v.getType());
  if (from == type)
    return v;
  Type to = type;
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    to = VectorType::get(vt.getShape(), type);
  if (type.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

Value loadAs(OpBuilder &b, Location loc, Value memref, ValueRange indices, Type type) {
  return convertTo(b, loc, memref::LoadOp::create(b, loc, memref, indices), type);
}

/// a * w + c, one rounding where the CPU has fused multiply-add (every x86-64
/// CPU with AVX2): half the floating-point instructions of a multiply and an
/// add, which bound several rows' products (batched decoding) more than
/// memory does. The same op (llvm.intr.fmuladd) in the one-row loops, the
/// row blocks and the dot tiles, scalar or vector, so that a row's numbers
/// stay those it gets alone. (The strided dot products keep a multiply and a
/// reassociable add, which LLVM vectorizes as a reduction; they serve any
/// number of rows the same way.)
Value multiplyAdd(OpBuilder &b, Location loc, Value a, Value w, Value c) {
  return LLVM::FMulAddOp::create(b, loc, a, w, c);
}

/// Prefetches B[row, column] into L1 for reading, a hint that loads nothing.
void prefetch(OpBuilder &b, Location loc, Value B, Value row, Value column) {
  memref::PrefetchOp::create(b, loc, B, ValueRange{row, column}, /*isWrite=*/false,
                             /*localityHint=*/3, /*isDataCache=*/true);
}

/// at + distance, at most last: an index ahead that stays inside the memref.
Value ahead(OpBuilder &b, Location loc, Value at, int64_t distance, Value last) {
  return arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, at, arith::ConstantIndexOp::create(b, loc, distance)),
      last);
}

/// Register blocks of rowBlocksPass: kRowBlock rows x kVectors vectors of
/// `lanes` (vector-bits / 32) elements.
constexpr int64_t kVectors = 2, kRowBlock = 4;
/// vector.load needs the memref's last dimension contiguous.
bool unitStride(Value memref) { return cast<MemRefType>(memref.getType()).isLastDimUnitStride(); }

/// One pass of the rows `ks` of weights B (K, N), N % (lanes * kVectors) ==
/// 0, for all M rows of A, into partial[chunk] (M, N): for every lanes *
/// kVectors columns and every block of kRowBlock rows, the partial sums are
/// loaded into registers, get a[i, k] * w[k, j] added for each k of the pass
/// in order, and are stored back. The weights stream row by row (contiguous,
/// as in the one-row loop) and each is loaded once per block of rows, from
/// L1 after the first. The additions are the one-row loop's, in its order, so
/// every row's numbers are those it gets alone.
void rowBlocksPass(OpBuilder &b, Location loc, Value A, Value B, Value partial, Value chunk,
                   ArrayRef<Value> ks, int64_t M, int64_t N, Type acc, int64_t lanes) {
  auto index = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  auto wide = VectorType::get({lanes}, acc);
  auto narrow = VectorType::get({lanes}, cast<MemRefType>(B.getType()).getElementType());
  Value lastColumn = index(b, N - 1);
  forLoop(
      b, loc, index(b, 0), index(b, N), lanes * kVectors,
      [&](OpBuilder &b, Location loc, Value j0) {
        SmallVector<Value> js{j0};
        for (int64_t v = 1; v < kVectors; ++v)
          js.push_back(arith::AddIOp::create(b, loc, j0, index(b, v * lanes)));
        for (int64_t i0 = 0; i0 < M; i0 += kRowBlock) {
          const int64_t rows = std::min(kRowBlock, M - i0);
          SmallVector<Value> sums;
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t v = 0; v < kVectors; ++v)
              sums.push_back(vector::LoadOp::create(b, loc, wide, partial,
                                                    ValueRange{chunk, index(b, i0 + r), js[v]}));
          for (Value k : ks) {
            SmallVector<Value> ws;
            if (i0 == 0)
              for (int64_t v = 0; v < kVectors; ++v)
                prefetch(b, loc, B, k, ahead(b, loc, js[v], kLineAhead * kLine, lastColumn));
            for (int64_t v = 0; v < kVectors; ++v)
              ws.push_back(convertTo(
                  b, loc, vector::LoadOp::create(b, loc, narrow, B, ValueRange{k, js[v]}), acc));
            for (int64_t r = 0; r < rows; ++r) {
              Value a = vector::BroadcastOp::create(b, loc, wide,
                                                    loadAs(b, loc, A, {index(b, i0 + r), k}, acc));
              for (int64_t v = 0; v < kVectors; ++v)
                sums[r * kVectors + v] = multiplyAdd(b, loc, a, ws[v], sums[r * kVectors + v]);
            }
          }
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t v = 0; v < kVectors; ++v)
              vector::StoreOp::create(b, loc, sums[r * kVectors + v], partial,
                                      ValueRange{chunk, index(b, i0 + r), js[v]});
        }
      });
}

/// Tiles of dotTile: weight rows per tile, rows of A per register block
/// (float64 on AVX-512's 32 registers: 4 rows, each weight vector widened
/// once per 4 rows; GPT-2 124M's head, 8 rows: 14.6 -> 13.5 ms). There, 5 to
/// 8 rows make one block with 2 weight rows a tile (at most 16 accumulators):
/// each weight vector comes from memory once and serves every row, instead of
/// a second block reading it from L1 while memory idles (with the prefetch:
/// 10.7 -> 9.8 ms).
constexpr int64_t kWeightRows = 4, kDotRows = 2, kWideDotRows = 4, kAllRowsWeightRows = 2;
/// Lanes of a dot product's accumulators over K: float32 in vector-bits
/// (GPT-2 124M's head, 8 rows on a Xeon with AVX-512: 9.7 -> 8.7 ms in 512
/// bits) where K is a multiple of them, else 256 bits; float64 in 256 bits
/// (8 rows on an AMD EPYC: 8 lanes 25% slower than 4).
int64_t dotLanes(Type acc, int64_t vectorBits, int64_t K) {
  const int64_t bits = acc.isF32() && K % (vectorBits / 32) == 0 ? vectorBits : 256;
  return bits / acc.getIntOrFloatBitWidth();
}

/// C[i, j] += A[i, :] . B[j, :] for j in [j0, j0 + weightRows) and every row i
/// (K % lanes == 0): each dot product accumulates its lanes over k in
/// order, then adds them to C. Register blocks of dotRows rows x
/// weightRows dot products load each vector of A and B once per block, and
/// the weight rows stay in L1 for every block. A dot product's additions do
/// not depend on the tile, so every row's numbers are those it gets alone.
/// Each step prefetches the next tile's weights at the same k (the last row
/// at the end): the hardware's prefetcher alone leaves memory idle while a
/// tile computes (GPT-2 124M's head, float64: 1 row 8.5 -> 6.5 ms, 8 rows
/// 14.0 -> 10.7 ms; float32 unchanged).
void dotTile(OpBuilder &b, Location loc, Value A, Value B, Value C, Value j0, int64_t weightRows,
             int64_t M, int64_t K, Type acc, int64_t lanes, int64_t dotRows) {
  auto index = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  auto wide = VectorType::get({lanes}, acc);
  auto vectorOf = [&](Value m) {
    return VectorType::get({lanes}, cast<MemRefType>(m.getType()).getElementType());
  };
  SmallVector<Value> js{j0};
  for (int64_t t = 1; t < weightRows; ++t)
    js.push_back(arith::AddIOp::create(b, loc, j0, index(b, t)));
  Value zero =
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(wide, b.getFloatAttr(acc, 0.0)));
  Value lastRow = arith::SubIOp::create(b, loc, memref::DimOp::create(b, loc, B, 0), index(b, 1));
  for (int64_t i0 = 0; i0 < M; i0 += dotRows) {
    const int64_t rows = std::min(dotRows, M - i0);
    SmallVector<Value> init(rows * weightRows, zero);
    auto loop = scf::ForOp::create(
        b, loc, index(b, 0), index(b, K), index(b, lanes), init,
        [&](OpBuilder &b, Location loc, Value k, ValueRange sums) {
          SmallVector<Value> ws, next(sums.begin(), sums.end());
          for (Value j : js)
            prefetch(b, loc, B, ahead(b, loc, j, weightRows, lastRow), k);
          for (Value j : js)
            ws.push_back(convertTo(
                b, loc, vector::LoadOp::create(b, loc, vectorOf(B), B, ValueRange{j, k}), acc));
          for (int64_t r = 0; r < rows; ++r) {
            Value a = convertTo(
                b, loc,
                vector::LoadOp::create(b, loc, vectorOf(A), A, ValueRange{index(b, i0 + r), k}),
                acc);
            for (int64_t t = 0; t < weightRows; ++t)
              next[r * weightRows + t] = multiplyAdd(b, loc, a, ws[t], next[r * weightRows + t]);
          }
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t t = 0; t < weightRows; ++t) {
        SmallVector<Value> ij{index(b, i0 + r), js[t]};
        Value c = memref::LoadOp::create(b, loc, C, ij);
        Value sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                                loop.getResult(r * weightRows + t), c,
                                                arith::FastMathFlags::reassoc);
        memref::StoreOp::create(b, loc, sum, C, ij);
      }
  }
}

/// Lowers C[(b,) i, j] += A[(b,) i, k] * B[(b,) k, j] (or B[(b,) j, k] when
/// transposedB); `batched` adds the leading batch dimension, run in parallel.
/// Register blocks use vectors of vectorBits (rows of several rows: 32-bit
/// lanes; dot products: dotLanes), or of 256 bits where the size is not a
/// multiple of the wider ones.
void lowerProduct(linalg::LinalgOp op, bool transposedB, int64_t vectorBits) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value A = op.getDpsInputs()[0], B = op.getDpsInputs()[1], C = op.getDpsInits()[0];
  auto tc = cast<MemRefType>(C.getType());
  const bool batched = tc.getRank() == 3;
  const int64_t r = batched ? 1 : 0; // first matrix dimension
  Type acc = tc.getElementType();
  int64_t batch = batched ? tc.getDimSize(0) : 1;
  int64_t M = tc.getDimSize(r), N = tc.getDimSize(r + 1);
  int64_t K = cast<MemRefType>(A.getType()).getDimSize(r + 1);
  auto index = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  auto at = [&](Value bIndex, Value x, Value y) -> SmallVector<Value> {
    if (batched)
      return {bIndex, x, y};
    return {x, y};
  };
  auto reassoc = arith::FastMathFlags::reassoc;

  if (!transposedB && !batched && K >= kRowChunks * kRowsPerPass) {
    // Weights (K, N): each chunk of rows is streamed front to back by one
    // thread into its own partial sums, which are then added in chunk order.
    // Chunks are whole passes of kRowsPerPass rows; the last takes what is
    // left, and rows past its last whole pass are added one at a time (K of
    // 2,000 made one thread stream every row before: NumPy's column products
    // of a (2000, 200) array, data[:, i] @ data[:, i:], ran 1.5x NumPy's time).
    const int64_t rowsPerChunk =
        (K + kRowChunks * kRowsPerPass - 1) / (kRowChunks * kRowsPerPass) * kRowsPerPass;
    auto partialType = MemRefType::get({kRowChunks, M, N}, acc);
    Value partial = memref::AllocOp::create(b, loc, partialType);
    Value zeroAcc = arith::ConstantOp::create(b, loc, b.getFloatAttr(acc, 0.0));
    scf::ParallelOp::create(
        b, loc, ValueRange{index(b, 0)}, ValueRange{index(b, kRowChunks)}, ValueRange{index(b, 1)},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value chunk = ivs[0];
          Value k0 = arith::MinSIOp::create(
              b, loc, arith::MulIOp::create(b, loc, chunk, index(b, rowsPerChunk)), index(b, K));
          Value kEnd = arith::MinSIOp::create(
              b, loc, arith::AddIOp::create(b, loc, k0, index(b, rowsPerChunk)), index(b, K));
          // the end of the chunk's whole passes
          Value kPasses =
              K % kRowsPerPass == 0
                  ? kEnd
                  : arith::SubIOp::create(
                        b, loc, kEnd,
                        arith::RemSIOp::create(b, loc, arith::SubIOp::create(b, loc, kEnd, k0),
                                               index(b, kRowsPerPass)));
          forLoop(b, loc, index(b, 0), index(b, M), 1, [&](OpBuilder &b, Location loc, Value i) {
            forLoop(b, loc, index(b, 0), index(b, N), 1, [&](OpBuilder &b, Location loc, Value j) {
              memref::StoreOp::create(b, loc, zeroAcc, partial, ValueRange{chunk, i, j});
            });
          });
          // kRowsPerPass rows of B per pass, used by every row of A while they are in
          // cache; each partial row is loaded and stored once per pass. The
          // additions stay in k order.
          forLoop(b, loc, k0, kPasses, kRowsPerPass, [&](OpBuilder &b, Location loc, Value k) {
            SmallVector<Value> ks;
            for (int64_t u = 0; u < kRowsPerPass; ++u)
              ks.push_back(u == 0 ? k : Value(arith::AddIOp::create(b, loc, k, index(b, u))));
            const int64_t lanes = N % (vectorBits / 32 * kVectors) == 0 ? vectorBits / 32 : 8;
            if (M > 1 && N % (lanes * kVectors) == 0 && unitStride(B)) {
              rowBlocksPass(b, loc, A, B, partial, chunk, ks, M, N, acc, lanes);
              return;
            }
            forLoop(b, loc, index(b, 0), index(b, M), 1, [&](OpBuilder &b, Location loc, Value i) {
              SmallVector<Value> as;
              for (int64_t u = 0; u < kRowsPerPass; ++u)
                as.push_back(loadAs(b, loc, A, {i, ks[u]}, acc));
              auto columns = [&](OpBuilder &b, Location loc, Value from, Value to) {
                forLoop(b, loc, from, to, 1, [&](OpBuilder &b, Location loc, Value j) {
                  Value c = memref::LoadOp::create(b, loc, partial, ValueRange{chunk, i, j});
                  for (int64_t u = 0; u < kRowsPerPass; ++u) {
                    Value w = loadAs(b, loc, B, {ks[u], j}, acc);
                    c = multiplyAdd(b, loc, as[u], w, c);
                  }
                  memref::StoreOp::create(b, loc, c, partial, ValueRange{chunk, i, j});
                });
              };
              if (N % kLine != 0) {
                columns(b, loc, index(b, 0), index(b, N));
                return;
              }
              Value lastColumn = index(b, N - 1);
              forLoop(b, loc, index(b, 0), index(b, N), kLine,
                      [&](OpBuilder &b, Location loc, Value j0) {
                        Value column = ahead(b, loc, j0, kLineAhead * kLine, lastColumn);
                        for (int64_t u = 0; u < kRowsPerPass; ++u)
                          prefetch(b, loc, B, ks[u], column);
                        columns(b, loc, j0, arith::AddIOp::create(b, loc, j0, index(b, kLine)));
                      });
            });
          });
          // The rows after the chunk's whole passes (the last chunk's K %
          // kRowsPerPass), one at a time, in k order.
          if (K % kRowsPerPass == 0)
            return;
          forLoop(b, loc, kPasses, kEnd, 1, [&](OpBuilder &b, Location loc, Value k) {
            forLoop(b, loc, index(b, 0), index(b, M), 1, [&](OpBuilder &b, Location loc, Value i) {
              Value a = loadAs(b, loc, A, {i, k}, acc);
              forLoop(b, loc, index(b, 0), index(b, N), 1,
                      [&](OpBuilder &b, Location loc, Value j) {
                        Value c = memref::LoadOp::create(b, loc, partial, ValueRange{chunk, i, j});
                        c = multiplyAdd(b, loc, a, loadAs(b, loc, B, {k, j}, acc), c);
                        memref::StoreOp::create(b, loc, c, partial, ValueRange{chunk, i, j});
                      });
            });
          });
        });
    forLoop(b, loc, index(b, 0), index(b, M), 1, [&](OpBuilder &b, Location loc, Value i) {
      forLoop(b, loc, index(b, 0), index(b, N), 1, [&](OpBuilder &b, Location loc, Value j) {
        Value c = memref::LoadOp::create(b, loc, C, ValueRange{i, j});
        for (int64_t chunk = 0; chunk < kRowChunks; ++chunk)
          c = arith::AddFOp::create(
              b, loc, c,
              memref::LoadOp::create(b, loc, partial, ValueRange{index(b, chunk), i, j}));
        memref::StoreOp::create(b, loc, c, C, ValueRange{i, j});
      });
    });
    memref::DeallocOp::create(b, loc, partial);
  } else if (!transposedB) {
    // Column blocks: each streams its span of every row of B once.
    int64_t block = N % kColumnBlocks == 0 && N / kColumnBlocks >= 64 ? N / kColumnBlocks : N;
    // K unrolled by 4: C is loaded and stored once per 4 rows of B; the
    // additions stay in k order, so the result equals the plain loop's.
    int64_t unroll = K % 4 == 0 ? 4 : 1;
    scf::ParallelOp::create(
        b, loc, ValueRange{index(b, 0), index(b, 0)}, ValueRange{index(b, batch), index(b, N)},
        ValueRange{index(b, 1), index(b, block)}, [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value bi = ivs[0], j0 = ivs[1];
          Value jEnd = arith::AddIOp::create(b, loc, j0, index(b, block));
          scf::ForOp::create(
              b, loc, index(b, 0), index(b, M), index(b, 1), ValueRange{},
              [&](OpBuilder &b, Location loc, Value i, ValueRange) {
                scf::ForOp::create(
                    b, loc, index(b, 0), index(b, K), index(b, unroll), ValueRange{},
                    [&](OpBuilder &b, Location loc, Value k, ValueRange) {
                      SmallVector<Value> as, ks;
                      for (int64_t u = 0; u < unroll; ++u) {
                        Value ku =
                            u == 0 ? k : Value(arith::AddIOp::create(b, loc, k, index(b, u)));
                        ks.push_back(ku);
                        as.push_back(loadAs(b, loc, A, at(bi, i, ku), acc));
                      }
                      scf::ForOp::create(b, loc, j0, jEnd, index(b, 1), ValueRange{},
                                         [&](OpBuilder &b, Location loc, Value j, ValueRange) {
                                           Value c =
                                               memref::LoadOp::create(b, loc, C, at(bi, i, j));
                                           for (int64_t u = 0; u < unroll; ++u) {
                                             Value w = loadAs(b, loc, B, at(bi, ks[u], j), acc);
                                             c = multiplyAdd(b, loc, as[u], w, c);
                                           }
                                           memref::StoreOp::create(b, loc, c, C, at(bi, i, j));
                                           scf::YieldOp::create(b, loc);
                                         });
                      scf::YieldOp::create(b, loc);
                    });
                scf::YieldOp::create(b, loc);
              });
        });
  } else if (const int64_t dot = dotLanes(acc, vectorBits, K);
             !batched && K % dot == 0 && unitStride(A) && unitStride(B)) {
    // Weight rows in tiles, each used by every row while in L1.
    const bool wide = acc.isF64() && vectorBits == 512;
    const bool allRows = wide && M > kWideDotRows && M <= 2 * kWideDotRows;
    const int64_t weightRows = allRows ? kAllRowsWeightRows : kWeightRows;
    const int64_t dotRows = allRows ? M : wide ? kWideDotRows : kDotRows;
    const int64_t tiled = N / weightRows * weightRows;
    auto tiles = [&](int64_t from, int64_t to, int64_t step) {
      if (from < to)
        scf::ParallelOp::create(b, loc, ValueRange{index(b, from)}, ValueRange{index(b, to)},
                                ValueRange{index(b, step)},
                                [&](OpBuilder &b, Location loc, ValueRange ivs) {
                                  dotTile(b, loc, A, B, C, ivs[0], step, M, K, acc, dot, dotRows);
                                });
    };
    tiles(0, tiled, weightRows);
    tiles(tiled, N, 1);
  } else {
    scf::ParallelOp::create(
        b, loc, ValueRange{index(b, 0), index(b, 0)}, ValueRange{index(b, batch), index(b, N)},
        ValueRange{index(b, 1), index(b, 1)}, [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value bi = ivs[0], j = ivs[1];
          scf::ForOp::create(
              b, loc, index(b, 0), index(b, M), index(b, 1), ValueRange{},
              [&](OpBuilder &b, Location loc, Value i, ValueRange) {
                Value init = memref::LoadOp::create(b, loc, C, at(bi, i, j));
                auto sum = scf::ForOp::create(
                    b, loc, index(b, 0), index(b, K), index(b, 1), ValueRange{init},
                    [&](OpBuilder &b, Location loc, Value k, ValueRange carried) {
                      Value a = loadAs(b, loc, A, at(bi, i, k), acc);
                      Value w = loadAs(b, loc, B, at(bi, j, k), acc);
                      Value p = arith::MulFOp::create(b, loc, a, w);
                      scf::YieldOp::create(
                          b, loc, Value(arith::AddFOp::create(b, loc, carried[0], p, reassoc)));
                    });
                memref::StoreOp::create(b, loc, sum.getResult(0), C, at(bi, i, j));
                scf::YieldOp::create(b, loc);
              });
        });
  }
  op->erase();
}

/// Widens the float32 operand B of a float64 product with more than max-rows
/// rows into a float64 buffer (transposed back to (K, N) if it was read
/// transposed): converted once, the product is an ordinary one for BLAS.
void widenWeights(linalg::LinalgOp op, bool transposed) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value a = op.getDpsInputs()[0], w = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  auto tw = cast<MemRefType>(w.getType());
  Type wide = cast<MemRefType>(c.getType()).getElementType();
  int64_t k = tw.getDimSize(transposed ? 1 : 0), n = tw.getDimSize(transposed ? 0 : 1);
  Value converted = memref::AllocOp::create(b, loc, MemRefType::get({k, n}, wide));
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
  AffineMap read =
      transposed ? AffineMap::get(2, 0, {d1, d0}, ctx) : AffineMap::get(2, 0, {d0, d1}, ctx);
  linalg::GenericOp::create(
      b, loc, ValueRange{w}, ValueRange{converted},
      ArrayRef<AffineMap>{read, AffineMap::getMultiDimIdentityMap(2, ctx)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel, utils::IteratorType::parallel},
      [&](OpBuilder &ib, Location l, ValueRange args) {
        linalg::YieldOp::create(ib, l, ValueRange{arith::ExtFOp::create(ib, l, wide, args[0])});
      });
  linalg::MatmulOp::create(b, loc, ValueRange{a, converted}, ValueRange{c});
  memref::DeallocOp::create(b, loc, converted);
  op->erase();
}

/// The indexing maps of C[i, j] += A[i, k] * B[j, k].
SmallVector<AffineMap> transposedBMaps(MLIRContext *ctx) {
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  return {AffineMap::get(3, 0, {i, k}, ctx), AffineMap::get(3, 0, {j, k}, ctx),
          AffineMap::get(3, 0, {i, j}, ctx)};
}

/// A few-row product whose B is a linalg.transpose ([1, 0]) of W into a
/// buffer only the product reads (x @ w.T, as GPT-2's head): the product reads
/// W through transposed indexing maps instead, and the copy goes, so that the
/// weights are streamed once, not copied first.
void foldTransposedWeights(linalg::MatmulOp op) {
  MLIRContext *ctx = op->getContext();
  auto alloc = op.getDpsInputs()[1].getDefiningOp<memref::AllocOp>();
  if (!alloc || op.getIndexingMapsArray() != linalg::MatmulOp::getDefaultIndexingMaps(ctx) ||
      op.getDpsInputs()[0] == alloc.getResult()) // x.T @ x.T of a (1, 1) x: both operands
    return;
  linalg::TransposeOp transpose;
  SmallVector<Operation *> deallocs;
  for (Operation *user : alloc->getUsers()) {
    if (auto t = dyn_cast<linalg::TransposeOp>(user); t && !transpose && t.getInit() == alloc)
      transpose = t;
    else if (isa<memref::DeallocOp>(user))
      deallocs.push_back(user);
    else if (user != op.getOperation())
      return;
  }
  if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0} ||
      transpose->getBlock() != op->getBlock() || !transpose->isBeforeInBlock(op))
    return;
  op->setOperand(1, transpose.getInput());
  op.setIndexingMapsAttr(OpBuilder(ctx).getAffineMapArrayAttr(transposedBMaps(ctx)));
  transpose->erase();
  for (Operation *d : deallocs)
    d->erase();
  alloc->erase();
}

/// Whether the one-row product `op` (x @ B) has a partner in its block: a
/// one-column product B @ v of the same matrix, with which
/// tinymlir-blas-rewrite makes one pass over B.
bool hasColumnPartner(linalg::LinalgOp op) {
  Value b = op.getDpsInputs()[1];
  if (cast<MemRefType>(op.getDpsInits()[0].getType()).getDimSize(0) != 1)
    return false;
  return llvm::any_of(b.getUsers(), [&](Operation *user) {
    auto other = dyn_cast<linalg::MatmulOp>(user);
    return other && other != op.getOperation() && other->getBlock() == op->getBlock() &&
           other.getDpsInputs()[0] == b &&
           cast<MemRefType>(other.getDpsInputs()[1].getType()).getDimSize(1) == 1;
  });
}

/// tinymlir-small-products: products with at most stream-rows rows (1:
/// matrix-vector products; more: decoding several sequences together), and
/// mixed-precision products (float64 rows, float32 weights) with at most
/// max-rows rows (full-prefix decoding's rows), become loops that stream the
/// weights once -- each row computed as a one-row product is;
/// mixed-precision products with more rows convert their weights once, then
/// are ordinary products (BLAS).
struct SmallProductsPass : impl::SmallProductsPassBase<SmallProductsPass> {
  using Base::Base;
  void runOnOperation() override;
};

void SmallProductsPass::runOnOperation() {
  SmallVector<linalg::MatmulOp> gemvs;
  getOperation().walk([&](linalg::MatmulOp op) {
    auto tc = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
    if (op.hasPureBufferSemantics() && tc && tc.hasStaticShape() &&
        tc.getDimSize(0) <= std::max<int64_t>(streamRows, 1))
      gemvs.push_back(op);
  });
  for (linalg::MatmulOp op : gemvs)
    foldTransposedWeights(op);
  SmallVector<std::pair<linalg::LinalgOp, bool>> products, widened;
  getOperation().walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) ||
        !op.hasPureBufferSemantics())
      return;
    auto tc = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
    if (!tc || !tc.hasStaticShape() || !isa<FloatType>(tc.getElementType()))
      return;
    const bool batched = tc.getRank() == 3;
    const int64_t rows = tc.getDimSize(batched ? 1 : 0);
    bool mixed = false;
    for (Value v : op->getOperands())
      mixed = mixed || cast<MemRefType>(v.getType()).getElementType() != tc.getElementType();
    // Matrix-vector products, and mixed precision (float32 weights) with few
    // rows; mixed precision with more rows is widened.
    const int64_t streamed = std::max<int64_t>(streamRows, 1);
    const int64_t limit = mixed ? std::max<int64_t>(maxRows, streamed) : streamed;
    const bool widen = mixed && rows > limit;
    if (rows > limit && !widen)
      return;
    if (widen && (batched || cast<MemRefType>(op.getDpsInputs()[0].getType()).getElementType() !=
                                 tc.getElementType()))
      return; // only float64 rows against narrower weights are widened
    auto &list = widen ? widened : products;
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (batched) {
      if (maps == linalg::BatchMatmulOp::getDefaultIndexingMaps(ctx))
        list.push_back({op, false});
      return;
    }
    if (maps == linalg::MatmulOp::getDefaultIndexingMaps(ctx)) {
      if (blasGemv && !mixed && llvm::all_of(op->getOperands(), unitStride) &&
          cast<MemRefType>(op.getDpsInputs()[1].getType()).getNumElements() >= kBlasGemvElements &&
          (tc.getElementType().isF64() || hasColumnPartner(op)))
        return; // a large x @ B on BLAS's thread pool (tinymlir-blas-rewrite takes it)
      list.push_back({op, false});
      return;
    }
    if (maps == transposedBMaps(ctx))
      list.push_back({op, true});
  });
  for (auto [op, transposed] : products)
    lowerProduct(op, transposed, vectorBits == 512 ? 512 : 256);
  for (auto [op, transposed] : widened)
    widenWeights(op, transposed);
  lowered += products.size();
  widenedProducts += widened.size();
}

} // namespace
} // namespace tinymlir::detail
