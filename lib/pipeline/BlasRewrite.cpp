// After bufferization: linalg.matmul / linalg.batch_matmul on row-major
// memrefs become cblas_sgemm / cblas_dgemm calls (a batch becomes an scf.for
// over GEMMs). Pointers, offsets and leading dimensions come from each memref's
// strided metadata; beta = 1 because linalg accumulates into its output.
#include "pipeline/Pipeline.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>

namespace tinymlir::detail {
namespace {

using namespace mlir;

constexpr int kRowMajor = 101, kNoTrans = 111;

/// A memref operand of a GEMM, as base pointer + offset + row stride (+ batch stride).
struct Operand {
  Value aligned;     // index
  Value offset;      // index, in elements
  Value rowStride;   // index: the leading dimension
  Value batchStride; // index, rank 3 only
};

/// Row-major with unit inner stride, known statically.
bool isRowMajor(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty())
    return false;
  return strides.back() == 1;
}

class GemmBuilder {
public:
  GemmBuilder(ModuleOp module, Operation *at) : b_(at), loc_(at->getLoc()), module_(module) {}

  Operand operand(Value memref) {
    auto meta = memref::ExtractStridedMetadataOp::create(b_, loc_, memref);
    Operand o;
    o.aligned = memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, memref);
    o.offset = meta.getOffset();
    auto strides = meta.getStrides();
    size_t rank = strides.size();
    o.rowStride = strides[rank - 2];
    if (rank == 3)
      o.batchStride = strides[0];
    return o;
  }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b_, loc_, v); }

  /// !llvm.ptr to element (offset + batch * batchStride).
  Value pointer(OpBuilder &b, const Operand &o, Value batch, int64_t elementBytes) {
    Value elements = o.offset;
    if (batch)
      elements = arith::AddIOp::create(b, loc_, elements,
                                       arith::MulIOp::create(b, loc_, batch, o.batchStride));
    Value bytes = arith::MulIOp::create(b, loc_, elements,
                                        arith::ConstantIndexOp::create(b, loc_, elementBytes));
    Value address = arith::AddIOp::create(b, loc_, o.aligned, bytes);
    Value asInt = arith::IndexCastOp::create(b, loc_, b.getI64Type(), address);
    return LLVM::IntToPtrOp::create(b, loc_, LLVM::LLVMPointerType::get(b.getContext()), asInt);
  }

  Value i32(OpBuilder &b, Value indexValue) {
    return arith::IndexCastOp::create(b, loc_, b.getI32Type(), indexValue);
  }
  Value i32(OpBuilder &b, int64_t v) {
    return arith::ConstantIntOp::create(b, loc_, b.getI32Type(), v);
  }

  /// Leading dimension: the row stride, at least the row length (BLAS requires
  /// it even when there is a single row, whose stride is then arbitrary).
  Value leading(OpBuilder &b, Value rowStride, int64_t columns) {
    return i32(b, arith::MaxSIOp::create(b, loc_, rowStride,
                                         arith::ConstantIndexOp::create(b, loc_, columns)));
  }

  func::FuncOp declare(Type element) {
    const char *name = element.isF32() ? "cblas_sgemm" : "cblas_dgemm";
    if (auto f = module_.lookupSymbol<func::FuncOp>(name))
      return f;
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(module_.getBody());
    Type i32 = b_.getI32Type(), ptr = LLVM::LLVMPointerType::get(b_.getContext());
    auto type = b_.getFunctionType(
        {i32, i32, i32, i32, i32, i32, element, ptr, i32, ptr, i32, element, ptr, i32}, {});
    auto f = func::FuncOp::create(b_, loc_, name, type);
    f.setPrivate();
    return f;
  }

  /// C[MxN] += A[MxK] @ B[KxN], one GEMM call.
  void call(OpBuilder &b, Type element, int64_t m, int64_t n, int64_t k, const Operand &A,
            const Operand &B, const Operand &C, Value batch) {
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    Value one = arith::ConstantOp::create(b, loc_, b.getFloatAttr(element, 1.0));
    SmallVector<Value> args{i32(b, kRowMajor),      i32(b, kNoTrans),
                            i32(b, kNoTrans),       i32(b, m),
                            i32(b, n),              i32(b, k),
                            one,                    pointer(b, A, batch, bytes),
                            leading(b, A.rowStride, k), pointer(b, B, batch, bytes),
                            leading(b, B.rowStride, n), one,
                            pointer(b, C, batch, bytes), leading(b, C.rowStride, n)};
    func::CallOp::create(b, loc_, declare(element), args);
  }

  OpBuilder &builder() { return b_; }
  Location loc() const { return loc_; }

private:
  OpBuilder b_;
  Location loc_;
  ModuleOp module_;
};

bool supported(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return false;
  auto isDefault = [&] {
    // Named matmuls built by us carry default indexing maps (no transpose/broadcast).
    if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation()))
      return op.getIndexingMapsArray() == mm.getDefaultIndexingMaps(op->getContext());
    if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation()))
      return op.getIndexingMapsArray() == bmm.getDefaultIndexingMaps(op->getContext());
    return false;
  };
  Type element = cast<MemRefType>(op.getDpsInits()[0].getType()).getElementType();
  if (!element.isF32() && !element.isF64())
    return false;
  for (Value v : op->getOperands())
    if (!isRowMajor(v) || cast<MemRefType>(v.getType()).getElementType() != element ||
        !cast<MemRefType>(v.getType()).hasStaticShape())
      return false;
  return isDefault();
}

} // namespace

int rewriteMatmulsToBlas(ModuleOp module) {
  SmallVector<linalg::LinalgOp> products;
  module.walk([&](linalg::LinalgOp op) {
    if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) && supported(op))
      products.push_back(op);
  });
  for (linalg::LinalgOp op : products) {
    GemmBuilder g(module, op);
    Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1], c = op.getDpsInits()[0];
    auto ta = cast<MemRefType>(a.getType()), tb = cast<MemRefType>(bm.getType());
    Type element = ta.getElementType();
    size_t rank = ta.getRank();
    int64_t m = ta.getDimSize(rank - 2), k = ta.getDimSize(rank - 1), n = tb.getDimSize(rank - 1);
    Operand A = g.operand(a), B = g.operand(bm), C = g.operand(c);
    if (rank == 2) {
      g.call(g.builder(), element, m, n, k, A, B, C, Value());
    } else {
      Value lower = g.index(0), upper = g.index(ta.getDimSize(0)), step = g.index(1);
      scf::ForOp::create(g.builder(), g.loc(), lower, upper, step, ValueRange{},
                         [&](OpBuilder &b, Location loc, Value batch, ValueRange) {
                           g.call(b, element, m, n, k, A, B, C, batch);
                           scf::YieldOp::create(b, loc);
                         });
    }
    op->erase();
  }
  return static_cast<int>(products.size());
}

} // namespace tinymlir::detail
