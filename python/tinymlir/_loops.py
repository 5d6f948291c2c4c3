"""Python loops become loops: a ``for`` over ``range`` in a jitted function's source
is traced once, as one loop of the kernel (docs/architecture.md, "Loops").

Two halves:

- ``convert(fn)``: the function's AST, rewritten once per code object. Each ``for t in
  range(...)`` whose body can be captured becomes a nested function of the target and the
  carried names, and a call of ``for_range`` that returns the carried names' values after
  the loop. Every node keeps its source line, so tracebacks name the user's lines.
- ``for_range``: at trace time, the loop is captured (``_tinymlir.LoopBuilder``: the body
  traced once on a traced index and on parameters for the carried names and for the arrays
  the body writes in place) or, where it cannot be, run as Python runs it (unrolled, as
  without the converter) when its bounds are Python ints, else a TracingError naming the
  source line. The ``loop_report`` option prints each loop's fate.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dis
import functools
import inspect
import operator
import sys
import textwrap
import types

import numpy as np

from . import _tinymlir as _core
from ._trace import Traced, TracingError, current_context, to_tensor

_PREFIX = "__tm_"
_RUNTIME = _PREFIX + "loops"

#: Calls whose only purpose is a Python side effect: a loop holding one stays Python's.
_SIDE_EFFECTS = frozenset(
    [
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "add",
        "discard",
        "setdefault",
        "write",
        "writelines",
        "popitem",
    ]
)
#: Functions and methods that write into their first argument (or object).
_WRITING_CALLS = frozenset(
    [
        "copyto",
        "put",
        "put_along_axis",
        "putmask",
        "place",
        "fill_diagonal",
        "at",
        "fill",
        "sort",
        "partition",
        "itemset",
        "setfield",
        "resize",
    ]
)
#: Loops of at most this many iterations, with Python-int bounds, are unrolled: the
#: empty and one-trip loops, where a loop saves nothing.
UNROLL_MAX = 1


# --- The converter -----------------------------------------------------------------


class Conversion:
    """A function's rewritten code: ``code`` (its free variables are the original's
    plus ``__tm_loops``), and ``loops``: (line, captured or the reason not)."""

    def __init__(self, code, loops):
        self.code, self.loops = code, loops


def _root(node):
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _walk(node):
    """ast.walk, but not into the bodies of the loop bodies made here (nested
    functions: their names are their own; what they change in the enclosing scope is
    the assignment of their for_range call's result)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, ast.FunctionDef) and n.name.startswith(_PREFIX):
            continue
        stack.extend(ast.iter_child_nodes(n))


def _generated_free_loads(fn_def):
    """The names a loop body made here reads from its enclosing scope."""
    params = {a.arg for a in fn_def.args.args}
    local = params | _stored_names(fn_def.body)
    return _loaded_names(fn_def.body) - local


def _stored_names(nodes):
    """Names bound by these statements in their own scope."""
    names = set()
    for node in nodes:
        for n in _walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return {n for n in names if not n.startswith(_PREFIX)}


def written_in_place(nodes):
    """Names whose arrays these statements write into (item and slice assignment,
    augmented assignment of a subscript, out=, writing functions and methods)."""
    names = set()
    for node in nodes:
        for n in ast.walk(node):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                stack = list(targets)
                while stack:
                    t = stack.pop()
                    if isinstance(t, (ast.Tuple, ast.List)):
                        stack.extend(t.elts)
                    elif isinstance(t, (ast.Subscript, ast.Attribute)):
                        names.add(_root(t))
                    elif isinstance(t, ast.Name) and isinstance(n, ast.AugAssign):
                        names.add(t.id)  # x += v writes x's array (a Python number rebinds)
            elif isinstance(n, ast.Call):
                for kw in n.keywords:
                    if kw.arg == "out":
                        parts = kw.value.elts if isinstance(kw.value, ast.Tuple) else [kw.value]
                        names.update(_root(v) for v in parts)
                f = n.func
                if isinstance(f, ast.Attribute) and f.attr in _WRITING_CALLS:
                    if n.args and (_root(f.value) in ("np", "numpy") or f.attr == "at"):
                        names.add(_root(n.args[0]))
                    else:
                        names.add(_root(f.value))
    names.discard(None)
    return {n for n in names if not n.startswith(_PREFIX)}


def _loaded_names(nodes):
    """Names these statements read from their own scope (a loop body made here: what
    it reads from the enclosing one)."""
    names = set()
    for node in nodes:
        if node is None:
            continue
        for n in _walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                names.add(n.id)
            elif isinstance(n, ast.FunctionDef) and n.name.startswith(_PREFIX):
                names |= _generated_free_loads(n)
    return names


def _read_before_written(body):
    """Names the body may read before it binds them (so their value comes from the
    iteration before): a load not preceded, at the body's top level, by a store."""
    stored, early = set(), set()
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            loads = _loaded_names([stmt.value])  # (an AnnAssign's may be None)
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
                loads.add(stmt.target.id)  # x += v reads x
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            loads |= {n for t in targets for n in _loaded_names([t])}  # subscripts' bases
            early |= loads - stored
            stored |= _stored_names(targets)
        else:
            early |= _loaded_names([stmt]) - stored
            if not isinstance(stmt, (ast.If, ast.For, ast.While)):
                stored |= _stored_names([stmt])
    return early


def _refusal(loop, range_is_builtin):
    """Why this `for` cannot be captured, or None."""
    if loop.orelse:
        return "a for ... else"
    if not isinstance(loop.target, ast.Name):
        return "a loop target that is not a name"
    it = loop.iter
    if not (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and 1 <= len(it.args) <= 3
        and not it.keywords
        and not any(isinstance(a, ast.Starred) for a in it.args)
    ):
        return "iteration over something other than range(...)"
    if not range_is_builtin:
        return "range is not Python's range here"
    for stmt in loop.body:
        for n in _walk(stmt):  # loops inside, made bodies here, were checked already
            if isinstance(n, (ast.Break, ast.Continue)):
                return f"a {type(n).__name__.lower()} (line {n.lineno})"
            if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)):
                return f"a {type(n).__name__.lower()} inside the loop (line {n.lineno})"
            if isinstance(n, (ast.Global, ast.Nonlocal, ast.Try, ast.With, ast.Delete)):
                return f"a {type(n).__name__.lower()} statement (line {n.lineno})"
            if isinstance(n, (ast.ClassDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)):
                return f"a {type(n).__name__} in the body (line {n.lineno})"
            if isinstance(n, ast.FunctionDef) and not n.name.startswith(_PREFIX):
                return f"a nested function (line {n.lineno})"
            if isinstance(n, ast.Call):
                f = n.func
                if isinstance(f, ast.Name) and f.id in ("print", "input", "open", "exec", "eval"):
                    return f"a call of {f.id} (line {n.lineno}): a Python side effect"
                if isinstance(f, ast.Attribute) and f.attr in _SIDE_EFFECTS:
                    return f"a call of .{f.attr} (line {n.lineno}): a Python side effect"
    return None


