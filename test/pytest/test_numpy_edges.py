"""NumPy's answer at the edges a fuzzer found wrong: each case is checked
against NumPy itself on the same inputs (or, where NumPy's semantics are not
followed, against a clear error)."""

import re

import numpy as np
import pytest
from conftest import assert_close, eps, same

import tinymlir
from tinymlir import jit

E32, E64 = eps(np.float32), eps(np.float64)


def test_inverse_square_root_is_pow():
    # x ** -0.5 became math.rsqrt, a call to rsqrtf that no library defines.
    # 1 / sqrt(x) rounds twice: within 2 ulp of pow's (correctly rounded to 1 ulp).
    for dtype, e in ((np.float32, E32), (np.float64, E64)):
        x = np.array([0.25, 4.0, 3.0, 1e-30, 0.0, -0.0, np.inf, -1.0, -np.inf], dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            want = x**-0.5
        got = jit(lambda a: a**-0.5)(x)
        assert got.dtype == want.dtype
        assert_close(got, want, 3 * e * np.abs(np.nan_to_num(want, posinf=0)))
        assert (
            np.signbit(got[5]) == np.signbit(want[5]) and got[5] == np.inf
        )  # pow(-0, -0.5) = +inf
        assert got[8] == 0 and want[8] == 0  # pow(-inf, -0.5) = +0
    x = np.random.default_rng(3).random((3, 5), np.float32)
    fn = lambda a: (a.var(axis=-1, keepdims=True) + 1e-5) ** -0.5  # layer normalization's
    assert_close(jit(fn)(x), fn(x), 40 * E32 * np.abs(fn(x)))


def test_reductions_over_no_axes():
    x = np.array([[0, 1, 2], [3, np.inf, 5]], np.float32)
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    with np.errstate(invalid="ignore"):
        for fn in (
            lambda a: np.sum(a, axis=()),
            lambda a: np.max(a, axis=()),
            lambda a: np.mean(a, axis=()),
            lambda a: np.var(a, axis=()),
            lambda a: a.var(axis=(), keepdims=True),
        ):
            same(fn, x)
        for fn in (lambda a: np.mean(a, axis=()), lambda a: np.var(a, axis=())):
            assert same(fn, i).dtype == np.float64


def test_axis_0_or_minus_1_of_a_scalar():
    s = np.array(1.5, np.float32)
    for fn in (
        lambda a: np.exp(a - np.max(a, axis=-1, keepdims=True)),
        lambda a: np.sum(a, axis=0),
        lambda a: a.sum(axis=-1),
    ):
        same(fn, s)
    for fn in (lambda a: np.sum(a, axis=1), lambda a: a.mean(axis=0), lambda a: a.var(axis=-1)):
        with pytest.raises(np.exceptions.AxisError):
            fn(s)  # NumPy's mean and var refuse them
        with pytest.raises((np.exceptions.AxisError, ValueError), match="out of (range|bounds)"):
            jit(fn)(s)


def test_empty_index_and_ellipsis_of_a_scalar():
    x = np.ones((2, 3), np.float32)
    s = np.array(3.0, np.float32)
    np.testing.assert_array_equal(jit(lambda a: a[()] * 2)(x), x[()] * 2)
    assert jit(lambda a: a[()] + 1)(s) == s[()] + 1
    assert jit(lambda a: a[...] + 1)(s) == s[...] + 1


def test_ranges_index_as_numpy_does_or_fail():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    # One range and slices: the same elements as the slice.
    for fn in (
        lambda a: a[range(0, 2)],
        lambda a: a[:, range(1, 3)],
        lambda a: a[range(1, 2), :, 1:3],
    ):
        same(fn, x)
    # Two ranges pick pairs (advanced indexing); with an integer, the axes move:
    # not taken as slices, refused by name.
    for fn in (lambda a: a[range(0, 2), range(1, 3)], lambda a: a[1, :, range(2)]):
        with pytest.raises(IndexError, match="ranges index as integer arrays"):
            jit(fn)(x)
    # Entries index as integers: out of bounds is an error (a slice would clip),
    # negative entries are not a slice's (a[range(-2, 2)] has 4 rows).
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        x[range(0, 10)]
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        jit(lambda a: a[range(0, 10)])(x)
    assert x[range(-2, 2)].shape == (4, 3, 4)
    with pytest.raises(IndexError, match="negative entries"):
        jit(lambda a: a[range(-2, 2)])(x)


def test_bad_axes_are_errors():
    x = np.ones((2, 3), np.float32)
    cases = [
        (lambda a: np.swapaxes(a, 0, 5), np.exceptions.AxisError),
        (lambda a: np.expand_dims(a, 7), np.exceptions.AxisError),
        (lambda a: np.expand_dims(a, (0, 0)), ValueError),
        (lambda a: np.squeeze(a.reshape(1, 2, 1, 3), 4), np.exceptions.AxisError),
    ]
    for fn, error in cases:
        with pytest.raises(error):
            fn(x)  # NumPy refuses them too
        with pytest.raises(error):
            jit(fn)(x)
    for fn in (
        lambda a: np.swapaxes(a, -1, 0),
        lambda a: np.expand_dims(a, (-1, 0)),
        lambda a: np.squeeze(a.reshape(1, 2, 1, 3), (-2, 0)),
    ):
        same(fn, x)


def test_python_integers_beyond_int32():
    x = np.ones(3, np.float32)
    assert same(lambda a: a * 2**40, x, bound=0).dtype == np.float32
    with pytest.raises(
        OverflowError,
        match=r"\[mul\] Python integer 1099511627776 out of bounds for int32",
    ):
        jit(lambda a: a * 2**40)(np.ones(3, np.int32))  # NumPy 2's OverflowError


def test_statics_that_compare_equal_but_trace_differently():
    f = jit(lambda a, s: a * s)
    i = np.arange(3, dtype=np.int32)
    assert f(i, 2).dtype == np.int32 and f(i, 2.0).dtype == np.float64  # as NumPy's
    g = jit(lambda a, *, s: a * s)
    assert g(i, s=2).dtype == np.int32 and g(i, s=2.0).dtype == np.float64
    assert g(i, s=1).dtype == np.int32
    # True == 1 and hashes alike: not s=1's entry (the function tells them apart).
    h = jit(lambda a, *, s: a * (2 if isinstance(s, bool) else 3))
    np.testing.assert_array_equal(h(i, s=1), i * 3)
    np.testing.assert_array_equal(h(i, s=True), i * 2)
    got = f(i, True)  # a bool takes the other side's dtype, as NumPy's
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, i * True)
    y = np.ones(2, np.float64)
    inv = jit(lambda a, s: 1.0 / (a * s))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(inv(y, 0.0), 1.0 / (y * 0.0))
        np.testing.assert_array_equal(inv(y, -0.0), 1.0 / (y * -0.0))  # -inf
    nan = jit(lambda a, s: a + s)
    for _ in range(3):
        assert np.isnan(nan(y, float("nan"))).all()
    assert nan.stats().compilations + nan.stats().disk_hits == 1  # nan finds its own entry


