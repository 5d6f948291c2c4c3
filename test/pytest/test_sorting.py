"""Sorts, accumulations and extreme indices under @jit, against NumPy.

np.sort / argsort (stable), cumsum / cumprod (sequential, as NumPy's
accumulate, so bit for bit), argmax / argmin / nanargmax (the first extreme,
nan first), searchsorted, median / percentile / quantile (linear), and the
ndarray methods. Integers and selections are exact; so are sorts of floats and
the sequential accumulations, which compute what NumPy computes in its order.
"""

import re
import warnings

import numpy as np
import pytest
from conftest import assert_same

import tinymlir
from tinymlir import jit

DTYPES = ["float64", "float32", "float16", "int8", "int64", "uint16", "uint64", "bool"]


def data(dtype, rng, shape=(5, 7)):
    x = rng.standard_normal(shape) * 4
    if np.dtype(dtype).kind == "f":
        x[1, 3] = np.nan
        x[2, :3] = x[2, 3]  # ties, whose order a stable sort keeps
        return x.astype(dtype)
    if dtype == "bool":
        return x > 0
    return np.abs(x).astype(dtype) if np.dtype(dtype).kind == "u" else x.astype(dtype)


CASES = {
    "sort": lambda a: np.sort(a),
    "sort axis 0": lambda a: np.sort(a, axis=0),
    "sort flat": lambda a: np.sort(a, axis=None, kind="stable"),
    "argsort": lambda a: np.argsort(a, kind="stable"),
    "argsort axis 0": lambda a: np.argsort(a, axis=0, stable=True),
    "argsort flat": lambda a: np.argsort(a, axis=None, kind="stable"),
    "cumsum": np.cumsum,
    "cumsum axis 1": lambda a: np.cumsum(a, axis=1),
    "cumprod axis 0": lambda a: np.cumprod(a, axis=0),
    "cumsum dtype": lambda a: (
        np.cumsum(a, axis=1, dtype=np.float32),
        np.cumsum(a, dtype=np.int16),
    ),
    "argmax": np.argmax,
    "argmax axis 1": lambda a: np.argmax(a, axis=1),
    "argmin keepdims": lambda a: np.argmin(a, axis=0, keepdims=True),
    "methods": lambda a: (
        a.cumsum(axis=0),
        a.argmax(axis=0),
        a.argsort(axis=1, kind="stable"),
        a.cumprod(),
        a.argmin(),
    ),
    "searchsorted": lambda a: (
        np.searchsorted(np.sort(a[0]), a[1:3]),
        np.searchsorted(np.sort(a[0]), a[2], side="right"),
        np.sort(a[0]).searchsorted(a[3, 0]),
    ),
    "sorter": lambda a: np.searchsorted(a[0], a[1], sorter=np.argsort(a[0], kind="stable")),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_row_kernels_are_numpys_bit_for_bit(case, dtype, rng):
    a = data(dtype, rng)
    fn = CASES[case]
    with np.errstate(all="ignore"):
        want = fn(a)
    assert_same(want, jit(fn)(a), path=f"{case} of {dtype}")


def test_nanargmax_median_and_quantiles(rng):
    x = rng.standard_normal((6, 9))
    x[2, 4] = np.nan
    for fn in (lambda a: np.nanargmax(a, axis=1), lambda a: np.nanargmin(a, axis=0)):
        assert_same(fn(x), jit(fn)(x))
    # A slice of nans alone: NumPy's ValueError, raised when the kernel runs
    # (it had been index 0); the same kernel gives NumPy's answer otherwise.
    rows, columns, whole = x.copy(), x.copy(), np.full_like(x, np.nan)
    rows[1], columns[:, 3] = np.nan, np.nan
    for fn, y in (
        (lambda a: np.nanargmax(a, axis=1), rows),
        (lambda a: np.nanargmin(a), whole),
        (lambda a: np.nanargmax(a, axis=0, keepdims=True), columns),
    ):
        f = jit(fn)
        assert_same(fn(x), f(x))
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            fn(y)
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            f(y)
    # The middle values (their mean), and NumPy's lerp from both ends: the same
    # operations in the same order, so equal; nan where a slice holds one.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for dtype in ("float64", "float32", "int16"):
            a = (x * 10).astype(dtype) if dtype == "int16" else x.astype(dtype)
            for fn in (
                np.median,
                lambda v: np.median(v, axis=1),
                lambda v: np.median(v[:, :8], axis=0),
                lambda v: np.percentile(v, [10, 50, 90], axis=0),
                lambda v: np.quantile(v, 0.3, axis=1, keepdims=True),
                lambda v: np.percentile(v, 37.5),
                lambda v: np.quantile(v[:, :4], np.float64(0.25)),
                lambda v: np.quantile(v, np.float32(0.3), axis=0),  # q's dtype promotes
                lambda v: np.quantile(v, [0, 1], axis=1),  # integer q: the elements
                lambda v: np.quantile(v, 1),
                lambda v: np.percentile(v, np.array([25, 75], np.int32), axis=0),
                lambda v: np.percentile(v, np.float32(40.0)),
            ):
                assert_same(fn(a), jit(fn)(a), path=f"{dtype} {fn}")
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        jit(lambda v: np.quantile(v, 1.5))(x)


def test_in_place_sort_writes_the_argument(rng):
    def sort_rows_then_columns(a):
        a.sort()
        a[1:].sort(axis=0)
        return a[:, 0].sum()

    x = rng.standard_normal((5, 6))
    mine = x.copy()
    assert_same(sort_rows_then_columns(x), jit(sort_rows_then_columns)(mine))
    assert_same(x, mine)


def test_errors_name_the_function(rng):
    with pytest.raises(ValueError, match=r"\[argmax\] attempt to get argmax of an empty sequence"):
        jit(np.argmax)(np.ones((3, 0)))
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else IndexError):
        np.sort(np.float64(1.0), axis=0)
    with pytest.raises(IndexError, match="out of bounds for array of dimension 0"):
        jit(lambda v: np.sort(v.sum()))(np.ones(3))
    with pytest.raises(tinymlir.TracingError, match="order="):
        jit(lambda v: np.sort(v, order="x"))(np.ones(3))
    # empty slices are NumPy's
    assert_same(np.sort(np.ones((0, 3))), jit(np.sort)(np.ones((0, 3))))
    assert_same(np.cumsum(np.ones(0, np.int8)), jit(np.cumsum)(np.ones(0, np.int8)))


