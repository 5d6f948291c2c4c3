// NumPy's indexing and in-place writes for traced arrays (include/tinymlir/index.h):
// the index specification, view steps, and buffers with versions.
#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include "frontend/Graph.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <string_view>

namespace tinymlir {

Tensor detail::iotaAlong(int64_t n, int64_t axis, int64_t rank, DType dtype) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, int64_t, DType>, Array> cache;
  std::lock_guard lock(mutex);
  auto key = std::make_tuple(n, axis, rank, dtype);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= 256)
      cache.clear(); // the arrays live on in the graphs that use them
    Shape shape(static_cast<size_t>(rank), 1);
    shape[static_cast<size_t>(axis)] = n;
    it = cache.emplace(key, Array::arange(n, dtype).reshaped(shape)).first;
  }
  return Tensor(it->second);
}

namespace {

using detail::iotaAlong;

[[noreturn]] void indexError(const std::string &message) { throw Error(message, ErrorKind::Index); }

int64_t rankOf(const Shape &shape) { return static_cast<int64_t>(shape.size()); }

bool isTensor(const IndexItem &i) { return std::holds_alternative<Tensor>(i); }
bool isWholeSlice(const IndexItem &i) {
  const Slice *s = std::get_if<Slice>(&i);
  return s && !s->start && !s->stop && !s->step;
}
/// A traced (not concrete) tensor.
bool isTraced(const IndexItem &i) {
  const Tensor *t = std::get_if<Tensor>(&i);
  return t && !t->isConcrete();
}

/// Python's slice.indices(n): (start, step, count).
struct Resolved {
  int64_t start, step, count;
};
Resolved resolve(const Slice &s, int64_t n) {
  const int64_t step = s.step.value_or(1);
  if (step == 0)
    throw Error("slice step cannot be zero", ErrorKind::Value);
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v)
      return fallback;
    int64_t k = *v;
    if (k < 0) {
      k += n;
      if (k < 0)
        k = step < 0 ? -1 : 0;
    } else if (k >= n) {
      k = step < 0 ? n - 1 : n;
    }
    return k;
  };
  const int64_t start = clamp(s.start, step < 0 ? n - 1 : 0);
  const int64_t stop = clamp(s.stop, step < 0 ? -1 : n);
  int64_t count = 0;
  if (step > 0 && stop > start)
    count = (stop - start + step - 1) / step;
  else if (step < 0 && start > stop)
    count = (start - stop + (-step) - 1) / (-step);
  return {start, step, count};
}

int64_t rangeLength(const Range &r) {
  if (r.step > 0 && r.stop > r.start)
    return (r.stop - r.start + r.step - 1) / r.step;
  if (r.step < 0 && r.start > r.stop)
    return (r.start - r.stop - r.step - 1) / -r.step;
  return 0;
}

std::string describeRange(const Range &r) {
  return "range(" + std::to_string(r.start) + ", " + std::to_string(r.stop) +
         (r.step != 1 ? ", " + std::to_string(r.step) : std::string()) + ")";
}

/// NumPy takes a range as an integer array: it stands for a slice only where
/// that gives the same (one range, and no integer index).
void checkRanges(const Index &index) {
  const auto ranges = std::count_if(index.begin(), index.end(), [](const IndexItem &i) {
    return std::holds_alternative<Range>(i);
  });
  const bool ints = std::any_of(index.begin(), index.end(), [](const IndexItem &i) {
    return std::holds_alternative<int64_t>(i);
  });
  if (ranges > 1 || (ranges == 1 && ints))
    indexError("tinymlir: ranges index as integer arrays (advanced indexing): use one range and "
               "no integer index, or slices");
}

/// The rank-0 integer tensors among the items are traced scalars: each is a
/// position along its axis, read or written in place (a Slice or SliceUpdate
/// at traced offsets, checked when the kernel runs).
struct DynamicTarget {
  Ref target;             // the positions' view: traced axes whole, ints as one-element ranges
  Ref owner;              // the array whose value `base` is
  Tensor base;            // the target's value, or the array its static box is of
  detail::DynamicBox box; // of base
  std::vector<bool> drop; // per target axis: taken by an index (not a slice)
};

DynamicTarget dynamicTarget(const Ref &x, const Index &index) {
  const Shape &shape = x.shape();
  if (rankOf(shape) < static_cast<int64_t>(index.size()))
    indexError("too many indices for array: array is " + std::to_string(shape.size()) +
               "-dimensional, but " + std::to_string(index.size()) + " were indexed");
  Index rest;
  std::vector<std::pair<int64_t, Tensor>> at;
  for (size_t a = 0; a < index.size(); ++a) {
    const IndexItem &i = index[a];
    if (const Tensor *t = std::get_if<Tensor>(&i)) {
      if (t->rank() != 0 || t->isConcrete())
        indexError("tinymlir: a traced int index mixes only with ints and slices");
      if (!isInteger(t->dtype()))
        indexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                   "integer or boolean arrays are valid indices");
      rest.emplace_back(Slice{});
      at.emplace_back(static_cast<int64_t>(a), *t);
    } else if (const int64_t *k = std::get_if<int64_t>(&i)) {
      const int64_t w = detail::positionAlong(*k, a, shape[a]);
      rest.emplace_back(Slice{w, w + 1, 1});
    } else if (std::holds_alternative<Slice>(i)) {
      rest.push_back(i);
    } else {
      indexError("tinymlir: a traced int index mixes only with ints and slices");
    }
  }
  DynamicTarget d;
  d.target = x.view(basicIndex(shape, rest).steps);
  const Tensor value = d.target.value();
  // A static box of x itself (x[i, k]: row i of x) becomes the box's origin
  // and steps, so that the element is read and written in x's buffer; else
  // the box is of the view's value.
  const detail::NodePtr &v = value.node();
  if (v->op == Op::Slice && detail::tracedPositions(*v) == 0 && v->args[0] == x.value().node()) {
    const size_t rank = v->shape.size();
    d.owner = x;
    d.base = x.value();
    d.box.offsets.assign(v->axes.begin(), v->axes.begin() + static_cast<int64_t>(rank));
    for (size_t i = 0; i < rank; ++i)
      d.box.steps.push_back(detail::sliceStep(*v, rank, i));
    d.box.extents = v->shape;
  } else {
    d.owner = d.target;
    d.base = value;
    d.box = detail::wholeBox(value.shape());
  }
  d.box.at = std::move(at);
  for (const auto &[axis, k] : d.box.at)
    if (d.box.extents[static_cast<size_t>(axis)] == 0)
      indexError(
          detail::outOfBounds(0, static_cast<size_t>(axis), 0)); // any position is out of range
  d.drop.assign(value.shape().size(), false);
  for (size_t a = 0; a < index.size(); ++a)
    d.drop[a] = !std::holds_alternative<Slice>(index[a]);
  return d;
}

Tensor dropAxes(const Tensor &t, const std::vector<bool> &drop) {
  Shape shape;
  for (size_t a = 0; a < t.shape().size(); ++a)
    if (!drop[a])
      shape.push_back(t.shape()[a]);
  return reshape(t, shape);
}

