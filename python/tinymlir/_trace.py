"""Traced values: a Python face over the C++ core's Tensor graph.

A ``Traced`` wraps a ``_tinymlir.Tensor`` (a node of the C++ graph). Its
operators, methods and NumPy's two dispatch protocols (``__array_ufunc__`` and
``__array_function__``) each call one function of the C++ frontend, which
checks shapes, broadcasts and promotes (NumPy 2, NEP 50). Anything that cannot
be traced raises while tracing, naming what was called.
"""

from __future__ import annotations

import builtins
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


class _Layers:
    """What the modules above this one provide, registered as they are imported
    (tinymlir/__init__.py imports them all), so that this module imports none
    of them: NumPy's protocols (_numpy) and the stand-ins for NumPy's creation
    functions installed while a trace runs (_creation, chained by _functions),
    and the NumPy functions that take a boolean-mask read (its reductions)."""

    array_ufunc = array_function = install = uninstall = None
    masked_functions: frozenset = frozenset()


layers = _Layers()


class TraceContext:
    """Active while a function is traced on this thread. Collects hidden inputs:
    constant index arrays used for gathers (gather ids must be runtime inputs so
    that they are checked against the table before each call)."""

    def __init__(self, first_hidden_index: int, fn=None, options=None):
        self.first_hidden = first_hidden_index
        self.options = options  # the tinymlir.Options of the compilation (loop capture)
        # the traced function's globals and closure (from numpy import zeros)
        self.fn_scope = (getattr(fn, "__globals__", None), getattr(fn, "__closure__", None))
        self.hidden = []  # arrays, in placeholder order
        self.hidden_tensors = []  # their placeholders
        # Captured arrays the function writes to (_jit._written_names): id ->
        # (position among the hidden inputs, the Traced that stands for it)
        self.written_captures = {}
        self.known = {}  # buffer id: the NumPy value of an array made from static values
        # Every Traced made while this context is active: they expire with it
        # (__exit__), so that a traced value that outlives its trace holds no
        # graph. NumPy 2.4 keeps the operands of a ufunc.reduce/accumulate
        # whose __array_ufunc__ raised (numpy#31677, fixed after 2.4.6): the
        # Traced among them are then empty shells, not whole graphs.
        self.made = []
        # x[i] and x[i:j] with traced i, j are read as copies (the core's
        # Dynamic index kind): each such read with its version then. One changed
        # in place (row = A[i]; row += 1) must be written back through its index
        # (A[i] += 1 is read, add, write) before the trace ends: check_copies.
        self.dynamic_reads = []

    def check_copies(self, since=0):
        """A TracingError where a traced-index read (since the `since`-th) was
        changed in place and not written back: NumPy's view would have changed
        its array, tinymlir's copy would not."""
        for r, version in self.dynamic_reads[since:]:
            if r._ref is not None and r._ref.version != version:
                raise TracingError(
                    "tinymlir: x[i] or x[i:j] with a traced index is read as a copy, and this "
                    "copy was changed in place without being written back (row = A[i]; "
                    "row += 1 changes A in NumPy); write through the index (A[i] += 1)"
                )

    def hidden_input(self, array: np.ndarray) -> Traced:
        return Traced(self._hidden_placeholder(array))

    def _hidden_placeholder(self, array: np.ndarray):
        """A placeholder for `array`, an input after the leaves read at every call."""
        index = self.first_hidden + len(self.hidden)
        t = _core.placeholder(index, list(array.shape), dtype_name(array.dtype))
        self.hidden.append(array)
        self.hidden_tensors.append(t)
        return t

    def written_capture(self, array: np.ndarray) -> Traced:
        """The traced stand-in of captured array `array` that the function writes
        to: a hidden input with a buffer of its own (in the array's layout, as an
        argument's), written back into `array` after each call."""
        known = self.written_captures.get(id(array))
        if known is not None and self.hidden[known[0]] is array:
            return known[1]
        position = len(self.hidden)
        t = self._hidden_placeholder(array)
        strides = _core.SpecializationCache.element_strides(array)
        traced = Traced(t, _core.Ref(t, list(strides)) if strides is not None else None)
        self.written_captures[id(array)] = (position, traced)
        return traced

    def __enter__(self):
        self._hooks = layers.install(*self.fn_scope)
        _core.trace_enter()
        _state.contexts.append(self)
        return self

    def __exit__(self, *exc):
        _state.contexts.pop()
        _core.trace_exit()
        layers.uninstall(self._hooks)
        for t in self.made:
            t._ref = _EXPIRED
        self.made.clear()
        self.written_captures.clear()
        return False


