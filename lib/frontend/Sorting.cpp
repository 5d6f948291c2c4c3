// Sorting, searching and counting: lexsort, searchsorted with a sorter, the
// sort kinds, partition, nanargmax, nanargmin, count_nonzero; and np.isin.
#include "frontend/Graph.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>
#include <vector>

namespace tinymlir {
using detail::fail;

Tensor lexsort(const std::vector<Tensor> &keys) {
  if (keys.empty())
    fail("lexsort", "need sequence of keys with len > 0 in lexsort", ErrorKind::Type);
  if (std::all_of(keys.begin(), keys.end(), [](const Tensor &k) { return k.rank() == 0; }))
    return Tensor(Array::scalar(0, DType::i64)); // the order of one element
  for (const Tensor &k : keys) {
    if (k.rank() != 1)
      fail("lexsort", "tinymlir traces numpy.lexsort of 1-D keys", ErrorKind::Trace);
    if (k.shape() != keys[0].shape())
      fail("lexsort", "all keys need to be the same shape");
  }
  // Sorted by the first key, then stably by each next one: the last decides.
  Tensor order = argsort(keys[0]);
  for (size_t i = 1; i < keys.size(); ++i)
    order = take(order, argsort(take(keys[i], order)));
  return order;
}

Tensor lexsort(const Tensor &keys) {
  if (keys.rank() == 0)
    fail("lexsort", "need sequence of keys with len > 0 in lexsort", ErrorKind::Type);
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < keys.shape()[0]; ++i)
    rows.push_back(Ref(keys).get({i}).value());
  return lexsort(rows);
}

Tensor searchsorted(const Tensor &a, const Tensor &v, bool right, const Tensor &sorter) {
  if (!sorter.valid())
    return searchsorted(a, v, right);
  if (sorter.rank() != 1 || numElements(sorter.shape()) != numElements(a.shape()))
    fail("searchsorted", "sorter.size must equal a.size");
  return searchsorted(take(a, sorter), v, right);
}

void checkSortKind(const std::optional<std::string> &kind, std::optional<bool> stable) {
  if (!kind)
    return;
  if (stable)
    throw Error("`kind` and keyword parameters can't be provided at the same time. Use only one "
                "of them.",
                ErrorKind::Value);
  const char c = kind->empty() ? '?' : static_cast<char>(std::tolower((*kind)[0]));
  if (c != 'q' && c != 'h' && c != 'm' && c != 's')
    throw Error("sort kind must be one of 'quick', 'heap', or 'stable' (got '" + *kind + "')",
                ErrorKind::Value);
}

Tensor isin(const Tensor &element, const Tensor &test, bool invert) {
  const Tensor flat = reshape(test, {numElements(test.shape())});
  if (numElements(test.shape()) == 0)
    return broadcastTo(ScalarType{DType::b8}(invert ? 1.0 : 0.0), element.shape());
  Shape shape = element.shape();
  shape.push_back(1);
  const Tensor pairs = reshape(element, shape);
  return invert ? all(not_equal(pairs, flat), -1) : any(equal(pairs, flat), -1);
}

namespace {
/// nanargmax (largest) or nanargmin: nans become the other extreme, so they
/// are never picked; a slice of nans alone is checked when the kernel runs.
Tensor nanExtremeIndex(const Tensor &a, std::optional<int64_t> axis, bool keepdims, bool largest) {
  if (!isFloat(a.dtype()))
    return largest ? argmax(a, axis, keepdims) : argmin(a, axis, keepdims);
  const Tensor nan = isnan(a);
  const double other =
      largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const Tensor t = where(nan, ScalarType{a.dtype()}(other), a);
  const Tensor index = largest ? argmax(t, axis, keepdims) : argmin(t, axis, keepdims);
  const Axes axes = axis && !a.shape().empty() ? Axes(*axis) : Axes();
  // 1 where the slice has a number; the kernel stops at a 0 (reason 3).
  const Tensor checked =
      detail::requireAtLeast(cast(any(logical_not(nan), axes, keepdims), DType::i64), 1, 3);
  return index * checked;
}
} // namespace

Tensor nanargmax(const Tensor &a, std::optional<int64_t> axis, bool keepdims) {
  return nanExtremeIndex(a, axis, keepdims, true);
}

Tensor nanargmin(const Tensor &a, std::optional<int64_t> axis, bool keepdims) {
  return nanExtremeIndex(a, axis, keepdims, false);
}

Tensor countNonzero(const Tensor &a, const Axes &axes, bool keepdims) {
  const Tensor nonzero = a.dtype() == DType::b8 ? a : not_equal(a, ScalarType{a.dtype()}(0.0));
  return sum(nonzero, axes, keepdims); // int64, as NumPy's intp
}

Tensor partition(const Tensor &x, const std::vector<int64_t> &kth, std::optional<int64_t> axis,
                 bool indices) {
  const Tensor r = indices ? argsort(x, axis) : sort(x, axis);
  const int64_t n =
      axis ? r.shape()[static_cast<size_t>(normalizeAxes("partition", Axes(*axis), r.rank())[0])]
           : r.shape().back();
  for (int64_t k : kth)
    if (const int64_t at = k < 0 ? k + n : k; at < 0 || at >= n)
      fail(indices ? "argpartition" : "partition",
           "kth(=" + std::to_string(at) + ") out of bounds (" + std::to_string(n) + ")");
  return r;
}

} // namespace tinymlir
