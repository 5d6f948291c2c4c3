"""Traced values: a Python face over the C++ core's Tensor graph.

A ``Traced`` wraps a ``_tinymlir.Tensor`` (a node of the C++ graph). Its
operators, methods and NumPy's two dispatch protocols (``__array_ufunc__`` and
``__array_function__``) each call one function of the C++ frontend, which
checks shapes, broadcasts and promotes (NumPy 2, NEP 50). Anything that cannot
be traced raises while tracing, naming what was called.
"""

from __future__ import annotations

import functools
import numbers
import operator
import threading

import numpy as np

from . import _tinymlir as _core

_arange = np.arange  # NumPy's own, also while creation functions are traced (_creation)
_NDARRAY = np.ndarray  # likewise: np.ndarray is a stand-in while a trace runs
_ = np.ma.MaskedArray  # numpy.ma loads lazily: not first while a trace runs (plain_array)
_ = np.random.RandomState  # likewise numpy.random (its functions are refused in traces)

#: Every dtype tinymlir has (dtypes.def), by NumPy's dtype.
_SUPPORTED = {
    np.dtype(name): name
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
}


class TracingError(TypeError):
    """Something that cannot be traced was used on a traced value."""


class UFuncCastingError(TypeError):
    """An in-place ufunc whose result cannot be cast to its output by the
    same-kind rule (NumPy raises its UFuncTypeError, also a TypeError)."""


def dtype_name(dtype, what="an array") -> str:
    name = _SUPPORTED.get(np.dtype(dtype))
    if name is None:
        raise TypeError(
            f"{what} has dtype {np.dtype(dtype)}; tinymlir supports bool, int8 to "
            "int64, uint8 to uint64, float16 to float64, complex64 and complex128 "
            "(convert with .astype)"
        )
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

    def __init__(self, first_hidden_index: int, fn=None):
        self.first_hidden = first_hidden_index
        # the traced function's globals and closure (from numpy import zeros)
        self.fn_scope = (getattr(fn, "__globals__", None), getattr(fn, "__closure__", None))
        self.hidden = []  # arrays, in placeholder order
        self.hidden_tensors = []  # their placeholders

    def hidden_input(self, array: np.ndarray) -> "Traced":
        index = self.first_hidden + len(self.hidden)
        t = _core.placeholder(index, list(array.shape), dtype_name(array.dtype))
        self.hidden.append(array)
        self.hidden_tensors.append(t)
        return Traced(t)

    def __enter__(self):
        from . import _creation

        self._hooks = _creation.install(*self.fn_scope)
        _core.trace_enter()
        _state.contexts.append(self)
        return self

    def __exit__(self, *exc):
        from . import _creation

        _state.contexts.pop()
        _core.trace_exit()
        _creation.uninstall(self._hooks)
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
        name = dtype_name(x.dtype, f"{what} (a NumPy scalar)")
        if x.dtype.kind in "iu":
            return _core.typed_integer(int(x), name)
        if x.dtype.kind == "c":
            return _core.typed_scalar(float(x.real), name, float(x.imag))
        return _core.typed_scalar(float(x), name)
    if isinstance(x, int):  # out of a dtype's range, an error where it meets it (as NumPy's)
        if not -(2**63) <= x < 2**64:
            raise OverflowError(f"Python integer {x} out of bounds for int64")
        return _core.weak_integer(x)
    if isinstance(x, float):
        return _core.weak_scalar(x, False)
    if isinstance(x, complex):
        return _core.weak_complex_scalar(x.real, x.imag)
    if isinstance(x, np.ndarray):
        x = plain_array(x, what)
        dtype_name(x.dtype, f"{what} (a captured array)")
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
    raise TypeError(
        f"{what} of type {type(x).__name__} cannot be used in a traced "
        "computation (arrays, traced values and numbers can)"
    )


def plain_array(x: np.ndarray, what) -> np.ndarray:
    """`x` as a plain ndarray: subclasses whose operators or values differ
    (np.matrix's * is a product, a masked array's masked values) are refused;
    others (np.memmap) are viewed as ndarray."""
    if isinstance(x, (np.matrix, np.ma.MaskedArray)):
        raise TypeError(
            f"{what} is a {type(x).__module__}.{type(x).__name__}, whose semantics "
            "tinymlir does not follow: pass np.asarray(x) (or x.filled() for a masked "
            "array)"
        )
    return x if type(x) is _NDARRAY else x.view(_NDARRAY)


def _wrap(t):
    return Traced(t)


def known_value(x: "Traced"):
    """The NumPy value of an array made inside the traced function from static
    values alone (np.arange(n), np.zeros(3)) while nothing has written to it:
    used where a value is needed while tracing (an index, a loop over it)."""
    buf = x._buf
    if buf.known is None or x._view:
        return None
    if callable(buf.known):
        buf.known = buf.known()
    return buf.known


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
    if name in ("mean", "var") and np.dtype(t.dtype).kind in "biu":
        t = _core.cast(t, "float64")  # NumPy's: integers averaged in float64
        x = Traced(t)
    fn = getattr(_core, name)
    if (
        name in ("sum", "prod", "max", "min", "any", "all")
        and not t.shape
        and axis in (0, -1)
        and isinstance(axis, (numbers.Integral, np.integer))
    ):
        axis = None  # NumPy's ufunc reductions take axis 0 or -1 of a rank-0 array as all of it
    if axis is None or not isinstance(axis, (tuple, list)):
        return _wrap(fn(t, None if axis is None else operator.index(axis), bool(keepdims)))
    axes = _axis_tuple(axis, len(t.shape))
    if len(axes) == 1:
        return _wrap(fn(t, axes[0], bool(keepdims)))
    if len(axes) == 0:  # NumPy: each value is reduced alone
        if name in ("sum", "prod") and np.dtype(t.dtype).kind in "biu":  # in int64 or uint64
            return _wrap(_core.cast(t, "uint64" if np.dtype(t.dtype).kind == "u" else "int64"))
        if name in ("sum", "prod", "max", "min"):
            return _wrap(t)
        if name in ("any", "all"):
            return _wrap(_core.cast(t, "bool"))
        mean = Traced(t) / 1  # int32 means are float64, as NumPy's
        if name == "mean":
            return mean
        centered = mean - mean  # 0, or nan where the value is inf or nan
        if centered.dtype.kind == "c":  # |x - mean|^2, real
            return centered.real * centered.real + centered.imag * centered.imag
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
    # var: centered, as the C++ core and NumPy compute it (of |x - mean| for complex x)
    centered = Traced(t) - _reduce("mean", x, axes, True)
    if centered.dtype.kind == "c":
        squares = centered.real * centered.real + centered.imag * centered.imag
    else:
        squares = centered * centered
    return _reduce("mean", squares, axes, keepdims)


