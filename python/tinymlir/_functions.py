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
import sys as _sys
import warnings

import numpy as np

from . import _creation
from . import _tinymlir as _core
from ._numpy import _FUNCTIONS, _implements, _traced
from ._trace import (
    Traced,
    TracingError,
    _arange,
    _positions,
    _state,
    dtype_name,
    known_value,
    layers,
    to_tensor,
)

_range = builtins.range  # histogram's argument is named range, as NumPy's
_NoValue = np._NoValue


def _refuse_kwargs(name, **kwargs):
    """Arguments that are not traced: each must be absent (None, NumPy's
    no-value, or where=True)."""
    for key, value in kwargs.items():
        if value is None or value is _NoValue or (key == "where" and value is True):
            continue
        raise TracingError(f"tinymlir cannot trace numpy.{name} with {key}={value!r}")


def _keepdims(keepdims):
    return False if keepdims is _NoValue else bool(keepdims)


def _strong(x, what):
    """An operand as NumPy's asarray makes it: Python numbers and lists become
    arrays of NumPy's default dtypes (strong, not weak scalars)."""
    if isinstance(x, Traced):
        return x
    return Traced(to_tensor(np.asarray(x), what))


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


def _real_only(t, name):
    """Complex operands: not traced here (NumPy's conjugates and orderings)."""
    if t.dtype.kind == "c":
        raise TracingError(f"tinymlir traces numpy.{name} of real (and bool) values, not {t.dtype}")
    return t


def _at_axis(sl, axis):
    return (slice(None),) * axis + (sl, Ellipsis)


# --- np.pad ---------------------------------------------------------------------------


def _as_pairs(x, ndim, as_index=False):
    """NumPy's _as_pairs: `x` broadcast to (ndim, 2) pairs; traced values too
    (constant_values=t.max())."""
    if x is None:
        return ((None, None),) * ndim
    if isinstance(x, Traced) or _creation._has_traced(x):
        v = x if isinstance(x, Traced) else _creation._stacked(x, None)
        if v.size == 1:
            s = v.reshape(())
            return ((s, s),) * ndim
        if v.ndim < 3 and v.size == 2 and tuple(v.shape) != (2, 1):
            f = v.reshape(-1)
            return ((f[0], f[1]),) * ndim
        b = np.broadcast_to(v, (ndim, 2))
        return [(b[i, 0], b[i, 1]) for i in _range(ndim)]
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if x.ndim < 3:
        if x.size == 1:
            x = x.ravel()
            if as_index and x < 0:
                raise ValueError("index can't contain negative values")
            return ((x[0], x[0]),) * ndim
        if x.size == 2 and x.shape != (2, 1):
            x = x.ravel()
            if as_index and (x[0] < 0 or x[1] < 0):
                raise ValueError("index can't contain negative values")
            return ((x[0], x[1]),) * ndim
    if as_index and x.min() < 0:
        raise ValueError("index can't contain negative values")
    return np.broadcast_to(x, (ndim, 2)).tolist()


def _set_pad_area(padded, axis, width_pair, value_pair):
    if width_pair[0]:
        padded[_at_axis(slice(None, width_pair[0]), axis)] = value_pair[0]
    if width_pair[1]:
        padded[_at_axis(slice(padded.shape[axis] - width_pair[1], None), axis)] = value_pair[1]


def _get_edges(padded, axis, width_pair):
    left = width_pair[0]
    right = padded.shape[axis] - width_pair[1]
    return (
        padded[_at_axis(slice(left, left + 1), axis)],
        padded[_at_axis(slice(right - 1, right), axis)],
    )


def _view_roi(padded, original_area_slice, axis):
    axis += 1
    return padded[(slice(None),) * axis + tuple(original_area_slice[axis:])]


