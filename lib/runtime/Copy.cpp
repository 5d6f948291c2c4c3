// memref.copy of strided views, for generated code: a slice update writes
// its box into an array's buffer, and a read copies a slice out of it
// (builder/StraightLine.cpp). MLIR's memrefCopy copies element by element through
// an index vector: a 400x400 Jacobi step ran 4x slower than NumPy's. Here the
// innermost axis is one memcpy where both sides are contiguous along it, and
// whole arrays laid out alike are one memcpy.
#include "runtime/Call.h"

#include <cstring>
#include <vector>

namespace {

/// MLIR's descriptors: an unranked memref {rank, ranked descriptor*}; a
/// ranked one {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct Unranked {
  int64_t rank;
  void *descriptor;
};

struct View {
  char *data;
  const int64_t *sizes;
  const int64_t *strides;
};

View viewOf(const Unranked &m, int64_t elementSize) {
  auto *fields = static_cast<char *>(m.descriptor);
  char *aligned;
  int64_t offset;
  std::memcpy(&aligned, fields + sizeof(void *), sizeof aligned);
  std::memcpy(&offset, fields + 2 * sizeof(void *), sizeof offset);
  const auto *sizes =
      reinterpret_cast<const int64_t *>(fields + 2 * sizeof(void *) + sizeof(int64_t));
  return {aligned + offset * elementSize, sizes, sizes + m.rank};
}

bool rowMajor(const View &v, int64_t rank) {
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (v.sizes[d] != 1 && v.strides[d] != expected)
      return false;
    expected *= v.sizes[d];
  }
  return true;
}

} // namespace

extern "C" void tinymlir_memref_copy(int64_t elementSize, void *sourceArg, void *destinationArg) {
  const auto &source = *static_cast<const Unranked *>(sourceArg);
  const auto &destination = *static_cast<const Unranked *>(destinationArg);
  const int64_t rank = source.rank;
  View s = viewOf(source, elementSize), d = viewOf(destination, elementSize);
  int64_t total = 1;
  for (int64_t k = 0; k < rank; ++k)
    total *= s.sizes[k];
  if (total == 0)
    return;
  if (rank == 0 || (rowMajor(s, rank) && rowMajor(d, rank))) {
    std::memmove(d.data, s.data, static_cast<size_t>(total * elementSize));
    return;
  }
  const int64_t inner = s.sizes[rank - 1];
  const bool runs = s.strides[rank - 1] == 1 && d.strides[rank - 1] == 1;
  std::vector<int64_t> index(static_cast<size_t>(rank - 1), 0); // the outer positions
  for (int64_t row = 0, rows = total / inner; row < rows; ++row) {
    int64_t so = 0, dof = 0;
    for (int64_t k = 0; k < rank - 1; ++k) {
      so += index[static_cast<size_t>(k)] * s.strides[k];
      dof += index[static_cast<size_t>(k)] * d.strides[k];
    }
    char *from = s.data + so * elementSize, *to = d.data + dof * elementSize;
    if (runs) {
      std::memmove(to, from, static_cast<size_t>(inner * elementSize));
    } else {
      const int64_t fs = s.strides[rank - 1] * elementSize, ts = d.strides[rank - 1] * elementSize;
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(to + i * ts, from + i * fs, static_cast<size_t>(elementSize));
    }
    for (int64_t k = rank - 2; k >= 0; --k) { // the next outer position
      if (++index[static_cast<size_t>(k)] < s.sizes[k])
        break;
      index[static_cast<size_t>(k)] = 0;
    }
  }
}
