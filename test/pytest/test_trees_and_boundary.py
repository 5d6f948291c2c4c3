"""Argument trees, captured arrays, tree outputs, the call boundary, threads and the GIL."""

import collections
import dataclasses
import threading
import time

import numpy as np
import pytest
from conftest import assert_close, eps

from tinymlir import jit

E32 = eps(np.float32)


@dataclasses.dataclass
class Block:
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class ModelParams:
    blocks: list
    scale: np.ndarray
    heads: int = 2  # a static field: part of the key, passed as is


Pair = collections.namedtuple("Pair", "first second")


def test_argument_trees(rng):
    f32 = lambda *s: rng.normal(size=s).astype(np.float32)
    params = ModelParams([Block(f32(3, 3), f32(3)), Block(f32(3, 3), f32(3))], f32(3))
    seen = []

    @jit
    def run(x, params, extra):
        seen.append(params.heads)
        for blk in params.blocks:
            x = x @ blk.w + blk.b
        return x * params.scale + extra["d"][0] + extra["t"].second

    x = f32(2, 3)
    extra = {"d": [f32(3)], "t": Pair(f32(1), f32(3))}
    got = run(x, params, extra)
    want = x
    for blk in params.blocks:
        want = want @ blk.w + blk.b
    want = want * params.scale + extra["d"][0] + extra["t"].second
    mag = np.abs(x) @ np.abs(params.blocks[0].w) + np.abs(params.blocks[0].b)
    mag = mag @ np.abs(params.blocks[1].w) + np.abs(params.blocks[1].b)
    assert_close(got, want, 20 * E32 * (mag * np.abs(params.scale) + 1))
    assert seen == [2]
    # Same tree and types, new values: no new trace; a new static value: a new one.
    params2 = dataclasses.replace(params, blocks=[Block(f32(3, 3), f32(3)) for _ in range(2)])
    run(x, params2, extra)
    assert run.stats().size == 1 and seen == [2]
    run(x, dataclasses.replace(params, heads=3), extra)
    assert run.stats().size == 2 and seen == [2, 3]
    # A different tree shape (three blocks) is another specialization.
    run(x, dataclasses.replace(params, blocks=params.blocks + params.blocks[:1]), extra)
    assert run.stats().size == 3


def test_captured_arrays_are_trailing_inputs_read_at_every_call(rng):
    table = rng.normal(size=(4,)).astype(np.float32)

    @jit
    def shift(x):
        return x + table

    x = np.ones(4, np.float32)
    np.testing.assert_array_equal(shift(x), x + table)
    compiled = shift.compile(x)
    assert len(compiled._compiled.input_shapes) == 1
    assert compiled.module.count("memref<4xf32>") >= 3  # x, the captured table, the output
    table[:] = 100  # values are read at every call, never baked into the IR
    np.testing.assert_array_equal(shift(x), x + 100)
    assert shift.stats().size == 1 and shift.stats().hits >= 2
    assert "1.000000e+02" not in shift.compile(x).lowered
    # A strided view too (made contiguous by each call, not copied once).
    base = rng.normal(size=(8,)).astype(np.float32)
    view = base[::2]
    strided = jit(lambda x: x * view)
    np.testing.assert_array_equal(strided(x), x * view)
    base[:] = 3
    np.testing.assert_array_equal(strided(x), x * 3)


_WEIGHTS = np.ones(3)


def test_a_captured_name_bound_to_another_array_is_read_again():
    # NumPy reads a global or a closure's name at every call: after
    # `W = W * 2` (another array, maybe of another shape) the function sees
    # the new array, as NumPy's does; a write into the same array too.
    global _WEIGHTS
    f = lambda x: x * _WEIGHTS  # noqa: E731
    jf, x = jit(f), np.arange(1.0, 4.0)
    for rebind in (lambda w: w * 2, lambda w: np.full((2, 3), 2.0), lambda w: w):
        _WEIGHTS = rebind(_WEIGHTS)
        _WEIGHTS[0] += 1  # in place, too
        np.testing.assert_array_equal(jf(x), f(x))
    assert jf.stats().size == 2  # the same array again: no new specialization

    def closure():
        v = np.ones(2)

        def g(y):
            return y + v

        jg, before = jit(g), g(np.zeros(2))
        np.testing.assert_array_equal(jg(np.zeros(2)), before)
        v = v * 3
        return jg(np.zeros(2)), g(np.zeros(2))

    got, want = closure()
    np.testing.assert_array_equal(got, want)


_ALPHA = 0.5