def test_arrays_by_keyword_are_inputs():
    f = jit(lambda a, y=None, scale=1.0: a * y * scale)
    a, b = np.arange(3, dtype=np.float32), np.full(3, 2, np.float32)
    np.testing.assert_array_equal(f(a, y=b), a * b)
    np.testing.assert_array_equal(f(a, y=b + 1, scale=3.0), a * (b + 1) * 3)
    np.testing.assert_array_equal(f(a, scale=2.0, y={"k": b}["k"]), a * b * 2)
    # No scale, scale=3.0, scale=2.0; the arrays' values (and the dict around b) not keyed.
    assert f.stats().compilations + f.stats().disk_hits == 3


def test_a_function_with_a_target_parameter():
    @jit
    def g(x, target=1.0):
        return x * target

    np.testing.assert_array_equal(g(np.ones(3, np.float32), target=3.0), np.full(3, 3, np.float32))
    with pytest.raises(TypeError, match=r"target= names the compile target"):
        jit(lambda x: x)(np.ones(3, np.float32), target=3.0)


def test_dtype_arguments():
    x = np.ones(3, np.float32)
    for d in ("int32", np.int32, np.dtype("int32")):
        assert tinymlir.cast(x, d).dtype == np.int32
    f = jit(lambda a, d: a.astype(d))
    assert f(x, np.float64).dtype == np.float64 and f(x, np.int32).dtype == np.int32


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_array_subclasses():
    m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="numpy.matrix"):
        jit(lambda a, b: a * b)(m, m)  # np.matrix's * is a product
    masked = np.ma.masked_array([1.0, 2.0], mask=[0, 1])
    with pytest.raises(TypeError, match="MaskedArray"):
        jit(lambda a: a * 2)(masked)
    with pytest.raises(TypeError, match="MaskedArray"):
        jit(lambda a: a * masked)(np.ones(2))  # captured

    # Other subclasses (np.memmap of weights) are their values.
    class Tagged(np.ndarray):
        pass

    t = np.arange(3.0).view(Tagged)
    np.testing.assert_array_equal(jit(lambda a: a + 1)(t), np.arange(3.0) + 1)


