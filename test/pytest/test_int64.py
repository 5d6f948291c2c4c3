"""int64, NumPy's default integer: arguments, arrays made inside, promotion,
integer reductions, and exact results (one source under NumPy and jit)."""

import numpy as np
import pytest

from tinymlir import jit

from test_mutation import same


def test_int64_arguments_promotion_and_reductions():
    big = np.array([[3_000_000_000, -7, 12], [5, 2**40, -2**35]], dtype=np.int64)
    small = np.array([1, -2, 3], dtype=np.int32)

    def f(a, b):
        return (a + b, a * 3 - 1, a // 1 if False else a - b, a.sum(), a.sum(axis=0),
                b.sum(), a.prod(axis=1), a.max(), a.min(axis=1), a / 4, a.mean(), a > b,
                np.where(a > 0, 1, 0), (a > 0).sum(), np.count_nonzero(a > 5), a * 0.5)
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


def test_integer_constants_beyond_2_53_are_refused_not_rounded():
    with pytest.raises(OverflowError, match=r"beyond 2\*\*53"):
        jit(lambda a: a + (2**60 + 1))(np.arange(3))
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        jit(lambda a: a + 2**70)(np.arange(3))
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        jit(lambda a: a + 2**40)(np.arange(3, dtype=np.int32))