_COUNT_TESTS = {ast.Lt: (1, 0), ast.LtE: (1, 1), ast.Gt: (-1, 0), ast.GtE: (-1, -1)}
_FLIPPED = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


def _step_of(stmt, k):
    """The constant c of `k += c`, `k -= c`, `k = k + c` or `k = k - c`, else None."""
    if isinstance(stmt, ast.AugAssign):
        target, op, value = stmt.target, stmt.op, stmt.value
    elif (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.value, ast.BinOp)
        and isinstance(stmt.value.left, ast.Name)
        and stmt.value.left.id == k
    ):
        target, op, value = stmt.targets[0], stmt.value.op, stmt.value.right
    else:
        return None
    if not (isinstance(target, ast.Name) and target.id == k and isinstance(op, (ast.Add, ast.Sub))):
        return None
    if not (isinstance(value, ast.Constant) and type(value.value) is int and value.value != 0):
        return None
    return value.value if isinstance(op, ast.Add) else -value.value


def _invariant(expr, body):
    """Whether `expr` (a while's bound) has one value for the whole loop: names,
    constants, attributes, constant subscripts, arithmetic and len() of names the body
    does not bind; of an array it writes into, only its shape, size, ndim or len()."""
    stored, written = _stored_names(body), written_in_place(body)
    sized = set()  # ids of names read for their shape only
    for n in ast.walk(expr):
        if isinstance(n, ast.Attribute) and n.attr in ("shape", "size", "ndim"):
            sized.add(id(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len":
            sized.update(id(a) for a in n.args)
    for n in ast.walk(expr):
        if isinstance(n, ast.Name):
            if n.id in stored or (n.id in written and id(n) not in sized):
                return False
        elif isinstance(n, ast.Call):
            if not (isinstance(n.func, ast.Name) and n.func.id == "len" and len(n.args) == 1):
                return False
        elif isinstance(n, ast.Subscript):
            if not isinstance(n.slice, ast.Constant):
                return False
        elif not isinstance(
            n,
            (
                ast.Constant,
                ast.Attribute,
                ast.BinOp,
                ast.UnaryOp,
                ast.Load,
                ast.operator,
                ast.unaryop,
            ),
        ):
            return False
    return True


def _counted(loop):
    """A `while k < n:` loop that counts (k stepped by a constant once per iteration, at
    the body's top level; n the same throughout) as (k, n, step, inclusive), or the
    reason it is not one."""
    test = loop.test
    if loop.orelse:
        return "a while ... else"
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COUNT_TESTS
    ):
        return "a while whose test is not one comparison of a counter with a bound"
    op, left, right = type(test.ops[0]), test.left, test.comparators[0]
    if not isinstance(left, ast.Name) and isinstance(right, ast.Name):
        op, left, right = _FLIPPED[op], right, left
    if not isinstance(left, ast.Name):
        return "a while whose test is not one comparison of a counter with a bound"
    k = left.id
    steps = [(i, _step_of(stmt, k)) for i, stmt in enumerate(loop.body)]
    steps = [(i, c) for i, c in steps if c is not None]
    stores = sum(
        1
        for stmt in loop.body
        for n in _walk(stmt)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == k
    )
    if len(steps) != 1 or stores != 1:
        return f"the counter {k} is not stepped by a constant exactly once per iteration"
    sign, extra = _COUNT_TESTS[op]
    step = steps[0][1]
    if (step > 0) != (sign > 0):
        return f"the counter {k} steps away from its bound"
    if not _invariant(right, loop.body):
        return "the while's bound may change in the loop"
    return k, right, step, extra


class _Rewriter(ast.NodeTransformer):
    def __init__(self, function, range_is_builtin):
        self.function = function  # the FunctionDef being converted
        self.range_is_builtin = range_is_builtin
        self.count = 0
        self.loops = []
        self.skip = None  # a while being made a for: its own statements are not outside

    def visit_FunctionDef(self, node):
        if node is not self.function:
            return node  # a nested function of the user's: its loops stay Python's
        self.generic_visit(node)
        return node

    def visit_Lambda(self, node):
        return node

    def visit_While(self, loop):
        """`while k < n: ...; k += c; ...` counts: it becomes `for t in range(k, n, c):
        k = t; ...` (k after the loop is the last t + c, or k itself after no
        iteration, as the while leaves it), guarded at run time by the counter and
        bound being integers (else the while runs as written)."""
        self.generic_visit(loop)  # inner loops first
        plan = _counted(loop)
        if isinstance(plan, str):
            return self._python_while(loop, plan)
        k, bound, step, extra = plan
        t = f"{_PREFIX}count_{loop.lineno}"
        stop = copy.deepcopy(bound)
        if extra:
            stop = ast.BinOp(left=stop, op=ast.Add(), right=ast.Constant(extra))
        rng = ast.Call(
            func=ast.Name(id="range", ctx=ast.Load()),
            args=[ast.Name(id=k, ctx=ast.Load()), stop, ast.Constant(step)],
            keywords=[],
        )
        first = ast.Assign(
            targets=[ast.Name(id=k, ctx=ast.Store())], value=ast.Name(id=t, ctx=ast.Load())
        )
        counted = ast.For(
            target=ast.Name(id=t, ctx=ast.Store()), iter=rng, body=[first, *loop.body], orelse=[]
        )
        for n in (counted, first, rng):
            ast.copy_location(n, loop)
        ast.fix_missing_locations(counted)
        self.skip = loop
        try:
            made = self.visit_For(counted, visited=True)
        finally:
            self.skip = None
        if made is counted:  # not captured: the while stays Python's
            return self._python_while(loop, self.loops.pop()[1])
        # k after the loop: a Python int where the while's would be one.
        start = f"{_PREFIX}start_{loop.lineno}"
        made = [
            ast.Assign(
                targets=[ast.Name(id=start, ctx=ast.Store())], value=ast.Name(id=k, ctx=ast.Load())
            ),
            *made,
            ast.Assign(
                targets=[ast.Name(id=k, ctx=ast.Store())],
                value=ast.Call(
                    func=ast.Attribute(
                        value=ast.Name(id=_RUNTIME, ctx=ast.Load()),
                        attr="count_end",
                        ctx=ast.Load(),
                    ),
                    args=[
                        ast.Name(id=start, ctx=ast.Load()),
                        copy.deepcopy(stop),
                        ast.Constant(step),
                        ast.Name(id=k, ctx=ast.Load()),
                    ],
                    keywords=[],
                ),
            ),
        ]
        guard = ast.If(
            test=ast.Call(
                func=ast.Attribute(
                    value=ast.Name(id=_RUNTIME, ctx=ast.Load()), attr="counts", ctx=ast.Load()
                ),
                args=[ast.Name(id=k, ctx=ast.Load()), copy.deepcopy(bound)],
                keywords=[],
            ),
            body=made,
            orelse=[loop],
        )
        ast.copy_location(guard, loop)
        ast.fix_missing_locations(guard)
        return guard

    def _python_while(self, loop, reason):
        """The while as written, after a statement that reports why (loop_report)."""
        self.loops.append((loop.lineno, reason))
        self.count += 1
        report = ast.Expr(
            value=ast.Call(
                func=ast.Attribute(
                    value=ast.Name(id=_RUNTIME, ctx=ast.Load()), attr="report", ctx=ast.Load()
                ),
                args=[ast.Constant(loop.lineno), ast.Constant(f"a Python while: {reason}")],
                keywords=[],
            )
        )
        ast.copy_location(report, loop)
        ast.fix_missing_locations(report)
        return [report, loop]

    def visit_For(self, loop, visited=False):
        if not visited:
            self.generic_visit(loop)  # inner loops first
        reason = _refusal(loop, self.range_is_builtin)
        if reason is not None:
            self.loops.append((loop.lineno, reason))
            it = loop.iter
            if (
                isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name)
                and it.func.id == "range"
                and self.range_is_builtin
            ):
                # Python's loop; its range() says why where a bound is traced.
                self.count += 1
                loop.iter = ast.copy_location(
                    ast.Call(
                        func=ast.Attribute(
                            value=ast.Name(id=_RUNTIME, ctx=ast.Load()),
                            attr="python_range",
                            ctx=ast.Load(),
                        ),
                        args=[ast.Constant(loop.lineno), ast.Constant(reason), *it.args],
                        keywords=it.keywords,
                    ),
                    it,
                )
                ast.fix_missing_locations(loop.iter)
            return loop
        self.count += 1
        target = loop.target.id
        body_name = f"{_PREFIX}body_{loop.lineno}_{self.count}"
        outside = self._loads_outside(loop)
        stored = _stored_names(loop.body) - {target}
        early = _read_before_written(loop.body)
        carried = sorted(n for n in stored if n in outside or n in early)
        written = sorted(written_in_place(loop.body) - set(carried) - {target})
        # Carried names the body only updates with augmented assignments: an
        # array's (v += a) is a write into its buffer, a number's a new value.
        plain = set()
        for stmt in loop.body:
            augmented = {id(n.target) for n in _walk(stmt) if isinstance(n, ast.AugAssign)}
            plain |= {
                n.id
                for n in _walk(stmt)
                if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Store)
                and id(n) not in augmented
            }
        in_place = sorted(set(carried) - plain)
        if target in outside:
            self.loops.append((loop.lineno, f"the loop variable {target} is read after the loop"))
            return loop
        self.loops.append((loop.lineno, None))

        def name(id_, ctx=None):
            return ast.Name(id=id_, ctx=ctx or ast.Load())

        def strings(items):
            return ast.Tuple(elts=[ast.Constant(s) for s in items], ctx=ast.Load())

        ret = ast.Return(value=ast.Tuple(elts=[name(n) for n in carried], ctx=ast.Load()))
        body = ast.FunctionDef(
            name=body_name,
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(arg=a) for a in [target, *carried]],
                kwonlyargs=[],
                kw_defaults=[],
                defaults=[],
            ),
            body=[*loop.body, ret],
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        runtime = name(_RUNTIME)
        scope = ast.Call(func=name("locals"), args=[], keywords=[])
        call = ast.Call(
            func=ast.Attribute(value=runtime, attr="for_range", ctx=ast.Load()),
            args=[
                name(body_name),
                ast.Tuple(elts=list(loop.iter.args), ctx=ast.Load()),
                scope,
                strings(carried),
                strings(written),
                ast.Constant(loop.lineno),
                strings(in_place),
            ],
            keywords=[],
        )
        if carried:
            assign = ast.Assign(
                targets=[ast.Tuple(elts=[name(n, ast.Store()) for n in carried], ctx=ast.Store())],
                value=call,
            )
        else:
            assign = ast.Expr(value=call)
        for node in (body, ret, assign):
            ast.copy_location(node, loop)
        ast.fix_missing_locations(body)
        ast.fix_missing_locations(assign)
        return [body, assign]

    def _loads_outside(self, loop):
        """Names the function reads outside this loop (the loop variable's reads in
        other loops over it are theirs)."""
        names = set()
        stack = list(self.function.body)
        while stack:
            n = stack.pop()
            if n is loop or n is self.skip:
                continue
            if isinstance(n, ast.For) and isinstance(n.target, ast.Name):
                if isinstance(loop.target, ast.Name) and n.target.id == loop.target.id:
                    names |= _loaded_names([n.iter]) | (_loaded_names(n.body) - {n.target.id})
                    continue
            if isinstance(n, ast.FunctionDef) and n.name.startswith(_PREFIX):
                names |= _generated_free_loads(n)
                continue
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                names.add(n.id)
            stack.extend(ast.iter_child_nodes(n))
        return names