Tensor dynamicRead(const Ref &x, const Index &index) {
  DynamicTarget d = dynamicTarget(x, index);
  return dropAxes(detail::dynamicSlice(d.base, d.box), d.drop);
}

void dynamicWrite(const Ref &x, const Index &index, const Tensor &value) {
  DynamicTarget d = dynamicTarget(x, index);
  const Shape box = d.box.shape();
  Shape kept;
  for (size_t a = 0; a < box.size(); ++a)
    if (!d.drop[a])
      kept.push_back(box[a]);
  Tensor v = reshape(cast(broadcastInto(value, kept), d.base.dtype()), box);
  d.owner.assign(detail::dynamicSliceUpdate(d.base, d.box, v));
}

std::vector<int64_t> cStrides(const Shape &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t a = shape.size(); a-- > 1;)
    s[a - 1] = s[a] * shape[a];
  return s;
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

/// x[int arrays, ':'...]: the indexed axes moved first and flattened into one,
/// then one gather of rows (positions computed here), placed where NumPy puts
/// the broadcast shape. A copy, as NumPy's.
Tensor advancedRead(const Ref &x, const Index &index) {
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
std::pair<Ref, Index> slicedFirst(const Ref &x, const Index &index) {
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

void scatter(Ref &x, const Index &index, const Tensor &value) {
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

/// x[...] with computed int arrays among its indices: one take. A copy, shaped
/// as NumPy's (the broadcast axes in place where adjacent, else first).
Tensor computedRead(const Ref &x, const Index &index) {
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
void computedWrite(const Ref &x, const Index &index, const Tensor &value) {
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
Ref gatherRead(const Ref &x, const Index &index) {
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

/// The layout of a view in its buffer: element strides and offset, as NumPy's.
struct Layout {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  bool known = true;
};

bool isCContiguous(const Layout &l) {
  if (!l.known)
    return false;
  if (numElements(l.shape) == 0)
    return true;
  int64_t expected = 1;
  for (size_t a = l.shape.size(); a-- > 0;) {
    if (l.shape[a] == 1)
      continue;
    if (l.strides[a] != expected)
      return false;
    expected *= l.shape[a];
  }
  return true;
}

/// The strides of `l` reshaped to `shape` in C order without a copy, where
/// they exist: NumPy's _attempt_nocopy_reshape (numpy/_core/src/multiarray/
/// shape.c). Size-1 axes are dropped; each run of old axes merged into new
/// ones must be contiguous within itself.
std::optional<std::vector<int64_t>> noCopyStrides(const Layout &l, const Shape &shape) {
  if (!l.known)
    return std::nullopt;
  if (numElements(l.shape) == 0)
    return cStrides(shape);
  std::vector<int64_t> dims, strides;
  for (size_t a = 0; a < l.shape.size(); ++a)
    if (l.shape[a] != 1) {
      dims.push_back(l.shape[a]);
      strides.push_back(l.strides[a]);
    }
  std::vector<int64_t> out(shape.size(), 0);
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < shape.size() && oi < dims.size()) {
    int64_t n = shape[ni], o = dims[oi];
    while (n != o)
      if (n < o)
        n *= shape[nj++];
      else
        o *= dims[oj++];
    for (size_t k = oi; k + 1 < oj; ++k)
      if (strides[k] != dims[k + 1] * strides[k + 1])
        return std::nullopt;
    out[nj - 1] = strides[oj - 1];
    for (size_t k = nj - 1; k > ni; --k)
      out[k - 1] = out[k] * shape[k];
    ni = nj++;
    oi = oj++;
  }
  for (size_t k = ni; k < shape.size(); ++k) // trailing size-1 axes
    out[k] = ni >= 1 ? out[ni - 1] : 1;
  return out;
}

Layout layoutOf(const Shape &base, const ViewSteps &steps,
                const std::vector<int64_t> &baseStrides = {}) {
  Layout l{base, baseStrides.empty() ? cStrides(base) : baseStrides, 0, true};
  for (const ViewStep &s : steps) {
    switch (s.kind) {
    case ViewStep::Kind::Flip:
      for (int64_t a : s.a) {
        const size_t k = static_cast<size_t>(a);
        l.offset += (l.shape[k] - 1) * l.strides[k];
        l.strides[k] = -l.strides[k];
      }
      break;
    case ViewStep::Kind::Slice:
      for (size_t a = 0; a < s.a.size(); ++a) {
        const int64_t step = s.c.empty() ? 1 : s.c[a];
        l.offset += s.a[a] * l.strides[a];
        l.shape[a] = (s.b[a] - s.a[a] + step - 1) / step;
        l.strides[a] *= step;
      }
      break;
    case ViewStep::Kind::Transpose: {
      Layout t = l;
      for (size_t a = 0; a < s.a.size(); ++a) {
        t.shape[a] = l.shape[static_cast<size_t>(s.a[a])];
        t.strides[a] = l.strides[static_cast<size_t>(s.a[a])];
      }
      l = t;
      break;
    }
    case ViewStep::Kind::Broadcast: { // new and stretched axes step by 0
      Layout t{s.a, std::vector<int64_t>(s.a.size() - l.shape.size(), 0), l.offset, true};
      for (size_t k = 0; k < l.shape.size(); ++k)
        t.strides.push_back(l.shape[k] == 1 && t.shape[t.strides.size()] != 1 ? 0 : l.strides[k]);
      l = t;
      break;
    }
    case ViewStep::Kind::Diagonal: { // the two axes become one, last
      const int64_t offset = s.a[0];
      const auto a1 = static_cast<size_t>(s.a[1]), a2 = static_cast<size_t>(s.a[2]);
      Layout t{{},
               {},
               l.offset + (offset >= 0 ? offset * l.strides[a2] : -offset * l.strides[a1]),
               true};
      for (size_t k = 0; k < l.shape.size(); ++k)
        if (k != a1 && k != a2) {
          t.shape.push_back(l.shape[k]);
          t.strides.push_back(l.strides[k]);
        }
      t.shape.push_back(std::max<int64_t>(0, std::min(l.shape[a1] - std::max<int64_t>(0, -offset),
                                                      l.shape[a2] - std::max<int64_t>(0, offset))));
      t.strides.push_back(l.strides[a1] + l.strides[a2]);
      l = t;
      break;
    }
    case ViewStep::Kind::Real: // the same positions, in complex elements
    case ViewStep::Kind::Imag:
    case ViewStep::Kind::Bits: // the same positions and size
      break;
    case ViewStep::Kind::Window: // each window's axis steps as the axis it slides along
      for (size_t k = 0; k < s.a.size(); ++k) {
        const auto axis = static_cast<size_t>(s.b[k]);
        l.shape[axis] -= s.a[k] - 1;
        l.shape.push_back(s.a[k]);
        l.strides.push_back(l.strides[axis]);
      }
      break;
    case ViewStep::Kind::Reshape: {
      std::optional<std::vector<int64_t>> strides = noCopyStrides(l, s.a);
      if (!strides) {
        l.known = false;
        return l;
      }
      l.shape = s.a;
      l.strides = std::move(*strides);
      break;
    }
    }
  }
  return l;
}

std::atomic<uint64_t> nextBufferId{1};

} // namespace

// --- View steps -----------------------------------------------------------------

Tensor applyView(const Tensor &x, const ViewStep &step) {
  switch (step.kind) {
  case ViewStep::Kind::Flip:
    return flip(x, step.a);
  case ViewStep::Kind::Slice:
    return slice(x, step.a, step.b, step.c);
  case ViewStep::Kind::Reshape:
    return reshape(x, step.a);
  case ViewStep::Kind::Transpose:
    return transpose(x, step.a);
  case ViewStep::Kind::Broadcast:
    return broadcastTo(x, step.a);
  case ViewStep::Kind::Diagonal:
    return diagonal(x, step.a[0], step.a[1], step.a[2]);
  case ViewStep::Kind::Real:
    return real(x);
  case ViewStep::Kind::Imag:
    return imag(x);
  case ViewStep::Kind::Bits:
    return bitcast(x, static_cast<DType>(step.a[0]));
  case ViewStep::Kind::Window: { // each window: its offsets' slices, stacked last
    Tensor t = x;
    for (size_t k = 0; k < step.a.size(); ++k) {
      const int64_t axis = step.b[k], starts = t.dim(axis) - step.a[k] + 1;
      std::vector<Tensor> offsets;
      for (int64_t j = 0; j < step.a[k]; ++j)
        offsets.push_back(detail::sliceAlong(t, axis, j, j + starts));
      t = stack(offsets, -1);
    }
    return t;
  }
  }
  return x;
}

Tensor unapplyView(const ViewStep &step, const Tensor &parent, const Tensor &value) {
  switch (step.kind) {
  case ViewStep::Kind::Flip:
    return flip(value, step.a);
  case ViewStep::Kind::Slice:
    return sliceUpdate(parent, step.a, step.b, step.c, value);
  case ViewStep::Kind::Reshape:
    return reshape(value, parent.shape());
  case ViewStep::Kind::Transpose: {
    std::vector<int64_t> inverse(step.a.size());
    for (size_t i = 0; i < step.a.size(); ++i)
      inverse[static_cast<size_t>(step.a[i])] = static_cast<int64_t>(i);
    return transpose(value, inverse);
  }
  case ViewStep::Kind::Broadcast:
  case ViewStep::Kind::Diagonal:
  case ViewStep::Kind::Window:
    throw Error("assignment destination is read-only", ErrorKind::Value);
  case ViewStep::Kind::Real:
    return complex_of_parts(value, imag(parent));
  case ViewStep::Kind::Imag:
    return complex_of_parts(real(parent), value);
  case ViewStep::Kind::Bits:
    return bitcast(cast(value, static_cast<DType>(step.a[0])), parent.dtype());
  }
  return value;
}

// --- The index specification ----------------------------------------------------

Index expandIndex(const Index &index, int64_t rank) {
  const auto isEllipsis = [](const IndexItem &i) { return std::holds_alternative<Ellipsis>(i); };
  const auto ellipses = std::count_if(index.begin(), index.end(), isEllipsis);
  if (ellipses > 1)
    indexError("an index can only have a single ellipsis ('...')");
  if (ellipses == 0)
    return index;
  const auto used = std::count_if(index.begin(), index.end(), [](const IndexItem &i) {
    return !std::holds_alternative<NewAxis>(i) && !std::holds_alternative<Ellipsis>(i);
  });
  Index out;
  for (const IndexItem &i : index) {
    if (isEllipsis(i))
      out.insert(out.end(), static_cast<size_t>(std::max<int64_t>(rank - used, 0)), Slice{});
    else
      out.push_back(i);
  }
  return out;
}

IndexKind indexKind(const Index &index) {
  const auto any = [&](auto pred) { return std::any_of(index.begin(), index.end(), pred); };
  if (any([](const IndexItem &i) {
        return isTraced(i) && std::get<Tensor>(i).dtype() == DType::b8;
      }))
    return IndexKind::Mask;
  if (any([](const IndexItem &i) { return isTraced(i) && std::get<Tensor>(i).rank() == 0; }))
    return IndexKind::Dynamic;
  if (!index.empty() && isTraced(index[0])) {
    const Tensor &ids = std::get<Tensor>(index[0]);
    if (ids.isInput() && ids.rank() == 1 && isInteger(ids.dtype()) &&
        std::all_of(index.begin() + 1, index.end(), [](const IndexItem &i) {
          return std::holds_alternative<int64_t>(i) || std::holds_alternative<Slice>(i) ||
                 std::holds_alternative<NewAxis>(i);
        }))
      return IndexKind::Gather;
  }
  if (any(isTraced))
    return IndexKind::Computed;
  if (any(isTensor))
    return IndexKind::Advanced;
  return IndexKind::Basic;
}

BasicIndex basicIndex(const Shape &shape, const Index &index) {
  const auto indexed = std::count_if(index.begin(), index.end(), [](const IndexItem &i) {
    return !std::holds_alternative<NewAxis>(i);
  });
  if (indexed > rankOf(shape))
    indexError("too many indices for array: array is " + std::to_string(shape.size()) +
               "-dimensional, but " + std::to_string(indexed) + " were indexed");
  std::vector<int64_t> begin, end, steps, flips;
  Shape out;
  size_t axis = 0;
  int64_t ints = 0;
  bool newAxes = false;
  for (const IndexItem &i : index) {
    if (std::holds_alternative<NewAxis>(i)) {
      out.push_back(1);
      newAxes = true;
      continue;
    }
    const int64_t n = shape[axis];
    std::optional<Resolved> r;
    if (const Range *g = std::get_if<Range>(&i)) {
      const int64_t count = rangeLength(*g);
      const int64_t last = g->start + (count - 1) * g->step;
      const int64_t lo = std::min(g->start, last), hi = std::max(g->start, last);
      if (count == 0 || lo < -n || hi >= n) {
        if (count == 0)
          indexError("tinymlir: the range " + describeRange(*g) + " is empty");
        for (int64_t k = 0; k < count; ++k) // NumPy names the first out of bounds
          if (const int64_t v = g->start + k * g->step; v < -n || v >= n)
            indexError(detail::outOfBounds(v, axis, n));
      }
      if (lo < 0)
        indexError("tinymlir: " + describeRange(*g) +
                   " indexes as an integer array with negative entries: use non-negative "
                   "ranges or slices");
      r = Resolved{g->start, g->step, count};
    } else if (const Slice *s = std::get_if<Slice>(&i)) {
      r = resolve(*s, n);
    } else if (const int64_t *k = std::get_if<int64_t>(&i)) {
      const int64_t w = detail::positionAlong(*k, axis, n);
      begin.push_back(w);
      end.push_back(w + 1);
      steps.push_back(1);
      ++ints;
      ++axis;
      continue;
    } else {
      indexError("tinymlir cannot index a traced array with this item (ints, slices, ranges, "
                 "None, Ellipsis, a boolean mask, int arrays or a traced int)");
    }
    if (r->count == 0) { // an empty slice: size 0 along the axis, as NumPy's
      begin.push_back(0);
      end.push_back(0);
      steps.push_back(1);
      out.push_back(0);
      ++axis;
      continue;
    }
    int64_t start = r->start, step = r->step;
    if (step < 0) { // the axis reversed, then a slice with the positive step
      flips.push_back(static_cast<int64_t>(axis));
      start = n - 1 - start;
      step = -step;
    }
    begin.push_back(start);
    end.push_back(start + (r->count - 1) * step + 1);
    steps.push_back(step);
    out.push_back(r->count);
    ++axis;
  }
  out.insert(out.end(), shape.begin() + static_cast<std::ptrdiff_t>(axis), shape.end());
  BasicIndex b;
  if (!flips.empty())
    b.steps.push_back({ViewStep::Kind::Flip, flips, {}, {}});
  Shape box = shape;
  for (size_t a = 0; a < begin.size(); ++a)
    box[a] = (end[a] - begin[a] + steps[a] - 1) / steps[a];
  if (box != shape) {
    const bool strided = std::any_of(steps.begin(), steps.end(), [](int64_t k) { return k != 1; });
    b.steps.push_back(
        {ViewStep::Kind::Slice, begin, end, strided ? steps : std::vector<int64_t>{}});
  }
  if (box != out)
    b.steps.push_back({ViewStep::Kind::Reshape, out, {}, {}});
  b.scalar = ints > 0 && ints == rankOf(shape) && !newAxes;
  return b;
}

Tensor broadcastInto(const Tensor &t, const Shape &shape, const char *what) {
  Shape ts = t.shape();
  while (ts.size() > shape.size() && ts.front() == 1)
    ts.erase(ts.begin());
  bool ok = ts.size() <= shape.size();
  for (size_t a = 0; ok && a < ts.size(); ++a) {
    const int64_t d = ts[ts.size() - 1 - a], s = shape[shape.size() - 1 - a];
    ok = d == s || d == 1;
  }
  if (!ok)
    throw Error(std::string("could not broadcast ") + what + " from shape " +
                shapeString(t.shape()) + " into shape " + shapeString(shape));
  Tensor r = ts != t.shape() ? reshape(t, ts) : t;
  return r.shape() != shape ? broadcastTo(r, shape) : r;
}

// --- Buffers and views ----------------------------------------------------------

struct Ref::Buffer {
  Tensor value;
  std::vector<int64_t> strides; ///< element strides in memory; empty: C order
  int64_t version = 0;
  uint64_t id = nextBufferId++;
};

Ref::Ref(const Tensor &value)
    : buf_(std::make_shared<Buffer>(Buffer{value, {}})), cache_(value), seen_(0) {}

Ref::Ref(const Tensor &value, std::vector<int64_t> strides)
    : buf_(std::make_shared<Buffer>(Buffer{value, std::move(strides)})), cache_(value), seen_(0) {
  if (!buf_->strides.empty() && buf_->strides.size() != value.shape().size())
    throw Error("[index] " + std::to_string(buf_->strides.size()) + " strides for an array of " +
                    std::to_string(value.shape().size()) + " dimensions",
                ErrorKind::Value);
  if (isCContiguous(Layout{value.shape(), buf_->strides, 0, true}))
    buf_->strides.clear(); // C order, as every array made inside
}

Ref::Ref(std::shared_ptr<Buffer> buf, ViewSteps steps, Tensor value)
    : buf_(std::move(buf)), steps_(std::move(steps)), cache_(std::move(value)),
      seen_(buf_->version) {}

Tensor Ref::value() const {
  if (!buf_)
    throw Error("[index] an empty Ref has no value");
  if (seen_ != buf_->version) {
    Tensor t = buf_->value;
    for (const ViewStep &s : steps_)
      t = applyView(t, s);
    cache_ = t;
    seen_ = buf_->version;
  }
  return cache_;
}

Tensor Ref::base() const { return buf_->value; }
int64_t Ref::version() const { return buf_->version; }
uint64_t Ref::bufferId() const { return buf_->id; }
bool Ref::current() const { return seen_ == buf_->version; }

Ref Ref::view(const ViewSteps &steps) const {
  Tensor t = value();
  for (const ViewStep &s : steps)
    t = applyView(t, s);
  ViewSteps all = steps_;
  all.insert(all.end(), steps.begin(), steps.end());
  return Ref(buf_, std::move(all), t);
}

Ref Ref::viewAs(ViewStep step, Tensor value) const {
  ViewSteps all = steps_;
  all.push_back(std::move(step));
  return Ref(buf_, std::move(all), std::move(value));
}

bool Ref::contiguous() const {
  bool reshapes = std::all_of(steps_.begin(), steps_.end(),
                              [](const ViewStep &s) { return s.kind == ViewStep::Kind::Reshape; });
  return (reshapes && buf_->strides.empty()) ||
         isCContiguous(layoutOf(buf_->value.shape(), steps_, buf_->strides));
}

Array Ref::positions() const {
  const Layout l = layoutOf(buf_->value.shape(), steps_, buf_->strides);
  if (!l.known)
    throw Error("[index] the positions of this view are not known");
  Array out = Array::empty(l.shape, DType::i64);
  int64_t *p = out.data<int64_t>();
  const int64_t n = numElements(l.shape);
  std::vector<int64_t> at(l.shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t pos = l.offset;
    for (size_t a = 0; a < at.size(); ++a)
      pos += at[a] * l.strides[a];
    p[e] = pos;
    for (size_t a = at.size(); a-- > 0;) {
      if (++at[a] < l.shape[a])
        break;
      at[a] = 0;
    }
  }
  return out;
}

bool Ref::sharesMemory(const Ref &other, bool exact) const {
  if (!sameBuffer(other))
    return false;
  std::vector<int64_t> a = positions().toVector<int64_t>(),
                       b = other.positions().toVector<int64_t>();
  if (a.empty() || b.empty())
    return false;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (!exact)
    return a.front() <= b.back() && b.front() <= a.back();
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) // the sorted lists' first common
    if (a[i] == b[j])
      return true;
    else if (a[i] < b[j])
      ++i;
    else
      ++j;
  return false;
}

namespace {

Layout reversedAxes(Layout l) {
  std::reverse(l.shape.begin(), l.shape.end());
  std::reverse(l.strides.begin(), l.strides.end());
  return l;
}

bool isFContiguous(const Layout &l) { return isCContiguous(reversedAxes(l)); }

std::vector<int64_t> reversedPerm(size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t a = 0; a < rank; ++a)
    perm[a] = static_cast<int64_t>(rank - 1 - a);
  return perm;
}

/// The view steps that reshape an array of rank `rank` to `shape` in `order`:
/// C's one step, or F's (C's of the axes reversed, between two reversals).
ViewSteps reshapeSteps(size_t rank, const Shape &shape, char order) {
  if (order == 'C')
    return {{ViewStep::Kind::Reshape, shape, {}, {}}};
  ViewSteps steps;
  if (rank > 1)
    steps.push_back({ViewStep::Kind::Transpose, reversedPerm(rank), {}, {}});
  steps.push_back({ViewStep::Kind::Reshape, Shape(shape.rbegin(), shape.rend()), {}, {}});
  if (shape.size() > 1)
    steps.push_back({ViewStep::Kind::Transpose, reversedPerm(shape.size()), {}, {}});
  return steps;
}

/// NumPy's order argument: one of C, F, A and K, of either case.
char orderOf(std::string_view order) {
  const char c = order.size() == 1 ? static_cast<char>(std::toupper(order[0])) : '?';
  if (c != 'C' && c != 'F' && c != 'A' && c != 'K')
    throw Error("order must be one of 'C', 'F', 'A', or 'K' (got '" + std::string(order) + "')",
                ErrorKind::Value);
  return c;
}

/// 'A' as NumPy resolves it: F for an array that is F-contiguous and not
/// C-contiguous, else C.
char memoryOrder(char order, const Layout &l) {
  if (order != 'A')
    return order;
  return isFContiguous(l) && !isCContiguous(l) ? 'F' : 'C';
}

/// An F-ordered array whose buffer is `reversed`, the array with its axes
/// reversed: NumPy's layout of an F-ordered copy.
Ref laidOutF(const Tensor &reversed) {
  const ViewStep back{ViewStep::Kind::Transpose, reversedPerm(reversed.shape().size()), {}, {}};
  return Ref(reversed).view({back});
}

} // namespace

Ref Ref::copyOf(const ViewSteps &steps) const {
  Tensor t = value();
  for (const ViewStep &s : steps)
    t = applyView(t, s);
  return Ref(t);
}

/// A copy reshaped by `steps` (reshapeSteps') in `order`: NumPy's copy is laid
/// out in that order, so an F-ordered copy is a transposed view of its buffer
/// (later reshapes are views or copies as NumPy's are).
Ref Ref::copyInOrder(const ViewSteps &steps, char order) const {
  if (order == 'C' || steps.back().kind != ViewStep::Kind::Transpose)
    return copyOf(steps);
  return laidOutF(copyOf(ViewSteps(steps.begin(), steps.end() - 1)).value());
}

Ref Ref::reshaped(const Shape &shape, std::string_view orderName, std::optional<bool> copy) const {
  char order = orderOf(orderName);
  if (order == 'K')
    throw Error("order 'K' is not permitted for reshaping", ErrorKind::Value);
  const Layout l = layoutOf(buf_->value.shape(), steps_, buf_->strides);
  order = memoryOrder(order, l);
  const Shape &from = this->shape();
  const Shape target = tinymlir::reshape(value(), shape).shape(); // -1 resolved, sizes checked
  const ViewSteps steps = reshapeSteps(from.size(), target, order);
  if (copy == true)
    return copyInOrder(steps, order);
  if (target == from)
    return view({});
  const bool viewable =
      order == 'C'
          ? noCopyStrides(l, target).has_value()
          : noCopyStrides(reversedAxes(l), Shape(target.rbegin(), target.rend())).has_value();
  if (viewable)
    return view(steps);
  if (copy == false)
    throw Error("Unable to avoid creating a copy while reshaping.", ErrorKind::Value);
  return copyInOrder(steps, order);
}

Ref Ref::transposed(const std::optional<std::vector<int64_t>> &axes) const {
  const size_t rank = shape().size();
  std::vector<int64_t> perm = axes ? *axes : reversedPerm(rank);
  transpose(value(), perm); // NumPy's checks of the permutation
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  for (int64_t &a : perm)
    a = a < 0 ? a + static_cast<int64_t>(rank) : a;
  if (perm == identity)
    return view({});
  return view({{ViewStep::Kind::Transpose, perm, {}, {}}});
}

Ref Ref::flipped(const Axes &axes, std::string_view name) const {
  const size_t rank = shape().size();
  if (name == "fliplr" && rank < 2)
    throw Error("Input must be >= 2-d.", ErrorKind::Value);
  if (name == "flipud" && rank < 1)
    throw Error("Input must be >= 1-d.", ErrorKind::Value);
  const Axes which = name == "fliplr" ? Axes(1) : name == "flipud" ? Axes(0) : axes;
  const Tensor v = value(), f = flip(v, which); // NumPy's checks of the axes
  if (f.node() == v.node())
    return view({}); // no axis
  return viewAs({ViewStep::Kind::Flip, f.node()->axes, {}, {}}, f);
}

Ref Ref::rotated90(int64_t k, const std::vector<int64_t> &axes) const {
  const auto rank = static_cast<int64_t>(shape().size());
  if (axes.size() != 2)
    throw Error("len(axes) must be 2.", ErrorKind::Value);
  const int64_t a = axes[0], b = axes[1];
  if (a == b || std::abs(a - b) == rank)
    throw Error("Axes must be different.", ErrorKind::Value);
  if (a >= rank || a < -rank || b >= rank || b < -rank)
    throw Error("Axes=(" + std::to_string(a) + ", " + std::to_string(b) +
                    ") out of range for array of ndim=" + std::to_string(rank) + ".",
                ErrorKind::Value);
  k = ((k % 4) + 4) % 4;
  if (k == 0)
    return view({});
  if (k == 2)
    return flipped(Axes(std::vector<int64_t>{a, b}));
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>((a + rank) % rank)],
            perm[static_cast<size_t>((b + rank) % rank)]);
  return k == 1 ? flipped(Axes(b)).transposed(perm) : transposed(perm).flipped(Axes(b));
}

