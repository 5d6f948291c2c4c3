// NumPy functions made of the core's operations (include/tinymlir/numpy.h).
#include "frontend/Graph.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <cfloat>
#include <cctype>
#include <cmath>
#include <map>
#include <numbers>
#include <numeric>
#include <limits>
#include <string>

namespace tinymlir {
using detail::fail;
namespace {

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
         ErrorKind::Trace);
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

Tensor allclose(const Tensor &a, const Tensor &b, double rtol, double atol, bool equalNan) {
  return all(isclose(a, b, rtol, atol, equalNan));
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

Tensor trace(const Tensor &a, int64_t offset, int64_t axis1, int64_t axis2,
             std::optional<DType> dtype) {
  Reduction how;
  how.dtype = dtype;
  return reduce("sum", diagonal(a, offset, axis1, axis2), -1, false, how);
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

Tensor tensordot(const Tensor &a, const Tensor &b, int64_t n) {
  if (n < 0 || n > a.rank() || n > b.rank())
    fail("tensordot", "shape-mismatch for sum (" + std::to_string(n) + " axes of " +
                          shapeString(a.shape()) + " and " + shapeString(b.shape()) + ")");
  std::vector<int64_t> axesA, axesB;
  for (int64_t k = 0; k < n; ++k)
    axesA.push_back(a.rank() - n + k), axesB.push_back(k);
  return tensordot(a, b, axesA, axesB);
}

namespace {
/// A Python number as NumPy's asarray makes it: int64, float64, complex128
/// (the operands of functions that call asarray first). Invalid stays so.
Tensor strong(const Tensor &x) {
  return x.valid() && x.node()->weak ? cast(x, detail::strongDType(*x.node())) : x;
}
} // namespace

Tensor dot(const Tensor &a, const Tensor &b) {
  const Tensor x = strong(a), y = strong(b);
  if (x.rank() == 0 || y.rank() == 0)
    return x * y;
  if (x.rank() <= 2 && y.rank() <= 2)
    return matmul(x, y);
  return tensordot(x, y, {x.rank() - 1}, {y.rank() == 1 ? 0 : y.rank() - 2});
}

Tensor outer(const Tensor &a, const Tensor &b) {
  const Tensor x = strong(a), y = strong(b);
  return reshape(x, {numElements(x.shape()), 1}) * reshape(y, {1, numElements(y.shape())});
}

Tensor arrayPower(const Tensor &a, const Tensor &b) {
  const detail::NodePtr &n = b.node();
  if (n->op != Op::Scalar || !n->weak || n->weakComplex)
    return pow(a, b);
  const double e = n->integral ? static_cast<double>(n->integer) : n->scalar;
  if (!inexact(a.dtype())) // 2.0 makes integers float64 first: a power then
    return e == 2 && n->integral ? square(a) : pow(a, b);
  if (e == 2)
    return square(a);
  if (e == 0.5)
    return sqrt(a);
  if (e == -1)
    return reciprocal(a);
  if (e == 1 && !isComplex(a.dtype())) // NumPy's complex power, not positive
    return a;
  if (e == 0)
    return broadcastTo(ScalarType{a.dtype()}(1.0), a.shape());
  return pow(a, b);
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

namespace {

/// The shape NumPy discovers in a nested sequence, and whether it is whole
/// (every list's items of one shape; else the shape they share at the start).
struct Discovered {
  Shape shape;
  bool whole = true;
};

Discovered discover(const Nested &n) {
  if (const Tensor *t = std::get_if<Tensor>(&n.item))
    return {t->shape(), true};
  const auto &items = std::get<std::vector<Nested>>(n.item);
  Discovered d{{static_cast<int64_t>(items.size())}, true};
  if (items.empty())
    return d;
  std::vector<Discovered> parts;
  for (const Nested &item : items)
    parts.push_back(discover(item));
  Shape common = parts[0].shape;
  for (const Discovered &p : parts) {
    d.whole = d.whole && p.whole && p.shape == common;
    size_t k = 0;
    while (k < common.size() && k < p.shape.size() && common[k] == p.shape[k])
      ++k;
    common.resize(k);
  }
  d.shape.insert(d.shape.end(), common.begin(), common.end());
  return d;
}

void leafDtypes(const Nested &n, std::optional<DType> &dtype) {
  if (const Tensor *t = std::get_if<Tensor>(&n.item)) {
    dtype = dtype ? detail::promoteTypes(*dtype, t->dtype()) : t->dtype();
    return;
  }
  for (const Nested &item : std::get<std::vector<Nested>>(n.item))
    leafDtypes(item, dtype);
}

Tensor stacked(const Nested &n, DType dtype, const Shape &shape, size_t depth) {
  if (const Tensor *t = std::get_if<Tensor>(&n.item))
    return t->dtype() == dtype ? *t : cast(*t, dtype);
  const auto &items = std::get<std::vector<Nested>>(n.item);
  if (items.empty())
    return Tensor(
        Array::zeros(Shape(shape.begin() + static_cast<int64_t>(depth), shape.end()), dtype));
  std::vector<Tensor> parts;
  for (const Nested &item : items)
    parts.push_back(stacked(item, dtype, shape, depth + 1));
  return stack(parts);
}

} // namespace

Tensor arrayOf(const Nested &nested, std::optional<DType> dtype) {
  const Discovered d = discover(nested);
  if (!d.whole)
    throw Error("setting an array element with a sequence. The requested array has an "
                "inhomogeneous shape after " +
                    std::to_string(d.shape.size()) + " dimensions. The detected shape was " +
                    shapeString(d.shape) + " + inhomogeneous part.",
                ErrorKind::Value);
  if (!dtype)
    leafDtypes(nested, dtype);
  return stacked(nested, dtype.value_or(DType::f64), d.shape, 0);
}

namespace {

/// x[..., begin:end:step, ...] along `axis` (a basic index: the core's view steps).
Tensor along(const Tensor &x, int64_t axis, Slice slice) {
  Index index(static_cast<size_t>(axis), Slice{});
  index.push_back(slice);
  return Ref(x).get(index).value();
}

/// x with `axis` moved to the end (to == -1) or the last axis moved to `to`.
Tensor moveAxis(const Tensor &x, int64_t from, int64_t to) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != from)
      order.push_back(d);
  order.insert(order.begin() + to, from);
  return transpose(x, order);
}

} // namespace

Tensor cross(const Tensor &a, const Tensor &b, int64_t axisA, int64_t axisB, int64_t axisC) {
  if (a.rank() == 0 || b.rank() == 0)
    fail("cross", "cross requires arrays of at least one dimension");
  const int64_t ra = a.rank(), rb = b.rank();
  const Tensor ta = moveAxis(a, normalizeAxes("cross", Axes(axisA), ra)[0], ra - 1);
  const Tensor tb = moveAxis(b, normalizeAxes("cross", Axes(axisB), rb)[0], rb - 1);
  const int64_t na = ta.shape().back(), nb = tb.shape().back();
  if ((na != 2 && na != 3) || (nb != 2 && nb != 3))
    fail("cross", "incompatible dimensions for cross product\n(dimension must be 2 or 3)");
  auto part = [](const Tensor &t, int64_t i) { return Ref(t).get({Ellipsis{}, i}).value(); };
  const Tensor a0 = part(ta, 0), a1 = part(ta, 1), b0 = part(tb, 0), b1 = part(tb, 1);
  const Tensor z = a0 * b1 - a1 * b0; // NumPy's order of operations, component by component
  if (na == 2 && nb == 2)
    return z;
  Tensor x, y;
  if (na == 3 && nb == 3) {
    const Tensor a2 = part(ta, 2), b2 = part(tb, 2);
    x = a1 * b2 - a2 * b1;
    y = a2 * b0 - a0 * b2;
  } else if (na == 2) { // a's z is 0
    const Tensor b2 = part(tb, 2);
    x = a1 * b2;
    y = -(a0 * b2);
  } else { // b's z is 0
    const Tensor a2 = part(ta, 2);
    x = -(a2 * b1);
    y = a2 * b0;
  }
  const Shape &shape = z.shape();
  const Tensor c = stack({broadcastTo(x, shape), broadcastTo(y, shape), z}, -1);
  const int64_t to = normalizeAxes("cross", Axes(axisC), c.rank())[0];
  return moveAxis(c, c.rank() - 1, to);
}

Tensor ptp(const Tensor &a, const Axes &axes, bool keepdims) {
  return subtract(max(a, axes, keepdims), min(a, axes, keepdims));
}

Tensor inner(const Tensor &x, const Tensor &y) {
  const Tensor a = strong(x), b = strong(y); // arrays, as np.inner's asarray makes them
  if (a.rank() == 0 || b.rank() == 0)
    return multiply(a, b);
  const int64_t n = a.shape().back(), m = b.shape().back();
  if (n != m)
    fail("inner", "shapes " + shapeString(a.shape()) + " and " + shapeString(b.shape()) +
                      " not aligned: " + std::to_string(n) + " (dim " +
                      std::to_string(a.rank() - 1) + ") != " + std::to_string(m) + " (dim " +
                      std::to_string(b.rank() - 1) + ")");
  return tensordot(a, b, {-1}, {-1});
}

Tensor vdot(const Tensor &x, const Tensor &y) {
  const Tensor a = strong(x), b = strong(y);
  const Tensor fa = reshape(a, {numElements(a.shape())}), fb = reshape(b, {numElements(b.shape())});
  if (fa.shape() != fb.shape())
    fail("vdot", "vectors have different lengths: " + shapeString(a.shape()) + " and " +
                     shapeString(b.shape()));
  return matmul(isComplex(fa.dtype()) ? conjugate(fa) : fa, fb);
}

Tensor gradient(const Tensor &input, int64_t axis, const Tensor &spacing, int edgeOrder) {
  const int64_t ax = normalizeAxes("gradient", Axes(axis), input.rank())[0];
  const int64_t n = input.shape()[static_cast<size_t>(ax)];
  if (edgeOrder != 1 && edgeOrder != 2)
    fail("gradient", "'edge_order' greater than 2 not supported");
  if (n < edgeOrder + 1)
    fail("gradient", "Shape of array too small to calculate a numerical gradient, at least "
                     "(edge_order + 1) elements are required.");
  // NumPy computes into an array of f's dtype (float64 for integers), so the
  // values are cast to it at the end.
  const Tensor f = inexact(input.dtype()) ? input : cast(input, DType::f64);
  const DType otype = f.dtype();
  auto at = [&](int64_t begin, int64_t end) { return along(f, ax, Slice{begin, end}); };
  Tensor dx = spacing.valid() ? spacing : weakScalar(1.0, false);
  bool uniform = dx.rank() == 0;
  if (!uniform) {
    if (dx.rank() != 1 || dx.shape()[0] != n)
      fail("gradient", "when 1d, distances must match the length of the corresponding dimension");
    dx = along(dx, 0, Slice{1, {}}) - along(dx, 0, Slice{{}, -1}); // np.diff
    if (dx.isConcrete()) { // NumPy takes equal distances as one (a scalar of their dtype)
      const std::vector<double> d = dx.array().astype(DType::f64).toVector<double>();
      if (std::all_of(d.begin(), d.end(), [&](double v) { return v == d[0]; })) {
        dx = dx.array().dtype() == DType::i64 ? ScalarType{DType::i64}(static_cast<int64_t>(d[0]))
                                              : ScalarType{dx.array().dtype()}(d[0]);
        uniform = true;
      }
    }
  }
  // Distances along the axis, shaped to broadcast against f's slices.
  auto spread = [&](const Tensor &d) {
    Shape shape(static_cast<size_t>(f.rank()), 1);
    shape[static_cast<size_t>(ax)] = d.shape()[0];
    return reshape(d, shape);
  };
  Tensor first, last, inside;
  if (uniform) {
    if (n > 2)
      inside = (at(2, n) - at(0, n - 2)) / (2.0 * dx);
    if (edgeOrder == 1) {
      first = (at(1, 2) - at(0, 1)) / dx;
      last = (at(n - 1, n) - at(n - 2, n - 1)) / dx;
    } else {
      first = (-1.5 / dx) * at(0, 1) + (2.0 / dx) * at(1, 2) + (-0.5 / dx) * at(2, 3);
      last = (0.5 / dx) * at(n - 3, n - 2) + (-2.0 / dx) * at(n - 2, n - 1) +
             (1.5 / dx) * at(n - 1, n);
    }
  } else {
    if (n > 2) {
      const Tensor dx1 = spread(along(dx, 0, Slice{0, -1})),
                   dx2 = spread(along(dx, 0, Slice{1, {}}));
      const Tensor a = -dx2 / (dx1 * (dx1 + dx2)), b = (dx2 - dx1) / (dx1 * dx2),
                   c = dx1 / (dx2 * (dx1 + dx2));
      inside = a * at(0, n - 2) + b * at(1, n - 1) + c * at(2, n);
    }
    auto d = [&](int64_t i) {
      return along(dx, 0, Slice{i, i == -1 ? std::optional<int64_t>() : i + 1});
    };
    if (edgeOrder == 1) {
      first = (at(1, 2) - at(0, 1)) / d(0);
      last = (at(n - 1, n) - at(n - 2, n - 1)) / d(-1);
    } else {
      Tensor dx1 = d(0), dx2 = d(1);
      Tensor a = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2)), b = (dx1 + dx2) / (dx1 * dx2),
             c = -dx1 / (dx2 * (dx1 + dx2));
      first = a * at(0, 1) + b * at(1, 2) + c * at(2, 3);
      dx1 = d(-2);
      dx2 = d(-1);
      a = dx2 / (dx1 * (dx1 + dx2));
      b = -(dx2 + dx1) / (dx1 * dx2);
      c = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2));
      last = a * at(n - 3, n - 2) + b * at(n - 2, n - 1) + c * at(n - 1, n);
    }
  }
  std::vector<Tensor> parts{cast(first, otype)};
  if (inside.valid())
    parts.push_back(cast(inside, otype));
  parts.push_back(cast(last, otype));
  return concatenate(parts, ax);
}

std::vector<Tensor> gradient(const Tensor &f, const std::vector<Tensor> &spacings, const Axes &axes,
                             int edgeOrder) {
  std::vector<int64_t> along;
  if (axes.list) { // in the order given, each once (NumPy's normalize_axis_tuple)
    for (int64_t a : *axes.list)
      along.push_back(normalizeAxes("gradient", Axes(a), f.rank())[0]);
    std::vector<int64_t> sorted = along;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      fail("gradient", "repeated axis");
  } else {
    for (int64_t a = 0; a < f.rank(); ++a)
      along.push_back(a);
  }
  std::vector<Tensor> each(along.size());
  if (spacings.size() == 1 && spacings[0].rank() == 0)
    std::fill(each.begin(), each.end(), spacings[0]);
  else if (spacings.size() == along.size())
    each = spacings;
  else if (!spacings.empty())
    throw Error("invalid number of arguments", ErrorKind::Type);
  std::vector<Tensor> out;
  for (size_t k = 0; k < along.size(); ++k)
    out.push_back(gradient(f, along[k], each[k], edgeOrder));
  return out;
}

Tensor interp(const Tensor &x, const Tensor &xp, const Tensor &fp, const Tensor &left,
              const Tensor &right) {
  if (xp.rank() != 1 || fp.rank() != 1)
    fail("interp", "xp and fp must be 1-D sequences");
  const int64_t n = xp.shape()[0];
  if (fp.shape()[0] != n)
    fail("interp", "fp and xp are not of the same length.");
  if (n == 0)
    fail("interp", "array of sample points is empty");
  const DType out = isComplex(fp.dtype()) ? DType::c128 : DType::f64;
  const Tensor xs = cast(x.rank() == 0 ? reshape(x, {1}) : x, DType::f64);
  const Tensor xq = cast(xp, DType::f64), fq = cast(fp, out);
  auto point = [](const Tensor &t, int64_t i) { return Ref(t).get({i}).value(); };
  const Tensor x0 = point(xq, 0), xn = point(xq, n - 1);
  const Tensor lo = left.valid() ? cast(left, out) : point(fq, 0);
  const Tensor hi = right.valid() ? cast(right, out) : point(fq, n - 1);
  Tensor r;
  if (n == 1) {
    r = where(less(xs, x0), lo, where(greater(xs, x0), hi, point(fq, 0)));
  } else {
    // NumPy's loop: the interval [xp[j], xp[j + 1]) holding x, its slope.
    const Tensor j = subtract(searchsorted(xq, xs, /*right=*/true), 1);
    const Tensor k = minimum(maximum(j, 0), n - 2);
    const Tensor xa = take(xq, k), xb = take(xq, k + 1), ya = take(fq, k), yb = take(fq, k + 1);
    const Tensor slope = (yb - ya) / (xb - xa);
    r = slope * (xs - xa) + ya;
    r = where(isnan(r), slope * (xs - xb) + yb, r);
    r = where(logical_and(isnan(r), equal(ya, yb)), ya, r);
    r = where(equal(xs, xa), ya, r);
    r = where(equal(j, n - 1), point(fq, n - 1), r);
    r = where(greater(xs, xn), hi, where(less(xs, x0), lo, r));
    r = where(isnan(xs), ScalarType{out}(std::numeric_limits<double>::quiet_NaN()), r);
  }
  return x.rank() == 0 ? reshape(r, {}) : r;
}

Tensor lexsort(const std::vector<Tensor> &keys) {
  if (keys.empty())
    fail("lexsort", "need sequence of keys with len > 0 in lexsort", ErrorKind::Type);
  if (std::all_of(keys.begin(), keys.end(), [](const Tensor &k) { return k.rank() == 0; }))
    return Tensor(Array::scalar(0, DType::i64)); // the order of one element
  for (const Tensor &k : keys) {
    if (k.rank() != 1)
      fail("lexsort", "tinymlir traces numpy.lexsort of 1-D keys", ErrorKind::Trace);
    if (k.shape() != keys[0].shape())
      fail("lexsort", "all keys need to be the same shape");
  }
  // Sorted by the first key, then stably by each next one: the last decides.
  Tensor order = argsort(keys[0]);
  for (size_t i = 1; i < keys.size(); ++i)
    order = take(order, argsort(take(keys[i], order)));
  return order;
}

Tensor lexsort(const Tensor &keys) {
  if (keys.rank() == 0)
    fail("lexsort", "need sequence of keys with len > 0 in lexsort", ErrorKind::Type);
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < keys.shape()[0]; ++i)
    rows.push_back(Ref(keys).get({i}).value());
  return lexsort(rows);
}

Tensor searchsorted(const Tensor &a, const Tensor &v, bool right, const Tensor &sorter) {
  if (!sorter.valid())
    return searchsorted(a, v, right);
  if (sorter.rank() != 1 || numElements(sorter.shape()) != numElements(a.shape()))
    fail("searchsorted", "sorter.size must equal a.size");
  return searchsorted(take(a, sorter), v, right);
}

void checkSortKind(const std::optional<std::string> &kind, std::optional<bool> stable) {
  if (!kind)
    return;
  if (stable)
    throw Error("`kind` and keyword parameters can't be provided at the same time. Use only one "
                "of them.",
                ErrorKind::Value);
  const char c = kind->empty() ? '?' : static_cast<char>(std::tolower((*kind)[0]));
  if (c != 'q' && c != 'h' && c != 'm' && c != 's')
    throw Error("sort kind must be one of 'quick', 'heap', or 'stable' (got '" + *kind + "')",
                ErrorKind::Value);
}

Tensor fliplr(const Tensor &m) { return Ref(m).flipped({}, "fliplr").value(); }

Tensor flipud(const Tensor &m) { return Ref(m).flipped({}, "flipud").value(); }

std::pair<Tensor, Tensor> outerOperands(const Tensor &a, const Tensor &b) {
  Shape shape = a.shape(); // the operands are arrays (Python numbers strong)
  shape.insert(shape.end(), static_cast<size_t>(b.rank()), 1);
  return {reshape(strong(a), shape), strong(b)};
}

std::pair<Tensor, Tensor> linspace(const Tensor &start, const Tensor &stop, int64_t num,
                                   bool endpoint, std::optional<DType> dtype, int64_t axis) {
  if (num < 0)
    fail("linspace", "Number of samples, " + std::to_string(num) + ", must be non-negative.");
  // NumPy's dt: the result type of start and stop, inexact (a weak float joins them)
  const DType dt = add(add(start, stop), weakScalar(0.0, false)).dtype();
  const Tensor first = cast(start, dt), last = cast(stop, dt);
  const Tensor delta = last - first;
  const Shape &each = delta.shape();
  Shape column{num};
  column.insert(column.end(), each.size(), 1);
  Tensor y = reshape(Tensor(Array::arange(num, dt)), column);
  const int64_t div = endpoint ? num - 1 : num;
  Tensor step = ScalarType{dt}(std::numeric_limits<double>::quiet_NaN());
  if (div > 0) {
    step = delta / div;
    const Tensor zero = any(equal(step, 0)); // NumPy's any_step_zero, over every step
    y = where(zero, y / div * delta, y * step);
  } else {
    y = y * delta;
  }
  y = y + first;
  if (endpoint && num > 1) { // NumPy's y[-1, ...] = stop
    Shape one{1};
    one.insert(one.end(), each.begin(), each.end());
    y = concatenate({along(y, 0, Slice{{}, num - 1}), reshape(broadcastTo(last, each), one)}, 0);
  }
  if (axis != 0)
    y = transpose(y, moveaxisOrder(y.rank(), {0}, {axis}));
  if (dtype && isInteger(*dtype))
    y = floor(y);
  return {dtype ? cast(y, *dtype) : y, step};
}