@functools.lru_cache(maxsize=256)
def _convert_code(code, range_is_builtin):
    try:
        lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    ast.increment_lineno(tree, first - 1)
    function = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == code.co_name),
        None,
    )
    if function is None:
        return None
    if not any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(function)):
        return None
    function.decorator_list = []
    # The source must be this code's (a file edited since the function was made is
    # not): compiled as it is, it names the same variables, attributes and constants
    # (not always the same bytecode: pytest's rewritten modules differ in it).
    original = _compiled_function(copy.deepcopy(function), code)
    if original is None or _signature(original) != _signature(code):
        return None
    rewriter = _Rewriter(function, range_is_builtin)
    rewriter.visit(function)
    if rewriter.count == 0:
        return Conversion(None, rewriter.loops)
    new = _compiled_function(function, code)
    return None if new is None else Conversion(new, rewriter.loops)


_SAME_OPS = {
    "LOAD_METHOD": "LOAD_ATTR",
    "PRECALL": None,
    "CACHE": None,
    "NOP": None,
    "EXTENDED_ARG": None,
    "RESUME": None,
}


def _signature(code):
    """What the code does, by instruction (jump offsets and the interpreter's choice
    of LOAD_METHOD aside), with its names and constants."""
    ops = []
    for i in dis.get_instructions(code):
        op = _SAME_OPS.get(i.opname, i.opname)
        if op is None:
            continue
        arg = None if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs else i.argrepr
        if arg is not None and arg.startswith("NULL + "):  # the same choice as LOAD_METHOD's
            arg = arg[len("NULL + ") :]
        ops.append((op, arg))
    consts = tuple(c for c in code.co_consts if not isinstance(c, types.CodeType))
    return tuple(ops), code.co_names, code.co_varnames, code.co_freevars, consts