def _linspace(start, stop, num, endpoint, dtype, axis):
    """np.linspace(start, stop, num, endpoint, dtype=dtype, axis=axis) with
    `stop` traced, by NumPy's steps (numpy/_core/function_base.py)."""
    stop = _traced(stop, "numpy.linspace's stop")
    # NumPy's computation dtype: its own result_type of the operands (ensure_inexact)
    dt = np.linspace(start, np.zeros((), stop.dtype), 2).dtype
    dtype = dt if dtype is None else np.dtype(dtype)
    div = (num - 1) if endpoint else num
    delta = stop.astype(dt) - Traced(to_tensor(np.asarray(start).astype(dt)))
    y = Traced(to_tensor(_arange(0, num, dtype=dt).reshape((-1,) + (1,) * delta.ndim)))
    if div > 0:
        step = delta / div
        any_zero = np.any(step == 0)  # NumPy's denormal special case, for all or none
        y = np.where(any_zero, y / div * delta, y * step)
    else:
        y = y * delta
    y = (y + start).astype(dt)
    if endpoint and num > 1:
        y[-1, ...] = stop
    if axis != 0:
        perm = list(_range(1, y.ndim))
        perm.insert(axis, 0)
        y = y.transpose(perm)
    if np.issubdtype(dtype, np.integer):
        y = np.floor(y)
    return y.astype(dtype)


def _get_linear_ramps(padded, axis, width_pair, end_value_pair):
    edges = _get_edges(padded, axis, width_pair)
    ramps = []
    for end_value, edge, width in zip(end_value_pair, edges, width_pair):
        if width == 0:
            ramps.append(None)
            continue
        squeezed = edge.reshape(tuple(d for k, d in enumerate(edge.shape) if k != axis))
        ramps.append(_linspace(end_value, squeezed, width, False, padded.dtype, axis))
    if ramps[1] is not None:
        ramps[1] = ramps[1][_at_axis(slice(None, None, -1), axis)]
    return tuple(ramps)


def _get_stats(padded, axis, width_pair, length_pair, stat_func):
    left_index = width_pair[0]
    right_index = padded.shape[axis] - width_pair[1]
    max_length = right_index - left_index
    left_length, right_length = length_pair
    if left_length is None or max_length < left_length:
        left_length = max_length
    if right_length is None or max_length < right_length:
        right_length = max_length
    if (left_length == 0 or right_length == 0) and stat_func in (np.amax, np.amin):
        raise ValueError("stat_length of 0 yields no value for padding")
    if left_length == 0 or right_length == 0:
        raise TracingError(
            "tinymlir: numpy.pad with a stat_length of 0 (NumPy's mean of no values) is not traced"
        )

    def stat(chunk):
        s = stat_func(chunk, axis=axis, keepdims=True)
        if np.issubdtype(padded.dtype, np.integer) and s.dtype.kind == "f":
            s = np.rint(s)  # NumPy's _round_if_needed
        return s

    left_stat = stat(padded[_at_axis(slice(left_index, left_index + left_length), axis)])
    if left_length == right_length == max_length:
        return left_stat, left_stat
    right_stat = stat(padded[_at_axis(slice(right_index - right_length, right_index), axis)])
    return left_stat, right_stat


def _set_reflect_both(padded, axis, width_pair, method, original_period, include_edge=False):
    left_pad, right_pad = width_pair
    old_length = padded.shape[axis] - right_pad - left_pad
    if include_edge:
        old_length = old_length // original_period * original_period
        edge_offset = 1
    else:
        old_length = (old_length - 1) // (original_period - 1) * (original_period - 1) + 1
        edge_offset = 0
        old_length -= 1
    if left_pad > 0:
        chunk_length = min(old_length, left_pad)
        stop = left_pad - edge_offset
        start = stop + chunk_length
        left_chunk = padded[_at_axis(slice(start, stop, -1), axis)]
        if method == "odd":
            edge = padded[_at_axis(slice(left_pad, left_pad + 1), axis)]
            left_chunk = 2 * edge - left_chunk
        padded[_at_axis(slice(left_pad - chunk_length, left_pad), axis)] = left_chunk
        left_pad -= chunk_length
    if right_pad > 0:
        chunk_length = min(old_length, right_pad)
        start = -right_pad + edge_offset - 2
        stop = start - chunk_length
        right_chunk = padded[_at_axis(slice(start, stop, -1), axis)]
        if method == "odd":
            edge = padded[_at_axis(slice(-right_pad - 1, -right_pad), axis)]
            right_chunk = 2 * edge - right_chunk
        start = padded.shape[axis] - right_pad
        padded[_at_axis(slice(start, start + chunk_length), axis)] = right_chunk
        right_pad -= chunk_length
    return left_pad, right_pad


