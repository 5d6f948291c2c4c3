"""NumPy's dtypes under @jit: every integer width, float16 and complex.

Each test runs the same source under NumPy and under tinymlir.jit and compares
dtypes and values: exactly where NumPy's result is exact (integers, casts,
comparisons, float16 arithmetic, which both compute in float32 and round once),
within bounds derived below otherwise.
"""

import itertools
import warnings

import numpy as np
import pytest
from conftest import assert_same

from tinymlir import jit

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX


def eps(dtype):
    return np.finfo(dtype).eps


def values(dtype, rng, n=24):
    """Values of `dtype` that cover its range: both extremes, 0, +-1 and random."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        edge = [info.min, info.max, 0, 1, info.max - 1] + (
            [-1, info.min + 1] if dtype.kind == "i" else [2, 3]
        )
        rest = rng.integers(info.min, info.max, n - len(edge), dtype=dtype, endpoint=True)
        return np.concatenate([np.array(edge, dtype), rest])
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind == "c":
        return (rng.standard_normal(n) * 3 + 1j * rng.standard_normal(n) * 3).astype(dtype)
    return (rng.standard_normal(n) * 3).astype(dtype)


# --- Promotion ----------------------------------------------------------------------


def test_casting_rules_of_every_pair_are_numpys():
    """In-place ufuncs and np.copyto cast by NumPy's rules: the C++ core's
    can_cast against np.can_cast for every pair and every rule, and the
    same-kind rule of `a += b` (NumPy's TypeError where it refuses)."""
    from tinymlir import _tinymlir as core

    for x, y in itertools.product(ALL, ALL):
        for rule in ("no", "equiv", "safe", "same_kind", "unsafe"):
            assert core.can_cast(x, y, rule) == np.can_cast(x, y, rule), (x, y, rule)

    def inplace(a, b):
        a += b
        return a

    for x, y in itertools.product(ALL, ALL):
        a, b = np.ones(2, x), np.ones(2, y)
        try:
            want = inplace(a.copy(), b)
        except TypeError:  # NumPy's UFuncTypeError (bool += bool is refused too)
            with pytest.raises(TypeError):
                jit(inplace)(a.copy(), b)
            continue
        got = jit(inplace)(a.copy(), b)
        assert got.dtype == want.dtype and np.array_equal(got, want), (x, y)


def test_promotion_of_every_pair_is_numpys():
    """NEP 50 over the whole grid: two arrays, and an array with each kind of
    Python scalar (weak), against np.result_type and NumPy's own operators."""
    add = jit(lambda a, b: a + b)
    for x, y in itertools.product(ALL, ALL):
        a, b = np.ones(2, x), np.ones(2, y)
        assert add(a, b).dtype == np.result_type(a, b), (x, y)
    for x in ALL:
        a = np.ones(2, x)
        for s in (3, 2.5, 1 + 2j, True):
            assert jit(lambda v: v + s)(a).dtype == (a + s).dtype, (x, s)
            assert jit(lambda v: s * v)(a).dtype == (s * a).dtype, (x, s)
    # NumPy scalars are strong: np.float32(1) + int8 is float32, uint8(1) + int8 int16.
    for x, s in itertools.product(
        INTS + FLOATS, (np.float32(1), np.uint8(1), np.int64(2), np.complex64(1j))
    ):
        a = np.ones(2, x)
        assert jit(lambda v: v + s)(a).dtype == (a + s).dtype, (x, s)


def test_python_ints_out_of_a_dtypes_range_raise_overflow_error():
    # NumPy 2: uint8_array + 300 is an OverflowError, as is int8 + 128 and uint8 - -1.
    for dtype, value in (
        ("uint8", 300),
        ("int8", 128),
        ("uint8", -1),
        ("int16", -40000),
        ("uint32", 2**32),
    ):
        a = np.ones(3, dtype)
        with pytest.raises(OverflowError):
            a + value
        with pytest.raises(OverflowError, match="out of bounds"):
            jit(lambda v: v + value)(a)
    assert_same(np.ones(3, np.uint8) + 255, jit(lambda v: v + 255)(np.ones(3, np.uint8)))


# --- Integers -------------------------------------------------------------------

BINARY_INT = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "fmod": np.fmod,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "max": np.maximum,
    "min": np.minimum,
    "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "truediv": lambda a, b: a / b,
}


