// Array creation and matrix building: np.array of nested sequences, full,
// full_like, linspace, meshgrid, diag, vander.
#include "frontend/FunctionsCommon.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

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

} // namespace tinymlir
