// Statistics: ptp, average, cov, corrcoef, median, nanmedian, quantile,
// percentile, histogram and digitize.
#include "frontend/FunctionsCommon.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

Tensor ptp(const Tensor &a, const Axes &axes, bool keepdims) {
  return subtract(max(a, axes, keepdims), min(a, axes, keepdims));
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