def _compiled_function(function, code):
    """The code object of `function` (a FunctionDef) compiled inside a factory whose
    parameters are `code`'s free variables (and the runtime), so that it reads the
    same cells as `code` does."""
    freevars = list(code.co_freevars)
    factory = ast.FunctionDef(
        name=_PREFIX + "factory",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=a) for a in [*freevars, _RUNTIME]],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        body=[
            # Each free variable is read once, so that it stays a cell of the factory
            # even where the function only writes it.
            *[ast.Expr(value=ast.Name(id=v, ctx=ast.Load())) for v in [*freevars, _RUNTIME]],
            function,
            ast.Return(value=ast.Name(id=function.name, ctx=ast.Load())),
        ],
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        compiled = compile(module, code.co_filename, "exec")
    except SyntaxError:
        return None
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    return next(
        (
            c
            for c in factory_code.co_consts
            if isinstance(c, types.CodeType) and c.co_name == code.co_name
        ),
        None,
    )


def convert(fn):
    """The Conversion of plain function `fn`, or None where it has no source, no
    loop or none that can be captured (its loops are then Python's)."""
    if not isinstance(fn, types.FunctionType) or fn.__code__.co_name == "<lambda>":
        return None
    range_is_builtin = fn.__globals__.get("range", builtins.range) is builtins.range
    conversion = _convert_code(fn.__code__, range_is_builtin)
    return conversion if conversion is not None and conversion.code is not None else None


