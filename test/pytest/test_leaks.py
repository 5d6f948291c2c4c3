"""Nothing traced outlives its trace: a trace-heavy script, errors included,
ends without nanobind's leak report (each leaked instance is a C++ graph kept
alive for the process's life), and a traced value kept past its trace is a
clear error, not a silent reuse."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinymlir
from tinymlir import jit

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    from tinymlir import jit

    x = np.arange(6.0).reshape(2, 3)
    for k in range(8):
        # errors raised inside NumPy's ufunc.reduce/accumulate override (NumPy 2.4
        # keeps their operands: numpy#31677)
        for bad in (lambda a: np.subtract.reduce(a, axis=(0, 1)),
                    lambda a: np.subtract.accumulate(a, axis=None),
                    lambda a: np.add.reduce(a, axis=5),
                    lambda a: a.reshape(7),
                    lambda a: a[int(a.sum())]):
            try:
                jit(bad)(x)
            except Exception:
                pass
        # a runtime error of a compiled kernel
        try:
            jit(lambda a, i: a[i])(x, np.int64(9))
        except IndexError:
            pass
        # and ordinary traces, kept and dropped
        f = jit(lambda a: (np.tanh(a) @ a.T, a.sum(axis=0), np.sort(a, axis=1)))
        f(x + k)
    print("done")
    """
)


def test_a_trace_heavy_script_with_errors_leaks_nothing(tmp_path):
    script = tmp_path / "traces.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TINYMLIR_CACHE_DIR=str(tmp_path / "kernels"))
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 0, run.stderr
    assert "done" in run.stdout
    assert "leaked" not in run.stderr, run.stderr[:2000]


def test_a_traced_value_kept_past_its_trace_is_an_error():
    kept = []

    def keep(a):
        kept.append(a * 2)
        return a + 1

    jit(keep)(np.ones(3))
    assert len(kept) == 1
    with pytest.raises(tinymlir.TracingError, match="after the trace that made it ended"):
        kept[0].sum()
