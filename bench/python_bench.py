#!/usr/bin/env python3
"""tinymlir from Python against NumPy (and jax.jit where installed), same process.

  .venv/bin/python bench/python_bench.py [--rounds 7] [--threads N] [--only overhead]

- per-call overhead: a jitted x * 2.0 + 1 on a 16-element float32 array (the whole
  Python call: argument flattening, cache lookup, the native call, the output array),
  against the same expression in NumPy and the same hit through the Python path
  ("py-path", as every hit ran before the C++ path);
- gelu, softmax and layer norm on (1024, 3072) float32: the seeds' formulas, jitted
  (compiled once, before timing) against the same function run by NumPy;
- (A @ x) @ A with A (4000, 5000) float64: two matrix-vector products (memory bound).

Each round times every contender back to back; ratios are taken within a round and
reported as median and range over the rounds. Compile time is reported separately.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from bench_common import cpu_model

os.environ.setdefault("TINYMLIR_CACHE_DIR", tempfile.mkdtemp(prefix="tinymlir-bench-"))

import tinymlir  # noqa: E402
from tinymlir import jit  # noqa: E402


# Written once against an array module `xp`: NumPy for NumPy and tinymlir (which
# traces the NumPy calls), jax.numpy for jax (its tracers do not take NumPy's dispatch).
def gelu(x, xp=np):
    return 0.5 * x * (1 + xp.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def softmax(x, xp=np):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b, xp=np):
    mean = xp.mean(x, axis=-1, keepdims=True)
    var = xp.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / xp.sqrt(var + 1e-5) + b


def matvec(a, x, xp=np):
    return (a @ x) @ a  # two matrix-vector products, as a bi-conjugate gradient step has


def small(x, xp=np):
    return x * 2.0 + 1


def per_call(fn, args, seconds):
    """Median seconds per call over batches filling `seconds`."""
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        t = time.perf_counter() - t0
        if t > seconds / 10:
            break
        n *= 4
    batches = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        batches.append((time.perf_counter() - t0) / n)
    return statistics.median(batches)


def summary(values):
    return statistics.median(values), min(values), max(values)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.3, help="timing per contender per round")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    args = ap.parse_args()
    if args.threads:
        tinymlir.set_threads(args.threads)

    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)  # float64 where NumPy 2 has it (gelu)
        have_jax = True
    except ImportError:
        have_jax = False

    rng = np.random.default_rng(0)
    x16 = rng.normal(size=16).astype(np.float32)
    big = rng.normal(size=(1024, 3072)).astype(np.float32)
    g = (1 + 0.1 * rng.normal(size=3072)).astype(np.float32)
    b = (0.1 * rng.normal(size=3072)).astype(np.float32)

    cases = {
        "call overhead (16 elements)": (small, (x16,)),
        "gelu (1024, 3072)": (gelu, (big,)),
        "softmax (1024, 3072)": (softmax, (big,)),
        "layer_norm (1024, 3072)": (layer_norm, (big, g, b)),
        "(A @ x) @ A (4000, 5000) float64": (
            matvec,
            (rng.normal(size=(4000, 5000)), rng.normal(size=5000)),
        ),
    }
    cpu = cpu_model()
    print(
        f"tinymlir {tinymlir.__version__}, NumPy {np.__version__}, {cpu}, {os.cpu_count()} CPUs, "
        f"{args.rounds} rounds" + ("" if have_jax else "; jax not installed")
    )
    for name, (fn, fargs) in cases.items():
        if args.only not in name:
            continue
        jitted = jit(fn, disk_cache=False)
        t0 = time.perf_counter()
        spec = jitted.compile(*fargs)
        compile_s = time.perf_counter() - t0
        out = jitted(*fargs)
        ref = fn(*fargs)
        assert out.dtype == ref.dtype and out.shape == ref.shape
        contenders = {"tinymlir": (jitted, fargs), "numpy": (fn, fargs)}
        if name.startswith("call overhead"):
            # The same call through the Python path (a hit that enters Python:
            # the path every hit took before the C++ one, python/src/cache.cpp).
            slow = jit(fn, disk_cache=False)
            slow._plain = False
            slow(*fargs)
            contenders["py-path"] = (slow, fargs)
        if have_jax:
            import jax

            jf = jax.jit(lambda *a, fn=fn: fn(*a, xp=jnp))
            jargs = tuple(jax.device_put(a) for a in fargs)
            jf(*jargs).block_until_ready()
            contenders["jax.jit"] = (lambda *a, jf=jf: jf(*a).block_until_ready(), jargs)
        times = {k: [] for k in contenders}
        for _ in range(args.rounds):
            for k, (f, a) in contenders.items():
                times[k].append(per_call(f, a, args.seconds))
        t_med, t_lo, t_hi = summary(times["tinymlir"])
        unit, scale = ("us", 1e6) if t_med < 1e-3 else ("ms", 1e3)
        print(
            f"\n{name}: compile {compile_s * 1e3:.0f} ms "
            f"({'disk cache' if spec.from_disk_cache else 'compiled'})"
        )
        for k in contenders:
            med, lo, hi = summary(times[k])
            line = f"  {k:9s} {med * scale:9.2f} {unit}  [{lo * scale:.2f} .. {hi * scale:.2f}]"
            if k != "tinymlir":
                ratios = [p / q for p, q in zip(times[k], times["tinymlir"])]
                r = summary(ratios)
                line += f"   {k}/tinymlir = {r[0]:.2f}x [{r[1]:.2f} .. {r[2]:.2f}]"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
