"""NumPy's reductions with their keywords (numpy.h's reduce): where=, initial=,
out=, dtype=, ddof= and correction= of np.sum, prod, max, min, any, all,
mean, var and std, their ndarray methods and ufunc.reduce; np.count_nonzero.

Each case runs one source under NumPy and under tinymlir.jit on copies of the
same arguments (test_functions.same) and compares the results and every
argument afterwards. Selections, integers, bools, max and min are exact; sums
are within n·eps·Σ|x| (any order of n additions); means add one rounding of
the division; variances are bounded below (`var_bound`).
"""

import warnings

import numpy as np
import pytest
from test_functions import eps, same, sum_bound

import tinymlir
from tinymlir import jit

REALS = (np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_)


def operand(dtype, shape=(4, 6), seed=1):
    rng = np.random.default_rng(seed)
    if dtype is np.bool_:
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        lo = 0 if np.dtype(dtype).kind == "u" else -9
        return rng.integers(lo, 10, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def mask(shape=(4, 6), seed=2):
    m = np.random.default_rng(seed).random(shape) > 0.4
    m[1] = False  # a row with nothing selected
    return m


def mean_bound(x, m, axis):
    """A mean of the selected elements: their sum's bound over the count, and
    one rounding of the quotient."""
    x64 = np.abs(np.where(m, x, 0).astype(np.float64))
    e = eps(x.dtype) if x.dtype.kind == "f" else eps(np.float64)
    n = x.shape[axis] if axis is not None else x.size
    count = np.maximum(np.sum(m, axis=axis), 1)
    return (n + 1) * e * np.sum(x64, axis=axis) / count


def var_bound(x, m, axis, ddof):
    """A variance of the selected elements: each deviation d = x - mean is
    computed with error <= eps(|x| + |mean|) beside the mean's own error
    (which adds only its square: the deviations sum to 0), its square with
    <= 3 eps(|x| + |mean|)^2, and n more roundings in the sum; then one in the
    division by count - ddof."""
    e = eps(x.dtype) if x.dtype.kind == "f" else eps(np.float64)
    x64 = np.where(m, x, 0).astype(np.float64)
    n = x.shape[axis] if axis is not None else x.size
    count = np.sum(m, axis=axis, keepdims=True)
    mu = np.abs(np.sum(x64, axis=axis, keepdims=True) / np.maximum(count, 1))
    scale = np.sum(np.where(m, (np.abs(x64) + mu) ** 2, 0), axis=axis)
    dof = np.maximum(np.sum(m, axis=axis) - ddof, 1)
    return (n + 5) * e * scale / dof


@pytest.mark.parametrize("dtype", REALS)
def test_sum_prod_any_all_with_where_and_initial_as_numpys(dtype):
    x, m = operand(dtype), mask()
    bound = sum_bound(np.where(m, x, 0), axis=1) if np.dtype(dtype).kind == "f" else None
    same(lambda a, w: np.sum(a, axis=1, where=w), x, m, bound=bound)
    plus3 = None if bound is None else bound + 4 * eps(dtype)  # and the initial's addition
    same(lambda a, w: a.sum(1, None, None, False, 3, w), x, m, bound=plus3)
    same(lambda a, w: np.any(a, axis=0, where=w), x, m)
    same(lambda a, w: a.all(axis=1, where=w, keepdims=True), x, m)
    same(lambda a: np.sum(a, initial=7), x, bound=None if bound is None else np.sum(bound) + 8)
    if np.dtype(dtype).kind in "iub":
        small = x[:, :3] % 3 if dtype is not np.bool_ else x[:, :3]
        same(lambda a, w: np.prod(a, axis=1, where=w[:, :3], initial=2), small, m)
        same(lambda a: np.sum(a, initial=0.75), x)  # initial cast to the int64 sum: 0


@pytest.mark.parametrize("dtype", REALS)
def test_max_min_with_where_and_initial_as_numpys(dtype):
    x, m = operand(dtype), mask()
    lo = False if dtype is np.bool_ else (0 if np.dtype(dtype).kind == "u" else -2)
    same(lambda a, w: np.max(a, axis=1, where=w, initial=lo), x, m)
    same(lambda a, w: a.min(0, None, True, 5 if dtype is not np.bool_ else True, w), x, m)
    same(lambda a: np.minimum.reduce(a, axis=None, initial=1), x)
    same(lambda a: (np.max(a, initial=None), np.minimum.reduce(a, 1, initial=None)), x)  # none
    mid = True if dtype is np.bool_ else (5 if np.dtype(dtype).kind in "iu" else 0.5)
    same(lambda a: np.max(a, axis=0, initial=mid), x)  # initial above some columns' max
    same(lambda a: np.max(a[:0], axis=0, initial=1), x)  # empty: initial's
    same(lambda a, w: np.maximum.reduce(a, 1, where=w, initial=lo), x, m)


def test_max_keeps_nan_and_initial_as_numpys():
    x = operand(np.float64)
    x[0, 2] = np.nan
    m = mask()
    m[0, 2] = True
    same(lambda a, w: np.max(a, axis=1, where=w, initial=-np.inf), x, m)
    same(lambda a: np.min(a, initial=-10.0), x)


@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.float16, np.int32, np.bool_))
@pytest.mark.parametrize("axis", (0, 1, None))
def test_mean_var_std_with_where_as_numpys(dtype, axis):
    x, m = operand(dtype), mask()
    same(lambda a, w: np.mean(a, axis=axis, where=w), x, m, bound=mean_bound(x, m, axis))
    for ddof in (0, 1):
        b = var_bound(x, m, axis, ddof)
        same(lambda a, w: np.var(a, axis=axis, where=w, ddof=ddof), x, m, bound=b)
        same(lambda a, w: a.std(axis, None, None, ddof, where=w), x, m, bound=np.sqrt(b))
    b = var_bound(x, np.ones_like(m), axis, 1)
    same(lambda a: np.var(a, axis=axis, correction=1), x, bound=b)


