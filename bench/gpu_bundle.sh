#!/usr/bin/env bash
# Packs what a bare GPU machine needs to run the GPU checks without building:
# the built test and tool binaries plus every shared library they load (LLVM,
# MLIR, OpenBLAS, libomp... and glibc's loader, for machines whose glibc is
# older than Debian 12's), xz-compressed into .gpu-bundle/ (git-ignored).
#
#   scripts/build.sh && bench/gpu_bundle.sh     (here)
#   bench/gpu_check.sh --bundle .gpu-bundle     (there, from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
OUTDIR=.gpu-bundle
bins=("$BUILD/test/unit/unit_tests" "$BUILD/tools/tinymlir-gpt2" "$BUILD/tools/tinymlir-make-gpt2"
  "$BUILD/bench/gpu_gpt2_compare" "$BUILD/bench/gpu_matmul_vs_cublas")
cmake --build "$BUILD" --target unit_tests tinymlir-gpt2 tinymlir-make-gpt2 gpu_gpt2_compare \
  gpu_matmul_vs_cublas
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "${bins[@]}" "$stage/bin/"
cp "$BUILD/lib/libtinymlir.so" "$stage/lib/"
# Every library the binaries load, by its soname, resolved through symlinks.
for b in "${bins[@]}" "$BUILD/lib/libtinymlir.so"; do
  ldd "$b" | awk '/=> \//{print $1, $3} /ld-linux/{print "ld-linux-x86-64.so.2", $1}'
done | sort -u | while read -r name path; do
  cp -L "$path" "$stage/lib/$name"
done
# ICU's 31 MB data library is loaded only because libLLVM needs libxml2 (for
# Windows manifests), which needs ICU: nothing here converts text with ICU, so
# a stand-in that defines the data symbol keeps the bundle under the device
# tool's 64 MiB (ICU would report its data as invalid if it were ever used).
for f in "$stage"/lib/libicudata.so.*; do
  [[ -e $f ]] || continue
  name=$(basename "$f")
  sym=$(nm -D "$f" | awk '/ R icudt[0-9]+_dat$/{print $3}')
  echo "const unsigned char ${sym}[32] = {0};" >"$stage/icudata.c"
  clang-22 -shared -fPIC -Wl,-soname,"$name" -o "$f" "$stage/icudata.c"
  rm "$stage/icudata.c"
done
mkdir -p "$OUTDIR"
tar -C "$stage" -cf - bin lib | xz -T0 -9 >"$OUTDIR/bundle.tar.xz"
du -h "$OUTDIR/bundle.tar.xz"
