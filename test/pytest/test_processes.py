"""Jitted functions beyond one process: pickling (module functions by
reference, lambdas by value through cloudpickle, the options with their
fields), process pools (fork and spawn) sharing compiled code through the
disk cache, and the disk cache's own safety: threads storing one key at once,
and its size bound.

A key is not compiled at most once across processes: there is no file lock.
Processes (or functions of one process) that miss the same key at once each
compile it and write a whole entry of their own; the last rename wins, and
every later call anywhere loads it. The tests count compilations per process."""

import concurrent.futures
import multiprocessing as mp
import pickle
import threading
import time

import numpy as np
import proc_helpers as helpers
import pytest

import tinymlir
from tinymlir import jit

EPS64 = np.finfo(np.float64).eps


def expected_scaled_sum(x):
    return (np.tanh(x) * 2.0).sum(axis=0)


def close(got, x):
    # tanh within 4 ulp of each term, a sum of len(x) terms: gamma_n sum |terms|
    n = x.shape[0]
    bound = (4 + 2 * n) * EPS64 * (2.0 * np.abs(np.tanh(x))).sum(axis=0)
    np.testing.assert_array_less(np.abs(got - expected_scaled_sum(x)), bound + 1e-300)


def test_module_functions_pickle_by_reference():
    f = helpers.scaled_sum
    assert pickle.loads(pickle.dumps(f)) is f


def test_options_pickle_with_their_fields():
    o = tinymlir.Options()
    o.opt_level, o.cache_bytes, o.cpu, o.blas = 1, 12345, "x86-64-v3", False
    p = pickle.loads(pickle.dumps(o))
    assert (p.key(), p.cache_bytes, p.cache_dir) == (o.key(), 12345, o.cache_dir)


def test_lambdas_travel_by_value_through_cloudpickle(rng):
    cloudpickle = pytest.importorskip(
        "cloudpickle",
        reason="cloudpickle is a test dependency (scripts/install-python.sh installs it)",
    )
    f = jit(lambda x: (np.tanh(x) * 2.0).sum(axis=0), opt_level=1, cache_limit=3)
    g = cloudpickle.loads(cloudpickle.dumps(f))
    assert g is not f and g.options.opt_level == 1 and g.cache_limit == 3
    x = rng.normal(size=(5, 3))
    close(g(x), x)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(f)  # a lambda, as pickle refuses any lambda


def _shapes(rng, n):
    return [rng.normal(size=(6, 4)) for _ in range(n)]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_pools_run_jitted_functions_and_share_the_disk_cache(method, rng):
    # The parent compiles (or loads) first; no worker compiles: a forked one
    # has the parent's code in memory, a spawned one loads it from the disk
    # cache (TINYMLIR_CACHE_DIR, inherited).
    xs = _shapes(rng, 6)
    close(helpers.scaled_sum(xs[0]), xs[0])
    with mp.get_context(method).Pool(2) as pool:
        for x, y in zip(xs, pool.map(helpers.scaled_sum, xs)):  # the jitted function pickled
            close(y, x)
        out = pool.map(helpers.run_and_count, xs)
    # a forked worker starts with the parent's counts; none compiles more
    inherited = helpers.scaled_sum.stats().compilations if method == "fork" else 0
    for x, (y, compilations, _, pid) in zip(xs, out):
        close(y, x)
        assert compilations == inherited, (method, pid)
    if method == "spawn":
        assert all(disk_hits == 1 for _, _, disk_hits, _ in out)


def test_process_pool_executor(rng):
    xs = _shapes(rng, 4)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        out = list(ex.map(helpers.run_and_count, xs))
    for x, (y, compilations, _, _) in zip(xs, out):
        close(y, x)
        assert compilations == 0


def test_threads_storing_one_key_at_once(tmp_path, rng):
    # Four functions (four in-memory caches) miss one key at once: each
    # compiles and writes an entry of its own; one whole entry remains, no
    # temporary, and a fifth function loads it instead of compiling.
    x = rng.normal(size=(7, 5))
    fns = [jit(helpers.poly, cache_dir=str(tmp_path)) for _ in range(4)]
    start = threading.Barrier(len(fns))
    results = [None] * len(fns)

    def run(k):
        start.wait()
        results[k] = fns[k](x)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, helpers.poly(x))  # the same rounded operations
    assert sum(f.stats().compilations + f.stats().disk_hits for f in fns) == 4
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 1 and names[0].endswith(".kernel"), names
    again = jit(helpers.poly, cache_dir=str(tmp_path))
    np.testing.assert_array_equal(again(x), helpers.poly(x))
    assert (again.stats().disk_hits, again.stats().compilations) == (1, 0)


