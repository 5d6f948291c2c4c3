"""Complete NumPy programs, run unmodified: one source under NumPy and under
tinymlir.jit, comparing the results and every argument the program updates.

The programs are the kinds people write (stencils, dense linear algebra with
Python loops, graph and statistics kernels, particle and fluid steps, layers
written as loops over a window): they assign into slices, fill np.zeros
buffers, update their arguments and often return nothing.

Tolerances: the inputs are positive (or the matrices diagonally dominant), so
each result is a sum of K rounded terms of one sign and its error is at most
gamma_K = K eps / (1 - K eps) relative to its magnitude; K is stated per
program (the longest chain of dependent additions, times the steps that feed
it). tinymlir may reassociate sums (NumPy's are pairwise), hence the bound
rather than equality. Selections (max-pool, Floyd-Warshall's minima of exact
sums of integers) are compared exactly.
"""

import copy
import os
import re

import numpy as np
import pytest

from tinymlir import jit

EPS = np.finfo(np.float64).eps
rng = np.random.default_rng(2026)


def gamma(k):
    return k * EPS / (1 - k * EPS)


def _close(e, g, rtol, what):
    if isinstance(e, (tuple, list)):
        assert len(e) == len(g), what
        for k, (a, b) in enumerate(zip(e, g)):
            _close(a, b, rtol, f"{what}[{k}]")
        return
    if e is None:
        assert g is None, what
        return
    e, g = np.asarray(e), np.asarray(g)
    assert e.dtype == g.dtype and e.shape == g.shape, (what, e.dtype, g.dtype, e.shape, g.shape)
    if rtol == 0:
        np.testing.assert_array_equal(g, e, err_msg=what)
    else:
        scale = np.max(np.abs(e)) if e.size else 0.0
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * scale, err_msg=what)


def program(fn, *args, k=0, **kwargs):
    np_args, jit_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*np_args, **kwargs)
    got = jit(fn)(*jit_args, **kwargs)
    rtol = 0 if k == 0 else gamma(k)
    _close(expected, got, rtol, "result")
    for i, (e, g) in enumerate(zip(np_args, jit_args)):
        if isinstance(e, np.ndarray):
            _close(e, g, rtol, f"argument {i}")


def pos(*shape):
    return rng.random(shape) + 0.5


def spd(n):
    a = rng.random((n, n))
    return a @ a.T + n * np.eye(n)


# --- Stencils -----------------------------------------------------------------------


def jacobi_1d(A, B, T):
    for _ in range(T):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(A, B, T):
    for _ in range(T):
        B[1:-1, 1:-1] = 0.2 * (
            A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1]
        )
        A[1:-1, 1:-1] = 0.2 * (
            B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1]
        )


def heat_3d(A, B, T):
    for _ in range(T):
        B[1:-1, 1:-1, 1:-1] = (
            0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
            + A[1:-1, 1:-1, 1:-1]
        )
        A[1:-1, 1:-1, 1:-1] = (
            0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
            + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
            + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
            + B[1:-1, 1:-1, 1:-1]
        )


def seidel_2d(A, T):
    n = A.shape[0]
    for _ in range(T):
        for i in range(1, n - 1):
            A[i, 1:-1] += (
                A[i - 1, :-2]
                + A[i - 1, 1:-1]
                + A[i - 1, 2:]
                + A[i, 2:]
                + A[i + 1, :-2]
                + A[i + 1, 1:-1]
                + A[i + 1, 2:]
            )
            for j in range(1, n - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def fdtd_2d(ex, ey, hz, fict, T):
    for t in range(T):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


@pytest.mark.parametrize("name", ["jacobi_1d", "jacobi_2d", "heat_3d"])
def test_jacobi_and_heat_stencils(name):
    T = 4
    if name == "jacobi_1d":
        program(jacobi_1d, pos(30), pos(30), T, k=3 * 2 * T + 2)
    elif name == "jacobi_2d":
        program(jacobi_2d, pos(12, 12), pos(12, 12), T, k=5 * 2 * T + 2)
    else:
        # differences: the terms are of both signs; the bound is relative to
        # the largest value, which the stencil keeps below max(A)
        program(heat_3d, pos(7, 7, 7), pos(7, 7, 7), 2, k=40 * 2 * 2)


def test_gauss_seidel():
    program(seidel_2d, pos(8, 8), 2, k=2 * 8 * 10)


def test_fdtd_2d():
    program(fdtd_2d, pos(8, 9), pos(8, 9), pos(8, 9), pos(3), 3, k=3 * 3 * 8)


# --- Dense linear algebra with loops -------------------------------------------------------


def lu(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]


def cholesky(A):
    n = A.shape[0]
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, n):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def syrk(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, : i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, : i + 1] += alpha * A[i, k] * A[: i + 1, k]


