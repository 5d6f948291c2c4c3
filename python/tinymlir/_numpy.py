"""NumPy's dispatch protocols on traced values.

``__array_ufunc__`` maps NumPy's elementwise ufuncs (and ``matmul``) to the C++
frontend; ``__array_function__`` maps a table of array functions. Anything
else raises a ``TracingError`` (a ``TypeError``) that names the NumPy function:
nothing is ever converted to a constant silently.
"""

from __future__ import annotations

import inspect
import math
import operator

import numpy as np

from . import _tinymlir as _core
from ._creation import full_like
from ._trace import (
    Masked,
    Traced,
    TracingError,
    _arange,  # noqa: F401  (NumPy's, also while creation is traced)
    dtype_name,
    folded,
    layers,
    to_tensor,
)

# NumPy's ufuncs of ops.def's elementwise rows (np.abs is np.absolute, np.pow
# is np.power), and matmul.
_UNARY = {np.logical_not: _core.logical_not}
_BINARY = {
    np.matmul: _core.matmul,
    np.logical_and: _core.logical_and,
    np.logical_or: _core.logical_or,
    np.logical_xor: _core.logical_xor,
}
for _name, _arity in _core.ELEMENTWISE:
    if isinstance(getattr(np, _name, None), np.ufunc) and _arity in (1, 2):
        (_UNARY if _arity == 1 else _BINARY)[getattr(np, _name)] = getattr(_core, _name)
_TRACED = ", ".join(
    sorted(
        ["positive", "square", "heaviside", "isnan", "isinf", "isfinite"]
        + [u.__name__ for u in (*_UNARY, *_BINARY)]
    )
)


# ufunc.reduce as the reduction it is (NumPy's default axis 0); other binary
# ufuncs by their own name (the core's reduceUfunc: subtract, bitwise_and, ...).
_REDUCE = {
    np.add: "sum",
    np.multiply: "prod",
    np.maximum: "max",
    np.minimum: "min",
}


def _ufunc_method(ufunc, method, inputs, kwargs, name):
    if method == "reduce" and ufunc.nin == 2:
        how = _REDUCE.get(ufunc, ufunc.__name__)
        return reduction(how, _bound(_UFUNC_REDUCE, inputs, kwargs), f"{name}.reduce")
    if method == "accumulate":
        return _accumulate_method(ufunc, *inputs, **kwargs)
    if method == "reduceat":
        return _reduceat_method(ufunc, *inputs, **kwargs)
    if method == "outer" and len(inputs) == 2:
        a, b = (to_tensor(x, f"{name}.outer's operand") for x in inputs)
        return ufunc(*map(Traced, _core.outer_operands(a, b)), **kwargs)
    raise TracingError(
        f"tinymlir cannot trace {name}.{method} (plain calls, at, outer, and reduce "
        "and accumulate of binary ufuncs are traced)"
    )


def _accumulate_method(ufunc, array, axis=0, dtype=None, out=None):
    """ufunc.accumulate: the core's (tensor.h's accumulate)."""
    name = f"numpy.{ufunc.__name__}.accumulate"
    if axis is None or isinstance(axis, tuple):
        raise ValueError("accumulate does not allow multiple axes")
    t = to_tensor(array, f"{name}'s operand")
    dtype = None if dtype is None else dtype_name(np.dtype(dtype), f"{name}'s dtype")
    r = Traced(_core.accumulate(ufunc.__name__, t, operator.index(axis), dtype))
    return r if out is None else _into(out, r, name)


def _reduceat_method(ufunc, array, indices, axis=0, dtype=None, out=None):
    """ufunc.reduceat: the core's (tensor.h's reduceAt), at indices known while tracing."""
    name = f"numpy.{ufunc.__name__}.reduceat"
    t = to_tensor(array, f"{name}'s operand")
    at = to_tensor(indices, f"{name}'s indices")
    dtype = None if dtype is None else dtype_name(np.dtype(dtype), f"{name}'s dtype")
    r = Traced(_core.reduceat(ufunc.__name__, t, at, operator.index(axis), dtype))
    return r if out is None else _into(out, r, name)


