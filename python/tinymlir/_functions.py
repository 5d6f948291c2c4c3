"""More of NumPy's array functions on traced values, composed of traced operations.

Each follows NumPy's own implementation (numpy/lib/_arraypad_impl.py,
_function_base_impl.py, _histograms_impl.py, _nanfunctions_impl.py,
_shape_base_impl.py, numpy/_core/numeric.py) step by step, so that result
dtypes, shapes and values are NumPy's: selections (pad, roll, repeat, tile,
meshgrid...) are exact, as are histogram counts; reductions round as the
C++ core's do.

What NumPy decides from the data (an error for a non-finite autodetected
range, a warning for an all-NaN slice) cannot be decided while tracing: those
checks are made where the values are static and skipped otherwise (see each
function). Functions whose result's shape depends on the data (unique,
nonzero...) and NumPy's random functions called while tracing are refused by
name.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator

import numpy as np

from . import _creation, _tinymlir as _core
from ._numpy import _FUNCTIONS, _implements, _NoValue, _traced
from ._trace import (
    Traced,
    TracingError,
    _has_traced,
    dtype_name,
    known_constant,
    known_value,
    layers,
    to_tensor,
)

_range = builtins.range  # histogram's argument is named range, as NumPy's


def _static(x, what):
    """A value needed while tracing (a shape, a count): a Python or NumPy value,
    or a traced one made from static values alone."""
    if isinstance(x, Traced):
        known = known_value(x)
        if known is None:
            raise TracingError(
                f"tinymlir: {what} must be known while tracing (it sets the "
                "result's shape); got a traced value computed from the inputs"
            )
        return known
    if isinstance(x, (list, tuple)):
        return type(x)(_static(v, what) for v in x)
    return x


def _maybe_static(x):
    """A traced value made from static values alone as its NumPy value (NumPy's
    checks of it can then be made); other values as NumPy's asanyarray makes
    them, traced ones as they are."""
    if isinstance(x, Traced):
        known = known_value(x)
        return x if known is None else np.asanyarray(known)
    return np.asanyarray(x)


# --- np.pad ---------------------------------------------------------------------------


def _pad_values(x):
    """constant_values or end_values as the core takes them: a traced value, or
    a NumPy array of the static ones (the core pairs them as NumPy's)."""
    if isinstance(x, Traced) or _has_traced(x):
        return (x if isinstance(x, Traced) else _creation._stacked(x, None))._t
    return to_tensor(np.asarray(x))


@_implements(np.pad)
def _pad(array, pad_width, mode="constant", **kwargs):
    """np.pad: the core's (numpy.h), every mode but a function; mode 'empty'
    gives zeros, as np.empty does while tracing."""
    t = _traced(array, "numpy.pad's operand")
    if isinstance(pad_width, dict):
        pad_width = np.reshape(_core.pad_widths(pad_width, t.ndim), (-1, 2))
    pad_width = np.asarray(_static(pad_width, "numpy.pad's pad_width"))
    if not pad_width.dtype.kind == "i":
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        raise TracingError(
            "tinymlir cannot trace numpy.pad with a function as mode (NumPy calls "
            "it on each vector of the padded array, in place)"
        )
    if not isinstance(mode, str):
        raise ValueError(f"mode '{mode}' is not supported")
    named = ("constant_values", "end_values", "stat_length", "reflect_type")
    values = {k: _pad_values(kwargs[k]) for k in named[:2] if k in kwargs}
    stat = kwargs.get("stat_length")
    stat = None if stat is None else np.asarray(_static(stat, "numpy.pad's stat_length"), float)
    return Traced(
        _core.pad(
            t._t,
            pad_width.reshape(-1).tolist(),
            list(pad_width.shape),
            mode,
            values.get("constant_values"),
            values.get("end_values"),
            "stat_length" in kwargs,
            None if stat is None else stat.reshape(-1).tolist(),
            [] if stat is None else list(stat.shape),
            kwargs.get("reflect_type"),
            [k for k in kwargs if k not in named],
        )
    )


# --- roll, repeat, tile, meshgrid, kron -----------------------------------------------


def _ints(x, name):
    """A static int or 1-D sequence of ints as a list (NumPy's scalars or 1-D)."""
    x = np.asarray(_static(x, name))
    if x.ndim > 1:
        raise ValueError(f"{name} should be scalars or 1D sequences")
    return [operator.index(v) for v in x.reshape(-1).tolist()]


@_implements(np.roll)
def _roll(a, shift, axis=None):
    t = _traced(a, "numpy.roll's operand")
    if np.ndim(shift) > 1 or np.ndim(axis) > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    axes = None if axis is None else _ints(axis, "numpy.roll's axis")
    return Traced(_core.roll(t._t, _ints(shift, "numpy.roll's shift"), axes))


@_implements(np.repeat)
def _repeat(a, repeats, axis=None):
    t = _traced(a, "numpy.repeat's operand")
    axis = None if axis is None else operator.index(axis)
    return Traced(_core.repeat(t._t, _ints(repeats, "numpy.repeat's repeats"), axis))


@_implements(np.tile)
def _tile(A, reps):
    t = _traced(A, "numpy.tile's operand")
    return Traced(_core.tile(t._t, _ints(reps, "numpy.tile's reps")))


@_implements(np.meshgrid)
def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    ts = [_traced(x, "numpy.meshgrid's operand") for x in xi]
    grids = _core.meshgrid([t._t for t in ts], indexing, bool(sparse))
    if copy or not sparse:  # broadcast grids are copies here (NumPy's are read-only views)
        return tuple(Traced(g) for g in grids)
    return tuple(t._view_of_shape(g.shape) for t, g in zip(ts, grids))  # views, as NumPy's


@_implements(np.kron)
def _kron(a, b):
    return Traced(
        _core.kron(_traced(a, "numpy.kron's operand")._t, _traced(b, "numpy.kron's operand")._t)
    )


# --- cov, corrcoef, average -----------------------------------------------------------


def _weights(w, what):
    """Weights as the core takes them: concrete where static (NumPy's checks of their
    values are made while tracing), else traced."""
    w = _maybe_static(w)
    return w._t if isinstance(w, Traced) else to_tensor(np.asarray(w), what)


@_implements(np.average)
def _average(a, axis=None, weights=None, returned=False, *, keepdims=_NoValue):
    """NumPy's average (numpy.h). With traced weights, NumPy's ZeroDivisionError for
    weights summing to zero cannot be raised (the result is inf or nan)."""
    t = _traced(a, "numpy.average's operand")
    w = None if weights is None else _weights(weights, "numpy.average's weights")
    avg, scl = _core.average(t._t, axis, w, keepdims is not _NoValue and bool(keepdims))
    return (Traced(avg), Traced(scl)) if returned else Traced(avg)


@_implements(np.cov)
def _cov(
    m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None
):
    """NumPy's cov (numpy.h): weights' checks that read their values (integral,
    non-negative) are made for static weights only; NumPy's warning for degrees of
    freedom <= 0 is given while tracing where it is static."""
    return Traced(
        _core.cov(
            _traced(m, "numpy.cov's operand")._t,
            None if y is None else _traced(y, "numpy.cov's y")._t,
            bool(rowvar),
            bool(bias),
            ddof,
            None if fweights is None else _weights(fweights, "numpy.cov's fweights"),
            None if aweights is None else _weights(aweights, "numpy.cov's aweights"),
            None if dtype is None else dtype_name(np.dtype(dtype), "numpy.cov's dtype"),
        ),
        rank0="array",  # NumPy's squeezed matrix: 0-d for one variable
    )


@_implements(np.corrcoef)
def _corrcoef(x, y=None, rowvar=True, *, dtype=None):
    return Traced(
        _core.corrcoef(
            _traced(x, "numpy.corrcoef's operand")._t,
            None if y is None else _traced(y, "numpy.corrcoef's y")._t,
            bool(rowvar),
            None if dtype is None else dtype_name(np.dtype(dtype), "numpy.corrcoef's dtype"),
        )
    )


# --- histogram ------------------------------------------------------------------------


@_implements(np.histogram)
def _histogram(a, bins=10, range=None, density=None, weights=None):
    """np.histogram: the core's (numpy.h), with exact counts and NumPy's edges.
    Bins named by an estimator ('auto', ...) are refused: their number depends
    on the data."""
    t = _traced(a, "numpy.histogram's operand")
    w = None if weights is None else _traced(weights, "numpy.histogram's weights")._t
    if isinstance(bins, str):
        raise TracingError(
            f"tinymlir cannot trace numpy.histogram with bins={bins!r} (the "
            "number of bins it estimates depends on the data)"
        )
    count, edges = 10, None
    if np.ndim(bins) == 0:
        try:
            count = operator.index(_static(bins, "numpy.histogram's bins"))
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
    else:
        bins = _maybe_static(bins)
        edges = bins._t if isinstance(bins, Traced) else to_tensor(np.asarray(bins), "bins")
    if range is not None:
        first, last = _static(range, "numpy.histogram's range")
        range = (to_tensor(first, "range"), to_tensor(last, "range"))
    hist, edges = _core.histogram(t._t, count, edges, range, bool(density), w)
    return Traced(hist), Traced(edges)


# --- take, take_along_axis, put_along_axis --------------------------------------------


@_implements(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    """NumPy's take: the core's (numpy.h). Concrete indices are checked while
    tracing, traced ones when the kernel runs (NumPy's IndexError)."""
    if out is not None:
        raise TracingError("tinymlir cannot trace numpy.take with out= given positionally")
    t = _traced(a, "numpy.take's operand")
    ids = to_tensor(_maybe_static(indices), "numpy.take's indices")
    axis = None if axis is None else operator.index(axis)
    return Traced(_core.take(t._t, ids, axis, mode))


@_implements(np.take_along_axis)
def _take_along_axis(arr, indices, axis=-1):
    t = _traced(arr, "numpy.take_along_axis's operand")
    ids = to_tensor(_maybe_static(indices), "numpy.take_along_axis's indices")
    axis = None if axis is None else operator.index(axis)
    return Traced(_core.take_along_axis(t._t, ids, axis))


@_implements(np.put_along_axis)
def _put_along_axis(arr, indices, values, axis):
    """NumPy's put_along_axis (numpy.h), into a traced `arr`."""
    if not isinstance(arr, Traced):
        raise TracingError(
            "tinymlir: numpy.put_along_axis writes into a traced array only (one "
            "made inside the function, or an argument)"
        )
    ids = to_tensor(_maybe_static(indices), "numpy.put_along_axis's indices")
    v = _traced(values, "numpy.put_along_axis's values")._t
    axis = None if axis is None else operator.index(axis)
    _core.put_along_axis(arr._ref, ids, v, axis)
    return None


# --- shares_memory, may_share_memory, convolve ----------------------------------------


def _overlap(a, b, exact):
    """NumPy's shares_memory (exact) and may_share_memory (bounds): the core's."""
    return isinstance(a, Traced) and isinstance(b, Traced) and a._ref.shares_memory(b._ref, exact)


@_implements(np.shares_memory)
def _shares_memory(a, b, max_work=None):
    return _overlap(a, b, exact=True)


@_implements(np.may_share_memory)
def _may_share_memory(a, b, max_work=None):
    return _overlap(a, b, exact=False)


@_implements(np.convolve)
def _convolve(a, v, mode="full"):
    return Traced(
        _core.convolve(
            _traced(a, "numpy.convolve's a")._t, _traced(v, "numpy.convolve's v")._t, mode
        )
    )


@_implements(np.correlate)
def _correlate(a, v, mode="valid"):
    return Traced(
        _core.correlate(
            _traced(a, "numpy.correlate's a")._t, _traced(v, "numpy.correlate's v")._t, mode
        )
    )


# --- Refusals -------------------------------------------------------------------------


def _data_shaped(name, hint):
    original = getattr(np, name)

    def refuse(*args, **kwargs):
        """NumPy's own result where every array is known while tracing (made
        inside from static values alone); else refused by name."""
        values = []
        for x in (*args, *kwargs.values()):
            known = known_value(x) if isinstance(x, Traced) else x
            if known is None and isinstance(x, Traced):
                raise TracingError(
                    f"tinymlir cannot trace numpy.{name}: the shape of its result depends "
                    f"on the data, which is not known while tracing ({hint})"
                )
            values.append(known)
        result = original(*values[: len(args)], **dict(zip(kwargs, values[len(args) :])))
        if isinstance(result, tuple):  # nonzero's arrays, unique's parts
            parts = map(known_constant, result)
            return tuple(parts) if type(result) is tuple else type(result)(*parts)
        return known_constant(result)

    refuse.__name__ = f"_{name}"
    return refuse


_implements(np.unique)(_data_shaped("unique", "compute it outside the jitted function"))
_implements(np.nonzero)(
    _data_shaped(
        "nonzero", "use a boolean mask: x[mask] = v, np.where(mask, a, b) or reductions of x[mask]"
    )
)
_implements(np.argwhere)(_data_shaped("argwhere", "use a boolean mask or np.where(mask, a, b)"))
_implements(np.flatnonzero)(
    _data_shaped("flatnonzero", "use a boolean mask or np.where(mask, a, b)")
)


# NumPy's random functions while a function is traced: their values would be
# drawn once, at trace time, and frozen into the compiled code. As _creation's
# wrappers of np.zeros..., wrappers replace numpy.random's functions (and the
# traced function's globals and closure cells bound to them) while any trace
# runs, and refuse only on the tracing thread and only for callers outside
# NumPy's and tinymlir's modules. _creation.install/uninstall (called by every
# trace) are chained to install and remove them. Classes (Generator,
# RandomState...) and the methods of generators made outside the trace are
# left as they are (they cannot be replaced on their extension types).

_RANDOM = {}  # numpy.random's functions by name, once it is imported
_RANDOM_WRAPPERS = {}  # the wrappers that refuse them while tracing
_random = None  # their _creation.Rebinding


def _setup_random():
    """Makes the wrappers of numpy.random's functions, once, as tinymlir is
    imported (before any trace: importing numpy.random while one runs would
    see the trace's stand-ins for np.zeros and np.ndarray)."""
    global _random
    import numpy.random as module

    for name, f in vars(module).items():
        if (
            not name.startswith("_")
            and name != "test"
            and callable(f)
            and not isinstance(f, type)
            and not inspect.ismodule(f)
        ):
            _RANDOM[name] = f
    _RANDOM_WRAPPERS.update({name: _random_wrapper(name, f) for name, f in _RANDOM.items()})
    _random = _creation.Rebinding(module, _RANDOM, _RANDOM_WRAPPERS)


def _random_wrapper(name, orig):
    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        if _creation.users_call():
            raise TracingError(
                f"tinymlir cannot trace numpy.random.{name}: its values would be drawn once, "
                "while tracing, and frozen into the compiled function; draw them outside and "
                "pass them as an argument"
            )
        return orig(*args, **kwargs)

    return wrapper


class _Hooks:
    """What the chained install returns: _creation's token and ours."""

    __slots__ = ("creation", "random")

    def __init__(self, creation, random):
        self.creation, self.random = creation, random


def _install(fn_globals=None, closure=None):
    token = _creation_install(fn_globals, closure)
    try:
        return _Hooks(token, _random.install(fn_globals, closure))
    except BaseException:
        _creation_uninstall(token)
        raise


def _uninstall(hooks):
    try:
        _random.uninstall(hooks.random)
    finally:
        _creation_uninstall(hooks.creation)


# Imported with the package (tinymlir/__init__.py), before any trace can run:
# the chain is made once, and every trace installs both.
_setup_random()
_creation_install, _creation_uninstall = layers.install, layers.uninstall
layers.install, layers.uninstall = _install, _uninstall


# --- diagonal, trace, diag (numpy/_core/fromnumeric.py, lib/_twodim_base_impl.py) ---------


@_implements(np.diagonal)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    """NumPy's diagonal: its read-only view (later writes to `a` show in it)."""
    t = _traced(a, "numpy.diagonal's operand")
    r = t._ref.diagonal_view(operator.index(offset), operator.index(axis1), operator.index(axis2))
    return Traced(None, r)


@_implements(np.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """NumPy's trace: the sum of the diagonal, as np.sum sums it (`dtype=`: np.sum's)."""
    if out is not None:
        raise TracingError("tinymlir cannot trace numpy.trace with out=")
    t = _traced(a, "numpy.trace's operand")
    dtype = None if dtype is None else dtype_name(np.dtype(dtype), "numpy.trace's dtype")
    return Traced(_core.trace(t._t, operator.index(offset), axis1, axis2, dtype))


@_implements(np.diag)
def _diag(v, k=0):
    t = _traced(v, "numpy.diag's operand")
    return Traced(_core.diag(t._t, operator.index(k)))


# --- isclose, allclose (numpy/_core/numeric.py) ---------------------------------------------


@_implements(np.isclose)
def _isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    x, y = to_tensor(a, "numpy.isclose's operand"), to_tensor(b, "numpy.isclose's operand")
    return Traced(_core.isclose(x, y, float(rtol), float(atol), bool(equal_nan)))


@_implements(np.allclose)
def _allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """A traced bool (NumPy's Python bool is known only once the kernel runs;
    branching on it is refused by name)."""
    x, y = to_tensor(a, "numpy.allclose's operand"), to_tensor(b, "numpy.allclose's operand")
    return Traced(_core.allclose(x, y, float(rtol), float(atol), bool(equal_nan)), rank0="python")


# --- cross, ptp, inner, vdot, gradient, interp, lexsort (numpy.h) ------------------------


@_implements(np.cross)
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = to_tensor(a, "numpy.cross's operand"), to_tensor(b, "numpy.cross's operand")
    r = Traced(_core.cross(x, y, axisa, axisb, axisc))
    r._rank0 = "array" if not r.shape else None  # NumPy's 0-d array of two 2-vectors
    return r


@_implements(np.ptp)
def _ptp(a, axis=None, out=None, keepdims=False):
    if out is not None:
        raise TracingError("tinymlir cannot trace numpy.ptp with out=")
    return Traced(_core.ptp(_traced(a, "numpy.ptp's operand")._t, axis, bool(keepdims)))


@_implements(np.inner)
def _inner(a, b):
    return Traced(
        _core.inner(to_tensor(a, "numpy.inner's operand"), to_tensor(b, "numpy.inner's operand"))
    )


@_implements(np.vdot)
def _vdot(a, b):
    return Traced(
        _core.vdot(to_tensor(a, "numpy.vdot's operand"), to_tensor(b, "numpy.vdot's operand"))
    )


@_implements(np.gradient)
def _gradient(f, *varargs, axis=None, edge_order=1):
    """NumPy's gradient along each axis asked for (all by default), in their
    order: one array, or a tuple of them; spacings as NumPy takes them (none,
    one scalar for all, or one per axis: a scalar or the coordinates)."""
    t = _traced(f, "numpy.gradient's operand")
    spacings = [to_tensor(s, "numpy.gradient's spacing") for s in varargs]
    grads = tuple(map(Traced, _core.gradient(t._t, spacings, axis, operator.index(edge_order))))
    return grads[0] if len(grads) == 1 else grads


@_implements(np.interp)
def _interp(x, xp, fp, left=None, right=None, period=None):
    if period is not None:
        raise TracingError("tinymlir traces numpy.interp without period=")
    bounds = [None if v is None else to_tensor(v, "numpy.interp's bound") for v in (left, right)]
    x, xp, fp = (to_tensor(v, "numpy.interp's operand") for v in (x, xp, fp))
    return Traced(_core.interp(x, xp, fp, *bounds))


@_implements(np.lexsort)
def _lexsort(keys, axis=-1):
    if operator.index(axis) not in (-1, 0):
        raise TracingError("tinymlir traces numpy.lexsort of 1-D keys")
    if isinstance(keys, (Traced, np.ndarray)):  # one array: its rows are the keys
        return Traced(_core.lexsort(to_tensor(keys, "numpy.lexsort's keys")))
    return Traced(_core.lexsort([to_tensor(k, "numpy.lexsort's key") for k in keys]))


# --- moveaxis, column_stack, append, trapezoid, digitize, isin, polyval, select, sinc,
# --- array_equal, fix (numpy.h) ----------------------------------------------------


def _axes_list(axis):
    return [operator.index(a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]


@_implements(np.moveaxis)
def _moveaxis(a, source, destination):
    t = _traced(a, "numpy.moveaxis's operand")
    order = _core.moveaxis_order(t.ndim, _axes_list(source), _axes_list(destination))
    return t.transpose(order)  # a view, as NumPy's


@_implements(np.column_stack)
def _column_stack(tup):
    return Traced(_core.column_stack([to_tensor(a, "numpy.column_stack's operand") for a in tup]))


@_implements(np.append)
def _append(arr, values, axis=None):
    a, v = to_tensor(arr, "numpy.append's array"), to_tensor(values, "numpy.append's values")
    return Traced(_core.append(a, v, None if axis is None else operator.index(axis)))


@_implements(np.trapezoid)
def _trapezoid(y, x=None, dx=1.0, axis=-1):
    t = _traced(y, "numpy.trapezoid's operand")
    xs = None if x is None else to_tensor(x, "numpy.trapezoid's x")
    d = to_tensor(dx, "numpy.trapezoid's dx")
    return Traced(_core.trapezoid(t._t, xs, d, operator.index(axis)))


@_implements(np.digitize)
def _digitize(x, bins, right=False):
    t, b = to_tensor(x, "numpy.digitize's operand"), to_tensor(bins, "numpy.digitize's bins")
    return Traced(_core.digitize(t, b, bool(right)))


@_implements(np.isin)
def _isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    e, t = to_tensor(element, "numpy.isin's operand"), to_tensor(test_elements, "numpy.isin's test")
    return Traced(_core.isin(e, t, bool(invert)))


@_implements(np.vander)
def _vander(x, N=None, increasing=False):
    n = None if N is None else operator.index(N)
    return Traced(_core.vander(to_tensor(x, "numpy.vander's x"), n, bool(increasing)))


@_implements(np.polyfit)
def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    if rcond is not None or full or cov is not False:
        raise TracingError("tinymlir traces numpy.polyfit without rcond=, full= and cov=")
    weights = None if w is None else to_tensor(w, "numpy.polyfit's w")
    return Traced(
        _core.polyfit(
            to_tensor(x, "numpy.polyfit's x"),
            to_tensor(y, "numpy.polyfit's y"),
            operator.index(deg),
            weights,
        )
    )


@_implements(np.polyval)
def _polyval(p, x):
    return Traced(
        _core.polyval(to_tensor(p, "numpy.polyval's p"), to_tensor(x, "numpy.polyval's x"))
    )


@_implements(np.select)
def _select(condlist, choicelist, default=0):
    conds = [to_tensor(c, "numpy.select's condition") for c in condlist]
    choices = [to_tensor(c, "numpy.select's choice") for c in choicelist]
    return Traced(_core.select(conds, choices, to_tensor(default, "numpy.select's default")))


@_implements(np.sinc)
def _sinc(x):
    return Traced(_core.sinc(to_tensor(x, "numpy.sinc's operand")))


@_implements(np.array_equal)
def _array_equal(a1, a2, equal_nan=False):
    x, y = (
        to_tensor(a1, "numpy.array_equal's operand"),
        to_tensor(a2, "numpy.array_equal's operand"),
    )
    return Traced(_core.array_equal(x, y, bool(equal_nan)), rank0="python")


@_implements(np.fix)
def _fix(x, out=None):
    if out is not None:
        raise TracingError("tinymlir cannot trace numpy.fix with out=")
    return Traced(_core.trunc(to_tensor(x, "numpy.fix's operand")))  # ceil below 0, floor above


# --- atleast_*d, dstack, hsplit/vsplit/dsplit, rollaxis, broadcast_arrays, ediff1d -------


def _atleast(rank):
    def atleast(*arys):
        out = []
        for a in arys:
            t = _traced(a, f"numpy.atleast_{rank}d's operand")
            shape = list(_core.atleast(t._t, rank).shape)
            out.append(t._view_of_shape(shape))  # a view, as NumPy's
        return out[0] if len(out) == 1 else tuple(out)

    return atleast


_FUNCTIONS[np.atleast_1d] = _atleast(1)
_FUNCTIONS[np.atleast_2d] = _atleast(2)
_FUNCTIONS[np.atleast_3d] = _atleast(3)


@_implements(np.dstack)
def _dstack(tup):
    return Traced(_core.joined("dstack", [to_tensor(a, "numpy.dstack's operand") for a in tup]))


@_implements(np.rollaxis)
def _rollaxis(a, axis, start=0):
    t = _traced(a, "numpy.rollaxis's operand")
    return t.transpose(_core.rollaxis_order(t.ndim, operator.index(axis), operator.index(start)))


@_implements(np.broadcast_arrays)
def _broadcast_arrays(*args, subok=False):
    tensors = [to_tensor(a, "numpy.broadcast_arrays' operand") for a in args]
    return tuple(Traced(t) for t in _core.broadcast_arrays(tensors))


@_implements(np.ediff1d)
def _ediff1d(ary, to_end=None, to_begin=None):
    t = _traced(ary, "numpy.ediff1d's operand")
    end, begin = (
        None if v is None else to_tensor(v, "numpy.ediff1d's value") for v in (to_end, to_begin)
    )
    return Traced(_core.ediff1d(t._t, end, begin))


# --- NumPy 2's array-API names, multi_dot, diagflat, unstack, *_indices_from --------


@_implements(np.linalg.multi_dot)
def _multi_dot(arrays, *, out=None):
    """NumPy's order of the products (numpy.h's la::multiDot)."""
    tensors = [to_tensor(a, "numpy.linalg.multi_dot's operand") for a in arrays]
    return Traced(_core.multi_dot(tensors))


@_implements(np.linalg.vector_norm)
def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """NumPy's: the axes given merged into one (all of them by default), then
    np.linalg.norm's vector norm, with size-1 axes where keepdims."""
    t = _traced(x, "numpy.linalg.vector_norm's operand")
    axes = None if axis is None else _axes_list(axis)
    p, name = (None, ord) if isinstance(ord, str) else (float(ord), "")
    return Traced(_core.vector_norm(t._t, axes, bool(keepdims), p, name))


@_implements(np.linalg.matrix_norm)
def _matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return np.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@_implements(np.linalg.matrix_transpose, np.matrix_transpose)
def _matrix_transpose(x, /):
    return _traced(x, "numpy.matrix_transpose's operand").mT


@_implements(np.linalg.matmul)
def _linalg_matmul(x1, x2, /):
    return np.matmul(x1, x2)


@_implements(np.linalg.vecdot)
def _linalg_vecdot(x1, x2, /, *, axis=-1):
    return np.vecdot(x1, x2, axis=axis)


@_implements(np.linalg.outer)
def _linalg_outer(x1, x2, /):
    for x in (x1, x2):
        if np.ndim(x) != 1:
            raise ValueError(
                f"Input arrays must be one-dimensional, but they are x1.ndim={np.ndim(x1)} "
                f"and x2.ndim={np.ndim(x2)}."
            )
    return np.outer(x1, x2)


@_implements(np.linalg.trace)
def _linalg_trace(x, /, *, offset=0, dtype=None):
    return np.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


@_implements(np.linalg.diagonal)
def _linalg_diagonal(x, /, *, offset=0):
    return np.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@_implements(np.linalg.tensordot)
def _linalg_tensordot(x1, x2, /, *, axes=2):
    return np.tensordot(x1, x2, axes=axes)


@_implements(np.linalg.cross)
def _linalg_cross(x1, x2, /, *, axis=-1):
    for x in (x1, x2):
        if np.shape(x)[axis] != 3:
            raise ValueError(
                "Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
                f"{np.shape(x1)[axis]} and {np.shape(x2)[axis]} dimensional instead."
            )
    return np.cross(x1, x2, axis=axis)


@_implements(np.astype)
def _astype(x, dtype, /, *, copy=True, device=None):
    return _traced(x, "numpy.astype's operand").astype(dtype, copy=copy)


@_implements(np.diagflat)
def _diagflat(v, k=0):
    t = _traced(v, "numpy.diagflat's operand")
    return Traced(_core.diag(t.ravel()._t, operator.index(k)))


@_implements(np.unstack)
def _unstack(x, /, *, axis=0):
    """NumPy's: views of x along `axis`, one per index."""
    t = _traced(x, "numpy.unstack's operand")
    if t.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    moved = np.moveaxis(t, axis, 0)
    return tuple(moved[i] for i in _range(moved.shape[0]))


def _indices_from(name):
    original = getattr(np, name.removesuffix("_from"))

    def indices_from(arr, k=0):
        """NumPy's, of the (static) shape: constant index arrays."""
        if np.ndim(arr) != 2:
            raise ValueError("input array must be 2-d")
        rows, cols = np.shape(arr)
        return tuple(map(known_constant, original(rows, operator.index(k), cols)))

    return indices_from


for _name in ("triu_indices_from", "tril_indices_from"):
    _implements(getattr(np, _name))(_indices_from(_name))


# --- partition, argpartition ---------------------------------------------------------


def _partitioned(name):
    def partition(a, kth, axis=-1, kind="introselect", order=None):
        """A full (stable) sort: a valid partition for every kth, as NumPy
        defines one (each kth's element is NumPy's, and the others are on its
        sides), in an order within the sides that NumPy leaves to its
        introselect."""
        if order is not None:
            raise TracingError(f"tinymlir cannot trace numpy.{name} with order=")
        t = _traced(a, f"numpy.{name}'s operand")
        ks = np.asarray(_static(kth, f"numpy.{name}'s kth"))
        if ks.dtype.kind not in "iu":
            raise TypeError("Partition index must be integer")
        axis = None if axis is None else operator.index(axis)
        return Traced(_core.partition(t._t, ks.reshape(-1).tolist(), axis, name == "argpartition"))

    return partition


_implements(np.partition)(_partitioned("partition"))
_implements(np.argpartition)(_partitioned("argpartition"))


# --- unravel_index, ravel_multi_index (numpy.h) ---------------------------------------


def _dims(shape):
    return [operator.index(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,))]


@_implements(np.unravel_index)
def _unravel_index(indices, shape, order="C"):
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    t = to_tensor(indices, "numpy.unravel_index's indices")
    return tuple(Traced(p) for p in _core.unravel_index(t, _dims(shape), order))


@_implements(np.ravel_multi_index)
def _ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    if not isinstance(mode, str):
        raise TracingError("tinymlir traces numpy.ravel_multi_index with one mode for all axes")
    parts = [to_tensor(i, "numpy.ravel_multi_index's index") for i in multi_index]
    return Traced(_core.ravel_multi_index(parts, _dims(dims), mode, order))
