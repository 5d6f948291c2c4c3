#!/usr/bin/env bash
# Installs everything tinymlir needs from Debian 12's archive (run as root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y -o DPkg::Lock::Timeout=600 \
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 libclang-rt-22-dev \
  libopenblas-dev python3-numpy python3-regex cmake ninja-build g++ pkg-config ccache \
  nlohmann-json3-dev libcli11-dev libpcre2-dev libgtest-dev libbenchmark-dev libomp-22-dev
