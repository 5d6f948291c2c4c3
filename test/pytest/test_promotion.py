"""NumPy 2 (NEP 50) promotion: result dtypes of every binary op, compared with NumPy."""

import itertools
import operator

import numpy as np
import pytest

from tinymlir import jit

ARRAYS = ["float32", "float64", "int32"]
SCALARS = {
    "python int": 3,
    "python float": 1.5,
    "np.float32": np.float32(1.5),
    "np.float64": np.float64(1.5),
    "0-d float32 array": np.array(1.5, dtype=np.float32),
    "0-d float64 array": np.array(1.5, dtype=np.float64),
    "0-d int32 array": np.array(3, dtype=np.int32),
}
OPS = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
    "power": operator.pow,
    "maximum": np.maximum,
}

CASES = []
for op in OPS:
    for a, b in itertools.product(ARRAYS + list(SCALARS), repeat=2):
        if a in ARRAYS or b in ARRAYS:
            CASES.append((op, a, b))


def value(kind):
    if kind in ARRAYS:
        return (np.arange(1, 7).reshape(2, 3) % 4 + 1).astype(kind)
    return SCALARS[kind]


@pytest.mark.parametrize("op,a,b", CASES)
def test_binary_result_dtype_matches_numpy(op, a, b):
    fn = OPS[op]
    va, vb = value(a), value(b)
    expected = fn(va, vb)
    expected = np.asarray(expected)
    arrays = [v for k, v in ((a, va), (b, vb)) if k in ARRAYS]

    def traced(*xs):
        it = iter(xs)
        x = next(it) if a in ARRAYS else va
        y = next(it) if b in ARRAYS else vb
        return fn(x, y)

    f = jit(traced)
    got = f(*arrays)
    assert got.dtype == expected.dtype, f"{a} {op} {b}: {got.dtype} != NumPy's {expected.dtype}"
    assert got.shape == expected.shape
    # Small integers: every op here is exact or one rounding in the result dtype.
    tol = 4 * np.finfo(got.dtype).eps * np.abs(expected) if got.dtype.kind == "f" else 0
    assert np.all(np.abs(got.astype(np.float64) - expected.astype(np.float64)) <= tol)


def test_gelu_scalar_is_strong():
    # np.sqrt(2 / np.pi) is a float64 NumPy scalar: float32 * it is float64 ...
    x = np.ones(4, dtype=np.float32)
    assert jit(lambda x: np.sqrt(2 / np.pi) * x)(x).dtype == np.float64
    # ... while a Python float is weak and keeps float32.
    assert jit(lambda x: float(np.sqrt(2 / np.pi)) * x)(x).dtype == np.float32


def test_integer_list_index_is_int32_gather():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    f = jit(lambda t: t[[3, 0, 3]])
    np.testing.assert_array_equal(f(table), table[[3, 0, 3]])
    assert "i32" in f.compile(table).module


def test_unary_dtypes_match_numpy():
    for dtype in ("float32", "float64"):
        x = np.linspace(0.5, 2, 6, dtype=dtype)
        for fn in (np.exp, np.tanh, np.sqrt, np.negative):
            assert jit(fn)(x).dtype == fn(x).dtype
    i = np.arange(1, 5, dtype=np.int32)
    assert jit(np.negative)(i).dtype == np.int32
    # As NumPy: math functions and true division of int32 give float64
    # (exact conversions; each result within a few ulp of NumPy's).
    for fn in (np.exp, np.tanh, np.sqrt):
        got, want = jit(fn)(i), fn(i)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=8 * np.finfo(np.float64).eps, atol=0)
    got = jit(lambda a, b: a / b)(i, i[::-1].copy())
    assert got.dtype == np.float64 and np.array_equal(got, i / i[::-1])
    got = jit(lambda a: a**2)(i)  # integer powers, exact, as NumPy's
    assert got.dtype == np.int32 and np.array_equal(got, i**2)


@pytest.mark.parametrize(
    "dtype,casting",
    [
        (d, c)
        for d in ("int8", "int64", "float32", "float64")
        for c in ("same_kind", "safe", "unsafe")
    ],
)
@pytest.mark.parametrize("other", [1, 2.5, np.float64(2.5), "int32 array", "float64 array"])
def test_ufunc_dtype_casts_its_inputs_as_numpy(dtype, casting, other):
    # dtype= is the loop's dtype: each input cast to it by the casting rule
    # (Python numbers by their kind), else NumPy's UFuncTypeError (a
    # TypeError) naming the input; the result is in that dtype.
    a = np.arange(1, 7).reshape(2, 3).astype(np.int32)
    b = {"int32 array": a + 1, "float64 array": a * 0.75}.get(other, other)

    def f(x, y):
        return np.multiply(x, y, dtype=dtype, casting=casting), np.add(
            y, x, dtype=dtype, casting=casting
        )

    try:
        want = f(a, b)
    except TypeError as e:
        with pytest.raises(
            TypeError, match=r"input \d from dtype\('\w+'\) to dtype\('\w+'\)"
        ) as got:
            jit(f)(a, b)
        assert str(e).split("input")[1] == str(got.value).split("input")[1]
        return
    got = jit(f)(a, b)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_positive_has_no_bool_loop_as_numpy():
    with pytest.raises(TypeError, match="ufunc 'positive' did not contain a loop"):
        np.positive(np.array([True]))
    with pytest.raises(TypeError, match="ufunc 'positive' did not contain a loop"):
        jit(np.positive)(np.array([True]))


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "int64", "float16", "float32", "float64", "complex64"]
)
@pytest.mark.parametrize("exponent", [2, 0.5, -1, 1, 0, 2.0, 3, 1.5])
def test_powers_of_python_numbers_are_numpys_fast_ones(dtype, exponent):
    # a ** 2 is np.square (bools: int8), and of inexact arrays 0.5, -1, 1 and
    # 0 are sqrt, reciprocal, a copy and ones: NumPy's results bit for bit,
    # inf, nan and -0.0 included (complex numbers: finite ones). Other
    # exponents (and 1 of complex numbers, and 2.0 of integers: float64) are
    # np.power: within 4 ulp (libm's pow and ours may differ).
    x = np.array([0.0, -0.0, 1.0, 2.0, 3.0, 7.0, 0.3, 1e-3, np.inf, np.nan])
    a = {"b": x[:6] > 1, "i": x[:6], "f": x, "c": x[:8]}[np.dtype(dtype).kind].astype(dtype)
    if dtype[0] in "bi" and exponent == -1:
        for fn in (lambda t: t**exponent, jit(lambda t: t**exponent)):
            with pytest.raises(ValueError, match="Integers to negative integer powers"):
                fn(a)
        return
    with np.errstate(all="ignore"):
        want = a**exponent
    got = jit(lambda t: t**exponent)(a)
    assert got.dtype == want.dtype
    if (
        exponent in (3, 1.5) or (exponent == 1 and dtype == "complex64")
    ) and want.dtype.kind in "fc":
        tiny = np.finfo(want.dtype).eps
        bound = 4 * tiny * np.abs(want)
        ok = (np.abs(got - want) <= bound) | (got == want) | (np.isnan(got) & np.isnan(want))
        assert ok.all(), (got, want)
        return
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(np.real(got)), np.signbit(np.real(want)))