# --- Indexing --------------------------------------------------------------------
#
# An index is turned into NumPy's plan for it: a basic index (ints, slices with
# any step, None, Ellipsis) is a chain of view steps, which reads and writes
# share; a boolean mask, int arrays and traced int scalars are the other kinds.


def _is_int(i):
    return isinstance(i, (numbers.Integral, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_mask(i):
    return (
        (isinstance(i, Traced) and i._t.dtype == "bool")
        or (isinstance(i, np.ndarray) and i.dtype == np.bool_)
        or (isinstance(i, list) and bool(i) and all(isinstance(v, (bool, np.bool_)) for v in i))
    )


def _expand(index, ndim):
    """The index as a tuple, its ellipsis expanded to whole slices."""
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(
        known_value(i) if isinstance(i, Traced) and known_value(i) is not None else i for i in index
    )
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(i is Ellipsis for i in index):
        k = next(n for n, i in enumerate(index) if i is Ellipsis)
        used = sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:k] + (slice(None),) * max(ndim - used, 0) + index[k + 1 :]
    return index


def _basic_steps(shape, index):
    """The view steps of a basic index: a flip of the reversed axes, a strided
    slice, and a reshape dropping the int axes and adding the None ones. The
    second result says whether every axis was taken by an int (NumPy gives a
    scalar, a copy, not a view)."""
    if sum(1 for i in index if i is not None) > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, but "
            f"{sum(1 for i in index if i is not None)} were indexed"
        )
    begin, end, steps, out_shape, flips, axis, ints = [], [], [], [], [], 0, 0
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
                raise IndexError(
                    f"index {bad} is out of bounds for axis {axis} with size {n}"
                    if bad is not None
                    else f"tinymlir: the range {i} is empty"
                )
            if min(i[0], i[-1]) < 0:
                raise IndexError(
                    f"tinymlir: {i} indexes as an integer array with negative "
                    "entries: use non-negative ranges or slices"
                )
        if isinstance(i, (slice, range)):
            if isinstance(i, range):
                start, step, count = i[0], i.step, len(i)
            else:
                start, stop, step = i.indices(n)
                count = len(range(start, stop, step))
            if count == 0:  # an empty slice: shape 0 along the axis, as NumPy's
                begin.append(0)
                end.append(0)
                steps.append(1)
                out_shape.append(0)
                axis += 1
                continue
            if step < 0:  # the axis reversed, then a slice with the positive step
                flips.append(axis)
                start, step = n - 1 - start, -step
            begin.append(start)
            end.append(start + (count - 1) * step + 1)
            steps.append(step)
            out_shape.append(count)
        elif _is_int(i):
            k = operator.index(i)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            k %= n
            begin.append(k)
            end.append(k + 1)
            steps.append(1)
            ints += 1
        else:
            raise IndexError(
                f"tinymlir cannot index a traced array with {type(i).__name__} "
                f"{i!r} (ints, slices, ranges, None, Ellipsis, a boolean mask, int "
                "arrays or a traced int)"
            )
        axis += 1
    out_shape.extend(shape[axis:])
    plan = []
    if flips:
        plan.append(("flip", tuple(flips)))
    box = list(shape)
    for a, (lo, hi, st) in enumerate(zip(begin, end, steps)):
        box[a] = (hi - lo + st - 1) // st
    if box != list(shape):
        plan.append(
            ("slice", tuple(begin), tuple(end), tuple(steps) if any(k != 1 for k in steps) else ())
        )
    if box != out_shape:
        plan.append(("reshape", tuple(out_shape)))
    return plan, ints == len(shape) and ints > 0 and not any(i is None for i in index)


def _apply(step, t):
    kind = step[0]
    if kind == "flip":
        return _core.flip(t, list(step[1]))
    if kind == "slice":
        return _core.slice(t, list(step[1]), list(step[2]), list(step[3]))
    if kind == "reshape":
        return _core.reshape(t, list(step[1]))
    return _core.transpose(t, list(step[1]))


def _unapply(step, parent, value):
    """The parent of a view step with the view's elements replaced by `value`."""
    kind = step[0]
    if kind == "flip":
        return _core.flip(value, list(step[1]))
    if kind == "slice":
        return _core.slice_update(parent, list(step[1]), list(step[2]), list(step[3]), value)
    if kind == "reshape":
        return _core.reshape(value, list(parent.shape))
    return _core.transpose(value, [int(k) for k in np.argsort(step[1])])


def _contiguous(view):
    """Whether a view of a C-contiguous base is C-contiguous (NumPy's reshape
    of it is a view; otherwise a copy)."""
    for step in view:
        if step[0] in ("flip", "transpose"):
            return False
    return all(step[0] == "reshape" for step in view)


def replay_view(a, steps):
    """A traced view's steps (flips, strided slices, reshapes, transposes)
    applied by NumPy to the array `a`: NumPy's own view of it."""
    for step in steps:
        kind = step[0]
        if kind == "flip":
            a = np.flip(a, tuple(step[1]))
        elif kind == "slice":
            strides = list(step[3]) or [1] * len(step[1])
            a = a[tuple(slice(b, e, k) for b, e, k in zip(step[1], step[2], strides))]
        elif kind == "reshape":
            a = a.reshape(tuple(step[1]))
        else:
            a = a.transpose(tuple(step[1]))
    return a


def _positions(x):
    """The positions in its base's C order of each element of a traced array
    or view: its view steps replayed on the base's indices (views are static)."""
    base_shape = tuple(x._buf.t.shape)
    n = int(np.prod(base_shape, dtype=np.int64))
    return replay_view(_arange(n, dtype=np.int64).reshape(base_shape), x._view)


def _c_contiguous(x):
    """Whether a traced array or view is C-contiguous, as NumPy's flag says
    (then its reshape is a view): its elements consecutive in its base. Exact
    for bases of up to 4M elements; larger ones only through reshapes."""
    if _contiguous(x._view):
        return True
    if int(np.prod(x._buf.t.shape, dtype=np.int64)) > 1 << 22:
        return False
    p = _positions(x).reshape(-1)
    return bool(p.size <= 1 or np.all(np.diff(p) == 1))


