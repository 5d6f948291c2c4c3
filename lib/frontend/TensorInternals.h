// Helpers of the op constructors shared by Tensor.cpp, RowKernels.cpp and
// Ufuncs.cpp (internal).
#pragma once

#include "frontend/Graph.h"

#include <optional>
#include <utility>
#include <vector>

namespace tinymlir::detail {

// Tensor.cpp

/// The broadcast of op's two operand shapes; op's error where they do not.
Shape broadcastShapes(Op op, const Shape &a, const Shape &b);
/// A binary elementwise op of a and b, with NumPy's dtypes and broadcast.
Tensor binary(Op op, const Tensor &a, const Tensor &b);
/// `axis` of `shape` in [0, rank); NumPy's AxisError outside.
int64_t normalizeAxis(const char *op, int64_t axis, const Shape &shape);
/// The axes a reduction of `shape` reduces (sorted, non-negative), checked.
std::vector<int64_t> reducedAxes(const char *op, const Axes &axes, const Shape &shape);
/// `shape` without `axes`.
Shape removedAxes(const Shape &shape, const std::vector<int64_t> &axes);
/// `shape` with `axes` of size 1 (keepdims).
Shape keptShape(const Shape &shape, const std::vector<int64_t> &axes);
/// The number of elements along `axes` of `shape`.
int64_t reducedCount(const Shape &shape, const std::vector<int64_t> &axes);

// RowKernels.cpp

/// The running row kernel `op` (Cumsum, Cumprod, Cummax, Cummin) along `axis`
/// (none: of x flattened), in `dtype` where given.
Tensor accumulated(Op op, const Tensor &x, std::optional<int64_t> axis,
                   std::optional<DType> dtype = std::nullopt);
/// max and min (op) of complex numbers, NumPy's lexicographic order.
Tensor complexExtreme(Op op, const Tensor &x, std::optional<int64_t> axis, bool keepdims);
/// The (R, W) table of `table` (rows along axis 0) and int64 positions (1, m).
std::pair<Tensor, Tensor> rowsAndPositions(Op op, const Tensor &table, const Tensor &ids);
/// table[ids] = values (mode 0) or ufunc.at's update along axis 0: a Put row kernel.
Tensor putAlongRows(const Tensor &table, const Tensor &ids, const Tensor &values, int64_t mode);

} // namespace tinymlir::detail
