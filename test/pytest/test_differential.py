"""Differential test: seeded random NumPy expressions, jitted by tinymlir, against NumPy.

Each case is a small expression tree over 1-3 array operands (every dtype tinymlir
has; shapes that broadcast against (2, 3, 4)) and Python scalars: binary and unary
ufuncs, reductions with axes and keepdims, shape functions. It is rendered as Python
source, evaluated by NumPy and by ``jit`` of the same source, and judged:

* NumPy raises: tinymlir must raise an exception of the same kind (a subclass match
  of TypeError / ValueError / IndexError / OverflowError; AxisError is both a
  ValueError and an IndexError).
* NumPy succeeds: tinymlir must give the same dtype and shape and the same values, or
  refuse clearly (a ``tinymlir.TracingError``, or a TypeError whose message names the op
  it does not support: "[sort] complex operands are not supported"); refusals are
  counted and printed, not failed. A refusal met before an error NumPy raises counts as
  a refusal too.

Values: exact for bool and integer results. Float and complex results are compared
against a running error bound computed alongside the NumPy evaluation: every node
carries E, an elementwise bound on |computed - exact| (propagated through each op by
its derivative, plus a few ulps of the node's own rounding and operand conversion),
so that |tinymlir - numpy| <= 2 E holds when both are accurate. Elements whose value
is uncertain (a comparison, floor or argmax within error of its boundary, an
overflow, a nan made from inexact inputs) carry E = inf and are not compared; exact
ones (E = 0) must match exactly, nan for nan and inf for inf.

A case is reproduced by its index: ``make_case(i).describe()``; ``python
test_differential.py [first [count]]`` prints the cases and their outcomes, and
TINYMLIR_DIFFERENTIAL_N=6000 runs a longer sweep (about 11 ms a case).
"""

import math
import os
import re
import sys
import time
import warnings

import numpy as np
from conftest import assert_same

from tinymlir import TracingError, jit

N = int(os.environ.get("TINYMLIR_DIFFERENTIAL_N", 1000))  # cases 0 .. N-1
SEED = int(os.environ.get("TINYMLIR_DIFFERENTIAL_SEED", 1729))

AxisError = np.exceptions.AxisError

DTYPES = [
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
]
SHAPES = [(3, 4), (4,), (3, 1), (), (2, 3, 4), (1, 4), (2, 1, 1)]  # all broadcast together
BAD_SHAPES = [(5,), (2, 5)]

K1 = 2  # ulps of own rounding: arithmetic
KT = 8  # ulps of own rounding: transcendental functions
INF = math.inf

BINARY = {
    # name: operator symbol or None
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "divide": "/",
    "floor_divide": "//",
    "remainder": "%",
    "power": "**",
    "maximum": None,
    "minimum": None,
    "arctan2": None,
    "bitwise_and": "&",
    "bitwise_or": "|",
    "bitwise_xor": "^",
    "left_shift": "<<",
    "right_shift": ">>",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
    "equal": "==",
    "not_equal": "!=",
    "logical_and": None,
    "logical_or": None,
}
UNARY = [
    "negative",
    "abs",
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tanh",
    "floor",
    "ceil",
    "rint",
    "sign",
    "square",
    "reciprocal",
    "invert",
    "conjugate",
    "isnan",
    "isfinite",
]
REDUCTIONS = [
    "sum",
    "prod",
    "max",
    "min",
    "mean",
    "var",
    "std",
    "any",
    "all",
    "argmax",
    "argmin",
    "cumsum",
]
SHAPE_FNS = [
    "reshape",
    "transpose",
    "T",
    "expand_dims",
    "squeeze",
    "concatenate",
    "stack",
    "where",
    "clip",
    "step2",
    "newaxis",
    "sort",
]
COMPARISONS = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal"}


# --- Helpers ----------------------------------------------------------------------


def hp(v):
    """A value in float64 (or complex128): the precision the bounds are computed in."""
    a = np.asarray(v)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def eps(dtype):
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).eps) if dtype.kind in "fc" else 0.0


def fmax(dtype):
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).max) if dtype.kind in "fc" else INF


def tiny(dtype):
    dtype = np.dtype(dtype)
    return float(np.finfo(dtype).smallest_normal) if dtype.kind in "fc" else 0.0


def prop(d, e):
    """d * e, where an exact input (e == 0) contributes nothing whatever d is, and an
    inexact one through an infinite or nan derivative is unbounded."""
    d = np.asarray(d, dtype=np.float64)
    e = np.asarray(e, dtype=np.float64)
    r = d * e
    return np.where(e == 0, 0.0, np.where(np.isfinite(d), r, INF))


def own(k, e, x):
    """k ulps (eps e) of the magnitude x, where x is finite."""
    x = np.asarray(x, dtype=np.float64)
    return k * e * np.where(np.isfinite(x), x, 0.0)


def near_int(x, e, half=False):
    """Whether x is within e of an integer (or of a half-integer)."""
    x = np.asarray(x, dtype=np.float64)
    if half:
        x = x - 0.5
    d = np.abs(x - np.round(x))
    return d <= e