@pytest.mark.parametrize("dtype", (np.float32, np.float64, np.float16, np.int32))
@pytest.mark.parametrize("axis", (0, 1, None))
def test_nan_functions_with_where_initial_and_out_as_numpys(dtype, axis):
    # np.nansum and its kin take np.sum's keywords: their nans are replaced
    # by the identity (sum, prod), skipped (max, min: fmax, fmin) or not
    # counted (mean, var, std), then the selection is reduced as np.sum's.
    x, m = operand(dtype), mask()
    if x.dtype.kind == "f":
        x[0, 1] = x[3, 4] = np.nan
        x[2] = np.nan  # a row of nans alone
    numbers = ~np.isnan(x.astype(np.float64))
    clean, kept = np.where(numbers, x, 0), m & numbers
    sb = sum_bound(np.where(kept, clean, 0), axis=axis) if x.dtype.kind == "f" else None
    same(lambda a, w: np.nansum(a, axis=axis, where=w), x, m, bound=sb)
    plus = None if sb is None else sb + 4 * eps(dtype)  # and the initial's addition
    same(lambda a, w: np.nansum(a, axis, None, None, False, 2, w), x, m, bound=plus)
    small = np.where(numbers, np.abs(x) % 1.5 + 0.5, x).astype(dtype)  # products near 1
    n = x.size if axis is None else x.shape[axis]
    pb = None if sb is None else (n + 1) * eps(dtype) * np.abs(np.nanprod(small, axis=axis))
    same(lambda a, w: np.nanprod(a, axis=axis, where=w), small, m, bound=pb)
    same(lambda a, w: np.nanmax(a, axis=axis, where=w, initial=-5), x, m)
    same(lambda a: np.nanmin(a, axis=axis, initial=1), x)
    same(lambda a, w: np.nanmean(a, axis=axis, where=w), x, m, bound=mean_bound(clean, kept, axis))
    for ddof in (0, 1):
        b = var_bound(clean, kept, axis, ddof)
        same(lambda a, w: np.nanvar(a, axis=axis, where=w, ddof=ddof), x, m, bound=b)
        same(lambda a, w: np.nanstd(a, axis, None, None, ddof, where=w), x, m, bound=np.sqrt(b))

    def into(a, w):
        out = np.zeros(np.sum(a, axis=axis).shape, np.float64)
        np.nanmean(a, axis=axis, where=w, out=out)
        return out

    same(into, x, m, bound=mean_bound(clean, kept, axis))
    with pytest.raises(ValueError, match="'fmax' does not have an identity"):
        jit(lambda a, w: np.nanmax(a, where=w))(x, m)


def test_complex_mean_and_var_with_where_as_numpys():
    x, m = operand(np.complex128), mask()
    xr = np.abs(x)
    same(lambda a, w: np.mean(a, axis=1, where=w), x, m, bound=2 * mean_bound(xr, m, 1))
    same(lambda a, w: np.var(a, axis=1, where=w), x, m, bound=2 * var_bound(xr, m, 1, 0))