Ref Ref::broadcasted(const Shape &shape) const {
  return view({{ViewStep::Kind::Broadcast, shape, {}, {}}}); // broadcastTo: NumPy's checks
}

Ref Ref::diagonalView(int64_t offset, int64_t axis1, int64_t axis2) const {
  Tensor d = diagonal(value(), offset, axis1, axis2); // NumPy's checks
  const auto rank = static_cast<int64_t>(shape().size());
  const int64_t a1 = normalizeAxes("diagonal", Axes(axis1), rank)[0],
                a2 = normalizeAxes("diagonal", Axes(axis2), rank)[0];
  return viewAs({ViewStep::Kind::Diagonal, {offset, a1, a2}, {}, {}}, std::move(d));
}

Ref Ref::windowed(const std::vector<int64_t> &window,
                  const std::optional<std::vector<int64_t>> &axes) const {
  constexpr const char *op = "sliding_window_view";
  const Shape &s = shape();
  const auto rank = static_cast<int64_t>(s.size());
  std::vector<int64_t> along;
  if (!axes) {
    if (static_cast<int64_t>(window.size()) != rank)
      detail::fail(
          op, "Since axis is `None`, must provide window_shape for all dimensions of `x`; got " +
                  std::to_string(window.size()) + " window_shape elements and `x.ndim` is " +
                  std::to_string(rank) + ".");
    along.resize(window.size());
    std::iota(along.begin(), along.end(), 0);
  } else {
    if (axes->size() != window.size())
      detail::fail(op, "Must provide matching length window_shape and axis; got " +
                           std::to_string(window.size()) + " window_shape elements and " +
                           std::to_string(axes->size()) + " axes elements.");
    for (int64_t a : *axes) // repeats allowed: a window of windows
      along.push_back(normalizeAxes(op, Axes(a), rank)[0]);
  }
  Shape trimmed = s;
  for (size_t k = 0; k < window.size(); ++k) {
    if (window[k] < 0)
      detail::fail(op, "`window_shape` cannot contain negative values");
    int64_t &n = trimmed[static_cast<size_t>(along[k])];
    if (n < window[k])
      detail::fail(op, "window shape cannot be larger than input array shape");
    n -= window[k] - 1;
  }
  return view({{ViewStep::Kind::Window, window, along, {}}});
}

