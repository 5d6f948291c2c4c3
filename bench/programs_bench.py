#!/usr/bin/env python3
"""NumPy programs as written (test/pytest/test_programs.py, one source) under tinymlir.jit
against NumPy, and against numba's @njit on the same source where numba is installed.

  .venv/bin/python bench/programs_bench.py [--rounds 7] [--only NAME]

For each program: the first call (trace and compile, empty disk cache) and the warm call,
timed against NumPy running the same function on copies of the same arguments. Rounds time
every contender back to back; ratios are taken within a round and reported as median and
range. JAX is not a peer here: it cannot run these programs unmodified (they assign into
arrays), and ports rewritten for it would not be the same source.
"""

import argparse
import copy
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TINYMLIR_CACHE_DIR", tempfile.mkdtemp(prefix="tinymlir-bench-"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "pytest"))

import test_programs as P  # noqa: E402

from tinymlir import jit  # noqa: E402

rng = np.random.default_rng(0)


def pos(*shape):
    return rng.random(shape) + 0.5


def spd(n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


# name -> (function, arguments): sizes where NumPy's own time is measurable and the
# unrolled loops stay in the thousands of operations.
CASES = {
    "jacobi_1d": (P.jacobi_1d, lambda: (pos(4000), pos(4000), 50)),
    "jacobi_2d": (P.jacobi_2d, lambda: (pos(400, 400), pos(400, 400), 20)),
    "heat_3d": (P.heat_3d, lambda: (pos(60, 60, 60), pos(60, 60, 60), 10)),
    "fdtd_2d": (P.fdtd_2d, lambda: (pos(300, 320), pos(300, 320), pos(300, 320), pos(20), 20)),
    "gemm": (P.gemm, lambda: (1.5, 1.2, pos(400, 400), pos(400, 300), pos(300, 400))),
    "gesummv": (P.gesummv, lambda: (1.5, 1.2, pos(1000, 1000), pos(1000, 1000), pos(1000))),
    "floyd_warshall": (P.floyd_warshall, lambda: (rng.integers(1, 20, (60, 60)).astype(float),)),
    "covariance": (P.covariance, lambda: (60, 500.0, pos(500, 60))),
    "conv2d": (P.conv2d, lambda: (pos(500, 500), pos(5, 5))),
    "max_pool": (P.max_pool, lambda: (rng.standard_normal((600, 600)), 3)),
    "softmax_inplace": (P.softmax_inplace, lambda: (rng.standard_normal((512, 1024)),)),
    "nbody": (P.nbody_step, lambda: (rng.random((200, 3)), rng.random((200, 3)) * 0.1,
                                     pos(200, 1), 0.01, 5)),
    "cholesky": (P.cholesky, lambda: (spd(20),)),
    "lu": (P.lu, lambda: (spd(16),)),
    "cavity_flow": (P.cavity_flow, lambda: (5, 10, np.zeros((61, 61)), np.zeros((61, 61)), 0.001,
                                            2 / 60, 2 / 60, np.zeros((61, 61)), 1.0, 0.1)),
}


def timed(fn, args):
    args = copy.deepcopy(args)
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default=None)
    opts = parser.parse_args()
    try:
        import numba
        njit = numba.njit
    except ImportError:
        njit = None
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), platform.processor())
    print(f"CPU: {cpu}; NumPy {np.__version__}; numba: "
          f"{'installed' if njit else 'not installed'}; {opts.rounds} rounds")
    print(f"{'program':16} {'first call':>11} {'numpy':>10} {'tinymlir':>10} "
          f"{'speedup (median, range)':>26}")
    for name, (fn, make) in CASES.items():
        if opts.only and name != opts.only:
            continue
        args = make()
        f = jit(fn)
        first = timed(f, args)
        nb = njit(fn) if njit else None
        if nb:
            timed(nb, args)
        ratios, tn, tt = [], [], []
        for _ in range(opts.rounds):
            a = timed(fn, args)
            b = timed(f, args)
            tn.append(a)
            tt.append(b)
            ratios.append(a / b)
        med = statistics.median(ratios)
        print(f"{name:16} {first:10.2f}s {statistics.median(tn) * 1e3:8.2f}ms "
              f"{statistics.median(tt) * 1e3:8.2f}ms {med:8.2f}x [{min(ratios):.2f}, "
              f"{max(ratios):.2f}]")


if __name__ == "__main__":
    main()
