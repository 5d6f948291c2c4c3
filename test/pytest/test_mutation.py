"""NumPy programs as written: item assignment, views, arguments written back,
arrays made inside, boolean masks, in-place operators and out=.

Every test runs one source under NumPy and under tinymlir.jit on copies of the
same arguments, then compares the results and every argument (values, dtypes,
shapes): exactly where the result is a selection or a copy, otherwise within a
bound stated at the test.
"""

import threading
import warnings

import numpy as np
import pytest
from conftest import same, same_error

import tinymlir
from tinymlir import jit

EPS64 = np.finfo(np.float64).eps


rng = np.random.default_rng(7)


def positive(*shape, dtype=np.float64):
    return (rng.random(shape) + 0.5).astype(dtype)


# --- Item assignment ---------------------------------------------------------------


def test_basic_index_forms_assign_as_numpy():
    def f(a, v):
        a[1] = v[0]  # an int: a row
        a[:, 2] = -1.5  # a column, a Python float
        a[::2, 1::2] = v[:3, 1:4]  # steps
        a[-1, ::-1] = v[3]  # a negative step
        a[None, 0, ...] = 7  # None and Ellipsis
        a[2:4][:, 0] = 9  # through a chain of views
        a[...] += 1  # the whole array
        return a.sum(axis=0)

    same(f, positive(5, 6), positive(4, 6), rtol=6 * EPS64)


def test_assignment_casts_as_setitem_and_broadcasts():
    def f(i, x):
        i[0] = x[0]  # float into int32 truncates, as NumPy's setitem
        i[1:] = x[1:, :1] * 10  # (k, 1) broadcast over the row
        return i

    same(f, np.arange(12, dtype=np.int32).reshape(3, 4), np.linspace(-3.7, 3.7, 12).reshape(3, 4))


def test_value_that_does_not_broadcast_is_numpys_error():
    def f(a):
        a[0] = a[:, :2]

    with pytest.raises(
        ValueError,
        match=r"could not broadcast input array from shape \(3, 2\) "
        r"into shape \(4,\)",
    ):
        jit(f)(np.zeros((3, 4)))


def test_augmented_assignment_and_the_same_kind_rule():
    def f(a, b, c):
        a += b
        a[1:, 2] *= 2
        b[0] -= a[0]
        c += 2
        return a @ b.T

    same(f, positive(3, 4), positive(3, 4), np.arange(4, dtype=np.int32), rtol=16 * EPS64)
    with pytest.raises(
        TypeError,
        match=r"Cannot cast ufunc 'add' output from "
        r"dtype\('float64'\) to dtype\('int32'\) with casting "
        r"rule 'same_kind'",
    ):

        def g(i):
            i += 1.5

        jit(g)(np.arange(3, dtype=np.int32))


def test_int_arrays_scatter_and_repeated_indices_buffer_as_numpy():
    def f(a, v):
        a[[0, 2]] = v[:2]
        a[np.array([1, 1, 3]), 1] += 5.0  # repeated: the last of the buffered values
        a[[-1], :] = 0.25
        return a

    same(f, positive(5, 3), positive(4, 3))
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 5"):
        jit(lambda a: a.__setitem__([0, 9], 1.0))(positive(5, 3))


def test_ufunc_at_accumulates_repeated_indices():
    idx = np.array([0, 1, 1, 4, 1])

    def f(h, w):
        np.add.at(h, idx, w)
        np.maximum.at(h, [0, 0], 3.0)
        return h

    same(f, np.zeros(5), positive(5))


def test_ufunc_at_with_positions_from_the_data_as_numpys():
    # Positions computed while tracing (a histogram by np.add.at, a
    # deposition of weights): each in order, a repeat applying again,
    # negative ones from the end, rows of a 2-D table; NumPy adds in the same
    # order, so the sums are exactly NumPy's.
    def deposit(x, w, n):
        counts = np.zeros(n, dtype=np.int64)
        cell = (x * n).astype(np.int64)
        np.add.at(counts, cell, 1)
        mass = np.zeros((n, 2))
        np.add.at(mass, cell - n, w)
        return counts, mass

    same(deposit, rng.random(50), positive(50, 2), 7)

    def every(a, ids, v):
        np.subtract.at(a, ids, v)
        np.multiply.at(a, ids[:3], 2)
        np.maximum.at(a, ids, v * 3)
        np.minimum.at(a, ids[::2], v[::2])
        return a

    ids = np.array([1, -1, 1, 3, 0])
    for dtype in (np.float64, np.float32, np.float16, np.int32, np.uint8, np.int64):
        v = np.arange(5).astype(dtype)
        same(every, (np.arange(6) * 3).astype(dtype), ids, v)
    # maximum and minimum carry a nan, of the values or of the table
    v = np.array([0.5, np.nan, 2.0, -1.0, 7.0])
    same(every, np.array([0.0, 1.0, 2.0, np.nan, 4.0, 5.0]), ids, v)

    def logical(m, ids):
        np.add.at(m, ids, True)  # or
        np.multiply.at(m, ids[1:], False)  # and
        return m

    same(logical, np.array([False, True, False, False]), np.array([0, 2, 0]))


def test_ufunc_at_mistakes_as_numpys():
    a, ids = np.zeros(5, dtype=np.int64), np.array([1, 2])
    for fn, error, message in (
        (
            lambda a, i: np.add.at(a, i + 8, 1),
            IndexError,
            "index 9 is out of bounds for axis 0 with size 5",
        ),
        (
            lambda a, i: np.subtract.at(a > 0, i, True),
            TypeError,
            "numpy boolean subtract",
        ),
    ):
        with pytest.raises(error, match=message):
            fn(a.copy(), ids)
        with pytest.raises(error, match=message):
            jit(fn)(a.copy(), ids)

    # Values of another dtype: NumPy computes each step in float64 and casts
    # it back (-1 + 0.5 is 0, -1 + trunc(0.5) would be -1); at positions
    # known while tracing, the same steps; at positions from the data, a
    # clear refusal.
    def mixed(a, v):
        np.add.at(a, [0, 1, 1, 0], v)
        np.multiply.at(a, [2, 2], v)
        return a

    same(mixed, np.array([-1, 3, 3]), 0.5)
    same(mixed, np.array([-1.0, 3.0, 3.0], dtype=np.float32), np.float64(0.1))
    with pytest.raises(TypeError, match="NumPy computes each step in float64"):
        jit(lambda a, i: np.add.at(a, i, 0.5))(np.zeros(3, dtype=np.int64), np.array([1]))


def test_traced_int_scalars_index_reads_and_writes():
    def hist(x, bins):
        h = np.zeros(bins, dtype=np.int32)
        for v in x:
            b = np.floor(v * bins).astype(np.int32)
            h[b] += 1
        return h

    same(hist, rng.random(40), 6)

    def pick(a, k):
        i = (k * 2).astype(np.int32)
        return a[i, 1:], a[1, i]

    same(pick, positive(5, 4), np.int32(1))

    # Complex arrays too (npbench's scattering self-energies: G[k, e, idx[a, b]]).
    def update(sigma, g, idx):
        for a in range(idx.shape[0]):
            sigma[a] += g[1, idx[a, 0]] * g[0, idx[a, 1]]
        return sigma

    g = (positive(2, 5) + 1j * positive(2, 5)).astype(np.complex128)
    g[0, 3] = complex(-0.5, float("inf"))
    same(update, np.zeros(3, complex), g, np.array([[1, 3], [4, 0], [2, 2]]), rtol=2 * EPS64)


def test_reads_at_traced_ints_share_their_position_constant():
    # Each read at a traced int compares the positions 0..n-1 with it. One
    # constant of positions per shape serves them all: an unrolled loop of
    # such reads (npbench's scattering self-energies) had made one kernel
    # input per read, thousands, and took 181 s to compile instead of 22 s.
    def f(x, k):
        total = 0.0
        for i in range(40):
            total += x[k[i % 4], i % 3]
        return total

    x, k = positive(6, 3), np.array([5, 0, 2, -1])
    spec = jit(f).compile(x, k)
    signature = next(line for line in spec.module.splitlines() if "func.func @kernel" in line)
    assert signature.count("%arg") <= 4, signature
    same(f, x, k, rtol=40 * EPS64)