Ref Ref::bitsAs(DType to) const {
  const DType from = dtype();
  if (from == to)
    return view({});
  auto plain = [](DType d) { return d != DType::b8 && d != DType::f16 && !isComplex(d); };
  if (dtypeSize(from) != dtypeSize(to) || !plain(from) || !plain(to))
    detail::fail("view",
                 std::string("tinymlir traces .view() of a dtype of the same size (not bool, "
                             "float16 or complex), not ") +
                     dtypeName(from) + " as " + dtypeName(to),
                 ErrorKind::Trace);
  return view({{ViewStep::Kind::Bits, {static_cast<int64_t>(to)}, {}, {}}});
}

Ref Ref::part(bool imaginary) const {
  if (isComplex(dtype()))
    return view({{imaginary ? ViewStep::Kind::Imag : ViewStep::Kind::Real, {}, {}, {}}});
  if (!imaginary)
    return view({});
  return Ref(full({}, 0, dtype())).broadcasted(shape()); // NumPy's: read-only zeros
}

bool Ref::readOnly() const {
  return std::any_of(steps_.begin(), steps_.end(), [](const ViewStep &s) {
    return s.kind == ViewStep::Kind::Broadcast || s.kind == ViewStep::Kind::Diagonal ||
           s.kind == ViewStep::Kind::Window;
  });
}

