// NumPy's indexing routines: diagonal, select, take, put, take_along_axis,
// put_along_axis, putmask, place, fill_diagonal, unravel_index and
// ravel_multi_index.
#include "frontend/FunctionsCommon.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

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

} // namespace tinymlir
