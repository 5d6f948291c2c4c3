// Buffers with versions and their views (include/tinymlir/index.h): the view
// steps, a view's layout in its buffer (NumPy's strides, no-copy reshapes), and
// Ref's views, copies and writes; np.split's views.
#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include "frontend/Graph.h"
#include "frontend/IndexInternals.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>

namespace tinymlir {

namespace {

using detail::checkAssignedScalar;
using detail::cStrides;

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

// --- Buffers and views ----------------------------------------------------------

struct Ref::Buffer {
  Tensor value;
  std::vector<int64_t> strides; ///< element strides in memory; empty: C order
  int64_t version = 0;
  uint64_t id = nextBufferId++;
  int64_t stamp = 0; ///< changes with every new value (writes and rebase): views read again
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
    : buf_(std::move(buf)), steps_(std::move(steps)), cache_(std::move(value)), seen_(buf_->stamp) {
}

Tensor Ref::value() const {
  if (!buf_)
    throw Error("[index] an empty Ref has no value");
  if (seen_ != buf_->stamp) {
    Tensor t = buf_->value;
    for (const ViewStep &s : steps_)
      t = applyView(t, s);
    cache_ = t;
    seen_ = buf_->stamp;
  }
  return cache_;
}

Tensor Ref::base() const { return buf_->value; }
int64_t Ref::version() const { return buf_->version; }
uint64_t Ref::bufferId() const { return buf_->id; }
bool Ref::current() const { return seen_ == buf_->stamp; }

void Ref::rebase(const Tensor &value, bool newVersion) {
  if (!buf_)
    throw Error("[index] an empty Ref has no buffer to rebase");
  const Tensor &old = buf_->value;
  if (!value.valid() || value.shape() != old.shape() || value.dtype() != old.dtype())
    throw Error("[index] rebase: the new value must have the buffer's shape and dtype (" +
                    std::string(dtypeName(old.dtype())) + " " + shapeString(old.shape()) + ")",
                ErrorKind::Value);
  buf_->value = value;
  ++buf_->stamp;
  if (newVersion)
    ++buf_->version;
}

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
  seen_ = buf_->stamp;
}

/// `value` checked as NumPy's __setitem__ and fill convert a scalar (a Python
/// number or NumPy's, known now) into `to`: as Python's int() or float(),
/// with their errors for nan, infinity, an integer out of the dtype's range
/// and a complex number into a real array. Arrays are cast unsafely.
void detail::checkAssignedScalar(const Tensor &value, DType to) {
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
  ++buf_->stamp;
  cache_ = v;
  seen_ = buf_->stamp;
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

} // namespace tinymlir