def test_a_captured_number_bound_to_another_value_is_read_again():
    # NumPy reads a global or a closure's number at every call; the trace holds
    # it as a constant, so the key holds its value: a new value is a new
    # trace, the old value again a cache hit.
    global _ALPHA
    f = lambda x: x * _ALPHA + 1  # noqa: E731
    jf, x = jit(f), np.arange(1.0, 4.0)
    for value in (2.0, 3, np.float32(0.25), True, 0.5):
        _ALPHA = value
        got, want = jf(x), f(x)
        assert got.dtype == want.dtype, value
        np.testing.assert_array_equal(got, want)
    assert jf.stats().size == 5  # 0.5 again: the first specialization

    def closure():
        k = 2.0

        def g(y):
            return y * k

        jg = jit(g)
        first = jg(np.ones(2))
        k = 5.0  # noqa: F841  (read by g's cell)
        return first, jg(np.ones(2)), g(np.ones(2))

    first, got, want = closure()
    np.testing.assert_array_equal(first, [2.0, 2.0])
    np.testing.assert_array_equal(got, want)


def test_tree_outputs_from_one_compiled_function(rng):
    x = rng.normal(size=(3, 4)).astype(np.float32)

    @jit
    def stats(x):
        return {
            "mean": x.mean(axis=0),
            "pair": (x * 2, (x > 0) if False else x.astype(np.int32)),
            "wide": x.astype(np.float64) + 1,
        }

    out = stats(x)
    np.testing.assert_array_equal(out["pair"][0], x * 2)
    np.testing.assert_array_equal(out["pair"][1], x.astype(np.int32))
    np.testing.assert_array_equal(out["wide"], x.astype(np.float64) + 1)
    assert_close(out["mean"], x.mean(axis=0), 4 * E32 * np.abs(x).mean(axis=0))
    assert [a.dtype for a in (out["mean"], out["pair"][0], out["pair"][1], out["wide"])] == [
        np.float32,
        np.float32,
        np.int32,
        np.float64,
    ]
    spec = stats.compile(x)
    assert spec.module.count("func.func") == 1 and spec.module.count("@kernel") == 1
    # A multi-result kernel: one output per array, each in its own dtype (no
    # packing into one array), and each result its own buffer.
    assert "tinymlir.results = 4" in spec.module
    assert [(s, d.name) for s, d in spec.output_types] == [
        ((4,), "float32"),
        ((3, 4), "float32"),
        ((3, 4), "int32"),
        ((3, 4), "float64"),
    ]
    assert "insert_slice" not in spec.module and "bitcast" not in spec.module
    two = jit(lambda x: (x + 1, x * 3))(x)
    assert not np.shares_memory(two[0], two[1])


