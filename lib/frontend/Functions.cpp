// NumPy functions made of the core's operations (include/tinymlir/numpy.h).
#include "frontend/Graph.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

namespace tinymlir {
namespace {

[[noreturn]] void fail(const char *op, const std::string &message,
                       ErrorKind kind = ErrorKind::Value) {
  throw Error(std::string("[") + op + "] " + message, kind);
}

bool inexact(DType d) { return isFloat(d) || isComplex(d); }

/// A bool array of x's shape, all `value` (NumPy's isnan of integers: a new
/// array, not a view).
Tensor truth(const Tensor &x, bool value) {
  return broadcastTo(ScalarType{DType::b8}(value ? 1.0 : 0.0), x.shape());
}

/// The largest finite value of a float dtype.
double largest(DType d) {
  switch (d) {
  case DType::f16:
    return 65504.0;
  case DType::f32:
    return FLT_MAX;
  default:
    return DBL_MAX;
  }
}

/// A Python int bound of clip within an integer dtype's range (NumPy 2 clips
/// the bound instead of raising); other bounds as they are.
Tensor boundWithin(const Tensor &bound, DType dtype) {
  if (!bound.valid() || !isInteger(dtype))
    return bound;
  const detail::Node &n = *bound.node();
  if (n.op != Op::Scalar || !n.weak || !n.integral)
    return bound;
  const bool huge = n.dtype == DType::u64; // a weak integer beyond INT64_MAX
  const int bits = static_cast<int>(8 * dtypeSize(dtype));
  if (isUnsigned(dtype)) {
    if (!huge && n.integer < 0)
      return ScalarType{dtype}(uint64_t{0});
    if (bits == 64 || (!huge && n.integer < (int64_t{1} << bits)))
      return bound;
    return ScalarType{dtype}((uint64_t{1} << bits) - 1);
  }
  const int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max()
                                : (int64_t{1} << (bits - 1)) - 1,
                lo = -hi - 1;
  return ScalarType{dtype}(huge ? hi : std::clamp(n.integer, lo, hi));
}

} // namespace

Tensor isnan(const Tensor &x) {
  if (!inexact(x.dtype()))
    return truth(x, false);
  if (isComplex(x.dtype()))
    return logical_or(isnan(real(x)), isnan(imag(x)));
  return not_equal(x, x);
}

Tensor isinf(const Tensor &x) {
  if (!inexact(x.dtype()))
    return truth(x, false);
  if (isComplex(x.dtype()))
    return logical_or(isinf(real(x)), isinf(imag(x)));
  return equal(abs(x), std::numeric_limits<double>::infinity());
}

Tensor isfinite(const Tensor &x) {
  if (!inexact(x.dtype()))
    return truth(x, true);
  if (isComplex(x.dtype()))
    return logical_and(isfinite(real(x)), isfinite(imag(x)));
  return less(abs(x), std::numeric_limits<double>::infinity());
}

Tensor square(const Tensor &x) {
  const Tensor t = x.dtype() == DType::b8 ? cast(x, DType::i8) : x; // no bool loop: int8
  return multiply(t, t);
}

Tensor heaviside(const Tensor &x1, const Tensor &x2) {
  if (!isFloat(x1.dtype()) && !isFloat(x2.dtype()))
    fail("heaviside",
         "tinymlir traces heaviside with a float operand (NumPy's of integers is "
         "int64)",
         ErrorKind::Type);
  const DType dtype = (x1 + x2).dtype(); // promoted as NumPy's (a Python float is weak)
  const Tensor a = cast(x1, dtype), b = cast(x2, dtype);
  const Tensor zero = ScalarType{dtype}(0.0), one = ScalarType{dtype}(1.0);
  const Tensor step = where(less(a, 0), zero, where(greater(a, 0), one, b));
  return where(isnan(a), a, step);
}

Tensor clip(const Tensor &a, const Tensor &lo, const Tensor &hi) {
  if (!lo.valid() && !hi.valid())
    return a;
  // NumPy's clip is one ufunc of the three: their common dtype first (a
  // Python int out of an integer array's range does not widen it).
  Tensor probe = a;
  for (const Tensor *b : {&lo, &hi})
    if (b->valid())
      probe = add(probe, boundWithin(*b, a.dtype()));
  const DType dtype = probe.dtype();
  Tensor t = a.dtype() == dtype ? a : cast(a, dtype);
  if (lo.valid()) // NumPy's order: the upper bound wins where they cross
    t = maximum(t, boundWithin(lo, dtype));
  return hi.valid() ? minimum(t, boundWithin(hi, dtype)) : t;
}

Tensor nanToNum(const Tensor &x, double nan, std::optional<double> posinf,
                std::optional<double> neginf) {
  const DType d = x.dtype();
  if (isComplex(d)) { // each part on its own
    const Tensor re = nanToNum(real(x), nan, posinf, neginf);
    const Tensor im = nanToNum(imag(x), nan, posinf, neginf);
    return add(re, multiply(cast(im, d), weakComplexScalar(0.0, 1.0)));
  }
  if (!isFloat(d))
    return x;
  const Tensor big = ScalarType{d}(posinf.value_or(largest(d)));
  const Tensor small = ScalarType{d}(neginf.value_or(-largest(d)));
  const double inf = std::numeric_limits<double>::infinity();
  Tensor t = where(equal(x, inf), big, where(equal(x, -inf), small, x));
  return where(isnan(t), ScalarType{d}(nan), t);
}

Tensor isclose(const Tensor &a, const Tensor &b, double rtol, double atol, bool equalNan) {
  // y inexact, as NumPy 2's (result_type(y, 1.0)): a Python int as a float,
  // an integer or bool array as float64.
  Tensor y = b;
  const detail::Node &n = *b.node();
  if (n.op == Op::Scalar && n.weak && n.integral)
    y = weakScalar(static_cast<double>(n.integer), false);
  else if (!n.weak && !inexact(b.dtype()))
    y = cast(b, DType::f64);
  const Tensor close =
      logical_and(less_equal(abs(a - y), add(weakScalar(atol, false),
                                             multiply(weakScalar(rtol, false), abs(y)))),
                  isfinite(y));
  Tensor result = logical_or(close, equal(a, y));
  if (equalNan)
    result = logical_or(result, logical_and(isnan(a), isnan(y)));
  return result;
}

Tensor diagonal(const Tensor &a, int64_t offset, int64_t axis1, int64_t axis2) {
  const int64_t rank = a.rank();
  if (rank < 2)
    fail("diagonal", "diag requires an array of at least two dimensions");
  const int64_t ax1 = normalizeAxes("diagonal", Axes(axis1), rank)[0];
  const int64_t ax2 = normalizeAxes("diagonal", Axes(axis2), rank)[0];
  if (ax1 == ax2)
    fail("diagonal", "axis1 and axis2 cannot be the same");
  // The two axes last, flattened: the diagonal is one strided slice (start
  // offset, or -offset rows down; step n2 + 1).
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != ax1 && d != ax2)
      perm.push_back(d);
  perm.push_back(ax1);
  perm.push_back(ax2);
  const Tensor t = transpose(a, perm);
  const Shape &s = t.shape();
  const int64_t n1 = s[s.size() - 2], n2 = s[s.size() - 1];
  const int64_t k = std::max<int64_t>(
      0, std::min(n1 - std::max<int64_t>(0, -offset), n2 - std::max<int64_t>(0, offset)));
  Shape flat(s.begin(), s.end() - 2);
  flat.push_back(n1 * n2);
  Ref r(reshape(t, flat));
  const int64_t start = offset >= 0 ? offset : -offset * n2;
  return r.get({Ellipsis{}, k ? Slice{start, start + k * (n2 + 1), n2 + 1} : Slice{0, 0}}).value();
}

