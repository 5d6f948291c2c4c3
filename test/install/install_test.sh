#!/usr/bin/env bash
# An installed tinymlir works: install the build to a temporary prefix, build
# a consumer with find_package(tinymlir), and run the installed CLI from
# another directory, checking that it reads the installed tokenizer files.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER [CONSUMER_FLAGS]
# (CONSUMER_FLAGS: compile and link flags the consumer needs, e.g. the
# sanitizers of a sanitized build.)
set -euo pipefail
build=$1 source=$2 cxx=$3 flags=${4:-}
work=$(mktemp -d /tmp/tinymlir-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
test -x "$prefix/bin/tinymlir-gpt2"
test -f "$prefix/share/tinymlir/gpt2/encoder.json"

# A consumer project, configured against the prefix only.
mkdir "$work/consumer"
cp "$source/test/install/consumer.cpp" "$work/consumer/"
cp "$source/test/install/CMakeLists.txt.in" "$work/consumer/CMakeLists.txt"
cmake -S "$work/consumer" -B "$work/consumer/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  > "$work/consumer.log"
cmake --build "$work/consumer/build" >> "$work/consumer.log" || { cat "$work/consumer.log"; exit 1; }
TINYMLIR_CACHE_DIR="$work/kernels" "$work/consumer/build/consumer"

# The installed CLI, run from an unrelated directory.
mkdir "$work/elsewhere"
cd "$work/elsewhere"
"$prefix/bin/tinymlir-make-gpt2" --out model --layers 1 --heads 2 --embd 16 --vocab 50257 \
  --positions 32 > /dev/null
"$prefix/bin/tinymlir-gpt2" --model model --prompt "Hello, world" --tokens 2 --json \
  --cache-dir "$work/kernels" > out.json
grep -q '"prompt_ids":\[15496,11,995\]' out.json || { cat out.json; exit 1; }

# It read the installed files: damaged, they are what it complains about.
echo "not json" > "$prefix/share/tinymlir/gpt2/encoder.json"
if "$prefix/bin/tinymlir-gpt2" --model model --prompt "Hello" --tokens 1 \
     --cache-dir "$work/kernels" > /dev/null 2> err.txt; then
  echo "the installed CLI did not read $prefix/share/tinymlir/gpt2"; exit 1
fi
grep -q "$prefix/share/tinymlir/gpt2" err.txt || { echo "unexpected error:"; cat err.txt; exit 1; }
echo "install test OK"
