"""Options: the environment supplies defaults, keywords override them, and
every option that changes the code is part of the specialization key."""

import numpy as np
import pytest

import tinymlir
from tinymlir import jit


def product(a, b):
    return a @ b


def test_environment_defaults_and_keyword_overrides(monkeypatch):
    a = np.ones((8, 12), np.float32)
    b = np.ones((12, 5), np.float32)
    monkeypatch.setenv("TINYMLIR_BLAS", "0")
    monkeypatch.setenv("TINYMLIR_OPT_LEVEL", "1")
    defaults = jit(product)
    assert defaults.options.blas is False and defaults.options.opt_level == 1
    assert defaults.compile(a, b).blas_calls == 0
    explicit = jit(product, blas=True)
    assert explicit.options.blas is True
    assert explicit.compile(a, b).blas_calls == 1
    np.testing.assert_array_equal(explicit(a, b), np.full((8, 5), 12, np.float32))


def test_options_that_change_code_are_in_the_key():
    plain, scalar_math = tinymlir.Options(), tinymlir.Options()
    scalar_math.vector_math = False
    assert plain.key() != scalar_math.key()
    f = jit(lambda x: np.tanh(x))
    x = np.linspace(-3, 3, 64).astype(np.float32)
    f(x)
    f(x, target="cpu")  # the same options: one specialization
    assert f.stats().compilations + f.stats().disk_hits == 1


def test_bad_options_are_clear_errors(monkeypatch):
    with pytest.raises(TypeError, match="unknown option.*blaas"):
        jit(product, blaas=False)
    with pytest.raises(ValueError, match="target must be 'cpu' or 'gpu', not 'tpu'"):
        jit(product, target="tpu")
    monkeypatch.setenv("TINYMLIR_OPT_LEVEL", "7")
    with pytest.raises(ValueError, match=r"\[options\] TINYMLIR_OPT_LEVEL='7': expected 0 to 3"):
        jit(product)


def test_option_types_are_checked():
    with pytest.raises(TypeError, match="option opt_level must be int, got '3'"):
        jit(product, opt_level="3")
    with pytest.raises(TypeError, match="option blas must be bool, got 1"):
        jit(product, blas=1)
