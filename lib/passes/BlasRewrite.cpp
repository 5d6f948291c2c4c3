// After bufferization: linalg.matmul / linalg.batch_matmul on row-major
// memrefs become calls of tinymlir_sgemm / tinymlir_dgemm (lib/runtime/Gemm.h:
// OpenBLAS on the OpenMP team, a batch in one call). Pointers, offsets, leading
// dimensions and batch strides come from each memref's strided metadata; the
// product accumulates into C because linalg does (beta 1, alpha 1).
//
// BLAS's alpha and beta take what the ops around a real product do to it
// (C = alpha * A @ B + beta * C, PolyBench's gemm as NumPy writes it):
//   linalg.fill 0 of C just before          -> beta 0, the fill erased
//   or a copy into C of a buffer of zeros   -> beta 0, the copy erased
//   A (or B) a temporary = s * X, read once -> alpha *= s, X read instead
//   A (or B) a reshaped copy of a slice     -> the slice read in place
//   then, with beta 0: the only reader of C
//   is D = C + t * D (or C + D) in place    -> C is D, beta t, that op erased
// Each pass over an array these save is a fifth of a (1000, 1000) product's
// time beside it, and an elementwise loop between two BLAS calls no longer
// wakes the OpenMP team while BLAS's threads spin.
//
// A matrix-vector product A @ v and a vector-matrix product w @ A of the same
// matrix become one tinymlir_?gemv2 call at the later one: one pass over A
// where NumPy makes two (atax's (A @ x) @ A, bicg, mvt; the matrix is read
// from memory once, the rows a second time from cache). The earlier product
// moves down to the later: nothing between may touch its operands, and w may
// be A @ v's result only when that product comes first.
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/Utils/ReshapeOpsUtils.h>
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

/// The constant a value is (a float arith.constant), if it is.
std::optional<double> constantOf(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantOp>())
    if (auto f = dyn_cast<FloatAttr>(c.getValue()))
      return f.getValueAsDouble();
  return std::nullopt;
}

/// The single payload operation of an elementwise generic (identity maps,
/// parallel loops, one result) that yields it, or nullptr.
Operation *elementwiseBody(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() != op.getNumParallelLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  return yield.getOperand(0).getDefiningOp();
}

/// `value` is the payload argument of input `index` of `op`.
bool isInput(linalg::GenericOp op, Value value, unsigned index) {
  return value == op.getBody()->getArgument(index);
}

/// s * x or x * s for input `index` and a constant s.
std::optional<double> scaleOf(linalg::GenericOp op, Value value, unsigned index) {
  auto mul = value.getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getBlock() != op.getBody())
    return std::nullopt;
  for (int side = 0; side < 2; ++side)
    if (isInput(op, mul->getOperand(side), index))
      if (std::optional<double> s = constantOf(mul->getOperand(1 - side)))
        return s;
  return std::nullopt;
}

/// Whether `op` (or an op inside it) uses a buffer whose root is in `roots`.
bool touches(Operation *op, ArrayRef<Value> roots) {
  bool found = false;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      found |= isa<MemRefType>(v.getType()) && llvm::is_contained(roots, viewRoot(v));
  });
  return found;
}

/// The ops strictly between `from` and `to` (same block, from first) use no
/// buffer whose root is in `roots`.
bool untouchedBetween(Operation *from, Operation *to, ArrayRef<Value> roots) {
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode())
    if (touches(op, roots))
      return false;
  return true;
}

/// Whether the value `op` reads from the buffer `t` is read by nothing after
/// it: the next op that touches t frees it or writes all of it without
/// reading it (a fill, or an elementwise generic whose payload ignores it).
bool diesAt(Operation *op, Value t) {
  for (Operation *q = op->getNextNode(); q; q = q->getNextNode()) {
    if (!touches(q, {t}))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(q))
      return dealloc.getMemref() == t;
    if (auto fill = dyn_cast<linalg::FillOp>(q))
      return fill.getOutputs()[0] == t;
    auto generic = dyn_cast<linalg::GenericOp>(q);
    if (!generic || generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != t ||
        generic.getNumLoops() != generic.getNumParallelLoops() ||
        generic.payloadUsesValueFromOperand(&generic.getDpsInitsMutable()[0]))
      return false;
    return llvm::none_of(generic.getDpsInputs(), [&](Value v) { return viewRoot(v) == t; });
  }
  return true;
}

/// The uses of `v` other than `except` and deallocations.
SmallVector<Operation *> readersOf(Value v, ArrayRef<Operation *> except) {
  SmallVector<Operation *> out;
  for (Operation *user : v.getUsers())
    if (!isa<memref::DeallocOp>(user) && !llvm::is_contained(except, user))
      out.push_back(user);
  return out;
}

