"""Functional JAX ports of the programs of bench/programs_bench.py, for jax.jit.

Each port computes what its NumPy program computes, by the same algorithm, written as a JAX
user would: arrays are immutable (`.at[].set` / `.add`), time loops and sequential recurrences
are `lax.fori_loop` / `lax.scan`, and small loops with a static trip count (window offsets,
three classes, the k of a vote) stay Python loops, unrolled at trace time as in the original.
Where the NumPy program's inner loop is only a reduction over independent terms (syrk, syr2k,
trmm, doitgen, covariance, correlation, gramschmidt's inner column loop, histogram_loop,
radial_mean), the port writes it as the matrix product, masked product or scatter-add that
this loop computes; sums may be associated differently, as they are under tinymlir.

A port takes the program's arguments and returns `(result, updated)`: the program's return
value (None where it returns nothing) and a tuple of the new values of the arguments the
program updates in place, in argument order (`writes` in the bench's table). Arguments named
in STATIC are static under jax.jit (trip counts, sizes, bin counts).

jax runs in float64 (jax_enable_x64), as the NumPy programs do.
"""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

PORTS = {}  # name -> (port, static argument positions)


def port(*static, name=None):
    """Registers a port under its name (or the bench's name for it) with the positions of its static arguments; the bench
    calls jax.jit(port, static_argnums=static) afresh at each size, so that each first call
    includes tracing and compiling."""

    def register(fn):
        PORTS[name or fn.__name__] = (fn, static)
        return fn

    return register


# --- Stencils -----------------------------------------------------------------------------


@port(2)
def jacobi_1d(A, B, T):
    def step(_, c):
        A, B = c
        B = B.at[1:-1].set(0.33333 * (A[:-2] + A[1:-1] + A[2:]))
        A = A.at[1:-1].set(0.33333 * (B[:-2] + B[1:-1] + B[2:]))
        return A, B

    return None, lax.fori_loop(0, T, step, (A, B))


@port(2)
def jacobi_2d(A, B, T):
    def sweep(A):
        return 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])

    def step(_, c):
        A, B = c
        B = B.at[1:-1, 1:-1].set(sweep(A))
        A = A.at[1:-1, 1:-1].set(sweep(B))
        return A, B

    return None, lax.fori_loop(0, T, step, (A, B))


@port(2)
def heat_3d(A, B, T):
    def sweep(A):
        c = A[1:-1, 1:-1, 1:-1]
        return (
            0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * c + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * c + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * c + A[1:-1, 1:-1, :-2])
            + c
        )

    def step(_, c):
        A, B = c
        B = B.at[1:-1, 1:-1, 1:-1].set(sweep(A))
        A = A.at[1:-1, 1:-1, 1:-1].set(sweep(B))
        return A, B

    return None, lax.fori_loop(0, T, step, (A, B))


@port(1)
def seidel_2d(A, T):
    n = A.shape[0]

    def row(i, A):
        A = A.at[i, 1:-1].add(
            A[i - 1, :-2]
            + A[i - 1, 1:-1]
            + A[i - 1, 2:]
            + A[i, 2:]
            + A[i + 1, :-2]
            + A[i + 1, 1:-1]
            + A[i + 1, 2:]
        )

        def recur(prev, a):
            new = (a + prev) / 9.0
            return new, new

        _, new = lax.scan(recur, A[i, 0], A[i, 1:-1])
        return A.at[i, 1:-1].set(new)

    def step(_, A):
        return lax.fori_loop(1, n - 1, row, A)

    return None, (lax.fori_loop(0, T, step, A),)


@port(4)
def fdtd_2d(ex, ey, hz, fict, T):
    def step(t, c):
        ex, ey, hz = c
        ey = ey.at[0, :].set(fict[t])
        ey = ey.at[1:, :].add(-0.5 * (hz[1:, :] - hz[:-1, :]))
        ex = ex.at[:, 1:].add(-0.5 * (hz[:, 1:] - hz[:, :-1]))
        hz = hz.at[:-1, :-1].add(-0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1]))
        return ex, ey, hz

    return None, lax.fori_loop(0, T, step, (ex, ey, hz))


# --- Dense linear algebra with loops --------------------------------------------------------


