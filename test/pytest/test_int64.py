"""int64, NumPy's default integer: arguments, arrays made inside, promotion,
integer reductions, and exact results (one source under NumPy and jit)."""

import numpy as np
import pytest
from test_mutation import same

from tinymlir import jit


def test_int64_arguments_promotion_and_reductions():
    big = np.array([[3_000_000_000, -7, 12], [5, 2**40, -(2**35)]], dtype=np.int64)
    small = np.array([1, -2, 3], dtype=np.int32)

    def f(a, b):
        return (
            a + b,
            a * 3 - 1,
            a // 1 if False else a - b,
            a.sum(),
            a.sum(axis=0),
            b.sum(),
            a.prod(axis=1),
            a.max(),
            a.min(axis=1),
            a / 4,
            a.mean(),
            a > b,
            np.where(a > 0, 1, 0),
            (a > 0).sum(),
            np.count_nonzero(a > 5),
            a * 0.5,
        )

    same(f, big, small)


def test_arrays_made_inside_are_numpys_int64():
    def f(x):
        k = np.arange(4)
        z = np.zeros(3, dtype=int)
        z[1] = 7
        idx = np.arange(x.shape[0]) * 2 % x.shape[0]
        return k, k + 1, k * x[:4], z, x[idx], np.full(2, 5)

    same(f, np.linspace(0.0, 1.0, 6))


def test_int64_written_back_and_mixed_results_exact():
    # several results of different dtypes are packed as int64 bits: exact
    def f(a, x):
        a[0] += 2**40
        return a * 1, x * 1, (x * 1).astype(np.float32), x > 0

    same(f, np.array([2**53 - 1, 4, -5], dtype=np.int64), np.array([1.5, -0.0, np.nan]))


def test_integer_constants_keep_all_64_bits():
    """Python ints, NumPy integer scalars and fill values beyond 2**53 are exact
    (a double would round 2**60 + 1 to 2**60)."""
    top = np.iinfo(np.int64).max

    def f(a, u):
        z = np.full(3, 2**62 + 1)
        z[1] = -(2**61) - 3
        return (
            a + (2**60 + 1),
            a * (2**40 + 1),
            a - top,
            a ^ (2**63 - 1),
            a > 2**60 + 1,
            a == 2**60 + 3,
            u + (2**64 - 1),
            u & 0xFFFF_FFFF_FFFF_FFF1,
            u >= 2**63 + 5,
            u - np.uint64(2**63 + 1),
            a + np.int64(-(2**62) - 7),
            z,
            z // 3,
            np.clip(a, 2**60 + 2, top - 1),
            np.where(a > 0, 2**59 + 11, -(2**58) - 1),
            a.astype(np.float32) + 1,
            (a + 2**60 + 1).astype(np.float32),
            np.maximum(a, 2**60 + 2),
        )

    same(
        f,
        np.array([2**60 + 2, 4, -5, top], dtype=np.int64),
        np.array([2**63 + 7, 2**64 - 2, 3], dtype=np.uint64),
    )


def test_integer_constants_out_of_range_are_numpys_overflow_error():
    with pytest.raises(OverflowError, match="Python int too large to convert to C long"):
        jit(lambda a: a + 2**70)(np.arange(3))
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        jit(lambda a: a + 2**63)(np.arange(3))
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        jit(lambda a: a + 256)(np.arange(3, dtype=np.uint8))
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        jit(lambda a: a + 2**40)(np.arange(3, dtype=np.int32))


def test_python_ints_beyond_64_bits_are_floats_beside_floats_as_numpys():
    """A Python int wider than 64 bits is NumPy's float beside float and
    complex arrays (x * 10**20, x / 10**30), compared exactly with integers
    (int8_array < 2**70 is all True), and NumPy's OverflowError beside
    integers, in a store into an integer array, and beyond doubles."""
    x = np.random.default_rng(5).random(4)
    ints, small, flags = np.arange(4), np.arange(4, dtype=np.int8), x > 0.5
    fine = [
        (lambda a: a * 10**20, x),
        (lambda a: a + 2**64, x),
        (lambda a: a / 10**30, x),
        (lambda a: np.maximum(a, -(2**65)), x),
        (lambda a: np.clip(a, -(10**30), 10**30), x),
        (lambda a: a.astype(np.float32) * 10**20, x),
        (lambda a: a * (10**20 + 1j), x),
        (lambda a: a < 2**70, ints),
        (lambda a: a > -(2**70), small),
        (lambda a: a == 2**70, ints),
    ]
    for fn, arg in fine:
        got, want = jit(fn)(arg), fn(arg)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)  # one rounding of the int, then NumPy's op

    def store(a):
        a[0] = 10**25
        return a

    np.testing.assert_array_equal(jit(store)(x.copy()), store(x.copy()))
    refused = [
        (lambda a: a * 10**20, ints),
        (lambda a: a + 2**70, flags),
        (store, ints),
        (lambda a: a * 10**400, x),
    ]
    for fn, arg in refused:
        with pytest.raises(OverflowError) as numpy_error:
            fn(arg.copy())
        with pytest.raises(OverflowError, match=str(numpy_error.value)):
            jit(fn)(arg.copy())