Tensor deleteItems(const Tensor &arr, const Tensor &obj, std::optional<int64_t> axis) {
  const Tensor a = axis || arr.rank() == 1 ? arr : reshape(arr, {-1});
  const int64_t along = axis ? normalizeAxes("delete", *axis, a.rank())[0] : 0;
  const int64_t n = a.shape()[static_cast<size_t>(along)];
  if (!obj.isConcrete())
    fail("delete",
         "tinymlir: the positions numpy.delete removes must be known while tracing (they set "
         "its shape)",
         ErrorKind::Trace);
  std::vector<uint8_t> keep(static_cast<size_t>(n), 1);
  const Array &o = obj.array();
  if (o.dtype() == DType::b8) {
    if (o.shape() != Shape{n})
      throw Error("boolean array argument obj to delete must be one dimensional and match the "
                  "axis length of " +
                      std::to_string(n),
                  ErrorKind::Value);
    const std::vector<uint8_t> bits = o.astype(DType::u8).toVector<uint8_t>();
    for (size_t i = 0; i < bits.size(); ++i)
      keep[i] = bits[i] == 0;
  } else {
    if (!isInteger(o.dtype()) && o.size() != 0)
      fail("delete", "arrays used as indices must be of integer (or boolean) type",
           ErrorKind::Index);
    for (int64_t i : o.astype(DType::i64).toVector<int64_t>()) // NumPy's IndexError
      keep[static_cast<size_t>(detail::positionAlong(i, static_cast<size_t>(along), n))] = 0;
  }
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i)
    if (keep[static_cast<size_t>(i)])
      kept.push_back(i);
  const auto count = static_cast<int64_t>(kept.size());
  return take(a, Tensor(Array::fromVector(kept, {count})), along);
}

Tensor insertItems(const Tensor &arr, const Tensor &obj, const Tensor &values,
                   std::optional<int64_t> axis) {
  constexpr const char *op = "insert";
  const Tensor a = axis || arr.rank() == 1 ? arr : reshape(arr, {-1});
  const int64_t along = axis ? normalizeAxes(op, *axis, a.rank())[0] : 0;
  const int64_t n = a.shape()[static_cast<size_t>(along)];
  if (!obj.isConcrete())
    fail(op,
         "tinymlir: the positions numpy.insert inserts before must be known while tracing (they "
         "set its shape)",
         ErrorKind::Trace);
  const Array &o = obj.array();
  if (o.dtype() == DType::b8 || (!isInteger(o.dtype()) && o.size() != 0))
    fail(op, "index array argument obj to insert must hold integers", ErrorKind::Index);
  if (o.shape().size() > 1)
    fail(op, "index array argument obj to insert must be one dimensional or scalar");
  std::vector<int64_t> at = o.astype(DType::i64).toVector<int64_t>();
  Shape shape = a.shape();
  if (at.size() == 1) { // NumPy's: the values as one block before at[0], in [-n, n]
    int64_t index = at[0];
    if (index < -n || index > n) { // NumPy's words (obj as given), with no operation's name
      const std::string given = std::to_string(index);
      throw Error("index " + (o.shape().empty() ? given : "[" + given + "]") +
                      " is out of bounds for axis " + std::to_string(along) + " with size " +
                      std::to_string(n),
                  ErrorKind::Index);
    }
    index += index < 0 ? n : 0;
    Tensor v = cast(values, a.dtype());
    if (v.rank() < a.rank()) { // NumPy's ndmin: leading axes of 1
      Shape s(static_cast<size_t>(a.rank() - v.rank()), 1);
      s.insert(s.end(), v.shape().begin(), v.shape().end());
      v = reshape(v, s);
    }
    if (o.shape().empty() && along != 0) // an int obj: values' first axis moves to the axis
      v = transpose(v, moveaxisOrder(v.rank(), {0}, {along}));
    shape[static_cast<size_t>(along)] = v.shape()[static_cast<size_t>(along)];
    v = broadcastInto(v, shape);
    return concatenate(
        {detail::sliceAlong(a, along, 0, index), v, detail::sliceAlong(a, along, index, n)}, along);
  }
  // NumPy's: each position shifted by the insertions sorted before it (stably)
  const auto count = static_cast<int64_t>(at.size());
  if (count == 0)
    return a;
  for (int64_t &i : at)
    i += i < 0 ? n : 0;
  std::vector<int64_t> order(at.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { // stable: ties by order
    return std::pair(at[static_cast<size_t>(x)], x) < std::pair(at[static_cast<size_t>(y)], y);
  });
  for (int64_t k = 0; k < count; ++k)
    at[static_cast<size_t>(order[static_cast<size_t>(k)])] += k;
  const int64_t total = n + count;
  std::vector<uint8_t> old(static_cast<size_t>(total), 1);
  for (int64_t i : at)
    old[static_cast<size_t>(detail::positionAlong(i, 0, total))] = 0;
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < total; ++i)
    if (old[static_cast<size_t>(i)])
      kept.push_back(i);
  shape[static_cast<size_t>(along)] = total;
  Ref out(full(shape, 0, a.dtype()));
  Index index(static_cast<size_t>(along), Slice{});
  index.push_back(Tensor(Array::fromVector(at, {count})));
  out.set(index, values);
  index.back() = Tensor(Array::fromVector(kept, {n}));
  out.set(index, a);
  return out.value();
}

Tensor fullLike(const Tensor &a, const Tensor &value, std::optional<DType> dtype,
                std::optional<Shape> shape) {
  return full(shape.value_or(a.shape()), value, dtype.value_or(detail::strongDType(*a.node())));
}

Tensor full(const Shape &shape, const Tensor &value, std::optional<DType> dtype) {
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }))
    throw Error("negative dimensions are not allowed", ErrorKind::Value);
  const DType d = dtype.value_or(detail::strongDType(*value.node()));
  const Tensor v = value.dtype() == d && !value.node()->weak ? value : cast(value, d);
  return broadcastInto(v, shape, "input array");
}

Tensor squeeze(const Tensor &x, const Axes &axes) {
  const Shape &s = x.shape();
  std::vector<int64_t> gone;
  if (!axes.list) {
    for (size_t a = 0; a < s.size(); ++a)
      if (s[a] == 1)
        gone.push_back(static_cast<int64_t>(a));
  } else {
    gone = normalizeAxes("squeeze", axes, x.rank());
    for (int64_t a : gone)
      if (s[static_cast<size_t>(a)] != 1)
        fail("squeeze", "cannot select an axis to squeeze out which has size not equal to one");
  }
  Shape out;
  for (size_t a = 0; a < s.size(); ++a)
    if (std::find(gone.begin(), gone.end(), static_cast<int64_t>(a)) == gone.end())
      out.push_back(s[a]);
  return reshape(x, out);
}

Tensor expandDims(const Tensor &x, const std::vector<int64_t> &axes) {
  const int64_t rank = x.rank() + static_cast<int64_t>(axes.size());
  const std::vector<int64_t> at = normalizeAxes("expand_dims", Axes(axes), rank);
  Shape out = x.shape();
  for (int64_t a : at)
    out.insert(out.begin() + a, 1);
  return reshape(x, out);
}

namespace {

/// One operand of np.einsum and the names of its axes, one char each: the
/// subscripts' letters, and chars from 0x80 up for the axes '...' stands for
/// (the last of them 0x80 + the most any operand has - 1, so that they align
/// from the right, as NumPy broadcasts them).
struct EinsumTerm {
  Tensor t;
  std::string names;
};

/// Each name `term` repeats, its axes' diagonal (NumPy's 'ii->i'), last.
EinsumTerm collapsed(EinsumTerm term, size_t operand) {
  for (size_t i = 0; i < term.names.size(); ++i) {
    const size_t j = term.names.find(term.names[i], i + 1);
    if (j == std::string::npos)
      continue;
    const int64_t p = term.t.shape()[i], q = term.t.shape()[j];
    if (p != q)
      fail("einsum", "dimensions in operand " + std::to_string(operand) +
                         " for collapsing index '" + term.names[i] + "' don't match (" +
                         std::to_string(p) + " != " + std::to_string(q) + ")");
    const char c = term.names[i];
    term.t = diagonal(term.t, 0, static_cast<int64_t>(i), static_cast<int64_t>(j));
    term.names.erase(j, 1);
    term.names.erase(i, 1);
    term.names += c;
    i = static_cast<size_t>(-1); // again from the first
  }
  return term;
}

/// The permutation taking axes named `from` to the order `to`.
std::vector<int64_t> einsumOrder(const std::string &from, const std::string &to) {
  std::vector<int64_t> perm;
  for (char c : to)
    perm.push_back(static_cast<int64_t>(from.find(c)));
  return perm;
}

/// Two terms contracted: the names in both and not in `keep` summed, the
/// others kept, as one (batched) matrix product: batch names (in both and in
/// `keep`) lead, then a's own, then b's.
EinsumTerm contracted(const EinsumTerm &x, const EinsumTerm &y, const std::string &keep) {
  std::string batch, summed;
  for (char c : x.names)
    if (y.names.find(c) != std::string::npos)
      (keep.find(c) != std::string::npos ? batch : summed) += c;
  std::string freeA, freeB;
  for (char c : x.names)
    if (y.names.find(c) == std::string::npos)
      freeA += c;
  for (char c : y.names)
    if (x.names.find(c) == std::string::npos)
      freeB += c;
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < x.names.size(); ++i)
    sizes[x.names[i]] = x.t.shape()[i];
  for (size_t i = 0; i < y.names.size(); ++i)
    sizes[y.names[i]] = y.t.shape()[i];
  auto product = [&](const std::string &names) {
    int64_t p = 1;
    for (char c : names)
      p *= sizes[c];
    return p;
  };
  Shape bshape;
  for (char c : batch)
    bshape.push_back(sizes[c]);
  auto with = [&](std::initializer_list<int64_t> tail) {
    Shape s = bshape;
    s.insert(s.end(), tail);
    return s;
  };
  const Tensor left = reshape(transpose(x.t, einsumOrder(x.names, batch + freeA + summed)),
                              with({product(freeA), product(summed)}));
  const Tensor right = reshape(transpose(y.t, einsumOrder(y.names, batch + summed + freeB)),
                               with({product(summed), product(freeB)}));
  Tensor result =
      summed.empty() // an outer product per batch: exact, as NumPy's
          ? reshape(left, with({product(freeA), 1})) * reshape(right, with({1, product(freeB)}))
          : matmul(left, right);
  Shape shape = bshape;
  for (char c : freeA + freeB)
    shape.push_back(sizes[c]);
  return {reshape(result, shape), batch + freeA + freeB};
}

} // namespace

Tensor einsum(const std::string &subscripts, const std::vector<Tensor> &given,
              std::optional<DType> dtype, std::string_view casting) {
  std::vector<Tensor> operands = given;
  if (dtype)
    for (Tensor &t : operands)
      t = castByRule("einsum", t, *dtype, casting);
  std::string spec;
  for (char c : subscripts)
    if (c != ' ')
      spec += c;
  const size_t arrow = spec.find("->");
  std::vector<std::string> inputs;
  {
    const std::string lhs = spec.substr(0, arrow);
    size_t start = 0;
    for (size_t comma; (comma = lhs.find(',', start)) != std::string::npos; start = comma + 1)
      inputs.push_back(lhs.substr(start, comma - start));
    inputs.push_back(lhs.substr(start));
  }
  if (inputs.size() != operands.size())
    fail("einsum", std::string(inputs.size() > operands.size() ? "more" : "fewer") +
                       " operands provided to einstein sum function than specified in the "
                       "subscripts string");
  // Each operand's names, '...' as the chars of its broadcast axes.
  const auto subscriptsOf = [](const std::string &s) {
    const size_t dots = s.find("...");
    std::string letters = dots == std::string::npos ? s : s.substr(0, dots) + s.substr(dots + 3);
    for (char c : letters)
      if (!std::isalpha(static_cast<unsigned char>(c)))
        fail("einsum", std::string("invalid subscript '") + c +
                           "' in einstein sum subscripts string, subscripts must be letters");
    return std::pair{dots, letters};
  };
  int64_t broadcastAxes = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto [dots, letters] = subscriptsOf(inputs[k]);
    const int64_t extra = operands[k].rank() - static_cast<int64_t>(letters.size());
    if (extra < 0 || (extra > 0 && dots == std::string::npos))
      fail("einsum", extra < 0 ? "einstein sum subscripts string contains too many subscripts "
                                 "for operand " +
                                     std::to_string(k)
                               : "operand has more dimensions than subscripts given in einstein "
                                 "sum, but no '...' ellipsis provided to broadcast the extra "
                                 "dimensions.");
    broadcastAxes = std::max(broadcastAxes, extra);
  }
  const auto dotsAs = [&](int64_t n) { // the chars of the last n broadcast axes
    std::string s;
    for (int64_t i = broadcastAxes - n; i < broadcastAxes; ++i)
      s += static_cast<char>(0x80 + i);
    return s;
  };
  std::vector<EinsumTerm> terms;
  std::string all;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const auto [dots, letters] = subscriptsOf(inputs[k]);
    const int64_t extra = operands[k].rank() - static_cast<int64_t>(letters.size());
    std::string names = dots == std::string::npos ? letters
                                                  : inputs[k].substr(0, dots) + dotsAs(extra) +
                                                        inputs[k].substr(dots + 3);
    all += names;
    terms.push_back(collapsed({operands[k], std::move(names)}, k));
  }
  std::string output;
  if (arrow == std::string::npos) { // implicit: '...', then the letters seen once, sorted
    for (char c : all)
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(all.begin(), all.end(), c) == 1)
        output += c;
    std::sort(output.begin(), output.end());
    output = dotsAs(broadcastAxes) + output;
  } else {
    const std::string rhs = spec.substr(arrow + 2);
    const size_t dots = rhs.find("...");
    for (char c : subscriptsOf(rhs).second) {
      if (std::count(rhs.begin(), rhs.end(), c) != 1)
        fail("einsum", std::string("einstein sum subscripts string includes output subscript '") +
                           c + "' multiple times");
      if (all.find(c) == std::string::npos)
        fail("einsum", std::string("einstein sum subscripts string included output subscript '") +
                           c + "' which never appeared in an input");
    }
    output = dots == std::string::npos
                 ? rhs
                 : rhs.substr(0, dots) + dotsAs(broadcastAxes) + rhs.substr(dots + 3);
  }
  // Every name's size: a size-1 axis broadcasts against the others, as NumPy's.
  std::map<char, int64_t> sizes;
  for (const EinsumTerm &term : terms)
    for (size_t i = 0; i < term.names.size(); ++i) {
      const int64_t n = term.t.shape()[i];
      int64_t &s = sizes.try_emplace(term.names[i], n).first->second;
      if (s != n && s != 1 && n != 1)
        fail("einsum", std::string("index '") + term.names[i] + "' has sizes " + std::to_string(s) +
                           " and " + std::to_string(n));
      s = std::max(s, n);
    }
  for (EinsumTerm &term : terms) {
    Shape full;
    for (char c : term.names)
      full.push_back(sizes[c]);
    if (full != term.t.shape())
      term.t = broadcastTo(term.t, full);
  }
  // Each operand's names that appear nowhere else summed; then the operands
  // contracted left to right, keeping the names later ones or the output use.
  for (size_t k = 0; k < terms.size(); ++k) {
    std::string others = output;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != k)
        others += terms[j].names;
    std::vector<int64_t> alone;
    std::string kept;
    for (size_t i = 0; i < terms[k].names.size(); ++i)
      (others.find(terms[k].names[i]) == std::string::npos
           ? (void)alone.push_back(static_cast<int64_t>(i))
           : (void)(kept += terms[k].names[i]));
    Reduction how; // in the operand's dtype, as NumPy's einsum sums
    how.dtype = terms[k].t.dtype();
    if (!alone.empty())
      terms[k] = {reduce("sum", terms[k].t, Axes(alone), false, how), kept};
  }
  EinsumTerm result = terms[0];
  for (size_t k = 1; k < terms.size(); ++k) {
    std::string later = output;
    for (size_t j = k + 1; j < terms.size(); ++j)
      later += terms[j].names;
    std::string keep;
    for (char c : result.names + terms[k].names)
      if (later.find(c) != std::string::npos && keep.find(c) == std::string::npos)
        keep += c;
    result = contracted(result, terms[k], keep);
  }
  return transpose(result.t, einsumOrder(result.names, output));
}

std::vector<int64_t> moveaxisOrder(int64_t rank, const std::vector<int64_t> &source,
                                   const std::vector<int64_t> &destination) {
  if (source.size() != destination.size())
    fail("moveaxis", "`source` and `destination` arguments must have the same number of "
                     "elements");
  std::vector<int64_t> src, dst;
  for (int64_t a : source)
    src.push_back(normalizeAxes("moveaxis", Axes(a), rank)[0]);
  for (int64_t a : destination)
    dst.push_back(normalizeAxes("moveaxis", Axes(a), rank)[0]);
  for (const auto *axes : {&src, &dst}) {
    std::vector<int64_t> sorted = *axes;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      fail("moveaxis", "repeated axis in `source` or `destination` argument");
  }
  std::vector<int64_t> order;
  for (int64_t a = 0; a < rank; ++a)
    if (std::find(src.begin(), src.end(), a) == src.end())
      order.push_back(a);
  std::vector<std::pair<int64_t, int64_t>> moves;
  for (size_t i = 0; i < src.size(); ++i)
    moves.emplace_back(dst[i], src[i]);
  std::sort(moves.begin(), moves.end());
  for (const auto &[to, from] : moves)
    order.insert(order.begin() + to, from);
  return order;
}

Tensor columnStack(const std::vector<Tensor> &arrays) {
  if (arrays.empty())
    fail("column_stack", "need at least one array to concatenate");
  std::vector<Tensor> columns;
  for (const Tensor &t : arrays)
    columns.push_back(t.rank() < 2 ? reshape(t, {numElements(t.shape()), 1}) : t);
  return concatenate(columns, 1);
}

Tensor append(const Tensor &a, const Tensor &v, std::optional<int64_t> axis) {
  const Tensor arr = strong(a), values = strong(v);
  if (!axis)
    return concatenate(
        {reshape(arr, {numElements(arr.shape())}), reshape(values, {numElements(values.shape())})},
        0);
  return concatenate({arr, values}, *axis);
}

Tensor trapezoid(const Tensor &y, const Tensor &x, const Tensor &dx, int64_t axis) {
  const int64_t ax = normalizeAxes("trapezoid", Axes(axis), y.rank())[0];
  const int64_t n = y.shape()[static_cast<size_t>(ax)];
  Tensor d = dx.valid() ? dx : weakScalar(1.0, false);
  if (x.valid()) { // NumPy's: d = diff(x), shaped along the axis where x is 1-D
    Tensor xs = x;
    int64_t xa = x.rank() == 1 ? 0 : ax;
    const int64_t m = xs.shape()[static_cast<size_t>(xa)];
    d = along(xs, xa, Slice{1, m}) - along(xs, xa, Slice{0, m - 1});
    if (x.rank() == 1 && y.rank() > 1) {
      Shape shape(static_cast<size_t>(y.rank()), 1);
      shape[static_cast<size_t>(ax)] = m - 1;
      d = reshape(d, shape);
    }
  }
  const Tensor mid = along(y, ax, Slice{1, n}) + along(y, ax, Slice{0, n - 1});
  return sum(d * mid / 2.0, ax);
}

Tensor digitize(const Tensor &x, const Tensor &bins, bool right) {
  if (bins.rank() != 1)
    fail("digitize", "object too deep for desired array");
  if (isComplex(x.dtype()))
    fail("digitize", "x may not be complex", ErrorKind::Type);
  const Tensor reversed = Ref(bins).get({Slice{{}, {}, -1}}).value();
  const Tensor up = searchsorted(bins, x, !right);
  const Tensor down =
      subtract(ScalarType{DType::i64}(bins.shape()[0]), searchsorted(reversed, x, !right));
  if (bins.isConcrete()) { // NumPy's _monotonicity, while tracing
    const std::vector<double> b = bins.array().astype(DType::f64).toVector<double>();
    const bool increasing = std::is_sorted(b.begin(), b.end());
    if (!increasing && !std::is_sorted(b.rbegin(), b.rend()))
      fail("digitize", "bins must be monotonically increasing or decreasing");
    return increasing ? up : down;
  }
  // Traced bins: their order is known when the kernel runs, which checks it
  // (NumPy's ValueError) and picks the search that fits.
  const int64_t n = bins.shape()[0];
  if (n < 2)
    return up;
  const Tensor head = Ref(bins).get({Slice{0, n - 1}}).value();
  const Tensor tail = Ref(bins).get({Slice{1, n}}).value();
  const Tensor increasing = all(less_equal(head, tail)),
               decreasing = all(greater_equal(head, tail));
  const Tensor ordered =
      detail::requireAtLeast(cast(logical_or(increasing, decreasing), DType::i64), 1, 2);
  return where(increasing, up, down) + (ordered - 1); // + 0, once the order is checked
}

Tensor isin(const Tensor &element, const Tensor &test, bool invert) {
  const Tensor flat = reshape(test, {numElements(test.shape())});
  if (numElements(test.shape()) == 0)
    return broadcastTo(ScalarType{DType::b8}(invert ? 1.0 : 0.0), element.shape());
  Shape shape = element.shape();
  shape.push_back(1);
  const Tensor pairs = reshape(element, shape);
  return invert ? all(not_equal(pairs, flat), -1) : any(equal(pairs, flat), -1);
}

Tensor polyval(const Tensor &p, const Tensor &x) {
  if (p.rank() != 1)
    fail("polyval", "tinymlir traces numpy.polyval of 1-D coefficients", ErrorKind::Trace);
  // NumPy's: y = zeros_like(x); for pv in p: y = y * x + pv.
  Tensor y = multiply(x, ScalarType{x.dtype()}(0.0));
  for (int64_t i = 0; i < p.shape()[0]; ++i)
    y = y * x + Ref(p).get({i}).value();
  return y;
}

