"""NumPy functions composed of traced operations (tinymlir/_functions.py): pad,
roll, repeat, tile, meshgrid, kron, cov, corrcoef, average, histogram, the nan
reductions, take, take_along_axis, put_along_axis; and the refusals.

Every test runs one source under NumPy and under tinymlir.jit on copies of the
same arguments and compares results and arguments afterwards (values, dtypes,
shapes): exactly for selections, integers and histogram counts, otherwise
within a bound derived at the test from the rounding errors of the sums.
"""

import re
import threading
import warnings

import numpy as np
import pytest
from conftest import assert_same, same

import tinymlir
import tinymlir._functions  # noqa: F401  (registered on import; also wraps numpy.random)
from tinymlir import jit

DTYPES = (np.float32, np.float64, np.int32, np.int64, np.bool_)
FLOATS = (np.float32, np.float64)


def eps(dtype):
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) if dtype.kind == "f" else 0.0


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype is np.bool_:
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-9, 10, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def sum_bound(x, axis=None, keepdims=False):
    """|error| of a float sum of x along axis: n * eps * sum|x| (any order)."""
    x = np.asarray(x)
    n = x.size if axis is None else np.prod([x.shape[a] for a in np.atleast_1d(axis)])
    return n * eps(x.dtype) * np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims)


# --- pad ---------------------------------------------------------------------------------


def _pads(t):
    out = [
        np.pad(t, 2),
        np.pad(t, ((1, 2), (0, 3)), constant_values=((1, 0), (0, 1))),
        np.pad(t, ((2, 1), (7, 3)), mode="edge"),
        np.pad(t, ((5, 9), (3, 11)), mode="reflect"),  # wider than the array
        np.pad(t, ((5, 9), (3, 11)), mode="symmetric"),
        np.pad(t, ((5, 9), (13, 3)), mode="wrap"),
        np.pad(t, ((1, 2), (3, 4)), mode="maximum"),
        np.pad(t, ((1, 2), (3, 4)), mode="minimum", stat_length=2),
        np.pad(t, 2, mode="empty")[2:-2, 2:-2],
    ]  # the original area
    out += [
        np.pad(t, ((5, 9), (3, 11)), mode="reflect", reflect_type="odd"),
        np.pad(t, ((5, 9), (3, 11)), mode="symmetric", reflect_type="odd"),
    ]
    if t.dtype != np.bool_:
        out += [
            np.pad(t, ((2, 3), (4, 1)), mode="mean", stat_length=((1, 2), (3, 3))),
            np.pad(t, ((2, 3), (4, 1)), mode="linear_ramp", end_values=((5, -3), (0, 2))),
        ]
    return tuple(out)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_modes_are_numpys_for_every_dtype(dtype):
    x = data((4, 5), dtype, 1)
    bounds = None
    if dtype in FLOATS:  # mode='mean': a mean of at most 3 values; the rest selections
        bounds = [0] * 11 + [4 * eps(dtype) * np.abs(x).max(), 0]  # the 12th: mode='mean'
    same(_pads, x, bound=bounds)


def test_pad_width_forms_and_values():
    x = data((3, 4), np.float64, 2)
    forms = [
        1,
        (2,),
        (1, 3),
        ((1, 2),),
        ((1, 2), (0, 3)),
        [[1], [2]],
        np.array([[0, 2], [3, 1]]),
        {1: (0, 2)},
        {0: 1},
    ]
    for form in forms:
        same(lambda t: np.pad(t, form), x)
    same(lambda t: np.pad(t, 1, mode="edge"), data((5,), np.int32))
    same(lambda t: np.pad(t, ((1, 0), (0, 2), (2, 1)), mode="reflect"), data((2, 3, 4), np.int64))
    same(lambda t: np.pad(t, 2, mode="reflect"), data((1, 3), np.float32))  # NumPy's singleton axis
    # a traced fill value, cast to the array's dtype as NumPy's setitem does
    same(lambda t: np.pad(t, 1, constant_values=t.max()), x)
    same(lambda t: np.pad(t, (1, 2), constant_values=(t[0, 0], -1)), x)
    same(lambda t: np.pad(t, 1, constant_values=2.7), data((3, 4), np.int32))
    # NumPy's errors
    with pytest.raises(ValueError, match="index can't contain negative values"):
        jit(lambda t: np.pad(t, -1))(x)
    with pytest.raises(TypeError, match="`pad_width` must be of integral type"):
        jit(lambda t: np.pad(t, 1.5))(x)
    with pytest.raises(ValueError, match="mode 'bogus' is not supported"):
        jit(lambda t: np.pad(t, 1, mode="bogus"))(x)
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jit(lambda t: np.pad(t, 1, mode="edge", constant_values=3))(x)
    if np.median in tinymlir._numpy._FUNCTIONS:  # a median of each side's values
        same(
            lambda t: np.pad(t, ((1, 2), (3, 1)), mode="median", stat_length=((2, 3), (4, 4))),
            x,
            bound=4 * eps(np.float64) * np.abs(x).max(),
        )
        same(lambda t: np.pad(t, 2, mode="median"), data((3, 4), np.int32))
    else:
        with pytest.raises(tinymlir.TracingError, match="median"):
            jit(lambda t: np.pad(t, 1, mode="median"))(x)
    with pytest.raises(tinymlir.TracingError, match="function as mode"):
        jit(lambda t: np.pad(t, 1, mode=lambda *a: None))(x)


# --- roll, repeat, tile, meshgrid, kron -------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_roll_repeat_tile_every_dtype(dtype):
    x = data((3, 4), dtype, 3)

    def f(t):
        return (
            np.roll(t, 1),
            np.roll(t, -5, axis=1),
            np.roll(t, (1, -7), axis=(0, 1)),
            np.roll(t, (2, 3), axis=(1, 1)),
            np.roll(t, 13),
            np.roll(t, 0, axis=0),
            np.repeat(t, 2),
            np.repeat(t, 3, axis=1),
            np.repeat(t, [2, 0, 1], axis=0),
            np.repeat(t, [1, 0, 3, 2], axis=-1),
            np.repeat(t, [2], axis=0),
            np.repeat(t[0, 0], 3),
            np.tile(t, 2),
            np.tile(t, (2, 1, 3)),
            np.tile(t[0], (3, 1)),
            np.tile(t, (1, 1)),
            np.tile(t, (0, 2)),
            np.repeat(t, 0, axis=1),
        )

    same(f, x)


