// The row kernels' view of their operands (Rows.cpp, Linalg.cpp): 2-D
// memrefs as compiled code passes them, MLIR's expanded descriptors.
#pragma once

#include "runtime/Call.h"

#include <cstdint>

namespace tinymlir::detail {

template <class T> struct Rows {
  T *data;
  int64_t rows, columns, rowStride, columnStride;
  T &operator()(int64_t i, int64_t j) const { return data[i * rowStride + j * columnStride]; }
};

#define TINYMLIR_ROWS(T, p)                                                                        \
  T *p##Allocated, T *p##Aligned, int64_t p##Offset, int64_t p##Rows, int64_t p##Columns,          \
      int64_t p##RowStride, int64_t p##ColumnStride
#define TINYMLIR_ROWS_OF(T, p)                                                                     \
  (static_cast<void>(p##Allocated),                                                                \
   ::tinymlir::detail::Rows<T>{p##Aligned + p##Offset, p##Rows, p##Columns, p##RowStride,          \
                               p##ColumnStride})

} // namespace tinymlir::detail
