"""Traced values: a Python face over the C++ core's Tensor graph.

A ``Traced`` wraps a ``_tinymlir.Tensor`` (a node of the C++ graph). Its
operators, methods and NumPy's two dispatch protocols (``__array_ufunc__`` and
``__array_function__``) each call one function of the C++ frontend, which
checks shapes, broadcasts and promotes (NumPy 2, NEP 50). Anything that cannot
be traced raises while tracing, naming what was called.
"""

from __future__ import annotations

import numbers
import operator
import threading

import numpy as np

from . import _tinymlir as _core

_SUPPORTED = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
              np.dtype(np.int32): "int32", np.dtype(np.bool_): "bool"}


class TracingError(TypeError):
    """Something that cannot be traced was used on a traced value."""


def dtype_name(dtype, what="an array") -> str:
    name = _SUPPORTED.get(np.dtype(dtype))
    if name is None:
        raise TypeError(f"{what} has dtype {np.dtype(dtype)}; tinymlir supports float32, "
                        "float64, int32 and bool (convert with .astype)")
    return name


# --- The tracing context of this thread ------------------------------------------

class _State(threading.local):
    def __init__(self):
        self.contexts = []


_state = _State()


class TraceContext:
    """Active while a function is traced on this thread. Collects hidden inputs:
    constant index arrays used for gathers (gather ids must be runtime inputs so
    that they are checked against the table before each call)."""

    def __init__(self, first_hidden_index: int):
        self.first_hidden = first_hidden_index
        self.hidden = []          # arrays, in placeholder order
        self.hidden_tensors = []  # their placeholders

    def hidden_input(self, array: np.ndarray) -> "Traced":
        index = self.first_hidden + len(self.hidden)
        t = _core.placeholder(index, list(array.shape), dtype_name(array.dtype))
        self.hidden.append(array)
        self.hidden_tensors.append(t)
        return Traced(t)

    def __enter__(self):
        _core.trace_enter()
        _state.contexts.append(self)
        return self

    def __exit__(self, *exc):
        _state.contexts.pop()
        _core.trace_exit()
        return False


def tracing() -> bool:
    return bool(_state.contexts)


def current_context() -> TraceContext | None:
    return _state.contexts[-1] if _state.contexts else None


# --- Conversions -----------------------------------------------------------------

def to_tensor(x, what="an operand"):
    """The C++ tensor for an operand: traced values as they are, Python numbers
    as weak scalars, NumPy scalars as strong typed scalars, NumPy arrays as
    captured constants (lifted to trailing inputs of the compiled function)."""
    if isinstance(x, Traced):
        return x._t
    if isinstance(x, (bool, np.bool_)):  # bool is the lowest kind: it takes the other side's
        return _core.typed_scalar(float(x), "bool")
    if isinstance(x, np.generic):  # before int/float: np.float64 subclasses float
        return _core.typed_scalar(float(x), dtype_name(x.dtype, f"{what} (a NumPy scalar)"))
    if isinstance(x, int):  # beyond int32, an error where it meets int32 (as NumPy's)
        try:
            return _core.weak_scalar(float(x), True)
        except OverflowError:
            raise OverflowError(f"Python integer {x} is out of bounds for float64") from None
    if isinstance(x, float):
        return _core.weak_scalar(x, False)
    if isinstance(x, np.ndarray):
        x = plain_array(x, what)
        dtype_name(x.dtype, f"{what} (a captured array)")
        if x.size == 0:
            raise ValueError(f"{what} is an array with zero elements: shape {x.shape}")
        if not x.flags.c_contiguous or not x.flags.aligned:
            # Read at every call as contiguous ones are: an input made
            # contiguous by each call (a copy at trace time would go stale).
            context = current_context()
            if context is not None:
                return context.hidden_input(x)._t
            x = np.ascontiguousarray(x)
        return _core.constant(x)
    if isinstance(x, (list, tuple)):
        return to_tensor(np.asarray(x), what)
    raise TypeError(f"{what} of type {type(x).__name__} cannot be used in a traced "
                    "computation (arrays, traced values and numbers can)")