def syr2k(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, : i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, : i + 1] += A[: i + 1, k] * alpha * B[i, k] + B[: i + 1, k] * alpha * A[i, k]


def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1 :, i], B[i + 1 :, j])
    B *= alpha


def gesummv(alpha, beta, A, B, x):
    return alpha * A @ x + beta * B @ x


def atax(A, x):
    return (A @ x) @ A


def bicg(A, p, r):
    return r @ A, A @ p


def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A


def two_mm(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D


def doitgen(A, C4):
    NR, NQ, NP = A.shape
    for r in range(NR):
        A[r, :, :] = np.reshape(np.reshape(A[r], (NQ, NP)) @ C4, (NQ, NP))


def gramschmidt(A):
    m, n = A.shape
    Q = np.zeros_like(A)
    R = np.zeros((n, n), dtype=A.dtype)
    for k in range(n):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def test_lu_cholesky_and_triangular_solve():
    n = 8
    a = spd(n)
    # Backward-stable factorizations of well-conditioned matrices: each entry
    # is off by at most about n gamma_n relative to the largest (cond(A) < 3).
    program(lu, a.copy(), k=4 * n * n)
    program(cholesky, a.copy(), k=4 * n * n)
    L = np.tril(pos(n, n)) + n * np.eye(n)
    program(trisolv, L, np.zeros(n), pos(n), k=4 * n * n)


def test_element_updates_compile_to_scalars_and_parts():
    # An unrolled loop of element updates: each element read is a load of
    # the array's buffer where the program reads it, each update a store, each
    # short np.dot a loop; no one-element buffers. Long enough (40x40: 780
    # steps), the kernel is cut into parts. Same results as NumPy, as above.
    n = 12
    spec = jit(cholesky, unroll_loops=True).compile(spd(n))
    assert "memref.alloc" not in spec.bufferized, spec.bufferized
    # one loop per dot of 2 or more elements (shorter ones fold away)
    lengths = [j for i in range(1, n) for j in range(i)] + list(range(1, n))
    assert spec.bufferized.count("scf.for") == sum(1 for k in lengths if k >= 2)
    assert "kernel_part" not in spec.lowered
    n = 40
    a = spd(n)
    program(cholesky, a.copy(), k=4 * n * n)
    spec = jit(cholesky, ir_limit=0, unroll_loops=True).compile(
        a
    )  # 31,000 operations: its text kept
    # The parts are lowered in modules of their own, printed after the
    # kernel's; the kernel's module declares each part it calls.
    defined = re.findall(r"^ *llvm\.func @(kernel_part\d+)\(.*\{$", spec.lowered, re.M)
    declared = re.findall(r"^ *llvm\.func @(kernel_part\d+)\(.*[^{]$", spec.lowered, re.M)
    parts = len(defined)
    assert parts >= 2 and sorted(defined) == sorted(declared) == sorted(set(defined))
    assert spec.lowered.count("llvm.call @kernel_part") == parts
    assert (
        len(re.findall("^module", spec.lowered, re.M)) == 1 + (parts + 1) // 2
    )  # two parts a module
    (line,) = re.findall(r"^ *llvm\.func @kernel_part0\(.*\{$", spec.lowered, re.M)
    assert '"noinline"' in line
    # Its 800 dot loops stay scalar: LLVM's vectorizer would cost more than
    # they take (the annotation reaches the branches, which LLVM reads).
    assert "#llvm.loop_vectorize<disable = true>" in spec.lowered
    assert spec.lowered.count("{loop_annotation = #loop_annotation}") >= 700


def test_dot_loops_are_told_apart_by_what_they_read():
    # CSE's hash does not look into regions, and dot loops of one length have
    # the same operands: each loop carries the ids of the vectors it reads, so
    # CSE does not compare it with every earlier loop of its length. The same
    # dot traced twice still gets one id pair, and CSE still merges it.
    n = 12
    spec = jit(cholesky, unroll_loops=True).compile(spd(n))
    ids = re.findall(r"tinymlir\.dot = array<i64: (\d+), (\d+)>", spec.module)
    assert len(ids) == spec.module.count("scf.for") > 50
    assert len(set(ids)) == len(ids)

    def twice(a):
        a[0, 3] = np.dot(a[0, :3], a[1, :3]) + np.dot(a[0, :3], a[1, :3])
        a[2, 3] = np.dot(a[2, :3], a[1, :3])

    a = pos(3, 4)
    spec = jit(twice).compile(a)
    first, second, third = re.findall(r"tinymlir\.dot = (array<i64: \d+, \d+>)", spec.module)
    assert first == second != third
    assert spec.optimized.count("scf.for") == 2
    program(twice, a, k=8)


def test_the_text_of_later_stages_is_kept_for_kernels_up_to_ir_limit():
    """Printing a huge kernel's later stages costs a tenth of its compilation:
    over ir_limit operations only the built module's text is kept (it is also
    the disk cache's key); the code and the results are the same. ir_limit is
    part of the specialization key, so each function keeps what it asks for."""
    a = spd(13)
    kept = jit(cholesky, disk_cache=False, unroll_loops=True).compile(a)
    for stage in ("optimized", "bufferized", "lowered"):
        assert "func" in getattr(kept, stage), stage
    fn = jit(cholesky, disk_cache=False, ir_limit=50, unroll_loops=True)
    small = fn.compile(a)
    for stage in ("optimized", "bufferized", "lowered"):
        text = getattr(small, stage)
        assert text.startswith("// not kept: the kernel has ") and "ir_limit (50)" in text, text
    assert small.module == kept.module
    x, want = a.copy(), a.copy()
    fn(x)
    cholesky(want)
    _close(want, x, gamma(4 * 13 * 13), "argument 0")  # as program() checks the kept one


def test_a_long_kernel_compiles_in_partitions_that_the_disk_cache_keeps(tmp_path):
    # The parts of a long kernel are compiled on every core, one object file
    # each; the disk cache keeps them all, and a second function (as a new
    # process would) links them from there and gives the same results.
    n = 40
    a = spd(n)
    want = a.copy()
    cholesky(want)
    first = jit(cholesky, cache_dir=str(tmp_path), unroll_loops=True)
    got = a.copy()
    first(got)
    np.testing.assert_allclose(np.tril(got), np.tril(want), rtol=gamma(4 * n * n))
    (entry,) = tmp_path.rglob("*.kernel")
    if os.cpu_count() >= 2:
        assert entry.read_bytes().count(b"\x7fELF") >= 2  # an object per partition
    second = jit(cholesky, cache_dir=str(tmp_path), unroll_loops=True)
    again = a.copy()
    second(again)
    assert second.stats().disk_hits == 1 and second.stats().compilations == 0
    np.testing.assert_array_equal(again, got)


def test_gemm_syrk_syr2k_trmm():
    n, m = 7, 5
    program(gemm, 1.5, 1.2, pos(n, n), pos(n, m), pos(m, n), k=2 * m + 4)
    program(syrk, 1.5, 1.2, pos(n, n), pos(n, m), k=3 * m + 3)
    program(syr2k, 1.5, 1.2, pos(n, n), pos(n, m), pos(n, m), k=6 * m + 3)
    program(trmm, 1.5, pos(n, n), pos(n, m), k=2 * n + 2)


def test_blas_takes_gemms_scaling_and_accumulation():
    # C[:] = alpha * A @ B + beta * C: one BLAS call with alpha and beta, C
    # its output (no zero fill, no scaled copy of A, no loop after it). Sizes
    # large enough for BLAS (not the streaming loops), and for the loop after
    # it to be parallel if it were still there.
    n, m = 300, 40
    args = (1.5, 1.2, pos(n, n), pos(n, m), pos(m, n))
    program(gemm, *args, k=2 * m + 4)
    spec = jit(gemm).compile(*args)
    assert spec.blas_calls == 1
    assert spec.lowered.count("llvm.call @tinymlir_dgemm") == 1
    assert "omp.parallel" not in spec.lowered
    # two_mm: the first product takes alpha, the second D and beta.
    args = (1.5, 1.2, pos(n, m), pos(m, n), pos(n, m), pos(n, m))
    program(two_mm, *args, k=2 * n + 4)
    assert "omp.parallel" not in jit(two_mm).compile(*args).lowered
    # gesummv: both scalings (one temporary, reused) become alpha; values
    # as NumPy's at a size whose products run on BLAS.
    n = 1100
    program(gesummv, 1.5, 1.2, pos(n, n), pos(n, n), pos(n), k=2 * n + 3)
    # A zero alpha stays a product of 0 * A (0 * inf is NaN, as NumPy has it;
    # BLAS's alpha 0 would skip A @ B); inf and NaN in C go through beta.
    c, a, b = pos(n, n), pos(n, m), pos(m, n)
    a[3, 4], c[5, 6], c[7, 8] = np.inf, np.inf, np.nan
    for alpha in (0.0, 1.5):
        expected, got = c.copy(), c.copy()
        gemm(alpha, 1.2, expected, a, b)
        jit(gemm)(alpha, 1.2, got, a, b)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(expected))
        assert np.isnan(expected[3]).all() == (alpha == 0.0)
        finite = np.isfinite(expected)
        np.testing.assert_allclose(got[finite], expected[finite], rtol=gamma(2 * m + 4))


