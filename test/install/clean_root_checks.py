"""Run inside the clean Debian root (clean_root_test.sh) with the wheel installed:
the README's example, tinymlir.gpt2 on a random checkpoint (module and CLI), a
cold start and the disk cache, and numba (llvmlite, its own LLVM) in the same
process. The seeds' examples run next, as test_seeds.py under pytest."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

cache = tempfile.mkdtemp(prefix="tinymlir-kernels-")
os.environ["TINYMLIR_CACHE_DIR"] = cache

# The README's example, as written.
import tinymlir  # noqa: E402
from tinymlir import jit  # noqa: E402


@jit
def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


x = np.linspace(-5, 5, 31, dtype=np.float32)
y = gelu(x)
want = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
# x**3 and the inner sum are float32 (x is float32, the Python floats weak); the
# float64 np.sqrt(2 / np.pi) promotes the rest. A few float32 roundings (2^-24
# relative, |x| <= 5), through tanh (slope <= 1) and the products (|0.5 x| <= 2.5):
# within 16 * 2^-24 * 5 of NumPy's, whatever the order of the operations.
assert y.dtype == np.float64
assert np.max(np.abs(y - want)) <= 16 * 2.0**-24 * 5, np.max(np.abs(y - want))
assert "linalg.generic" in gelu.compile(x).optimized
sq = tinymlir.matmul(np.ones((64, 32), np.float64), np.ones((32, 16), np.float64))
assert np.array_equal(sq, np.full((64, 16), 32.0))  # OpenBLAS, bundled
print("README example: ok")

# GPT-2 on a random checkpoint: the module and the CLI give the same tokens.
import tinymlir.gpt2  # noqa: E402

model_dir = tinymlir.gpt2.write_random(tempfile.mkdtemp(prefix="gpt2-"), seed=3)
model = tinymlir.gpt2.load(model_dir)
ids = model.generate_ids("Alan Turing theorized that", 8, ignore_eos=True)
cli = subprocess.run(
    [
        tinymlir.gpt2.tool("tinymlir-gpt2"),
        "--model",
        model_dir,
        "--prompt",
        "Alan Turing theorized that",
        "--tokens",
        "8",
        "--ignore-eos",
        "--json",
    ],
    capture_output=True,
    text=True,
    check=True,
)
assert json.loads(cli.stdout)["output_ids"] == ids, (cli.stdout, ids)
print(f"tinymlir.gpt2: {ids}, as the CLI: ok")

# A cold start, then a second process that loads every kernel from the disk cache.
script = textwrap.dedent("""
    import numpy as np, tinymlir
    f = tinymlir.jit(lambda a, b: np.tanh(a @ b) + 1)
    s = f.compile(np.ones((8, 8)), np.ones((8, 8)))
    print(int(s.from_disk_cache), float(f(np.ones((8, 8)), np.ones((8, 8))).sum()))
""")
first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
assert first.stdout.split()[0] == "0" and second.stdout.split()[0] == "1", (
    first.stdout,
    second.stdout,
)
assert first.stdout.split()[1] == second.stdout.split()[1]
print("cold start, then the disk cache: ok")

# numba (llvmlite bundles its own LLVM) and tinymlir in one process, each working.
check = textwrap.dedent("""
    import numpy as np
    import numba
    import tinymlir
    @numba.njit
    def nb(a):
        return (a * 2).sum()
    @tinymlir.jit
    def tm(a):
        return (a * 2).sum()
    a = np.arange(100, dtype=np.float64)
    assert nb(a) == 9900.0 and float(tm(a)) == 9900.0
    import llvmlite.binding as llvm
    print("numba", numba.__version__, "llvmlite LLVM", llvm.llvm_version_info)
""")
run = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
assert run.returncode == 0, run.stdout + run.stderr
print(f"{run.stdout.strip()} with tinymlir in one process: ok")
