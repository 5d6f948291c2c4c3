"""NumPy's bool under @jit: comparisons, where, logical operations, any/all,
bool inputs and outputs, and NumPy 2's promotion of bool. Every result is
a selection or a comparison: checked against NumPy exactly, dtype included."""

import numpy as np
import pytest
from conftest import assert_same, same

import tinymlir
from tinymlir import jit

SPECIAL = [0.0, -0.0, 1.0, -1.5, 2.5, np.inf, -np.inf, np.nan, 1e-30, 3.0]


def operands():
    x = np.array(SPECIAL, np.float64)
    y = np.roll(x, 3)
    yield x, y
    yield x.astype(np.float32), y.astype(np.float32)
    yield x.astype(np.float32), y  # float32 with float64
    ints = np.array([0, 1, -1, 7, -7, 2**31 - 1, -(2**31), 3, 3, 0], np.int32)
    yield ints, np.roll(ints, 1)
    yield ints, y  # int32 with float64
    yield ints, y.astype(np.float32)  # int32 with float32: float64, as NumPy's


COMPARISONS = [np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal]


def test_comparisons_match_numpy_with_nan_inf_and_mixed_dtypes():
    for a, b in operands():
        for op in COMPARISONS:
            same(op, a, b)
        same(lambda p, q: (p < q, p <= q, p > q, p >= q, p == q, p != q), a, b)
    x = np.array(SPECIAL)
    same(lambda p: (p > 0, 0.5 < p, p == 3, p != 1.0, p >= np.float32(2.5)), x)
    same(lambda p: p[:, None] < p[None, :], x)  # broadcast
    m = np.array([True, False, True])
    same(lambda p: (p == True, p != p, p > False), m)  # noqa: E712


def test_where_selects_with_promotion_and_broadcasting():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5))
    y32 = rng.standard_normal((5,)).astype(np.float32)
    same(lambda p: np.where(p > 0, p, 0.0), x)  # ReLU
    same(lambda p, q: np.where(p > 0, p, q), x, y32)  # float64 with float32
    same(lambda q: np.where(q < 0, q, 1.0), y32)  # a Python float takes float32
    same(lambda p: np.where(p[:, :1] > 0, 1.0, p), x)  # (4, 1) condition
    same(lambda p: np.where(p, p, -1.0), np.array(SPECIAL))  # nonzero is true, nan included
    ints = np.arange(-3, 3, dtype=np.int32)
    same(lambda i: np.where(i > 0, i, 0), ints)  # int32 stays int32
    same(lambda i, p: np.where(i > 0, i, p), ints, np.linspace(0, 1, 6))  # int32, float64
    mask = np.array([[True, False, True, False, True]])
    same(lambda m, p: np.where(m, p, -p), mask, x)  # a bool input
    same(lambda p: np.where(p > 0, p > 1, p < -1), x)  # bool values


def test_logical_operations_any_and_all():
    x = np.array(SPECIAL)
    b = x > 0
    c = np.isnan(x) | (x < -1)
    same(lambda p, q: (p & q, p | q, p ^ q, ~p), b, c)
    for op in (np.logical_and, np.logical_or, np.logical_xor):
        same(op, b, c)
        same(op, x, np.roll(x, 2))  # truth values of floats (nan is true)
    same(np.logical_not, x)
    same(lambda p: ((p > 0) & True, False | (p > 0)), x)
    grid = np.array(SPECIAL * 2).reshape(4, 5)
    for fn in (np.any, np.all):
        same(fn, grid > 0)
        same(fn, grid)  # nonzero: nan true, -0 false
        for axis in (0, 1, -1, (0, 1), ()):
            same(lambda p: fn(p > 0, axis=axis), grid)
            same(lambda p: fn(p > 0, axis=axis, keepdims=True), grid)
    same(lambda p: ((p > 0).any(), (p > -10).all(axis=0), (p < 0).any(1, keepdims=True)), grid)
    same(np.any, np.zeros(3, np.int32))
    same(np.all, np.ones((2, 2), np.int32))


def test_bool_promotes_as_numpy_2():
    x32 = np.linspace(-1, 1, 5, dtype=np.float32)
    i32 = np.arange(5, dtype=np.int32)
    m = np.array([True, False, True, True, False])
    same(lambda p, q: p * q, m, x32)  # float32
    same(lambda p, q: p + q, m, i32)  # int32
    same(lambda p: p * 2.5, m)  # float64
    same(lambda p, q: p / q, m, m | True)  # float64
    same(lambda p: (p.astype(np.float32), p.astype(np.int32), np.mean(p)), m)
    same(lambda p: (np.maximum(p, ~p), np.minimum(p, ~p)), m)
    same(lambda p: p.astype(bool), np.array(SPECIAL))  # nan true, -0 false
    with np.errstate(invalid="ignore"):  # 0 * inf
        same(lambda p: (p > 0).astype(np.float64) * p, np.array(SPECIAL))


