"""Python loops become loops (docs/architecture.md, "Loops"): each program runs under
NumPy and under tinymlir.jit on copies of its arguments; results, dtypes and every
argument afterwards are compared (conftest.same), and the loop_report option says
whether each loop was captured as one loop of the kernel or unrolled, and why."""

import re

import numpy as np
import pytest
from conftest import same

import tinymlir
from tinymlir import jit

rng = np.random.default_rng(11)


def reports(capfd, fn, *args, **options):
    """The loop report lines of compiling fn for args (and its result)."""
    capfd.readouterr()
    result = jit(fn, loop_report=True, **options)(*args)
    err = capfd.readouterr().err
    return re.findall(r"tinymlir: loop at line (\d+): (.*)", err), result


def captured_all(found):
    assert found, "no loop was reported"
    assert all(what == "captured" for _, what in found), found


# --- Programs ------------------------------------------------------------------------


def running_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def weak_start(x):
    s = 0  # a Python int: NumPy's sum takes x's float32
    for i in range(len(x)):
        s = s + x[i] * 2
    return s


def row_sweep(A):
    n = A.shape[0]
    for i in range(1, n - 1):
        A[i, 1:-1] = (A[i - 1, 1:-1] + A[i + 1, 1:-1]) * 0.5
    return A.sum()


def jacobi_1d(A, B, steps):
    for _ in range(steps):
        B[1:-1] = (A[:-2] + A[1:-1] + A[2:]) / 3.0
        A[1:-1] = (B[:-2] + B[1:-1] + B[2:]) / 3.0


