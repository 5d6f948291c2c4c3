"""Types: the package is typed (py.typed, generated .pyi stubs for the C++ modules,
explicit exports), so `mypy --strict` passes on an annotated file that uses the public
API as the README shows it, and fails on one that misuses it."""

import os
import subprocess
import sys

import pytest

import tinymlir

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(tinymlir.__file__)


def mypy(path, tmp_path):
    pytest.importorskip("mypy", reason="mypy is a test dependency (pip install .[test])")
    env = dict(os.environ, MYPY_CACHE_DIR=str(tmp_path / "mypy-cache"))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-version",
            "3.11",
            str(path),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def test_the_package_ships_its_types():
    assert os.path.exists(os.path.join(PACKAGE, "py.typed"))
    stub = open(os.path.join(PACKAGE, "_tinymlir.pyi")).read()
    assert "class Options" in stub and "def compile_graph(" in stub, stub[:500]
    assert "PrefixCache" not in stub and "def attention(" not in stub  # the compiler alone
    gpt2_stub = open(os.path.join(PACKAGE, "_gpt2.pyi")).read()
    assert "class PrefixCache" in gpt2_stub and "def attention(" in gpt2_stub, gpt2_stub[:500]
    # Every elementwise function of the op table is exported by name.
    from tinymlir import _tinymlir

    for name, _ in _tinymlir.ELEMENTWISE:
        assert name in tinymlir.__all__ and callable(getattr(tinymlir, name)), name


def test_mypy_strict_passes_on_the_readme_usage(tmp_path):
    run = mypy(os.path.join(HERE, "typing", "readme_usage.py"), tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_strict_finds_misuse(tmp_path):
    bad = tmp_path / "misuse.py"
    bad.write_text(
        "import tinymlir\n"
        "import tinymlir.gpt2\n"
        "tinymlir.set_threads('all')\n"
        "limit: str = tinymlir.jit(lambda x: x).cache_limit\n"
        "tinymlir.gpt2.load('/m').generate_ids([1], max_new_tokens='4')\n"
        "tinymlir.Options().blas = 3\n"
    )
    run = mypy(bad, tmp_path)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    for line in (3, 4, 5, 6):
        assert f"misuse.py:{line}: error" in out, out
