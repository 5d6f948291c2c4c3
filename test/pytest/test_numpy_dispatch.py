"""Unmodified NumPy code on traced values: operators, methods, __array_ufunc__,
__array_function__, indexing; and the errors for what cannot be traced."""

import os

import numpy as np
import pytest
from conftest import assert_close, eps

import tinymlir
from tinymlir import jit

E32 = eps(np.float32)


@pytest.fixture
def x(rng):
    return (rng.normal(size=(4, 6)) + 2).astype(np.float32)


def exact(fn, *args):
    """Ops that round once (or not at all) in float32: equal to NumPy within 1 ulp."""
    got = jit(fn)(*args)
    want = fn(*args)
    assert_close(got, want, 2 * E32 * np.abs(want) + 1e-38, getattr(fn, "__name__", ""))
    return got


def test_operators(x):
    y = x[::-1].copy()
    for fn in (
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: 2 + a,
        lambda a, b: 2 - a,
        lambda a, b: 2 * a,
        lambda a, b: 2 / a,
        lambda a, b: -a,
        lambda a, b: +a,
        lambda a, b: a**2,
        lambda a, b: 2.0**a,
        lambda a, b: b - 1.5,
    ):
        if fn(x, y).dtype == np.float32 and "**" not in str(fn):
            exact(fn, x, y)
    # pow: a few ulp (exp/log based)
    got = jit(lambda a: 2.0**a)(x)
    assert_close(got, 2.0**x, 4 * E32 * np.abs(2.0**x) * (1 + np.abs(x)))
    a = x
    b = x.T.copy()
    assert_close(jit(lambda a, b: a @ b)(a, b), a @ b, 2 * 6 * E32 * (np.abs(a) @ np.abs(b)))
    # NumPy arrays on the left dispatch to __array_ufunc__ (reflected operations).
    c = np.full((4, 6), 3.0, dtype=np.float32)
    exact(lambda a: c - a, x)
    assert_close(jit(lambda t: b @ t)(a), b @ a, 2 * 4 * E32 * (np.abs(b) @ np.abs(a)))


def test_methods_and_attributes(x):
    seen = {}

    def f(t):
        seen.update(shape=t.shape, dtype=t.dtype, ndim=t.ndim, len=len(t))
        return (
            t.T.reshape(2, 12).transpose().astype(np.float64).reshape((-1,)),
            t.sum(axis=1),
            t.max(axis=0, keepdims=True),
            t.mean(),
            t.var(axis=-1),
            t.sum(axis=(0, 1)),
            t.mT,
        )

    out = jit(f)(x)
    assert seen == dict(shape=(4, 6), dtype=np.dtype(np.float32), ndim=2, len=4)
    np.testing.assert_array_equal(
        out[0], x.T.reshape(2, 12).transpose().astype(np.float64).reshape(-1)
    )
    assert_close(out[1], x.sum(axis=1), 6 * E32 * np.abs(x).sum(axis=1))
    np.testing.assert_array_equal(out[2], x.max(axis=0, keepdims=True))
    assert_close(out[3], np.asarray(x.mean()), np.asarray(30 * E32 * np.abs(x).mean()))
    assert_close(out[4], x.var(axis=-1), 20 * E32 * (x * x).mean(axis=-1))
    assert_close(out[5], np.asarray(x.sum(axis=(0, 1))), np.asarray(30 * E32 * np.abs(x).sum()))
    np.testing.assert_array_equal(out[6], x.T)


def test_ufuncs(x):
    y = x[::-1].copy()
    for fn in (np.add, np.subtract, np.multiply, np.divide, np.maximum):
        exact(fn, x, y)
    exact(np.negative, x)
    exact(np.sqrt, np.abs(x) + 0.1)
    exact(np.square, x)
    for fn in (np.exp, np.tanh):
        got, want = jit(fn)(x), fn(x)
        assert_close(got, want, 4 * E32 * np.abs(want))
    got = jit(lambda a: np.power(a, 3))(x)
    assert_close(got, np.power(x, 3), 4 * E32 * np.abs(x) ** 3)
    a, b = x, x.T.copy()
    assert_close(jit(np.matmul)(a, b), np.matmul(a, b), 2 * 6 * E32 * (np.abs(a) @ np.abs(b)))