Ref Ref::matrixTransposed() const {
  const auto rank = static_cast<int64_t>(shape().size());
  if (rank < 2)
    throw Error("matrix transpose with ndim < 2 is undefined", ErrorKind::Value);
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return view({{ViewStep::Kind::Transpose, perm, {}, {}}});
}

std::optional<Ref> Ref::asArray(std::optional<DType> dtype, std::optional<bool> copy,
                                std::string_view orderName, int64_t ndmin) const {
  const char order = orderOf(orderName);
  const Layout l = layoutOf(buf_->value.shape(), steps_, buf_->strides);
  const bool inC = isCContiguous(l), inF = isFContiguous(l);
  const bool needed =
      (dtype && *dtype != this->dtype()) || (order == 'C' && !inC) || (order == 'F' && !inF);
  if (needed && copy == false)
    throw Error("Unable to avoid copy while creating an array as requested.", ErrorKind::Value);
  const Shape &shape = this->shape();
  std::optional<Ref> r;
  if (needed || copy == true) {
    const Tensor v = dtype && *dtype != this->dtype() ? cast(value(), *dtype) : value();
    const bool keepsF = order == 'F' || (order != 'C' && inF && !inC); // NumPy's K and A
    r = keepsF ? laidOutF(transpose(v, reversedPerm(shape.size()))) : Ref(v);
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (ndmin > rank) {
    Shape wider(static_cast<size_t>(ndmin - rank), 1);
    wider.insert(wider.end(), shape.begin(), shape.end());
    r = r.value_or(*this).view({{ViewStep::Kind::Reshape, wider, {}, {}}});
  }
  return r;
}

Ref Ref::raveled(std::string_view orderName) const {
  char order = orderOf(orderName);
  const Layout l = layoutOf(buf_->value.shape(), steps_, buf_->strides);
  const Shape flat{numElements(shape())};
  const size_t rank = shape().size();
  if (order == 'K' && l.known && !isCContiguous(l)) {
    if (isFContiguous(l))
      return view(reshapeSteps(rank, flat, 'F'));
    // Memory order: axes by falling |stride| (stable; NumPy flips none).
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) { // ties: axis order
      const int64_t sx = std::abs(l.strides[static_cast<size_t>(x)]),
                    sy = std::abs(l.strides[static_cast<size_t>(y)]);
      return sx != sy ? sx > sy : x < y;
    });
    const ViewSteps moved{{ViewStep::Kind::Transpose, perm, {}, {}},
                          {ViewStep::Kind::Reshape, flat, {}, {}}};
    Layout sorted = l; // NumPy's view: the strides in that order are a contiguous array's
    for (size_t a = 0; a < perm.size(); ++a) {
      sorted.shape[a] = l.shape[static_cast<size_t>(perm[a])];
      sorted.strides[a] = l.strides[static_cast<size_t>(perm[a])];
    }
    return isCContiguous(sorted) ? view(moved) : copyOf(moved);
  }
  order = order == 'K' ? 'C' : memoryOrder(order, l);
  const ViewSteps steps = reshapeSteps(rank, flat, order);
  const bool contiguous = order == 'C' ? isCContiguous(l) : isFContiguous(l);
  return contiguous ? view(steps) : copyOf(steps);
}

