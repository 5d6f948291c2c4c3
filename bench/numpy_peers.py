#!/usr/bin/python3
"""NumPy timings that the C++ benchmarks compare against.

Prints one JSON line per benchmark: {"name": ..., "median_s": ..., "repeats": ...}
Usage: /usr/bin/python3 bench/numpy_peers.py [--only NAME[,NAME...]] [--list]
       (--only matches a full name or a name prefix, e.g. --only attend)

Formulas are the GPT-2 reference's (test/python/gpt2_reference.py), so dtypes
follow NumPy's NEP 50 ("weak") promotion exactly as there: e.g. gelu on
float32 input returns float64 (np.sqrt(2 / np.pi) is a float64 scalar).
"""

import os

os.environ.setdefault("NPY_PROMOTION_STATE", "weak")

import argparse
import json
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python"))
from gpt2_reference import ffn, gelu, layer_norm, mha, softmax  # noqa: E402


def attend(x, ln, qkv, out, heads=12):
    return x + mha(layer_norm(x, **ln), c_attn=qkv, c_proj=out, n_head=heads)


def feedforward(x, ln, up, down):
    return x + ffn(layer_norm(x, **ln), c_fc=up, c_proj=down)


def _rand(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)).astype(np.float32)


def _benchmarks():
    """name -> zero-arg factory returning a zero-arg callable to time."""
    C, H = 768, 12

    def elementwise(kind):
        def make():
            rng = np.random.default_rng(0)
            x = _rand(rng, 1024, 3072)
            if kind == "gelu":
                return lambda: gelu(x)
            if kind == "softmax":
                return lambda: softmax(x)
            g = 1 + _rand(rng, 3072, scale=0.1)
            b = _rand(rng, 3072, scale=0.1)
            return lambda: layer_norm(x, g, b)

        return make

    def matmul(m, k, n):
        def make():
            rng = np.random.default_rng(0)
            a, b = _rand(rng, m, k), _rand(rng, k, n)
            return lambda: a @ b

        return make

    def ln_params(rng):
        return {"g": 1 + _rand(rng, C, scale=0.1), "b": _rand(rng, C, scale=0.1)}

    def lin(rng, i, o):
        return {"w": _rand(rng, i, o, scale=0.02), "b": _rand(rng, o, scale=0.02)}

    def attend_b(T):
        def make():
            rng = np.random.default_rng(0)
            x = _rand(rng, T, C)
            ln, qkv, out = ln_params(rng), lin(rng, C, 3 * C), lin(rng, C, C)
            return lambda: attend(x, ln, qkv, out, heads=H)

        return make

    def ffn_b(T):
        def make():
            rng = np.random.default_rng(0)
            x = _rand(rng, T, C)
            ln, up, down = ln_params(rng), lin(rng, C, 4 * C), lin(rng, 4 * C, C)
            return lambda: feedforward(x, ln, up, down)

        return make

    return {
        "gelu_1024x3072_f32": elementwise("gelu"),
        "softmax_1024x3072_f32": elementwise("softmax"),
        "layer_norm_1024x3072_f32": elementwise("layer_norm"),
        "matmul_768x768x768_f32": matmul(768, 768, 768),
        "matmul_16x768x2304_f32": matmul(16, 768, 2304),
        "attend_T16_C768_H12": attend_b(16),
        "attend_T256_C768_H12": attend_b(256),
        "feedforward_T16_C768": ffn_b(16),
        "feedforward_T256_C768": ffn_b(256),
    }


def time_it(fn, target_s=1.0, min_repeats=5, max_repeats=200, warmup=3):
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-9)
    repeats = int(min(max_repeats, max(min_repeats, target_s / one)))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), repeats


def main(argv=None):
    ap = argparse.ArgumentParser(description="NumPy peer timings (JSON lines)")
    ap.add_argument("--only", help="comma-separated names or name prefixes")
    ap.add_argument("--list", action="store_true", help="list names and exit")
    ap.add_argument(
        "--target-s", type=float, default=1.0, help="approx. seconds of timed runs per benchmark"
    )
    a = ap.parse_args(argv)
    benches = _benchmarks()
    if a.list:
        print("\n".join(benches))
        return 0
    names = list(benches)
    if a.only:
        wanted = [w for w in a.only.split(",") if w]
        names = [n for n in names if any(n == w or n.startswith(w) for w in wanted)]
        if not names:
            print(f"no benchmark matches {a.only!r}; have: {', '.join(benches)}", file=sys.stderr)
            return 2
    for n in names:
        fn = benches[n]()
        med, reps = time_it(fn, target_s=a.target_s)
        print(json.dumps({"name": n, "median_s": med, "repeats": reps}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