def test_programs_with_sorts_and_scans(rng):
    """A k-nearest-neighbour vote with argsort, a moving average from a
    cumulative sum, and a rank transform."""

    def knn_vote(train, labels, query, k):
        d = ((query[:, None, :] - train[None, :, :]) ** 2).sum(axis=-1)
        nearest = np.argsort(d, axis=1, kind="stable")[:, :k]
        votes = labels[nearest]  # (queries, k)
        counts = np.zeros((query.shape[0], 3), np.int64)
        for c in range(3):
            counts[:, c] = (votes == c).sum(axis=1)
        return np.argmax(counts, axis=1)

    train = rng.standard_normal((40, 3))
    labels = rng.integers(0, 3, 40)
    query = rng.standard_normal((10, 3))
    assert_same(knn_vote(train, labels, query, 5), jit(knn_vote)(train, labels, query, 5))

    def moving_average(x, w):
        c = np.cumsum(x)
        out = np.empty(x.shape[0] - w + 1)
        out[0] = c[w - 1]
        out[1:] = c[w:] - c[:-w]
        return out / w

    x = rng.standard_normal(200)
    assert_same(moving_average(x, 8), jit(moving_average)(x, 8))

    def ranks(x):
        order = np.argsort(x, kind="stable")
        r = np.empty_like(order)
        r[order] = np.arange(x.shape[0])
        return r, np.searchsorted(np.sort(x), x)

    assert_same(ranks(x), jit(ranks)(x))


def test_computed_positions_are_checked_when_the_kernel_runs(rng):
    """Positions computed inside the function (not known before the call) are
    checked by the take and put kernels: NumPy's IndexError, and an argument
    the function writes is left as it was."""
    x = rng.standard_normal(5)
    read = jit(lambda a, k: a[np.argsort(a, kind="stable") + k])
    assert_same(x[np.argsort(x, kind="stable") - 5], read(x, -5))  # negative: from the end
    with pytest.raises(IndexError) as numpys:
        x[np.argsort(x, kind="stable") + 3]
    with pytest.raises(IndexError) as mine:
        read(x, 3)
    assert str(mine.value) == str(numpys.value)  # the first position out of range, as NumPy's

    def write(a, k):
        a[np.argsort(a, kind="stable") + k] = 0.0

    mine = x.copy()
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 5"):
        jit(write)(mine, 1)
    assert_same(x, mine)
    table = rng.standard_normal((4, 3))
    ids = np.array([[3, 0], [1, 1]])
    fn = lambda t, i: (t[i * 1], t[:, i[0] * 1 - 1])  # noqa: E731  (computed ids, any rank)
    assert_same(fn(table, ids), jit(fn)(table, ids))