@pytest.mark.parametrize("dtype", INTS)
def test_integer_arithmetic_wraps_and_divides_as_numpys(dtype, rng):
    """Wrap-around, floor division and remainder with NumPy's signs, division
    by zero (0) and INT_MIN // -1 (INT_MIN), never a trap: bit for bit."""
    a = values(dtype, rng)
    b = np.roll(values(dtype, rng), 3)
    b[:4] = [0, 1, 0, -1 if dtype[0] == "i" else 2]  # zero divisors, INT_MIN // -1
    with np.errstate(all="ignore"):
        for name, fn in BINARY_INT.items():
            assert_same(fn(a, b), jit(fn)(a, b), path=f"{dtype} {name}")
        for fn in (np.negative, np.abs, np.sign, np.invert, lambda v: -v + 1, lambda v: v * 3 - 7):
            assert_same(fn(a), jit(fn)(a), path=f"{dtype} {fn}")


@pytest.mark.parametrize("dtype", INTS)
def test_shifts_powers_and_scalars(dtype, rng):
    a = values(dtype, rng)
    bits = 8 * np.dtype(dtype).itemsize
    counts = np.resize(np.arange(0, bits + 3, dtype=dtype), a.shape)  # past the width: 0 / sign
    with np.errstate(all="ignore"):
        assert_same(a << counts, jit(lambda x, s: x << s)(a, counts), path=f"{dtype} <<")
        assert_same(a >> counts, jit(lambda x, s: x >> s)(a, counts), path=f"{dtype} >>")
        e = np.resize(np.arange(0, 7, dtype=dtype), a.shape)
        assert_same(a**e, jit(lambda x, p: x**p)(a, e), path=f"{dtype} **")
        assert_same(a**3, jit(lambda x: x**3)(a), path=f"{dtype} ** 3")
        assert_same(
            (a >> 2, a << 1, a // 7, a % 7, a & 0x5A),
            jit(lambda x: (x >> 2, x << 1, x // 7, x % 7, x & 0x5A))(a),
            path=f"{dtype} with Python ints",
        )
    if dtype[0] == "i":
        with pytest.raises(ValueError, match="negative integer powers"):
            jit(lambda x: x**-1)(a)
        # an array exponent is checked when the kernel runs, as NumPy checks it
        power = jit(lambda x, p: x**p)
        negative = e.copy()
        negative.flat[-1] = -1
        with pytest.raises(ValueError, match="Integers to negative integer powers"):
            power(a, negative)
        assert_same(a**e, power(a, e), path=f"{dtype} ** after the error")


def test_float_floor_division_and_remainder_as_numpys():
    x = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 3.0, np.inf, 1e300, 5.0, np.nan, 1.0])
    y = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 2.0, 1e-300, np.inf, 1.0, -0.0])
    with np.errstate(all="ignore"):
        for dtype in FLOATS:
            a, b = x.astype(dtype), y.astype(dtype)
            for fn in (lambda p, q: p // q, lambda p, q: p % q, np.fmod, divmod, np.divmod):
                got, want = jit(fn)(a, b), fn(a, b)
                for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
                    assert_same(w, g, path=f"{dtype} {fn}")
                    np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def test_integer_divmod_as_numpys():
    # np.divmod and divmod(): NumPy's floor division and remainder together,
    # signs as NumPy's, x // 0 and x % 0 are 0; of known values, NumPy's own.
    x = np.array([7, -7, 7, -7, 0, 5, -128, 100], np.int8)
    y = np.array([2, 2, -2, -2, 3, 0, -1, 7], np.int8)
    with np.errstate(all="ignore"):
        for fn in (np.divmod, divmod, lambda p, q: np.divmod(p, 3), lambda p, q: divmod(9, q[:4])):
            got, want = jit(fn)(x, y), fn(x, y)
            assert type(got) is tuple and len(got) == 2
            for g, w in zip(got, want):
                assert_same(w, g, path=str(fn))
        got = jit(lambda p: np.divmod(np.arange(7) - 3, 2))(x)  # known while tracing
        for g, w in zip(got, np.divmod(np.arange(7) - 3, 2)):
            assert_same(w, g, path="known")


def test_integer_and_bool_matmul_are_exact(rng):
    for dtype in ("int32", "int64", "uint8", "int16"):
        a = rng.integers(-50, 50, (5, 7)).astype(dtype)
        b = rng.integers(-50, 50, (7, 3)).astype(dtype)
        assert_same(a @ b, jit(lambda p, q: p @ q)(a, b), path=dtype)  # wraps, as NumPy's
    m, n = rng.random((4, 6)) < 0.3, rng.random((6, 2)) < 0.3
    assert_same(m @ n, jit(lambda p, q: p @ q)(m, n))


# --- Casts and reductions ---------------------------------------------------------


def test_casts_between_every_pair(rng):
    """astype between all dtypes for values both hold (integers wrap when
    narrowing, floats truncate toward 0, complex keeps the real part)."""
    base = np.array([0, 1, 2, 3, 7, 100, 127, 5, 0, 1], np.int64)
    frac = np.array([0.0, 1.75, 2.5, 3.25, 7.0, 100.5, 127.9, 5.0, 0.5, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        for x, y in itertools.product(ALL, ALL):
            a = (frac if np.dtype(x).kind in "fc" else base).astype(x)
            fn = lambda v: v.astype(y)  # noqa: E731
            assert_same(fn(a), jit(fn)(a), path=f"{x} -> {y}")
    with np.errstate(all="ignore"):
        wide = np.array([-1, 300, -129, 70000, 2**40 + 5, -(2**40) - 3], np.int64)
        for y in INTS:  # integers wrap when narrowed, as NumPy's
            assert_same(wide.astype(y), jit(lambda v: v.astype(y))(wide), path=f"int64 -> {y}")


@pytest.mark.parametrize("dtype", ALL)
def test_reductions_of_every_dtype(dtype, rng):
    """sum and prod accumulate small integers in int64 (unsigned: uint64),
    float16 in float32; max/min exact; mean in float64 (float16: float32)."""
    a = values(dtype, rng, 30).reshape(5, 6)
    if np.dtype(dtype).kind in "iu":
        a = (a % 5).astype(dtype)  # products of 6 stay exact and equal
    fns = {
        "sum": lambda v: v.sum(axis=1),
        "prod": lambda v: np.prod(v, axis=0),
        "sum_all": np.sum,
        "mean": lambda v: v.mean(axis=0),
    }
    if np.dtype(dtype).kind != "c":
        fns.update(max=lambda v: v.max(axis=1), min=np.min)
    for name, fn in fns.items():
        want = fn(a)
        kind = np.asarray(want).dtype
        if kind.kind in "fc" and name != "max" and name != "min":
            # n terms: gamma_n |x| summed (float16: each of its float32 sums rounded once more)
            n = a.size
            e = eps(np.float32 if dtype == "float16" else kind)
            scale = np.abs(fn(np.abs(a).astype(np.complex128 if kind.kind == "c" else np.float64)))
            bound = n * e * scale + (eps(np.float16) * np.abs(want) if kind == np.float16 else 0)
        else:
            bound = 0.0
        assert_same(want, jit(fn)(a), bound, path=f"{dtype} {name}")


# --- float16 --------------------------------------------------------------------


def test_float16_is_computed_as_numpys(rng):
    """float16 arithmetic is NumPy's: each operation in float32, rounded once
    to float16, so bit for bit; math functions within 1 ulp of float16 (the
    float32 results differ by ulps of float32 before that one rounding)."""
    a = (rng.standard_normal(40) * 4).astype(np.float16)
    b = (rng.standard_normal(40) * 4 + 0.5).astype(np.float16)
    with np.errstate(all="ignore"):
        for fn in (
            lambda p, q: p + q,
            lambda p, q: p * q - q,
            lambda p, q: p / q,
            lambda p, q: p * 1.5,
            np.maximum,
            lambda p, q: p < q,
            lambda p, q: p // q,
        ):
            assert_same(fn(a, b), jit(fn)(a, b), path=str(fn))
        for fn in (np.sin, np.exp, np.sqrt, np.tanh, np.log1p):
            want = fn(np.abs(a))
            assert_same(want, jit(fn)(np.abs(a)), eps(np.float16) * np.abs(want), path=str(fn))
    # uint8 and int8 images: math on them is float16, as NumPy's rules give it.
    image = rng.integers(0, 256, (8, 8), dtype=np.uint8)
    for fn in (np.sin, np.sqrt, lambda v: np.exp(v.astype(np.int8) / 64)):
        want = fn(image)
        assert_same(want, jit(fn)(image), 2 * eps(want.dtype) * np.abs(want), path=str(fn))


# --- complex ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_functions_at_infinities_nan_and_zeros(dtype):
    """Every pair of 0, -0, +-1, 2.5, +-inf and nan as the parts, through each
    complex function, quotient and power: NumPy's classes of results (which
    part is inf, nan, or a number) exactly, as C99's Annex G and NumPy's own
    formulas give them; numbers within 8 eps of NumPy's (the same libm)."""
    parts = [0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan]
    z = np.array([complex(p, q) for p in parts for q in parts], dtype)
    e = eps(np.float32 if dtype == "complex64" else np.float64)

    def check(got, want, what):
        assert got.dtype == want.dtype, what
        for g, w in (
            ((got.real, want.real), (got.imag, want.imag))
            if got.dtype.kind == "c"
            else ((got, want),)
        ):
            cls = lambda v: np.where(np.isnan(v), 2, np.where(np.isinf(v), 3 * np.sign(v), 0))
            np.testing.assert_array_equal(cls(g), cls(w), err_msg=what)
            finite = np.isfinite(w)
            assert np.all(np.abs(g[finite] - w[finite]) <= 8 * e * (np.abs(w[finite]) + 1)), what

    names = ["abs", "exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh"]
    names += ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "expm1", "log1p"]
    names += ["exp2", "log2", "log10", "sign", "reciprocal", "square"]
    a, b = np.repeat(z, z.size), np.tile(z, z.size)
    with np.errstate(all="ignore"):
        for name in names:
            fn = getattr(np, name)
            check(jit(fn)(z), fn(z), f"{dtype} {name}")
        for name in ["multiply", "divide", "power"]:
            fn = getattr(np, name)
            check(jit(fn)(a, b), fn(a, b), f"{dtype} {name}")


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_comparisons_and_extremes_are_lexicographic(dtype):
    """<, <=, >, >=, maximum, minimum, fmax and fmin of complex numbers as
    NumPy's: the real parts decide unless an imaginary part is nan, ties go to
    the imaginary parts; maximum propagates a nan part, fmax ignores one. Every
    pair of 0, -0, +-1, +-inf and nan parts: exact, as a selection."""
    parts = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]
    z = np.array([complex(p, q) for p in parts for q in parts], dtype)
    a, b = np.repeat(z, z.size), np.tile(z, z.size)
    names = ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum", "fmax", "fmin"]
    for name in names:
        fn = getattr(np, name)
        got, want = jit(fn)(a, b), fn(a, b)
        assert got.dtype == want.dtype, name
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            np.testing.assert_array_equal(g, w, err_msg=f"{dtype} {name}")
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=f"{dtype} {name}")