@port()
def lu(A):
    n = A.shape[0]
    idx = jnp.arange(n)

    def row(i, A):
        def lower(j, A):
            m = idx < j
            s = jnp.where(m, A[i], 0.0) @ jnp.where(m, A[:, j], 0.0)
            return A.at[i, j].set((A[i, j] - s) / A[j, j])

        def upper(j, A):
            m = idx < i
            return A.at[i, j].add(-(jnp.where(m, A[i], 0.0) @ jnp.where(m, A[:, j], 0.0)))

        A = lax.fori_loop(0, i, lower, A)
        return lax.fori_loop(i, n, upper, A)

    return None, (lax.fori_loop(0, n, row, A),)


@port()
def cholesky(A):
    n = A.shape[0]
    idx = jnp.arange(n)
    A = A.at[0, 0].set(jnp.sqrt(A[0, 0]))

    def row(i, A):
        def lower(j, A):
            m = idx < j
            s = jnp.where(m, A[i], 0.0) @ jnp.where(m, A[j], 0.0)
            return A.at[i, j].set((A[i, j] - s) / A[j, j])

        A = lax.fori_loop(0, i, lower, A)
        a = jnp.where(idx < i, A[i], 0.0)
        return A.at[i, i].set(jnp.sqrt(A[i, i] - a @ a))

    return None, (lax.fori_loop(1, n, row, A),)


@port()
def trisolv(L, x, b):
    idx = jnp.arange(x.shape[0])

    def row(i, x):
        s = jnp.where(idx < i, L[i], 0.0) @ jnp.where(idx < i, x, 0.0)
        return x.at[i].set((b[i] - s) / L[i, i])

    return None, (lax.fori_loop(0, x.shape[0], row, x),)


@port()
def gemm(alpha, beta, C, A, B):
    return None, (alpha * A @ B + beta * C,)


@port()
def syrk(alpha, beta, C, A):
    lower = jnp.tril(jnp.ones(C.shape, bool))
    return None, (jnp.where(lower, beta * C + alpha * (A @ A.T), C),)


@port()
def syr2k(alpha, beta, C, A, B):
    lower = jnp.tril(jnp.ones(C.shape, bool))
    return None, (jnp.where(lower, beta * C + alpha * (B @ A.T + A @ B.T), C),)


@port()
def trmm(alpha, A, B):
    return None, (alpha * (B + jnp.tril(A, -1).T @ B),)


@port()
def gesummv(alpha, beta, A, B, x):
    return alpha * A @ x + beta * B @ x, ()


@port()
def atax(A, x):
    return (A @ x) @ A, ()


@port()
def bicg(A, p, r):
    return (r @ A, A @ p), ()


@port()
def mvt(x1, x2, y_1, y_2, A):
    return None, (x1 + A @ y_1, x2 + y_2 @ A)


@port()
def two_mm(alpha, beta, A, B, C, D):
    return None, (alpha * A @ B @ C + beta * D,)


@port()
def doitgen(A, C4):
    return None, (jnp.einsum("rqp,ps->rqs", A, C4),)


@port()
def gramschmidt(A):
    m, n = A.shape
    cols = jnp.arange(n)

    def step(k, c):
        A, Q, R = c
        a = A[:, k]
        rkk = jnp.sqrt(a @ a)
        q = a / rkk
        r = jnp.where(cols > k, q @ A, 0.0)
        R = R.at[k].set(jnp.where(cols == k, rkk, r))
        return A - jnp.outer(q, r), Q.at[:, k].set(q), R

    A, Q, R = lax.fori_loop(0, n, step, (A, jnp.zeros_like(A), jnp.zeros((n, n), A.dtype)))
    return (Q, R), (A,)


# --- Graphs and statistics ------------------------------------------------------------------


@port()
def floyd_warshall(path):
    def step(k, path):
        return jnp.minimum(path, path[:, k, None] + path[None, k, :])

    return None, (lax.fori_loop(0, path.shape[0], step, path),)


@port(0)
def covariance(M, float_n, data):
    data = data - jnp.mean(data, axis=0)
    return data.T @ data / (float_n - 1.0), (data,)


@port(0)
def correlation(M, float_n, data):
    mean = jnp.mean(data, axis=0)
    stddev = jnp.std(data, axis=0)
    stddev = jnp.where(stddev <= 0.1, 1.0, stddev)
    data = (data - mean) / (jnp.sqrt(float_n) * stddev)
    corr = data.T @ data
    i = jnp.arange(M)
    return corr.at[i, i].set(1.0), (data,)


