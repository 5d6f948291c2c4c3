// The frontend's op constructors and their shape rules: broadcasting, axes,
// elementwise ops, reductions, matmul, layout and slices; the tracing state.
// Type promotion: Promotion.cpp; row kernels: RowKernels.cpp; ufunc methods: Ufuncs.cpp.
#include "frontend/Graph.h"
#include "frontend/Promotion.h"
#include "frontend/TensorInternals.h"

#include <tinymlir/tensor.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>

namespace tinymlir {
using detail::applyIntPolicy;
using detail::binary;
using detail::broadcastShapes;
using detail::complexExtreme;
using detail::complexOf;
using detail::convert;
using detail::describe;
using detail::fail;
using detail::fitsInteger;
using detail::floatFor;
using detail::hasSymbolic;
using detail::IntPolicy;
using detail::isSymbolic;
using detail::keptShape;
using detail::makeNode;
using detail::Node;
using detail::nodeOf;
using detail::NodePtr;
using detail::normalizeAxis;
using detail::operandDType;
using detail::opInfo;
using detail::promote;
using detail::reducedAxes;
using detail::reducedCount;
using detail::removedAxes;
using detail::strongDType;
using detail::symbolicSize;

const char *opName(Op op) {
  switch (op) {
#define TINYMLIR_OP(Name, spelling, ...)                                                           \
  case Op::Name:                                                                                   \
    return spelling;
#include <tinymlir/ops.def>
  }
  return "?";
}

std::optional<Shape> detail::broadcastShapes(const std::vector<Shape> &shapes) {
  size_t rank = 0;
  for (const Shape &s : shapes)
    rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape &s : shapes)
    for (size_t a = 0; a < s.size(); ++a) {
      int64_t &o = out[rank - s.size() + a];
      if (s[a] != 1 && o != 1 && s[a] != o)
        return std::nullopt;
      if (s[a] != 1)
        o = s[a];
    }
  return out;
}

std::vector<int64_t> normalizeAxes(const char *op, const Axes &axes, int64_t rank) {
  if (!axes.list) {
    std::vector<int64_t> all(static_cast<size_t>(rank));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  std::vector<int64_t> out;
  for (int64_t a : *axes.list) {
    if (a < -rank || a >= rank)
      fail(op,
           "axis " + std::to_string(a) + " is out of bounds for array of dimension " +
               std::to_string(rank),
           ErrorKind::Axis);
    out.push_back(a < 0 ? a + rank : a);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    fail(op, "duplicate value in 'axis'");
  return out;
}

Shape detail::broadcastShapes(Op op, const Shape &a, const Shape &b) {
  if (std::optional<Shape> out = detail::broadcastShapes({a, b}))
    return *out;
  fail(op, "cannot broadcast shapes " + shapeString(a) + " and " + shapeString(b));
}

Tensor detail::binary(Op op, const Tensor &a, const Tensor &b) {
  NodePtr x = nodeOf(a, opName(op)), y = nodeOf(b, opName(op));
  DType operands = operandDType(op, x, y);
  if (opInfo(op).ints == IntPolicy::ToFloat && !x->weak && !y->weak && !isFloat(operands) &&
      !isComplex(operands)) // NumPy's loop: the smallest float both hold (int8, uint8: float16)
    operands = promote(floatFor(x->dtype), floatFor(y->dtype));
  DType result = applyIntPolicy(op, operands, describe(x) + " and " + describe(y));
  if (op == Op::Complex) { // parts of complex64 or complex128
    if (isComplex(result))
      fail(op, "the parts must be real, got " + describe(x) + " and " + describe(y),
           ErrorKind::Type);
    result = result == DType::f64 ? DType::f64 : DType::f32;
    Shape shape = broadcastShapes(op, x->shape, y->shape);
    return Tensor(makeNode(op, std::move(shape), complexOf(result),
                           {convert(x, result, opName(op)), convert(y, result, opName(op))}));
  }
  NodePtr second = convert(y, result, opName(op));
  if (op == Op::Pow && isInteger(result) && !isUnsigned(result)) {
    // NumPy raises for a negative exponent: a literal's now, an array's when the kernel runs
    if (y->op == Op::Scalar && y->scalar < 0)
      fail(op, "Integers to negative integer powers are not allowed.");
    if (y->op != Op::Scalar)
      second = detail::requireAtLeast(Tensor(second), 0, 0).node();
  }
  if (result == DType::b8 && op == Op::Add) // NumPy's bool + bool: logical or
    op = Op::Maximum;
  if (result == DType::b8 && op == Op::Mul) // and bool * bool: logical and
    op = Op::Minimum;
  Shape shape = broadcastShapes(op, x->shape, y->shape);
  return Tensor(makeNode(op, std::move(shape), result, {convert(x, result, opName(op)), second}));
}

namespace {

/// A comparison: operands promoted to each other, a bool result.
Tensor compare(Op op, const Tensor &a, const Tensor &b) {
  NodePtr x = nodeOf(a, opName(op)), y = nodeOf(b, opName(op));
  DType operands = operandDType(op, x, y);
  // NumPy 2 compares with a Python int beyond an integer dtype's range
  // exactly (uint8_array > -1 is all True): in int64, or float64 beside uint64.
  for (const NodePtr &w : {x, y})
    if (w->weak && w->integral && isInteger(operands) && !fitsInteger(*w, operands))
      operands = operands != DType::u64 && fitsInteger(*w, DType::i64) ? DType::i64 : DType::f64;
  applyIntPolicy(op, operands, describe(x) + " and " + describe(y));
  Shape shape = broadcastShapes(op, x->shape, y->shape);
  return Tensor(makeNode(op, std::move(shape), DType::b8,
                         {convert(x, operands, opName(op)), convert(y, operands, opName(op))}));
}

/// where: the condition as a bool (nonzero is true), the values promoted as
/// by arithmetic; the three shapes broadcast.
Tensor select(Op op, const Tensor &c, const Tensor &a, const Tensor &b) {
  NodePtr cond = nodeOf(c, opName(op)), x = nodeOf(a, opName(op)), y = nodeOf(b, opName(op));
  DType result = operandDType(op, x, y);
  Shape shape = broadcastShapes(op, broadcastShapes(op, cond->shape, x->shape), y->shape);
  // NumPy's where casts a Python int out of the result's range with wrap-around.
  return Tensor(
      makeNode(op, std::move(shape), result,
               {convert(cond, DType::b8, opName(op)), convert(x, result, opName(op), false),
                convert(y, result, opName(op), false)}));
}

/// Ops whose result is real for a complex operand: abs, real, imag, angle.
bool realResult(Op op) {
  return op == Op::Abs || op == Op::Real || op == Op::Imag || op == Op::Angle;
}

Tensor unary(Op op, const Tensor &a) {
  NodePtr x = nodeOf(a, opName(op));
  if (x->weak)
    x = convert(x, strongDType(*x), opName(op));
  if (x->dtype == DType::b8 && opInfo(op).ints == IntPolicy::Keep && op != Op::Abs &&
      op != Op::Floor && op != Op::Ceil && op != Op::Trunc && op != Op::Conj && op != Op::Real &&
      op != Op::Imag)
    fail(op,
         "bool operands are not supported (NumPy's ufunc has no bool loop): got " + describe(x) +
             "; cast it to an integer or float type first",
         ErrorKind::Type);
  if (op == Op::Conj && x->dtype == DType::b8) // NumPy's conjugate has no bool loop: int8
    x = convert(x, DType::i8, opName(op));
  DType dtype = applyIntPolicy(op, x->dtype, describe(x));
  x = convert(x, dtype, opName(op));
  DType result = isComplex(dtype) && realResult(op) ? realPart(dtype) : dtype;
  return Tensor(makeNode(op, x->shape, result, {x}));
}

} // namespace

int64_t detail::normalizeAxis(const char *op, int64_t axis, const Shape &shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < -rank || axis >= rank)
    fail(op, // NumPy's AxisError
         "axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
             std::to_string(rank),
         ErrorKind::Axis);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> detail::reducedAxes(const char *op, const Axes &axes, const Shape &shape) {
  if (axes.list)
    for (int64_t a : *axes.list)
      normalizeAxis(op, a, shape); // names the shape
  return normalizeAxes(op, axes, static_cast<int64_t>(shape.size()));
}

Shape detail::removedAxes(const Shape &shape, const std::vector<int64_t> &axes) {
  Shape out;
  for (size_t a = 0; a < shape.size(); ++a)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(a)) == axes.end())
      out.push_back(shape[a]);
  return out;
}