def _getitem(x: "Traced", index):
    index = _expand(index, x.ndim)
    if not index:  # a[()], or a[...] of a rank-0 array: a view of all of it
        return x._view_of([])
    masks = [i for i in index if _is_mask(i)]
    if masks:
        return _masked_read(x, index)
    if any(isinstance(i, Traced) and i.ndim == 0 for i in index):
        return _dynamic_read(x, index)
    # NumPy takes a range as an integer array: ranges stand for slices only
    # where that gives the same (one range, and no integer index).
    ranges = sum(1 for i in index if isinstance(i, range))
    if ranges and (ranges > 1 or any(_is_int(i) for i in index)):
        raise IndexError(
            f"tinymlir: ranges index as integer arrays (advanced indexing): use one "
            f"range and no integer index, or slices, not {index!r}"
        )
    first = index[0]
    if (
        isinstance(first, Traced)
        and first._t.is_input
        and first.ndim == 1
        and first.dtype.kind in "iu"
        and x.ndim >= 1
        and all(_is_int(r) or r is None or r is Ellipsis or isinstance(r, slice) for r in index[1:])
    ):
        # table[ids, ...] with ids an argument (any integer dtype; negative ones
        # count from the end): the core's gather of the rows, ids checked before
        # each call, then the basic index of the other axes.
        table = (
            x._t
            if x.ndim == 2
            else _core.reshape(x._t, [x.shape[0], int(np.prod(x.shape[1:], dtype=np.int64))])
        )
        rows = _core.gather(table, first._t)
        if x.ndim != 2:
            rows = _core.reshape(rows, [first.shape[0]] + list(x.shape[1:]))
        rows = Traced(rows)
        return rows[(slice(None),) + tuple(index[1:])] if len(index) > 1 else rows
    if any(_computed(i) for i in index):
        return _computed_read(x, index)
    if any(isinstance(i, (list, np.ndarray, Traced)) for i in index):
        return _advanced_read(x, index)
    plan, scalar = _basic_steps(x.shape, index)
    view = x._view_of(plan)
    return view.copy() if scalar else view  # NumPy's a[i, j] is a scalar, not a view


def _setitem(x: "Traced", index, value):
    index = _expand(index, x.ndim)
    if isinstance(value, Masked):
        value = value._placed(index, x)
    masks = [i for i in index if _is_mask(i)]
    if masks:
        return _masked_write(x, index, value)
    if any(isinstance(i, Traced) and i.ndim == 0 for i in index):
        return _dynamic_write(x, index, value)
    if any(_computed(i) for i in index):
        return _computed_write(x, index, value)
    if any(isinstance(i, (list, np.ndarray, Traced)) for i in index):
        return _scatter(x, index, value)
    plan, _ = _basic_steps(x.shape, index)
    target = x._view_of(plan)
    if (
        isinstance(value, Traced)
        and value._buf is target._buf
        and value._view == target._view
        and value._seen == value._buf.version
    ):
        return  # a[i] op= v: the view was already updated in place
    target._assign(to_tensor(value, "the assigned value"))


def _broadcast_into(t, shape, what="input array"):
    """`t` broadcast to `shape` as NumPy's assignment does (leading size-1 axes dropped)."""
    tshape = list(t.shape)
    while len(tshape) > len(shape) and tshape[0] == 1:
        tshape.pop(0)
    try:
        ok = np.broadcast_shapes(tuple(tshape), tuple(shape)) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"could not broadcast {what} from shape {tuple(t.shape)} into shape {tuple(shape)}"
        )
    if list(t.shape) != tshape:
        t = _core.reshape(t, tshape)
    return t if list(t.shape) == list(shape) else _core.broadcast_to(t, list(shape))


# Masks whose result keeps a fixed shape: x[mask] = v, x[mask] op= v,
# x[mask] = f(x[mask]) and reductions of x[mask] are selections of the whole
# array; any other use of a masked read (its shape depends on the data) is
# refused by name.


def _mask_of(x, index):
    if len(index) != 1 and not all(isinstance(i, slice) and i == slice(None) for i in index[1:]):
        raise IndexError(
            "tinymlir: a boolean mask must be the whole index (x[mask], optionally followed by ':')"
        )
    mask = index[0]
    m = mask if isinstance(mask, Traced) else Traced(to_tensor(np.asarray(mask), "a mask"))
    if tuple(m.shape) != tuple(x.shape[: m.ndim]):
        axis = next((a for a, (p, q) in enumerate(zip(m.shape, x.shape)) if p != q), 0)
        raise IndexError(
            f"boolean index did not match indexed array along axis {axis}; size of "
            f"axis is {x.shape[axis] if axis < x.ndim else 0} but size of "
            f"corresponding boolean axis is {m.shape[axis]}"
        )
    if m.ndim < x.ndim:
        m = m.reshape(tuple(m.shape) + (1,) * (x.ndim - m.ndim))
    return m


def _masked_read(x, index):
    m = _mask_of(x, index)
    return Masked(x.copy(), m)


def _masked_write(x, index, value):
    m = _mask_of(x, index)
    if isinstance(value, Masked):
        if not _core.same_value(value._mask._t, m._t):
            raise IndexError(
                "tinymlir: x[mask] = y[other_mask] needs the same mask on both "
                "sides (the number of selected elements must agree)"
            )
        v = value._full._t
    else:
        v = to_tensor(value, "the assigned value")
        if v.shape and int(np.prod(v.shape)) != 1:
            raise TracingError(
                f"tinymlir: x[mask] = an array of shape {tuple(v.shape)} places values by the "
                "mask's count, which depends on the data; assign a scalar, or "
                "f(x[mask]) of the same mask"
            )
        v = _core.reshape(v, [])
    v = _core.cast(v, x._t.dtype)
    x._assign(_core.where(m._t, v, x._t))