def test_roll_repeat_tile_results_are_copies_and_errors_are_numpys():
    def f(t):
        r, p, q = np.roll(t, 0), np.tile(t, 1), np.repeat(t, 1, axis=0)
        r[0, 0] = p[0, 1] = q[1, 1] = -1.0
        return t, r, p, q

    same(f, data((3, 4), np.float64))
    x = data((3, 4), np.float64)
    with pytest.raises(ValueError, match="'shift' and 'axis' should be scalars or 1D sequences"):
        jit(lambda t: np.roll(t, [[1]], axis=0))(x)
    with pytest.raises(ValueError, match="operands could not be broadcast"):
        jit(lambda t: np.repeat(t, [1, 2], axis=0))(x)
    with pytest.raises(ValueError, match="negative"):
        jit(lambda t: np.repeat(t, -1))(x)
    with pytest.raises(tinymlir.TracingError, match="repeats must be known while tracing"):
        jit(lambda t: np.repeat(t, (t[0, 0] > 0).astype(np.int64)))(x)
    with pytest.raises(np.exceptions.AxisError):
        jit(lambda t: np.roll(t, 1, axis=2))(x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_meshgrid_and_kron_every_dtype(dtype):
    x = data((5,), dtype, 4)
    y = data((3,), dtype, 5)

    def f(a, b):
        return (
            np.meshgrid(a, b),
            np.meshgrid(a, b, indexing="ij"),
            np.meshgrid(a, b, a[:2], sparse=True),
            np.meshgrid(a, [1, 2]),
            np.meshgrid(a, b[:2], a[:4], indexing="ij"),
            np.meshgrid(a),
            np.kron(a, b),
            np.kron(a[:2].reshape(2, 1), b.reshape(1, 3)),
            np.kron(np.stack([a[:3], b]), np.stack([b, a[1:4], b])[:, :2]),
            np.kron(a.reshape(1, 5, 1), b.reshape(3, 1)),
            np.kron(a, 2),
            np.kron(3, b),
            np.kron(a[:3], [1, 0, 2]),
        )

    same(f, x, y)


def test_meshgrid_views_write_back_as_numpys():
    def f(a, b):
        xs, ys = np.meshgrid(a, b, sparse=True, copy=False)  # views of a and b
        xs[0, 1] = 7.0
        ys[2, 0] = -7.0
        xc, yc = np.meshgrid(a, b, sparse=True)  # copies
        xc[0, 0] = 100.0
        return xs, ys, xc, yc

    same(f, data((4,), np.float64), data((3,), np.float64))


# --- cov, corrcoef, average --------------------------------------------------------------


def cov_bound(m, rowvar=True, ddof=1, y=None, dtype=np.float64):
    """|error| of NumPy's cov computed in another order: centered products
    summed (n + 4 roundings of |x| + |mean| scaled terms each, twice over)."""
    X = np.atleast_2d(np.asarray(m, np.float64))
    if not rowvar and X.shape[0] != 1:
        X = X.T
    if y is not None:
        Y = np.atleast_2d(np.asarray(y, np.float64))
        X = np.concatenate([X, Y if rowvar or Y.shape[0] == 1 else Y.T])
    n = X.shape[1]
    A = np.abs(X) + np.abs(X.mean(axis=1, keepdims=True))
    return np.squeeze(2 * (n + 4) * eps(dtype) * (A @ A.T) / max(n - ddof, 1))


def corrcoef_bound(c, b):
    d = np.sqrt(np.diag(c))
    rel = np.diag(b) / np.diag(c)
    return (
        b / np.outer(d, d)
        + np.abs(c / np.outer(d, d)) * (rel[:, None] + rel[None, :]) / 2
        + 8 * eps(np.float64)
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_cov_and_corrcoef_every_dtype(dtype):
    m = data((3, 40), dtype, 6)
    y = data((2, 40), dtype, 7)
    mf = m.astype(np.float64)
    cb = cov_bound(m)
    bounds = [
        cb,
        cov_bound(m.T, rowvar=False),
        cov_bound(m, ddof=0),
        cov_bound(m, ddof=3),
        cov_bound(m, y=y),
        cov_bound(m[0]),
        corrcoef_bound(np.cov(mf), cb),
        corrcoef_bound(np.cov(mf, y.astype(np.float64)), cov_bound(m, y=y)),
    ]

    def f(a, b):
        return (
            np.cov(a),
            np.cov(a.T, rowvar=False),
            np.cov(a, bias=True),
            np.cov(a, ddof=3),
            np.cov(a, b),
            np.cov(a[0]),
            np.corrcoef(a),
            np.corrcoef(a, b),
        )

    if dtype is np.bool_ and np.any(m.std(axis=1) == 0):
        pytest.skip("a constant row")
    same(f, m, y, bound=bounds)


def test_cov_weights_dtype_and_scalar_results():
    m = data((3, 30), np.float64, 8)
    fw = np.random.default_rng(1).integers(0, 4, 30)
    aw = np.random.default_rng(2).random(30)
    b = 4 * cov_bound(m) * (fw.max() + 1)
    same(
        lambda a: (
            np.cov(a, fweights=fw),
            np.cov(a, aweights=aw),
            np.cov(a, fweights=fw, aweights=aw),
        ),
        m,
        bound=b,
    )
    same(lambda a, w: np.cov(a, aweights=w), m, aw, bound=b)  # traced weights
    m32 = m.astype(np.float32)
    same(lambda a: np.cov(a, dtype=np.float32), m32, bound=cov_bound(m32, dtype=np.float32))
    # a single variable: NumPy's 0-d array (the jitted function returns a NumPy scalar)
    same(lambda a: np.corrcoef(a[0], a[1])[0, 1], m, bound=1e-13)
    got = jit(lambda a: np.cov(a[0]))(m)
    assert np.asarray(got).shape == () and abs(got - np.cov(m[0])) <= cov_bound(m[0])
    assert jit(lambda a: np.corrcoef(a[0]))(m) == 1.0
    with pytest.raises(ValueError, match="m has more than 2 dimensions"):
        jit(lambda a: np.cov(a.reshape(3, 5, 6)))(m)
    with pytest.raises(ValueError, match="fweights cannot be negative"):
        jit(lambda a: np.cov(a, fweights=-fw))(m)


def test_cov_errors_and_warnings_are_numpys():
    """np.cov's errors and warning, from the C++ core: RuntimeError for weights of the
    wrong shape, TypeError for fractional frequency weights, and NumPy's RuntimeWarning
    (given while tracing) for degrees of freedom <= 0, with NumPy's infinite result; an
    error where warnings are errors."""
    m = data((3, 5), np.float64)
    with pytest.raises(RuntimeError, match="incompatible numbers of samples and fweights"):
        jit(lambda a: np.cov(a, fweights=np.ones(4, np.int64)))(m)
    with pytest.raises(RuntimeError, match="cannot handle multidimensional aweights"):
        jit(lambda a: np.cov(a, aweights=np.ones((5, 1))))(m)
    with pytest.raises(TypeError, match="fweights must be integer"):
        jit(lambda a: np.cov(a, fweights=np.full(5, 1.5)))(m)

    def too_few(a):
        return np.cov(a, ddof=5)

    with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0 for slice"):
        want = too_few(m)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom <= 0 for slice"):
        got = jit(too_few)(m)
    np.testing.assert_array_equal(got, want)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning, match="Degrees of freedom"):
            jit(lambda a: np.cov(a, ddof=6))(m)


@pytest.mark.parametrize("dtype", DTYPES)
def test_average_every_dtype(dtype):
    x = data((4, 6), dtype, 9)
    w6 = np.arange(1, 7, dtype=np.float64)
    w46 = data((4, 6), np.float64, 10) ** 2 + 0.5
    xf = np.abs(x.astype(np.float64))
    e = max(eps(dtype), eps(np.float64))

    def weighted(ax, w):  # (n + 2) roundings of sum|x w| / sum w, and of the sum of weights
        w = np.broadcast_to(w, x.shape) if w.shape == x.shape else w.reshape(1, -1)
        return (x.shape[ax] + 3) * e * (np.sum(xf * w, axis=ax) / np.sum(w, axis=ax)) * 2

    bounds = [
        (x.size + 2) * e * xf.mean(),
        (7 + 2) * e * xf.mean(axis=1),
        weighted(1, w6),
        (weighted(0, w46), 6 * e * w46.sum(axis=0)),
        (x.size + 2) * e * xf.mean(),
        ((4 + 2) * e * xf.mean(axis=0), 0),
        12 * e * xf.max(),
    ]

    def f(a, w):
        return (
            np.average(a),
            np.average(a, axis=1),
            np.average(a, axis=1, weights=w6),
            np.average(a, axis=0, weights=w, returned=True),
            np.average(a, axis=(0, 1), keepdims=True),
            np.average(a, axis=0, returned=True),
            np.average(a, axis=-1, weights=[1, 0, 0, 2, 0, 1], keepdims=True),
        )

    same(f, x, w46, bound=bounds)


def test_average_errors_are_numpys():
    x = data((4, 6), np.float64)
    with pytest.raises(TypeError, match="Axis must be specified"):
        jit(lambda a: np.average(a, weights=np.ones(6)))(x)
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        jit(lambda a: np.average(a, axis=1, weights=np.ones(4)))(x)
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        jit(lambda a: np.average(a, axis=1, weights=np.zeros(6)))(x)


# --- histogram ---------------------------------------------------------------------------


def _hist_source(t):
    return (
        np.histogram(t),
        np.histogram(t, bins=7, range=(-1, 1)),
        np.histogram(t, bins=3, range=(0, 0)),
        np.histogram(t, bins=[-2, -0.5, 0, 0.25, 3]),
        np.histogram(t, bins=[-5, 0, 2, 4]),
        np.histogram(t, bins=4, density=True),
        np.histogram(t, bins=[-1.5, 0.0, 0.5, 2.0], density=True),
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_histogram_counts_and_edges_are_numpys_exactly(dtype):
    x = data((6, 7), dtype, 11)
    if dtype is np.bool_:  # NumPy converts bools to uint8, with a warning (here while tracing)
        with pytest.warns(RuntimeWarning, match="Converting input from bool"):
            jit(lambda t: np.histogram(t))(x)
    same(_hist_source, x)


def test_histogram_edges_from_the_data_are_bit_identical():
    # Edges from the traced min and max follow np.linspace's arithmetic step by
    # step; values on the edges land in NumPy's bins.
    rng = np.random.default_rng(12)
    fns = {}
    for trial in range(30):
        for dtype in FLOATS:
            x = (rng.normal(size=97) * 10 ** rng.uniform(-3, 3)).astype(dtype)
            x[:5] = np.linspace(x.min(), x.max(), 5)  # values on the edges of 4 bins
            bins = [4, 10, 13][trial % 3]
            if (dtype, bins) not in fns:
                fns[dtype, bins] = jit(lambda t, b=bins: np.histogram(t, bins=b))
            got = fns[dtype, bins](x)
            want = np.histogram(x, bins=bins)
            assert_same(want, got, path=f"trial {trial} {np.dtype(dtype)} {bins} bins")
    # a constant array: its range widened by 0.5 on each side, as NumPy's
    for dtype in DTYPES[:4]:
        same(lambda t: (np.histogram(t), np.histogram(t, bins=1)), np.full(9, 3, dtype))


def test_histogram_values_on_and_outside_the_given_range():
    x = np.array(
        [0.0, 0.1, 0.2, 0.25, 0.5, 0.5, 0.75, 1.0, 1.0, -0.1, 1.1, np.nan, np.inf, -np.inf]
    )
    same(
        lambda t: (
            np.histogram(t, bins=4, range=(0, 1)),
            np.histogram(t, bins=[0, 0.5, 1]),
            np.histogram(t, bins=[0, 0.5, 0.5, 1]),
            np.histogram(t, bins=10, range=(0, 1)),
            np.histogram(t, bins=4, range=(0, 1), density=True),
        ),
        x,
    )
    for dtype in (np.float32, np.int32, np.int64):  # values on the edges of other dtypes
        v = np.arange(-6, 7).astype(dtype)
        same(
            lambda t: (
                np.histogram(t, bins=4, range=(-4, 4)),
                np.histogram(t, bins=3),
                np.histogram(t, bins=6, range=(-3.5, 2.5)),
            ),
            v,
        )
    # NumPy's range values keep their dtype: float64 edges (and comparisons)
    # for float32 data, as NumPy's result_type(first, last, a) gives them.
    f32 = (x[:11] * np.float32(1.1)).astype(np.float32)
    same(
        lambda t: (
            np.histogram(t, bins=3, range=(np.float64(0), np.float64(1.1))),
            np.histogram(t, bins=3, range=(0, np.float64(0.7))),
            np.histogram(t, bins=3, range=np.array([0.1, 0.9])),
            np.histogram(t, bins=2, range=(np.int64(1), np.int64(1))),
            np.histogram(t, bins=3, range=(0.1, 0.9)),
        ),
        f32,
    )


def test_histogram_equal_bins_count_values_on_every_edge_as_numpy():
    # Equal bins are found from each value's offset, then corrected against
    # the edges (NumPy's method): values exactly on, and one ulp around, every
    # edge land in NumPy's bins, with a given range and with the data's.
    rng = np.random.default_rng(31)
    for dtype in (np.float32, np.float64):
        for bins, rng_ in ((7, (-1.3, 2.9)), (13, (0.1, 0.7)), (32, None)):
            x = (rng.random(400) * 5 - 1.6).astype(dtype)
            e = np.histogram(x, bins=bins, range=rng_)[1].astype(dtype)
            near = np.concatenate([e, np.nextafter(e, np.inf), np.nextafter(e, -np.inf)])
            x[: near.size] = near.astype(dtype)
            f = jit(lambda t, b=bins, r=rng_: np.histogram(t, bins=b, range=r))
            assert_same(
                np.histogram(x, bins=bins, range=rng_),
                f(x),
                path=f"{np.dtype(dtype)} {bins} bins, range {rng_}",
            )


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
def test_convolve_modes_as_numpys(dtype):
    for n, m in [(5, 3), (6, 4), (7, 1), (3, 5), (4, 4), (20, 7)]:
        a, v = data((n,), dtype, n), data((m,), dtype, 10 + m)
        for mode in ("full", "same", "valid"):
            # each output: a sum of min(n, m) products, in any order
            e = eps(dtype)
            b = min(n, m) * e * np.convolve(np.abs(a.astype(float)), np.abs(v.astype(float)), mode)
            same(lambda a, v: np.convolve(a, v, mode=mode), a, v, bound=b if e else None)
    x = data((6,), np.float64)
    same(lambda t: np.convolve(t, [0.25, 0.5, 0.25], "valid"), x, bound=4 * eps(np.float64) * 6)
    with pytest.raises(ValueError, match="mode must be one of"):
        jit(lambda t: np.convolve(t, t, mode="middle"))(x)
    with pytest.raises(ValueError, match="v cannot be empty"):
        jit(lambda t: np.convolve(t, t[:0]))(x)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.int64, np.bool_])
def test_correlate_modes_as_numpys(dtype):
    """np.correlate: v reversed and conjugated, and NumPy's "same" window
    where v is the longer (NumPy correlates (v, a) and reverses)."""
    for n, m in [(5, 3), (3, 5), (2, 7), (4, 8), (6, 6), (1, 4), (9, 1)]:
        a, v = data((n,), dtype, n), data((m,), dtype, 10 + m)
        if np.dtype(dtype).kind == "c":
            a, v = a + 1j * data((n,), np.float64, 20 + n), v - 2j * data((m,), np.float64, m)
        for mode in ("valid", "same", "full"):
            # each output: a sum of min(n, m) products (complex ones: each within
            # 2 eps |a||v|, so a bound of (min(n, m) + 2) * 2 eps)
            complex_ = np.dtype(dtype).kind == "c"
            e = 2 * eps(np.float64) if complex_ else eps(dtype)
            k = min(n, m) + 2 if complex_ else min(n, m)
            b = k * e * np.correlate(np.abs(a), np.abs(v), mode).real
            same(lambda a, v: np.correlate(a, v, mode), a, v, bound=b if e else None)
    x = data((6,), np.float64)
    same(lambda t: np.correlate(t, [1.0, -1.0]), x, bound=2 * eps(np.float64) * 8)
    with pytest.raises(ValueError, match="object too deep"):
        jit(lambda t: np.correlate(t.reshape(2, 3), t))(x)


