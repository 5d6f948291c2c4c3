// Benchmarks: compiled tinymlir functions against peers measured in the same
// run (NumPy through bench/numpy_peers.py, OpenBLAS called directly). Medians
// over repeats after warm-up; compile time reported separately.
//
//   tinymlir-bench [--only NAME] [--threads N] [--seconds S]
#include "models/gpt2/Model.h"
#include "models/nn/Kernels.h"

#include <tinymlir/tinymlir.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <thread>

using namespace tinymlir;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// Median seconds of `f` over repeats filling about `budget` seconds.
double median(const std::function<void()> &f, double budget) {
  for (int i = 0; i < 3; ++i)
    f();
  std::vector<double> times;
  auto start = Clock::now();
  while (times.size() < 5 || (seconds(start, Clock::now()) < budget && times.size() < 500)) {
    auto t0 = Clock::now();
    f();
    times.push_back(seconds(t0, Clock::now()));
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

Array randn(const Shape &shape, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
  Array a = Array::empty(shape, DType::f32);
  float *p = a.data<float>();
  for (int64_t i = 0; i < a.size(); ++i)
    p[i] = normal(rng);
  return a;
}

std::map<std::string, double> numpyPeers(const std::string &source, const std::string &only) {
  std::string command = "/usr/bin/python3 " + source + "/bench/numpy_peers.py";
  if (!only.empty())
    command += " --only " + only;
  std::map<std::string, double> peers;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return peers;
  char line[4096];
  while (fgets(line, sizeof line, pipe)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("name"))
      peers[j["name"]] = j["median_s"];
  }
  pclose(pipe);
  return peers;
}

struct Row {
  std::string name, peer;
  double ours = 0, theirs = 0, compile = 0;
};

void print(const Row &r) {
  std::printf("%-28s %12.3f ms %12.3f ms  %-10s %8.2fx  compile %8.1f ms\n", r.name.c_str(),
              r.ours * 1e3, r.theirs * 1e3, r.peer.c_str(), r.theirs > 0 ? r.theirs / r.ours : 0.0,
              r.compile * 1e3);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tinymlir benchmarks against NumPy and OpenBLAS, measured in the same run."};
  std::string only;
  int threads = 0;
  double budget = 1.0;
  app.add_option("--only", only,
                 "run the benchmarks whose name starts with this ('machine': bandwidth, sgemm and "
                 "dgemm; 'bandwidth': bandwidth alone; 'prefill-products': a 256-token GPT-2 "
                 "124M prefill's products alone)");
  app.add_option("--threads", threads, "OpenBLAS threads (NumPy's peer uses its default)");
  app.add_option("--seconds", budget, "time budget per measurement");
  int64_t rows = 1;
  app.add_option("--rows", rows,
                 "--only decode: rows of the products (batched decoding: JitOptions::streamRows)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  bool float32 = false;
  app.add_flag("--float32", float32,
               "--only decode: float32 rows (--precision float32), not float64");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0)
    openblas_set_num_threads(threads);
  auto wanted = [&](const std::string &name) { return only.empty() || name.rfind(only, 0) == 0; };

  if (only == "machine" || only == "bandwidth") {
    // Memory read bandwidth (all threads) and sgemm throughput: the bounds the
    // GPT-2 benchmarks (bench/gpt2_bench.py) are compared against.
    const size_t n = size_t{1} << 28; // 1 GB of float32: far more than any cache
    std::vector<float> buffer(n, 1.0f);
    volatile float sink = 0; // keeps the reads alive
    int workers = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
    double read = median(
        [&] {
          std::vector<std::thread> pool;
          std::vector<float> sums(workers);
          for (int t = 0; t < workers; ++t)
            pool.emplace_back([&, t] {
              float s[8] = {};
              size_t lo = n / workers * t, hi = n / workers * (t + 1);
              for (size_t i = lo; i < hi; i += 8)
                for (int l = 0; l < 8; ++l)
                  s[l] += buffer[i + l];
              sums[t] = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
            });
          for (auto &t : pool)
            t.join();
          for (float v : sums)
            sink += v;
        },
        budget);
    if (only == "bandwidth") {
      std::printf("{\"read_bandwidth_gbs\": %.3f, \"threads\": %d}\n", n * 4.0 / read / 1e9,
                  workers);
      return 0;
    }
    Array a = randn({256, 768}, 1), w = randn({768, 3072}, 2),
          c = Array::empty({256, 3072}, DType::f32);
    double gemm = median(
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 256, 3072, 768, 1.0f,
                      a.data<float>(), 768, w.data<float>(), 3072, 0.0f, c.data<float>(), 3072);
        },
        budget);
    Array a64 = a.astype(DType::f64), w64 = w.astype(DType::f64);
    Array c64 = Array::empty({256, 3072}, DType::f64);
    double dgemm = median(
        [&] {
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 256, 3072, 768, 1.0,
                      a64.data<double>(), 768, w64.data<double>(), 3072, 0.0, c64.data<double>(),
                      3072);
        },
        budget);
    std::printf("{\"read_bandwidth_gbs\": %.3f, \"sgemm_gflops\": %.3f, \"dgemm_gflops\": %.3f, "
                "\"threads\": %d}\n",
                n * 4.0 / read / 1e9, 2.0 * 256 * 768 * 3072 / gemm / 1e9,
                2.0 * 256 * 768 * 3072 / dgemm / 1e9, workers);
    return 0;
  }

  if (only == "prefill-products") {
    // The products of a 256-token prefill of GPT-2 124M alone, cblas called
    // directly: 12 layers of (256,768)@(768,2304), (768,768), (768,3072) and
    // (256,3072)@(3072,768), each layer with its own weights (113 MB in
    // float32), read from memory as a prefill reads them. The ceiling of the
    // prefill's rate with these BLAS calls; dgemm's weights are float64 here,
    // converted beforehand.
    const int64_t M = 256, C = 768, L = 12;
    const int64_t shapes[4][2] = {{C, 3 * C}, {C, C}, {C, 4 * C}, {4 * C, C}};
    auto layers = [&](DType dtype) {
      std::vector<Array> weights;
      for (int64_t l = 0; l < L; ++l)
        for (const auto &kn : shapes)
          weights.push_back(randn({kn[0], kn[1]}, 10 + l).astype(dtype));
      Array x = randn({M, 4 * C}, 1).astype(dtype), y = Array::empty({M, 4 * C}, dtype);
      return median(
          [&] {
            for (const Array &w : weights) {
              const int m = static_cast<int>(M), k = static_cast<int>(w.dim(0)),
                        n = static_cast<int>(w.dim(1));
              if (dtype == DType::f32)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                            x.data<float>(), k, w.data<float>(), n, 0.0f, y.data<float>(), n);
              else
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0,
                            x.data<double>(), k, w.data<double>(), n, 0.0, y.data<double>(), n);
            }
          },
          budget);
    };
    const double flops = 2.0 * M * L * 12 * C * C;
    double s = layers(DType::f32), d = layers(DType::f64);
    std::printf("{\"sgemm_s\": %.6f, \"dgemm_s\": %.6f, \"sgemm_gflops\": %.3f, "
                "\"dgemm_gflops\": %.3f}\n",
                s, d, flops / s / 1e9, flops / d / 1e9);
    return 0;
  }

  if (only.rfind("decode", 0) == 0) {
    // Decoding's products: one float64 row (float32 with --float32) against
    // float32 weights (read directly, not converted), as GB/s of weights streamed.
    JitOptions options;
    options.streamRows = rows;
    const std::string r = std::to_string(rows);
    auto report = [&](const std::string &name, auto fn, const Array &x, const Array &w) {
      auto f = jit(fn, options);
      Compiled c = f.compile(x, w);
      std::vector<Array> inputs{x, w};
      Array out = Array::empty(c.resultShape(), c.resultDType());
      double t = median([&] { c.callInto(inputs, out); }, budget);
      // From memory, as in decoding: copies of the weights that together
      // exceed the last-level cache, used in turn.
      const size_t copies = std::max<size_t>(2, (size_t{256} << 20) / w.nbytes() + 1);
      std::vector<std::vector<Array>> rotating;
      for (size_t i = 0; i < copies; ++i)
        rotating.push_back({x, w.copy()});
      size_t next = 0;
      double cold = median([&] { c.callInto(rotating[next++ % copies], out); }, budget);
      std::printf("%-34s %8.3f ms %8.2f GB/s of weights in cache, %8.2f GB/s from memory, "
                  "%6.2f GMAC/s\n",
                  name.c_str(), t * 1e3, w.nbytes() / t / 1e9, w.nbytes() / cold / 1e9,
                  double(x.dim(0)) * w.size() / cold / 1e9);
    };
    auto plain = [](const Tensor &x, const Tensor &w) { return matmul(x, w); };
    auto tied = [](const Tensor &x, const Tensor &w) { return matmul(x, w.T()); };
    const DType rowType = float32 ? DType::f32 : DType::f64;
    Array x768 = randn({rows, 768}, 1).astype(rowType),
          x3072 = randn({rows, 3072}, 2).astype(rowType);
    report("decode (" + r + ",768)@(768,2304)", plain, x768, randn({768, 2304}, 3));
    report("decode (" + r + ",768)@(768,3072)", plain, x768, randn({768, 3072}, 4));
    report("decode (" + r + ",3072)@(3072,768)", plain, x3072, randn({3072, 768}, 5));
    report("decode (" + r + ",768)@(768,768)", plain, x768, randn({768, 768}, 6));
    report("decode (" + r + ",768)@(50257,768).T", tied, x768, randn({50257, 768}, 7));
    report("decode (" + r + ",768)@(3072,768).T", tied, x768, randn({3072, 768}, 4));
    report("decode (" + r + ",3072)@(768,3072).T", tied, x3072, randn({768, 3072}, 5));
    return 0;
  }

  std::cerr << "measuring NumPy peers...\n";
  std::map<std::string, double> peers = numpyPeers(TINYMLIR_SOURCE_DIR, only);
  std::printf("%-28s %15s %15s  %-10s %9s\n", "benchmark", "tinymlir", "peer", "peer is",
              "speedup");

  // Elementwise and reductions on (1024, 3072) float32.
  Array x = randn({1024, 3072}, 1), g = randn({3072}, 2, 0.1), b = randn({3072}, 3, 0.1);
  auto kernel = [&](const std::string &name, auto fn, auto... args) {
    if (!wanted(name))
      return;
    auto f = jit(fn);
    Compiled c = f.compile(args...);
    std::vector<Array> inputs{args...};
    Array out = Array::empty(c.resultShape(), c.resultDType());
    Row r{name, "numpy", median([&] { c.callInto(inputs, out); }, budget), peers[name],
          c.compileSeconds()};
    print(r);
  };
  kernel("gelu_1024x3072_f32", [](const Tensor &t) { return gelu(t); }, x);
  kernel("softmax_1024x3072_f32", [](const Tensor &t) { return softmax(t); }, x);
  kernel(
      "layer_norm_1024x3072_f32",
      [](const Tensor &t, const Tensor &gain, const Tensor &bias) {
        return layerNorm(t, gain, bias);
      },
      x, g, b);

  // Matrix products through the JIT against cblas_sgemm called directly.
  auto product = [&](int64_t m, int64_t k, int64_t n) {
    std::string name =
        "matmul_" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + "_f32";
    if (!wanted(name))
      return;
    Array a = randn({m, k}, 4), w = randn({k, n}, 5);
    auto f = jit([](const Tensor &p, const Tensor &q) { return matmul(p, q); });
    Compiled c = f.compile(a, w);
    Array out = Array::empty({m, n}, DType::f32);
    std::vector<Array> inputs{a, w};
    double ours = median([&] { c.callInto(inputs, out); }, budget);
    Array ref = Array::empty({m, n}, DType::f32);
    double blas = median(
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data<float>(), k,
                      w.data<float>(), n, 0.0f, ref.data<float>(), n);
        },
        budget);
    print({name, "openblas", ours, blas, c.compileSeconds()});
    print({name, "numpy", ours, peers[name], c.compileSeconds()});
  };
  product(768, 768, 768);
  product(16, 768, 2304);

  // GPT-2 124M sublayers.
  const int64_t C = 768;
  LayerNormParams ln{randn({C}, 6, 0.1), randn({C}, 7, 0.1)};
  LinearParams qkv{randn({C, 3 * C}, 8, 0.02), randn({3 * C}, 9, 0.02)};
  LinearParams out{randn({C, C}, 10, 0.02), randn({C}, 11, 0.02)};
  LinearParams up{randn({C, 4 * C}, 12, 0.02), randn({4 * C}, 13, 0.02)};
  LinearParams down{randn({4 * C, C}, 14, 0.02), randn({C}, 15, 0.02)};
  for (int64_t T : {16, 256}) {
    Array xt = randn({T, C}, 16);
    std::string a = "attend_T" + std::to_string(T) + "_C768_H12";
    if (wanted(a)) {
      auto f = jit([](const Tensor &v, const LayerNormParams &l, const LinearParams &p,
                      const LinearParams &o, int64_t h) { return gpt2::attend(v, l, p, o, h); });
      Compiled c = f.compile(xt, ln, qkv, out, int64_t{12});
      print({a, "numpy", median([&] { f(xt, ln, qkv, out, int64_t{12}); }, budget), peers[a],
             c.compileSeconds()});
    }
    std::string ff = "feedforward_T" + std::to_string(T) + "_C768";
    if (wanted(ff)) {
      auto f = jit([](const Tensor &v, const LayerNormParams &l, const LinearParams &u,
                      const LinearParams &d) { return gpt2::feedforward(v, l, u, d); });
      Compiled c = f.compile(xt, ln, up, down);
      print({ff, "numpy", median([&] { f(xt, ln, up, down); }, budget), peers[ff],
             c.compileSeconds()});
    }
  }
  return 0;
}