def _out_array(out, name):
    """The traced array an out= argument names (a 1-tuple of one too)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TracingError(f"tinymlir traces {name} with one out= array")
        out = out[0]
    if not isinstance(out, Traced):
        raise TracingError(
            f"tinymlir: {name}(out=...) writes into a traced array only (one "
            "made inside the function, or an argument), got "
            f"{type(out).__name__}"
        )
    return out


def _into(out, result, name, casting="same_kind", where=None):
    """out= of a ufunc or function: the result written into `out` (a traced
    array) by NumPy's `casting` rule, where `where` (a tensor) holds; `out` is
    returned, as NumPy returns it."""
    out = _out_array(out, name)
    r = result._t if isinstance(result, Traced) else to_tensor(result)
    return out._inplace(Traced(r), name.removeprefix("numpy."), casting, where)  # Ref.update


def _at(ufunc, inputs, name):
    """ufunc.at(a, indices, b): the C++ core's ufuncAt (unbuffered: each
    position in order, a repeated one applying again)."""
    a, indices = inputs[0], inputs[1]
    if not isinstance(a, Traced):
        raise TracingError(f"tinymlir: {name}.at writes into a traced array only")
    if len(inputs) < 3 and ufunc.nin == 2:
        raise ValueError("second operand needed for ufunc")
    if isinstance(indices, tuple) and len(indices) == 1:
        indices = indices[0]
    parts = indices if isinstance(indices, tuple) else (indices,)
    if any(isinstance(i, slice) or i is Ellipsis or i is None for i in parts):
        raise TracingError(
            f"tinymlir traces {name}.at with int positions (an int array, or a tuple of "
            "them, one per leading axis), not slices"
        )
    values = to_tensor(inputs[2], f"{name}.at's values") if len(inputs) > 2 else None
    if isinstance(indices, tuple):
        ids = [to_tensor(i, f"{name}.at's indices") for i in indices]
        a[...] = Traced(_core.ufunc_at_tuple(ufunc.__name__, a._t, ids, values))
    else:
        ids = to_tensor(indices, f"{name}.at's indices")
        a[...] = Traced(_core.ufunc_at(ufunc.__name__, a._t, ids, values))
    return None


def array_ufunc(ufunc, method, inputs, kwargs):
    name = f"numpy.{ufunc.__name__}"
    if method == "at":
        return _at(ufunc, inputs, name)
    out, where = kwargs.get("out"), kwargs.get("where", True)
    if method != "__call__" and out is not None:  # ufunc.reduce and kin: their own where=
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        return _into(out, array_ufunc(ufunc, method, inputs, kwargs), name)
    if method == "__call__" and (out is not None or where is not True):
        casting = kwargs.get("casting", "same_kind")
        kwargs = {k: v for k, v in kwargs.items() if k not in ("out", "where")}
        result = array_ufunc(ufunc, method, inputs, kwargs)
        if isinstance(result, tuple):
            raise TracingError(f"tinymlir traces {name} with out= or where= of one output")
        mask = None if where is True else to_tensor(where, f"{name}'s where")
        if out is None:
            return Traced(_core.ufunc_where(result._t, mask))
        return _into(out, result, name, casting, mask)
    if method != "__call__":
        return _ufunc_method(ufunc, method, inputs, dict(kwargs), name)
    if not kwargs:
        r = folded(ufunc, *inputs)  # arrays made from static values: NumPy's own result
        if r is not None:
            return r
    for key, value in kwargs.items():
        if ufunc.__name__ in ("vecdot", "matvec", "vecmat"):
            break  # their own keywords, below
        if key not in ("out", "dtype", "casting") and not (
            (key == "where" and value is True) or (key == "signature" and value is None)
        ):
            raise TracingError(f"tinymlir cannot trace {name} with {key}=...")
    if kwargs.get("dtype") is not None:  # computed in that dtype: the core's casting check
        dtype = dtype_name(np.dtype(kwargs["dtype"]), f"{name}'s dtype")
        tensors = [to_tensor(x, f"{name}'s operand") for x in inputs]
        casting = kwargs.get("casting", "same_kind")
        return array_ufunc(
            ufunc, method, _core.ufunc_operands(ufunc.__name__, tensors, dtype, casting), {}
        )
    if ufunc is np.divmod:
        a = to_tensor(inputs[0], f"{name}'s first operand")
        return tuple(
            Traced(t) for t in _core.divmod(a, to_tensor(inputs[1], f"{name}'s second operand"))
        )
    if ufunc.__name__ in ("vecdot", "matvec", "vecmat"):  # NumPy 2's gufuncs
        operands = [to_tensor(x, f"{name}'s operand") for x in inputs]
        if ufunc.__name__ == "vecdot" and "axis" in kwargs:
            operands.append(operator.index(kwargs.pop("axis")))
        _check(ufunc.__name__, **kwargs)
        return Traced(getattr(_core, ufunc.__name__)(*operands))
    if ufunc is np.positive:
        return Traced(_core.positive(to_tensor(inputs[0], f"{name}'s operand")))
    if ufunc in _UNARY:
        return Traced(_UNARY[ufunc](to_tensor(inputs[0], f"{name}'s operand")))
    if ufunc in _BINARY:
        a = to_tensor(inputs[0], f"{name}'s first operand")
        b = to_tensor(inputs[1], f"{name}'s second operand")
        return Traced(_BINARY[ufunc](a, b))
    if ufunc in (np.square, np.isnan, np.isinf, np.isfinite):
        return Traced(getattr(_core, ufunc.__name__)(to_tensor(inputs[0], f"{name}'s operand")))
    if ufunc in (np.deg2rad, np.radians, np.rad2deg, np.degrees):
        f = _core.deg2rad if ufunc in (np.deg2rad, np.radians) else _core.rad2deg
        return Traced(f(to_tensor(inputs[0], f"{name}'s operand")))
    if ufunc is np.float_power:
        x = to_tensor(inputs[0], f"{name}'s first operand")
        return Traced(_core.float_power(x, to_tensor(inputs[1], f"{name}'s second operand")))
    if ufunc is np.heaviside:
        x1 = to_tensor(inputs[0], f"{name}'s first operand")
        return Traced(_core.heaviside(x1, to_tensor(inputs[1], f"{name}'s second operand")))
    raise TracingError(
        f"tinymlir cannot trace {name}: it is not among the traced NumPy functions ({_TRACED})"
    )


# --- Array functions ----------------------------------------------------------------

_FUNCTIONS = {}


def _implements(*funcs):
    def register(fn):
        for f in funcs:
            # Imported while a trace has np.zeros & co. wrapped (_creation):
            # the key is NumPy's own function, which its dispatch passes.
            _FUNCTIONS[getattr(f, "_tinymlir_original", f)] = fn
        return fn

    return register


def _traced(x, what):
    return x if isinstance(x, Traced) else Traced(to_tensor(x, what))


def _check(name, **unsupported):
    """Refuses the keywords given (not None) that tinymlir does not trace."""
    for key, value in unsupported.items():
        if value is not None:
            raise TracingError(f"tinymlir cannot trace numpy.{name} with {key}=")


# --- Reductions: np.sum and the others, with NumPy's keywords -------------------------

_NoValue = np._NoValue
_UFUNC_REDUCE = inspect.Signature(
    [inspect.Parameter("a", inspect.Parameter.POSITIONAL_ONLY)]
    + [
        inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
        for k, d in (("axis", 0), ("dtype", None), ("out", None), ("keepdims", False))
    ]
    + [
        inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=_NoValue)
        for k in ("initial", "where")
    ]
)


def _bound(signature, args, kwargs):
    """The arguments of a call by name, defaults included (NumPy's TypeError
    for ones the function does not take)."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