Tensor vander(const Tensor &x, std::optional<int64_t> n, bool increasing) {
  if (x.rank() != 1)
    fail("vander", "x must be a one-dimensional array or sequence.");
  const int64_t m = x.shape()[0], columns = n.value_or(m);
  if (columns < 0)
    fail("vander", "negative dimensions are not allowed");
  // NumPy's: 1, then x's running products (multiply.accumulate), in x's
  // dtype promoted with int
  const DType dtype = detail::promoteTypes(detail::strongDType(*x.node()), DType::i64);
  const Tensor column = reshape(cast(x, dtype), {m, 1});
  std::vector<Tensor> parts{full({m, std::min<int64_t>(columns, 1)}, 1, dtype)};
  if (columns > 1)
    parts.push_back(cumprod(broadcastTo(column, {m, columns - 1}), 1));
  const Tensor v = concatenate(parts, 1);
  return increasing ? v : flip(v, {1});
}

Tensor polyfit(const Tensor &x, const Tensor &y, int64_t deg, const Tensor &w) {
  constexpr const char *op = "polyfit";
  const int64_t order = deg + 1;
  const auto asFloat = [](const Tensor &t) { return t + weakScalar(0.0, false); }; // NumPy's + 0.0
  const Tensor xf = asFloat(x), yf = asFloat(y);
  if (deg < 0)
    fail(op, "expected deg >= 0");
  if (xf.rank() != 1)
    fail(op, "expected 1D vector for x", ErrorKind::Type);
  if (xf.shape()[0] == 0)
    fail(op, "expected non-empty vector for x", ErrorKind::Type);
  if (yf.rank() < 1 || yf.rank() > 2)
    fail(op, "expected 1D or 2D array for y", ErrorKind::Type);
  if (xf.shape()[0] != yf.shape()[0])
    fail(op, "expected x and y to have same length", ErrorKind::Type);
  if (xf.shape()[0] < order) // NumPy's rcond, len(x) eps, is lstsq's default only here
    fail(op,
         "tinymlir traces numpy.polyfit with at least deg + 1 points (got " +
             std::to_string(xf.shape()[0]) + " for degree " + std::to_string(deg) + ")",
         ErrorKind::Trace);
  Tensor lhs = vander(xf, order, false), rhs = yf;
  if (w.valid()) {
    const Tensor wf = asFloat(w);
    if (wf.rank() != 1)
      fail(op, "expected a 1-d array for weights", ErrorKind::Type);
    if (wf.shape()[0] != yf.shape()[0])
      fail(op, "expected w and y to have the same length", ErrorKind::Type);
    const Tensor column = reshape(wf, {wf.shape()[0], 1});
    lhs = lhs * column;
    rhs = rhs.rank() == 2 ? rhs * column : rhs * wf;
  }
  // NumPy's: the columns scaled to unit norm, lstsq, the coefficients scaled back
  const Tensor scale = sqrt(sum(lhs * lhs, 0));
  const Tensor c = std::get<0>(la::lstsq(lhs / scale, rhs));
  return c.rank() == 2 ? c / reshape(scale, {order, 1}) : c / scale;
}

Tensor select(const std::vector<Tensor> &conditions, const std::vector<Tensor> &choices,
              const Tensor &otherwise) {
  if (conditions.size() != choices.size())
    fail("select", "list of cases must be same length as list of conditions");
  if (conditions.empty())
    fail("select", "select with an empty condition list is not possible");
  for (size_t i = 0; i < conditions.size(); ++i)
    if (conditions[i].dtype() != DType::b8)
      fail("select",
           "invalid entry " + std::to_string(i) + " in condlist: should be boolean ndarray",
           ErrorKind::Type);
  Tensor r = otherwise;
  for (size_t i = conditions.size(); i-- > 0;) // the first that holds wins
    r = where(conditions[i], choices[i], r);
  // NumPy's dtype: the choices' and the default's, all together.
  Tensor probe = otherwise;
  for (const Tensor &c : choices)
    probe = add(probe, c);
  return r.dtype() == probe.dtype() ? r : cast(r, probe.dtype());
}

Tensor sinc(const Tensor &x) {
  const Tensor y = multiply(std::numbers::pi, where(equal(x, 0), weakScalar(1.0e-20, false), x));
  return sin(y) / y;
}

Tensor arrayEqual(const Tensor &a, const Tensor &b, bool equalNan) {
  if (a.shape() != b.shape())
    return ScalarType{DType::b8}(0.0);
  Tensor same = equal(a, b);
  if (equalNan)
    same = logical_or(same, logical_and(isnan(a), isnan(b)));
  return all(same);
}

namespace {
/// The float type of a float ufunc's loop for x (as np.sin's).
DType ufuncFloat(const Tensor &x) { return sin(x).dtype(); }
} // namespace

Tensor deg2rad(const Tensor &x) {
  const DType d = isComplex(x.dtype()) ? x.dtype() : ufuncFloat(x);
  if (isComplex(d))
    fail("deg2rad", "ufunc 'deg2rad' not supported for complex input", ErrorKind::Type);
  return cast(x, d) * ScalarType{d}(std::numbers::pi / 180.0);
}

Tensor rad2deg(const Tensor &x) {
  const DType d = isComplex(x.dtype()) ? x.dtype() : ufuncFloat(x);
  if (isComplex(d))
    fail("rad2deg", "ufunc 'rad2deg' not supported for complex input", ErrorKind::Type);
  return cast(x, d) * ScalarType{d}(180.0 / std::numbers::pi);
}

Tensor floatPower(const Tensor &x, const Tensor &y) {
  const DType d = isComplex(x.dtype()) || isComplex(y.dtype()) ? DType::c128 : DType::f64;
  return tinymlir::pow(cast(x, d), cast(y, d));
}

Tensor atleast(const Tensor &x, int rank) {
  const Shape &s = x.shape();
  if (x.rank() >= rank)
    return x;
  Shape out;
  if (rank == 3 && s.size() == 1)
    out = {1, s[0], 1};
  else if (rank == 3 && s.size() == 2)
    out = {s[0], s[1], 1};
  else {
    out.assign(static_cast<size_t>(rank) - s.size(), 1);
    out.insert(out.end(), s.begin(), s.end());
  }
  return reshape(x, out);
}

namespace {
/// `arrays` as at least `rank`-D (np.atleast_<rank>d), joined along `axis`
/// (-1: NumPy's hstack's choice, by the first one's rank).
Tensor stackedAtLeast(const char *op, const std::vector<Tensor> &arrays, int rank, int64_t axis) {
  if (arrays.empty())
    fail(op, "need at least one array to concatenate");
  std::vector<Tensor> parts;
  for (const Tensor &t : arrays)
    parts.push_back(atleast(t, rank));
  return concatenate(parts, axis >= 0 ? axis : parts[0].rank() == 1 ? 0 : 1);
}
} // namespace

Tensor hstack(const std::vector<Tensor> &arrays) { return stackedAtLeast("hstack", arrays, 1, -1); }
Tensor vstack(const std::vector<Tensor> &arrays) { return stackedAtLeast("vstack", arrays, 2, 0); }
Tensor dstack(const std::vector<Tensor> &arrays) { return stackedAtLeast("dstack", arrays, 3, 2); }

std::vector<int64_t> swapaxesOrder(int64_t rank, int64_t axis1, int64_t axis2) {
  std::vector<int64_t> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  const int64_t i = normalizeAxes("swapaxes", Axes(axis1), rank)[0];
  const int64_t j = normalizeAxes("swapaxes", Axes(axis2), rank)[0];
  std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  return order;
}

std::vector<int64_t> rollaxisOrder(int64_t rank, int64_t axis, int64_t start) {
  const int64_t a = normalizeAxes("rollaxis", Axes(axis), rank)[0];
  if (start < 0)
    start += rank;
  if (start < 0 || start > rank)
    fail("rollaxis",
         "'start' arg requires " + std::to_string(-rank) + " <= start < " +
             std::to_string(rank + 1) + ", but " + std::to_string(start) + " was passed in",
         ErrorKind::Axis);
  if (a < start)
    --start; // the axis' removal shifts the later ones
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    if (d != a)
      order.push_back(d);
  order.insert(order.begin() + start, a);
  return order;
}

std::vector<Tensor> broadcastArrays(const std::vector<Tensor> &arrays) {
  std::vector<Shape> shapes;
  for (const Tensor &t : arrays)
    shapes.push_back(t.shape());
  const std::optional<Shape> broadcast = detail::broadcastShapes(shapes);
  if (!broadcast)
    fail("broadcast_arrays", "shape mismatch: objects cannot be broadcast to a single shape");
  const Shape &shape = *broadcast;
  std::vector<Tensor> out;
  for (const Tensor &t : arrays)
    out.push_back(broadcastTo(t, shape));
  return out;
}

Tensor ediff1d(const Tensor &x, const Tensor &toEnd, const Tensor &toBegin) {
  const int64_t n = numElements(x.shape());
  const Tensor flat = reshape(x, {n});
  std::vector<Tensor> parts;
  if (toBegin.valid())
    parts.push_back(cast(reshape(toBegin, {numElements(toBegin.shape())}), x.dtype()));
  if (n > 1)
    parts.push_back(along(flat, 0, Slice{1, n}) - along(flat, 0, Slice{0, n - 1}));
  if (toEnd.valid())
    parts.push_back(cast(reshape(toEnd, {numElements(toEnd.shape())}), x.dtype()));
  if (parts.empty())
    fail("ediff1d",
         "tinymlir: the differences of fewer than 2 elements are empty (zero-size "
         "results are not traced)",
         ErrorKind::Trace);
  return parts.size() == 1 ? parts[0] : concatenate(parts, 0);
}

Tensor roll(const Tensor &a, const std::vector<int64_t> &shift,
            const std::optional<std::vector<int64_t>> &axis) {
  if (!axis)
    return reshape(roll(reshape(a, {numElements(a.shape())}), shift, std::vector<int64_t>{0}),
                   a.shape());
  const size_t n = std::max(shift.size(), axis->size());
  if ((shift.size() != n && shift.size() != 1) || (axis->size() != n && axis->size() != 1))
    fail("roll", "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                 "between arg 0 with shape (" +
                     std::to_string(shift.size()) + ",) and arg 1 with shape (" +
                     std::to_string(axis->size()) + ",).");
  std::vector<int64_t> offsets(static_cast<size_t>(a.rank()), 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t ax = normalizeAxes("roll", Axes((*axis)[axis->size() == 1 ? 0 : i]), a.rank())[0];
    offsets[static_cast<size_t>(ax)] += shift[shift.size() == 1 ? 0 : i];
  }
  Tensor result = a;
  for (int64_t ax = 0; ax < a.rank(); ++ax) {
    const int64_t size = a.shape()[static_cast<size_t>(ax)];
    const int64_t k = size ? ((offsets[static_cast<size_t>(ax)] % size) + size) % size : 0;
    if (k)
      result = concatenate(
          {along(result, ax, Slice{size - k, size}), along(result, ax, Slice{0, size - k})}, ax);
  }
  return result;
}

Tensor resize(const Tensor &a, const Shape &shape) {
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }))
    fail("resize", "all elements of `new_shape` must be non-negative");
  const int64_t n = numElements(a.shape()), total = numElements(shape);
  if (n == 0 || total == 0)
    return full(shape, 0, a.dtype());
  const Tensor flat = tile(reshape(a, {n}), {(total + n - 1) / n});
  return reshape(slice(flat, {0}, {total}), shape);
}

Tensor ufuncWhere(const Tensor &result, const Tensor &mask) {
  return where(cast(mask, DType::b8), result, ScalarType{result.dtype()}(0.0));
}

Tensor castByRule(const char *op, const Tensor &src, DType to, std::string_view casting) {
  if (!canCast(src.dtype(), to, castingNamed(casting)))
    fail(op,
         std::string("Cannot cast array data from dtype('") + dtypeName(src.dtype()) +
             "') to dtype('" + dtypeName(to) + "') according to the rule '" + std::string(casting) +
             "'",
         ErrorKind::Type);
  return src.dtype() == to ? src : cast(src, to);
}

Tensor joined(std::string_view name, const std::vector<Tensor> &arrays, std::optional<int64_t> axis,
              std::optional<DType> dtype, std::string_view casting) {
  std::vector<Tensor> parts = arrays;
  const std::string op(name);
  if (dtype)
    for (Tensor &p : parts)
      p = castByRule(op.c_str(), p, *dtype, casting);
  if (name == "stack")
    return stack(parts, axis.value_or(0));
  if (name == "hstack" || name == "vstack" || name == "dstack")
    return name == "hstack" ? hstack(parts) : name == "vstack" ? vstack(parts) : dstack(parts);
  if (name != "concatenate")
    fail("joined", "no NumPy join named '" + op + "'");
  if (!axis)
    for (Tensor &p : parts)
      p = reshape(p, {numElements(p.shape())});
  return concatenate(parts, axis.value_or(0));
}

Tensor copyto(const Tensor &dst, const Tensor &src, std::string_view casting, const Tensor &where) {
  const Tensor value = broadcastTo(castByRule("copyto", src, dst.dtype(), casting), dst.shape());
  return where.valid()
             ? tinymlir::where(broadcastTo(cast(where, DType::b8), dst.shape()), value, dst)
             : value;
}

Tensor putmask(const Tensor &a, const Tensor &mask, const Tensor &values) {
  if (numElements(mask.shape()) != numElements(a.shape()))
    fail("putmask", "mask and data must be the same size");
  if (numElements(values.shape()) == 0) // NumPy's: nothing to put
    return a;
  const Tensor v = values.shape() == a.shape() ? values : resize(values, a.shape());
  return where(reshape(cast(mask, DType::b8), a.shape()), cast(v, a.dtype()), a);
}

Tensor place(const Tensor &arr, const Tensor &mask, const Tensor &vals) {
  const int64_t size = numElements(arr.shape()), n = numElements(vals.shape());
  if (numElements(mask.shape()) != size)
    fail("place", "place: mask and data must be the same size");
  const Tensor m = reshape(cast(mask, DType::b8), {size});
  if (n == 0) { // NumPy's error where the mask selects something
    if (mask.isConcrete()) {
      const std::vector<double> selected = mask.array().toDoubles();
      if (std::any_of(selected.begin(), selected.end(), [](double v) { return v != 0; }))
        fail("place", "Cannot insert from an empty array!");
      return arr;
    }
    // -(the count) must be at least 0: the kernel stops otherwise (reason 6).
    const Tensor none = detail::requireAtLeast(negative(sum(cast(m, DType::i64))), 0, 6);
    return where(greater_equal(none, weakInteger(0)), arr, ScalarType{arr.dtype()}(0.0));
  }
  Tensor v = reshape(cast(vals, arr.dtype()), {n});
  if (n > 1) // the k-th selected element: k from the mask's running count
    v = take(v, remainder(cumsum(m) - weakInteger(1), weakInteger(n)));
  return reshape(where(m, v, reshape(arr, {size})), arr.shape());
}

Tensor fillDiagonal(const Tensor &a, const Tensor &val, bool wrap) {
  const Shape &s = a.shape();
  if (s.size() < 2)
    fail("fill_diagonal", "array must be at least 2-d");
  if (s.size() > 2 && std::any_of(s.begin(), s.end(), [&](int64_t d) { return d != s[0]; }))
    fail("fill_diagonal", "All dimensions of input must be of equal length");
  const int64_t size = numElements(s);
  int64_t step = 1, end = size, stride = 1;
  if (s.size() == 2) {
    step = s[1] + 1;
    end = wrap ? size : std::min(size, s[1] * s[1]);
  } else {
    for (size_t d = 0; d + 1 < s.size(); ++d)
      step += stride *= s[d]; // 1 + the sum of the cumulative products
  }
  const int64_t count = end > 0 ? (end - 1) / step + 1 : 0;
  if (count == 0)
    return a;
  if (numElements(val.shape()) == 0)
    fail("fill_diagonal", "the value to fill the diagonal with is empty");
  const Tensor values = cast(resize(val, {count}), a.dtype());
  return reshape(sliceUpdate(reshape(a, {size}), {0}, {end}, {step}, values), s);
}

Tensor tile(const Tensor &a, const std::vector<int64_t> &reps) {
  if (std::any_of(reps.begin(), reps.end(), [](int64_t r) { return r < 0; }))
    fail("tile", "negative dimensions are not allowed");
  const size_t rank = std::max(reps.size(), static_cast<size_t>(a.rank()));
  Shape shape(rank - static_cast<size_t>(a.rank()), 1);
  shape.insert(shape.end(), a.shape().begin(), a.shape().end());
  std::vector<int64_t> r(rank - reps.size(), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  // (s0, s1, ...) as (1, s0, 1, s1, ...), broadcast to (r0, s0, r1, s1, ...)
  Shape spread, wide, out;
  for (size_t i = 0; i < rank; ++i) {
    spread.insert(spread.end(), {1, shape[i]});
    wide.insert(wide.end(), {r[i], shape[i]});
    out.push_back(r[i] * shape[i]);
  }
  return reshape(broadcastTo(reshape(a, spread), wide), out);
}

Tensor repeat(const Tensor &a, const std::vector<int64_t> &repeats, std::optional<int64_t> axis) {
  const Tensor x = axis ? a : reshape(a, {numElements(a.shape())});
  const int64_t ax = axis ? normalizeAxes("repeat", Axes(*axis), a.rank())[0] : 0;
  const int64_t n = x.shape()[static_cast<size_t>(ax)];
  if (repeats.size() != 1 && static_cast<int64_t>(repeats.size()) != n)
    fail("repeat", "operands could not be broadcast together with shape (" + std::to_string(n) +
                       ",) (" + std::to_string(repeats.size()) + ",)");
  if (std::any_of(repeats.begin(), repeats.end(), [](int64_t r) { return r < 0; }))
    fail("repeat", repeats.size() == 1 ? "negative dimensions are not allowed"
                                       : "repeats may not contain negative values.");
  Shape shape = x.shape();
  if (repeats.size() == 1) { // each element k times: a broadcast
    Shape column = shape, wide = shape;
    column.insert(column.begin() + ax + 1, 1);
    wide.insert(wide.begin() + ax + 1, repeats[0]);
    shape[static_cast<size_t>(ax)] = n * repeats[0];
    return reshape(broadcastTo(reshape(x, column), wide), shape);
  }
  std::vector<int64_t> ids; // the positions, gathered (a copy)
  for (int64_t i = 0; i < n; ++i)
    ids.insert(ids.end(), static_cast<size_t>(repeats[static_cast<size_t>(i)]), i);
  if (ids.empty())
    return along(x, ax, Slice{0, 0});
  const int64_t m = static_cast<int64_t>(ids.size());
  Index index(static_cast<size_t>(ax), Slice{});
  index.push_back(Tensor(Array::fromVector(ids, {m})));
  return Ref(x).get(index).value();
}

Tensor kron(const Tensor &operandA, const Tensor &operandB) {
  const Tensor a = strong(operandA), b = strong(operandB);
  const bool logical = a.dtype() == DType::b8 && b.dtype() == DType::b8;
  auto multiply = [&](const Tensor &x, const Tensor &y) {
    return logical ? logical_and(x, y) : x * y;
  };
  if (a.rank() == 0 || b.rank() == 0)
    return multiply(a, b);
  const size_t rank = static_cast<size_t>(std::max(a.rank(), b.rank()));
  auto padded = [&](const Tensor &t) {
    Shape s(rank - static_cast<size_t>(t.rank()), 1);
    s.insert(s.end(), t.shape().begin(), t.shape().end());
    return s;
  };
  const Shape as = padded(a), bs = padded(b);
  Shape ashape, bshape, out; // a as (s0, 1, s1, 1...), b as (1, t0, 1, t1...)
  for (size_t i = 0; i < rank; ++i) {
    ashape.insert(ashape.end(), {as[i], 1});
    bshape.insert(bshape.end(), {1, bs[i]});
    out.push_back(as[i] * bs[i]);
  }
  return reshape(multiply(reshape(a, ashape), reshape(b, bshape)), out);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor> &operands, const std::string &indexing,
                             bool sparse) {
  if (indexing != "xy" && indexing != "ij")
    fail("meshgrid", "Valid values for `indexing` are 'xy' and 'ij'.");
  std::vector<Tensor> xi;
  for (const Tensor &x : operands)
    xi.push_back(strong(x));
  const size_t n = xi.size();
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) {
    Shape s(n, 1);
    const size_t at = indexing == "xy" && n > 1 && i < 2 ? 1 - i : i;
    s[at] = numElements(xi[i].shape());
    out.push_back(reshape(xi[i], s));
  }
  if (!sparse) {
    Shape full(n, 1);
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < n; ++k)
        if (out[i].shape()[k] != 1)
          full[k] = out[i].shape()[k];
    for (Tensor &t : out)
      t = broadcastTo(t, full);
  }
  return out;
}

// --- convolve, correlate -----------------------------------------------------------

