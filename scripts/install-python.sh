#!/usr/bin/env bash
# Creates the virtual environment .venv (Debian's Python 3.11, NumPy 2 from PyPI) and
# installs the tinymlir Python module into it with `pip install .` (scikit-build-core +
# nanobind; the C++ build is kept in build-pip/, so reinstalling is incremental).
# Needs the Debian packages of scripts/install-deps.sh. VENV overrides the location.
#
#   scripts/install-python.sh && .venv/bin/python -m pytest test/pytest
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "numpy>=2" pytest "nanobind>=2" "scikit-build-core>=0.10" \
  cloudpickle "dask[array]" "distributed>=2025.1" mypy \
  "ruff==0.14.8"  # pyproject's [test]: processes, Dask, types; ruff: scripts/check-style.sh
# (distributed pins its own dask: without a lower bound, a dask released before its
# distributed made pip take distributed 2021.4.1, which cannot import that dask)
if [ "${INSTALL_PYTHON_DEPS_ONLY:-0}" = 1 ]; then exit 0; fi
# No build isolation: the build tools above are reused, and build-pip/ stays valid.
"$venv/bin/python" -m pip install --no-build-isolation "$@" .
"$venv/bin/python" -c "import tinymlir, numpy; print('tinymlir', tinymlir.__version__, 'with NumPy', numpy.__version__)"