def test_out_and_dtype_of_reductions_as_numpys():
    x, m = operand(np.float64), mask()

    def into(a, w):
        s = np.zeros(6)
        np.sum(a, axis=0, out=s)  # NumPy returns out, as here
        c = np.zeros(4, np.int64)
        a.max(axis=1, out=c, initial=0.0, where=w)  # cast unsafe into int64
        v = np.empty((1, 6), np.float32)
        r = np.mean(a, 0, None, v, True)
        return s, c, v, r is v

    same(into, x, m, bound=(sum_bound(x, axis=0), None, 2 * np.abs(x).max(), None))
    i8 = operand(np.int8) * 15
    same(lambda a: np.sum(a, axis=1, dtype=np.int8), i8)  # wraps in int8, as NumPy's
    same(lambda a: a.prod(dtype=np.uint8), i8[:2])
    same(lambda a: np.add.reduce(a, 0, np.int16, None, True), i8)
    f = operand(np.float32)
    same(
        lambda a: np.mean(a, axis=1, dtype=np.float64),
        f,
        bound=mean_bound(f.astype(float), np.ones_like(f, bool), 1),
    )


@pytest.mark.parametrize("dtype", REALS + (np.complex64,))
def test_count_nonzero_as_numpys(dtype):
    x = operand(dtype) * (operand(np.bool_, seed=5) if dtype is not np.bool_ else True)
    same(lambda a: np.count_nonzero(a), x)
    same(lambda a: np.count_nonzero(a, axis=0, keepdims=True), x)
    same(lambda a: np.count_nonzero(a, axis=(0, 1)), x)


def test_reduction_mistakes_as_numpys():
    x, m = operand(np.float64), mask()
    cases = [
        (lambda a, w: np.max(a, where=w), ValueError, "'maximum' does not have an identity"),
        (lambda a, w: np.min(a, axis=1, where=w), ValueError, "'minimum' does not have"),
        (lambda a, w: np.sum(a, initial=np.ones(2)), ValueError, "with a sequence"),
        (lambda a, w: np.sum(a, axis=0, out=np.zeros((1, 6))), ValueError, "wrong number of dim"),
        (lambda a, w: np.sum(a, axis=0, out=np.zeros(5)), ValueError, r"\(5,\)"),
        (lambda a, w: np.var(a, ddof=1, correction=1), ValueError, "simultaneously"),
        (lambda a, w: np.sum(a, where=w[:2]), ValueError, "broadcast"),
        (lambda a, w: np.sum(a, wrong=1), TypeError, "wrong"),
    ]
    for fn, error, text in cases:
        with pytest.raises(error, match=text):
            fn(x.copy(), m)
        with pytest.raises(error, match=text):
            jit(fn)(x.copy(), m)