def test_fmax_and_fmin_ignore_nan():
    x = np.array([1.0, np.nan, -2.0, np.nan, 5.0])
    y = np.array([np.nan, 3.0, -1.0, np.nan, -7.0])
    for dtype in ["float64", "float32", "float16"]:
        a, b = x.astype(dtype), y.astype(dtype)
        for fn in (np.fmax, np.fmin):
            assert_same(fn(a, b), jit(fn)(a, b), path=f"{dtype} {fn.__name__}")
    i, j = np.array([1, 5, -2, 7], np.int8), np.array([4, 3, -1, 7], np.int8)
    for fn in (np.fmax, np.fmin):
        assert_same(fn(i, j), jit(fn)(i, j), path=f"int8 {fn.__name__}")


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_arithmetic_and_functions(dtype, rng):
    """complex64/complex128 arithmetic (with real arrays and Python complex
    numbers), abs, exp, log, sqrt, sin, cos, tanh, real, imag, conj, angle:
    a product or quotient is within a few eps of |result| (Kahan-style error
    of complex multiplication is at most sqrt(5) eps), the functions within
    8 eps * (|result| + 1)."""
    a = values(dtype, rng)
    b = values(dtype, rng)[::-1].copy()
    r = np.linspace(-2, 2, a.size).astype(np.float32)
    e = eps(np.dtype(dtype).char.lower() if dtype == "complex64" else np.float64)
    e = eps(np.float32 if dtype == "complex64" else np.float64)
    arith = {
        "add": lambda p, q, s: p + q,
        "sub": lambda p, q, s: p - q * s,
        "mul": lambda p, q, s: p * q,
        "div": lambda p, q, s: p / q,
        "weak": lambda p, q, s: p * 2j + 1.5,
        "eq": lambda p, q, s: (p == q, p != p),
        "pow2": lambda p, q, s: p**2,
        "where": lambda p, q, s: np.where(s > 0, p, q),
    }
    for name, fn in arith.items():
        want = fn(a, b, r)
        for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (jit(fn)(a, b, r), want))):
            assert_same(w, g, 8 * e * np.abs(w), path=f"{dtype} {name}")
    funcs = {
        "abs": np.abs,
        "exp": np.exp,
        "log": np.log,
        "sqrt": np.sqrt,
        "sin": np.sin,
        "cos": np.cos,
        "tanh": np.tanh,
        "real": np.real,
        "imag": lambda v: v.imag,
        "conj": np.conj,
        "angle": np.angle,
        "deg": lambda v: np.angle(v, deg=True),
    }
    for name, fn in funcs.items():
        want = fn(a)
        assert_same(want, jit(fn)(a), 8 * e * (np.abs(want) + 1), path=f"{dtype} {name}")