def seidel_2d(A, steps):
    n = A.shape[0]
    for _ in range(steps):
        for i in range(1, n - 1):
            A[i, 1:-1] += A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:]
            A[i, 1:-1] += A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:]
            for j in range(1, n - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def elementwise_nest(A, B, C):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            C[i, j] = A[i, j] * B[j, i] + C[i, j]
    return C


def backwards(x):
    y = np.zeros_like(x)
    acc = x[0] * 0
    for i in range(x.shape[0] - 1, -1, -2):
        acc = acc * 0.5 + x[i]
        y[i] = acc
    return y, acc


def recursive_filter(x, a):
    y = np.empty_like(x)
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = a * y[t - 1] + (1 - a) * x[t]
    return y


def zero_trip(x):
    s = x[0] * 0.0
    for i in range(3, 3):
        s = s + x[i]
    return s


def while_sum(x):
    k = 0
    s = 0.0
    while k < x.shape[0]:
        s = s + x[k]
        k += 1
    return s, k


def while_down(x):
    y = np.zeros_like(x)
    i = len(x) - 1
    while i >= 0:  # back substitution's order
        y[i] = x[i] * 2.0
        i = i - 2
        y[i + 2] += 1.0  # the counter read after its step: the new value
    return y, i


def while_in_for(A):
    for i in range(A.shape[0]):
        j = i + 1
        while j < A.shape[1]:
            A[i, j] = A[i, j - 1] * 0.5 + A[i, j]
            j += 1
    return A


# (program, arguments, rtol): every loop here does, per iteration, the IEEE operations
# NumPy's Python loop does, in the same order (scalar adds are not reassociated), so
# the results are NumPy's bit for bit: rtol 0.
PROGRAMS = [
    (running_sum, lambda: (rng.normal(size=37),), 0),
    (weak_start, lambda: (rng.normal(size=20).astype(np.float32),), 0),
    (row_sweep, lambda: (rng.normal(size=(9, 7)),), 0),
    (jacobi_1d, lambda: (rng.normal(size=30), np.zeros(30), 5), 0),
    (seidel_2d, lambda: (rng.normal(size=(8, 8)), 3), 0),
    (
        elementwise_nest,
        lambda: (rng.normal(size=(4, 5)), rng.normal(size=(5, 4)), np.ones((4, 5))),
        0,
    ),
    (backwards, lambda: (rng.normal(size=11),), 0),
    (recursive_filter, lambda: (rng.normal(size=50).astype(np.float32), 0.3), 0),
    (while_sum, lambda: (rng.normal(size=23),), 0),
    (while_down, lambda: (rng.normal(size=9),), 0),
    (while_in_for, lambda: (rng.normal(size=(5, 6)),), 0),
]


@pytest.mark.parametrize("program", range(len(PROGRAMS)), ids=[p[0].__name__ for p in PROGRAMS])
def test_loop_programs_are_numpys_and_captured(program, capfd):
    fn, make, rtol = PROGRAMS[program]
    same(fn, *make(), rtol=rtol)
    found, _ = reports(capfd, fn, *make())
    captured_all(found)


def test_zero_trip_loop_leaves_the_values_before_it(capfd):
    x = np.arange(5.0)
    same(zero_trip, x)


def test_a_loop_is_one_loop_whatever_its_trip_count():
    sizes = {}
    for n in (10, 1000):
        module = jit(running_sum).compile(np.ones(n)).module
        assert module.count("scf.for") == 2, module  # the loop, in chunks (Ctrl-C)
        sizes[n] = len(re.sub(r"\d+", "", module))
    assert sizes[10] == sizes[1000]
    unrolled = jit(running_sum, unroll_loops=True).compile(np.ones(10)).module
    assert "scf.for" not in unrolled


def test_unroll_loops_gives_the_same_values():
    A = rng.normal(size=(6, 6))
    a, b = A.copy(), A.copy()
    jit(seidel_2d)(a, 2)
    jit(seidel_2d, unroll_loops=True)(b, 2)
    np.testing.assert_array_equal(a, b)


def test_traced_bounds_are_loops():
    def partial(x, k):
        s = x[0] * 0
        for i in range(k):
            s = s + x[i]
        return s

    x = rng.normal(size=10)
    for k in (0, 1, 7, 10):
        same(partial, x, np.int64(k))


def test_while_loops_that_count_are_loops(capfd):
    def until(x, n):
        k = np.int64(1)
        s = x[0]
        while k <= n:  # a traced bound: Python could not run this while
            s = s * 0.5 + x[k]
            k += 1
        return s, k

    x = rng.normal(size=12)
    for n in (0, 1, 5, 11):  # n = 0: no iteration, k stays 1
        same(until, x, np.int64(n))
    found, _ = reports(capfd, until, x, np.int64(4))
    captured_all(found)
    module = jit(while_sum).compile(np.ones(50)).module
    assert module.count("scf.for") == 2, module  # the loop, in chunks (Ctrl-C)


def test_while_loops_that_do_not_count_stay_pythons(capfd):
    def halving(x):
        t = 1.0  # a float counter: range() cannot count it
        while t > 0.1:
            x = x * t
            t -= 0.25
        return x

    def two_steps(x):
        k = 0
        while k < 6:
            x = x + k
            k += 1
            k += 1
        return x, k

    def moving_bound(x):
        k, n = 0, 4
        while k < n:
            x = x + 1.0
            n -= 1
            k += 1
        return x, k, n

    for fn in (halving, two_steps, moving_bound):
        same(fn, np.arange(3.0))
    found, _ = reports(capfd, two_steps, np.arange(3.0))
    assert any("stepped by a constant exactly once" in what for _, what in found), found
    found, _ = reports(capfd, moving_bound, np.arange(3.0))
    assert any("bound may change" in what for _, what in found), found


# --- Fallbacks -----------------------------------------------------------------------


def test_loops_that_cannot_be_captured_unroll_and_say_why(capfd):
    def with_break(x):
        s = 0.0
        for i in range(x.shape[0]):
            if i == 3:
                break
            s = s + x[i]
        return s

    def branch_on_index(x):
        s = 0.0
        for i in range(x.shape[0]):
            if i % 2 == 0:  # a branch on the index: Python's, so unrolled
                s = s + x[i]
        return s

    def side_effect(x):
        seen = []
        s = 0.0
        for i in range(x.shape[0]):
            seen.append(i)
            s = s + x[i]
        return s * len(seen)

    x = rng.normal(size=6)
    for fn, reason in (
        (with_break, "a break"),
        (branch_on_index, "the truth value of a traced array"),
        (side_effect, "a Python side effect"),
    ):
        same(fn, x)
        found, _ = reports(capfd, fn, x)
        assert found and all(what.startswith("unrolled") for _, what in found), found
        assert any(reason in what for _, what in found), (reason, found)


def test_a_traced_bound_that_cannot_be_captured_names_the_line():
    def bad(x, k):
        s = 0.0
        for i in range(k):
            print(i)
            s = s + x[i]
        return s

    with pytest.raises(tinymlir.TracingError, match=r"loop at line \d+ \(a call of print"):
        jit(bad)(np.ones(3), np.int64(2))


# --- Errors --------------------------------------------------------------------------


def test_an_index_out_of_range_in_a_loop_is_numpys_index_error():
    def overrun(x, y):
        for i in range(x.shape[0] + 1):
            y[i] = x[i] * 2

    x, y = np.ones(4), np.zeros(4)
    with pytest.raises(IndexError):
        overrun(x.copy(), y.copy())
    with pytest.raises(IndexError):
        jit(overrun)(x, y)
    assert not y.any()  # the arguments keep their values from before the call


def test_errors_in_a_loop_body_name_the_users_line():
    def mismatch(x):
        s = x[:2]
        for _ in range(3):
            s = s + x  # (2,) + (5,): NumPy's ValueError, here
        return s

    with pytest.raises(ValueError) as e:
        jit(mismatch)(np.ones(5))
    frames = [f for f in e.traceback if f.path == __import__("pathlib").Path(__file__)]
    assert any("s = s + x" in str(f.statement) for f in frames), e.traceback


def test_a_source_edited_since_the_function_was_made_is_not_converted(tmp_path, capfd):
    """The converter reads the source file: where it no longer matches the
    function's code, the function's own code runs (its loops unrolled)."""
    path = tmp_path / "edited_module.py"
    path.write_text(
        "def f(x):\n    s = x[0] * 0\n    for i in range(x.shape[0]):\n        s = s + x[i]\n"
        "    return s\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("edited_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.write_text(
        "def f(x):\n    s = x[0] * 0\n    for i in range(x.shape[0]):\n        s = s - x[i]\n"
        "    return s\n"
    )
    x = np.arange(5.0)
    found, result = reports(capfd, module.f, x)
    assert result == 10.0  # the function's code (a sum), not the edited file's
    assert found == []  # not converted: no loop of it was captured or reported


CTRL_C = """
import os, signal, sys, threading, time
import numpy as np
from tinymlir import jit

def spin(x, n):
    for i in range(n):
        x[i % 4] = x[i % 4] * 0.5 + 1.0

# Python's own handler (a shell's background job starts with SIGINT ignored,
# and an ignored SIGINT stays ignored during calls too)
signal.signal(signal.SIGINT, signal.default_int_handler)
x = np.arange(4.0)
f = jit(spin)
f(x.copy(), 10)  # compiled: the call below only runs
before = x.copy()
threading.Thread(target=lambda: (time.sleep(0.5), os.kill(os.getpid(), signal.SIGINT))).start()
start = time.perf_counter()
try:
    f(x, 10**12)  # hours
    print("finished")
except KeyboardInterrupt:
    print("interrupted", time.perf_counter() - start, np.array_equal(x, before))
"""


def test_ctrl_c_stops_a_long_loop_and_writes_nothing_back(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C)
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    assert out[0] == "interrupted", out
    assert float(out[1]) < 10, out  # polled every 1024 iterations: stops at once
    assert out[2] == "True", out  # graphs with loops donate nothing: x as before
