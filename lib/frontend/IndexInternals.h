// Helpers that Index.cpp, AdvancedIndex.cpp and Ref.cpp share (internal):
// NumPy's IndexError, ranges and strides, and the reads and writes of int arrays.
#pragma once

#include "frontend/Graph.h"

#include <tinymlir/index.h>

#include <string>
#include <utility>
#include <vector>

namespace tinymlir::detail {

[[noreturn]] inline void indexError(const std::string &message) {
  throw Error(message, ErrorKind::Index);
}

inline int64_t rankOf(const Shape &shape) { return static_cast<int64_t>(shape.size()); }

inline int64_t rangeLength(const Range &r) {
  if (r.step > 0 && r.stop > r.start)
    return (r.stop - r.start + r.step - 1) / r.step;
  if (r.step < 0 && r.start > r.stop)
    return (r.start - r.stop - r.step - 1) / -r.step;
  return 0;
}

inline std::vector<int64_t> cStrides(const Shape &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t a = shape.size(); a-- > 1;)
    s[a - 1] = s[a] * shape[a];
  return s;
}

/// `value` checked as NumPy's __setitem__ converts a scalar into `to` (Ref.cpp).
void checkAssignedScalar(const Tensor &value, DType to);

// AdvancedIndex.cpp: x[index] and x[index] = value with int arrays among the index.

/// x[int arrays, ':'...] with the arrays known now: one gather.
Tensor advancedRead(const Ref &x, const Index &index);
/// An advanced index's slices and new axes taken first, as a view of x; the rest.
std::pair<Ref, Index> slicedFirst(const Ref &x, const Index &index);
/// x[int arrays...] = value with the arrays known now: one index_put.
void scatter(Ref &x, const Index &index, const Tensor &value);
/// x[...] with computed int arrays among its indices: one take.
Tensor computedRead(const Ref &x, const Index &index);
/// x[...] = value with computed int arrays among its indices: one put.
void computedWrite(const Ref &x, const Index &index, const Tensor &value);
/// table[ids, ...] with ids an argument: a gather of the rows.
Ref gatherRead(const Ref &x, const Index &index);

} // namespace tinymlir::detail
