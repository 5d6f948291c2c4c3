"""GPT-2's kernels from Python (tinymlir.gpt2.gelu, softmax, layer_norm, linear,
attention: the C++ kernels of lib/models/nn), traced and eager, against NumPy
written as in the seeds."""

import subprocess
import sys

import numpy as np
import pytest
from conftest import assert_close, eps

from tinymlir import jit

gpt2 = pytest.importorskip("tinymlir.gpt2", reason="tinymlir.gpt2 is built with the models")


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
        (gpt2.gelu, (x,), 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
        (gpt2.softmax, (x,), np_softmax(x)),
        (
            gpt2.layer_norm,
            (x, gain, bias),
            gain * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
            + bias,
        ),
        (gpt2.linear, (x, w_out, b_out), x @ w_out + b_out),
        (gpt2.attention, params + (2,), np_attention(*params, 2)),
        (gpt2.attention, params + (4,), np_attention(*params, 4)),
    ]
    for fn, args, want in cases:
        got = jit(fn)(*args)
        assert_close(got, want, bound(want), fn.__name__)
        assert_close(fn(*args), want, bound(want), f"eager {fn.__name__}")


def test_gelu_promotes_float32_as_the_seeds(rng):
    x = rng.normal(size=7).astype(np.float32)
    assert jit(gpt2.gelu)(x).dtype == np.float64


def test_causal_mask_as_numpys():
    for dtype in (np.float32, np.float64):
        got = jit(lambda s: s + gpt2.causal_mask(5, s.dtype))(np.zeros((5, 5), dtype))
        want = (1 - np.tri(5, dtype=dtype)) * -1e10
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match=r"\[causal_mask\] size must be positive"):
        jit(lambda s: s + gpt2.causal_mask(0))(np.zeros((1, 1), np.float32))


def test_the_compiler_alone_loads_no_model():
    # import tinymlir loads the compiler's extension only; GPT-2's is tinymlir.gpt2's.
    code = (
        "import sys, tinymlir\n"
        "assert 'tinymlir._gpt2' not in sys.modules and 'tinymlir.gpt2' not in sys.modules\n"
        "assert not hasattr(tinymlir, 'attention') and not hasattr(tinymlir, 'causal_mask')\n"
        "import tinymlir.gpt2\n"
        "assert 'tinymlir._gpt2' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
