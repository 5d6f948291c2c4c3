// The GPU target's matmul kernels against cuBLAS, on the largest products of
// GPT-2 124M (the tied output projection x @ wte.T, the MLP up-projection)
// and a large square product. Built and run by bench/gpu_check.sh on a
// machine with an NVIDIA GPU; cuBLAS is loaded with dlopen from the CUDA
// toolkit (no link-time dependency).
//
//   gpu_matmul_vs_cublas [T]        (T: rows of the GPT-2 products, default 128)
//
// tinymlir: device time of the matmul kernel (CUDA events, TINYMLIR_GPU_PROFILE)
// and the whole call (weights resident; activations uploaded, result copied
// back). cuBLAS: cublasSgemm (FP32, no TF32) device time. Results are compared
// with cuBLAS's.
#include "runtime/gpu/CudaDriver.h"
#include "runtime/gpu/GpuRuntime.h"

#include <tinymlir/tinymlir.h>

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace tinymlir;

namespace {

using Handle = void *;
struct Cublas {
  int (*create)(Handle *);
  int (*setStream)(Handle, cuda::CUstream);
  int (*sgemm)(Handle, int, int, int, int, int, const float *, const float *, int, const float *,
               int, const float *, float *, int);
};
constexpr int kOpN = 0, kOpT = 1;

bool loadCublas(Cublas &c, std::string &why) {
  const char *names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12",
                         "/usr/local/cuda/lib64/libcublas.so"};
  void *lib = nullptr;
  for (const char *n : names)
    if ((lib = dlopen(n, RTLD_NOW | RTLD_GLOBAL)))
      break;
  if (!lib) {
    why = dlerror();
    return false;
  }
  c.create = reinterpret_cast<decltype(c.create)>(dlsym(lib, "cublasCreate_v2"));
  c.setStream = reinterpret_cast<decltype(c.setStream)>(dlsym(lib, "cublasSetStream_v2"));
  c.sgemm = reinterpret_cast<decltype(c.sgemm)>(dlsym(lib, "cublasSgemm_v2"));
  if (!c.create || !c.setStream || !c.sgemm) {
    why = "libcublas lacks cublasCreate_v2/cublasSetStream_v2/cublasSgemm_v2";
    return false;
  }
  return true;
}

Array random(const Shape &shape, unsigned seed) {
  Array a = Array::empty(shape, DType::f32);
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float *p = a.data<float>();
  for (int64_t i = 0; i < a.size(); ++i)
    p[i] = normal(gen);
  return a;
}

Tensor product(const Tensor &a, const Tensor &b) { return matmul(a, b); }
Tensor productTransposed(const Tensor &a, const Tensor &b) { return matmul(a, b.T()); }

struct Case {
  std::string name;
  int64_t m, n, k;
  bool transposedB; // b is (n, k): a @ b.T
};

void check(cuda::CUresult r, const char *what) {
  if (r) {
    std::fprintf(stderr, "%s failed: %s\n", what, cuda::errorText(r).c_str());
    std::exit(1);
  }
}

/// cuBLAS time per product (seconds) and its result.
double cublasTime(const Cublas &blas, Handle h, const Case &c, const Array &a, const Array &b,
                  Array &out, int reps) {
  const cuda::Device *d = cuda::current();
  const cuda::Api &api = d->api;
  cuda::CUdeviceptr da, db, dc;
  check(api.cuMemAlloc(&da, a.nbytes()), "cuMemAlloc");
  check(api.cuMemAlloc(&db, b.nbytes()), "cuMemAlloc");
  check(api.cuMemAlloc(&dc, out.nbytes()), "cuMemAlloc");
  check(api.cuMemcpyHtoD(da, a.data(), a.nbytes()), "cuMemcpyHtoD");
  check(api.cuMemcpyHtoD(db, b.data(), b.nbytes()), "cuMemcpyHtoD");
  cuda::CUstream s = cuda::threadStream();
  blas.setStream(h, s);
  float one = 1, zero = 0;
  auto run = [&] {
    // Row-major C = A B is column-major C^T = B^T A^T.
    const float *A = reinterpret_cast<const float *>(da), *B = reinterpret_cast<const float *>(db);
    float *C = reinterpret_cast<float *>(dc);
    int m = int(c.m), n = int(c.n), k = int(c.k);
    int status = c.transposedB ? blas.sgemm(h, kOpT, kOpN, n, m, k, &one, B, k, A, k, &zero, C, n)
                               : blas.sgemm(h, kOpN, kOpN, n, m, k, &one, B, n, A, k, &zero, C, n);
    if (status) {
      std::fprintf(stderr, "cublasSgemm failed: %d\n", status);
      std::exit(1);
    }
  };
  run();
  cuda::CUevent start, end;
  check(api.cuEventCreate(&start, 0), "cuEventCreate");
  check(api.cuEventCreate(&end, 0), "cuEventCreate");
  check(api.cuEventRecord(start, s), "cuEventRecord");
  for (int i = 0; i < reps; ++i)
    run();
  check(api.cuEventRecord(end, s), "cuEventRecord");
  check(api.cuEventSynchronize(end), "cuEventSynchronize");
  float ms = 0;
  check(api.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  check(api.cuMemcpyDtoHAsync(out.data(), dc, out.nbytes(), s), "cuMemcpyDtoH");
  check(api.cuStreamSynchronize(s), "cuStreamSynchronize");
  api.cuMemFree(da);
  api.cuMemFree(db);
  api.cuMemFree(dc);
  return ms * 1e-3 / reps;
}

} // namespace