class Masked:
    """x[mask] while its shape is unknown: the whole array and the mask. Elementwise
    operations apply to the whole array; reductions and assignment through the
    same mask select; anything that needs the shape is refused."""

    __slots__ = ("_full", "_mask")
    __array_priority__ = 1001

    def __init__(self, full, mask):
        self._full, self._mask = full, mask

    def _lift(self, other):
        if isinstance(other, Masked):
            if not _core.same_value(other._mask._t, self._mask._t):
                raise TracingError(
                    "tinymlir: boolean-mask reads with different masks cannot be "
                    "combined (their shapes depend on the data)"
                )
            return other._full
        t = to_tensor(other, "an operand of a masked read")
        if t.shape:
            raise TracingError(
                "tinymlir: a boolean-mask read combines only with scalars and "
                "reads of the same mask (its shape depends on the data)"
            )
        return other

    def _binary(fn, swap=False):
        def method(self, other):
            o = self._lift(other)
            return Masked(fn(o, self._full) if swap else fn(self._full, o), self._mask)

        return method

    __add__, __radd__ = _binary(operator.add), _binary(operator.add, True)
    __sub__, __rsub__ = _binary(operator.sub), _binary(operator.sub, True)
    __mul__, __rmul__ = _binary(operator.mul), _binary(operator.mul, True)
    __truediv__, __rtruediv__ = _binary(operator.truediv), _binary(operator.truediv, True)
    __pow__, __rpow__ = _binary(operator.pow), _binary(operator.pow, True)
    __floordiv__, __rfloordiv__ = _binary(operator.floordiv), _binary(operator.floordiv, True)
    __mod__, __rmod__ = _binary(operator.mod), _binary(operator.mod, True)
    __and__, __rand__ = _binary(operator.and_), _binary(operator.and_, True)
    __or__, __ror__ = _binary(operator.or_), _binary(operator.or_, True)
    __xor__, __rxor__ = _binary(operator.xor), _binary(operator.xor, True)
    __lt__, __le__ = _binary(operator.lt), _binary(operator.le)
    __gt__, __ge__ = _binary(operator.gt), _binary(operator.ge)
    __eq__, __ne__ = _binary(operator.eq), _binary(operator.ne)
    __hash__ = object.__hash__
    del _binary

    def __neg__(self):
        return Masked(-self._full, self._mask)

    def __abs__(self):
        return Masked(abs(self._full), self._mask)

    def astype(self, dtype, copy=True):
        return Masked(self._full.astype(dtype), self._mask)

    @property
    def dtype(self):
        return self._full.dtype

    def _placed(self, index, x):
        return self

    def _selected(self, fill):
        full = self._full
        return np.where(
            Traced(_core.broadcast_to(self._mask._t, list(full.shape))),
            full,
            np.asarray(fill, full.dtype) if full.dtype != np.bool_ else fill,
        )

    def _count(self):
        m = Traced(_core.broadcast_to(self._mask._t, list(self._full.shape)))
        return m.astype(np.float64).sum()

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        self._whole("sum", axis, out, keepdims)
        return (self if dtype is None else self.astype(dtype))._selected(0).sum()

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        self._whole("prod", axis, out, keepdims)
        return (self if dtype is None else self.astype(dtype))._selected(1).prod()

    def max(self, axis=None, out=None, keepdims=False):
        self._whole("max", axis, out, keepdims)
        return self._selected(_lowest(self.dtype)).max()

    def min(self, axis=None, out=None, keepdims=False):
        self._whole("min", axis, out, keepdims)
        return self._selected(_highest(self.dtype)).min()

    def any(self, axis=None, out=None, keepdims=False):
        self._whole("any", axis, out, keepdims)
        return self._selected(False).any()

    def all(self, axis=None, out=None, keepdims=False):
        self._whole("all", axis, out, keepdims)
        return self._selected(True).all()

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        self._whole("mean", axis, out, keepdims)
        x = self if dtype is None else self.astype(dtype)
        total = (
            x._selected(0).sum() if x.dtype.kind == "f" else x.astype(np.float64)._selected(0).sum()
        )
        count = self._count()
        return total / count.astype(total.dtype)

    def _whole(self, name, axis, out, keepdims):
        if axis is not None or out is not None or keepdims:
            raise TracingError(
                f"tinymlir: {name} of a boolean-mask read is traced over all of "
                "it only (no axis, out or keepdims)"
            )

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise TracingError(
                f"tinymlir: numpy.{ufunc.__name__}.{method} of a boolean-mask "
                "read cannot be traced (its shape depends on the data)"
            )
        return Masked(ufunc(*(self._lift(x) for x in inputs)), self._mask)

    def __array_function__(self, func, types, args, kwargs):
        name = getattr(func, "__name__", "")
        if (
            name in ("sum", "prod", "max", "amax", "min", "amin", "mean", "any", "all")
            and args
            and args[0] is self
        ):
            return getattr(self, {"amax": "max", "amin": "min"}.get(name, name))(
                *args[1:], **kwargs
            )
        raise TracingError(
            f"tinymlir: numpy.{name} of a boolean-mask read cannot be traced: "
            "its shape depends on the data (reductions over all of it, "
            "elementwise operations and x[mask] = f(x[mask]) can)"
        )

    def __getattr__(self, name):
        raise TracingError(
            f"tinymlir: .{name} of a boolean-mask read cannot be traced: its "
            "shape depends on the data (reductions over all of it, elementwise "
            "operations and x[mask] = f(x[mask]) can)"
        )

    def __len__(self):
        self.__getattr__("__len__")

    def __iter__(self):
        self.__getattr__("__iter__")

    def __getitem__(self, index):
        self.__getattr__("__getitem__")

    def __bool__(self):
        raise TypeError("the truth value of a traced array is not known while tracing")


def _lowest(dtype):
    if dtype.kind == "f":
        return -np.inf
    return False if dtype == np.bool_ else np.iinfo(dtype).min


def _highest(dtype):
    if dtype.kind == "f":
        return np.inf
    return True if dtype == np.bool_ else np.iinfo(dtype).max


# Traced int scalars as indices (hist[b] += 1): a position along one axis
# compared with every position, so that computed indices need no host check.
# NumPy's IndexError for one out of bounds cannot be raised inside the
# kernel: a read gives the lowest value and a write changes nothing there.


def _dynamic_axis(x, index):
    if len(index) > x.ndim:
        raise IndexError(
            f"too many indices for array: array is {x.ndim}-dimensional, but "
            f"{len(index)} were indexed"
        )
    if any(
        not (_is_int(i) or isinstance(i, slice) or (isinstance(i, Traced) and i.ndim == 0))
        for i in index
    ):
        raise IndexError("tinymlir: a traced int index mixes only with ints and slices")
    for i in index:
        if isinstance(i, Traced) and i.dtype.kind not in "iu":
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                "(`None`) and integer or boolean arrays are valid indices"
            )
    return [(a, i) for a, i in enumerate(index) if isinstance(i, Traced)]


@functools.lru_cache(maxsize=256)
def _iota(n, shape, dtype):
    """0..n-1 shaped `shape`, one read-only array per (n, shape, dtype): the
    same array is one constant input of a kernel (an unrolled loop of traced
    reads once made one input per read, thousands)."""
    a = _arange(n, dtype=dtype).reshape(shape)
    a.flags.writeable = False
    return a


