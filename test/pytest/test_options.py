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


def test_products_run_on_numpys_openblas_where_it_is_loaded():
    """numpy_blas (the default): products outside parallel loops run on NumPy's own
    OpenBLAS, large float64 x @ B included (gemv), so that the process has one BLAS thread
    pool; each is then NumPy's product bit for bit (the same library, called the same
    way). A small x @ B stays in generated loops; numpy_blas=False keeps every product on
    tinymlir's own OpenBLAS."""
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    if blas["name"] != "scipy-openblas":
        pytest.skip(f"NumPy's BLAS is {blas['name']}, not its wheels' scipy-openblas")
    assert tinymlir.blas_library().startswith(f"numpy: OpenBLAS {blas['version']}")
    rng = np.random.default_rng(7)
    A, B = rng.standard_normal((300, 200)), rng.standard_normal((200, 150))
    x, y = rng.standard_normal(200), rng.standard_normal(300)
    C, z = rng.standard_normal((1024, 1024)), rng.standard_normal(1024)  # 2^20 elements
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    args = (A, B, x, y, C, z, A32, B32)

    def products(A, B, x, y, C, z, A32, B32):
        return A @ B, A @ x, z @ C, A32 @ B32, y @ A

    want = products(*args)
    before = tinymlir.numpy_blas_products()
    got = jit(products)(*args)
    assert tinymlir.numpy_blas_products() - before == 4  # not y @ A
    for g, w in zip(got[:4], want[:4]):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)

    before = tinymlir.numpy_blas_products()
    own = jit(products, numpy_blas=False)(*args)
    assert tinymlir.numpy_blas_products() == before
    # Summed in another order: each result is within gamma_k |P| @ |Q| of the exact
    # product (k terms, exact inputs), so two results differ by at most twice that.
    terms = ((A, B), (A, x), (z, C), (A32, B32), (y, A))
    for results in (got, own):
        for g, w, (p, q) in zip(results, want, terms):
            assert g.dtype == w.dtype
            k = p.shape[-1]
            u = float(np.finfo(w.dtype).eps) / 2  # the unit roundoff
            bound = 2 * k * u / (1 - k * u) * (np.abs(p).astype(np.float64) @ np.abs(q))
            assert np.all(np.abs(g.astype(np.float64) - w) <= bound)
