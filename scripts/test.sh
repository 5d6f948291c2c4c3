#!/usr/bin/env bash
# Builds tinymlir and runs every test (GoogleTest, lit/FileCheck, NumPy
# references, GPT-2 verification, the safetensors fuzzer).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh "$@"
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)"