def _position_mask(x, axis, i):
    """A bool tensor of x's rank: true at position i (wrapped if negative) of axis."""
    n = x.shape[axis]
    where = [1] * x.ndim
    where[axis] = n
    iota = Traced(_core.constant(_iota(n, tuple(where), np.int32)))
    k = i.astype(np.int32)
    k = np.where(k < 0, k + n, k)
    return iota == k


def _dynamic_target(x, index):
    """x[index] with the traced ints taken whole and the static ints as
    one-element slices (all axes kept); its hit mask; the axes to drop."""
    traced = _dynamic_axis(x, index)
    rest = []
    for a, i in enumerate(index):
        if isinstance(i, Traced):
            i = slice(None)
        elif _is_int(i):
            k, n = operator.index(i), x.shape[a]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {a} with size {n}")
            i = slice(k % n, k % n + 1)
        rest.append(i)
    plan, _ = _basic_steps(x.shape, tuple(rest))
    target = x._view_of(plan)
    hit = None
    for axis, i in traced:
        m = _position_mask(target, axis, i)
        hit = m if hit is None else hit & m
    drop = [a for a, i in enumerate(index) if not isinstance(i, slice)]
    return target, hit, drop


def _dynamic_read(x, index):
    target, hit, drop = _dynamic_target(x, index)
    axes = tuple(a for a in drop if isinstance(index[a], Traced))
    if x.dtype.kind == "c":
        # Complex numbers have no order: the one element plus zeros (exact,
        # but a part's -0.0 reads as 0.0).
        r = np.where(hit, target, x.dtype.type(0)).sum(axis=axes, keepdims=True)
    else:
        low = x.dtype.type(_lowest(x.dtype))  # a strong scalar, not a constant input
        picked = np.where(hit, target, low)  # exact: max of one element and the lowest values
        r = picked.max(axis=axes, keepdims=True)
    return r.reshape(tuple(d for a, d in enumerate(r.shape) if a not in drop))


def _dynamic_write(x, index, value):
    target, hit, drop = _dynamic_target(x, index)
    shape = [d for a, d in enumerate(target.shape) if a not in drop]
    v = _broadcast_into(to_tensor(value, "the assigned value"), shape)
    v = _core.reshape(
        _core.cast(v, x._t.dtype), [1 if a in drop else d for a, d in enumerate(target.shape)]
    )
    target._assign(_core.where(hit._t, v, target._t))


def _advanced_index(x, index):
    """Constant int arrays (and ints among them) of an advanced index, broadcast
    together, bounds-checked and wrapped as NumPy's: (per axis: a flat int64
    array or None for ':', the broadcast shape)."""
    arrays = []
    for a, i in enumerate(index):
        if isinstance(i, slice) and i == slice(None):
            arrays.append(None)
        elif isinstance(i, (list, tuple, np.ndarray)) or _is_int(i):
            arrays.append(np.asarray(i))
        elif isinstance(i, Traced):
            raise IndexError(
                "tinymlir: a traced int array indexes only a rank-2 table "
                "(table[ids]); use constant index arrays or traced int scalars"
            )
        else:
            raise IndexError(
                f"tinymlir: an index with int arrays takes ints, int arrays and ':' only, got {i!r}"
            )
    if len(arrays) > x.ndim:
        raise IndexError(
            f"too many indices for array: array is {x.ndim}-dimensional, but "
            f"{len(arrays)} were indexed"
        )
    arrays += [None] * (x.ndim - len(arrays))
    given = [a for a in arrays if a is not None]
    for a in given:
        if a.dtype.kind not in "iu" and not (a.size == 0 and a.dtype.kind == "f"):
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    try:
        shape = np.broadcast_shapes(*(a.shape for a in given))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing arrays could not be broadcast together with "
            f"shapes {' '.join(str(a.shape) for a in given)}"
        ) from None
    if int(np.prod(shape, dtype=np.int64)) == 0:
        raise IndexError("tinymlir: an empty index array (zero-size results are not traced)")
    flat = []
    for axis, a in enumerate(arrays):
        if a is None:
            flat.append(None)
            continue
        n = x.shape[axis]
        b = np.broadcast_to(a, shape).reshape(-1).astype(np.int64)
        bad = b[(b < -n) | (b >= n)]
        if bad.size:
            raise IndexError(f"index {bad[0]} is out of bounds for axis {axis} with size {n}")
        flat.append(np.where(b < 0, b + n, b))
    return flat, tuple(shape)


def _advanced_read(x, index):
    """x[int arrays, ':'...]: the indexed axes moved first and flattened into
    one, then one gather of rows (positions computed here, constants), placed
    where NumPy puts the broadcast shape. A copy, as NumPy's."""
    flat, shape = _advanced_index(x, index)
    axes = [a for a, f in enumerate(flat) if f is not None]
    whole = [a for a, f in enumerate(flat) if f is None]
    rows = np.ravel_multi_index([flat[a] for a in axes], [x.shape[a] for a in axes])
    t = x._t
    if axes + whole != list(range(x.ndim)):
        t = _core.transpose(t, axes + whole)
    rest = [x.shape[a] for a in whole]
    width = int(np.prod(rest, dtype=np.int64))
    table = _core.reshape(t, [int(np.prod([x.shape[a] for a in axes], dtype=np.int64)), width])
    picked = _core.gather(table, index_input(rows, "an indexed read")._t)
    r = Traced(_core.reshape(picked, list(shape) + rest))
    adjacent = axes[-1] - axes[0] + 1 == len(axes)
    if adjacent and axes[0] > 0:  # NumPy keeps the broadcast shape in place
        k, b = axes[0], len(shape)
        perm = list(range(b, b + k)) + list(range(b)) + list(range(b + k, b + len(rest)))
        r = r.transpose(perm).copy()
    return r


def _scatter(x, index, value):
    """x[int arrays...] = value: NumPy's advanced assignment (index_put); a
    repeated position takes the last value, as NumPy's buffered one does."""
    flat, shape = _advanced_index(x, index)
    axes = [a for a, f in enumerate(flat) if f is not None]
    whole = [x.shape[a] for a, f in enumerate(flat) if f is None]
    adjacent = axes[-1] - axes[0] + 1 == len(axes)
    at = axes[0] if adjacent else 0
    numpy_shape = whole[:at] + list(shape) + whole[at:]
    rows = whole[:at] + [int(np.prod(shape, dtype=np.int64))] + whole[at:]
    v = _broadcast_into(to_tensor(value, "the assigned value"), numpy_shape)
    v = _core.reshape(_core.cast(v, x._t.dtype), rows)
    ids = [index_input(f, "an indexed assignment")._t if f is not None else None for f in flat]
    x._assign(_core.index_put(x._t, ids, v))