MATMUL_SHAPES = [
    ((5,), (5,)),
    ((5,), (5, 3)),
    ((4, 5), (5,)),
    ((2, 4, 5), (5, 3)),
    ((2, 4, 5), (5,)),
    ((5,), (2, 5, 3)),
    ((4, 5), (2, 5, 3)),
    ((1, 4, 5), (3, 5, 2)),
    ((2, 1, 4, 5), (3, 5, 2)),
    ((2, 3, 4, 5), (2, 3, 5, 2)),
    ((3, 1, 4, 5), (1, 2, 5, 6)),
    ((2, 4, 5), (2, 5, 3)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_of_every_rank(sa, sb, rng):
    # NumPy's matmul: vectors, stacks of matrices, broadcast batches. Each side
    # within gamma_K (|A| @ |B|) of the exact product (K = 5 terms).
    a = rng.normal(size=sa).astype(np.float32)
    b = rng.normal(size=sb)  # float64: promoted
    want = a @ b
    for fn in (lambda x, y: x @ y, lambda x, y: np.matmul(x, y), tinymlir.matmul):
        got = jit(fn)(a, b) if fn is not tinymlir.matmul else fn(a, b)
        assert got.shape == want.shape and got.dtype == want.dtype, (sa, sb, got.shape)
        assert_close(got, want, 2 * 6 * E64 * (np.abs(a) @ np.abs(b)))


def test_matmul_errors_name_both_shapes():
    f = jit(lambda x, y: x @ y)
    for sa, sb, reason in (
        ((2, 4, 5), (3, 5, 2), "batch dimensions differ"),
        ((4, 5), (4, 5), "inner dimensions differ"),
        ((5,), (4,), "inner dimensions differ"),
    ):
        with pytest.raises(
            ValueError,
            match=rf"^\[matmul\] {reason}: "
            rf"{re.escape(str(sa))} @ {re.escape(str(sb))}$",
        ):
            f(np.ones(sa, np.float32), np.ones(sb, np.float32))
    with pytest.raises(ValueError, match=r"\[matmul\] operands must have at least one dimension"):
        f(np.ones((), np.float32), np.ones(3, np.float32))


def test_many_parts_and_outputs(rng):
    # Over 16 parts concatenate in groups (bufferizing one chain of 200 slice
    # insertions took minutes): the same values, order and promotion as NumPy's.
    dtypes = [np.float32, np.int32, np.float32, np.float64]
    parts = [
        (rng.normal(size=(2, i % 3 + 1)) * 10).astype(dtypes[(i // 11) % 4]) for i in range(41)
    ]
    got = jit(lambda xs: np.concatenate(xs, axis=1))(parts)
    want = np.concatenate(parts, axis=1)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    outs = jit(lambda xs: [x * 2 for x in xs])(parts)  # 41 outputs: one packed result
    for o, p in zip(outs, parts):
        assert o.dtype == p.dtype
        np.testing.assert_array_equal(o, p * 2)


def test_min_as_numpy(rng):
    # A reduction of its own (ops.def's Min row): exact, nan-propagating, and
    # int32 down to its least value (-max(-x) would wrap there).
    x = rng.normal(size=(4, 6)).astype(np.float32)
    x[1, 2], x[2, 3] = np.nan, -np.inf
    i = rng.integers(-100, 100, size=(3, 5)).astype(np.int32)
    i[2, 4] = np.iinfo(np.int32).min
    for a in (x, x.astype(np.float64), i):
        for fn in (
            lambda t: np.min(t),
            lambda t: t.min(axis=0),
            lambda t: np.amin(t, axis=-1),
            lambda t: t.min(axis=(0, 1), keepdims=True),
            lambda t: tinymlir.min(t, 1),
        ):
            got, want = jit(fn)(a), fn(a)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_means_of_int32_are_float64(rng):
    i = rng.integers(-1000, 1000, size=(4, 5)).astype(np.int32)
    for fn in (
        lambda t: np.mean(t),
        lambda t: t.mean(axis=1),
        lambda t: np.var(t, axis=0),
        lambda t: t.std(axis=(0, 1)),
        lambda t: tinymlir.mean(t, 1),
    ):
        got, want = jit(fn)(i), fn(i)
        assert got.dtype == want.dtype == np.float64 and got.shape == want.shape
        assert_close(got, want, 60 * E64 * (np.abs(want) + np.abs(i).max() ** 2))


def test_more_numpy_functions(rng):
    x = rng.normal(size=(3, 4)).astype(np.float32)
    y = rng.normal(size=(3, 4)).astype(np.float32)
    v = rng.normal(size=4)
    for fn in (
        lambda a, b: np.clip(a, -0.5, 0.5),
        lambda a, b: np.clip(a, None, 0.1),
        lambda a, b: np.clip(a, 1.0, -1.0),  # crossed bounds: NumPy gives the upper
        lambda a, b: np.stack([a, b]),
        lambda a, b: np.stack((a, b), axis=-1),
        lambda a, b: np.vstack([a, b]),
        lambda a, b: np.vstack([a[0], b[1]]),
        lambda a, b: np.full_like(a, 7) + b,
        lambda a, b: a.flatten() * 2,
        lambda a, b: a.ravel(),
        lambda a, b: a.copy() + 1,
        lambda a, b: a.swapaxes(0, 1),
        lambda a, b: a[None].squeeze(0),
        lambda a, b: np.dot(a, 2.0),
        lambda a, b: a.clip(-0.1, 0.2),
        lambda a, b: np.clip(a, None, None),
        lambda a, b: np.ravel(a),
    ):
        got, want = jit(fn)(x, y), fn(x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    # Products: within gamma_K (|A| @ |B|) of the exact one (K = 4).
    for fn in (lambda a, b: np.dot(a, b.T), lambda a, b: np.dot(a, v), lambda a, b: np.dot(v, v)):
        got, want = jit(fn)(x, y), fn(x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        bound = 2 * 5 * eps(want.dtype) * np.abs(fn(np.abs(x), np.abs(y)))
        assert_close(got, want, bound + 1e-300)
    # std is sqrt(var): var within its bound, and sqrt halves the relative error.
    for fn in (lambda a, b: np.std(a, axis=1), lambda a, b: a.std()):
        got, want = jit(fn)(x, y), fn(x, y)
        assert_close(got, want, 30 * E32 * np.abs(want))
    # np.dot of stacks: a's last axis with b's second-to-last (not matmul's
    # batches); each element a sum of K products, within K eps (|a| . |b|).
    s3 = np.arange(24.0).reshape(2, 3, 4) / 7 - 1.5
    m45 = np.arange(20.0).reshape(4, 5) / 3 - 2
    for a, b, k in (
        (s3, m45, 4),  # (2, 3, 4) . (4, 5)
        (s3, m45[:, 0], 4),  # (2, 3, 4) . (4,)
        (m45.T[:3, :2], s3[:, :2, :], 2),  # (3, 2) . (2, 2, 4)
        (s3, s3.transpose(0, 2, 1), 4),  # (2, 3, 4) . (2, 4, 3)
    ):
        want, got = np.dot(a, b), jit(np.dot)(a, b)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert_close(got, want, k * E64 * np.dot(np.abs(a), np.abs(b)))
    ints = np.arange(3, dtype=np.int32)  # a Python int is an int64 array to NumPy's dot
    assert jit(lambda a: np.dot(a, 3))(ints).dtype == np.dot(ints, 3).dtype == np.int64
    np.testing.assert_array_equal(jit(lambda a: np.dot(a, 3))(ints), np.dot(ints, 3))


def test_a_transposed_matrix_times_itself():
    # x.T @ x.T of a (1, 1) x: one buffer as both operands of a one-row product
    # (the small-products pass folded the transpose away and crashed).
    for dtype in (np.float32, np.float64):
        a = np.full((1, 1), 2.0, dtype)
        for options in ({}, {"blas": False}):
            np.testing.assert_array_equal(jit(lambda t: t.T @ t.T, **options)(a), a.T @ a.T)


@pytest.mark.parametrize("options", [{}, {"blas": False}, {"target": "gpu", "gpu_emulate": True}])
def test_slices_with_steps(options, rng):
    # tensor.extract_slice with strides: views with steps through every later
    # stage (fusion, BLAS or loops, reshapes, the emulated GPU target).
    x = rng.normal(size=(12, 10)).astype(np.float32)
    x3 = rng.normal(size=(6, 4, 9))
    w = rng.normal(size=(5, 7)).astype(np.float32)
    exact = [
        (lambda a: a[::2], x),
        (lambda a: a[1::3, ::2], x),
        (lambda a: a[:, 1:8:2], x),
        (lambda a: a[::2, 3], x),
        (lambda a: a[range(0, 12, 4)], x),
        (lambda a: a[::2].reshape(3, 2, 10), x),
        (lambda a: a[::2].reshape(-1), x),
        (lambda a: a[::2, :, ::4], x3),
        (lambda a: a[1::2, 1:3, 1:8:3] + 1, x3),
        (lambda a: np.concatenate([a[::2], a[1::2]], axis=1), x),
        (lambda a: tinymlir.slice(a, [0, 1], [12, 10], [5, 3]), x),
    ]
    for k, (fn, a) in enumerate(exact):
        got = jit(fn, **options)(a)
        want = fn(a) if k < len(exact) - 1 else x[0:12:5, 1:10:3]
        assert got.dtype == want.dtype and got.shape == want.shape, k
        np.testing.assert_array_equal(got, want)
    # Products of strided operands: within gamma_K (|A| @ |B|), K <= 10.
    # (The largest of a row's products is within the largest of their bounds.)
    aw = np.abs(w)
    for fn, magnitude in (
        (lambda a: a[::2, ::2] @ w, lambda a: a[::2, ::2] @ aw),
        (lambda a: a[:5, ::2] @ w, lambda a: a[:5, ::2] @ aw),
        (lambda a: a[::2].T @ a[::2], lambda a: a[::2].T @ a[::2]),
        (
            lambda a: (a.astype(np.float64)[::2, :5] @ w).max(axis=1),
            lambda a: (a[::2, :5] @ aw).max(axis=1),
        ),
    ):
        got, want = jit(fn, **options)(x), fn(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_close(got, want, 2 * 11 * eps(got.dtype) * magnitude(np.abs(x)))
    with pytest.raises(ValueError, match=r"\[slice\] step 0 on axis 1 must be positive"):
        tinymlir.slice(x, [0, 0], [2, 2], [1, 0])


def test_triu_tril_keep_non_finite_values_and_zero_the_rest():
    # A product with a 0/1 mask gave nan for inf or nan on the zeroed side
    # (0 * inf); NumPy's triu/tril select. Rectangular, batched, every k from
    # below the last row to past the last column, and int32.
    rng = np.random.default_rng(7)
    for shape in ((4, 4), (3, 5), (5, 2), (2, 3, 4)):
        x = rng.standard_normal(shape)
        x.flat[::3] = np.inf
        x.flat[1::5] = -np.inf
        x.flat[2::7] = np.nan
        for k in range(-shape[-2] - 1, shape[-1] + 2):
            for fn in (np.triu, np.tril):
                got = jit(lambda a: fn(a, k))(x)
                np.testing.assert_array_equal(got, fn(x, k), err_msg=f"{fn.__name__} k={k} {shape}")
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = jit(lambda a: np.triu(a, 1) + np.tril(a, -1))(xi)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.triu(xi, 1) + np.tril(xi, -1))
    # 1-D: NumPy's (n, n) of its rows; 0-D: NumPy's TypeError.
    v = np.array([1.0, np.inf, np.nan])
    for fn in (np.triu, np.tril):
        np.testing.assert_array_equal(jit(lambda a: fn(a, 1))(v), fn(v, 1))  # noqa: B023
    with pytest.raises(TypeError, match="tri\\(\\) missing 1 required positional argument"):
        jit(lambda a: np.triu(a.sum()))(np.ones(3))


def test_rounding_and_sign_match_numpy_exactly():
    # Selections and roundings: exact, -0 and nan included; int32 keeps its
    # dtype (NumPy 2's floor/ceil/trunc/sign of integers).
    for dtype in (np.float32, np.float64):
        x = np.array(
            [
                -2.5,
                -1.5,
                -0.5,
                -0.0,
                0.0,
                0.5,
                1.5,
                2.5,
                -1e-30,
                7.0,
                1e20,
                -1e20,
                np.inf,
                -np.inf,
                np.nan,
            ],
            dtype,
        )
        for fn in (np.floor, np.ceil, np.trunc, np.sign):
            got = jit(fn)(x)
            assert got.dtype == dtype, fn.__name__
            np.testing.assert_array_equal(got, fn(x), err_msg=fn.__name__)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(fn(x)), err_msg=fn.__name__)
    xi = np.array([-7, -1, 0, 1, 9, np.iinfo(np.int32).min, np.iinfo(np.int32).max], np.int32)
    for fn in (np.floor, np.ceil, np.trunc, np.sign):
        got = jit(fn)(xi)
        assert got.dtype == np.int32, fn.__name__
        np.testing.assert_array_equal(got, fn(xi), err_msg=fn.__name__)


def test_exp2_expm1_log2_log10_log1p_match_numpy():
    # Both sides within a few ulp of the true value (glibc's libm and libmvec
    # at most 4 ulp, NumPy's loops likewise): 8 ulp of the result apart. expm1
    # and log1p keep their relative accuracy near 0, where exp(x) - 1 and
    # log(1 + x) lose every digit (1e-10 -> 1.000000082740371e-10).
    for dtype in (np.float32, np.float64):
        e = eps(dtype)
        small = np.array([1e-10, -1e-10, 1e-30, 3e-5, -3e-5], dtype)
        x = np.concatenate([small, np.linspace(-20, 20, 41, dtype=dtype)])
        positive = np.concatenate([np.abs(small), np.geomspace(1e-3, 1e6, 30, dtype=dtype)])
        with np.errstate(all="ignore"):
            for fn, arg in (
                (np.exp2, x),
                (np.expm1, x),
                (np.log2, positive),
                (np.log10, positive),
                (np.log1p, np.concatenate([small, positive])),
            ):
                want = fn(arg)
                got = jit(fn)(arg)
                assert got.dtype == dtype, fn.__name__
                assert_close(got, want, 8 * e * np.abs(want))
        # int32 operands are float64, as NumPy's.
        got = jit(np.exp2)(np.arange(-3, 4, dtype=np.int32))
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, np.exp2(np.arange(-3, 4)))
    with np.errstate(all="ignore"):
        special = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan])
        for fn in (np.log2, np.log10, np.log1p, np.exp2, np.expm1):
            np.testing.assert_array_equal(jit(fn)(special), fn(special), err_msg=fn.__name__)


def test_outer_tensordot_and_einsum_match_numpy():
    # Contractions: each side within gamma_K of the exact sum (K terms, K the
    # contracted size times any summed-away size), so 2 gamma_K (|A| . |B|)
    # apart; products without a sum are exact.
    rng = np.random.default_rng(11)
    a = rng.standard_normal((3, 4, 5))
    b = rng.standard_normal((5, 4, 2))
    v, w = rng.standard_normal(6), rng.standard_normal(7).astype(np.float32)

    def within(got, want, bound_of_abs, k, dtype=np.float64):
        gamma = k * eps(dtype) / (1 - k * eps(dtype))
        assert_close(got, want, 2 * gamma * bound_of_abs)

    within(jit(np.outer)(v, w), np.outer(v, w), 0, 1)
    for axes, k in ((1, 5), (([2, 1], [0, 1]), 20), (([1], [1]), 4), (0, 1)):
        got = jit(lambda x, y: np.tensordot(x, y, axes))(a, b)
        within(got, np.tensordot(a, b, axes), np.tensordot(np.abs(a), np.abs(b), axes), k)
    m = rng.standard_normal((4, 6))
    n = rng.standard_normal((6, 3))
    batch1, batch2 = rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 6, 3))
    cases = [
        ("ij,jk->ik", (m, n), 6),
        ("ij,kj->ik", (m, n.T), 6),
        ("ij,jk", (m, n), 6),
        ("bij,bjk->bik", (batch1, batch2), 6),
        ("bij,bjk->bki", (batch1, batch2), 6),
        ("ij->ji", (m,), 1),
        ("ij->i", (m,), 6),
        ("ij->", (m,), 24),
        ("i,i->", (v, v), 6),
        ("i,j->ij", (v, v[:4]), 1),
        ("ij,ij->i", (m, m), 6),
        ("bij,bkj->bik", (batch1, batch1), 6),
        ("ijk,kjl->il", (a, b), 20),
        ("ijk,k->ij", (a, b[:, 0, 0]), 5),
        ("ijk,lk->", (a, b[:, :, 0].T), 60),
        ("...ij->...ji", (batch1,), 1),
        ("ii->i", (m[:, :4],), 1),
    ]
    for spec, args, k in cases:
        got = jit(lambda *xs: np.einsum(spec, *xs))(*args)
        want = np.einsum(spec, *args)
        within(got, want, np.einsum(spec, *[np.abs(x) for x in args]), k)
    x32 = m.astype(np.float32)
    got = jit(lambda p: np.einsum("ij,kj->ik", p, p))(x32)
    assert got.dtype == np.float32
    within(
        got,
        np.einsum("ij,kj->ik", x32, x32),
        np.einsum("ij,kj->ik", np.abs(x32), np.abs(x32)),
        6,
        np.float32,
    )
    with pytest.raises(ValueError, match="index 'j' has sizes 6 and 4"):
        jit(lambda p: np.einsum("ij,jk->ik", p, p))(m)


def test_einsum_of_any_operands_ellipses_and_diagonals_as_numpys():
    # Each contraction's result is within gamma_K (|A| . |B| ...) of the exact
    # sum, K the count of roundings along one output element's path: NumPy's
    # loop (all the products, then their sum) and ours (one pair at a time)
    # both stay under K = (terms summed) + (factors per term), so they are
    # 2 gamma_K (|A| . |B| ...) apart. Integer results are exact.
    rng = np.random.default_rng(12)
    A, B, C = rng.standard_normal((4, 4)), rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    T = rng.standard_normal((2, 3, 4, 4))
    cube = rng.standard_normal((3, 2, 3))
    cases = [
        ("ii->", (A,), 4),
        ("ii", (A,), 4),
        ("ii->i", (A,), 1),
        ("iji->j", (cube,), 3),
        ("ij,jk,kl->il", (A, B, C), 4 * 5 + 3),
        ("ij,jk,kl", (A, B, C), 4 * 5 + 3),
        ("i,i,i->", (A[0], A[1], A[2]), 4 + 3),
        ("ij,ij,ij->i", (A, A, A), 4 + 3),
        ("ij,jk,kl,lm->im", (A, B, C, C.T), 4 * 5 * 3 + 4),
        ("...ij,...jk->...ik", (T, T), 4 + 2),
        ("...ii->...i", (T,), 1),
        ("...ii", (T,), 4),
        ("...i,i", (T, A[0]), 4 + 2),
        ("bij,jk->bik", (T[0], B), 4 + 2),
        ("ij,ij->", (A[:, :3], A[:, :1]), 12 + 2),  # a size-1 axis broadcasts
        ("i...,i...->...", (T, T[:, :1]), 2 + 2),
        ("ji,...", (A, B[0]), 1),
    ]
    for spec, args, k in cases:
        got = jit(lambda *xs, s=spec: np.einsum(s, *xs))(*args)
        want = np.einsum(spec, *args)
        gamma = k * E64 / (1 - k * E64)
        assert_close(got, want, 2 * gamma * np.einsum(spec, *[np.abs(x) for x in args]), spec)
    ints = rng.integers(-9, 9, (4, 4)).astype(np.int32)
    for spec, args in (("ij->", (ints,)), ("ii->i", (ints,)), ("ij,jk,kl->il", (ints,) * 3)):
        got, want = jit(lambda *xs, s=spec: np.einsum(s, *xs))(*args), np.einsum(spec, *args)
        assert got.dtype == want.dtype and np.array_equal(got, want), spec
    # dtype= casts the operands (casting='safe' by default), out= takes the result
    x32 = B.astype(np.float32)
    fn = lambda p, q: np.einsum("ij,jk->ik", p, q, dtype=np.float32, casting="same_kind")
    got, want = jit(fn)(x32, C), fn(x32, C)
    assert_close(got, want, 2 * 7 * E32 * np.einsum("ij,jk->ik", np.abs(x32), np.abs(C)))

    def into(p, q):
        out = np.zeros((4, 3))
        r = np.einsum("ij,jk->ik", p, q, out=out)
        return out, r is out

    (got, same_got), (want, same_want) = jit(into)(B, C), into(B, C)
    assert same_got is same_want is True
    assert_close(got, want, 2 * 7 * E64 * np.einsum("ij,jk->ik", np.abs(B), np.abs(C)))
    for fn, args in (
        (lambda p: np.einsum("ii", p), (B,)),
        (lambda p: np.einsum("ij,jk", p), (B,)),
        (lambda p: np.einsum("ij", p, p), (B,)),
        (lambda p: np.einsum("ijk", p), (B,)),
        (lambda p: np.einsum("i", p), (B,)),
        (lambda p: np.einsum("ij->ii", p), (B,)),
        (lambda p: np.einsum("ij->k", p), (B,)),
        (lambda p: np.einsum("i1", p), (B,)),
    ):
        with pytest.raises(ValueError) as want:
            fn(*args)
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            jit(fn)(*args)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        jit(lambda p: np.einsum("i,i", p, p, dtype=np.int32))(A[0])


def test_rint_round_reciprocal_and_arctan2_at_the_edges():
    # rint and round(0 decimals) take halves to even, keep -0 (exact);
    # arctan2's signed zeros and infinities as NumPy's (libm's, exact there).
    for dtype in (np.float32, np.float64):
        x = np.array(
            [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 1e20, np.inf, np.nan], dtype
        )
        for fn in (np.rint, np.round, np.around, lambda a: a.round()):
            got = jit(fn)(x)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, fn(x))
            np.testing.assert_array_equal(np.signbit(got), np.signbit(fn(x)))
        with np.errstate(divide="ignore"):
            r = np.array([2.0, -0.0, 0.0, 3.0, np.inf], dtype)
            assert_close(jit(np.reciprocal)(r), np.reciprocal(r), eps(dtype) * np.abs(1 / r))
        z = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf], dtype)
        y, xx = np.repeat(z, len(z)), np.tile(z, len(z))
        want = np.arctan2(y, xx)
        got = jit(np.arctan2)(y, xx)
        assert_close(got, want, 8 * eps(dtype) * np.abs(want))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    i = np.array([-3, 0, 4], np.int32)
    assert jit(np.rint)(i).dtype == np.rint(i).dtype == np.float64  # NumPy 2: float64
    assert jit(np.round)(i).dtype == np.round(i).dtype == np.int32  # round keeps integers
    with pytest.raises(TypeError, match=r"\[reciprocal\] requires floating-point operands"):
        jit(np.reciprocal)(i)  # NumPy's integer reciprocal is C's division (by zero: a trap)
    with pytest.raises(tinymlir.TracingError, match="decimals=0 only"):
        jit(lambda a: np.round(a, 2))(np.ones(2, np.complex128))