int main(int argc, char **argv) {
  setenv("TINYMLIR_GPU_PROFILE", "1", 1);
  int64_t T = argc > 1 ? std::atoll(argv[1]) : 128;
  try {
    requireGpu();
  } catch (const Error &e) {
    std::fprintf(stderr, "gpu_matmul_vs_cublas: %s\n", e.what());
    return 2;
  }
  std::printf("device: %s\n", gpuDescription().c_str());
  Cublas blas;
  std::string why;
  if (!loadCublas(blas, why)) {
    std::fprintf(stderr, "gpu_matmul_vs_cublas: cannot load cuBLAS: %s\n", why.c_str());
    return 2;
  }
  Handle h = nullptr;
  if (blas.create(&h)) {
    std::fprintf(stderr, "cublasCreate failed\n");
    return 2;
  }
  std::vector<Case> cases = {{"gpt2 lm head  x @ wte.T", T, 50257, 768, true},
                             {"gpt2 mlp up   x @ w_fc", T, 3072, 768, false},
                             {"square        a @ b", 4096, 4096, 4096, false}};
  JitOptions gpu;
  gpu.target = Target::GPU;
  auto plain = jit(product, gpu);
  auto transposed = jit(productTransposed, gpu);
  std::printf("%-26s %18s %10s %9s %10s %9s %7s %9s\n", "product (M x N x K)", "", "kernel ms",
              "GFLOP/s", "cuBLAS ms", "GFLOP/s", "ratio", "call ms");
  bool ok = true;
  for (const Case &c : cases) {
    Array a = random({c.m, c.k}, 1);
    Array b = c.transposedB ? random({c.n, c.k}, 2) : random({c.k, c.n}, 2);
    gpuKeepResident(b);
    auto call = [&] { return c.transposedB ? Array(transposed(a, b)) : Array(plain(a, b)); };
    Array got = call(); // compiles, uploads the weights
    gpuKernelProfile(/*reset=*/true);
    int reps = c.m * c.n * c.k > (int64_t(1) << 33) ? 5 : 20;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
      got = call();
    double callSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
    double kernel = 0;
    for (const GpuKernelTime &t : gpuKernelProfile(true))
      if (t.kernel.find("matmul") != std::string::npos)
        kernel += t.seconds / reps;
    Array want = Array::empty({c.m, c.n}, DType::f32);
    double cublas = cublasTime(blas, h, c, a, b, want, reps);
    double maxDiff = 0, maxRef = 0;
    const float *g = got.data<float>(), *w = want.data<float>();
    for (int64_t i = 0; i < want.size(); ++i) {
      maxDiff = std::max(maxDiff, double(std::fabs(g[i] - w[i])));
      maxRef = std::max(maxRef, double(std::fabs(w[i])));
    }
    double flop = 2.0 * c.m * c.n * c.k;
    std::printf("%-26s %5lldx%5lldx%5lld %10.3f %9.0f %10.3f %9.0f %7.2f %9.3f  max|diff| %.2e "
                "(of %.1f)\n",
                c.name.c_str(), (long long)c.m, (long long)c.n, (long long)c.k, kernel * 1e3,
                flop / kernel * 1e-9, cublas * 1e3, flop / cublas * 1e-9, kernel / cublas,
                callSeconds * 1e3, maxDiff, maxRef);
    ok = ok && maxDiff <= 1e-4 * std::max(1.0, maxRef) * std::sqrt(double(c.k) / 64);
    gpuReleaseResident(b);
  }
  std::printf("results %s cuBLAS\n", ok ? "match" : "DIFFER FROM");
  return ok ? 0 : 1;
}
