#!/usr/bin/env python3
"""Complete NumPy programs under tinymlir.jit, against NumPy, numba and jax.jit, in one run.

  bash scripts/install-peers.sh && .venv-peers/bin/python bench/programs_bench.py
  .venv-peers/bin/python bench/programs_bench.py --size small --rounds 3 --only lu,gemm \\
      --json /tmp/programs_bench.json

The programs are the tests' own (test/pytest/test_programs.py, and the program-style tests of
test_dtypes, test_sorting, test_linalg and test_functions, copied here unchanged where they
are nested in a test), at two sizes: "small", about 10 ms of NumPy time, and "large", about
100 ms. Programs whose Python loops are unrolled by the trace are kept to sizes where the
trace stays in the tens of thousands of operations; their NOTE says so.

Contenders, all on the same NumPy, in the same process:
  numpy     the plain function;
  tinymlir  jit(fn), the same source;
  numba     numba.njit(fn) and numba.njit(parallel=True)(fn), the same source (functions the
            program calls are njit-compiled too); each program takes the faster warm median
            of the two (column "numba", tagged nj or par). Where numba rejects the source a
            minimal variant is used if the table has one, and the notes say what changed;
  jax       jax.jit of the functional port in bench/programs_jax.py, float64.
Peers that are not installed are reported as "missing"; programs without a port "no port".

What is measured, per program and size:
  first call  a fresh jit(fn) with an empty disk cache (TINYMLIR_CACHE_DIR is a fresh
              directory), so tracing and compiling are included; numba's first call includes
              its compile, jax's its tracing and compile;
  warm        --rounds rounds (after a warm-up), each timing every contender once, after
              SETTLE_S (0.15 s) idle and one untimed call, on fresh deep copies of the
              arguments (the copies are not timed; a call under 2 ms is timed as a loop of
              calls and divided). Reported: NumPy's and tinymlir's
              warm medians, and per contender the median [min, max] over rounds of NumPy's time
              divided by the contender's in that round (its speedup).
  correctness every contender's first-call result and every argument it updates are compared
              with NumPy's (rtol 1e-6 relative to the largest |value|; integers and bools
              exactly); a contender that differs is "WRONG" and left out of the means.
  ops         the operations in tinymlir's traced module (lines of spec.module with ' = ').
"""

import argparse
import copy
import dataclasses
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
import traceback
import types
import warnings

import numpy as np
from bench_common import cpu_model

os.environ["TINYMLIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tinymlir-bench-")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "pytest"))
sys.path.insert(0, HERE)

import test_programs as P  # noqa: E402

import tinymlir  # noqa: E402
from tinymlir import jit  # noqa: E402

try:
    import numba
except ImportError:
    numba = None
try:
    import jax
    import programs_jax
except ImportError:
    jax = programs_jax = None

warnings.simplefilter("ignore")  # numba's performance hints, NumPy's nan warnings


# --- Programs nested in tests, copied unchanged ------------------------------------------------


# test_dtypes.test_programs_with_complex_and_small_integers
def dft(x):
    n = x.shape[0]
    k = np.arange(n)
    w = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return w @ x


def mandelbrot(c, steps):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, np.int32)
    for _ in range(steps):
        z = np.where(np.abs(z) <= 2, z * z + c, z)
        count += np.abs(z) <= 2
    return count


