// Array manipulation: stack and the other joins, squeeze, expand_dims, the
// axis orders of moveaxis, swapaxes and rollaxis, broadcast_arrays, roll,
// resize, tile, repeat, insert, delete, fliplr, flipud, copyto.
#include "frontend/FunctionsCommon.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

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

Tensor fliplr(const Tensor &m) { return Ref(m).flipped({}, "fliplr").value(); }

Tensor flipud(const Tensor &m) { return Ref(m).flipped({}, "flipud").value(); }

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

} // namespace tinymlir