#: Functions whose out= is their own (the others' is array_function's _into,
#: same-kind): other casting rules, or NumPy's checks of it.
_OWN_OUT = {np.copyto, np.clip, np.concatenate, np.stack, np.dot, np.einsum, np.median}


def _given(value):
    return value is not None and value is not _NoValue


def _number(x):
    """ddof and its kin: a float as it is, else an integer (NumPy's TypeError)."""
    return float(x if isinstance(x, float) else operator.index(x))


def reduction(name, args, what):
    """NumPy's reduction `name` of args (a function's bound arguments): the
    C++ core's reduce; out= written by its reduceInto."""
    if _given(args.get("mean")):
        raise TracingError(f"tinymlir cannot trace {what} with mean=...")
    dtype = args.get("dtype")
    where = args.get("where", _NoValue)
    initial = args.get("initial", _NoValue)
    a, out = args["a"], args.get("out")
    keywords = (
        args.get("axis"),
        _given(args.get("keepdims")) and bool(args["keepdims"]),
        None if dtype is None else dtype_name(np.dtype(dtype), f"{what}'s dtype"),
        None if where is _NoValue or where is True else to_tensor(where, f"{what}'s where"),
        None if not _given(initial) else to_tensor(initial, f"{what}'s initial"),
        _number(args.get("ddof", 0)),
        _number(args["correction"]) if _given(args.get("correction")) else None,
    )
    if isinstance(a, Masked):
        r = a._m.reduce(name, *keywords)
        if isinstance(r, _core.MaskedRead):
            if out is not None:
                raise TracingError(f"tinymlir: {what} of a boolean-mask read into out=")
            return Masked(r)
    else:
        r = _core.reduce(name, _traced(a, f"{what}'s operand")._t, *keywords)
    if out is None:
        return Traced(r)
    out = _out_array(out, what)
    _core.reduce_into(out._ref, r, name)
    return out


def _reduction(func, name):
    signature = inspect.signature(func)

    def reduce(*args, **kwargs):
        return reduction(name, _bound(signature, args, kwargs), f"numpy.{name}")

    reduce.__name__ = f"_{func.__name__}"
    return reduce


for _func, _name in (
    (np.sum, "sum"),
    (np.prod, "prod"),
    (np.max, "max"),
    (np.amax, "max"),
    (np.min, "min"),
    (np.amin, "min"),
    (np.any, "any"),
    (np.all, "all"),
    (np.mean, "mean"),
    (np.var, "var"),
    (np.std, "std"),
    (np.nansum, "nansum"),
    (np.nanprod, "nanprod"),
    (np.nanmax, "nanmax"),
    (np.nanmin, "nanmin"),
    (np.nanmean, "nanmean"),
    (np.nanvar, "nanvar"),
    (np.nanstd, "nanstd"),
):
    _implements(_func)(_reduction(_func, _name))
    _OWN_OUT.add(_func)  # out= in their own way (NumPy's reduction rules)
    layers.masked_functions |= {_func}


@_implements(np.where)
def _where(condition, x=None, y=None):
    if x is None or y is None:
        raise TracingError(
            "tinymlir cannot trace numpy.where(condition) without x and y: its "
            "result's shape depends on the data"
        )
    return Traced(
        _core.where(
            to_tensor(condition, "numpy.where's condition"),
            to_tensor(x, "numpy.where's x"),
            to_tensor(y, "numpy.where's y"),
        ),
        rank0="array",
    )


@_implements(np.clip)
def _clip(a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue, **kwargs):
    casting = kwargs.pop("casting", "same_kind")
    if kwargs.get("where") is True:
        del kwargs["where"]
    _check("clip", **kwargs)
    # NumPy's binding of its two spellings of the bounds (numpy/_core/fromnumeric.py)
    if a_min is _NoValue and a_max is _NoValue:
        lo, hi = (None if v is _NoValue else v for v in (min, max))
    elif a_min is _NoValue or a_max is _NoValue:
        missing = "a_min" if a_min is _NoValue else "a_max"
        raise TypeError(f"clip() missing 1 required positional argument: '{missing}'")
    elif min is not _NoValue or max is not _NoValue:
        raise ValueError(
            "Passing `min` or `max` keyword argument when `a_min` and `a_max` are "
            "provided is forbidden."
        )
    else:
        lo, hi = a_min, a_max
    t = _traced(a, "numpy.clip's operand")
    bounds = [None if v is None else to_tensor(v, "numpy.clip's bound") for v in (lo, hi)]
    r = Traced(_core.clip(t._t, *bounds))
    return r if out is None else _into(out, r, "numpy.clip", casting)


