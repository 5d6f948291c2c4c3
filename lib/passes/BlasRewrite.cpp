// After bufferization: linalg.matmul / linalg.batch_matmul on row-major
// memrefs become calls of tinymlir_sgemm / tinymlir_dgemm (lib/runtime/Gemm.h:
// OpenBLAS on the OpenMP team, a batch in one call). Pointers, offsets, leading
// dimensions and batch strides come from each memref's strided metadata; the
// product accumulates into C because linalg does.
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/IR/Builders.h>
#include <mlir/Pass/Pass.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL_BLASREWRITEPASS
#define GEN_PASS_DEF_BLASREWRITEPASS
#include "passes/Passes.h.inc"
namespace {

using namespace mlir;

/// A memref operand of a GEMM, as base pointer + offset + row stride (+ batch stride).
/// complex<f32> (bits 32) or complex<f64> (64).
bool isComplexOf(Type t, unsigned bits) {
  auto c = dyn_cast<ComplexType>(t);
  return c && c.getElementType().isFloat() && c.getElementType().getIntOrFloatBitWidth() == bits;
}

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

  /// !llvm.ptr to the first element.
  Value pointer(OpBuilder &b, const Operand &o, int64_t elementBytes) {
    Value bytes = arith::MulIOp::create(b, loc_, o.offset,
                                        arith::ConstantIndexOp::create(b, loc_, elementBytes));
    Value address = arith::AddIOp::create(b, loc_, o.aligned, bytes);
    Value asInt = arith::IndexCastOp::create(b, loc_, b.getI64Type(), address);
    return LLVM::IntToPtrOp::create(b, loc_, LLVM::LLVMPointerType::get(b.getContext()), asInt);
  }

  Value i64(OpBuilder &b, Value indexValue) {
    return arith::IndexCastOp::create(b, loc_, b.getI64Type(), indexValue);
  }
  Value i64(OpBuilder &b, int64_t v) {
    return arith::ConstantIntOp::create(b, loc_, b.getI64Type(), v);
  }

  /// Leading dimension: the row stride, at least the row length (BLAS requires
  /// it even when there is a single row, whose stride is then arbitrary).
  Value leading(OpBuilder &b, Value rowStride, int64_t columns) {
    return i64(b, arith::MaxSIOp::create(b, loc_, rowStride,
                                         arith::ConstantIndexOp::create(b, loc_, columns)));
  }

  func::FuncOp declare(Type element) {
    const char *name = element.isF32()            ? "tinymlir_sgemm"
                       : element.isF64()          ? "tinymlir_dgemm"
                       : isComplexOf(element, 32) ? "tinymlir_cgemm"
                                                  : "tinymlir_zgemm";
    if (auto f = module_.lookupSymbol<func::FuncOp>(name))
      return f;
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(module_.getBody());
    Type i64 = b_.getI64Type(), ptr = LLVM::LLVMPointerType::get(b_.getContext());
    auto type =
        b_.getFunctionType({i64, i64, i64, i64, ptr, i64, i64, ptr, i64, i64, ptr, i64, i64}, {});
    auto f = func::FuncOp::create(b_, loc_, name, type);
    f.setPrivate();
    return f;
  }

  /// C[b] += A[b] @ B[b] for b < batch (C += A @ B when batch is 1), one call.
  void call(Type element, int64_t batch, int64_t m, int64_t n, int64_t k, const Operand &A,
            const Operand &B, const Operand &C) {
    OpBuilder &b = b_;
    int64_t bytes =
        isa<ComplexType>(element)
            ? 2 * cast<ComplexType>(element).getElementType().getIntOrFloatBitWidth() / 8
            : element.getIntOrFloatBitWidth() / 8;
    auto stride = [&](const Operand &o) {
      return o.batchStride ? i64(b, o.batchStride) : i64(b, 0);
    };
    SmallVector<Value> args{i64(b, batch),
                            i64(b, m),
                            i64(b, n),
                            i64(b, k),
                            pointer(b, A, bytes),
                            leading(b, A.rowStride, k),
                            stride(A),
                            pointer(b, B, bytes),
                            leading(b, B.rowStride, n),
                            stride(B),
                            pointer(b, C, bytes),
                            leading(b, C.rowStride, n),
                            stride(C)};
    func::CallOp::create(b, loc_, declare(element), args);
  }

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
  if (!element.isF32() && !element.isF64() && !isComplexOf(element, 32) &&
      !isComplexOf(element, 64))
    return false;
  for (Value v : op->getOperands())
    if (!isRowMajor(v) || cast<MemRefType>(v.getType()).getElementType() != element ||
        !cast<MemRefType>(v.getType()).hasStaticShape())
      return false;
  return isDefault();
}

/// tinymlir-blas-rewrite: row-major static memref linalg.matmul /
/// linalg.batch_matmul with default maps -> one tinymlir_sgemm/dgemm call each.
struct BlasRewritePass : impl::BlasRewritePassBase<BlasRewritePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
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
      g.call(element, rank == 3 ? ta.getDimSize(0) : 1, m, n, k, A, B, C);
      op->erase();
    }
    replaced += products.size();
  }
};

} // namespace

int countBlasCalls(ModuleOp module) {
  int calls = 0;
  auto isGemm = [](StringRef callee) {
    return callee == "tinymlir_sgemm" || callee == "tinymlir_dgemm" || callee == "tinymlir_cgemm" ||
           callee == "tinymlir_zgemm";
  };
  module.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op))
      calls += isGemm(call.getCallee());
    else if (auto call = dyn_cast<LLVM::CallOp>(op))
      calls += call.getCallee() && isGemm(*call.getCallee());
  });
  return calls;
}

} // namespace tinymlir::detail