Shape detail::keptShape(const Shape &shape, const std::vector<int64_t> &axes) {
  Shape kept = shape;
  for (int64_t a : axes)
    kept[a] = 1;
  return kept;
}

/// Sum or Max over `axes`, then a reshape for keepdims.
int64_t detail::reducedCount(const Shape &shape, const std::vector<int64_t> &axes) {
  int64_t count = 1;
  for (int64_t a : axes)
    count *= shape[a];
  return count;
}

namespace {

Tensor reduce(Op op, const Tensor &t, const Axes &axis, bool keepdims) {
  NodePtr x = nodeOf(t, opName(op));
  if (x->weak)
    x = convert(x, strongDType(*x), opName(op));
  if ((op == Op::Sum || op == Op::Prod) && (isInteger(x->dtype) || x->dtype == DType::b8))
    // NumPy's: integers and bools accumulate in int64, unsigned ones in uint64
    x = convert(x, isUnsigned(x->dtype) ? DType::u64 : DType::i64, opName(op));
  if ((op == Op::Max || op == Op::Min) && isComplex(x->dtype)) { // NumPy's lexicographic order
    if (!axis.list)
      return complexExtreme(op, Tensor(x), std::nullopt, keepdims);
    const std::vector<int64_t> axes = reducedAxes(opName(op), axis, x->shape);
    Tensor r(x); // one axis at a time, the highest first
    for (auto a = axes.rbegin(); a != axes.rend(); ++a)
      r = complexExtreme(op, r, *a, true);
    return keepdims ? r : reshape(r, removedAxes(x->shape, axes));
  }
  if (x->dtype == DType::f16 && (op == Op::Sum || op == Op::Prod)) // in float32, as NumPy's loops
    return cast(reduce(op, cast(Tensor(x), DType::f32), axis, keepdims), DType::f16);
  // NumPy's ufunc reductions take axis 0 or -1 of a rank-0 array as all of it.
  const bool scalarAxis = x->shape.empty() && axis.list && axis.list->size() == 1 &&
                          ((*axis.list)[0] == 0 || (*axis.list)[0] == -1);
  std::vector<int64_t> axes =
      scalarAxis ? std::vector<int64_t>{} : reducedAxes(opName(op), axis, x->shape);
  if (axes.empty())
    return Tensor(x);
  Shape shape;
  for (int64_t i = 0; i < static_cast<int64_t>(x->shape.size()); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end())
      shape.push_back(x->shape[i]);
  if (hasSymbolic(x->shape)) { // sizes known when the kernel runs: a sum of none is 0
    bool symbolicReduced = false;
    for (int64_t a : axes)
      symbolicReduced |= isSymbolic(x->shape[static_cast<size_t>(a)]);
    if (symbolicReduced && (op == Op::Max || op == Op::Min))
      fail(op,
           "of an array whose size is known only when the kernel runs (a slice with traced "
           "bounds): not yet (an empty one must raise NumPy's ValueError)",
           ErrorKind::Trace);
  } else if (numElements(x->shape) == 0) { // NumPy: the identity, or an error where there is none
    const bool b = x->dtype == DType::b8;
    if ((op == Op::Max || op == Op::Min) && !b && reducedCount(x->shape, axes) == 0)
      fail(op, std::string("zero-size array to reduction operation ") +
                   (op == Op::Max ? "maximum" : "minimum") + " which has no identity");
    double identity = op == Op::Prod || (b && op == Op::Min) ? 1.0 : 0.0;
    Tensor result = full(shape, identity, x->dtype);
    return keepdims ? reshape(result, keptShape(x->shape, axes)) : result;
  }
  auto node = makeNode(op, shape, x->dtype, {x});
  node->axes = axes;
  Tensor result(node);
  return keepdims ? reshape(result, keptShape(x->shape, axes)) : result;
}

} // namespace