def test_row_updates_of_column_products_need_no_temporaries():
    # syrk's C[i, :i + 1] += alpha * A[i, k] * A[: i + 1, k]: the scalar is
    # read once above the loop, the column read squeezed where it is, and the
    # product added into C's row itself. Each update had made a scalar
    # buffer, a column product, a snapshot of the row and two copies.
    n, m = 12, 6
    for fn, args, k in (
        (syrk, (1.5, 1.2, pos(n, n), pos(n, m)), 3 * m + 3),
        (syr2k, (1.5, 1.2, pos(n, n), pos(n, m), pos(n, m)), 6 * m + 3),
    ):
        # (the unrolled builder's property: captured loops copy the rows they
        # read at traced positions, docs/architecture.md "Loops")
        bufferized = jit(fn, unroll_loops=True).compile(*args).bufferized
        assert bufferized.count("memref.alloc") == 0, fn.__name__
        assert bufferized.count("memref.copy") == 0, fn.__name__
        program(fn, *args, k=k)


def test_blas_like_kernels():
    n = 9
    program(gesummv, 1.5, 1.2, pos(n, n), pos(n, n), pos(n), k=2 * n + 3)
    program(atax, pos(n, n + 2), pos(n + 2), k=2 * n + 4)
    program(bicg, pos(n, n + 1), pos(n + 1), pos(n), k=n + 2)
    program(mvt, pos(n), pos(n), pos(n), pos(n), pos(n, n), k=n + 2)
    program(two_mm, 1.5, 1.2, pos(5, 6), pos(6, 4), pos(4, 3), pos(5, 3), k=6 * 4 + 4)
    program(doitgen, pos(3, 4, 5), pos(5, 5), k=5 + 1)