namespace {

/// The full convolution of 1-D a and v (n + m - 1 values) in their common
/// dtype: each tap of the shorter, times a shifted slice of the zero-padded
/// longer, summed in tap order. `same` and `valid` windows are taken by the
/// callers.
Tensor fullConvolution(const char *op, const Tensor &operandA, const Tensor &operandV,
                       const std::string &mode) {
  const Tensor a = strong(operandA), v = strong(operandV);
  if (mode != "full" && mode != "same" && mode != "valid")
    fail(op, "mode must be one of 'valid', 'same', or 'full' (got '" + mode + "')");
  for (const auto &[x, name] : {std::pair{&a, "a"}, std::pair{&v, "v"}}) {
    if (x->rank() > 1)
      fail(op, "object too deep for desired array");
    if (numElements(x->shape()) == 0)
      fail(op, std::string(name) + " cannot be empty");
  }
  const DType dtype = detail::promoteTypes(a.dtype(), v.dtype());
  Tensor longer = cast(reshape(a, {numElements(a.shape())}), dtype);
  Tensor shorter = cast(reshape(v, {numElements(v.shape())}), dtype);
  if (shorter.shape()[0] > longer.shape()[0])
    std::swap(longer, shorter);
  const int64_t n = longer.shape()[0], m = shorter.shape()[0], length = n + m - 1;
  const bool logical = dtype == DType::b8;
  Tensor padded = longer;
  if (m > 1) {
    const Tensor zeros = broadcastTo(ScalarType{dtype}(0.0), {m - 1});
    padded = concatenate({zeros, longer, zeros}, 0);
  }
  Tensor full;
  for (int64_t k = 0; k < m; ++k) {
    const Tensor tap = Ref(shorter).get({k}).value();
    const Tensor shifted = along(padded, 0, Slice{m - 1 - k, m - 1 - k + length});
    const Tensor term = logical ? logical_and(shifted, tap) : shifted * tap;
    full = !full.valid() ? term : logical ? logical_or(full, term) : full + term;
  }
  return full;
}

/// NumPy's window of the full convolution of operands of na and nv elements:
/// "same" keeps max(na, nv) elements from (m - 1) / 2, or from m / 2 where
/// `late` (m = min(na, nv)); "valid" those from m - 1 to max(na, nv).
Tensor window(const Tensor &full, int64_t na, int64_t nv, const std::string &mode, bool late) {
  const int64_t n = std::max(na, nv), m = std::min(na, nv);
  if (mode == "same") {
    const int64_t start = late ? m / 2 : (m - 1) / 2;
    return along(full, 0, Slice{start, start + n});
  }
  return mode == "valid" ? along(full, 0, Slice{m - 1, n}) : full;
}

} // namespace

Tensor convolve(const Tensor &a, const Tensor &v, const std::string &mode) {
  return window(fullConvolution("convolve", a, v, mode), numElements(a.shape()),
                numElements(v.shape()), mode, false);
}

Tensor correlate(const Tensor &operandA, const Tensor &operandV, const std::string &mode) {
  const Tensor a = strong(operandA), v = strong(operandV);
  // v reversed (and conjugated): the checks and the full window are convolve's
  Tensor flipped = v.rank() == 1 ? Ref(v).get({Slice{{}, {}, -1}}).value() : v;
  if (isComplex(flipped.dtype()))
    flipped = conjugate(flipped);
  const int64_t na = numElements(a.shape()), nv = numElements(v.shape());
  // NumPy's "same" window: where v is the longer it correlates (v, a), reversed
  return window(fullConvolution("correlate", a, flipped, mode), na, nv, mode, na < nv);
}

// --- take, take_along_axis, put_along_axis ----------------------------------------

namespace {

/// Indices as int64 positions along an axis of n elements, by np.take's mode:
/// as they are ("raise"), wrapped into [0, n) or clipped. Concrete indices
/// stay concrete (computed here), so that an index out of bounds is found
/// while tracing.
Tensor positions(const Tensor &ids, int64_t n, const std::string &mode) {
  if (ids.isConcrete()) {
    Array p = ids.array().astype(DType::i64).copy();
    int64_t *v = p.data<int64_t>();
    for (int64_t i = 0, size = numElements(p.shape()); i < size; ++i)
      v[i] = mode == "wrap"   ? ((v[i] % n) + n) % n
             : mode == "clip" ? std::clamp<int64_t>(v[i], 0, n - 1)
                              : v[i];
    return Tensor(p);
  }
  const Tensor p = cast(ids, DType::i64);
  if (mode == "wrap")
    return remainder(p, n); // NumPy's remainder: in [0, n)
  return mode == "clip" ? clip(p, weakInteger(0), weakInteger(n - 1)) : p;
}

/// take_along_axis' and put_along_axis' checks: the array (flattened where
/// axis is none) and the axis.
std::pair<Ref, int64_t> alongAxis(const char *op, const Ref &arr, const Tensor &ids,
                                  std::optional<int64_t> axis) {
  Ref target = arr;
  if (!axis) {
    if (ids.rank() != 1)
      fail(op, "when axis=None, `indices` must have a single dimension.");
    target = arr.view({ViewStep{ViewStep::Kind::Reshape, {numElements(arr.shape())}, {}, {}}});
  }
  const int64_t ax = axis ? normalizeAxes(op, Axes(*axis), arr.value().rank())[0] : 0;
  if (!isInteger(ids.dtype()))
    fail(op, "`indices` must be an integer array", ErrorKind::Index);
  if (target.value().rank() != ids.rank())
    fail(op, "`indices` and `arr` must have the same number of dimensions");
  return {target, ax};
}

/// 0 .. shape[d] - 1 (int64) along axis d of an array of `shape`'s rank, a
/// constant that broadcasts against the others.
Tensor iotaAlong(const Shape &shape, int64_t d) {
  Shape ones(shape.size(), 1);
  ones[static_cast<size_t>(d)] = shape[static_cast<size_t>(d)];
  return Tensor(Array::arange(shape[static_cast<size_t>(d)], DType::i64).reshaped(ones));
}

/// NumPy's _make_along_axis_idx: the indices along `axis`, aranges on the
/// other axes (shaped to broadcast against them).
Index fancyIndex(const Shape &shape, const Tensor &ids, int64_t axis) {
  Index index;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    index.push_back(d == axis ? ids : iotaAlong(shape, d));
  return index;
}

/// The positions in the flattened array of `shape` of traced `ids` (int64,
/// of the fancy index's shape) along `axis`, the other axes' own. One out of
/// bounds becomes a position the core's take and put refuse (IndexError when
/// the kernel runs).
Tensor flatPositions(const Shape &shape, const Tensor &ids, int64_t axis) {
  const int64_t n = shape[static_cast<size_t>(axis)], size = numElements(shape);
  const Tensor p = where(less(ids, 0), ids + n, ids);
  Tensor flat = full(p.shape(), 0, DType::i64);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    flat = flat + (d == axis ? p : iotaAlong(shape, d)) * stride;
    stride *= shape[static_cast<size_t>(d)];
  }
  return where(logical_or(less(p, 0), greater_equal(p, n)), -size - 1, flat);
}

/// The shape the fancy index of traced `ids` selects: ids broadcast against
/// the array's shape but along `axis`.
Shape fancyShape(const char *op, const Shape &shape, const Tensor &ids, int64_t axis) {
  Shape others = shape;
  others[static_cast<size_t>(axis)] = 1;
  if (std::optional<Shape> out = detail::broadcastShapes({ids.shape(), others}))
    return *out;
  fail(op,
       "shape mismatch: indexing arrays could not be broadcast together with shapes " +
           shapeString(ids.shape()) + " " + shapeString(others),
       ErrorKind::Index);
}

} // namespace

Tensor take(const Tensor &a, const Tensor &indices, std::optional<int64_t> axis,
            const std::string &mode) {
  constexpr const char *op = "take";
  if (mode != "raise" && mode != "wrap" && mode != "clip")
    fail(op, "clipmode must be one of 'clip', 'raise', or 'wrap' (got '" + mode + "')");
  const Tensor t = axis ? a : reshape(a, {numElements(a.shape())});
  const int64_t ax = axis ? normalizeAxes(op, Axes(*axis), t.rank())[0] : 0;
  const int64_t n = t.dim(ax);
  Shape out(t.shape().begin(), t.shape().begin() + ax);
  out.insert(out.end(), indices.shape().begin(), indices.shape().end());
  out.insert(out.end(), t.shape().begin() + ax + 1, t.shape().end());
  if (numElements(indices.shape()) == 0) // NumPy's empty take (an empty list is float64)
    return reshape(along(t, ax, Slice{0, 0}), out);
  if (!isInteger(indices.dtype()) && indices.dtype() != DType::b8)
    fail(op,
         std::string("Cannot cast array data from dtype('") + dtypeName(indices.dtype()) +
             "') to dtype('int64') according to the rule 'same_kind'",
         ErrorKind::Type);
  if (n == 0)
    fail(op, "cannot do a non-empty take from an empty axes.", ErrorKind::Index);
  Index index(static_cast<size_t>(ax), Slice{});
  const Tensor p = positions(indices, n, mode);
  if (p.isConcrete() && p.rank() == 0) // an int index, as NumPy takes a 0-d one
    index.push_back(p.array().data<int64_t>()[0]);
  else
    index.push_back(p);
  return reshape(Ref(t).get(index).value(), out);
}

Tensor putFlat(const Tensor &a, const Tensor &indices, const Tensor &values,
               const std::string &mode) {
  constexpr const char *op = "put";
  if (mode != "raise" && mode != "wrap" && mode != "clip")
    fail(op, "clipmode must be one of 'clip', 'raise', or 'wrap' (got '" + mode + "')");
  const int64_t n = numElements(a.shape()), m = numElements(indices.shape());
  if (m == 0 || numElements(values.shape()) == 0) // NumPy's: nothing to put
    return a;
  if (n == 0)
    fail(op, "cannot replace elements of an empty array", ErrorKind::Index);
  if (isComplex(indices.dtype()))
    fail(op,
         "Cannot cast array data from dtype('" + std::string(dtypeName(indices.dtype())) +
             "') to dtype('int64') according to the rule 'unsafe'",
         ErrorKind::Type);
  Ref flat(reshape(a, {n}));
  flat.set({positions(reshape(indices, {m}), n, mode)}, resize(values, {m})); // in order
  return reshape(flat.value(), a.shape());
}

Tensor takeAlongAxis(const Tensor &arr, const Tensor &indices, std::optional<int64_t> axis) {
  constexpr const char *op = "take_along_axis";
  auto [t, ax] = alongAxis(op, Ref(arr), indices, axis);
  const Shape shape = t.shape();
  if (indices.isConcrete())
    return t.get(fancyIndex(shape, positions(indices, shape[static_cast<size_t>(ax)], "raise"), ax))
        .value();
  const Tensor ids = broadcastTo(cast(indices, DType::i64), fancyShape(op, shape, indices, ax));
  return take(reshape(t.value(), {numElements(shape)}), flatPositions(shape, ids, ax));
}

void putAlongAxis(Ref &arr, const Tensor &indices, const Tensor &values,
                  std::optional<int64_t> axis) {
  constexpr const char *op = "put_along_axis";
  if (!axis && !arr.contiguous()) // NumPy writes through np.array(arr.flat): a read-only copy
    fail(op, "assignment destination is read-only");
  auto [target, ax] = alongAxis(op, arr, indices, axis);
  const Shape shape = target.shape();
  if (indices.isConcrete()) {
    target.set(fancyIndex(shape, positions(indices, shape[static_cast<size_t>(ax)], "raise"), ax),
               values);
    return;
  }
  // Traced positions: the core's put on the flattened array (a repeated
  // position takes the last value, as NumPy's).
  Shape fancy = shape;
  fancy[static_cast<size_t>(ax)] = indices.shape()[static_cast<size_t>(ax)];
  if (fancyShape(op, shape, indices, ax) != fancy)
    fail(op,
         "tinymlir traces numpy.put_along_axis with traced indices whose other axes are the "
         "array's (or 1)",
         ErrorKind::Trace);
  const Tensor ids = broadcastTo(cast(indices, DType::i64), fancy);
  const Tensor v = broadcastInto(cast(values, target.dtype()), fancy);
  const Tensor flat = put(reshape(target.value(), {numElements(shape)}),
                          reshape(flatPositions(shape, ids, ax), {numElements(fancy)}),
                          reshape(v, {numElements(fancy)}));
  target.assign(reshape(flat, shape));
}

// --- cumulative_sum, cumulative_prod -----------------------------------------------

namespace {

Tensor cumulative(const char *op, const Tensor &x, std::optional<int64_t> axis, bool initial,
                  bool product, std::optional<DType> dtype) {
  if (!axis && x.rank() > 1)
    fail(op, "For arrays which have more than one dimension ``axis`` argument is required.");
  const Tensor t = x.rank() == 0 ? reshape(x, {1}) : x;
  const int64_t ax = normalizeAxes(op, Axes(axis.value_or(0)), t.rank())[0];
  const Tensor r = product ? cumprod(t, ax, dtype) : cumsum(t, ax, dtype);
  if (!initial)
    return r;
  Shape first = r.shape();
  first[static_cast<size_t>(ax)] = 1;
  return concatenate({broadcastTo(ScalarType{r.dtype()}(product ? 1.0 : 0.0), first), r}, ax);
}

} // namespace

Tensor cumulativeSum(const Tensor &x, std::optional<int64_t> axis, bool includeInitial,
                     std::optional<DType> dtype) {
  return cumulative("cumulative_sum", x, axis, includeInitial, false, dtype);
}

Tensor cumulativeProd(const Tensor &x, std::optional<int64_t> axis, bool includeInitial,
                      std::optional<DType> dtype) {
  return cumulative("cumulative_prod", x, axis, includeInitial, true, dtype);
}

// --- nan functions ---------------------------------------------------------------

namespace {

/// NumPy's _replace_nan: a float or complex operand with its nans replaced by
/// `fill`, and their mask; others as they are, with no mask.
std::pair<Tensor, Tensor> replaceNan(const Tensor &a, double fill) {
  if (!inexact(a.dtype()))
    return {a, Tensor()};
  Tensor mask = isnan(a);
  return {where(mask, ScalarType{a.dtype()}(fill), a), mask};
}

Tensor inDtype(const Tensor &x, std::optional<DType> dtype) { return dtype ? cast(x, *dtype) : x; }

void realOnly(const Tensor &a, const char *op) {
  if (isComplex(a.dtype()))
    fail(op,
         std::string("tinymlir traces numpy.") + op + " of real (and bool) values, not " +
             dtypeName(a.dtype()),
         ErrorKind::Trace);
}

/// NumPy's means and variances take a float dtype= here (an integer one
/// would truncate the accumulator).
void floatDtype(const char *op, std::optional<DType> dtype, bool masked) {
  if (!dtype || isFloat(*dtype))
    return;
  if (masked) { // NumPy's own check; the sums then take any inexact dtype
    if (!isComplex(*dtype))
      fail(op, "If a is inexact, then dtype must be inexact", ErrorKind::Type);
    return;
  }
  fail(op,
       std::string("tinymlir traces ") + op + "(dtype=...) with a float dtype only, got " +
           dtypeName(*dtype),
       ErrorKind::Trace);
}

/// NumPy's _divide_by_count: a / b in a's dtype.
Tensor divideByCount(const Tensor &a, const Tensor &b) { return cast(a / b, a.dtype()); }

Tensor nanExtreme(const char *op, const Tensor &a, const Axes &axes, bool keepdims, bool largest) {
  const double inf = std::numeric_limits<double>::infinity();
  auto [t, mask] = replaceNan(a, largest ? -inf : inf);
  realOnly(t, op);
  Tensor r = largest ? max(t, axes, keepdims) : min(t, axes, keepdims);
  if (!mask.valid())
    return r;
  return where(all(mask, axes, keepdims), ScalarType{r.dtype()}(std::nan("")), r);
}

} // namespace

Tensor nansum(const Tensor &a, const Axes &axes, bool keepdims, std::optional<DType> dtype) {
  return reduce("nansum", a, axes, keepdims, {.dtype = dtype});
}

Tensor nanprod(const Tensor &a, const Axes &axes, bool keepdims, std::optional<DType> dtype) {
  return reduce("nanprod", a, axes, keepdims, {.dtype = dtype});
}

Tensor nanmax(const Tensor &a, const Axes &axes, bool keepdims) {
  return reduce("nanmax", a, axes, keepdims);
}

Tensor nanmin(const Tensor &a, const Axes &axes, bool keepdims) {
  return reduce("nanmin", a, axes, keepdims);
}

namespace {
/// nanargmax (largest) or nanargmin: nans become the other extreme, so they
/// are never picked; a slice of nans alone is checked when the kernel runs.
Tensor nanExtremeIndex(const Tensor &a, std::optional<int64_t> axis, bool keepdims, bool largest) {
  if (!isFloat(a.dtype()))
    return largest ? argmax(a, axis, keepdims) : argmin(a, axis, keepdims);
  const Tensor nan = isnan(a);
  const double other =
      largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const Tensor t = where(nan, ScalarType{a.dtype()}(other), a);
  const Tensor index = largest ? argmax(t, axis, keepdims) : argmin(t, axis, keepdims);
  const Axes axes = axis && !a.shape().empty() ? Axes(*axis) : Axes();
  // 1 where the slice has a number; the kernel stops at a 0 (reason 3).
  const Tensor checked =
      detail::requireAtLeast(cast(any(logical_not(nan), axes, keepdims), DType::i64), 1, 3);
  return index * checked;
}
} // namespace

Tensor nanargmax(const Tensor &a, std::optional<int64_t> axis, bool keepdims) {
  return nanExtremeIndex(a, axis, keepdims, true);
}

Tensor nanargmin(const Tensor &a, std::optional<int64_t> axis, bool keepdims) {
  return nanExtremeIndex(a, axis, keepdims, false);
}

namespace {
template <class C> Tensor extremeValue(ScalarType type, bool largest) {
  if constexpr (std::is_same_v<C, bool>)
    return type(largest ? 1.0 : 0.0);
  else if constexpr (std::is_integral_v<C>)
    return type(largest ? std::numeric_limits<C>::max() : std::numeric_limits<C>::min());
  else
    return type(largest ? std::numeric_limits<double>::infinity()
                        : -std::numeric_limits<double>::infinity());
}

/// The largest (or smallest) value of a real dtype: infinities for floats.
Tensor extremeOf(DType dtype, bool largest) {
  switch (dtype) {
#define TINYMLIR_DTYPE(Name, name, descr, bytes, Kind, CType)                                      \
  case DType::Name:                                                                                \
    return extremeValue<CType>(ScalarType{dtype}, largest);
#include <tinymlir/dtypes.def>
  }
  return Tensor();
}
} // namespace

// --- Reductions with NumPy's keywords ---------------------------------------------

namespace {

enum class Reducer { Sum, Prod, Max, Min, Any, All, Mean, Var, Std };

std::optional<Reducer> reducerOf(std::string_view name) {
  static constexpr std::pair<std::string_view, Reducer> kNames[] = {
      {"sum", Reducer::Sum},   {"prod", Reducer::Prod}, {"max", Reducer::Max},
      {"min", Reducer::Min},   {"any", Reducer::Any},   {"all", Reducer::All},
      {"mean", Reducer::Mean}, {"var", Reducer::Var},   {"std", Reducer::Std}};
  for (auto [n, r] : kNames)
    if (n == name)
      return r;
  return std::nullopt;
}

Reducer reducerNamed(std::string_view name) {
  if (const std::optional<Reducer> r = reducerOf(name))
    return *r;
  fail("reduce",
       "no reduction named '" + std::string(name) +
           "' (sum, prod, max, min, any, all, mean, var, std, and nan and one of the first "
           "four or the last three)",
       ErrorKind::Type);
}

/// a where `w` holds and `fill` elsewhere; all of a without a mask.
Tensor kept(const Tensor &a, const Tensor &w, const Tensor &fill) {
  return w.valid() ? where(w, a, cast(fill, a.dtype())) : a;
}

/// NumPy's _mean and _var (numpy/_core/_methods.py) over the elements where
/// `w` holds: integers in float64, float16 in float32 with a float16 result.
/// The count is w's (nan for none); the variance's sum of squares is divided
/// by max(count - ddof, 0).
Tensor meanOrVar(const Tensor &a, const Axes &axes, bool keepdims, const Tensor &w,
                 std::optional<double> ddof) {
  if (!w.valid())
    return ddof ? var(a, axes, keepdims, *ddof) : mean(a, axes, keepdims);
  Tensor t = inexact(a.dtype()) ? a : cast(a, DType::f64);
  const bool half = t.dtype() == DType::f16;
  if (half)
    t = cast(t, DType::f32);
  auto zero = [](const Tensor &x) { return ScalarType{x.dtype()}(0.0); };
  auto half16 = [&](const Tensor &r) { return half ? cast(r, DType::f16) : r; };
  if (!ddof) {
    const Tensor total = sum(where(w, t, zero(t)), axes, keepdims);
    return half16(divideByCount(total, sum(cast(w, DType::i64), axes, keepdims)));
  }
  const Tensor count = sum(cast(w, DType::i64), axes, /*keepdims=*/true);
  const Tensor centered = t - divideByCount(sum(where(w, t, zero(t)), axes, true), count);
  const Tensor squares = isComplex(t.dtype())
                             ? real(centered) * real(centered) + imag(centered) * imag(centered)
                             : centered * centered;
  const Tensor total = sum(where(w, squares, zero(squares)), axes, keepdims);
  Tensor dof = maximum(subtract(count, ScalarType{DType::f64}(*ddof)), ScalarType{DType::f64}(0.0));
  return half16(divideByCount(total, reshape(dof, total.shape())));
}

/// NumPy's nanmean, nanvar and nanstd (`variance`) of the numbers selected
/// by `how.where`: the sum over their count, and the squared deviations from
/// that mean (zero at the nans) over the count less ddof, nan where that is
/// not positive.
Tensor nanAverage(const char *op, const Tensor &a, const Axes &axes, bool keepdims,
                  const Reduction &how, bool variance) {
  auto [t, mask] = replaceNan(a, 0);
  if (variance)
    realOnly(t, op);
  floatDtype(op, how.dtype, mask.valid());
  if (!mask.valid()) // integers: np.mean and np.var
    return reduce(variance ? "var" : "mean", t, axes, keepdims, how);
  const Tensor w =
      how.where.valid() ? broadcastTo(cast(how.where, DType::b8), t.shape()) : Tensor();
  const Tensor selected = w.valid() ? logical_and(logical_not(mask), w) : logical_not(mask);
  const Tensor zero = ScalarType{t.dtype()}(0.0);
  const Tensor count = sum(selected, axes, variance || keepdims);
  const Tensor total = sum(inDtype(kept(t, w, zero), how.dtype), axes, variance || keepdims);
  if (!variance)
    return divideByCount(total, count); // nan for none
  const Tensor average = divideByCount(total, count);
  const Tensor deviation = where(selected, cast(t - average, t.dtype()), zero); // into arr
  const Tensor squares = sum(inDtype(deviation * deviation, how.dtype), axes, keepdims);
  const Tensor dof = subtract(keepdims ? count : reshape(count, squares.shape()),
                              ScalarType{DType::f64}(how.ddof));
  const Tensor v = divideByCount(squares, dof);
  return where(less_equal(dof, ScalarType{DType::f64}(0.0)), ScalarType{v.dtype()}(std::nan("")),
               v);
}

/// NumPy's nan-functions (numpy/lib/_nanfunctions_impl.py) with their
/// keywords: nans replaced by the identity of sum and prod, skipped by max
/// and min (fmax and fmin), not counted by means and variances.
Tensor nanReduce(std::string_view base, const Tensor &a, const Axes &axes, bool keepdims,
                 const Reduction &how) {
  const std::string op = "nan" + std::string(base);
  const Reducer r = reducerNamed(base);
  switch (r) {
  case Reducer::Sum:
  case Reducer::Prod:
    return reduce(base, replaceNan(a, r == Reducer::Sum ? 0 : 1).first, axes, keepdims, how);
  case Reducer::Max:
  case Reducer::Min: {
    realOnly(a, op.c_str());
    if (how.initial.valid()) // nans never win against initial
      return reduce(base, inexact(a.dtype()) ? where(isnan(a), cast(how.initial, a.dtype()), a) : a,
                    axes, keepdims, how);
    if (how.where.valid())
      fail(op.c_str(), std::string("reduction operation '") +
                           (r == Reducer::Max ? "fmax" : "fmin") +
                           "' does not have an identity, so to use a where mask one has to "
                           "specify 'initial'");
    return nanExtreme(op.c_str(), a, axes, keepdims, r == Reducer::Max);
  }
  case Reducer::Mean:
    return nanAverage(op.c_str(), a, axes, keepdims, how, false);
  case Reducer::Var:
    return nanAverage(op.c_str(), a, axes, keepdims, how, true);
  case Reducer::Std:
    return sqrt(nanAverage(op.c_str(), a, axes, keepdims, how, true));
  case Reducer::Any:
  case Reducer::All:
    break;
  }
  fail("reduce", "no reduction named '" + op + "'", ErrorKind::Type);
}

} // namespace

