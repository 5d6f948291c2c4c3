#!/usr/bin/env python3
"""First-call time of unrolled Python loops against their length (NumPy programs as written).

  .venv/bin/python bench/compile_scaling.py [--max-ops 70000] [--rounds 3]

Two loops, each traced into a graph whose size grows with n, compiled with an empty disk
cache in a fresh process per point:
- scalar: `for i in range(n): trace += np.tanh(a[i, i])` (about 4 graph nodes a step);
- cholesky: the (i, j) steps `A[i, j] -= np.dot(A[i, :j], A[j, :j]); A[i, j] /= A[j, j]` of
  an unrolled Cholesky of an (m, m) matrix (about 10 nodes a step).
Reports t(n) and t(2n)/t(n) of consecutive points; linear is 2. Where n does not exactly
double, the ratio per doubling is also given: (t2/t1) ** (ln 2 / ln(n2/n1)).
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r'''
import json, sys, time, numpy as np
from tinymlir import jit
kind, n = sys.argv[1], int(sys.argv[2])
def scalar(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return trace
def cholesky(A):
    m = A.shape[0]
    for i in range(m):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
rng = np.random.default_rng(0)
if kind == "scalar":
    a = rng.random((n, n)); fn = scalar
else:
    a = rng.random((n, n)); a = a @ a.T + n * np.eye(n); fn = cholesky
f = jit(fn, disk_cache=False)
t = time.perf_counter(); f(a); total = time.perf_counter() - t
print(json.dumps({"seconds": total}))
'''


def point(kind, n):
    env = dict(os.environ, TINYMLIR_CACHE_DIR=tempfile.mkdtemp(prefix="tinymlir-scaling-"))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(n)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-ops", type=int, default=70000)
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per point")
    opts = parser.parse_args()
    # scalar: n steps; cholesky: m (m - 1) / 2 (i, j) steps
    for kind, sizes, steps in (
        ("scalar", [250, 500, 1000, 2000, 4000, 8000], lambda n: n),
        ("cholesky", [10, 14, 20, 28, 40, 56, 80, 100, 112], lambda m: m * (m - 1) // 2),
    ):
        prev = None
        print(
            f"{kind}: steps, first call (s): median [range] over {opts.rounds}, "
            "t(n2)/t(n1) of the medians, and per doubling"
        )
        for n in sizes:
            if steps(n) * (4 if kind == "scalar" else 10) > opts.max_ops:
                break
            times = [point(kind, n) for _ in range(opts.rounds)]
            t = statistics.median(times)
            ratio = doubling = "-"
            if prev:
                ratio = f"{t / prev[1]:.2f}"
                doubling = f"{(t / prev[1]) ** (math.log(2) / math.log(steps(n) / prev[0])):.2f}"
            print(
                f"  {steps(n):6d} {t:8.2f} [{min(times):.2f}, {max(times):.2f}] {ratio:>6} "
                f"{doubling:>6}",
                flush=True,
            )
            prev = (steps(n), t)


if __name__ == "__main__":
    main()