def _join(name, arrays, axis=None, out=None, dtype=None, casting="same_kind"):
    """np.concatenate and the stacking functions: the core's joined; out=
    takes the result by the `casting` rule, as NumPy's."""
    if out is not None and dtype is not None:
        raise TypeError(
            f"{name}() only takes `out` or `dtype` as an argument, but both were provided."
        )
    tensors = [to_tensor(a, f"numpy.{name}'s operand") for a in arrays]
    dtype = None if dtype is None else dtype_name(np.dtype(dtype), f"numpy.{name}'s dtype")
    r = Traced(_core.joined(name, tensors, axis, dtype, casting))
    return r if out is None else _into(out, r, f"numpy.{name}", casting)


@_implements(np.stack)
def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return _join("stack", arrays, operator.index(axis), out, dtype, casting)


@_implements(np.vstack)
def _vstack(tup, *, dtype=None, casting="same_kind"):
    return _join("vstack", tup, dtype=dtype, casting=casting)


@_implements(np.dot)
def _dot(a, b, out=None):
    r = Traced(_core.dot(to_tensor(a, "numpy.dot's operand"), to_tensor(b, "numpy.dot's operand")))
    if out is None:
        return r
    o = _out_array(out, "numpy.dot")
    _core.dot_into(o._ref, r._t)
    return o


@_implements(np.round, np.around)
def _round(a, decimals=0, out=None):
    """NumPy's PyArray_Round (numpy.h's round)."""
    _check("round", out=out)  # given by keyword, array_function's
    a = _traced(a, "numpy.round's operand")
    return Traced(_core.round(a._t, operator.index(decimals)))


# --- np.linalg (the C++ core's LAPACK kernels) ------------------------------------


def _linalg_result(name, *parts):
    """NumPy 2's named results (EighResult, SVDResult...), else a tuple."""
    cls = getattr(getattr(np.linalg, "_linalg", None), name, None)
    return cls(*parts) if cls is not None else tuple(parts)


def _matrix(a, name):
    return to_tensor(a, f"numpy.linalg.{name}'s operand")


@_implements(np.linalg.cholesky)
def _cholesky(a, /, *, upper=False):
    return Traced(_core.cholesky(_matrix(a, "cholesky"), bool(upper)))


@_implements(np.linalg.solve)
def _solve(a, b):
    return Traced(_core.solve(_matrix(a, "solve"), to_tensor(b, "numpy.linalg.solve's b")))


@_implements(np.linalg.inv)
def _inv(a):
    return Traced(_core.inv(_matrix(a, "inv")))


@_implements(np.linalg.det)
def _det(a):
    return Traced(_core.det(_matrix(a, "det")))


@_implements(np.linalg.slogdet)
def _slogdet(a):
    sign, logdet = _core.slogdet(_matrix(a, "slogdet"))
    return _linalg_result("SlogdetResult", Traced(sign), Traced(logdet))


@_implements(np.linalg.eigh)
def _eigh(a, UPLO="L"):
    w, v = _core.eigh(_matrix(a, "eigh"), UPLO)
    return _linalg_result("EighResult", Traced(w), Traced(v))


@_implements(np.linalg.eigvalsh)
def _eigvalsh(a, UPLO="L"):
    return Traced(_core.eigh(_matrix(a, "eigvalsh"), UPLO)[0])


@_implements(np.linalg.svd)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    t = _matrix(a, "svd")
    if not compute_uv:
        return Traced(_core.singular_values(t))
    u, s, vh = _core.svd(t, bool(full_matrices))
    return _linalg_result("SVDResult", Traced(u), Traced(s), Traced(vh))


if hasattr(np.linalg, "svdvals"):

    @_implements(np.linalg.svdvals)
    def _svdvals(x, /):
        return Traced(_core.singular_values(_matrix(x, "svdvals")))


@_implements(np.linalg.qr)
def _qr(a, mode="reduced"):
    if mode not in ("reduced", "r"):
        raise TracingError(
            f"tinymlir traces numpy.linalg.qr with mode 'reduced' or 'r', not {mode!r}"
        )
    q, r = _core.qr(_matrix(a, "qr"))
    return Traced(r) if mode == "r" else _linalg_result("QRResult", Traced(q), Traced(r))


@_implements(np.linalg.lstsq)
def _lstsq(a, b, rcond=None):
    if rcond is not None:
        raise TracingError(
            "tinymlir traces numpy.linalg.lstsq with rcond=None (NumPy 2's "
            "default, eps * max(M, N)) only"
        )
    x, residuals, rank, s = _core.lstsq(_matrix(a, "lstsq"), to_tensor(b, "numpy.linalg.lstsq's b"))
    return Traced(x), Traced(residuals), Traced(rank), Traced(s)


@_implements(np.linalg.matrix_power)
def _matrix_power(a, n):
    """NumPy's: binary powers by repeated squaring; a negative n of the inverse."""
    t = _traced(a, "numpy.linalg.matrix_power's operand")
    return Traced(_core.matrix_power(t._t, operator.index(n)))