def test_array_functions(x):
    parts = jit(lambda t: np.split(t, 3, axis=-1))(x)
    for got, want in zip(parts, np.split(x, 3, axis=-1)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(jit(lambda t: np.split(t, [1, 3], axis=0))(x)[1], x[1:3])
    np.testing.assert_array_equal(jit(lambda t: np.reshape(t, (3, 8)))(x), x.reshape(3, 8))
    np.testing.assert_array_equal(jit(lambda t: np.transpose(t))(x), x.T)
    np.testing.assert_array_equal(
        jit(lambda t: np.hstack([t[:, :2], t, t[:, 1:3]]))(x), np.hstack([x[:, :2], x, x[:, 1:3]])
    )
    np.testing.assert_array_equal(
        jit(lambda t: np.concatenate([t, 2 * t], axis=-1))(x), np.concatenate([x, 2 * x], axis=-1)
    )
    np.testing.assert_array_equal(
        jit(lambda t: np.concatenate([t, t[:1]], axis=0))(x), np.concatenate([x, x[:1]], axis=0)
    )
    np.testing.assert_array_equal(
        jit(lambda t: np.hstack([t[0], t[1]]))(x), np.hstack([x[0], x[1]])
    )
    for stack in (np.hstack, np.vstack):  # 0-d operands: made 1-D (2-D) first, as NumPy's
        np.testing.assert_array_equal(
            jit(lambda t: stack([t[0, 0], t[1, 1], 2.0]))(x),
            stack([x[0, 0], x[1, 1], 2.0]),
        )
    np.testing.assert_array_equal(jit(lambda t: np.max(t, axis=1))(x), np.max(x, axis=1))
    np.testing.assert_array_equal(
        jit(lambda t: np.amax(t, axis=0, keepdims=True))(x), np.amax(x, axis=0, keepdims=True)
    )
    assert_close(jit(lambda t: np.sum(t, axis=0))(x), np.sum(x, axis=0), 8 * E32 * np.abs(x).sum(0))
    assert_close(
        jit(lambda t: np.mean(t, axis=-1, keepdims=True))(x),
        np.mean(x, axis=-1, keepdims=True),
        10 * E32 * np.abs(x).mean(-1, keepdims=True),
    )
    assert_close(
        jit(lambda t: np.var(t, axis=-1))(x), np.var(x, axis=-1), 20 * E32 * (x * x).mean(-1)
    )
    sq = x[:, :4].copy()
    np.testing.assert_array_equal(jit(lambda t: np.triu(t))(sq), np.triu(sq))
    np.testing.assert_array_equal(jit(lambda t: np.triu(t, k=1))(sq), np.triu(sq, k=1))
    np.testing.assert_array_equal(jit(lambda t: np.tril(t, -1))(sq), np.tril(sq, -1))


def test_constants_built_in_the_function(x):
    sq = x[:, :4].copy()

    def masked(t):
        n = t.shape[0]
        return (
            t
            + (1 - np.tri(n, dtype=t.dtype)) * -1e10
            + np.ones((n, n), t.dtype)
            + np.zeros_like(t)
            + np.triu(np.ones((n, n), t.dtype), k=1) * -np.inf
        )

    got = jit(masked)(sq)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, masked(sq))


def test_indexing(x):
    f = jit(lambda t: (t[1], t[-1, 2:5], t[:, range(1, 3)], t[..., 0], t[None, 1:3], t[1:2, :]))
    got = f(x)
    want = (x[1], x[-1, 2:5], x[:, 1:3], x[..., 0], x[None, 1:3], x[1:2, :])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    ids = np.array([3, 0, 2], dtype=np.int32)
    np.testing.assert_array_equal(jit(lambda t, i: t[i])(x, ids), x[ids])
    with pytest.raises(
        IndexError, match=r"\[gather\] id 9 at position 1 is outside the table of 4 rows"
    ):
        jit(lambda t, i: t[i])(x, np.array([0, 9], dtype=np.int32))