def test_shares_memory_of_views_as_numpys():
    def f(a, b):
        v, w = a[::2], a[1::2]
        return np.array(
            [
                np.shares_memory(a, b),
                np.shares_memory(v, w),  # interleaved: no element in common
                np.may_share_memory(v, w),  # but within each other's bounds
                np.shares_memory(a.T[1], a[:, 1]),
                np.shares_memory(a[0], a[1]),
                np.may_share_memory(a, np.zeros(3)),
                np.shares_memory(a.reshape(-1)[3:5], a[1]),
            ]
        )

    a, b = data((4, 3), np.float64), data((4, 3), np.float64, 1)
    np.testing.assert_array_equal(jit(f)(a, b), f(a, b))
    np.testing.assert_array_equal(jit(f)(a, a), f(a, a))  # one array passed twice


def test_weighted_histogram_sums_by_bin_not_by_value_and_edge():
    # Float weights go through each value's bin and a weighted bincount, as
    # NumPy's, not through a (values, bins) comparison: azimint's 400,000
    # values and 1,000 bins took 2.3 s that way, 0.005 s this way.
    x, w = data((4096,), np.float32, 15), np.abs(data((4096,), np.float32, 16))
    edges = np.linspace(-3, 3, 301)
    f = jit(lambda t, v: (np.histogram(t, 300, weights=v), np.histogram(t, edges, weights=v)))
    ir = f.compile(x, w).optimized
    assert "4096x30" not in ir and "30" + "0x4096" not in ir
    b = 2 * 4096 * eps(np.float32) * float(w.sum())
    same(f.fn, x, w, bound=[(b, 0), (b, 0)])


def test_a_row_call_reads_its_operand_before_its_buffer_is_reused():
    # Two bincounts read the same weights; between them a cast of the same
    # shape and dtype may take the weights' buffer once its last reader has
    # run. CSE had merged the second call's read into the first's, so the
    # second bincount read the cast's values (error 19.4).
    rng = np.random.default_rng(2)
    i = rng.integers(0, 6, 64)
    w, x = rng.random(64).astype(np.float32), -rng.random(64).astype(np.float32)
    edges = np.linspace(-1, 0, 6)

    def f(i, w, x):
        w64 = w.astype(np.float64)
        a = np.bincount(i, weights=w64, minlength=6)
        j = np.searchsorted(edges, x.astype(np.float64))
        return a, np.bincount(j, weights=w64, minlength=7)

    b = 64 * eps(np.float64) * float(w.sum())
    same(f, i, w, x, bound=[b, b])


@pytest.mark.parametrize("wdtype", DTYPES)
def test_histogram_weights(wdtype):
    x = data((50,), np.float64, 13)
    w = data((50,), wdtype, 14)
    if wdtype in FLOATS:
        w = np.abs(w) + wdtype(0.1)  # positive: the density's total is far from 0
    wf = np.abs(w.astype(np.float64))
    e = eps(wdtype)
    # NumPy sums weights in float64 (bincount; given edges: cumulative sums in the
    # weights' dtype, differenced), then rounds to the weights' dtype
    b = 0 if e == 0 else 2 * 50 * e * wf.sum() + 50 * eps(np.float64) * wf.sum()

    def f(t, v):
        return np.histogram(t, bins=5, weights=v), np.histogram(t, bins=6, range=(-2, 2), weights=v)

    same(f, x, w, bound=[(b, 0), (b, 0)])
    if wdtype is np.bool_:
        return
    edges = np.array([-3.0, -1, 0, 0.5, 3])
    h = np.histogram(x, bins=edges, weights=w)[0].astype(np.float64)
    total = h.sum()
    db = np.diff(edges)
    bd = (b + np.abs(h) * 5 * b / abs(total)) / (db * abs(total)) + 8 * eps(np.float64) * np.abs(
        h / db / total
    )
    same(
        lambda t, v: (
            np.histogram(t, bins=edges, weights=v),
            np.histogram(t, bins=edges, weights=v, density=True),
        ),
        x,
        w,
        bound=[(b, 0), (bd if e else 0, 0)],
    )


def test_histogram_traced_edges_and_errors():
    x = data((40,), np.float32, 15)
    edges = np.array([-2.0, -0.3, 0.0, 0.4, 2.5])
    same(lambda t, e: np.histogram(t, bins=e), x, edges)
    same(lambda t, e: np.histogram(t, bins=e * 2, density=True), x, edges)
    with pytest.raises(ValueError, match="`bins` must be positive"):
        jit(lambda t: np.histogram(t, bins=0))(x)
    with pytest.raises(ValueError, match="max must be larger than min"):
        jit(lambda t: np.histogram(t, range=(1, 0)))(x)
    with pytest.raises(ValueError, match="`bins` must increase monotonically"):
        jit(lambda t: np.histogram(t, bins=[0, 2, 1]))(x)
    with pytest.raises(ValueError, match="weights should have the same shape as a"):
        jit(lambda t: np.histogram(t, weights=t[:3]))(x)
    with pytest.raises(tinymlir.TracingError, match="bins='auto'"):
        jit(lambda t: np.histogram(t, bins="auto"))(x)


# --- nan reductions ------------------------------------------------------------------------

NANFUNCS = (np.nansum, np.nanprod, np.nanmax, np.nanmin, np.nanmean, np.nanvar, np.nanstd)


def nan_bound(fn, x, axis=None, ddof=0, dtype=None):
    """|error| of fn(x) for floats: NaNs count as 0 (sum) or 1 (prod)."""
    e = eps(dtype or x.dtype)
    v = np.where(np.isnan(x), 0.0, np.abs(x.astype(np.float64)))
    n = np.sum(~np.isnan(x), axis=axis)
    size = x.size if axis is None else x.shape[axis]
    if fn is np.nansum:
        return size * e * v.sum(axis=axis)
    if fn is np.nanprod:
        return 2 * size * e * np.where(np.isnan(x), 1.0, v).prod(axis=axis)
    if fn in (np.nanmax, np.nanmin):
        return 0
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean_abs = v.sum(axis=axis) / n
        sq = (v * v).sum(axis=axis) / np.maximum(n - ddof, 1)
        if fn is np.nanmean:
            return (size + 2) * e * mean_abs
        var_b = 2 * (size + 4) * e * sq
        if fn is np.nanvar:
            return var_b
        std = np.sqrt(np.nanvar(x.astype(np.float64), axis=axis, ddof=ddof))
        return (
            np.where(std > 0, var_b / (2 * np.where(std > 0, std, 1)), np.sqrt(var_b)) + 2 * e * std
        )


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_reductions_every_dtype(dtype):
    x = data((5, 6), dtype, 16)
    if dtype in FLOATS:
        x[1, 2] = x[3, 0] = x[0, 5] = np.nan
        x[4] = np.nan  # an all-NaN row: NaN (sums: 0, products: 1)
    for fn in NANFUNCS:
        if dtype in FLOATS:
            bounds = [nan_bound(fn, x), nan_bound(fn, x, 1), np.asarray(nan_bound(fn, x, 0))[None]]
        else:  # NumPy's plain reductions: integers exact, means and variances in float64
            xf = x.astype(np.float64)
            kind = {np.nanmean: np.nanmean, np.nanvar: np.nanvar, np.nanstd: np.nanstd}.get(fn)
            bounds = (
                None
                if kind is None
                else [nan_bound(kind, xf), nan_bound(kind, xf, 1), nan_bound(kind, xf, 0)[None]]
            )
        same(lambda t: (fn(t), fn(t, axis=1), fn(t, axis=0, keepdims=True)), x, bound=bounds)


def test_nan_reductions_arguments():
    x = data((5, 6), np.float32, 17)
    x[0, 0] = x[2, 3] = x[2, 4] = np.nan
    same(
        lambda t: (np.nanvar(t, axis=1, ddof=1), np.nanstd(t, axis=0, ddof=2)),
        x,
        bound=[nan_bound(np.nanvar, x, 1, 1), nan_bound(np.nanstd, x, 0, 2)],
    )
    same(lambda t: np.nanvar(t, axis=1, correction=1), x, bound=nan_bound(np.nanvar, x, 1, 1))
    same(
        lambda t: (np.nansum(t, dtype=np.float64), np.nanmean(t, axis=0, dtype=np.float64)),
        x,
        bound=[
            nan_bound(np.nansum, x, None, 0, np.float64),
            nan_bound(np.nanmean, x, 0, 0, np.float64),
        ],
    )
    same(
        lambda t: (np.nanmax(t, axis=(0, 1)), np.nansum(t, axis=(0, 1), keepdims=True)),
        x,
        bound=[0, nan_bound(np.nansum, x).reshape(1, 1)],
    )
    # a row with fewer values than ddof: NaN, as NumPy's
    same(lambda t: np.nanvar(t[2:3, :5], axis=1, ddof=4), x)


# --- take, take_along_axis, put_along_axis -------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_every_dtype(dtype):
    x = data((4, 5), dtype, 18)
    if dtype in FLOATS:
        x[1, 1], x[2, 3] = np.nan, -0.0

    def f(t, ids):
        traced = ids[:3] - 2  # computed indices: -2 .. 2
        return (
            np.take(t, 3),
            np.take(t, [[0, 19], [-1, 7]]),
            np.take(t, [3, 0, 3], axis=0),
            np.take(t, np.array([[1, -1], [0, 4]]), axis=1),
            np.take(t, -2, axis=1),
            np.take(t, [7, -9, 12], axis=1, mode="wrap"),
            np.take(t, [7, -9, 12], axis=0, mode="clip"),
            np.take(t, [], axis=1),
            np.take(t, traced),
            np.take(t, traced, axis=1),
            np.take(t, traced.reshape(3, 1), axis=0),
            np.take(t, ids * 3 - 6, axis=1, mode="wrap"),
            np.take(t, ids * 3 - 6, axis=0, mode="clip"),
            np.take(t, np.array([True, False]), axis=1),
            np.take(t, ids > 2, axis=0),
        )

    same(f, x, np.array([0, 4, 3, 1, 2], dtype=np.int64))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 5"):
        jit(lambda t: np.take(t, [0, 5], axis=1))(x)