Tensor trace(const Tensor &a, int64_t offset, int64_t axis1, int64_t axis2) {
  return sum(diagonal(a, offset, axis1, axis2), -1);
}

Tensor diag(const Tensor &v, int64_t k) {
  if (v.rank() == 2)
    return diagonal(v, k);
  if (v.rank() != 1)
    fail("diag", "Input must be 1- or 2-d.");
  const int64_t n = v.shape()[0], m = n + (k < 0 ? -k : k);
  Ref out(broadcastTo(ScalarType{v.dtype()}(0.0), {m, m}));
  if (n) { // out[rows, rows + k] = v, at constant positions
    std::vector<int64_t> rows(static_cast<size_t>(n)), columns(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      rows[static_cast<size_t>(i)] = i + std::max<int64_t>(0, -k);
      columns[static_cast<size_t>(i)] = rows[static_cast<size_t>(i)] + k;
    }
    out.set({Tensor(Array::fromVector(rows, {n})), Tensor(Array::fromVector(columns, {n}))}, v);
  }
  return out.value();
}

Tensor tensordot(const Tensor &a, const Tensor &b, std::vector<int64_t> axesA,
                 std::vector<int64_t> axesB) {
  if (axesA.size() != axesB.size())
    fail("tensordot", "shape-mismatch for sum (different numbers of axes)");
  for (int64_t &i : axesA)
    i = normalizeAxes("tensordot", Axes(i), a.rank())[0];
  for (int64_t &j : axesB)
    j = normalizeAxes("tensordot", Axes(j), b.rank())[0];
  const Shape &sa = a.shape(), &sb = b.shape();
  int64_t k = 1;
  for (size_t p = 0; p < axesA.size(); ++p) {
    const int64_t i = axesA[p], j = axesB[p];
    if (sa[static_cast<size_t>(i)] != sb[static_cast<size_t>(j)])
      fail("tensordot", "shape-mismatch for sum: axis " + std::to_string(i) + " of " +
                            shapeString(sa) + " and axis " + std::to_string(j) + " of " +
                            shapeString(sb));
    k *= sa[static_cast<size_t>(i)];
  }
  std::vector<int64_t> permA, permB = axesB;
  Shape out;
  for (int64_t i = 0; i < a.rank(); ++i)
    if (std::find(axesA.begin(), axesA.end(), i) == axesA.end()) {
      permA.push_back(i);
      out.push_back(sa[static_cast<size_t>(i)]);
    }
  const int64_t m = numElements(out);
  permA.insert(permA.end(), axesA.begin(), axesA.end());
  int64_t n = 1;
  for (int64_t j = 0; j < b.rank(); ++j)
    if (std::find(axesB.begin(), axesB.end(), j) == axesB.end()) {
      permB.push_back(j);
      out.push_back(sb[static_cast<size_t>(j)]);
      n *= sb[static_cast<size_t>(j)];
    }
  const Tensor left = reshape(transpose(a, permA), {m, k});
  const Tensor right = reshape(transpose(b, permB), {k, n});
  return reshape(matmul(left, right), out);
}

Tensor stack(const std::vector<Tensor> &arrays, int64_t axis) {
  if (arrays.empty())
    fail("stack", "need at least one array to stack");
  const Shape &shape = arrays[0].shape();
  for (const Tensor &t : arrays)
    if (t.shape() != shape)
      fail("stack", "all input arrays must have the same shape");
  const int64_t at = normalizeAxes("stack", Axes(axis), static_cast<int64_t>(shape.size()) + 1)[0];
  Shape expanded = shape;
  expanded.insert(expanded.begin() + at, 1);
  std::vector<Tensor> parts;
  for (const Tensor &t : arrays)
    parts.push_back(reshape(t, expanded));
  return concatenate(parts, at);
}

} // namespace tinymlir
