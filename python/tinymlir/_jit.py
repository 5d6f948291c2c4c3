"""``jit``: specialize a Python function of arrays, compile it with the C++ core, run it.

Specialization is keyed by the tree structure of the positional arguments
(tuples, lists, dicts, named tuples, dataclasses), the shape and dtype of each
array leaf, the static (non-array) values in the tree, the keyword arguments
(arrays in them are inputs as positional ones are; other values are static)
and the target. The first call of a specialization traces the
function with placeholders into the C++ graph and compiles it (GIL released);
later calls run the native code directly.
"""

from __future__ import annotations

import ast
import copy
import copyreg
import dataclasses
import dis
import functools
import inspect
import itertools
import os
import sys
import textwrap
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _loops, _tinymlir as _core
from ._trace import (
    _NDARRAY,
    TraceContext,
    Traced,
    TracingError,
    current_context,
    dtype_name,
    plain_array,
    replay_view,
    to_tensor,
    tracing,
)

# Most call trees named per function (by flatten's tree) while cache_limit is 0.
_TREE_NAMES = 256
_STATIC_TYPES = (bool, int, float, complex, str, bytes, type(None))
_SUPPORTED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32))


# --- Argument trees --------------------------------------------------------------


class _Leaf:
    __slots__ = ()

    def __repr__(self):
        return "*"


LEAF = _Leaf()


def _static_key(v):
    """What a static value is keyed by: its type and, for floats, its bits, so that
    values that trace differently differ (2, 2.0 and True; 0.0 and -0.0) and nan
    finds its own entry."""
    t = type(v)
    if t is float:
        return t, v.hex()
    if t is complex:
        return t, v.real.hex(), v.imag.hex()
    if t is tuple or t is frozenset:
        return t, tuple(_static_key(c) for c in v)
    return t, v


class _Static:
    """A static value in a tree definition, compared and hashed by _static_key."""

    __slots__ = ("value", "key")

    def __init__(self, value):
        self.value, self.key = value, _static_key(value)

    def __eq__(self, other):
        return type(other) is _Static and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return repr(self.value)