def test_take_of_many_ids_on_the_team_reports_the_first_bad_one():
    # 100,000 computed ids (the kernel splits them over the OpenMP team): the
    # values are NumPy's, and the first id out of range is NumPy's IndexError.
    table = np.arange(7.0) * 1.5
    ids = np.arange(100_000, dtype=np.int64)
    f = jit(lambda t, i: np.take(t, i % 9 - 1))
    i_ok = ids.copy()
    i_ok[i_ok % 9 == 8] = 0
    np.testing.assert_array_equal(f(table, i_ok), np.take(table, i_ok % 9 - 1))
    g = jit(lambda t, i: np.take(t, i - 1))
    bad = np.ones(100_000, dtype=np.int64)
    bad[70_000], bad[30_000], bad[99_000] = 10, 13, -20  # the first is 13 - 1
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 7"):
        g(table, bad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_and_put_along_axis_every_dtype(dtype):
    x = data((4, 5), dtype, 19)
    v = data((4, 5), dtype, 20)
    static = np.array([[0, 4], [2, 2], [1, -1], [3, 0]])

    def f(t, u, ids):
        traced = ids - 1  # (4, 5): -1 .. 3, computed
        r = (
            np.take_along_axis(t, static, axis=1),
            np.take_along_axis(t, static[:, :1], 1),
            np.take_along_axis(t, np.array([[0, 1, 2, 3, -1], [3, 3, 0, 1, 2]]), axis=0),
            np.take_along_axis(t, np.array([7, 0, -3]), axis=None),
            np.take_along_axis(t, traced, axis=1),
            np.take_along_axis(t, traced[:2], axis=0),
            np.take_along_axis(t, traced[:, :1], axis=1),
        )
        np.put_along_axis(t, static, u[:, :2], axis=1)  # repeated (row 1): the last value
        np.put_along_axis(u, traced[:, :3], t[:, 1:4], axis=1)
        np.put_along_axis(u, np.clip(traced[:1] + 1, 0, 3), True, axis=0)
        np.put_along_axis(t, static[:, :1], u[0, 0], axis=1)
        return r

    ids = np.random.default_rng(21).integers(0, 4, (4, 5)).astype(np.int64)
    ids[1, :3] = [2, 2, 2]  # repeated positions in a traced index: the last one written wins
    same(f, x, v, ids)


def test_put_along_axis_with_axis_none_writes_through_the_flat_view():
    # NumPy writes through np.array(arr.flat): a view of a contiguous array
    def f(t, ids):
        np.put_along_axis(t, np.array([0, -1, 3]), 1.0, axis=None)
        np.put_along_axis(t, ids - 1, -t[0, 1:3], axis=None)

    same(f, data((2, 3), np.float64), np.array([3, 5]))
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        jit(lambda t: np.put_along_axis(t.T, np.array([0]), 1.0, axis=None))(
            data((2, 3), np.float64)
        )


def test_along_axis_errors():
    x = data((4, 5), np.float64)
    outside = np.zeros((4, 5))  # a NumPy array: NumPy's own function would write into it
    with pytest.raises(ValueError, match="same number of dimensions"):
        jit(lambda t: np.take_along_axis(t, np.array([0, 1]), axis=1))(x)
    with pytest.raises(IndexError, match="must be an integer array"):
        jit(lambda t: np.take_along_axis(t, np.zeros((4, 1)), axis=1))(x)
    # A captured array is written as NumPy writes it (test_captures.py).
    write = lambda t: np.put_along_axis(outside, np.zeros((4, 1), int), t[0, 0] + 5, 1)  # noqa: E731
    before = outside.copy()
    write(x)
    want, outside[...] = outside.copy(), before
    jit(write)(x)
    np.testing.assert_array_equal(outside, want)


# --- Refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [np.unique, np.nonzero, np.argwhere, np.flatnonzero])
def test_data_dependent_shapes_are_refused_by_name(fn):
    with pytest.raises(
        tinymlir.TracingError,
        match=rf"numpy\.{fn.__name__}: the shape of its result depends on the data",
    ):
        jit(lambda t: fn(t > 0))(data((4,), np.float64))


def test_data_shaped_functions_of_static_values_are_numpys():
    # Arrays made inside from static values alone are known while tracing:
    # NumPy computes unique, nonzero... of them, and the result indexes.
    def f(t):
        labels = np.arange(10) % 4
        u, counts = np.unique(labels, return_counts=True)
        (where,) = np.nonzero(labels == 3)
        return t[u] * counts, t[where], np.flatnonzero(labels > 2), np.argwhere(labels == 1)

    same(f, data((10,), np.float64))


@pytest.mark.parametrize("fn", [np.fft.fft, np.fft.rfft, np.fft.fft2])
def test_numpy_fft_is_refused_with_the_reason(fn):
    with pytest.raises(
        tinymlir.TracingError, match=rf"numpy\.fft\.{fn.__name__}: np\.fft is not compiled \(FFTW"
    ):
        jit(lambda t: fn(t))(data((4, 4), np.float64))


from numpy.random import normal as _imported_normal  # noqa: E402  (a from-import: rebound too)


def test_numpy_random_is_refused_while_tracing():
    x = data((3,), np.float64)
    calls = [
        lambda t: t + np.random.rand(3),
        lambda t: t * np.random.normal(size=3),
        lambda t: t + np.random.default_rng(0).random(3),
        lambda t: np.random.seed(0),
        lambda t: t + np.random.choice(3, 3),
        lambda t: t + _imported_normal(size=3),
    ]
    for f in calls:
        with pytest.raises(
            tinymlir.TracingError,
            match=r"numpy\.random\.\w+: its values would be "
            "drawn once, while tracing",
        ):
            jit(f)(x)
    rand = np.random.rand

    def closure(t):
        return t + rand(3)

    with pytest.raises(tinymlir.TracingError, match="numpy.random.rand"):
        jit(closure)(x)
    # only while tracing, and only on the tracing thread
    assert np.random.rand is np.random.mtrand.rand and _imported_normal is np.random.mtrand.normal
    seen = []

    def f(t):
        other = threading.Thread(target=lambda: seen.append(np.random.default_rng(1).random(2)))
        other.start()
        other.join()
        seen.append(np.random.rand is not np.random.mtrand.rand)  # wrapped during the trace
        return t * 2

    same(f, x)
    assert seen[0].shape == seen[2].shape == (2,)  # NumPy's run, then the trace
    assert seen[1] is False and seen[3] is True
    assert np.random.rand is np.random.mtrand.rand


# --- Programs ---------------------------------------------------------------------------------


def test_program_int64_histogram_of_a_float_image():
    yy, xx = np.mgrid[0:48, 0:64]
    image = np.sin(xx / 7.0) * np.cos(yy / 5.0) + 0.05 * data((48, 64), np.float64, 22)
    image = image.astype(np.float32)

    def f(img):
        counts, edges = np.histogram(img, bins=32)
        clipped, _ = np.histogram(np.clip(img, -0.5, 0.5), bins=16, range=(-1, 1))
        level = np.sum(counts[:16]) / img.size  # the fraction below the middle edge
        return counts.astype(np.int64), edges, clipped, level

    got = same(f, image)
    assert got[0].dtype == np.int64 and got[0].sum() == image.size


def test_program_moving_average_with_pad_and_slices():
    x = np.cumsum(data((60,), np.float64, 23))
    k = 5

    def f(s):
        p = np.pad(s, (k - 1, 0), mode="edge")  # causal: the first value repeated
        acc = p[0 : s.shape[0]].copy()
        for i in range(1, k):
            acc += p[i : i + s.shape[0]]
        sym = np.pad(s, k // 2, mode="reflect")  # centered
        centered = sum(sym[i : i + s.shape[0]] for i in range(k)) / k
        return acc / k, centered

    same(f, x)  # the same additions in the same order: exact


def test_program_covariance_of_data():
    rng = np.random.default_rng(24)
    latent = rng.normal(size=(200, 2))
    samples = np.concatenate(
        [latent, latent @ [[1.0], [-2.0]] + 0.1 * rng.normal(size=(200, 1))], axis=1
    )

    def f(d):
        centered = d - np.average(d, axis=0)
        c = np.cov(d, rowvar=False)
        r = np.corrcoef(d, rowvar=False)
        spread = np.sqrt(np.nanvar(np.where(d > 2, np.nan, d), axis=0))
        return c, r, (centered.T @ centered) / (d.shape[0] - 1), spread

    cb = cov_bound(samples, rowvar=False)
    x = np.where(samples > 2, np.nan, samples)
    same(
        f,
        samples,
        bound=[
            cb,
            corrcoef_bound(np.cov(samples, rowvar=False), cb),
            cb,
            nan_bound(np.nanstd, x, 0),
        ],
    )


def test_program_knn_vote_with_take():
    rng = np.random.default_rng(25)
    points = rng.normal(size=(30, 2))
    labels = rng.integers(0, 3, 30).astype(np.int64)
    queries = rng.normal(size=(9, 2))

    def vote(p, lab, q, k=3):
        diff = q[:, None, :] - p[None, :, :]
        d = np.sum(diff * diff, axis=-1)  # (9, 30)
        pos = np.arange(p.shape[0])
        votes = []
        for _ in range(k):  # the k nearest, by repeated argmin
            nearest = np.min(np.where(d == d.min(axis=1, keepdims=True), pos, p.shape[0]), axis=1)
            votes.append(np.take(lab, nearest))  # traced ids
            d = np.where(pos == nearest[:, None], np.inf, d)
        votes = np.stack(votes, axis=1)  # (9, k)
        tally = np.stack([np.sum(votes == c, axis=1) for c in range(3)], axis=1)
        best = np.min(np.where(tally == tally.max(axis=1, keepdims=True), np.arange(3), 3), axis=1)
        return votes, tally, best, np.take(np.arange(10, 40, 10), best)

    same(vote, points, labels, queries)


def test_diagonal_trace_and_diag_as_numpys():
    # Selections exact; a trace is np.sum of its diagonal (integers in int64,
    # dtype= honoured). Offsets past the matrix give empty diagonals.
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((4, 6)), rng.standard_normal((3, 4, 5))
    v, iv = rng.standard_normal(4), np.arange(5, dtype=np.int32)
    cases = [
        (lambda x: np.diagonal(x), a),
        (lambda x: np.diagonal(x, 2), a),
        (lambda x: np.diagonal(x, -3), a),
        (lambda x: np.diagonal(x, 7), a),
        (lambda x: np.diagonal(x, 1, 0, 2), b),
        (lambda x: np.diagonal(x, -1, 2, 1), b),
        (lambda x: x.diagonal(1), a),
        (lambda x: np.trace(x), a),
        (lambda x: x.trace(-1), a),
        (lambda x: np.trace(x, 0, 1, 2), b),
        (lambda x: np.trace(x.reshape(5, 1)), iv),
        (lambda x: np.trace(x.reshape(1, 5), dtype=np.float32), iv),
        (lambda x: np.diag(x), v),
        (lambda x: np.trace(np.diag(x) * 50, dtype=np.int8), iv),  # wraps in int8
        (lambda x: np.diag(x, 2), v),
        (lambda x: np.diag(x, -1), iv),
        (lambda x: np.diag(x, -2), a),
        (lambda x: np.diag(np.diag(x)) + 1, a[:, :4]),
    ]
    for i, (fn, x) in enumerate(cases):
        got, want = jit(fn)(x), fn(x)
        assert np.asarray(got).dtype == np.asarray(want).dtype, i
        if 7 <= i <= 9:  # float traces: sums of n terms, in any order
            n = min(x.shape[-2:]) if i == 9 else min(x.shape)
            bound = n * np.finfo(np.float64).eps * np.sum(np.abs(x))
            np.testing.assert_allclose(got, want, rtol=0, atol=bound, err_msg=str(i))
        else:
            np.testing.assert_array_equal(got, want, err_msg=str(i))
    with pytest.raises(ValueError, match="Input must be 1- or 2-d"):
        jit(np.diag)(b)


def test_isclose_and_allclose_as_numpys():
    # NumPy 2's isclose step by step: y made inexact (int32's INT_MIN stays
    # exact in float64), equal infinities close, nan only with equal_nan.
    a = np.array([1.0, 1.00001, np.inf, np.nan, -np.inf, 1e-9, 0.0, 1e10])
    b = np.array([1.0, 1.0, np.inf, np.nan, np.inf, 0.0, 1e-8, 1.00001e10])
    i = np.array([1, 2, -(2**31), 5], np.int32)
    j = np.array([1, 3, -(2**31), 5], np.int32)
    cases = [
        (lambda x, y: np.isclose(x, y), a, b),
        (lambda x, y: np.isclose(x, y, equal_nan=True), a, b),
        (lambda x, y: np.isclose(x, y, rtol=0.1, atol=0), a, b),
        (lambda x, y: np.isclose(x.astype(np.float32), y.astype(np.float32)), a, b),
        (lambda x, y: np.isclose(x, y), i, j),
        (lambda x, y: np.isclose(x, 1), i, j),
        (lambda x, y: np.isclose(x, 1.0), a, b),
        (lambda x, y: np.allclose(x[:2], y[:2]), a, b),
        (lambda x, y: np.allclose(x, y, equal_nan=True), a, b),
    ]
    with np.errstate(invalid="ignore"):
        for k, (fn, x, y) in enumerate(cases):
            got, want = jit(fn)(x, y), fn(x, y)
            assert np.asarray(got).dtype == np.asarray(want).dtype, k
            np.testing.assert_array_equal(got, want, err_msg=str(k))


def test_cross_ptp_inner_vdot_gradient_interp_and_lexsort_as_numpys():
    """Functions scientific programs reach for, in the C++ core, each against
    NumPy: values (products of two terms and their differences: within a few
    ulps; gradient's and interp's formulas as NumPy's), dtypes and shapes."""
    r = np.random.default_rng(5)
    a, b = r.standard_normal((4, 3)), r.standard_normal((4, 3))
    two = r.standard_normal((4, 2))

    def close(fn, *args, rtol=8 * 2.0**-52):  # within rtol (|NumPy's| + its largest)
        want = fn(*args)
        big = lambda w: rtol * np.abs(w).max()  # noqa: E731
        same(
            fn,
            *args,
            bound=tuple(map(big, want)) if isinstance(want, tuple) else big(want),
            rtol=rtol,
        )

    close(np.cross, a, b)
    close(lambda x, y: np.cross(x, y), a, two)  # a 2-vector has z = 0
    close(lambda x, y: np.cross(x.T, y.T, axisa=0, axisb=0, axisc=0), a, b)
    close(lambda x, y: np.cross(x[:, :2], y[:, :2]), a, b)  # NumPy 2 warns; the z component
    close(lambda x: np.ptp(x, axis=0), a)
    close(lambda x: np.ptp(x.astype(np.int32), axis=(0, 1), keepdims=True), a * 10)
    close(np.inner, a, b)
    close(lambda x, y: np.inner(x, y[0]), a, b)
    close(lambda x, y: np.vdot(x, y), a + 1j * b, b - 2j * a)
    f = r.standard_normal((6, 5))
    coords = np.cumsum(r.random(5) + 0.1)
    for edge in (1, 2):
        close(lambda x, e=edge: np.gradient(x, edge_order=e), f)
        close(lambda x, e=edge: np.gradient(x, 0.5, axis=1, edge_order=e), f)
        close(
            lambda x, c, e=edge: np.gradient(x, c, axis=-1, edge_order=e), f, coords, rtol=2.0**-45
        )
        close(lambda x, e=edge: np.gradient(x, np.arange(6.0) * 2, 3.0, edge_order=e), f)
    close(lambda x: np.gradient(x.astype(np.int64)), f * 10)
    xp = np.array([0.0, 1.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, -2.0, 3.0, 0.5, np.inf])
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 5.0, np.nan])
    close(np.interp, x, xp, fp)
    close(lambda q, p, v: np.interp(q, p, v, left=-7.0, right=9.0), x, xp, fp)
    close(lambda q: np.interp(q, [1.0], [2.0]), x)
    close(lambda q: np.interp(2.25, [1.0, 3.0], [0.0, 1.0 + 2j]), x)
    keys = r.integers(0, 3, (3, 12))
    got, want = jit(np.lexsort)(keys), np.lexsort(keys)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    got = jit(lambda k0, k1: np.lexsort((k0, k1)))(keys[0], keys[1].astype(np.float32))
    assert np.array_equal(got, np.lexsort((keys[0], keys[1].astype(np.float32))))


