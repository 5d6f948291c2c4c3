// JitOptions: how a function is compiled, and for which target.
#pragma once

#include <tinymlir/array.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tinymlir {

enum class Target : uint8_t { CPU, GPU };
const char *targetName(Target target);

/// How a function is compiled. Every field that changes generated code is
/// part of the specialization key (and of the disk cache's). The defaults
/// come from environment variables where set (JitOptions(), the README's
/// table); a field set in code wins over the environment.
struct JitOptions {
  /// The defaults, with TINYMLIR_* environment variables applied. A malformed
  /// value is an error naming the variable.
  JitOptions();

  Target target = Target::CPU;
  /// Replace matmuls with BLAS calls (off: loops). TINYMLIR_BLAS=0.
  bool blas = true;
  /// CPU: products with at most this many rows stream their weights through
  /// generated loops instead of calling BLAS, each row computed exactly as a
  /// one-row product is (sequences decoded together get the numbers each gets
  /// alone). 1: matrix-vector products only. (Float64 rows against float32
  /// weights stream up to tinymlir-small-products max-rows, 16, whatever this is.)
  int streamRows = 1;
  /// Run the optimization pipeline (canonicalize, cse, elementwise fusion).
  bool optimize = true;
  /// LLVM optimization and code generation level, 0 to 3. 2: generated code
  /// measured as fast as at 3 (GPT-2 decode and prefill, tinymlir-bench) for
  /// a fifth of the compile time; 1 does not vectorize. TINYMLIR_OPT_LEVEL.
  int optLevel = 2;
  /// Loops of exp, tanh, pow... call glibc's vector math library (libmvec,
  /// a few ulp) where the CPU has AVX2; off: scalar libm. TINYMLIR_VECTOR_MATH=0.
  bool vectorMath = true;
  /// The CPU to generate code for, by LLVM's name: "x86-64-v3" (AVX2, FMA),
  /// "x86-64-v4" (AVX-512), "znver3", "skylake-avx512"... "": the host CPU
  /// with all its features. A CPU needing features the host lacks is an
  /// error (its code could not run). TINYMLIR_CPU.
  std::string cpu;
  /// Most specializations kept per function (0: no limit); least recently used go first.
  size_t cacheLimit = 0;
  /// Keep compiled code in the persistent disk cache (CPU target), so another
  /// process reuses it. TINYMLIR_CACHE=0 turns it off.
  bool diskCache = true;
  /// The disk cache's directory ("": $XDG_CACHE_HOME/tinymlir/kernels or
  /// ~/.cache/tinymlir/kernels). Setting it turns the disk cache on.
  /// TINYMLIR_CACHE_DIR.
  std::string cacheDir;
  /// The disk cache's bound in bytes (0: none): after each entry written,
  /// the least recently used entries go until the directory is under it.
  /// TINYMLIR_CACHE_BYTES.
  uint64_t cacheBytes = uint64_t{4} << 30;

  // --- GPU target ---
  /// Run the GPU's kernels on the CPU (OpenMP teams, one thread per GPU
  /// thread) instead of a device: the gpu-emulated target, for tests on
  /// machines without a GPU. TINYMLIR_GPU_EMULATE=1.
  bool gpuEmulate = false;
  /// The chips whose PTX is bundled (the first is the `ptx` stage).
  /// TINYMLIR_GPU_CHIPS.
  std::string gpuChips = "sm_90,sm_75";
  /// Outputs per thread of the matmul kernels, "TMxTN" (1, 2 or 4 each);
  /// "": chosen per product. TINYMLIR_GPU_MATMUL_TILE.
  std::string gpuMatmulTile;
  /// The libdevice bitcode linked into kernels that call math functions.
  /// "": found when a GPU target is made (detail::libdevice):
  /// nvvm/libdevice/libdevice.10.bc under $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT,
  /// /usr/local/cuda or /usr/lib/cuda, else Debian's nvidia-cuda-toolkit's
  /// (none found: kernels that call math functions are an error).
  std::string gpuLibdevice;

  // --- Diagnostics (no effect on the code) ---
  /// Print each stage's compile time on stderr. TINYMLIR_TIMING=1.
  bool timing = false;
  /// Register generated code with perf (perf record -k 1, perf inject --jit).
  /// TINYMLIR_PERF=1.
  bool perf = false;
};

namespace detail {
/// The fields of the options that decide the generated code, as one string
/// (specialization and disk cache keys).
std::string optionsKey(const JitOptions &options);
/// options.gpuLibdevice, or where it is not set, the default it documents.
std::string libdevice(const JitOptions &options);
} // namespace detail

} // namespace tinymlir