def test_computed_positions_write_along_any_axis(rng):
    def scatter_columns(a, order):
        a[:, order] = a[:, ::-1] * 10  # column order[j] takes reversed column j
        a[order[::2]] += 1  # rows, a repeated index once each (NumPy's buffering)
        return a[0] * 1.0

    x = rng.standard_normal((5, 5))
    order = rng.permutation(5)
    mine = x.copy()
    assert_same(
        scatter_columns(x, np.argsort(np.argsort(order))),
        jit(lambda a, o: scatter_columns(a, np.argsort(np.argsort(o))))(mine, order),
    )
    assert_same(x, mine)


def test_computed_positions_on_several_axes(rng):
    """Computed int arrays beside other arrays and ints (npbench's unstructured
    stencils: A[i + nb[i, j, 0], j, k + nb[i, j, 1]]): broadcast together,
    each checked on its own axis, the result's axes where NumPy puts them."""
    a = rng.standard_normal((5, 6, 7))
    nb = rng.integers(-2, 3, (5, 6, 2))

    def read(a, nb):
        i, j, k = np.ogrid[2:3, 1:5, 2:5]
        d = nb[..., 0]
        return (
            a[i + nb[i, j, 0], j, k + nb[i, j, 1]],  # adjacent: in place
            a[d, :, d[:, 2:3]],  # apart: the broadcast axes first
            a[1:, d[1:4, 0], 2:5],  # basic slices beside them
            a[d[0], 2, :],
        )

    def write(a, nb):
        d = nb[..., 0]
        a[d, 1, d[:, 2:3]] = -1.0
        a[2:, 0, d[2:, 1]] += 5.0
        a[:, d[0], d[1]] = np.arange(6.0)
        return a

    got = jit(read)(a, nb)
    for g, e in zip(got, read(a, nb)):
        assert g.shape == e.shape
        assert_same(e, g)
    mine = a.copy()
    assert_same(write(a.copy(), nb), jit(write)(mine, nb))
    oob = lambda a, nb: a[nb[..., 0] * 10, 1, nb[..., 1]]  # noqa: E731
    with pytest.raises(IndexError) as numpys:
        oob(a, nb)
    with pytest.raises(IndexError) as ours:
        jit(oob)(a, nb)
    assert str(ours.value) == str(numpys.value)


def test_bincount_with_minlength_as_the_bound(rng):
    ids = rng.integers(0, 6, 50)
    w = rng.standard_normal(50)
    for fn in (
        lambda i: np.bincount(i, minlength=8),
        lambda i: np.bincount(i.astype(np.uint8), minlength=6),
        lambda i: np.bincount(i, weights=w, minlength=6),
        lambda i: np.bincount(i > 2, minlength=2),
    ):
        want = fn(ids)
        got = jit(fn)(ids)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=50 * np.finfo(np.float64).eps)
    with pytest.raises(ValueError, match=r"\[bincount\] id 6 is at or past minlength 6"):
        jit(lambda i: np.bincount(i + 1, minlength=6))(ids)
    with pytest.raises(ValueError, match="must have no negative elements"):
        jit(lambda i: np.bincount(i - 1, minlength=6))(ids)
    with pytest.raises(tinymlir.TracingError, match="minlength= only"):
        jit(np.bincount)(ids)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        jit(lambda v: np.bincount(v, minlength=3))(w)


def complex_data(dtype):
    """Complex numbers with ties in the real part, equal elements, and nan in
    either part: NumPy's lexicographic order, nan last (R + Rj < R + nanj <
    nan + Rj < nan + nanj)."""
    nan, inf = np.nan, np.inf
    row = [3 + 1j, 1 + 5j, 3 - 2j, 1 + 1j, -inf + 0j, 1 + 5j, complex(1, nan), 2 + inf * 1j]
    rows = [row, row[::-1], [complex(nan, 1), 0j, complex(nan, nan), complex(0, nan)] * 2]
    return np.array(rows, dtype)


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_numbers_sort_and_compare_lexicographically(dtype):
    z = complex_data(dtype)
    clean = z[:2, [0, 1, 2, 3, 5, 7]]  # no nan: the extremes are numbers
    cases = {
        "sort": (lambda a: np.sort(a), z),
        "sort axis 0": (lambda a: np.sort(a, axis=0), z),
        "argsort stable": (lambda a: np.argsort(a, kind="stable"), z),
        "argmax": (lambda a: np.argmax(a, axis=1), z),  # the first nan, where there is one
        "argmin": (lambda a: np.argmin(a, axis=1), z),
        "argmax all": (lambda a: np.argmax(a), clean),
        "max": (lambda a: np.max(a, axis=1), z),
        "min keepdims": (lambda a: np.min(a, axis=1, keepdims=True), clean),
        "max all": (lambda a: a.max(), clean),
        "min axis 0": (lambda a: a.min(axis=0), z),
        "searchsorted": (lambda a: np.searchsorted(np.sort(a[0]), a[1]), z),
    }
    for what, (fn, x) in cases.items():
        got, want = jit(fn)(x), fn(x)
        assert_same(want, got, path=f"{what} of {dtype}")
        if np.iscomplexobj(want):  # each part: which nan came first matters
            assert_same(np.real(want), np.real(got), path=f"{what} of {dtype}, real parts")
            assert_same(np.imag(want), np.imag(got), path=f"{what} of {dtype}, imaginary parts")
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        jit(np.max)(np.zeros((0,), dtype))