def test_argument_rules_of_flips_sorts_gradient_pad_and_cov_as_numpys():
    """The rules of these functions' arguments are the C++ core's: flip's axis
    None, fliplr/flipud's ranks, lexsort's 2-D keys, searchsorted's sorter,
    gradient's axes and spacings, pad's dict widths, cov's ddof, bincount's
    minlength and ufunc.outer's keywords; values exact, errors NumPy's."""
    r = np.random.default_rng(11)
    a = r.standard_normal((3, 4, 5))
    keys = r.integers(0, 3, (3, 10)).astype(np.float32)
    v = np.sort(r.standard_normal(8))[::-1].copy()
    sorter = np.argsort(v)
    cases = [
        (lambda x: np.flip(x), a),
        (lambda x: np.flip(x, axis=(0, -1)), a),
        (lambda x: np.flip(x, ()), a),
        (np.fliplr, a),
        (np.flipud, a[0, 0]),
        (np.lexsort, keys),
        (lambda k: np.lexsort(k[0]), keys),
        (lambda s, o: np.searchsorted(s, [-0.5, 0.0, 0.5], sorter=o), v, sorter),
        (lambda s, o: np.searchsorted(s, s, side="right", sorter=o), v, sorter),
        (lambda x: np.gradient(x, axis=(2, 0)), a),
        (lambda x: np.gradient(x, 0.5, axis=(-1, 1)), a),
        (lambda x: np.gradient(x, 2.0, np.arange(4.0) ** 2, axis=(0, 1)), a),
        (lambda x: np.gradient(x, 2.0), a),
        (lambda x: np.pad(x, {-1: 2, 0: (1, 0)}), a),
        (lambda x: np.pad(x, {1: (0, 3)}, mode="edge"), a),
        (lambda x: np.add.outer(x[0, 0], x[1, :, 0], dtype=np.float32), a),
        (lambda x: np.multiply.outer(x[0, 0], x[1, 0], out=np.zeros((5, 5))), a),
    ]
    for fn, *args in cases:
        got, want = jit(fn)(*args), fn(*args)
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=2 * 2.0**-52, atol=0)
    # cov with ddof=2.0: sums of n products of deviations, each deviation
    # within eps (|x| + |mean|), over n - ddof.
    got, want = jit(lambda x: np.cov(x[0], ddof=2.0))(a), np.cov(a[0], ddof=2.0)
    n, size = a.shape[2], np.abs(a[0]) + np.abs(a[0].mean(axis=1, keepdims=True))
    assert np.all(np.abs(got - want) <= (n + 4) * 2.0**-52 * (size @ size.T) / (n - 2))
    errors = [
        (np.fliplr, a[0, 0]),
        (np.flipud, np.float64(2.0)),
        (lambda x: np.flip(x, (1, 1)), a),
        (lambda x: np.searchsorted(x, 0.5, sorter=[0, 1]), v),
        (lambda x: np.gradient(x, 1.0, 2.0), a),
        (lambda x: np.gradient(x, axis=(0, 0)), a),
        (lambda x: np.pad(x, {3: 1}), a),
        (lambda x: np.cov(x[0], ddof=1.5), a),
        (lambda x: np.bincount(x[0, 0].astype(np.int64), minlength=-1), a),
    ]
    for fn, x in errors:
        with pytest.raises(Exception) as want:
            fn(x)
        with pytest.raises(type(want.value)) as got:
            jit(fn)(x)
        assert str(want.value) in str(got.value), (str(got.value), str(want.value))


def test_python_numbers_are_arrays_where_numpys_functions_make_them_so():
    # np.inner, np.vdot, ufunc.outer and np.append make Python numbers arrays
    # of NumPy's default dtypes (not weak scalars): float32 with 2.0 is float64.
    f = np.arange(1.0, 4.0, dtype=np.float32)
    for fn in (
        lambda x: np.inner(x, 2.0),
        lambda x: np.vdot(x[:1], 2.0),
        lambda x: np.add.outer(x, 2.0),
        lambda x: np.multiply.outer(3, x),
        lambda x: np.append(x, 2.0),
    ):
        got, want = jit(fn)(f), fn(f)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    # np.trapezoid's dx in its own dtype (a NumPy float64 is strong), or an array.
    for fn in (
        lambda x: np.trapezoid(x, dx=np.float64(0.5)),
        lambda x: np.trapezoid(x, dx=0.5),
        lambda x: np.trapezoid(np.stack([x, x]), dx=np.array([[0.5], [2.0]])),
    ):
        got, want = jit(fn)(f), fn(f)  # two additions of at most 6: within 3 eps
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=3 * np.finfo(want.dtype).eps)


def test_sort_kinds_and_eigh_uplo_as_numpys():
    x = np.array([[3.0, 1.0, 2.0], [1.0, 5.0, 0.5], [2.0, 0.5, 4.0]])
    for fn in (
        lambda a: np.sort(a, kind="quick"),
        lambda a: np.argsort(a, axis=0, kind="Stable"),
        lambda a: np.sort(a, kind="h", axis=None),
        lambda a: np.sort(a, stable=True),
        lambda a: np.linalg.eigvalsh(a, UPLO="u"),
    ):
        got, want = jit(fn)(x), fn(x)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=16 * 2.0**-52, atol=16 * 2.0**-52 * 6)
    for fn in (
        lambda a: np.sort(a, kind="x"),
        lambda a: np.sort(a, kind="quicksort", stable=True),
        lambda a: np.linalg.eigh(a, UPLO="X"),
    ):
        with pytest.raises(ValueError) as want:
            fn(x)
        with pytest.raises(ValueError) as got:
            jit(fn)(x)
        assert str(got.value) == str(want.value)


def test_einsum_squeeze_and_expand_dims_as_numpys():
    """einsum, squeeze and expand_dims in the C++ core: values, shapes and
    errors as NumPy's, and squeeze/expand_dims are views (a write through them
    reaches the argument)."""
    r = np.random.default_rng(9)
    a, b = r.standard_normal((3, 4, 5)), r.standard_normal((3, 5, 2))
    for spec, ops in (
        ("ijk,ikl->ijl", (a, b)),
        ("ijk->kj", (a,)),
        ("ijk", (a,)),
        ("ijk,ikl", (a, b)),
        ("ij,kl->ijkl", (a[0], b[0])),
        ("ijk,ikl->l", (a, b)),
        ("iij->j", (a[:, :3, :3].transpose(1, 2, 0),)),
    ):
        got, want = jit(lambda *x, s=spec: np.einsum(s, *x))(*ops), np.einsum(spec, *ops)
        assert got.shape == want.shape and got.dtype == want.dtype, spec
        k = max(a.shape[1], a.shape[2]) * a.shape[0] * 4  # terms summed, at most
        np.testing.assert_allclose(got, want, rtol=0, atol=k * 2.0**-52 * np.abs(want).max())
    with pytest.raises(ValueError, match="collapsing index 'i' don't match"):
        jit(lambda x: np.einsum("iij->j", x))(a)
    with pytest.raises(ValueError, match="index 'k' has sizes 5 and 2"):
        jit(lambda x, y: np.einsum("ijk,ilk->ijl", x, y))(a, b)

    def views(x):
        s = np.squeeze(x[:, :1, 2:3])  # (3,): a view
        s *= 2
        e = np.expand_dims(x[0], (0, -1))  # (1, 4, 5, 1)
        e[0, 1, :, 0] = -1
        return np.squeeze(x, axis=()).sum()

    x, y = a.copy(), a.copy()
    got, want = jit(views)(x), views(y)
    np.testing.assert_array_equal(x, y)  # the writes through the views, exactly
    assert abs(got - want) <= 60 * 2.0**-52 * np.abs(y).sum()  # a sum of 60 terms
    with pytest.raises(ValueError, match="size not equal to one"):
        jit(lambda v: np.squeeze(v, axis=1))(a)
    with pytest.raises(np.exceptions.AxisError):
        jit(lambda v: np.expand_dims(v, 5))(a)