// --- Tensor -------------------------------------------------------------------

Tensor::Tensor(const Array &array) {
  node_ = makeNode(Op::Constant, array.shape(), array.dtype());
  node_->constant = array;
}

const Shape &Tensor::shape() const { return nodeOf(*this, "shape")->shape; }
DType Tensor::dtype() const { return nodeOf(*this, "dtype")->dtype; }
int64_t Tensor::dim(int64_t axis) const { return shape()[normalizeAxis("dim", axis, shape())]; }
bool Tensor::isConcrete() const { return node_ && node_->op == Op::Constant; }
bool Tensor::isInput() const { return node_ && node_->op == Op::Argument; }

const Array &Tensor::array() const {
  if (!isConcrete())
    fail("array", "this Tensor is a traced value of type " + describe(nodeOf(*this, "array")) +
                      ", not data; compile it with jit(...) or evaluate(...)");
  return node_->constant;
}

Tensor Tensor::sum(std::optional<int64_t> axis, bool keepdims) const {
  return tinymlir::sum(*this, axis, keepdims);
}
Tensor Tensor::max(std::optional<int64_t> axis, bool keepdims) const {
  return tinymlir::max(*this, axis, keepdims);
}
Tensor Tensor::min(std::optional<int64_t> axis, bool keepdims) const {
  return tinymlir::min(*this, axis, keepdims);
}
Tensor Tensor::mean(std::optional<int64_t> axis, bool keepdims) const {
  return tinymlir::mean(*this, axis, keepdims);
}
Tensor Tensor::var(std::optional<int64_t> axis, bool keepdims) const {
  return tinymlir::var(*this, axis, keepdims);
}
Tensor Tensor::astype(DType dtype) const { return cast(*this, dtype); }
Tensor Tensor::reshape(const Shape &shape) const { return tinymlir::reshape(*this, shape); }
Tensor Tensor::transpose(const std::vector<int64_t> &perm) const {
  return tinymlir::transpose(*this, perm);
}
Tensor Tensor::T() const {
  std::vector<int64_t> perm(shape().size());
  std::iota(perm.rbegin(), perm.rend(), 0);
  return transpose(perm);
}

// --- Elementwise ----------------------------------------------------------------

#define TINYMLIR_DEFINE_Unary(Name, f)                                                             \
  Tensor f(const Tensor &x) { return unary(Op::Name, x); }
#define TINYMLIR_DEFINE_Binary(Name, f)                                                            \
  Tensor f(const Tensor &a, const Tensor &b) { return binary(Op::Name, a, b); }
#define TINYMLIR_DEFINE_Compare(Name, f)                                                           \
  Tensor f(const Tensor &a, const Tensor &b) { return compare(Op::Name, a, b); }
#define TINYMLIR_DEFINE_Select(Name, f)                                                            \
  Tensor f(const Tensor &c, const Tensor &x, const Tensor &y) { return select(Op::Name, c, x, y); }
#define TINYMLIR_DEFINE_Convert(Name, f)
#define TINYMLIR_OP(...)
#define TINYMLIR_ELEMENTWISE_OP(Name, spelling, Kind, Ints, FloatLowering, IntLowering,            \
                                ComplexLowering, Function)                                         \
  TINYMLIR_DEFINE_##Kind(Name, Function)
#include <tinymlir/ops.def>

Tensor operator+(const Tensor &a, const Tensor &b) { return add(a, b); }
Tensor operator-(const Tensor &a, const Tensor &b) { return subtract(a, b); }
Tensor operator*(const Tensor &a, const Tensor &b) { return multiply(a, b); }
Tensor operator/(const Tensor &a, const Tensor &b) { return divide(a, b); }
Tensor operator-(const Tensor &a) { return negative(a); }

Tensor cast(const Tensor &x, DType dtype) { return Tensor(convert(nodeOf(x, "cast"), dtype)); }

// Logical operations on truth values (nonzero is true), as NumPy's.
Tensor logical_and(const Tensor &a, const Tensor &b) {
  return minimum(cast(a, DType::b8), cast(b, DType::b8));
}
Tensor logical_or(const Tensor &a, const Tensor &b) {
  return maximum(cast(a, DType::b8), cast(b, DType::b8));
}
Tensor logical_xor(const Tensor &a, const Tensor &b) {
  return not_equal(cast(a, DType::b8), cast(b, DType::b8));
}
Tensor logical_not(const Tensor &x) { return equal(cast(x, DType::b8), ScalarType{DType::b8}(0)); }

// --- Reductions -----------------------------------------------------------------