def test_rows_by_an_id_argument_of_any_integer_dtype(x):
    # x[ids, ...] with ids an argument: NumPy's default int64, small and
    # unsigned ints, negative ids counting from the end, tables of any rank,
    # and basic indices on the other axes. Exact: a selection.
    t = np.arange(24.0).reshape(2, 3, 4)
    cases = [
        (lambda t, i: t[i], t, np.array([1, -1, 0])),
        (lambda t, i: t[i, 1:, None], t, np.array([1, -2])),
        (lambda t, i: t[i, ..., 2], t, np.array([0, 1, 1], np.uint8)),
        (lambda v, i: v[i] * 2, x[0], np.array([4, -5, 2], np.int16)),
        (lambda v, i: v[i], x[0], np.array([], np.int64)),
    ]
    for f, table, ids in cases:
        want, got = f(table, ids), jit(f)(table, ids)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    for bad in (6, -7):  # x[0] has 6 elements
        with pytest.raises(IndexError, match=rf"\[gather\] id {bad} at position 0 is outside"):
            jit(lambda v, i: v[i])(x[0], np.array([bad]))


def test_negative_steps_and_flips_are_numpy_s():
    # Selections: exact, every dtype; negative steps are a flip of the axis,
    # then a slice with the positive step.
    rng = np.random.default_rng(9)
    a = rng.standard_normal((5, 6, 7))
    a.flat[::11] = -0.0
    fns = [
        lambda t: t[::-1],
        lambda t: t[:, ::-2],
        lambda t: t[3:0:-1, 1, ::-3],
        lambda t: t[-1:-6:-2, :, 5:1:-1],
        lambda t: t[::-1, None, ::2],
        lambda t: t[range(4, 0, -2)],
        lambda t: t[:, range(5, -1, -1)],
        lambda t: np.flip(t),
        lambda t: np.flip(t, 1),
        lambda t: np.flip(t, (0, -1)),
        lambda t: np.fliplr(t),
        lambda t: np.flipud(t),
        lambda t: t[::-1] + t,
    ]
    for arr in (a, a.astype(np.float32), (a * 10).astype(np.int32), a > 0):
        for fn in fns[:-1] + ([fns[-1]] if arr.dtype != np.bool_ else []):
            got, want = jit(fn)(arr), fn(arr)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
            if arr.dtype.kind == "f":
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    empty = jit(lambda t: t[0:3:-1])(a)  # an empty slice, as NumPy's
    assert empty.shape == a[0:3:-1].shape == (0, 6, 7) and empty.dtype == a.dtype
    with pytest.raises(ValueError, match=r"\[flip\] repeated axis"):
        jit(lambda t: np.flip(t, (0, -3)))(a)


def test_index_put_is_numpy_assignment():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    i = np.array([2, 0, 2], dtype=np.int32)  # (2, 1) twice: the last row wins
    j = np.array([1, 3, 1], dtype=np.int32)
    v = rng.standard_normal((3, 4))  # float64, cast as NumPy's assignment does
    want = a.copy()
    want[i, :, j] = v
    got = jit(lambda a, i, j, v: tinymlir.index_put(a, (i, None, j), v))(a, i, j, v)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    # Constant positions (int64 here) become checked inputs; eager use works too
    # (with int32 arrays: arguments of other integer types are refused).
    rows = np.array([3, 0])
    w = rng.standard_normal((2, 5)).astype(np.float32)
    want = a.copy()
    want[1][rows] = w
    np.testing.assert_array_equal(
        jit(lambda a, w: tinymlir.index_put(a[1], rows, w))(a, w), want[1]
    )
    np.testing.assert_array_equal(tinymlir.index_put(a[1], (rows.astype(np.int32),), w), want[1])
    with pytest.raises(
        IndexError, match=r"\[index_put\] index 5 at position 0 is outside axis 2 of size 5"
    ):
        jit(lambda a, i, j, v: tinymlir.index_put(a, (i, None, j), v))(
            a, i, np.array([5, 0, 0], dtype=np.int32), v
        )
    with pytest.raises(ValueError, match=r"\[index_put\] values of shape \(4, 3\) for 3 positions"):
        jit(lambda a, i, j, v: tinymlir.index_put(a, (i, None, j), v))(a, i, j, v.T)


