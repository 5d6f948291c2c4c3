#!/usr/bin/env bash
# Creates the virtual environment .venv-peers (VENV overrides the location) for
# bench/programs_bench.py: tinymlir (pip-installed by scripts/install-python.sh, reusing the
# incremental C++ build in build-pip/), numba, and jax[cpu], all on the SAME NumPy version as
# tinymlir's own .venv, so that the three contenders of one run see one NumPy.
#
# The NumPy pin is read from .venv (NUMPY_VERSION overrides it). pip resolves numba and jax
# against that pin; if the newest numba does not accept it, pip picks the newest numba that
# does (the versions installed are printed at the end). On the NumPy 2.4.6 of .venv this gives
# numba 0.68.1 (its newest, which accepts NumPy 2.4: no pin needed) and jax/jaxlib 0.10.2, the
# newest for Debian's Python 3.11 (jax 0.11 and later require Python >= 3.12). jax[cpu] brings
# SciPy, whose bundled OpenBLAS is the BLAS of numba's np.dot and @. CI never needs this script.
#
#   bash scripts/install-peers.sh && .venv-peers/bin/python bench/programs_bench.py
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv-peers}
numpy_version=${NUMPY_VERSION:-$(.venv/bin/python -c 'import numpy; print(numpy.__version__)')}
VENV="$venv" bash scripts/install-python.sh
"$venv/bin/python" -m pip install --quiet numba "jax[cpu]" threadpoolctl "numpy==$numpy_version"
"$venv/bin/python" - <<'PY'
import numpy, numba, jax, jaxlib, tinymlir
print("tinymlir", tinymlir.__version__, "| NumPy", numpy.__version__, "| numba", numba.__version__,
      "| jax", jax.__version__, "jaxlib", jaxlib.__version__)
PY