Tensor reduce(std::string_view name, const Tensor &a, const Axes &axes, bool keepdims,
              const Reduction &given) {
  Reduction how = given;
  if (how.correction) {
    if (how.ddof != 0)
      throw Error("ddof and correction can't be provided simultaneously.", ErrorKind::Value);
    how.ddof = *how.correction;
    how.correction.reset();
  }
  if (name.starts_with("nan"))
    return nanReduce(name.substr(3), a, axes, keepdims, how);
  if (!reducerOf(name)) // a binary ufunc's reduce, by its name (bitwise_and, subtract)
    return reduceUfunc(name, inDtype(a, how.dtype), axes, keepdims, how.initial, how.where);
  const Reducer r = reducerNamed(name);
  const std::string op(name);
  if (how.initial.valid()) {
    if (r != Reducer::Sum && r != Reducer::Prod && r != Reducer::Max && r != Reducer::Min)
      fail(op.c_str(), op + "() got an unexpected keyword argument 'initial'", ErrorKind::Type);
    if (how.initial.rank() != 0)
      fail(op.c_str(), "setting an array element with a sequence (initial of shape " +
                           shapeString(how.initial.shape()) + ", not a scalar)");
  }
  const bool averages = r == Reducer::Mean || r == Reducer::Var || r == Reducer::Std;
  if (averages)
    floatDtype(op.c_str(), how.dtype, false);
  const Tensor t = inDtype(a, how.dtype);
  const Tensor w =
      how.where.valid() ? broadcastTo(cast(how.where, DType::b8), t.shape()) : Tensor();
  auto value = [](const Tensor &x, double v) { return ScalarType{x.dtype()}(v); };
  switch (r) {
  case Reducer::Sum:
  case Reducer::Prod: {
    const bool add = r == Reducer::Sum;
    Tensor out = add ? sum(kept(t, w, value(t, 0)), axes, keepdims)
                     : prod(kept(t, w, value(t, 1)), axes, keepdims);
    if (how.dtype) // an int64 sum cast to a narrower integer wraps as its own sum would
      out = cast(out, *how.dtype);
    if (!how.initial.valid())
      return out;
    const Tensor init = cast(how.initial, out.dtype());
    return add ? out + init : out * init;
  }
  case Reducer::Max:
  case Reducer::Min: {
    const bool largest = r == Reducer::Max;
    if (!how.initial.valid()) {
      if (w.valid())
        fail(op.c_str(), std::string("reduction operation '") + (largest ? "maximum" : "minimum") +
                             "' does not have an identity, so to use a where mask one has to "
                             "specify 'initial'");
      return largest ? max(t, axes, keepdims) : min(t, axes, keepdims);
    }
    const Tensor init = cast(how.initial, t.dtype());
    if (numElements(t.shape()) == 0) // an empty max or min is initial's
      return broadcastTo(init, sum(t, axes, keepdims).shape());
    const Tensor out =
        largest ? max(kept(t, w, init), axes, keepdims) : min(kept(t, w, init), axes, keepdims);
    return largest ? maximum(out, init) : minimum(out, init);
  }
  case Reducer::Any:
  case Reducer::All: {
    const Tensor b = w.valid() ? cast(t, DType::b8) : t;
    return r == Reducer::Any ? any(kept(b, w, value(b, 0)), axes, keepdims)
                             : all(kept(b, w, value(b, 1)), axes, keepdims);
  }
  case Reducer::Mean:
    return meanOrVar(t, axes, keepdims, w, std::nullopt);
  case Reducer::Var:
    return meanOrVar(t, axes, keepdims, w, how.ddof);
  case Reducer::Std:
    return sqrt(meanOrVar(t, axes, keepdims, w, how.ddof));
  }
  return Tensor();
}

std::pair<Tensor, Tensor> divmod(const Tensor &a, const Tensor &b) {
  return {floor_divide(a, b), remainder(a, b)};
}

Tensor angle(const Tensor &z, bool deg) {
  const Tensor a = angle(z);
  return deg ? a * weakScalar(180 / std::numbers::pi, false) : a;
}

Tensor positive(const Tensor &x) {
  if (x.dtype() == DType::b8)
    fail("positive",
         "ufunc 'positive' did not contain a loop with signature matching types bool -> None",
         ErrorKind::Type);
  return x;
}

std::vector<Tensor> ufuncOperands(const std::string &ufunc, const std::vector<Tensor> &operands,
                                  DType dtype, std::string_view casting) {
  const Casting rule = castingNamed(casting);
  auto kind = [](DType d) { // bool < integers < floats < complex numbers
    return d == DType::b8 ? 0 : isComplex(d) ? 3 : isFloat(d) ? 2 : 1;
  };
  std::vector<Tensor> out;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Tensor &x = operands[i];
    const detail::NodePtr &n = x.node();
    const bool fits = n->weak && rule != Casting::No && rule != Casting::Equiv
                          ? kind(x.dtype()) <= kind(dtype) || rule == Casting::Unsafe
                          : canCast(x.dtype(), dtype, rule);
    if (!fits)
      fail(ufunc.c_str(),
           "Cannot cast ufunc '" + ufunc + "' input " + std::to_string(i) + " from dtype('" +
               dtypeName(x.dtype()) + "') to dtype('" + dtypeName(dtype) +
               "') with casting rule '" + std::string(casting) + "'",
           ErrorKind::Type);
    out.push_back(n->weak && kind(x.dtype()) <= kind(dtype) ? x : cast(x, dtype));
  }
  return out;
}

Tensor countNonzero(const Tensor &a, const Axes &axes, bool keepdims) {
  const Tensor nonzero = a.dtype() == DType::b8 ? a : not_equal(a, ScalarType{a.dtype()}(0.0));
  return sum(nonzero, axes, keepdims); // int64, as NumPy's intp
}

void dotInto(Ref &out, const Tensor &result) {
  if (out.shape().size() != result.shape().size() || out.dtype() != result.dtype() ||
      !out.contiguous())
    fail("dot", "output array is not acceptable (must have the right datatype, number of "
                "dimensions, and be a C-Array)");
  if (out.shape() != result.shape())
    fail("dot", "output array has wrong dimensions");
  out.update(result, "dot", "no");
}

Tensor partition(const Tensor &x, const std::vector<int64_t> &kth, std::optional<int64_t> axis,
                 bool indices) {
  const Tensor r = indices ? argsort(x, axis) : sort(x, axis);
  const int64_t n =
      axis ? r.shape()[static_cast<size_t>(normalizeAxes("partition", Axes(*axis), r.rank())[0])]
           : r.shape().back();
  for (int64_t k : kth)
    if (const int64_t at = k < 0 ? k + n : k; at < 0 || at >= n)
      fail(indices ? "argpartition" : "partition",
           "kth(=" + std::to_string(at) + ") out of bounds (" + std::to_string(n) + ")");
  return r;
}

void reduceInto(Ref &out, const Tensor &result, std::string_view name) {
  const std::string op(name);
  const Shape &want = result.shape(), &got = out.shape();
  if (got.size() != want.size())
    fail(op.c_str(), "output parameter for reduction operation " + op +
                         " has the wrong number of dimensions: Found " +
                         std::to_string(got.size()) + " but expected " +
                         std::to_string(want.size()));
  if (got != want)
    fail(op.c_str(), "output parameter for reduction operation " + op + " has shape " +
                         shapeString(got) + ", not the result's " + shapeString(want));
  out.assign(cast(result, out.dtype()));
}

// --- x[mask] while tracing (index.h's MaskedRead) ----------------------------------

MaskedRead::MaskedRead(Tensor full, Tensor mask, int64_t axis)
    : full_(std::move(full)), mask_(std::move(mask)), axis_(axis) {
  const Shape &fs = full_.shape(), &ms = mask_.shape();
  const auto at = static_cast<size_t>(axis_);
  if (mask_.dtype() != DType::b8 || axis_ < 0 || at + ms.size() > fs.size() ||
      !std::equal(ms.begin(), ms.end(), fs.begin() + axis_))
    fail("x[mask]",
         "a mask of shape " + shapeString(ms) + " does not cover axes " + std::to_string(axis_) +
             ".. of an array of shape " + shapeString(fs),
         ErrorKind::Trace);
}

int64_t MaskedRead::rank() const { return full_.rank() - mask_.rank() + 1; }

std::string MaskedRead::shapeText() const {
  const Shape &fs = full_.shape();
  std::string text = "(";
  for (int64_t a = 0; a < rank(); ++a) {
    if (a > 0)
      text += ", ";
    text += a == axis_
                ? "?"
                : std::to_string(fs[static_cast<size_t>(a < axis_ ? a : a + mask_.rank() - 1)]);
  }
  return text + (rank() == 1 ? ",)" : ")");
}

Tensor MaskedRead::spreadMask() const {
  Shape s(full_.shape().size(), 1);
  std::copy(mask_.shape().begin(), mask_.shape().end(), s.begin() + axis_);
  return reshape(mask_, s);
}

std::optional<Tensor> MaskedRead::fitted(const Tensor &other) const {
  const int64_t n = rank(), m = other.rank();
  if (m > n)
    return std::nullopt;                  // NumPy's result would have the count among new axes
  const int64_t facing = axis_ - (n - m); // other's axis against the count
  if (facing < 0)
    return other; // it meets only the axes after the count's: as the whole array's
  Shape s = other.shape();
  if (s[static_cast<size_t>(facing)] != 1)
    return std::nullopt;
  s.erase(s.begin() + facing);
  s.insert(s.begin() + facing, static_cast<size_t>(mask_.rank()), 1);
  return reshape(other, s);
}

Tensor MaskedRead::operand(const Tensor &other) const {
  if (std::optional<Tensor> t = fitted(other))
    return *t;
  fail("x[mask]",
       "tinymlir: an array of shape " + shapeString(other.shape()) +
           " with a boolean-mask read of shape " + shapeText() +
           ": whether they broadcast depends on the mask's count, known only when the kernel "
           "runs; use a scalar, an array of the read's other axes, or a read of the same mask",
       ErrorKind::Trace);
}

Tensor MaskedRead::operand(const MaskedRead &other) const {
  if (other.axis_ != axis_ || !sameValue(other.mask_, mask_))
    fail("x[mask]",
         "tinymlir: boolean-mask reads of different masks cannot be combined (their shapes "
         "depend on the data)",
         ErrorKind::Trace);
  return other.full_;
}

MaskedRead MaskedRead::with(const Tensor &full) const { return MaskedRead(full, mask_, axis_); }

Tensor MaskedRead::size() const {
  Tensor n = sum(cast(mask_, DType::i64));
  const Shape &fs = full_.shape();
  int64_t others = 1;
  for (size_t a = 0; a < fs.size(); ++a)
    if (static_cast<int64_t>(a) < axis_ || static_cast<int64_t>(a) >= axis_ + mask_.rank())
      others *= fs[a];
  return others == 1 ? n : n * ScalarType{DType::i64}(static_cast<double>(others));
}

std::variant<Tensor, MaskedRead> MaskedRead::reduce(std::string_view name, const Axes &axes,
                                                    bool keepdims, const Reduction &given) const {
  const std::string op(name);
  const int64_t n = rank(), r = mask_.rank();
  const std::vector<int64_t> readAxes = normalizeAxes(op.c_str(), axes, n);
  const bool counted = std::find(readAxes.begin(), readAxes.end(), axis_) != readAxes.end();
  std::vector<int64_t> fullAxes;
  int64_t before = 0; // reduced axes before the count's
  for (int64_t a : readAxes) {
    if (a == axis_)
      for (int64_t k = 0; k < r; ++k)
        fullAxes.push_back(axis_ + k);
    else
      fullAxes.push_back(a < axis_ ? a : a + r - 1);
    before += a < axis_ ? 1 : 0;
  }
  Reduction how = given;
  if (how.where.valid())
    how.where = operand(cast(how.where, DType::b8));
  Tensor x = full_;
  std::string reduction = op;
  if (reduction == "count_nonzero") {
    x = x.dtype() == DType::b8 ? x : not_equal(x, ScalarType{x.dtype()}(0.0));
    reduction = "sum";
  }
  const bool inexact = isFloat(x.dtype()) || isComplex(x.dtype());
  if (reduction.starts_with("nan") && !inexact)
    reduction = reduction.substr(3); // NumPy's nan-functions of integers are the plain ones
  if (!counted)
    return MaskedRead(tinymlir::reduce(reduction, x, Axes(fullAxes), keepdims, how), mask_,
                      keepdims ? axis_ : axis_ - before);
  const Tensor mask = spreadMask();
  const bool extreme =
      reduction == "max" || reduction == "min" || reduction == "nanmax" || reduction == "nanmin";
  if (reduction.starts_with("nan")) // the elements not selected are nans, which they skip
    x = where(mask, x, ScalarType{x.dtype()}(std::numeric_limits<double>::quiet_NaN()));
  else if (extreme && how.where.valid() && !how.initial.valid())
    return tinymlir::reduce(reduction, x, Axes(fullAxes), keepdims, how); // NumPy's error
  else
    how.where = how.where.valid() ? logical_and(mask, how.where) : mask;
  const bool checkEmpty = extreme && !how.initial.valid();
  if (checkEmpty && !reduction.starts_with("nan"))
    how.initial = extremeOf(x.dtype(), reduction == "min"); // no effect on what is selected
  Tensor result = tinymlir::reduce(reduction, x, Axes(fullAxes), false, how);
  if (checkEmpty) { // 1 when something is selected; the kernel stops at a 0 (reasons 4, 5)
    const bool largest = reduction.ends_with("max");
    const Tensor one = detail::requireAtLeast(cast(any(mask_), DType::i64), 1, largest ? 4 : 5);
    result = result.dtype() == DType::b8 ? logical_and(result, cast(one, DType::b8))
                                         : result * cast(one, result.dtype());
  }
  if (!keepdims)
    return result;
  Shape kept; // the read's shape with the reduced axes 1
  for (int64_t a = 0; a < n; ++a)
    kept.push_back(std::find(readAxes.begin(), readAxes.end(), a) != readAxes.end()
                       ? 1
                       : full_.shape()[static_cast<size_t>(a < axis_ ? a : a + r - 1)]);
  return reshape(result, kept);
}

Tensor nanmean(const Tensor &a, const Axes &axes, bool keepdims, std::optional<DType> dtype) {
  return reduce("nanmean", a, axes, keepdims, {.dtype = dtype});
}

Tensor nanvar(const Tensor &a, const Axes &axes, bool keepdims, double ddof,
              std::optional<DType> dtype) {
  return reduce("nanvar", a, axes, keepdims, {.dtype = dtype, .ddof = ddof});
}

Tensor nanstd(const Tensor &a, const Axes &axes, bool keepdims, double ddof,
              std::optional<DType> dtype) {
  return reduce("nanstd", a, axes, keepdims, {.dtype = dtype, .ddof = ddof});
}

namespace {
/// NumPy's power_of_ten (multiarray/calculation.c): exact up to 1e8, then
/// repeated products.
double powerOfTen(int64_t n) {
  if (n < 9)
    return std::pow(10.0, static_cast<double>(n)); // exact: 10^n < 2^53
  double value = 1e9;
  for (int64_t i = 9; i < n; ++i)
    value *= 10.0;
  return value;
}
} // namespace

Tensor round(const Tensor &a, int64_t decimals) {
  if (isInteger(a.dtype()) || a.dtype() == DType::b8) {
    if (decimals >= 0)
      return a; // NumPy's: the array itself
    const Tensor f = weakScalar(powerOfTen(-decimals), false);
    return cast(rint(cast(a, DType::f64) / f) * f, a.dtype());
  }
  if (decimals == 0)
    return rint(a);
  if (isComplex(a.dtype()))
    fail("round", "tinymlir: complex arrays are rounded with decimals=0 only", ErrorKind::Trace);
  const Tensor f = weakScalar(powerOfTen(decimals < 0 ? -decimals : decimals), false);
  return decimals > 0 ? rint(a * f) / f : rint(a / f) * f;
}

Tensor diff(const Tensor &a, int64_t n, int64_t axis, const Tensor &prepend, const Tensor &append) {
  const int64_t rank = static_cast<int64_t>(a.shape().size());
  if (rank == 0)
    fail("diff", "diff requires input that is at least one dimensional");
  if (n < 0)
    fail("diff", "order must be non-negative but got " + std::to_string(n));
  if (n == 0)
    return a;
  axis = normalizeAxes("diff", axis, rank)[0];
  std::vector<Tensor> parts; // NumPy's combined: prepend, a, append
  for (const Tensor *p : {&prepend, &a, &append}) {
    if (!p->valid())
      continue;
    Tensor part = strong(*p);
    if (part.rank() == 0) { // a scalar: one slice of a's shape
      Shape slice = a.shape();
      slice[static_cast<size_t>(axis)] = 1;
      part = broadcastTo(part, slice);
    }
    parts.push_back(part);
  }
  Tensor t = parts.size() > 1 ? concatenate(parts, axis) : a;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t size = t.shape()[static_cast<size_t>(axis)];
    if (size < 2)
      fail("diff", "tinymlir: numpy.diff would be empty along axis " + std::to_string(axis) +
                       " (size " + std::to_string(size) +
                       "); arrays with zero elements are not traced");
    const Tensor head = along(t, axis, Slice{1, {}}), tail = along(t, axis, Slice{{}, -1});
    t = t.dtype() == DType::b8 ? not_equal(head, tail) : head - tail;
  }
  return t;
}

Tensor matrixPower(const Tensor &a, int64_t n) {
  const Shape &s = a.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    fail("matrix_power", "Last 2 dimensions of the array must be square", ErrorKind::LinAlg);
  if (n == 0) {
    const int64_t m = s.back();
    const Tensor eye = equal(detail::iotaAlong(m, 0, 2), detail::iotaAlong(m, 1, 2));
    return broadcastTo(cast(eye, a.dtype()), s);
  }
  Tensor t = a;
  if (n < 0) {
    t = la::inv(t);
    n = -n;
  }
  if (n == 1)
    return t; // (a copy to Python: an array of its own)
  if (n == 2)
    return matmul(t, t);
  if (n == 3)
    return matmul(matmul(t, t), t);
  Tensor result, z;
  while (n > 0) {
    z = z.valid() ? matmul(z, z) : t;
    const int64_t bit = n % 2;
    n /= 2;
    if (bit)
      result = result.valid() ? matmul(result, z) : z;
  }
  return result;
}

namespace {
/// The sum of concrete `w` over `axes` (all: empty), sequential in float64,
/// as a concrete array of `dtype`, with 1 on the summed axes.
Array hostSum(const Array &w, const std::vector<int64_t> &axes, DType dtype) {
  Shape kept = w.shape();
  for (int64_t a : axes)
    kept[static_cast<size_t>(a)] = 1;
  if (axes.empty())
    kept.assign(w.shape().size(), 1);
  std::vector<double> sums(static_cast<size_t>(numElements(kept)), 0.0);
  const std::vector<double> values = w.toDoubles();
  const size_t rank = w.shape().size();
  std::vector<int64_t> index(rank, 0);
  for (double v : values) {
    int64_t out = 0;
    for (size_t d = 0; d < rank; ++d)
      out = out * kept[d] + (kept[d] == 1 ? 0 : index[d]);
    sums[static_cast<size_t>(out)] += v;
    for (size_t d = rank; d-- > 0;)
      if (++index[d] < w.shape()[d])
        break;
      else
        index[d] = 0;
  }
  return Array::fromVector(sums, kept).astype(dtype);
}

/// s[..., i]: the i-th element along the last axis (of sorted values: the
/// i-th of every slice).
Tensor sortedAt(const Tensor &s, int64_t i) {
  const size_t rank = s.shape().size();
  std::vector<int64_t> begin(rank, 0), end(s.shape().begin(), s.shape().end());
  begin.back() = i;
  end.back() = i + 1;
  Shape shape(s.shape().begin(), s.shape().end() - 1);
  return reshape(slice(s, begin, end), shape);
}

bool anyZero(const Array &a) {
  for (double v : a.toDoubles())
    if (v == 0.0)
      return true;
  return false;
}
} // namespace

