"""The seeds' Python examples (../shared/seeds), run as written, checked against NumPy."""

import numpy as np
from conftest import assert_close, eps

from tinymlir import exp, jit, sqrt, tanh

E32, E64 = eps(np.float32), eps(np.float64)


# --- Part 9: a function to compile, composition, NumPy calls ---------------------


def test_scale_bias():
    @jit
    def scale_bias(x, bias):
        return x * 2.0 + bias

    x = np.arange(8, dtype=np.float32)
    bias = np.ones(8, dtype=np.float32)
    y = scale_bias(x, bias)
    # x * 2 is exact, one rounding of the sum: NumPy rounds the same way.
    np.testing.assert_array_equal(y, x * 2.0 + bias)
    assert y.dtype == np.float32
    # Same types: no recompilation; new contents do not recompile, new shapes do.
    scale_bias(x + 1, bias)
    assert scale_bias.stats().size == 1 and scale_bias.stats().hits == 1
    scale_bias(np.arange(4, dtype=np.float32), np.ones(4, dtype=np.float32))
    assert scale_bias.stats().size == 2
    compiled = scale_bias.compile(x, bias)
    for stage in (compiled.module, compiled.optimized, compiled.lowered, compiled.bufferized):
        assert isinstance(stage, str) and "func" in stage
    assert "linalg.generic" in compiled.module
    assert "llvm.func" in compiled.lowered
    assert compiled.input_types == [((8,), np.dtype(np.float32))] * 2
    assert compiled.output_types == [((8,), np.dtype(np.float32))]


def activation(x):
    return 0.5 * x * (1 + tanh(x))


@jit
def activated_scale(x, bias):
    return activation(x * 2.0 + bias)


def test_activated_scale():
    x = np.linspace(-3, 3, 13, dtype=np.float32)
    bias = np.full(13, 0.25, dtype=np.float32)
    y = activated_scale(x, bias)
    z = x * 2.0 + bias
    expected = 0.5 * z * (1 + np.tanh(z))
    # tanh within a few ulp (libmvec), then two roundings: |dy| <= 0.5|z| (4 eps) + 2 eps |y|.
    assert_close(y, expected, 0.5 * np.abs(z) * 4 * E32 + 2 * E32 * np.abs(expected) + 1e-30)


@jit
def normalize(x):
    centered = x - np.mean(x, axis=-1, keepdims=True)
    return centered / np.sqrt(np.var(x, axis=-1, keepdims=True) + 1e-5)


def test_normalize(rng):
    x = rng.normal(size=(6, 33)).astype(np.float32) * 3 + 1
    y = normalize(x)
    expected = (x - np.mean(x, axis=-1, keepdims=True)) / np.sqrt(
        np.var(x, axis=-1, keepdims=True) + 1e-5
    )
    n = x.shape[-1]
    # mean and var: sums of n terms (different order than NumPy's pairwise sums):
    # relative error (n + 4) eps on the scale; the centered value is off by
    # eps (|x| + |mean|) + n eps max|x|.
    mu = np.abs(x.mean(-1, keepdims=True))
    sd = np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    dc = E32 * (np.abs(x) + mu) + n * E32 * np.abs(x).max(-1, keepdims=True)
    bound = 2 * (dc / sd + np.abs(expected) * (n + 6) * E32)
    assert_close(y, expected, bound)


# --- Part 10: GELU, softmax, layer norm ------------------------------------------


