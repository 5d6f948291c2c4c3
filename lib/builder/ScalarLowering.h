// The scalar lowerings: how an elementwise op of ops.def computes one element
// (arith, math and complex ops), the body of its linalg.generic or SSA scalar.
#pragma once

#include "frontend/Graph.h"

#include <mlir/IR/Builders.h>
#include <mlir/IR/Location.h>
#include <mlir/IR/Value.h>

namespace tinymlir::detail {

/// The MLIR element type of `dtype`.
mlir::Type elementType(mlir::Builder &b, DType dtype);

/// A constant of `dtype`: a complex one's parts are (value, imag). Integers
/// given as doubles (the lowerings' own constants; a Scalar node's exact
/// value goes through scalarValue) saturate, never UB; uint64 values up to
/// 2^64 keep their bits.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, DType dtype, double value,
                           double imag = 0);

/// An integer constant of the width of `type` (all ones for -1).
mlir::Value intConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, int64_t v);

/// The body of an elementwise op: its ops.def row's lowering for the
/// operands' type (float, or int32 and bool).
mlir::Value scalarOp(mlir::OpBuilder &b, mlir::Location loc, const Node &n,
                     mlir::ArrayRef<mlir::Value> x, bool widened = false);

} // namespace tinymlir::detail