void Ref::setShape(const Shape &shape) {
  Tensor t = reshape(value(), shape);
  if (t.shape() == this->shape())
    return;
  if (!noCopyStrides(layoutOf(buf_->value.shape(), steps_, buf_->strides), t.shape()))
    throw Error("Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                "with the desired shape.",
                ErrorKind::Type);
  steps_.push_back({ViewStep::Kind::Reshape, t.shape(), {}, {}});
  cache_ = t;
  seen_ = buf_->version;
}

namespace {

/// `value` checked as NumPy's __setitem__ and fill convert a scalar (a Python
/// number or NumPy's, known now) into `to`: as Python's int() or float(),
/// with their errors for nan, infinity, an integer out of the dtype's range
/// and a complex number into a real array. Arrays are cast unsafely.
void checkAssignedScalar(const Tensor &value, DType to) {
  const detail::Node &n = *value.node();
  if (n.op != Op::Scalar || to == DType::b8)
    return;
  if (n.wide && isInteger(to))
    throw Error(detail::kWideInteger, ErrorKind::Overflow);
  const bool complexValue = n.weak ? n.weakComplex : isComplex(n.dtype);
  if (complexValue && !isComplex(to))
    throw Error(std::string(isInteger(to) ? "int() argument must be a string, a bytes-like "
                                            "object or a real number, not 'complex'"
                                          : "float() argument must be a string or a real number, "
                                            "not 'complex'"),
                ErrorKind::Type);
  const bool floatValue = n.weak ? !n.integral && !n.weakComplex : isFloat(n.dtype);
  if (!floatValue || !isInteger(to))
    return;
  if (std::isnan(n.scalar))
    throw Error("cannot convert float NaN to integer", ErrorKind::Value);
  if (std::isinf(n.scalar))
    throw Error("cannot convert float infinity to integer", ErrorKind::Overflow);
  const double whole = std::trunc(n.scalar);
  const int bits = 8 * static_cast<int>(dtypeSize(to));
  const double lo = isUnsigned(to) ? 0.0 : -std::ldexp(1.0, bits - 1),
               hi = std::ldexp(1.0, isUnsigned(to) ? bits : bits - 1);
  if (whole < lo || whole >= hi) {
    char text[400];
    std::snprintf(text, sizeof text, "%.0f", whole); // Python's int() of it, exactly
    throw Error(std::string("Python integer ") + text + " out of bounds for " + dtypeName(to),
                ErrorKind::Overflow);
  }
}

} // namespace

