"""The library's kernels from Python (tinymlir.gelu, softmax, layer_norm, linear,
attention: the C++ kernels GPT-2 runs), traced and eager, against NumPy written
as in the seeds."""

import numpy as np
import pytest

import tinymlir
from conftest import assert_close, eps
from tinymlir import jit


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_attention(x, w_qkv, b_qkv, w_out, b_out, heads):
    t, c = x.shape
    q, k, v = np.split(x @ w_qkv + b_qkv, 3, axis=-1)
    mask = (1 - np.tri(t, dtype=x.dtype)) * -1e10
    out = [
        np_softmax(qh @ kh.T / np.sqrt(c // heads) + mask) @ vh
        for qh, kh, vh in zip(*(np.split(m, heads, axis=-1) for m in (q, k, v)))
    ]
    return np.hstack(out) @ w_out + b_out


@pytest.fixture
def params(rng):
    t, c = 5, 8
    return (
        rng.normal(size=(t, c)),
        rng.normal(size=(c, 3 * c)) / 3,
        rng.normal(size=3 * c),
        rng.normal(size=(c, c)) / 3,
        rng.normal(size=c),
    )


# Float64 inputs of order 1: each result is at most a few dozen roundings deep
# (products of K <= 24 terms, exp and tanh within 4 ulp, softmax and layer
# norm's sums of <= 8), each a relative error of eps on values of order 1 or
# their magnitude: 128 eps (1 + |y|) bounds both sides' differences with room.
# A kernel wired wrong (heads, scale, mask, eps, the GELU constant) is off by
# 1e-3 or more.
def bound(want):
    return 128 * eps(np.float64) * (1 + np.abs(want))


def test_kernels_match_numpy(params, rng):
    x, w_qkv, b_qkv, w_out, b_out = params
    gain, bias = rng.normal(size=8), rng.normal(size=8)
    cases = [
        (tinymlir.gelu, (x,), 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
        (tinymlir.softmax, (x,), np_softmax(x)),
        (
            tinymlir.layer_norm,
            (x, gain, bias),
            gain * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
            + bias,
        ),
        (tinymlir.linear, (x, w_out, b_out), x @ w_out + b_out),
        (tinymlir.attention, params + (2,), np_attention(*params, 2)),
        (tinymlir.attention, params + (4,), np_attention(*params, 4)),
    ]
    for fn, args, want in cases:
        got = jit(fn)(*args)
        assert_close(got, want, bound(want), fn.__name__)
        assert_close(fn(*args), want, bound(want), f"eager {fn.__name__}")


def test_gelu_promotes_float32_as_the_seeds(rng):
    x = rng.normal(size=7).astype(np.float32)
    assert jit(tinymlir.gelu)(x).dtype == np.float64


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