class _Expired:
    """A Traced's buffer after its trace ended: any use is an error."""

    __slots__ = ()

    def __getattr__(self, name):
        raise TracingError(
            "tinymlir: a traced value was used after the trace that made it ended (kept in "
            "a global, a closure or an object); return it from the jitted function instead"
        )


_EXPIRED = _Expired()


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
    if isinstance(x, _core.Tensor):  # made by the core (a weak scalar stays weak)
        return x
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
            return _core.weak_wide_integer(float(x))  # float()'s OverflowError beyond doubles
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
    if isinstance(x, (list, tuple)):  # np.array's: traced values stacked by the core
        return (
            _core.array_of(_nested(x), None) if _has_traced(x) else to_tensor(np.asarray(x), what)
        )
    raise TypeError(
        f"{what} of type {type(x).__name__} cannot be used in a traced "
        "computation (arrays, traced values and numbers can)"
    )


def _has_traced(x):
    if isinstance(x, Traced):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_traced(v) for v in x)
    return False


def _nested(x):
    """np.array's argument as the core takes it: lists of tensors, Python's
    numbers and NumPy's arrays as np.asarray makes them."""
    if isinstance(x, Traced):
        return x._t
    if isinstance(x, (list, tuple)):
        return [_nested(v) for v in x]
    return to_tensor(np.asarray(x), "numpy.array's operand")


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


def known_value(x: Traced):
    """The NumPy value of an array made inside the traced function from static
    values alone (np.arange(n), np.zeros(3)) while nothing has written to it:
    used where a value is needed while tracing (an index, a loop over it)."""
    context = current_context()
    if context is None or x._view or x._ref.version:
        return None
    known = context.known.get(x._ref.buffer_id)
    if callable(known):
        known = context.known[x._ref.buffer_id] = known()
    return known


def set_known(x: Traced, value):
    """Records the NumPy value (or a function computing it) of an array made
    from static values alone: known_value gives it until the array is written."""
    context = current_context()
    if context is not None:
        context.known[x._ref.buffer_id] = value
    return x


def constant(array, name):
    """A traced array holding NumPy's result for static arguments."""
    dtype_name(array.dtype, f"{name}'s result")
    array = np.ascontiguousarray(array)
    return set_known(Traced(_core.constant(array)), array)


def known_constant(value):
    """A traced array holding a value computed while tracing (folded), known."""
    if isinstance(value, (bool, int, float, np.generic)) and not isinstance(value, np.ndarray):
        return value  # a NumPy or Python scalar: returned as NumPy gives it
    return constant(np.asarray(value), "a folded operation")


def _reduce(name, x, axis=None, keepdims=False):
    """NumPy's reduction `name` (sum, prod, max, min, any, all, mean, var) over
    `axis` (None, an int or a tuple): the C++ core's."""
    return _wrap(_core.reduce(name, to_tensor(x), axis, bool(keepdims)))


# --- Indexing --------------------------------------------------------------------
#
# The index specification, views and writes are C++'s (include/tinymlir/index.h):
# Python turns its index objects into the C++ index items, and wraps the
# results. Each Traced holds a C++ Ref: a buffer with versions and the view
# steps from it.


def _known_index(index):
    """The index as a tuple, with arrays made from static values alone as
    their NumPy values (np.arange(n) as an index is an int array)."""
    if not isinstance(index, tuple):
        index = (index,)
    return tuple(
        known_value(i) if isinstance(i, Traced) and known_value(i) is not None else i for i in index
    )


def _items(index):
    """Python index objects as C++ index items: traced values as their tensors,
    masks and int arrays as constant tensors, 0-d int arrays as ints; ints,
    slices, None, Ellipsis and ranges as they are."""
    out = []
    for i in index:
        if isinstance(i, Traced):
            i = i._t
        elif isinstance(i, slice) and (
            isinstance(i.start, Traced) or isinstance(i.stop, Traced) or isinstance(i.step, Traced)
        ):  # a traced bound: the core's span of a size known when the kernel runs
            i = slice(*(b._t if isinstance(b, Traced) else b for b in (i.start, i.stop, i.step)))
        elif isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in "iu":
            i = int(i)
        elif isinstance(i, (np.ndarray, list, tuple)):  # lists may hold traced ints
            i = to_tensor(i, "an index")
        out.append(i)
    return out