def flatten(x, leaves: list):
    """Appends the array leaves of `x` to `leaves`; returns a hashable tree definition
    (structure and static values)."""
    t = type(x)
    if t is _NDARRAY or t is Traced:
        leaves.append(x)
        return LEAF
    if t is tuple or t is list:
        return (t, tuple(flatten(c, leaves) for c in x))
    if t is dict:
        keys = tuple(x)
        return (dict, keys, tuple(flatten(x[k], leaves) for k in keys))
    if (
        t in _STATIC_TYPES
        or isinstance(x, np.dtype)
        or (isinstance(x, type) and issubclass(x, np.generic))
    ):  # numbers, strings, dtypes
        return ("static", _Static(x))
    if isinstance(x, np.generic):  # a NumPy scalar: a strong rank-0 input
        leaves.append(np.asarray(x))
        return LEAF
    if isinstance(x, tuple) and hasattr(t, "_fields"):  # a named tuple
        return (t, tuple(flatten(c, leaves) for c in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        names = tuple(f.name for f in dataclasses.fields(x))
        return (t, names, tuple(flatten(getattr(x, n), leaves) for n in names))
    if isinstance(x, np.ndarray):
        leaves.append(plain_array(x, "an argument"))
        return LEAF
    if isinstance(x, Traced):
        leaves.append(x)
        return LEAF
    raise TypeError(
        f"tinymlir.jit: an argument of type {t.__name__} is not supported: use NumPy arrays, "
        "numbers, strings, and tuples, lists, dicts, named tuples or dataclasses of them"
    )


def unflatten(treedef, leaves):
    """Rebuilds the tree `treedef` with the values of the iterator `leaves`."""
    if treedef is LEAF:
        return next(leaves)
    kind = treedef[0]
    if kind == "static":
        return treedef[1].value
    if kind is tuple:
        return tuple(unflatten(c, leaves) for c in treedef[1])
    if kind is list:
        return [unflatten(c, leaves) for c in treedef[1]]
    if kind is dict:
        return {k: unflatten(c, leaves) for k, c in zip(treedef[1], treedef[2])}
    if len(treedef) == 2:  # a named tuple
        return kind(*(unflatten(c, leaves) for c in treedef[1]))
    values = {n: unflatten(c, leaves) for n, c in zip(treedef[1], treedef[2])}
    obj = kind.__new__(kind)
    for n, v in values.items():
        object.__setattr__(obj, n, v)
    return obj


def _leaf_paths(treedef, prefix):
    if treedef is LEAF:
        yield prefix
        return
    kind = treedef[0]
    if kind == "static":
        return
    if kind is dict or (len(treedef) == 3 and kind not in (tuple, list)):
        for k, c in zip(treedef[1], treedef[2]):
            yield from _leaf_paths(c, f"{prefix}[{k!r}]" if kind is dict else f"{prefix}.{k}")
    else:
        for i, c in enumerate(treedef[1]):
            yield from _leaf_paths(c, f"{prefix}[{i}]")


def _flatten_call(args, kwargs):
    """A call's tree definition (positional tree, keyword trees by name) and array leaves.
    A keyword value that is no tree of arrays and numbers is static if hashable."""
    leaves = []
    argtree = flatten(args, leaves)
    keywords = []
    for name in sorted(kwargs):
        value, sub = kwargs[name], []
        try:
            tree = flatten(value, sub)
        except TypeError:
            try:
                hash(value)
            except TypeError:
                raise TypeError(
                    f"tinymlir.jit: keyword argument {name}={value!r} is neither "
                    "arrays nor a hashable static value"
                ) from None
            tree = ("static", _Static(value))
        leaves.extend(sub)
        keywords.append((name, tree))
    return (argtree, tuple(keywords)), leaves


def _unflatten_call(treedef, leaves):
    argtree, keywords = treedef
    args = unflatten(argtree, leaves)
    return args, {name: unflatten(tree, leaves) for name, tree in keywords}


def _call_paths(treedef):
    """Each array leaf's path in the call, as the error messages name it."""
    argtree, keywords = treedef
    paths = list(_leaf_paths(argtree, "args"))
    for name, tree in keywords:
        paths.extend(_leaf_paths(tree, name))
    return paths


def _aliases(leaves):
    """Which leaves are the same array (part of the key: one buffer or two)."""
    seen = {}
    pattern = tuple(seen.setdefault(id(a), i) for i, a in enumerate(leaves))
    return pattern if len(seen) != len(leaves) else None


def _flatten_result(result, outs):
    """The result's tree, as flatten's; a boolean-mask read is refused by name."""
    from ._trace import Masked

    if isinstance(result, Masked) or (
        isinstance(result, (tuple, list)) and any(isinstance(r, Masked) for r in result)
    ):
        raise TypeError(
            "tinymlir.jit: a boolean-mask read x[mask] cannot be returned: its "
            "shape depends on the data (return np.where(mask, x, fill), or a "
            "reduction of it)"
        )
    return flatten(result, outs)


# --- Cache ------------------------------------------------------------------------


# A jitted function's cache statistics: the C++ CacheStats (hits, compilations,
# disk_hits, evictions, size, compile_seconds).
CacheStats = _core.CacheStats


class Specialization:
    """One compiled specialization: ``.module``, ``.optimized``, ``.bufferized``,
    ``.lowered`` (and ``.ptx`` / ``.gpu_module`` on the GPU target) as text, the input
    and output types, and the native code (call it with the flattened arrays).

    The compiled function has one output per returned array, then one per
    argument the function wrote to. Where no kernel of the graph can fail
    while it runs, and such an argument's new value is that argument updated
    in place (slice updates, index_put) or any value of its shape and dtype
    (x -= ..., np.exp(x, out=x)) in a graph bufferized with the analysis, the
    kernel writes the caller's array directly (donated). Otherwise its value
    is copied into the caller's array (in its own layout) after the kernel has
    finished, so that a call that raises leaves every argument as it was."""

    def __init__(
        self,
        compiled,
        n_inputs,
        hidden,
        out_tree,
        writes=(),
        returned=(),
        static=None,
        views=(),
        rank0=(),
        readonly=(),
        aliases=(),
    ):
        self._compiled = compiled
        self._n_inputs = n_inputs
        self._hidden = hidden  # constant gather ids: extra inputs after the leaves
        self._out_tree = out_tree  # None: one array
        self._writes = tuple(writes)  # (leaf, output position): arguments written to
        self._returned = dict(returned)  # result position -> leaf: the caller's own array
        # result position -> (leaf, view steps): a view of the caller's array, made
        # by NumPy from it after the call (no kernel output)
        self._views = dict(views)
        # result position -> (position, view steps): another result itself (no
        # steps: the same object), or NumPy's view of it, made after the call
        self._aliases = dict(aliases)
        self._rank0 = dict(rank0)  # result position -> "array" or "python" (else a scalar)
        self._readonly = frozenset(readonly)  # result positions NumPy makes read-only
        self._static = static  # (result,) where no array was computed
        if compiled is not None:
            self._types = [
                (tuple(s), np.dtype(d))
                for s, d in zip(compiled.result_shapes, compiled.result_dtypes)
            ]
            self._donations = list(compiled.donations)
        self._donating = compiled is not None and any(d >= 0 for d in self._donations)

    def _get(self, name: str) -> Any:
        if self._compiled is None:
            raise AttributeError(
                f"this specialization computed nothing ({name}): its result "
                "comes from static arguments alone"
            )
        return getattr(self._compiled, name)

    @property
    def module(self) -> str:
        """The module as built: linalg on tensors."""
        return str(self._get("module"))

    @property
    def optimized(self) -> str:
        """After fusion and the other optimizations."""
        return str(self._get("optimized"))

    @property
    def bufferized(self) -> str:
        return str(self._get("bufferized"))

    @property
    def lowered(self) -> str:
        """The LLVM dialect module."""
        return str(self._get("lowered"))

    @property
    def ptx(self) -> str:
        return str(self._get("ptx"))

    @property
    def gpu_module(self) -> str:
        return str(self._get("gpu_module"))

    @property
    def blas_calls(self) -> int:
        return int(self._get("blas_calls"))

    @property
    def target(self) -> str:
        return str(self._get("target"))

    @property
    def donations(self) -> list[int]:
        return list(self._get("donations"))

    @property
    def compile_seconds(self) -> float:
        return 0.0 if self._compiled is None else float(self._compiled.compile_seconds)

    @property
    def from_disk_cache(self) -> bool:
        return False if self._compiled is None else bool(self._compiled.from_disk_cache)

    @property
    def input_types(self) -> list[tuple[tuple[int, ...], np.dtype[Any]]]:
        """(shape, dtype) of each array argument, in flattened order."""
        c = self._compiled
        if c is None:
            return []
        return [
            (s, np.dtype(d))
            for s, d in zip(c.input_shapes[: self._n_inputs], c.input_dtypes[: self._n_inputs])
        ]

    @property
    def output_types(self) -> list[tuple[tuple[int, ...], np.dtype[Any]]]:
        """(shape, dtype) of each output of the compiled function, in order: the
        returned arrays, then the arguments written to."""
        return [] if self._compiled is None else list(self._types)

    @property
    def written_arguments(self) -> list[int]:
        """The positions (among the flattened array arguments) the function writes to."""
        return [leaf for leaf, _ in self._writes if leaf < self._n_inputs]

    def run(self, leaves):
        if self._static is not None:
            return copy.deepcopy(self._static[0])
        run_leaves = leaves + self._hidden if self._hidden else list(leaves)
        targets = tuple(run_leaves)  # the arrays written (run_leaves may take copies)
        for leaf, _ in self._writes:
            a = targets[leaf]
            if not a.flags.writeable:
                raise ValueError("assignment destination is read-only")
            for k, b in enumerate(targets):
                if b is not a and np.may_share_memory(a, b):
                    what = "a captured array" if leaf >= self._n_inputs else f"argument {leaf}"
                    other = "a captured array" if k >= self._n_inputs else f"argument {k}"
                    raise ValueError(
                        f"tinymlir.jit: {what} is written and shares memory with "
                        f"{other}; pass the same array, or copies"
                    )
        if self._compiled is None:  # every result a view of an argument, nothing written
            results = [
                _scalar(replay_view(leaves[i], steps), self._rank0.get(k))
                for k, (i, steps) in sorted(self._views.items())
            ]
            return unflatten(self._out_tree, iter(results))
        if self._donating:
            outs, direct = self._outputs_in_place(leaves, run_leaves)
            self._compiled.call_into(run_leaves, outs)
        else:
            outs, direct = self._compiled.call_all(run_leaves), ()
        for leaf, position in self._writes:
            if position not in direct:
                np.copyto(targets[leaf], outs[position], casting="unsafe")
        if self._out_tree is None:
            return self._flagged(0, _scalar(outs[0], self._rank0.get(0)))
        computed = iter(outs[: len(outs) - len(self._writes)])
        results = []
        for k in range(len(outs) - len(self._writes) + len(self._views) + len(self._aliases)):
            if k in self._views:
                i, steps = self._views[k]
                results.append(_scalar(replay_view(leaves[i], steps), self._rank0.get(k)))
                continue
            if k in self._aliases:
                results.append(None)  # below, once its result is made
                continue
            o = next(computed)
            if k in self._returned:
                results.append(leaves[self._returned[k]])
            else:
                results.append(self._flagged(k, _scalar(o, self._rank0.get(k))))
        for k, (j, steps) in self._aliases.items():
            view = results[j] if steps is None else replay_view(results[j], steps)
            results[k] = view if steps is None else _scalar(view, self._rank0.get(k))
        return unflatten(self._out_tree, iter(results))

    def _fast_plan(self):
        """What the C++ cache needs to run this specialization without Python
        (python/src/cache.cpp, callCached): (compiled, its result's shape and NumPy
        dtype, whether a rank-0 result is a NumPy scalar), or None where run() has
        more to do (writes, views, aliases, trees, hidden inputs, flags)."""
        c = self._compiled
        if (
            c is None
            or self._static is not None
            or self._out_tree is not None
            or self._writes
            or self._hidden
            or self._views
            or self._aliases
            or self._returned
            or self._rank0
            or self._readonly
            or len(self._types) != 1
        ):
            return None
        shape, dtype = self._types[0]
        return c, tuple(shape), np.dtype(dtype.name), not shape

    def _flagged(self, k, r):
        """Result `k` read-only where NumPy's is (a broadcast_to or diagonal view)."""
        if k in self._readonly and isinstance(r, np.ndarray):
            r.flags.writeable = False
        return r

    def _outputs_in_place(self, leaves, run_leaves):
        """The outputs of a call with donated arguments: each donated argument's
        own array where it is C-contiguous and aligned (and the input the kernel
        reads), else a contiguous copy of it (copied back after the call); new
        arrays for the rest. Returns (outputs, positions written in place)."""
        outs, direct = [], set()
        for k, (leaf, (shape, dtype)) in enumerate(zip(self._donations, self._types)):
            if leaf < 0:
                outs.append(np.empty(shape, dtype))
                continue
            a = run_leaves[leaf]
            if a.flags.c_contiguous and a.flags.aligned:
                out = a
                direct.add(k)
            else:
                out = np.array(a, order="C", copy=True)
            run_leaves[leaf] = out
            outs.append(out)
        return outs, direct

    def __repr__(self):
        ins = ", ".join(f"{d}{list(s)}" for s, d in self.input_types)
        outs = ", ".join(f"{d}{list(s)}" for s, d in self.output_types)
        target = self.target if self._compiled is not None else "(static)"
        return f"<tinymlir specialization ({ins}) -> ({outs}) on {target}>"


def _layout(a):
    """An argument's element strides where it is not C-contiguous, else None."""
    strides = _core.SpecializationCache.element_strides(a)
    return None if strides is None else tuple(strides)


def _scalar(a, rank0=None):
    """A result as NumPy gives it: rank 0 is a NumPy scalar, or what `rank0`
    says (Traced.rank0: "array", a 0-d array; "python", a Python bool or int);
    int64 is NumPy's np.int64 (the binding's arrays are C long long, a distinct
    NumPy type), and uint64 np.uint64."""
    if isinstance(a, np.ndarray):
        if a.dtype.char in "qQ":
            a = a.view(a.dtype.name)
        if a.ndim == 0 and rank0 != "array":
            return a.item() if rank0 == "python" else a[()]
    return a


# --- jit --------------------------------------------------------------------------

# The options' keywords: the rows of include/tinymlir/options.def, in order.
OPTIONS: tuple[str, ...] = tuple(_core.OPTION_NAMES)


def _options(target, given, where):
    """A tinymlir.Options: the defaults with TINYMLIR_* environment variables
    applied, then the target and the keywords given (None: the default)."""
    unknown = sorted(set(given) - set(OPTIONS))
    if unknown:
        raise TypeError(
            f"{where}: unknown option(s) {', '.join(unknown)}; "
            f"the options are target, {', '.join(OPTIONS)}"
        )
    options = _core.Options()
    if target is not None:
        options.target = target
    for name, value in given.items():
        if value is None:
            continue
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        default = getattr(options, name)
        if type(value) is not type(default):
            raise TypeError(
                f"{where}: option {name} must be {type(default).__name__}, got {value!r}"
            )
        setattr(options, name, value)
    return options


class JitFunction(_core.JitBase):
    """A jitted function. Call it with arrays (runs compiled code, compiling a new
    specialization when needed) or, while another function is traced, with traced
    values (inlined)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        target: str | None = None,
        **options: Any,
    ) -> None:
        # The options: the defaults with TINYMLIR_* environment variables
        # applied (docs/options.md), then those given here (cache_limit among
        # them: options.def's row).
        super().__init__()  # the C++ half: the cache and __call__ (python/src/cache.cpp)
        self.fn = fn
        self.options = _options(target, options, "tinymlir.jit")
        # The specializations, in the C++ cache (python/src/cache.cpp), and
        # the key names of call trees it has no key text for (NumPy scalars,
        # named tuples, dataclasses, other static objects): at most
        # _TREE_NAMES of them, cleared with the cache.
        self._tree_keys = {}
        self._tree_names = itertools.count()
        self._names = _code_names(fn)  # the names its code reads: captured arrays among them
        self._closure = isinstance(fn, types.FunctionType) and bool(fn.__closure__)
        self._number_keys = {}  # id -> (a captured number, its part of the key)
        try:
            self._takes_target = "target" in inspect.signature(fn).parameters
        except (TypeError, ValueError):  # no signature (some builtins)
            self._takes_target = False
        # Whether C++ alone keys its calls: no captures (their key is Python's)
        # and no `target` parameter of its own.
        self._plain = not (self._names or self._closure or self._takes_target)
        functools.update_wrapper(self, fn)

    # The cache.
    @property
    def cache_limit(self) -> int:
        """Specializations kept, least recently used out first; 0: no limit
        (the ``cache_limit`` option)."""
        return int(self.options.cache_limit)

    @cache_limit.setter
    def cache_limit(self, limit: int) -> None:
        self.options.cache_limit = int(limit)
        self._cache.evict(self.cache_limit)
        if self.cache_limit and len(self._tree_keys) > self.cache_limit:
            self._tree_keys.clear()

    def stats(self) -> CacheStats:
        return self._cache.stats()

    def clear_cache(self) -> None:
        """Drops every specialization and every memo of the keys."""
        self._cache.clear()
        self._tree_keys.clear()
        self._number_keys.clear()

    # Calls. Keyword arguments are inputs where they hold arrays, as positional
    # ones are, and static values otherwise.
    if TYPE_CHECKING:  # the C++ half's (JitBase), typed for callers

        def __call__(self, *args: Any, target: str | None = None, **kwargs: Any) -> Any: ...

    # __call__ is the C++ half's (JitBase): a hit runs from C++; a miss, a
    # call only Python keys, or target= comes here.
    def _call(self, *args: Any, target: str | None = None, **kwargs: Any) -> Any:
        target = self._target(target, kwargs)
        if tracing():
            # inlined into the function being traced
            return _with_traceable_captures(self.fn)(*args, **kwargs)
        entry, leaves = self._specialization(args, kwargs, target)
        return entry.run(leaves)

    def compile(self, *args: Any, target: str | None = None, **kwargs: Any) -> Specialization:
        """The specialization for these arguments, compiled if not cached yet."""
        target = self._target(target, kwargs)
        return self._specialization(args, kwargs, target)[0]

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    # Pickling: the Python function and the options, never native code (a
    # process that receives it compiles, or loads from the shared disk cache).
    def __reduce__(self):
        module = sys.modules.get(getattr(self.fn, "__module__", None) or "")
        qualname = getattr(self.fn, "__qualname__", "")
        by_reference = module is not None and _resolve(module, qualname) is self
        if by_reference and (module.__name__ != "__main__" or not _cloudpickling()):
            # A module's @jit function travels by name (multiprocessing's
            # workers find __main__'s too), as pickle sends functions.
            return qualname
        # A lambda, a nested function, or __main__'s sent to other machines
        # (cloudpickle, as Dask sends work): the function by value.
        return _rebuild_jit, (self.fn, _options_state(self.options))

    def _target(self, target, kwargs):
        """The compile target of a call; a function of its own `target` parameter gets it."""
        if self._takes_target:
            if target is not None:
                kwargs["target"] = target
            return None
        if target is not None and not isinstance(target, str):
            raise TypeError(
                f"tinymlir.jit: target= names the compile target ('cpu', 'gpu'), got {target!r}"
            )
        return target

    def _specialization(self, args, kwargs, target):
        """The Specialization of a call (from the cache, or compiled) and its array leaves."""
        options = self.options
        if target is not None and target != options.target:
            options = _core.Options(options)
            options.target = target
        found = _core.SpecializationCache.key(args, kwargs, options.key())
        if found is not None:
            key, leaves = found
            if self._names or self._closure:
                key += _captures_key(self.fn, self._names, self._number_keys)
            treedef = layouts = None
        else:  # keyed by flatten's tree, named once per function
            treedef, leaves = _flatten_call(args, kwargs)
            layouts = tuple(map(_layout, leaves))
            tree_key = (
                treedef,
                tuple((a.shape, a.dtype) for a in leaves),
                layouts,
                _aliases(leaves),
            )
            name = self._tree_keys.get(tree_key)
            if name is None:
                # A name the cache has not seen: a tree named before the
                # memo was cleared is only traced again (its entry ages out).
                if len(self._tree_keys) >= (self.cache_limit or _TREE_NAMES):
                    self._tree_keys.clear()
                name = self._tree_keys[tree_key] = next(self._tree_names)
            key = f"tree {name}|{options.key()}"
            if self._names or self._closure:
                key += _captures_key(self.fn, self._names, self._number_keys)

        def compile():
            nonlocal treedef, leaves, layouts
            if treedef is None:
                treedef, leaves = _flatten_call(args, kwargs)
                layouts = tuple(map(_layout, leaves))
            for i, a in enumerate(leaves):
                if isinstance(a, Traced):
                    raise TypeError("tinymlir.jit: a traced value was passed outside of tracing")
                if a.dtype not in _SUPPORTED_DTYPES:
                    path = _call_paths(treedef)[i]
                    dtype_name(a.dtype, f"argument {path}")
            return self._build(treedef, leaves, layouts, options)

        return self._cache.find_or_compile(key, options.cache_limit, compile), leaves

    def _build(self, treedef, leaves, layouts, options):
        n = len(leaves)
        placeholders = [
            _core.placeholder(i, list(a.shape), dtype_name(a.dtype)) for i, a in enumerate(leaves)
        ]
        # The same array passed twice is one traced array, as it is one buffer.
        first = {}
        traced = []
        for i, a in enumerate(leaves):
            j = first.setdefault(id(a), i)
            if j == i:  # an argument's buffer, in its layout (reshapes are views as NumPy's)
                strides = layouts[i]
                ref = _core.Ref(placeholders[i], list(strides)) if strides else None
                traced.append(Traced(placeholders[i], ref))
            else:
                traced.append(traced[j])
        with TraceContext(n, self.fn, options) as ctx:
            ctx.made.extend(traced)  # the arguments expire with the trace too
            args, kwargs = _unflatten_call(treedef, iter(traced))
            result = _with_traceable_captures(self.fn)(*args, **kwargs)
            ctx.check_copies()
            for i, t in enumerate(traced):
                if t._view:  # only `arg.shape = ...` gives an argument itself a view
                    raise TracingError(
                        f"tinymlir cannot trace setting the shape of argument {i} (NumPy "
                        "would change the caller's array); reshape a local name instead"
                    )
            outs = []
            out_tree = _flatten_result(result, outs)
            written = [
                i for i, t in enumerate(traced) if first[id(leaves[i])] == i and t._ref.version > 0
            ]
            # Captured arrays written to: hidden inputs after the leaves, written
            # back as arguments are.
            stand_ins = {n + position: t for position, t in ctx.written_captures.values()}
            written += [i for i, t in stand_ins.items() if t._ref.version > 0]
            if not outs and not written:  # computed from static arguments alone
                return Specialization(None, n, [], None, static=(result,))
            # An argument returned as it is (not a view of it) is the caller's
            # array, as NumPy returns the same object.
            by_id = {id(t): i for i, t in enumerate(traced) if first[id(leaves[i])] == i}
            returned = [
                (k, by_id[id(o)]) for k, o in enumerate(outs) if id(o) in by_id and o._view == ()
            ]
            # A view of an argument (a.T, a[1:], a.reshape(...), a[...]) is a view
            # of the caller's array, as NumPy's: made from it after the call, not
            # computed.
            by_buf = {
                t._ref.buffer_id: i for i, t in enumerate(traced) if first[id(leaves[i])] == i
            }
            views = [
                (k, (by_buf[o._ref.buffer_id], o._view))
                for k, o in enumerate(outs)
                if isinstance(o, Traced)
                and o._ref.buffer_id in by_buf
                and (o._view != () or id(o) not in by_id)
            ]
            rank0 = [
                (k, o.rank0())
                for k, o in enumerate(outs)
                if isinstance(o, Traced) and not o.shape and o.rank0() != "scalar"
            ]
            readonly = [
                k for k, o in enumerate(outs) if isinstance(o, Traced) and o._ref.read_only()
            ]
            # A result that is another computed result (`return y, y`), or a view
            # of one returned whole (`return y, y[1:]`), is NumPy's same object or
            # view of it: made from that result after the call.
            candidates = [
                (k, o)
                for k, o in enumerate(outs)
                if isinstance(o, Traced)
                and k not in dict(views)
                and k not in dict(returned)
                and o._ref.buffer_id not in by_buf
            ]
            whole = {}
            for k, o in candidates:
                if o._view == () and o.shape:
                    whole.setdefault(o._ref.buffer_id, k)
            aliases = [
                (k, (j, None if outs[j] is o else o._view))
                for k, o in candidates
                if (j := whole.get(o._ref.buffer_id, k)) != k
            ]
            skipped = dict(views) | dict(aliases)
            computed = [o for k, o in enumerate(outs) if k not in skipped]
            writes = [(i, len(computed) + k) for k, i in enumerate(written)]
            if not computed and not written:
                return Specialization(None, n, [], out_tree, views=views, rank0=rank0)
            outs = computed
            # One kernel output per returned array, then one per argument
            # written to; each of those updates its argument in place where the
            # C++ side can (Compiled.donations).
            tensors = [to_tensor(o, "an output") for o in outs]
            tensors += [(stand_ins[i] if i >= n else traced[i])._ref.base() for i in written]
            donated = [-1] * len(outs) + written
            if out_tree is LEAF and not written and not returned and not views and not aliases:
                out_tree = None
            hidden = list(ctx.hidden)
            args_t = placeholders + list(ctx.hidden_tensors)
        compiled = _core.compile_graph(tensors, args_t, options, donated)
        return Specialization(
            compiled,
            n,
            hidden,
            out_tree,
            writes,
            returned,
            views=views,
            rank0=rank0,
            readonly=readonly,
            aliases=aliases,
        )

    def __repr__(self):
        return (
            f"<tinymlir.jit {getattr(self.fn, '__qualname__', self.fn)!r} on {self.options.target}>"
        )


def _resolve(module, qualname):
    obj = module
    for name in qualname.split("."):
        obj = getattr(obj, name, None)
    return obj


def _cloudpickling():
    """Whether cloudpickle is pickling (it sends __main__'s functions by value:
    the processes it sends them to have another __main__)."""
    frame = sys._getframe(2)
    for _ in range(24):
        if frame is None:
            return False
        if frame.f_globals.get("__name__", "").startswith("cloudpickle"):
            return True
        frame = frame.f_back
    return False


def _options_state(options):
    """A tinymlir.Options as a plain dict of its fields (target included)."""
    state = {name: getattr(options, name) for name in OPTIONS}
    state["target"] = options.target
    return state


def _options_from_state(state):
    options = _core.Options()
    for name, value in state.items():
        setattr(options, name, value)
    return options


class _Captured(np.ndarray):
    """A NumPy array the traced function captured (a global or a closure
    variable), while it is traced: NumPy's indexing and functions whose
    dispatch does not look at every argument (``table[i]``, ``np.take(table, i)``)
    reach tracing when a traced value is among their arguments. Everything
    else is the array itself, read at every call as captured arrays are."""

    def _traced(self):
        return Traced(to_tensor(self.view(np.ndarray), "a captured array"))

    def __getitem__(self, index):
        if _holds_traced(index):
            return self._traced()[index]
        return super().__getitem__(index)

    def __array_function__(self, func, types, args, kwargs):
        if _holds_traced(args) or _holds_traced(kwargs):
            # A function that writes into its array argument keeps the captured
            # array itself (NumPy would write into it: refused by name).
            writes = func in _WRITING_FUNCTIONS

            def lift(x):
                if isinstance(x, _Captured):
                    return x.view(np.ndarray) if writes else x._traced()
                if isinstance(x, (tuple, list)):
                    return type(x)(lift(v) for v in x)
                return x

            return func(*lift(args), **{k: lift(v) for k, v in kwargs.items()})
        return super().__array_function__(func, types, args, kwargs)


#: NumPy functions that write into their first argument.
_WRITING_FUNCTIONS = frozenset(
    [np.put, np.put_along_axis, np.putmask, np.place, np.copyto, np.fill_diagonal]
)


def _holds_traced(x) -> bool:
    if isinstance(x, Traced):
        return True
    if isinstance(x, (tuple, list)):
        return any(_holds_traced(v) for v in x)
    if isinstance(x, dict):
        return any(_holds_traced(v) for v in x.values())
    return False


def _capturable(v) -> bool:
    return type(v) is _NDARRAY or (
        isinstance(v, np.ndarray)
        and type(v).__module__ == "numpy"
        and not isinstance(v, (np.matrix, np.ma.MaskedArray))
    )


def _code_names(fn):
    """The global names a plain function's code reads (its comprehensions' and
    nested functions' too), but those now bound to modules, classes and
    functions (the key of each call reads the others: no program binds `np`
    to an array); None for other callables."""
    if not isinstance(fn, types.FunctionType):
        return None
    names = set()
    codes = [fn.__code__]
    while codes:  # its global loads, not attribute names (np.tanh's tanh)
        code = codes.pop()
        names.update(
            i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")
        )
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    glob = fn.__globals__
    names = {n for n in names if not callable(v := glob.get(n)) and type(v) is not types.ModuleType}
    return tuple(sorted(names))


_NUMBERS = (int, float, complex, np.generic)  # bool is an int


def _captures(fn, names):
    """The NumPy arrays and numbers `fn` captures now: (name, value) for the
    globals among `names` (its code's, _code_names) and (position, value) for
    its closure's cells."""
    if names:
        glob = fn.__globals__
        for n in names:
            v = glob.get(n)
            if _capturable(v) or isinstance(v, _NUMBERS):
                yield n, v
    for i, cell in enumerate(fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if _capturable(v) or isinstance(v, _NUMBERS):
            yield i, v


def _captures_key(fn, names, number_keys):
    """What `fn` captures now: arrays by identity, shape and dtype, numbers by
    type and value (the trace holds them as constants). NumPy reads a name at
    every call, so a name bound to another array or number since is traced
    again (its key differs). A number's part is kept by the number object
    (`number_keys`, at most 64): numbers are immutable, so the same object has
    the same part."""
    parts = []
    for _, v in _captures(fn, names):
        if isinstance(v, np.ndarray):
            parts.append(f"|captures {id(v)}{v.shape}{v.dtype.char}")
            continue
        known = number_keys.get(id(v))
        if known is None or known[0] is not v:
            if len(number_keys) >= 64:
                number_keys.clear()
            known = number_keys[id(v)] = (v, f"|captures {type(v).__name__} {v!r}")
        parts.append(known[1])
    return "".join(parts)


def _with_traceable_captures(fn):
    """`fn` as it is traced: its loops converted (_loops.convert, unless the trace's
    options say unroll_loops), and the NumPy arrays it captures (_captures) seen as
    _Captured. Only a plain Python function is changed; its globals are a copy in
    which those names are views, so the module's own arrays are untouched."""
    context = current_context()
    options = getattr(context, "options", None)
    conversion = None
    if options is not None and not options.unroll_loops:
        conversion = _loops.convert(fn)
    names = _code_names(fn)
    captured = [] if names is None else [(k, v) for k, v in _captures(fn, names) if _capturable(v)]
    if not captured:
        if conversion is None:
            return fn
        return _loops.converted_function(fn, conversion, fn.__globals__, fn.__closure__)
    # Arrays the code writes to (by name) are traced as arguments are, and
    # written back after each call; the others are _Captured views.
    written = _written_names(fn.__code__)
    freevars = fn.__code__.co_freevars

    def stand_in(k, v):
        name = k if isinstance(k, str) else freevars[k]
        if context is not None and name in written:
            return context.written_capture(v)
        return v.view(_Captured)

    swapped = {n: stand_in(n, v) for n, v in captured if isinstance(n, str)}
    cells = {i: types.CellType(stand_in(i, v)) for i, v in captured if isinstance(i, int)}
    closure = fn.__closure__
    if cells:
        closure = tuple(cells.get(i, c) for i, c in enumerate(closure))
    new_globals = dict(fn.__globals__, **swapped) if swapped else fn.__globals__
    if conversion is not None:
        return _loops.converted_function(fn, conversion, new_globals, closure)
    new = types.FunctionType(fn.__code__, new_globals, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    return new


@functools.lru_cache(maxsize=256)
def _written_names(code) -> frozenset:
    """The names whose arrays the source of `code` writes into (_loops.written_in_place:
    item and slice assignments, augmented assignments, `out=`, NumPy's writing
    functions and methods). Empty where the source is not available (the REPL,
    exec): writes stay refused there."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return frozenset()
    return frozenset(_loops.written_in_place([tree]))


def _rebuild_jit(fn, state):
    return JitFunction(
        fn, target=state["target"], **{k: v for k, v in state.items() if k != "target"}
    )


copyreg.pickle(_core.Options, lambda o: (_options_from_state, (_options_state(o),)))


@overload
def jit(fn: Callable[..., Any], **options: Any) -> JitFunction: ...
@overload
def jit(fn: None = None, **options: Any) -> Callable[[Callable[..., Any]], JitFunction]: ...


def jit(
    fn: Callable[..., Any] | None = None, **options: Any
) -> JitFunction | Callable[[Callable[..., Any]], JitFunction]:
    """``@jit`` or ``@jit(target="gpu", cache_limit=8, ...)`` on a function of arrays."""
    if fn is None:
        return lambda f: JitFunction(f, **options)
    return JitFunction(fn, **options)
