"""The frontend's functions (GPT-2's kernels written with them: tinymlir.gpt2).

On traced values they build graph nodes. Called with NumPy arrays outside of
tracing, they are compiled and run like any jitted function (no NumPy
fallback): ``tinymlir.tanh(np.ones(3, np.float32))`` runs native code.
"""

from __future__ import annotations

import builtins
import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _tinymlir as _core
from ._jit import JitFunction
from ._trace import Traced, _reduce, dtype_name, index_input, to_tensor, tracing


def _frontend(fn: Callable[..., Any]) -> Callable[..., Any]:
    eager = JitFunction(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if tracing() or builtins.any(isinstance(a, Traced) for a in args):
            return fn(*args, **kwargs)
        return eager(*args, **kwargs)

    call.eager = eager
    return call


def _t(x):
    return to_tensor(x)


def _elementwise(name: str, arity: int) -> Callable[..., Any]:
    """The frontend function of ops.def's row `name`: tinymlir.exp and friends."""
    op = getattr(_core, name)
    if arity == 1:

        def fn(x):
            return Traced(op(_t(x)))
    elif arity == 3:

        def fn(condition, x, y):
            return Traced(op(_t(condition), _t(x), _t(y)))
    else:

        def fn(x, y):
            return Traced(op(_t(x), _t(y)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"Elementwise {name}, as numpy.{name}"
        if hasattr(np, name)
        else f"Elementwise {name} (NumPy has no numpy.{name})"
    ) + ", with NumPy broadcasting and promotion."
    return _frontend(fn)


#: The elementwise functions' names, one per Unary, Binary, Compare and Select row of
#: ops.def; the functions are made in _elementwise.py, generated from that table at build time.
ELEMENTWISE = tuple(name for name, _ in _core.ELEMENTWISE)


@_frontend
def matmul(a, b):
    return Traced(_core.matmul(_t(a), _t(b)))


@_frontend
def cast(x, dtype):
    return Traced(_core.cast(_t(x), dtype_name(dtype, "cast's dtype")))


astype = cast


@_frontend
def sum(x, axis=None, keepdims=False):
    return _reduce("sum", Traced(_t(x)), axis, keepdims)


@_frontend
def max(x, axis=None, keepdims=False):
    return _reduce("max", Traced(_t(x)), axis, keepdims)


@_frontend
def min(x, axis=None, keepdims=False):
    return _reduce("min", Traced(_t(x)), axis, keepdims)


@_frontend
def mean(x, axis=None, keepdims=False):
    return _reduce("mean", Traced(_t(x)), axis, keepdims)


@_frontend
def var(x, axis=None, keepdims=False):
    return _reduce("var", Traced(_t(x)), axis, keepdims)


@_frontend
def slice(x, begin, end, steps=()):
    return Traced(_core.slice(_t(x), list(begin), list(end), list(steps)))


@_frontend
def reshape(x, shape):
    return Traced(_core.reshape(_t(x), [operator.index(d) for d in shape]))


@_frontend
def transpose(x, perm):
    return Traced(_core.transpose(_t(x), [operator.index(d) for d in perm]))


@_frontend
def split(x, sections, axis=0):
    return [Traced(p) for p in _core.split(_t(x), operator.index(sections), operator.index(axis))]


@_frontend
def concatenate(parts, axis=0):
    return Traced(_core.concatenate([_t(p) for p in parts], operator.index(axis)))


@_frontend
def gather(table, ids):
    return Traced(_core.gather(_t(table), _t(ids)))


@_frontend
def index_put(a, index, values):
    """NumPy's ``b = a.copy(); b[index] = values`` as a value: `index` holds,
    per axis, rank-1 int positions (the same count R for each) or None for the
    whole axis; `values` has the shape of ``a[index]``."""
    parts = [
        None if i is None else index_input(i, "index_put")._t
        for i in (index if isinstance(index, tuple) else (index,))
    ]
    return Traced(_core.index_put(_t(a), parts, _t(values)))