def replay_view(a, steps):
    """A traced view's steps (flips, strided slices, reshapes, transposes,
    broadcasts, diagonals, parts and windows)
    applied by NumPy to the array `a`: NumPy's own view of it (the caller's
    arrays that a function returns views of; of no steps, a view of all of it)."""
    a = a.view()
    for step in steps:
        kind = step[0]
        if kind == "flip":
            a = np.flip(a, tuple(step[1]))
        elif kind == "slice":
            strides = list(step[3]) or [1] * len(step[1])
            a = a[tuple(slice(b, e, k) for b, e, k in zip(step[1], step[2], strides))]
        elif kind == "reshape":
            a = a.reshape(tuple(step[1]))
        elif kind == "broadcast":
            a = np.broadcast_to(a, tuple(step[1]))
        elif kind == "diagonal":
            a = a.diagonal(*step[1])
        elif kind in ("real", "imag"):
            a = getattr(a, kind)
        elif kind == "window":
            a = np.lib.stride_tricks.sliding_window_view(a, step[1], step[2])
        elif kind == "bits":
            a = a.view(step[1])
        else:
            a = a.transpose(tuple(step[1]))
    return a


_K = _core.IndexKind


def _getitem(x: Traced, index):
    items = _items(_known_index(index))
    if _core.index_kind(items, x.ndim) == _K.mask:
        return Masked(x._ref.masked_read(items))
    r = Traced(None, x._ref.get(items))
    if r.ndim == 0:  # NumPy's: a 0-d array where the index holds '...', else a scalar
        r._rank0 = "array" if any(i is Ellipsis for i in items) else "scalar"
    context = current_context()
    if context is not None and r.ndim > 0 and _core.index_kind(items, x.ndim) == _K.dynamic:
        context.dynamic_reads.append((r, r._ref.version))
    return r


def _setitem(x: Traced, index, value):
    index = _known_index(index)
    items = _items(index)
    kind = _core.index_kind(items, x.ndim)
    if isinstance(value, Masked) and kind == _K.mask:
        return x._ref.set_masked(items, value._m)
    if kind == _K.basic and isinstance(value, Traced):
        target = x._ref.get(items)
        if value._ref.same_buffer(target) and value._view == target.steps and value._ref.current():
            return  # a[i] op= v: the view was already updated in place
    x._ref.set(items, to_tensor(value, "the assigned value"))
    context = current_context()
    if context is not None and isinstance(value, Traced):
        # A traced-index read written back (A[i, :j] -= v): its changes reached A.
        context.dynamic_reads = [
            (r, r._ref.version if r is value else v) for r, v in context.dynamic_reads
        ]


def _broadcast_into(t, shape, what="input array"):
    """`t` broadcast to `shape` as NumPy's assignment does (leading size-1 axes dropped)."""
    return _core.broadcast_into(t, list(shape), what)


_NOT_TRACED = (
    "its shape depends on the data (elementwise operations, reductions, and "
    "x[mask] = f(x[mask]) can be traced)"
)