def truth(v, E):
    """bool(v) and whether it is uncertain."""
    a = hp(v)
    t = a != 0
    unc = (np.abs(a) <= E) & (E > 0)
    return t, unc | np.isinf(E)


def norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return tuple(a % ndim for a in axis)
    return (axis % ndim,)


# --- Expression trees -------------------------------------------------------------


class Node:
    __slots__ = ("op", "kids", "p", "src", "value", "E", "arg")

    def __init__(self, op, kids=(), p=None, src="", value=None, arg=None):
        self.op, self.kids, self.p, self.src, self.value, self.arg = (
            op,
            kids,
            p or {},
            src,
            value,
            arg,
        )
        self.E = None

    def size(self):
        return 1 + sum(k.size() for k in self.kids)


class Raised(Exception):
    """A node NumPy raises on, kept as the case (the expression is that subtree)."""

    def __init__(self, node, exc):
        super().__init__(node.src)
        self.node, self.exc = node, exc


def numpy_eval(src, names):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return eval(src, {"np": np}, names)


def render(op, p, ks):
    """Python source of a node from its kids' sources."""
    if op in BINARY:
        a, b = ks
        if p.get("operator") and BINARY[op]:
            return f"({a} {BINARY[op]} {b})"
        return f"np.{op}({a}, {b})"
    if op in UNARY:
        (a,) = ks
        if p.get("operator"):
            return {"negative": f"(-{a})", "invert": f"(~{a})", "abs": f"abs({a})"}[op]
        return f"np.{op}({a})"
    if op in REDUCTIONS:
        (a,) = ks
        kw = []
        if "axis" in p:
            kw.append(f"axis={p['axis']!r}")
        if "keepdims" in p:
            kw.append(f"keepdims={p['keepdims']!r}")
        if p.get("method"):
            return f"{a}.{op}({', '.join(kw)})"
        return f"np.{op}({', '.join([a] + kw)})"
    if op == "reshape":
        (a,) = ks
        shape = p["shape"]
        form = p["form"]
        if form == 0:
            return f"np.reshape({a}, {shape!r})"
        if form == 1 or not shape:
            return f"{a}.reshape({shape!r})"
        return f"{a}.reshape({', '.join(map(str, shape))})"
    if op == "transpose":
        (a,) = ks
        perm = p.get("perm")
        if p["form"] == 0:
            return f"np.transpose({a})" if perm is None else f"np.transpose({a}, {perm!r})"
        return f"{a}.transpose()" if perm is None else f"{a}.transpose({', '.join(map(str, perm))})"
    if op == "T":
        return f"{ks[0]}.T"
    if op == "expand_dims":
        return f"np.expand_dims({ks[0]}, {p['axis']})"
    if op == "squeeze":
        if p["axis"] is None:
            return f"np.squeeze({ks[0]})"
        return (
            f"np.squeeze({ks[0]}, axis={p['axis']})"
            if p["form"] == 0
            else f"{ks[0]}.squeeze({p['axis']})"
        )
    if op in ("concatenate", "stack"):
        return f"np.{op}([{ks[0]}, {ks[1]}], axis={p['axis']!r})"
    if op == "where":
        return f"np.where({ks[0]}, {ks[1]}, {ks[2]})"
    if op == "clip":
        if p["form"] == 0:
            return f"np.clip({ks[0]}, {ks[1]}, {ks[2]})"
        return f"{ks[0]}.clip({ks[1]}, {ks[2]})"
    if op == "step2":
        return f"{ks[0]}[::2]"
    if op == "newaxis":
        return f"{ks[0]}[..., None]"
    if op == "sort":
        return f"np.sort({ks[0]}, axis={p['axis']!r})"
    if op == "mod4":  # a non-negative exponent or shift count: x % n
        return f"({ks[0]} % {p['n']})"
    raise AssertionError(op)


def lit_src(v):
    s = repr(v)
    return f"({s})" if s.startswith("-") else s  # (-2) ** x, not -(2 ** x)


# --- Operand values ---------------------------------------------------------------


def make_array(rng, dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = -9 if dt.kind == "i" else 0
        a = rng.integers(lo, 13, size=shape).astype(dt)
        if a.size and rng.random() < 0.1:  # an extreme: wrapping arithmetic
            info = np.iinfo(dt)
            a.flat[rng.integers(a.size)] = (
                info.min if (dt.kind == "i" and rng.random() < 0.5) else info.max
            )
        return np.asarray(a)
    if dt.kind == "f":
        return np.asarray(make_real(rng, shape).astype(dt))
    z = np.empty(shape, dtype=dt)
    z.real, z.imag = make_real(rng, shape), make_real(rng, shape)
    return np.asarray(z)


def make_real(rng, shape):
    style = rng.random()
    if style < 0.3:  # small integers and halves: exact ties, rint's halves
        a = rng.integers(-8, 9, size=shape) / 2.0
    else:
        a = rng.normal(0.0, 1.5, size=shape)
    a = np.asarray(a, dtype=np.float64)
    if a.size and rng.random() < 0.12:  # specials
        for _ in range(int(rng.integers(1, 3))):
            a.flat[rng.integers(a.size)] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0])
    return a