def test_round_with_decimals_is_numpys_bit_for_bit():
    # NumPy's PyArray_Round: rint(a * 10^d) / 10^d (d > 0), rint(a / 10^-d) *
    # 10^-d (d < 0), in the array's dtype; integers unchanged for d >= 0, else
    # rounded in float64 and cast back. The same operations: bit for bit.
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(50) * 1000, [0.125, 2.675, -0.5, 1e300, np.inf]])
    for dtype in (np.float64, np.float32, np.float16):
        a = x.astype(dtype)
        for d in (1, 2, 3, -1, -2, 12):
            with np.errstate(all="ignore"):
                want = np.round(a, d)
                got = jit(lambda v: np.round(v, d))(a)
                method = jit(lambda v: v.round(d))(a)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{dtype} {d}")
            np.testing.assert_array_equal(method, want)
    i = np.array([-1250, 15, 349, 351, 2**40], np.int64)
    for d in (-1, -2, 3):
        want = np.round(i, d)
        got = jit(lambda v: np.round(v, d))(i)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=str(d))


def test_prod_ddof_norm_and_broadcast_to_match_numpy():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 5)) + 0.5
    x32 = x.astype(np.float32)
    # A product of K factors: gamma_(K-1) relative a side.
    for a, e in ((x, E64), (x32, E32)):
        for axis in (None, 0, -1, (0, 2), ()):
            for keepdims in (False, True):
                want = np.prod(a, axis=axis, keepdims=keepdims)
                k = (
                    a.size
                    if axis is None
                    else int(np.prod([a.shape[i] for i in np.atleast_1d(axis)]))
                )
                assert_close(
                    jit(lambda p: np.prod(p, axis=axis, keepdims=keepdims))(a),
                    want,
                    2 * k * e * np.abs(want),
                )
        assert_close(jit(lambda p: p.prod(1))(a), a.prod(1), 8 * e * np.abs(a.prod(1)))
    # var/std with ddof: sum((x - mean)^2) / (n - ddof), as NumPy's; the bound
    # of the ddof=0 case (centered sums) scaled by n / (n - ddof).
    for ddof in (1, 2):
        for axis in (None, 1, (0, 2)):
            n = x.size if axis is None else int(np.prod([x.shape[i] for i in np.atleast_1d(axis)]))
            want = np.var(x, axis=axis, ddof=ddof)
            bound = 4 * (n + 2) * E64 * np.var(x, axis=axis) * n / (n - ddof) + 0 * want
            assert_close(jit(lambda p: np.var(p, axis=axis, ddof=ddof))(x), want, bound)
            assert_close(
                jit(lambda p: p.std(axis=axis, ddof=ddof))(x),
                np.std(x, axis=axis, ddof=ddof),
                bound / np.sqrt(want) + 2 * E64 * np.sqrt(want),
            )
    i = np.arange(6, dtype=np.int32)
    assert_close(jit(lambda p: np.var(p, ddof=1))(i), np.var(i, ddof=1), 64 * E64 * np.var(i))
    # Norms: sums of K squares (gamma_K relative), then a square root.
    v = rng.standard_normal((4, 6))
    for ord, axis in (
        (None, None),
        (2, 1),
        (1, 0),
        (np.inf, 1),
        (-np.inf, -1),
        ("fro", None),
        (None, (0, 1)),
        ("fro", (0, 1)),
        (None, 1),
    ):
        want = np.linalg.norm(v, ord=ord, axis=axis)
        got = jit(lambda p: np.linalg.norm(p, ord=ord, axis=axis))(v)
        assert_close(got, want, (v.size + 2) * E64 * np.abs(want))
    got = jit(lambda p: np.linalg.norm(p, axis=-1, keepdims=True))(v.astype(np.float32))
    assert got.dtype == np.float32 and got.shape == (4, 1)
    # the spectral norm of a matrix: its largest singular value (LAPACK), as NumPy's
    np.testing.assert_allclose(
        jit(lambda p: np.linalg.norm(p, ord=2))(v),
        np.linalg.norm(v, 2),
        rtol=64 * v.shape[-1] * E64,
    )
    # broadcast_to: a selection, exact for every dtype (-0, nan, int32, bool).
    for a in (
        np.array([-0.0, np.nan, 1.5]),
        np.arange(3, dtype=np.int32),
        np.array([True, False, True]),
    ):
        got = jit(lambda p: np.broadcast_to(p, (2, 3)))(a)
        np.testing.assert_array_equal(got, np.broadcast_to(a, (2, 3)))
        assert got.dtype == a.dtype
    np.testing.assert_array_equal(
        np.signbit(jit(lambda p: np.broadcast_to(p, (2, 3)))(np.array([-0.0, 1.0, -1.0]))),
        [[True, False, True]] * 2,
    )
    with pytest.raises(ValueError, match="broadcast"):
        jit(lambda p: np.broadcast_to(p, (2, 4)))(np.ones(3))
    assert jit(np.prod)(i) == np.prod(i) and type(jit(np.prod)(i)) is np.int64  # int64, as NumPy's