/// Whether `a` and `b` are the same elements of one buffer: each is its root
/// or a reshape of it, all contiguous from its start.
bool sameElements(Value a, Value b) {
  auto whole = [](Value v) {
    for (;;) {
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type || !type.getLayout().isIdentity())
        return Value();
      Operation *def = v.getDefiningOp();
      if (auto reshape = dyn_cast_or_null<memref::ReshapeOp>(def))
        v = reshape.getSource();
      else if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(def))
        v = collapse.getSrc();
      else if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(def))
        v = expand.getSrc();
      else
        return v;
    }
  };
  Value root = whole(a);
  return root && root == whole(b);
}

/// Whether buffer `z` holds zeros wherever `at` reads it: a fresh buffer
/// whose only write is a fill of 0 before `at` (or before the op holding it),
/// otherwise copied from and freed.
bool holdsZeros(Value z, Operation *at) {
  if (!z.getDefiningOp<memref::AllocOp>())
    return false;
  int fills = 0;
  for (Operation *user : z.getUsers()) {
    if (auto fill = dyn_cast<linalg::FillOp>(user)) {
      std::optional<double> value = constantOf(fill.getInputs()[0]);
      Operation *here = fill->getBlock()->findAncestorOpInBlock(*at);
      if (fill.getOutputs()[0] != z || !value || *value != 0.0 || !here ||
          !fill->isBeforeInBlock(here))
        return false;
      ++fills;
    } else if (auto copy = dyn_cast<memref::CopyOp>(user)) {
      if (copy.getSource() != z || copy.getTarget() == z)
        return false;
    } else if (!isa<memref::DeallocOp>(user)) {
      return false;
    }
  }
  return fills == 1;
}

/// An input that is a copy of another buffer made just for the product
/// (a slice A[r] copied out to be reshaped, as bufferization does for
/// tensor.reshape): the product reads the slice itself, through a
/// collapse_shape where the copy was reshaped, and the copy goes.
void readCopiesInPlace(linalg::LinalgOp op) {
  const Value c = viewRoot(op.getDpsInits()[0]);
  for (OpOperand *input : op.getDpsInputOperands()) {
    const Value x = input->get();
    Operation *reshape = x.getDefiningOp<memref::ReshapeOp>();
    const Value t = reshape ? cast<memref::ReshapeOp>(reshape).getSource() : x;
    if (!t.getDefiningOp<memref::AllocOp>() || (reshape && !sameElements(x, t)))
      continue;
    memref::CopyOp copy;
    bool other = false;
    for (Operation *user : t.getUsers()) {
      if (auto c2 = dyn_cast<memref::CopyOp>(user); c2 && c2.getTarget() == t && !copy)
        copy = c2;
      else
        other |= user != reshape && user != op.getOperation() && !isa<memref::DeallocOp>(user);
    }
    if (other || !copy || (reshape && !reshape->hasOneUse()) ||
        copy->getBlock() != op->getBlock() || !copy->isBeforeInBlock(op))
      continue;
    const Value src = copy.getSource();
    auto srcType = cast<MemRefType>(src.getType()), xType = cast<MemRefType>(x.getType());
    if (viewRoot(src) == c || !untouchedBetween(copy, op, {viewRoot(src)}) ||
        srcType.getElementType() != xType.getElementType())
      continue;
    Value view = src;
    if (srcType.getShape() != xType.getShape()) {
      std::optional<SmallVector<ReassociationIndices>> groups =
          getReassociationIndicesForReshape(srcType, xType);
      if (!groups || srcType.getRank() <= xType.getRank() ||
          !memref::CollapseShapeOp::isGuaranteedCollapsible(srcType, *groups))
        continue;
      OpBuilder b(op);
      view = memref::CollapseShapeOp::create(b, op->getLoc(), src, *groups);
    }
    if (!isRowMajor(view) || cast<MemRefType>(view.getType()).getShape() != xType.getShape()) {
      if (view != src)
        view.getDefiningOp()->erase();
      continue;
    }
    input->set(view);
    if (reshape)
      reshape->erase();
    copy->erase();
    if (llvm::all_of(t.getUsers(), [](Operation *u) { return isa<memref::DeallocOp>(u); })) {
      for (Operation *user : llvm::make_early_inc_range(t.getUsers()))
        user->erase();
      t.getDefiningOp()->erase();
    }
  }
}

/// A product's alpha and beta taken from the ops around it (see the top).
struct Scaling {
  double alpha = 1, beta = 1;
};