def plain_array(x: np.ndarray, what) -> np.ndarray:
    """`x` as a plain ndarray: subclasses whose operators or values differ
    (np.matrix's * is a product, a masked array's masked values) are refused;
    others (np.memmap) are viewed as ndarray."""
    if isinstance(x, (np.matrix, np.ma.MaskedArray)):
        raise TypeError(f"{what} is a {type(x).__module__}.{type(x).__name__}, whose semantics "
                        "tinymlir does not follow: pass np.asarray(x) (or x.filled() for a masked "
                        "array)")
    return x if type(x) is np.ndarray else x.view(np.ndarray)


def _wrap(t):
    return Traced(t)


def _axis_tuple(axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        axes = [operator.index(a) for a in axis]
    else:
        axes = [operator.index(axis)]
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return sorted(out)


def _reduce(name, x, axis=None, keepdims=False):
    t = to_tensor(x)
    if name in ("mean", "var") and t.dtype in ("int32", "bool"):
        t = _core.cast(t, "float64")  # NumPy's: int32 values averaged in float64
        x = Traced(t)
    fn = getattr(_core, name)
    if (name in ("sum", "prod", "max", "min", "any", "all") and not t.shape and axis in (0, -1)
            and isinstance(axis, (numbers.Integral, np.integer))):
        axis = None  # NumPy's ufunc reductions take axis 0 or -1 of a rank-0 array as all of it
    if axis is None or not isinstance(axis, (tuple, list)):
        return _wrap(fn(t, None if axis is None else operator.index(axis), bool(keepdims)))
    axes = _axis_tuple(axis, len(t.shape))
    if len(axes) == 1:
        return _wrap(fn(t, axes[0], bool(keepdims)))
    if len(axes) == 0:  # NumPy: each value is reduced alone
        if name in ("sum", "prod", "max", "min"):
            return _wrap(t)
        if name in ("any", "all"):
            return _wrap(_core.cast(t, "bool"))
        mean = Traced(t) / 1  # int32 means are float64, as NumPy's
        if name == "mean":
            return mean
        centered = mean - mean  # 0, or nan where the value is inf or nan
        return centered * centered
    if name in ("sum", "prod", "max", "min", "any", "all"):
        r = t
        for a in reversed(axes):  # highest first, so the lower axes keep their numbers
            r = fn(r, a, True)
        if not keepdims:
            r = _core.reshape(r, [d for i, d in enumerate(t.shape) if i not in axes])
        return _wrap(r)
    count = 1
    for a in axes:
        count *= t.shape[a]
    if name == "mean":
        return _reduce("sum", x, axes, keepdims) / count
    # var: centered, as the C++ core and NumPy compute it
    centered = Traced(t) - _reduce("mean", x, axes, True)
    return _reduce("mean", centered * centered, axes, keepdims)


# --- Indexing --------------------------------------------------------------------

def _getitem(x: "Traced", index):
    if not isinstance(index, tuple):
        index = (index,)
    shape = list(x.shape)
    # Expand the ellipsis.
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(i is Ellipsis for i in index):
        k = next(n for n, i in enumerate(index) if i is Ellipsis)
        used = sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:k] + (slice(None),) * (len(shape) - used) + index[k + 1:]
    if not index:  # a[()], or a[...] of a rank-0 array
        return x
    # NumPy takes a range as an integer array: ranges stand for slices only
    # where that gives the same (one range, and no integer index).
    ranges = sum(1 for i in index if isinstance(i, range))
    if ranges and (ranges > 1 or any(isinstance(i, (numbers.Integral, np.integer)) for i in index)):
        raise IndexError(f"tinymlir: ranges index as integer arrays (advanced indexing): use one "
                         f"range and no integer index, or slices, not {index!r}")
    # A gather: table[ids] with a rank-2 table and rank-1 int ids.
    first = index[0]
    for i in index:
        if ((isinstance(i, Traced) and i._t.dtype == "bool")
                or (isinstance(i, np.ndarray) and i.dtype == np.bool_)
                or (isinstance(i, list) and i and all(isinstance(v, (bool, np.bool_)) for v in i))):
            raise IndexError("tinymlir cannot index with a boolean mask: the result's shape "
                             "depends on the data; use np.where(mask, x, fill) instead")
    if isinstance(first, (list, np.ndarray, Traced)) and not isinstance(first, bool):
        rest = index[1:]
        if any(not (isinstance(r, slice) and r == slice(None)) for r in rest):
            raise IndexError("tinymlir: an index array must be the only index (table[ids], "
                             "optionally followed by ':')")
        return _gather(x, first)
    if sum(1 for i in index if i is not None) > len(shape):
        raise IndexError(f"too many indices for a traced array of rank {len(shape)}")
    begin, end, steps, out_shape, flips, axis = [], [], [], [], [], 0
    for i in index:
        if i is None:
            out_shape.append(1)
            continue
        n = shape[axis]
        if isinstance(i, range):
            # An integer array to NumPy: the same as a slice where every entry
            # is in [0, n); otherwise refused by name.
            if len(i) == 0 or not -n <= min(i[0], i[-1]) <= max(i[0], i[-1]) < n:
                bad = next((k for k in i if not -n <= k < n), None)  # NumPy names the first
                raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}"
                                 if bad is not None else f"tinymlir: the range {i} is empty")
            if min(i[0], i[-1]) < 0:
                raise IndexError(f"tinymlir: {i} indexes as an integer array with negative "
                                 "entries: use non-negative ranges or slices")
        if isinstance(i, (slice, range)):
            if isinstance(i, range):
                start, step, count = i[0], i.step, len(i)
            else:
                start, stop, step = i.indices(n)
                count = len(range(start, stop, step))
            if count == 0:
                raise IndexError(f"tinymlir: the slice {i} of axis {axis} (size {n}) is empty")
            if step < 0:  # the axis reversed, then a slice with the positive step
                flips.append(axis)
                start, step = n - 1 - start, -step
            begin.append(start)
            end.append(start + (count - 1) * step + 1)
            steps.append(step)
            out_shape.append(count)
        elif isinstance(i, (numbers.Integral, np.integer)) and not isinstance(i, (bool, np.bool_)):
            k = operator.index(i)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            k %= n
            begin.append(k)
            end.append(k + 1)
            steps.append(1)
        elif isinstance(i, Traced):
            raise IndexError("tinymlir: a traced index must be the only index (table[ids])")
        else:
            raise IndexError(f"tinymlir cannot index a traced array with {type(i).__name__} "
                             f"{i!r} (static ints, slices, ranges, or int ids for a gather)")
        axis += 1
    out_shape.extend(shape[axis:])
    t = x._t
    if flips:
        t = _core.flip(t, flips)
    if begin:
        t = _core.slice(t, begin, end, steps if any(s != 1 for s in steps) else [])
    if list(t.shape) != out_shape:
        t = _core.reshape(t, out_shape) if out_shape else _core.reshape(t, [])
    return Traced(t)


