// Products for generated code on one thread pool (see Gemm.h).
//
// Measured on a 256-token GPT-2 prefill with 2 threads: with OpenBLAS's own
// threads next to OpenMP's, each pool's idle workers spin (sched_yield) on the
// cores the other needs; column blocks on the OpenMP team remove that.
//
// In a process that has loaded NumPy, NumPy's OpenBLAS already has a pool,
// and its workers spin for about 0.1 s after each NumPy product. Products
// outside parallel loops then run on NumPy's OpenBLAS instead: the process
// keeps one BLAS pool, and a product costs what NumPy's costs (measured in
// docs/performance.md).
#include "runtime/Gemm.h"
#include "runtime/Call.h"

#include <cblas.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <complex>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" int omp_get_max_threads();
extern "C" void tinymlir_memref_copy(int64_t elementSize, void *source, void *destination);
extern "C" int omp_in_parallel();
extern "C" int omp_get_num_procs();
extern "C" int omp_get_thread_num();
extern "C" char *openblas_get_config();

namespace {

/// NumPy's OpenBLAS: the CBLAS products of scipy-openblas (NumPy's wheels,
/// 64-bit integers, symbols prefixed scipy_ and suffixed 64_), when a library
/// this process has loaded exports them.
struct NumpyBlas {
  using I = int64_t;
  template <typename T>
  using Gemm = void (*)(int, int, int, I, I, I, T, const T *, I, const T *, I, T, T *, I);
  template <typename T>
  using Gemv = void (*)(int, int, I, I, T, const T *, I, const T *, I, T, T *, I);
  Gemm<double> dgemm = nullptr;
  Gemm<float> sgemm = nullptr;
  Gemv<double> dgemv = nullptr;
  Gemv<float> sgemv = nullptr;
  const char *(*config)() = nullptr;

  template <typename T> Gemm<T> gemm() const {
    if constexpr (std::is_same_v<T, double>)
      return dgemm;
    else
      return sgemm;
  }
  template <typename T> Gemv<T> gemv() const {
    if constexpr (std::is_same_v<T, double>)
      return dgemv;
    else
      return sgemv;
  }
};

/// NumPy's OpenBLAS if loaded, looked up at the first product that may use
/// it (null: not loaded).
const NumpyBlas *numpyBlas() {
  static NumpyBlas blas;
  static bool found = false;
  static std::once_flag once;
  std::call_once(once, [] {
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) -> int {
          if (!info->dlpi_name || !std::strstr(info->dlpi_name, "scipy_openblas"))
            return 0;
          void *lib = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
          if (!lib)
            return 0;
          auto *b = static_cast<NumpyBlas *>(data);
          auto find = [&](auto &f, const char *name) {
            f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, name));
          };
          find(b->dgemm, "scipy_cblas_dgemm64_");
          find(b->sgemm, "scipy_cblas_sgemm64_");
          find(b->dgemv, "scipy_cblas_dgemv64_");
          find(b->sgemv, "scipy_cblas_sgemv64_");
          find(b->config, "scipy_openblas_get_config64_");
          return b->dgemm && b->sgemm && b->dgemv && b->sgemv ? 1 : 0;
        },
        &blas);
    found = blas.dgemm && blas.sgemm && blas.dgemv && blas.sgemv;
  });
  return found ? &blas : nullptr;
}

/// Whether the kernel running on this thread was compiled with numpy_blas
/// (set before each call: tinymlir::detail::useNumpyBlas).
thread_local bool numpyBlasWanted = false;

/// Whether a product made here runs on NumPy's OpenBLAS: the kernel asks for
/// it, not inside a parallel loop (one thread per block there), and not after
/// set_threads(1) on a machine of several cores (NumPy's threads would be
/// more than one).
bool onNumpyBlas() {
  return numpyBlasWanted && !omp_in_parallel() &&
         (omp_get_max_threads() > 1 || omp_get_num_procs() == 1);
}

