#!/usr/bin/env bash
# Configures and builds tinymlir in ./build (clang++-22, Ninja, Release).
# Extra arguments go to CMake, e.g. scripts/build.sh -DTINYMLIR_SANITIZE=ON.
# BUILD_DIR overrides the build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DTINYMLIR_FUZZ=ON \
  "${launcher[@]}" "$@"
cmake --build "$build" -j "$(nproc)"