@port(1)
def histogram_loop(x, bins):
    return jnp.zeros(bins).at[jnp.floor(x * bins).astype(jnp.int32)].add(1.0), ()


# --- Particles and masks ----------------------------------------------------------------------


def nbody_acc(p, mass, G, softening):
    x, y, z = p[:, 0:1], p[:, 1:2], p[:, 2:3]
    dx, dy, dz = x.T - x, y.T - y, z.T - z
    inv_r3 = dx**2 + dy**2 + dz**2 + softening**2
    inv_r3 = jnp.where(inv_r3 > 0, inv_r3 ** (-1.5), inv_r3)
    return jnp.hstack(
        (G * (dx * inv_r3) @ mass, G * (dy * inv_r3) @ mass, G * (dz * inv_r3) @ mass)
    )


@port(4, name="nbody")
def nbody_step(p, v, mass, dt, steps):
    def step(_, c):
        p, v = c
        v = v + nbody_acc(p, mass, 1.0, 0.1) * dt / 2.0
        p = p + v * dt
        v = v + nbody_acc(p, mass, 1.0, 0.1) * dt / 2.0
        return p, v

    return None, lax.fori_loop(0, steps, step, (p, v))


@port(1)
def radial_mean(data, rings):
    n = data.shape[0]
    yy, xx = jnp.indices((n, n))
    r = jnp.sqrt((xx - n / 2) ** 2 + (yy - n / 2) ** 2)
    ring = jnp.floor(r).astype(jnp.int32).ravel()  # (r >= k) & (r < k + 1) is floor(r) == k
    sums = jax.ops.segment_sum(data.ravel(), ring, num_segments=rings)
    counts = jax.ops.segment_sum(jnp.ones(n * n), ring, num_segments=rings)
    return sums / counts, ()


@port()
def clip_negative(x):
    x = jnp.where(x < 0, 0.0, x)
    x = jnp.where(x > 0.5, x * 2.0, x)
    return x.sum(), (x,)


# --- Layers as loops over a window ------------------------------------------------------------


@port()
def conv2d(x, w):
    H, W = x.shape
    K = w.shape[0]
    out = jnp.zeros((H - K + 1, W - K + 1))
    for i in range(K):
        for j in range(K):
            out = out + w[i, j] * x[i : i + H - K + 1, j : j + W - K + 1]
    return out, ()