# --- Errors -----------------------------------------------------------------------


def test_unsupported_numpy_function_is_named(x):
    with pytest.raises(TypeError, match=r"numpy\.histogram2d"):
        jit(lambda t: np.histogram2d(t[0], t[1]))(x)
    with pytest.raises(TypeError, match=r"numpy\.gcd\b"):
        jit(lambda t: np.gcd(t.astype(np.int32), 2))(x)
    with pytest.raises(TypeError, match=r"numpy\.piecewise"):
        jit(lambda t: np.piecewise(t, [t > 0], [1.0]))(x)
    with pytest.raises(TypeError, match="cannot be converted to a NumPy array"):
        jit(lambda t: t.__array__())(x)  # as NumPy code that is not traced calls it


def test_bool_of_traced_value(x):
    def branchy(t):
        if t.sum() > 0:
            return t
        return -t

    with pytest.raises(TypeError):
        jit(branchy)(x)

    def truthy(t):
        return t if t else -t

    with pytest.raises(TypeError, match="data-dependent control flow"):
        jit(truthy)(x)


def test_shape_errors_carry_the_cpp_message(x):
    with pytest.raises(ValueError, match=r"^\[add\] cannot broadcast shapes \(4, 6\) and \(5,\)$"):
        jit(lambda a, b: a + b)(x, np.ones(5, np.float32))
    with pytest.raises(
        ValueError, match=r"^\[matmul\] inner dimensions differ: \(4, 6\) @ \(4, 7\)$"
    ):
        jit(lambda a, b: a @ b)(x, np.ones((4, 7), np.float32))
    with pytest.raises(ValueError, match=r"\[reshape\] cannot reshape \(4, 6\)"):
        jit(lambda a: a.reshape(5, 5))(x)
    with pytest.raises(np.exceptions.AxisError):
        jit(lambda a: a.sum(axis=(0, 5)))(x)


def test_dtype_errors(x):
    # int64 (NumPy's default integer) and int32 sums (int64, as NumPy's)
    for fn, arg in (
        (lambda a: a * 2, np.arange(4)),
        (lambda a: a.sum(), np.arange(4, dtype=np.int32)),
    ):
        got, want = jit(fn)(arg), fn(arg)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match=r"args\[0\]\['w'\].*datetime64"):
        jit(lambda p: p["w"] * 2)({"w": np.ones(3, "datetime64[s]")})
    compiled = jit(lambda a: a * 2).compile(x)
    # Calling a specialization directly with other types: the core's [call] checks.
    with pytest.raises(
        TypeError,
        match=r"^\[call\] input 0 is float64 \(4, 6\) but this specialization was compiled for float32 \(4, 6\)$",
    ):
        compiled._compiled([x.astype(np.float64)])
    with pytest.raises(ValueError, match=r"^\[call\] input 0 is float32 \(4, 5\)"):
        compiled._compiled([x[:, :5]])


def test_eager_frontend_functions():
    a = np.linspace(-1, 1, 5, dtype=np.float32)
    got = tinymlir.tanh(a)
    assert got.dtype == np.float32
    assert_close(got, np.tanh(a), 4 * E32 * np.abs(np.tanh(a)))
    assert tinymlir.tanh.eager.stats().size == 1


def test_log_abs_minimum_erf(x):
    """The ops added through ops.def rows: np.log, np.abs/np.absolute, np.minimum
    (ufuncs), tinymlir.erf (NumPy has none: math.erf elementwise as reference)."""
    import math

    y = x[::-1].copy()
    y[0, 0] = np.nan
    # abs and minimum round nothing: equal to NumPy, NaN propagated as np.minimum.
    for fn in (np.abs, np.absolute, abs, tinymlir.abs):
        np.testing.assert_array_equal(jit(fn)(x - 2), np.abs(x - 2))
    np.testing.assert_array_equal(jit(np.minimum)(x, y), np.minimum(x, y))
    np.testing.assert_array_equal(jit(tinymlir.minimum)(y, x), np.minimum(y, x))
    n = np.arange(-5, 7, dtype=np.int32)
    assert jit(np.abs)(n).dtype == np.int32
    np.testing.assert_array_equal(jit(np.abs)(n), np.abs(n))
    np.testing.assert_array_equal(jit(lambda a: np.minimum(a, 2))(n), np.minimum(n, 2))
    # log and erf: one math call a side, 4 ulp each (libmvec, NumPy's SIMD loops, libm),
    # an ulp of y being at most eps |y|.
    z = np.abs(x) + 0.25
    for fn in (np.log, tinymlir.log):
        assert_close(jit(fn)(z), np.log(z), 2 * 4 * E32 * np.abs(np.log(z)))
    assert jit(np.log)(n + 6).dtype == np.float64  # int32 -> float64, as NumPy
    erf = np.vectorize(math.erf, otypes=[np.float64])
    want = erf(x - 2).astype(np.float32)
    assert_close(jit(tinymlir.erf)(x - 2), want, 2 * 4 * E32 * np.abs(want))
    assert_close(tinymlir.erf(n), erf(n), 2 * 4 * eps(np.float64) * np.abs(erf(n)))