def test_both_products_of_one_matrix_are_one_pass():
    # atax, bicg and mvt read A once: one tinymlir_?gemv2 call for both
    # products (NumPy makes two gemv calls), at sizes that reach BLAS (A of
    # 2**20 elements). 1031 rows leave a part block of rows on a thread.
    # float32 as well, to its own rounding.
    m, n = 1031, 1037
    cases = (
        (atax, lambda a: (a, pos(n).astype(a.dtype)), m + n + 4),
        (bicg, lambda a: (a, pos(n).astype(a.dtype), pos(m).astype(a.dtype)), n + 2),
        (mvt, lambda a: tuple(pos(m).astype(a.dtype) for _ in range(4)) + (a[:, :m],), m + 2),
    )
    for dtype in (np.float64, np.float32):
        eps = np.finfo(dtype).eps
        for fn, make, k in cases:
            args = make(pos(m, n).astype(dtype))
            if fn is mvt:
                args = args[:4] + (np.ascontiguousarray(args[4]),)
            spec = jit(fn).compile(*args)
            assert spec.blas_calls == 1, fn.__name__
            assert spec.lowered.count("gemv2") == 2, fn.__name__  # declared, called
            np_args, jit_args = copy.deepcopy(args), copy.deepcopy(args)
            expected, got = fn(*np_args), jit(fn)(*jit_args)
            rtol = k * eps
            for e, g in zip(
                (expected, *np_args) if fn is not bicg else (*expected, *np_args),
                (got, *jit_args) if fn is not bicg else (*got, *jit_args),
            ):
                if e is None:
                    continue
                assert g.dtype == e.dtype and g.shape == e.shape
                np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * np.max(np.abs(e)))
    # An infinity in the last row (in the part block): inf where NumPy has
    # it, no NaN (the block's missing rows are not rows of A scaled by 0).
    a = pos(m, n)
    a[m - 1, 2] = np.inf
    p_, r = pos(n), pos(m)
    expected, got = bicg(a, p_, r), jit(bicg)(a, p_, r)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(np.isinf(g), np.isinf(e))
        assert not np.isnan(g).any()
        finite = np.isfinite(e)
        np.testing.assert_allclose(g[finite], e[finite], rtol=gamma(m + n))