/// gemv's beta for y = alpha A x + beta y: with beta 0, y is set to zero
/// first and 1 returned. (gemm never reads C when beta is 0; gemv scales y
/// by beta, and 0 * NaN, from an uninitialized output, is NaN on OpenBLAS
/// 0.3.27 and later.)
template <typename T> T zeroed(T beta, T *y, int64_t n, int64_t step) {
  if (beta != T(0))
    return beta;
  for (int64_t i = 0; i < n; ++i)
    y[i * step] = T(0);
  return T(1);
}

/// Products run on NumPy's OpenBLAS so far (numpyBlasProducts).
std::atomic<uint64_t> numpyProducts{0};

/// The products on NumPy's OpenBLAS (its own threads): gemv for one column
/// (A @ x) or one row (x @ B, as B^T x), gemm otherwise.
template <typename T>
void numpyGemm(const NumpyBlas &blas, int64_t batch, int64_t m, int64_t n, int64_t k, const T *a,
               int64_t lda, int64_t strideA, const T *b, int64_t ldb, int64_t strideB, T *c,
               int64_t ldc, int64_t strideC, T alpha, T beta) {
  numpyProducts.fetch_add(static_cast<uint64_t>(batch), std::memory_order_relaxed);
  for (int64_t i = 0; i < batch; ++i) {
    const T *ai = a + i * strideA, *bi = b + i * strideB;
    T *ci = c + i * strideC;
    if (n == 1)
      blas.gemv<T>()(CblasRowMajor, CblasNoTrans, m, k, alpha, ai, lda, bi, ldb,
                     zeroed(beta, ci, m, ldc), ci, ldc);
    else if (m == 1)
      blas.gemv<T>()(CblasRowMajor, CblasTrans, k, n, alpha, bi, ldb, ai, 1, zeroed(beta, ci, n, 1),
                     ci, 1);
    else
      blas.gemm<T>()(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, alpha, ai, lda, bi, ldb,
                     beta, ci, ldc);
  }
}

/// Below this many floating-point operations a product runs as one call:
/// splitting it costs more than it saves.
constexpr double kSplitFlops = 8e6;
/// Matrix-vector products are bound by reading the matrix: split from about
/// 1 MB of float64 on (A (1000, 1000) @ x: 0.29 -> 0.15 ms on 2 cores).
constexpr double kSplitGemvFlops = 2.5e5;
/// Column blocks are at least this wide (a multiple of a cache line of float64).
constexpr int64_t kMinBlock = 64;

/// cblas_?gemv's type, for products of one column (null: none, complex).
template <typename T>
using Gemv = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, blasint, blasint, T, const T *, blasint,
                      const T *, blasint, T, T *, blasint);

/// part(i, start, size) over blocks of `extent` rows or columns of each of
/// `batch` matrix-vector products: one block each when small, else one per
/// thread (multiples of 16), on the OpenMP team.
template <typename Part>
void splitVector(int threads, double flops, int64_t batch, int64_t extent, const Part &part) {
  const int64_t size = threads <= 1 || flops < kSplitGemvFlops
                           ? extent
                           : ((extent + threads - 1) / threads + 15) / 16 * 16;
  const int64_t blocks = (extent + size - 1) / size, tasks = batch * blocks;
#pragma omp parallel for schedule(static)                                                          \
    num_threads(static_cast<int>(std::min<int64_t>(std::max(threads, 1), tasks))) if (tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t start = (t % blocks) * size;
    part(t / blocks, start, std::min(size, extent - start));
  }
}