LITERALS = [
    0,
    1,
    2,
    3,
    -1,
    -2,
    5,
    300,
    -300,
    0.5,
    -1.5,
    2.0,
    0.1,
    1.0,
    -0.25,
    3.5,
    1j,
    (0.5 - 1j),
    (2 + 0j),
    True,
    False,
]


# --- The generator ------------------------------------------------------------------


class Gen:
    P_KEEP_ERROR = 0.5

    def __init__(self, rng):
        self.rng = rng
        n = int(rng.integers(1, 4))
        self.args = []
        for _ in range(n):
            dtype = DTYPES[int(rng.integers(len(DTYPES)))]
            if rng.random() < 0.04:
                shape = BAD_SHAPES[int(rng.integers(len(BAD_SHAPES)))]
            else:
                shape = SHAPES[int(rng.integers(len(SHAPES)))]
            self.args.append(make_array(rng, dtype, shape))
        self.names = {f"x{i}": a for i, a in enumerate(self.args)}

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    # Leaves
    def arg(self):
        i = int(self.rng.integers(len(self.args)))
        n = Node("arg", src=f"x{i}", value=self.args[i], arg=i)
        n.E = np.zeros(np.shape(n.value))
        return n

    def literal(self):
        v = self.choice(LITERALS)
        n = Node("lit", src=lit_src(v), value=v)
        n.E = np.zeros(())
        return n

    def operand(self, depth, literal_ok=True):
        if literal_ok and self.rng.random() < 0.2:
            return self.literal()
        return self.node(depth)

    def node(self, depth):
        if depth <= 0:
            return self.arg()
        for _ in range(6):
            r = self.rng.random()
            sub = depth - 1 if self.rng.random() < 0.6 else int(self.rng.integers(0, depth))
            if r < 0.38:
                n = self.binary(sub)
            elif r < 0.58:
                n = self.unary(sub)
            elif r < 0.8:
                n = self.reduction(sub)
            else:
                n = self.shape_fn(sub)
            if n is not None:
                return n
        return self.arg()

    def make(self, op, kids, p):
        """The node, evaluated by NumPy; raises Raised to keep an error case."""
        src = render(op, p, [k.src for k in kids])
        names = {f"k{i}": k.value for i, k in enumerate(kids)}
        try:
            value = numpy_eval(render(op, p, [f"k{i}" for i in range(len(kids))]), names)
        except Exception as exc:  # noqa: BLE001 -- NumPy's error is the expectation
            node = Node(op, tuple(kids), p, src)
            if self.rng.random() < self.P_KEEP_ERROR:
                raise Raised(node, exc) from exc
            return None
        node = Node(op, tuple(kids), p, src, value)
        node.E = bound(node)
        return node

    def binary(self, sub):
        op = self.choice(list(BINARY))
        a = self.operand(sub)
        b = self.operand(sub, literal_ok=a.op != "lit")
        if a.op == "lit" and b.op == "lit":
            b = self.node(sub)
        if self.rng.random() < 0.5:
            a, b = b, a
        ka, kb = np.asarray(a.value).dtype.kind, np.asarray(b.value).dtype.kind
        if op == "power":
            if self.rng.random() < 0.5 and a.op != "lit":
                a = self.wrap_abs(a)
            if kb in "biu" and ka in "biu":  # integer powers: small non-negative exponents
                if b.op == "lit":
                    b = self.literal_of(
                        [0, 1, 2, 3, 2, 3, -1] if self.rng.random() < 0.1 else [0, 1, 2, 3]
                    )
                elif kb != "b":
                    b = self.mod(b, 4)
        if op in ("left_shift", "right_shift"):
            if b.op == "lit":
                if isinstance(b.value, int) and not isinstance(b.value, bool):
                    b = self.literal_of([0, 1, 2, 3, 7])
            elif kb in "iu":
                b = self.mod(b, 8)
        p = {"operator": bool(BINARY[op]) and self.rng.random() < 0.5}
        if p["operator"] and a.op == "lit" and b.op == "lit":
            p["operator"] = False
        return self.make(op, [a, b], p)

    def literal_of(self, values):
        v = self.choice(values)
        n = Node("lit", src=lit_src(v), value=v)
        n.E = np.zeros(())
        return n

    def mod(self, kid, n):
        return self.make("mod4", [kid, self.literal_of([n])], {"n": n}) or kid

    def wrap_abs(self, kid):
        return self.make("abs", [kid], {}) or kid

    def unary(self, sub):
        op = self.choice(UNARY)
        a = self.node(sub)
        kind = np.asarray(a.value).dtype.kind
        if op in ("log", "sqrt") and self.rng.random() < 0.6:
            a = self.wrap_abs(a)
        if op == "reciprocal" and kind not in "fc":
            return None  # NumPy's integer reciprocal divides by zero in C
        p = {"operator": op in ("negative", "invert", "abs") and self.rng.random() < 0.4}
        return self.make(op, [a], p)

    def axis_choice(self, ndim, tuple_ok=True):
        r = self.rng.random()
        if r < 0.25 or ndim == 0 and r < 0.8:
            return None
        if r < 0.3:
            return int(self.rng.choice([ndim, -ndim - 1]))  # out of range
        if tuple_ok and r < 0.5 and ndim >= 1:
            k = int(self.rng.integers(0, ndim + 1))
            axes = list(self.rng.permutation(ndim)[:k])
            axes = [int(x) - (ndim if self.rng.random() < 0.3 else 0) for x in axes]
            if self.rng.random() < 0.05 and axes:
                axes.append(axes[0])  # repeated
            return tuple(axes)
        return int(self.rng.integers(-ndim, ndim)) if ndim else 0

    def reduction(self, sub):
        op = self.choice(REDUCTIONS)
        a = self.node(sub)
        ndim = np.ndim(a.value)
        p = {"method": self.rng.random() < 0.4}
        axis = self.axis_choice(
            ndim, tuple_ok=op not in ("argmax", "argmin", "cumsum") or self.rng.random() < 0.1
        )
        if axis is not None or self.rng.random() < 0.3:
            p["axis"] = axis
        if op != "cumsum" and self.rng.random() < 0.5:
            p["keepdims"] = bool(self.rng.random() < 0.6)
        return self.make(op, [a], p)

    def shape_fn(self, sub):
        op = self.choice(SHAPE_FNS)
        a = self.node(sub)
        shape = np.shape(a.value)
        ndim, size = len(shape), int(np.prod(shape))
        rng = self.rng
        if op == "reshape":
            options = [(-1,), (size,), (1, size), (size, 1), ()]
            for d in (2, 3, 4, 6):
                if size % d == 0:
                    options += [(d, -1), (size // d, d), (d, 1, size // d)]
            if rng.random() < 0.08:
                options = [(size + 1,), (-1, -1), (5, -1)]
            return self.make(op, [a], {"shape": self.choice(options), "form": int(rng.integers(3))})
        if op == "transpose":
            perm = None
            if rng.random() < 0.6:
                perm = tuple(int(x) for x in rng.permutation(ndim))
                if rng.random() < 0.06:
                    perm = perm + (0,) if rng.random() < 0.5 else (0,) * ndim
            return self.make(op, [a], {"perm": perm, "form": int(rng.integers(2))})
        if op in ("T", "step2", "newaxis"):
            return self.make(op, [a], {})
        if op == "expand_dims":
            return self.make(op, [a], {"axis": int(rng.integers(-ndim - 2, ndim + 2))})
        if op == "squeeze":
            axis = None
            if rng.random() < 0.6 and ndim:
                ones = [i for i, d in enumerate(shape) if d == 1]
                axis = (
                    self.choice(ones)
                    if ones and rng.random() < 0.85
                    else int(rng.integers(-ndim, ndim))
                )
            return self.make(op, [a], {"axis": axis, "form": int(rng.integers(2))})
        if op in ("concatenate", "stack"):
            b = self.node(sub)
            if np.shape(b.value) != shape and rng.random() < 0.75:
                b = self.make("negative", [a], {}) if np.asarray(a.value).dtype != bool else a
                b = b or a
            lo = -ndim - (1 if op == "stack" else 0)
            hi = ndim + (1 if op == "stack" else 0)
            axis = int(rng.integers(lo, hi)) if hi > lo else 0
            if rng.random() < 0.1:
                axis = None if op == "concatenate" else hi
            return self.make(op, [a, b], {"axis": axis})
        if op == "where":
            x = self.operand(sub)
            y = self.operand(sub)
            return self.make(op, [a, x, y], {})
        if op == "clip":
            lo = (
                self.operand(sub)
                if rng.random() < 0.3
                else self.literal_of([-1, 0, 1, -0.5, 0.25, None])
            )
            hi = (
                self.operand(sub)
                if rng.random() < 0.3
                else self.literal_of([1, 2, 3, 0.5, 1.5, None])
            )
            if lo.op == "lit" and hi.op == "lit" and lo.value is None and hi.value is None:
                hi = self.literal_of([2])
            return self.make(op, [a, lo, hi], {"form": int(rng.integers(2))})
        if op == "sort":
            axis = self.choice([-1, -1, 0, None])
            return self.make(op, [a], {"axis": axis})
        raise AssertionError(op)


# --- Error bounds -----------------------------------------------------------------


def bound(node):
    """E: an elementwise bound on |NumPy's value - the exact value| of the node (inf:
    uncertain), from its kids' values and bounds."""
    out = np.asarray(node.value)
    shape = out.shape
    dt = out.dtype
    e = eps(dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            E = _bound(node, out, e)
    E = np.broadcast_to(np.asarray(E, dtype=np.float64), shape).copy()
    E[np.isnan(E)] = INF
    if dt.kind not in "fc":
        return np.where(E > 0, INF, 0.0)
    v = hp(out)
    finite = np.isfinite(v)
    # A non-finite result is exact when its inputs were; overflow boundaries are not.
    E[~finite & (E > 0)] = INF
    E[~finite & (E == 0)] = 0.0
    E[finite & (np.abs(v) > fmax(dt) / 16)] = INF
    return E


def _kidvals(node, shape):
    vals, Es = [], []
    for k in node.kids:
        vals.append(np.broadcast_to(hp(k.value), shape) if k.value is not None else None)
        Es.append(np.broadcast_to(k.E, shape) if k.value is not None else None)
    return vals, Es


def _bound(node, out, e):
    op = node.op
    shape = out.shape
    v = hp(out)
    V = np.abs(v)
    if op in BINARY or op == "mod4":
        (a, b), (Ea, Eb) = _kidvals(node, shape)
        A, B = np.abs(a), np.abs(b)
        if (
            out.dtype.kind not in "fc"
            and op not in COMPARISONS
            and op not in ("logical_and", "logical_or")
        ):
            return Ea + Eb  # integer: exact unless an input is uncertain
        if op in ("add", "subtract"):
            return Ea + Eb + own(K1, e, A + B + V)
        if op == "multiply":
            return prop(B, Ea) + prop(A, Eb) + Ea * Eb + own(K1, e, V + A * B)
        if op == "divide":
            den = B - Eb
            dinv = np.where(den > 0, 1 / np.where(den > 0, den, 1), INF)
            return prop(dinv, Ea) + prop(V * dinv, Eb) + own(K1, e, V)
        if op in ("floor_divide", "remainder", "mod4"):
            if np.iscomplexobj(a) or np.iscomplexobj(b):
                return INF
            den = B - Eb
            dinv = np.where(den > 0, 1 / np.where(den > 0, den, 1), INF)
            q = a / b
            Eq = prop(dinv, Ea) + prop(np.abs(q) * dinv, Eb)
            exact = (Ea == 0) & (Eb == 0) & (np.fmod(a, b) == 0)
            unc = ~exact & (np.abs(q - np.round(q)) <= Eq + 8 * e * (np.abs(q) + 1))
            if op == "floor_divide":
                return np.where(unc, INF, 0.0)
            fl = np.floor(q)
            E = Ea + prop(np.abs(fl), Eb) + own(K1, e, V + B)
            return np.where(unc, INF, E)
        if op == "power":
            la = np.log(np.where(A > 0, A, 1))
            if np.iscomplexobj(a):
                la = np.abs(np.log(np.where(a != 0, a, 1)))
            da = np.abs(b * v / np.where(a != 0, a, np.nan))
            da = np.where((a == 0) & (np.real(b) >= 1), np.abs(b), da)
            db = V * np.abs(la)
            E = prop(da, Ea) + prop(db, Eb)
            return E + own(KT, e, V + np.abs(b) * V + B * V * np.abs(la))
        if op in ("maximum", "minimum"):
            E = np.maximum(Ea, Eb)
            if np.iscomplexobj(a) or np.iscomplexobj(b):
                E = np.where((np.abs(np.real(a) - np.real(b)) <= Ea + Eb) & (Ea + Eb > 0), INF, E)
            return E + own(K1, e, V)
        if op == "arctan2":
            r = np.hypot(a, b)
            E = (B * Ea + A * Eb) / np.where(r > 0, r * r, 1)
            unc = (r <= Ea + Eb) & (Ea + Eb > 0)
            unc |= (b < 0) & (A <= Ea) & (Ea > 0)
            return np.where(unc, INF, E + own(KT, e, V + 1))
        if op in COMPARISONS:
            d = a - b
            tol = Ea + Eb
            if op in ("equal", "not_equal") or not (np.iscomplexobj(a) or np.iscomplexobj(b)):
                unc = (np.abs(d) <= tol) & (tol > 0)
            else:
                unc = ((np.abs(np.real(d)) <= tol) | (np.abs(np.imag(d)) <= tol)) & (tol > 0)
            return np.where(unc | np.isinf(tol), INF, 0.0)
        if op in ("logical_and", "logical_or"):
            _, ua = truth(a, Ea)
            _, ub = truth(b, Eb)
            return np.where(ua | ub, INF, 0.0)
        raise AssertionError(op)
    if op in UNARY:
        (a,), (Ea,) = _kidvals(node, shape)
        A = np.abs(a)
        cplx = np.iscomplexobj(a)
        if out.dtype.kind not in "fc" and op not in ("isnan", "isfinite"):
            return Ea
        if op in ("negative", "conjugate"):
            return Ea
        if op == "abs":
            return Ea + own(K1, e, V)
        if op == "exp":
            return V * np.expm1(Ea) * 1.01 + own(KT, e, V + A * V)
        if op in ("log", "sqrt"):
            den = A - Ea
            if op == "log":
                d = np.where(den > 0, 1 / np.where(den > 0, den, 1), INF)
                ownE = own(KT, e, V + 1)
            else:
                d = np.where(den > 0, 0.5 / np.sqrt(np.where(den > 0, den, 1)), INF)
                ownE = own(KT if cplx else K1, e, V)
            E = prop(d, Ea) + ownE
            if cplx:  # the branch cut along the negative reals
                E = np.where((np.real(a) < 0) & (np.abs(np.imag(a)) <= Ea) & (Ea > 0), INF, E)
            return E
        if op in ("sin", "cos"):
            d = np.cosh(np.abs(np.imag(a)) + Ea) if cplx else 1.0
            return prop(d, Ea) * 1.01 + own(KT, e, V + A * d)
        if op == "tanh":
            d = np.abs(1 - v * v)
            if cplx:
                d = 4 * d
                return np.where(d > 1e3, INF, prop(d, Ea) + own(KT, e, V + A * d))
            return Ea + own(KT, e, V + A * d)
        if op in ("floor", "ceil", "rint"):
            half = op == "rint"
            if cplx:
                unc = near_int(np.real(a), Ea, half) | near_int(np.imag(a), Ea, half)
            else:
                unc = near_int(a, Ea, half)
            return np.where(unc & (Ea > 0), INF, 0.0)
        if op == "sign":
            if cplx:
                den = A - Ea
                d = np.where(den > 0, 2 / np.where(den > 0, den, 1), INF)
                return prop(d, Ea) + own(K1, e, 2.0)
            return np.where((A <= Ea) & (Ea > 0), INF, 0.0)
        if op == "square":
            return 2 * prop(A, Ea) + Ea * Ea + own(K1, e, V + 2 * A * A)
        if op == "reciprocal":
            den = A - Ea
            d = np.where(den > 0, 1 / np.where(den > 0, A * den, 1), INF)
            return prop(d, Ea) + own(K1, e, V)
        if op in ("isnan", "isfinite"):
            kd = np.asarray(node.kids[0].value).dtype
            unc = np.isinf(Ea) | ((Ea > 0) & (A > fmax(kd) / 16))
            return np.where(unc, INF, 0.0)
        raise AssertionError(op)
    if op in REDUCTIONS:
        return _bound_reduction(node, out, e)
    return _bound_shape(node, out, e)


def _bound_reduction(node, out, e):
    op, p = node.op, node.p
    kid = node.kids[0]
    a = hp(kid.value)
    Ea = np.broadcast_to(kid.E, a.shape)
    A = np.abs(a)
    axis = p.get("axis")
    if a.ndim == 0:
        axis = None  # NumPy's reductions take axis 0 or -1 of a rank-0 array as all of it
    kd = bool(p.get("keepdims", False))
    kw = {"axis": axis, "keepdims": kd}
    n = max(1, int(np.prod([a.shape[i] for i in norm_axes(axis, a.ndim)])) if a.ndim else 1)
    integer = out.dtype.kind not in "fc"
    cplx = np.iscomplexobj(a)
    if op == "cumsum":
        flat_ax = None if axis is None else axis
        Es = np.cumsum(Ea.ravel() if axis is None else Ea, axis=flat_ax)
        if integer:
            return np.where(Es > 0, INF, 0.0)
        As = np.cumsum(A.ravel() if axis is None else A, axis=flat_ax)
        nn = a.size if axis is None else a.shape[axis]
        return Es + own(K1, e, nn * As)
    if op in ("argmax", "argmin"):
        return _bound_arg(axis, a, Ea, out)
    if op in ("any", "all"):
        t, unc = truth(a, Ea)
        if op == "any":
            sure = np.any(t & ~unc, **kw) | np.all(~t & ~unc, **kw)
        else:
            sure = np.any(~t & ~unc, **kw) | np.all(t & ~unc, **kw)
        return np.where(sure, 0.0, INF)
    if integer:
        return np.where(np.sum(Ea, **kw) > 0, INF, 0.0)
    if op == "sum":
        return np.sum(Ea, **kw) + own(K1, e, n * np.sum(A, **kw))
    if op == "mean":
        return np.mean(Ea, **kw) + own(K1, e, n * np.mean(A, **kw) + 1)
    if op == "prod":
        P = np.prod(A + Ea, **kw)
        rel = np.sum(np.where(A + Ea > 0, Ea / np.where(A + Ea > 0, A + Ea, 1), 0.0), **kw)
        return prop(P, rel) + own(K1, e, n * P)
    if op in ("max", "min"):
        E = np.max(Ea, **kw)
        if cplx:
            key = np.real(a)
            m = (np.max if op == "max" else np.min)(key, **{"axis": axis, "keepdims": True})
            close = np.abs(key - m) <= Ea + np.max(Ea, axis=axis, keepdims=True)
            ambiguous = np.sum(close, **kw) > 1
            E = np.where(ambiguous & (E > 0), INF, E)
        return E
    if op in ("var", "std"):
        m = np.mean(a, axis=axis, keepdims=True)
        Em = np.mean(Ea, axis=axis, keepdims=True)
        d = np.abs(a - m)
        var = np.mean(d * d, **kw)
        Evar = np.mean(2 * d * (Ea + Em) + (Ea + Em) ** 2, **kw) + own(
            K1, e, n * (np.mean(A * A, **kw) + np.abs(np.mean(a, **kw)) ** 2)
        )
        if op == "var":
            return Evar
        s = np.sqrt(var)
        first = np.where(s > 0, Evar / (2 * np.where(s > 0, s, 1)), INF)
        return np.minimum(first, np.sqrt(Evar)) + own(K1, e, s)
    raise AssertionError(op)


def _bound_arg(axis, a, Ea, out):
    if axis is None:
        rows, Erows = a.reshape(1, -1), Ea.reshape(1, -1)
    else:
        rows = np.moveaxis(a, axis, -1).reshape(-1, a.shape[axis])
        Erows = np.moveaxis(Ea, axis, -1).reshape(-1, a.shape[axis])
    sel = np.asarray(out).reshape(-1)
    unc = np.zeros(len(sel), dtype=bool)
    for r in range(len(sel)):
        x, E, s = rows[r], Erows[r], int(sel[r])
        if not E.any():
            continue
        if np.isinf(E).any():
            unc[r] = True
            continue
        nans = np.isnan(x)
        if nans.any():
            continue  # the first nan, exactly
        key = np.real(x)
        close = np.abs(key - key[s]) <= E + E[s]
        close[s] = False
        unc[r] = bool((close & (E + E[s] > 0)).any())
    return np.where(unc, INF, 0.0).reshape(np.shape(out))


def _bound_shape(node, out, e):
    op, p = node.op, node.p
    ks = node.kids
    Es = [np.broadcast_to(k.E, np.shape(k.value)) if k.value is not None else None for k in ks]
    if op in ("reshape", "transpose", "T", "expand_dims", "squeeze", "step2", "newaxis"):
        return np.asarray(numpy_eval(render(op, p, ["k0"]), {"k0": Es[0]}), dtype=np.float64)
    if op in ("concatenate", "stack"):
        E = numpy_eval(render(op, p, ["k0", "k1"]), {"k0": Es[0], "k1": Es[1]})
        return np.asarray(E, dtype=np.float64) + own(K1, e, np.abs(hp(out)))
    if op == "where":
        shape = np.shape(out)
        t, unc = truth(np.broadcast_to(hp(ks[0].value), shape), np.broadcast_to(ks[0].E, shape))
        E = np.where(t, np.broadcast_to(ks[1].E, shape), np.broadcast_to(ks[2].E, shape))
        return np.where(unc, INF, E + own(K1, e, np.abs(hp(out))))
    if op == "clip":
        shape = np.shape(out)
        E = np.broadcast_to(ks[0].E, shape)
        for k in ks[1:]:
            if k.value is not None:
                E = np.maximum(E, np.broadcast_to(k.E, shape))
        if np.asarray(out).dtype.kind == "c":
            E = np.where(E > 0, INF, E)
        return E + own(K1, e, np.abs(hp(out)))
    if op == "sort":
        a = hp(ks[0].value)
        E = Es[0]
        axis = p["axis"]
        if axis is None:
            E = E.ravel()
            axis = -1
        m = np.max(E, axis=axis, keepdims=True) if E.size else E
        if np.iscomplexobj(a):
            m = np.where(m > 0, INF, m)
        return np.broadcast_to(m, np.shape(out))
    raise AssertionError(op)


# --- Cases --------------------------------------------------------------------------


class Case:
    def __init__(self, index, args, src, root, exc):
        self.index, self.args, self.src, self.root, self.exc = index, args, src, root, exc

    def program(self):
        params = ", ".join(f"x{i}" for i in range(len(self.args)))
        return f"lambda {params}: {self.src}"

    def describe(self):
        lines = [f"case {self.index}: {self.program()}"]
        for i, a in enumerate(self.args):
            lines.append(f"  x{i} = np.array({a.tolist()!r}, dtype=np.{a.dtype})")
        return "\n".join(lines)


def make_case(index):
    rng = np.random.default_rng([SEED, index])
    for _ in range(20):
        g = Gen(rng)
        try:
            root = g.node(int(rng.integers(1, 4)))
        except Raised as r:
            return Case(index, g.args, r.node.src, r.node, r.exc)
        if root.op != "arg":
            return Case(index, g.args, root.src, root, None)
    raise AssertionError(f"case {index}: no expression")


def exc_kinds(exc):
    return tuple(
        k
        for k in (
            TypeError,
            ValueError,
            IndexError,
            OverflowError,
            ZeroDivisionError,
            ArithmeticError,
            KeyError,
        )
        if isinstance(exc, k)
    ) or (type(exc),)


_REFUSAL = re.compile(
    r"^\[(\w+)\] .*not supported|tinymlir (cannot|traces|supports)|"
    r"cannot trace"
)


def is_refusal(exc):
    """A clear refusal: a TracingError, or a TypeError or NotImplementedError whose message
    names the op it does not support ("[sort] complex operands are not supported")."""
    if isinstance(exc, TracingError):
        return True
    return isinstance(exc, (TypeError, NotImplementedError)) and bool(_REFUSAL.search(str(exc)))


def refused_category(exc):
    msg = str(exc)
    m = re.search(r"numpy\.[\w.]+", msg)
    what = m.group(0) if m else re.sub(r"\(.*", "", msg)[:90]
    return f"{type(exc).__name__}: {what}"


STATS = {"exact": 0, "bounded": 0, "uncertain": 0}


def compare(got, want, E):
    """None if `got` matches `want` under bound E, else what differs (assert_same's
    message): exact for bool and integers; floats and complex within
    2 E + 4 eps |want| + 4 tiny, elements of infinite E not compared."""
    got_a, want_a = np.asarray(got), np.asarray(want)
    dt = want_a.dtype
    check = None
    if got_a.dtype == dt and got_a.shape == want_a.shape:
        E = np.broadcast_to(E, want_a.shape)
        check = np.isfinite(E)
        STATS["uncertain"] += int((~check).sum())
        STATS["exact"] += int((check & (E == 0)).sum())
        STATS["bounded"] += int((check & (E > 0)).sum())
        if dt.kind == "c":
            # C99's complex special values (Annex G) are loosely specified: a
            # non-finite complex result need only be non-finite.
            check = check & ~(~np.isfinite(want_a) & ~np.isfinite(got_a))
    tolerance = {}
    if dt.kind in "fc":
        tolerance = dict(bound=2 * np.asarray(E, np.float64) + 4 * tiny(dt), rtol=4 * eps(dt))
    try:
        assert_same(
            want_a, got_a, path="values", types=False, signed_zeros=False, where=check, **tolerance
        )
    except AssertionError as exc:
        return str(exc)
    return None


def run_case(case):
    """('ok' | 'refused' | 'mismatch', detail)."""
    names = {f"x{i}": a for i, a in enumerate(case.args)}
    if case.exc is None:
        want = numpy_eval(case.src, names)
        root = np.asarray(case.root.value)
        assert np.asarray(want).dtype == root.dtype and np.array_equal(
            np.asarray(want), root, equal_nan=True
        ), f"generator: {case.src} re-evaluates otherwise"
    fn = numpy_eval(case.program(), {})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                got = jit(fn)(*case.args)
    except Exception as exc:  # noqa: BLE001 -- judged below
        if case.exc is not None:
            if isinstance(exc, exc_kinds(case.exc)):
                return "ok", "raised " + type(exc).__name__
            if is_refusal(exc):  # an op it refuses, met before NumPy's error
                return "refused", (
                    f"{refused_category(exc)} (where NumPy raised {type(case.exc).__name__})"
                )
            return "mismatch", (
                f"NumPy raised {type(case.exc).__name__}({case.exc}); tinymlir "
                f"raised {type(exc).__name__}({exc})"
            )
        if is_refusal(exc):
            return "refused", refused_category(exc)
        return "mismatch", f"NumPy succeeded; tinymlir raised {type(exc).__name__}({exc})"
    if case.exc is not None:
        return "mismatch", (
            f"NumPy raised {type(case.exc).__name__}({case.exc}); tinymlir returned {got!r}"
        )
    diff = compare(got, want, case.root.E)
    return ("ok", "") if diff is None else ("mismatch", diff)


def run(first, count, verbose=False):
    counts = {"ok": 0, "refused": 0, "mismatch": 0}
    raised = 0
    refusals, mismatches = {}, []
    for i in range(first, first + count):
        case = make_case(i)
        raised += case.exc is not None
        outcome, detail = run_case(case)
        counts[outcome] += 1
        if outcome == "refused":
            refusals[detail] = refusals.get(detail, 0) + 1
        elif outcome == "mismatch":
            mismatches.append(f"{case.describe()}\n  -> {detail}")
        if verbose:
            print(f"[{outcome}] {case.program()}  {detail}")
            sys.stdout.flush()
    return counts, raised, refusals, mismatches


def report(counts, raised, refusals, mismatches, seconds):
    print(
        f"\ndifferential: {counts['ok']} ok / {counts['refused']} refused / "
        f"{counts['mismatch']} mismatched ({raised} cases where NumPy raises), {seconds:.1f} s"
    )
    print(
        f"  result elements compared: {STATS['exact']} exactly, {STATS['bounded']} within an "
        f"error bound, {STATS['uncertain']} uncertain (not compared)"
    )
    for what, n in sorted(refusals.items(), key=lambda kv: -kv[1]):
        print(f"  refused {n:3d}x  {what}")
    for m in mismatches:
        print(m)


def test_differential():
    start = time.time()
    counts, raised, refusals, mismatches = run(0, N)
    report(counts, raised, refusals, mismatches, time.time() - start)
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches)


if __name__ == "__main__":
    first = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    count = int(sys.argv[2]) if len(sys.argv) > 2 else N
    t0 = time.time()
    report(*run(first, count, verbose=True), time.time() - t0)
