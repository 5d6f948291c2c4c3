"""Arrays a jitted function captures (module globals, closure cells) and writes
into: NumPy writes into them, and so does tinymlir.jit, at every call. Each test
runs the same source under NumPy and under jit on equal copies of the captured
arrays and compares results and the captured arrays afterwards."""

import numpy as np
import pytest
from conftest import assert_close

from tinymlir import jit

G = np.zeros(6)
H = np.arange(12.0).reshape(3, 4)
COUNTS = np.zeros(4, np.int64)


def write_slices(v):
    G[1:3] = v
    G[0] += 1
    G[-1] = G[:3].sum()
    return G.sum()


def write_rows(v):
    H[1] *= v
    H[:, 0] = np.arange(3)
    np.copyto(H[2], v + 1)
    return H @ np.ones(4)


def write_out(v):
    np.multiply(v, 2, out=G)
    return G[::2]


def count(ids):
    np.add.at(COUNTS, ids, 1)
    return COUNTS.copy()


def run_twice_as_numpy(fn, captured, *args_per_call):
    """Runs fn under NumPy, then under jit with the captured arrays reset to
    the same starting values, twice (the second call sees the first's writes);
    compares every result and the captured arrays after each call."""
    start = [c.copy() for c in captured]
    expected = []
    for args in args_per_call:
        expected.append((fn(*args), [c.copy() for c in captured]))
    for c, s in zip(captured, start):
        c[...] = s
    f = jit(fn)
    for args, (want, want_captured) in zip(args_per_call, expected):
        got = f(*args)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
        for c, w in zip(captured, want_captured):
            np.testing.assert_array_equal(c, w)
    assert f.stats().compilations == 1


def test_item_and_slice_writes_into_a_global():
    run_twice_as_numpy(write_slices, [G], (np.float64(2.0),), (np.float64(-3.5),))


def test_row_writes_and_copyto_into_a_global():
    run_twice_as_numpy(write_rows, [H], (np.arange(4.0),), (np.full(4, 0.5),))


def test_out_argument_into_a_global():
    run_twice_as_numpy(write_out, [G], (np.arange(6.0),), (np.ones(6),))


def test_ufunc_at_into_a_global_int_array():
    ids = np.array([0, 1, 1, 3, 3, 3])
    run_twice_as_numpy(count, [COUNTS], (ids,), (ids[::-1].copy(),))


def test_closure_array_written():
    def make():
        acc = np.zeros(3)

        def step(x):
            acc[:] = acc + x
            return acc * 2

        return step, acc

    step, acc = make()
    f = jit(step)
    x = np.array([1.0, 2.0, 3.0])
    for k in range(1, 4):
        r = f(x)
        np.testing.assert_array_equal(acc, k * x)
        np.testing.assert_array_equal(r, 2 * k * x)


def test_a_call_that_raises_leaves_the_captured_array_as_it_was():
    T = np.zeros(4)

    def bad(i):
        T[:2] = 7.0
        return T[i]  # a traced index: NumPy's IndexError when it runs

    f = jit(bad)
    with pytest.raises(IndexError):
        f(np.int64(9))
    np.testing.assert_array_equal(T, np.zeros(4))
    assert f(np.int64(1)) == 7.0
    np.testing.assert_array_equal(T, [7.0, 7.0, 0.0, 0.0])


def test_read_only_captured_arrays_stay_constants_of_the_call():
    W = np.arange(4.0)

    def read(x):
        return W * x

    f = jit(read)
    assert_close(f(np.ones(4)), W, 0)
    W[0] = 10.0  # read at every call, as NumPy reads it
    assert_close(f(np.ones(4)), W, 0)
    assert f.compile(np.ones(4)).written_arguments == []