Tensor sum(const Tensor &x, const Axes &axis, bool keepdims) {
  return reduce(Op::Sum, x, axis, keepdims);
}
Tensor max(const Tensor &x, const Axes &axis, bool keepdims) {
  return reduce(Op::Max, x, axis, keepdims);
}
Tensor min(const Tensor &x, const Axes &axis, bool keepdims) {
  return reduce(Op::Min, x, axis, keepdims);
}
Tensor prod(const Tensor &x, const Axes &axis, bool keepdims) {
  return reduce(Op::Prod, x, axis, keepdims);
}
Tensor any(const Tensor &x, const Axes &axis, bool keepdims) {
  return max(cast(x, DType::b8), axis, keepdims);
}
Tensor all(const Tensor &x, const Axes &axis, bool keepdims) {
  return min(cast(x, DType::b8), axis, keepdims);
}
Tensor mean(const Tensor &x, const Axes &axis, bool keepdims) {
  const NodePtr &n = nodeOf(x, "mean");
  if (!isFloat(n->dtype) && !isComplex(n->dtype)) // NumPy's: integers summed in float64
    return mean(cast(x, DType::f64), axis, keepdims);
  if (n->dtype == DType::f16) // NumPy's: in float32, the result float16
    return cast(mean(cast(x, DType::f32), axis, keepdims), DType::f16);
  const std::vector<int64_t> axes = reducedAxes("mean", axis, n->shape);
  if (hasSymbolic(n->shape)) { // the count, of sizes known when the kernel runs
    Tensor count = weakInteger(1);
    for (int64_t a : axes) {
      const int64_t d = n->shape[static_cast<size_t>(a)];
      count = isSymbolic(d) ? count * symbolicSize(d) : count * d;
    }
    return sum(x, axis, keepdims) / cast(count, n->dtype);
  }
  int64_t count = reducedCount(n->shape, axes);
  return sum(x, axis, keepdims) / count;
}
Tensor var(const Tensor &x, const Axes &axis, bool keepdims, double ddof) {
  const NodePtr &n = nodeOf(x, "var");
  if (!isFloat(n->dtype) && !isComplex(n->dtype)) // NumPy's: in float64
    return var(cast(x, DType::f64), axis, keepdims, ddof);
  if (n->dtype == DType::f16)
    return cast(var(cast(x, DType::f32), axis, keepdims, ddof), DType::f16);
  const std::vector<int64_t> axes = reducedAxes("var", axis, n->shape); // validated first
  const Tensor centered = x - mean(x, axis, /*keepdims=*/true);
  auto modulusSquared = [](const Tensor &c) { // |x - mean|^2 of complex values, real
    const Tensor re = real(c), im = imag(c);
    return re * re + im * im;
  };
  const Tensor squares = isComplex(n->dtype) ? modulusSquared(centered) : centered * centered;
  if (ddof == 0)
    return mean(squares, axis, keepdims);
  const auto count = static_cast<double>(reducedCount(n->shape, axes));
  return sum(squares, axis, keepdims) / std::max(count - ddof, 0.0);
}

// --- Matrix products and layout -------------------------------------------------

/// NumPy's matmul: 1-D operands get a dimension for the product and lose it
/// after; batch dimensions broadcast. The graph's MatMul is (M, K) @ (K, N) or
/// (P, M, K) @ (P, K, N): batched rows against one matrix are one product of
/// P * M rows, and a broadcast batch is materialized (times ones: exact).
Tensor matmul(const Tensor &a, const Tensor &b) {
  NodePtr x = nodeOf(a, "matmul"), y = nodeOf(b, "matmul");
  Shape sa = x->shape, sb = y->shape;
  const std::string both = shapeString(sa) + " @ " + shapeString(sb);
  if (x->weak || y->weak)
    fail(Op::MatMul, "operands must be tensors, not scalars");
  if (sa.empty() || sb.empty())
    fail(Op::MatMul, "operands must have at least one dimension: " + both);
  const bool vectorA = sa.size() == 1, vectorB = sb.size() == 1;
  if (vectorA)
    sa.insert(sa.begin(), 1);
  if (vectorB)
    sb.push_back(1);
  const int64_t M = sa.end()[-2], K = sa.back(), N = sb.back();
  if (K != sb.end()[-2])
    fail(Op::MatMul, "inner dimensions differ: " + both);
  DType dtype = promote(x->dtype, y->dtype);
  if (dtype == DType::f16) // as NumPy's float16 loop: products summed in float32
    return cast(matmul(cast(a, DType::f32), cast(b, DType::f32)), DType::f16);
  if (dtype == DType::b8) // NumPy's: any of the ands, an exact int64 count of them here
    return not_equal(matmul(cast(a, DType::i64), cast(b, DType::i64)), weakScalar(0, true));
  const Shape batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  Shape batch(std::max(batchA.size(), batchB.size()));
  for (size_t i = 0; i < batch.size(); ++i) {
    auto dim = [&](const Shape &s) {
      return i + s.size() < batch.size() ? 1 : s[i + s.size() - batch.size()];
    };
    const int64_t da = dim(batchA), db = dim(batchB);
    if (da != db && da != 1 && db != 1)
      fail(Op::MatMul, "batch dimensions differ: " + both);
    batch[i] = da == 1 ? db : da;
  }
  const int64_t P = std::accumulate(batch.begin(), batch.end(), int64_t{1}, std::multiplies<>());
  if (K == 0 || M == 0 || N == 0 || P == 0) { // sums of no products are 0, as NumPy's
    Shape out = batch;
    if (!vectorA)
      out.push_back(M);
    if (!vectorB)
      out.push_back(N);
    return full(out, 0.0, dtype);
  }
  auto with = [&](Shape s, std::initializer_list<int64_t> last) {
    s.insert(s.end(), last);
    return s;
  };
  Tensor A = reshape(Tensor(convert(x, dtype, "matmul")), sa);
  Tensor B = reshape(Tensor(convert(y, dtype, "matmul")), sb);
  Tensor product;
  if (batchB.empty()) { // (..., M, K) @ (K, N): one product of P * M rows
    A = reshape(A, {P * M, K});
    product = Tensor(makeNode(Op::MatMul, {P * M, N}, dtype, {A.node(), B.node()}));
  } else {
    auto batched = [&](Tensor t, const Shape &own, int64_t rows, int64_t columns) {
      if (own != batch) // broadcast: times ones of the batch's shape
        t = t * Tensor(Array::full(with(batch, {1, 1}), 1.0, dtype));
      return reshape(t, {P, rows, columns});
    };
    A = batched(A, batchA, M, K);
    B = batched(B, batchB, K, N);
    product = Tensor(makeNode(Op::MatMul, {P, M, N}, dtype, {A.node(), B.node()}));
  }
  Shape out = batch;
  if (!vectorA)
    out.push_back(M);
  if (!vectorB)
    out.push_back(N);
  return reshape(product, out);
}