def gelu(x):
    return 0.5 * x * (1 + tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def test_gelu_as_in_the_seed():
    compiled_gelu = jit(gelu)
    x = np.linspace(-5, 5, 31, dtype=np.float32)
    y = compiled_gelu(x)
    expected = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(y, expected, rtol=2e-6, atol=2e-6)
    # The float64 NumPy scalar promotes: the output is float64, as in NumPy 2.
    assert y.dtype == expected.dtype == np.float64
    # Derived bound: the float32 inner part differs by at most ~4 eps32 of its
    # magnitudes (x**3 as x*x*x vs powf); it passes through c * tanh'(u) <= c.
    c = np.sqrt(2 / np.pi)
    inner = np.abs(x.astype(np.float64)) + 0.044715 * np.abs(x.astype(np.float64)) ** 3
    u = c * (x + 0.044715 * x**3)
    bound = 0.5 * np.abs(x) * (1 - np.tanh(u) ** 2) * c * 4 * E32 * inner + 8 * E64 * np.abs(x)
    assert_close(y, expected, bound)
    assert "arith.extf" in compiled_gelu.compile(x).module  # the promotion is an explicit cast


def softmax(x):
    numerator = exp(x - x.max(axis=-1, keepdims=True))
    return numerator / numerator.sum(axis=-1, keepdims=True)


def test_softmax_as_in_the_seed():
    x = np.array(
        [
            [10000, 9999, -10000],
            [-10000, -9999, -10001],
            [0, -np.inf, -np.inf],
        ],
        dtype=np.float32,
    )
    probabilities = jit(softmax)(x)
    np.testing.assert_allclose(probabilities.sum(axis=-1), 1, atol=1e-6)
    assert probabilities[2, 0] == 1


def test_softmax_against_numpy(rng):
    x = (rng.normal(size=(4, 5, 17)) * 4).astype(np.float32)
    y = jit(softmax)(x)
    d = x - x.max(-1, keepdims=True)
    num = np.exp(d)
    expected = num / num.sum(-1, keepdims=True)
    n = x.shape[-1]
    # exp of the (exact or 1-ulp) difference: relative 2|d| eps + 4 eps; the sum n eps.
    assert_close(y, expected, expected * (2 * np.abs(d) + n + 6) * E32)


def layer_norm(x, gain, bias):
    centered = x - x.mean(axis=-1, keepdims=True)
    variance = (centered * centered).mean(axis=-1, keepdims=True)
    return gain * centered / sqrt(variance + 1e-5) + bias


def test_layer_norm_constant_and_random_rows(rng):
    x = rng.normal(size=(5, 48)).astype(np.float32) * 2
    x[1] = 3.5  # constant rows: variance 0, the output is the bias
    x[3] = -7.0
    gain = (1 + 0.1 * rng.normal(size=48)).astype(np.float32)
    bias = (0.1 * rng.normal(size=48)).astype(np.float32)
    y = jit(layer_norm)(x, gain, bias)
    np.testing.assert_array_equal(y[1], bias)
    np.testing.assert_array_equal(y[3], bias)
    centered = x - x.mean(axis=-1, keepdims=True)
    s = np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + 1e-5)
    expected = gain * centered / s + bias
    n = x.shape[-1]
    dc = E32 * (np.abs(x) + np.abs(x.mean(-1, keepdims=True))) + n * E32 * np.abs(x).max(
        -1, keepdims=True
    )
    bound = np.abs(gain) * (dc + np.abs(centered) * (n + 6) * E32) / s + 3 * E32 * (
        np.abs(gain * centered / s) + np.abs(bias)
    )
    assert_close(y, expected, bound)


# --- Part 11: matmul, attention, residual blocks -----------------------------------


@jit
def multiply(a, b):
    return a @ b


def test_multiply_as_in_the_seed():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(3, 5)).astype(np.float32)
    b = rng.normal(size=(5, 7)).astype(np.float32)
    np.testing.assert_allclose(multiply(a, b), a @ b, rtol=2e-6, atol=2e-6)
    # Products: both sides within K eps (|A| @ |B|) of the exact value.
    assert_close(multiply(a, b), a @ b, 2 * 5 * E32 * (np.abs(a) @ np.abs(b)))
    assert "linalg.matmul" in multiply.compile(a, b).module


def linear(x, weight, bias):
    return x @ weight + bias


def causal_mask(length, dtype):
    return (1 - np.tri(length, dtype=dtype)) * -1e10  # a NumPy constant, captured


def attention(x, qkv_weight, qkv_bias, out_weight, out_bias, heads):
    packed = linear(x, qkv_weight, qkv_bias)
    length, width = x.shape
    depth = width // heads
    q, k, v = [
        packed[:, i * width : (i + 1) * width].reshape((length, heads, depth)).transpose((1, 0, 2))
        for i in range(3)
    ]
    scores = (q @ k.transpose((0, 2, 1))) / np.sqrt(depth)
    probabilities = softmax_np(scores + causal_mask(length, packed.dtype))
    context = (probabilities @ v).transpose((1, 0, 2)).reshape((length, width))
    return linear(context, out_weight, out_bias)


def softmax_np(x):  # the same formula through NumPy's dispatch (np.exp, np.max, np.sum)
    numerator = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return numerator / np.sum(numerator, axis=-1, keepdims=True)


def layer_norm_np(x, gain, bias):
    centered = x - x.mean(axis=-1, keepdims=True)
    variance = (centered * centered).mean(axis=-1, keepdims=True)
    return gain * centered / np.sqrt(variance + 1e-5) + bias


