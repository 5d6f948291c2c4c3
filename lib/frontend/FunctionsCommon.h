// Private helpers shared by the files of NumPy functions made of the core's
// operations (include/tinymlir/numpy.h; lib/frontend/Math.cpp, Shape.cpp...).
#pragma once

#include "frontend/Graph.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

namespace tinymlir {

/// Whether d is a float or complex dtype (NumPy's inexact kinds).
inline bool inexact(DType d) { return isFloat(d) || isComplex(d); }

/// A Python number as NumPy's asarray makes it: int64, float64, complex128
/// (the operands of functions that call asarray first). Invalid stays so.
inline Tensor strong(const Tensor &x) {
  return x.valid() && x.node()->weak ? cast(x, detail::strongDType(*x.node())) : x;
}

/// x[..., begin:end:step, ...] along `axis` (a basic index: the core's view steps).
inline Tensor along(const Tensor &x, int64_t axis, Slice slice) {
  Index index(static_cast<size_t>(axis), Slice{});
  index.push_back(slice);
  return Ref(x).get(index).value();
}

/// s[..., i]: the i-th element along the last axis (of sorted values: the
/// i-th of every slice).
inline Tensor sortedAt(const Tensor &s, int64_t i) {
  const size_t rank = s.shape().size();
  std::vector<int64_t> begin(rank, 0), end(s.shape().begin(), s.shape().end());
  begin.back() = i;
  end.back() = i + 1;
  Shape shape(s.shape().begin(), s.shape().end() - 1);
  return reshape(slice(s, begin, end), shape);
}

} // namespace tinymlir
