// np.linalg's kernels (ops.def's Cholesky ... Lstsq): LAPACK (OpenBLAS ships
// it) on each matrix of a batch, called by compiled code as the row kernels
// are (Rows.h: 2-D memrefs, a batch of B matrices of n columns as B*m rows).
//
// Each matrix is copied into a column-major scratch matrix (LAPACK's layout),
// factored there, and its results are copied out, row-major. LAPACK's failures
// are NumPy's LinAlgError, reported through reportKernelError: a matrix that
// is not positive definite, a singular one, a decomposition that did not
// converge. Packed results (one output per kernel) are laid out as the
// frontend (lib/frontend/Linalg.cpp) reads them.
#include "runtime/Rows.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

// LAPACK's Fortran interface (32-bit integers, as Debian's OpenBLAS; the
// hidden lengths of character arguments last, as gfortran passes them).
extern "C" {
void spotrf_(const char *, const int *, float *, const int *, int *, size_t);
void dpotrf_(const char *, const int *, double *, const int *, int *, size_t);
void sgesv_(const int *, const int *, float *, const int *, int *, float *, const int *, int *);
void dgesv_(const int *, const int *, double *, const int *, int *, double *, const int *, int *);
void cgesv_(const int *, const int *, std::complex<float> *, const int *, int *,
            std::complex<float> *, const int *, int *);
void zgesv_(const int *, const int *, std::complex<double> *, const int *, int *,
            std::complex<double> *, const int *, int *);
void sgetrf_(const int *, const int *, float *, const int *, int *, int *);
void dgetrf_(const int *, const int *, double *, const int *, int *, int *);
void ssyevd_(const char *, const char *, const int *, float *, const int *, float *, float *,
             const int *, int *, const int *, int *, size_t, size_t);
void dsyevd_(const char *, const char *, const int *, double *, const int *, double *, double *,
             const int *, int *, const int *, int *, size_t, size_t);
void sgesdd_(const char *, const int *, const int *, float *, const int *, float *, float *,
             const int *, float *, const int *, float *, const int *, int *, int *, size_t);
void dgesdd_(const char *, const int *, const int *, double *, const int *, double *, double *,
             const int *, double *, const int *, double *, const int *, int *, int *, size_t);
void sgeqrf_(const int *, const int *, float *, const int *, float *, float *, const int *, int *);
void dgeqrf_(const int *, const int *, double *, const int *, double *, double *, const int *,
             int *);
void sorgqr_(const int *, const int *, const int *, float *, const int *, const float *, float *,
             const int *, int *);
void dorgqr_(const int *, const int *, const int *, double *, const int *, const double *, double *,
             const int *, int *);
using cfloat = std::complex<float>;
using cdouble = std::complex<double>;
void cpotrf_(const char *, const int *, cfloat *, const int *, int *, size_t);
void zpotrf_(const char *, const int *, cdouble *, const int *, int *, size_t);
void cgetrf_(const int *, const int *, cfloat *, const int *, int *, int *);
void zgetrf_(const int *, const int *, cdouble *, const int *, int *, int *);
void cheevd_(const char *, const char *, const int *, cfloat *, const int *, float *, cfloat *,
             const int *, float *, const int *, int *, const int *, int *, size_t, size_t);
void zheevd_(const char *, const char *, const int *, cdouble *, const int *, double *, cdouble *,
             const int *, double *, const int *, int *, const int *, int *, size_t, size_t);
void cgesdd_(const char *, const int *, const int *, cfloat *, const int *, float *, cfloat *,
             const int *, cfloat *, const int *, cfloat *, const int *, float *, int *, int *,
             size_t);
void zgesdd_(const char *, const int *, const int *, cdouble *, const int *, double *, cdouble *,
             const int *, cdouble *, const int *, cdouble *, const int *, double *, int *, int *,
             size_t);
void cgeqrf_(const int *, const int *, cfloat *, const int *, cfloat *, cfloat *, const int *,
             int *);
void zgeqrf_(const int *, const int *, cdouble *, const int *, cdouble *, cdouble *, const int *,
             int *);
void cungqr_(const int *, const int *, const int *, cfloat *, const int *, const cfloat *, cfloat *,
             const int *, int *);
void zungqr_(const int *, const int *, const int *, cdouble *, const int *, const cdouble *,
             cdouble *, const int *, int *);
void cgelsd_(const int *, const int *, const int *, cfloat *, const int *, cfloat *, const int *,
             float *, const float *, int *, cfloat *, const int *, float *, int *, int *);
void zgelsd_(const int *, const int *, const int *, cdouble *, const int *, cdouble *, const int *,
             double *, const double *, int *, cdouble *, const int *, double *, int *, int *);
void sgelsd_(const int *, const int *, const int *, float *, const int *, float *, const int *,
             float *, const float *, int *, float *, const int *, int *, int *);
void dgelsd_(const int *, const int *, const int *, double *, const int *, double *, const int *,
             double *, const double *, int *, double *, const int *, int *, int *);
}

