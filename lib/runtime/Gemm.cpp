// Products for generated code on one thread pool (see Gemm.h).
//
// Measured on a 256-token GPT-2 prefill with 2 threads: with OpenBLAS's own
// threads next to OpenMP's, each pool's idle workers spin (sched_yield) on the
// cores the other needs; column blocks on the OpenMP team remove that.
#include "runtime/Gemm.h"
#include "runtime/Call.h"

#include <cblas.h>

#include <algorithm>
#include <complex>

extern "C" int omp_get_max_threads();
extern "C" void tinymlir_memref_copy(int64_t elementSize, void *source, void *destination);
extern "C" int omp_in_parallel();

namespace {

/// Below this many floating-point operations a product runs as one call:
/// splitting it costs more than it saves.
constexpr double kSplitFlops = 8e6;
/// Column blocks are at least this wide (a multiple of a cache line of float64).
constexpr int64_t kMinBlock = 64;

/// cblas_?gemv's type, for products of one column (null: none, complex).
template <typename T>
using Gemv = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, blasint, blasint, T, const T *, blasint,
                      const T *, blasint, T, T *, blasint);

template <typename T, typename Blas>
void gemm(Blas blas, int64_t batch, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,
          int64_t strideA, const T *b, int64_t ldb, int64_t strideB, T *c, int64_t ldc,
          int64_t strideC, Gemv<T> gemv = nullptr) {
  auto one = [&](int64_t i, int64_t j0, int64_t width) {
    blas(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(width),
         static_cast<int>(k), T(1), a + i * strideA, static_cast<int>(lda), b + i * strideB + j0,
         static_cast<int>(ldb), T(1), c + i * strideC + j0, static_cast<int>(ldc));
  };
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const double flops = 2.0 * static_cast<double>(batch) * m * n * k;
  if (gemv && n == 1) {
    // A matrix-vector product: gemv (OpenBLAS's gemm packs a one-column B
    // as a matrix: 2.5x slower), on row blocks over the team when large.
    const int64_t rows =
        threads <= 1 || flops < kSplitFlops ? m : ((m + threads - 1) / threads + 15) / 16 * 16;
    const int64_t blocks = (m + rows - 1) / rows, tasks = batch * blocks;
#pragma omp parallel for schedule(static)                                                          \
    num_threads(static_cast<int>(std::min<int64_t>(std::max(threads, 1), tasks))) if (tasks > 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t i = t / blocks, r0 = (t % blocks) * rows, height = std::min(rows, m - r0);
      gemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(height), static_cast<blasint>(k), T(1),
           a + i * strideA + r0 * lda, static_cast<blasint>(lda), b + i * strideB,
           static_cast<blasint>(ldb), T(1), c + i * strideC + r0 * ldc, static_cast<blasint>(ldc));
    }
    return;
  }
  if (threads <= 1 || flops < kSplitFlops) {
    for (int64_t i = 0; i < batch; ++i)
      one(i, 0, n);
    return;
  }
  // Enough tasks for every thread: whole products when the batch has them,
  // else column blocks of each.
  int64_t blocks = batch >= threads ? 1 : (threads + batch - 1) / batch;
  blocks = std::max<int64_t>(1, std::min(blocks, n / kMinBlock));
  const int64_t width = ((n + blocks - 1) / blocks + 15) / 16 * 16;
  blocks = (n + width - 1) / width;
  const int64_t tasks = batch * blocks;
#pragma omp parallel for schedule(static)                                                          \
    num_threads(static_cast<int>(std::min<int64_t>(threads, tasks)))
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t j0 = (t % blocks) * width;
    one(t / blocks, j0, std::min(width, n - j0));
  }
}

} // namespace

/// cblas_cgemm and cblas_zgemm as the real ones are called (alpha, beta by value).
template <class T, auto Blas>
void complexBlas(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                 T alpha, const T *a, int lda, const T *b, int ldb, T beta, T *c, int ldc) {
  Blas(order, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

extern "C" void tinymlir_cgemm(int64_t batch, int64_t m, int64_t n, int64_t k,
                               const std::complex<float> *a, int64_t lda, int64_t strideA,
                               const std::complex<float> *b, int64_t ldb, int64_t strideB,
                               std::complex<float> *c, int64_t ldc, int64_t strideC) {
  gemm<std::complex<float>>(complexBlas<std::complex<float>, cblas_cgemm>, batch, m, n, k, a, lda,
                            strideA, b, ldb, strideB, c, ldc, strideC);
}

extern "C" void tinymlir_zgemm(int64_t batch, int64_t m, int64_t n, int64_t k,
                               const std::complex<double> *a, int64_t lda, int64_t strideA,
                               const std::complex<double> *b, int64_t ldb, int64_t strideB,
                               std::complex<double> *c, int64_t ldc, int64_t strideC) {
  gemm<std::complex<double>>(complexBlas<std::complex<double>, cblas_zgemm>, batch, m, n, k, a, lda,
                             strideA, b, ldb, strideB, c, ldc, strideC);
}

extern "C" void tinymlir_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a,
                               int64_t lda, int64_t strideA, const float *b, int64_t ldb,
                               int64_t strideB, float *c, int64_t ldc, int64_t strideC) {
  gemm<float>(cblas_sgemm, batch, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC,
              cblas_sgemv);
}

extern "C" void tinymlir_dgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const double *a,
                               int64_t lda, int64_t strideA, const double *b, int64_t ldb,
                               int64_t strideB, double *c, int64_t ldc, int64_t strideC) {
  gemm<double>(cblas_dgemm, batch, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC,
               cblas_dgemv);
}

tinymlir::detail::RuntimeSymbols tinymlir::detail::cpuRuntimeSymbols() {
  // Generated code's memref.alloc and memref.dealloc
  // (finalize-memref-to-llvm{use-generic-functions}) take the arrays' memory,
  // whose freed blocks the next call reuses.
  RuntimeSymbols out{symbol("tinymlir_sgemm", &tinymlir_sgemm),
                     symbol("tinymlir_dgemm", &tinymlir_dgemm),
                     symbol("tinymlir_cgemm", &tinymlir_cgemm),
                     symbol("tinymlir_zgemm", &tinymlir_zgemm),
                     symbol("memrefCopy", &tinymlir_memref_copy), // runtime/Copy.cpp
                     symbol("_mlir_memref_to_llvm_alloc", &tinymlir::allocateMemory),
                     symbol("_mlir_memref_to_llvm_free", &tinymlir::freeMemory)};
  for (const RuntimeSymbol &s : rowRuntimeSymbols()) // runtime/Rows.cpp
    out.push_back(s);
  for (const RuntimeSymbol &s : linalgRuntimeSymbols()) // runtime/Linalg.cpp
    out.push_back(s);
  for (const RuntimeSymbol &s : complexRuntimeSymbols()) // runtime/Complex.cpp
    out.push_back(s);
  return out;
}