# NumPy has no ufunc for these rows: the elementwise reference.
_REFERENCE = {
    "erf": lambda x: np.vectorize(__import__("math").erf, otypes=[np.float64])(x),
    "where": lambda c, x, y: np.where(c, x, y),
    "real": np.real,
    "imag": np.imag,
    "angle": np.angle,
    "complex_of_parts": lambda re, im: _complex_of_parts(re, im),
}


def _complex_of_parts(re, im):
    """The complex array of two parts, exactly (complex128 of float64 parts)."""
    re, im = np.broadcast_arrays(re, im)
    wide = np.result_type(re, im, np.float32) == np.float64
    z = np.empty(re.shape, np.complex128 if wide else np.complex64)
    z.real, z.imag = re, im
    return z


# Where the operands are drawn from (inside the function's domain).
_DOMAIN = {
    "arcsin": (0.05, 0.95),
    "arccos": (0.05, 0.95),
    "arccosh": (1.05, 3.0),
    "arctanh": (0.05, 0.95),
}

# Rows of integer operands only (NumPy's bitwise ufuncs): drawn as int32 and int64.
_INTEGER_ROWS = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert"}


@pytest.mark.parametrize("name,arity", tinymlir._tinymlir.ELEMENTWISE)
def test_every_elementwise_row_of_ops_def(name, arity, rng):
    """Every Unary and Binary row of ops.def is a public function (tinymlir.NAME,
    eager and traced) and, where NumPy has the ufunc np.NAME, traced under @jit:
    NumPy's dtype, and values within 4 ulp a side (libm, libmvec and NumPy's SIMD
    loops; an ulp of y is at most eps |y|)."""
    assert name in tinymlir.__all__
    ufunc = getattr(np, name, None)
    reference = ufunc if isinstance(ufunc, np.ufunc) else _REFERENCE[name]
    kinds = (np.int32, np.int64) if name in _INTEGER_ROWS else (np.float32, np.float64)
    for dtypes in ((kinds[0],) * arity, (kinds[1],) * arity, kinds[:arity]):
        low, high = _DOMAIN.get(name, (0.25, 2.25))
        args = [(rng.random((3, 5)) * (high - low) + low).astype(dt) for dt in dtypes]
        if name in _INTEGER_ROWS:  # values up to 1000, shift counts in [0, 40)
            args = [rng.integers(-1000, 1000, (3, 5)).astype(dt) for dt in dtypes]
            if "shift" in name:
                args[1] = rng.integers(0, 40, (3, 5)).astype(dtypes[1])
        if arity == 3:  # where: a bool condition, then the values
            dtypes = (np.float32, np.float64) if len(set(dtypes)) > 1 else dtypes[1:]
            args = [rng.random((3, 5)) < 0.5] + [
                (rng.random((3, 5)) - 0.5).astype(dt) for dt in (dtypes * 2)[:2]
            ]
        want = reference(*args)
        if not isinstance(ufunc, np.ufunc) and arity < 3 and name != "complex_of_parts":
            want = want.astype(np.result_type(*args))
        # Comparisons, selections and integer operations are exact.
        exact = (
            want.dtype.kind in "biu" or arity == 3 or name in ("real", "imag", "complex_of_parts")
        )
        bound = 0.0 if exact else 2 * 4 * eps(want.dtype) * np.abs(want)
        for fn in [getattr(tinymlir, name)] + ([ufunc] if reference is ufunc else []):
            got = jit(fn)(*args)
            assert got.dtype == want.dtype, (name, fn, dtypes)
            assert_close(got, want, bound, f"{name} {dtypes}")
        assert_close(getattr(tinymlir, name)(*args), want, bound, f"eager {name}")