def test_ufunc_reduce_and_outer():
    # reduce is the reduction (NumPy's default axis 0); outer broadcasts the
    # first operand over the second's axes. Exact for max/min/any and the
    # outer products; sums and products within gamma_K.
    x = np.arange(12.0).reshape(3, 4) - 5.5
    for fn in (
        lambda a: np.maximum.reduce(a),
        lambda a: np.minimum.reduce(a, axis=(0, 1), keepdims=True),
        lambda a: np.logical_or.reduce(a > 3),
        lambda a: np.logical_and.reduce(a > -6, axis=1),
        lambda a: np.subtract.outer(a[0], a[1]),
        lambda a: np.multiply.outer(a, a[0]),
        lambda a: np.greater.outer(a[:, 0], a[0]),
    ):
        got, want = jit(fn)(x), fn(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    for fn, k in (
        (lambda a: np.add.reduce(a, axis=1), 4),
        (lambda a: np.multiply.reduce(a, axis=None), 12),
    ):
        want = fn(x)
        assert_close(jit(fn)(x), want, 2 * k * E64 * np.abs(fn(np.abs(x))))
    # (The refusal of other methods is not tested here: NumPy 2.4 keeps a
    # reference to the operand when __array_ufunc__ raises for reduce or
    # accumulate, which nanobind reports as a leak at exit.)


def test_heaviside_and_nan_to_num():
    for dtype in (np.float32, np.float64):
        x = np.array([-2.0, -0.0, 0.0, 3.0, np.inf, -np.inf, np.nan], dtype)
        for h in (0.5, np.array(0.25, dtype), x[::-1].copy()):
            got, want = jit(lambda a, b: np.heaviside(a, b))(x, h), np.heaviside(x, h)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
        for kw in ({}, {"nan": -1.0, "posinf": 7.0}, {"neginf": 3.0}):
            got, want = jit(lambda a: np.nan_to_num(a, **kw))(x), np.nan_to_num(x, **kw)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    i = np.arange(3, dtype=np.int32)
    np.testing.assert_array_equal(jit(np.nan_to_num)(i), i)


def test_diff_and_reductions_with_a_dtype():
    # diff: differences of neighbours (one rounding each, as NumPy's: exact
    # comparison), n times, any axis; bools differ by !=.
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    for n, axis in ((1, -1), (2, -1), (1, 0), (3, 1), (0, 0)):
        got, want = jit(lambda a: np.diff(a, n, axis))(x), np.diff(x, n, axis)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    m = x > 0
    np.testing.assert_array_equal(jit(np.diff)(m), np.diff(m))
    i = np.arange(12, dtype=np.int32).reshape(3, 4) ** 2
    np.testing.assert_array_equal(jit(lambda a: np.diff(a, axis=0))(i), np.diff(i, axis=0))
    with pytest.raises(ValueError, match="would be empty"):
        jit(lambda a: np.diff(a, 7))(x)
    # dtype=: the operand cast first (NumPy's accumulator of that dtype).
    k = x.shape[1]
    for fn, dtype in (
        (lambda a: np.sum(a, axis=1, dtype=np.float64), np.float64),
        (lambda a: a.sum(1, dtype=np.float64), np.float64),
        (lambda a: np.mean(a, 1, dtype=np.float64), np.float64),
        (lambda a: np.var(a, 1, dtype=np.float64), np.float64),
        (lambda a: a.std(1, dtype=np.float64, ddof=1), np.float64),
        (lambda a: np.prod(a, 1, dtype=np.float64), np.float64),
        (lambda a: np.sum(a > 0, axis=1, dtype=np.float32), np.float32),
        (lambda a: np.mean(a.astype(np.float64), dtype=np.float32), np.float32),
    ):
        got, want = jit(fn)(x), fn(x)
        assert got.dtype == want.dtype == dtype
        e = eps(dtype)
        assert_close(got, want, 8 * (k + 2) * e * np.abs(fn(np.abs(x))) + 8 * (k + 2) * e)
    with pytest.raises(tinymlir.TracingError, match=r"mean\(dtype=...\) with a float dtype only"):
        jit(lambda a: np.mean(a, dtype=np.int32))(x)
    got, want = jit(lambda a: np.sum(a, dtype=np.int64))(x), np.sum(x, dtype=np.int64)
    assert got == want and type(got) is type(want)


def test_hypot_and_logaddexp_at_the_edges():
    # hypot is the C library's (no overflow at 1e308, inf beside nan); logaddexp
    # and logaddexp2 are NumPy's formulas: x + log 2 at x == y (equal
    # infinities too), the larger plus log1p(exp(-|x - y|)), nan through.
    # Within 4 eps of NumPy's (libm's log1p and exp are not correctly rounded).
    vals = [0.0, -0.0, 1.0, -1.0, 2.5, 1e308, -1e308, 1e-320, np.inf, -np.inf, np.nan, 700.0]
    a, b = np.repeat(vals, len(vals)), np.tile(vals, len(vals))
    with np.errstate(all="ignore"):
        for dtype in (np.float64, np.float32, np.float16):
            x, y = a.astype(dtype), b.astype(dtype)
            for fn in (np.hypot, np.logaddexp, np.logaddexp2):
                got, want = jit(fn)(x, y), fn(x, y)
                assert got.dtype == want.dtype, fn.__name__
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=fn.__name__)
                np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=fn.__name__)
                finite = np.isfinite(want)
                w = want[finite].astype(np.float64)
                err = np.abs(got[finite].astype(np.float64) - w)
                assert np.all(err <= 4 * eps(dtype) * np.abs(w)), fn.__name__
    i = np.array([3, 4, -5], np.int8)  # NumPy's loops: int8 in float16
    for fn in (np.hypot, np.logaddexp):
        assert jit(fn)(i, i).dtype == fn(i, i).dtype == np.float16