def brighten(img, gain):
    out = np.clip(img.astype(np.int16) * gain // 4, 0, 255).astype(np.uint8)
    img[:] = out
    return out.sum(), (img > 128).sum()


# test_sorting.test_programs_with_sorts_and_scans
def knn_vote(train, labels, query, k):
    d = ((query[:, None, :] - train[None, :, :]) ** 2).sum(axis=-1)
    nearest = np.argsort(d, axis=1, kind="stable")[:, :k]
    votes = labels[nearest]  # (queries, k)
    counts = np.zeros((query.shape[0], 3), np.int64)
    for c in range(3):
        counts[:, c] = (votes == c).sum(axis=1)
    return np.argmax(counts, axis=1)


def moving_average(x, w):
    c = np.cumsum(x)
    out = np.empty(x.shape[0] - w + 1)
    out[0] = c[w - 1]
    out[1:] = c[w:] - c[:-w]
    return out / w


def ranks(x):
    order = np.argsort(x, kind="stable")
    r = np.empty_like(order)
    r[order] = np.arange(x.shape[0])
    return r, np.searchsorted(np.sort(x), x)


# test_linalg.test_least_squares_fit_program
def fit(x, y, degree):
    A = np.stack([x**k for k in range(degree, -1, -1)], axis=1)
    coef, residuals, rank, s = np.linalg.lstsq(A, y)
    return coef, A @ coef - y, rank


# test_functions.test_program_int64_histogram_of_a_float_image (f)
def histogram_image(img):
    counts, edges = np.histogram(img, bins=32)
    clipped, _ = np.histogram(np.clip(img, -0.5, 0.5), bins=16, range=(-1, 1))
    level = np.sum(counts[:16]) / img.size  # the fraction below the middle edge
    return counts.astype(np.int64), edges, clipped, level


# test_functions.test_program_moving_average_with_pad_and_slices (f, closing over k = 5)
def _moving_average_pad(k):
    def f(s):
        p = np.pad(s, (k - 1, 0), mode="edge")  # causal: the first value repeated
        acc = p[0 : s.shape[0]].copy()
        for i in range(1, k):
            acc += p[i : i + s.shape[0]]
        sym = np.pad(s, k // 2, mode="reflect")  # centered
        centered = sum(sym[i : i + s.shape[0]] for i in range(k)) / k
        return acc / k, centered

    return f


moving_average_pad = _moving_average_pad(5)


# test_functions.test_program_covariance_of_data (f)
def covariance_of_data(d):
    centered = d - np.average(d, axis=0)
    c = np.cov(d, rowvar=False)
    r = np.corrcoef(d, rowvar=False)
    spread = np.sqrt(np.nanvar(np.where(d > 2, np.nan, d), axis=0))
    return c, r, (centered.T @ centered) / (d.shape[0] - 1), spread


# test_functions.test_program_knn_vote_with_take (vote)
def knn_vote_take(p, lab, q, k=3):
    diff = q[:, None, :] - p[None, :, :]
    d = np.sum(diff * diff, axis=-1)  # (9, 30)
    pos = np.arange(p.shape[0])
    votes = []
    for _ in range(k):  # the k nearest, by repeated argmin
        nearest = np.min(np.where(d == d.min(axis=1, keepdims=True), pos, p.shape[0]), axis=1)
        votes.append(np.take(lab, nearest))  # traced ids
        d = np.where(pos == nearest[:, None], np.inf, d)
    votes = np.stack(votes, axis=1)  # (9, k)
    tally = np.stack([np.sum(votes == c, axis=1) for c in range(3)], axis=1)
    best = np.min(np.where(tally == tally.max(axis=1, keepdims=True), np.arange(3), 3), axis=1)
    return votes, tally, best, np.take(np.arange(10, 40, 10), best)


# --- Minimal variants for numba, used only where numba rejects the source ------------------------


def floyd_warshall_numba(path):  # np.add.outer -> a column plus a row
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], path[:, k : k + 1] + path[k : k + 1, :])


def covariance_numba(M, float_n, data):  # np.mean(axis=0) -> sum(axis=0) / n
    mean = data.sum(axis=0) / data.shape[0]
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def correlation_numba(M, float_n, data):  # np.mean, np.std (axis=0) -> sums over axis 0
    mean = data.sum(axis=0) / data.shape[0]
    stddev = np.sqrt(((data - mean) ** 2).sum(axis=0) / data.shape[0])
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1 : M, i] = corr[i, i + 1 : M] = data[:, i] @ data[:, i + 1 : M]
    return corr


def histogram_loop_numba(x, bins):  # np.floor(v * bins).astype(np.int32) -> int(np.floor(...))
    h = np.zeros(bins)
    for v in x:
        h[int(np.floor(v * bins))] += 1.0
    return h


def dft_numba(x):  # a complex matrix times a float vector -> both complex
    n = x.shape[0]
    k = np.arange(n)
    w = np.exp(-2j * np.pi * np.outer(k, k) / n)
    return w @ x.astype(np.complex128)


# --- Arguments ---------------------------------------------------------------------------------

rng = np.random.default_rng(0)


def pos(*shape):
    return rng.random(shape) + 0.5