def index_input(ids, op: str) -> "Traced":
    """Rank-1 integer positions as a traced int32 input: a traced value as it
    is, constants as a hidden input (positions are checked before each call)."""
    if isinstance(ids, Traced):
        return ids
    array = np.asarray(ids)
    if array.dtype.kind not in "iu" or array.ndim != 1:
        raise IndexError(
            f"tinymlir: index arrays must be rank-1 integers, got {array.dtype} "
            f"with shape {array.shape}"
        )
    if array.size and (array.min() < -(2**31) or array.max() >= 2**31):
        raise IndexError("tinymlir: index out of the int32 range")
    ids32 = np.ascontiguousarray(array, dtype=np.int32)
    ctx = current_context()
    if ctx is None:
        raise TypeError(f"tinymlir: {op} is only traced inside a jitted function")
    return ctx.hidden_input(ids32)


def _computed(i):
    """A traced int array of positions whose values are not known while tracing."""
    return isinstance(i, Traced) and i.ndim > 0 and known_value(i) is None


def _linear_positions(x, index):
    """An advanced index with computed int arrays (an argsort's, a label
    array's) among its arrays and ints, as NumPy takes it: the basic slices
    applied first (they commute with it), the arrays broadcast together and
    combined into one position among the indexed axes. Each is checked and
    wrapped on its own axis by the core's take (NumPy's IndexError when the
    kernel runs): one computed array alone by the take or put that uses it,
    several each by a take of its axis' positions. Returns the sliced array,
    the indexed axes, their positions (the broadcast shape) and where NumPy
    puts the broadcast axes in the result."""
    if any(i is None for i in index) or len(index) > x.ndim:
        raise IndexError(
            f"tinymlir: an advanced index with computed int arrays takes int arrays, ints "
            f"and slices only, at most one per axis; got {index!r}"
        )
    if any(isinstance(i, slice) and i != slice(None) for i in index):
        x = x[tuple(i if isinstance(i, slice) else slice(None) for i in index)]
        index = tuple(slice(None) if isinstance(i, slice) else i for i in index)
    axes = [a for a, i in enumerate(index) if not isinstance(i, slice)]
    arrays = []
    for a in axes:
        i = index[a]
        if not isinstance(i, Traced):
            i = np.asarray(i)
        if i.dtype.kind not in "iu" and not (isinstance(i, np.ndarray) and i.size == 0):
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        arrays.append(i)
    if len(arrays) == 1:  # x[..., ids, ...]: the take or put checks and wraps ids
        return x, axes, arrays[0], axes[0]
    shape = np.broadcast_shapes(*[tuple(i.shape) for i in arrays])
    position = None
    for a, i in zip(axes, arrays):
        n = x.shape[a]
        if isinstance(i, Traced):  # checked and wrapped by a take of 0..n-1
            positions = Traced(_core.constant(_iota(n, (n,), np.int64)))
            i = Traced(_core.take(positions._t, i._t))
        else:
            bad = (i < -n) | (i >= n)
            if bad.any():
                raise IndexError(
                    f"index {i[bad].flat[0]} is out of bounds for axis {a} with size {n}"
                )
            i = np.where(i < 0, i + n, i).astype(np.int64)
        position = i if position is None else position * n + i
    position = np.broadcast_to(position, shape)
    adjacent = axes == list(range(axes[0], axes[-1] + 1))
    return x, axes, position, axes[0] if adjacent else 0


def _indexed_rows(x, axes):
    """x with its indexed axes moved first and merged into one, as the table
    whose rows the take and put address; and the other axes."""
    rest = [a for a in range(x.ndim) if a not in axes]
    perm = axes + rest
    t = _core.transpose(x._t, perm) if perm != list(range(x.ndim)) else x._t
    if len(axes) > 1:
        count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        t = _core.reshape(t, [count] + [x.shape[a] for a in rest])
    return t, rest, perm


def _computed_read(x, index):
    """x[...] with computed int arrays among its indices: one take. A copy,
    shaped as NumPy's (the broadcast axes in place where adjacent, else first)."""
    x, axes, position, at = _linear_positions(x, index)
    t, rest, _ = _indexed_rows(x, axes)
    r = _core.take(t, to_tensor(position))  # position.shape + rest
    q = position.ndim
    if at:  # the broadcast axes where the indexed ones were
        r = _core.transpose(
            r, [q + j for j in range(at)] + list(range(q)) + [q + j for j in range(at, len(rest))]
        )
    return Traced(r)


def _computed_write(x, index, value):
    """x[...] = value with computed int arrays among its indices: one put (in
    order: a repeated position takes the last value, as NumPy's assignment)."""
    sliced, axes, position, at = _linear_positions(x, index)
    t, rest, perm = _indexed_rows(sliced, axes)
    q = position.ndim
    numpy_shape = (
        [sliced.shape[a] for a in rest[:at]]
        + list(position.shape)
        + [sliced.shape[a] for a in rest[at:]]
    )
    v = _core.cast(_broadcast_into(to_tensor(value, "the assigned value"), numpy_shape), x._t.dtype)
    if at:  # the broadcast axes first, as the table's rows
        v = _core.transpose(
            v, list(range(at, at + q)) + list(range(at)) + list(range(at + q, len(numpy_shape)))
        )
    ids = to_tensor(position)
    if len(axes) > 1:  # one row per position
        count = int(np.prod(position.shape, dtype=np.int64))
        v = _core.reshape(v, [count] + list(t.shape[1:]))
        ids = _core.reshape(ids, [count])
    r = _core.put(t, ids, v)
    if len(axes) > 1:
        r = _core.reshape(r, [sliced.shape[a] for a in perm])
    if perm != list(range(sliced.ndim)):
        r = _core.transpose(r, [perm.index(a) for a in range(sliced.ndim)])
    sliced._assign(r)


# --- The traced value ------------------------------------------------------------


def folded(fn, *operands):
    """NumPy's result where every operand is known while tracing (arrays made
    inside from static values, numbers): computed as NumPy computes it, and
    known in turn (index arithmetic such as np.arange(n) * 2 % n); else None."""
    values = []
    for x in operands:
        if isinstance(x, Traced):
            k = known_value(x)
            if k is None:
                return None
            values.append(k)
        elif isinstance(x, (numbers.Number, np.generic)):
            values.append(x)
        else:
            return None
    if not any(isinstance(x, Traced) for x in operands):
        return None
    from ._creation import known_constant

    return known_constant(fn(*values))