def apart(A, x, y):
    t = A @ x
    A *= 2.0
    return t, y @ A


def column_of_row(A, y):
    return A @ (y @ A)


def test_products_that_cannot_share_a_pass_stay_apart():
    # A written between the two products, and A @ (y @ A) (the column product
    # needs the whole row product first): two calls, NumPy's values.
    m, n = 1031, 1031
    program(apart, pos(m, n), pos(n), pos(m), k=n + 2)
    assert jit(apart).compile(pos(m, n), pos(n), pos(m)).blas_calls == 2
    program(column_of_row, pos(m, n), pos(m), k=m + n + 4)
    assert jit(column_of_row).compile(pos(m, n), pos(m)).blas_calls == 2


def test_gram_schmidt():
    # orthogonalization of a well-conditioned matrix (columns near orthogonal)
    program(gramschmidt, pos(8, 5) + 4 * np.eye(8, 5), k=64 * 8)


# --- Graphs and statistics ---------------------------------------------------------------------


def floyd_warshall(path):
    for k in range(path.shape[0]):
        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))


def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1 : M, i] = corr[i, i + 1 : M] = data[:, i] @ data[:, i + 1 : M]
    return corr


def histogram_loop(x, bins):
    h = np.zeros(bins)
    for v in x:
        h[np.floor(v * bins).astype(np.int32)] += 1.0
    return h


def test_floyd_warshall_exact():
    # integer distances as floats: every sum and minimum is exact
    d = rng.integers(1, 20, size=(9, 9)).astype(np.float64)
    program(floyd_warshall, d)


def test_covariance_and_correlation():
    n, m = 12, 6
    # centered data: the products are of both signs; bounds relative to the largest entry
    program(covariance, m, float(n), pos(n, m), k=8 * n)
    program(correlation, m, float(n), pos(n, m), k=8 * n)


def test_histogram_by_traced_positions():
    program(histogram_loop, rng.random(30), 5)


# --- Particles and masks ---------------------------------------------------------------------


def nbody_acc(pos_, mass, G, softening):
    x, y, z = pos_[:, 0:1], pos_[:, 1:2], pos_[:, 2:3]
    dx, dy, dz = x.T - x, y.T - y, z.T - z
    inv_r3 = dx**2 + dy**2 + dz**2 + softening**2
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)
    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass
    return np.hstack((ax, ay, az))


def nbody_step(p, v, mass, dt, steps):
    for _ in range(steps):
        a = nbody_acc(p, mass, 1.0, 0.1)
        v += a * dt / 2.0
        p += v * dt
        a = nbody_acc(p, mass, 1.0, 0.1)
        v += a * dt / 2.0


