"""np.linalg under @jit (LAPACK through the core's kernels), against NumPy.

Decompositions are checked by their residuals against the conditioning, as
LAPACK's backward error bounds give them (a small multiple of n eps |A|),
not by NumPy's own factors: two LAPACK builds may order their operations (and
pick eigenvector signs) differently. Eigenvalues and singular values are
compared sorted, within n eps ||A||.
"""

import numpy as np
import pytest

from tinymlir import jit

EPS = {np.float32: np.finfo(np.float32).eps, np.float64: np.finfo(np.float64).eps}


def spd(n, rng, dtype=np.float64, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def norm(a):
    return np.linalg.norm(np.asarray(a, np.float64))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cholesky_solve_inv_det(dtype, rng):
    n = 6
    e = EPS[dtype]
    a = spd(n, rng, dtype)
    b = rng.standard_normal((n, 3)).astype(dtype)
    L = jit(np.linalg.cholesky)(a)
    assert L.dtype == dtype and np.all(np.triu(L, 1) == 0)
    assert norm(L @ L.T - a) <= 8 * n * e * norm(a)  # ||L L^T - A|| <= c n eps ||A||
    U = jit(lambda m: np.linalg.cholesky(m, upper=True))(a)
    np.testing.assert_array_equal(U, L.T)
    cond = np.linalg.cond(a.astype(np.float64))
    for rhs in (b, b[:, 0]):
        x = jit(np.linalg.solve)(a, rhs)
        want = np.linalg.solve(a, rhs)
        assert x.shape == want.shape and x.dtype == want.dtype
        assert norm(a @ x - rhs) <= 8 * n * e * norm(a) * norm(x)  # backward stable
        assert norm(x - want) <= 16 * n * e * cond * norm(want)
    inv = jit(np.linalg.inv)(a)
    assert norm(a @ inv - np.eye(n)) <= 8 * n * e * cond
    det, want = jit(np.linalg.det)(a), np.linalg.det(a)
    assert det.dtype == want.dtype and abs(det - want) <= 8 * n * e * cond * abs(want)
    sign, logdet = jit(lambda m: tuple(np.linalg.slogdet(m)))(a)
    assert sign == 1 and abs(logdet - np.linalg.slogdet(a)[1]) <= 8 * n * e * cond


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_solve_and_inv(dtype, rng):
    # npbench's contour integral solves complex systems. LAPACK's cgesv and
    # zgesv: backward stable, ||A x - b|| <= c n eps ||A|| ||x||.
    n = 5
    e = float(np.finfo(dtype).eps)

    def norm(a):  # Frobenius, of the complex values
        return np.linalg.norm(np.asarray(a, np.complex128))

    a = (rng.standard_normal((2, n, n)) + 1j * rng.standard_normal((2, n, n))).astype(dtype)
    b = (rng.standard_normal((2, n, 3)) + 1j * rng.standard_normal((2, n, 3))).astype(dtype)
    x = jit(np.linalg.solve)(a, b)
    assert x.dtype == np.linalg.solve(a, b).dtype == dtype
    for k in range(2):
        assert norm(a[k] @ x[k] - b[k]) <= 8 * n * e * norm(a[k]) * norm(x[k])
        inv = jit(np.linalg.inv)(a[k])
        cond = np.linalg.cond(a[k].astype(np.complex128))
        assert inv.dtype == dtype and norm(a[k] @ inv - np.eye(n)) <= 8 * n * e * cond
    # NumPy's common type: complex64 with float64 is complex128.
    mixed = jit(np.linalg.solve)(a[0], b[0].real.astype(np.float64))
    assert mixed.dtype == np.linalg.solve(a[0], b[0].real.astype(np.float64)).dtype
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        jit(np.linalg.solve)(np.zeros((3, 3), dtype), np.ones(3, dtype))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_decompositions(dtype, rng):
    # LAPACK's c/z routines (potrf, getrf, heevd, gesdd, geqrf + ungqr, gelsd),
    # checked by residuals in complex norms: ||L L^H - A||, ||A V - V W||,
    # ||U S V^H - A|| and ||Q R - A|| each within c n eps ||A||; eigenvalues and
    # singular values are real, in the real dtype of the matrix, as NumPy's.
    n = 5
    e = float(np.finfo(dtype).eps)
    real = np.float32 if dtype == np.complex64 else np.float64

    def norm(a):
        return np.linalg.norm(np.asarray(a, np.complex128))

    def H(a):
        return np.conj(np.swapaxes(a, -1, -2))

    g = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    a = (g @ H(g) + n * np.eye(n)).astype(dtype)  # Hermitian positive definite
    L = jit(np.linalg.cholesky)(a)
    assert L.dtype == dtype and np.all(np.triu(L, 1) == 0)
    assert norm(L @ H(L) - a) <= 8 * n * e * norm(a)
    U = jit(lambda m: np.linalg.cholesky(m, upper=True))(a)
    np.testing.assert_array_equal(U, H(L))  # A = U^H U
    w, v = jit(np.linalg.eigh)(a)
    assert w.dtype == real and v.dtype == dtype
    assert norm(a @ v - v * w) <= 16 * n * e * norm(a)
    assert norm(H(v) @ v - np.eye(n)) <= 16 * n * e
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), atol=16 * n * e * norm(a))
    w_upper = jit(lambda m: np.linalg.eigvalsh(m, UPLO="U"))(np.triu(a))  # from the upper triangle
    np.testing.assert_allclose(w_upper, w, atol=16 * n * e * norm(a))
    det, want = jit(np.linalg.det)(a), np.linalg.det(a)
    cond = np.linalg.cond(a.astype(np.complex128))
    assert det.dtype == want.dtype and abs(det - want) <= 8 * n * e * cond * abs(want)
    sign, logdet = jit(lambda m: tuple(np.linalg.slogdet(m)))(g.astype(dtype))
    wsign, wlogdet = np.linalg.slogdet(g.astype(dtype))
    assert sign.dtype == wsign.dtype and logdet.dtype == wlogdet.dtype == real
    cond_g = np.linalg.cond(g)
    assert abs(sign - wsign) <= 8 * n * e * cond_g and abs(logdet - wlogdet) <= 8 * n * e * cond_g
    m = (rng.standard_normal((7, 4)) + 1j * rng.standard_normal((7, 4))).astype(dtype)
    for full in (True, False):
        u, s, vh = jit(lambda x: tuple(np.linalg.svd(x, full_matrices=full)))(m)
        ws = np.linalg.svd(m, compute_uv=False)
        assert s.dtype == real and u.shape == np.linalg.svd(m, full_matrices=full)[0].shape
        assert norm(u[:, :4] * s @ vh[:4] - m) <= 16 * 7 * e * norm(m)
        np.testing.assert_allclose(s, ws, atol=16 * 7 * e * norm(m))
    assert jit(lambda x: np.linalg.norm(x, 2))(m) == pytest.approx(ws[0], abs=16 * 7 * e * norm(m))
    q, r = jit(lambda x: tuple(np.linalg.qr(x)))(m)
    assert q.dtype == dtype and np.all(np.tril(r, -1) == 0)
    assert norm(q @ r - m) <= 16 * 7 * e * norm(m)
    y = (rng.standard_normal(7) + 1j * rng.standard_normal(7)).astype(dtype)
    x, res, rank, s = jit(np.linalg.lstsq)(m, y)
    wx, wres, wrank, ws = np.linalg.lstsq(m, y)
    assert x.dtype == wx.dtype and res.dtype == wres.dtype and s.dtype == ws.dtype == real
    assert rank == wrank and res.shape == wres.shape
    cond = ws[0] / ws[-1]
    assert norm(x - wx) <= 64 * 7 * e * cond**2 * norm(wx)
    np.testing.assert_allclose(res, wres, rtol=64 * 7 * e * cond**2)