class Masked:
    """x[mask] while tracing: the C++ core's MaskedRead (the whole array and the
    mask; the count is known only when the kernel runs). Python's operators,
    ufuncs and NumPy's reductions reach it here; its rules are C++'s."""

    __slots__ = ("_m",)
    __array_priority__ = 1001

    def __init__(self, read):
        self._m = read

    def _lift(self, other):
        """The other operand, made to fit the whole array (C++'s operand())."""
        if isinstance(other, Masked):
            return Traced(self._m.operand(other._m))
        if isinstance(other, (bool, int, float, complex)):
            return other  # a weak Python number
        return Traced(self._m.operand(to_tensor(other, "an operand of a boolean-mask read")))

    def _apply(self, fn, *operands):
        result = fn(*(Traced(self._m.full) if x is self else self._lift(x) for x in operands))
        if isinstance(result, tuple):
            return tuple(Masked(self._m.with_full(r._t)) for r in result)
        return Masked(self._m.with_full(result._t))

    def _binary(fn, swap=False):
        def method(self, other):
            return self._apply(fn, other, self) if swap else self._apply(fn, self, other)

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
    __lshift__, __rlshift__ = _binary(operator.lshift), _binary(operator.lshift, True)
    __rshift__, __rrshift__ = _binary(operator.rshift), _binary(operator.rshift, True)
    __lt__, __le__ = _binary(operator.lt), _binary(operator.le)
    __gt__, __ge__ = _binary(operator.gt), _binary(operator.ge)
    __eq__, __ne__ = _binary(operator.eq), _binary(operator.ne)
    __hash__ = object.__hash__
    del _binary

    def __neg__(self):
        return self._apply(operator.neg, self)

    def __pos__(self):
        return self._apply(operator.pos, self)

    def __abs__(self):
        return self._apply(operator.abs, self)

    def __invert__(self):
        return self._apply(operator.invert, self)

    def astype(self, dtype, *args, **kwargs):
        return self._apply(lambda x: x.astype(dtype, *args, **kwargs), self)

    def copy(self, order="K"):
        return self

    @property
    def dtype(self):
        return self._m.full.dtype

    @property
    def ndim(self):
        return self._m.ndim

    @property
    def size(self):
        """The count times the other axes' sizes: NumPy's Python int."""
        return Traced(self._m.size(), rank0="python")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or "out" in kwargs or "where" in kwargs:
            raise TracingError(
                f"tinymlir: numpy.{ufunc.__name__}.{method} of a boolean-mask read "
                f"with out= or where= cannot be traced: {_NOT_TRACED}"
            )
        return self._apply(lambda *xs: ufunc(*xs, **kwargs), *inputs)

    def __array_function__(self, func, types, args, kwargs):
        if func in layers.masked_functions:
            return layers.array_function(func, types, args, kwargs)
        name = getattr(func, "__name__", "")
        raise TracingError(
            f"tinymlir: numpy.{name} of a boolean-mask read cannot be traced: {_NOT_TRACED}"
        )

    def __getattr__(self, name):
        raise TracingError(
            f"tinymlir: .{name} of a boolean-mask read (shape {self._m.shape_text}) cannot "
            f"be traced: {_NOT_TRACED}"
        )

    def __len__(self):
        self.__getattr__("__len__")

    def __iter__(self):
        self.__getattr__("__iter__")

    def __getitem__(self, index):
        self.__getattr__("__getitem__")

    def __bool__(self):
        raise TypeError("the truth value of a traced array is not known while tracing")


# NumPy's reduction methods of a read: its functions, which the reduction table
# implements for reads too.
for _name in ("sum", "prod", "max", "min", "any", "all", "mean", "var", "std"):
    setattr(
        Masked,
        _name,
        (lambda f: lambda self, *args, **kwargs: f(self, *args, **kwargs))(getattr(np, _name)),
    )


def index_input(ids, op: str) -> Traced:
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
    result = fn(*values)
    if isinstance(result, tuple):  # np.divmod's two arrays
        return tuple(known_constant(r) for r in result)
    return known_constant(result)


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


def _method(fn):
    """ndarray's method of NumPy's function `fn`, which takes the array first."""

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    return method


def _inplace_operator(op, ufunc):
    """a op= b: NumPy's `ufunc` with out=a (Traced._inplace)."""

    def inplace(self, other):
        return self._inplace(op(self, other), ufunc)

    inplace.__name__ = f"_i{ufunc}"
    return inplace


def _refuse(what):
    def method(self, *args, **kwargs):
        raise TracingError(f"tinymlir cannot trace {what} on a traced value")

    return method


class FlatIter:
    """a.flat while tracing: NumPy's flatiter, the array's elements in C order
    whatever its layout. A read is a copy (a scalar for an int); a write is
    np.put's at the positions the index selects of range(a.size) (values
    cycled), or np.place's for a traced boolean mask."""

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return iter(self.base.flatten())

    def __getitem__(self, index):
        return self.base.flatten()[index]

    def __setitem__(self, index, value):
        if isinstance(index, Traced) and index.dtype == np.bool_:
            np.place(self.base, index.reshape(self.base.shape), value)
            return
        if isinstance(index, Traced):
            positions = index
        else:
            positions = np.arange(self.base.size)[index]
        np.put(self.base, positions, value)

    def copy(self):
        return self.base.flatten()