def test_nan_order_statistics_as_numpys():
    """np.nanmedian, np.nanquantile and np.nanpercentile (method 'linear'):
    NumPy's of each slice's numbers (their count known when the kernel
    runs), over axes, keepdims, q arrays and float32; a slice of nans only
    is nan. Selections are exact; interpolations are NumPy's lerp step by
    step, and the mean of two middle values one rounding: both exact too.
    np.percentile and np.quantile of float32 with a Python q likewise."""
    r = np.random.default_rng(31)
    x = r.standard_normal((4, 7))
    x[r.random((4, 7)) < 0.3] = np.nan
    x[2] = np.nan  # a slice of nans only
    x32 = x.astype(np.float32)
    cases = [
        (lambda a: np.nanmedian(a), x),
        (lambda a: np.nanmedian(a, axis=1), x),
        (lambda a: np.nanmedian(a, axis=0, keepdims=True), x32),
        (lambda a: np.nanquantile(a, 0.3, axis=1), x),
        (lambda a: np.nanquantile(a, [0.0, 0.25, 0.5, 1.0], axis=1, keepdims=True), x),
        (lambda a: np.nanpercentile(a, 90, axis=0), x32),
        (lambda a: np.nanpercentile(a, np.float32(37.5)), x32),
        (lambda a: np.nanquantile(a, 1, axis=1), x),  # an integer q takes an element
        (lambda a: np.nanmedian(a, axis=1), np.arange(12).reshape(3, 4)),  # ints: median's
        # NumPy's lerp takes 1 - t in q's dtype (float64 for a Python q), then float32
        (lambda a: np.percentile(a, 90, axis=0), np.nan_to_num(x32)),
        (lambda a: np.quantile(a, 0.63, axis=1), np.nan_to_num(x32)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # All-NaN slice encountered
        for fn, a in cases:
            got, want = jit(fn)(a), fn(a)
            assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


QUANTILE_METHODS = (
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
)


@pytest.mark.parametrize("method", QUANTILE_METHODS)
def test_every_quantile_method_as_numpys(method):
    """np.quantile and np.percentile by each of NumPy's 13 methods: its
    virtual index, rounded in q's dtype step by step, its neighbours beyond
    the ends, its gamma, and its lerp. A discrete method takes an element
    in the data's dtype; an integer q array keeps integer gammas where the
    method's formula does. Every result is bit for bit, nans and infinities
    too."""
    r = np.random.default_rng(41)
    arrays = [
        r.random(7),
        r.random((5, 4)).astype(np.float32),
        r.integers(0, 50, 6),
        np.array([1.0, np.inf, 3.0, 4.0]),
        np.array([1.0, np.nan, 2.0]),
    ]
    qs = [0.0, 0.01, 0.25, 0.3, 0.5, 0.66, 0.999, 1.0, np.float32(0.3), [0.1, 0.5], 1]
    qs += [np.array([0.2, 0.7], np.float32), np.array([0, 1])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # inf - inf in NumPy's lerp
        for a in arrays:
            for q in qs:
                for axis in (None, 0):
                    fn = lambda a: np.quantile(a, q, axis=axis, method=method)  # noqa: E731
                    got, want = jit(fn)(a), fn(a)
                    assert type(got) is type(want) and got.dtype == want.dtype, (a, q, axis)
                    np.testing.assert_array_equal(got, want)
                p = np.asarray(q) * 100 if isinstance(q, list) else q * 100
                fn = lambda a: np.percentile(a, p, axis=0, method=method)  # noqa: E731
                got, want = jit(fn)(a), fn(a)
                assert type(got) is type(want) and got.dtype == want.dtype, (a, p)
                np.testing.assert_array_equal(got, want)


def test_quantile_method_errors_as_numpys():
    """An unknown method is NumPy's ValueError with its list; nanquantile
    of floats by a method other than 'linear' is a TracingError."""
    x = np.arange(5.0)
    with pytest.raises(ValueError, match="'foo' is not a valid method. Use one of: dict_keys"):
        jit(lambda a: np.quantile(a, 0.5, method="foo"))(x)
    with pytest.raises(tinymlir.TracingError, match="method='linear' only"):
        jit(lambda a: np.nanquantile(a, 0.5, method="lower"))(x)
    f = lambda a: np.nanpercentile(a, 50, method="lower")  # noqa: E731
    assert jit(f)(np.arange(5)) == f(np.arange(5))  # integers: quantile's


# --- Fusion: a reduction computes its elementwise operand in its own loop --------


@pytest.mark.parametrize(
    "fn, dtype",
    [
        (lambda x: (x * 2.0 - 1.0).sum(axis=1), np.float32),
        (lambda x: (x * x).mean(axis=0), np.float64),
        (lambda x: x.sum(), np.uint8),  # widened to uint64, then summed
        (lambda x: (x > 100).sum(axis=1), np.uint8),  # bools counted as int64
        (lambda x: np.abs(x - 3).max(axis=1), np.int16),
    ],
)
def test_reductions_fuse_with_their_elementwise_operand(fn, dtype, rng):
    # The elementwise operand is computed inside the reduction's loop: a
    # generic, no linalg.reduce and no temporary of the operand's shape.
    x = (rng.random((37, 53)) * 200).astype(dtype)
    got, want = jit(fn)(x), fn(x)
    assert got.dtype == want.dtype
    k = x.shape[0] * x.shape[1]
    if want.dtype.kind == "f":  # a sum of k terms of one sign: k eps relative
        np.testing.assert_allclose(got, want, rtol=k * np.finfo(want.dtype).eps)
    else:
        np.testing.assert_array_equal(got, want)
    optimized = jit(fn).compile(x).optimized
    assert "linalg.reduce" not in optimized, optimized
    assert f"tensor.empty() : tensor<{x.shape[0]}x{x.shape[1]}x" not in optimized, optimized


def test_short_float_sums_are_numpys_bit_for_bit():
    """NumPy adds fewer than 8 elements one after another (pairwise_sum's first
    case), from 0: so does tinymlir, exactly, however the sum is fused (the
    issue's np.nansum(x, keepdims=True) + y, float32 promoted to float64, where
    a reassociated sum differed in the float32 result's last bits)."""
    programs = [
        lambda x, y: np.nansum(x, keepdims=True) + y,
        lambda x, y: np.sum(x, axis=0) * 2,
        lambda x, y: x.sum() + y.sum(),
        lambda x, y: np.prod(x + 1, axis=0),
        lambda x, y: x.mean(axis=0, keepdims=True) - y,
    ]
    for seed in range(40):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(4, 1)).astype(np.float32)
        x[rng.random((4, 1)) < 0.2] = np.nan
        y = rng.integers(-5, 5, size=(4, 1)).astype(np.int32)
        for f in programs:
            want, got = f(x, y), jit(f)(x, y)
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_array_equal(got, want, err_msg=f"seed {seed}")