def test_rank_deficient_lstsq_residuals_raise_only_when_used(rng):
    # Below full rank NumPy's residuals are empty: a shape that depends on the
    # data. The solution, rank and singular values are NumPy's; computing the
    # residuals then raises when the kernel runs, naming the rank.
    a = np.array([[1.0, 2], [2, 4], [3, 6]])
    y = np.array([1.0, 2, 3.5])
    x, rank, s = jit(lambda m, v: (lambda r: (r[0], r[2], r[3]))(np.linalg.lstsq(m, v)))(a, y)
    wx, _, wrank, ws = np.linalg.lstsq(a, y)
    assert rank == wrank == 1
    np.testing.assert_allclose(x, wx, rtol=1e-12)
    with pytest.raises(ValueError, match=r"\[lstsq\] the matrix's rank is 1, below its 2 columns"):
        jit(lambda m, v: np.linalg.lstsq(m, v)[1])(a, y)
    full = a + np.eye(3, 2)  # the same function at full rank: NumPy's residuals
    got = jit(lambda m, v: np.linalg.lstsq(m, v)[1])(full, y)
    np.testing.assert_allclose(got, np.linalg.lstsq(full, y)[1], rtol=1e-10)


def test_batches_and_integer_operands(rng):
    a = spd(4, rng, batch=(3,))
    b = rng.standard_normal((3, 4, 2))
    x = jit(np.linalg.solve)(a, b)
    assert x.shape == (3, 4, 2) and norm(a @ x - b) <= 64 * 4 * EPS[np.float64] * norm(a) * norm(x)
    dets = jit(np.linalg.det)(a)
    np.testing.assert_allclose(dets, np.linalg.det(a), rtol=1e-12)
    ints = np.array([[2, 1], [1, 3]], np.int32)  # integers: in float64, as NumPy's
    got = jit(np.linalg.inv)(ints)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.linalg.inv(ints), rtol=1e-14)