def test_complex_reductions_and_products(rng):
    for dtype in COMPLEX:
        e = eps(np.float32 if dtype == "complex64" else np.float64)
        a = (rng.standard_normal((6, 5)) + 1j * rng.standard_normal((6, 5))).astype(dtype)
        b = (rng.standard_normal((5, 4)) + 1j * rng.standard_normal((5, 4))).astype(dtype)
        # K products: gamma_K (|A| @ |B|) a part, doubled for the complex sums.
        product = jit(lambda p, q: p @ q)
        assert_same(a @ b, product(a, b), 2 * 5 * e * (np.abs(a) @ np.abs(b)) * 2)
        assert product.compile(a, b)._compiled.blas_calls == 1  # cgemm / zgemm
        for fn in (np.sum, lambda v: v.sum(axis=0), np.mean, np.var, lambda v: np.prod(v, axis=1)):
            want = fn(a)
            assert_same(
                want,
                jit(fn)(a),
                16 * a.size * e * (np.abs(want) + np.abs(a).max() ** 5),
                path=str(fn),
            )
        for fn in (np.max, np.min, lambda v: v.max(axis=0), lambda v: np.argmin(v, axis=1)):
            np.testing.assert_array_equal(jit(fn)(a), fn(a))  # lexicographic: a selection