namespace {
/// The box [begin, end) with `steps` of `s` for `op`: its shape and the Slice
/// attribute (offsets, then the steps where one is not 1).
std::pair<Shape, std::vector<int64_t>> sliceBox(Op op, const Shape &s,
                                                const std::vector<int64_t> &begin,
                                                const std::vector<int64_t> &end,
                                                const std::vector<int64_t> &steps) {
  if (begin.size() != end.size() || begin.size() > s.size() ||
      (!steps.empty() && steps.size() != begin.size()))
    fail(op, "begin has " + std::to_string(begin.size()) + " entries, end " +
                 std::to_string(end.size()) + " and steps " + std::to_string(steps.size()) +
                 ", for a tensor of shape " + shapeString(s));
  Shape shape = s;
  std::vector<int64_t> offsets(s.size(), 0), strides(s.size(), 1);
  for (size_t i = 0; i < begin.size(); ++i) {
    if (!steps.empty() && steps[i] < 1)
      fail(op, "step " + std::to_string(steps[i]) + " on axis " + std::to_string(i) +
                   " must be positive");
    int64_t lo = begin[i] < 0 ? begin[i] + s[i] : begin[i];
    int64_t hi = end[i] < 0 ? end[i] + s[i] : end[i];
    if (lo < 0 || hi > s[i] || lo > hi)
      fail(op, "range [" + std::to_string(begin[i]) + ", " + std::to_string(end[i]) + ") on axis " +
                   std::to_string(i) + " is outside shape " + shapeString(s));
    offsets[i] = lo;
    strides[i] = steps.empty() ? 1 : steps[i];
    shape[i] = (hi - lo + strides[i] - 1) / strides[i]; // 0 for an empty range, as NumPy's
  }
  std::vector<int64_t> axes = offsets;
  if (std::ranges::any_of(strides, [](int64_t k) { return k != 1; }))
    axes.insert(axes.end(), strides.begin(), strides.end());
  return {shape, axes};
}
} // namespace

Tensor slice(const Tensor &t, const std::vector<int64_t> &begin, const std::vector<int64_t> &end,
             const std::vector<int64_t> &steps) {
  NodePtr x = nodeOf(t, "slice");
  auto [shape, axes] = sliceBox(Op::Slice, x->shape, begin, end, steps);
  if (shape == x->shape)
    return t;
  auto node = makeNode(Op::Slice, shape, x->dtype, {x});
  node->axes = std::move(axes);
  return Tensor(node);
}

Tensor detail::sliceAlong(const Tensor &x, int64_t axis, int64_t begin, int64_t end) {
  std::vector<int64_t> b(x.shape().size(), 0), e(x.shape().begin(), x.shape().end());
  b[static_cast<size_t>(axis)] = begin;
  e[static_cast<size_t>(axis)] = end;
  return slice(x, b, e);
}

Tensor sliceUpdate(const Tensor &t, const std::vector<int64_t> &begin,
                   const std::vector<int64_t> &end, const std::vector<int64_t> &steps,
                   const Tensor &value) {
  NodePtr x = nodeOf(t, "slice_update"), v = nodeOf(value, "slice_update");
  if (x->weak)
    fail(Op::SliceUpdate, "the target must be a tensor, got " + describe(x));
  auto [shape, axes] = sliceBox(Op::SliceUpdate, x->shape, begin, end, steps);
  bool fits = v->shape.size() <= shape.size();
  for (size_t i = 0; fits && i < v->shape.size(); ++i) {
    const int64_t d = v->shape[v->shape.size() - 1 - i], box = shape[shape.size() - 1 - i];
    fits = d == box || d == 1;
  }
  if (!fits)
    fail(Op::SliceUpdate, "could not broadcast input array from shape " + shapeString(v->shape) +
                              " into shape " + shapeString(shape));
  NodePtr box = broadcastTo(Tensor(convert(v, x->dtype, "slice_update")), shape).node();
  if (numElements(shape) == 0) // nothing written
    return t;
  if (shape == x->shape)
    return Tensor(box);
  auto node = makeNode(Op::SliceUpdate, x->shape, x->dtype, {x, box});
  node->axes = std::move(axes);
  return Tensor(node);
}