def test_eigh_svd_qr_lstsq_residuals(rng):
    n, e = 5, EPS[np.float64]
    a = spd(n, rng)
    w, v = jit(np.linalg.eigh)(a)
    assert norm(a @ v - v * w) <= 16 * n * e * norm(a)  # A v = v w
    assert norm(v.T @ v - np.eye(n)) <= 16 * n * e
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), atol=16 * n * e * norm(a))
    assert np.all(np.diff(w) >= 0)  # ascending, as NumPy's
    w_upper = jit(lambda m: np.linalg.eigvalsh(m, UPLO="U"))(np.triu(a))  # the upper triangle
    np.testing.assert_allclose(w_upper, w, atol=16 * n * e * norm(a))
    m = rng.standard_normal((7, 4))
    for full in (True, False):
        u, s, vh = jit(lambda x: tuple(np.linalg.svd(x, full_matrices=full)))(m)
        want = np.linalg.svd(m, full_matrices=full)
        assert u.shape == want[0].shape and vh.shape == want[2].shape
        k = min(m.shape)
        assert norm(u[:, :k] * s @ vh[:k] - m) <= 16 * 7 * e * norm(m)
        assert norm(u.T @ u - np.eye(u.shape[1])) <= 16 * 7 * e
        np.testing.assert_allclose(s, want[1], atol=16 * 7 * e * norm(m))
    q, r = jit(lambda x: tuple(np.linalg.qr(x)))(m)
    assert q.shape == (7, 4) and r.shape == (4, 4) and np.all(np.tril(r, -1) == 0)
    assert norm(q @ r - m) <= 16 * 7 * e * norm(m)
    y = rng.standard_normal(7)
    x, res, rank, s = jit(np.linalg.lstsq)(m, y)
    wx, wres, wrank, ws = np.linalg.lstsq(m, y)
    assert rank == wrank and rank.dtype == wrank.dtype and res.shape == wres.shape
    cond = s[0] / s[-1]
    assert norm(x - wx) <= 64 * 7 * e * cond**2 * norm(wx)  # least squares: cond^2
    np.testing.assert_allclose(res, wres, rtol=1e-9)