def test_reductions_over_axis_tuples_and_their_errors_are_numpys():
    """Reductions take NumPy's axis tuples in the C++ core (any order, negative,
    empty) and raise NumPy's AxisError (also a ValueError and an IndexError) and
    the ValueError for a repeated axis."""
    a = np.arange(24.0).reshape(2, 3, 4) - 7.5
    for name in ("sum", "prod", "max", "min", "mean", "var", "any", "all"):
        for axis in ((2, 0), (-1, 1), (), (0, 1, 2), 1):
            fn = jit(lambda x, name=name, axis=axis: getattr(np, name)(x, axis=axis))
            got, want = fn(a), getattr(np, name)(a, axis=axis)
            assert got.dtype == want.dtype and got.shape == want.shape, (name, axis)
            # at most 24 terms (sums of integers exact; products, means and var's
            # squares within 24 ulps, rtol 24 * 2**-52 < 1e-13)
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=f"{name} {axis}")
        with pytest.raises(np.exceptions.AxisError):
            jit(lambda x, name=name: getattr(np, name)(x, axis=3))(a)
        with pytest.raises(np.exceptions.AxisError):
            jit(lambda x, name=name: getattr(np, name)(x, axis=(0, -4)))(a)
        with pytest.raises(ValueError, match="duplicate value in 'axis'"):
            jit(lambda x, name=name: getattr(np, name)(x, axis=(1, -2)))(a)