@pytest.mark.parametrize(
    "dtype", ["float64", "float32", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
)
def test_sorts_of_extremes_signed_zeros_and_nans_are_numpys(dtype):
    """The vectorized sorts' keys: -0.0 equal to 0.0 (a stable argsort keeps
    their order), every nan after inf and equal to the others (nans of other
    payloads and signs included), and integers at both ends of their range."""
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    if np.dtype(dtype).kind == "f":
        negative_nan = -np.array(np.nan, dtype)
        values = [0.0, -0.0, np.inf, np.nan, -np.inf, info.max, -info.max, info.tiny, -0.0]
        values += [negative_nan, 0.0, 1.0, np.nan, -info.tiny, 1.0]
    else:
        values = [info.max, info.min, 0, 1, info.max, info.min + 1, 7, 0, info.max - 1]
    x = np.array(values * 3, dtype)
    sort = jit(lambda a: (np.sort(a), np.argsort(a, kind="stable")))
    got = sort(x)
    # np.sort is not stable: which of equal keys (-0.0 and 0.0, nans of either sign)
    # comes first is its own, so the signs are counted below rather than compared
    assert_same((np.sort(x), np.argsort(x, kind="stable")), got, path=dtype, signed_zeros=False)
    # the values themselves, moved: as many negative zeros (and nans) as given
    assert np.signbit(got[0]).sum() == np.signbit(x).sum()


def test_cumulative_sum_and_prod_as_numpys(rng):
    """NumPy 2.1's cumulative_sum/cumulative_prod: the identity first with
    include_initial, axis required above one dimension, dtype= as cumsum's;
    sequential as cumsum, so exact."""
    x = rng.standard_normal((3, 4))
    i = rng.integers(-3, 4, (5,)).astype(np.int8)
    cases = (
        lambda a, b: np.cumulative_sum(a, axis=1, include_initial=True),
        lambda a, b: np.cumulative_prod(a, axis=0),
        lambda a, b: np.cumulative_sum(a, axis=-1, dtype=np.float32),
        lambda a, b: np.cumulative_sum(b, include_initial=True),
        lambda a, b: np.cumulative_prod(b, include_initial=True),
        lambda a, b: np.cumulative_sum(a[0, 0]),
    )
    for k, fn in enumerate(cases):
        assert_same(fn(x, i), jit(fn)(x, i), path=f"case {k}")
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        jit(lambda a: np.cumulative_sum(a))(x)


def test_partition_and_argpartition_are_valid_partitions_with_numpys_kth():
    """np.partition and np.argpartition are full stable sorts: every kth's
    element is NumPy's, everything before it is no larger and everything
    after no smaller (NumPy's contract; the order within the sides is
    NumPy's introselect's own). kth out of bounds is NumPy's ValueError."""
    r = np.random.default_rng(41)
    x = r.standard_normal((3, 9))
    for kth, axis in ((4, -1), ([1, 6], 1), (-2, 0), (5, None)):
        got = jit(lambda a, k=kth, ax=axis: np.partition(a, k, axis=ax))(x)
        want = np.partition(x, kth, axis=axis)
        idx = jit(lambda a, k=kth, ax=axis: np.argpartition(a, k, axis=ax))(x)
        assert got.shape == want.shape and got.dtype == want.dtype and idx.dtype == np.int64
        flat = x.reshape(-1) if axis is None else x
        picked = np.take_along_axis(flat, idx, axis=-1 if axis is None else axis)
        for p, q in ((got, want), (picked, want)):
            p, q = (
                np.moveaxis(p, -1 if axis is None else axis, -1),
                np.moveaxis(q, -1 if axis is None else axis, -1),
            )
            for k in np.atleast_1d(kth):
                np.testing.assert_array_equal(p[..., k], q[..., k])
                assert (p[..., :k] <= p[..., k : k + 1]).all() and (
                    p[..., k:] >= p[..., k : k + 1]
                ).all()
    for kth in (9, -10):
        with pytest.raises(ValueError) as numpy_error:
            np.partition(x, kth)
        with pytest.raises(ValueError, match=re.escape(str(numpy_error.value))):
            jit(lambda a, k=kth: np.partition(a, k))(x)
