"""pytest setup: hermetic compile cache, shared helpers."""

import os
import shutil
import tempfile

import numpy as np
import pytest

# Before tinymlir compiles anything: a private disk cache, never ~/.cache.
_CACHE = tempfile.mkdtemp(prefix="tinymlir-pytest-cache-")
os.environ["TINYMLIR_CACHE_DIR"] = _CACHE
os.environ.pop("TINYMLIR_CACHE", None)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_CACHE, ignore_errors=True)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def eps(dtype):
    return float(np.finfo(dtype).eps)


def assert_close(actual, expected, bound, what=""):
    """|actual - expected| <= bound elementwise, dtypes and shapes equal."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    with np.errstate(invalid="ignore"):
        err = np.atleast_1d(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
        err[np.atleast_1d(actual.astype(np.float64) == expected.astype(np.float64))] = (
            0  # equal infinities
        )
        err = err.reshape(actual.shape)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), err.shape)
    bad = ~(err <= bound) & ~(np.isnan(actual) & np.isnan(expected))
    assert not bad.any(), (
        f"{what}: {bad.sum()} of {bad.size} elements off; worst error "
        f"{err.max():.3g}, bound there {bound.flat[np.argmax(err)]:.3g}"
    )