template <typename T, typename Blas>
void gemm(Blas blas, int64_t batch, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,
          int64_t strideA, const T *b, int64_t ldb, int64_t strideB, T *c, int64_t ldc,
          int64_t strideC, T alpha, T beta, Gemv<T> gemv = nullptr) {
  auto one = [&](int64_t i, int64_t j0, int64_t width) {
    blas(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(width),
         static_cast<int>(k), alpha, a + i * strideA, static_cast<int>(lda), b + i * strideB + j0,
         static_cast<int>(ldb), beta, c + i * strideC + j0, static_cast<int>(ldc));
  };
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    if (const NumpyBlas *blas = onNumpyBlas() ? numpyBlas() : nullptr) {
      numpyGemm<T>(*blas, batch, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC, alpha,
                   beta);
      return;
    }
  }
  const double flops = 2.0 * static_cast<double>(batch) * m * n * k;
  if (gemv && m == 1 && n > 1) {
    // One row: x @ B as B^T x (gemv), on column blocks over the team when large.
    splitVector(threads, flops, batch, n, [&](int64_t i, int64_t j0, int64_t w) {
      T *y = c + i * strideC + j0;
      gemv(CblasRowMajor, CblasTrans, static_cast<blasint>(k), static_cast<blasint>(w), alpha,
           b + i * strideB + j0, static_cast<blasint>(ldb), a + i * strideA, 1,
           zeroed(beta, y, w, 1), y, 1);
    });
    return;
  }
  if (gemv && n == 1) {
    // A matrix-vector product: gemv (OpenBLAS's gemm packs a one-column B
    // as a matrix: 2.5x slower), on row blocks over the team when large.
    splitVector(threads, flops, batch, m, [&](int64_t i, int64_t r0, int64_t height) {
      T *y = c + i * strideC + r0 * ldc;
      gemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(height), static_cast<blasint>(k),
           alpha, a + i * strideA + r0 * lda, static_cast<blasint>(lda), b + i * strideB,
           static_cast<blasint>(ldb), zeroed(beta, y, height, ldc), y, static_cast<blasint>(ldc));
    });
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

/// One sweep along four rows of A: their dot products with v into `dots`,
/// and sum += scale[r] * add[r], where add is rows when Same (each element
/// loaded once), else other rows of A or zeros.
template <typename T, bool Same>
[[gnu::always_inline]] inline void sweepBody(int64_t k, const T *const rows[4], const T *v,
                                             T dots[4], const T *const add[4], const T scale[4],
                                             T *sum) {
  const T *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
  const T *a0 = Same ? r0 : add[0], *a1 = Same ? r1 : add[1], *a2 = Same ? r2 : add[2],
          *a3 = Same ? r3 : add[3];
  const T c0 = scale[0], c1 = scale[1], c2 = scale[2], c3 = scale[3];
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (int64_t j = 0; j < k; ++j) {
    const T x = v[j], e0 = r0[j], e1 = r1[j], e2 = r2[j], e3 = r3[j];
    s0 += e0 * x;
    s1 += e1 * x;
    s2 += e2 * x;
    s3 += e3 * x;
    T total = sum[j];
    total += c0 * (Same ? e0 : a0[j]);
    total += c1 * (Same ? e1 : a1[j]);
    total += c2 * (Same ? e2 : a2[j]);
    total += c3 * (Same ? e3 : a3[j]);
    sum[j] = total;
  }
  dots[0] = s0, dots[1] = s1, dots[2] = s2, dots[3] = s3;
}

/// sweepBody compiled for AVX-512, AVX2 with FMA, and any x86-64, the best
/// this machine has chosen at load time: where A is in cache the sweep is
/// bound by arithmetic (docs/performance.md).
#if defined(__x86_64__)
#define TINYMLIR_CLONES                                                                            \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TINYMLIR_CLONES
#endif
#define TINYMLIR_SWEEP(T, name)                                                                    \
  TINYMLIR_CLONES void name(bool same, int64_t k, const T *const rows[4], const T *v, T dots[4],   \
                            const T *const add[4], const T scale[4], T *sum) {                     \
    if (same)                                                                                      \
      sweepBody<T, true>(k, rows, v, dots, add, scale, sum);                                       \
    else                                                                                           \
      sweepBody<T, false>(k, rows, v, dots, add, scale, sum);                                      \
  }
TINYMLIR_SWEEP(float, sweepFloat)
TINYMLIR_SWEEP(double, sweepDouble)
#undef TINYMLIR_SWEEP
#undef TINYMLIR_CLONES

