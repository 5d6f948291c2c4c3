// After bufferization: products with few rows (decoding's one row per step)
// that BLAS did not take -- typically float64 rows against float32 weights,
// read without converting the weights -- become loops ordered for streaming
// the weights once, column blocks in an scf.parallel (threads, where enabled).
//
//   C[i, j] += A[i, k] * B[k, j]   for j-blocks (parallel) { for i { for k { for j in block } } }
//   C[i, j] += A[i, k] * B[j, k]   for j (parallel) { for i { acc over k (reassociable) } }
#include "pipeline/Pipeline.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>

namespace tinymlir::detail {
namespace {

using namespace mlir;

constexpr int64_t kMaxRows = 4;
constexpr int64_t kColumnBlock = 128;

Value loadAs(OpBuilder &b, Location loc, Value memref, ValueRange indices, Type type) {
  Value v = memref::LoadOp::create(b, loc, memref, indices);
  if (v.getType() == type)
    return v;
  if (type.getIntOrFloatBitWidth() > v.getType().getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, type, v);
  return arith::TruncFOp::create(b, loc, type, v);
}

void lowerProduct(linalg::MatmulOp op, bool transposedB) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value A = op.getDpsInputs()[0], B = op.getDpsInputs()[1], C = op.getDpsInits()[0];
  auto tc = cast<MemRefType>(C.getType());
  Type acc = tc.getElementType();
  int64_t M = tc.getDimSize(0), N = tc.getDimSize(1);
  int64_t K = cast<MemRefType>(A.getType()).getDimSize(1);
  auto index = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  Value zero = index(b, 0), one = index(b, 1);
  auto reassoc = arith::FastMathFlags::reassoc;

  if (!transposedB) {
    int64_t block = N % kColumnBlock == 0 ? kColumnBlock : N;
    scf::ParallelOp::create(
        b, loc, ValueRange{zero}, ValueRange{index(b, N)}, ValueRange{index(b, block)},
        [&](OpBuilder &b, Location loc, ValueRange j0) {
          Value jEnd = arith::AddIOp::create(b, loc, j0[0], index(b, block));
          scf::ForOp::create(b, loc, index(b, 0), index(b, M), index(b, 1), ValueRange{},
                             [&](OpBuilder &b, Location loc, Value i, ValueRange) {
            scf::ForOp::create(b, loc, index(b, 0), index(b, K), index(b, 1), ValueRange{},
                               [&](OpBuilder &b, Location loc, Value k, ValueRange) {
              Value a = loadAs(b, loc, A, {i, k}, acc);
              scf::ForOp::create(b, loc, j0[0], jEnd, index(b, 1), ValueRange{},
                                 [&](OpBuilder &b, Location loc, Value j, ValueRange) {
                Value w = loadAs(b, loc, B, {k, j}, acc);
                Value c = memref::LoadOp::create(b, loc, C, ValueRange{i, j});
                Value p = arith::MulFOp::create(b, loc, a, w);
                memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, c, p), C,
                                        ValueRange{i, j});
                scf::YieldOp::create(b, loc);
              });
              scf::YieldOp::create(b, loc);
            });
            scf::YieldOp::create(b, loc);
          });
        });
  } else {
    scf::ParallelOp::create(
        b, loc, ValueRange{zero}, ValueRange{index(b, N)}, ValueRange{one},
        [&](OpBuilder &b, Location loc, ValueRange j) {
          scf::ForOp::create(b, loc, index(b, 0), index(b, M), index(b, 1), ValueRange{},
                             [&](OpBuilder &b, Location loc, Value i, ValueRange) {
            Value init = memref::LoadOp::create(b, loc, C, ValueRange{i, j[0]});
            auto sum = scf::ForOp::create(
                b, loc, index(b, 0), index(b, K), index(b, 1), ValueRange{init},
                [&](OpBuilder &b, Location loc, Value k, ValueRange carried) {
                  Value a = loadAs(b, loc, A, {i, k}, acc);
                  Value w = loadAs(b, loc, B, {j[0], k}, acc);
                  Value p = arith::MulFOp::create(b, loc, a, w);
                  scf::YieldOp::create(
                      b, loc, Value(arith::AddFOp::create(b, loc, carried[0], p, reassoc)));
                });
            memref::StoreOp::create(b, loc, sum.getResult(0), C, ValueRange{i, j[0]});
            scf::YieldOp::create(b, loc);
          });
        });
  }
  op->erase();
}

} // namespace

int lowerSmallProducts(ModuleOp module) {
  SmallVector<std::pair<linalg::MatmulOp, bool>> products;
  module.walk([&](linalg::MatmulOp op) {
    if (!op.hasPureBufferSemantics())
      return;
    auto tc = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
    if (!tc || !tc.hasStaticShape() || tc.getDimSize(0) > kMaxRows ||
        !isa<FloatType>(tc.getElementType()))
      return;
    MLIRContext *ctx = op->getContext();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (maps == linalg::MatmulOp::getDefaultIndexingMaps(ctx)) {
      products.push_back({op, false});
      return;
    }
    AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx),
               k = getAffineDimExpr(2, ctx);
    SmallVector<AffineMap> transposedB{AffineMap::get(3, 0, {i, k}, ctx),
                                       AffineMap::get(3, 0, {j, k}, ctx),
                                       AffineMap::get(3, 0, {i, j}, ctx)};
    if (maps == transposedB)
      products.push_back({op, true});
  });
  for (auto [op, transposed] : products)
    lowerProduct(op, transposed);
  return static_cast<int>(products.size());
}

} // namespace tinymlir::detail
