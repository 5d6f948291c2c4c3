"""Arrays made inside a traced function: ``np.zeros``, ``np.empty``, ``np.arange``...

These calls take no traced argument, so neither of NumPy's dispatch protocols
sees them. While a function is traced, the ``numpy`` module's creation
functions (and ``np.ndarray``, by a subclass whose metaclass makes calls traced
and answers isinstance as NumPy's ndarray does) are replaced by wrappers (and so are the traced function's globals
and closure cells bound to them, for ``from numpy import zeros``). A wrapper asks whether *its
own thread* is tracing and whether its caller is outside NumPy's and
tinymlir's own modules (NumPy's Python code calls ``np.empty`` too): if so it
returns a traced array (a mutable buffer
that writes, views and ``out=`` update); otherwise it calls NumPy's function,
so other threads keep using NumPy. The wrappers are installed when the first
trace in the process starts and removed when the last one ends.

A traced array made from static values alone remembers its NumPy value until
something is written to it (``known_value``), so ``for i in np.arange(n)`` and
``x[np.arange(3)]`` still see numbers. ``np.empty`` gives zeros, so results are
deterministic.
"""

from __future__ import annotations

import functools
import inspect
import operator
import sys as _sys
import threading
import types

import numpy as np

from . import _tinymlir as _core
from ._trace import (
    Traced,
    _has_traced,
    _nested,
    _state,
    constant,
    dtype_name,
    known_constant,
    layers,
    set_known,
    to_tensor,
)


def _shape(shape):
    if isinstance(shape, (tuple, list)):
        return [operator.index(d) for d in shape]
    return [operator.index(shape)]


def full_traced(shape, value, dtype, name):
    """A traced array of `shape` filled with `value` (a number, an array or a
    traced value): the core's np.full (NumPy's default dtype and cast)."""
    return _filled(_core.full, _shape(shape), value, dtype, name)


def _filled(make, shape, value, dtype, name):
    """make(shape, value, dtype) (the core's full or full_like), its value known
    while tracing where `value` is static."""
    d = None if dtype is None else dtype_name(np.dtype(dtype), f"{name}'s result")
    traced = isinstance(value, Traced)
    r = make(shape, value._t if traced else to_tensor(value, f"{name}'s fill value"), d)
    r = Traced(r, rank0="array")
    return r if traced else set_known(r, lambda: np.full(r.shape, value, r.dtype))


def _stacked(x, dtype):
    """np.array of nested lists holding traced values: the core's (its shape,
    dtype and NumPy's error for an inhomogeneous shape)."""
    d = None if dtype is None else dtype_name(np.dtype(dtype), "numpy.array's result")
    return Traced(_core.array_of(_nested(x), d), rank0="array")


# The wrappers: each takes NumPy's function first, then NumPy's arguments.


# Float fill values: float64 where dtype is None, as NumPy's.
def _zeros(orig, shape, dtype=float, order="C", **kw):
    return full_traced(shape, 0.0, dtype, f"numpy.{orig.__name__}")


def _ones(orig, shape, dtype=None, order="C", **kw):
    return full_traced(shape, 1.0, dtype, "numpy.ones")


def _full(orig, shape, fill_value, dtype=None, order="C", **kw):
    return full_traced(shape, fill_value, dtype, "numpy.full")


def full_like(a, fill_value, dtype, shape, name):
    """np.full_like (and ones_like, zeros_like, empty_like) as a traced array:
    from the wrappers here, and from __array_function__ (_numpy) for traced `a`."""
    t = a._t if isinstance(a, Traced) else to_tensor(a, f"{name}'s prototype")
    dims = None if shape is None else _shape(shape)
    return _filled(lambda _, v, d: _core.full_like(t, v, d, dims), None, fill_value, dtype, name)


def _like(value):
    def make(orig, a, dtype=None, order="K", subok=True, shape=None, **kw):
        return full_like(a, value, dtype, shape, f"numpy.{orig.__name__}")

    return make