template <typename T>
void sweep(bool same, int64_t k, const T *const rows[4], const T *v, T dots[4],
           const T *const add[4], const T scale[4], T *sum) {
  if constexpr (std::is_same_v<T, double>)
    sweepDouble(same, k, rows, v, dots, add, scale, sum);
  else
    sweepFloat(same, k, rows, v, dots, add, scale, sum);
}

/// Both matrix-vector products of one matrix in one pass over it (Gemm.h's
/// tinymlir_?gemv2), NumPy's two gemv calls' time halved where A is read
/// from memory. Each thread takes a block of rows and sweeps along four at a
/// time: their dot products with v make c's four entries while the same
/// rows, scaled by w's entries, are added to the thread's own sum of d (the
/// sums are added at the end). When w is c, the rows added are the previous
/// four, whose entries of c are known by then, read again from cache.
template <typename T>
void gemv2(int64_t m, int64_t k, const T *a, int64_t lda, const T *v, int64_t incv, T *c,
           int64_t incc, T alphaP, T betaP, const T *w, int64_t incw, T *d, T alphaQ, T betaQ) {
  const bool dependent = w == c;
  const int most = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int threads = 4.0 * static_cast<double>(m) * k < kSplitGemvFlops
                          ? 1
                          : static_cast<int>(std::clamp<int64_t>(m / 4, 1, std::max(most, 1)));
  // Each thread's sum on its own cache lines, then a row of zeros (what
  // missing rows read: scaling a row of A by 0 would turn its infinities
  // into NaN), then v made contiguous.
  const int64_t stride = (k + 7) / 8 * 8;
  std::vector<T> scratch(static_cast<size_t>((threads + 1) * stride + (incv != 1 ? k : 0)), T(0));
  const T *zeros = scratch.data() + threads * stride;
  if (incv != 1) {
    T *copy = scratch.data() + (threads + 1) * stride;
    for (int64_t j = 0; j < k; ++j)
      copy[j] = v[j * incv];
    v = copy;
  }
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int t = threads > 1 ? omp_get_thread_num() : 0;
    const int64_t per = (m + threads - 1) / threads, r0 = std::min<int64_t>(m, t * per),
                  r1 = std::min<int64_t>(m, r0 + per);
    T *sum = scratch.data() + t * stride;
    const T *rows[4], *add[4] = {zeros, zeros, zeros, zeros};
    T dots[4], scale[4] = {};
    // The rows to add in the next sweep: these four, scaled by w's entries.
    auto pend = [&](int64_t i, int64_t n) {
      for (int64_t r = 0; r < 4; ++r)
        add[r] = rows[r], scale[r] = r < n ? alphaQ * w[(i + r) * incw] : T(0);
    };
    for (int64_t i = r0; i < r1; i += 4) {
      const int64_t n = std::min<int64_t>(4, r1 - i);
      for (int64_t r = 0; r < 4; ++r)
        rows[r] = r < n ? a + (i + r) * lda : zeros;
      if (!dependent)
        pend(i, n);
      sweep<T>(!dependent, k, rows, v, dots, add, scale, sum);
      for (int64_t r = 0; r < n; ++r) {
        T &ci = c[(i + r) * incc];
        ci = betaP == T(0) ? alphaP * dots[r] : alphaP * dots[r] + betaP * ci;
      }
      if (dependent) // c's four entries are known now
        pend(i, n);
    }
    if (dependent && r1 > r0) {
      const T *none[4] = {zeros, zeros, zeros, zeros};
      sweep<T>(false, k, none, v, dots, add, scale, sum);
    }
  }
  for (int64_t j = 0; j < k; ++j) {
    T total = scratch[j];
    for (int t = 1; t < threads; ++t)
      total += scratch[t * stride + j];
    d[j] = betaQ == T(0) ? total : total + betaQ * d[j];
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
                               std::complex<float> *c, int64_t ldc, int64_t strideC, double alpha,
                               double beta) {
  gemm<std::complex<float>>(complexBlas<std::complex<float>, cblas_cgemm>, batch, m, n, k, a, lda,
                            strideA, b, ldb, strideB, c, ldc, strideC,
                            std::complex<float>(static_cast<float>(alpha)),
                            std::complex<float>(static_cast<float>(beta)));
}