def test_outputs_own_native_buffers_and_inputs_may_be_any_layout(rng):
    x = rng.normal(size=(6, 8)).astype(np.float32)
    f = jit(lambda a: a * 2)
    y = f(x)
    assert y.flags.c_contiguous and y.flags.writeable and y.flags.aligned
    assert not np.shares_memory(y, x)
    y[0, 0] = 7  # writable, owned by the capsule
    z = f(x)
    assert z[0, 0] == x[0, 0] * 2 and not np.shares_memory(y, z)
    # Non-contiguous and misaligned inputs are made contiguous.
    strided = np.asfortranarray(x)
    np.testing.assert_array_equal(f(strided), x * 2)
    raw = np.zeros(6 * 8 * 4 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(6, 8)
    misaligned[...] = x
    assert not misaligned.flags.aligned
    np.testing.assert_array_equal(f(misaligned), x * 2)
    np.testing.assert_array_equal(f(x[:, ::2].copy()), jit(lambda a: a * 2)(x[:, ::2]))
    ro = x.copy()
    ro.flags.writeable = False
    np.testing.assert_array_equal(f(ro), x * 2)


def test_cache_limit_and_clear(rng):
    f = jit(lambda a: a + 1, cache_limit=2)
    for n in (2, 3, 4, 2):
        f(np.ones(n, np.float32))
    s = f.stats()
    assert (s.compilations + s.disk_hits, s.evictions, s.size) == (4, 2, 2)
    f(np.ones(4, np.float32))
    assert f.stats().hits == 1
    f.clear_cache()
    assert f.stats().size == 0
    f.cache_limit = 0
    assert f.cache_limit == 0


def test_nested_jit_is_inlined():
    inner = jit(lambda a: a * 3)
    outer = jit(lambda a: inner(a) + 1)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(outer(x), x * 3 + 1)
    assert inner.stats().compilations == 0 and inner.stats().size == 0
    assert outer.compile(x).module.count("func.func") == 1


def test_gpu_target_is_a_specialization_key():
    f = jit(lambda a: a * 2)
    x = np.ones(4, np.float32)
    f(x)
    try:
        spec = f.compile(x, target="gpu")
    except ValueError as e:  # no CUDA toolkit for the PTX: a clear error from the core
        assert "gpu" in str(e).lower() or "ptx" in str(e).lower() or "cuda" in str(e).lower()
    else:
        assert ".target sm_" in spec.ptx and spec.target == "gpu"
    with pytest.raises(ValueError, match="target must be"):
        f(x, target="tpu")


def test_gil_is_released_while_running_and_compiling(rng):
    n = 384
    a = rng.normal(size=(n, n)).astype(np.float32)
    slow = jit(lambda a: ((a @ a) @ a) @ a, blas=False, disk_cache=False)  # loops: slow
    ticks = {"compile": 0, "run": 0}
    phase = ["compile"]
    done = threading.Event()

    def work():
        slow.compile(a)
        phase[0] = "run"
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 0.3:
            slow(a)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks[phase[0]] += 1
        time.sleep(0)
    t.join()
    # The main thread kept running Python while the worker was in native code.
    assert ticks["compile"] > 100 and ticks["run"] > 100, ticks


def test_concurrent_calls_from_threads(rng):
    f = jit(lambda a, b: a @ b + 1)
    inputs = [
        (
            rng.normal(size=(8, 5)).astype(np.float32),
            rng.normal(size=(5, 3 + i % 3)).astype(np.float32),
        )
        for i in range(24)
    ]
    results = [None] * len(inputs)

    def work(k):
        for i in range(k, len(inputs), 6):
            results[i] = f(*inputs[i])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (a, b), r in zip(inputs, results):
        assert_close(r, a @ b + 1, 14 * E32 * (np.abs(a) @ np.abs(b) + 1))
    assert f.stats().compilations + f.stats().disk_hits == 3


def test_threads_waiting_for_a_compilation_share_its_result_or_its_error():
    # One C++ cache for Python too: threads asking for a key being compiled
    # wait for that compilation (without the GIL: the tracing thread runs)
    # and get its specialization, or its exception. Before, Python's waiters
    # traced again after a failed compilation.
    traces = []

    def slow(x, fail):
        traces.append(fail)
        time.sleep(0.2)  # while tracing: the other threads arrive meanwhile
        if fail:
            raise ValueError("refused while tracing")
        return x * 2

    f = jit(slow)
    x = np.arange(4.0)
    for fail in (False, True):
        outcomes = [None] * 4

        def work(k, fail=fail, outcomes=outcomes):
            try:
                outcomes[k] = f(x, fail)
            except ValueError as e:
                outcomes[k] = e

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert traces.count(fail) == 1, traces
        if fail:
            assert all(isinstance(o, ValueError) and "refused" in str(o) for o in outcomes)
        else:
            assert all(np.array_equal(o, x * 2) for o in outcomes)
    stats = f.stats()
    assert (stats.compilations + stats.disk_hits, stats.hits, stats.size) == (1, 6, 1), stats


def test_bad_inputs_raise_instead_of_crashing():
    f = jit(lambda a: a + 1)
    for bad in (object(), "text", np.array(["a"]), np.ones(3, "datetime64[s]")):
        with pytest.raises((TypeError, ValueError)):
            f(bad)
    empty = f(np.zeros((0, 3), np.float32))  # zero-size arrays are NumPy's, not errors
    assert empty.shape == (0, 3) and empty.dtype == np.float32
    with pytest.raises(TypeError, match="opt=\\{1\\} is neither arrays nor a hashable static"):
        f(np.ones(3, np.float32), opt={1})  # a set: no tree, and unhashable


def test_code_for_a_named_cpu():
    # x86-64-v3 (AVX2 + FMA) runs on every x86-64 machine of this project; the
    # result is within the same bound as the host's: tanh 4 ulp, one product
    # and one sum in float32, a side.
    x = np.linspace(-3, 3, 257, dtype=np.float32)
    f = jit(lambda a: np.tanh(a) * 3 + a, cpu="x86-64-v3")
    got, want = f(x), np.tanh(x) * 3 + x
    assert got.dtype == want.dtype == np.float32
    bound = 2 * (4 + 2) * np.finfo(np.float32).eps / 2 * (3 * np.abs(np.tanh(x)) + np.abs(x))
    assert np.all(np.abs(got.astype(np.float64) - want) <= bound)
    with pytest.raises(ValueError, match=r"\[compile\] unknown CPU 'pentium-9000'"):
        jit(lambda a: a + 1, cpu="pentium-9000")(x)
