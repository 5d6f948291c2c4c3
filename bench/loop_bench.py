#!/usr/bin/env python3
"""Python loops as loops: first call (trace + compile, no disk cache) and warm time of loop
programs written as people write them, against numba's njit where it is installed and
against tinymlir's own unrolled loops (unroll_loops=True) at the sizes where those compile.

  .venv/bin/python bench/loop_bench.py [--rounds 5] [--sizes small,medium,large]
      [--only NAME] [--unrolled-max 40]

Each size is compiled in this process with the disk cache off; warm times are the median
and range over rounds of the mean of repeated calls, each round on a fresh copy of the
inputs. Ratios are taken within a round. numba is looked up in this interpreter and, with
--numba-python PATH, run in that interpreter (a venv with numba) on the same programs.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from bench_common import cpu_model

os.environ.setdefault("TINYMLIR_CACHE_DIR", tempfile.mkdtemp(prefix="tinymlir-loop-bench-"))

PROGRAMS = r'''
import numpy as np


def cholesky(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[j, k]
            A[i, j] /= A[j, j]
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = np.sqrt(A[i, i])


def lu(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]


def trisolv(L, x, b):
    n = L.shape[0]
    for i in range(n):
        x[i] = b[i]
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] = x[i] / L[i, i]


def seidel_2d(A, steps):
    n = A.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1] + A[i, j - 1]
                           + A[i, j] + A[i, j + 1] + A[i + 1, j - 1] + A[i + 1, j]
                           + A[i + 1, j + 1]) / 9.0


def jacobi_2d(A, B, steps):
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1]
                               + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1]
                               + B[:-2, 1:-1])


def iir(x, y, a):
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = a * y[t - 1] + (1.0 - a) * x[t]


def cholesky_rows(A):  # npbench's: np.dot of row slices sized by the index
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def lu_rows(A):
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]


def trisolv_rows(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def syrk(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[:i + 1, k] * A[i, k]


def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


def durbin(r, y):
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha


def floyd_warshall(path):
    n = path.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                path[i, j] = np.minimum(path[i, j], path[i, k] + path[k, j])
'''

SIZES = {  # program: (small, medium, large) arguments' sizes
    "cholesky": (40, 120, 400),
    "lu": (40, 120, 400),
    "trisolv": (200, 1000, 4000),
    "seidel_2d": ((20, 4), (60, 10), (200, 20)),
    "jacobi_2d": ((50, 10), (200, 50), (1000, 100)),
    "iir": (1000, 100000, 2000000),
    "floyd_warshall": (20, 60, 150),
    "cholesky_rows": (40, 120, 400),
    "lu_rows": (40, 120, 400),
    "trisolv_rows": (200, 1000, 4000),
    "syrk": ((40, 30), (120, 100), (400, 300)),
    "trmm": ((40, 30), (120, 100), (400, 300)),
    "durbin": (200, 1000, 4000),
}


def arguments(name, size, seed=0):
    rng = np.random.default_rng(seed)
    if name == "cholesky":
        m = rng.random((size, size))
        return (m @ m.T + size * np.eye(size),)
    if name == "lu":
        m = rng.random((size, size))
        return (m + size * np.eye(size),)
    if name == "trisolv":
        return (np.tril(rng.random((size, size))) + np.eye(size), np.zeros(size), rng.random(size))
    if name == "seidel_2d":
        n, steps = size
        return (rng.random((n, n)), steps)
    if name == "jacobi_2d":
        n, steps = size
        return (rng.random((n, n)), rng.random((n, n)), steps)
    if name == "iir":
        return (rng.random(size), np.zeros(size), 0.3)
    if name == "floyd_warshall":
        return (rng.random((size, size)) * 10,)
    if name == "cholesky_rows":
        return arguments("cholesky", size, seed)
    if name == "lu_rows":
        return arguments("lu", size, seed)
    if name == "trisolv_rows":
        return arguments("trisolv", size, seed)
    if name == "syrk":
        n, m = size
        return (1.5, 1.2, rng.random((n, n)), rng.random((n, m)))
    if name == "trmm":
        n, m = size
        return (1.5, rng.random((n, n)), rng.random((n, m)))
    if name == "durbin":
        return (rng.random(size) / size, np.zeros(size))
    raise KeyError(name)


def load_programs():
    namespace = {}
    path = os.path.join(tempfile.mkdtemp(prefix="tinymlir-loop-programs-"), "loop_programs.py")
    with open(path, "w") as f:
        f.write(PROGRAMS)
    sys.path.insert(0, os.path.dirname(path))
    import loop_programs  # noqa: F401  (a file: the converter reads the source)

    namespace.update(vars(loop_programs))
    return namespace


def copies(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def timed(fn, args, seconds=0.2):
    """Mean seconds of fn on fresh copies of args (copying not counted)."""
    total, calls = 0.0, 0
    while total < seconds or calls < 2:
        a = copies(args)
        t0 = time.perf_counter()
        fn(*a)
        total += time.perf_counter() - t0
        calls += 1
    return total / calls


def summary(xs):
    return statistics.median(xs), min(xs), max(xs)


def measure_tinymlir(fn, args, rounds, **options):
    from tinymlir import jit

    f = jit(fn, disk_cache=False, **options)
    t0 = time.perf_counter()
    f(*copies(args))
    first = time.perf_counter() - t0
    warm = [timed(f, args) for _ in range(rounds)]
    return first, warm


def measure_numba(fn, args, rounds):
    import numba

    f = numba.njit(fn)
    t0 = time.perf_counter()
    f(*copies(args))
    first = time.perf_counter() - t0
    return first, [timed(f, args) for _ in range(rounds)]


def scaling(programs, ns, args):
    """Trace + compile time against N (jit(fn).compile in a fresh process, disk cache
    off), median and range over rounds."""

    # (each N's arguments are made in its child process: --compile-child)
    for name in (
        "cholesky",
        "lu",
        "seidel_2d",
        "trisolv",
        "cholesky_rows",
        "lu_rows",
        "trisolv_rows",
    ):
        if args.only and args.only not in name:
            continue
        times = []
        for n in ns:
            compile_s = []
            for _ in range(args.rounds):
                # f.compile in a fresh process: the trace and the compilation alone
                # (the first call minus a warm call, which the issue names, is this
                # plus the noise of two runs that take seconds at N = 2,000; in one
                # process a second compilation of the same module is a cache hit)
                out = subprocess.run(
                    [sys.executable, __file__, "--compile-child", f"{name}:{n}"],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                compile_s.append(float(out.stdout.strip().splitlines()[-1]))
            times.append(summary(compile_s))
        cells = "  ".join(
            f"N={n}: {m:.3f} s [{lo:.3f} .. {hi:.3f}]" for n, (m, lo, hi) in zip(ns, times)
        )
        print(f"{name:10s} {cells}   t(N={ns[-1]})/t(N={ns[0]}) = {times[-1][0] / times[0][0]:.2f}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="small,medium,large")
    ap.add_argument("--only", default="")
    ap.add_argument("--unrolled-max", type=int, default=60, help="largest n run unrolled")
    ap.add_argument("--numba-python", default="", help="an interpreter with numba")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    ap.add_argument("--compile-child", default="", help=argparse.SUPPRESS)
    ap.add_argument(
        "--scaling",
        default="",
        help="N values (e.g. 100,500,1000,2000): trace + compile time of cholesky, lu, "
        "seidel_2d and trisolv at each N, and t(N)/t(first N)",
    )
    args = ap.parse_args()
    programs = load_programs()
    if args.compile_child:
        name, n = args.compile_child.split(":")
        size = {"seidel_2d": (int(n), 1), "syrk": (int(n), int(n)), "trmm": (int(n), int(n))}.get(
            name, int(n)
        )
        from tinymlir import jit

        f = jit(programs[name], disk_cache=False)
        fargs = arguments(name, size)
        t0 = time.perf_counter()
        f.compile(*fargs)
        print(time.perf_counter() - t0)
        return 0
    if args.scaling:
        return scaling(programs, [int(n) for n in args.scaling.split(",")], args)
    if args.child:  # numba's figures in its own interpreter: name, size index
        name, k = args.child.split(":")
        fargs = arguments(name, SIZES[name][int(k)])
        print(json.dumps(measure_numba(programs[name], fargs, args.rounds)))
        return 0
    cpu = cpu_model()
    try:
        import numba  # noqa: F401

        numba_here = True
    except ImportError:
        numba_here = False
    print(f"{cpu}, {os.cpu_count()} CPUs, NumPy {np.__version__}, {args.rounds} rounds")
    labels = ["small", "medium", "large"]
    for name in SIZES:
        if args.only and args.only not in name:
            continue
        for k, label in enumerate(labels):
            if label not in args.sizes.split(","):
                continue
            size = SIZES[name][k]
            fargs = arguments(name, size)
            want = copies(fargs)
            programs[name](*want)
            row = {}
            first, warm = measure_tinymlir(programs[name], fargs, args.rounds)
            got = copies(fargs)
            from tinymlir import jit

            jit(programs[name], disk_cache=False)(*got)
            for w, g in zip(want, got):
                if isinstance(w, np.ndarray):
                    np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
            row["tinymlir"] = (first, warm)
            n = size if isinstance(size, int) else size[0]
            if n <= args.unrolled_max:
                row["unrolled"] = measure_tinymlir(
                    programs[name], fargs, args.rounds, unroll_loops=True
                )
            if numba_here:
                row["numba"] = measure_numba(programs[name], fargs, args.rounds)
            elif args.numba_python:
                out = subprocess.run(
                    [
                        args.numba_python,
                        __file__,
                        "--child",
                        f"{name}:{k}",
                        "--rounds",
                        str(args.rounds),
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if out.returncode == 0:
                    row["numba"] = tuple(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"\n{name} {label} ({size}):")
            base = row["tinymlir"][1]
            for who, (first, warm) in row.items():
                med, lo, hi = summary(warm)
                line = f"  {who:9s} first call {first:7.3f} s   warm {med * 1e3:9.3f} ms [{lo * 1e3:.3f} .. {hi * 1e3:.3f}]"
                if who != "tinymlir":
                    ratios = [p / q for p, q in zip(warm, base)]
                    r = summary(ratios)
                    line += f"   {who}/tinymlir warm = {r[0]:.2f}x [{r[1]:.2f} .. {r[2]:.2f}]"
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