@_implements(np.linalg.pinv)
def _pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    """NumPy's (numpy.h's pinv, which reads rcond and rtol as NumPy's)."""
    t = _traced(a, "numpy.linalg.pinv's operand")
    given = rtol is not np._NoValue
    return Traced(
        _core.pinv(
            t._t,
            None if rcond is None else float(rcond),
            given,
            float(rtol) if given and rtol is not None else None,
        )
    )


@_implements(np.linalg.matrix_rank)
def _matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    t = _traced(A, "numpy.linalg.matrix_rank's operand")
    tol = None if tol is None else to_tensor(tol, "numpy.linalg.matrix_rank's tol")
    return Traced(_core.matrix_rank(t._t, tol, None if rtol is None else float(rtol)))


def _norm_order(ord):
    """np.linalg.norm's ord as the core's (a number, or a name)."""
    if isinstance(ord, str):
        return None, ord
    return (None if ord is None else float(ord)), ""


@_implements(np.linalg.cond)
def _cond(x, p=None):
    t = _traced(x, "numpy.linalg.cond's operand")
    return Traced(_core.cond(t._t, *_norm_order(p)))


@_implements(np.linalg.norm)
def _norm(x, ord=None, axis=None, keepdims=False):
    """NumPy's norms (numpy.h's la::norm)."""
    t = _traced(x, "numpy.linalg.norm's operand")
    if isinstance(axis, (tuple, list)):
        axis = [operator.index(a) for a in axis]
    elif axis is not None:
        axis = operator.index(axis)
    return Traced(_core.norm(t._t, *_norm_order(ord), axis, bool(keepdims)))


@_implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    t = _traced(array, "numpy.broadcast_to's operand")
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)
    return Traced(None, t._ref.broadcasted([operator.index(d) for d in shape]))  # NumPy's view


