// NumPy 2's type promotion (NEP 50) for the frontend: the dtype operands are
// computed in, weak scalars (Python numbers) and their conversions, casting rules.
#include "frontend/Graph.h"
#include "frontend/Promotion.h"

#include <tinymlir/tensor.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

namespace tinymlir {
using detail::complexOf;
using detail::fail;
using detail::fitsInteger;
using detail::floatFor;
using detail::IntPolicy;
using detail::kWideInteger;
using detail::makeNode;
using detail::Node;
using detail::nodeOf;
using detail::NodePtr;
using detail::opInfo;
using detail::promote;
using detail::strongDType;

DType detail::complexOf(DType real) { return real == DType::f64 ? DType::c128 : DType::c64; }

/// The smallest float type that holds every value of an integer type (or bool)
/// exactly, as NumPy's promotion picks it: float16 for 8 bits, float32 for 16,
/// else float64 (int64 and uint64 included, by convention).
DType detail::floatFor(DType integer) {
  size_t bytes = integer == DType::b8 ? 1 : dtypeSize(integer);
  return bytes == 1 ? DType::f16 : bytes == 2 ? DType::f32 : DType::f64;
}

namespace {

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

} // namespace

/// NumPy 2 (NEP 50) promotion of two strong dtypes: the smallest type that
/// holds both, with uint64 and a signed integer giving float64, and an
/// integer with a float the float that holds the integer (int32 + float32 is
/// float64; int8 + float16 is float16).
DType detail::promote(DType a, DType b) {
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

DType detail::promoteTypes(DType a, DType b) { return promote(a, b); }

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

} // namespace

/// Whether the exact integer scalar `n` is in the range of `to`.
bool detail::fitsInteger(const Node &n, DType to) {
  const int bits = 8 * static_cast<int>(dtypeSize(to));
  const uint64_t top = isUnsigned(to) ? (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1)
                                      : (uint64_t{1} << (bits - 1)) - 1;
  if (n.dtype == DType::u64)
    return static_cast<uint64_t>(n.integer) <= top;
  if (n.integer < 0)
    return !isUnsigned(to) && (bits == 64 || n.integer >= -(int64_t{1} << (bits - 1)));
  return static_cast<uint64_t>(n.integer) <= top;
}

namespace {

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

} // namespace

/// `n` converted to `dtype` for operation `op`: a Cast node, or a re-typed
/// scalar. A Python integer beyond int32 fails where it meets int32, as in
/// NumPy 2 (a float operand takes it as a float).
NodePtr detail::convert(const NodePtr &n, DType dtype, const char *op, bool checkRange) {
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
DType detail::operandDType(Op op, const NodePtr &x, const NodePtr &y) {
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
DType detail::applyIntPolicy(Op op, DType dtype, const std::string &operands) {
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

} // namespace tinymlir