def _set_wrap_both(padded, axis, width_pair, original_period):
    left_pad, right_pad = width_pair
    period = padded.shape[axis] - right_pad - left_pad
    period = period // original_period * original_period
    new_left_pad = new_right_pad = 0
    n = padded.shape[axis]
    if left_pad > 0:
        slice_end = left_pad + period
        slice_start = slice_end - min(period, left_pad)
        right_chunk = padded[_at_axis(slice(slice_start, slice_end), axis)]
        if left_pad > period:
            pad_area = slice(left_pad - period, left_pad)
            new_left_pad = left_pad - period
        else:
            pad_area = slice(None, left_pad)
        padded[_at_axis(pad_area, axis)] = right_chunk
    if right_pad > 0:
        slice_start = -right_pad - period
        slice_end = slice_start + min(period, right_pad)
        left_chunk = padded[_at_axis(slice(n + slice_start, n + slice_end), axis)]
        if right_pad > period:
            pad_area = slice(n - right_pad, n - right_pad + period)
            new_right_pad = right_pad - period
        else:
            pad_area = slice(n - right_pad, None)
        padded[_at_axis(pad_area, axis)] = left_chunk
    return new_left_pad, new_right_pad


_PAD_KWARGS = {
    "empty": [],
    "edge": [],
    "wrap": [],
    "constant": ["constant_values"],
    "linear_ramp": ["end_values"],
    "maximum": ["stat_length"],
    "mean": ["stat_length"],
    "median": ["stat_length"],
    "minimum": ["stat_length"],
    "reflect": ["reflect_type"],
    "symmetric": ["reflect_type"],
}


