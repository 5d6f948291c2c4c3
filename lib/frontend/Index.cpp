// NumPy's indexing for traced arrays (include/tinymlir/index.h): the index
// specification, basic indices, traced int positions, boolean masks, and Ref's
// reads and writes through an index (int arrays: AdvancedIndex.cpp).
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

using detail::advancedRead;
using detail::checkAssignedScalar;
using detail::computedRead;
using detail::computedWrite;
using detail::gatherRead;
using detail::indexError;
using detail::rangeLength;
using detail::rankOf;
using detail::scatter;
using detail::slicedFirst;

bool isTensor(const IndexItem &i) { return std::holds_alternative<Tensor>(i); }
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
  std::vector<std::pair<int64_t, const TracedSlice *>> spans;
  for (size_t a = 0; a < index.size(); ++a) {
    const IndexItem &i = index[a];
    if (const TracedSlice *ts = std::get_if<TracedSlice>(&i)) {
      rest.emplace_back(Slice{});
      spans.emplace_back(static_cast<int64_t>(a), ts);
    } else if (const Tensor *t = std::get_if<Tensor>(&i)) {
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
  if (v->op == Op::Slice && detail::tracedPositions(*v) == 0 && detail::spanCount(*v) == 0 &&
      v->args[0] == x.value().node()) {
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
  for (const auto &[axis, ts] : spans) {
    const size_t ax = static_cast<size_t>(axis);
    if (d.box.steps[ax] != 1)
      indexError("tinymlir: a slice with traced bounds of a strided view");
    // (its start is relative to the box's static offset there)
    d.box.spans.push_back(detail::tracedSpan(axis, ts->start, ts->stop, d.box.extents[ax]));
  }
  d.drop.assign(value.shape().size(), false);
  for (size_t a = 0; a < index.size(); ++a)
    d.drop[a] =
        !std::holds_alternative<Slice>(index[a]) && !std::holds_alternative<TracedSlice>(index[a]);
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

} // namespace

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
  if (any([](const IndexItem &i) {
        return (isTraced(i) && std::get<Tensor>(i).rank() == 0) ||
               std::holds_alternative<TracedSlice>(i);
      }))
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

namespace {
/// Indexing needs numbers for the axes: an array of a size known only when
/// the kernel runs (x[i:] of a traced i) is not indexed while tracing.
void checkKnownShape(const Shape &shape) {
  if (detail::hasSymbolic(shape))
    throw Error("tinymlir: an array whose size is known only when the kernel runs (a slice with "
                "traced bounds) cannot be indexed while tracing",
                ErrorKind::Trace);
}
} // namespace

Ref Ref::get(const Index &index) const {
  checkKnownShape(shape());
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
  checkKnownShape(shape());
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