namespace detail {

Shape DynamicBox::shape() const {
  Shape s = extents;
  for (const auto &[axis, k] : at)
    s[static_cast<size_t>(axis)] = 1;
  for (const Span &span : spans)
    s[static_cast<size_t>(span.axis)] = span.extent;
  return s;
}

DynamicBox wholeBox(const Shape &shape) {
  return {
      std::vector<int64_t>(shape.size(), 0), std::vector<int64_t>(shape.size(), 1), shape, {}, {}};
}

namespace {
/// The Slice or SliceUpdate node of `box` over x: operands, then axes as the
/// DynamicBox's comment says.
NodePtr boxNode(Op op, const NodePtr &x, const DynamicBox &box, std::vector<NodePtr> args) {
  const size_t rank = x->shape.size();
  if (box.offsets.size() != rank || box.steps.size() != rank || box.extents.size() != rank)
    fail(op,
         "internal: a box of rank " + std::to_string(box.offsets.size()) + " for " + describe(x));
  for (size_t i = 0; i < rank; ++i)
    if (box.offsets[i] < 0 || box.steps[i] < 1 || box.extents[i] < 0 ||
        (box.extents[i] == 0 ? box.offsets[i] > x->shape[i]
                             : box.offsets[i] + (box.extents[i] - 1) * box.steps[i] >= x->shape[i]))
      fail(op, "internal: the box leaves " + describe(x) + " on axis " + std::to_string(i));
  std::vector<int64_t> axes = box.offsets;
  axes.insert(axes.end(), box.steps.begin(), box.steps.end());
  for (const auto &[axis, k] : box.at) {
    NodePtr p = nodeOf(k, opName(op));
    if (!p->shape.empty() || !isInteger(p->dtype))
      fail(op, "a traced position must be a 0-d integer, got " + describe(p), ErrorKind::Type);
    if (axis < 0 || axis >= static_cast<int64_t>(rank))
      fail(op, "internal: position on axis " + std::to_string(axis) + " of " + describe(x));
    axes.insert(axes.end(), {axis, box.extents[static_cast<size_t>(axis)]});
    args.push_back(p);
  }
  // Spans: (axis, extent) each after the positions'; their starts, then
  // their sizes, after the positions' operands.
  for (const DynamicBox::Span &span : box.spans) {
    if (span.axis < 0 || span.axis >= static_cast<int64_t>(rank) ||
        box.steps[static_cast<size_t>(span.axis)] != 1)
      fail(op, "internal: a span on axis " + std::to_string(span.axis) + " of " + describe(x));
    axes.insert(axes.end(), {span.axis, span.extent});
  }
  for (const DynamicBox::Span &span : box.spans)
    args.push_back(span.start.node());
  for (const DynamicBox::Span &span : box.spans)
    args.push_back(span.size.node());
  auto node = makeNode(op, op == Op::Slice ? box.shape() : x->shape, x->dtype, std::move(args));
  node->axes = std::move(axes);
  node->index = static_cast<int64_t>(box.spans.size());
  return node;
}
} // namespace

Tensor dynamicSlice(const Tensor &t, const DynamicBox &box) {
  NodePtr x = nodeOf(t, "slice");
  return Tensor(boxNode(Op::Slice, x, box, {x}));
}

Tensor dynamicSliceUpdate(const Tensor &t, const DynamicBox &box, const Tensor &value) {
  NodePtr x = nodeOf(t, "slice_update"), v = nodeOf(value, "slice_update");
  if (x->weak)
    fail(Op::SliceUpdate, "the target must be a tensor, got " + describe(x));
  if (v->shape != box.shape() || v->dtype != x->dtype)
    fail(Op::SliceUpdate, "internal: a value " + describe(v) + " for a box of shape " +
                              shapeString(box.shape()) + " of " + describe(x));
  return Tensor(boxNode(Op::SliceUpdate, x, box, {x, v}));
}

} // namespace detail

Tensor broadcastTo(const Tensor &t, const Shape &shape) {
  NodePtr x = nodeOf(t, "broadcast_to");
  if (x->shape.size() > shape.size() || detail::broadcastShapes({x->shape, shape}) != shape)
    fail(Op::Broadcast, // NumPy's np.broadcast_to message
         "operands could not be broadcast together with remapped shapes [original->remapped]: " +
             shapeString(x->shape) + " and requested shape " + shapeString(shape));
  for (int64_t d : shape)
    if (d < 0 && !detail::isSymbolic(d))
      fail(Op::Broadcast, "dimensions must be non-negative, got shape " + shapeString(shape));
  if (x->weak)
    x = convert(x, x->dtype);
  if (x->shape == shape)
    return Tensor(x);
  return Tensor(makeNode(Op::Broadcast, shape, x->dtype, {x}));
}

Tensor bitcast(const Tensor &t, DType dtype) {
  NodePtr x = nodeOf(t, "bitcast");
  auto plain = [](DType d) { return d != DType::b8 && d != DType::f16 && !isComplex(d); };
  if (x->weak || dtypeSize(x->dtype) != dtypeSize(dtype) || !plain(x->dtype) || !plain(dtype))
    fail(Op::Bitcast,
         "reinterprets tensors as a dtype of the same size (not bool, float16 or complex), got " +
             describe(x) + " to " + dtypeName(dtype));
  if (x->dtype == dtype)
    return t;
  if (isInteger(x->dtype) && isInteger(dtype)) // two's complement: the wrapping cast
    return cast(t, dtype);
  return Tensor(makeNode(Op::Bitcast, x->shape, dtype, {x}));
}

Tensor full(const Shape &shape, double value, DType dtype) {
  return broadcastTo(ScalarType{dtype}(value), shape);
}

Tensor reshape(const Tensor &t, const Shape &requested) {
  NodePtr x = nodeOf(t, "reshape");
  if (detail::hasSymbolic(x->shape) || detail::hasSymbolic(requested)) {
    // A size known only when the kernel runs: unit axes added or dropped.
    auto nonUnit = [](const Shape &s) {
      Shape out;
      for (int64_t d : s)
        if (d != 1)
          out.push_back(d);
      return out;
    };
    if (nonUnit(x->shape) != nonUnit(requested))
      fail(Op::Reshape, "cannot reshape an array whose size is known only when the kernel runs "
                        "(a slice with traced bounds) other than by adding or dropping axes of "
                        "length 1");
    if (requested == x->shape)
      return t;
    return Tensor(makeNode(Op::Reshape, requested, x->dtype, {x}));
  }
  Shape shape = requested;
  int64_t known = 1, unknown = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && unknown < 0) {
      unknown = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      fail(Op::Reshape, "cannot reshape " + shapeString(x->shape) + " to " +
                            shapeString(requested) +
                            ": dimensions must be non-negative (one may be -1)");
    } else {
      known *= shape[i];
    }
  }
  int64_t total = numElements(x->shape);
  if (unknown >= 0) {
    if (known == 0 || total % known != 0)
      fail(Op::Reshape,
           "cannot reshape " + shapeString(x->shape) + " to " + shapeString(requested));
    shape[unknown] = total / known;
  }
  if (numElements(shape) != total)
    fail(Op::Reshape, "cannot reshape " + shapeString(x->shape) + " (" + std::to_string(total) +
                          " elements) to " + shapeString(requested) + " (" +
                          std::to_string(numElements(shape)) + " elements)");
  if (shape == x->shape)
    return t;
  return Tensor(makeNode(Op::Reshape, shape, x->dtype, {x}));
}

