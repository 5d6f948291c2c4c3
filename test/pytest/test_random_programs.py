"""Random programs of traced ops with broadcasting, against NumPy (values and dtypes).

Each program is evaluated three ways: jitted, by NumPy in the program's dtypes, and
as a running error bound: every node carries M, a bound on its accumulated
sensitivity (add: Ma + Mb; mul: Ma|b| + Mb|a|; ...), plus its own rounding, so that
|jit - numpy| <= 2 * c * eps * M holds for both sides' roundings."""

import numpy as np
import pytest
from conftest import assert_close

from tinymlir import jit


def build(rng, depth, n_inputs, shapes):
    """A random expression: a nested tuple (op, children...) over input indices."""
    if depth == 0:
        return ("in", int(rng.integers(n_inputs)))
    op = rng.choice(
        ["add", "sub", "mul", "max", "tanh", "exp_tanh", "scale", "sum", "mean", "T", "reshape"]
    )
    a = build(rng, depth - 1, n_inputs, shapes)
    if op in ("add", "sub", "mul", "max"):
        return (op, a, build(rng, depth - 1, n_inputs, shapes))
    return (op, a)


def evaluate(node, inputs, xp_ops):
    return xp_ops(
        node, [evaluate(c, inputs, xp_ops) for c in node[1:]] if node[0] != "in" else [], inputs
    )


def numpy_op(node, args, inputs):
    op = node[0]
    if op == "in":
        return inputs[node[1]]
    a = args[0]
    if op in ("add", "sub", "mul", "max"):
        b = args[1]
        return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum}[op](a, b)
    if op == "tanh":
        return np.tanh(a)
    if op == "exp_tanh":
        return np.exp(np.tanh(a))
    if op == "scale":
        return a * 0.5 + 1
    if op == "sum":
        return np.sum(a, axis=-1, keepdims=True)
    if op == "mean":
        return np.mean(a, axis=-1, keepdims=True)
    if op == "T":
        return a.T
    if op == "reshape":
        return a.reshape(a.shape)  # a no-op reshape through the method
    raise AssertionError(op)


def bound_op(node, args, inputs):
    """(value in float64, M): |computed - exact| <= c eps M with c ~ 8 per level."""
    op = node[0]
    if op == "in":
        x = inputs[node[1]].astype(np.float64)
        return x, np.zeros_like(x)
    (a, ma) = args[0]
    if op in ("add", "sub"):
        (b, mb) = args[1]
        v = a + b if op == "add" else a - b
        return v, ma + mb + np.abs(v) + np.abs(a) + np.abs(b)
    if op == "mul":
        (b, mb) = args[1]
        v = a * b
        return v, ma * np.abs(b) + mb * np.abs(a) + ma * mb + np.abs(v)
    if op == "max":
        (b, mb) = args[1]
        return np.maximum(a, b), np.maximum(ma, mb)
    if op == "tanh":
        v = np.tanh(a)
        return v, ma + 4 * np.abs(v)
    if op == "exp_tanh":
        t = np.tanh(a)
        v = np.exp(t)
        return v, np.e * (ma + 4) + 4 * np.abs(v)
    if op == "scale":
        v = a * 0.5 + 1
        return v, 0.5 * ma + np.abs(v) + 1
    if op in ("sum", "mean"):
        n = a.shape[-1]
        s = np.sum(np.abs(a), axis=-1, keepdims=True) * (n + 2)
        m = np.sum(ma, axis=-1, keepdims=True) + s
        v = np.sum(a, axis=-1, keepdims=True)
        return (v, m) if op == "sum" else (v / n, m / n + np.abs(v / n))
    if op == "T":
        return a.T, ma.T
    if op == "reshape":
        return a, ma
    raise AssertionError(op)


def depth_of(node):
    return 0 if node[0] == "in" else 1 + max(depth_of(c) for c in node[1:])


@pytest.mark.parametrize("seed", range(40))
def test_random_program(seed):
    rng = np.random.default_rng(seed)
    dtypes = [rng.choice(["float32", "float64"]) for _ in range(3)]
    # Shapes that broadcast against (5, 5): full, a row, a column, a scalar-like (1, 1).
    shapes = [(5, 5), (5,), (5, 1), (1, 5), (1, 1)]
    inputs = [rng.normal(size=shapes[rng.integers(len(shapes))]).astype(d) for d in dtypes]
    program = build(rng, int(rng.integers(2, 5)), len(inputs), shapes)

    def fn(*xs):
        return evaluate(program, xs, numpy_op)

    try:
        want = fn(*inputs)
    except ValueError:  # e.g. transposes that do not broadcast: the jit must agree
        with pytest.raises(ValueError, match="cannot broadcast"):
            jit(fn)(*inputs)
        return
    got = jit(fn)(*inputs)
    value, m = evaluate(program, inputs, bound_op)
    assert got.dtype == want.dtype
    # Parts of a float64 result may be computed in float32 (promotion happens where
    # operands meet): the bound uses the coarsest precision among the inputs.
    e = max(np.finfo(x.dtype).eps for x in inputs)
    assert_close(got, want, 8 * e * (m + np.abs(value)), f"seed {seed}: {program}")