def test_moveaxis_stacking_trapezoid_digitize_isin_polyval_select_sinc_as_numpys():
    """More functions programs reach for, in the C++ core, against NumPy:
    values (sums of a few products: within 16 ulps), dtypes and shapes; moveaxis
    is a view."""
    r = np.random.default_rng(11)
    a = r.standard_normal((3, 4, 5))
    v = np.array([-2.0, -0.5, 0.0, 0.25, 1.0, 3.0])

    def close(fn, *args):
        same(fn, *args, bound=1e-300, rtol=16 * 2.0**-52)

    close(lambda x: np.moveaxis(x, [0, 1], [-1, 0]), a)
    close(lambda x: np.moveaxis(x, 2, 0), a)
    close(lambda x, y: np.column_stack([x[0, 0], y[:5], x[0].T]), a, v)
    close(lambda x, y: np.append(x, y), a, v)
    close(lambda x: np.append(x, x[:1], axis=0), a)
    close(lambda x: np.trapezoid(x, dx=0.5, axis=1), a)
    close(lambda x, y: np.trapezoid(x, y[:5]), a, np.cumsum(np.abs(v)))
    close(lambda x, b: np.digitize(x, b), a, np.array([-1.0, 0.0, 0.5]))
    close(lambda x, b: np.digitize(x, b, right=True), a, np.array([0.5, 0.0, -1.0]))
    close(lambda x: np.digitize(np.round(x), np.array([-1.0, 0.0, 1.0]), right=True), a)
    close(lambda x, t: np.isin(np.round(x), t), a, np.array([0.0, 1.0]))
    close(lambda x: np.isin(np.round(x), [2.0], invert=True), a)
    close(lambda x: np.isin(np.round(x), [], invert=True), a)
    close(lambda x: np.allclose(x, x * (1 + 1e-7)), a)
    close(lambda x: np.polyval(np.array([1.5, -2.0, 0.5]), x), a)
    close(lambda x: np.polyval(np.array([2, 1]), x.astype(np.int32)), a * 3)
    close(lambda x: np.select([x < -1, x > 1], [x, -x], 7.0), a)
    close(lambda x: np.select([x < 0], [x.astype(np.float32)], 1), a)
    close(np.sinc, v)
    close(lambda x: np.fix(x * 3), a)
    close(lambda x: np.fix(np.round(x * 3).astype(np.int64)), a)
    assert bool(jit(lambda x: np.array_equal(x, x.copy()))(a))
    assert not bool(jit(lambda x: np.array_equal(x, x[:2]))(a))
    nan = np.array([1.0, np.nan])
    assert not bool(jit(np.array_equal)(nan, nan))
    assert bool(jit(lambda x, y: np.array_equal(x, y, equal_nan=True))(nan, nan))
    with pytest.raises(ValueError, match="monotonically"):  # constant bins: while tracing
        jit(lambda x: np.digitize(x, np.array([0.0, 2.0, 1.0])))(a)
    with pytest.raises(ValueError, match="monotonically"):  # bins an argument: when it runs
        jit(np.digitize)(a, np.array([0.0, 2.0, 1.0]))

    def through(x):
        m = np.moveaxis(x, 0, -1)
        m[0, 0] = -1.0  # a view: writes x[:, 0, 0]
        return m.sum()

    x, y = a.copy(), a.copy()
    jit(through)(x)
    through(y)
    np.testing.assert_array_equal(x, y)


def test_split_parts_are_views_as_numpys():
    # Every part of split/array_split/hsplit... is a view: a write through
    # it is seen by the array (by sections and at indices alike).
    def f(a, b):
        p, q = np.split(a, 2)
        p[0] = 100.0
        r = np.array_split(a, 3, axis=1)
        r[2][-1] += 5.0
        s = np.array_split(b, [-1, 2, 9])  # Python's slice bounds
        s[0][1] = -1.0
        np.hsplit(a, [1])[1][:, 0] = 7.0
        return a, b, [x.shape for x in s]

    same(f, data((4, 5), np.float64), data((5,), np.float64))
    for fn, x, text in (
        (lambda x: np.split(x, 3), np.ones(4), "does not result in an equal division"),
        (lambda x: np.vsplit(x, 1), np.ones(4), "vsplit only works on arrays of 2 or more"),
        (lambda x: np.dsplit(x, 1), np.ones((2, 2)), "dsplit only works on arrays of 3 or more"),
        (lambda x: np.array_split(x, 0), np.ones(4), "number sections must be larger than 0"),
    ):
        with pytest.raises(ValueError, match=text):
            fn(x)
        with pytest.raises(ValueError, match=text):
            jit(fn)(x)


def test_angles_float_power_atleast_dstack_splits_rollaxis_broadcast_ediff1d_as_numpys():
    """Small functions, in the C++ core, against NumPy: dtypes (deg2rad of
    int8 is float16, of ints float64), values within 2 ulps (one rounded
    product with a constant NumPy may round in the loop's own type), shapes,
    and atleast_*d as views."""
    r = np.random.default_rng(13)
    a = r.standard_normal((3, 4))

    def close(fn, *args):  # within 2 eps of NumPy's, relative
        want = fn(*args)
        two = lambda w: 2 * eps(np.asarray(w).dtype)  # noqa: E731
        same(fn, *args, rtol=tuple(map(two, want)) if isinstance(want, tuple) else two(want))

    for dtype in (np.float64, np.float32, np.float16, np.int8, np.int64):
        x = (a * 100).astype(dtype)
        close(np.deg2rad, x)
        close(np.radians, x)
        close(np.rad2deg, x)
        close(np.degrees, x)
    close(np.float_power, np.abs(a), a)
    for z in (a + 1j * a[::-1], (a + 1j).astype(np.complex64)):  # the angle, then one product
        close(lambda x: np.angle(x, deg=True), z)
    close(lambda x: np.float_power(np.round(x * 3).astype(np.int32), 2), a)
    close(lambda x: np.atleast_1d(x[0, 0]), a)
    close(lambda x: np.atleast_2d(x[0], x), a)
    close(lambda x: np.atleast_3d(x[0], x, x[None]), a)
    close(lambda x: np.dstack([x, x * 2, x[:, :, None]]), a)
    close(lambda x: np.hsplit(x, 2), a)
    close(lambda x: np.vsplit(x, 3), a)
    close(lambda x: np.dsplit(x[:, :, None] * np.ones(2), 2), a)
    close(lambda x: np.rollaxis(x[None], 2), a)
    close(lambda x: np.rollaxis(x[None], 0, 3), a)
    close(lambda x, y: np.broadcast_arrays(x, y[0], 1.5)[:2], a, a)
    close(np.ediff1d, a)
    close(lambda x: np.ediff1d(x[0], to_end=[7, 8], to_begin=-1), a)

    def through(x):
        v = np.atleast_2d(x[0])
        v[0, 1] = 9.0  # a view: writes x[0, 1]
        return v.sum()

    x, y = a.copy(), a.copy()
    jit(through)(x)
    through(y)
    np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="shape mismatch"):
        jit(lambda x: np.broadcast_arrays(x, x[:2, :3]))(a)


def test_ufunc_accumulate_as_numpys():
    """ufunc.accumulate of add, multiply, maximum, minimum, logical_and and
    logical_or: sequential as NumPy's (so exact), in NumPy's dtypes (add and
    multiply take int64 for small integers, maximum keeps them), a nan carried
    on by maximum and minimum."""
    r = np.random.default_rng(21)
    f64 = r.standard_normal((4, 6))
    f64[1, 2] = f64[3, 0] = np.nan
    arrays = [
        f64,
        r.standard_normal((3, 5)).astype(np.float32),
        r.integers(-9, 9, (3, 5)).astype(np.int32),
        r.integers(0, 255, (3, 5)).astype(np.uint8),
        r.random((3, 5)) < 0.5,
        (r.standard_normal((3, 4)) + 1j * r.standard_normal((3, 4))).round(0),
    ]
    ufuncs = (np.add, np.multiply, np.maximum, np.minimum, np.logical_and, np.logical_or)
    for x in arrays:
        for u in ufuncs:
            for axis in (0, 1, -1):
                fn = lambda a, u=u, axis=axis: u.accumulate(a, axis=axis)  # noqa: E731
                got, want = jit(fn)(x), fn(x)
                assert got.dtype == want.dtype, (u, x.dtype, axis)
                np.testing.assert_array_equal(got, want, err_msg=f"{u.__name__} {x.dtype} {axis}")
    default_axis = lambda a: np.maximum.accumulate(a)  # noqa: E731  (axis 0)
    np.testing.assert_array_equal(jit(default_axis)(f64), default_axis(f64))

    def running_peak(prices, out):
        np.maximum.accumulate(prices, out=out)
        drawdown = 1.0 - prices / out
        return np.add.accumulate(prices, dtype=np.float32), drawdown.max()

    prices = np.abs(f64[0]) + 1
    out1, out2 = np.zeros(6), np.zeros(6)
    got, want = jit(running_peak)(prices, out1), running_peak(prices, out2)
    np.testing.assert_array_equal(out1, out2)
    assert got[0].dtype == want[0].dtype == np.float32
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
    for fn, arg, error in (
        (lambda a: np.add.accumulate(a, axis=None), f64, ValueError),
        (lambda a: np.maximum.accumulate(a[0, 0]), f64, TypeError),
        (lambda a: np.maximum.accumulate(a, axis=2), f64, np.exceptions.AxisError),
    ):
        with pytest.raises(error) as numpy_error:
            fn(arg)
        with pytest.raises(error, match=re.escape(str(numpy_error.value).split(":")[0])):
            jit(fn)(arg)
    with pytest.raises(tinymlir.TracingError, match="accumulate of add, multiply"):
        jit(lambda a: np.divide.accumulate(a))(f64)


FOLDED = (np.subtract, np.logical_xor, np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.fmax)
FOLDED += (np.fmin, np.maximum, np.minimum, np.logical_and, np.logical_or)


def test_reduce_and_accumulate_of_other_binary_ufuncs_as_numpys():
    """ufunc.reduce and ufunc.accumulate of subtract, logical_xor, the bitwise
    ones, fmax and fmin (and the logical ones with initial=): exactly NumPy's,
    bit for bit. The folds are exactly associative and commutative, so any
    order is NumPy's; subtract is a sequential sum of the negated first
    element and the rest, negated, which rounding's symmetry makes exact.
    NumPy's dtypes (logical_xor of ints is bool, bitwise ones keep int8),
    its TypeErrors (bitwise of floats, subtract of bools), and its
    ValueErrors (subtract over two axes, an empty fmax, where= without an
    identity)."""
    r = np.random.default_rng(23)
    x = r.standard_normal((3, 5))
    x[1, 2] = np.nan
    arrays = [
        r.integers(-50, 50, (4, 7)).astype(np.int8),
        r.integers(0, 255, (5, 3)).astype(np.uint8),
        x,
        r.standard_normal(9).astype(np.float32),
        r.random((2, 3, 4)) > 0.5,
        np.array([1.0, np.nan, 2, -np.inf, 3]),
        np.zeros((0, 3)),
        r.standard_normal(6) + 1j * r.standard_normal(6),
    ]
    keywords = [
        dict(axis=0),
        dict(axis=-1),
        dict(axis=None),
        dict(axis=(0, -1)),
        dict(axis=0, keepdims=True),
        dict(axis=0, initial=1),
        dict(axis=-1, where=np.array([True, False, True] * 3)[: x.shape[-1]]),
        dict(axis=-1, where=True, initial=0),
        dict(axis=-1, where=np.array([False, True, True, False, True]), initial=10),
    ]
    for u in FOLDED:
        for a in arrays:
            cases = [lambda a, kw=kw: u.reduce(a, **kw) for kw in keywords]
            cases += [lambda a: u.accumulate(a), lambda a: u.accumulate(a, axis=-1)]
            for fn in cases:
                try:
                    want = fn(a)
                except (TypeError, ValueError) as error:
                    with pytest.raises(type(error)):
                        jit(fn)(a)
                    continue
                got = jit(fn)(a)
                assert type(got) is type(want) and got.dtype == want.dtype, (u, a.dtype)
                np.testing.assert_array_equal(got, want, err_msg=f"{u.__name__} {a.dtype}")
    with pytest.raises(ValueError, match="'subtract' is not reorderable"):
        jit(lambda a: np.subtract.reduce(a, axis=None))(x)
    with pytest.raises(ValueError, match="reduction operation fmax which has no identity"):
        jit(lambda a: np.fmax.reduce(a))(np.zeros((0, 3)))
    with pytest.raises(tinymlir.TracingError, match="reduce of add, multiply"):
        jit(lambda a: np.divide.reduce(a))(x)