@_implements(np.pad)
def _pad(array, pad_width, mode="constant", **kwargs):
    """NumPy's np.pad, its loops over axes as they are: a traced array of the
    padded shape (written in order, as NumPy's `padded`). Mode 'empty' gives
    zeros, as np.empty does while tracing; 'median' is traced where
    numpy.median is, and a callable mode is refused."""
    t = _traced(array, "numpy.pad's operand")
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * t.ndim
        for axis, width in pad_width.items():
            if isinstance(width, int):
                seq[axis] = width, width
            elif (
                isinstance(width, tuple)
                and len(width) == 2
                and all(isinstance(w, int) for w in width)
            ):
                seq[axis] = width
            else:
                raise TypeError(f"numpy.pad: invalid pad width {width!r} for axis {axis}")
        pad_width = seq
    pad_width = np.asarray(_static(pad_width, "numpy.pad's pad_width"))
    if not pad_width.dtype.kind == "i":
        raise TypeError("`pad_width` must be of integral type.")
    pad_width = [(int(a), int(b)) for a, b in _as_pairs(pad_width, t.ndim, as_index=True)]
    if callable(mode):
        raise TracingError(
            "tinymlir cannot trace numpy.pad with a function as mode (NumPy calls "
            "it on each vector of the padded array, in place)"
        )
    try:
        unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    except (KeyError, TypeError):
        raise ValueError(f"mode '{mode}' is not supported") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode == "median" and np.median not in _FUNCTIONS:
        raise TracingError(
            "tinymlir cannot trace numpy.pad with mode='median' (numpy.median is not traced)"
        )
    new_shape = tuple(left + size + right for size, (left, right) in zip(t.shape, pad_width))
    if t.size == 0 and mode not in ("constant", "empty"):
        for axis, width_pair in enumerate(pad_width):
            if t.shape[axis] == 0 and any(width_pair):
                raise ValueError(
                    f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
                )
    original_area_slice = tuple(
        slice(left, left + size) for size, (left, right) in zip(t.shape, pad_width)
    )
    padded = _creation.full_traced(new_shape, 0, t.dtype, "numpy.pad")
    if t.size:
        padded[original_area_slice] = t
    if t.size == 0 and mode not in ("constant", "empty"):
        return padded
    axes = _range(padded.ndim)
    if mode == "constant":
        values = _as_pairs(kwargs.get("constant_values", 0), padded.ndim)
        for axis, width_pair, value_pair in zip(axes, pad_width, values):
            roi = _view_roi(padded, original_area_slice, axis)
            _set_pad_area(roi, axis, width_pair, value_pair)
    elif mode == "empty":
        pass
    elif mode == "edge":
        for axis, width_pair in zip(axes, pad_width):
            roi = _view_roi(padded, original_area_slice, axis)
            _set_pad_area(roi, axis, width_pair, _get_edges(roi, axis, width_pair))
    elif mode == "linear_ramp":
        end_values = _as_pairs(kwargs.get("end_values", 0), padded.ndim)
        for axis, width_pair, value_pair in zip(axes, pad_width, end_values):
            roi = _view_roi(padded, original_area_slice, axis)
            _set_pad_area(
                roi, axis, width_pair, _get_linear_ramps(roi, axis, width_pair, value_pair)
            )
    elif mode in ("maximum", "minimum", "mean", "median"):
        func = {"maximum": np.amax, "minimum": np.amin, "mean": np.mean, "median": np.median}[mode]
        length = _as_pairs(kwargs.get("stat_length"), padded.ndim, as_index=True)
        for axis, width_pair, length_pair in zip(axes, pad_width, length):
            roi = _view_roi(padded, original_area_slice, axis)
            length_pair = tuple(None if v is None else int(v) for v in length_pair)
            _set_pad_area(
                roi, axis, width_pair, _get_stats(roi, axis, width_pair, length_pair, func)
            )
    elif mode in ("reflect", "symmetric"):
        method = kwargs.get("reflect_type", "even")
        include_edge = mode == "symmetric"
        for axis, (left_index, right_index) in zip(axes, pad_width):
            if t.shape[axis] == 1 and (left_index > 0 or right_index > 0):
                # NumPy's legacy behaviour: a singleton axis is extended as 'edge'
                edge_pair = _get_edges(padded, axis, (left_index, right_index))
                _set_pad_area(padded, axis, (left_index, right_index), edge_pair)
                continue
            roi = _view_roi(padded, original_area_slice, axis)
            while left_index > 0 or right_index > 0:
                left_index, right_index = _set_reflect_both(
                    roi, axis, (left_index, right_index), method, t.shape[axis], include_edge
                )
    elif mode == "wrap":
        for axis, (left_index, right_index) in zip(axes, pad_width):
            roi = _view_roi(padded, original_area_slice, axis)
            original_period = padded.shape[axis] - right_index - left_index
            while left_index > 0 or right_index > 0:
                left_index, right_index = _set_wrap_both(
                    roi, axis, (left_index, right_index), original_period
                )
    return padded


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
    ts = [_strong(x, "numpy.meshgrid's operand") for x in xi]
    grids = _core.meshgrid([t._t for t in ts], indexing, bool(sparse))
    if copy or not sparse:  # broadcast grids are copies here (NumPy's are read-only views)
        return tuple(Traced(g) for g in grids)
    return tuple(t._view_of_shape(g.shape) for t, g in zip(ts, grids))  # views, as NumPy's