def test_traced_int_positions_are_read_and_written_in_place_and_checked():
    # x[k] at a traced int reads or writes that one element (a slice at a
    # traced offset): no pass over the array per access. Negative positions
    # count from the end; positions out of range raise NumPy's IndexError
    # when the kernel runs, and the arguments are left as they were.
    def scatter(h, g, ks):
        for j in range(ks.shape[0]):
            k = ks[j]
            h[k] += g[1, k]  # a row of g at a traced column
            h[2:][k // 2] -= 0.5  # a view: positions of the view
            g[0, k] = h[k] * 2.0  # a static row, a traced column: g's own buffer
        return h, g[::2, 1:][0, ks[0] // 3]  # steps and offsets

    ks = np.array([3, -1, 0, 5, 3, -6], dtype=np.int64)
    same(scatter, positive(8), positive(2, 8), ks)

    def hist(x, bins):
        h = np.zeros(bins)
        for v in x:
            h[np.floor(v * bins).astype(np.int32)] += 1.0
        return h

    x = np.random.default_rng(1).random(60)
    same(hist, x, 1000)
    # One buffer for the counts, updated in place: no array per update.
    assert jit(hist).compile(x, 1000).bufferized.count("memref.alloc") <= 2

    h = positive(8)
    before = h.copy()
    for bad in (8, -9):
        with pytest.raises(
            IndexError, match=f"index {bad} is out of bounds for axis 0 with size 8"
        ):
            jit(scatter)(h, positive(2, 8), np.array([1, bad], dtype=np.int64))
        np.testing.assert_array_equal(h, before)
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 1 with size 6"):
        jit(lambda a, k: a[1, k])(positive(3, 6), np.int32(6))

    # Empty boxes: NumPy's empty result (and its write that changes nothing), with the
    # position still checked.
    def empty_box(a, k):
        a[2:2, k] = 5.0
        return a[1:1, k], a[:, k][3:]

    same(empty_box, positive(3, 6), np.int32(-2))
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 1 with size 6"):
        jit(empty_box)(positive(3, 6), np.int32(6))


def test_setting_shape_reshapes_in_place_as_numpy():
    # mandelbrot2's `Xi.shape = Yi.shape = C.shape = xn * yn`: the array
    # itself becomes a reshaped view of its data, seen by later writes.
    def f(x):
        a = x * 2
        a.shape = (3, 4)
        c = a[0]
        c.shape = 2, -1
        c[1] = -1.0  # a view of a: a changes too
        b = x[:, :2]
        try:
            b.shape = (8,)  # not contiguous: NumPy's AttributeError
        except AttributeError as e:
            assert str(e).startswith("Incompatible shape for in-place modification")
        return a

    same(f, positive(4, 3))
    with pytest.raises(ValueError, match="reshape"):
        jit(lambda x: setattr(x * 1, "shape", (5,)))(positive(4, 3))

    def g(x):
        x.shape = 12

    with pytest.raises(tinymlir.TracingError, match="setting the shape of argument 0"):
        jit(g)(positive(4, 3))


# --- Views ---------------------------------------------------------------------------


def test_returned_views_of_arguments_are_views_of_the_callers_arrays():
    # NumPy returns np.transpose(A) as a view of A (npbench's
    # permute_inplace_3d): made from the caller's array after the call, with
    # no kernel output, and after the function's writes to it.
    def permute(a):
        return np.transpose(a, (2, 1, 0))

    a = positive(2, 3, 4)
    r = jit(permute)(a)
    assert np.shares_memory(r, a) and np.array_equal(r, permute(a))

    def g(a):
        a[0] += 1
        return a.T, a[1:] * 2, a[::-1, 1:]

    mine = positive(3, 4)
    theirs = mine.copy()
    got, want = jit(g)(mine), g(theirs)
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(mine, theirs)
    assert [np.shares_memory(x, mine) for x in got] == [True, False, True]

    # NumPy's reshape of a Fortran-ordered array is a copy, as here.
    f = np.asfortranarray(positive(3, 4))
    assert not np.shares_memory(jit(lambda x: x.reshape(-1))(f), f)


def test_writes_through_views_are_seen_by_the_base_and_other_views():
    def f(a):
        t = a.T
        r = a.reshape(4, 3)
        row = a[1]
        t[0, 1] = 100.0  # a[1, 0]
        r[3] = -1.0  # a[3, :] of a (4, 3) view is the last three elements
        row[2:] = row[:2] * 2  # a[1, 2:]
        s = a[..., None]
        s[0, 0, 0] = 5.0
        flat = a.ravel()
        flat[-1] += 1
        return row.copy(), t, a.flatten()

    same(f, positive(3, 4), rtol=2 * EPS64)

    def g(b):
        t3 = b.transpose(1, 2, 0)  # not its own inverse: the write goes back by the inverse
        t3[0, 1:3, 1] = -1.0
        np.swapaxes(b, 0, 2)[3, 2, 0] = 8.0
        return t3.sum(axis=(0, 1))

    same(g, positive(2, 3, 4), rtol=12 * EPS64)


# Views of a (4, 6) array: contiguous, strided, cut, transposed, flipped.
_VIEWS = {
    "whole": lambda a: a,
    "rows": lambda a: a[::2],
    "columns": lambda a: a[:, ::2],
    "block": lambda a: a[1:3, 2:5],
    "transposed": lambda a: a.T,
    "flipped": lambda a: a[::-1],
    "strided back": lambda a: a[:, ::-3],
    "3-d strided": lambda a: a.reshape(2, 2, 6)[:, :, 1::2],
    "3-d permuted": lambda a: a.reshape(2, 3, 4).transpose(2, 0, 1),
    "F-ordered": lambda a: a.reshape(6, 4, order="F"),
}


def _shapes(n):
    """Shapes of n elements in one, two and three axes (size-1 axes too)."""
    pairs = [(d, n // d) for d in range(1, n + 1) if n % d == 0]
    triples = [(p, q // e, e) for p, q in pairs for e in (2, 3) if q % e == 0 and q > e]
    return [(-1,), (1, n, 1), *pairs, *triples]


@pytest.mark.parametrize("copy", [None, True, False])
@pytest.mark.parametrize("order", ["C", "F", "A"])
@pytest.mark.parametrize("view", list(_VIEWS))
def test_reshape_is_a_view_where_numpys_is(view, order, copy):
    # NumPy's reshape is a view wherever the strides allow one (not only of a
    # contiguous array), and writes through it reach the array. Each reshape
    # is written to; the argument and the results are compared, and whether
    # each result shares the argument's memory.
    shape = _VIEWS[view](np.empty((4, 6))).shape
    ok, refused = [], []
    for s in _shapes(int(np.prod(shape))):
        try:
            _VIEWS[view](np.empty((4, 6))).reshape(s, order=order, copy=copy)
            ok.append(s)
        except ValueError as e:
            refused.append((s, str(e)))

    def f(a):
        v = _VIEWS[view](a)
        out = []
        for k, s in enumerate(ok):
            r = v.reshape(s, order=order, copy=copy)
            r[...] = r * 10 + k
            out.append(r)
        return tuple(out)

    mine, theirs = np.arange(24.0).reshape(4, 6), np.arange(24.0).reshape(4, 6)
    got, want = jit(f)(mine), f(theirs)
    np.testing.assert_array_equal(mine, theirs)
    for s, g, w in zip(ok, got, want):
        np.testing.assert_array_equal(g, w, err_msg=str(s))
        assert np.shares_memory(g, mine) == np.shares_memory(w, theirs), s
    for s, message in refused:
        with pytest.raises(ValueError) as e:
            jit(lambda a: _VIEWS[view](a).reshape(s, order=order, copy=copy))(mine)
        assert str(e.value) == message


@pytest.mark.parametrize("order", ["C", "F", "A", "K", "k"])
@pytest.mark.parametrize("view", list(_VIEWS))
def test_ravel_is_a_view_where_numpys_is_and_flatten_a_copy(view, order):
    def f(a):
        v = _VIEWS[view](a)
        r, c = v.ravel(order), v.flatten(order)
        r[::5] = -1.0
        c[1] = -2.0
        return r, c, np.ravel(v, order)

    mine, theirs = np.arange(24.0).reshape(4, 6), np.arange(24.0).reshape(4, 6)
    got, want = jit(f)(mine), f(theirs)
    np.testing.assert_array_equal(mine, theirs)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert np.shares_memory(g, mine) == np.shares_memory(w, theirs)


def test_reshape_orders_and_shapes_refused_as_numpys():
    a = np.arange(6.0)
    for call in (
        lambda x: x.reshape(2, 3, order="K"),
        lambda x: x.reshape(2, 3, order="X"),
        lambda x: x.ravel(order="CF"),
        lambda x: x.reshape(3, 2)[::2].reshape(-1, copy=False),
        lambda x: np.reshape(x.reshape(2, 3).T, -1, copy=False),
    ):
        same_error(call, a)
    with pytest.raises(ValueError, match="cannot reshape"):
        jit(lambda x: x.reshape(4, -1))(a)


def test_every_inplace_operator_writes_through_as_numpys():
    # a //= b, %=, <<=, >>= (and the others) are NumPy's ufuncs with out=a:
    # they write the argument and its views, with the same-kind rule.
    def f(x, y):
        v = x[1:]
        x //= 3
        v %= 5
        x[::2] <<= 2
        v >>= 1
        x += 1
        x -= y
        x *= 2
        x |= 8
        x &= 0xFF
        x ^= 3
        x **= 1
        z = y * 1.5
        z /= 2
        z @= np.ones((2, 2))[:1, :1].reshape(1, 1)[0, :1].reshape(1)[0] * np.eye(6)
        b = x > 9
        b &= x < 40
        b |= x == 0
        return z, b

    same(f, np.arange(6, 42, 6), np.arange(6))
    for bad in (
        lambda x: x.__ifloordiv__(2.5),
        lambda x: x.__imod__(1.5),
    ):
        same_error(bad, np.arange(4), kind=TypeError)

    def matmul_into(x):
        x @= np.ones((3, 1))

    same_error(matmul_into, np.ones((3, 3)))


def test_unary_plus_copies_and_nan_to_num_writes_in_place_as_numpys():
    def f(x):
        b = +x
        b += 1  # a copy: x unchanged
        np.nan_to_num(x, copy=False, nan=-1.0)
        return b, np.nan_to_num(x * 2, posinf=7.0)

    same(f, np.array([1.0, np.nan, np.inf, -np.inf]))
    with pytest.raises(TypeError):
        jit(lambda m: +m)(np.array([True, False]))


def test_versions_read_after_later_writes_and_copies_written_apart():
    # The builder writes an array's updates in order into one buffer: a
    # version still read after the next write is copied first, and a copy
    # written on its own gets a buffer of its own.
    def f(a):
        old = a.copy()  # the same value as a, now: written apart below
        a[0] = 1.0
        mid = a.copy()
        a[1:3] *= 2.0
        old[2] = -1.0
        mid[:, 0] += old[:, 1]  # reads the old version after a's writes
        a[3] = old[0] + mid[0]
        return old, mid, a[::2].sum(axis=0)

    same(f, positive(4, 3), rtol=4 * EPS64)


def test_reads_that_outlive_the_next_write_see_the_old_values():
    # A slice read in place (no copy) is safe only if every use of it, through
    # the operations fused with it, comes before the next write of its buffer.
    def later_use(a):
        s = a[1:3] * 2.0  # fused into the sum below, after the write
        a[1:3] = 0.0
        return s + a[1:3], np.sum(a[0:2] * 3.0)

    def chained(a, b):
        for _ in range(3):
            b[1:-1] = 0.5 * (a[:-2] + a[2:])  # reads a in place
            a[1:-1] = 0.5 * (b[:-2] + b[2:])  # reads b in place
        t = a[1:4] + 1.0
        a[2] = -1.0  # t is still read below: its slice is a copy
        return t * b[1:4], a[::2]

    def self_update(a):
        a[1:] -= 0.5 * a[:-1]  # reads the box it writes: NumPy reads first
        a[:, 1:] = a[:, :-1]
        a[1:3, 1:3] += a[1:3, 1:3].T  # the box it writes, read transposed
        a[2:5, 1:4] = a[2:5, 1:4].T
        a[:2] *= a[:2]
        return a.sum()

    same(later_use, positive(4, 3), rtol=8 * EPS64)
    same(chained, positive(9), positive(9), rtol=8 * EPS64)
    same(self_update, positive(5, 4), rtol=64 * EPS64)


def test_stencil_reads_its_arrays_in_place():
    # Jacobi's reads of the array it does not write are not copied, and each
    # update computes its value in its box: the bufferized kernel copies each
    # argument once, and each result out, not once per read or update.
    def jacobi(a, b, steps):
        for _ in range(steps):
            b[1:-1, 1:-1] = 0.2 * (
                a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1]
            )
            a[1:-1, 1:-1] = 0.2 * (
                b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1]
            )

    a, b = positive(12, 12), positive(12, 12)
    same(jacobi, a, b, 4, rtol=40 * EPS64)
    spec = jit(jacobi).compile(a, b, 4)
    arguments, results = 2, 2
    assert spec.bufferized.count("memref.copy") <= arguments + results


def test_sweeps_read_columns_in_place_and_copy_what_a_write_overlaps():
    # adi's and deriche's sweeps: column j - 1 is read while column j is
    # written. Each read is a strided view of the buffer (no copy of the
    # column), as the writes up to its last reader miss its box; the only
    # copies left write each new column.
    def sweep(p, q):
        for j in range(1, p.shape[1]):
            p[1:-1, j] = -0.5 / (0.25 * p[1:-1, j - 1] + 2.0)
            q[1:-1, j] = (q[1:-1, j - 1] - p[1:-1, j]) * 0.5
        return p, q

    p, q = positive(12, 40), positive(12, 40)
    ir = jit(sweep).compile(p, q).bufferized
    assert ir.count("memref.copy") <= 2 * 39 + 2, ir.count("memref.copy")
    same(sweep, p, q, rtol=8 * EPS64)

    # A value computed from a window that the next write overlaps, and read
    # after it, keeps the old values (a copy).
    def overlapping(p):
        for j in range(1, p.shape[1] - 1):
            t = p[:, j - 1 : j + 2] * 2.0
            p[:, j] = 0.0
            p[:, j + 1] = t.sum(axis=1)
        return p

    same(overlapping, positive(5, 9), rtol=8 * EPS64)


def test_one_updated_argument_is_written_in_place():
    # A function that only updates one argument: its array is the kernel's
    # output, with no copy of it in the kernel, in any layout of the caller's.
    def smooth(a, steps):
        for _ in range(steps):
            a[1:-1, 1:-1] = 0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
            a[0] += 1.0

    a = positive(10, 12)
    for arg in (a, np.asfortranarray(a), positive(20, 12)[::2]):
        same(smooth, arg, 3, rtol=16 * EPS64)
    # Unrolled, the argument is the kernel's output; captured as a loop (which
    # donates nothing yet), it is copied in and out once per call, never per
    # iteration.
    spec = jit(smooth, unroll_loops=True).compile(a, 3)
    assert spec._compiled.donated == 0
    assert "memref.alloc() : memref<10x12xf64>" not in spec.bufferized
    looped = jit(smooth).compile(a, 3).bufferized
    assert looped.count("scf.for") == 1
    inside = looped[looped.index("scf.for") :]
    assert "memref.alloc() : memref<10x12xf64>" not in inside


def test_elements_of_an_old_version_read_after_a_write():
    # b = a.copy() is a's version before the writes: its elements, read after
    # a[0, 1] was written, are the old ones (one-element reads are loads of
    # the buffer where the program reads them; these come from a copy).
    def f(a):
        b = a.copy()
        a[0, 1] = 5.0
        a[1, 1] = b[0, 1] * 2 + a[0, 1]
        return b[0, 1] + a[0, 1], b

    same(f, positive(2, 3))


def test_several_updated_arguments_are_written_in_place():
    # fdtd's shape: three arrays updated from one another, and a value
    # returned beside them. Each updated argument is its own output of one
    # kernel (no packing), written in the caller's array where it lies.
    def fdtd(ex, ey, hz, steps):
        for t in range(steps):
            ey[0, :] = float(t)
            ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
            ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
            hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
        return hz.sum()

    ex, ey, hz = positive(8, 9), positive(8, 9), positive(8, 9)
    same(fdtd, ex, ey, hz, 3, rtol=64 * EPS64)
    same(fdtd, np.asfortranarray(ex), ey, positive(16, 9)[::2], 3, rtol=64 * EPS64)
    spec = jit(fdtd).compile(ex, ey, hz, 3)
    assert spec.donations == [-1, 0, 1, 2]
    assert [t for t in spec.output_types] == [((), np.float64)] + [((8, 9), np.float64)] * 3
    assert "memref.alloc() : memref<8x9xf64>" not in spec.bufferized
    # The caller's arrays are the kernel's outputs: written where they lie.
    a, b, c = ex.copy(), ey.copy(), hz.copy()
    pointers = [x.ctypes.data for x in (a, b, c)]
    jit(fdtd)(a, b, c, 3)
    assert [x.ctypes.data for x in (a, b, c)] == pointers


def test_arguments_rebound_by_augmented_operators_are_computed_in_place():
    # x -= ...; np.exp(x, out=x); x /= ...: each is a new value of the whole
    # array. The argument is donated, and each elementwise step between the
    # reductions writes into the buffer of the value it reads, where nothing
    # reads that value after it (tinymlir-reuse-dead-operands): the kernel
    # allocates no array of x's shape, and writes the caller's array.
    def softmax_inplace(x):
        x -= x.max(axis=-1, keepdims=True)
        np.exp(x, out=x)
        x /= x.sum(axis=-1, keepdims=True)

    # t is read after u is computed, and x's old value after its new one:
    # neither buffer may be written before those reads.
    def still_read(x):
        t = np.exp(x - x.max(axis=-1, keepdims=True))
        u = t / t.sum(axis=-1, keepdims=True)
        v = np.sqrt(u) * x.min()
        x *= v.sum()
        x += u * t.mean() + v
        return u

    x = rng.standard_normal((10, 12))
    # exp and the division each round once: 2 eps a step, compared at 8 eps.
    same(softmax_inplace, x, rtol=8 * EPS64)
    same(softmax_inplace, np.asfortranarray(x), rtol=8 * EPS64)
    same(softmax_inplace, rng.standard_normal((20, 12))[::2], rtol=8 * EPS64)
    same(still_read, np.abs(x), rtol=64 * EPS64)
    spec = jit(softmax_inplace).compile(x)
    assert spec.donations == [0]
    assert "memref.alloc() {alignment = 64 : i64} : memref<10x12xf64>" not in spec.bufferized
    a = x.copy()
    pointer = a.ctypes.data
    jit(softmax_inplace)(a)
    assert a.ctypes.data == pointer
    np.testing.assert_allclose(a.sum(axis=-1), 1.0, rtol=16 * EPS64)


def test_several_results_that_share_their_values():
    # Results that are versions of one another, computed in place of one
    # another's outputs, with an index_put so that the graph goes through
    # the bufferization analysis; in either order of the results.
    def versions(x, w, idx):
        w[idx] = 1.0
        y = x * 2
        z = y.copy()
        z[1:3] = 0
        return z, y

    def versions_reversed(x, w, idx):
        z, y = versions(x, w, idx)
        return y, z

    def reductions(r, idx):
        r[idx] += 3.0
        m = r < 1.2
        # several reductions of one shape: their zero-filled inits are one
        # value after CSE, each output needs its own
        return r[m].sum(), r[m].mean(), (r * 2).sum(), r.max(), r

    x, w, idx = positive(6), positive(4), np.array([0, 2])
    same(versions, x, w, idx)
    same(versions_reversed, x, w, idx)
    same(reductions, positive(5, 4), np.array([1, 3]), rtol=16 * EPS64)


def test_kernel_that_fails_while_running_leaves_the_updated_argument():
    # solve can fail while the kernel runs: the argument is not updated in
    # place then (it would be half written when the error comes).
    def f(a, m):
        a[0] = 7.0
        a[1:] = np.linalg.solve(m, a[1:])

    a, singular = positive(3, 2), np.zeros((2, 2))
    before = a.copy()
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        jit(f)(a, singular)
    np.testing.assert_array_equal(a, before)
    same(f, a, np.eye(2) * 2.0)


def test_copies_do_not_write_back():
    def f(a):
        c = a.copy()
        c[0] = 0
        d = a.flatten()
        d[1] = 0
        e = np.copy(a)
        e[:, 0] = 0
        g = a[[0, 1]]  # advanced indexing: a copy
        g[0, 0] = 0
        h = a[0, 0]  # a scalar, not a view
        h += 1
        return c, d, e, a, h

    same(f, positive(2, 3))


# --- Arguments written back -----------------------------------------------------------


def test_function_returning_none_updates_arguments_in_their_layout():
    def f(a, b):
        a[0, :] = b[:, 0]
        b *= 2

    a = np.asfortranarray(positive(3, 3))
    b = positive(6, 6)[::2, ::2]  # a strided view
    a0, b0 = a.copy(), b.copy()
    f(a0, b0)
    assert jit(f)(a, b) is None
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)
    assert a.flags.f_contiguous


def test_returned_argument_is_the_callers_array():
    def f(a):
        a[0] = 1
        return a

    a = positive(3)
    assert jit(f)(a) is a and a[0] == 1


def test_same_array_twice_is_one_buffer():
    def f(a, b):
        a[0] = 5
        return b[0] + 1  # reads the write, as NumPy's b is a

    x = positive(4)
    same(lambda x: f(x, x), x)
    y = positive(4)
    assert jit(f)(y, y) == 6.0 and y[0] == 5


def test_read_only_argument_is_refused_before_running():
    def f(a, b):
        b[0] = 1
        a[0] = 1

    a, b = positive(3), positive(3)
    a.flags.writeable = False
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        jit(f)(a, b)
    assert b[0] != 1  # untouched: nothing ran


def test_arguments_untouched_when_tracing_fails_partway():
    def f(a):
        a[0] = 1
        if a[1] > 0:  # data-dependent: refused
            a[2] = 2

    a = positive(3)
    before = a.copy()
    with pytest.raises(TypeError, match="truth value"):
        jit(f)(a)
    np.testing.assert_array_equal(a, before)


# --- Arrays made inside ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int32, np.complex64, bool])
def test_array_of_nested_lists_with_traced_values_as_numpys(dtype):
    # np.array of lists holding traced values: NumPy's shape, its promoted
    # dtype (Python's numbers as int64, float64 and complex128 arrays, not weak
    # scalars) or the dtype asked for, and NumPy's error for ragged lists.
    def f(x):
        s, row = x[0, 0], x[1]
        return (
            np.array([s, 1.5]),
            np.array([s, 3]),
            np.array([s, True]),
            np.array([[s, 0, 1], row]),
            np.array((row, [2, 5, 7], x[0])),
            np.array([[row], [x[0]]], dtype=np.float32),
            np.array([s, 2.5], np.int16),
            np.array([s, 1j]),
            np.asarray([[s], [s * 2]]),
        )

    same(f, (rng.random((2, 3)) * 10).astype(dtype))


def test_array_of_ragged_lists_is_numpys_error():
    for make in (
        lambda x: np.array([x[0], 1.0]),
        lambda x: np.array([x[0], x[0, :2]]),
        lambda x: np.array([[x[0, 0], 2], [x[0, 0]]]),
        lambda x: np.array([x, [[1, 2, 3], [4, 5, 6, 7]]]),
        lambda x: np.array([[1, 2, 3], [x[0], x[1]]]),
    ):
        same_error(make, np.ones((2, 3)))


def test_full_takes_numpys_default_dtype_and_cast():
    # np.full's dtype is its fill value's (a Python number's NumPy default),
    # the value is cast as NumPy's copyto(casting="unsafe"): wrapped from a
    # NumPy integer, but a Python integer out of range is NumPy's error.
    def f(x):
        return (
            np.full(3, 5),
            np.full((2, 2), 2.5),
            np.full(2, True),
            np.full(2, 1j),
            np.full(3, np.float32(1.5)),
            np.full((2, 3), [1, 2, 3], dtype=np.int8),
            np.full(3, np.int64(300), dtype=np.int8),
            np.full(3, 1e300, dtype=np.float32),
            np.full(2, x[0]),
            np.full_like(x, 7),
            np.full_like(x, -1.5, dtype=np.int32),
            np.zeros((0, 2), np.int16),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's overflow to inf
        same(f, np.arange(3, dtype=np.uint8))
    for make in (
        lambda x: np.full(3, 300, dtype=np.int8),
        lambda x: np.full(3, -1, dtype=np.uint8),
        lambda x: np.full_like(x, 256),
        lambda x: np.full((2, -1), 0.0),
        lambda x: np.zeros((-2,)),
        lambda x: np.full((2,), [1, 2, 3]),
    ):
        same_error(make, np.arange(3, dtype=np.uint8), exact=False)  # the core's "[cast] "


def test_zeros_ones_empty_with_dtype_none_are_float64_as_numpys():
    def f(x):
        return (
            np.zeros(3, None),
            np.ones(2, None),
        )

    same(f, np.ones(1, np.int32))
    for make in (lambda x: np.ndarray((2,), None), lambda x: np.empty((2,), dtype=None)):
        assert jit(lambda x: make(x) + x)(np.ones(1, np.int32)).dtype == np.float64  # values: any


def test_creation_functions_make_traced_arrays():
    def f(x):
        z = np.zeros((2, 3))
        z[0] = x
        e = np.empty(3)  # zeros: deterministic (NumPy's would be garbage: overwritten)
        e[:] = x * 2
        o = np.ones_like(x)
        o[1] = 0
        full = np.full((2, 2), 3.5)
        full[0, 0] += x[0]
        eye = np.eye(3)
        eye[1] = x
        ident = np.identity(2)
        lin = np.linspace(0.0, 1.0, 3)
        lin[0] = x[2]
        arr = np.array([x[0], 2.0, x[1]])
        like = np.empty_like(x)
        like[...] = 1
        return z, e, o, full, eye, ident, lin, arr, like, np.zeros_like(z)

    same(f, positive(3))


def test_ndarray_constructor_and_isinstance_while_tracing():
    def f(x):
        out = np.ndarray((2, 3), np.float64)  # zeros while traced (NumPy's: garbage, overwritten)
        out[:] = x
        assert isinstance(np.ones(2).__array__(), np.ndarray)
        assert not isinstance(np.ones(2).__array__(), np.ma.MaskedArray)
        out[1] *= 2
        return out

    same(f, positive(3))
    assert np.ndarray is tinymlir._creation._NDARRAY  # NumPy's own again after the trace


def test_loops_over_arange_and_from_numpy_import():
    from numpy import zeros

    def f(x):
        out = zeros(x.shape)
        for i in np.arange(x.shape[0]):
            out[i] = x[i] * i
        return out

    same(f, positive(4))


def test_other_threads_keep_numpys_functions_while_tracing():
    seen = []
    started, release = threading.Event(), threading.Event()

    def f(x):
        started.set()
        release.wait(5)
        return np.zeros(3) + x

    def other():
        started.wait(5)
        seen.append(type(np.zeros(2)))
        release.set()

    t = threading.Thread(target=other)
    t.start()
    jit(f)(positive(3))
    t.join()
    assert seen == [np.ndarray]
    assert np.zeros is tinymlir._creation._ORIGINALS["zeros"]  # removed after the trace


def test_copyto_where_and_putmask_as_numpys():
    # copyto's where broadcasts; putmask repeats its values in order over
    # the array's elements (np.resize), and does nothing with none.
    def f(a, b, row, w):
        np.copyto(a, row, where=w)
        np.copyto(b, 3, where=b > 1.0)
        np.putmask(a, a > 1.0, [-1.0, -2.0, -3.0])
        np.putmask(b, b < 1.0, np.array([], dtype=np.float64))
        return a, b

    same(f, positive(4, 5), positive(4, 5), positive(5), np.array([True, False] * 2 + [True]))
    with pytest.raises(TypeError, match=r"Cannot cast array data from dtype\('float64'\)"):
        jit(lambda a, b: np.copyto(a, b, casting="safe"))(np.zeros(3, np.float32), np.ones(3))
    with pytest.raises(ValueError, match="mask and data must be the same size"):
        jit(lambda a: np.putmask(a, np.ones(4, dtype=bool), 1.0))(np.zeros(3))


def test_asarray_is_the_array_and_array_a_copy_as_numpys():
    # np.asarray (and np.array with copy=False or None) of a traced array in
    # its own dtype is that array: writes through it reach the caller's.
    # np.array copies; a new dtype is a copy either way.
    def f(a):
        np.asarray(a)[0] = 100.0
        np.asarray(a, dtype=a.dtype)[1] = 200.0
        np.array(a)[2] = -1.0
        np.array(a, copy=False)[3] = 7.0
        np.asarray(a, dtype=np.float32)[4] = 9.0
        np.array(a, copy=None)[5] = 3.0
        np.asanyarray(a)[6] = 4.0

    same(f, positive(8))
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        jit(lambda a: np.array(a, dtype=np.float32, copy=False))(positive(3))


@pytest.mark.parametrize("view", ["whole", "columns", "transposed", "F-ordered"])
def test_array_orders_copies_and_ndmin_as_numpys(view):
    # np.array, np.asarray and np.ascontiguousarray of a view: the view itself
    # where its elements are in the order asked (writes reach the argument),
    # else a copy (an F-ordered one for 'F', and for 'K' of an F-ordered
    # array); ndmin prepends size-1 axes to a view.
    def f(a):
        v = _VIEWS[view](a)
        out = []
        for k, make in enumerate(
            (
                lambda: np.asarray(v, order="C"),
                lambda: np.asarray(v, order="F"),
                lambda: np.asarray(v, None, "A"),
                lambda: np.array(v, order="K"),
                lambda: np.array(v, order="F", ndmin=3),
                lambda: np.array(v, copy=None, ndmin=4),
                lambda: np.ascontiguousarray(v),
                lambda: np.ascontiguousarray(v[0, 0]),
            )
        ):
            r = make()
            r[...] = r * 2 + k
            flat = r.reshape(-1)  # a view or a copy as NumPy's, by r's layout
            flat[0] = -k
            out += [r, flat]
        return tuple(out)

    mine, theirs = np.arange(24.0).reshape(4, 6), np.arange(24.0).reshape(4, 6)
    got, want = jit(f)(mine), f(theirs)
    np.testing.assert_array_equal(mine, theirs)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        jit(lambda a: np.array(a.T, order="C", copy=False))(mine)


def test_place_puts_its_values_in_order_as_numpys():
    # The k-th selected element takes vals[k % len(vals)], over the array's
    # elements in C order: the mask only needs the array's size. Values are
    # cast to the array's dtype (7.9 into an int array is 7).
    def f(a, i, vals):
        np.place(a, a > 0.2, vals)
        np.place(i, (i % 3 == 0).reshape(3, 4), [7.9, -2])
        b = np.zeros(5)
        np.place(b, np.array([0, 1, 0, 1, 1], bool), 4.5)
        np.place(b, b > 9, [])  # selects nothing: no values needed
        return a, i, b

    same(f, positive(4, 5), np.arange(12).reshape(4, 3), np.array([10.0, 20.0, 30.0]))
    with pytest.raises(ValueError, match="Cannot insert from an empty array"):
        jit(lambda a: np.place(a, np.array([True, False, False]), []))(np.zeros(3))
    with pytest.raises(ValueError, match="Cannot insert from an empty array"):  # when it runs
        jit(lambda a: np.place(a, a > 0.5, []))(np.array([0.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match="mask and data must be the same size"):
        jit(lambda a: np.place(a, np.ones(4, dtype=bool), [1.0]))(np.zeros(3))


def test_fill_diagonal_as_numpys():
    # NumPy's a.flat[:end:step] = val: a tall matrix with and without wrap,
    # a wide one, a cube, values repeated in order along the diagonal.
    def f(tall, wide, cube, v):
        t2 = tall.copy()
        np.fill_diagonal(tall, v)
        np.fill_diagonal(wide, [7.0, 8.0])
        np.fill_diagonal(cube, 5)
        np.fill_diagonal(t2, v[:2], wrap=True)
        return tall, wide, cube, t2

    same(f, positive(7, 3), positive(3, 5), positive(3, 3, 3), positive(3))
    with pytest.raises(ValueError, match="array must be at least 2-d"):
        jit(lambda a: np.fill_diagonal(a, 1.0))(np.zeros(3))


# --- Masks -----------------------------------------------------------------------------


def test_masked_writes_and_reads_of_the_same_mask():
    def f(r, x):
        r[r > 1.0] = r[r > 1.0] ** (-1.5)
        x[x < 0.8] -= 1
        x[x > 1.2] = 0
        m = r < 0.9
        return r[m].sum(), r[m].mean(), r[m].max(), r[m].min()

    got = same(f, positive(6, 5), positive(6, 5), rtol=32 * EPS64)
    assert isinstance(got[0], np.float64)
    # NumPy's count is an int64 (a Python int without an axis); tinymlir's an int32 until int64
    m = positive(6, 5) > 1
    assert jit(np.count_nonzero)(m) == np.count_nonzero(m)


def test_masked_reductions_take_numpys_dtypes():
    # x[mask].sum() and the others in every dtype: integers sum in int64,
    # their mean in float64, float16's mean in float32 then float16, bools
    # count; the extremes of integers start from their own range.
    def f(x, m):
        return (
            x[m].sum(),
            x[m].prod(),
            x[m].max(),
            x[m].min(),
            x[m].any(),
            x[m].all(),
            x[m].mean(),
            x[m].sum(dtype=np.float32),
            x[m].mean(dtype=np.float64),
        )

    m = np.array([[True, False, True], [False, True, True]])
    for dtype in (np.int32, np.int64, np.uint8, np.int8, np.float16, np.float32, np.bool_):
        x = np.array([[3, 7, 1], [9, 2, 2]]).astype(dtype)
        if dtype == np.int8:
            x = -x  # extremes below zero: min of nothing selected is not 0
        same(f, x, m, rtol=8 * float(np.finfo(np.float16).eps))
    # Rows selected by a mask of the leading axis (x[mask] is (k, 3)).
    rows = np.array([True, False, True, True])
    same(lambda x, r: (x[r].sum(), x[r].max(), x[r].mean()), positive(4, 3), rows, rtol=8 * EPS64)


def test_masked_reductions_of_nothing_as_numpys():
    # Nothing selected: sum 0, prod 1, any False, all True, mean nan (NumPy
    # warns), and max and min NumPy's ValueError when the kernel runs.
    none = np.zeros(5, dtype=bool)
    x = positive(5)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(lambda a, m: (a[m].sum(), a[m].prod(), a[m].any(), a[m].all(), a[m].mean()), x, none)
    for name in ("max", "min"):
        f = lambda a, m: getattr(a[m], name)()  # noqa: B023
        op = {"max": "maximum", "min": "minimum"}[name]
        message = f"zero-size array to reduction operation {op} which has no identity"
        with pytest.raises(ValueError, match=message):
            f(x, none)
        with pytest.raises(ValueError, match=message):
            jit(f)(x, none)
        assert jit(f)(x, none | (x == x.max())) == f(x, x == x.max())


def test_masked_read_used_with_its_shape_is_refused():
    with pytest.raises(TypeError, match="boolean-mask read .*cannot be traced"):
        jit(lambda x: x[x > 1].reshape(-1))(positive(4))


def _masked_reads(x, rows, cols, cube, m3):
    """Reads through masks as real programs use them: rows of a mask over the
    leading axis (k-means' centroids), columns, masks among other items, and
    reductions that keep the count (a read again) or drop it."""
    mu = x.mean(axis=0)
    centroids = np.zeros((2, x.shape[1]))
    for j in range(2):
        members = rows == (j == 0)
        centroids[j] = x[members].mean(axis=0)
    return (
        centroids,
        ((x[rows] - mu) ** 2).sum(axis=0),  # an operand of the read's other axes
        (x[rows] * mu[None, :]).max(axis=0),  # a leading size-1 axis facing the count
        x[rows].sum(axis=1).max(),  # a read again, then reduced
        x[rows].sum(axis=0, keepdims=True),
        x[rows].min(axis=(0, 1), keepdims=True),
        np.count_nonzero(x[rows] > 1.0, axis=0),
        np.count_nonzero(x[rows] > 1.0),
        x[rows].size,
        x[rows].ndim,
        x[:, cols].sum(axis=1),  # the count's axis second
        x[:, cols].sum(axis=0).max(),  # an axis before the count's, then the count's
        x[rows, 1:].prod(axis=0),  # a slice after the mask
        x[rows, 0].sum(),  # an int after it
        cube[m3, :, 1].sum(axis=0),  # int apart from the mask: the count first
        cube[0, :, m3].sum(axis=0),  # the count first as well (NumPy's rule)
        cube[:, m3, 0].sum(axis=1),  # int next to the mask: the count in place
        (cube[:, cube[0] > 1.0] * cube[:, :1, 0]).sum(axis=1),  # a 2-D mask, an operand's
        # axis before the count's
        np.divmod(x[rows], 0.25)[1].sum(),
        np.add(x[rows], 1, dtype=np.float32).sum(),
        np.nanmax(x[rows], axis=0),
        np.nansum(x[rows].astype(np.float32)),
        x[rows].astype(np.int64).sum(axis=0),
    )


def test_masked_reads_of_rows_columns_and_axes_as_numpys():
    # Every result is a sum (or product, mean) of positive numbers: within
    # (n+1)*eps of its value, n <= 12 terms (float32's sum: its own eps).
    x, cube = positive(12, 3), positive(4, 4, 4)
    rows = x[:, 0] > 1.0
    cols = np.array([True, False, True])
    m3 = np.array([True, False, True, True])
    got, want = jit(_masked_reads)(x, rows, cols, cube, m3), _masked_reads(x, rows, cols, cube, m3)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        assert np.asarray(g).dtype == w.dtype and np.shape(g) == w.shape, (k, g, w)
        eps = np.finfo(w.dtype).eps if w.dtype.kind == "f" else 0
        np.testing.assert_allclose(g, w, rtol=13 * eps, atol=0, err_msg=str(k))


def test_masked_variance_nan_functions_and_where_as_numpys():
    # var and std of x[mask] (ddof too), over all and over the count's axis.
    # The variance's error is within (n+4)*eps*mean((|x| + |mean|)**2).
    x = positive(10, 3)
    x[2, 1] = np.nan
    m = np.array([True, False, True, True, False, True, True, False, True, True])

    def f(x, m):
        clean = np.nan_to_num(x)
        return (
            clean[m].var(),
            clean[m].std(ddof=1),
            clean[m].var(axis=0, ddof=1),
            np.nanmean(x[m], axis=0),
            np.nanvar(x[m]),
            np.nanmin(x[m]),
            clean[m].sum(axis=0, where=np.array([True, False, True])),
            clean[m].max(axis=0, initial=5.0),
        )

    got, want = jit(f)(x, m), f(x, m)
    scale = 4 * np.nanmax(np.abs(x)) ** 2
    for k, (g, w) in enumerate(zip(got, want)):
        assert np.asarray(g).dtype == np.asarray(w).dtype and np.shape(g) == np.shape(w), k
        np.testing.assert_allclose(g, w, rtol=0, atol=(10 + 4) * EPS64 * scale, err_msg=str(k))


def test_masked_writes_broadcast_as_numpys():
    # x[mask] = an array of the read's other axes, in place, and through a
    # column mask; a concrete mask is NumPy's nonzero() (its count known).
    # Small integers in 8 rows: every mean and difference is exact.
    def f(x, rows, y):
        mu = x.mean(axis=0)
        x[rows] = x[rows] - mu
        x[~rows] += mu
        y[:, y.sum(axis=0) > 6] *= -1
        y[np.array([True, False, True, False])] = np.arange(3.0)
        return x[np.array([False, True] * 4)], y

    x, y = rng.integers(0, 8, (8, 3)).astype(np.float64), positive(4, 3) * 3
    same(f, x, x[:, 1] > 3, y)


def test_masked_read_errors_as_numpys_or_named():
    x = positive(6, 3)
    # NumPy's IndexError for a mask of the wrong shape, traced or concrete.
    for mask in (lambda a: a[:, 0][:5] > 1, lambda a: np.ones(4, bool)):
        same_error(lambda a: a[mask(a)].sum(), x)  # noqa: B023
    # Whether these broadcast depends on the count: refused by name.
    with pytest.raises(tinymlir.TracingError, match=r"shape \(6,\) with a boolean-mask read"):
        jit(lambda a: (a[:, 0][a[:, 0] > 1] + a[:, 1]).sum())(x)
    with pytest.raises(tinymlir.TracingError, match="different masks"):
        jit(lambda a: (a[a > 1] + a[a < 1]).sum())(x)
    with pytest.raises(tinymlir.TracingError, match=r"boolean-mask read of shape \(\?, 3\)"):
        jit(lambda a: a.__setitem__(a[:, 0] > 1, np.ones((6, 3))))(x)
    with pytest.raises(tinymlir.TracingError, match=r"\.argmax of a boolean-mask read"):
        jit(lambda a: a[a > 1].argmax())(x)


# --- Zero-size arrays -------------------------------------------------------------------


def test_empty_slices_products_and_reductions_follow_numpy():
    def f(a, x):
        s = 0.0
        for i in range(3):
            s = s + a[i, :i] @ x[:i] + np.dot(a[:i, i], a[:i, 0])  # i = 0: empty, 0
            a[i, :i] = 1.0  # i = 0: writes nothing
        return (
            s,
            a[:, 1:1],
            a[2:2].sum(axis=0),
            a[:0].prod(axis=0),
            (a[:0] > 0).any(),
            (a[:0] > 0).all(axis=0),
        )

    same(f, positive(3, 3), positive(3), rtol=4 * EPS64)
    # zero-size arguments and arrays made inside
    same(
        lambda e, x: (e * 2, e.sum(axis=1), np.zeros((0, 3)) + x, e.T @ e),
        np.zeros((4, 0)),
        positive(3),
    )
    with pytest.raises(
        ValueError, match="zero-size array to reduction operation maximum which has no identity"
    ):
        jit(lambda a: a[:, :0].max(axis=1))(positive(3, 3))


# --- out= and the in-place functions -----------------------------------------------------


def test_out_arguments_and_inplace_functions():
    def f(a, b, s):
        np.add(a, b, out=a)
        np.sum(b, axis=0, out=s)
        np.multiply(a, 2, out=b)
        c = np.zeros_like(a)
        np.copyto(c, a)
        np.putmask(c, c > 2, 0.0)
        d = np.zeros((3, 3))
        np.fill_diagonal(d, 4.0)
        d.fill(d[0, 0] + 1) if False else None
        e = np.ones(3)
        e.fill(7)
        return c, d, e

    same(f, positive(3, 3), positive(3, 3), np.zeros(3), rtol=4 * EPS64)


def test_ufunc_out_casting_and_where_as_numpys():
    # out= takes NumPy's casting= rule, and where= writes only where it holds
    # (np.divide(a, b, out=zeros, where=b != 0), the usual guarded division).
    # Every value is one correctly rounded operation: exact.
    def f(a, b, n):
        c = np.divide(a, b, out=np.zeros_like(a), where=b != 0)
        np.add(a, b, out=n, casting="unsafe")
        h = np.ones((2, 3), np.float32)
        np.multiply(a, 2, out=h, where=a > 2)
        np.subtract(a, 1, out=a, where=np.array([True, False, True]))
        e = np.exp(b, where=b > 0) * (b > 0)  # where= alone: the rest is NumPy's garbage
        return c, h, e

    a, b = np.arange(6.0).reshape(2, 3), np.array([1.5, 0.0, -2.0])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # NumPy's: where= without out=
        same(f, a, b, np.zeros((2, 3), np.int32))
    for casting in ("no", "equiv", "safe"):  # float64 into float32
        g = lambda x: np.add(x, x, out=np.zeros(3, np.float32), casting=casting)  # noqa: B023
        same_error(g, np.ones(3), kind=TypeError)
    same_error(lambda x: np.add(x, x, out=x, casting="bad"), np.ones(3))
    same_error(lambda x: np.add(x, x, out=np.zeros(3, np.int64)), np.ones(3), kind=TypeError)


def test_like_triangles_sizes_and_clip_bounds_as_numpys():
    # The *_like defaults (a Python number or list as np.asarray makes it),
    # triu/tril of 1-D input (NumPy's (n, n)), np.size over axes, clip's
    # bounds under either name, and np.asarray's dtypes for Python numbers
    # given to kron, convolve and meshgrid. All exact.
    def f(x):
        return (
            np.zeros_like(3),
            np.full_like([1.5, 2.0], 7),
            np.ones_like(x, shape=(2, 2)),
            np.empty_like(x, dtype=np.int8).shape,
            np.triu(x, 1),
            np.tril(x[:3], -1),
            np.size(np.ones((2, 3, 4)), axis=(0, 2)),
            np.size(x, -1),
            np.clip(x, min=0.75),
            np.clip(x, max=1.0),
            np.kron(x, 2),
            np.convolve(x, 2),
            np.meshgrid(x[:2], 3)[1],
            x.reshape(2, 2).mT,
        )

    same(f, positive(4, dtype=np.float32))
    same_error(lambda x: x.mT, positive(3))
    same_error(lambda x: np.clip(x, 0, 1, min=0), positive(3))
    same_error(lambda x: np.clip(x, 0, max=1), positive(3))
    for scalar_or_array in (lambda x: x.sum(), lambda x: np.zeros(())):
        same_error(lambda x: len(scalar_or_array(x)), positive(3))  # noqa: B023
        same_error(lambda x: iter(scalar_or_array(x)), positive(3))  # noqa: B023
    same_error(lambda x: x.fill(np.ones(1)), positive(3))
    same_error(lambda x: np.add.at(x, [0]), positive(3))
    with pytest.raises(tinymlir.TracingError, match="traces ufunc.at for add"):
        jit(lambda x: np.negative.at(x, [0]))(positive(3))


def test_rank0_results_are_scalars_or_arrays_as_numpys():
    # NumPy's ufuncs, reductions and int indexing give scalars; its creation
    # functions, np.where, np.copy, views of arrays and their copies 0-d arrays.
    def f(x):
        z = np.zeros(())
        z += x[0]
        return (
            z,  # written in place: still the array
            z + 1,
            z.copy(),
            z.T,
            z.reshape(()),
            z.astype(np.int32),
            np.asarray(x.sum()),
            np.array(x[1]),
            np.copy(x.max()),
            np.full((), 2.5),
            np.ones_like(x[0]),
            np.where(x[0] > 1, x[0], 0.0),
            np.squeeze(x[:1]),
            x[:1].reshape(()),
            x.sum(),
            x[2],
            x.sum().copy(),
            np.sqrt(z),
            x[1][...],  # '...' makes a 0-d array, () a scalar
            x[:1].reshape(())[()],
            np.cov(x),  # NumPy's squeezed matrix
            np.allclose(x, x),  # Python's bool and int
            np.array_equal(x, x[::-1]),
            np.count_nonzero(x > 1),
            x[x > 1].size,
        )

    same(f, positive(4), rtol=4 * EPS64)


def test_arguments_keep_their_layout_for_reshapes_as_numpys():
    # An argument in F order, strided or reversed is reshaped, raveled and made
    # contiguous as NumPy's would be: a view where its strides allow one (a
    # write reaches the caller's array), else a copy (it does not).
    def f(a):
        b = a.reshape(-1)
        b[0] = 100.0
        c = a.T.reshape(-1)
        c[1] = 200.0
        d = np.ascontiguousarray(a)
        d[0, -1] = -1.0
        r = a.ravel(order="K")
        r[2] = 300.0
        return b.sum() + c.sum() + d.sum() + r.sum(), a.T.reshape(-1), a.reshape(-1)

    views = {
        "F": np.asfortranarray,
        "strided": lambda x: x[:, ::2],
        "reversed": lambda x: x[::-1],
        "transposed": lambda x: x.T,
        "columns": lambda x: x[:, 1:3],
    }
    for name, view in views.items():
        bases = [np.arange(24.0).reshape(4, 6) for _ in range(2)]
        args = [view(b) for b in bases]
        if name == "F":  # its own buffer: compare the arguments themselves
            bases = args
        want, got = f(args[0]), jit(f)(args[1])
        np.testing.assert_array_equal(bases[1], bases[0], err_msg=name)
        assert got[0] == want[0], name  # sums of integers: exact
        for k in (1, 2):
            np.testing.assert_array_equal(got[k], want[k], err_msg=name)
            assert np.shares_memory(got[k], args[1]) == np.shares_memory(want[k], args[0]), (
                name,
                k,
            )


def test_constant_int_arrays_with_slices_and_new_axes_as_numpys():
    # NumPy's result is the int arrays applied to the view the slices and new
    # axes make; writes go through that view. All exact.
    def f(x):
        reads = (
            x[[0, 1], 1:3],
            x[1:3, [0, 2]],
            x[[0, 2], None],
            x[::-1, [0, 2]],
            x[None, [1, 2], 2:5],
            x[[0, 1], None, [2, 3]],  # apart: the broadcast axis first
        )
        x[[0, 2], 1:4] = -1.0
        x[::-1, [5]] += 100.0
        return reads

    same(f, np.arange(24.0).reshape(4, 6))


def test_flips_are_views_and_diff_takes_its_ends_as_numpys():
    # np.flip, fliplr and flipud are views: a later write to the base shows
    # in them, and a write through them reaches the base (the argument).
    # np.diff's prepend/append, as np.asarray makes them (0 is int64: a
    # float32 array's differences are float64). All exact.
    def f(x, v):
        y = np.flip(x)
        x[0, 0] = 99.0
        np.fliplr(x)[0, 0] = -5.0
        np.flipud(x)[0, 1] = -6.0
        return (
            y,
            np.flip(x, axis=(0, 1)),
            np.diff(v, prepend=0),
            np.diff(v, append=[9, 9]),
            np.diff(v, n=2, prepend=v[:1], append=0.0),
            np.diff(np.cumsum(v), prepend=0),
        )

    same(f, np.arange(12.0).reshape(3, 4), np.array([1, 4, 9, 16], np.float32))
    same_error(lambda x: np.fliplr(x), np.ones(3))
    same_error(lambda x: np.flipud(x.sum()), np.ones(3))


def test_scalars_assigned_into_arrays_convert_as_numpys():
    # NumPy converts a scalar stored by __setitem__ or fill as Python's int()
    # and float(): truncated, and its errors for nan, infinity, out of range
    # and complex into real. Arrays are cast unsafely, with no error.
    def fits(u, i, f):
        u[1] = 255.9
        u[:2] = -0.5
        i[0] = np.float32(-7.9)
        f[1] = 3
        return u, i, f

    same(fits, np.zeros(3, np.uint8), np.zeros(3, np.int32), np.zeros(3))
    u, i, f = np.zeros(3, np.uint8), np.zeros(3, np.int32), np.zeros(3)
    same_error(lambda u: u.__setitem__(1, 300.7), u)
    same_error(lambda u: u.__setitem__(slice(None), -1.5), u)
    same_error(lambda i: i.fill(np.nan), i)
    same_error(lambda i: i.__setitem__(slice(1, 3), np.inf), i)
    same_error(lambda i: i.__setitem__(0, np.float64("nan")), i)
    same_error(lambda i: i.__setitem__(0, 2.0**40), i)
    same_error(lambda f: f.__setitem__(1, 1j), f)
    same_error(lambda i: i.__setitem__(1, 2j), i)


def test_ndarray_methods_programs_call_as_numpys():
    # .dot, .repeat, .take, .conjugate, .itemsize, .nbytes, .view()
    # (a view: writes reach the argument), .item() of a value known while
    # tracing. Products of 4 terms: within 4 eps of |a|@|b|.
    def f(a, v):
        w = a.view()
        w[0, 0] = -1.0
        return (
            a.dot(v),
            v.repeat(2),
            a.take([0, 2], axis=1),
            a.conjugate(),
            a.itemsize + a.nbytes,
            np.arange(3.0).item(1),
            a.view(np.ndarray).T,
        )

    same(f, positive(3, 4), positive(4), rtol=4 * EPS64)
    with pytest.raises(TypeError, match=r"\.item\(\) cannot be traced"):
        jit(lambda a: a.sum().item())(positive(3))
    with pytest.raises(tinymlir.TracingError, match=r"\.view\(\) of a dtype of the same size"):
        jit(lambda a: a.view(np.int32))(positive(3))


def test_linspace_of_traced_ends_is_numpys_bit_for_bit():
    # Its shape is known (num samples) though its ends are data: NumPy's
    # arithmetic step by step, so the samples are equal bit for bit.
    def f(x):
        return (
            np.linspace(0, x.max(), 7),
            np.linspace(x.min(), x.max(), 5, endpoint=False),
            np.linspace(x[0], x, 4),
            np.linspace(x[0], x, 4, axis=1),
            np.linspace(x[1], 0.0, 6, dtype=np.int64),
            np.linspace(x[0], x[0], 3),  # a zero step
            np.linspace(0, x.max(), 1),
            np.linspace(x.min(), x.max(), 9, retstep=True),
        )

    for dtype in (np.float64, np.float32):
        same(f, np.array([0.3, 2.7, 1.1], dtype))


def test_rot90_is_a_view_and_delete_takes_numpys_positions():
    # np.rot90 is NumPy's view (flips and a transpose): writes through it
    # reach the argument. np.delete of positions known while tracing: ints,
    # negative ones, repeats, slices and bool arrays, flattened without axis.
    def f(x, c):
        r = np.rot90(c)
        r[0, 0] = -1.0
        return (
            np.rot90(x, 2),
            np.rot90(x, -1, axes=(1, 0)),
            np.rot90(x, 3),
            np.rot90(c, 1, axes=(1, 2)),
            np.delete(x, 1, axis=0),
            np.delete(x, [0, -1, 0], axis=1),
            np.delete(x, slice(None, None, 2), axis=1),
            np.delete(x, np.array([True, False, True]), axis=0),
            np.delete(x, [2, 5]),
            np.delete(x, []),
        )

    same(f, np.arange(12.0).reshape(3, 4), np.arange(24.0).reshape(2, 3, 4))
    same_error(lambda x: np.rot90(x, axes=(0, 0)), np.ones((2, 2)))
    same_error(lambda x: np.rot90(x, axes=(0, 2)), np.ones((2, 2)))
    same_error(lambda x: np.delete(x, 3, axis=0), np.ones((3, 2)))
    same_error(lambda x: np.delete(x, np.array([True, False]), axis=0), np.ones((3, 2)))


def test_broadcast_to_and_diagonal_are_read_only_views_as_numpys():
    # NumPy's np.broadcast_to and np.diagonal are read-only views: a later
    # write to the base shows in them, and a write through them is NumPy's
    # ValueError (setitem's and the ufunc's own words). All exact.
    def f(x):
        b = np.broadcast_to(x[0], (2, 4))
        d = np.diagonal(x)
        e = x.diagonal(1)
        x[0, 0] = 99.0
        x[1, 2] = -5.0
        return b + 0, d * 1, e.copy(), np.broadcast_to(x[:, :1], (3, 5)).sum(axis=1), b.T[1:]

    same(f, np.arange(12.0).reshape(3, 4))
    x = np.ones((2, 3))
    same_error(lambda x: np.broadcast_to(x[0], (2, 3)).__setitem__(0, 1.0), x)
    same_error(lambda x: np.diagonal(x).__setitem__(0, 1.0), x)
    same_error(lambda x: np.add(x[0], 1, out=np.broadcast_to(x[0], (2, 3))), x)
    with pytest.raises(ValueError, match="could not be broadcast"):
        jit(lambda x: np.broadcast_to(x, (3, 2)))(x)


# --- Results from static arguments and scalars ---------------------------------------------


def test_static_results_and_numpy_scalars():
    assert jit(lambda x: x * 2)(3.0) == 6.0
    assert type(jit(lambda x: x * 2)(3.0)) is float
    got = jit(lambda x: x.sum())(positive(4))
    assert type(got) is np.float64


def test_sequences_of_traced_values_assign_and_index_as_numpys():
    """`out[t] = s, i` with traced scalars (np.array's stacking of the tuple), a
    list index holding a traced int (an LU pivot's row swap), round(x, n), a
    static np.linspace's retstep, and views of rank 0: as NumPy's."""

    def sir(y0, beta, gamma):
        n = 8
        out = np.zeros((n, 3))
        s, i = y0[0], y0[1]
        for t in range(n):
            out[t] = s, i, 1.0 - s - i
            new = beta * s * i
            s, i = s - new, i + new - gamma * i
        return out

    y0 = np.array([0.99, 0.01, 0.0])
    np.testing.assert_array_equal(jit(sir)(y0, 0.3, 0.1), sir(y0, 0.3, 0.1))

    def pivot_swaps(a):
        a = a.copy()
        n = a.shape[0]
        for k in range(n - 1):
            p = k + np.argmax(np.abs(a[k:, k]))
            a[[k, p]] = a[[p, k]]
            a[k + 1 :, k:] -= np.outer(a[k + 1 :, k] / a[k, k], a[k, k:])
        return a

    m = np.random.default_rng(3).standard_normal((5, 5))
    got, want = jit(pivot_swaps)(m), pivot_swaps(m)
    # Partial pivoting bounds the entries by 2^(n-1) max|m|; each of the n - 1
    # steps rounds twice (product, difference; once if fused), and an earlier
    # error at most doubles through a step: within 4 (n - 1) eps 2^(n-1) max|m|.
    n = m.shape[0]
    bound = 4 * (n - 1) * 2.0**-52 * 2 ** (n - 1) * np.abs(m).max()
    np.testing.assert_allclose(got, want, rtol=0, atol=bound)

    def small(x):
        lin, step = np.linspace(0, 1, 5, retstep=True)
        return (
            round(x[0] * 100, 2),
            x[:1].reshape(()),
            np.squeeze(x[:1]),
            x[:1, None].squeeze(),
            lin * step,
        )

    x = np.array([0.123456, 2.0, 3.0])
    got, want = jit(small)(x), small(x)
    for g, w in zip(got, want):
        assert type(g) is type(w) and np.shape(g) == np.shape(w)
        np.testing.assert_array_equal(g, w)
    a2, b2 = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # np.cross of 2-vectors
        got, want = jit(np.cross)(a2, b2), np.cross(a2, b2)
    assert type(got) is type(want) and got == want


def test_real_and_imag_are_views_of_complex_arrays_as_numpys():
    """z.real and z.imag of a complex array are views: writes through them,
    their setters and in-place operators change z (the caller's array too),
    exactly, infinities, nans and signed zeros of the other part kept. Of a
    real array, .real is the array and .imag NumPy's read-only zeros."""
    v = np.random.default_rng(8).random(5)
    z0 = v + 1j * v[::-1]
    z0[1], z0[2] = complex(np.inf, -0.0), complex(-0.0, np.nan)

    def zero_real(z):
        z.real[:] = 0
        return z

    def set_imag(z):
        z.imag = 1
        return z.imag.sum()

    def shift_real(z):
        z.real += 1

    def through_a_name(z):
        r = z.real
        r *= 2
        r[r > 1.5] = 9.0
        return z.imag * 2

    def shift_imag(z):
        w = z.copy()
        w.imag[1:] = -w.imag[:-1]
        return w, w.real.sum()

    for fn in (zero_real, set_imag, shift_real, through_a_name, shift_imag):
        for z in (z0, z0.astype(np.complex64)):
            a1, a2 = z.copy(), z.copy()
            got, want = jit(fn)(a1), fn(a2)
            np.testing.assert_array_equal(a1, a2, err_msg=fn.__name__)
            np.testing.assert_array_equal(np.signbit(a1.real), np.signbit(a2.real))
            for g, w in zip(
                got if isinstance(got, tuple) else (got,),
                want if isinstance(want, tuple) else (want,),
            ):
                assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
                np.testing.assert_array_equal(g, w)
    z = z0.copy()
    part = jit(lambda a: a.imag)(z)  # a view of the argument, as NumPy's
    assert np.shares_memory(part, z) and part.flags.writeable
    real_parts = jit(lambda x: (x.real, x.imag))(v)
    np.testing.assert_array_equal(real_parts[0], v)
    np.testing.assert_array_equal(real_parts[1], np.zeros(5))

    def write_imag_of_real(x):
        x.imag[0] = 1.0

    with pytest.raises(ValueError) as numpy_error:
        write_imag_of_real(v.copy())
    with pytest.raises(ValueError, match=str(numpy_error.value)):
        jit(write_imag_of_real)(v.copy())


def test_ufunc_at_with_a_tuple_of_positions_as_numpys():
    """ufunc.at(a, (rows, cols), v): a confusion matrix, positions broadcast
    together (negative ones from the end), repeated ones applying again, and
    a position out of its axis NumPy's IndexError (not another element)."""
    y, p = np.array([0, 1, 2, 1, 2, 2]), np.array([0, 2, 2, 1, -1, 0])

    def confusion(y, p):
        cm = np.zeros((3, 3), dtype=np.int64)
        np.add.at(cm, (y, p), 1)
        return cm

    np.testing.assert_array_equal(jit(confusion)(y, p), confusion(y, p))

    def scatter(a, i, j, v):
        np.add.at(a, (i, j), v)
        np.maximum.at(a, (i, 0), 5.0)
        return a

    a = np.random.default_rng(1).random((3, 4, 2))
    i, j, v = np.array([0, 2, -1]), np.array([[1], [3]]), np.arange(2.0)
    a1, a2 = a.copy(), a.copy()
    np.testing.assert_array_equal(jit(scatter)(a1, i, j, v), scatter(a2, i, j, v))
    np.testing.assert_array_equal(a1, a2)
    for bad in (np.array([0, 3, 1]), np.array([0, -4, 1])):  # in range of the flattened (3, 3)
        with pytest.raises(IndexError, match=f"index {bad[1]} is out of bounds"):
            confusion(y[:3], bad)
        with pytest.raises(IndexError, match=f"index {bad[1]} is out of bounds"):
            jit(confusion)(y[:3], bad)


def test_returned_broadcasts_and_diagonals_are_read_only_as_numpys():
    """A returned np.broadcast_to or np.diagonal result is read-only, as
    NumPy's views are (computed or of an argument); other results are not."""
    x = np.arange(6.0).reshape(2, 3)
    for fn in (
        lambda a: np.broadcast_to(a * 2, (4, 2, 3)),
        lambda a: (np.diagonal(a * 1), a + 1),
        lambda a: np.broadcast_to(a, (2, 2, 3)),
        lambda a: a * 2,
    ):
        got, want = jit(fn)(x), fn(x)
        got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
        assert [g.flags.writeable for g in got] == [w.flags.writeable for w in want]


def test_results_that_are_one_array_or_its_views_share_it_as_numpys():
    """`return y, y` gives one array twice, and `y[1:]`, `y.T`, `y.reshape`
    returned beside `y` are NumPy's views of it (a write through one shows in
    the others), wherever they stand in the result; a view returned without
    its array is a copy with NumPy's values; views of an argument stay the
    caller's."""

    def f(x):
        y = x * 2
        return y[::2], y, y, y[1:], y.T, y.reshape(3, 2), x[1:], (y + 1)[1:]

    x = np.arange(6.0).reshape(2, 3)
    got, want = jit(f)(x), f(x)
    for g, w in zip(got, want):
        assert type(g) is type(w) and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert got[1] is got[2]
    for k in (0, 3, 4, 5):
        assert np.shares_memory(got[k], got[1]), k
    assert np.shares_memory(got[6], x) and not np.shares_memory(got[7], got[1])
    got[1][1, 1] = -1.0
    assert got[3][0, 1] == got[4][1, 1] == got[5][2, 0] == -1.0
    y = jit(lambda x: {"a": (z := x + 1), "b": [z[0], z]})(x)
    assert y["b"][1] is y["a"] and np.shares_memory(y["b"][0], y["a"])


def test_views_of_bits_as_another_dtype_as_numpys():
    """a.view(dtype) of a dtype of the same size is NumPy's view of the same
    bits: exact (infinities, nan, -0 too), writes through it change the array
    (the caller's argument too), and a returned one is NumPy's view of the
    argument. Other sizes are refused by name."""
    x = np.array([1.5, -2.0, np.inf, np.nan, 0.0, -0.0])

    def clear_sign(a):
        b = a.view(np.int64)
        b[0] = 0
        b &= 0x7FFFFFFFFFFFFFFF
        return a.view(np.uint64) >> 52

    for fn in (
        lambda a: a.view(np.int64) >> 52,
        lambda a: a.astype(np.float32).view(np.uint32) >> 23,
        lambda a: a.view(np.int64).view(np.float64) * 1,
        lambda a: (a[:1] * 0 + np.arange(6)).astype(np.int32).view(np.float32),
        clear_sign,
    ):
        a1, a2 = x.copy(), x.copy()
        got, want = jit(fn)(a1), fn(a2)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(a1.view(np.int64), a2.view(np.int64))  # bit for bit
    bits = jit(lambda a: a.view(np.int64))(x)
    assert np.shares_memory(bits, x) and bits.dtype == np.int64
    with pytest.raises(tinymlir.TracingError, match="view"):
        jit(lambda a: a.view(np.int32))(x)


def test_flat_reads_and_writes_as_numpys():
    """a.flat: NumPy's flatiter in C order whatever the layout. `A.flat[::n + 1]
    = 0` (the diagonal idiom), writes through a transposed view, values
    cycled, `a.flat = v`, a traced mask, reads (a scalar, a copy), len and
    iteration."""

    def diagonal(a):
        a.flat[:: a.shape[1] + 1] = 0.0
        return a

    def transposed(a):
        a.T.flat[1:4] = [-1, -2]  # cycled, in the view's C order
        return a

    def assign_all(a):
        a.flat = 7

    def masked(a):
        a.flat[a.flatten() > 5] = -1

    def reads(a):
        a.flat[[0, 2]] = [9, 8]
        return a.flat[3], a.flat[1:3], len(a.flat), sum(x for x in a[:1].flat)

    def at_argmax(a):
        return a.flat[np.argmax(a)]

    for fn in (diagonal, transposed, assign_all, masked, reads, at_argmax):
        a1, a2 = np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4)
        got, want = jit(fn)(a1), fn(a2)
        np.testing.assert_array_equal(a1, a2)
        for g, w in zip(
            got if isinstance(want, tuple) else [got], want if isinstance(want, tuple) else [want]
        ):
            assert type(g) is type(w) and np.shape(g) == np.shape(w)
            np.testing.assert_array_equal(g, w)


def test_empty_index_arrays_as_numpys():
    """An empty int index array (x[[]], x[:, []], x[np.arange(0)]) selects
    nothing: NumPy's empty result in NumPy's shape, and an assignment through
    it writes nothing (a value that does not broadcast is still its
    ValueError)."""

    def writes(a):
        a[[]] = 5.0
        a[:, []] = np.zeros((3, 0))
        return a

    for fn in (
        lambda a: a[[]],
        lambda a: a[:, []],
        lambda a: a[[], 1],
        lambda a: a[[], []],
        lambda a: a[:, [], None],
        lambda a: a[np.arange(0)].sum(axis=0),
        writes,
    ):
        a1, a2 = np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4)
        got, want = jit(fn)(a1), fn(a2)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(a1, a2)

    def bad(a):
        a[[]] = np.ones(5)

    with pytest.raises(ValueError):
        jit(bad)(np.zeros((3, 4)))