def converted_function(fn, conversion, new_globals, closure):
    """`fn` with the converted code: the same globals (`new_globals`) and the cells of
    `closure` (fn's, or replacements) matched by name, plus the runtime's."""
    cells = dict(zip(fn.__code__.co_freevars, closure or ()))
    cells[_RUNTIME] = types.CellType(sys.modules[__name__])
    new = types.FunctionType(
        conversion.code,
        new_globals,
        fn.__name__,
        fn.__defaults__,
        tuple(cells[v] for v in conversion.code.co_freevars),
    )
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    return new


# --- The runtime ---------------------------------------------------------------------


class _Undefined:
    """A carried name not bound before its loop: reading it is Python's error."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def _fail(self, *args, **kwargs):
        raise UnboundLocalError(
            f"cannot access local variable '{self.name}' where it is not associated with a value"
        )

    __getattr__ = __bool__ = __index__ = __int__ = __float__ = __array__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __pow__ = _fail
    __neg__ = __getitem__ = __setitem__ = __lt__ = __le__ = __gt__ = __ge__ = __len__ = _fail
    __array_ufunc__ = __array_function__ = _fail


def report(line, what):
    """Says, under the loop_report option, what became of the loop at `line`."""
    _report(line, what)


def _report(line, what):
    context = current_context()
    options = getattr(context, "options", None)
    if options is not None and options.loop_report:
        print(f"tinymlir: loop at line {line}: {what}", file=sys.stderr)


class _Fallback(Exception):
    pass


def _as_bound(v, line):
    if isinstance(v, Traced):
        if v.ndim or v.dtype.kind not in "iub":
            raise TypeError(
                f"line {line}: range() takes integers; got an array of {v.ndim} dimensions "
                f"and dtype {v.dtype}"
            )
        return v
    return operator.index(v)


class _NotInPlace(Exception):
    pass


def _is_array(v):
    """A traced array (not a NumPy scalar, which += rebinds)."""
    return isinstance(v, Traced) and (v.ndim != 0 or v.rank0() != "scalar")


def for_range(body, bounds, scope, carried, written, line, in_place=()):
    """`for t in range(*bounds): carried = body(t, *carried)`, captured as one loop of
    the kernel where tracing can, else run by Python (see the module's docstring)."""
    bounds = tuple(_as_bound(b, line) for b in bounds)
    start, stop, step = (
        (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1) if len(bounds) == 2 else bounds
    )
    static = all(isinstance(b, int) for b in (start, stop, step))
    if static and step == 0:
        raise ValueError("range() arg 3 must not be zero")
    inits = [scope.get(n, _Undefined(n)) for n in carried]
    context = current_context()
    reason = None
    if context is None:
        reason = "not traced"
    elif static and len(range(start, stop, step)) <= UNROLL_MAX:
        reason = f"{len(range(start, stop, step))} iterations: unrolled"
    elif not hasattr(_core, "LoopBuilder"):
        reason = "this build has no loop regions"
    if reason is None:
        # Arrays the body only updates in place (v += a): their buffers are carried,
        # and the names keep their objects.
        fixed = {
            k: v for k, (n, v) in enumerate(zip(carried, inits)) if n in in_place and _is_array(v)
        }

        def kept(t, *values):
            it = iter(values)
            out = body(t, *(fixed[k] if k in fixed else next(it) for k in range(len(carried))))
            for k in fixed:
                if out[k] is not fixed[k]:
                    raise _NotInPlace(f"{carried[k]} is rebound, not updated in place")
            return tuple(o for k, o in enumerate(out) if k not in fixed)

        try:
            values = iter(
                _capture(
                    kept if fixed else body,
                    (start, stop, step),
                    [v for k, v in enumerate(inits) if k not in fixed],
                    [n for k, n in enumerate(carried) if k not in fixed],
                    [*written, *(carried[k] for k in fixed)],
                    scope,
                    line,
                )
            )
            _report(line, "captured")
            return tuple(fixed[k] if k in fixed else next(values) for k in range(len(carried)))
        except _Fallback as e:
            reason = str(e)
    if not static:
        raise TracingError(
            f"tinymlir cannot capture the loop at line {line} ({reason}), and its bounds "
            "are traced values, so it cannot be unrolled either"
        )
    _report(line, f"unrolled: {reason}")
    values = inits
    for t in range(start, stop, step):
        values = body(t, *values)
    return values


def counts(k, n):
    """Whether a `while k < n` converted to a for over range(k, n, step) counts as the
    while does: k and n integers (Python's or NumPy's, or traced integer scalars)."""

    def integer(v):
        if isinstance(v, Traced):
            return v.ndim == 0 and v.dtype.kind in "iu"
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))

    return integer(k) and integer(n)


