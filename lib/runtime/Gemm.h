// The BLAS entry points of generated code. A product (or a batch of them) is
// split into column blocks run by one OpenMP team, each block a
// single-threaded OpenBLAS call: the generated loops and BLAS then share one
// pool of threads instead of two that take the cores from each other.
//
//   C[b] = alpha A[b] @ B[b] + beta C[b]   for b < batch; row-major, unit inner
//   stride; C is not read when beta is 0
//
// Both matrix-vector products of one matrix, as one pass over it (what
// NumPy does in two: atax's A^T (A x), bicg, mvt):
//
//   c = alphaP A v + betaP c   and   d = alphaQ A^T w + betaQ d
//
// A is (m, k), row stride lda; c and d are not read when their beta is 0.
// w may be c itself (incw == incc): row i then uses c[i] as just computed.
// No other operand overlaps c or d.
#pragma once

#include <complex>
#include <cstdint>

extern "C" {
void tinymlir_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                    int64_t strideA, const float *b, int64_t ldb, int64_t strideB, float *c,
                    int64_t ldc, int64_t strideC, double alpha, double beta);
void tinymlir_dgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                    int64_t strideA, const double *b, int64_t ldb, int64_t strideB, double *c,
                    int64_t ldc, int64_t strideC, double alpha, double beta);
void tinymlir_cgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const std::complex<float> *a,
                    int64_t lda, int64_t strideA, const std::complex<float> *b, int64_t ldb,
                    int64_t strideB, std::complex<float> *c, int64_t ldc, int64_t strideC,
                    double alpha, double beta);
void tinymlir_zgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const std::complex<double> *a,
                    int64_t lda, int64_t strideA, const std::complex<double> *b, int64_t ldb,
                    int64_t strideB, std::complex<double> *c, int64_t ldc, int64_t strideC,
                    double alpha, double beta);
void tinymlir_sgemv2(int64_t m, int64_t k, const float *a, int64_t lda, const float *v,
                     int64_t incv, float *c, int64_t incc, double alphaP, double betaP,
                     const float *w, int64_t incw, float *d, double alphaQ, double betaQ);
void tinymlir_dgemv2(int64_t m, int64_t k, const double *a, int64_t lda, const double *v,
                     int64_t incv, double *c, int64_t incc, double alphaP, double betaP,
                     const double *w, int64_t incw, double *d, double alphaQ, double betaQ);
}
