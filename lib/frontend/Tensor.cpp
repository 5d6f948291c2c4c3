// Type rules of the frontend: shapes, broadcasting, NumPy 2 promotion.
#include "frontend/Graph.h"

#include <tinymlir/tensor.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>

namespace tinymlir {
using detail::fail;
using detail::IntPolicy;
using detail::kWideInteger;
using detail::makeNode;
using detail::Node;
using detail::NodePtr;
using detail::opInfo;
using detail::strongDType;

const char *opName(Op op) {
  switch (op) {
#define TINYMLIR_OP(Name, spelling, ...)                                                           \
  case Op::Name:                                                                                   \
    return spelling;
#include <tinymlir/ops.def>
  }
  return "?";
}

namespace {

const NodePtr &nodeOf(const Tensor &t, const char *op) {
  if (!t.valid())
    fail(op, "operand is an invalid (default-constructed) Tensor");
  return t.node();
}

std::string describe(const NodePtr &n) {
  return std::string(dtypeName(n->dtype)) + " " + shapeString(n->shape);
}

DType complexOf(DType real) { return real == DType::f64 ? DType::c128 : DType::c64; }

/// The smallest float type that holds every value of an integer type (or bool)
/// exactly, as NumPy's promotion picks it: float16 for 8 bits, float32 for 16,
/// else float64 (int64 and uint64 included, by convention).
DType floatFor(DType integer) {
  size_t bytes = integer == DType::b8 ? 1 : dtypeSize(integer);
  return bytes == 1 ? DType::f16 : bytes == 2 ? DType::f32 : DType::f64;
}

DType integerOf(bool isSigned, size_t bytes) {
  switch (bytes) {
  case 1:
    return isSigned ? DType::i8 : DType::u8;
  case 2:
    return isSigned ? DType::i16 : DType::u16;
  case 4:
    return isSigned ? DType::i32 : DType::u32;
  default:
    return isSigned ? DType::i64 : DType::u64;
  }
}

/// NumPy 2 (NEP 50) promotion of two strong dtypes: the smallest type that
/// holds both, with uint64 and a signed integer giving float64, and an
/// integer with a float the float that holds the integer (int32 + float32 is
/// float64; int8 + float16 is float16).
DType promote(DType a, DType b) {
  if (a == b)
    return a;
  if (a == DType::b8 || b == DType::b8) // bool with anything: the other
    return a == DType::b8 ? b : a;
  if (isComplex(a) || isComplex(b)) {
    DType ra = isInteger(a) ? floatFor(a) : realPart(a),
          rb = isInteger(b) ? floatFor(b) : realPart(b);
    return complexOf(promote(ra, rb));
  }
  if (isFloat(a) && isFloat(b))
    return dtypeSize(a) > dtypeSize(b) ? a : b;
  if (isFloat(a) || isFloat(b)) {
    DType f = isFloat(a) ? a : b, i = isFloat(a) ? b : a;
    return promote(f, floatFor(i));
  }
  // Two integers.
  if (isUnsigned(a) == isUnsigned(b))
    return dtypeSize(a) > dtypeSize(b) ? a : b;
  DType u = isUnsigned(a) ? a : b, s = isUnsigned(a) ? b : a;
  if (dtypeSize(s) > dtypeSize(u))
    return s;
  return dtypeSize(u) == 8 ? DType::f64 : integerOf(true, 2 * dtypeSize(u));
}

} // namespace

DType detail::promoteTypes(DType a, DType b) { return promote(a, b); }

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

Casting castingNamed(std::string_view name) {
  static constexpr std::pair<std::string_view, Casting> kNames[] = {
      {"no", Casting::No},
      {"equiv", Casting::Equiv},
      {"safe", Casting::Safe},
      {"same_kind", Casting::SameKind},
      {"unsafe", Casting::Unsafe}};
  for (const auto &[spelling, casting] : kNames)
    if (spelling == name)
      return casting;
  throw Error("casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe' (got '" +
                  std::string(name) + "')",
              ErrorKind::Value);
}

bool canCast(DType from, DType to, Casting casting) {
  // NumPy's kinds in order: bool < unsigned < signed < float < complex.
  auto order = [](DType d) {
    switch (dtypeKind(d)) {
    case DTypeKind::Bool:
      return 0;
    case DTypeKind::Unsigned:
      return 1;
    case DTypeKind::Signed:
      return 2;
    case DTypeKind::Float:
      return 3;
    default:
      return 4;
    }
  };
  switch (casting) {
  case Casting::No:
  case Casting::Equiv:
    return from == to;
  case Casting::Safe:
    return promote(from, to) == to; // `to` holds every value of `from`
  case Casting::SameKind:
    return promote(from, to) == to || order(from) <= order(to);
  case Casting::Unsafe:
    return true;
  }
  return false;
}

namespace {

/// The dtype a weak scalar (a Python number) takes next to a tensor of dtype
/// `other`, as NEP 50: the tensor's kind wins unless the number's kind is
/// higher (a float with integers: float64; a complex with floats: the complex
/// type of the float's size).
DType resolveWeak(const Node &weak, DType other) {
  if (weak.weakComplex)
    return isComplex(other) ? other
           : isFloat(other) ? complexOf(other == DType::f64 ? other : DType::f32)
                            : DType::c128;
  if (weak.integral || isFloat(other) || isComplex(other))
    return other;
  return DType::f64; // a float literal with an integer or bool tensor
}

Shape broadcastShapes(Op op, const Shape &a, const Shape &b) {
  if (std::optional<Shape> out = detail::broadcastShapes({a, b}))
    return *out;
  fail(op, "cannot broadcast shapes " + shapeString(a) + " and " + shapeString(b));
}

/// Whether the integer value v (held exactly in a double) is in dtype's range.
bool fitsInteger(double v, DType dtype) {
  const double bits = 8.0 * static_cast<double>(dtypeSize(dtype));
  const double lo = isUnsigned(dtype) ? 0.0 : -std::ldexp(1.0, static_cast<int>(bits) - 1);
  const double hi = isUnsigned(dtype) ? std::ldexp(1.0, static_cast<int>(bits))
                                      : std::ldexp(1.0, static_cast<int>(bits) - 1);
  return v >= lo && v < hi;
}

/// Whether a scalar holds an exact integer (Node::integer).
bool holdsInteger(const Node &n) {
  return n.op == Op::Scalar && (isInteger(n.dtype) || (n.weak && n.integral));
}

std::string integerText(const Node &n) {
  return n.dtype == DType::u64 ? std::to_string(static_cast<uint64_t>(n.integer))
                               : std::to_string(n.integer);
}

/// Whether the exact integer scalar `n` is in the range of `to`.
bool fitsInteger(const Node &n, DType to) {
  const int bits = 8 * static_cast<int>(dtypeSize(to));
  const uint64_t top = isUnsigned(to) ? (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1)
                                      : (uint64_t{1} << (bits - 1)) - 1;
  if (n.dtype == DType::u64)
    return static_cast<uint64_t>(n.integer) <= top;
  if (n.integer < 0)
    return !isUnsigned(to) && (bits == 64 || n.integer >= -(int64_t{1} << (bits - 1)));
  return static_cast<uint64_t>(n.integer) <= top;
}

/// The bits of an integer wrapped to the width of `to`, as NumPy's integer
/// casts wrap: truncated, then sign- or zero-extended.
int64_t wrapInteger(int64_t value, DType to) {
  const int width = 8 * static_cast<int>(dtypeSize(to));
  auto bits = static_cast<uint64_t>(value);
  if (width < 64) {
    const uint64_t mask = (uint64_t{1} << width) - 1;
    bits &= mask;
    if (!isUnsigned(to) && ((bits >> (width - 1)) & 1))
      bits |= ~mask;
  }
  return static_cast<int64_t>(bits);
}

/// An integer converted to a float dtype with one rounding (int64 to float32
/// directly, not through a double), as NumPy's casts.
template <class I> double integerToFloat(I v, DType to) {
  if (to == DType::f32 || to == DType::c64)
    return static_cast<double>(static_cast<float>(v));
  if (to == DType::f16)
    return static_cast<double>(static_cast<_Float16>(static_cast<float>(v)));
  return static_cast<double>(v);
}

/// A scalar of dtype `from` as the value NumPy's cast to `to` gives, held in a
/// double: rounded to float32/float16, wrapped to the integer's width, 0 or 1.
double roundScalar(double v, DType from, DType to) {
  if (to == DType::b8)
    return v != 0 ? 1.0 : 0.0;
  if (to == DType::f32 || to == DType::c64)
    return static_cast<double>(static_cast<float>(v));
  if (to == DType::f16)
    return static_cast<double>(static_cast<_Float16>(v));
  if (isInteger(to)) {
    if (!isInteger(from) && from != DType::b8)
      v = std::trunc(v);
    if (fitsInteger(v, to) || !std::isfinite(v))
      return std::isfinite(v) ? v : 0.0;
    const double span = std::ldexp(1.0, 8 * static_cast<int>(dtypeSize(to)));
    double w = std::fmod(v, span); // wraps, as NumPy's casts of integers
    if (w < 0)
      w += span;
    if (!isUnsigned(to) && w >= span / 2)
      w -= span;
    return w;
  }
  return v;
}

/// `n` converted to `dtype` for operation `op`: a Cast node, or a re-typed
/// scalar. A Python integer beyond int32 fails where it meets int32, as in
/// NumPy 2 (a float operand takes it as a float).
NodePtr convert(const NodePtr &n, DType dtype, const char *op = "cast", bool checkRange = true) {
  if (n->wide && isInteger(dtype))
    fail(op, kWideInteger, ErrorKind::Overflow);
  if (checkRange && n->weak && n->integral && isInteger(dtype) && !fitsInteger(*n, dtype))
    fail(op, "Python integer " + integerText(*n) + " out of bounds for " + dtypeName(dtype),
         ErrorKind::Overflow);
  if (n->op == Op::Scalar && (n->weak || n->dtype != dtype)) {
    auto s = makeNode(Op::Scalar, {}, dtype);
    if (holdsInteger(*n)) { // exact: wrapped in integers, rounded once to floats
      if (dtype == DType::b8)
        s->scalar = n->integer != 0 ? 1.0 : 0.0;
      else if (isInteger(dtype)) {
        s->integer = wrapInteger(n->integer, dtype);
        s->scalar = dtype == DType::u64 ? static_cast<double>(static_cast<uint64_t>(s->integer))
                                        : static_cast<double>(s->integer);
      } else
        s->scalar = n->dtype == DType::u64
                        ? integerToFloat(static_cast<uint64_t>(n->integer), realPart(dtype))
                        : integerToFloat(n->integer, realPart(dtype));
      return s;
    }
    s->scalar = dtype == DType::b8 ? (n->scalar != 0 || n->imag != 0 ? 1.0 : 0.0) // either part
                                   : roundScalar(n->scalar, n->dtype, dtype);
    s->imag = isComplex(dtype) ? roundScalar(n->imag, DType::f64, realPart(dtype)) : 0;
    if (isInteger(dtype)) // in range after roundScalar's wrap
      s->integer = dtype == DType::u64 ? static_cast<int64_t>(static_cast<uint64_t>(s->scalar))
                                       : static_cast<int64_t>(s->scalar);
    return s;
  }
  if (n->dtype == dtype)
    return n;
  return makeNode(Op::Cast, n->shape, dtype, {n});
}

/// The dtype two operands of `op` are computed in (NEP 50: a weak scalar
/// takes the other side's dtype unless its kind is higher). Arithmetic on two
/// bools is refused: NumPy's results are logical operations or errors.
DType operandDType(Op op, const NodePtr &x, const NodePtr &y) {
  DType dx = x->dtype, dy = y->dtype;
  if (x->weak && y->weak) // two Python numbers: int64, float64 or complex128
    return promote(strongDType(*x), strongDType(*y));
  const Node *weak = x->weak ? x.get() : y->weak ? y.get() : nullptr;
  const DType strong = x->weak ? dy : dx;
  // A Python int beyond 64 bits: a float beside floats; NumPy 2 compares it
  // with integers exactly (in float64 here), and other operations fail.
  if (weak && weak->wide && !isFloat(strong) && !isComplex(strong)) {
    if (detail::opInfo(op).kind == detail::OpKind::Compare)
      return DType::f64;
    fail(op, kWideInteger, ErrorKind::Overflow);
  }
  if (weak && strong == DType::b8 && weak->integral) // a bool tensor with a Python int: int64
    return DType::i64;
  if (x->weak)
    dx = resolveWeak(*x, dy);
  else if (y->weak)
    dy = resolveWeak(*y, dx);
  if (dx == DType::b8 && dy == DType::b8) {
    if (op == Op::Sub)
      fail(op,
           "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, "
           "the `^` operator, or the logical_xor function instead.",
           ErrorKind::Type);
    // NumPy's bool loops of these are int8 ones (np.power(True, True) is int8).
    if (op == Op::FloorDiv || op == Op::Mod || op == Op::Fmod || op == Op::Pow ||
        op == Op::LeftShift || op == Op::RightShift)
      return DType::i8;
  }
  return promote(dx, dy);
}

/// What NumPy's integer (and bool) operands of `op` become: themselves, the
/// float type that holds them (np.exp(int8) is float16, of int32 float64),
/// float64 (true division), or a TypeError.
DType applyIntPolicy(Op op, DType dtype, const std::string &operands) {
  if (isFloat(dtype) || isComplex(dtype)) {
    if (opInfo(op).ints == IntPolicy::IntOnly)
      fail(op, "not supported for " + operands + " (NumPy's ufunc takes integers and bools only)",
           ErrorKind::Type);
    if (isComplex(dtype) && !opInfo(op).complex)
      fail(op, "is not supported for complex operands (" + operands + ")", ErrorKind::Type);
    return dtype;
  }
  switch (opInfo(op).ints) {
  case IntPolicy::ToFloat:
    return floatFor(dtype);
  case IntPolicy::ToFloat64:
    return DType::f64;
  case IntPolicy::FloatOnly:
    fail(op, "requires floating-point operands, got " + operands + "; cast to a float type first",
         ErrorKind::Type);
  case IntPolicy::Keep:
  case IntPolicy::IntOnly:
    break;
  }
  return dtype;
}

Tensor binary(Op op, const Tensor &a, const Tensor &b) {
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

int64_t normalizeAxis(const char *op, int64_t axis, const Shape &shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < -rank || axis >= rank)
    fail(op, // NumPy's AxisError
         "axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
             std::to_string(rank),
         ErrorKind::Axis);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> reducedAxes(const char *op, const Axes &axes, const Shape &shape) {
  if (axes.list)
    for (int64_t a : *axes.list)
      normalizeAxis(op, a, shape); // names the shape
  return normalizeAxes(op, axes, static_cast<int64_t>(shape.size()));
}

Shape removedAxes(const Shape &shape, const std::vector<int64_t> &axes) {
  Shape out;
  for (size_t a = 0; a < shape.size(); ++a)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(a)) == axes.end())
      out.push_back(shape[a]);
  return out;
}

Shape keptShape(const Shape &shape, const std::vector<int64_t> &axes) {
  Shape kept = shape;
  for (int64_t a : axes)
    kept[a] = 1;
  return kept;
}

/// Sum or Max over `axes`, then a reshape for keepdims.
int64_t reducedCount(const Shape &shape, const std::vector<int64_t> &axes) {
  int64_t count = 1;
  for (int64_t a : axes)
    count *= shape[a];
  return count;
}

Tensor complexExtreme(Op op, const Tensor &x, std::optional<int64_t> axis, bool keepdims);

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
  if (numElements(x->shape) == 0) { // NumPy: the identity, or an error where there is none
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

Tensor ScalarType::operator()(double value) const {
  return Tensor(convert(nodeOf(weakScalar(value, false), "scalar"), dtype));
}
Tensor ScalarType::integer(int64_t value) const {
  return Tensor(convert(nodeOf(weakInteger(value), "scalar"), dtype));
}
Tensor ScalarType::integer(uint64_t value) const {
  return Tensor(convert(nodeOf(weakUnsigned(value), "scalar"), dtype));
}

Tensor weakScalar(double value, bool integral) {
  if (integral) {
    if (!(std::abs(value) <= 9007199254740992.0) || std::trunc(value) != value)
      fail(Op::Scalar, "an integral weak scalar must be an integer up to 2^53 in magnitude, got " +
                           std::to_string(value) + " (use weakInteger for 64 bits)");
    return weakInteger(static_cast<int64_t>(value));
  }
  auto node = makeNode(Op::Scalar, {}, DType::f64);
  node->weak = true;
  node->scalar = value;
  return Tensor(node);
}

namespace {
/// A weak integer scalar: its exact bits, read as `dtype` (int64, or uint64
/// beyond INT64_MAX), and the nearest double.
Tensor weakIntegerScalar(DType dtype, int64_t bits, double value) {
  auto node = makeNode(Op::Scalar, {}, dtype);
  node->weak = true;
  node->integral = true;
  node->integer = bits;
  node->scalar = value;
  return Tensor(node);
}
} // namespace

Tensor weakInteger(int64_t value) {
  return weakIntegerScalar(DType::i64, value, static_cast<double>(value));
}

Tensor weakUnsigned(uint64_t value) {
  if (value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return weakInteger(static_cast<int64_t>(value));
  return weakIntegerScalar(DType::u64, static_cast<int64_t>(value), static_cast<double>(value));
}

Tensor weakWideInteger(double value) {
  auto node = makeNode(Op::Scalar, {}, DType::f64);
  node->weak = true;
  node->wide = true;
  node->scalar = value;
  return Tensor(node);
}

Tensor weakComplexScalar(double real, double imag) {
  auto node = makeNode(Op::Scalar, {}, DType::c128);
  node->weak = true;
  node->weakComplex = true;
  node->scalar = real;
  node->imag = imag;
  return Tensor(node);
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
  int64_t count = reducedCount(n->shape, reducedAxes("mean", axis, n->shape));
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
  return s;
}

DynamicBox wholeBox(const Shape &shape) {
  return {std::vector<int64_t>(shape.size(), 0), std::vector<int64_t>(shape.size(), 1), shape, {}};
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
  auto node = makeNode(op, op == Op::Slice ? box.shape() : x->shape, x->dtype, std::move(args));
  node->axes = std::move(axes);
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
    if (d < 0)
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

// --- Row kernels ----------------------------------------------------------------

namespace {

/// x with `axis` moved last and the others flattened: (rows, n); `restore`
/// takes a (rows, m) result back to x's layout with that axis of size m.
struct Rows {
  Tensor rows;
  Shape moved;               // x's shape with the axis last
  std::vector<int64_t> perm; // x's axes in `moved` order

  Tensor restore(const Tensor &r, int64_t m) const {
    Shape shape = moved;
    shape.back() = m;
    Tensor t = reshape(r, shape);
    if (perm.empty())
      return t;
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    return transpose(t, inverse);
  }
};

Rows rowsAlong(const char *op, const Tensor &x, int64_t axis) {
  const Shape &shape = nodeOf(x, op)->shape;
  if (shape.empty())
    fail(op, "axis " + std::to_string(axis) + " is out of bounds for array of dimension 0",
         ErrorKind::Index);
  const int64_t a = normalizeAxis(op, axis, shape), rank = static_cast<int64_t>(shape.size());
  Rows r;
  Tensor t = x;
  if (a != rank - 1) {
    for (int64_t i = 0; i < rank; ++i)
      if (i != a)
        r.perm.push_back(i);
    r.perm.push_back(a);
    t = transpose(x, r.perm);
  }
  r.moved = nodeOf(t, op)->shape;
  r.rows =
      reshape(t, {numElements(r.moved) / std::max<int64_t>(r.moved.back(), 1), r.moved.back()});
  return r;
}

Tensor rowKernel(Op op, const Tensor &rows, Shape shape, DType dtype, int64_t flag = 0) {
  auto node = makeNode(op, std::move(shape), dtype, {rows.node()});
  node->axes = {flag};
  return Tensor(node);
}

/// The operand of a sort or index search (Python scalars as NumPy's default
/// dtypes; complex numbers are ordered lexicographically by the kernels).
NodePtr orderedOperand(Op op, const Tensor &x) {
  NodePtr n = nodeOf(x, opName(op));
  if (n->weak)
    n = convert(n, n->integral ? DType::i64 : DType::f64, opName(op));
  return n;
}

Tensor sorted(Op op, const Tensor &x, int64_t axis) {
  NodePtr n = orderedOperand(op, x);
  const DType dtype = op == Op::Argsort ? DType::i64 : n->dtype;
  Rows r = rowsAlong(opName(op), Tensor(n), axis);
  const Shape &s = nodeOf(r.rows, opName(op))->shape;
  if (numElements(s) == 0)
    return full(nodeOf(x, opName(op))->shape, 0, dtype);
  return r.restore(rowKernel(op, r.rows, s, dtype), s[1]);
}

Tensor accumulated(Op op, const Tensor &x, std::optional<int64_t> axis,
                   std::optional<DType> dtype = std::nullopt) {
  if (dtype) // in int64 and cast back: a narrower integer wraps as its own sums would
    return cast(accumulated(op, cast(x, *dtype), axis), *dtype);
  NodePtr n = nodeOf(x, opName(op));
  if (n->weak)
    n = convert(n, n->integral ? DType::i64 : DType::f64, opName(op));
  if (isInteger(n->dtype) || n->dtype == DType::b8) // as NumPy's: in int64 or uint64
    n = convert(n, isUnsigned(n->dtype) ? DType::u64 : DType::i64, opName(op));
  Tensor t(n);
  if (!axis || n->shape.empty())
    t = reshape(t, {numElements(n->shape)});
  Rows r = rowsAlong(opName(op), t, axis && !n->shape.empty() ? *axis : 0);
  const Shape &s = nodeOf(r.rows, opName(op))->shape;
  if (numElements(s) == 0)
    return full(nodeOf(t, opName(op))->shape, 0, n->dtype);
  return r.restore(rowKernel(op, r.rows, s, n->dtype), s[1]);
}

/// The position of the largest (Argmax) or smallest (Argmin) element along
/// `axis` (all: flattened), as NumPy's, with `pick` applied to the rows and
/// their (R, 1) positions: the positions themselves, or the elements there.
template <class Pick>
Tensor alongRows(Op op, Op arg, const Tensor &x, std::optional<int64_t> axis, bool keepdims,
                 Pick pick) {
  NodePtr n = orderedOperand(op, x);
  Tensor t(n);
  const Shape shape = n->shape;
  if (shape.empty() && axis && (*axis == 0 || *axis == -1))
    axis.reset(); // NumPy's: axis 0 (or -1) of a rank-0 array is all of it
  if (!axis)
    t = reshape(t, {numElements(shape)});
  Rows r = rowsAlong(opName(op), t, axis ? *axis : 0);
  const Shape &s = nodeOf(r.rows, opName(op))->shape;
  if (s[1] == 0) {
    if (op == arg)
      fail(op, std::string("attempt to get ") + opName(op) + " of an empty sequence");
    fail(op, std::string("zero-size array to reduction operation ") +
                 (op == Op::Max ? "maximum" : "minimum") + " which has no identity");
  }
  Tensor index =
      s[0] == 0 ? full({0, 1}, 0, DType::i64) : rowKernel(arg, r.rows, {s[0], 1}, DType::i64);
  Tensor kept = r.restore(s[0] == 0 ? index : pick(r.rows, index), 1); // the axis kept, size 1
  if (!axis)
    return keepdims ? reshape(kept, Shape(shape.size(), 1)) : reshape(kept, {});
  if (keepdims)
    return kept;
  Shape out = shape;
  out.erase(out.begin() + normalizeAxis(opName(op), *axis, shape));
  return reshape(kept, out);
}

Tensor extremeIndex(Op op, const Tensor &x, std::optional<int64_t> axis, bool keepdims) {
  return alongRows(op, op, x, axis, keepdims, [](const Tensor &, const Tensor &i) { return i; });
}

/// max and min of complex numbers: the element at argmax (argmin), NumPy's
/// lexicographic order, the first nan if there is one.
Tensor complexExtreme(Op op, const Tensor &x, std::optional<int64_t> axis, bool keepdims) {
  const Op arg = op == Op::Max ? Op::Argmax : Op::Argmin;
  return alongRows(op, arg, x, axis, keepdims, [](const Tensor &rows, const Tensor &index) {
    const Shape &s = rows.shape(); // (R, W): element R*W + index of the flattened rows
    Tensor starts = Tensor(Array::arange(s[0], DType::i64)) * weakInteger(s[1]);
    Tensor at = starts + reshape(index, {s[0]});
    return reshape(take(reshape(rows, {s[0] * s[1]}), at), {s[0], 1});
  });
}

} // namespace

Tensor sort(const Tensor &x, std::optional<int64_t> axis) {
  return axis ? sorted(Op::Sort, x, *axis) : sorted(Op::Sort, reshape(x, {-1}), -1);
}
Tensor argsort(const Tensor &x, std::optional<int64_t> axis) {
  return axis ? sorted(Op::Argsort, x, *axis) : sorted(Op::Argsort, reshape(x, {-1}), -1);
}
Tensor cumsum(const Tensor &x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return accumulated(Op::Cumsum, x, axis, dtype);
}
Tensor cumprod(const Tensor &x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return accumulated(Op::Cumprod, x, axis, dtype);
}
namespace {
/// The binary ufuncs whose reduce and accumulate tinymlir traces, by name:
/// the function, the row kernel that accumulates it sequentially as NumPy's
/// loop, NumPy's identity, and the reduction that folds it (none: a tree of
/// the function itself). Without a kernel (Op::Results) the ufunc is
/// exactly associative and commutative, so folding it in any order gives
/// NumPy's result; subtract is a sequential sum of the negated first element
/// and the rest, negated (exact: rounding is symmetric).
struct UfuncFold {
  std::string_view name;
  Tensor (*apply)(const Tensor &, const Tensor &);
  Op scan;
  std::optional<double> identity;
  Tensor (*whole)(const Tensor &, const Axes &, bool) = nullptr;
};
const UfuncFold kUfuncFolds[] = {{"add", add, Op::Cumsum, 0, sum},
                                 {"multiply", multiply, Op::Cumprod, 1, prod},
                                 {"maximum", maximum, Op::Cummax, std::nullopt, max},
                                 {"minimum", minimum, Op::Cummin, std::nullopt, min},
                                 {"logical_and", logical_and, Op::Cummin, 1, all},
                                 {"logical_or", logical_or, Op::Cummax, 0, any},
                                 {"subtract", subtract, Op::Results, std::nullopt},
                                 {"logical_xor", logical_xor, Op::Results, 0},
                                 {"bitwise_and", bitwise_and, Op::Results, -1},
                                 {"bitwise_or", bitwise_or, Op::Results, 0},
                                 {"bitwise_xor", bitwise_xor, Op::Results, 0},
                                 {"fmax", fmax, Op::Results, std::nullopt},
                                 {"fmin", fmin, Op::Results, std::nullopt}};

const UfuncFold &ufuncFold(std::string_view ufunc, std::string_view method) {
  for (const UfuncFold &u : kUfuncFolds)
    if (u.name == ufunc)
      return u;
  std::string names;
  for (const UfuncFold &u : kUfuncFolds)
    names += (names.empty() ? "" : ", ") + std::string(u.name);
  const std::string op = std::string(ufunc) + "." + std::string(method);
  fail(op.c_str(),
       "tinymlir traces the " + std::string(method) + " of " + names + ", not of " +
           std::string(ufunc),
       ErrorKind::Trace);
}

/// x (a normalized axis) in the dtype the ufunc gives for x with itself: its
/// own type check and result (logical_xor of ints is bool).
Tensor inFoldDType(const UfuncFold &u, const Tensor &x) {
  const DType d = u.apply(x, x).dtype(); // a dead node: only its dtype is read
  return x.dtype() == d ? x : cast(x, d);
}

/// subtract.accumulate along `axis`: -cumsum([-x0, x1, x2, ...]), exactly
/// NumPy's ((x0 - x1) - x2) ..., in x's dtype.
Tensor subtractScan(const Tensor &x, int64_t axis) {
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  if (n == 0)
    return x;
  const Tensor first = negative(detail::sliceAlong(x, axis, 0, 1));
  const Tensor all = n > 1 ? concatenate({first, detail::sliceAlong(x, axis, 1, n)}, axis) : first;
  return cast(negative(cumsum(all, axis)), x.dtype());
}

/// The running fold of an associative, commutative ufunc along `axis`:
/// log2(n) rounds, each combining an element with the one `step` before it.
Tensor foldScan(const UfuncFold &u, Tensor x, int64_t axis) {
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  for (int64_t step = 1; step < n; step *= 2)
    x = concatenate(
        {detail::sliceAlong(x, axis, 0, step),
         u.apply(detail::sliceAlong(x, axis, 0, n - step), detail::sliceAlong(x, axis, step, n))},
        axis);
  return x;
}

/// The fold of an associative, commutative ufunc along the last axis, kept
/// (size 1): halves combined, an odd last element first into the first.
Tensor foldLast(const UfuncFold &u, Tensor x) {
  const int64_t axis = static_cast<int64_t>(x.shape().size()) - 1;
  for (int64_t n = x.shape().back(); n > 1; n = x.shape().back()) {
    if (n % 2) {
      const Tensor first =
          u.apply(detail::sliceAlong(x, axis, 0, 1), detail::sliceAlong(x, axis, n - 1, n));
      x = concatenate({first, detail::sliceAlong(x, axis, 1, n - 1)}, axis);
      --n;
    }
    x = u.apply(detail::sliceAlong(x, axis, 0, n / 2), detail::sliceAlong(x, axis, n / 2, n));
  }
  return x;
}
} // namespace

Tensor accumulate(std::string_view ufunc, const Tensor &x, int64_t axis,
                  std::optional<DType> dtype) {
  const UfuncFold &u = ufuncFold(ufunc, "accumulate");
  const bool logical = ufunc.starts_with("logical_");
  Tensor t = logical ? cast(x, DType::b8) : x;
  if (t.rank() == 0)
    fail("accumulate", "cannot accumulate on a scalar", ErrorKind::Type);
  if (u.scan == Op::Cumsum || u.scan == Op::Cumprod)
    return accumulated(u.scan, t, axis, dtype); // cumsum's dtypes
  if (dtype && !logical)
    t = cast(t, *dtype);
  if (u.scan != Op::Results) // maximum and minimum keep x's dtype
    return accumulated(u.scan, t, axis, t.dtype());
  const int64_t a = normalizeAxis("accumulate", axis, t.shape());
  t = inFoldDType(u, t);
  return u.name == "subtract" ? subtractScan(t, a) : foldScan(u, t, a);
}

Tensor reduceUfunc(std::string_view ufunc, const Tensor &x, const Axes &axes, bool keepdims,
                   const Tensor &initial, const Tensor &where) {
  const UfuncFold &u = ufuncFold(ufunc, "reduce");
  const std::string op = std::string(ufunc) + ".reduce";
  const Shape shape = x.shape();
  const std::vector<int64_t> reduced = reducedAxes(op.c_str(), axes, shape); // NumPy's first
  Tensor t = inFoldDType(u, ufunc.starts_with("logical_") ? cast(x, DType::b8) : x);
  const Shape out = keepdims ? keptShape(shape, reduced) : removedAxes(shape, reduced);
  if (u.name == "subtract" && reduced.size() > 1)
    fail(op.c_str(), "reduction operation 'subtract' is not reorderable, so at most one axis may "
                     "be specified");
  if (where.valid()) { // masked elements change nothing: the identity, else initial
    if (!u.identity && !initial.valid()) // (maximum and kin: idempotent), or subtract's 0
      fail(op.c_str(),
           "reduction operation '" + std::string(ufunc) +
               "' does not have an identity, so to use a where mask one has to specify 'initial'");
    const Tensor fill = u.identity             ? ScalarType{t.dtype()}(*u.identity)
                        : u.name == "subtract" ? ScalarType{t.dtype()}(0.0)
                                               : cast(initial, t.dtype());
    t = tinymlir::where(broadcastTo(cast(where, DType::b8), shape), t, fill);
  }
  const int64_t m = reducedCount(shape, reduced);
  const Tensor init = initial.valid() ? cast(initial, t.dtype()) : Tensor();
  if (numElements(out) == 0)
    return full(out, 0, t.dtype());
  if (m == 0) {
    if (init.valid())
      return broadcastTo(init, out);
    if (!u.identity)
      fail(op.c_str(), "zero-size array to reduction operation " + std::string(ufunc) +
                           " which has no identity");
    return full(out, *u.identity, t.dtype());
  }
  if (u.whole) { // its reduction, initial folded in after: the ufunc commutes
    const Tensor r = u.whole(t, reduced, keepdims);
    return init.valid() ? cast(u.apply(r, init), t.dtype()) : r;
  }
  // the reduced axes last, as one: (kept..., m)
  std::vector<int64_t> perm;
  Shape rows = removedAxes(shape, reduced);
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
    if (std::find(reduced.begin(), reduced.end(), i) == reduced.end())
      perm.push_back(i);
  perm.insert(perm.end(), reduced.begin(), reduced.end());
  rows.push_back(m);
  Tensor r = reshape(transpose(t, perm), rows);
  if (init.valid()) { // NumPy's first element
    Shape column = r.shape();
    column.back() = 1;
    r = concatenate({broadcastTo(init, column), r}, -1);
  }
  const int64_t last = static_cast<int64_t>(rows.size()) - 1, n = r.shape().back();
  r = u.name == "subtract" ? detail::sliceAlong(subtractScan(r, last), last, n - 1, n)
                           : foldLast(u, r);
  return reshape(r, out);
}

Tensor reduceAt(std::string_view ufunc, const Tensor &x, const Tensor &indices, int64_t axis,
                std::optional<DType> dtype) {
  const std::string op = std::string(ufunc) + ".reduceat";
  const NodePtr &i = nodeOf(indices, op.c_str());
  if (i->op != Op::Constant ||
      ((isFloat(i->dtype) || isComplex(i->dtype)) && numElements(i->shape) != 0))
    fail(op.c_str(),
         "tinymlir traces " + op +
             " at integer indices known while tracing (the segments "
             "make the result's shape), not " +
             describe(i),
         i->op == Op::Constant ? ErrorKind::Type : ErrorKind::Trace);
  if (i->shape.size() > 1)
    fail(op.c_str(), "setting an array element with a sequence. The requested array would "
                     "exceed the maximum number of dimension of 1.");
  const Tensor t = dtype ? cast(x, *dtype) : x;
  if (t.rank() == 0)
    fail(op.c_str(), "cannot reduceat on a scalar", ErrorKind::Type);
  const int64_t a = normalizeAxis(op.c_str(), axis, t.shape());
  const int64_t n = t.shape()[static_cast<size_t>(a)];
  std::vector<int64_t> at;
  for (double v : i->constant.toDoubles()) {
    const auto k = static_cast<int64_t>(v);
    if (k < 0 || k >= n)
      fail(op.c_str(),
           "index " + std::to_string(k) + " out-of-bounds in " + op + " [0, " + std::to_string(n) +
               ")",
           ErrorKind::Index);
    at.push_back(k);
  }
  // NumPy's: the reduce of [at[k], at[k + 1]) where that is a range, else at[k]'s element
  std::vector<Tensor> parts;
  for (size_t k = 0; k < at.size(); ++k) {
    const int64_t end = k + 1 < at.size() && at[k + 1] > at[k] ? at[k + 1]
                        : k + 1 < at.size()                    ? at[k] + 1
                                                               : n;
    parts.push_back(reduceUfunc(ufunc, detail::sliceAlong(t, a, at[k], end), a, true));
  }
  if (parts.empty()) {
    Shape shape = t.shape();
    shape[static_cast<size_t>(a)] = 0;
    return full(shape, 0, reduceUfunc(ufunc, t, a, true).dtype());
  }
  return concatenate(parts, a);
}
Tensor argmax(const Tensor &x, std::optional<int64_t> axis, bool keepdims) {
  return extremeIndex(Op::Argmax, x, axis, keepdims);
}
Tensor argmin(const Tensor &x, std::optional<int64_t> axis, bool keepdims) {
  return extremeIndex(Op::Argmin, x, axis, keepdims);
}

Tensor searchsorted(const Tensor &sortedValues, const Tensor &values, bool right) {
  NodePtr a = orderedOperand(Op::SearchSorted, sortedValues),
          v = orderedOperand(Op::SearchSorted, values);
  if (a->shape.size() != 1)
    fail(Op::SearchSorted, "the sorted array must be 1-D, got " + describe(a));
  const DType common = promote(a->dtype, v->dtype);
  const Shape out = v->shape;
  const int64_t n = a->shape[0], m = numElements(out);
  if (m == 0 || n == 0)
    return full(out, 0, DType::i64);
  Tensor row = reshape(Tensor(convert(a, common, "searchsorted")), {1, n});
  Tensor vals = reshape(Tensor(convert(v, common, "searchsorted")), {1, m});
  auto node = makeNode(Op::SearchSorted, {1, m}, DType::i64, {row.node(), vals.node()});
  node->axes = {right ? 1 : 0};
  return reshape(Tensor(node), out);
}

namespace {
/// The (R, W) table of `x` (rows along axis 0) and int64 positions (1, m).
std::pair<Tensor, Tensor> rowsAndPositions(Op op, const Tensor &table, const Tensor &ids) {
  NodePtr t = nodeOf(table, opName(op)), i = nodeOf(ids, opName(op));
  if (t->shape.empty())
    fail(op, "too many indices for array: array is 0-dimensional, but 1 were indexed",
         ErrorKind::Index);
  if (!isInteger(i->dtype) && !i->weak)
    fail(op, "arrays used as indices must be of integer (or boolean) type, got " + describe(i),
         ErrorKind::Index);
  const int64_t rows = t->shape[0];
  Tensor positions =
      reshape(Tensor(convert(i, DType::i64, opName(op))), {1, numElements(i->shape)});
  return {reshape(table, {rows, rows ? numElements(t->shape) / rows : 0}), positions};
}
} // namespace

Tensor take(const Tensor &table, const Tensor &ids) {
  auto [rows, positions] = rowsAndPositions(Op::Take, table, ids);
  const NodePtr &t = table.node(), &i = ids.node();
  Shape out = i->shape;
  out.insert(out.end(), t->shape.begin() + 1, t->shape.end());
  const int64_t m = numElements(i->shape), width = rows.shape()[1];
  if (m == 0 || width == 0)
    return full(out, 0, t->dtype);
  auto node = makeNode(Op::Take, {m, width}, t->dtype, {rows.node(), positions.node()});
  node->axes = {0};
  return reshape(Tensor(node), out);
}

Tensor bincount(const Tensor &ids, int64_t length, const Tensor &weights) {
  NodePtr i = nodeOf(ids, "bincount");
  if (i->shape.size() != 1)
    fail(Op::Bincount, "object too deep for desired array: ids must be 1-D, got " + describe(i));
  if (!isInteger(i->dtype) && i->dtype != DType::b8)
    fail(Op::Bincount,
         "Cannot cast array data from dtype('" + std::string(dtypeName(i->dtype)) +
             "') to dtype('int64') according to the rule 'safe'",
         ErrorKind::Type);
  if (length < 0)
    throw Error("'minlength' must not be negative", ErrorKind::Value);
  if (length == 0)
    fail(Op::Bincount,
         "tinymlir traces numpy.bincount with minlength= only: the length of its result "
         "(max(x) + 1) depends on the data; pass minlength, the number of bins, as the bound",
         ErrorKind::Trace);
  const int64_t m = i->shape[0];
  const bool weighted = weights.valid();
  const DType dtype = weighted ? DType::f64 : DType::i64;
  if (weighted && weights.shape() != i->shape)
    fail(Op::Bincount, "The weights and list don't have the same length.");
  if (m == 0)
    return full({length}, 0, dtype);
  Tensor positions = reshape(Tensor(convert(i, DType::i64, "bincount")), {1, m});
  std::vector<NodePtr> args{positions.node()};
  if (weighted)
    args.push_back(reshape(cast(weights, DType::f64), {1, m}).node());
  auto node = makeNode(weighted ? Op::BincountWeighted : Op::Bincount, {1, length}, dtype, args);
  node->axes = {length};
  return reshape(Tensor(node), {length});
}

namespace {
/// table[ids] = values (mode 0) or ufunc.at's update (runtime/Rows.cpp's
/// combine) along axis 0: a Put row kernel, values broadcast to ids.shape +
/// table.shape[1:].
Tensor putAlongRows(const Tensor &table, const Tensor &ids, const Tensor &values, int64_t mode) {
  auto [rows, positions] = rowsAndPositions(Op::Put, table, ids);
  const NodePtr &t = table.node(), &i = ids.node();
  Shape valueShape = i->shape;
  valueShape.insert(valueShape.end(), t->shape.begin() + 1, t->shape.end());
  const int64_t m = numElements(i->shape), width = rows.shape()[1];
  if (m == 0 || width == 0)
    return table;
  Tensor v = reshape(broadcastTo(cast(values, t->dtype), valueShape), {m, width});
  auto node = makeNode(Op::Put, rows.shape(), t->dtype, {rows.node(), positions.node(), v.node()});
  node->axes = {mode};
  return reshape(Tensor(node), t->shape);
}
} // namespace

Tensor put(const Tensor &table, const Tensor &ids, const Tensor &values) {
  return putAlongRows(table, ids, values, 0);
}

Tensor ufuncAt(std::string_view ufunc, const Tensor &table, const Tensor &ids,
               const Tensor &values) {
  static constexpr std::pair<std::string_view, Op> kModes[] = {{"add", Op::Add},
                                                               {"subtract", Op::Sub},
                                                               {"multiply", Op::Mul},
                                                               {"maximum", Op::Maximum},
                                                               {"minimum", Op::Minimum}};
  const std::string name = std::string(ufunc) + ".at";
  const auto *mode = std::find_if(std::begin(kModes), std::end(kModes),
                                  [&](const auto &m) { return m.first == ufunc; });
  if (mode == std::end(kModes))
    fail(name.c_str(), "tinymlir traces ufunc.at for add, subtract, multiply, maximum and minimum",
         ErrorKind::Trace);
  const NodePtr &t = nodeOf(table, name.c_str()), &v = nodeOf(values, name.c_str());
  if (isComplex(t->dtype) && mode->second != Op::Add && mode->second != Op::Sub &&
      mode->second != Op::Mul)
    fail(name.c_str(), "tinymlir traces " + name + " of real values, not complex",
         ErrorKind::Trace);
  auto [rows, positions] = rowsAndPositions(Op::Put, table, ids); // validates
  const DType computed = operandDType(mode->second, t, v);
  if (computed == t->dtype)
    return putAlongRows(table, ids, values, 1 + (mode - std::begin(kModes)));
  // NumPy's loop computes each step in the operands' dtype and casts it back
  // to the table's (unsafely): step by step, for positions known now.
  const NodePtr &i = nodeOf(ids, name.c_str());
  if (i->op != Op::Constant)
    fail(name.c_str(),
         "tinymlir traces " + name + " at positions from the data with values of the " +
             "table's dtype (" + dtypeName(t->dtype) + "), not " + dtypeName(v->dtype) +
             ": NumPy computes each step in " + dtypeName(computed) + " and casts it back",
         ErrorKind::Trace);
  const Shape &shape = t->shape;
  const int64_t n = shape[0], m = numElements(i->shape), width = rows.shape()[1];
  if (m == 0 || width == 0)
    return table;
  Shape valueShape = i->shape, rowShape = shape;
  valueShape.insert(valueShape.end(), shape.begin() + 1, shape.end());
  rowShape[0] = 1;
  const Tensor steps = reshape(broadcastTo(values, valueShape), {m, width});
  std::vector<int64_t> begin(shape.size(), 0), end = shape;
  Tensor out = table;
  const std::vector<double> at = i->constant.toDoubles();
  for (int64_t k = 0; k < m; ++k) {
    begin[0] = detail::positionAlong(static_cast<int64_t>(at[static_cast<size_t>(k)]), 0, n);
    end[0] = begin[0] + 1;
    const Tensor value = reshape(slice(steps, {k, 0}, {k + 1, width}), rowShape);
    const Tensor step = binary(mode->second, cast(slice(out, begin, end), computed), value);
    out = sliceUpdate(out, begin, end, {}, cast(step, t->dtype));
  }
  return out;
}

Tensor triu(const Tensor &x, int64_t k) { return triangle(Op::Triu, x, k); }
Tensor tril(const Tensor &x, int64_t k) { return triangle(Op::Tril, x, k); }

namespace {
/// GPT-2's additive mask: -1e10 where a column comes after its row's
/// position, else 0. Columns and rows are int32 positions that broadcast
/// to (rows, columns): a where of a comparison, fused into its reader.
Tensor maskAfter(const Tensor &columns, const Tensor &rows, DType dtype) {
  return where(greater(columns, rows), ScalarType{dtype}(-1e10), ScalarType{dtype}(0.0));
}
void checkMaskDType(DType dtype) {
  if (!isFloat(dtype))
    fail("causal_mask", std::string("dtype must be float32 or float64, got ") + dtypeName(dtype),
         ErrorKind::Type);
}
} // namespace

Tensor causalMask(int64_t n, DType dtype) {
  if (n <= 0)
    fail("causal_mask", "size must be positive, got " + std::to_string(n));
  checkMaskDType(dtype);
  return maskAfter(detail::iotaAlong(n, 1, 2), detail::iotaAlong(n, 0, 2), dtype);
}

Tensor causalMask(int64_t rows, int64_t columns, const Tensor &start, DType dtype) {
  NodePtr s = nodeOf(start, "causal_mask");
  if (rows <= 0 || columns <= 0)
    fail("causal_mask", "sizes must be positive, got (" + std::to_string(rows) + ", " +
                            std::to_string(columns) + ")");
  checkMaskDType(dtype);
  if (s->dtype != DType::i32 || s->weak || !(s->shape.empty() || s->shape == Shape{rows}))
    fail("causal_mask",
         "start must be a rank-0 int32 tensor or one of shape (" + std::to_string(rows) +
             ",), got " + describe(s),
         ErrorKind::Type);
  // Row r sits at position start + r, or at start[r].
  Tensor positions =
      s->shape.empty() ? detail::iotaAlong(rows, 0, 2) + start : reshape(start, {rows, 1});
  return maskAfter(detail::iotaAlong(columns, 1, 2), positions, dtype);
}

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
TraceScope::~TraceScope() { --traceDepth; }

Tensor placeholder(int64_t index, const Shape &shape, DType dtype) {
  auto node = makeNode(Op::Argument, shape, dtype);
  node->index = index;
  return Tensor(node);
}

} // namespace detail

} // namespace tinymlir