def spd(n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


def cavity_args(n, nt, nit):
    d = 2 / (n - 1)
    return (nt, nit, np.zeros((n, n)), np.zeros((n, n)), 0.001, d, d, np.zeros((n, n)), 1.0, 0.1)


def mandelbrot_args(n):
    re, im = np.meshgrid(np.linspace(-2, 0.5, n), np.linspace(-1.2, 1.2, n))
    return re + 1j * im, 20


def image(n):
    yy, xx = np.mgrid[0:n, 0:n]
    return (np.sin(xx / 7.0) * np.cos(yy / 5.0) + 0.05 * rng.normal(size=(n, n))).astype(np.float32)


def latent_samples(n):
    latent = rng.normal(size=(n, 2))
    return (
        np.concatenate([latent, latent @ [[1.0], [-2.0]] + 0.1 * rng.normal(size=(n, 1))], axis=1),
    )


def fit_args(n):
    x = np.linspace(-1, 1, n)
    return x, 3 * x**3 - x + 0.5 + 0.01 * rng.standard_normal(n), 3


@dataclasses.dataclass
class Program:
    fn: object  # the NumPy program
    make: object  # size parameter n -> the arguments
    small: int  # n of "small" (about 10 ms of NumPy time)
    large: int  # n of "large" (about 100 ms)
    writes: tuple = ()  # positions of the arguments the program updates
    numba_variant: object = None  # used where numba rejects fn; the note says what changed
    note: str = ""
    int_mismatch: float = 0.0  # fraction of integer results allowed to differ


UNROLLED = "Python loops unrolled by the trace: sizes capped by the trace's length"
PROGRAMS = {
    # stencils
    "jacobi_1d": Program(P.jacobi_1d, lambda n: (pos(n), pos(n), 100), 70000, 700000, (0, 1)),
    "jacobi_2d": Program(P.jacobi_2d, lambda n: (pos(n, n), pos(n, n), 20), 330, 900, (0, 1)),
    "heat_3d": Program(P.heat_3d, lambda n: (pos(n, n, n), pos(n, n, n), 10), 40, 80, (0, 1)),
    "seidel_2d": Program(P.seidel_2d, lambda n: (pos(n, n), 1), 16, 28, (0,), note=UNROLLED),
    "fdtd_2d": Program(
        P.fdtd_2d,
        lambda n: (pos(n, n + 20), pos(n, n + 20), pos(n, n + 20), pos(20), 20),
        330,
        900,
        (0, 1, 2),
    ),
    # dense linear algebra with loops
    "lu": Program(P.lu, lambda n: (spd(n),), 14, 24, (0,), note=UNROLLED),
    "cholesky": Program(P.cholesky, lambda n: (spd(n),), 18, 30, (0,), note=UNROLLED),
    "trisolv": Program(
        P.trisolv,
        lambda n: (np.tril(pos(n, n)) + n * np.eye(n), np.zeros(n), pos(n)),
        250,
        700,
        (1,),
        note=UNROLLED,
    ),
    "gemm": Program(P.gemm, lambda n: (1.5, 1.2, pos(n, n), pos(n, n), pos(n, n)), 750, 1200, (2,)),
    "syrk": Program(
        P.syrk, lambda n: (1.5, 1.2, pos(n, n), pos(n, n // 2)), 24, 38, (2,), note=UNROLLED
    ),
    "syr2k": Program(
        P.syr2k,
        lambda n: (1.5, 1.2, pos(n, n), pos(n, n // 2), pos(n, n // 2)),
        20,
        32,
        (2,),
        note=UNROLLED,
    ),
    "trmm": Program(
        P.trmm, lambda n: (1.5, pos(n, n), pos(n, n // 2)), 24, 36, (2,), note=UNROLLED
    ),
    "gesummv": Program(
        P.gesummv, lambda n: (1.5, 1.2, pos(n, n), pos(n, n), pos(n)), 1500, 5000, ()
    ),
    "atax": Program(
        P.atax,
        lambda n: (pos(n, n + n // 4), pos(n + n // 4)),
        2800,
        8000,
        (),
        note="large capped by memory: A is 8000 x 10000 (640 MB)",
    ),
    "bicg": Program(P.bicg, lambda n: (pos(n, n + n // 4), pos(n + n // 4), pos(n)), 3000, 7500),
    "mvt": Program(
        P.mvt, lambda n: (pos(n), pos(n), pos(n), pos(n), pos(n, n)), 3000, 8000, (0, 1)
    ),
    "two_mm": Program(
        P.two_mm, lambda n: (1.5, 1.2, pos(n, n), pos(n, n), pos(n, n), pos(n, n)), 450, 1000, (5,)
    ),
    "doitgen": Program(P.doitgen, lambda n: (pos(n, n, n), pos(n, n)), 100, 185, (0,)),
    "gramschmidt": Program(
        P.gramschmidt,
        lambda n: (pos(4 * n, n) + 4 * np.eye(4 * n, n),),
        18,
        30,
        (0,),
        note=UNROLLED,
    ),
    # graphs and statistics
    "floyd_warshall": Program(
        P.floyd_warshall,
        lambda n: (rng.integers(1, 20, (n, n)).astype(float),),
        210,
        450,
        (0,),
        numba_variant=floyd_warshall_numba,
    ),
    "covariance": Program(
        P.covariance,
        lambda n: (n, 10.0 * n, pos(10 * n, n)),
        200,
        220,
        (2,),
        numba_variant=covariance_numba,
        note="NumPy's time jumps 16x from n=200 (6 ms) to n=220 (96 ms): OpenBLAS",
    ),
    "correlation": Program(
        P.correlation,
        lambda n: (n, 10.0 * n, pos(10 * n, n)),
        200,
        250,
        (2,),
        numba_variant=correlation_numba,
        note="large below NumPy's jump: n=250 14.5 ms, n=300 1.1 s (OpenBLAS)",
    ),
    "histogram_loop": Program(
        P.histogram_loop,
        lambda n: (rng.random(n), 10),
        100,
        250,
        numba_variant=histogram_loop_numba,
        note=UNROLLED,
    ),
    # particles and masks
    "nbody": Program(
        P.nbody_step,
        lambda n: (rng.random((n, 3)), rng.random((n, 3)) * 0.1, pos(n, 1), 0.01, 5),
        200,
        600,
        (0, 1),
        note="large below NumPy's jump: n=600 45 ms, n=700 410 ms (OpenBLAS)",
    ),
    "radial_mean": Program(P.radial_mean, lambda n: (pos(n, n), n // 2), 300, 700, ()),
    "clip_negative": Program(
        P.clip_negative, lambda n: (rng.standard_normal((n, n)),), 1000, 3000, (0,)
    ),
    # layers as loops over a window
    "conv2d": Program(P.conv2d, lambda n: (pos(n, n), pos(5, 5)), 800, 1500),
    "max_pool": Program(P.max_pool, lambda n: (rng.standard_normal((n, n)), 3), 2300, 6300),
    "softmax_inplace": Program(
        P.softmax_inplace, lambda n: (rng.standard_normal((n, 1024)),), 4000, 32000, (0,)
    ),
    "relu_layer": Program(
        P.relu_layer,
        lambda n: (
            rng.standard_normal((n, 512)),
            rng.standard_normal((512, 512)),
            rng.standard_normal(512),
        ),
        600,
        5500,
    ),
    # a 2-D fluid
    "cavity_flow": Program(P.cavity_flow, lambda n: cavity_args(n, 5, 20), 100, 420, (2, 3, 7)),
    # complex numbers, small integers, sorts, scans, least squares, histograms, statistics
    "dft": Program(dft, lambda n: (rng.standard_normal(n),), 550, 1700, numba_variant=dft_numba),
    "mandelbrot": Program(
        mandelbrot,
        mandelbrot_args,
        260,
        750,
        int_mismatch=0.02,
        note="escape counts at the boundary depend on the last bit of |z|: up to 2% may differ",
    ),
    "brighten": Program(
        brighten, lambda n: (rng.integers(0, 256, (n, n), dtype=np.uint8), 5), 2600, 6500, (0,)
    ),
    "knn_vote": Program(
        knn_vote,
        lambda n: (
            rng.standard_normal((n, 3)),
            rng.integers(0, 3, n),
            rng.standard_normal((n // 4, 3)),
            5,
        ),
        750,
        2300,
    ),
    "moving_average": Program(
        moving_average, lambda n: (rng.standard_normal(n), 8), 2_000_000, 13_000_000
    ),
    "ranks": Program(ranks, lambda n: (rng.standard_normal(n),), 30_000, 250_000),
    "fit": Program(fit, fit_args, 100_000, 850_000),
    "histogram_image": Program(histogram_image, lambda n: (image(n),), 650, 3000),
    "moving_average_pad": Program(
        moving_average_pad, lambda n: (np.cumsum(rng.normal(size=n)),), 1_000_000, 9_000_000
    ),
    "covariance_of_data": Program(covariance_of_data, latent_samples, 70_000, 600_000),
    "knn_vote_take": Program(
        knn_vote_take,
        lambda n: (rng.normal(size=(n, 2)), rng.integers(0, 3, n), rng.normal(size=(n // 4, 2))),
        800,
        3000,
    ),
}


# --- Contenders ----------------------------------------------------------------------------------


def njit_program(fn, **options):
    """numba.njit(fn), with the Python functions of fn's own module that it calls njit-compiled
    as well (numba cannot call plain Python functions): the same source, rebound globals."""
    g = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        h = g.get(name)
        if isinstance(h, types.FunctionType) and h.__module__ == fn.__module__ and h is not fn:
            g[name] = njit_program(h, **options)
    clone = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    return numba.njit(**options)(clone)


def block(x):
    return jax.block_until_ready(x) if jax is not None else x


class Contender:
    """One way of running a program: call(args) runs it on args (which it may update) and gives
    (result, arrays to compare with NumPy's arguments afterwards, as {position: array})."""

    def __init__(self, label, call):
        self.label, self.call = label, call


def numpy_like(label, fn):
    def call(args):
        out = fn(*args)
        return out, {i: a for i, a in enumerate(args) if isinstance(a, np.ndarray)}

    return Contender(label, call)


def jax_like(jitted, writes):
    def call(args):
        out, updated = block(jitted(*args))
        return out, dict(zip(writes, updated))

    return Contender("jax", call)


# --- Comparing with NumPy --------------------------------------------------------------------------


def mismatch(want, got, int_fraction, what="result"):
    """None where got is NumPy's want within the tolerance, else why not."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"{what}: {type(got).__name__} instead of {len(want)} values"
        for k, (e, g) in enumerate(zip(want, got)):
            why = mismatch(e, g, int_fraction, f"{what}[{k}]")
            if why:
                return why
        return None
    if want is None:
        return None if got is None else f"{what}: a value where NumPy returns None"
    e, g = np.asarray(want), np.asarray(got)
    if e.shape != g.shape:
        return f"{what}: shape {g.shape} instead of {e.shape}"
    if e.dtype.kind in "biu":
        bad = np.count_nonzero(e != g)
        if bad > int_fraction * e.size:
            return f"{what}: {bad} of {e.size} differ"
        return None
    scale = float(np.nanmax(np.abs(e))) if e.size else 0.0
    if not np.allclose(g, e, rtol=1e-6, atol=1e-6 * scale, equal_nan=True):
        err = np.nanmax(np.abs(g.astype(e.dtype) - e))
        return f"{what}: max error {err:.3g} (max |value| {scale:.3g})"
    return None


# --- Timing ------------------------------------------------------------------------------------------


# Every contender is timed after this long idle, then one untimed call: the thread pools of
# the contender before it (NumPy's OpenBLAS, numba's, XLA's) spin on both cores for up to
# about 0.1 s after their last call, and a contender timed inside that window loses up to
# half its cores to them (NumPy's A @ x, then tinymlir's (A @ x) @ A: 2.1 and 4.4 ms,
# against 2.1 ms alone). The untimed call wakes the contender's own threads: on these
# 2-vCPU machines a parallel call right after 0.15 s idle took 10-15 ms where warm ones
# take 2.2 (jacobi_1d, the same for tinymlir before and after this change). Each
# contender is measured warm and alone, as a program that uses one of them runs.
SETTLE_S = 0.15


def timed_loop(contender, args, reps):
    """Seconds per call over reps calls, each on its own deep copy of args (copies untimed),
    after SETTLE_S idle and one untimed call."""
    copies = [copy.deepcopy(args) for _ in range(reps + 1)]
    time.sleep(SETTLE_S)
    contender.call(copies.pop())
    t = time.perf_counter()
    for a in copies:
        contender.call(a)
    return (time.perf_counter() - t) / reps


def first_call(contender, args):
    a = copy.deepcopy(args)
    t = time.perf_counter()
    out, arrays = contender.call(a)
    return time.perf_counter() - t, out, arrays


def run_case(name, prog, size, rounds):
    """One program at one size: every contender's first call, check and warm rounds."""
    n = prog.small if size == "small" else prog.large
    args = prog.make(n)
    case = {"program": name, "size": size, "n": n, "ops": None, "contenders": {}}
    res = case["contenders"]

    def record(label, status, **more):
        res[label] = {"status": status, **more}

    # NumPy, the reference
    ref = numpy_like("numpy", prog.fn)
    first, want, want_args = first_call(ref, args)
    record("numpy", "ok", first_s=first)
    runners = {"numpy": ref}

    def try_contender(label, make_contender, writes=None):
        try:
            c = make_contender()
            t, got, got_args = first_call(c, args)
        except Exception as e:  # noqa: BLE001  (any failure is reported, not fatal)
            record(label, "fails", reason=short(e), detail=traceback.format_exc(limit=3))
            return False
        why = mismatch(want, got, prog.int_mismatch)
        for i, g in got_args.items():
            why = why or mismatch(want_args[i], g, prog.int_mismatch, f"argument {i}")
        if writes is not None:  # jax: the arguments it does not return must be NumPy's too
            for i, a in enumerate(args):
                if isinstance(a, np.ndarray) and i not in writes:
                    why = why or mismatch(want_args[i], a, 0, f"argument {i} (not in writes)")
        record(label, "WRONG" if why else "ok", first_s=t, reason=why)
        runners[label] = c
        return True

    def tinymlir_contender():
        f = jit(prog.fn)
        case["_jit"] = f
        return numpy_like("tinymlir", f)

    if try_contender("tinymlir", tinymlir_contender):
        try:
            spec = case.pop("_jit").compile(*copy.deepcopy(args))
            case["ops"] = sum(" = " in line for line in spec.module.splitlines())
        except AttributeError:
            case["ops"] = 0  # nothing computed: the result comes from static arguments
    case.pop("_jit", None)

    for label, options in (("numba", {}), ("numba_par", {"parallel": True})):
        if numba is None:
            record(label, "missing")
            continue
        ok = try_contender(
            label,
            lambda label=label, options=options: numpy_like(
                label, njit_program(prog.fn, **options)
            ),
        )
        if not ok and prog.numba_variant is not None:
            reason = res[label]["reason"]
            if try_contender(
                label,
                lambda label=label, options=options: numpy_like(
                    label, njit_program(prog.numba_variant, **options)
                ),
            ):
                res[label]["variant"] = prog.numba_variant.__name__
                res[label]["source_failure"] = reason

    if jax is None:
        record("jax", "missing")
    elif name not in programs_jax.PORTS:
        record("jax", "no port")
    else:
        fn, static = programs_jax.PORTS[name]
        try_contender(
            "jax",
            lambda: jax_like(jax.jit(fn, static_argnums=static), prog.writes),
            writes=prog.writes,
        )

    # warm: one warm-up call each sets the loop length (calls under 2 ms are looped)
    reps = {}
    for label, c in runners.items():
        t = timed_loop(c, args, 1)
        reps[label] = max(1, min(200, math.ceil(2e-3 / max(t, 1e-7))))
    times = {label: [] for label in runners}
    for _ in range(rounds):
        for label, c in runners.items():
            times[label].append(timed_loop(c, args, reps[label]))
    for label in runners:
        res[label].update(
            times_s=times[label],
            reps=reps[label],
            speedups=[a / b for a, b in zip(times["numpy"], times[label])],
        )
    best_numba(res)
    return case


def best_numba(res):
    """res["numba_best"]: the faster (by warm median) of njit and njit(parallel=True) among
    those that ran correctly; else the one that says most (ok > WRONG > fails > missing)."""
    rank = {"ok": 0, "WRONG": 1, "fails": 2, "missing": 3}
    cands = sorted(
        ("numba", "numba_par"),
        key=lambda k: (
            rank[res[k]["status"]],
            statistics.median(res[k].get("times_s") or [math.inf]),
        ),
    )
    best = dict(res[cands[0]])
    best["kind"] = "nj" if cands[0] == "numba" else "par"
    res["numba_best"] = best


def short(e):
    text = str(e).strip().splitlines()
    first = next((line.strip() for line in text if line.strip()), "")
    if not first:  # a bare assert: the line that failed
        frame = traceback.extract_tb(e.__traceback__)[-1]
        first = f"{frame.line} ({os.path.basename(frame.filename)}:{frame.lineno})"
    return f"{type(e).__name__}: {first[:100]}"


# --- Report ---------------------------------------------------------------------------------------


def environment():
    env = {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "tinymlir": tinymlir.__version__,
        "numba": numba.__version__ if numba else "missing",
        "jax": jax.__version__ if jax else "missing",
    }
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        env["numpy_blas"] = f"{blas.get('name')} {blas.get('version')}"
    except Exception:  # noqa: BLE001
        env["numpy_blas"] = "unknown"
    try:
        from threadpoolctl import threadpool_info

        env["threadpools"] = [
            f"{p.get('internal_api')} {p.get('version')} "
            f"({p.get('num_threads')} threads, {os.path.basename(p['filepath'])})"
            for p in threadpool_info()
        ]
    except ImportError:
        env["threadpools"] = ["threadpoolctl not installed"]
    if jax:
        env["jax_backend"] = f"{jax.default_backend()} ({jax.devices()[0].device_kind})"
    for var in (
        "OPENBLAS_CORETYPE",
        "OMP_NUM_THREADS",
        "NUMBA_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "XLA_FLAGS",
    ):
        env[var] = os.environ.get(var, "unset")
    if numba:
        env["numba_threads"] = numba.config.NUMBA_NUM_THREADS
    return env


def gmean(xs):
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else float("nan")


def median(xs):
    return statistics.median(xs)


def speedup_cell(r):
    if r["status"] != "ok":
        return r["status"]
    s = r["speedups"]
    return f"{median(s):.2f}x [{min(s):.2f},{max(s):.2f}]"


def first_cell(r):
    return f"{r['first_s']:.2f}" if r["status"] in ("ok", "WRONG") else "-"


def report(env, cases, rounds):
    print(f"CPU: {env['cpu']} ({env['cpu_count']} CPUs); Python {env['python']}")
    print(
        f"NumPy {env['numpy']} (BLAS: {env['numpy_blas']}); tinymlir {env['tinymlir']}; "
        f"numba {env['numba']}; jax {env['jax']} {env.get('jax_backend', '')}"
    )
    print("thread pools: " + "; ".join(env["threadpools"]))
    print(
        f"OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE']} OMP_NUM_THREADS={env['OMP_NUM_THREADS']} "
        f"NUMBA_NUM_THREADS={env['NUMBA_NUM_THREADS']} (numba uses {env.get('numba_threads')}) "
        f"OPENBLAS_NUM_THREADS={env['OPENBLAS_NUM_THREADS']} XLA_FLAGS={env['XLA_FLAGS']}"
    )
    print(
        f"{rounds} warm rounds; speedup = NumPy time / contender time in the same round, "
        f"median [min,max]; first call in seconds"
    )
    head = (
        f"{'program':19} {'size':5} {'numpy ms':>9} {'tinymlir ms':>11} "
        f"{'tinymlir':>20} {'numba (best)':>24} {'jax':>20} {'1st tm':>7} "
        f"{'1st nb':>7} {'1st jax':>7} {'ops':>6}"
    )
    print(head)
    print("-" * len(head))
    notes = []
    for c in cases:
        r = c["contenders"]
        nb = r["numba_best"]
        nb_cell = speedup_cell(nb) + (f" {nb['kind']}" if nb["status"] == "ok" else "")
        tm = r["tinymlir"]
        tm_ms = f"{median(tm['times_s']) * 1e3:.2f}" if "times_s" in tm else "-"
        print(
            f"{c['program']:19} {c['size']:5} {median(r['numpy']['times_s']) * 1e3:9.2f} "
            f"{tm_ms:>11} {speedup_cell(tm):>20} {nb_cell:>24} {speedup_cell(r['jax']):>20} "
            f"{first_cell(tm):>7} {first_cell(nb):>7} {first_cell(r['jax']):>7} "
            f"{c['ops'] if c['ops'] is not None else '-':>6}"
        )
        for label in ("tinymlir", "numba", "numba_par", "jax"):
            x = r[label]
            if x.get("reason"):
                notes.append(
                    f"{c['program']} {c['size']} n={c['n']}: {label} {x['status']}: {x['reason']}"
                )
            if x.get("variant"):
                notes.append(
                    f"{c['program']} {c['size']}: {label} ran the variant "
                    f"{x['variant']} (the source failed: {x['source_failure']})"
                )
    print()
    print("notes:")
    for name, p in PROGRAMS.items():
        if p.note and any(c["program"] == name for c in cases):
            print(f"  {name}: {p.note}")
    for line in notes:
        print("  " + line)

    print()
    print("summary (warm medians; only programs that each contender ran correctly):")
    ok = lambda c, k: c["contenders"][k]["status"] == "ok"  # noqa: E731
    sp = lambda c, k: median(c["contenders"][k]["speedups"])  # noqa: E731
    for k, label in (
        ("tinymlir", "tinymlir"),
        ("numba_best", "numba (best of njit, par)"),
        ("numba", "numba njit"),
        ("numba_par", "numba parallel"),
        ("jax", "jax.jit"),
    ):
        runs = [c for c in cases if ok(c, k)]
        print(
            f"  geomean speedup over NumPy, {label:26}: {gmean([sp(c, k) for c in runs]):.3f}x "
            f"over {len(runs)} of {len(cases)} cases"
        )
    for k, label in (("numba_best", "numba"), ("jax", "jax")):
        both = [c for c in cases if ok(c, "tinymlir") and ok(c, k)]
        a, b = gmean([sp(c, "tinymlir") for c in both]), gmean([sp(c, k) for c in both])
        print(
            f"  tinymlir vs {label:5} on the {len(both)} cases both ran correctly: "
            f"{a:.3f}x / {b:.3f}x = {a / b:.3f} (target >= 1.25)"
        )
    slow = [
        f"{c['program']}/{c['size']} ({sp(c, 'tinymlir'):.2f}x)"
        for c in cases
        if ok(c, "tinymlir") and sp(c, "tinymlir") < 0.95
    ]
    print(f"  cases where tinymlir's median is < 0.95x NumPy: {len(slow)}: {', '.join(slow)}")
    bad = [
        f"{c['program']}/{c['size']} ({c['contenders']['tinymlir']['status']})"
        for c in cases
        if not ok(c, "tinymlir")
    ]
    print(f"  cases where tinymlir failed or was WRONG: {len(bad)}: {', '.join(bad)}")
    firsts = lambda c: (
        c["contenders"]["tinymlir"]["first_s"],  # noqa: E731
        c["contenders"]["numba_best"]["first_s"],
    )
    short_ = [c for c in cases if ok(c, "tinymlir") and ok(c, "numba_best") and c["ops"] < 10000]
    print(
        f"  first call, tinymlir / numba, geomean over the {len(short_)} cases with ops < 10000: "
        f"{gmean([firsts(c)[0] / firsts(c)[1] for c in short_]):.3f} (target <= 2)"
    )
    long_ = [c for c in cases if c["ops"] is not None and c["ops"] >= 10000]
    print(f"  first call of the {len(long_)} cases with ops >= 10000 (tinymlir s, numba s, ops):")
    for c in long_:
        r = c["contenders"]
        nb = (
            f"{r['numba_best']['first_s']:.2f}s"
            if "first_s" in r["numba_best"]
            else r["numba_best"]["status"]
        )
        print(
            f"    {c['program']}/{c['size']} n={c['n']}: {r['tinymlir']['first_s']:.2f}s, {nb}, "
            f"{c['ops']} ops"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default=None, help="NAME[,NAME...]")
    parser.add_argument("--size", choices=("small", "large", "both"), default="both")
    parser.add_argument("--json", default=None, help="write every raw number to FILE")
    opts = parser.parse_args()
    names = opts.only.split(",") if opts.only else list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown programs {unknown}; known: {', '.join(PROGRAMS)}")
    sizes = ("small", "large") if opts.size == "both" else (opts.size,)
    cases = []
    for name in names:
        for size in sizes:
            t = time.perf_counter()
            cases.append(run_case(name, PROGRAMS[name], size, opts.rounds))
            print(f"# {name} {size}: {time.perf_counter() - t:.1f}s", file=sys.stderr, flush=True)
    env = environment()  # after the runs: threadpoolctl sees every BLAS that was loaded
    report(env, cases, opts.rounds)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(
                {"environment": env, "rounds": opts.rounds, "cases": cases},
                f,
                indent=1,
                default=str,
            )


if __name__ == "__main__":
    main()