Tensor flip(const Tensor &t, const Axes &axes) {
  NodePtr x = nodeOf(t, "flip");
  std::vector<int64_t> sorted;
  if (!axes.list)
    for (size_t a = 0; a < x->shape.size(); ++a)
      sorted.push_back(static_cast<int64_t>(a));
  for (int64_t a : axes.list.value_or(std::vector<int64_t>{}))
    sorted.push_back(normalizeAxis("flip", a, x->shape));
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    fail(Op::Flip, "repeated axis in " + shapeString(*axes.list));
  if (sorted.empty())
    return t;
  auto node = makeNode(Op::Flip, x->shape, x->dtype, {x});
  node->axes = std::move(sorted);
  return Tensor(node);
}

Tensor transpose(const Tensor &t, const std::vector<int64_t> &perm) {
  NodePtr x = nodeOf(t, "transpose");
  size_t rank = x->shape.size();
  std::vector<int64_t> seen(rank, 0);
  auto bad = [&] {
    std::string p = "(";
    for (size_t i = 0; i < perm.size(); ++i)
      p += (i ? ", " : "") + std::to_string(perm[i]);
    fail(Op::Transpose, "permutation " + p + ") is not a permutation of the axes of shape " +
                            shapeString(x->shape));
  };
  if (perm.size() != rank)
    bad();
  std::vector<int64_t> axes;
  Shape shape;
  for (int64_t p : perm) {
    if (p < -static_cast<int64_t>(rank) || p >= static_cast<int64_t>(rank))
      bad();
    int64_t a = p < 0 ? p + static_cast<int64_t>(rank) : p;
    if (seen[a]++)
      bad();
    axes.push_back(a);
    shape.push_back(x->shape[a]);
  }
  bool identity = true;
  for (size_t i = 0; i < rank; ++i)
    identity = identity && axes[i] == static_cast<int64_t>(i);
  if (identity)
    return t;
  auto node = makeNode(Op::Transpose, shape, x->dtype, {x});
  node->axes = axes;
  return Tensor(node);
}

Tensor concatenate(const std::vector<Tensor> &parts, int64_t axis) {
  if (parts.empty())
    fail(Op::Concat, "needs at least one tensor");
  std::vector<NodePtr> nodes;
  for (const Tensor &p : parts) {
    nodes.push_back(nodeOf(p, "concatenate"));
    if (nodes.back()->weak || nodes.back()->shape.empty())
      fail(Op::Concat, "operands must have rank 1 or more, got " + describe(nodes.back()));
  }
  const Shape &first = nodes[0]->shape;
  int64_t a = normalizeAxis("concatenate", axis, first);
  Shape shape = first;
  shape[a] = 0;
  DType dtype = nodes[0]->dtype;
  for (const NodePtr &n : nodes) {
    bool same = n->shape.size() == first.size();
    for (size_t i = 0; same && i < first.size(); ++i)
      same = static_cast<int64_t>(i) == a || n->shape[i] == first[i];
    if (!same)
      fail(Op::Concat, "shapes " + shapeString(first) + " and " + shapeString(n->shape) +
                           " differ outside axis " + std::to_string(axis));
    shape[a] += n->shape[a];
    dtype = promote(dtype, n->dtype);
  }
  if (nodes.size() == 1)
    return parts[0];
  // Bufferization's analysis of one chain of n slice insertions takes about
  // n^3 steps (100 parts: 3.4 s, 200: minutes): more parts concatenate in
  // groups of kGroup first (promotion is associative: the same values).
  constexpr size_t kGroup = 16;
  if (parts.size() > kGroup) {
    std::vector<Tensor> groups;
    for (size_t i = 0; i < parts.size(); i += kGroup)
      groups.push_back(
          concatenate(std::vector<Tensor>(parts.begin() + i,
                                          parts.begin() + std::min(parts.size(), i + kGroup)),
                      axis));
    return concatenate(groups, axis);
  }
  std::vector<NodePtr> args;
  for (const NodePtr &n : nodes)
    args.push_back(convert(n, dtype));
  auto node = makeNode(Op::Concat, shape, dtype, std::move(args));
  node->axes = {a};
  return Tensor(node);
}

std::vector<Tensor> split(const Tensor &t, int64_t sections, int64_t axis) {
  NodePtr x = nodeOf(t, "split");
  int64_t a = normalizeAxis("split", axis, x->shape);
  if (sections <= 0 || x->shape[a] % sections != 0)
    fail("split", "axis " + std::to_string(axis) + " of shape " + shapeString(x->shape) +
                      " cannot be split into " + std::to_string(sections) + " equal sections");
  int64_t step = x->shape[a] / sections;
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < sections; ++i) {
    std::vector<int64_t> begin(a + 1, 0), end(x->shape.begin(), x->shape.begin() + a + 1);
    begin[a] = i * step;
    end[a] = (i + 1) * step;
    parts.push_back(slice(t, begin, end));
  }
  return parts;
}