std::pair<Tensor, Tensor> average(const Tensor &a, const Axes &axes, const Tensor &weights,
                                  bool keepdims) {
  const int64_t rank = static_cast<int64_t>(a.shape().size());
  const std::vector<int64_t> over =
      axes.list ? normalizeAxes("average", axes, rank) : std::vector<int64_t>{};
  if (!weights.valid()) {
    const Tensor avg = mean(a, axes, keepdims);
    const double count = static_cast<double>(numElements(a.shape())) /
                         static_cast<double>(std::max<int64_t>(numElements(avg.shape()), 1));
    return {avg, broadcastTo(ScalarType{avg.dtype()}(count), avg.shape())};
  }
  DType dtype = detail::promoteTypes(a.dtype(), weights.dtype());
  if (isInteger(a.dtype()) || a.dtype() == DType::b8)
    dtype = detail::promoteTypes(dtype, DType::f64);
  Tensor w = weights;
  bool total = false; // the weights cover exactly the averaged axes
  if (w.shape() != a.shape()) {
    if (!axes.list)
      fail("average", "Axis must be specified when shapes of a and weights differ.",
           ErrorKind::Type);
    Shape along;
    for (int64_t ax : *axes.list)
      along.push_back(a.shape()[static_cast<size_t>(ax < 0 ? ax + rank : ax)]);
    if (w.shape() != along)
      fail("average", "Shape of weights must be consistent with shape of a along specified axis.");
    // The weights' axes in increasing order, then 1 on the other axes.
    std::vector<int64_t> given;
    for (int64_t ax : *axes.list)
      given.push_back(ax < 0 ? ax + rank : ax);
    std::vector<int64_t> order(given.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { // distinct axes
      return given[static_cast<size_t>(i)] < given[static_cast<size_t>(j)];
    });
    Shape shape(static_cast<size_t>(rank), 1);
    for (int64_t ax : over)
      shape[static_cast<size_t>(ax)] = a.shape()[static_cast<size_t>(ax)];
    w = reshape(transpose(w, order), shape);
    total = true;
  }
  Tensor scl;
  if (weights.isConcrete()) {
    // NumPy sums static weights itself: the sum, and its check, are known now.
    const Array sums = hostSum(weights.array(), total ? std::vector<int64_t>{} : over, dtype);
    if (anyZero(sums))
      fail("average", "Weights sum to zero, can't be normalized", ErrorKind::ZeroDivision);
    // NumPy's shape: its sum over the axes of the weights as broadcast.
    if (total)
      scl = reshape(
          Tensor(sums),
          Shape(keepdims ? static_cast<size_t>(rank) : static_cast<size_t>(rank) - over.size(), 1));
    else if (!axes.list)
      scl = reshape(Tensor(sums), keepdims ? Shape(static_cast<size_t>(rank), 1) : Shape{});
    else
      scl = keepdims ? Tensor(sums) : squeeze(Tensor(sums), Axes{over});
  } else {
    scl = sum(cast(w, dtype), axes, keepdims);
  }
  const Tensor avg = sum(cast(a, dtype) * cast(w, dtype), axes, keepdims) / scl;
  return {avg, scl.shape() == avg.shape() ? scl : broadcastTo(scl, avg.shape())};
}

Tensor cov(const Tensor &operandM, const Tensor &operandY, bool rowvar, bool bias,
           std::optional<double> ddof, const Tensor &fweights, const Tensor &aweights,
           std::optional<DType> dtype) {
  const Tensor m = strong(operandM), y = strong(operandY);
  if (ddof && *ddof != std::trunc(*ddof))
    throw Error("ddof must be integer", ErrorKind::Value);
  auto realOperand = [](const Tensor &t, const char *what) {
    if (isComplex(t.dtype()))
      fail("cov",
           std::string("tinymlir traces numpy.cov of real (and bool) values, not ") +
               dtypeName(t.dtype()),
           ErrorKind::Trace);
    if (t.shape().size() > 2)
      fail("cov", std::string(what) + " has more than 2 dimensions");
  };
  realOperand(m, "m");
  if (y.valid())
    realOperand(y, "y");
  const DType type =
      dtype ? *dtype
            : detail::promoteTypes(
                  y.valid() ? detail::promoteTypes(m.dtype(), y.dtype()) : m.dtype(), DType::f64);
  auto ndmin2 = [type](const Tensor &v) {
    const Tensor t = cast(v, type);
    if (t.shape().size() >= 2)
      return t;
    Shape s = t.shape();
    s.insert(s.begin(), 2 - s.size(), 1);
    return reshape(t, s);
  };
  Tensor X = ndmin2(m);
  if (!rowvar && m.shape().size() != 1)
    X = transpose(X, {1, 0});
  if (X.shape()[0] == 0)
    return full({0, 0}, 0.0, DType::f64);
  if (y.valid()) {
    Tensor Y = ndmin2(y);
    if (!rowvar && Y.shape()[0] != 1)
      Y = transpose(Y, {1, 0});
    X = concatenate({X, Y}, 0);
  }
  const int64_t dof = ddof ? static_cast<int64_t>(*ddof) : (bias ? 0 : 1);
  const int64_t n = X.shape()[1];
  // NumPy's checks of the weights, in its order (those of values: concrete ones).
  auto checked = [n](const Tensor &v, const std::string &name) {
    const bool known = v.isConcrete();
    const std::vector<double> values = known ? v.array().toDoubles() : std::vector<double>{};
    if (name == "fweights")
      for (double x : values)
        if (x != std::nearbyint(x))
          fail("cov", "fweights must be integer", ErrorKind::Type);
    if (v.shape().size() > 1)
      fail("cov", "cannot handle multidimensional " + name, ErrorKind::Runtime);
    if (v.shape().empty() || v.shape()[0] != n)
      fail("cov", "incompatible numbers of samples and " + name, ErrorKind::Runtime);
    for (double x : values)
      if (x < 0)
        fail("cov", name + " cannot be negative");
    return known ? Tensor(Array::fromVector(values, v.shape())) : cast(v, DType::f64);
  };
  Tensor w, aw;
  if (fweights.valid())
    w = checked(fweights, "fweights");
  if (aweights.valid()) {
    aw = checked(aweights, "aweights");
    if (!w.valid())
      w = aw;
    else if (w.isConcrete() && aw.isConcrete()) { // NumPy's product of static weights
      std::vector<double> p = w.array().toDoubles();
      const std::vector<double> q = aw.array().toDoubles();
      for (size_t i = 0; i < p.size(); ++i)
        p[i] *= q[i];
      w = Tensor(Array::fromVector(p, {n}));
    } else {
      w = w * aw;
    }
  }
  auto [avg, sums] = average(X, 1, w, false);
  // The degrees of freedom: static where the weights are, as NumPy's.
  std::optional<double> fixed;
  Tensor fact;
  const bool staticSum = !w.valid() || w.isConcrete();
  double wSum = 0;
  if (staticSum && w.valid())
    for (double v : w.array().toDoubles())
      wSum += v;
  if (!w.valid())
    fixed = static_cast<double>(n - dof);
  else if (staticSum) {
    if (dof == 0)
      fixed = wSum;
    else if (!aw.valid())
      fixed = wSum - static_cast<double>(dof);
    else {
      const std::vector<double> p = w.array().toDoubles(), q = aw.array().toDoubles();
      double s = 0; // Python's sum, in order
      for (size_t i = 0; i < p.size(); ++i)
        s += p[i] * q[i];
      fixed = wSum - static_cast<double>(dof) * s / wSum;
    }
  } else {
    const Tensor ws = reshape(slice(sums, {0}, {1}), {});
    fact = dof == 0      ? ws
           : !aw.valid() ? ws - ScalarType{DType::f64}(static_cast<double>(dof))
                         : ws - ScalarType{DType::f64}(static_cast<double>(dof)) * sum(w * aw) / ws;
  }
  Tensor scale;
  if (fixed) {
    double f = *fixed;
    if (f <= 0) {
      warn("Degrees of freedom <= 0 for slice");
      f = 0.0;
      warn("divide by zero encountered in divide"); // NumPy's true_divide(1, 0)
    }
    scale = weakScalar(1.0 / f, false);
  } else {
    const Tensor f =
        where(less_equal(fact, ScalarType{DType::f64}(0.0)), ScalarType{DType::f64}(0.0), fact);
    scale = ScalarType{DType::f64}(1.0) / f;
  }
  Shape column = avg.shape();
  column.push_back(1);
  X = cast(X - reshape(avg, column), X.dtype());
  const Tensor weighted = w.valid() ? X * w : X; // float64 weights promote, as NumPy's
  Tensor c = matmul(X, transpose(weighted, {1, 0}));
  c = cast(c * scale, c.dtype());
  return squeeze(c);
}

Tensor corrcoef(const Tensor &x, const Tensor &y, bool rowvar, std::optional<DType> dtype) {
  Tensor c = cov(x, y, rowvar, false, std::nullopt, Tensor(), Tensor(), dtype);
  if (c.shape().size() != 2) // NumPy's diag raises for a scalar covariance
    return c / c;
  const int64_t k = c.shape()[0];
  const Tensor d = sqrt(diagonal(c));
  c = c / reshape(d, {k, 1});
  c = c / reshape(d, {1, k});
  return clip(c, weakScalar(-1.0, true), weakScalar(1.0, true));
}

namespace la {
namespace {
/// NumPy's finfo(dtype).eps of a float or complex dtype.
double epsilonOf(DType d) {
  return realPart(d) == DType::f32   ? FLT_EPSILON
         : realPart(d) == DType::f16 ? 0x1p-10
                                     : DBL_EPSILON;
}
/// The axis `a` of a rank-`rank` array, from the end where negative.
int64_t normAxis(int64_t a, int64_t rank) {
  const int64_t axis = a < 0 ? a + rank : a;
  if (axis < 0 || axis >= rank)
    fail("norm",
         "axis " + std::to_string(a) + " is out of bounds for array of dimension " +
             std::to_string(rank),
         ErrorKind::Axis);
  return axis;
}
bool isOrder(const NormOrder &ord, double p) { return ord.name.empty() && ord.p && *ord.p == p; }
} // namespace

Tensor norm(const Tensor &x, const NormOrder &ord, const Axes &axes, bool keepdims) {
  const Tensor t = isFloat(x.dtype()) || isComplex(x.dtype()) ? x : cast(x, DType::f64);
  const int64_t rank = static_cast<int64_t>(t.shape().size());
  const bool none = !ord.p && ord.name.empty();
  std::vector<int64_t> over;
  if (!axes.list) {
    if (none) { // the 2-norm of all of it, as NumPy's
      const Tensor squares = isComplex(t.dtype()) ? real(t) * real(t) + imag(t) * imag(t) : t * t;
      const Tensor r = sqrt(sum(squares));
      return keepdims ? reshape(r, Shape(static_cast<size_t>(rank), 1)) : r;
    }
    if (rank != 1 && rank != 2)
      fail("norm", "Improper number of dimensions to norm.");
    for (int64_t i = 0; i < rank; ++i)
      over.push_back(i);
  } else {
    for (int64_t a : *axes.list)
      over.push_back(normAxis(a, rank));
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (over.size() == 1) {
    const Tensor a = abs(t);
    const Axes along{over};
    if (none || isOrder(ord, 2))
      return sqrt(sum(a * a, along, keepdims));
    if (isOrder(ord, inf))
      return max(a, along, keepdims);
    if (isOrder(ord, -inf))
      return min(a, along, keepdims);
    if (isOrder(ord, 0))
      return cast(sum(not_equal(t, ScalarType{t.dtype()}(0.0)), along, keepdims), a.dtype());
    if (isOrder(ord, 1))
      return sum(a, along, keepdims);
    if (!ord.name.empty())
      fail("norm", "Invalid norm order '" + ord.name + "' for vectors");
    return pow(sum(pow(a, weakScalar(*ord.p, false)), along, keepdims),
               weakScalar(1.0 / *ord.p, false));
  }
  if (over.size() != 2)
    fail("norm", "Improper number of dimensions to norm.");
  const int64_t row = over[0], col = over[1];
  if (row == col)
    fail("norm", "Duplicate axes given.");
  Shape kept = t.shape(), rest;
  for (int64_t i = 0; i < rank; ++i)
    if (i == row || i == col)
      kept[static_cast<size_t>(i)] = 1;
    else
      rest.push_back(t.shape()[static_cast<size_t>(i)]);
  Tensor r;
  if (none || ord.name == "fro") {
    const Tensor a = abs(t);
    return sqrt(sum(a * a, Axes{over}, keepdims));
  } else if (isOrder(ord, 2) || isOrder(ord, -2) || ord.name == "nuc") {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < rank; ++i)
      if (i != row && i != col)
        order.push_back(i);
    order.insert(order.end(), {row, col});
    const Tensor s = singularValues(transpose(t, order));
    r = isOrder(ord, 2) ? max(s, -1) : isOrder(ord, -2) ? min(s, -1) : sum(s, -1);
  } else if (ord.name.empty() &&
             (isOrder(ord, 1) || isOrder(ord, -1) || isOrder(ord, inf) || isOrder(ord, -inf))) {
    const bool columns = isOrder(ord, 1) || isOrder(ord, -1);
    const int64_t summed = columns ? row : col, other = columns ? col : row;
    const Tensor sums = sum(abs(t), summed, /*keepdims=*/true);
    const bool largest = isOrder(ord, 1) || isOrder(ord, inf);
    r = reshape(largest ? max(sums, other, true) : min(sums, other, true), rest);
  } else {
    fail("norm", "Invalid norm order for matrices.");
  }
  return keepdims ? reshape(r, kept) : r;
}

Tensor pinv(const Tensor &a, std::optional<double> rcond, bool rtolGiven,
            std::optional<double> rtol) {
  if (rcond && rtolGiven)
    throw Error("`rtol` and `rcond` can't be both set.", ErrorKind::Value);
  return pinv(a, rcond ? rcond : rtolGiven ? rtol : std::optional<double>(1e-15));
}

Tensor pinv(const Tensor &a, std::optional<double> rcond) {
  const Tensor t = isFloat(a.dtype()) || isComplex(a.dtype()) ? a : cast(a, DType::f64);
  const Shape &shape = t.shape();
  if (shape.size() < 2)
    fail("pinv", std::to_string(shape.size()) +
                     "-dimensional array given. Array must be at least two-dimensional");
  auto [u, s, vt] = svd(t, /*full=*/false);
  const double cut = rcond ? *rcond
                           : static_cast<double>(std::max(shape[shape.size() - 2], shape.back())) *
                                 epsilonOf(t.dtype());
  const Tensor cutoff = max(s, -1, /*keepdims=*/true) * weakScalar(cut, false);
  const Tensor above = greater(s, cutoff);
  const Tensor one = ScalarType{s.dtype()}(1.0), zero = ScalarType{s.dtype()}(0.0);
  const Tensor inverse = cast(where(above, one / where(above, s, one), zero), s.dtype());
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto swap = [rank](const Tensor &m) {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < rank - 2; ++i)
      order.push_back(i);
    order.insert(order.end(), {rank - 1, rank - 2});
    return transpose(m, order);
  };
  Shape column = inverse.shape();
  column.push_back(1);
  return matmul(swap(vt), reshape(inverse, column) * swap(u));
}

Tensor matrixRank(const Tensor &a, const Tensor &tol, std::optional<double> rtol) {
  const Shape &shape = a.shape();
  if (shape.size() < 2)
    return cast(any(not_equal(a, ScalarType{a.dtype()}(0.0))), DType::i64);
  const Tensor s = singularValues(a);
  Tensor bound;
  if (!tol.valid()) {
    const double r = rtol ? *rtol
                          : static_cast<double>(std::max(shape[shape.size() - 2], shape.back())) *
                                epsilonOf(s.dtype());
    bound = max(s, -1, /*keepdims=*/true) * weakScalar(r, false);
  } else {
    Shape column = tol.shape();
    column.push_back(1);
    bound = reshape(tol, column);
  }
  return sum(cast(greater(s, bound), DType::i64), -1);
}

Tensor cond(const Tensor &x, const NormOrder &ord) {
  const bool none = !ord.p && ord.name.empty();
  if (!none && !isOrder(ord, 2) && !isOrder(ord, -2))
    return norm(x, ord, Axes{std::vector<int64_t>{-2, -1}}) *
           norm(inv(x), ord, Axes{std::vector<int64_t>{-2, -1}});
  const Tensor s = singularValues(x);
  const Tensor first = sortedAt(s, 0), last = sortedAt(s, s.shape().back() - 1);
  return isOrder(ord, -2) ? last / first : first / last;
}
Tensor vectorNorm(const Tensor &x, const std::optional<std::vector<int64_t>> &axes, bool keepdims,
                  const NormOrder &ord) {
  const int64_t rank = x.rank();
  std::vector<int64_t> merged, rest;
  if (axes)
    for (int64_t a : *axes)
      merged.push_back(normalizeAxes("vector_norm", Axes(a), rank)[0]);
  else
    for (int64_t a = 0; a < rank; ++a)
      merged.push_back(a);
  Shape shape{1}, kept = x.shape();
  for (int64_t a : merged) {
    shape[0] *= x.shape()[static_cast<size_t>(a)];
    kept[static_cast<size_t>(a)] = 1;
  }
  for (int64_t a = 0; a < rank; ++a)
    if (std::find(merged.begin(), merged.end(), a) == merged.end()) {
      rest.push_back(a);
      shape.push_back(x.shape()[static_cast<size_t>(a)]);
    }
  std::vector<int64_t> order = merged;
  order.insert(order.end(), rest.begin(), rest.end());
  const Tensor r = norm(reshape(transpose(x, order), shape), ord, Axes(int64_t{0}));
  return keepdims ? reshape(r, kept) : r;
}

Tensor multiDot(const std::vector<Tensor> &given) {
  const size_t n = given.size();
  if (n < 2)
    fail("multi_dot", "Expecting at least two arrays.");
  if (n == 2)
    return dot(given[0], given[1]);
  std::vector<Tensor> a;
  for (const Tensor &t : given)
    a.push_back(strong(t));
  const bool firstVector = a.front().rank() == 1, lastVector = a.back().rank() == 1;
  if (firstVector)
    a.front() = reshape(a.front(), {1, a.front().shape()[0]});
  if (lastVector)
    a.back() = reshape(a.back(), {a.back().shape()[0], 1});
  for (const Tensor &t : a)
    if (t.rank() != 2)
      fail("multi_dot",
           std::to_string(t.rank()) + "-dimensional array given. Array must be two-dimensional",
           ErrorKind::LinAlg);
  // NumPy's order: for three, its cost formula; beyond, its matrix-chain table
  std::function<Tensor(size_t, size_t)> chain;
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  if (n == 3) {
    const double a0 = static_cast<double>(a[0].shape()[0]),
                 a1 = static_cast<double>(a[0].shape()[1]),
                 b1 = static_cast<double>(a[2].shape()[0]),
                 c1 = static_cast<double>(a[2].shape()[1]);
    split[0][2] = a0 * b1 * (a1 + c1) < a1 * c1 * (a0 + b1) ? 1 : 0; // (AB)C, else A(BC)
    split[1][2] = 1;
  } else {
    std::vector<double> p;
    for (const Tensor &t : a)
      p.push_back(static_cast<double>(t.shape()[0]));
    p.push_back(static_cast<double>(a.back().shape()[1]));
    std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0.0));
    for (size_t l = 1; l < n; ++l)
      for (size_t i = 0; i + l < n; ++i) {
        const size_t j = i + l;
        cost[i][j] = std::numeric_limits<double>::infinity();
        for (size_t k = i; k < j; ++k) {
          const double q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1];
          if (q < cost[i][j]) {
            cost[i][j] = q;
            split[i][j] = k;
          }
        }
      }
  }
  chain = [&](size_t i, size_t j) -> Tensor {
    return i == j ? a[i] : dot(chain(i, split[i][j]), chain(split[i][j] + 1, j));
  };
  const Tensor result = chain(0, n - 1);
  if (firstVector && lastVector)
    return reshape(result, {});
  return firstVector || lastVector ? reshape(result, {numElements(result.shape())}) : result;
}

} // namespace la

namespace {
/// sum(a * b) over the last axis of both (a conjugated where `conj`), in the
/// product's dtype, after NumPy's check of the core sizes (gufunc `name`
/// with `signature`).
Tensor coreSum(const char *name, const char *signature, Tensor a, const Tensor &b, bool conj) {
  const int64_t n = a.shape().back(), m = b.shape().back();
  if (n != m)
    fail(name, std::string(name) +
                   ": Input operand 1 has a mismatch in its core dimension 0, "
                   "with gufunc signature " +
                   signature + " (size " + std::to_string(m) + " is different from " +
                   std::to_string(n) + ")");
  if (conj && isComplex(a.dtype()))
    a = conjugate(a);
  const Tensor product = a * b;
  Reduction how;
  how.dtype = product.dtype();
  return reduce("sum", product, -1, false, how);
}
} // namespace