def test_the_disk_cache_keeps_within_its_bound(tmp_path):
    # Entries beyond cache_bytes go least recently used first; loading an
    # entry marks it used.
    def entries():
        return {p.name: p.stat().st_size for p in tmp_path.iterdir()}

    def compile_for(n, bound):
        f = jit(helpers.poly, cache_dir=str(tmp_path), cache_bytes=bound)
        f(np.ones(n))
        time.sleep(0.02)  # distinct modification times
        return f

    compile_for(3, 0)
    size = max(entries().values())
    bound = int(3.5 * size)
    a = set(entries())
    compile_for(4, bound)
    b = set(entries()) - a
    compile_for(5, bound)
    assert len(entries()) == 3
    reload = compile_for(3, bound)  # loaded from disk: now the most recently used
    assert reload.stats().disk_hits == 1
    compile_for(6, bound)  # the fourth entry: the least recently used (n=4) goes
    names = set(entries())
    assert sum(entries().values()) <= bound and len(names) == 3
    assert a <= names and not (b & names)


def test_cache_bytes_from_the_environment(monkeypatch):
    monkeypatch.setenv("TINYMLIR_CACHE_BYTES", "1000")
    assert tinymlir.Options().cache_bytes == 1000
    monkeypatch.setenv("TINYMLIR_CACHE_BYTES", "-5")
    with pytest.raises(ValueError, match="TINYMLIR_CACHE_BYTES='-5'"):
        tinymlir.Options()


MAIN_SCRIPT = """
import multiprocessing as mp, sys
import numpy as np
from tinymlir import jit

@jit
def f(x):
    return np.tanh(x) * 2.0

if __name__ == "__main__":
    xs = [np.full((3, 2), float(k)) for k in range(4)]
    for method in ("fork", "spawn"):
        with mp.get_context(method).Pool(2) as pool:
            for x, y in zip(xs, pool.map(f, xs)):
                assert np.abs(y - np.tanh(x) * 2.0).max() <= 8 * np.finfo(float).eps * 2, method
    print("ok")
"""


def test_functions_of_the_main_script_in_pools(tmp_path):
    # A script's own @jit function, in fork and spawn pools: pickled by name,
    # found again in the workers' __main__.
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(MAIN_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


CLOUDPICKLE_SCRIPT = """
import subprocess, sys
import cloudpickle
import numpy as np
from tinymlir import jit

@jit
def f(x):
    return x * 2 + 1

# As Dask sends work: by value, to a process whose __main__ has no f.
code = ("import cloudpickle, sys, numpy as np; g = cloudpickle.loads(sys.stdin.buffer.read()); "
        "print(g(np.arange(3.0)).tolist())")
out = subprocess.run([sys.executable, "-c", code], input=cloudpickle.dumps(f), capture_output=True)
print(out.stdout.decode().strip() or out.stderr.decode())
"""


def test_functions_of_the_main_script_through_cloudpickle(tmp_path):
    pytest.importorskip(
        "cloudpickle",
        reason="cloudpickle is a test dependency (scripts/install-python.sh installs it)",
    )
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(CLOUDPICKLE_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "[1.0, 3.0, 5.0]", (out.stdout, out.stderr[-3000:])


def test_dask_blocks_on_a_local_cluster(rng):
    # dask.array blocks through a jitted function on two worker processes
    # (127.0.0.1 only): the module's function by reference, a lambda by value.
    # The parent compiled the blocks' specialization first: the workers load
    # it from the shared disk cache and compile nothing.
    distributed = pytest.importorskip(
        "distributed",
        reason="dask and distributed are test "
        "dependencies (scripts/install-python.sh installs them)",
    )
    da = pytest.importorskip("dask.array")
    x = rng.normal(size=(400, 30))
    np.testing.assert_array_equal(helpers.jpoly(x[:100]), helpers.poly(x[:100]))
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        dx = da.from_array(x, chunks=(100, 30))
        y = dx.map_blocks(helpers.jpoly, dtype=x.dtype).compute()
        np.testing.assert_array_equal(y, helpers.poly(x))
        z = dx.map_blocks(jit(lambda b: np.tanh(b) * 2.0), dtype=x.dtype).compute()
        np.testing.assert_array_less(np.abs(z - np.tanh(x) * 2.0), 16 * EPS64)
        counts = client.run(helpers.jpoly_stats)
    assert len(counts) == 2
    assert all(compiled == 0 for compiled, _ in counts.values()), counts
    assert sum(loaded for _, loaded in counts.values()) >= 1, counts