void Ref::assign(const Tensor &value) {
  const Tensor t = this->value();
  checkAssignedScalar(value, t.dtype());
  Tensor v = value.dtype() != t.dtype() ? cast(value, t.dtype()) : value;
  v = broadcastInto(v, t.shape());
  std::vector<Tensor> parents{buf_->value};
  for (size_t k = 0; k + 1 < steps_.size(); ++k)
    parents.push_back(applyView(parents.back(), steps_[k]));
  Tensor updated = v;
  for (size_t k = steps_.size(); k-- > 0;)
    updated = unapplyView(steps_[k], parents[k], updated);
  buf_->value = updated;
  ++buf_->version;
  cache_ = v;
  seen_ = buf_->version;
}

void Ref::update(const Tensor &result, const char *ufunc, std::string_view casting,
                 const Tensor &where) {
  if (readOnly())
    throw Error("output array is read-only", ErrorKind::Value);
  const Tensor t = value();
  if (!canCast(result.dtype(), t.dtype(), castingNamed(casting)))
    throw Error(std::string("Cannot cast ufunc '") + ufunc + "' output from dtype('" +
                    dtypeName(result.dtype()) + "') to dtype('" + dtypeName(t.dtype()) +
                    "') with casting rule '" + std::string(casting) + "'",
                ErrorKind::Type);
  const Shape &rs = result.shape(), &ts = t.shape();
  if (std::string_view(ufunc) == "matmul") // the core dimensions are the output's own
    for (size_t k = 0; k < 2 && k < rs.size() && k < ts.size(); ++k)
      if (rs[rs.size() - 1 - k] != ts[ts.size() - 1 - k])
        throw Error("matmul: Output operand 0 has a mismatch in its core dimension " +
                    std::to_string(std::min<size_t>(ts.size(), 2) - 1 - k) +
                    ", with gufunc signature (n?,k),(k,m?)->(n?,m?) (size " +
                    std::to_string(ts[ts.size() - 1 - k]) + " is different from " +
                    std::to_string(rs[rs.size() - 1 - k]) + ")");
  bool fits = rs.size() <= ts.size();
  for (size_t a = 0; fits && a < rs.size(); ++a) {
    const int64_t r = rs[rs.size() - 1 - a], s = ts[ts.size() - 1 - a];
    fits = r == s || r == 1;
  }
  if (!fits) {
    Shape both = rs.size() > ts.size() ? rs : ts;
    for (size_t a = 0; a < std::min(rs.size(), ts.size()); ++a) {
      const int64_t r = rs[rs.size() - 1 - a], s = ts[ts.size() - 1 - a];
      both[both.size() - 1 - a] = r == 1 ? s : r;
    }
    throw Error("non-broadcastable output operand with shape " + shapeString(ts) +
                " doesn't match the broadcast shape " + shapeString(both));
  }
  if (!where.valid())
    return assign(result);
  const Tensor mask = broadcastInto(cast(where, DType::b8), ts, "where");
  assign(tinymlir::where(mask, broadcastInto(cast(result, t.dtype()), ts), t));
}

namespace {

bool isMask(const IndexItem &i) {
  const Tensor *t = std::get_if<Tensor>(&i);
  return t && t->dtype() == DType::b8 && t->rank() > 0;
}

/// NumPy's check of a bool mask `m` covering x's axes from `axis` on.
void checkMask(const Tensor &m, const Shape &shape, size_t axis, size_t indexed) {
  const Shape &ms = m.shape();
  if (indexed > shape.size())
    indexError("too many indices for array: array is " + std::to_string(shape.size()) +
               "-dimensional, but " + std::to_string(indexed) + " were indexed");
  for (size_t a = 0; a < ms.size(); ++a)
    if (ms[a] != shape[axis + a])
      indexError("boolean index did not match indexed array along axis " +
                 std::to_string(axis + a) + "; size of axis is " + std::to_string(shape[axis + a]) +
                 " but size of corresponding boolean axis is " + std::to_string(ms[a]));
}

/// The number of x's axes the items of `index` before `end` take.
size_t axesTaken(const Index &index, size_t end) {
  size_t n = 0;
  for (size_t k = 0; k < end; ++k)
    if (!std::holds_alternative<NewAxis>(index[k]))
      n += isMask(index[k]) ? static_cast<size_t>(std::get<Tensor>(index[k]).rank()) : 1;
  return n;
}

/// The index with each concrete bool mask replaced by its nonzero()
/// positions, one int array per axis it covers: NumPy's meaning of a mask,
/// whose count is then known.
Index concreteMasksAsPositions(const Index &index, const Shape &shape) {
  Index out;
  for (size_t k = 0; k < index.size(); ++k) {
    if (!isMask(index[k]) || isTraced(index[k])) {
      out.push_back(index[k]);
      continue;
    }
    const Tensor &m = std::get<Tensor>(index[k]);
    checkMask(m, shape, axesTaken(index, k), axesTaken(index, index.size()));
    const std::vector<uint8_t> bits = m.array().astype(DType::u8).toVector<uint8_t>();
    const Shape &ms = m.shape();
    std::vector<std::vector<int64_t>> positions(ms.size());
    for (size_t e = 0; e < bits.size(); ++e) {
      if (!bits[e])
        continue;
      size_t rest = e;
      for (size_t a = ms.size(); a-- > 0;) {
        positions[a].push_back(static_cast<int64_t>(rest % static_cast<size_t>(ms[a])));
        rest /= static_cast<size_t>(ms[a]);
      }
    }
    for (const std::vector<int64_t> &p : positions)
      out.push_back(Tensor(Array::fromVector(p, {static_cast<int64_t>(p.size())})));
  }
  return out;
}

/// x[index] for an index holding one traced mask: the view the other items
/// make (the mask's axes kept whole), the mask, and where its axes are in
/// that view. NumPy puts the count where the mask was unless ints index
/// too and are not next to it (advanced indices apart: the count goes first).
struct MaskedIndex {
  Ref target;
  Tensor mask;
  int64_t axis;
};
MaskedIndex maskedIndex(const Ref &x, const Index &index) {
  size_t at = index.size(), ints = 0, firstInt = index.size(), lastInt = 0;
  for (size_t k = 0; k < index.size(); ++k) {
    if (std::holds_alternative<int64_t>(index[k])) {
      ++ints;
      firstInt = std::min(firstInt, k);
      lastInt = k;
    } else if (isTraced(index[k]) && at == index.size() && isMask(index[k])) {
      at = k;
    } else if (isTensor(index[k]) || std::holds_alternative<Range>(index[k])) {
      throw Error("tinymlir: a traced boolean mask is indexed with ints, slices, None and '...' "
                  "only (with other arrays the result's shape depends on the data)",
                  ErrorKind::Trace);
    }
  }
  if (at == index.size())
    throw Error("tinymlir: a traced boolean mask of rank 0 (x[b]) adds an axis whose length "
                "depends on the data",
                ErrorKind::Trace);
  const Tensor &m = std::get<Tensor>(index[at]);
  const Shape &shape = x.shape();
  checkMask(m, shape, axesTaken(index, at), axesTaken(index, index.size()));
  Index basic(index.begin(), index.begin() + static_cast<std::ptrdiff_t>(at));
  basic.insert(basic.end(), static_cast<size_t>(m.rank()), Slice{});
  basic.insert(basic.end(), index.begin() + static_cast<std::ptrdiff_t>(at) + 1, index.end());
  Ref target = x.view(basicIndex(shape, basic).steps);
  int64_t axis = 0;
  for (size_t k = 0; k < at; ++k)
    axis += std::holds_alternative<int64_t>(index[k]) ? 0 : 1;
  const bool apart = ints > 0 && (std::min(firstInt, at) + ints + 1 != std::max(lastInt, at) + 1);
  if (apart && axis > 0) { // the mask's axes first
    const int64_t rank = static_cast<int64_t>(target.shape().size());
    std::vector<int64_t> perm;
    for (int64_t a = axis; a < axis + m.rank(); ++a)
      perm.push_back(a);
    for (int64_t a = 0; a < rank; ++a)
      if (a < axis || a >= axis + m.rank())
        perm.push_back(a);
    target = target.view({{ViewStep::Kind::Transpose, perm, {}, {}}});
    axis = 0;
  }
  return {target, m, axis};
}

} // namespace