Tensor vecdot(const Tensor &a, const Tensor &b, int64_t axis) {
  const Tensor x = strong(a), y = strong(b);
  if (x.rank() == 0 || y.rank() == 0)
    fail("vecdot", "vecdot: Input operand 0 does not have enough dimensions (has 0, gufunc core "
                   "with signature (n),(n)->() requires 1)");
  const Tensor u = moveAxis(x, normalizeAxes("vecdot", Axes(axis), x.rank())[0], x.rank() - 1),
               v = moveAxis(y, normalizeAxes("vecdot", Axes(axis), y.rank())[0], y.rank() - 1);
  return coreSum("vecdot", "(n),(n)->()", u, v, true);
}

Tensor matvec(const Tensor &m, const Tensor &v) {
  const Tensor x = strong(m), y = strong(v);
  if (x.rank() < 2 || y.rank() < 1)
    fail("matvec", "matvec: Input operand does not have enough dimensions (gufunc core with "
                   "signature (m,n),(n)->(m))");
  Shape row = y.shape();
  row.insert(row.end() - 1, 1); // (..., 1, n)
  return coreSum("matvec", "(m,n),(n)->(m)", x, reshape(y, row), false);
}

Tensor vecmat(const Tensor &v, const Tensor &m) {
  const Tensor x = strong(v), y = strong(m);
  if (x.rank() < 1 || y.rank() < 2)
    fail("vecmat", "vecmat: Input operand does not have enough dimensions (gufunc core with "
                   "signature (n),(n,m)->(m))");
  Shape column = x.shape();
  column.insert(column.end() - 1, 1); // (..., 1, n), against (..., m, n)
  return coreSum("vecmat", "(n),(n,m)->(m)", reshape(x, column),
                 moveAxis(y, y.rank() - 2, y.rank() - 1), true);
}

namespace {
/// `index` (int64) checked when the kernel runs to lie in [0, size) (reason 7).
Tensor inRange(const Tensor &index, int64_t size) {
  const Tensor low = detail::requireAtLeast(index, 0, 7);
  return weakInteger(size - 1) - detail::requireAtLeast(weakInteger(size - 1) - low, 0, 7);
}

Tensor indexOperand(const char *op, const Tensor &t) {
  if (!isInteger(t.dtype()))
    fail(op, "only int indices permitted", ErrorKind::Type);
  return cast(strong(t), DType::i64);
}
} // namespace

std::vector<Tensor> unravelIndex(const Tensor &indices, const Shape &shape, char order) {
  Tensor i = indexOperand("unravel_index", indices);
  const int64_t size = numElements(shape);
  if (i.isConcrete()) // NumPy's message, with the index, while tracing
    for (int64_t v : i.array().toVector<int64_t>())
      if (v < 0 || v >= size)
        fail("unravel_index", "index " + std::to_string(v) +
                                  " is out of bounds for array with size " + std::to_string(size));
  i = inRange(i, size);
  std::vector<Tensor> out(shape.size());
  for (size_t k = 0; k < shape.size(); ++k) { // the fastest axis first
    const size_t a = order == 'F' ? k : shape.size() - 1 - k;
    out[a] = remainder(i, weakInteger(shape[a]));
    i = floor_divide(i, weakInteger(shape[a]));
  }
  return out;
}

Tensor ravelMultiIndex(const std::vector<Tensor> &multiIndex, const Shape &dims,
                       const std::string &mode, char order) {
  if (multiIndex.size() != dims.size())
    fail("ravel_multi_index",
         "parameter multi_index must be a sequence of length " + std::to_string(dims.size()));
  if (mode != "raise" && mode != "wrap" && mode != "clip")
    fail("ravel_multi_index",
         "clipmode must be one of 'clip', 'raise', or 'wrap' (got '" + mode + "')");
  Tensor flat;
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t a = order == 'F' ? dims.size() - 1 - k : k; // the slowest axis first
    const int64_t n = dims[a];
    Tensor c = positions(indexOperand("ravel_multi_index", multiIndex[a]), n, mode); // take's
    if (mode == "raise" && c.isConcrete()) {
      for (int64_t v : c.array().toVector<int64_t>())
        if (v < 0 || v >= n)
          fail("ravel_multi_index", "invalid entry in coordinates array");
    } else if (mode == "raise") {
      c = inRange(c, n);
    }
    flat = k == 0 ? c : flat * weakInteger(n) + c;
  }
  return flat;
}

Tensor nancumsum(const Tensor &x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  const Tensor t = strong(x);
  return cumsum(inexact(t.dtype()) ? where(isnan(t), ScalarType{t.dtype()}(0.0), t) : t, axis,
                dtype);
}

Tensor nancumprod(const Tensor &x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  const Tensor t = strong(x);
  return cumprod(inexact(t.dtype()) ? where(isnan(t), ScalarType{t.dtype()}(1.0), t) : t, axis,
                 dtype);
}

namespace {
/// a's values along `axes` sorted, last: (the other axes..., n), with the
/// reduced shape for keepdims.
struct Sorted {
  Tensor values;
  int64_t n = 1;
  Shape kept; ///< a's shape with 1 on the reduced axes
};

Sorted sortedAlong(const Tensor &a, const Axes &axes, const char *op) {
  const int64_t rank = static_cast<int64_t>(a.shape().size());
  const std::vector<int64_t> reduced = normalizeAxes(op, axes, rank);
  std::vector<int64_t> order;
  Shape rest;
  Sorted s;
  s.kept = a.shape();
  for (int64_t i = 0; i < rank; ++i)
    if (std::find(reduced.begin(), reduced.end(), i) == reduced.end()) {
      order.push_back(i);
      rest.push_back(a.shape()[static_cast<size_t>(i)]);
    }
  for (int64_t i : reduced) {
    order.push_back(i);
    s.n *= a.shape()[static_cast<size_t>(i)];
    s.kept[static_cast<size_t>(i)] = 1;
  }
  rest.push_back(s.n);
  s.values = sort(reshape(transpose(a, order), rest), -1);
  return s;
}

/// nan where the slice's last sorted value is (NumPy sorts nan last).
Tensor nanWhereSliceHasNan(const Tensor &s, const Tensor &r) {
  if (!isFloat(s.dtype()) && !isComplex(s.dtype()))
    return r;
  const Tensor last = sortedAt(s, s.shape().back() - 1);
  return cast(where(isnan(last), last, r), r.dtype());
}

/// Order statistics in float64 for integers; NumPy's TypeError for bools
/// where it subtracts them.
Tensor orderOperand(const Tensor &a, const char *op, bool subtracts) {
  if (a.dtype() == DType::b8 && subtracts)
    fail(op,
         "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the "
         "`^` operator, or the logical_xor function instead.",
         ErrorKind::Type);
  return isFloat(a.dtype()) || isComplex(a.dtype()) ? a : cast(a, DType::f64);
}
} // namespace

Tensor median(const Tensor &a, const Axes &axes, bool keepdims) {
  const Sorted s = sortedAlong(orderOperand(a, "median", false), axes, "median");
  const int64_t half = s.n / 2;
  Tensor r;
  if (s.n % 2)
    r = sortedAt(s.values, half);
  else {
    const size_t rank = s.values.shape().size();
    std::vector<int64_t> begin(rank, 0), end(s.values.shape().begin(), s.values.shape().end());
    begin.back() = half - 1;
    end.back() = half + 1;
    r = mean(slice(s.values, begin, end), -1);
  }
  r = nanWhereSliceHasNan(s.values, r);
  return keepdims ? reshape(r, s.kept) : r;
}

namespace {
/// Each slice's count of values that are not nan, (rows..., 1): where the
/// sorted slice's nans start (NumPy sorts them last).
Tensor countNotNan(const Tensor &sorted) {
  Reduction how;
  how.dtype = DType::i64;
  return reduce("sum", logical_not(isnan(sorted)), -1, true, how);
}

/// The sorted slices' values at traced positions (rows..., 1), clipped into
/// the slice: (rows...).
Tensor sortedAtTraced(const Tensor &sorted, const Tensor &at) {
  const int64_t n = sorted.shape().back();
  const Tensor p = clip(cast(at, DType::i64), weakInteger(0), weakInteger(n - 1));
  const Shape &s = sorted.shape();
  return reshape(takeAlongAxis(sorted, p, -1), Shape(s.begin(), s.end() - 1));
}
} // namespace

Tensor nanmedian(const Tensor &a, const Axes &axes, bool keepdims) {
  const Tensor t = orderOperand(a, "nanmedian", false);
  if (!inexact(t.dtype()))
    return median(a, axes, keepdims);
  const Sorted s = sortedAlong(t, axes, "nanmedian");
  const Tensor count = countNotNan(s.values);
  const Tensor lo = floor_divide(count - weakInteger(1), weakInteger(2)),
               hi = floor_divide(count, weakInteger(2));
  const Tensor below = sortedAtTraced(s.values, lo), above = sortedAtTraced(s.values, hi);
  const Shape &vs = s.values.shape();
  const Tensor odd = reshape(equal(lo, hi), Shape(vs.begin(), vs.end() - 1));
  // NumPy's median of the values left: the middle one, or the mean of two
  const Tensor r = where(odd, below, (below + above) / weakInteger(2));
  return keepdims ? reshape(r, s.kept) : r;
}

namespace {
/// NumPy's quantile methods (H&F 1996): the discrete ones take an element,
/// the continuous ones interpolate between two at a virtual index.
enum class QuantileMethod {
  InvertedCdf,
  AveragedInvertedCdf,
  ClosestObservation,
  InterpolatedInvertedCdf,
  Hazen,
  Weibull,
  Linear,
  MedianUnbiased,
  NormalUnbiased,
  Lower,
  Higher,
  Midpoint,
  Nearest
};
constexpr std::pair<std::string_view, QuantileMethod> kQuantileMethods[] = {
    {"inverted_cdf", QuantileMethod::InvertedCdf},
    {"averaged_inverted_cdf", QuantileMethod::AveragedInvertedCdf},
    {"closest_observation", QuantileMethod::ClosestObservation},
    {"interpolated_inverted_cdf", QuantileMethod::InterpolatedInvertedCdf},
    {"hazen", QuantileMethod::Hazen},
    {"weibull", QuantileMethod::Weibull},
    {"linear", QuantileMethod::Linear},
    {"median_unbiased", QuantileMethod::MedianUnbiased},
    {"normal_unbiased", QuantileMethod::NormalUnbiased},
    {"lower", QuantileMethod::Lower},
    {"higher", QuantileMethod::Higher},
    {"midpoint", QuantileMethod::Midpoint},
    {"nearest", QuantileMethod::Nearest}};

QuantileMethod quantileMethod(std::string_view name) {
  for (const auto &[key, method] : kQuantileMethods)
    if (key == name)
      return method;
  std::string keys;
  for (const auto &[key, method] : kQuantileMethods)
    keys += std::string(keys.empty() ? "'" : ", '") + std::string(key) + "'";
  fail("quantile",
       "'" + std::string(name) + "' is not a valid method. Use one of: dict_keys([" + keys + "])");
}

bool discrete(QuantileMethod m) {
  return m == QuantileMethod::InvertedCdf || m == QuantileMethod::ClosestObservation ||
         m == QuantileMethod::Lower || m == QuantileMethod::Higher || m == QuantileMethod::Nearest;
}

/// Where one q falls in a sorted slice of n values, as NumPy's _quantile
/// computes it, each step rounded to q's dtype (`round`): the two neighbours
/// and the weight of the upper one (`lo` alone for a discrete method).
struct QuantilePoint {
  int64_t lo, hi;
  double gamma;
};
template <class Round>
QuantilePoint quantilePoint(QuantileMethod m, int64_t n, double q, Round round) {
  const auto nd = static_cast<double>(n);
  auto hf = [&](double alpha, double beta) { // _compute_virtual_index
    return round(round(round(nd * q) + round(alpha + round(q * round(1 - alpha - beta)))) - 1);
  };
  auto between = [](double index, auto keepLower) { // _discrete_interpolation_to_boundaries
    const double lower = std::floor(index);
    const auto at = static_cast<int64_t>(keepLower(index - lower, lower) ? lower : lower + 1);
    return QuantilePoint{std::max<int64_t>(at, 0), 0, 0};
  };
  const double last = round(static_cast<double>(n - 1) * q); // (n - 1) q
  double index = 0;
  switch (m) {
  case QuantileMethod::InvertedCdf:
    return between(round(round(nd * q) - 1), [](double g, double) { return g == 0; });
  case QuantileMethod::ClosestObservation:
    return between(round(round(round(nd * q) - 1) - 0.5), [](double g, double lower) {
      return g == 0 && lower - 2 * std::floor(lower / 2) == 1; // floor(index) % 2 == 1
    });
  case QuantileMethod::Lower:
    return {static_cast<int64_t>(std::floor(last)), 0, 0};
  case QuantileMethod::Higher:
    return {static_cast<int64_t>(std::ceil(last)), 0, 0};
  case QuantileMethod::Nearest: // np.around: half to even
    return {static_cast<int64_t>(std::nearbyint(last)), 0, 0};
  case QuantileMethod::AveragedInvertedCdf:
    index = round(round(nd * q) - 1);
    break;
  case QuantileMethod::InterpolatedInvertedCdf:
    index = hf(0, 1);
    break;
  case QuantileMethod::Hazen:
    index = hf(0.5, 0.5);
    break;
  case QuantileMethod::Weibull:
    index = hf(0, 0);
    break;
  case QuantileMethod::Linear:
    index = last;
    break;
  case QuantileMethod::MedianUnbiased:
    index = hf(1 / 3.0, 1 / 3.0);
    break;
  case QuantileMethod::NormalUnbiased:
    index = hf(3 / 8.0, 3 / 8.0);
    break;
  case QuantileMethod::Midpoint:
    index = round(0.5 * round(std::floor(last) + std::ceil(last)));
    break;
  }
  // _get_indexes: beyond the ends both neighbours are the end (-1 above)
  double previous = std::floor(index);
  if (index >= static_cast<double>(n - 1))
    previous = -1;
  else if (index < 0)
    previous = 0;
  double gamma = round(index - previous);
  if (m == QuantileMethod::Midpoint)
    gamma = index - std::floor(index) == 0 ? 0 : 0.5;
  else if (m == QuantileMethod::AveragedInvertedCdf)
    gamma = gamma == 0 ? 0.5 : 1;
  const int64_t lo = previous < 0 ? n - 1 : static_cast<int64_t>(previous);
  return {lo, previous < 0 || index < 0 ? lo : lo + 1, gamma};
}
} // namespace

Tensor quantile(const Tensor &a, const std::vector<double> &q, const Shape &qShape,
                const Axes &axes, bool keepdims, std::optional<DType> qDType, bool weakQ,
                bool ignoreNans, std::string_view methodName) {
  const QuantileMethod method = quantileMethod(methodName);
  if (static_cast<int64_t>(q.size()) != numElements(qShape))
    fail("quantile",
         "internal: " + std::to_string(q.size()) + " values for q of shape " + shapeString(qShape));
  DType qd = qDType.value_or(DType::f64);
  if (isComplex(qd))
    fail("quantile", std::string("q must be real numbers, got ") + dtypeName(qd), ErrorKind::Type);
  for (double v : q)
    if (!(v >= 0 && v <= 1))
      fail("quantile", "Quantiles must be in the range [0, 1]");
  if (ignoreNans && inexact(a.dtype()) && method != QuantileMethod::Linear)
    fail("quantile",
         "tinymlir traces np.nanquantile and np.nanpercentile with method='linear' only, not '" +
             std::string(methodName) + "'",
         ErrorKind::Trace);
  // NumPy's: integer positions (a discrete method's, or q (n - 1) of an
  // integer q) are taken as they are, in a's dtype; else its lerp: b - a in
  // the data's dtype, then with the fraction, in q's dtype where q is strong
  // (the result promoted with it). An integer q's index stays an integer
  // where the method's formula keeps it one, else it is a float64.
  const bool integralQ = isInteger(qd) || qd == DType::b8;
  const bool takes = discrete(method) || (integralQ && method == QuantileMethod::Linear);
  if (integralQ && !takes && method != QuantileMethod::AveragedInvertedCdf &&
      method != QuantileMethod::InterpolatedInvertedCdf && method != QuantileMethod::Weibull)
    qd = DType::f64;
  if (!takes)
    orderOperand(a, "quantile", true); // NumPy's TypeError for bools
  const DType fraction = takes                ? a.dtype()
                         : !weakQ             ? detail::promoteTypes(a.dtype(), qd)
                         : inexact(a.dtype()) ? a.dtype()
                                              : DType::f64;
  // Integers interpolate in the fraction's dtype (exact differences, as NumPy's).
  const Tensor t = takes || inexact(a.dtype()) ? a : cast(a, fraction);
  const Sorted s = sortedAlong(t, axes, "quantile");
  std::vector<Tensor> results;
  if (ignoreNans && inexact(t.dtype())) { // the same steps, n each slice's count of numbers
    const DType qt = qd == DType::f32 ? DType::f32 : DType::f64;
    const Tensor lastIndex = cast(countNotNan(s.values) - weakInteger(1), qt);
    for (double v : q) {
      const Tensor at = lastIndex * ScalarType{qt}(v), lo = floor(at);
      const Tensor below = sortedAtTraced(s.values, lo);
      Tensor r = below;
      if (!takes) {
        const Tensor above = sortedAtTraced(s.values, minimum(lo + weakInteger(1), lastIndex));
        const Shape &vs = s.values.shape();
        // NumPy's lerp: t and 1 - t in q's dtype, each then in the fraction's
        const Tensor gamma = reshape(at - lo, Shape(vs.begin(), vs.end() - 1));
        const Tensor frac = cast(gamma, fraction),
                     rest = cast(ScalarType{qt}(1.0) - gamma, fraction);
        const Tensor diff = above - below;
        r = where(greater_equal(gamma, ScalarType{qt}(0.5)), above - diff * rest,
                  below + diff * frac);
        if (r.dtype() != fraction)
          r = cast(r, fraction);
      }
      results.push_back(keepdims ? reshape(r, s.kept) : r);
    }
  }
  const auto round = [qd](double v) {
    return qd == DType::f32 ? static_cast<double>(static_cast<float>(v)) : v;
  };
  for (double v : ignoreNans &&inexact(t.dtype()) ? std::vector<double>{} : q) {
    // NumPy's virtual index and its fraction, in q's dtype
    const QuantilePoint p = quantilePoint(method, s.n, round(v), round);
    Tensor r = sortedAt(s.values, p.lo);
    if (!takes) {
      const double gamma = p.gamma;
      // NumPy's lerp: t and 1 - t in q's dtype, each then in the fraction's
      const double rest = round(1.0 - gamma);
      const Tensor frac = ScalarType{fraction}(gamma);
      const Tensor below = r, above = sortedAt(s.values, p.hi);
      const Tensor diff = above - below;
      r = gamma >= 0.5 ? above - diff * ScalarType{fraction}(rest) : below + diff * frac;
      if (r.dtype() != fraction)
        r = cast(r, fraction);
    }
    if (inexact(t.dtype()))
      r = nanWhereSliceHasNan(s.values, r);
    results.push_back(keepdims ? reshape(r, s.kept) : r);
  }
  if (qShape.empty())
    return results[0];
  Shape shape = qShape;
  const Shape &each = results[0].shape();
  shape.insert(shape.end(), each.begin(), each.end());
  return reshape(stack(results, 0), shape);
}

Tensor percentile(const Tensor &a, const std::vector<double> &q, const Shape &qShape,
                  const Axes &axes, bool keepdims, std::optional<DType> qDType, bool weakQ,
                  bool ignoreNans, std::string_view method) {
  for (double v : q)
    if (!(v >= 0 && v <= 100))
      fail("percentile", "Percentiles must be in the range [0, 100]");
  std::vector<double> fractions;
  for (double v : q) // NumPy's true_divide(q, 100): in q's dtype where it is float32
    fractions.push_back(qDType == DType::f32 ? static_cast<float>(static_cast<float>(v) / 100.0f)
                                             : v / 100.0);
  const DType qd = qDType.value_or(DType::f64);
  const bool integral = isInteger(qd) || qd == DType::b8; // true_divide gives float64
  return quantile(a, fractions, qShape, axes, keepdims, integral ? DType::f64 : qd, weakQ,
                  ignoreNans, method);
}

// --- np.pad ---------------------------------------------------------------------------------

namespace {

/// x's shape with `extent` along `axis`.
Shape withExtent(Shape shape, size_t axis, int64_t extent) {
  shape[axis] = extent;
  return shape;
}

/// NumPy's _as_pairs rule for pad's values of `shape`: for each of `rank`
/// axes, the flat positions of its (before, after) values. One value serves
/// every side, two are (before, after) of every axis, others broadcast to
/// (rank, 2) (`broadcast` says so).
std::vector<std::pair<int64_t, int64_t>> pairPositions(const Shape &shape, size_t rank,
                                                       bool &broadcast) {
  const int64_t size = numElements(shape);
  broadcast = false;
  if (size == 1)
    return std::vector(rank, std::pair<int64_t, int64_t>{0, 0});
  if (shape.size() < 3 && size == 2 && shape != Shape{2, 1})
    return std::vector(rank, std::pair<int64_t, int64_t>{0, 1});
  broadcast = true;
  const Shape want{static_cast<int64_t>(rank), 2};
  const std::optional<Shape> both = detail::broadcastShapes({shape, want});
  if (shape.size() > 2 || !both || *both != want)
    fail("pad",
         "operands could not be broadcast together with remapped shapes [original->remapped]: " +
             shapeString(shape) + " and requested shape (" + std::to_string(rank) + ",2)");
  Shape cs = shape;
  cs.insert(cs.begin(), 2 - cs.size(), 1);
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t row = (cs[0] == 1 ? 0 : static_cast<int64_t>(i)) * cs[1];
    out.emplace_back(row, row + (cs[1] == 1 ? 0 : 1));
  }
  return out;
}