def _binary(fn, swap=False, numpy_op=None):
    def method(self, other):
        if isinstance(other, (str, bytes, dict, set)) or other is None:
            return NotImplemented
        a, b = (other, self) if swap else (self, other)
        if numpy_op is not None:
            r = folded(numpy_op, a, b)
            if r is not None:
                return r
        return Traced(fn(to_tensor(a), to_tensor(b)))

    return method


def _refuse(what):
    def method(self, *args, **kwargs):
        raise TracingError(f"tinymlir cannot trace {what} on a traced value")

    return method


class _Buffer:
    """The current value of one array while it is traced. Writes replace `t` by
    a new graph value (the old one with the written elements replaced) and
    count a version; every view of the array reads it again after a write."""

    __slots__ = ("t", "version", "known")

    def __init__(self, t, known=None):
        self.t, self.version, self.known = t, 0, known


class Traced:
    """A value being traced: shape and dtype are known, its data is not.

    It is an array as NumPy's are: a base (its own buffer), or a view of one
    (view steps from the base: flips, strided slices, reshapes, transposes).
    Writes through any of them replace the base's value; the others see it."""

    __slots__ = ("_buf", "_view", "_cache", "_seen", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, tensor, buf=None, view=()):
        self._buf = _Buffer(tensor) if buf is None else buf
        self._view = view
        self._cache = tensor
        self._seen = self._buf.version

    @property
    def _t(self):
        if self._seen != self._buf.version:
            t = self._buf.t
            for step in self._view:
                t = _apply(step, t)
            self._cache, self._seen = t, self._buf.version
        return self._cache

    def _view_of(self, steps):
        t = self._t
        for step in steps:
            t = _apply(step, t)
        return Traced(t, self._buf, self._view + tuple(steps))

    def _assign(self, value):
        """Replaces every element of this array (or view) by `value` (a C++
        tensor), cast and broadcast as NumPy's assignment does."""
        t = self._t
        if value.dtype != t.dtype:
            value = _core.cast(value, t.dtype)
        value = _broadcast_into(value, t.shape)
        buf = self._buf
        parents = [buf.t]
        for step in self._view[:-1]:
            parents.append(_apply(step, parents[-1]))
        new = value
        for step, parent in zip(reversed(self._view), reversed(parents)):
            new = _unapply(step, parent, new)
        buf.t, buf.known = new, None
        buf.version += 1
        self._cache, self._seen = value, buf.version

    def _inplace(self, result, name):
        """a op= b: NumPy's in-place ufunc, its result cast by the same-kind rule."""
        if isinstance(result, Masked):
            raise TracingError("tinymlir: an in-place operation with a boolean-mask read")
        r = result._t if isinstance(result, Traced) else to_tensor(result)
        if not np.can_cast(np.dtype(r.dtype), self.dtype, "same_kind"):
            raise UFuncCastingError(
                f"Cannot cast ufunc '{name}' output from dtype('{r.dtype}') to "
                f"dtype('{self.dtype}') with casting rule 'same_kind'"
            )
        if tuple(np.broadcast_shapes(tuple(r.shape), self.shape)) != tuple(self.shape):
            raise ValueError(
                f"non-broadcastable output operand with shape {self.shape} doesn't "
                f"match the broadcast shape {tuple(np.broadcast_shapes(tuple(r.shape), self.shape))}"
            )
        self._assign(r)
        return self

    # Types.
    @property
    def shape(self):
        return self._t.shape

    @shape.setter
    def shape(self, shape):
        """NumPy's in-place reshape (`a.shape = (n, m)`): this array becomes a
        reshaped view of its data, where NumPy can make one."""
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        t = _core.reshape(self._t, [operator.index(d) for d in shape])
        if tuple(t.shape) == tuple(self.shape):
            return
        if not _c_contiguous(self):
            raise AttributeError(
                "Incompatible shape for in-place modification. Use `.reshape()` to make "
                "a copy with the desired shape."
            )
        self._view = self._view + (("reshape", tuple(t.shape)),)
        self._cache, self._seen = t, self._buf.version

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
    __add__ = _binary(_core.add, numpy_op=operator.add)
    __radd__ = _binary(_core.add, swap=True, numpy_op=operator.add)
    __sub__ = _binary(_core.subtract, numpy_op=operator.sub)
    __rsub__ = _binary(_core.subtract, swap=True, numpy_op=operator.sub)
    __mul__ = _binary(_core.multiply, numpy_op=operator.mul)
    __rmul__ = _binary(_core.multiply, swap=True, numpy_op=operator.mul)
    __truediv__ = _binary(_core.divide, numpy_op=operator.truediv)
    __rtruediv__ = _binary(_core.divide, swap=True, numpy_op=operator.truediv)
    _power = _binary(_core.pow, numpy_op=operator.pow)
    __rpow__ = _binary(_core.pow, swap=True, numpy_op=operator.pow)

    def __pow__(self, other):
        """a ** b as ndarray's: a Python-number exponent 2 is np.square (of a bool:
        int8); of float and complex arrays also 0.5 (np.sqrt), -1 (np.reciprocal),
        1 (a copy) and 0 (ones), as NumPy's fast scalar powers."""
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            inexact = self.dtype.kind in "fc"
            if other == 2:
                return np.square(self)
            if inexact and other == 0.5:
                return np.sqrt(self)
            if inexact and other == -1:
                return np.reciprocal(self)
            if inexact and other == 1:
                return self.copy()
            if inexact and other == 0:
                return np.ones_like(self)
        return self._power(other)

    __matmul__ = _binary(_core.matmul)
    __rmatmul__ = _binary(_core.matmul, swap=True)

    def __neg__(self):
        return Traced(_core.negative(self._t))

    def __pos__(self):
        return self

    def __abs__(self):
        return Traced(_core.abs(self._t))

    __floordiv__ = _binary(_core.floor_divide, numpy_op=operator.floordiv)
    __rfloordiv__ = _binary(_core.floor_divide, swap=True, numpy_op=operator.floordiv)
    __mod__ = _binary(_core.remainder, numpy_op=operator.mod)
    __rmod__ = _binary(_core.remainder, swap=True, numpy_op=operator.mod)
    # Bitwise operations of integers; of bools, NumPy's logical ones.
    __and__ = _binary(_core.bitwise_and, numpy_op=operator.and_)
    __rand__ = _binary(_core.bitwise_and, swap=True, numpy_op=operator.and_)
    __or__ = _binary(_core.bitwise_or, numpy_op=operator.or_)
    __ror__ = _binary(_core.bitwise_or, swap=True, numpy_op=operator.or_)
    __xor__ = _binary(_core.bitwise_xor, numpy_op=operator.xor)
    __rxor__ = _binary(_core.bitwise_xor, swap=True, numpy_op=operator.xor)
    __lshift__ = _binary(_core.left_shift, numpy_op=operator.lshift)
    __rlshift__ = _binary(_core.left_shift, swap=True, numpy_op=operator.lshift)
    __rshift__ = _binary(_core.right_shift, numpy_op=operator.rshift)
    __rrshift__ = _binary(_core.right_shift, swap=True, numpy_op=operator.rshift)

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return other // self, other % self

    def __invert__(self):
        return Traced(_core.invert(self._t))

    # Parts of complex numbers (of real ones: the value, and zeros).
    @property
    def real(self):
        return Traced(_core.real(self._t)) if self.dtype.kind == "c" else self

    @property
    def imag(self):
        return Traced(_core.imag(self._t))

    def conj(self):
        return Traced(_core.conjugate(self._t))

    conjugate = conj

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
        _setitem(self, key, value)

    # In-place operators: NumPy's ufuncs with out=self (same-kind casting).
    def __iadd__(self, other):
        return self._inplace(self + other, "add")

    def __isub__(self, other):
        return self._inplace(self - other, "subtract")

    def __imul__(self, other):
        return self._inplace(self * other, "multiply")

    def __itruediv__(self, other):
        return self._inplace(self / other, "divide")

    def __ipow__(self, other):
        return self._inplace(self**other, "power")

    def __imatmul__(self, other):
        return self._inplace(self @ other, "matmul")

    def __iand__(self, other):
        return self._inplace(self & other, "logical_and")

    def __ior__(self, other):
        return self._inplace(self | other, "logical_or")

    def __ixor__(self, other):
        return self._inplace(self ^ other, "logical_xor")

    def fill(self, value):
        """NumPy's a.fill(value): every element set (value cast to a's dtype)."""
        v = to_tensor(value, "fill's value")
        if v.shape:
            raise ValueError("fill's value must be a scalar")
        self._assign(v)

    def __bool__(self):
        known = known_value(self)
        if known is not None:
            return bool(known)
        raise TypeError(
            "the truth value of a traced array is not known while tracing: data-dependent "
            "control flow (if/while on array values) cannot be compiled; branch on static "
            "values (shapes, Python numbers, static keyword arguments) instead"
        )

    def __float__(self):
        known = known_value(self)
        if known is not None:
            return float(known)
        raise TypeError("a traced array has no value while tracing: float() cannot be traced")

    def __int__(self):
        known = known_value(self)
        if known is not None:
            return int(known)
        raise TypeError("a traced array has no value while tracing: int() cannot be traced")

    def __index__(self):
        known = known_value(self)
        if known is not None:
            return operator.index(known[()] if isinstance(known, np.ndarray) else known)
        raise TypeError(
            "a traced array has no value while tracing: it cannot be used as a "
            "Python int (an index, a range bound)"
        )

    def __complex__(self):
        raise TypeError("a traced array has no value while tracing: complex() cannot be traced")

    def __iter__(self):
        if not self._t.shape:
            raise TypeError("iteration over a rank-0 traced array")
        known = known_value(self)
        if known is not None:
            return iter(known)
        return (self[i] for i in range(self._t.shape[0]))

    def __array__(self, dtype=None, copy=None):
        known = known_value(self)
        if known is not None:
            return known if dtype is None else known.astype(dtype)
        raise TypeError(
            "a traced array cannot be converted to a NumPy array: its values are not known "
            "while tracing (a NumPy function that is not traced, or np.asarray, was called on "
            "it)"
        )

    def __getitem__(self, index):
        return _getitem(self, index)

    # Methods, NumPy style.
    # Views, as NumPy's: .T, transpose, reshape (of a contiguous array; else a
    # copy, as NumPy's), ravel; copies: copy(), flatten(), astype.
    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("mT needs rank 2 or more")
        perm = list(range(self.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return self.transpose(perm)

    def reshape(self, *shape, order="C", copy=None):
        if order != "C":
            raise ValueError("tinymlir reshapes in C order only")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        t = _core.reshape(self._t, [operator.index(d) for d in shape])
        if tuple(t.shape) == tuple(self.shape):
            return self._view_of([])
        if _c_contiguous(self) and copy is not True:
            return self._view_of([("reshape", tuple(t.shape))])
        return Traced(t)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        if len(axes) == 0 or axes == (None,):
            axes = list(range(self.ndim))[::-1]
        perm = [operator.index(a) for a in axes]
        _core.transpose(self._t, perm)  # checks the permutation
        perm = [a % self.ndim for a in perm] if self.ndim else perm
        if perm == list(range(self.ndim)):
            return self._view_of([])
        return self._view_of([("transpose", tuple(perm))])

    def astype(self, dtype, copy=True):
        t = _core.cast(self._t, dtype_name(dtype, "astype's dtype"))
        return Traced(t) if t.dtype != self._t.dtype or copy else self

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        _no_out("sum", out)
        return _reduce("sum", in_dtype(self, dtype, "sum"), axis, keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        _no_out("prod", out)
        return _reduce("prod", in_dtype(self, dtype, "prod"), axis, keepdims)

    # Sorts, accumulations and extreme indices: NumPy's functions (_numpy.py).
    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """In place, as ndarray.sort."""
        self._assign(np.sort(self, axis, kind, order, stable=stable)._t)

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return np.argsort(self, axis, kind, order, stable=stable)

    def cumsum(self, axis=None, dtype=None, out=None):
        return np.cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return np.cumprod(self, axis, dtype, out)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return np.argmax(self, axis, out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return np.argmin(self, axis, out, keepdims=keepdims)

    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, side, sorter)

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
        return self.reshape(-1, order=order).copy()

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)

    def copy(self, order="C"):
        return Traced(self._t)  # a buffer of its own

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return np.trace(self, offset, axis1, axis2, dtype, out)

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
        raise TracingError(
            f"tinymlir traces {name}(dtype=...) with a float dtype only, got {np.dtype(dtype)}"
        )
    return x.astype(dtype)
