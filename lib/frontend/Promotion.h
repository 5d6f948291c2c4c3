// NumPy 2's promotion (NEP 50) and conversions of nodes, shared by the
// frontend's op constructors (internal; defined in Promotion.cpp).
#pragma once

#include "frontend/Graph.h"

#include <string>

namespace tinymlir::detail {

/// The complex dtype of a real one's size: complex128 for float64, else complex64.
DType complexOf(DType real);
/// The smallest float type that holds every value of an integer type (or bool).
DType floatFor(DType integer);
/// NumPy 2's promotion of two strong dtypes (promoteTypes, Graph.h).
DType promote(DType a, DType b);
/// Whether the exact integer scalar `n` is in the range of `to`.
bool fitsInteger(const Node &n, DType to);
/// `n` converted to `dtype` for operation `op`: a Cast node, or a re-typed scalar.
NodePtr convert(const NodePtr &n, DType dtype, const char *op = "cast", bool checkRange = true);
/// The dtype two operands of `op` are computed in (NEP 50).
DType operandDType(Op op, const NodePtr &x, const NodePtr &y);
/// What NumPy's integer (and bool) operands of `op` become, or its TypeError.
DType applyIntPolicy(Op op, DType dtype, const std::string &operands);

} // namespace tinymlir::detail