/// pad's values as (before, after) of each axis. Broadcast values of a
/// constant are Python numbers in NumPy (tolist): weak scalars.
std::vector<std::pair<Tensor, Tensor>> valuePairs(const Tensor &v, size_t rank) {
  bool broadcast = false;
  const auto positions = pairPositions(v.shape(), rank, broadcast);
  const detail::Node &n = *v.node();
  const std::vector<double> values =
      broadcast && n.op == Op::Constant ? n.constant.toDoubles() : std::vector<double>();
  auto at = [&](int64_t i) {
    if (values.empty())
      return reshape(slice(reshape(v, {-1}), {i}, {i + 1}), {});
    return isInteger(v.dtype()) || v.dtype() == DType::b8
               ? weakInteger(static_cast<int64_t>(values[i]))
               : weakScalar(values[i], false);
  };
  std::vector<std::pair<Tensor, Tensor>> out;
  for (const auto &[before, after] : positions)
    out.emplace_back(at(before), at(after));
  return out;
}

/// pad's static widths (as_index=True): rounded half to even, none negative.
std::vector<std::pair<int64_t, int64_t>> indexPairs(const std::vector<double> &x,
                                                    const Shape &shape, size_t rank) {
  std::vector<int64_t> v;
  for (double d : x)
    v.push_back(static_cast<int64_t>(std::nearbyint(d)));
  if (std::any_of(v.begin(), v.end(), [](int64_t i) { return i < 0; }))
    fail("pad", "index can't contain negative values");
  bool broadcast = false;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto &[before, after] : pairPositions(shape, rank, broadcast))
    out.emplace_back(v[before], v[after]);
  return out;
}

/// The value `v` (a scalar) filling `extent` along `axis` of x's shape, in
/// x's dtype (as NumPy's __setitem__ casts).
Tensor filled(const Tensor &x, size_t axis, int64_t extent, const Tensor &v) {
  return broadcastTo(cast(v, x.dtype()), withExtent(x.shape(), axis, extent));
}

/// NumPy's linspace(end, edge, width, endpoint=False, dtype=x.dtype) along
/// `axis` (numpy/_core/function_base.py): in the inexact dtype of end and
/// edge, floored for an integer dtype.
Tensor ramp(const Tensor &end, const Tensor &edge, int64_t width, size_t axis, DType dtype) {
  DType dt = (end + edge).dtype();
  if (!isFloat(dt) && !isComplex(dt))
    dt = DType::f64;
  const Tensor start = cast(end, dt);
  const Tensor delta = cast(edge, dt) - start;
  Shape ys(edge.shape().size(), 1);
  ys[axis] = width;
  Tensor y = reshape(cast(Tensor(Array::arange(width, DType::i64)), dt), ys);
  const Tensor div = ScalarType{dt}(static_cast<double>(width));
  const Tensor step = delta / div;
  const Tensor anyZero = any(equal(step, ScalarType{dt}(0.0)));
  y = where(anyZero, y / div * delta, y * step) + start;
  if (isInteger(dtype))
    y = floor(y);
  return cast(y, dtype);
}

} // namespace

std::vector<int64_t>
padWidths(const std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> &byAxis,
          int64_t rank) {
  std::vector<int64_t> widths(static_cast<size_t>(2 * rank), 0);
  for (const auto &[axis, width] : byAxis) {
    if (axis < -rank || axis >= rank)
      throw Error("list assignment index out of range", ErrorKind::Index);
    const size_t at = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    widths[2 * at] = width.first;
    widths[2 * at + 1] = width.second;
  }
  return widths;
}

Tensor pad(const Tensor &a, const std::vector<int64_t> &widths, const Shape &widthShape,
           const std::string &mode, const PadOptions &options) {
  static const std::map<std::string, std::vector<std::string>> kwargs{
      {"constant", {"constant_values"}},
      {"edge", {}},
      {"empty", {}},
      {"linear_ramp", {"end_values"}},
      {"maximum", {"stat_length"}},
      {"mean", {"stat_length"}},
      {"median", {"stat_length"}},
      {"minimum", {"stat_length"}},
      {"reflect", {"reflect_type"}},
      {"symmetric", {"reflect_type"}},
      {"wrap", {}}};
  const auto known = kwargs.find(mode);
  if (known == kwargs.end())
    fail("pad", "mode '" + mode + "' is not supported");
  std::vector<std::string> unsupported;
  auto given = [&](bool is, const char *name) {
    if (is && std::find(known->second.begin(), known->second.end(), name) == known->second.end())
      unsupported.push_back("'" + std::string(name) + "'");
  };
  given(options.constantValues.has_value(), "constant_values");
  given(options.endValues.has_value(), "end_values");
  given(options.statLengthGiven, "stat_length");
  given(options.reflectType.has_value(), "reflect_type");
  for (const std::string &name : options.otherKeywords)
    given(true, name.c_str());
  if (!unsupported.empty()) {
    std::string names;
    for (const std::string &u : unsupported)
      names += (names.empty() ? "" : ", ") + u;
    fail("pad", "unsupported keyword arguments for mode '" + mode + "': {" + names + "}");
  }
  const size_t rank = a.shape().size();
  std::vector<double> w(widths.begin(), widths.end());
  const auto pads = indexPairs(w, widthShape, rank);
  if (numElements(a.shape()) == 0 && mode != "constant" && mode != "empty") {
    for (size_t k = 0; k < rank; ++k)
      if (a.shape()[k] == 0 && (pads[k].first || pads[k].second))
        fail("pad", "can't extend empty axis " + std::to_string(k) +
                        " using modes other than 'constant' or 'empty'");
    Shape shape = a.shape();
    for (size_t k = 0; k < rank; ++k)
      shape[k] += pads[k].first + pads[k].second;
    return full(shape, 0.0, a.dtype());
  }
  const DType dtype = a.dtype();
  const auto values =
      mode == "constant"      ? valuePairs(options.constantValues.value_or(weakInteger(0)), rank)
      : mode == "linear_ramp" ? valuePairs(options.endValues.value_or(weakInteger(0)), rank)
                              : std::vector<std::pair<Tensor, Tensor>>{};
  std::vector<std::pair<std::optional<int64_t>, std::optional<int64_t>>> lengths(rank);
  if (options.statLength)
    for (size_t k = 0;
         const auto &[l, r] : indexPairs(*options.statLength, options.statLengthShape, rank))
      lengths[k++] = {l, r};
  const std::string reflectType = options.reflectType.value_or("even");
  if (reflectType != "even" && reflectType != "odd")
    fail("pad", "reflect_type must be 'even' or 'odd', not '" + reflectType + "'");
  const bool odd = reflectType == "odd";
  Tensor x = a;
  for (size_t k = 0; k < rank; ++k) {
    auto [left, right] = pads[k];
    if (left == 0 && right == 0)
      continue;
    const int64_t n = x.shape()[k];
    auto join = [&](const Tensor &l, const Tensor &r) { x = concatenate({l, x, r}, k); };
    if (mode == "constant") {
      join(filled(x, k, left, values[k].first), filled(x, k, right, values[k].second));
    } else if (mode == "empty") {
      join(full(withExtent(x.shape(), k, left), 0.0, dtype),
           full(withExtent(x.shape(), k, right), 0.0, dtype));
    } else if (mode == "edge" ||
               ((mode == "reflect" || mode == "symmetric") && n == 1)) { // NumPy's legacy
      join(broadcastTo(detail::sliceAlong(x, k, 0, 1), withExtent(x.shape(), k, left)),
           broadcastTo(detail::sliceAlong(x, k, n - 1, n), withExtent(x.shape(), k, right)));
    } else if (mode == "linear_ramp") {
      const Tensor l = ramp(values[k].first, detail::sliceAlong(x, k, 0, 1), left, k, dtype);
      const Tensor r = ramp(values[k].second, detail::sliceAlong(x, k, n - 1, n), right, k, dtype);
      join(l, flip(r, {static_cast<int64_t>(k)}));
    } else if (mode == "reflect" || mode == "symmetric") {
      // NumPy's _set_reflect_both until both sides are filled: each round
      // mirrors at most the filled part (x) at each side.
      const int64_t e = mode == "symmetric" ? 1 : 0;
      while (left > 0 || right > 0) {
        const int64_t filledLength = x.shape()[k];
        const int64_t old = e ? filledLength / n * n : (filledLength - 1) / (n - 1) * (n - 1);
        if (left > 0) {
          const int64_t c = std::min(old, left);
          Tensor chunk =
              flip(detail::sliceAlong(x, k, 1 - e, c + 1 - e), {static_cast<int64_t>(k)});
          if (odd) {
            const Tensor edge = detail::sliceAlong(x, k, 0, 1);
            chunk = cast(edge * 2 - chunk, dtype); // NumPy: 2 * edge - chunk, assigned
          }
          x = concatenate({chunk, x}, k);
          left -= c;
        }
        if (right > 0) {
          const int64_t c = std::min(old, right), m = x.shape()[k];
          Tensor chunk =
              flip(detail::sliceAlong(x, k, m - 1 + e - c, m - 1 + e), {static_cast<int64_t>(k)});
          if (odd) {
            const Tensor edge = detail::sliceAlong(x, k, m - 1, m);
            chunk = cast(edge * 2 - chunk, dtype); // NumPy: 2 * edge - chunk, assigned
          }
          x = concatenate({x, chunk}, k);
          right -= c;
        }
      }
    } else if (mode == "wrap") {
      // NumPy's _set_wrap_both: each round copies at most whole periods.
      while (left > 0 || right > 0) {
        const int64_t period = x.shape()[k] / n * n;
        if (left > 0) {
          const int64_t c = std::min(period, left);
          x = concatenate({detail::sliceAlong(x, k, period - c, period), x}, k);
          left -= c;
        }
        if (right > 0) {
          const int64_t c = std::min(period, right), m = x.shape()[k];
          x = concatenate({x, detail::sliceAlong(x, k, m - period, m - period + c)}, k);
          right -= c;
        }
      }
    } else { // maximum, mean, median, minimum of each side's first values
      auto [leftLength, rightLength] = lengths[k];
      const int64_t ll = std::min(leftLength.value_or(n), n),
                    rl = std::min(rightLength.value_or(n), n);
      if (ll == 0 || rl == 0) {
        if (mode == "maximum" || mode == "minimum")
          fail("pad", "stat_length of 0 yields no value for padding");
        fail("pad",
             "tinymlir: numpy.pad with a stat_length of 0 (NumPy's mean of no values) is not "
             "traced",
             ErrorKind::Trace);
      }
      auto stat = [&](const Tensor &chunk) {
        const Axes axes{static_cast<int64_t>(k)};
        Tensor s = mode == "maximum"   ? max(chunk, axes, true)
                   : mode == "minimum" ? min(chunk, axes, true)
                   : mode == "mean"    ? mean(chunk, axes, true)
                                       : median(chunk, axes, true);
        if (isInteger(dtype) && isFloat(s.dtype())) // NumPy's _round_if_needed
          s = rint(s);
        return s;
      };
      const Tensor ls = stat(detail::sliceAlong(x, k, 0, ll));
      const Tensor rs = ll == n && rl == n ? ls : stat(detail::sliceAlong(x, k, n - rl, n));
      join(filled(x, k, left, ls), filled(x, k, right, rs));
    }
  }
  return x;
}

// --- np.histogram ---------------------------------------------------------------------------

namespace {

/// edges[i] of equal bins for traced bin numbers i, computed as the edges
/// were (no gather).
using EdgeAt = std::function<Tensor(const Tensor &)>;

/// Each value's bin in [0, n), or n for values outside the edges (and nan).
/// With `edge` (equal bins), NumPy's own way: the bin from the value's
/// offset, then one step down or up where the edges say otherwise, so the
/// bins are the edges' comparisons exactly (elementwise). Otherwise binary
/// search: r = #edges <= x, so edges[r-1] <= x < edges[r], the last edge
/// closing the last bin.
Tensor binIds(const Tensor &xe, const Tensor &edges, int64_t n, const Tensor &keep,
              const EdgeAt &edge) {
  if (edge) {
    const Tensor first = edge(ScalarType{DType::i64}(int64_t{0}));
    const Tensor last = edge(ScalarType{DType::i64}(n));
    Tensor ok = logical_and(greater_equal(xe, first), less_equal(xe, last)); // false for nan
    if (keep.valid())
      ok = logical_and(ok, keep);
    const Tensor f = (xe - first) / (last - first) * n;
    Tensor i = clip(cast(where(ok, f, 0), DType::i64), weakInteger(0), weakInteger(n - 1));
    i = where(less(xe, edge(i)), i - 1, i);
    i = where(logical_and(greater_equal(xe, edge(i + 1)), not_equal(i, n - 1)), i + 1, i);
    return where(ok, clip(i, weakInteger(0), weakInteger(n - 1)), n);
  }
  const Tensor r = searchsorted(edges, xe, true);
  const Tensor last = equal(xe, reshape(slice(edges, {n}, {n + 1}), {}));
  Tensor inside = logical_or(logical_and(greater_equal(r, 1), less_equal(r, n)), last);
  if (keep.valid())
    inside = logical_and(inside, keep);
  return where(inside, where(last, n - 1, r - 1), n);
}

/// Integer or bool weights' histogram: each value compared with every edge.
/// NumPy sums them in float64 (bincount), cast to the weights' dtype; on
/// given edges integers as int64 cumulative sums: both exact.
Tensor weightedCounts(const Tensor &xe, const Tensor &edges, int64_t n, const Tensor &keep,
                      const Tensor &w, bool givenEdges) {
  const Tensor col = reshape(xe, {-1, 1});
  const Tensor lower = greater_equal(col, reshape(slice(edges, {0}, {n}), {1, -1}));
  const Tensor closing = less_equal(col, reshape(slice(edges, {n}, {n + 1}), {1, 1}));
  const Tensor upper =
      n > 1 ? concatenate({less(col, reshape(slice(edges, {1}, {n}), {1, -1})), closing}, 1)
            : closing;
  Tensor inside = logical_and(lower, upper);
  if (keep.valid())
    inside = logical_and(inside, reshape(keep, {-1, 1}));
  const DType acc = givenEdges && isInteger(w.dtype()) ? DType::i64 : DType::f64;
  const Tensor hist =
      sum(where(inside, reshape(cast(w, acc), {-1, 1}), ScalarType{acc}(int64_t{0})), 0);
  return w.dtype() == DType::b8 ? not_equal(hist, 0) : cast(hist, w.dtype());
}

/// A number as Python prints it: an int, or the shortest float that reads
/// back (1.0, 1e+16, inf, nan).
std::string pythonNumber(double v, bool integral) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  if (integral)
    return std::to_string(static_cast<int64_t>(v));
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  std::string s(buffer, end);
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

} // namespace

namespace {
/// A value of histogram's range: a Python number (weak) or NumPy's scalar.
double rangeValue(const Tensor &t) {
  const detail::Node &n = *t.node();
  if (n.op == Op::Scalar)
    return n.weak ? (n.integral ? static_cast<double>(n.integer) : n.scalar)
                  : (isInteger(n.dtype) ? static_cast<double>(n.integer) : n.scalar);
  if (!t.isConcrete() || t.rank() != 0)
    fail("histogram", "tinymlir: the range must be two numbers known while tracing",
         ErrorKind::Trace);
  return t.array().toDoubles()[0];
}
bool integral(const Tensor &t) {
  const detail::Node &n = *t.node();
  return n.weak ? n.integral : isInteger(t.dtype());
}
/// A range value moved to `value` (NumPy's first_edge - 0.5): a Python
/// float, or a NumPy scalar of its float dtype.
Tensor widened(const Tensor &t, double value) {
  if (t.node()->weak)
    return weakScalar(value, false);
  return ScalarType{isFloat(t.dtype()) ? t.dtype() : DType::f64}(value);
}
} // namespace

std::pair<Tensor, Tensor> histogram(const Tensor &a, const HistogramOptions &o) {
  if (isComplex(a.dtype()))
    fail("histogram",
         std::string("tinymlir traces numpy.histogram of real (and bool) values, not ") +
             dtypeName(a.dtype()),
         ErrorKind::Trace);
  Tensor t = a;
  if (t.dtype() == DType::b8) {
    warn("Converting input from bool to <class 'numpy.uint8'> for compatibility.");
    t = cast(t, DType::i32); // 0 and 1, compared exactly as NumPy's uint8
  }
  Tensor w = strong(o.weights);
  if (w.valid()) {
    if (w.shape() != t.shape())
      fail("histogram", "weights should have the same shape as a.");
    w = reshape(w, {-1});
  }
  const Tensor x = reshape(t, {-1});
  Tensor keep, edges;
  EdgeAt edge;
  int64_t n = o.bins;
  const bool uniform = !o.edges;
  if (uniform) {
    if (n < 1)
      fail("histogram", "`bins` must be positive, when an integer");
    DType binType = x.dtype(); // NumPy's result_type(first, last, a), as a float
    if (o.range)
      for (const Tensor *r : {&o.range->first, &o.range->second})
        if (!r->node()->weak)
          binType = detail::promoteTypes(binType, r->dtype());
    binType = isFloat(binType) ? binType : DType::f64;
    if (o.range) {
      Tensor lo = o.range->first, hi = o.range->second;
      double first = rangeValue(lo), last = rangeValue(hi);
      if (first > last)
        fail("histogram", "max must be larger than min in range parameter.");
      if (!std::isfinite(first) || !std::isfinite(last))
        fail("histogram", "supplied range of [" + pythonNumber(first, integral(lo)) + ", " +
                              pythonNumber(last, integral(hi)) + "] is not finite");
      if (first == last) { // NumPy's first_edge - 0.5, in its dtype
        first -= 0.5;
        last += 0.5;
        lo = widened(lo, first);
        hi = widened(hi, last);
      }
      // np.linspace(first, last, n + 1) in float64 (y = i * step, y += first,
      // the last one `last`), then in binType.
      const double delta = last - first, step = delta / static_cast<double>(n);
      std::vector<double> e(static_cast<size_t>(n) + 1);
      for (int64_t i = 0; i <= n; ++i) {
        double y = static_cast<double>(i);
        if (step == 0) {
          y /= static_cast<double>(n);
          y *= delta;
        } else {
          y *= step;
        }
        y += first;
        e[static_cast<size_t>(i)] = y;
      }
      e.back() = last;
      const Array exactEdges = Array::fromVector<double>(e, {n + 1}).astype(binType);
      const std::vector<double> exact = exactEdges.toDoubles();
      for (size_t i = 0; i + 1 < exact.size(); ++i)
        if (exact[i] >= exact[i + 1])
          fail("histogram", "Too many bins for data range. Cannot create " + std::to_string(n) +
                                " finite-sized bins.");
      keep = logical_and(greater_equal(x, lo), less_equal(x, hi)); // NumPy's, in x's dtype
      edges = Tensor(exactEdges);
      if (step != 0)
        edge = [=](const Tensor &i) {
          const Tensor y = cast(i, DType::f64) * step + lo;
          return cast(where(greater_equal(i, n), hi, y), binType);
        };
    } else {
      // NumPy's first and last edges (the data's min and max, 1 apart if
      // equal) and its linspace of them, step by step (bit for bit).
      const Tensor lo = cast(min(x), binType), hi = cast(max(x), binType);
      const Tensor same = equal(lo, hi);
      const Tensor first = where(same, lo - 0.5, lo), last = where(same, hi + 0.5, hi);
      const Tensor delta = last - first, step = delta / n;
      const Tensor zero = equal(step, 0);
      const Tensor k = Tensor(Array::arange(n + 1, binType));
      const Tensor y = where(zero, k / n * delta, k * step) + first;
      edges = concatenate({slice(y, {0}, {n}), reshape(last, {1})}, 0);
      edge = [=](const Tensor &i) {
        const Tensor yi = cast(i, binType);
        return where(greater_equal(i, n), last, where(zero, yi / n * delta, yi * step) + first);
      };
      // every value lies between min and max: none is left out (but nan)
    }
  } else {
    edges = *o.edges;
    if (edges.shape().size() != 1)
      fail("histogram", "`bins` must be 1d, when an array");
    if (const detail::Node &e = *edges.node(); e.op == Op::Constant) {
      const std::vector<double> v = e.constant.toDoubles();
      for (size_t i = 0; i + 1 < v.size(); ++i)
        if (v[i] > v[i + 1])
          fail("histogram", "`bins` must increase monotonically, when an array");
    }
    n = edges.shape()[0] - 1;
    if (n < 1) { // NumPy's empty histogram
      const DType dtype = o.density ? DType::f64 : w.valid() ? w.dtype() : DType::i64;
      return {full({0}, 0.0, dtype), edges};
    }
  }
  // Equal bins compare the values cast to the edges' dtype (NumPy's
  // tmp_a.astype(bin_edges.dtype)); given edges compare them as searchsorted
  // does, promoted.
  const Tensor xe = uniform ? cast(x, edges.dtype()) : x;
  Tensor hist;
  if (w.valid() && !isFloat(w.dtype())) {
    hist = weightedCounts(xe, edges, n, keep, w, !uniform);
  } else {
    const Tensor ids = binIds(xe, edges, n, keep, edge);
    if (!w.valid())
      hist = slice(bincount(ids, n + 1), {0}, {n}); // int64 counts, NumPy's intp
    else
      hist = cast(slice(bincount(ids, n + 1, cast(w, DType::f64)), {0}, {n}), w.dtype());
  }
  if (o.density) {
    const Tensor widths = cast(slice(edges, {1}, {n + 1}) - slice(edges, {0}, {n}), DType::f64);
    return {hist / widths / sum(hist), edges};
  }
  return {hist, edges};
}

} // namespace tinymlir