class Traced:
    """A value being traced: shape and dtype are known, its data is not.

    It is an array as NumPy's are: a base (its own buffer), or a view of one
    (view steps from the base: flips, strided slices, reshapes, transposes).
    Writes through any of them replace the base's value; the others see it.
    The buffer, its versions and the views are C++'s (`_core.Ref`)."""

    __slots__ = ("_ref", "_rank0", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, tensor, ref=None, rank0=None):
        self._ref = _core.Ref(tensor) if ref is None else ref
        if _state.contexts:
            _state.contexts[-1].made.append(self)
        # What NumPy's value is where it has rank 0: one of rank0()'s answers,
        # or None where its view decides.
        self._rank0 = rank0

    def rank0(self):
        """What NumPy gives where this value has rank 0: "array" (a 0-d array:
        creation functions, views of arrays), "scalar" (a NumPy scalar: ufuncs,
        reductions, int indexing) or "python" (a Python bool or int:
        np.allclose, np.count_nonzero)."""
        if self._rank0 is not None:
            return self._rank0
        return "array" if self._view and self._ref.base().shape else "scalar"

    def is_array(self):
        return self.rank0() == "array"

    @property
    def _t(self):
        return self._ref.value()

    @property
    def _view(self):
        """The view steps from the buffer, as tuples: ("flip", axes),
        ("slice", begin, end, steps), ("reshape", shape), ("transpose", perm)."""
        return self._ref.steps

    def _view_of_shape(self, shape):
        """A view of this array in `shape` (the same elements, size-1 axes
        added or dropped: NumPy's squeeze, expand_dims and atleast_*d)."""
        return Traced(None, self._ref.reshaped(list(shape)), rank0=self._rank0)

    def _assign(self, value):
        """Replaces every element of this array (or view) by `value` (a C++
        tensor), cast and broadcast as NumPy's assignment does."""
        self._ref.assign(value)

    def _inplace(self, result, name, casting="same_kind", where=None):
        """a op= b, or out=: NumPy's ufunc into this array, its result cast by
        the `casting` rule, written where `where` (a tensor) holds."""
        if isinstance(result, Masked):
            raise TracingError("tinymlir: an in-place operation with a boolean-mask read")
        r = result._t if isinstance(result, Traced) else to_tensor(result)
        self._ref.update(r, name, casting, where)
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
        try:
            self._ref.set_shape([operator.index(d) for d in shape])
        except TypeError as e:  # NumPy's exception for a non-contiguous array
            raise AttributeError(str(e)) from None

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
            if not self.is_array():  # NumPy's scalar
                raise TypeError(f"object of type 'numpy.{self.dtype}' has no len()")
            raise TypeError("len() of unsized object")
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
    __rpow__ = _binary(_core.pow, swap=True, numpy_op=operator.pow)

    def __pow__(self, other):
        """a ** b as ndarray's (numpy.h's arrayPower: NumPy's fast scalar powers)."""
        if isinstance(other, (str, bytes, dict, set)) or other is None:
            return NotImplemented
        r = folded(operator.pow, self, other)
        return r if r is not None else Traced(_core.array_power(self._t, to_tensor(other)))

    __matmul__ = _binary(_core.matmul)
    __rmatmul__ = _binary(_core.matmul, swap=True)

    def __neg__(self):
        return Traced(_core.negative(self._t))

    def __pos__(self):
        return Traced(_core.positive(self._t))  # a copy, as NumPy's (bools: its TypeError)

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
        return np.divmod(self, other)

    def __rdivmod__(self, other):
        return np.divmod(other, self)

    def __invert__(self):
        return Traced(_core.invert(self._t))

    # Parts of complex numbers (of real ones: the value, and zeros).
    @property
    def real(self):
        return Traced(None, self._ref.part(False), rank0=self._rank0)  # a view, as NumPy's

    @real.setter
    def real(self, value):
        _setitem(self.real, Ellipsis, value)

    @property
    def imag(self):
        return Traced(None, self._ref.part(True), rank0=self._rank0)

    @imag.setter
    def imag(self, value):
        _setitem(self.imag, Ellipsis, value)

    def conj(self):
        return Traced(_core.conjugate(self._t))

    conjugate = conj

    # Comparisons: bool results, as NumPy's (Python's == falls back to
    # identity for None and other objects).
    __lt__ = _binary(_core.less, numpy_op=operator.lt)
    __le__ = _binary(_core.less_equal, numpy_op=operator.le)
    __gt__ = _binary(_core.greater, numpy_op=operator.gt)
    __ge__ = _binary(_core.greater_equal, numpy_op=operator.ge)
    __eq__ = _binary(_core.equal, numpy_op=operator.eq)
    __ne__ = _binary(_core.not_equal, numpy_op=operator.ne)
    __hash__ = object.__hash__

    def __setitem__(self, key, value):
        _setitem(self, key, value)

    def fill(self, value):
        """NumPy's a.fill(value): every element set (value cast to a's dtype)."""
        v = to_tensor(value, "fill's value")
        if v.shape:
            raise ValueError("setting an array element with a sequence.")
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

    def __round__(self, ndigits=None):
        """round(x, n): NumPy's np.round (a NumPy scalar or array, as NumPy's
        round of its scalars); round(x) is a Python int, known only for values
        known while tracing."""
        if ndigits is None:
            known = known_value(self)
            if known is not None:
                return round(known)
            raise TypeError("a traced array has no value while tracing: round() cannot be traced")
        return np.round(self, operator.index(ndigits))

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
            if not self.is_array():  # NumPy's scalar
                raise TypeError(f"'numpy.{self.dtype}' object is not iterable")
            raise TypeError("iteration over a 0-d array")
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
    # Views, as NumPy's: .T, transpose, reshape and ravel (where the strides
    # allow one, else copies: the core decides as NumPy does); copies: copy(),
    # flatten(), astype.
    @property
    def T(self):
        return self.transpose()

    @property
    def mT(self):
        return Traced(None, self._ref.matrix_transposed(), rank0=self._rank0)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        dims = [operator.index(d) for d in shape]
        r = self._ref.reshaped(dims, order or "C", None if copy is None else bool(copy))
        return Traced(None, r, rank0=self._rank0 or ("array" if self.ndim else None))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = axes[0]
        if len(axes) == 0 or axes == (None,):
            return Traced(None, self._ref.transposed(None), rank0=self._rank0)
        return Traced(
            None, self._ref.transposed([operator.index(a) for a in axes]), rank0=self._rank0
        )

    def astype(self, dtype, copy=True):
        t = _core.cast(self._t, dtype_name(dtype, "astype's dtype"))
        return Traced(t, rank0=self.rank0()) if t.dtype != self._t.dtype or copy else self

    # Reductions: NumPy's functions (_numpy.py), whose arguments the methods share.
    sum, prod = _method(np.sum), _method(np.prod)
    dot, repeat, take, nonzero = (
        _method(np.dot),
        _method(np.repeat),
        _method(np.take),
        _method(np.nonzero),
    )
    conjugate = _method(np.conjugate)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    def item(self, *args):
        """NumPy's Python scalar of one element: known only for arrays made
        from static values alone (float() and int() say the same)."""
        known = known_value(self)
        if known is not None:
            return known.item(*args)
        raise TypeError("a traced array has no value while tracing: .item() cannot be traced")

    def tolist(self):
        known = known_value(self)
        if known is not None:
            return known.tolist()
        raise TypeError("a traced array has no value while tracing: .tolist() cannot be traced")

    def view(self, dtype=None, type=None):
        """A view of all of it (NumPy's a.view()), or of its bits as another
        dtype of the same size (Ref.bitsAs)."""
        as_type = (
            dtype if isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray) else None
        )
        if dtype is None or as_type is not None or np.dtype(dtype) == self.dtype:
            return Traced(None, self._ref.whole(), rank0=self._rank0)
        name = dtype_name(np.dtype(dtype), "a view's dtype")
        return Traced(None, self._ref.bits_as(name), rank0=self._rank0)

    max, min, any, all = _method(np.max), _method(np.min), _method(np.any), _method(np.all)
    mean, var, std = _method(np.mean), _method(np.var), _method(np.std)

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

    def round(self, decimals=0, out=None):
        return np.round(self, decimals, out=out)

    def clip(self, min=None, max=None, out=None, **kwargs):
        return np.clip(self, min, max, out=out, **kwargs)

    def flatten(self, order="C"):
        return self.ravel(order).copy()

    @property
    def flat(self):
        return FlatIter(self)

    @flat.setter
    def flat(self, value):
        FlatIter(self)[...] = value

    def ravel(self, order="C"):
        return Traced(None, self._ref.raveled(order or "C"), rank0=self._rank0)

    def copy(self, order="C"):
        return Traced(self._t, rank0=self._rank0)  # a buffer of its own

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return np.trace(self, offset, axis1, axis2, dtype, out)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return layers.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return layers.array_function(func, types, args, kwargs)


# In-place operators (a op= b): NumPy's ufuncs with out=a (same-kind casting),
# by Python's operator.
for _op, _ufunc in (
    ("add", "add"),
    ("sub", "subtract"),
    ("mul", "multiply"),
    ("truediv", "divide"),
    ("floordiv", "floor_divide"),
    ("mod", "remainder"),
    ("pow", "power"),
    ("matmul", "matmul"),
    ("and_", "bitwise_and"),
    ("or_", "bitwise_or"),
    ("xor", "bitwise_xor"),
    ("lshift", "left_shift"),
    ("rshift", "right_shift"),
):
    setattr(Traced, f"__i{_op.rstrip('_')}__", _inplace_operator(getattr(operator, _op), _ufunc))