def radial_mean(data, rings):
    n = data.shape[0]
    yy, xx = np.indices((n, n))
    r = np.sqrt((xx - n / 2) ** 2 + (yy - n / 2) ** 2)
    out = np.zeros(rings)
    for k in range(rings):
        mask = (r >= k) & (r < k + 1)
        out[k] = data[mask].mean()
    return out


def clip_negative(x):
    x[x < 0] = 0.0
    x[x > 0.5] *= 2.0
    return x.sum()


def test_nbody_with_a_masked_update():
    n = 6
    p, v = rng.random((n, 3)), rng.random((n, 3)) * 0.1
    # a few steps of smooth dynamics: differences of positions lose relative
    # accuracy; the bound is scaled to each array's largest value
    program(nbody_step, p, v, pos(n, 1), 0.01, 2, k=2000)


def test_radial_mean_by_masked_means():
    program(radial_mean, pos(10, 10), 5, k=100)


def test_masked_clip():
    program(clip_negative, rng.standard_normal((5, 6)), k=40)


# --- Layers as loops over a window ------------------------------------------------------------


def conv2d(x, w):
    H, W = x.shape
    K = w.shape[0]
    out = np.zeros((H - K + 1, W - K + 1))
    for i in range(K):
        for j in range(K):
            out += w[i, j] * x[i : i + H - K + 1, j : j + W - K + 1]
    return out


def max_pool(x, size):
    H, W = x.shape
    out = np.full((H // size, W // size), -np.inf)
    for i in range(size):
        for j in range(size):
            out = np.maximum(out, x[i : H - H % size : size, j : W - W % size : size])
    return out


def softmax_inplace(x):
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)


def relu_layer(x, w, b):
    y = np.empty((x.shape[0], w.shape[1]))
    y[:] = x @ w
    y += b
    y[y < 0] = 0.0
    return y


def test_conv_and_pool_by_window_loops():
    program(conv2d, pos(9, 10), pos(3, 3), k=2 * 9)
    program(max_pool, rng.standard_normal((9, 8)), 2)


def test_softmax_inplace_and_relu():
    program(softmax_inplace, rng.standard_normal((4, 7)), k=7 + 8)
    program(
        relu_layer,
        rng.standard_normal((4, 5)),
        rng.standard_normal((5, 3)),
        rng.standard_normal(3),
        k=40,
    )


# --- A small 2-D fluid step (cavity flow) ------------------------------------------------------


def build_up_b(b, rho, dt, u, v, dx, dy):
    b[1:-1, 1:-1] = rho * (
        1
        / dt
        * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
        - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
        - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
        - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) ** 2
    )


def pressure_poisson(nit, p, dx, dy, b):
    for _ in range(nit):
        pn = p.copy()
        p[1:-1, 1:-1] = (
            (pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2
        ) / (2 * (dx**2 + dy**2)) - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1]
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0


def cavity_flow(nt, nit, u, v, dt, dx, dy, p, rho, nu):
    b = np.zeros_like(u)
    for _ in range(nt):
        un = u.copy()
        vn = v.copy()
        build_up_b(b, rho, dt, u, v, dx, dy)
        pressure_poisson(nit, p, dx, dy, b)
        u[1:-1, 1:-1] = (
            un[1:-1, 1:-1]
            - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
            - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
            - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
            + nu
            * (
                dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
                + dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])
            )
        )
        v[1:-1, 1:-1] = (
            vn[1:-1, 1:-1]
            - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
            - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
            - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
            + nu
            * (
                dt / dx**2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2])
                + dt / dy**2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])
            )
        )
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0


def test_cavity_flow():
    n = 9
    dx = dy = 2 / (n - 1)
    # differences of nearby values amplify rounding: the bound is relative to
    # each field's largest value, over 2 steps of 3 pressure iterations
    program(
        cavity_flow,
        2,
        3,
        np.zeros((n, n)),
        np.zeros((n, n)),
        0.001,
        dx,
        dy,
        np.zeros((n, n)),
        1.0,
        0.1,
        k=4000,
    )