MaskedRead Ref::maskedRead(const Index &index) const {
  const MaskedIndex mi = maskedIndex(*this, expandIndex(index, rankOf(shape())));
  return MaskedRead(mi.target.value(), mi.mask, mi.axis);
}

void Ref::setMasked(const Index &index, const MaskedRead &read) {
  MaskedIndex mi = maskedIndex(*this, expandIndex(index, rankOf(shape())));
  const MaskedRead here(mi.target.value(), mi.mask, mi.axis);
  mi.target.assignWhere(here.spreadMask(), here.operand(read));
}

void Ref::assignWhere(const Tensor &mask, const Tensor &value) {
  const Tensor t = this->value();
  assign(where(mask, cast(value, t.dtype()), t));
}

std::vector<Ref> splitViews(const Ref &x, const std::string &name,
                            const std::variant<int64_t, std::vector<int64_t>> &spec, int64_t axis) {
  const Shape shape = x.shape();
  const auto rank = static_cast<int64_t>(shape.size());
  const char *op = name.c_str();
  if (const int64_t least = name == "hsplit"   ? 1
                            : name == "vsplit" ? 2
                            : name == "dsplit" ? 3
                                               : 0;
      least) {
    if (rank < least)
      detail::fail(op, name + " only works on arrays of " + std::to_string(least) +
                           " or more dimensions");
    axis = name == "hsplit" ? (rank > 1 ? 1 : 0) : name == "vsplit" ? 0 : 2;
  }
  if (rank == 0)
    detail::fail(op, "tinymlir: " + name + " of a 0-d array", ErrorKind::Axis);
  axis = normalizeAxes(op, Axes(axis), rank)[0];
  const int64_t n = shape[static_cast<size_t>(axis)];
  std::vector<std::pair<int64_t, int64_t>> bounds; // [start, stop) of each part
  if (const int64_t *sections = std::get_if<int64_t>(&spec)) {
    if (*sections <= 0)
      detail::fail(op, "number sections must be larger than 0.");
    if (name != "array_split" && n % *sections != 0)
      detail::fail(op, "array split does not result in an equal division");
    const int64_t each = n / *sections, extras = n % *sections;
    for (int64_t k = 0, start = 0; k < *sections; ++k) {
      const int64_t size = each + (k < extras ? 1 : 0);
      bounds.emplace_back(start, start + size);
      start += size;
    }
  } else {
    int64_t start = 0;
    for (int64_t cut : std::get<std::vector<int64_t>>(spec))
      bounds.emplace_back(start, cut), start = cut;
    bounds.emplace_back(start, n);
  }
  std::vector<Ref> parts;
  for (auto [start, stop] : bounds) {
    Index index(static_cast<size_t>(axis), Slice{});
    index.push_back(Slice{start, stop, 1});
    parts.push_back(x.get(index));
  }
  return parts;
}

Ref Ref::get(const Index &index) const {
  const Index e = concreteMasksAsPositions(expandIndex(index, rankOf(shape())), shape());
  switch (indexKind(e)) {
  case IndexKind::Mask:
    throw Error("tinymlir: x[mask] has a shape that depends on the data: reduce it, or assign "
                "through it",
                ErrorKind::Trace);
  case IndexKind::Dynamic:
    return Ref(dynamicRead(*this, e));
  case IndexKind::Basic: {
    checkRanges(e);
    const BasicIndex b = basicIndex(shape(), e);
    Ref v = view(b.steps);
    return b.scalar ? Ref(v.value()) : v; // NumPy's a[i, j] is a scalar, not a view
  }
  case IndexKind::Gather:
    return gatherRead(*this, e);
  case IndexKind::Computed:
    return Ref(computedRead(*this, e));
  case IndexKind::Advanced: {
    const auto [sliced, rest] = slicedFirst(*this, e);
    return Ref(advancedRead(sliced, rest));
  }
  }
  return *this;
}

void Ref::set(const Index &index, const Tensor &value) {
  checkAssignedScalar(value, dtype());
  const Index e = concreteMasksAsPositions(expandIndex(index, rankOf(shape())), shape());
  switch (indexKind(e)) {
  case IndexKind::Mask: {
    MaskedIndex mi = maskedIndex(*this, e);
    const MaskedRead here(mi.target.value(), mi.mask, mi.axis);
    mi.target.assignWhere(here.spreadMask(), here.operand(value));
    return;
  }
  case IndexKind::Dynamic:
    dynamicWrite(*this, e, value);
    return;
  case IndexKind::Basic:
    checkRanges(e);
    view(basicIndex(shape(), e).steps).assign(value);
    return;
  case IndexKind::Gather: // a write to table[ids] is a put
  case IndexKind::Computed:
    computedWrite(*this, e, value);
    return;
  case IndexKind::Advanced: {
    auto [sliced, rest] = slicedFirst(*this, e);
    scatter(sliced, rest, value);
    return;
  }
  }
}

} // namespace tinymlir