def count_end(start, stop, step, k):
    """The counter after a converted while: with Python-int bounds the Python int the
    while leaves (as NumPy's program has it), else the loop's carried value."""
    if all(type(v) is int for v in (start, stop)):
        return start + len(range(start, stop, step)) * step
    return k


def python_range(line, reason, *bounds):
    """range(*bounds) for a loop that stays Python's: its reason is reported, and a
    traced bound (which Python cannot iterate over) is an error naming the line."""
    if any(isinstance(b, Traced) for b in bounds):
        raise TracingError(
            f"tinymlir cannot capture the loop at line {line} ({reason}), and its bounds "
            "are traced values, so it cannot be unrolled either"
        )
    _report(line, f"unrolled: {reason}")
    return range(*bounds)


def _dtype_of_number(v):
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, complex):
        return "complex128"
    return np.asarray(v).dtype.name


def _capture(body, bounds, inits, carried, written, scope, line):
    """The loop as one region (raises _Fallback where it cannot be)."""
    context = current_context()
    # The buffers the body writes in place: those of the written names' arrays (views
    # share their base's buffer); an array a written name does not reach is found by
    # its version changing, and the body is traced again with it.
    refs = {}
    for n in written:
        v = scope.get(n)
        if isinstance(v, Traced):
            refs.setdefault(v._ref.buffer_id, v._ref)
    every = {t._ref.buffer_id: t._ref for t in context.made if isinstance(t._ref, _core.Ref)}
    # Carried names: a traced value (its dtype), a Python number (weak: its dtype is
    # decided by the body, traced once with the number itself), or neither.
    kinds = []
    for n, v in zip(carried, inits):
        if isinstance(v, Traced):
            kinds.append(v.dtype.name)
        elif isinstance(v, (int, float, complex, np.generic)):
            kinds.append(None)  # weak until the first trace
        elif isinstance(v, _Undefined):
            kinds.append(None)
        else:
            raise _Fallback(f"{n} is a {type(v).__name__}, not an array or a number")
    for _attempt in range(4):
        versions = {b: r.version for b, r in every.items()}
        before = {b: r.base() for b, r in every.items()}
        saved = {b: r.base() for b, r in refs.items()}
        outcome = _trace_body(body, bounds, inits, carried, kinds, refs, saved, line)
        changed = [b for b, r in every.items() if r.version != versions[b] and b not in refs]
        yields, buffers, loop = outcome
        if changed:
            if loop is not None:
                loop.abandon()
            _restore(refs, saved)
            for b in changed:  # written by the body through a name it does not write
                every[b].rebase(before[b], False)
                refs[b] = every[b]
            continue
        retrace = False
        for k, (n, y) in enumerate(zip(carried, yields)):
            if isinstance(y, _Undefined):
                raise _Fallback(f"{n} is read after the loop but not bound in it")
            dtype = y.dtype.name if isinstance(y, Traced) else _dtype_of_number(y)
            if kinds[k] is None:
                kinds[k], retrace = dtype, True
            elif dtype != kinds[k]:
                joined = np.result_type(np.dtype(kinds[k]), np.dtype(dtype)).name
                if joined != kinds[k]:
                    kinds[k], retrace = joined, True
        if retrace or loop is None:
            if loop is not None:
                loop.abandon()
            _restore(refs, saved)
            continue
        results = loop.finish([_yield_tensor(y, kinds[k]) for k, y in enumerate(yields)] + buffers)
        for k, r in enumerate(refs.values()):
            r.rebase(results[len(carried) + k], True)
        return tuple(Traced(t) for t in results[: len(carried)])
    raise _Fallback("the carried values' types did not settle in three traces")