namespace {
using tinymlir::ErrorKind;
using tinymlir::detail::reportKernelError;
using tinymlir::detail::Rows;

template <class T> struct RealOf {
  using type = T;
};
template <class T> struct RealOf<std::complex<T>> {
  using type = T;
};
/// A matrix element's real type: singular values and eigenvalues are real.
template <class T> using Real = typename RealOf<T>::type;
template <class T> constexpr bool kComplex = !std::is_same_v<T, Real<T>>;

/// LAPACK's routine for T: s (float), d (double), c (complex<float>) or z,
/// where the complex one may have another name (orgqr: ungqr).
#define TINYMLIR_LAPACK_REAL_COMPLEX(T, real, complex, ...)                                        \
  do {                                                                                             \
    if constexpr (std::is_same_v<T, float>)                                                        \
      s##real##_(__VA_ARGS__);                                                                     \
    else if constexpr (std::is_same_v<T, double>)                                                  \
      d##real##_(__VA_ARGS__);                                                                     \
    else if constexpr (std::is_same_v<T, cfloat>)                                                  \
      c##complex##_(__VA_ARGS__);                                                                  \
    else                                                                                           \
      z##complex##_(__VA_ARGS__);                                                                  \
  } while (false)
#define TINYMLIR_LAPACK(T, name, ...) TINYMLIR_LAPACK_REAL_COMPLEX(T, name, name, __VA_ARGS__)

/// A workspace size LAPACK answered in a query's first element.
template <class T> int workSize(T query) { return std::max(static_cast<int>(std::real(query)), 1); }

template <class T> void potrf(int n, T *a, int *info) {
  TINYMLIR_LAPACK(T, potrf, "L", &n, a, &n, info, 1);
}
template <class T> void gesv(int n, int k, T *a, int *p, T *b, int *info) {
  TINYMLIR_LAPACK(T, gesv, &n, &k, a, &n, p, b, &n, info);
}
template <class T> void getrf(int n, T *a, int *p, int *info) {
  TINYMLIR_LAPACK(T, getrf, &n, &n, a, &n, p, info);
}
/// Eigenvalues (ascending) and eigenvectors of a symmetric or Hermitian
/// matrix from its lower triangle (?syevd, ?heevd).
template <class T> void syevd(int n, T *a, Real<T> *w, int *info) {
  int lwork = -1, liwork = -1, lrwork = -1, iquery = 0;
  T query = 0;
  Real<T> rquery = 0;
  auto call = [&](T *work, Real<T> *rwork, int *iwork) {
    if constexpr (kComplex<T>)
      TINYMLIR_LAPACK(T, heevd, "V", "L", &n, a, &n, w, work, &lwork, rwork, &lrwork, iwork,
                      &liwork, info, 1, 1);
    else
      TINYMLIR_LAPACK(T, syevd, "V", "L", &n, a, &n, w, work, &lwork, iwork, &liwork, info, 1, 1);
    (void)rwork;
  };
  call(&query, &rquery, &iquery);
  lwork = workSize(query);
  lrwork = workSize(rquery);
  liwork = std::max(iquery, 1);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<Real<T>> rwork(static_cast<size_t>(lrwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  call(work.data(), rwork.data(), iwork.data());
}
template <class T>
void gesdd(char job, int m, int n, T *a, Real<T> *s, T *u, int ldu, T *vt, int ldvt, int *info) {
  int lwork = -1;
  T query = 0;
  const size_t mn = static_cast<size_t>(std::min(m, n)), mx = static_cast<size_t>(std::max(m, n));
  std::vector<int> iwork(8 * mn);
  // ?gesdd's complex workspace (LAPACK 3.7's bound for the vectors; 7 mn without)
  std::vector<Real<T>> rwork(kComplex<T> ? std::max({7 * mn, 5 * mn * mn + 5 * mn,
                                                     2 * mx * mn + 2 * mn * mn + mn, size_t{1}})
                                         : 1);
  auto call = [&](T *work) {
    if constexpr (kComplex<T>)
      TINYMLIR_LAPACK(T, gesdd, &job, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork,
                      rwork.data(), iwork.data(), info, 1);
    else
      TINYMLIR_LAPACK(T, gesdd, &job, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work, &lwork,
                      iwork.data(), info, 1);
  };
  call(&query);
  lwork = workSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  call(work.data());
}
template <class T> void geqrfOrgqr(int m, int n, T *a, T *r, int *info) {
  const int k = std::min(m, n);
  std::vector<T> tau(static_cast<size_t>(std::max(k, 1)));
  int lwork = -1;
  T query = 0;
  TINYMLIR_LAPACK(T, geqrf, &m, &n, a, &m, tau.data(), &query, &lwork, info);
  lwork = workSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  TINYMLIR_LAPACK(T, geqrf, &m, &n, a, &m, tau.data(), work.data(), &lwork, info);
  for (int i = 0; i < k; ++i) // R: the upper triangle, k x n (column-major, ld k)
    for (int j = 0; j < n; ++j)
      r[i + static_cast<size_t>(j) * k] = j >= i ? a[i + static_cast<size_t>(j) * m] : T(0);
  lwork = -1;
  TINYMLIR_LAPACK_REAL_COMPLEX(T, orgqr, ungqr, &m, &k, &k, a, &m, tau.data(), &query, &lwork,
                               info);
  lwork = workSize(query);
  work.resize(static_cast<size_t>(lwork));
  TINYMLIR_LAPACK_REAL_COMPLEX(T, orgqr, ungqr, &m, &k, &k, a, &m, tau.data(), work.data(), &lwork,
                               info);
}
template <class T>
void gelsd(int m, int n, int k, T *a, T *b, int ldb, Real<T> *s, Real<T> rcond, int *rank,
           int *info) {
  int lwork = -1;
  T query = 0;
  Real<T> rquery = 0;
  int iquery = 0;
  auto call = [&](T *work, Real<T> *rwork, int *iwork) {
    if constexpr (kComplex<T>)
      TINYMLIR_LAPACK(T, gelsd, &m, &n, &k, a, &m, b, &ldb, s, &rcond, rank, work, &lwork, rwork,
                      iwork, info);
    else
      TINYMLIR_LAPACK(T, gelsd, &m, &n, &k, a, &m, b, &ldb, s, &rcond, rank, work, &lwork, iwork,
                      info);
    (void)rwork;
  };
  call(&query, &rquery, &iquery);
  lwork = workSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<Real<T>> rwork(static_cast<size_t>(workSize(rquery)));
  std::vector<int> iwork(static_cast<size_t>(std::max(iquery, 1)));
  call(work.data(), rwork.data(), iwork.data());
}

void linalgError(const std::string &message) { reportKernelError(ErrorKind::LinAlg, message); }

/// Matrix `b` of a batch (rows b*m .. b*m + m - 1) as a column-major copy.
template <class T> std::vector<T> columnMajor(const Rows<T> &x, int64_t b, int64_t m) {
  std::vector<T> c(static_cast<size_t>(m * x.columns));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < x.columns; ++j)
      c[static_cast<size_t>(i + j * m)] = x(b * m + i, j);
  return c;
}

/// A column-major m x n matrix (leading dimension ld) into rows r0.. of out.
template <class T>
void store(const T *c, int64_t ld, int64_t m, int64_t n, const Rows<T> &out, int64_t r0) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      out(r0 + i, j) = c[i + j * ld];
}

template <class T> void cholesky(Rows<T> a, Rows<T> out) {
  const int64_t n = a.columns;
  for (int64_t b = 0; b * n < a.rows; ++b) {
    std::vector<T> c = columnMajor(a, b, n);
    int info = 0;
    potrf(static_cast<int>(n), c.data(), &info);
    if (info > 0)
      linalgError("Matrix is not positive definite");
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        out(b * n + i, j) = j <= i && info == 0 ? c[static_cast<size_t>(i + j * n)] : T(0);
  }
}

/// x = a^-1 y for each matrix (y: identity when `inverse`).
template <class T> void solve(Rows<T> a, const Rows<T> *y, Rows<T> out) {
  const int64_t n = a.columns, k = out.columns;
  std::vector<int> pivots(static_cast<size_t>(n));
  for (int64_t b = 0; b * n < a.rows; ++b) {
    std::vector<T> c = columnMajor(a, b, n);
    std::vector<T> rhs(static_cast<size_t>(n * k), T(0));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        rhs[static_cast<size_t>(i + j * n)] = y ? (*y)(b * n + i, j) : T(i == j);
    int info = 0;
    gesv(static_cast<int>(n), static_cast<int>(k), c.data(), pivots.data(), rhs.data(), &info);
    if (info > 0)
      linalgError("Singular matrix");
    store(rhs.data(), n, n, k, out, b * n);
  }
}

/// The LU factors' determinant as NumPy's: the sign of the permutation and
/// of the diagonal (for complex matrices, the product of d / |d|), log|det|
/// the sum of the logs of its magnitudes, det = sign exp(log|det|); a zero
/// pivot (exactly singular): sign 0, log|det| -inf.
template <class T> void determinant(Rows<T> a, Rows<T> out, bool logarithm) {
  const int64_t n = a.columns;
  std::vector<int> pivots(static_cast<size_t>(std::max<int64_t>(n, 1)));
  for (int64_t b = 0; b < out.rows; ++b) {
    std::vector<T> c = columnMajor(a, b, n);
    int info = 0;
    getrf(static_cast<int>(n), c.data(), pivots.data(), &info);
    T sign = 1;
    Real<T> logdet = 0;
    for (int64_t i = 0; i < n; ++i) {
      const T d = c[static_cast<size_t>(i + i * n)];
      const Real<T> magnitude = std::abs(d);
      if (pivots[static_cast<size_t>(i)] != i + 1)
        sign = -sign;
      if constexpr (kComplex<T>)
        sign *= magnitude == 0 ? T(0) : d / magnitude;
      else
        sign *= d < 0 ? T(-1) : T(1);
      logdet += std::log(magnitude);
    }
    if (info > 0) {
      sign = 0;
      logdet = -std::numeric_limits<Real<T>>::infinity();
    }
    if (logarithm) {
      out(b, 0) = sign;
      out(b, 1) = logdet;
    } else {
      out(b, 0) = sign * std::exp(logdet);
    }
  }
}

/// Per matrix: a row of ascending eigenvalues, then the n x n eigenvectors
/// (columns), from the lower triangle (NumPy's UPLO='L').
template <class T> void eigh(Rows<T> a, Rows<T> out) {
  const int64_t n = a.columns;
  std::vector<Real<T>> w(static_cast<size_t>(n));
  for (int64_t b = 0; b * n < a.rows; ++b) {
    std::vector<T> c = columnMajor(a, b, n);
    int info = 0;
    syevd(static_cast<int>(n), c.data(), w.data(), &info);
    if (info > 0)
      linalgError("Eigenvalues did not converge");
    for (int64_t j = 0; j < n; ++j)
      out(b * (n + 1), j) = w[static_cast<size_t>(j)];
    store(c.data(), n, n, n, out, b * (n + 1) + 1);
  }
}

/// flag = 4 m + mode: mode 0 singular values only (a row per matrix); 1 the
/// reduced and 2 the full decomposition, per matrix U (m rows), a row of s,
/// then Vh (k or n rows), each as wide as the output.
template <class T> void svd(Rows<T> a, Rows<T> out, int64_t flag) {
  const int64_t m = flag / 4, mode = flag % 4, n = a.columns, k = std::min(m, n);
  const int64_t uColumns = mode == 2 ? m : k, vRows = mode == 2 ? n : k;
  const char job = mode == 0 ? 'N' : mode == 1 ? 'S' : 'A';
  std::vector<Real<T>> s(static_cast<size_t>(std::max<int64_t>(k, 1)));
  std::vector<T> u(static_cast<size_t>(mode ? std::max<int64_t>(m * uColumns, 1) : 1));
  std::vector<T> vt(static_cast<size_t>(mode ? std::max<int64_t>(vRows * n, 1) : 1));
  const int64_t perMatrix = mode ? m + 1 + vRows : 1;
  for (int64_t b = 0; b * m < a.rows; ++b) {
    std::vector<T> c = columnMajor(a, b, m);
    int info = 0;
    gesdd(job, static_cast<int>(m), static_cast<int>(n), c.data(), s.data(), u.data(),
          static_cast<int>(std::max<int64_t>(m, 1)), vt.data(),
          static_cast<int>(std::max<int64_t>(vRows, 1)), &info);
    if (info > 0)
      linalgError("SVD did not converge");
    const int64_t r0 = b * perMatrix;
    if (mode)
      store(u.data(), m, m, uColumns, out, r0);
    for (int64_t j = 0; j < k; ++j)
      out(r0 + (mode ? m : 0), j) = s[static_cast<size_t>(j)];
    if (mode)
      store(vt.data(), vRows, vRows, n, out, r0 + m + 1);
  }
}

/// flag = m: per matrix Q (m x k), then R (k x n), NumPy's mode='reduced'.
template <class T> void qr(Rows<T> a, Rows<T> out, int64_t m) {
  const int64_t n = a.columns, k = std::min(m, n);
  std::vector<T> r(static_cast<size_t>(std::max<int64_t>(k * n, 1)));
  for (int64_t b = 0; b * m < a.rows; ++b) {
    std::vector<T> c = columnMajor(a, b, m);
    int info = 0;
    geqrfOrgqr(static_cast<int>(m), static_cast<int>(n), c.data(), r.data(), &info);
    store(c.data(), m, m, k, out, b * (m + k));
    store(r.data(), k, k, n, out, b * (m + k) + m);
  }
}

/// flag = m: a (m, n), y (m, nrhs) -> rows of x (n x nrhs), a row of the
/// singular values, a row holding the rank; rcond = eps max(m, n), NumPy 2's.
template <class T> void lstsq(Rows<T> a, Rows<T> y, Rows<T> out) {
  const int64_t m = a.rows, n = a.columns, k = y.columns, ld = std::max<int64_t>({m, n, 1});
  std::vector<T> c = columnMajor(a, 0, m);
  std::vector<T> rhs(static_cast<size_t>(ld * k), T(0));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j)
      rhs[static_cast<size_t>(i + j * ld)] = y(i, j);
  std::vector<Real<T>> s(static_cast<size_t>(std::max<int64_t>(std::min(m, n), 1)));
  int rank = 0, info = 0;
  const Real<T> rcond =
      std::numeric_limits<Real<T>>::epsilon() * static_cast<Real<T>>(std::max(m, n));
  gelsd(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), c.data(), rhs.data(),
        static_cast<int>(ld), s.data(), rcond, &rank, &info);
  if (info > 0)
    linalgError("SVD did not converge in Linear Least Squares");
  store(rhs.data(), ld, n, k, out, 0);
  for (int64_t j = 0; j < std::min(m, n); ++j)
    out(n, j) = s[static_cast<size_t>(j)];
  out(n + 1, 0) = static_cast<T>(rank);
}

} // namespace

