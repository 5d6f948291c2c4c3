"""Sizes that depend on the loop index (docs/architecture.md, "Loops", dynamic extents):
A[i, :j], x[i:], C[i, :i + 1] *= beta and np.dot of such slices, each captured as one
loop whose slices have `?` extents. Each program runs under NumPy and under
tinymlir.jit on copies of its arguments (conftest.same).

Tolerances: the programs' dot products sum their k <= n products in another order than
NumPy's BLAS (a vectorized loop), so each differs from NumPy's by at most
2 * gamma_k * sum|a_i b_i| with gamma_k = k * eps / (1 - k * eps). On the diagonally
dominant matrices used here each factor or solution entry has |entry| >= sum|a_i b_i| / 2
down the elimination, and an entry's error is carried into later ones with a growth
factor below 2, so rtol = 8 * n * eps bounds every entry (n the order)."""

import re

import numpy as np
import pytest
from conftest import same

from tinymlir import jit

rng = np.random.default_rng(5)
EPS = np.finfo(np.float64).eps


def reports(capfd, fn, *args):
    capfd.readouterr()
    jit(fn, loop_report=True)(*args)
    return re.findall(r"tinymlir: loop at line (\d+): (.*)", capfd.readouterr().err)


def dominant(n):
    """A symmetric, diagonally dominant (so positive definite) matrix of order n."""
    a = rng.uniform(-1, 1, size=(n, n))
    return a @ a.T / n + n * np.eye(n)


# --- Programs (npbench's kernels, as written there) ----------------------------------


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def lu(A):
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def syrk(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, : i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, : i + 1] += alpha * A[: i + 1, k] * A[i, k]


def trmm(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1 :, i], B[i + 1 :, j])
    B *= alpha


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def suffix_sums(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i:].sum()  # x[n - 1:] has one element; no empty one here
    return out


def prefix_means(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0] + 1):
        out[i - 1] = x[:i].mean()
    return out


N = 12
PROGRAMS = [
    (cholesky, lambda: (dominant(N),), 8 * N * EPS),
    (lu, lambda: (dominant(N),), 8 * N * EPS),
    (
        trisolv,
        lambda: (np.tril(dominant(N)), np.zeros(N), rng.uniform(-1, 1, size=N)),
        8 * N * EPS,
    ),
    # Elementwise products and sums in NumPy's order: exact.
    (syrk, lambda: (1.5, 1.2, rng.normal(size=(N, N)), rng.normal(size=(N, 7))), 0),
    (trmm, lambda: (1.5, rng.normal(size=(N, N)), rng.normal(size=(N, 9))), 8 * N * EPS),
    (durbin, lambda: (rng.uniform(0, 1, size=N) / N,), 8 * N * EPS),
    # Sums of up to n elements, reassociated: gamma_n * sum|x| relative to |sum| that
    # is at least half of sum|x| for these positive x.
    (suffix_sums, lambda: (rng.uniform(1, 2, size=30),), 2 * 30 * EPS),
    (prefix_means, lambda: (rng.uniform(1, 2, size=30),), 2 * 30 * EPS),
]


@pytest.mark.parametrize("program", range(len(PROGRAMS)), ids=[p[0].__name__ for p in PROGRAMS])
def test_slices_sized_by_the_index_are_captured(program, capfd):
    fn, make, rtol = PROGRAMS[program]
    same(fn, *make(), rtol=rtol)
    found = reports(capfd, fn, *make())
    assert found and all(what == "captured" for _, what in found), found


def test_the_kernel_is_one_loop_nest_whatever_n():
    sizes = {}
    for n in (8, 64):
        module = jit(cholesky).compile(dominant(n)).module
        assert module.count("scf.for") <= 6, module
        sizes[n] = len(re.sub(r"\d+", "", module))
    assert sizes[8] == sizes[64]


def test_empty_and_clamped_slices_are_numpys():
    def spans(x, lo, hi):
        s = x[0] * 0
        for i in range(lo, hi):
            s = s + x[i - 3 : i + 100].sum() + x[-i:].sum() * 2 + x[: i - 20].sum() * 3
        return s

    x = rng.uniform(1, 2, size=10)
    # i - 3 < 0 counts from the end, i + 100 is past it, -0: the whole array,
    # i - 20 < -n: empty.
    same(spans, x, 0, 10, rtol=6 * 10 * EPS)


def test_different_extents_that_must_broadcast_unroll(capfd):
    def mixed(x):
        s = x[0] * 0
        for i in range(1, 5):
            s = s + (x[:i] * x[1 : i + 1]).sum()  # two extents: one per bound pair
        return s

    x = rng.uniform(1, 2, size=8)
    same(mixed, x, rtol=2 * 8 * EPS)


def test_a_traced_size_outside_a_loop():
    def head_sum(x, n):
        return x[:n].sum()

    x = rng.uniform(1, 2, size=10)
    for n in (0, 3, 10, 12, -2):
        same(head_sum, x, np.int64(n), rtol=2 * 10 * EPS)


def test_a_result_sized_by_a_traced_value_is_a_clear_error():
    from tinymlir import TracingError

    with pytest.raises(TracingError, match="known only when the kernel runs"):
        jit(lambda x, n: x[:n] * 2)(np.ones(5), np.int64(3))


def test_a_traced_index_read_changed_in_place_is_never_a_lost_write(capfd):
    """x[i] and x[i:j] with traced i, j are read as copies. NumPy's are views: a name
    bound to one and changed in place changes the array. A loop doing that is unrolled
    (its index is then a number, and the read a view); outside loops it is refused."""

    def doubled_rows(A):
        for i in range(A.shape[0]):
            row = A[i]
            row *= 2.0
            head = A[i, : i + 1]
            head += 1.0
        return A

    same(doubled_rows, rng.normal(size=(4, 5)))
    found = reports(capfd, doubled_rows, rng.normal(size=(4, 5)))
    assert [what for _, what in found] == [found[0][1]] and "read as a copy" in found[0][1], found

    from tinymlir import TracingError

    def alias(x, n):
        y = x[:n]
        y += 1.0
        return y.sum()

    with pytest.raises(TracingError, match="read as a copy"):
        jit(alias)(np.ones(5), np.int64(3))
