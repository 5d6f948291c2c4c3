"""pytest setup: hermetic compile cache, shared helpers: assert_same compares a
result with NumPy's, same runs a function under NumPy and under jit and compares,
same_error compares their errors."""

import copy
import os
import shutil
import tempfile
import warnings

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


def _values_equal(e, g, signed_zeros):
    """Elementwise: g is e exactly; nan for nan (each part of a complex), and the
    sign bits of floats (zeros and nans) where `signed_zeros`."""
    if e.dtype.kind not in "fc":
        return g == e
    parts = ((e.real, g.real), (e.imag, g.imag)) if e.dtype.kind == "c" else ((e, g),)
    eq = np.ones(e.shape, bool)
    for ep, gp in parts:
        eq &= (gp == ep) | (np.isnan(gp) & np.isnan(ep))
        if signed_zeros:
            eq &= np.signbit(gp) == np.signbit(ep)
    return eq


def assert_same(
    expected, got, bound=None, rtol=0, path="result", *, types=True, signed_zeros=True, where=None
):
    """`got` is `expected` (NumPy's answer).

    Trees: tuples and lists of the same type and length, None for None; a tuple or
    list `bound` / `rtol` where `expected` is one gives one per item. Leaves: an
    ndarray where NumPy's is one, else the very scalar type (np.float64, int, ...),
    unless `types` is False; then equal dtypes and shapes, and the values:

    * no tolerance (`bound` None or all 0, `rtol` 0): equal bit for bit, nan for nan
      (each part of a complex) and, where `signed_zeros`, the same sign bits of floats;
    * else |got - expected| <= bound + rtol * |expected| elementwise, in float64 or
      complex128: `bound` absolute and broadcastable, `rtol` relative to a finite
      expected; equal values (infinities) and nan for nan pass whatever the bound.

    `where`: a broadcastable boolean mask of the elements to compare (the others are
    not judged).
    """
    if isinstance(expected, (tuple, list)):
        kind = type(expected).__name__
        assert type(got) is type(expected), (
            f"{path}: {type(got).__name__} where NumPy's is a {kind}"
        )
        assert len(got) == len(expected), (
            f"{path}: {len(got)} items where NumPy's {kind} has {len(expected)}"
        )
        n = len(expected)
        bounds = bound if isinstance(bound, (tuple, list)) else [bound] * n
        rtols = rtol if isinstance(rtol, (tuple, list)) else [rtol] * n
        assert len(bounds) == n and len(rtols) == n, f"{path}: tolerances for {n} items?"
        for k in range(n):
            assert_same(
                expected[k],
                got[k],
                bounds[k],
                rtols[k],
                f"{path}[{k}]",
                types=types,
                signed_zeros=signed_zeros,
                where=where,
            )
        return
    if expected is None:
        assert got is None, f"{path}: {type(got).__name__} where NumPy's is None"
        return
    if types:
        if isinstance(expected, np.ndarray):
            assert isinstance(got, np.ndarray), (
                f"{path}: {type(got).__name__} where NumPy's is an ndarray"
            )
        else:
            assert type(got) is type(expected), (
                f"{path}: {type(got).__name__} where NumPy's is {type(expected).__name__}"
            )
    e, g = np.asarray(expected), np.asarray(got)
    assert g.dtype == e.dtype, f"{path}: dtype {g.dtype} != NumPy's {e.dtype}"
    assert g.shape == e.shape, f"{path}: shape {g.shape} != NumPy's {e.shape}"
    if e.dtype.kind not in "biufc":  # strings, objects: equal
        np.testing.assert_array_equal(g, e, err_msg=path)
        return
    exact = (bound is None or not np.any(bound)) and not np.any(rtol)
    with np.errstate(all="ignore"):
        if exact:
            bad = ~_values_equal(e, g, signed_zeros)
            err = tol = None
        else:
            wide = np.complex128 if e.dtype.kind == "c" else np.float64
            ew, gw = e.astype(wide), g.astype(wide)
            equal = gw == ew  # infinities too, whatever the bound
            err = np.where(equal, 0.0, np.abs(gw - ew))
            scale = np.where(np.isfinite(ew), np.abs(ew), 0.0)
            tol = (0.0 if bound is None else np.asarray(bound, np.float64)) + np.asarray(
                rtol, np.float64
            ) * scale
            tol = np.broadcast_to(tol, e.shape)
            bad = ~(err <= tol) & ~equal & ~(np.isnan(gw) & np.isnan(ew))
    if where is not None:
        bad &= np.broadcast_to(np.asarray(where, bool), e.shape)
    if not bad.any():
        return
    at = tuple(int(i[0]) for i in np.nonzero(bad)) if bad.ndim else ()
    msg = (
        f"{path}: {int(bad.sum())} of {bad.size} elements differ; at {at}: got {g[at]!r}, "
        f"NumPy's {e[at]!r}"
    )
    if err is not None:
        worst = np.unravel_index(
            np.argmax(np.where(bad, np.nan_to_num(err, nan=np.inf), -1.0)), e.shape
        )
        msg += (
            f" (error {float(err[at]):.3g}, bound {float(tol[at]):.3g}; worst error "
            f"{float(err[worst]):.3g}, bound there {float(tol[worst]):.3g})"
        )
    elif signed_zeros and e.dtype.kind in "fc" and np.all(_values_equal(e, g, False) | ~bad):
        msg += " (the signs of zeros or nans differ)"
    raise AssertionError(msg)


def assert_close(actual, expected, bound, what=""):
    """|actual - expected| <= bound elementwise, dtypes and shapes equal: assert_same
    (expected first) without its checks of scalar types and of signs."""
    assert_same(expected, actual, bound, path=what, types=False, signed_zeros=False)


def same(
    fn,
    *args,
    bound=None,
    rtol=0,
    arg_rtol=None,
    types=True,
    signed_zeros=True,
    jit_options=None,
    **kwargs,
):
    """Runs fn under NumPy and under tinymlir.jit(fn, **jit_options) on deep copies of
    args (and kwargs, passed as they are), with NumPy's warnings and floating-point
    errors silenced, and compares (assert_same) the results, within `bound` / `rtol`,
    and every argument afterwards, within `arg_rtol` (by default `rtol` where that is
    one number, else exactly: `bound` is the results'). Returns jit's result."""
    from tinymlir import jit

    np_args, jit_args = copy.deepcopy(args), copy.deepcopy(args)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = fn(*np_args, **kwargs)
        got = jit(fn, **(jit_options or {}))(*jit_args, **kwargs)
    check = dict(types=types, signed_zeros=signed_zeros)
    assert_same(expected, got, bound, rtol, "result", **check)
    if arg_rtol is None:
        arg_rtol = 0 if isinstance(rtol, (tuple, list)) else rtol
    for k, (e, g) in enumerate(zip(np_args, jit_args)):
        assert_same(e, g, None, arg_rtol, f"argument {k}", **check)
    return got


def same_error(fn, *args, exact=True, kind=None):
    """fn raises under NumPy and under jit: the same type (or `kind`, a base of
    NumPy's: a TypeError for its UFuncTypeError), and NumPy's message (all of
    jit's where `exact`, else within it)."""
    from tinymlir import jit

    with pytest.raises(Exception) as want:
        fn(*copy.deepcopy(args))
    assert kind is None or isinstance(want.value, kind)
    with pytest.raises(kind or type(want.value)) as got:
        jit(fn)(*copy.deepcopy(args))
    w, g = str(want.value), str(got.value)
    assert (g == w) if exact else (w in g), (g, w)