@_implements(np.kron)
def _kron(a, b):
    return Traced(
        _core.kron(_strong(a, "numpy.kron's operand")._t, _strong(b, "numpy.kron's operand")._t)
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
    avg, scl = _core.average(t._t, axis, w, bool(_keepdims(keepdims)))
    return (Traced(avg), Traced(scl)) if returned else Traced(avg)


@_implements(np.cov)
def _cov(
    m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None
):
    """NumPy's cov (numpy.h): weights' checks that read their values (integral,
    non-negative) are made for static weights only; NumPy's warning for degrees of
    freedom <= 0 is given while tracing where it is static."""
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    return Traced(
        _core.cov(
            _strong(m, "numpy.cov's operand")._t,
            None if y is None else _strong(y, "numpy.cov's y")._t,
            bool(rowvar),
            bool(bias),
            None if ddof is None else int(ddof),
            None if fweights is None else _weights(fweights, "numpy.cov's fweights"),
            None if aweights is None else _weights(aweights, "numpy.cov's aweights"),
            None if dtype is None else dtype_name(np.dtype(dtype), "numpy.cov's dtype"),
        )
    )


@_implements(np.corrcoef)
def _corrcoef(x, y=None, rowvar=True, *, dtype=None):
    return Traced(
        _core.corrcoef(
            _strong(x, "numpy.corrcoef's operand")._t,
            None if y is None else _strong(y, "numpy.corrcoef's y")._t,
            bool(rowvar),
            None if dtype is None else dtype_name(np.dtype(dtype), "numpy.corrcoef's dtype"),
        )
    )


# --- histogram ------------------------------------------------------------------------


@_implements(np.histogram)
def _histogram(a, bins=10, range=None, density=None, weights=None):
    """NumPy's histogram. Bins are an int (edges as NumPy's np.linspace makes
    them, from `range` or from the data's min and max) or edges. Each value's
    bin comes from its offset, corrected against the edges as NumPy does
    (equal bins), or by binary search among the edges (given edges); with
    weights, each value is compared with every edge. Counts are exact, as
    NumPy's (which guarantees
    edges[i] <= x < edges[i+1], the last bin closed). For edges computed from
    the data, NumPy's errors for a non-finite range and for too many bins cannot
    be raised; nor can the monotonicity check of traced edges."""
    t = _real_only(_traced(a, "numpy.histogram's operand"), "histogram")
    if t.dtype == np.bool_:
        warnings.warn(
            f"Converting input from {t.dtype} to {np.uint8} for compatibility.",
            RuntimeWarning,
            stacklevel=4,
        )
        t = t.astype(np.int32)  # 0 and 1, compared exactly as NumPy's uint8
    w = None
    if weights is not None:
        w = _strong(weights, "numpy.histogram's weights")
        if tuple(w.shape) != tuple(t.shape):
            raise ValueError("weights should have the same shape as a.")
        w = w.reshape(-1)
    x = t.reshape(-1)
    keep = edge = None
    if isinstance(bins, str):
        raise TracingError(
            f"tinymlir cannot trace numpy.histogram with bins={bins!r} (the "
            "number of bins it estimates depends on the data)"
        )
    uniform = np.ndim(bins) == 0
    if uniform:
        bins = _static(bins, "numpy.histogram's bins")
        try:
            n = operator.index(bins)
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is not None:
            first_edge, last_edge = _static(range, "numpy.histogram's range")
            if first_edge > last_edge:
                raise ValueError("max must be larger than min in range parameter.")
            if not (np.isfinite(first_edge) and np.isfinite(last_edge)):
                raise ValueError(f"supplied range of [{first_edge}, {last_edge}] is not finite")
            if first_edge == last_edge:
                first_edge = first_edge - 0.5
                last_edge = last_edge + 0.5
            bin_type = np.result_type(first_edge, last_edge, np.zeros(1, x.dtype))
            if np.issubdtype(bin_type, np.integer):
                bin_type = np.result_type(bin_type, float)
            edges = np.linspace(first_edge, last_edge, n + 1, endpoint=True, dtype=bin_type)
            if np.any(edges[:-1] >= edges[1:]):
                raise ValueError(
                    f"Too many bins for data range. Cannot create {n} finite-sized bins."
                )
            keep = (x >= first_edge) & (x <= last_edge)  # NumPy's, in the data's dtype
            edges = Traced(to_tensor(edges))
            step = (last_edge - first_edge) / n  # np.linspace's, in float64
            if step != 0:

                def edge(i):  # edges[i], as np.linspace computed it, without a gather
                    y = i.astype(np.float64) * step + first_edge
                    return np.where(i >= n, last_edge, y).astype(bin_type)
        else:
            # NumPy's first and last edges (the data's min and max, 1 apart if equal)
            # and its np.linspace of them, step by step (bit for bit).
            bin_type = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
            lo, hi = x.min().astype(bin_type), x.max().astype(bin_type)
            equal = lo == hi
            first = np.where(equal, lo - 0.5, lo)
            last = np.where(equal, hi + 0.5, hi)
            delta = last - first
            step = delta / n
            y = Traced(to_tensor(_arange(0, n + 1, dtype=bin_type)))
            y = np.where(step == 0, y / n * delta, y * step) + first
            edges = np.concatenate([y[:-1], last.reshape(1)])

            def edge(i):  # edges[i], by the same operations, without a gather
                yi = i.astype(bin_type)
                return np.where(
                    i >= n, last, np.where(step == 0, yi / n * delta, yi * step) + first
                )

            # every value lies between min and max: none is left out (but nan)
    elif np.ndim(bins) == 1:
        bins = _maybe_static(bins)
        if isinstance(bins, Traced):
            edges = bins
        else:
            edges = np.asarray(bins)
            if np.any(edges[:-1] > edges[1:]):
                raise ValueError("`bins` must increase monotonically, when an array")
            edges = Traced(to_tensor(edges, "numpy.histogram's bins"))
        n = edges.shape[0] - 1
        if n < 1:  # NumPy's empty histogram
            dtype = np.float64 if density else (np.int64 if w is None else w.dtype)
            return _creation.full_traced((0,), 0, dtype, "numpy.histogram"), edges
    else:
        raise ValueError("`bins` must be 1d, when an array")

    # The uniform path compares the values cast to the edges' dtype (NumPy's
    # tmp_a.astype(bin_edges.dtype)); the edges path compares them as
    # searchsorted does, promoted.
    xe = x.astype(edges.dtype) if uniform else x
    if w is not None and w.dtype.kind not in "f":
        # Integer and bool weights: exact sums, each value compared with every edge.
        hist = _weighted_counts(xe, edges, n, keep, w, given_edges=np.ndim(bins) == 1)
    else:
        # Each value's bin, or n for values left out (and nan), then counts (or
        # float weights summed in float64, as NumPy's bincount sums them).
        ids = _bin_ids(xe, edges, n, keep, edge if uniform else None)
        if w is None:
            hist = np.bincount(ids, minlength=n + 1)[:n]  # int64 counts, as NumPy's intp
        else:
            sums = np.bincount(ids, weights=w.astype(np.float64), minlength=n + 1)[:n]
            hist = sums.astype(w.dtype)
    if density:
        db = (edges[1:] - edges[:-1]).astype(np.float64)
        return hist / db / hist.sum(), edges
    return hist, edges


def _bin_ids(xe, edges, n, keep, edge):
    """Each value's bin in [0, n), or n for values outside the edges (and nan).
    With `edge` (equal bins: edges[i] computed without a gather), NumPy's own
    way: the bin from the value's offset, then one step down or up where the
    edges say otherwise, so the bins are the edges' comparisons exactly
    (elementwise, fused and parallel). Otherwise binary search among the edges
    (O(n log bins)): r = #edges <= x, so edges[r-1] <= x < edges[r], and the
    last edge closes the last bin."""
    if edge is not None:
        first, last = edge(np.zeros((), np.int64)), edge(np.full((), n, np.int64))
        ok = (xe >= first) & (xe <= last)  # False for nan
        if keep is not None:
            ok = ok & keep
        f = (xe - first) / (last - first) * n
        i = np.clip(np.where(ok, f, 0).astype(np.int64), 0, n - 1)
        i = np.where(xe < edge(i), i - 1, i)
        i = np.where((xe >= edge(i + 1)) & (i != n - 1), i + 1, i)
        return np.where(ok, np.clip(i, 0, n - 1), n)
    r = np.searchsorted(edges, xe, side="right")
    last = xe == edges[-1]
    inside = ((r >= 1) & (r <= n)) | last
    if keep is not None:
        inside = inside & keep
    return np.where(inside, np.where(last, n - 1, r - 1), n)


def _weighted_counts(xe, edges, n, keep, w, given_edges):
    """Integer or bool weights' histogram: each value compared with every edge.
    NumPy sums them in float64 (bincount), cast to the weights' dtype; on given
    edges as int64 cumulative sums: both exact."""
    col = xe.reshape(-1, 1)
    lower = col >= edges[:-1].reshape(1, -1)
    upper = (
        np.concatenate([col < edges[1:-1].reshape(1, -1), col <= edges[-1:].reshape(1, 1)], axis=1)
        if n > 1
        else col <= edges[-1:].reshape(1, 1)
    )
    inside = lower & upper
    if keep is not None:
        inside = inside & keep.reshape(-1, 1)
    acc = np.int64 if (given_edges and w.dtype.kind in "iu") else np.float64
    hist = np.sum(np.where(inside, w.astype(acc).reshape(-1, 1), acc(0)), axis=0)
    return hist.astype(w.dtype) if w.dtype != np.bool_ else hist != 0


# --- nansum, nanmean, nanmax... ----------------------------------------------------------


def _nan_reduction(name, a, axis, dtype, keepdims, *args):
    """np.nan<name> of `a`: the C++ core's (numpy.h), dtype= as its name."""
    t = _traced(a, f"numpy.{name}'s operand")
    dtype = None if dtype is None else dtype_name(np.dtype(dtype), f"numpy.{name}'s dtype")
    return Traced(getattr(_core, name)(t._t, axis, _keepdims(keepdims), *args, dtype))


@_implements(np.nansum)
def _nansum(
    a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue
):
    _refuse_kwargs("nansum", out=out, initial=initial, where=where)
    return _nan_reduction("nansum", a, axis, dtype, keepdims)


@_implements(np.nanprod)
def _nanprod(
    a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue
):
    _refuse_kwargs("nanprod", out=out, initial=initial, where=where)
    return _nan_reduction("nanprod", a, axis, dtype, keepdims)


def _nan_extreme(name):
    def extreme(a, axis=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue):
        """NumPy's fmax/fmin reduction: NaNs ignored, NaN where all are NaN
        (NumPy's RuntimeWarning for an all-NaN slice cannot be given)."""
        _refuse_kwargs(name, out=out, initial=initial, where=where)
        t = _traced(a, f"numpy.{name}'s operand")
        return Traced(getattr(_core, name)(t._t, axis, _keepdims(keepdims)))

    extreme.__name__ = f"_{name}"
    return extreme


_implements(np.nanmax)(_nan_extreme("nanmax"))
_implements(np.nanmin)(_nan_extreme("nanmin"))


@_implements(np.nanmean)
def _nanmean(a, axis=None, dtype=None, out=None, keepdims=_NoValue, *, where=_NoValue):
    _refuse_kwargs("nanmean", out=out, where=where)
    return _nan_reduction("nanmean", a, axis, dtype, keepdims)


def _nan_variance(name, a, axis, dtype, ddof, keepdims, mean, correction):
    _refuse_kwargs(name, mean=mean)
    if correction is not _NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    return _nan_reduction(name, a, axis, dtype, keepdims, float(ddof))


@_implements(np.nanvar)
def _nanvar(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=_NoValue,
    *,
    where=_NoValue,
    mean=_NoValue,
    correction=_NoValue,
):
    _refuse_kwargs("nanvar", out=out, where=where)
    return _nan_variance("nanvar", a, axis, dtype, ddof, keepdims, mean, correction)


@_implements(np.nanstd)
def _nanstd(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=_NoValue,
    *,
    where=_NoValue,
    mean=_NoValue,
    correction=_NoValue,
):
    _refuse_kwargs("nanstd", out=out, where=where)
    return _nan_variance("nanstd", a, axis, dtype, ddof, keepdims, mean, correction)


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
    """NumPy's shares_memory (exact) and may_share_memory (bounds) of two
    operands: traced arrays share memory where they are views of one array
    (an argument passed twice is one); nothing else does."""
    if not (isinstance(a, Traced) and isinstance(b, Traced)) or not a._ref.same_buffer(b._ref):
        return False
    pa, pb = _positions(a), _positions(b)
    if pa.size == 0 or pb.size == 0:
        return False
    if exact:
        return bool(np.intersect1d(pa, pb).size)
    return bool(pa.min() <= pb.max() and pb.min() <= pa.max())


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
            _strong(a, "numpy.convolve's a")._t, _strong(v, "numpy.convolve's v")._t, mode
        )
    )