def test_reduceat_as_numpys():
    """ufunc.reduceat at indices known while tracing: NumPy's segments (a
    range where the next index is larger, else one element; the last to the
    end), its dtypes (add upcasts int8, subtract keeps it), dtype=, out=,
    other axes, and its IndexError. Integer sums are exact; float sums of a
    segment are within n·eps·Σ|x| (any order of n additions)."""
    a = np.arange(10, dtype=np.int8)
    m = np.random.default_rng(24).standard_normal((3, 8))
    cases = [
        (lambda x: np.add.reduceat(x, [0, 4, 1, 8]), a),
        (lambda x: np.add.reduceat(x > 3, [0, 4]), a),
        (lambda x: np.multiply.reduceat(x, [1, 3]), a),
        (lambda x: np.add.reduceat(x, np.arange(0, 10, 3)), a),
        (lambda x: np.add.reduceat(x, [3, 3, 3]), a),
        (lambda x: np.add.reduceat(x, []), a),
        (lambda x: np.add.reduceat(x, np.array([0, 2]), dtype=np.float32), a),
        (lambda x: np.subtract.reduceat(x, [0, 3]), a),
        (lambda x: np.logical_and.reduceat(x, [0, 3]), a),
        (lambda x: np.bitwise_or.reduceat(x, [0, 5, 2]), a),
        (lambda x: np.maximum.reduceat(x, [0, 2]), np.array([1.0, np.nan, 3])),
        (lambda x: np.add.reduceat(x, [0, 2, 5], axis=1), m),
        (lambda x: np.minimum.reduceat(x, [2, 0], axis=0), m),
    ]
    for fn, x in cases:
        got, want = jit(fn)(x), fn(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        if fn is cases[-2][0]:  # float sums of up to 3 elements, both within 2·eps·Σ|x|
            bound = 4 * eps(x.dtype) * np.add.reduceat(np.abs(x), [0, 2, 5], axis=1)
            assert np.all(np.abs(got - want) <= bound)
        else:
            np.testing.assert_array_equal(got, want)

    def segment_sums(x, out):
        np.add.reduceat(x, [0, 4], out=out)
        return out

    o1, o2 = np.zeros(2), np.zeros(2)
    jit(segment_sums)(m[0], o1), segment_sums(m[0], o2)
    assert np.all(np.abs(o1 - o2) <= 4 * eps(np.float64) * np.add.reduceat(np.abs(m[0]), [0, 4]))
    with pytest.raises(IndexError, match=re.escape("index 10 out-of-bounds in add.reduceat")):
        jit(lambda x: np.add.reduceat(x, [0, 10]))(a)
    with pytest.raises(tinymlir.TracingError, match="indices known while tracing"):
        jit(lambda x: np.add.reduceat(x, x[:2]))(a)


def test_joins_take_dtype_casting_out_and_axis_none_as_numpys():
    """np.concatenate (axis=None too), stack, hstack and vstack with dtype= and
    casting=, and out= of the joins, clip, round, dot, outer and median: the
    values, dtypes, the arrays written, what is returned, and NumPy's errors."""
    r = np.random.default_rng(22)
    x, y = r.standard_normal((2, 3)), r.standard_normal((2, 3)).astype(np.float32)

    def joins(a, b):
        flat = np.concatenate([a, b.T], axis=None)
        as32 = np.concatenate([a, b], dtype=np.float32)
        ints = np.stack([a, b], axis=1, dtype=np.int64, casting="unsafe")
        h = np.hstack([a, b], dtype=np.float32)
        v = np.vstack([a, b], dtype=np.float64)
        buf = np.zeros((4, 3), np.float32)
        into = np.concatenate([a, b], out=buf)
        return flat, as32, ints, h, v, buf, into is buf

    got, want = jit(joins)(x, y), joins(x, y)
    for g, w in zip(got[:-1], want[:-1]):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert got[-1] is want[-1] is True

    def outs(a, b):
        np.clip(a, -0.5, 0.5, out=a)
        prod = np.empty((2, 2))
        ret = np.dot(a, b.T, out=prod)
        rounded = np.zeros_like(a)
        np.round(a, 2, out=rounded)
        o = np.ones((6, 3))
        np.outer(a, b[0], out=o)
        m = np.zeros(3)
        np.median(a, axis=0, out=m)
        return prod, rounded, o, m, ret is prod

    a1, a2 = x.copy(), x.copy()
    b = x[::-1] * 2
    got, want = jit(outs)(a1, b), outs(a2, b)
    np.testing.assert_array_equal(a1, a2)  # clip's out= is the argument
    assert_close_dot = 2 * 3 * 2.0**-52 * (np.abs(a2) @ np.abs(b.T))  # 3 terms, 2 gamma_3
    np.testing.assert_array_less(np.abs(got[0] - want[0]), assert_close_dot + 1e-300)
    for g, w in zip(got[1:-1], want[1:-1]):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert got[-1] is want[-1] is True
    ints = np.arange(3)
    for fn, arg, error in (
        (lambda a: np.concatenate([a, a], out=np.zeros((4, 3)), dtype=np.float32), x, TypeError),
        (lambda a: np.concatenate([a, a], dtype=np.int32), x, TypeError),
        (lambda a: np.dot(a, a.T, out=np.zeros((2, 2), np.float32)), x, ValueError),
        (lambda a: np.dot(a, a.T, out=np.zeros((2, 3))), x, ValueError),
        (lambda a: np.clip(a, 0.5, 1.5, out=a), ints, TypeError),
    ):
        with pytest.raises(error) as numpy_error:
            fn(arg.copy())
        message = str(numpy_error.value)
        with pytest.raises(error, match=re.escape(message[: message.find("dtype(")])):
            jit(fn)(arg.copy())


def test_array_api_names_multi_dot_and_nan_accumulations_as_numpys():
    """NumPy 2's array-API functions (np.linalg.vector_norm, matrix_norm,
    matrix_transpose, vecdot, matvec, vecmat, linalg.outer/trace/diagonal/
    cross/matmul/tensordot, np.astype, np.unstack), np.linalg.multi_dot in
    NumPy's order (both orders of three, the chain table of four, 1-D ends),
    np.diagflat, np.tri*_indices_from and np.nancumsum/nancumprod: types,
    dtypes, shapes and values. A sum of K products is within gamma_K of the
    exact one on either side, so 2 gamma_K (|a| . |b| ...) apart (bound_of
    the same function of |operands|); a norm of K terms within 2 (K + 2) eps
    of itself; selections and sequential sums of the same terms are exact."""
    r = np.random.default_rng(23)
    A, B, C, D = r.random((3, 4)), r.random((4, 5)), r.random((5, 2)), r.random((2, 6))
    tall, wide = r.random((6, 2)), r.random((2, 6))
    v4, v3 = r.random(4), r.random(3)
    x = r.random((2, 3, 4))
    x[0, 1, 2] = np.nan
    z = r.random((3, 4)) + 1j * r.random((3, 4))
    e = 2.0**-52

    def products(k):
        return lambda want, fn, args: 2 * k * e * np.abs(fn(*[np.abs(a) for a in args]))

    def norm(k):
        return lambda want, fn, args: 2 * (k + 2) * e * np.abs(want)

    exact = lambda want, fn, args: 0.0  # noqa: E731
    cases = [
        (lambda a, b, c: np.linalg.multi_dot([a, b, c]), (A, B, C), products(9)),  # (AB)C
        (lambda a, b, c: np.linalg.multi_dot([a, b, c]), (tall, wide, tall), products(8)),  # A(BC)
        (lambda a, b, c, d: np.linalg.multi_dot([a, b, c, d]), (A, B, C, D), products(11)),
        (lambda v, b, c, w: np.linalg.multi_dot([v, b, c, w]), (v4, B, C, D[:, 0]), products(11)),
        (lambda a: np.linalg.vector_norm(a), (x[1],), norm(12)),
        (lambda a: np.linalg.vector_norm(a, axis=(0, 2), keepdims=True, ord=1), (x[1:],), norm(4)),
        (lambda a: np.linalg.vector_norm(a, axis=1, ord=np.inf), (A,), exact),
        (lambda a: np.linalg.matrix_norm(a), (A,), norm(12)),
        (lambda a: np.linalg.matrix_norm(a, ord=1, keepdims=True), (A,), norm(3)),
        (lambda a: np.matrix_transpose(a), (x,), exact),
        (lambda a: np.linalg.matrix_transpose(a), (A,), exact),
        (lambda a, b: np.linalg.matmul(a, b), (A, B), products(4)),
        (lambda a, b: np.vecdot(a, b), (z, z), products(4)),
        (lambda a, b: np.vecdot(a, b, axis=0), (A, A), products(3)),
        (lambda a, b: np.linalg.vecdot(a, b), (A, v4), products(4)),
        (lambda a, b: np.matvec(a, b), (A, v4), products(4)),
        (lambda a, b: np.vecmat(a, b), (v4, B), products(4)),
        (lambda a, b: np.linalg.outer(a, b), (v4, v3), exact),
        (lambda a: np.linalg.trace(a, offset=1), (x[1:],), products(3)),
        (lambda a: np.linalg.diagonal(a), (x,), exact),
        (lambda a, b: np.linalg.cross(a, b), (r.random((2, 3)), v3), products(2)),
        (lambda a, b: np.linalg.tensordot(a, b, axes=1), (A, B), products(4)),
        (lambda a: np.astype(a, np.float32), (A,), exact),
        (lambda a: np.diagflat(a, 1), (A[:2, :2],), exact),
        (lambda a: np.unstack(a, axis=1), (x,), exact),
        (lambda a: a[np.triu_indices_from(a, 1)], (A[:, :3],), exact),
        (lambda a: np.tril_indices_from(a), (A,), exact),
        (lambda a: np.nancumsum(a, axis=2), (x,), exact),
        (lambda a: np.nancumprod(a), (x,), exact),
        (lambda a: np.nancumsum(a), (np.arange(5, dtype=np.int32),), exact),
    ]
    for fn, args, bound in cases:
        got, want = jit(fn)(*args), fn(*args)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.shape(g) == np.shape(w), fn
            assert np.asarray(g).dtype == np.asarray(w).dtype, fn
            if bound is exact:
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_array_less(np.abs(g - w), bound(w, fn, args) + 1e-300)
    for fn, args in (
        (lambda a, b: np.vecdot(a, b), (A, v3)),
        (lambda a, b: np.linalg.multi_dot([a, b, b]), (x, B)),
        (lambda a: np.linalg.multi_dot([a]), (A,)),
    ):
        with pytest.raises(Exception) as numpy_error:
            fn(*args)
        with pytest.raises(type(numpy_error.value), match=re.escape(str(numpy_error.value))):
            jit(fn)(*args)


def test_unravel_index_and_ravel_multi_index_as_numpys():
    """np.unravel_index (of a traced argmax, the common use) and
    np.ravel_multi_index in both orders and every mode: NumPy's int64 values
    and scalar-or-array types; an index out of range is NumPy's ValueError,
    checked when the kernel runs for traced ones (exact arithmetic)."""
    x = np.random.default_rng(24).random((3, 4))
    i2, j2 = np.array([0, 3]), np.array([1, -1])
    cases = [
        (lambda a: np.unravel_index(np.argmax(a), a.shape), (x,)),
        (lambda a: np.unravel_index(7, a.shape), (x,)),
        (lambda i: np.unravel_index(i, (3, 4), order="F"), (np.array([[1, 7], [0, 11]]),)),
        (lambda i, j: np.ravel_multi_index((i, j), (3, 4)), (np.array([0, 2]), np.array([1, 3]))),
        (lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode="wrap"), (i2, j2)),
        (lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode="clip", order="F"), (i2, j2)),
        (lambda: np.ravel_multi_index((2, 1), (3, 4)), ()),
    ]
    for fn, args in cases:
        got, want = jit(fn)(*args), fn(*args)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(g, w)
    for fn, args in (
        (lambda i: np.unravel_index(i, (3, 4)), (np.array([1, 12]),)),
        (lambda i: np.unravel_index(i, (3, 4)), (np.array([-1, 2]),)),
        (lambda i, j: np.ravel_multi_index((i, j), (3, 4)), (i2, np.array([1, 1]))),
    ):
        with pytest.raises(ValueError):
            fn(*args)
        with pytest.raises(ValueError, match="index out of bounds"):
            jit(fn)(*args)
    with pytest.raises(ValueError, match="index 12 is out of bounds for array with size 12"):
        jit(lambda: np.unravel_index(12, (3, 4)))()
    with pytest.raises(TypeError, match="only int indices permitted"):
        jit(lambda a: np.unravel_index(a[0, 0], (3, 4)))(x)