def _full_like(orig, a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    return full_like(a, fill_value, dtype, shape, "numpy.full_like")


def _computed(orig, *args, **kwargs):
    if _has_traced(args) or _has_traced(list(kwargs.values())):
        raise TypeError(
            f"tinymlir: numpy.{orig.__name__} takes static arguments inside a traced "
            "function (its shape must be known while tracing)"
        )
    result = orig(*args, **kwargs)
    if isinstance(result, tuple):  # linspace's retstep, meshgrid's...
        return tuple(map(known_constant, result))
    return constant(result, f"numpy.{orig.__name__}")


def _linspace(orig, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kw):
    """np.linspace: NumPy's own of static ends; of traced ones, the core's (the
    shape is known: num samples)."""
    if not _has_traced([start, stop]):
        return _computed(orig, start, stop, num, endpoint, retstep, dtype, axis, **kw)
    d = None if dtype is None else dtype_name(np.dtype(dtype), "numpy.linspace's result")
    ends = (to_tensor(x, "numpy.linspace's end") for x in (start, stop))
    y, step = _core.linspace(*ends, operator.index(num), bool(endpoint), d, operator.index(axis))
    y = Traced(y, rank0="array")
    return (y, Traced(step)) if retstep else y


def _array(orig, obj, *args, **kwargs):
    """np.array, np.asarray, np.asanyarray and np.ascontiguousarray: of a traced
    array the core's asArray (the array itself, a view or a copy, as NumPy's
    copy=, order= and ndmin= make it); of lists holding traced values the
    core's arrayOf."""
    if not isinstance(obj, Traced) and not _has_traced(obj):
        return orig(obj, *args, **kwargs)
    bound = inspect.signature(orig).bind(obj, *args, **kwargs)
    bound.apply_defaults()
    given = bound.arguments
    name = orig.__name__
    dtype = given.get("dtype")
    if name == "ascontiguousarray":
        order, ndmin = "C", 1
    else:
        order, ndmin = given.get("order") or "K", operator.index(given.get("ndmin", 0))
    copy = given.get("copy")
    if not isinstance(obj, Traced):
        obj, dtype = _stacked(obj, dtype), None
    d = None if dtype is None else dtype_name(np.dtype(dtype), f"numpy.{name}'s result")
    r = obj._ref.as_array(d, None if copy is None else bool(copy), order, ndmin)
    if r is None and obj.ndim == 0 and not obj.is_array():  # a scalar: a new 0-d array
        r = obj._ref.as_array(d, True, order, ndmin)
    return obj if r is None else Traced(None, r, rank0="array")


def users_call():
    """Whether this thread is tracing and the call the calling function answers
    is the user's: NumPy's own modules and tinymlir's make arrays for
    themselves (`np.empty`), and those get NumPy's."""
    return bool(_state.contexts) and not _sys._getframe(2).f_globals.get("__name__", "").startswith(
        _LIBRARIES
    )


class _NdarrayType(type):
    """The metaclass of the stand-in for np.ndarray while tracing: calling it
    (np.ndarray(shape, dtype)) makes a traced array of zeros; isinstance and
    issubclass answer as for NumPy's ndarray."""

    # Only the stand-in itself: a class that a module imported while tracing
    # derives from it (numpy.ma's MaskedArray) is an ordinary ndarray subclass.
    def __call__(cls, *args, **kwargs):
        if cls is not _TracedNdarray:
            return type.__call__(cls, *args, **kwargs)
        if users_call():
            return _ndarray(_NDARRAY, *args, **kwargs)
        return _NDARRAY(*args, **kwargs)

    def __instancecheck__(cls, obj):
        if cls is not _TracedNdarray:
            return type.__instancecheck__(cls, obj)
        return isinstance(obj, _NDARRAY)

    def __subclasscheck__(cls, sub):
        if cls is not _TracedNdarray:
            return type.__subclasscheck__(cls, sub)
        return issubclass(sub, _NDARRAY)


_NDARRAY = np.ndarray


def _ndarray(orig, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
    if buffer is not None or strides is not None:
        raise TypeError(
            "tinymlir: np.ndarray(shape, dtype) with a buffer or strides is not "
            "traced (make the array with np.zeros or np.empty)"
        )
    return full_traced(shape, 0.0, dtype, "numpy.ndarray")


class _TracedNdarray(np.ndarray, metaclass=_NdarrayType):
    """np.ndarray while a function is traced (see _NdarrayType)."""


_IMPLS = {
    "zeros": _zeros,
    "empty": _zeros,
    "ones": _ones,
    "full": _full,
    "zeros_like": _like(0),
    "empty_like": _like(0),
    "ones_like": _like(1),
    "full_like": _full_like,
    "eye": _computed,
    "identity": _computed,
    "arange": _computed,
    "linspace": _linspace,
    "array": _array,
    "asarray": _array,
    "asanyarray": _array,
    "ascontiguousarray": _array,
}

_ORIGINALS = {name: getattr(np, name) for name in _IMPLS}
_ORIGINALS["ndarray"] = np.ndarray


def _wrapper(name):
    orig, impl = _ORIGINALS[name], _IMPLS[name]

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if users_call():
            return impl(orig, *args, **kwargs)
        return orig(*args, **kwargs)

    wrapper._tinymlir_original = orig  # what NumPy's dispatch passes to __array_function__
    return wrapper


_LIBRARIES = ("numpy.", "tinymlir.")
_WRAPPERS = {name: _wrapper(name) for name in _IMPLS}
_WRAPPERS["ndarray"] = _TracedNdarray


def _index_tricks_getitem():
    """NumPy's own AxisConcatenator.__getitem__ (np.r_[...], np.c_[...]), its
    np.array the one above, which takes traced arrays."""
    f = type(np.r_).__mro__[1].__getitem__  # AxisConcatenator's
    scope = dict(_sys.modules[f.__module__].__dict__)
    scope["array"] = functools.partial(_array, _ORIGINALS["array"])
    return types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__)


class _Concatenator:
    """np.r_ and np.c_ while tracing: an index holding traced arrays runs
    NumPy's own code over them (slices, scalars, directives, ndmin, dtype)."""

    _getitem = staticmethod(_index_tricks_getitem())

    def __init__(self, orig):
        self._orig = orig

    def __getitem__(self, key):
        if users_call() and _has_traced(key if isinstance(key, tuple) else (key,)):
            return self._getitem(self._orig, key)
        return self._orig[key]

    def __len__(self):
        return 0


for _name in ("r_", "c_"):
    _ORIGINALS[_name] = getattr(np, _name)
    _WRAPPERS[_name] = _Concatenator(_ORIGINALS[_name])


class Rebinding:
    """Functions of `module` replaced by their wrappers while any trace runs:
    the module's attributes, and the traced function's globals and closure
    cells bound to them. Globals are counted, so that traces running at once
    or nested undo only their own."""

    def __init__(self, module, originals, wrappers):
        self._module, self._originals, self._wrappers = module, originals, wrappers
        self._by_id = {id(f): name for name, f in originals.items()}
        self._lock = threading.Lock()
        self._active = 0  # traces that installed the wrappers (and still run)
        self._rebound = {}  # (id of a globals dict, name) -> [globals dict, count, its name]

    def install(self, fn_globals=None, closure=None):
        """Starts intercepting (one trace begins); returns what `uninstall` takes."""
        with self._lock:
            if self._active == 0:
                for name, w in self._wrappers.items():
                    setattr(self._module, name, w)
            self._active += 1
            names = []
            for key, value in list((fn_globals or {}).items()):
                name, at = self._by_id.get(id(value)), (id(fn_globals), key)
                if name is not None and value is self._originals[name]:
                    entry = self._rebound.setdefault(at, [fn_globals, 0, name])
                    entry[1] += 1
                    fn_globals[key] = self._wrappers[name]
                    names.append(key)
                elif at in self._rebound and value is self._wrappers[self._rebound[at][2]]:
                    self._rebound[at][1] += 1
                    names.append(key)
            cells = []
            for cell in closure or ():
                try:
                    value = cell.cell_contents
                except ValueError:  # not bound yet
                    continue
                name = self._by_id.get(id(value))
                if name is not None and value is self._originals[name]:
                    cell.cell_contents = self._wrappers[name]
                    cells.append((cell, name))
            return fn_globals, names, cells

    def uninstall(self, token):
        """Undoes one install."""
        fn_globals, names, cells = token
        with self._lock:
            for cell, name in cells:
                if cell.cell_contents is self._wrappers[name]:
                    cell.cell_contents = self._originals[name]
            for key in names:
                entry = self._rebound.get((id(fn_globals), key))
                if entry is None:
                    continue
                entry[1] -= 1
                if entry[1] == 0:
                    del self._rebound[(id(fn_globals), key)]
                    if fn_globals.get(key) is self._wrappers[entry[2]]:
                        fn_globals[key] = self._originals[entry[2]]
            self._active -= 1
            if self._active == 0:
                for name, orig in self._originals.items():
                    setattr(self._module, name, orig)


_rebinding = Rebinding(np, _ORIGINALS, _WRAPPERS)
install, uninstall = _rebinding.install, _rebinding.uninstall

layers.install, layers.uninstall = install, uninstall