def _restore(refs, saved):
    for b, r in refs.items():
        r.rebase(saved[b], False)


def _yield_tensor(y, dtype):
    t = to_tensor(y, "a carried value") if not isinstance(y, Traced) else y._t
    return t if t.dtype == dtype else _core.cast(t, dtype)


def _trace_body(body, bounds, inits, carried, kinds, refs, saved, line):
    """One trace of the body. With a weak number among the carried names, a typing
    trace (no region: (yields, None)); else (yields, the LoopBuilder)."""
    typing = any(k is None for k in kinds)
    context = current_context()
    reads = len(context.dynamic_reads)
    try:
        return _trace_body_once(body, bounds, inits, carried, kinds, refs, saved, typing, reads)
    finally:
        # The body's traced-index reads were checked (or the trace is dropped).
        del context.dynamic_reads[reads:]


def _trace_body_once(body, bounds, inits, carried, kinds, refs, saved, typing, reads):
    context = current_context()
    tensors = []
    for v, k in zip(inits, kinds):
        if k is None:
            tensors.append(None)
        elif isinstance(v, _Undefined):
            tensors.append(_core.cast(_core.weak_integer(0), k))
        else:
            t = to_tensor(v, "a carried value")
            tensors.append(t if t.dtype == k else _core.cast(t, k))
    if typing:
        # The weak numbers as themselves, the index as a traced int64, no region.
        index = Traced(_core.cast(to_tensor(bounds[0], "range's start"), "int64"))
        args = [v if k is None else Traced(t) for v, k, t in zip(inits, kinds, tensors)]
        try:
            yields = body(index, *args)
        except Exception as e:  # noqa: BLE001 (any error: the loop stays Python's)
            _restore(refs, saved)
            raise _Fallback(f"{type(e).__name__}: {e}") from None
        return list(yields), [], None
    start, stop, step = (to_tensor(b, "range's bound") for b in bounds)
    loop = _core.LoopBuilder(start, stop, step, tensors + [saved[b] for b in refs])
    params = list(loop.params)
    for k, b in enumerate(refs):
        refs[b].rebase(params[len(carried) + k], False)
    try:
        yields = body(Traced(loop.index), *(Traced(p) for p in params[: len(carried)]))
        context.check_copies(reads)  # (unrolled, the index is a number: views)
    except Exception as e:  # noqa: BLE001
        loop.abandon()
        _restore(refs, saved)
        raise _Fallback(f"{type(e).__name__}: {e}") from None
    return list(yields), [refs[b].base() for b in refs], loop