@_implements(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    if writeable:
        raise TracingError(
            "tinymlir traces sliding_window_view read-only (writeable=True makes "
            "overlapping writable windows)"
        )
    t = _traced(x, "numpy.sliding_window_view's operand")
    window = list(window_shape) if np.iterable(window_shape) else [window_shape]
    axes = None if axis is None else list(axis) if np.iterable(axis) else [axis]
    return Traced(None, t._ref.windowed([operator.index(w) for w in window], axes))  # a view


@_implements(np.apply_along_axis)
def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """NumPy's algorithm, traced: func1d called on each 1-D slice along the axis
    (the loop unrolled, in NumPy's order), each result cast to the first's
    dtype, placed where NumPy's buffer puts it."""
    t = _traced(arr, "numpy.apply_along_axis's operand")
    nd = t.ndim
    axis = _core.normalize_axes(axis, nd)[0]  # NumPy's AxisError
    dims = list(range(nd))
    view = np.transpose(t, dims[:axis] + dims[axis + 1 :] + [axis])
    inds = list(np.ndindex(view.shape[:-1]))
    if not inds:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    what = "numpy.apply_along_axis's function result"
    results = [Traced(to_tensor(func1d(view[i + (...,)], *args, **kwargs), what)) for i in inds]
    first = results[0]
    parts = [np.broadcast_to(r.astype(first.dtype), first.shape) for r in results]
    buff = np.stack(parts).reshape(view.shape[:-1] + first.shape)
    b = list(range(buff.ndim))
    return np.transpose(
        buff, b[:axis] + b[buff.ndim - first.ndim :] + b[axis : buff.ndim - first.ndim]
    )


@_implements(np.flip)
def _flip(m, axis=None):
    t = _traced(m, "numpy.flip's operand")
    return Traced(None, t._ref.flipped(axis), rank0=t._rank0)  # a view, as NumPy's


@_implements(np.rot90)
def _rot90(m, k=1, axes=(0, 1)):
    t = _traced(m, "numpy.rot90's operand")
    r = t._ref.rotated90(operator.index(k), [operator.index(a) for a in axes])
    return Traced(None, r, rank0=t._rank0)  # a view, as NumPy's


def _positions(t, obj, axis, name):
    """np.delete's and np.insert's obj as a tensor: a slice as NumPy's range of
    it along the axis."""
    if isinstance(obj, slice):
        n = t.size if axis is None else t.shape[_core.normalize_axes(axis, t.ndim)[0]]
        obj = np.arange(*obj.indices(n))
    return obj._t if isinstance(obj, Traced) else to_tensor(np.asarray(obj), f"{name}'s obj")


@_implements(np.delete)
def _delete(arr, obj, axis=None):
    t = _traced(arr, "numpy.delete's operand")
    return Traced(_core.delete_items(t._t, _positions(t, obj, axis, "numpy.delete"), axis))


@_implements(np.insert)
def _insert(arr, obj, values, axis=None):
    t = _traced(arr, "numpy.insert's operand")
    v = to_tensor(values, "numpy.insert's values")
    return Traced(_core.insert_items(t._t, _positions(t, obj, axis, "numpy.insert"), v, axis))


@_implements(np.put)
def _put(a, ind, v, mode="raise"):
    if not isinstance(a, Traced):
        raise TracingError("tinymlir: numpy.put writes into a traced array only")
    i = to_tensor(ind, "numpy.put's indices")
    a[...] = Traced(_core.put_flat(a._t, i, to_tensor(v, "numpy.put's values"), mode))


@_implements(np.fliplr)
def _fliplr(m):
    return Traced(None, _traced(m, "numpy.fliplr's operand")._ref.flipped(None, "fliplr"))


@_implements(np.flipud)
def _flipud(m):
    return Traced(None, _traced(m, "numpy.flipud's operand")._ref.flipped(None, "flipud"))


@_implements(np.nan_to_num)
def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    t = _traced(x, "numpy.nan_to_num's operand")
    r = Traced(_core.nan_to_num(t._t, float(nan), posinf, neginf))
    if copy or not isinstance(x, Traced):
        return r
    x[...] = r  # copy=False: in place, as NumPy's
    return x


@_implements(np.diff)
def _diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    t = _traced(a, "numpy.diff's operand")
    ends = [
        None if e is _NoValue else to_tensor(e, "numpy.diff's " + w)
        for e, w in ((prepend, "prepend"), (append, "append"))
    ]
    return Traced(_core.diff(t._t, operator.index(n), operator.index(axis), *ends))


@_implements(np.outer)
def _outer(a, b, out=None):
    _check("outer", out=out)  # given by keyword, array_function's
    return Traced(
        _core.outer(to_tensor(a, "numpy.outer's operand"), to_tensor(b, "numpy.outer's operand"))
    )


@_implements(np.tensordot)
def _tensordot(a, b, axes=2):
    ta, tb = to_tensor(a, "numpy.tensordot's operand"), to_tensor(b, "numpy.tensordot's operand")
    if np.ndim(axes) == 0:
        return Traced(_core.tensordot(ta, tb, operator.index(axes)))
    axes_a, axes_b = axes
    axes_a = [axes_a] if np.ndim(axes_a) == 0 else list(axes_a)
    axes_b = [axes_b] if np.ndim(axes_b) == 0 else list(axes_b)
    return Traced(_core.tensordot(ta, tb, axes_a, axes_b))


@_implements(np.einsum)
def _einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """The C++ core's einsum (sums, diagonals, transposes and matrix products);
    out= takes the result by the `casting` rule, as NumPy's."""
    if not isinstance(subscripts, str):
        raise TracingError("tinymlir traces numpy.einsum with a subscripts string only")
    tensors = [to_tensor(x, "numpy.einsum's operand") for x in operands]
    dtype = None if dtype is None else dtype_name(np.dtype(dtype), "numpy.einsum's dtype")
    r = Traced(_core.einsum(subscripts, tensors, dtype, casting))
    return r if out is None else _into(out, r, "numpy.einsum", casting)


@_implements(np.ravel)
def _ravel(a, order="C"):
    return _traced(a, "numpy.ravel's operand").ravel(order)


@_implements(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if shape is None:
        shape = newshape
    if isinstance(shape, int):
        shape = (shape,)
    return _traced(a, "numpy.reshape's operand").reshape(tuple(shape), order=order, copy=copy)


@_implements(np.transpose)
def _transpose(a, axes=None):
    t = _traced(a, "numpy.transpose's operand")
    return t.transpose() if axes is None else t.transpose(tuple(axes))


@_implements(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    t = _traced(a, "numpy.swapaxes's operand")
    order = _core.swapaxes_order(t.ndim, operator.index(axis1), operator.index(axis2))
    return t.transpose(tuple(order))


@_implements(np.expand_dims)
def _expand_dims(a, axis):
    t = _traced(a, "numpy.expand_dims's operand")
    axes = [operator.index(x) for x in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    return t._view_of_shape(_core.expand_dims(t._t, axes).shape)


@_implements(np.squeeze)
def _squeeze(a, axis=None):
    t = _traced(a, "numpy.squeeze's operand")
    return t._view_of_shape(_core.squeeze(t._t, axis).shape)


def _splitter(name):
    def split(ary, indices_or_sections, axis=0):
        """NumPy's split, array_split, hsplit, vsplit, dsplit: views (C++'s)."""
        t = _traced(ary, f"numpy.{name}'s operand")
        spec = indices_or_sections
        spec = operator.index(spec) if np.ndim(spec) == 0 else [operator.index(i) for i in spec]
        return [Traced(None, r) for r in t._ref.split(name, spec, operator.index(axis))]

    split.__name__ = f"_{name}"
    return split


for _name in ("split", "array_split", "hsplit", "vsplit", "dsplit"):
    _implements(getattr(np, _name))(_splitter(_name))


@_implements(np.concatenate)
def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    axis = None if axis is None else operator.index(axis)
    return _join("concatenate", arrays, axis, out, dtype, casting)


@_implements(np.hstack)
def _hstack(tup, *, dtype=None, casting="same_kind"):
    return _join("hstack", tup, dtype=dtype, casting=casting)


@_implements(np.triu)
def _triu(m, k=0):
    t = _traced(m, "numpy.triu's operand")
    return Traced(_core.triu(t._t, operator.index(k)))


@_implements(np.tril)
def _tril(m, k=0):
    t = _traced(m, "numpy.tril's operand")
    return Traced(_core.tril(t._t, operator.index(k)))


@_implements(np.ones_like)
def _ones_like(a, dtype=None, order="K", subok=True, shape=None, device=None):
    return full_like(a, 1, dtype, shape, "numpy.ones_like")


@_implements(np.zeros_like, np.empty_like)
def _zeros_like(a, dtype=None, order="K", subok=True, shape=None, device=None):
    return full_like(a, 0, dtype, shape, "numpy.zeros_like")  # empty_like: zeros, deterministic


@_implements(np.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, device=None):
    return full_like(a, fill_value, dtype, shape, "numpy.full_like")


@_implements(np.copy)
def _copy(a, order="K", subok=False):
    t = _traced(a, "numpy.copy's operand")
    return Traced(t._t, rank0="array")  # an array, of a scalar too


@_implements(np.copyto)
def _copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, Traced):
        raise TracingError("tinymlir: numpy.copyto writes into a traced array only")
    s_t = to_tensor(src, "numpy.copyto's source")
    w = None if where is True else to_tensor(where, "numpy.copyto's where")
    dst[...] = Traced(_core.copyto(dst._t, s_t, casting, w))


@_implements(np.putmask)
def _putmask(a, mask, values):
    if not isinstance(a, Traced):
        raise TracingError("tinymlir: numpy.putmask writes into a traced array only")
    m = to_tensor(mask, "numpy.putmask's mask")
    a[...] = Traced(_core.putmask(a._t, m, to_tensor(values, "numpy.putmask's values")))


@_implements(np.place)
def _place(arr, mask, vals):
    if not isinstance(arr, Traced):
        raise TracingError("tinymlir: numpy.place writes into a traced array only")
    m = to_tensor(mask, "numpy.place's mask")
    arr[...] = Traced(_core.place(arr._t, m, _traced(vals, "numpy.place's values")._t))


@_implements(np.fill_diagonal)
def _fill_diagonal(a, val, wrap=False):
    if not isinstance(a, Traced):
        raise TracingError("tinymlir: numpy.fill_diagonal writes into a traced array only")
    v = to_tensor(val, "numpy.fill_diagonal's value")
    a[...] = Traced(_core.fill_diagonal(a._t, v, bool(wrap)))


@_implements(np.count_nonzero)
def _count_nonzero(a, axis=None, *, keepdims=False):
    if isinstance(a, Masked):
        r = a._m.reduce("count_nonzero", axis, bool(keepdims))
        return Masked(r) if isinstance(r, _core.MaskedRead) else Traced(r)
    t = _traced(a, "numpy.count_nonzero's operand")
    return Traced(_core.count_nonzero(t._t, axis, bool(keepdims)))


layers.masked_functions |= {np.count_nonzero}


# --- Sorts, accumulations, extreme indices (the C++ row kernels) -----------------


def _sort_operand(a, axis, order, name):
    _check(name, order=order)
    t = _traced(a, f"numpy.{name}'s operand")
    return t, None if axis is None else operator.index(axis)


@_implements(np.sort)
def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Stable always: a valid order for every kind, and NumPy's own for
    kind='stable' (the tie order of its quicksort is its own choice)."""
    t, axis = _sort_operand(a, axis, order, "sort")
    return Traced(_core.sort(t._t, axis, kind, stable))


@_implements(np.argsort)
def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    t, axis = _sort_operand(a, axis, order, "argsort")
    return Traced(_core.argsort(t._t, axis, kind, stable))


def _accumulate(fn, name, a, axis, dtype, out):
    t = _traced(a, f"numpy.{name}'s operand")
    dtype = None if dtype is None else dtype_name(np.dtype(dtype), f"numpy.{name}'s dtype")
    r = Traced(fn(t._t, None if axis is None else operator.index(axis), dtype))
    return _into(out, r, f"numpy.{name}") if out is not None else r


def _running(name):
    """np.cumsum, cumprod, nancumsum and nancumprod: the core's function of the name."""

    def running(a, axis=None, dtype=None, out=None):
        return _accumulate(getattr(_core, name), name, a, axis, dtype, out)

    running.__name__ = f"_{name}"
    return running


for _name in ("cumsum", "cumprod", "nancumsum", "nancumprod"):
    _implements(getattr(np, _name))(_running(_name))


def _cumulative(name):
    """np.cumulative_sum / cumulative_prod (NumPy 2.1): the core's, as cumsum's."""

    def cumulative(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        fn = getattr(_core, name)
        return _accumulate(
            lambda t, ax, dt: fn(t, ax, bool(include_initial), dt), name, x, axis, dtype, out
        )

    cumulative.__name__ = f"_{name}"
    return cumulative


if hasattr(np, "cumulative_sum"):  # NumPy 2.1
    _implements(np.cumulative_sum)(_cumulative("cumulative_sum"))
    _implements(np.cumulative_prod)(_cumulative("cumulative_prod"))


def _extreme_index(name):
    """np.<name> (argmax, argmin, nanargmax, nanargmin): the C++ core's; an
    all-nan slice of nanarg* raises NumPy's ValueError when the kernel runs."""
    fn = getattr(_core, name)

    def extreme_index(a, axis=None, out=None, *, keepdims=False):
        t = _traced(a, f"numpy.{name}'s operand")
        axis = None if axis is None else operator.index(axis)
        r = Traced(fn(t._t, axis, bool(keepdims)))
        return _into(out, r, f"numpy.{name}") if out is not None else r

    return extreme_index


for _name in ("argmax", "argmin", "nanargmax", "nanargmin"):
    _implements(getattr(np, _name))(_extreme_index(_name))


@_implements(np.bincount)
def _bincount(x, weights=None, minlength=0):
    """NumPy's bincount with minlength as the result's length (it must be
    known while tracing): an id at or past it raises a ValueError when the
    kernel runs, as a negative one does (NumPy's)."""
    t = to_tensor(x, "numpy.bincount's operand")
    minlength = operator.index(minlength)
    w = None if weights is None else to_tensor(weights, "numpy.bincount's weights")
    return Traced(_core.bincount(t, minlength, w))


@_implements(np.searchsorted)
def _searchsorted(a, v, side="left", sorter=None):
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    t = _traced(a, "numpy.searchsorted's sorted array")
    order = None if sorter is None else to_tensor(sorter, "numpy.searchsorted's sorter")
    return Traced(
        _core.searchsorted(
            t._t, to_tensor(v, "numpy.searchsorted's values"), side == "right", order
        )
    )


def _quantiles(a, q, axis, keepdims, name, method, ignore_nans=False):
    """np.quantile and np.percentile: the core's (numpy.h), at the static values
    of q, with q's dtype and NumPy's weak_q (q a Python int or float)."""
    t = _traced(a, f"numpy.{name}'s operand")
    qs = np.asarray(q)
    dtype = dtype_name(qs.dtype, f"numpy.{name}'s q")
    values = qs.real.astype(np.float64).reshape(-1).tolist()
    f = getattr(_core, name)
    weak = type(q) in (int, float)  # NumPy's weak_q
    r = f(t._t, values, list(qs.shape), axis, bool(keepdims), dtype, weak, ignore_nans, method)
    return Traced(r)


@_implements(np.quantile)
def _quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    _check("quantile", out=out, weights=weights, interpolation=interpolation)
    return _quantiles(a, q, axis, keepdims, "quantile", method)


@_implements(np.percentile)
def _percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    _check("percentile", out=out, weights=weights, interpolation=interpolation)
    return _quantiles(a, q, axis, keepdims, "percentile", method)


def _nan_order_statistic(name):
    """np.nanquantile and np.nanpercentile: the core's of the numbers in each
    slice (NumPy's RuntimeWarning for a slice of nans only is not given)."""

    def nan_order_statistic(
        a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, **kw
    ):
        _check(name, out=out, **{k: v for k, v in kw.items()})
        return _quantiles(a, q, axis, keepdims, name.removeprefix("nan"), method, True)

    return nan_order_statistic


_implements(np.nanquantile)(_nan_order_statistic("nanquantile"))
_implements(np.nanpercentile)(_nan_order_statistic("nanpercentile"))


@_implements(np.nanmedian)
def _nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of each slice's numbers (NumPy's RuntimeWarning for a slice of
    nans only is not given)."""
    _check("nanmedian", out=out)  # given by keyword, array_function's
    t = _traced(a, "numpy.nanmedian's operand")
    return Traced(_core.nanmedian(t._t, axis, bool(keepdims)))


@_implements(np.median)
def _median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The mean of the middle values (NumPy's), nan where the slice has a nan."""
    t = _traced(a, "numpy.median's operand")
    r = Traced(_core.median(t._t, axis, bool(keepdims)))
    return r if out is None else _into(out, r, "numpy.median", "unsafe")


@_implements(np.real)
def _real(val):
    return _traced(val, "numpy.real's operand").real


@_implements(np.imag)
def _imag(val):
    return _traced(val, "numpy.imag's operand").imag


@_implements(np.angle)
def _angle(z, deg=False):
    return Traced(_core.angle(to_tensor(z, "numpy.angle's operand"), bool(deg)))


@_implements(np.shape)
def _shape(a):
    return a.shape


@_implements(np.ndim)
def _ndim(a):
    return a.ndim


@_implements(np.size)
def _size(a, axis=None):
    if axis is None:
        return a.size
    return math.prod(a.shape[k] for k in _core.normalize_axes(axis, a.ndim))


def _public_name(func):
    """numpy.sort, numpy.linalg.inv, numpy.fft.fft: the name NumPy users call."""
    module = getattr(func, "__module__", None) or "numpy"
    parts = [p for p in module.split(".") if not p.startswith("_")]
    return ".".join((parts or ["numpy"]) + [func.__name__])


def _traced_names():
    return ", ".join(sorted({_public_name(f).removeprefix("numpy.") for f in _FUNCTIONS}))


def array_function(func, types, args, kwargs):
    out = kwargs.get("out")
    if out is not None and func in _FUNCTIONS and func not in _OWN_OUT:
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        return _into(out, array_function(func, types, args, kwargs), f"numpy.{func.__name__}")
    impl = _FUNCTIONS.get(func)
    if impl is None and _public_name(func).startswith("numpy.fft."):
        raise TracingError(
            f"tinymlir cannot trace {_public_name(func)}: np.fft is not compiled (FFTW, the "
            "FFT library Debian ships, is GPL and would bind the wheel to it; NumPy's "
            "pocketfft is not packaged); call it outside the jitted function"
        )
    if impl is None:
        raise TracingError(
            f"tinymlir cannot trace {_public_name(func)}: it is not among the "
            f"traced NumPy functions ({_traced_names()}, and the ufuncs)"
        )
    return impl(*args, **kwargs)


layers.array_ufunc, layers.array_function = array_ufunc, array_function