Scaling fuseScaling(linalg::LinalgOp op) {
  Scaling s;
  Value c = op.getDpsInits()[0];
  Type element = cast<MemRefType>(c.getType()).getElementType();
  Block *block = op->getBlock();
  readCopiesInPlace(op);
  // beta 0: C filled with zeros before (or given a copy of a buffer of
  // zeros: a fill hoisted out of a loop), nothing between touching it.
  for (Operation *p = op->getPrevNode(); p; p = p->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(p);
    if (fill && fill.getOutputs()[0] == c) {
      if (std::optional<double> zero = constantOf(fill.getInputs()[0]); zero && *zero == 0.0) {
        fill->erase();
        s.beta = 0;
      }
      break;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(p);
        copy && copy.getTarget() == c && holdsZeros(copy.getSource(), copy)) {
      copy->erase();
      s.beta = 0;
      break;
    }
    if (touches(p, {viewRoot(c)}))
      break;
  }
  if (!element.isF32() && !element.isF64())
    return s;
  // alpha: an input computed as s * X into a temporary whose value only the
  // product reads (the temporary may be written again after it: a buffer
  // bufferization reuses).
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value t = input->get();
    if (!t.getDefiningOp<memref::AllocOp>() ||
        llvm::count_if(op->getOperands(), [&](Value v) { return viewRoot(v) == t; }) != 1)
      continue;
    linalg::GenericOp scale;
    for (Operation *p = op->getPrevNode(); p; p = p->getPrevNode())
      if (touches(p, {t})) {
        scale = dyn_cast<linalg::GenericOp>(p);
        break;
      }
    if (!scale || scale.getNumDpsInputs() != 1 || scale.getDpsInits()[0] != t || !diesAt(op, t))
      continue;
    Operation *body = elementwiseBody(scale);
    std::optional<double> factor = body ? scaleOf(scale, body->getResult(0), 0) : std::nullopt;
    Value x = scale.getDpsInputs()[0];
    // (a factor of 0 is not folded: 0 * inf is NaN, BLAS's alpha 0 skips A @ B)
    if (!factor || *factor == 0.0 || x.getType() != t.getType() || !isRowMajor(x) ||
        viewRoot(x) == viewRoot(c) || viewRoot(x) == t ||
        !untouchedBetween(scale, op, {viewRoot(x)}))
      continue;
    input->set(x);
    scale->erase();
    s.alpha *= *factor;
  }
  // The epilogue: D = C + t * D in place, C's only reader (or that of a
  // reshape of C: a vector product, D a vector), C filled by the product
  // alone (beta 0).
  if (s.beta != 0 || !c.getDefiningOp<memref::AllocOp>())
    return s;
  Value read = c;
  SmallVector<Operation *> readers = readersOf(c, {op});
  if (readers.size() == 1 && isa<ViewLikeOpInterface>(readers[0]) &&
      readers[0]->getNumResults() == 1 && sameElements(readers[0]->getResult(0), c)) {
    read = readers[0]->getResult(0);
    readers = readersOf(read, {});
  }
  auto epilogue = readers.size() == 1 ? dyn_cast<linalg::GenericOp>(readers[0]) : nullptr;
  if (!epilogue || epilogue->getBlock() != block || !op->isBeforeInBlock(epilogue) ||
      epilogue.getNumDpsInputs() != 2)
    return s;
  Operation *add = elementwiseBody(epilogue);
  if (!add || !isa<arith::AddFOp>(add))
    return s;
  Value d = epilogue.getDpsInits()[0];
  int product = epilogue.getDpsInputs()[0] == read   ? 0
                : epilogue.getDpsInputs()[1] == read ? 1
                                                     : -1;
  if (product < 0 || epilogue.getDpsInputs()[1 - product] != d || d.getType() != read.getType() ||
      !isRowMajor(d))
    return s;
  // D is read by the product's inputs, touched before the epilogue, or (read
  // through a reshape) not a plain vector defined before the product: no.
  const Value rootD = viewRoot(d);
  auto dType = cast<MemRefType>(d.getType());
  if (llvm::any_of(op.getDpsInputs(), [&](Value v) { return viewRoot(v) == rootD; }) ||
      !untouchedBetween(op, epilogue, {rootD}) ||
      (read != c && (dType.getRank() != 1 || !dType.getLayout().isIdentity() ||
                     (d.getDefiningOp() && (d.getDefiningOp()->getBlock() != block ||
                                            !d.getDefiningOp()->isBeforeInBlock(op))))))
    return s;
  for (int side = 0; side < 2; ++side) {
    if (!isInput(epilogue, add->getOperand(side), product))
      continue;
    Value other = add->getOperand(1 - side);
    std::optional<double> t = isInput(epilogue, other, 1 - product)
                                  ? std::optional<double>(1.0)
                                  : scaleOf(epilogue, other, 1 - product);
    if (!t || *t == 0.0)
      return s;
    Value into = d;
    if (read != c) {
      OpBuilder b(op);
      auto cType = cast<MemRefType>(c.getType());
      into = memref::ExpandShapeOp::create(b, op->getLoc(), cType.getShape(), d,
                                           {ReassociationIndices{0, 1}});
      if (into.getType() != c.getType()) {
        into.getDefiningOp()->erase();
        return s;
      }
    }
    op.getDpsInitsMutable()[0].set(into);
    epilogue->erase();
    if (read != c)
      read.getDefiningOp()->erase();
    if (readersOf(c, {}).empty()) { // C's buffer is left unused
      for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
        user->erase();
      c.getDefiningOp()->erase();
    }
    s.beta = *t;
    return s;
  }
  return s;
}