def test_functions_dispatch_when_the_first_trace_imports_them(tmp_path):
    # A fresh process whose first trace calls np.ones_like from tinymlir's own
    # code (x ** 0): the NumPy-function table is imported during that trace,
    # while np.ones_like & co. are wrapped, and must still be keyed by NumPy's
    # own functions.
    import subprocess
    import sys

    code = (
        "import numpy as np\nfrom tinymlir import jit\n"
        "x = np.linspace(0, 1, 3)\n"
        "r = jit(lambda x: (x ** 0, np.zeros_like(x) + x ** 1))(x)\n"
        "assert r[0].tolist() == [1.0, 1.0, 1.0] and r[1].tolist() == x.tolist(), r\n"
        "print('ok')\n"
    )
    env = dict(os.environ, TINYMLIR_CACHE_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


# --- Captured arrays indexed by traced values ------------------------------------

TABLE = np.arange(12.0).reshape(4, 3)
WEIGHTS = np.array([0.5, -1.0, 2.0, 4.0])


def lookup_rows(ids):
    return TABLE[ids] * 2  # a global ndarray indexed by a traced int array


def lookup_one(ids):
    return TABLE[ids[1], 2] + WEIGHTS[ids].sum()  # a traced scalar index, and a vector


def take_rows(ids):
    return np.take(TABLE, ids, axis=0).sum(axis=1)  # np.take's dispatch sees only TABLE


def test_a_captured_array_indexed_by_traced_values_is_a_gather():
    """NumPy's ndarray.__getitem__ and np.take's dispatch do not look at a traced
    index; a captured array is seen as one that does while it is traced, and is
    still read at every call, as captured arrays are."""
    ids = np.array([3, 0, -1, 2], dtype=np.int64)
    for fn in (lookup_rows, lookup_one, take_rows):
        got, want = jit(fn)(ids), fn(ids)
        assert got.dtype == want.dtype and got.shape == want.shape, fn.__name__
        np.testing.assert_array_equal(got, want)
    assert type(TABLE) is np.ndarray  # the module's array itself is untouched
    f = jit(lookup_rows)
    f(ids)
    saved = TABLE.copy()
    try:
        TABLE[0] = 100.0  # read at every call
        np.testing.assert_array_equal(f(ids), lookup_rows(ids))
        assert f.stats().size == 1 and f.stats().hits == 1  # the same specialization
    finally:
        TABLE[:] = saved
    with pytest.raises(IndexError, match="id 4 .* outside the table of 4 rows"):
        jit(lookup_rows)(np.array([4], dtype=np.int64))


def test_a_closure_array_indexed_by_a_traced_value():
    table = np.linspace(0, 1, 10, dtype=np.float32)

    def interpolate(x):
        i = (x * 9).astype(np.int64)  # traced ids into a captured closure array
        return table[i] + np.take(table, i) * 0

    x = np.array([0.0, 0.5, 0.99], dtype=np.float32)
    got, want = jit(interpolate)(x), interpolate(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_numpy_functions_that_write_a_captured_array_write_it_as_numpys():
    """np.put(captured, ..., traced) writes into the captured array under NumPy:
    under jit too (the array is a hidden input written back after the call)."""
    outside = np.zeros(5)
    for write in (
        lambda t: np.put(outside, [0], t[0]),
        lambda t: np.copyto(outside, t),
        lambda t: np.putmask(outside, outside == 0, t),
        lambda t: np.add(t, t, out=outside),
    ):
        outside[...] = 0
        write(np.arange(1.0, 6.0))
        want = outside.copy()
        outside[...] = 0
        jit(write)(np.arange(1.0, 6.0))
        np.testing.assert_array_equal(outside, want)
        assert outside.any()
