// NumPy's mathematical and logic functions made of the core's operations: nan
// and inf tests, isclose, clip, powers, rounding, differences, gradient, interp,
// convolve, cumulative sums, and the ufuncs' keywords (where=, casting=, outer).
#include "frontend/FunctionsCommon.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

namespace {

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

std::pair<Tensor, Tensor> outerOperands(const Tensor &a, const Tensor &b) {
  Shape shape = a.shape(); // the operands are arrays (Python numbers strong)
  shape.insert(shape.end(), static_cast<size_t>(b.rank()), 1);
  return {reshape(strong(a), shape), strong(b)};
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
  if (a.dtype() == DType::b8) {
    // NumPy's rint of bools is float16's loop; other decimals multiply by a
    // float64 into the bool array, a cast NumPy refuses.
    if (decimals != 0)
      fail("round",
           std::string("Cannot cast ufunc '") + (decimals > 0 ? "multiply" : "divide") +
               "' output from dtype('float64') to dtype('bool') with casting rule 'same_kind'",
           ErrorKind::Type);
    return rint(cast(a, DType::f16));
  }
  if (isInteger(a.dtype())) {
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

} // namespace tinymlir