def gelu_np(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


@jit
def attend(x, gain, bias, qkv_weight, qkv_bias, out_weight, out_bias, *, heads):
    normalized = layer_norm_np(x, gain, bias)
    return x + attention(normalized, qkv_weight, qkv_bias, out_weight, out_bias, heads)


@jit
def feedforward(x, gain, bias, up_weight, up_bias, down_weight, down_bias):
    normalized = layer_norm_np(x, gain, bias)
    hidden = gelu_np(linear(normalized, up_weight, up_bias))
    return x + linear(hidden, down_weight, down_bias)


def block_params(rng, C):
    f = lambda *s, scale=0.2: (rng.normal(size=s) * scale).astype(np.float32)
    return dict(
        x=f(5, C, scale=1.0),
        gain=1 + f(C, scale=0.05),
        bias=f(C, scale=0.05),
        qkv_weight=f(C, 3 * C),
        qkv_bias=f(3 * C),
        out_weight=f(C, C),
        out_bias=f(C),
    )


def attention_error_bound(p, heads):
    """First-order propagation of float32 rounding through attention (in float64
    after the scores): products carry K eps (|A| @ |B|)."""
    x, C = p["x"], p["x"].shape[1]
    T, D = x.shape[0], C // heads
    n = layer_norm_np(x, p["gain"], p["bias"])
    dn = (C + 8) * 4 * E32 * (np.abs(n) + 1)  # layer-norm output error
    packed = n @ p["qkv_weight"] + p["qkv_bias"]
    mag = np.abs(n) @ np.abs(p["qkv_weight"]) + np.abs(p["qkv_bias"])
    dpacked = (C + 2) * E32 * mag + dn @ np.abs(p["qkv_weight"])
    heads_of = lambda t: t.reshape(T, heads, D).transpose(1, 0, 2)
    q, k, v = (heads_of(packed[:, i * C : (i + 1) * C]) for i in range(3))
    dq, dk, dv = (heads_of(dpacked[:, i * C : (i + 1) * C]) for i in range(3))
    dscore = (dq @ np.abs(k).transpose(0, 2, 1) + np.abs(q) @ dk.transpose(0, 2, 1)) / np.sqrt(D)
    dscore += (D + 2) * E64 * (np.abs(q) @ np.abs(k).transpose(0, 2, 1)) / np.sqrt(D)
    scores = q.astype(np.float64) @ k.transpose(0, 2, 1) / np.sqrt(D) + causal_mask(T, np.float32)
    prob = softmax_np(scores)
    dprob = prob * 2 * dscore.max(-1, keepdims=True) + (T + 4) * E64 * prob
    dctx = dprob @ np.abs(v) + prob @ dv
    dctx = dctx.transpose(1, 0, 2).reshape(T, C)
    ctx = (prob @ v).transpose(1, 0, 2).reshape(T, C)
    return dctx @ np.abs(p["out_weight"]) + (C + 4) * E64 * (
        np.abs(ctx) @ np.abs(p["out_weight"]) + np.abs(p["out_bias"]) + np.abs(x)
    )


def test_attend_and_feedforward(rng):
    C, heads = 16, 4
    p = block_params(rng, C)
    y = attend(*p.values(), heads=heads)
    expected = p["x"] + attention(
        layer_norm_np(p["x"], p["gain"], p["bias"]),
        p["qkv_weight"],
        p["qkv_bias"],
        p["out_weight"],
        p["out_bias"],
        heads,
    )
    assert y.dtype == expected.dtype == np.float64  # np.sqrt(depth) promotes
    assert_close(y, expected, attention_error_bound(p, heads))
    # heads is static: another value is another specialization.
    attend(*p.values(), heads=2)
    assert attend.stats().size == 2

    up_w = (rng.normal(size=(C, 4 * C)) * 0.2).astype(np.float32)
    up_b = (rng.normal(size=4 * C) * 0.2).astype(np.float32)
    down_w = (rng.normal(size=(4 * C, C)) * 0.2).astype(np.float32)
    down_b = (rng.normal(size=C) * 0.2).astype(np.float32)
    x, g, b = p["x"], p["gain"], p["bias"]
    y = feedforward(x, g, b, up_w, up_b, down_w, down_b)
    n = layer_norm_np(x, g, b)
    h = gelu_np(linear(n, up_w, up_b))
    expected = x + linear(h, down_w, down_b)
    assert y.dtype == expected.dtype == np.float64
    dn = (C + 8) * 4 * E32 * (np.abs(n) + 1)
    du = (C + 2) * E32 * (np.abs(n) @ np.abs(up_w) + np.abs(up_b)) + dn @ np.abs(up_w)
    dh = 1.2 * du + 8 * E32 * np.abs(h)  # |gelu'| <= 1.13
    bound = dh @ np.abs(down_w) + (4 * C + 4) * E64 * (
        np.abs(h) @ np.abs(down_w) + np.abs(down_b) + np.abs(x)
    )
    assert_close(y, expected, bound)


def test_attention_is_causal(rng):
    C, heads = 16, 4
    p = block_params(rng, C)
    y = attend(*p.values(), heads=heads)
    p2 = dict(p)
    p2["x"] = p["x"].copy()
    p2["x"][-2:] = rng.normal(size=(2, C)).astype(np.float32)
    y2 = attend(*p2.values(), heads=heads)
    np.testing.assert_array_equal(y[:3], y2[:3])
    assert not np.array_equal(y[3:], y2[3:])