/// Whether `op` reads or writes a buffer whose root is in `roots` (views of
/// them, which do neither, do not count).
bool usesData(Operation *op, ArrayRef<Value> roots) {
  return !isa<ViewLikeOpInterface>(op) && touches(op, roots);
}

/// A rank-2 product of one column (A @ v) or one row (w @ A) on float32 or
/// float64: its matrix, vector and result.
struct MatrixVector {
  linalg::LinalgOp op;
  bool column; // A @ v (else w @ A)
  Value matrix() { return op.getDpsInputs()[column ? 0 : 1]; }
  Value vector() { return op.getDpsInputs()[column ? 1 : 0]; }
  Value result() { return op.getDpsInits()[0]; }
};

std::optional<MatrixVector> matrixVector(linalg::LinalgOp op) {
  auto a = cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto b = cast<MemRefType>(op.getDpsInputs()[1].getType());
  if (!isa<linalg::MatmulOp>(op.getOperation()) ||
      !(a.getElementType().isF32() || a.getElementType().isF64()))
    return std::nullopt;
  if (b.getDimSize(1) == 1 && a.getDimSize(0) > 1)
    return MatrixVector{op, true};
  if (a.getDimSize(0) == 1 && b.getDimSize(1) > 1)
    return MatrixVector{op, false};
  return std::nullopt;
}

