#!/usr/bin/env bash
# Builds tinymlir and runs every test: CTest (GoogleTest suites for the host
# CPU and again for a baseline AVX2 CPU, lit/FileCheck, NumPy references, GPT-2
# verification, the install test, the safetensors fuzzer), then installs the
# Python module into .venv (pip install .) and runs its pytest suite.
# TINYMLIR_PYTHON_TESTS=0 skips the Python part (the sanitized run does).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh "$@"
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)"
cd - > /dev/null
if [ "${TINYMLIR_PYTHON_TESTS:-1}" != 0 ]; then
  scripts/install-python.sh
  .venv/bin/python -m pytest -q test/pytest
fi