def test_nan_to_num_and_clip_of_every_float_and_complex_as_numpys():
    """np.nan_to_num replaces nan and infinities in float16 and in each part of
    a complex array too, and np.clip clips out-of-range Python ints to an
    integer array's range (NumPy 2), in the C++ core."""
    for dtype in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        x = np.array([0.0, np.nan, np.inf, -np.inf, 2.5], dtype)
        if np.dtype(dtype).kind == "c":
            x = x + np.array([np.inf, 1.0, np.nan, -np.inf, 0.0]) * 1j
        for kwargs in ({}, {"nan": -1.0, "posinf": 9.0}):
            got = jit(lambda a, kw=kwargs: np.nan_to_num(a, **kw))(x)
            want = np.nan_to_num(x, **kwargs)
            assert got.dtype == want.dtype, (dtype, kwargs)
            np.testing.assert_array_equal(got, want)
    u = np.array([0, 3, 200, 255], np.uint8)
    for lo, hi in ((-5, 300), (2, 1.5), (None, 2**40), (-(2**40), 7)):
        got, want = jit(lambda a, lo=lo, hi=hi: np.clip(a, lo, hi))(u), np.clip(u, lo, hi)
        assert got.dtype == want.dtype, (lo, hi)
        np.testing.assert_array_equal(got, want)


def test_round_of_bools_is_numpys_float16_or_its_type_error():
    """NumPy's rint of bools is float16's loop; other decimals multiply by a
    float64 into the bool array, which NumPy refuses (a UFuncTypeError, a
    TypeError)."""
    b = np.array([True, False, True])
    for f in (np.round, np.around, lambda a: a.round()):
        got = same(f, b)
        assert np.asarray(got).dtype == np.float16
    for decimals in (1, -1):
        with pytest.raises(TypeError, match="Cannot cast ufunc"):
            np.round(b, decimals)
        with pytest.raises(TypeError, match="Cannot cast ufunc"):
            jit(lambda a, d=decimals: np.round(a, d))(b)