def index_input(ids, op: str) -> "Traced":
    """Rank-1 integer positions as a traced int32 input: a traced value as it
    is, constants as a hidden input (positions are checked before each call)."""
    if isinstance(ids, Traced):
        return ids
    array = np.asarray(ids)
    if array.dtype.kind not in "iu" or array.ndim != 1:
        raise IndexError(f"tinymlir: index arrays must be rank-1 integers, got {array.dtype} "
                         f"with shape {array.shape}")
    if array.size and (array.min() < -2**31 or array.max() >= 2**31):
        raise IndexError("tinymlir: index out of the int32 range")
    ids32 = np.ascontiguousarray(array, dtype=np.int32)
    ctx = current_context()
    if ctx is None:
        raise TypeError(f"tinymlir: {op} is only traced inside a jitted function")
    return ctx.hidden_input(ids32)


def _gather(table: "Traced", ids):
    return Traced(_core.gather(table._t, index_input(ids, "a gather")._t))


# --- The traced value ------------------------------------------------------------

def _binary(fn, swap=False):
    def method(self, other):
        if isinstance(other, (str, bytes, dict, set)) or other is None:
            return NotImplemented
        a, b = (other, self) if swap else (self, other)
        return Traced(fn(to_tensor(a), to_tensor(b)))
    return method