Tensor gather(const Tensor &table, const Tensor &ids) {
  NodePtr x = nodeOf(table, "gather"), i = nodeOf(ids, "gather");
  if (x->shape.size() != 2 || i->shape.size() != 1)
    fail(Op::Gather, "needs a rank-2 table and rank-1 ids: table " + shapeString(x->shape) +
                         ", ids " + shapeString(i->shape));
  if (!isInteger(i->dtype))
    fail(Op::Gather, "ids must be integers, got " + describe(i), ErrorKind::Type);
  if (x->weak)
    fail(Op::Gather, "the table must be a tensor");
  return Tensor(makeNode(Op::Gather, {i->shape[0], x->shape[1]}, x->dtype, {x, i}));
}

Tensor indexPut(const Tensor &a, const std::vector<std::optional<Tensor>> &index,
                const Tensor &values) {
  NodePtr x = nodeOf(a, "index_put"), v = nodeOf(values, "index_put");
  if (x->weak || x->shape.empty())
    fail(Op::IndexPut, "the target must be a tensor of rank 1 or more, got " + describe(x));
  if (index.size() > x->shape.size())
    fail(Op::IndexPut,
         std::to_string(index.size()) + " indices for shape " + shapeString(x->shape));
  std::vector<NodePtr> args{x, nullptr};
  std::vector<int64_t> axes;
  Shape whole; // the shape of the axes taken whole
  int64_t rows = -1;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    if (d >= index.size() || !index[d]) {
      whole.push_back(x->shape[d]);
      continue;
    }
    NodePtr i = nodeOf(*index[d], "index_put");
    if (i->dtype != DType::i32 || i->shape.size() != 1 || i->weak)
      fail(Op::IndexPut, "the index of axis " + std::to_string(d) +
                             " must be a rank-1 int32 tensor, got " + describe(i));
    if (rows >= 0 && i->shape[0] != rows)
      fail(Op::IndexPut, "indices of different lengths: " + std::to_string(rows) + " and " +
                             std::to_string(i->shape[0]) + " (axis " + std::to_string(d) + ")");
    rows = i->shape[0];
    axes.push_back(static_cast<int64_t>(d));
    args.push_back(i);
  }
  if (axes.empty())
    fail(Op::IndexPut, "needs at least one index tensor");
  // NumPy puts R first when the indexed axes are not adjacent.
  const bool adjacent = axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  Shape expected(whole);
  const size_t at = adjacent ? static_cast<size_t>(axes.front()) : 0;
  expected.insert(expected.begin() + static_cast<std::ptrdiff_t>(at), rows);
  if (v->shape != expected)
    fail(Op::IndexPut, "values of shape " + shapeString(v->shape) + " for " + std::to_string(rows) +
                           " positions of " + shapeString(x->shape) + ": expected " +
                           shapeString(expected));
  args[1] = convert(v, x->dtype);
  auto node = makeNode(Op::IndexPut, x->shape, x->dtype, std::move(args));
  node->axes = std::move(axes);
  return Tensor(node);
}

namespace {
Tensor triangle(Op op, const Tensor &x, int64_t k) {
  if (x.rank() == 0) // NumPy's tri(*m.shape[-2:]) of no dimensions
    fail(op, "tri() missing 1 required positional argument: 'N'", ErrorKind::Type);
  if (x.rank() == 1) // NumPy's mask (n, n) broadcasts x's one row to every row
    return triangle(op, broadcastTo(x, {x.shape()[0], x.shape()[0]}), k);
  NodePtr a = nodeOf(x, opName(op));
  auto node = makeNode(op, a->shape, a->dtype, {a});
  node->axes = {k};
  return Tensor(node);
}
} // namespace

Tensor triu(const Tensor &x, int64_t k) { return triangle(Op::Triu, x, k); }
Tensor tril(const Tensor &x, int64_t k) { return triangle(Op::Tril, x, k); }

bool sameValue(const Tensor &a, const Tensor &b) {
  // Structural equality, iterative: nodes compare equal when their ops,
  // types and attributes are equal and their arguments are the same values.
  std::vector<std::pair<const Node *, const Node *>> stack;
  if (a.valid() && b.valid())
    stack.emplace_back(a.node().get(), b.node().get());
  else
    return a.valid() == b.valid();
  std::set<std::pair<const Node *, const Node *>> equal;
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    if (x == y || equal.contains({x, y}))
      continue;
    if (x->op != y->op || x->shape != y->shape || x->dtype != y->dtype ||
        x->args.size() != y->args.size() || x->axes != y->axes || x->weak != y->weak ||
        x->integral != y->integral || x->wide != y->wide || x->op == Op::Argument ||
        x->op == Op::Loop || x->op == Op::LoopParam ||
        (x->op == Op::Scalar && x->integer != y->integer) ||
        (x->op == Op::Scalar &&
         !(x->scalar == y->scalar || (std::isnan(x->scalar) && std::isnan(y->scalar)))) ||
        (x->op == Op::Constant && x->constant.data() != y->constant.data()))
      return false;
    equal.emplace(x, y);
    for (size_t i = 0; i < x->args.size(); ++i)
      stack.emplace_back(x->args[i].get(), y->args[i].get());
  }
  return true;
}

// --- Tracing state ---
namespace detail {

namespace {
thread_local int traceDepth = 0;
} // namespace

bool tracing() { return traceDepth > 0; }

TraceScope::TraceScope() { ++traceDepth; }
TraceScope::~TraceScope() {
  if (--traceDepth == 0)
    forgetSymbolicExtents();
}

Tensor placeholder(int64_t index, const Shape &shape, DType dtype) {
  auto node = makeNode(Op::Argument, shape, dtype);
  node->index = index;
  return Tensor(node);
}

} // namespace detail

} // namespace tinymlir
