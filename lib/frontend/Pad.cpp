// np.pad: its widths and values paired per axis as NumPy's _as_pairs pairs
// them, and every mode (constant, edge, linear_ramp, maximum, mean, median,
// minimum, reflect, symmetric, wrap, empty).
#include "frontend/Graph.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

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

} // namespace tinymlir