def _logical(fn, what, swap=False):
    """&, |, ^ of bools are NumPy's logical operations; of integers, bitwise
    ones, which tinymlir does not have."""
    def method(self, other):
        if isinstance(other, (str, bytes, dict, set)) or other is None:
            return NotImplemented
        a, b = (other, self) if swap else (self, other)
        ta, tb = to_tensor(a), to_tensor(b)
        if ta.dtype != "bool" or tb.dtype != "bool":
            raise TracingError(f"tinymlir traces {what} on bool values only (a logical operation), "
                               f"got {ta.dtype} and {tb.dtype}: bitwise operations on integers "
                               "are not supported")
        return Traced(fn(ta, tb))
    return method


def _refuse(what):
    def method(self, *args, **kwargs):
        raise TracingError(f"tinymlir cannot trace {what} on a traced value")
    return method


class Traced:
    """A value being traced: shape and dtype are known, its data is not."""

    __slots__ = ("_t", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, tensor):
        self._t = tensor

    # Types.
    @property
    def shape(self):
        return self._t.shape

    @property
    def dtype(self):
        return np.dtype(self._t.dtype)

    @property
    def ndim(self):
        return self._t.ndim

    @property
    def size(self):
        n = 1
        for d in self._t.shape:
            n *= d
        return n

    def __len__(self):
        if not self._t.shape:
            raise TypeError("len() of a rank-0 traced array")
        return self._t.shape[0]

    def __repr__(self):
        return f"Traced(shape={self.shape}, dtype={self._t.dtype})"

    # Arithmetic.
    __add__ = _binary(_core.add)
    __radd__ = _binary(_core.add, swap=True)
    __sub__ = _binary(_core.subtract)
    __rsub__ = _binary(_core.subtract, swap=True)
    __mul__ = _binary(_core.multiply)
    __rmul__ = _binary(_core.multiply, swap=True)
    __truediv__ = _binary(_core.divide)
    __rtruediv__ = _binary(_core.divide, swap=True)
    __pow__ = _binary(_core.pow)
    __rpow__ = _binary(_core.pow, swap=True)
    __matmul__ = _binary(_core.matmul)
    __rmatmul__ = _binary(_core.matmul, swap=True)

    def __neg__(self):
        return Traced(_core.negative(self._t))

    def __pos__(self):
        return self

    def __abs__(self):
        return Traced(_core.abs(self._t))

    __floordiv__ = __rfloordiv__ = _refuse("// (floor division)")
    __mod__ = __rmod__ = _refuse("% (modulo)")
    __and__ = _logical(_core.logical_and, "&")
    __rand__ = _logical(_core.logical_and, "&", swap=True)
    __or__ = _logical(_core.logical_or, "|")
    __ror__ = _logical(_core.logical_or, "|", swap=True)
    __xor__ = _logical(_core.logical_xor, "^")
    __rxor__ = _logical(_core.logical_xor, "^", swap=True)

    def __invert__(self):
        if self._t.dtype != "bool":
            raise TracingError(f"tinymlir traces ~ on bool values only (logical not), got "
                               f"{self._t.dtype}: bitwise operations on integers are not supported")
        return Traced(_core.logical_not(self._t))

    # Comparisons: bool results, as NumPy's (Python's == falls back to
    # identity for None and other objects).
    __lt__ = _binary(_core.less)
    __le__ = _binary(_core.less_equal)
    __gt__ = _binary(_core.greater)
    __ge__ = _binary(_core.greater_equal)
    __eq__ = _binary(_core.equal)
    __ne__ = _binary(_core.not_equal)
    __hash__ = object.__hash__

    def __setitem__(self, key, value):
        raise TracingError("tinymlir cannot trace item assignment: traced values are immutable; "
                           "build a new value instead")

    def __bool__(self):
        raise TypeError(
            "the truth value of a traced array is not known while tracing: data-dependent "
            "control flow (if/while on array values) cannot be compiled; branch on static "
            "values (shapes, Python numbers, static keyword arguments) instead")

    def __float__(self):
        raise TypeError("a traced array has no value while tracing: float() cannot be traced")

    __int__ = __index__ = __complex__ = __float__

    def __iter__(self):
        if not self._t.shape:
            raise TypeError("iteration over a rank-0 traced array")
        return (self[i] for i in range(self._t.shape[0]))

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "a traced array cannot be converted to a NumPy array: its values are not known "
            "while tracing (a NumPy function that is not traced, or np.asarray, was called on "
            "it)")

    def __getitem__(self, index):
        return _getitem(self, index)

    # Methods, NumPy style.
    @property
    def T(self):
        return Traced(_core.transpose(self._t, list(range(self.ndim))[::-1]))

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("mT needs rank 2 or more")
        perm = list(range(self.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return Traced(_core.transpose(self._t, perm))

    def reshape(self, *shape, order="C"):
        if order != "C":
            raise ValueError("tinymlir reshapes in C order only")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        return Traced(_core.reshape(self._t, [operator.index(d) for d in shape]))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        if len(axes) == 0 or axes == (None,):
            axes = list(range(self.ndim))[::-1]
        return Traced(_core.transpose(self._t, [operator.index(a) for a in axes]))

    def astype(self, dtype, copy=True):
        return Traced(_core.cast(self._t, dtype_name(dtype, "astype's dtype")))

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        _no_out("sum", out)
        return _reduce("sum", in_dtype(self, dtype, "sum"), axis, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        _no_out("prod", out)
        return _reduce("prod", in_dtype(self, dtype, "prod"), axis, keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        _no_out("max", out)
        return _reduce("max", self, axis, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        _no_out("min", out)
        return _reduce("min", self, axis, keepdims)

    def any(self, axis=None, out=None, keepdims=False):
        _no_out("any", out)
        return _reduce("any", self, axis, keepdims)

    def all(self, axis=None, out=None, keepdims=False):
        _no_out("all", out)
        return _reduce("all", self, axis, keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        _no_out("mean", out)
        return _reduce("mean", in_dtype(self, dtype, "mean"), axis, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        _no_out("var", out)
        from ._numpy import variance
        return variance(in_dtype(self, dtype, "var"), axis, keepdims, ddof)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return np.sqrt(self.var(axis, dtype, out, ddof, keepdims))  # as NumPy's

    def round(self, decimals=0, out=None):
        return np.round(self, decimals, out=out)

    def clip(self, min=None, max=None, out=None, **kwargs):
        return np.clip(self, min, max, out=out, **kwargs)

    def flatten(self, order="C"):
        return self.reshape(-1, order=order)

    ravel = flatten

    def copy(self, order="C"):
        return self  # traced values are never written in place

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from ._numpy import array_ufunc
        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from ._numpy import array_function
        return array_function(func, types, args, kwargs)


def _no_out(name, out):
    if out is not None:
        raise TracingError(f"tinymlir cannot trace {name}(out=...): traced values are immutable")


def in_dtype(x, dtype, name):
    """A reduction's dtype= argument: the operand cast first, as NumPy's
    accumulator of that dtype computes; means and variances in a float type."""
    if dtype is None:
        return x
    if name in ("mean", "var", "std") and np.dtype(dtype).kind != "f":
        raise TracingError(f"tinymlir traces {name}(dtype=...) with a float dtype only, got "
                           f"{np.dtype(dtype)}")
    return x.astype(dtype)
