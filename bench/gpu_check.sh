#!/usr/bin/env bash
# GPU checks for a machine with an NVIDIA GPU (written for an H200; < 5 minutes
# once built). Run from the repository root after scripts/build.sh:
#
#   bench/gpu_check.sh            (BUILD_DIR=build by default)
#   bench/gpu_check.sh --bundle D (a bare machine: binaries and libraries packed
#                                  here by bench/gpu_bundle.sh, nothing built)
#
#  1. the GPU unit tests (GpuDevice.*: GPU results of the op programs against
#     the CPU target within 2e-5; resident weights uploaded once; and the
#     lowering / PTX / emulation tests);
#  2. GPT-2 on a random 124M checkpoint: CPU and GPU generate the same tokens
#     (tinymlir-gpt2 --gpu where the CLI has it, and bench/gpu_gpt2_compare.cpp,
#     which also compares logits and times tokens);
#  3. the largest products (GPT-2's x @ wte.T and x @ w_fc, a 4096 square)
#     against cuBLAS (bench/gpu_matmul_vs_cublas.cpp; cuBLAS via dlopen).
# Exit status: 0 if every check passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD_DIR:-build}
CXX=${CXX:-clang++-22}
CUDA=${CUDA_HOME:-/usr/local/cuda}
TOKENS=${TOKENS:-20}
export TINYMLIR_CACHE=0 # no disk cache: every specialization compiled here
BUNDLE=
[[ ${1:-} == --bundle ]] && BUNDLE=$2
RUN=() # how a binary is started: directly, or through the bundle's own loader
failures=0
step() { printf '\n=== %s\n' "$*"; }
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
run_for() { # seconds, command...: a time limit per step keeps the whole under 5 minutes
  local limit=$1
  shift
  timeout --foreground "$limit" "${RUN[@]}" "$@"
}

step "device"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
else
  echo "nvidia-smi not found (the checks below say whether libcuda.so.1 loads)"
fi
export LD_LIBRARY_PATH="$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

if [[ -n $BUNDLE ]]; then
  step "bundle ($BUNDLE)"
  B=/tmp/tinymlir-bundle
  rm -rf "$B" && mkdir -p "$B" && xz -dc "$BUNDLE/bundle.tar.xz" | tar -C "$B" -xf - || exit 1
  mkdir -p "$B/glibc"
  for f in "$B"/lib/{libc.so.6,libm.so.6,ld-linux-x86-64.so.2,libpthread.so.0,libdl.so.2,librt.so.1}; do
    [[ -e $f ]] && mv "$f" "$B/glibc/"
  done
  # The binaries name the source directory they were built from (test data).
  [[ -e /work/main ]] || { mkdir -p /work && ln -s "$ROOT" /work/main; }
  extra=()
  for name in libcuda.so.1 libcublas.so.13 libcublas.so.12 libcublas.so; do
    path=$(ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n {print $NF; exit}')
    [[ -z $path ]] && path=$(find /usr/local/nvidia /usr/local/cuda/ /usr/lib/x86_64-linux-gnu /opt \
      -name "$name" 2>/dev/null | head -1)
    [[ -n $path ]] && extra+=("$(dirname "$path")") && echo "$name: $path"
  done
  dirs=$(printf '%s:' "$B/lib" "${extra[@]}")
  export LD_LIBRARY_PATH="${dirs%:}:$LD_LIBRARY_PATH"
  export TINYMLIR_GPT2_DATA="$ROOT/data/gpt2"
  if [[ -n ${FORCE_LOADER:-} ]] || ! "$B/bin/tinymlir-gpt2" --help >/dev/null 2>"$B/err"; then
    head -3 "$B/err"
    echo "the system's glibc cannot run the bundle: using the bundle's loader"
    RUN=("$B/glibc/ld-linux-x86-64.so.2" --library-path "$B/glibc:${dirs%:}")
  fi
  mkdir -p "$B/build/test/unit" "$B/build/tools"
  ln -sf "$B/bin/unit_tests" "$B/build/test/unit/"
  ln -sf "$B"/bin/tinymlir-* "$B/build/tools/"
  ln -sf "$B"/bin/gpu_* "$B/build/"
  BUILD=$B/build
else
  step "build ($BUILD)"
  cmake --build "$BUILD" -j"$(nproc)" --target unit_tests tinymlir-gpt2 tinymlir-make-gpt2 \
    gpu_matmul_vs_cublas gpu_gpt2_compare ||
    { echo "build failed: run scripts/build.sh first"; exit 1; }
  cp "$BUILD/bench/gpu_matmul_vs_cublas" "$BUILD/bench/gpu_gpt2_compare" "$BUILD/"
fi

step "1. GPU unit tests (GPU vs CPU within 2e-5)"
run_for 120 "$BUILD/test/unit/unit_tests" --gtest_filter='Gpu*' --gtest_brief=0 2>&1 |
  tee "${LOG_DIR:-/tmp}/gpu_unit_tests.log" |
  grep -E '^\[ +(OK|FAILED|SKIPPED|RUN) +\]|Skipped|Failure|error|Expected|Which is|max' | grep -v '^\[ RUN'
status=${PIPESTATUS[0]}
[[ $status == 0 ]] || fail "GPU unit tests (status $status)"
if "${RUN[@]}" "$BUILD/test/unit/unit_tests" --gtest_filter='GpuDevice*' 2>&1 | grep -q SKIPPED; then
  fail "GpuDevice tests skipped: no usable CUDA device"
fi

step "2. GPT-2 124M (random weights): CPU vs GPU tokens"
MODEL=${GPT2_MODEL:-/tmp/tinymlir-gpt2-124M}
if [[ ! -f $MODEL/model.safetensors ]]; then
  run_for 120 "$BUILD/tools/tinymlir-make-gpt2" --out "$MODEL" --preset 124M --seed 1 ||
    fail "making the 124M checkpoint"
fi
PROMPT=464,2068,7586,21831,18045,625,262,16931,3290,13
if "${RUN[@]}" "$BUILD/tools/tinymlir-gpt2" --help 2>&1 | grep -q -- '--gpu'; then
  cpu=$(run_for 120 "$BUILD/tools/tinymlir-gpt2" --model "$MODEL" --prompt-ids $PROMPT \
    --tokens "$TOKENS" --json | grep -o '"output_ids":\[[^]]*\]')
  gpu=$(run_for 120 "$BUILD/tools/tinymlir-gpt2" --model "$MODEL" --prompt-ids $PROMPT \
    --tokens "$TOKENS" --json --gpu | grep -o '"output_ids":\[[^]]*\]')
  echo "cli cpu $cpu"
  echo "cli gpu $gpu"
  [[ -n $cpu && $cpu == "$gpu" ]] || fail "tinymlir-gpt2 --gpu tokens differ from the CPU's"
else
  echo "tinymlir-gpt2 has no --gpu flag yet: comparing with bench/gpu_gpt2_compare only"
fi
run_for 150 "$BUILD/gpu_gpt2_compare" "$MODEL" "$TOKENS" || fail "GPT-2 CPU vs GPU (incremental)"

step "3. largest products vs cuBLAS"
run_for 90 "$BUILD/gpu_matmul_vs_cublas" 128 || fail "matmul vs cuBLAS"

step "summary"
if [[ $failures == 0 ]]; then
  echo "all GPU checks passed"
else
  echo "$failures GPU check(s) failed"
fi
exit $((failures > 0))