def test_norms_of_every_order(rng):
    v = rng.standard_normal(9)
    m = rng.standard_normal((4, 5))
    for ord in (None, 1, 2, 3, 0.5, 0, np.inf, -np.inf, -1):
        np.testing.assert_allclose(
            jit(lambda x: np.linalg.norm(x, ord))(v),
            np.linalg.norm(v, ord),
            rtol=64 * EPS[np.float64],
        )
    for ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        np.testing.assert_allclose(
            jit(lambda x: np.linalg.norm(x, ord))(m),
            np.linalg.norm(m, ord),
            rtol=64 * 5 * EPS[np.float64],
        )
    t = rng.standard_normal((2, 3, 4))
    for fn in (
        np.linalg.norm,
        lambda x: np.linalg.norm(x, axis=(0, 2), keepdims=True),
        lambda x: np.linalg.norm(x, 1, axis=(2, 1)),
        lambda x: np.linalg.norm(x, axis=1),
    ):
        want = fn(t)
        got = jit(fn)(t)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=64 * EPS[np.float64])
    a = spd(4, rng)
    for fn in (
        lambda x: np.linalg.matrix_power(x, 5),
        lambda x: np.linalg.matrix_power(x, -2),
        np.linalg.pinv,
        np.linalg.matrix_rank,
        np.linalg.cond,
    ):
        np.testing.assert_allclose(jit(fn)(a), fn(a), rtol=1e-10)


def test_pinv_cutoff_is_numpys():
    # NumPy's default cutoff is 1e-15 max(s); rtol=None is max(M, N) eps
    # (4.4e-16 here): a singular value 2e-16 * max(s) apart from 1 is kept by
    # neither, 6e-16 by the second only. Exact: 1/s of exactly
    # representable diagonal entries, or 0.
    a = np.diag([1.0, 6e-16, 2e-16])
    for fn in (
        np.linalg.pinv,
        lambda x: np.linalg.pinv(x, rtol=None),
        lambda x: np.linalg.pinv(x, rtol=1e-16),
        lambda x: np.linalg.pinv(x, 1e-17),
    ):
        want = fn(a)
        np.testing.assert_allclose(jit(fn)(a), want, rtol=4 * EPS[np.float64], atol=0)
    with pytest.raises(ValueError, match="`rtol` and `rcond` can't be both set"):
        jit(lambda x: np.linalg.pinv(x, 0.1, rtol=0.1))(a)


def test_linalg_errors_are_numpys_when_the_kernel_runs(rng):
    """LinAlgError (NumPy's class and message) for data LAPACK rejects, from
    the kernel; an argument the function would have written stays as it was."""
    a = spd(4, rng)

    def factor_into(m, out):
        out[...] = np.linalg.cholesky(m)

    out = np.zeros((4, 4))
    jit(factor_into)(a, out)
    np.testing.assert_allclose(out, np.linalg.cholesky(a), rtol=1e-12, atol=1e-14)
    before = out.copy()
    with pytest.raises(np.linalg.LinAlgError, match="^Matrix is not positive definite$"):
        jit(factor_into)(-a, out)
    np.testing.assert_array_equal(out, before)
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        jit(np.linalg.inv)(np.ones((3, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        jit(np.linalg.solve)(np.zeros((2, 2)), np.ones(2))
    assert jit(np.linalg.det)(np.ones((3, 3))) == 0.0  # singular: det 0, no error, as NumPy's
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        jit(np.linalg.inv)(np.ones((2, 3)))
    with pytest.raises(TypeError, match="float16 is unsupported in linalg"):
        jit(np.linalg.inv)(np.eye(2, dtype=np.float16))


def test_least_squares_fit_program(rng):
    """A polynomial fit by least squares, then its prediction error."""

    def fit(x, y, degree):
        A = np.stack([x**k for k in range(degree, -1, -1)], axis=1)
        coef, residuals, rank, s = np.linalg.lstsq(A, y)
        return coef, A @ coef - y, rank

    x = np.linspace(-1, 1, 40)
    y = 3 * x**3 - x + 0.5 + 0.01 * rng.standard_normal(40)
    coef, err, rank = jit(fit)(x, y, 3)
    wcoef, werr, wrank = fit(x, y, 3)
    assert rank == wrank == 4
    np.testing.assert_allclose(coef, wcoef, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(err, werr, atol=1e-12)
