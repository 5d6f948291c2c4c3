// NumPy's advanced indexing for traced arrays: int arrays known now (a gather,
// an index_put), computed int arrays (a take, a put), an argument's rows (a
// gather), and ufunc.at with several index arrays.
#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include "frontend/Graph.h"
#include "frontend/IndexInternals.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

namespace tinymlir {

namespace {

using detail::cStrides;
using detail::indexError;
using detail::iotaAlong;
using detail::rangeLength;
using detail::rankOf;

bool isWholeSlice(const IndexItem &i) {
  const Slice *s = std::get_if<Slice>(&i);
  return s && !s->start && !s->stop && !s->step;
}

// --- Advanced indices: int arrays ------------------------------------------------

int64_t product(const Shape &shape, const std::vector<int64_t> &axes) {
  int64_t p = 1;
  for (int64_t a : axes)
    p *= shape[static_cast<size_t>(a)];
  return p;
}

std::vector<int64_t> valuesOf(const Tensor &t) {
  return t.array().astype(DType::i64).toVector<int64_t>();
}

std::string shapesText(const std::vector<Shape> &shapes) {
  std::string text;
  for (const Shape &s : shapes)
    text += (text.empty() ? "" : " ") + shapeString(s);
  return text;
}

/// NumPy's broadcast of index shapes; its IndexError when they do not.
Shape broadcastIndexShapes(const std::vector<Shape> &shapes) {
  if (std::optional<Shape> out = detail::broadcastShapes(shapes))
    return *out;
  indexError("shape mismatch: indexing arrays could not be broadcast together with shapes " +
             shapesText(shapes));
}

/// `values` of `shape` broadcast to `out`, in C order.
std::vector<int64_t> broadcastValues(const std::vector<int64_t> &values, const Shape &shape,
                                     const Shape &out) {
  const int64_t n = numElements(out);
  std::vector<int64_t> result(static_cast<size_t>(n));
  const std::vector<int64_t> strides = cStrides(shape);
  std::vector<int64_t> at(out.size(), 0);
  const size_t lead = out.size() - shape.size();
  for (int64_t e = 0; e < n; ++e) {
    int64_t src = 0;
    for (size_t a = 0; a < shape.size(); ++a)
      src += shape[a] == 1 ? 0 : at[lead + a] * strides[a];
    result[static_cast<size_t>(e)] = values[static_cast<size_t>(src)];
    for (size_t a = out.size(); a-- > 0;) {
      if (++at[a] < out[a])
        break;
      at[a] = 0;
    }
  }
  return result;
}

/// Constant int arrays (and ints among them) of an advanced index, broadcast
/// together, checked and wrapped as NumPy's: per axis the flat positions, or
/// nothing for ':'; and the broadcast shape.
struct Advanced {
  std::vector<std::optional<std::vector<int64_t>>> flat;
  Shape shape;
};

Advanced advancedIndex(const Shape &xs, const Index &index) {
  std::vector<std::optional<std::pair<std::vector<int64_t>, Shape>>> arrays;
  for (const IndexItem &i : index) {
    if (isWholeSlice(i)) {
      arrays.emplace_back();
    } else if (const int64_t *k = std::get_if<int64_t>(&i)) {
      arrays.emplace_back(std::make_pair(std::vector<int64_t>{*k}, Shape{}));
    } else if (const Range *r = std::get_if<Range>(&i)) {
      std::vector<int64_t> v;
      for (int64_t k = 0, n = rangeLength(*r); k < n; ++k)
        v.push_back(r->start + k * r->step);
      arrays.emplace_back(std::make_pair(v, Shape{static_cast<int64_t>(v.size())}));
    } else if (const Tensor *t = std::get_if<Tensor>(&i); t && t->isConcrete()) {
      if (!isInteger(t->dtype()) && !(numElements(t->shape()) == 0 && isFloat(t->dtype())))
        indexError("arrays used as indices must be of integer (or boolean) type");
      arrays.emplace_back(std::make_pair(valuesOf(*t), t->shape()));
    } else {
      indexError("tinymlir: an index with int arrays takes ints, int arrays and ':' only");
    }
  }
  if (arrays.size() > xs.size())
    indexError("too many indices for array: array is " + std::to_string(xs.size()) +
               "-dimensional, but " + std::to_string(arrays.size()) + " were indexed");
  arrays.resize(xs.size());
  std::vector<Shape> shapes;
  for (const auto &a : arrays)
    if (a)
      shapes.push_back(a->second);
  Advanced r;
  r.shape = broadcastIndexShapes(shapes);
  for (size_t axis = 0; axis < arrays.size(); ++axis) {
    if (!arrays[axis]) {
      r.flat.emplace_back();
      continue;
    }
    const int64_t n = xs[axis];
    std::vector<int64_t> b = broadcastValues(arrays[axis]->first, arrays[axis]->second, r.shape);
    for (int64_t &v : b)
      v = detail::positionAlong(v, axis, n);
    r.flat.emplace_back(std::move(b));
  }
  return r;
}

/// Positions as a constant int32 tensor (the gathers' and puts' ids), checked
/// against the int32 range.
Tensor positionsTensor(const std::vector<int64_t> &positions) {
  std::vector<int32_t> ids;
  ids.reserve(positions.size());
  for (int64_t v : positions) {
    if (v >= (int64_t{1} << 31))
      indexError("tinymlir: index out of the int32 range");
    ids.push_back(static_cast<int32_t>(v));
  }
  return Tensor(Array::fromVector(ids, {static_cast<int64_t>(ids.size())}));
}

/// The shape NumPy gives x[index] for an advanced index, and where the
/// broadcast shape stands in it among the whole axes: where the first indexed
/// axis was if the indexed axes are adjacent, else first.
std::pair<Shape, std::ptrdiff_t> advancedShape(const Shape &xs, const Advanced &adv) {
  std::vector<int64_t> axes;
  Shape whole;
  for (size_t a = 0; a < adv.flat.size(); ++a)
    if (adv.flat[a])
      axes.push_back(static_cast<int64_t>(a));
    else
      whole.push_back(xs[a]);
  const bool adjacent = axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  const auto at = static_cast<std::ptrdiff_t>(adjacent ? axes.front() : 0);
  Shape shape(whole.begin(), whole.begin() + at);
  shape.insert(shape.end(), adv.shape.begin(), adv.shape.end());
  shape.insert(shape.end(), whole.begin() + at, whole.end());
  return {shape, at};
}

} // namespace

/// x[int arrays, ':'...]: the indexed axes moved first and flattened into one,
/// then one gather of rows (positions computed here), placed where NumPy puts
/// the broadcast shape. A copy, as NumPy's.
Tensor detail::advancedRead(const Ref &x, const Index &index) {
  const Shape &xs = x.shape();
  const Advanced adv = advancedIndex(xs, index);
  std::vector<int64_t> axes, whole, dims;
  for (size_t a = 0; a < adv.flat.size(); ++a)
    (adv.flat[a] ? axes : whole).push_back(static_cast<int64_t>(a));
  for (int64_t a : axes)
    dims.push_back(xs[static_cast<size_t>(a)]);
  const int64_t count = numElements(adv.shape);
  if (count == 0) // nothing selected (x[[]]): NumPy's empty result, its shape
    return full(advancedShape(xs, adv).first, 0, x.dtype());
  std::vector<int64_t> rows(static_cast<size_t>(count), 0);
  for (size_t k = 0; k < axes.size(); ++k)
    for (int64_t r = 0; r < count; ++r)
      rows[static_cast<size_t>(r)] =
          rows[static_cast<size_t>(r)] * dims[k] +
          (*adv.flat[static_cast<size_t>(axes[k])])[static_cast<size_t>(r)];
  std::vector<int64_t> perm = axes;
  perm.insert(perm.end(), whole.begin(), whole.end());
  Tensor t = x.value();
  if (!std::is_sorted(perm.begin(), perm.end()))
    t = transpose(t, perm);
  Shape rest;
  for (int64_t a : whole)
    rest.push_back(xs[static_cast<size_t>(a)]);
  Tensor table = reshape(t, {product(xs, axes), numElements(rest)});
  Shape shape = adv.shape;
  shape.insert(shape.end(), rest.begin(), rest.end());
  Tensor r = reshape(gather(table, positionsTensor(rows)), shape);
  const bool adjacent = axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  if (adjacent && axes.front() > 0) { // NumPy keeps the broadcast shape in place
    const int64_t k = axes.front(), b = rankOf(adv.shape);
    std::vector<int64_t> p;
    for (int64_t j = b; j < b + k; ++j)
      p.push_back(j);
    for (int64_t j = 0; j < b; ++j)
      p.push_back(j);
    for (int64_t j = b + k; j < b + rankOf(rest); ++j)
      p.push_back(j);
    r = transpose(r, p);
  }
  return r;
}

/// x[int arrays...] = value: NumPy's advanced assignment (index_put); a
/// repeated position takes the last value, as NumPy's buffered one does.
/// An advanced index's slices and new axes taken first, as a view of x: NumPy's
/// result is the advanced index on that view with ':' in their places (the
/// advanced indices stay apart, or next to each other, as they were).
std::pair<Ref, Index> detail::slicedFirst(const Ref &x, const Index &index) {
  const bool basicItems = std::any_of(index.begin(), index.end(), [](const IndexItem &i) {
    return std::holds_alternative<NewAxis>(i) ||
           (std::holds_alternative<Slice>(i) && !isWholeSlice(i));
  });
  if (!basicItems)
    return {x, index};
  Index basic, rest;
  for (const IndexItem &i : index) {
    const bool taken = std::holds_alternative<Slice>(i) || std::holds_alternative<NewAxis>(i);
    basic.push_back(taken ? i : IndexItem(Slice{}));
    rest.push_back(taken ? IndexItem(Slice{}) : i);
  }
  return {x.view(basicIndex(x.shape(), basic).steps), rest};
}

void detail::scatter(Ref &x, const Index &index, const Tensor &value) {
  const Shape &xs = x.shape();
  const Advanced adv = advancedIndex(xs, index);
  const auto [numpyShape, at] = advancedShape(xs, adv);
  if (numElements(adv.shape) == 0) { // nothing selected: NumPy's check of the value alone
    broadcastInto(value, numpyShape);
    return;
  }
  // the broadcast axes as one: (whole before, count, whole after)
  Shape rows(numpyShape.begin(), numpyShape.begin() + at);
  rows.push_back(numElements(adv.shape));
  rows.insert(rows.end(), numpyShape.begin() + at + static_cast<std::ptrdiff_t>(adv.shape.size()),
              numpyShape.end());
  Tensor v = reshape(cast(broadcastInto(value, numpyShape), x.dtype()), rows);
  std::vector<std::optional<Tensor>> ids;
  for (const auto &f : adv.flat)
    ids.push_back(f ? std::optional<Tensor>(positionsTensor(*f)) : std::nullopt);
  x.assign(indexPut(x.value(), ids, v));
}

namespace {

// --- Computed int arrays ---------------------------------------------------------

/// An advanced index with computed int arrays (an argsort's, a label array's)
/// among its arrays and ints, as NumPy takes it: the basic slices applied
/// first (they commute with it), the arrays broadcast together and combined
/// into one position among the indexed axes. Each is checked and wrapped on its
/// own axis by the core's take (NumPy's IndexError when the kernel runs): one
/// computed array alone by the take or put that uses it, several each by a
/// take of its axis' positions.
struct Linear {
  Ref sliced;                // x with the basic slices applied (a view)
  std::vector<int64_t> axes; // the indexed axes
  Tensor position;           // their positions (the broadcast shape)
  int64_t at;                // where NumPy puts the broadcast axes in the result
};

Linear linearPositions(const Ref &x, Index index) {
  const bool newAxes = std::any_of(index.begin(), index.end(), [](const IndexItem &i) {
    return std::holds_alternative<NewAxis>(i) || std::holds_alternative<Range>(i);
  });
  if (newAxes || static_cast<int64_t>(index.size()) > rankOf(x.shape()))
    indexError("tinymlir: an advanced index with computed int arrays takes int arrays, ints and "
               "slices only, at most one per axis");
  Linear l{x, {}, Tensor(), 0};
  if (std::any_of(index.begin(), index.end(), [](const IndexItem &i) {
        return std::holds_alternative<Slice>(i) && !isWholeSlice(i);
      })) {
    Index slices;
    for (IndexItem &i : index) {
      slices.push_back(std::holds_alternative<Slice>(i) ? i : IndexItem(Slice{}));
      if (std::holds_alternative<Slice>(i))
        i = Slice{};
    }
    l.sliced = x.view(basicIndex(x.shape(), slices).steps);
  }
  const Shape &xs = l.sliced.shape();
  std::vector<Tensor> arrays;
  for (size_t a = 0; a < index.size(); ++a) {
    if (std::holds_alternative<Slice>(index[a]))
      continue;
    l.axes.push_back(static_cast<int64_t>(a));
    if (const int64_t *k = std::get_if<int64_t>(&index[a])) {
      arrays.push_back(ScalarType{DType::i64}(*k));
      continue;
    }
    const Tensor &t = std::get<Tensor>(index[a]);
    if (!isInteger(t.dtype()) && !(t.isConcrete() && numElements(t.shape()) == 0))
      indexError("arrays used as indices must be of integer (or boolean) type");
    arrays.push_back(t);
  }
  if (arrays.size() == 1) { // x[..., ids, ...]: the take or put checks and wraps ids
    l.position = arrays[0];
    l.at = l.axes[0];
    return l;
  }
  std::vector<Shape> shapes;
  for (const Tensor &t : arrays)
    shapes.push_back(t.shape());
  const Shape shape = broadcastIndexShapes(shapes);
  for (size_t k = 0; k < arrays.size(); ++k) {
    const int64_t n = xs[static_cast<size_t>(l.axes[k])];
    const Tensor &i = arrays[k];
    Tensor p;
    if (!i.isConcrete() &&
        !std::holds_alternative<int64_t>(index[static_cast<size_t>(l.axes[k])])) {
      p = take(iotaAlong(n, 0, 1, DType::i64), i); // checked and wrapped by a take of 0..n-1
    } else {
      std::vector<int64_t> v =
          std::holds_alternative<int64_t>(index[static_cast<size_t>(l.axes[k])])
              ? std::vector<int64_t>{std::get<int64_t>(index[static_cast<size_t>(l.axes[k])])}
              : valuesOf(i);
      for (int64_t &e : v)
        e = detail::positionAlong(e, static_cast<size_t>(l.axes[k]), n);
      p = i.rank() == 0 ? ScalarType{DType::i64}(v[0]) : Tensor(Array::fromVector(v, i.shape()));
    }
    l.position = l.position.valid() ? l.position * n + p : p;
  }
  l.position = broadcastTo(l.position, shape);
  const bool adjacent = l.axes.back() - l.axes.front() + 1 == static_cast<int64_t>(l.axes.size());
  l.at = adjacent ? l.axes[0] : 0;
  return l;
}

} // namespace

Tensor ufuncAt(std::string_view ufunc, const Tensor &table, const std::vector<Tensor> &ids,
               const Tensor &values) {
  const Shape &shape = table.shape();
  if (ids.size() > shape.size())
    detail::fail((std::string(ufunc) + ".at").c_str(),
                 "too many indices for array: array is " + std::to_string(shape.size()) +
                     "-dimensional, but " + std::to_string(ids.size()) + " were indexed",
                 ErrorKind::Index);
  if (ids.size() == 1)
    return ufuncAt(ufunc, table, ids[0], values);
  // the positions of the leading axes as one, each checked on its own axis
  const Linear l = linearPositions(Ref(table), Index(ids.begin(), ids.end()));
  Shape merged{1};
  for (size_t a = 0; a < ids.size(); ++a)
    merged[0] *= shape[a];
  merged.insert(merged.end(), shape.begin() + static_cast<int64_t>(ids.size()), shape.end());
  return reshape(ufuncAt(ufunc, reshape(table, merged), l.position, values), shape);
}

namespace {

/// x with its indexed axes moved first and merged into one, as the table whose
/// rows the take and put address; the other axes; the permutation.
struct Rows {
  Tensor table;
  std::vector<int64_t> rest, perm;
};

Rows indexedRows(const Tensor &x, const std::vector<int64_t> &axes) {
  Rows r;
  for (int64_t a = 0; a < x.rank(); ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end())
      r.rest.push_back(a);
  r.perm = axes;
  r.perm.insert(r.perm.end(), r.rest.begin(), r.rest.end());
  r.table = std::is_sorted(r.perm.begin(), r.perm.end()) ? x : transpose(x, r.perm);
  if (axes.size() > 1) {
    Shape shape{product(x.shape(), axes)};
    for (int64_t a : r.rest)
      shape.push_back(x.shape()[static_cast<size_t>(a)]);
    r.table = reshape(r.table, shape);
  }
  return r;
}

} // namespace

/// x[...] with computed int arrays among its indices: one take. A copy, shaped
/// as NumPy's (the broadcast axes in place where adjacent, else first).
Tensor detail::computedRead(const Ref &x, const Index &index) {
  const Linear l = linearPositions(x, index);
  const Rows rows = indexedRows(l.sliced.value(), l.axes);
  Tensor r = take(rows.table, l.position); // position.shape + rest
  const int64_t q = l.position.rank(), rest = static_cast<int64_t>(rows.rest.size());
  if (l.at) { // the broadcast axes where the indexed ones were
    std::vector<int64_t> p;
    for (int64_t j = 0; j < l.at; ++j)
      p.push_back(q + j);
    for (int64_t j = 0; j < q; ++j)
      p.push_back(j);
    for (int64_t j = l.at; j < rest; ++j)
      p.push_back(q + j);
    r = transpose(r, p);
  }
  return r;
}

/// x[...] = value with computed int arrays among its indices: one put (in
/// order: a repeated position takes the last value, as NumPy's assignment).
void detail::computedWrite(const Ref &x, const Index &index, const Tensor &value) {
  Linear l = linearPositions(x, index);
  const Tensor sliced = l.sliced.value();
  const Rows rows = indexedRows(sliced, l.axes);
  const Shape &ss = sliced.shape();
  const int64_t q = l.position.rank();
  Shape numpyShape;
  for (int64_t j = 0; j < l.at; ++j)
    numpyShape.push_back(ss[static_cast<size_t>(rows.rest[static_cast<size_t>(j)])]);
  numpyShape.insert(numpyShape.end(), l.position.shape().begin(), l.position.shape().end());
  for (size_t j = static_cast<size_t>(l.at); j < rows.rest.size(); ++j)
    numpyShape.push_back(ss[static_cast<size_t>(rows.rest[j])]);
  Tensor v = cast(broadcastInto(value, numpyShape), sliced.dtype());
  if (l.at) { // the broadcast axes first, as the table's rows
    std::vector<int64_t> p;
    for (int64_t j = l.at; j < l.at + q; ++j)
      p.push_back(j);
    for (int64_t j = 0; j < l.at; ++j)
      p.push_back(j);
    for (int64_t j = l.at + q; j < rankOf(numpyShape); ++j)
      p.push_back(j);
    v = transpose(v, p);
  }
  Tensor ids = l.position;
  if (l.axes.size() > 1) { // one row per position
    const int64_t count = numElements(l.position.shape());
    Shape vs{count};
    vs.insert(vs.end(), rows.table.shape().begin() + 1, rows.table.shape().end());
    v = reshape(v, vs);
    ids = reshape(ids, {count});
  }
  Tensor r = put(rows.table, ids, v);
  if (l.axes.size() > 1) {
    Shape shape;
    for (int64_t a : rows.perm)
      shape.push_back(ss[static_cast<size_t>(a)]);
    r = reshape(r, shape);
  }
  if (!std::is_sorted(rows.perm.begin(), rows.perm.end())) {
    std::vector<int64_t> inverse(rows.perm.size());
    for (size_t i = 0; i < rows.perm.size(); ++i)
      inverse[static_cast<size_t>(rows.perm[i])] = static_cast<int64_t>(i);
    r = transpose(r, inverse);
  }
  l.sliced.assign(r);
}

/// table[ids, ...] with ids an argument (any integer dtype; negative ones count
/// from the end): the core's gather of the rows, ids checked before each call,
/// then the basic index of the other axes.
Ref detail::gatherRead(const Ref &x, const Index &index) {
  const Tensor &ids = std::get<Tensor>(index[0]);
  const Shape &xs = x.shape();
  Tensor t = x.value();
  Shape tail(xs.begin() + 1, xs.end());
  Tensor table = xs.size() == 2 ? t : reshape(t, {xs[0], numElements(tail)});
  Tensor rows = gather(table, ids);
  if (xs.size() != 2) {
    Shape shape{ids.shape()[0]};
    shape.insert(shape.end(), tail.begin(), tail.end());
    rows = reshape(rows, shape);
  }
  Ref r(rows);
  if (index.size() == 1)
    return r;
  Index rest{Slice{}};
  rest.insert(rest.end(), index.begin() + 1, index.end());
  return r.get(rest);
}

} // namespace tinymlir