def test_isnan_isinf_isfinite():
    for dtype in (np.float32, np.float64):
        x = np.array(SPECIAL, dtype)
        for fn in (np.isnan, np.isinf, np.isfinite):
            same(fn, x)
    ints = np.array([0, 5, -2], np.int32)
    for fn in (np.isnan, np.isinf, np.isfinite):
        same(fn, ints)


def test_bool_inputs_and_outputs_cross_the_boundary():
    f = jit(lambda m, p: (m, ~m, np.where(m, p, 0.0)))
    m = np.array([[True, False], [False, True]])
    x = np.arange(4.0).reshape(2, 2)
    got = f(m, x)
    assert got[0].dtype == np.bool_ and got[1].dtype == np.bool_
    np.testing.assert_array_equal(got[0], m)
    np.testing.assert_array_equal(got[1], ~m)
    np.testing.assert_array_equal(got[2], np.where(m, x, 0.0))
    # A bool argument is its own specialization: int32 values are not taken as bools.
    g = jit(lambda p: (p, np.where(p, 1.0, 2.0)))
    for arg in (m, m.astype(np.int32) * 3, m.astype(np.float32)):
        assert_same((arg, np.where(arg, 1.0, 2.0)), g(arg))


def test_bool_results_that_numpy_makes_int64():
    # NumPy 2: bool * Python int, sum(bool) and where(c, 1, 0) are int64.
    m = np.array([True, False, True])
    x = np.array([1.5, -2.0, 0.0])
    for fn, arg in (
        (lambda p: p * 2, m),
        (np.sum, m),
        (lambda p: np.where(p > 0, 1, 0), x),
        (lambda p: (p > 0).sum(axis=0), x),
        (np.count_nonzero, m),
    ):
        got, want = jit(fn)(arg), fn(arg)
        assert np.asarray(got).dtype == np.asarray(want).dtype == np.int64
        np.testing.assert_array_equal(got, want)


def test_bool_arithmetic_as_numpys():
    # bool + bool is logical or, bool * bool logical and, np.exp(bool) float16,
    # bool ** bool int8, & | ^ ~ logical: NumPy's loops for bools.
    m = np.array([True, False, True, False])
    n = np.array([True, True, False, False])
    for fn in (
        lambda p, q: p + q,
        lambda p, q: p * q,
        lambda p, q: np.exp(p),
        lambda p, q: p**q,
        lambda p, q: p // q,
        lambda p, q: (p & q, p | q, p ^ q, ~p),
        lambda p, q: p << q,
        lambda p, q: np.abs(p),
        lambda p, q: np.floor(p),
    ):
        assert_same(fn(m, n), jit(fn)(m, n))


def test_bool_mistakes_are_named():
    m = np.array([True, False])
    x = np.array([1.5, -2.0])
    with pytest.raises(TypeError, match=r"\[sub\] numpy boolean subtract"):
        jit(lambda p: p - p)(m)
    with pytest.raises(TypeError, match=r"\[bitwise_and\] not supported for float64"):
        jit(lambda p: p & p)(x)
    with pytest.raises(TypeError, match=r"\[invert\] not supported for float64"):
        jit(lambda p: ~p)(x)
    with pytest.raises(tinymlir.TracingError, match="shape depends on the data"):
        jit(lambda p: np.where(p > 0))(x)
    with pytest.raises(TypeError, match="truth value of a traced array"):
        jit(lambda p: p if p > 0 else -p)(x)
    with pytest.raises(TypeError, match="boolean-mask read x\\[mask\\] cannot be returned"):
        jit(lambda p: p[p > 0])(x)
    with pytest.raises(TypeError, match="boolean-mask read .*cannot be traced"):
        jit(lambda p: p[p > 0].reshape(-1))(x)
    # A concrete mask's count is known: NumPy's x[mask.nonzero()].
    for mask in (np.array([True, False]), [False, True]):
        f = lambda p: p[mask].reshape(-1)  # noqa: B023
        assert_same(f(x), jit(f)(x))


def test_bool_on_the_emulated_gpu_target():
    # The GPU target's mapping and lowering (run on the CPU): the same answers.
    x = np.linspace(-2, 2, 24).reshape(4, 6)
    x[1, 2] = np.nan
    fn = lambda a: (
        np.where(a > 0, a, 0.0),
        (a > 0) & (a < 1),
        np.any(a > 1, axis=0),  # noqa: E731
        np.isnan(a),
        np.triu(a, 1),
        np.sign(a),
    )
    assert_same(fn(x), jit(fn, target="gpu", gpu_emulate=True)(x))