@port(1)
def max_pool(x, size):
    H, W = x.shape
    out = jnp.full((H // size, W // size), -jnp.inf)
    for i in range(size):
        for j in range(size):
            out = jnp.maximum(out, x[i : H - H % size : size, j : W - W % size : size])
    return out, ()


@port()
def softmax_inplace(x):
    x = jnp.exp(x - x.max(axis=-1, keepdims=True))
    return None, (x / x.sum(axis=-1, keepdims=True),)


@port()
def relu_layer(x, w, b):
    y = x @ w + b
    return jnp.where(y < 0, 0.0, y), ()


# --- A small 2-D fluid step (cavity flow) ------------------------------------------------------


def build_up_b(rho, dt, u, v, dx, dy):
    b = jnp.zeros_like(u)
    return b.at[1:-1, 1:-1].set(
        rho
        * (
            1
            / dt
            * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
            - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
            - 2
            * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
            - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) ** 2
        )
    )


def pressure_poisson(nit, p, dx, dy, b):
    def step(_, pn):
        p = pn.at[1:-1, 1:-1].set(
            ((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2)
            / (2 * (dx**2 + dy**2))
            - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1]
        )
        p = p.at[:, -1].set(p[:, -2])
        p = p.at[0, :].set(p[1, :])
        p = p.at[:, 0].set(p[:, 1])
        return p.at[-1, :].set(0.0)

    return lax.fori_loop(0, nit, step, p)


@port(0, 1)
def cavity_flow(nt, nit, u, v, dt, dx, dy, p, rho, nu):
    def step(_, c):
        un, vn, p = c
        b = build_up_b(rho, dt, un, vn, dx, dy)
        p = pressure_poisson(nit, p, dx, dy, b)
        u = un.at[1:-1, 1:-1].set(
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
        v = vn.at[1:-1, 1:-1].set(
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
        u = u.at[0, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0).at[-1, :].set(1.0)
        v = v.at[0, :].set(0.0).at[-1, :].set(0.0).at[:, 0].set(0.0).at[:, -1].set(0.0)
        return u, v, p

    return None, lax.fori_loop(0, nt, step, (u, v, p))


# --- Complex numbers, small integers, sorts, scans, least squares -----------------------------


@port()
def dft(x):
    n = x.shape[0]
    k = jnp.arange(n)
    return jnp.exp(-2j * jnp.pi * jnp.outer(k, k) / n) @ x, ()


@port(1)
def mandelbrot(c, steps):
    def step(_, s):
        z, count = s
        z = jnp.where(jnp.abs(z) <= 2, z * z + c, z)
        return z, count + (jnp.abs(z) <= 2).astype(jnp.int32)

    _, count = lax.fori_loop(0, steps, step, (jnp.zeros_like(c), jnp.zeros(c.shape, jnp.int32)))
    return count, ()


@port(1)
def brighten(img, gain):
    out = jnp.clip(img.astype(jnp.int16) * gain // 4, 0, 255).astype(jnp.uint8)
    return (out.sum(), (out > 128).sum()), (out,)


@port(3)
def knn_vote(train, labels, query, k):
    d = ((query[:, None, :] - train[None, :, :]) ** 2).sum(axis=-1)
    votes = labels[jnp.argsort(d, axis=1, stable=True)[:, :k]]
    counts = jnp.stack([(votes == c).sum(axis=1) for c in range(3)], axis=1)
    return jnp.argmax(counts, axis=1), ()


@port(1)
def moving_average(x, w):
    c = jnp.cumsum(x)
    return jnp.concatenate([c[w - 1 : w], c[w:] - c[:-w]]) / w, ()


@port()
def ranks(x):
    order = jnp.argsort(x, stable=True)
    r = jnp.empty_like(order).at[order].set(jnp.arange(x.shape[0]))
    return (r, jnp.searchsorted(jnp.sort(x), x)), ()


@port(2)
def fit(x, y, degree):
    A = jnp.stack([x**k for k in range(degree, -1, -1)], axis=1)
    coef, residuals, rank, s = jnp.linalg.lstsq(A, y)
    return (coef, A @ coef - y, rank), ()


@port()
def histogram_image(img):
    counts, edges = jnp.histogram(img, bins=32)
    clipped, _ = jnp.histogram(jnp.clip(img, -0.5, 0.5), bins=16, range=(-1, 1))
    level = jnp.sum(counts[:16]) / img.size
    return (counts.astype(jnp.int64), edges, clipped, level), ()


@port()
def moving_average_pad(s, k=5):
    p = jnp.pad(s, (k - 1, 0), mode="edge")
    acc = p[0 : s.shape[0]]
    for i in range(1, k):
        acc = acc + p[i : i + s.shape[0]]
    sym = jnp.pad(s, k // 2, mode="reflect")
    centered = sum(sym[i : i + s.shape[0]] for i in range(k)) / k
    return (acc / k, centered), ()


@port()
def covariance_of_data(d):
    centered = d - jnp.average(d, axis=0)
    c = jnp.cov(d, rowvar=False)
    r = jnp.corrcoef(d, rowvar=False)
    spread = jnp.sqrt(jnp.nanvar(jnp.where(d > 2, jnp.nan, d), axis=0))
    return (c, r, (centered.T @ centered) / (d.shape[0] - 1), spread), ()


@port()
def knn_vote_take(p, lab, q):
    k = 3
    diff = q[:, None, :] - p[None, :, :]
    d = jnp.sum(diff * diff, axis=-1)
    pos = jnp.arange(p.shape[0])
    votes = []
    for _ in range(k):
        nearest = jnp.min(jnp.where(d == d.min(axis=1, keepdims=True), pos, p.shape[0]), axis=1)
        votes.append(jnp.take(lab, nearest))
        d = jnp.where(pos == nearest[:, None], jnp.inf, d)
    votes = jnp.stack(votes, axis=1)
    tally = jnp.stack([jnp.sum(votes == c, axis=1) for c in range(3)], axis=1)
    best = jnp.min(jnp.where(tally == tally.max(axis=1, keepdims=True), jnp.arange(3), 3), axis=1)
    return (votes, tally, best, jnp.take(jnp.arange(10, 40, 10), best)), ()
