// NumPy functions made of the core's operations (lib/frontend/Functions.cpp):
// the semantics of each (dtypes, special values, errors) as NumPy 2 has them,
// for C++ callers and for Python's `np.isclose(traced, ...)` alike.
#pragma once

#include <tinymlir/tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace tinymlir {

/// np.isnan, np.isinf, np.isfinite: bool; integers and bools are never nan or
/// infinite; a complex number is nan or infinite where either part is.
Tensor isnan(const Tensor &x);
Tensor isinf(const Tensor &x);
Tensor isfinite(const Tensor &x);
/// np.square: x * x (bools as int8, NumPy's loop).
Tensor square(const Tensor &x);
/// np.heaviside: 0 below 0, 1 above, x2 at 0, nan at nan (float operands).
Tensor heaviside(const Tensor &x1, const Tensor &x2);
/// np.clip(a, lo, hi): one ufunc of the three (their common dtype), the upper
/// bound winning where they cross; an invalid Tensor is no bound. Python ints
/// beyond an integer dtype's range are clipped to it, as NumPy 2's.
Tensor clip(const Tensor &a, const Tensor &lo, const Tensor &hi);
/// np.nan_to_num: nan, +inf and -inf replaced (by default 0 and the dtype's
/// largest and lowest finite values); of a complex array, in each part.
Tensor nanToNum(const Tensor &x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                std::optional<double> neginf = std::nullopt);
/// np.isclose: |a - b| <= atol + rtol |b| where b is finite, or a == b; with
/// equalNan, nan beside nan too. b is made inexact first, as NumPy 2's.
Tensor isclose(const Tensor &a, const Tensor &b, double rtol = 1e-5, double atol = 1e-8,
               bool equalNan = false);
/// np.diagonal: a[..., i, i + offset] of axes axis1 and axis2, as a new last
/// axis after the others (a copy).
Tensor diagonal(const Tensor &a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
/// np.trace: the sum of the diagonal, as np.sum sums it.
Tensor trace(const Tensor &a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
/// np.diag: of a 1-D array the square matrix with it on diagonal k, of a
/// 2-D one its diagonal k.
Tensor diag(const Tensor &v, int64_t k = 0);
/// np.tensordot: the sum over axesA of a paired with axesB of b, as one
/// matrix product of a's other axes (in order) by b's.
Tensor tensordot(const Tensor &a, const Tensor &b, std::vector<int64_t> axesA,
                 std::vector<int64_t> axesB);
/// np.stack: arrays of one shape joined along a new axis.
Tensor stack(const std::vector<Tensor> &arrays, int64_t axis = 0);

/// np.cross of vectors of 2 or 3 components along axisA and axisB (a
/// 2-vector has z = 0; two 2-vectors give the z component alone), broadcast
/// over the other axes, the result's components along axisC.
Tensor cross(const Tensor &a, const Tensor &b, int64_t axisA = -1, int64_t axisB = -1,
             int64_t axisC = -1);
/// np.ptp: max - min (in the array's dtype).
Tensor ptp(const Tensor &a, const Axes &axes = {}, bool keepdims = false);
/// np.inner: the sum over the last axes (a product where either is a scalar).
Tensor inner(const Tensor &a, const Tensor &b);
/// np.vdot: the dot product of the flattened arrays, the first conjugated.
Tensor vdot(const Tensor &a, const Tensor &b);
/// np.gradient along `axis`: central differences inside, one-sided ones of
/// order edgeOrder (1 or 2) at the ends; `spacing` is a scalar distance or the
/// coordinates along the axis (an invalid Tensor: 1). Integers give float64.
Tensor gradient(const Tensor &f, int64_t axis, const Tensor &spacing = Tensor(), int edgeOrder = 1);
/// np.interp (no period): the piecewise linear interpolant of (xp, fp) at x,
/// xp increasing; left and right (invalid: fp[0] and fp[-1]) outside.
Tensor interp(const Tensor &x, const Tensor &xp, const Tensor &fp, const Tensor &left = Tensor(),
              const Tensor &right = Tensor());
/// np.lexsort of 1-D keys: the int64 order sorting by the last key, ties by
/// the one before, and so on (stable).
Tensor lexsort(const std::vector<Tensor> &keys);

/// np.squeeze: `axes` (none: every size-1 axis) removed; NumPy's ValueError
/// for an axis whose size is not 1. np.expand_dims: size-1 axes inserted at
/// `axes` of the result. Both are views in NumPy (Ref: a reshape step).
Tensor squeeze(const Tensor &x, const Axes &axes = {});
Tensor expandDims(const Tensor &x, const std::vector<int64_t> &axes);
/// np.einsum of one or two operands, one letter per axis, each at most once
/// per operand, no ellipsis: sums of the indices seen once, transposes and one
/// (batched) matrix product, as NumPy's BLAS path contracts.
Tensor einsum(const std::string &subscripts, const std::vector<Tensor> &operands);

} // namespace tinymlir