def test_ufunc_dtype_argument_computes_in_that_dtype():
    a = np.arange(6, dtype=np.int8)
    for fn in (
        lambda v: np.add(v, v, dtype=np.float32),
        lambda v: np.multiply(v, 100, dtype=np.int16),
        lambda v: np.sqrt(v, dtype=np.float64),
    ):
        assert_same(fn(a), jit(fn)(a))


# --- Programs ---------------------------------------------------------------------


def test_programs_with_complex_and_small_integers(rng):
    """A DFT as a complex matrix product; a Mandelbrot escape count; a uint8
    image brightened, clipped and stored back in uint8."""

    def dft(x):
        n = x.shape[0]
        k = np.arange(n)
        w = np.exp(-2j * np.pi * np.outer(k, k) / n)
        return w @ x

    x = rng.standard_normal(32)
    want = dft(x)
    assert_same(want, jit(dft)(x), 4 * 32 * eps(np.float64) * np.abs(x).sum())
    np.testing.assert_allclose(jit(dft)(x), np.fft.fft(x), atol=1e-12 * np.abs(x).sum())

    def mandelbrot(c, steps):
        z = np.zeros_like(c)
        count = np.zeros(c.shape, np.int32)
        for _ in range(steps):
            z = np.where(np.abs(z) <= 2, z * z + c, z)
            count += np.abs(z) <= 2
        return count

    re, im = np.meshgrid(np.linspace(-2, 0.5, 24), np.linspace(-1.2, 1.2, 16))
    c = re + 1j * im
    got, want = jit(mandelbrot)(c, 20), mandelbrot(c, 20)
    # Escape counts at the boundary depend on the last bit of |z|: nearly all equal.
    assert got.dtype == want.dtype and np.mean(got == want) > 0.98

    def brighten(img, gain):
        out = np.clip(img.astype(np.int16) * gain // 4, 0, 255).astype(np.uint8)
        img[:] = out
        return out.sum(), (img > 128).sum()

    img = rng.integers(0, 256, (12, 10), dtype=np.uint8)
    mine = img.copy()
    assert_same(brighten(img, 5), jit(brighten)(mine, 5))
    assert_same(img, mine)


def test_the_emulated_gpu_target_takes_small_ints_and_float16_and_refuses_complex():
    """The GPU target's mapping and lowering, run on the CPU: int8 and float16
    give the CPU's answers; complex dtypes and the row kernels are refused by name."""
    a = np.arange(-6, 6, dtype=np.int8)
    h = np.linspace(-2, 2, 12).astype(np.float16)
    fn = lambda x, y: (x * 3 + 1, x // 4, x % 3, x >> 1, y * y - 1, np.abs(y))  # noqa: E731
    assert_same(fn(a, h), jit(fn, target="gpu", gpu_emulate=True)(a, h))
    with pytest.raises(ValueError, match=r"gpu-emulated target has no complex64"):
        jit(lambda y: y * 1j, target="gpu", gpu_emulate=True)(h)
    with pytest.raises(ValueError, match=r"\[sort\] the gpu-emulated target cannot run it"):
        jit(np.sort, target="gpu", gpu_emulate=True)(h)


def test_results_of_mixed_dtypes_come_back_exactly(rng):
    """Several results of different dtypes (packed into one array inside):
    int64 and uint64 beyond 2**53, complex parts, float16, bools, bit for bit."""
    big = np.array([2**62 + 1, -(2**63), 12345678901234567], np.int64)
    ubig = np.array([2**64 - 1, 2**63 + 3, 7], np.uint64)
    z = np.array([1 + 2j, -3.5e300 + 1e-300j, np.nan + 1j])

    def several(b, u, c):
        return b, u, c, c.real.astype(np.float16), b > 0, np.conj(c).astype(np.complex64)

    assert_same(several(big, ubig, z), jit(several)(big, ubig, z))
    assert_same(
        (z * 2, np.ones(3, np.float16) + 1),
        jit(lambda c, h: (c * 2, h + 1))(z, np.ones(3, np.float16)),
    )


def test_python_ints_out_of_range_in_comparisons_and_clip_are_numpys():
    """NumPy 2 compares with out-of-range Python ints exactly and clips them
    to the dtype in np.clip (arithmetic with them is the OverflowError above)."""
    x = np.array([7, 2, 11, 255], np.uint8)
    i = np.array([-128, 0, 5, 127], np.int8)
    for fn in (
        lambda v, w: (v > -1, v < 300, v == -1, -1 < v, w >= 1000, w != -200),
        lambda v, w: (np.clip(v, -1, 0.5), np.clip(v, -1, 300), np.clip(w, -1000, 3)),
        lambda v, w: np.greater(np.uint64(2**63) * 0 + 5, -1),
    ):
        assert_same(fn(x, i), jit(fn)(x, i))