// The C entry points, one per op and dtype: real and complex matrices (the
// singular values and eigenvalues of a complex one packed as complex numbers).
#define TINYMLIR_LINALG_KERNELS(Name, T)                                                           \
  extern "C" void tinymlir_solve_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, y),                  \
                                        TINYMLIR_ROWS(T, out), int64_t) {                          \
    auto rhs = TINYMLIR_ROWS_OF(T, y);                                                             \
    solve(TINYMLIR_ROWS_OF(T, a), &rhs, TINYMLIR_ROWS_OF(T, out));                                 \
  }                                                                                                \
  extern "C" void tinymlir_inv_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, out), int64_t) {       \
    solve<T>(TINYMLIR_ROWS_OF(T, a), nullptr, TINYMLIR_ROWS_OF(T, out));                           \
  }                                                                                                \
  extern "C" void tinymlir_cholesky_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, out), int64_t) {  \
    cholesky(TINYMLIR_ROWS_OF(T, a), TINYMLIR_ROWS_OF(T, out));                                    \
  }                                                                                                \
  extern "C" void tinymlir_det_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, out), int64_t) {       \
    determinant(TINYMLIR_ROWS_OF(T, a), TINYMLIR_ROWS_OF(T, out), false);                          \
  }                                                                                                \
  extern "C" void tinymlir_slogdet_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, out), int64_t) {   \
    determinant(TINYMLIR_ROWS_OF(T, a), TINYMLIR_ROWS_OF(T, out), true);                           \
  }                                                                                                \
  extern "C" void tinymlir_eigh_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, out), int64_t) {      \
    eigh(TINYMLIR_ROWS_OF(T, a), TINYMLIR_ROWS_OF(T, out));                                        \
  }                                                                                                \
  extern "C" void tinymlir_svd_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, out), int64_t flag) {  \
    svd(TINYMLIR_ROWS_OF(T, a), TINYMLIR_ROWS_OF(T, out), flag);                                   \
  }                                                                                                \
  extern "C" void tinymlir_qr_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, out), int64_t m) {      \
    qr(TINYMLIR_ROWS_OF(T, a), TINYMLIR_ROWS_OF(T, out), m);                                       \
  }                                                                                                \
  extern "C" void tinymlir_lstsq_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, y),                  \
                                        TINYMLIR_ROWS(T, out), int64_t) {                          \
    lstsq(TINYMLIR_ROWS_OF(T, a), TINYMLIR_ROWS_OF(T, y), TINYMLIR_ROWS_OF(T, out));               \
  }

