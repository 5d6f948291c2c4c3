#!/usr/bin/env bash
# Installs everything tinymlir needs (run as root): Debian 12 packages, and a
# virtual environment .venv with NumPy 2, pytest, nanobind, scikit-build-core and ruff
# from PyPI for the Python module (scripts/install-python.sh builds it into .venv).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y -o DPkg::Lock::Timeout=600 \
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 libclang-rt-22-dev \
  libopenblas-dev python3-numpy python3-regex cmake ninja-build g++ pkg-config ccache \
  nlohmann-json3-dev libcli11-dev libpcre2-dev libgtest-dev libbenchmark-dev libomp-22-dev \
  python3-dev python3-venv libcpp-httplib-dev nginx-light clang-format-22 libhwy-dev
cd "$(dirname "$0")/.."
INSTALL_PYTHON_DEPS_ONLY=1 bash scripts/install-python.sh