@_implements(np.correlate)
def _correlate(a, v, mode="valid"):
    return Traced(
        _core.correlate(
            _strong(a, "numpy.correlate's a")._t, _strong(v, "numpy.correlate's v")._t, mode
        )
    )


# --- Refusals -------------------------------------------------------------------------


def _data_shaped(name, hint):
    def refuse(*args, **kwargs):
        raise TracingError(
            f"tinymlir cannot trace numpy.{name}: the shape of its result depends "
            f"on the data, which is not known while tracing ({hint})"
        )

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
        if _state.contexts and not _sys._getframe(1).f_globals.get("__name__", "").startswith(
            _creation._LIBRARIES
        ):
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
    """NumPy's diagonal (a copy: NumPy's is a read-only view, so no write
    through it can differ)."""
    t = _traced(a, "numpy.diagonal's operand")
    return Traced(_core.diagonal(t._t, operator.index(offset), axis1, axis2))


@_implements(np.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """NumPy's trace: the sum of the diagonal, as np.sum sums it (`dtype=`: np.sum's)."""
    if out is not None:
        raise TracingError("tinymlir cannot trace numpy.trace with out=")
    if dtype is not None:
        return np.sum(_diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
    t = _traced(a, "numpy.trace's operand")
    return Traced(_core.trace(t._t, operator.index(offset), axis1, axis2))


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
    """np.all of isclose: a traced bool (NumPy's Python bool is known only once
    the kernel runs; branching on it is refused by name)."""
    return np.all(_isclose(a, b, rtol, atol, equal_nan))


# --- cross, ptp, inner, vdot, gradient, interp, lexsort (numpy.h) ------------------------


@_implements(np.cross)
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = to_tensor(a, "numpy.cross's operand"), to_tensor(b, "numpy.cross's operand")
    return Traced(_core.cross(x, y, axisa, axisb, axisc))


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
    if axis is None:
        axes = list(range(t.ndim))
    else:
        axes = [operator.index(a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if not varargs:
        spacings = [None] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    grads = tuple(
        Traced(
            _core.gradient(
                t._t,
                ax,
                None if s is None else to_tensor(s, "numpy.gradient's spacing"),
                operator.index(edge_order),
            )
        )
        for ax, s in zip(axes, spacings)
    )
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
    if isinstance(keys, (Traced, np.ndarray)) and keys.ndim == 2:
        keys = [keys[i] for i in range(keys.shape[0])]
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
    return Traced(_core.trapezoid(t._t, xs, float(dx), operator.index(axis)))


@_implements(np.digitize)
def _digitize(x, bins, right=False):
    t, b = to_tensor(x, "numpy.digitize's operand"), to_tensor(bins, "numpy.digitize's bins")
    return Traced(_core.digitize(t, b, bool(right)))


@_implements(np.isin)
def _isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    e, t = to_tensor(element, "numpy.isin's operand"), to_tensor(test_elements, "numpy.isin's test")
    r = Traced(_core.isin(e, t))
    return ~r if invert else r


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
    return Traced(_core.array_equal(x, y, bool(equal_nan)))


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
    return Traced(_core.dstack([to_tensor(a, "numpy.dstack's operand") for a in tup]))


def _split_along(name, axis_of):
    def split(ary, indices_or_sections):
        t = _traced(ary, f"numpy.{name}'s operand")
        return np.split(t, indices_or_sections, axis=axis_of(t.ndim))

    return split


_FUNCTIONS[np.hsplit] = _split_along("hsplit", lambda ndim: 1 if ndim > 1 else 0)
_FUNCTIONS[np.vsplit] = _split_along("vsplit", lambda ndim: 0)
_FUNCTIONS[np.dsplit] = _split_along("dsplit", lambda ndim: 2)


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