extern "C" void tinymlir_zgemm(int64_t batch, int64_t m, int64_t n, int64_t k,
                               const std::complex<double> *a, int64_t lda, int64_t strideA,
                               const std::complex<double> *b, int64_t ldb, int64_t strideB,
                               std::complex<double> *c, int64_t ldc, int64_t strideC, double alpha,
                               double beta) {
  gemm<std::complex<double>>(complexBlas<std::complex<double>, cblas_zgemm>, batch, m, n, k, a, lda,
                             strideA, b, ldb, strideB, c, ldc, strideC, std::complex<double>(alpha),
                             std::complex<double>(beta));
}

extern "C" void tinymlir_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a,
                               int64_t lda, int64_t strideA, const float *b, int64_t ldb,
                               int64_t strideB, float *c, int64_t ldc, int64_t strideC,
                               double alpha, double beta) {
  gemm<float>(cblas_sgemm, batch, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC,
              static_cast<float>(alpha), static_cast<float>(beta), cblas_sgemv);
}

extern "C" void tinymlir_dgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const double *a,
                               int64_t lda, int64_t strideA, const double *b, int64_t ldb,
                               int64_t strideB, double *c, int64_t ldc, int64_t strideC,
                               double alpha, double beta) {
  gemm<double>(cblas_dgemm, batch, m, n, k, a, lda, strideA, b, ldb, strideB, c, ldc, strideC,
               alpha, beta, cblas_dgemv);
}

extern "C" void tinymlir_sgemv2(int64_t m, int64_t k, const float *a, int64_t lda, const float *v,
                                int64_t incv, float *c, int64_t incc, double alphaP, double betaP,
                                const float *w, int64_t incw, float *d, double alphaQ,
                                double betaQ) {
  gemv2<float>(m, k, a, lda, v, incv, c, incc, static_cast<float>(alphaP),
               static_cast<float>(betaP), w, incw, d, static_cast<float>(alphaQ),
               static_cast<float>(betaQ));
}

extern "C" void tinymlir_dgemv2(int64_t m, int64_t k, const double *a, int64_t lda, const double *v,
                                int64_t incv, double *c, int64_t incc, double alphaP, double betaP,
                                const double *w, int64_t incw, double *d, double alphaQ,
                                double betaQ) {
  gemv2<double>(m, k, a, lda, v, incv, c, incc, alphaP, betaP, w, incw, d, alphaQ, betaQ);
}

void tinymlir::detail::useNumpyBlas() { numpyBlasWanted = true; }
void tinymlir::detail::useOwnBlas() { numpyBlasWanted = false; }
uint64_t tinymlir::detail::numpyBlasProducts() {
  return numpyProducts.load(std::memory_order_relaxed);
}

std::string tinymlir::detail::blasLibrary() {
  const bool wanted = std::exchange(numpyBlasWanted, true);
  const NumpyBlas *blas = onNumpyBlas() ? numpyBlas() : nullptr;
  numpyBlasWanted = wanted;
  if (blas)
    return std::string("numpy: ") + (blas->config ? blas->config() : "scipy-openblas");
  return std::string("own: ") + openblas_get_config();
}

tinymlir::detail::RuntimeSymbols tinymlir::detail::cpuRuntimeSymbols() {
  // Generated code's memref.alloc and memref.dealloc
  // (finalize-memref-to-llvm{use-generic-functions}) take the arrays' memory,
  // whose freed blocks the next call reuses.
  RuntimeSymbols out{symbol("tinymlir_sgemm", &tinymlir_sgemm),
                     symbol("tinymlir_dgemm", &tinymlir_dgemm),
                     symbol("tinymlir_cgemm", &tinymlir_cgemm),
                     symbol("tinymlir_zgemm", &tinymlir_zgemm),
                     symbol("tinymlir_sgemv2", &tinymlir_sgemv2),
                     symbol("tinymlir_dgemv2", &tinymlir_dgemv2),
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
