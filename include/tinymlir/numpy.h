// NumPy functions made of the core's operations (lib/frontend, one file per
// NumPy concept: Math.cpp, Shape.cpp, Statistics.cpp, Einsum.cpp, Pad.cpp...):
// the semantics of each (dtypes, special values, errors) as NumPy 2 has them,
// for C++ callers and for Python's `np.isclose(traced, ...)` alike.
#pragma once

#include <tinymlir/tensor.h>

#include <optional>
#include <variant>
#include <string_view>
#include <string>
#include <vector>

namespace tinymlir {

class Ref;

/// np.isnan, np.isinf, np.isfinite: bool; integers and bools are never nan or
/// infinite; a complex number is nan or infinite where either part is.
Tensor isnan(const Tensor &x);
Tensor isinf(const Tensor &x);
Tensor isfinite(const Tensor &x);
/// A ufunc's result with where= and no out=: `result` where `mask` holds
/// (both broadcast), and 0 elsewhere (NumPy leaves those uninitialized).
Tensor ufuncWhere(const Tensor &result, const Tensor &mask);
/// np.positive: x's values; NumPy has no loop for bool (its TypeError).
Tensor positive(const Tensor &x);
/// np.divmod: (a // b, a % b), NumPy's floor division and remainder.
std::pair<Tensor, Tensor> divmod(const Tensor &a, const Tensor &b);
/// np.angle(z, deg): the argument, in degrees where `deg` (times 180 / pi).
Tensor angle(const Tensor &z, bool deg);
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
/// np.allclose: whether isclose holds everywhere (a traced bool).
Tensor allclose(const Tensor &a, const Tensor &b, double rtol = 1e-5, double atol = 1e-8,
                bool equalNan = false);
/// np.diagonal: a[..., i, i + offset] of axes axis1 and axis2, as a new last
/// axis after the others (a copy).
Tensor diagonal(const Tensor &a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
/// np.trace: the sum of the diagonal, as np.sum sums it (in `dtype` where
/// given, np.sum's dtype=).
Tensor trace(const Tensor &a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1,
             std::optional<DType> dtype = std::nullopt);
/// np.diag: of a 1-D array the square matrix with it on diagonal k, of a
/// 2-D one its diagonal k.
Tensor diag(const Tensor &v, int64_t k = 0);
/// np.tensordot: the sum over axesA of a paired with axesB of b, as one
/// matrix product of a's other axes (in order) by b's.
Tensor tensordot(const Tensor &a, const Tensor &b, std::vector<int64_t> axesA,
                 std::vector<int64_t> axesB);
/// np.tensordot(a, b, n): a's last n axes with b's first n.
Tensor tensordot(const Tensor &a, const Tensor &b, int64_t n);
/// np.dot: a product with a 0-d operand, matmul of 1-D and 2-D ones, else
/// the sum over a's last axis and b's second-to-last (tensordot). Python
/// numbers are arrays of NumPy's default dtypes (not weak).
Tensor dot(const Tensor &a, const Tensor &b);
/// np.outer: a's elements (flattened) times b's, an (a.size, b.size) matrix.
Tensor outer(const Tensor &a, const Tensor &b);
/// ndarray's a ** b: for a Python number b, NumPy's fast scalar powers (2:
/// np.square, of bools int8, but 2.0 of integers a float64 power; of float
/// and complex arrays also 0.5: np.sqrt, -1: np.reciprocal, 0: ones, and of
/// float ones 1: a's values); otherwise np.power.
Tensor arrayPower(const Tensor &a, const Tensor &b);
/// np.stack: arrays of one shape joined along a new axis.
Tensor stack(const std::vector<Tensor> &arrays, int64_t axis = 0);
/// A nested sequence, np.array's argument: an array (Python's numbers as
/// arrays of NumPy's default dtypes), or a list of nested sequences.
struct Nested {
  std::variant<Tensor, std::vector<Nested>> item;
};
/// np.array of a nested sequence: the shape NumPy discovers (the lists'
/// lengths, then the arrays' shape; NumPy's ValueError where they are
/// inhomogeneous), in `dtype` or the leaves' promoted dtype (float64 of none).
Tensor arrayOf(const Nested &nested, std::optional<DType> dtype = std::nullopt);

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
/// np.gradient(f, *spacings, axis=axes): one gradient per axis of `axes`
/// (none: every axis), in their order. `spacings` are NumPy's varargs: none,
/// one scalar for every axis, or one per axis (a scalar or the coordinates);
/// otherwise NumPy's TypeError.
std::vector<Tensor> gradient(const Tensor &f, const std::vector<Tensor> &spacings,
                             const Axes &axes = {}, int edgeOrder = 1);
/// np.interp (no period): the piecewise linear interpolant of (xp, fp) at x,
/// xp increasing; left and right (invalid: fp[0] and fp[-1]) outside.
Tensor interp(const Tensor &x, const Tensor &xp, const Tensor &fp, const Tensor &left = Tensor(),
              const Tensor &right = Tensor());
/// np.lexsort of 1-D keys: the int64 order sorting by the last key, ties by
/// the one before, and so on (stable).
Tensor lexsort(const std::vector<Tensor> &keys);
/// np.lexsort of one array: its rows (along axis 0) are the keys (of a 1-D
/// array, scalars: the order of one element, 0).
Tensor lexsort(const Tensor &keys);
/// np.searchsorted(a, v, side, sorter): `a` read in the order of the int
/// array `sorter` (NumPy's ValueError where their sizes differ).
Tensor searchsorted(const Tensor &a, const Tensor &v, bool right, const Tensor &sorter);
/// np.sort's and np.argsort's kind= and stable= (every sort here is stable,
/// a valid order for each kind): NumPy's ValueError for a kind whose first
/// letter is not q, h, m or s (of either case), or for both given.
void checkSortKind(const std::optional<std::string> &kind, std::optional<bool> stable);
/// np.fliplr (axis 1) and np.flipud (axis 0): NumPy's ValueError for an array
/// of too few axes.
Tensor fliplr(const Tensor &m);
Tensor flipud(const Tensor &m);
/// ufunc.outer's operands: `a` with b's rank of size-1 axes appended, and b,
/// so that the ufunc of the two pairs every element of a with every one of b
/// (a result of shape a.shape + b.shape). Python numbers are arrays of
/// NumPy's default dtypes, as ufunc.outer makes them.
std::pair<Tensor, Tensor> outerOperands(const Tensor &a, const Tensor &b);
/// np.full(shape, value, dtype): `value` (an array broadcast to `shape`, or a
/// weak Python number) in `dtype`, or in the value's dtype (a Python number's
/// default: bool, int64, float64, complex128). Cast as NumPy's copyto with
/// casting='unsafe', which still refuses a Python integer out of the dtype's
/// range (its OverflowError); a negative dimension is NumPy's ValueError.
Tensor full(const Shape &shape, const Tensor &value, std::optional<DType> dtype = std::nullopt);
/// np.full_like(a, value, dtype, shape) (and zeros_like, ones_like,
/// empty_like): full() in a's shape and dtype where none is given (a Python
/// number's as np.asarray makes it).
Tensor fullLike(const Tensor &a, const Tensor &value, std::optional<DType> dtype = std::nullopt,
                std::optional<Shape> shape = std::nullopt);

/// np.squeeze: `axes` (none: every size-1 axis) removed; NumPy's ValueError
/// for an axis whose size is not 1. np.expand_dims: size-1 axes inserted at
/// `axes` of the result. Both are views in NumPy (Ref: a reshape step).
Tensor squeeze(const Tensor &x, const Axes &axes = {});
Tensor expandDims(const Tensor &x, const std::vector<int64_t> &axes);
/// np.einsum: NumPy's subscripts (implicit or explicit output, '...', a
/// letter repeated in an operand for its diagonal, size-1 axes broadcast) and
/// any number of operands: each operand's letters seen nowhere else summed,
/// then the operands contracted left to right, each pair by one (batched)
/// matrix product, as NumPy's BLAS path contracts. A `dtype` casts the
/// operands first, by the `casting` rule (castByRule).
Tensor einsum(const std::string &subscripts, const std::vector<Tensor> &operands,
              std::optional<DType> dtype = {}, std::string_view casting = "safe");

/// np.linspace(start, stop, num, endpoint, dtype, axis) of traced (or any)
/// start and stop: NumPy's arithmetic step by step (y = i * step + start,
/// i / div * delta where a step is 0, the last one `stop`), in the result
/// type of start and stop made inexact; floored for an integer dtype.
/// Returns (samples, step); the step is nan where there is no division.
std::pair<Tensor, Tensor> linspace(const Tensor &start, const Tensor &stop, int64_t num,
                                   bool endpoint = true, std::optional<DType> dtype = std::nullopt,
                                   int64_t axis = 0);
/// np.moveaxis's permutation: the axes `source` moved to `destination`, the
/// others in order (np.transpose of it is NumPy's view).
std::vector<int64_t> moveaxisOrder(int64_t rank, const std::vector<int64_t> &source,
                                   const std::vector<int64_t> &destination);
/// np.column_stack: 1-D arrays as columns, 2-D ones as they are, joined on axis 1.
Tensor columnStack(const std::vector<Tensor> &arrays);
/// np.append: values after arr along `axis` (none: both flattened).
Tensor append(const Tensor &arr, const Tensor &values, std::optional<int64_t> axis);
/// np.trapezoid: the trapezoid rule along `axis`, spacing dx (a scalar or an
/// array that broadcasts, in its own dtype; invalid: 1.0) or coordinates x.
Tensor trapezoid(const Tensor &y, const Tensor &x, const Tensor &dx, int64_t axis);
/// np.digitize: the bin of each value (int64), bins increasing or decreasing
/// (constant bins: NumPy's check of their order, made while tracing).
Tensor digitize(const Tensor &x, const Tensor &bins, bool right = false);
/// np.isin (no kind): whether each element equals one of `test`'s (with
/// invert, whether it equals none).
Tensor isin(const Tensor &element, const Tensor &test, bool invert = false);
/// np.polyval: Horner's rule over the coefficients p (highest power first).
Tensor polyval(const Tensor &p, const Tensor &x);
/// np.vander: the columns x^(n-1) ... x^0 (increasing: x^0 first) of a 1-D x,
/// n = len(x) by default, as NumPy's running products, in x's dtype promoted
/// with int.
Tensor vander(const Tensor &x, std::optional<int64_t> n = std::nullopt, bool increasing = false);
/// np.polyfit(x, y, deg, w=w): NumPy's least squares of the Vandermonde
/// matrix with unit-norm columns (weighted rows where `w` is given), at
/// least deg + 1 points (then NumPy's rcond is lstsq's); coefficients highest
/// power first, a column per column of a 2-D y. NumPy's RankWarning is not
/// given (the rank is known when the kernel runs).
Tensor polyfit(const Tensor &x, const Tensor &y, int64_t deg, const Tensor &w = Tensor());
/// np.select: the first choice whose condition holds, else `otherwise`.
Tensor select(const std::vector<Tensor> &conditions, const std::vector<Tensor> &choices,
              const Tensor &otherwise);
/// np.sinc: sin(pi x) / (pi x), 1 at 0.
Tensor sinc(const Tensor &x);
/// np.array_equal: a traced bool, whether the shapes and values agree (nan
/// equal to nan with equalNan).
Tensor arrayEqual(const Tensor &a, const Tensor &b, bool equalNan = false);

/// np.deg2rad (np.radians) and np.rad2deg (np.degrees): x times pi/180 or
/// 180/pi in the ufunc's float type (integers: float64; bool, int8: float16).
Tensor deg2rad(const Tensor &x);
Tensor rad2deg(const Tensor &x);
/// np.float_power: x ** y in float64 (complex128 with a complex operand).
Tensor floatPower(const Tensor &x, const Tensor &y);
/// np.atleast_1d/2d/3d's shape for x (np.atleast_3d puts a 1-D array in the
/// middle, a 2-D one first): a reshape, a view in NumPy.
Tensor atleast(const Tensor &x, int rank);
/// np.dstack: arrays as at least 3-D, joined along axis 2.
Tensor dstack(const std::vector<Tensor> &arrays);
/// np.hstack: arrays as at least 1-D, joined along axis 0 if the first is
/// 1-D, else along axis 1.
Tensor hstack(const std::vector<Tensor> &arrays);
/// np.vstack: arrays as at least 2-D, joined along axis 0.
Tensor vstack(const std::vector<Tensor> &arrays);
/// np.rollaxis's permutation: `axis` moved to before `start`.
std::vector<int64_t> rollaxisOrder(int64_t rank, int64_t axis, int64_t start);
/// The axes' order that np.swapaxes(a, axis1, axis2) makes, for a's rank.
std::vector<int64_t> swapaxesOrder(int64_t rank, int64_t axis1, int64_t axis2);
/// np.broadcast_arrays: each array broadcast to their common shape.
std::vector<Tensor> broadcastArrays(const std::vector<Tensor> &arrays);
/// np.ediff1d: the differences of the flattened array, with optional values
/// before and after (flattened, cast to its dtype).
Tensor ediff1d(const Tensor &x, const Tensor &toEnd = Tensor(), const Tensor &toBegin = Tensor());

/// np.roll: the elements shifted by `shift` along `axis` (both scalars or 1-D,
/// broadcast together; shifts of one axis add up), out at one end and in at
/// the other. No axis: the flattened array, reshaped back.
Tensor roll(const Tensor &a, const std::vector<int64_t> &shift,
            const std::optional<std::vector<int64_t>> &axis);
/// np.tile: `a` repeated `reps` times along each axis (reps and a's shape
/// padded with leading ones to the same length).
Tensor tile(const Tensor &a, const std::vector<int64_t> &reps);
/// np.resize: the elements of `a` repeated in order to fill `shape` (zeros
/// where `a` is empty).
Tensor resize(const Tensor &a, const Shape &shape);
/// `src` cast to `to` where NumPy's `casting` rule allows it, else NumPy's
/// TypeError (Cannot cast array data ...), from `op`.
Tensor castByRule(const char *op, const Tensor &src, DType to, std::string_view casting);
/// np.concatenate, np.stack, np.hstack, np.vstack and np.dstack (`name`)
/// with NumPy's keywords: the arrays cast to `dtype` by the `casting` rule
/// (else to their result type), then joined; np.concatenate's axis none
/// joins them flattened, in C order.
Tensor joined(std::string_view name, const std::vector<Tensor> &arrays, std::optional<int64_t> axis,
              std::optional<DType> dtype = {}, std::string_view casting = "same_kind");
/// np.copyto(dst, src, casting, where) as dst's new value: src broadcast to
/// dst's shape and cast to its dtype where `where` holds (null: everywhere),
/// after NumPy's casting check ("no", "equiv", "safe", "same_kind",
/// "unsafe").
Tensor copyto(const Tensor &dst, const Tensor &src, std::string_view casting,
              const Tensor &where = Tensor());
/// np.putmask(a, mask, values) as a's new value: values, repeated in order
/// over a's elements (np.resize), where mask holds.
Tensor putmask(const Tensor &a, const Tensor &mask, const Tensor &values);
/// np.put(a, indices, values, mode) as a's new value: a.flat[indices] =
/// values, repeated in order to indices' size, the last of a repeated index
/// winning; `mode` as take's ('raise': NumPy's IndexError out of bounds).
Tensor putFlat(const Tensor &a, const Tensor &indices, const Tensor &values,
               const std::string &mode = "raise");
/// np.place(arr, mask, vals) as arr's new value: the k-th element selected by
/// `mask` (arr's size, in C order) takes vals[k % vals.size] (flattened,
/// cast to arr's dtype). No values: NumPy's ValueError if the mask, which
/// must then be known while tracing, selects anything.
Tensor place(const Tensor &arr, const Tensor &mask, const Tensor &vals);
/// np.fill_diagonal(a, val, wrap) as a's new value: NumPy's
/// a.flat[:end:step] = val, the values repeated in order (np.resize) along
/// the diagonal; a of rank 2, or of equal dimensions.
Tensor fillDiagonal(const Tensor &a, const Tensor &val, bool wrap = false);
/// np.repeat: each element along `axis` repeated (one count for all, or one
/// count per element); no axis: the flattened array.
Tensor repeat(const Tensor &a, const std::vector<int64_t> &repeats, std::optional<int64_t> axis);
/// np.kron: the Kronecker product (bool operands: their logical and).
Tensor kron(const Tensor &a, const Tensor &b);
/// np.meshgrid: coordinate arrays of the 1-D (flattened) inputs, "xy"
/// (Cartesian: the first two axes swapped) or "ij" (matrix) indexing,
/// broadcast to the full grid unless sparse.
std::vector<Tensor> meshgrid(const std::vector<Tensor> &xi, const std::string &indexing = "xy",
                             bool sparse = false);

/// np.convolve and np.correlate of 1-D arrays (mode "full", "same" or
/// "valid"): correlate(a, v) is convolve(a, conj(v[::-1])), with NumPy's
/// "same" window where v is the longer. Bools: and-or, as NumPy's.
Tensor convolve(const Tensor &a, const Tensor &v, const std::string &mode = "full");
Tensor correlate(const Tensor &a, const Tensor &v, const std::string &mode = "valid");

/// np.cumulative_sum and np.cumulative_prod (NumPy 2.1): cumsum (cumprod)
/// along `axis`, which arrays of more than one dimension must give (0-d:
/// one element), with the identity first where `includeInitial`; in
/// `dtype` where given, as cumsum's.
Tensor cumulativeSum(const Tensor &x, std::optional<int64_t> axis, bool includeInitial = false,
                     std::optional<DType> dtype = std::nullopt);
Tensor cumulativeProd(const Tensor &x, std::optional<int64_t> axis, bool includeInitial = false,
                      std::optional<DType> dtype = std::nullopt);

/// np.take: the elements of `a` at `indices` (integers or bools) along `axis`
/// (none: of the flattened array), by mode "raise" (out of bounds: NumPy's
/// IndexError, while tracing for concrete indices, when the kernel runs for
/// traced ones), "wrap" or "clip". (take(table, ids) is the core's.)
Tensor take(const Tensor &a, const Tensor &indices, std::optional<int64_t> axis,
            const std::string &mode = "raise");
/// np.delete(arr, obj, axis): a copy without the positions `obj` names, known
/// while tracing (they set the shape): an int or an int array (negative ones
/// from the end, repeats as one; out of range NumPy's IndexError), or a bool
/// array of the axis' length (else NumPy's ValueError). No axis: of arr
/// flattened.
Tensor deleteItems(const Tensor &arr, const Tensor &obj, std::optional<int64_t> axis);
/// np.insert(arr, obj, values, axis) (none: of the flattened array), at
/// positions `obj` known while tracing: one position takes values as one
/// block (an int obj moves values' first axis to `axis`), several take one
/// slice each, before the positions of arr, as NumPy's; values in arr's
/// dtype, NumPy's errors.
Tensor insertItems(const Tensor &arr, const Tensor &obj, const Tensor &values,
                   std::optional<int64_t> axis);
/// np.take_along_axis: arr at `indices` along `axis`, the other axes' own
/// positions (indices broadcast against arr but along the axis); no axis: the
/// flattened array, 1-D indices.
Tensor takeAlongAxis(const Tensor &arr, const Tensor &indices, std::optional<int64_t> axis);
/// np.put_along_axis: `values` written into `arr` where take_along_axis reads
/// (a repeated position takes the last value, as NumPy's). With no axis the
/// array must be contiguous (NumPy writes through arr.flat).
void putAlongAxis(Ref &arr, const Tensor &indices, const Tensor &values,
                  std::optional<int64_t> axis);

// NumPy's nan-ignoring reductions (numpy/lib/_nanfunctions_impl.py). Float and
// complex operands have their nans replaced first (the others reduce as the
// plain functions do); `dtype`, where given, is the accumulator's.
/// np.nansum and np.nanprod: nans counted as 0 (1).
Tensor nansum(const Tensor &a, const Axes &axes = {}, bool keepdims = false,
              std::optional<DType> dtype = std::nullopt);
Tensor nanprod(const Tensor &a, const Axes &axes = {}, bool keepdims = false,
               std::optional<DType> dtype = std::nullopt);
/// np.nanmax and np.nanmin (real operands): nan where a slice holds nothing
/// else (NumPy also warns, which a compiled kernel cannot).
Tensor nanmax(const Tensor &a, const Axes &axes = {}, bool keepdims = false);
Tensor nanmin(const Tensor &a, const Axes &axes = {}, bool keepdims = false);
/// np.nanargmax and np.nanargmin: the index of the extreme that is not nan;
/// a slice of nans alone is NumPy's ValueError "All-NaN slice encountered",
/// raised when the kernel runs.
Tensor nanargmax(const Tensor &a, std::optional<int64_t> axis = std::nullopt,
                 bool keepdims = false);
Tensor nanargmin(const Tensor &a, std::optional<int64_t> axis = std::nullopt,
                 bool keepdims = false);
/// The keyword arguments of NumPy's reductions (np.sum(a, axis, dtype, out,
/// keepdims, initial, where), np.var's ddof), each optional.
struct Reduction {
  /// The operand cast to it first: the accumulator of sum and prod; a float
  /// dtype for mean, var and std.
  std::optional<DType> dtype;
  /// The elements that take part: a mask that broadcasts to the operand.
  Tensor where{};
  /// A scalar taking part in every result (sum, prod, max, min), cast to the
  /// result's dtype; max and min need one with `where`, and an empty max or
  /// min is its value.
  Tensor initial{};
  /// Delta degrees of freedom (var, std).
  double ddof = 0;
  /// NumPy 2's alias of ddof: where given, ddof must be 0 (NumPy's
  /// ValueError) and this is the ddof.
  std::optional<double> correction{};
};
/// NumPy's reduction `name` (sum, prod, max, min, any, all, mean, var, std,
/// and the nan-functions nansum, nanprod, nanmax, nanmin, nanmean, nanvar,
/// nanstd) over `axes`, with NumPy's keyword arguments. A mean or variance
/// over no element is nan, as NumPy's (which also warns). Any other name is
/// a binary ufunc's (tensor.h's reduceUfunc: subtract, bitwise_and, ...).
Tensor reduce(std::string_view name, const Tensor &a, const Axes &axes = {}, bool keepdims = false,
              const Reduction &how = {});
/// The operands of ufunc `ufunc` called with dtype= (its loop's dtype): each
/// cast to `dtype` where the `casting` rule allows, else NumPy's
/// UFuncTypeError (a TypeError) naming the input. Python numbers (weak
/// scalars) are checked by kind (bool, integer, float, complex) and stay weak
/// where their kind fits, so that NumPy's value checks still apply.
std::vector<Tensor> ufuncOperands(const std::string &ufunc, const std::vector<Tensor> &operands,
                                  DType dtype, std::string_view casting = "same_kind");
/// np.count_nonzero: the int64 count of nonzero elements over `axes`.
Tensor countNonzero(const Tensor &a, const Axes &axes = {}, bool keepdims = false);
/// A reduction's out=: `result` written into `out`, whose shape must be the
/// result's (NumPy's ValueError names the reduction `name`), cast as NumPy's
/// reductions cast their out= (unsafe: 2.7 into an int array is 2).
void reduceInto(Ref &out, const Tensor &result, std::string_view name);
/// np.dot's out=: NumPy's checks (out's dtype and rank the result's, C
/// contiguous, then its shape), then the result written into it.
void dotInto(Ref &out, const Tensor &result);
/// np.partition and np.argpartition (`indices`): a full stable sort (or
/// argsort) along `axis` (none: of the flattened array), a valid partition for
/// every kth; kth checked as NumPy's (an integer, in range).
Tensor partition(const Tensor &x, const std::vector<int64_t> &kth, std::optional<int64_t> axis,
                 bool indices);
/// np.nanmean: the sum of the numbers over their count (nan for none).
Tensor nanmean(const Tensor &a, const Axes &axes = {}, bool keepdims = false,
               std::optional<DType> dtype = std::nullopt);
/// np.nanvar and np.nanstd (real operands): the variance of the numbers with
/// `ddof`, nan where they are at most ddof.
Tensor nanvar(const Tensor &a, const Axes &axes = {}, bool keepdims = false, double ddof = 0,
              std::optional<DType> dtype = std::nullopt);
Tensor nanstd(const Tensor &a, const Axes &axes = {}, bool keepdims = false, double ddof = 0,
              std::optional<DType> dtype = std::nullopt);

/// np.round (np.around) to `decimals`, as NumPy's PyArray_Round: rint(a *
/// 10^d) / 10^d for d > 0, rint(a / 10^-d) * 10^-d for d < 0 (10^d a weak
/// float, so float32 stays float32); integers unchanged for d >= 0, else
/// rounded in float64 and cast back; bools rint as float16 for d = 0 and are
/// NumPy's TypeError otherwise; complex numbers for d = 0 only.
Tensor round(const Tensor &a, int64_t decimals = 0);
/// np.diff: the n-th differences along `axis` (!= for bools, as NumPy's).
/// `prepend` and `append` (invalid: none) are joined to `a` along `axis`
/// first, as np.asarray makes them, a scalar broadcast to one slice.
Tensor diff(const Tensor &a, int64_t n = 1, int64_t axis = -1, const Tensor &prepend = {},
            const Tensor &append = {});
/// np.linalg.matrix_power: NumPy's repeated squaring (of the inverse for
/// n < 0); the identity for n = 0. Square matrices in the last two axes.
Tensor matrixPower(const Tensor &a, int64_t n);

/// np.average: the mean along `axes` (all: {}), or with `weights` (of a's
/// shape, or of a's shape along `axes`, in their order) sum(a w) / sum(w) in
/// NumPy's result dtype (float64 at least for integers and bools). Returns
/// (average, sum of weights broadcast to the average's shape: `returned`).
/// Concrete weights are summed while tracing: NumPy's ZeroDivisionError for a
/// zero sum; traced ones in the kernel (a zero sum gives inf or nan).
std::pair<Tensor, Tensor> average(const Tensor &a, const Axes &axes = {},
                                  const Tensor &weights = Tensor(), bool keepdims = false);
/// np.cov of the rows (rowvar) or columns of m, with y's stacked below: real
/// operands of at most 2 dimensions, frequency and analytic weights (concrete
/// ones checked as NumPy does: integral, non-negative), ddof (none: 1, or 0
/// with bias), in `dtype` (none: at least float64). NumPy's warning for
/// degrees of freedom <= 0 is given where they are known while tracing; else
/// the result is inf or nan.
Tensor cov(const Tensor &m, const Tensor &y = Tensor(), bool rowvar = true, bool bias = false,
           std::optional<double> ddof = std::nullopt, const Tensor &fweights = Tensor(),
           const Tensor &aweights = Tensor(), std::optional<DType> dtype = std::nullopt);
/// np.corrcoef: cov normalized by the standard deviations, clipped to [-1, 1].
Tensor corrcoef(const Tensor &x, const Tensor &y = Tensor(), bool rowvar = true,
                std::optional<DType> dtype = std::nullopt);

/// np.linalg.norm's `ord`: none, a number (inf, -inf and 0 too), or a name
/// ("fro", "nuc"; any other is NumPy's ValueError).
struct NormOrder {
  std::optional<double> p;
  std::string name;
};
namespace la {
/// np.linalg.norm: of vectors over one axis (or all of a 1-D array; with no
/// ord and no axes, the 2-norm of all of x), of matrices over two axes
/// (none/"fro", "nuc", 1, -1, 2, -2, inf, -inf; 2, -2 and "nuc" from the
/// singular values); integers and bools in float64. Axes: none, one or two.
Tensor norm(const Tensor &x, const NormOrder &ord = {}, const Axes &axes = {},
            bool keepdims = false);
/// np.linalg.pinv: 1/s above rcond * max(s), from the SVD. NumPy's default
/// rcond is 1e-15; none (NumPy's rtol=None) is max(m, n) eps.
Tensor pinv(const Tensor &a, std::optional<double> rcond = 1e-15);
/// The same with NumPy's arguments: rcond (none: not given) and rtol, given
/// or not (`rtolGiven`: then its value, none for max(m, n) eps). Both given
/// is NumPy's ValueError; neither, the 1e-15 default.
Tensor pinv(const Tensor &a, std::optional<double> rcond, bool rtolGiven,
            std::optional<double> rtol);
/// np.linalg.matrix_rank: the singular values above `tol` (per matrix; none:
/// max(s) times rtol, default max(m, n) eps); of a vector, whether any
/// element is nonzero.
Tensor matrixRank(const Tensor &a, const Tensor &tol = Tensor(),
                  std::optional<double> rtol = std::nullopt);
/// np.linalg.cond: the ratio of the extreme singular values (ord none, 2,
/// -2), else norm(x) norm(inv(x)).
Tensor cond(const Tensor &x, const NormOrder &ord = {});
/// np.linalg.vector_norm: the `axes` (none: all) merged into one, in their
/// order, then norm's vector norm over it; size-1 axes where keepdims.
Tensor vectorNorm(const Tensor &x, const std::optional<std::vector<int64_t>> &axes,
                  bool keepdims = false, const NormOrder &ord = {2.0, ""});
/// np.linalg.multi_dot: the products of a chain of matrices in NumPy's order
/// (the cheapest: its formula for three, its matrix-chain order beyond); a
/// first 1-D array is a row, a last one a column, as NumPy's.
Tensor multiDot(const std::vector<Tensor> &arrays);
} // namespace la
/// NumPy 2's gufuncs np.vecdot (sum(conj(a) * b) over `axis`), np.matvec
/// ((..., m, n) by (..., n)) and np.vecmat (conj (..., n) by (..., n, m)):
/// the other axes broadcast, sums in the product's dtype; NumPy's ValueError
/// for core sizes that differ.
Tensor vecdot(const Tensor &a, const Tensor &b, int64_t axis = -1);
Tensor matvec(const Tensor &m, const Tensor &v);
Tensor vecmat(const Tensor &v, const Tensor &m);
/// np.unravel_index(indices, shape, order 'C' or 'F'): each axis' int64
/// positions; np.ravel_multi_index(multi_index, dims, mode, order): the flat
/// positions (mode 'raise', 'wrap' or 'clip', one for all axes). Integer
/// indices only (NumPy's TypeError); one out of range is NumPy's ValueError,
/// when the kernel runs for traced ones.
std::vector<Tensor> unravelIndex(const Tensor &indices, const Shape &shape, char order = 'C');
Tensor ravelMultiIndex(const std::vector<Tensor> &multiIndex, const Shape &dims,
                       const std::string &mode = "raise", char order = 'C');
/// np.nancumsum and np.nancumprod: nans counted as 0 (1), then cumsum's.
Tensor nancumsum(const Tensor &x, std::optional<int64_t> axis = std::nullopt,
                 std::optional<DType> dtype = std::nullopt);
Tensor nancumprod(const Tensor &x, std::optional<int64_t> axis = std::nullopt,
                  std::optional<DType> dtype = std::nullopt);

// Order statistics: the sorted values of the reduced axes (axes: {} for all).
/// np.pad's keyword arguments, each given or not. Values broadcast to
/// (rank, 2) pairs as NumPy's _as_pairs does: one value for every side, two
/// for (before, after) of every axis, else one pair per axis.
struct PadOptions {
  std::optional<Tensor> constantValues; ///< mode constant (traced or not)
  std::optional<Tensor> endValues;      ///< mode linear_ramp
  /// maximum, mean, median, minimum: how many values each side's statistic
  /// takes (rounded half to even, as NumPy's); given as None: all of them.
  bool statLengthGiven = false;
  std::optional<std::vector<double>> statLength;
  Shape statLengthShape;
  std::optional<std::string> reflectType; ///< reflect, symmetric: "even" or "odd"
  /// Other keywords given (Python's), refused as NumPy refuses them.
  std::vector<std::string> otherKeywords;
};
/// np.pad: `a` widened by widths (integers of widthShape, broadcast to
/// (rank, 2) pairs as NumPy's) in `mode`: constant, edge, linear_ramp,
/// maximum, mean, median, minimum, reflect, symmetric, wrap, empty (zeros).
/// Axes are padded in order, each from the array padded along the axes
/// before it, as NumPy's; NumPy's errors, and its legacy singleton axes.
/// np.pad's pad_width given as a dict, {axis: (before, after)}: the widths of
/// every axis in pairs, (0, 0) for an axis not named (a negative one counts
/// from the end; one out of range is Python's IndexError, as NumPy's list).
std::vector<int64_t>
padWidths(const std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> &byAxis, int64_t rank);
Tensor pad(const Tensor &a, const std::vector<int64_t> &widths, const Shape &widthShape,
           const std::string &mode = "constant", const PadOptions &options = {});
/// np.histogram's arguments: a number of equal bins (between `range`, or the
/// data's min and max) or given edges (traced or not).
struct HistogramOptions {
  int64_t bins = 10;
  std::optional<Tensor> edges;
  /// Concrete scalars: Python numbers (weak) or NumPy's (strong, their dtype
  /// promoted with the data's, as NumPy's result_type, gives the edges').
  std::optional<std::pair<Tensor, Tensor>> range;
  bool density = false;
  Tensor weights; ///< invalid: none
};
/// np.histogram: (counts, edges). Counts are int64 (the weights' dtype with
/// weights, float64 with density) and exact: edges[i] <= x < edges[i+1], the
/// last bin closed, as NumPy's. Equal bins' edges are NumPy's linspace bit
/// for bit, each value's bin found from its offset and corrected against the
/// edges (NumPy's way); given edges by binary search; integer weights by
/// comparing each value with every edge. Bool data is NumPy's uint8, with its
/// RuntimeWarning.
std::pair<Tensor, Tensor> histogram(const Tensor &a, const HistogramOptions &options = {});
/// np.median: the middle value, or the mean of the two middle ones; nan where
/// the slice holds a nan. Integers and bools in float64.
Tensor median(const Tensor &a, const Axes &axes = {}, bool keepdims = false);
/// np.nanmedian: the median of each slice's values that are not nan (nan for
/// a slice of nans only); of integers, median's.
Tensor nanmedian(const Tensor &a, const Axes &axes = {}, bool keepdims = false);
/// np.quantile at each q of `qShape` (in [0, 1], else NumPy's ValueError)
/// by NumPy's `method` (its 13 names; 'linear': the sorted values at
/// q (n - 1)): a discrete method takes an element, the others interpolate
/// as NumPy's _lerp (from the upper end for fractions >= 0.5); nan where the
/// slice holds a nan. The result has q's shape, then the reduced shape.
/// `qDType` is q's dtype (none: float64), `weakQ` NumPy's weak_q (q a Python
/// int or float). As NumPy's: an integer q (0 or 1) takes the elements, in
/// a's dtype; a float q interpolates in a's inexact dtype where weak, else
/// in a's dtype promoted with q's. A complex q is NumPy's TypeError.
Tensor quantile(const Tensor &a, const std::vector<double> &q, const Shape &qShape,
                const Axes &axes = {}, bool keepdims = false,
                std::optional<DType> qDType = std::nullopt, bool weakQ = false,
                bool ignoreNans = false, std::string_view method = "linear");
/// `ignoreNans`: np.nanquantile and np.nanpercentile, of each slice's values
/// that are not nan (their count known when the kernel runs), 'linear' only.
/// np.percentile: quantile at q / 100 (q in [0, 100]): NumPy's true_divide,
/// float64 for an integer q, else in q's dtype.
Tensor percentile(const Tensor &a, const std::vector<double> &q, const Shape &qShape,
                  const Axes &axes = {}, bool keepdims = false,
                  std::optional<DType> qDType = std::nullopt, bool weakQ = false,
                  bool ignoreNans = false, std::string_view method = "linear");

} // namespace tinymlir