def test_insert_and_put_as_numpys():
    """np.insert at positions known while tracing (one int, one position, a
    list, repeated and negative ones, a slice, other axes, flattened) and
    np.put (repeats: the last wins; values cycled; modes; traced positions):
    the results, the arrays put into, dtypes (values cast to the array's),
    and NumPy's IndexErrors."""
    a, m = np.arange(5.0), np.arange(12.0).reshape(3, 4)
    for fn, x in [
        (lambda x: np.insert(x, 1, 9), a),
        (lambda x: np.insert(x, [1, 3], [7, 8]), a),
        (lambda x: np.insert(x, [3, 1, 3], [7, 8, 9]), a),  # stably shifted
        (lambda x: np.insert(x, -1, 2.5), np.arange(5)),  # cast to int64
        (lambda x: np.insert(x, 1, [1, 2, 3], axis=1), m),  # an int: a column
        (lambda x: np.insert(x, [1], [1, 2, 3], axis=1), m),  # a list: rows of it
        (lambda x: np.insert(x, slice(0, 4, 2), 0.0, axis=1), m),
        (lambda x: np.insert(x, 2, [5, 6]), m),  # flattened
        (lambda x: np.insert(x, 5, x[-1]), a),
        (lambda x: np.insert(x, [], 1), a),
    ]:
        same(fn, x)
    for obj in (7, [7], [1, 9]):
        with pytest.raises(IndexError) as numpy_error:
            np.insert(a, obj, 1)
        with pytest.raises(IndexError, match=re.escape(str(numpy_error.value))):
            jit(lambda x, obj=obj: np.insert(x, obj, 1))(a)

    def put(ind, v, mode="raise"):
        def fn(x):
            np.put(x, ind, v, mode=mode)
            return x * 1

        return fn

    for fn in (
        put([0, 2], [-1, -2]),
        put([0, 2, 0], 7.5),  # the last of a repeated index; 7.5 into ints is 7
        put([9, -1], [1, 2], "wrap"),
        put([9], [1], "clip"),
        put([0, 1, 2, 3], [1, 2]),  # values cycled
        put([], [1]),
    ):
        same(fn, m.copy())
        same(fn, np.arange(6))

    def put_at_max(x):
        np.put(x, np.argmax(x, axis=1) + [0, 4, 8], 0.0)  # traced positions

    same(put_at_max, np.random.default_rng(25).standard_normal((3, 4)))
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 6"):
        jit(put([9], [1]))(np.arange(6))


def test_sliding_window_view_as_numpys():
    """np.lib.stride_tricks.sliding_window_view: NumPy's values over one and
    several axes (a repeated axis: windows of windows), read-only as NumPy's
    (a write is its ValueError), a view that shows later writes to its base,
    returned as NumPy's own view of the argument, and NumPy's errors."""
    swv = np.lib.stride_tricks.sliding_window_view
    a, m = np.arange(7.0), np.arange(20.0).reshape(4, 5)
    for fn, x in [
        (lambda x: swv(x, 3).mean(axis=-1), a),  # a moving average
        (lambda x: swv(x * 2, (2, 3)), m),
        (lambda x: swv(x, 2, axis=0).sum(axis=-1), m),
        (lambda x: swv(x, (2, 2), axis=(1, 1)) + 0, m),
    ]:
        same(fn, x)

    def later_write(x):
        w = swv(x, 3)
        x[0] = 100.0
        return w.sum(axis=1)

    same(later_write, a)
    got = jit(lambda x: swv(x, (2, 2)))(m)
    assert np.shares_memory(got, m) and not got.flags.writeable
    np.testing.assert_array_equal(got, swv(m, (2, 2)))

    def write(x):
        swv(x, 3)[0, 0] = 1.0

    for fn, error in (
        (write, "assignment destination is read-only"),
        (lambda x: swv(x, 8), "window shape cannot be larger than input array shape"),
        (lambda x: swv(x, (2, 2)), "must provide window_shape for all dimensions"),
        (lambda x: swv(x, -1), "cannot contain negative values"),
    ):
        with pytest.raises(ValueError, match=re.escape(error)):
            fn(a.copy())
        with pytest.raises(ValueError, match=re.escape(error)):
            jit(fn)(a.copy())


def test_apply_along_axis_as_numpys():
    """np.apply_along_axis: NumPy's algorithm traced (the function called on
    each 1-D slice, in NumPy's order), results of any rank placed where
    NumPy's buffer puts them, extra arguments, a Python number result, and
    NumPy's errors. Each slice's arithmetic is NumPy's, so the results are
    exact (a sum of five: within 5·eps·Σ|x|, any order)."""
    m = np.random.default_rng(26).standard_normal((3, 4, 5))
    same(lambda x: np.apply_along_axis(np.sum, 0, x), m, bound=sum_bound(m, axis=0))
    for fn in (
        lambda x: np.apply_along_axis(lambda v: v.max() - v.min(), 1, x),
        lambda x: np.apply_along_axis(lambda v: np.sort(v)[::-1], -1, x),
        lambda x: np.apply_along_axis(lambda v: (v > 0).sum(), 0, x),
        lambda x: np.apply_along_axis(np.diff, 2, x),
        lambda x: np.apply_along_axis(lambda v, k: v * k, 0, x, 3),
        lambda x: np.apply_along_axis(lambda v: 1.5, 0, x),
        lambda x: np.apply_along_axis(lambda v: np.outer(v, v), 1, x[0]),
    ):
        same(fn, m)
    with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of bounds"):
        jit(lambda x: np.apply_along_axis(np.sum, 3, x))(m)
    with pytest.raises(ValueError, match="any iteration dimensions are 0"):
        jit(lambda x: np.apply_along_axis(np.sum, 0, x))(np.zeros((2, 0)))


def test_r_and_c_of_traced_arrays_as_numpys():
    """np.r_ and np.c_ holding traced arrays run NumPy's own indexing code
    over them: scalars, lists, slices (a complex step a linspace), string
    directives, NumPy's result dtype, `from numpy import r_` too. Without a
    traced item they are NumPy's."""
    from numpy import r_

    v, m = np.arange(4.0), np.ones((3, 2))
    for fn in (
        lambda x: np.r_[0, np.cumsum(x)],
        lambda x: np.r_[x, 0:3, x * 2],
        lambda x: np.r_[x[:2], [7, 8], 1.5],
        lambda x: np.c_[x, x**2],
        lambda x: np.c_[m, x[:3]],
        lambda x: np.r_["0,2", x, x],
        lambda x: np.r_["-1", x.reshape(2, 2), x.reshape(2, 2)],
        lambda x: np.r_[x.astype(np.float32), np.float32(1)],
        lambda x: np.r_[x, 0:1:5j],
        lambda x: r_[x, x],
        lambda x: np.r_[0:3] * x[:3],
    ):
        same(fn, v)
    assert np.r_[1, 2].dtype == np.int64  # NumPy's own outside a trace


def test_vander_and_polyfit_as_numpys():
    """np.vander (NumPy's running products: exact) and np.polyfit (NumPy's
    scaled least squares, weights, a 2-D y, float32). A least-squares
    solution moves by at most ~eps·(κ + κ²·|r|/(|A||c|))·|c| for a backward
    error eps in A and b (Golub and Van Loan, 5.3): with both solutions
    within it, |c - c_np| <= 2·m·n·eps·(κ·|c| + κ²·|r|/|A|), κ the scaled
    matrix's condition number."""
    r = np.random.default_rng(27)
    x = np.linspace(-1.0, 1.0, 40)
    y = 1.0 - 2.0 * x + 0.5 * x**3 + 0.01 * r.standard_normal(40)
    for fn, a in (
        (lambda a: np.vander(a), x[:5]),
        (lambda a: np.vander(a, 3, increasing=True), x[:5]),
        (lambda a: np.vander(a, 4), np.arange(5)),
    ):
        same(fn, a)
    for x1, y1, deg, w in (
        (x, y, 3, None),
        (x, y, 1, None),
        (x, np.stack([y, 2 * y + 1], axis=1), 2, None),
        (x, y, 3, 1.0 + r.random(40)),
        (x.astype(np.float32), y.astype(np.float32), 2, None),
    ):
        got = jit(lambda a, b: np.polyfit(a, b, deg, w=w))(x1, y1)
        want = np.polyfit(x1, y1, deg, w=w)
        assert got.dtype == want.dtype and got.shape == want.shape
        lhs = np.vander(x1.astype(np.float64), deg + 1) * (1 if w is None else w[:, None])
        scaled = lhs / np.sqrt((lhs * lhs).sum(axis=0))
        kappa = np.linalg.cond(scaled)
        rhs = y1 if w is None else (y1 * w if y1.ndim == 1 else y1 * w[:, None])
        resid = np.linalg.norm(rhs - lhs @ want.astype(np.float64))
        m, n = lhs.shape
        bound = 2 * m * n * eps(x1.dtype) * (kappa * np.linalg.norm(want) + kappa**2 * resid)
        assert np.linalg.norm(got.astype(np.float64) - want) <= bound, (deg, x1.dtype)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        jit(lambda a, b: np.polyfit(a, b, -1))(x, y)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        jit(lambda a, b: np.polyfit(a, b[1:], 2))(x, y)