/// Whether `first` (earlier in the block) and `second`, one of each kind on
/// the same matrix, can run as one pass at `second` (see the top).
bool pairable(MatrixVector first, MatrixVector second) {
  if (first.column == second.column || first.matrix() != second.matrix() ||
      first.op->getBlock() != second.op->getBlock())
    return false;
  MatrixVector p = first.column ? first : second, q = first.column ? second : first;
  const Value a = viewRoot(p.matrix()), v = viewRoot(p.vector()), c = viewRoot(p.result()),
              w = viewRoot(q.vector()), d = viewRoot(q.result());
  if (c == a || c == v || c == d || d == a || d == v || d == w)
    return false;
  if (w == c && !(first.column && sameElements(p.result(), q.vector())))
    return false;
  SmallVector<Value> moved;
  for (Value operand : first.op->getOperands())
    moved.push_back(viewRoot(operand));
  for (Operation *op = first.op->getNextNode(); op != second.op; op = op->getNextNode())
    if (usesData(op, moved))
      return false;
  return true;
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

  /// The private declaration of runtime function `name` (lib/runtime/Gemm.h),
  /// made once per module: integers are i64, pointers !llvm.ptr, scalings f64.
  func::FuncOp declare(const char *name, const char *signature) {
    if (auto f = module_.lookupSymbol<func::FuncOp>(name))
      return f;
    OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(module_.getBody());
    SmallVector<Type> params;
    for (const char *p = signature; *p; ++p)
      params.push_back(*p == 'i'   ? Type(b_.getI64Type())
                       : *p == 'p' ? Type(LLVM::LLVMPointerType::get(b_.getContext()))
                                   : Type(b_.getF64Type()));
    auto f = func::FuncOp::create(b_, loc_, name, b_.getFunctionType(params, {}));
    f.setPrivate();
    return f;
  }

  func::FuncOp declareGemm(Type element) {
    return declare(element.isF32()            ? "tinymlir_sgemm"
                   : element.isF64()          ? "tinymlir_dgemm"
                   : isComplexOf(element, 32) ? "tinymlir_cgemm"
                                              : "tinymlir_zgemm",
                   "iiiipiipiipiiff");
  }

  func::FuncOp declareGemv2(Type element) {
    return declare(element.isF32() ? "tinymlir_sgemv2" : "tinymlir_dgemv2", "iipipipiffpipff");
  }

  /// c = alphaP A @ v + betaP c and d = alphaQ w @ A + betaQ d, one call.
  void callGemv2(MatrixVector p, Scaling sp, MatrixVector q, Scaling sq) {
    OpBuilder &b = b_;
    auto type = cast<MemRefType>(p.matrix().getType());
    Type element = type.getElementType();
    const int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    Operand A = operand(p.matrix()), v = operand(p.vector()), c = operand(p.result()),
            w = operand(q.vector()), d = operand(q.result());
    auto f64 = [&](double x) {
      return arith::ConstantFloatOp::create(b, loc_, b.getF64Type(), APFloat(x));
    };
    SmallVector<Value> args{i64(b, type.getDimSize(0)),
                            i64(b, type.getDimSize(1)),
                            pointer(b, A, bytes),
                            leading(b, A.rowStride, type.getDimSize(1)),
                            pointer(b, v, bytes),
                            i64(b, v.rowStride),
                            pointer(b, c, bytes),
                            i64(b, c.rowStride),
                            f64(sp.alpha),
                            f64(sp.beta),
                            pointer(b, w, bytes),
                            i64(b, arith::ConstantIndexOp::create(b, loc_, 1)),
                            pointer(b, d, bytes),
                            f64(sq.alpha),
                            f64(sq.beta)};
    func::CallOp::create(b, loc_, declareGemv2(element), args);
  }

  /// C[b] = alpha A[b] @ B[b] + beta C[b] for b < batch, one call.
  void call(Type element, int64_t batch, int64_t m, int64_t n, int64_t k, const Operand &A,
            const Operand &B, const Operand &C, Scaling scaling) {
    OpBuilder &b = b_;
    int64_t bytes =
        isa<ComplexType>(element)
            ? 2 * cast<ComplexType>(element).getElementType().getIntOrFloatBitWidth() / 8
            : element.getIntOrFloatBitWidth() / 8;
    auto stride = [&](const Operand &o) {
      return o.batchStride ? i64(b, o.batchStride) : i64(b, 0);
    };
    SmallVector<Value> args{
        i64(b, batch),
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
        stride(C),
        arith::ConstantFloatOp::create(b, loc_, b.getF64Type(), APFloat(scaling.alpha)),
        arith::ConstantFloatOp::create(b, loc_, b.getF64Type(), APFloat(scaling.beta))};
    func::CallOp::create(b, loc_, declareGemm(element), args);
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
    SmallVector<Scaling> scalings;
    for (linalg::LinalgOp op : products)
      scalings.push_back(fuseScaling(op));
    // Pairs of matrix-vector products on one matrix: partner[i] = j.
    SmallVector<int> partner(products.size(), -1);
    for (size_t i = 0; i < products.size(); ++i) {
      std::optional<MatrixVector> first = matrixVector(products[i]);
      for (size_t j = i + 1; first && partner[i] < 0 && j < products.size(); ++j)
        if (std::optional<MatrixVector> second = matrixVector(products[j]);
            second && partner[j] < 0 && pairable(*first, *second))
          partner[i] = static_cast<int>(j), partner[j] = static_cast<int>(i);
    }
    for (size_t i = 0; i < products.size(); ++i) {
      linalg::LinalgOp op = products[i];
      if (partner[i] >= 0) {
        if (partner[i] > static_cast<int>(i))
          continue; // emitted at the later one
        MatrixVector self = *matrixVector(op), other = *matrixVector(products[partner[i]]);
        GemmBuilder g(module, op);
        if (self.column)
          g.callGemv2(self, scalings[i], other, scalings[partner[i]]);
        else
          g.callGemv2(other, scalings[partner[i]], self, scalings[i]);
        products[partner[i]]->erase();
        op->erase();
        continue;
      }
      const Scaling scaling = scalings[i];
      GemmBuilder g(module, op);
      Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1], c = op.getDpsInits()[0];
      auto ta = cast<MemRefType>(a.getType()), tb = cast<MemRefType>(bm.getType());
      Type element = ta.getElementType();
      size_t rank = ta.getRank();
      int64_t m = ta.getDimSize(rank - 2), k = ta.getDimSize(rank - 1), n = tb.getDimSize(rank - 1);
      Operand A = g.operand(a), B = g.operand(bm), C = g.operand(c);
      g.call(element, rank == 3 ? ta.getDimSize(0) : 1, m, n, k, A, B, C, scaling);
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
           callee == "tinymlir_zgemm" || callee == "tinymlir_sgemv2" || callee == "tinymlir_dgemv2";
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