TINYMLIR_LINALG_KERNELS(f32, float)
TINYMLIR_LINALG_KERNELS(f64, double)
TINYMLIR_LINALG_KERNELS(c64, cfloat)
TINYMLIR_LINALG_KERNELS(c128, cdouble)

tinymlir::detail::RuntimeSymbols tinymlir::detail::linalgRuntimeSymbols() {
  RuntimeSymbols out;
#define TINYMLIR_LINALG_SYMBOL(op, Name, name)                                                     \
  out.push_back(symbol("tinymlir_" #op "_" name, &tinymlir_##op##_##Name));
#define TINYMLIR_LINALG_SYMBOLS(Name, name)                                                        \
  TINYMLIR_LINALG_SYMBOL(cholesky, Name, name)                                                     \
  TINYMLIR_LINALG_SYMBOL(solve, Name, name)                                                        \
  TINYMLIR_LINALG_SYMBOL(inv, Name, name)                                                          \
  TINYMLIR_LINALG_SYMBOL(det, Name, name)                                                          \
  TINYMLIR_LINALG_SYMBOL(slogdet, Name, name)                                                      \
  TINYMLIR_LINALG_SYMBOL(eigh, Name, name)                                                         \
  TINYMLIR_LINALG_SYMBOL(svd, Name, name)                                                          \
  TINYMLIR_LINALG_SYMBOL(qr, Name, name)                                                           \
  TINYMLIR_LINALG_SYMBOL(lstsq, Name, name)
  TINYMLIR_LINALG_SYMBOLS(f32, "float32")
  TINYMLIR_LINALG_SYMBOLS(f64, "float64")
  TINYMLIR_LINALG_SYMBOLS(c64, "complex64")
  TINYMLIR_LINALG_SYMBOLS(c128, "complex128")
  return out;
}
