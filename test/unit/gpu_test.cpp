// The NVIDIA GPU target. Without a GPU (every CI run):
//  - GpuLowering: for elementwise, reduction, softmax, layer norm, matmul,
//    batch matmul and attention programs, the host function of the `gpu` stage
//    is launches only (gpu.launch_func; no scf., linalg., host memref.alloc or
//    direct loads/stores), matmul kernels stage tiles in workgroup memory with
//    gpu.barrier, and the lowered module launches PTX from a gpu.binary;
//  - GpuPtx: every program's PTX is accepted by ptxas (sm_90, and sm_75 for the
//    second target), or the test says why it skips;
//  - GpuEmulation: the same kernels, run on the CPU by the emulator
//    (TINYMLIR_GPU_EMULATE=1, one OpenMP thread per GPU thread), match the
//    CPU target, ragged shapes included;
//  - GpuRuntime: asking for the GPU without a driver is a clear Error.
// With a GPU (GpuDevice, skipped otherwise): GPU results match the CPU target
// within 2e-5, and resident weights are uploaded once.
#include "test_util.h"
#include "numpy_ref.h"
#include "programs.h"

#include <unistd.h>

#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

using namespace tinymlir;
using tinymlir::test::allClose;
using tinymlir::test::count;
using tinymlir::test::errorOf;
using tinymlir::test::gamma;
using tinymlir::test::randomArray;

namespace {

/// ptxas from PATH, else $CUDA_HOME/bin (CUDA_HOME defaulting to
/// /usr/local/cuda, where the toolkit installs); nullopt if neither has it.
std::optional<std::string> findPtxas() {
  std::vector<std::filesystem::path> candidates;
  if (const char *path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty())
        candidates.push_back(std::filesystem::path(dir) / "ptxas");
  }
  const char *home = std::getenv("CUDA_HOME");
  candidates.push_back(std::filesystem::path(home && *home ? home : "/usr/local/cuda") / "bin" /
                       "ptxas");
  for (const auto &c : candidates)
    if (::access(c.c_str(), X_OK) == 0)
      return c.string();
  return std::nullopt;
}

JitOptions gpuOptions(bool emulate = false, const char *chips = "sm_90,sm_75") {
  JitOptions o;
  o.target = Target::GPU;
  o.gpuEmulate = emulate;
  o.gpuChips = chips;
  return o;
}

/// The tolerance (rtol = atol) between two targets for a program whose
/// arithmetic is in `computeType` (the first input's dtype here: float32
/// programs may return float64, as gelu and attention promote, but their
/// rounding is float32's). Each target's sums and products, of at most
/// K = 320 terms in these programs, are within gamma_K of the exact values
/// relative to magnitudes below 4 for these inputs (normal, std 1); math
/// functions (a few ulp) are far inside that. Both err: factor 2.
double crossTargetTolerance(DType computeType) { return 2 * 4 * gamma(320, computeType); }

/// The `gpu` stage split into the host part and the kernels (gpu.module).
struct Split {
  std::string host, kernels;
};
Split split(const std::string &gpuStage) {
  Split s;
  std::istringstream in(gpuStage);
  std::string line;
  bool inKernels = false;
  while (std::getline(in, line)) {
    if (line.rfind("  gpu.module @", 0) == 0)
      inKernels = true;
    (inKernels ? s.kernels : s.host) += line + "\n";
    if (inKernels && line == "  }")
      inKernels = false;
  }
  return s;
}

/// A program: compiled for a target from its example inputs.
struct Program {
  std::string name;
  std::function<Compiled(const JitOptions &)> compile;
  std::vector<Array> inputs;
  int products = 0;    // matmul / batch_matmul ops
  bool emulate = true; // small enough for the emulator
};

Tensor elementwise(const Tensor &x, const Tensor &g) { return test::gelu(x * g + 1); }
Tensor rowSum(const Tensor &x) { return sum(x, 1); }
Tensor columnMax(const Tensor &x) { return max(x, 0); }
Tensor total(const Tensor &x) { return sum(x); }
Tensor rank4(const Tensor &x) { return sum(x * 2, 1) + max(x, 1); } // (3,4,5,6) -> (3,5,6)
Tensor softmaxOf(const Tensor &x) { return test::softmax(x); }
Tensor layerNormOf(const Tensor &x, const Tensor &g, const Tensor &b) {
  return test::layerNorm(x, g, b);
}
Tensor product(const Tensor &a, const Tensor &b) { return matmul(a, b); }
Tensor productTA(const Tensor &a, const Tensor &b) { return matmul(a.T(), b); }
Tensor productTB(const Tensor &a, const Tensor &b) { return matmul(a, b.T()); }
Tensor attentionOf(const Tensor &x, const Tensor &qkvWeight, const Tensor &qkvBias,
                   const Tensor &outWeight, const Tensor &outBias) {
  return test::attention(x, qkvWeight, qkvBias, outWeight, outBias, 4);
}

std::vector<Program> programs() {
  std::vector<Program> p;
  // `tile`: outputs per thread of the matmul kernels ("" = the compiler's choice).
  auto add = [&](std::string name, auto f, std::vector<Array> in, int products,
                 std::string tile = "", bool emulate = true) {
    auto call = [f, in, tile](JitOptions o) {
      if (o.target == Target::GPU && !tile.empty())
        o.gpuMatmulTile = tile;
      auto j = jit(f, o);
      if constexpr (std::is_same_v<decltype(f), decltype(&attentionOf)>)
        return j.compile(in[0], in[1], in[2], in[3], in[4]);
      else if constexpr (std::is_invocable_v<decltype(f), Tensor>)
        return j.compile(in[0]);
      else if constexpr (std::is_invocable_v<decltype(f), Tensor, Tensor>)
        return j.compile(in[0], in[1]);
      else
        return j.compile(in[0], in[1], in[2]);
    };
    p.push_back({name, call, in, products, emulate});
  };
  auto f32 = [](const Shape &s, uint64_t seed, double scale = 1.0) {
    return randomArray(s, DType::f32, seed, scale);
  };
  add("elementwise", &elementwise, {f32({37, 50}, 1), f32({50}, 2)}, 0);
  add("row_sum", &rowSum, {f32({33, 70}, 3)}, 0);
  add("column_max", &columnMax, {randomArray({33, 70}, DType::f64, 4)}, 0);
  add("total", &total, {f32({3, 5, 7}, 5)}, 0);
  // Rank 4: the outermost dimension runs sequentially in each thread.
  add("rank4", &rank4, {f32({3, 4, 5, 6}, 35)}, 0);
  add("softmax", &softmaxOf, {f32({7, 300}, 6)}, 0);
  add("layer_norm", &layerNormOf, {f32({9, 48}, 7), f32({48}, 8), f32({48}, 9)}, 0);
  // Ragged M, N and K everywhere (K tiles of 16).
  add("matmul", &product, {f32({33, 70}, 10), f32({70, 19}, 11)}, 1);
  add("matmul_2x2", &product, {f32({45, 40}, 12), f32({40, 70}, 13)}, 1, "2x2");
  add("matmul_4x4", &product, {f32({70, 20}, 14), f32({20, 130}, 15)}, 1, "4x4");
  add("matmul_4x1", &product, {f32({70, 36}, 16), f32({36, 20}, 17)}, 1, "4x1");
  // Transposed operands: read through a view, loaded along their unit stride.
  add("matmul_ta", &productTA, {f32({40, 33}, 31), f32({40, 19}, 32)}, 1, "2x2");
  add("matmul_tb", &productTB, {f32({7, 48}, 33), f32({70, 48}, 34)}, 1, "1x2");
  add("matmul_f64", &product,
      {randomArray({17, 40}, DType::f64, 18), randomArray({40, 23}, DType::f64, 19)}, 1);
  // float64 rows against float32 weights: one product, the weights widened as loaded.
  add("matmul_mixed", &product, {randomArray({5, 40}, DType::f64, 36), f32({40, 23}, 37)}, 1,
      "1x2");
  add("batch_matmul", &product, {f32({3, 17, 9}, 20), f32({3, 9, 21}, 21)}, 1);
  add("batch_matmul_2x2", &product, {f32({2, 40, 9}, 22), f32({2, 9, 50}, 23)}, 1, "2x2");
  add("attention", &attentionOf,
      {f32({7, 32}, 24), f32({32, 96}, 25, 0.2), f32({96}, 26), f32({32, 32}, 27, 0.2),
       f32({32}, 28)},
      4);
  // Large enough for the compiler to choose 4x4 outputs per thread: too many
  // blocks for the emulator (one OS thread per GPU thread).
  add("matmul_large", &product, {f32({1030, 20}, 29), f32({20, 1100}, 30)}, 1, "", false);
  return p;
}

std::optional<std::string> runPtxas(const std::string &ptx, const std::string &arch,
                                    const std::string &name) {
  auto dir = std::filesystem::temp_directory_path() / "tinymlir-gpu-test";
  std::filesystem::create_directories(dir);
  auto file = dir / (name + "-" + arch + ".ptx");
  std::ofstream(file) << ptx;
  auto log = dir / (name + "-" + arch + ".log");
  std::string cmd = *findPtxas() + " -arch=" + arch + " " + file.string() + " -o " +
                    (dir / (name + ".cubin")).string() + " > " + log.string() + " 2>&1";
  if (std::system(cmd.c_str()) == 0)
    return std::nullopt;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool haveGpu(std::string *why) {
  try {
    requireGpu();
    return true;
  } catch (const Error &e) {
    *why = e.what();
    return false;
  }
}

} // namespace

TEST(GpuLowering, HostFunctionIsLaunchesOnly) {
  for (const Program &p : programs()) {
    SCOPED_TRACE(p.name);
    Compiled c = p.compile(gpuOptions());
    ASSERT_EQ(c.target(), Target::GPU);
    Split s = split(c.gpuModule());
    ASSERT_FALSE(s.kernels.empty()) << c.gpuModule();
    EXPECT_GE(count(s.host, "gpu.launch_func"), 1) << s.host;
    for (const char *banned : {"scf.", "linalg.", "affine.", "memref.alloc", "memref.load",
                               "memref.store", "memref.copy"})
      EXPECT_EQ(count(s.host, banned), 0) << banned << " in\n" << s.host;
    EXPECT_GE(count(s.host, "tinymlirGpuInput"), 1);
    EXPECT_EQ(count(s.host, "call @tinymlirGpuCopyOut"), 1);
    // The lowered host module: LLVM dialect, launches of one PTX binary.
    EXPECT_EQ(count(c.lowered(), "gpu.binary @kernels"), 1);
    EXPECT_GE(count(c.lowered(), "gpu.launch_func"), 1);
    EXPECT_EQ(count(c.lowered(), "func.func"), 0);
    EXPECT_EQ(count(c.lowered(), "scf."), 0);
  }
}

TEST(GpuLowering, MatmulKernelsUseWorkgroupMemoryAndBarriers) {
  for (const Program &p : programs()) {
    SCOPED_TRACE(p.name);
    Compiled c = p.compile(gpuOptions());
    Split s = split(c.gpuModule());
    // One kernel per product with two tiles in workgroup memory.
    EXPECT_EQ(count(s.kernels, ") workgroup(%"), p.products) << s.kernels;
    EXPECT_EQ(count(s.kernels, "#gpu.address_space<workgroup>>, %"), p.products);
    if (p.products > 0)
      EXPECT_GE(count(s.kernels, "gpu.barrier"), 2 * p.products);
    else
      EXPECT_EQ(count(s.kernels, "gpu.barrier"), 0);
    if (p.name == "matmul_ta" || p.name == "matmul_tb") // no transposition kernel
      EXPECT_EQ(count(c.gpuModule(), "memref.transpose"), 1) << c.gpuModule();
    EXPECT_EQ(count(c.gpuModule(), "linalg.matmul"), 0);
    EXPECT_EQ(count(c.gpuModule(), "linalg.batch_matmul"), 0);
  }
}

TEST(GpuLowering, TargetIsPartOfTheCacheKey) {
  auto f = jit(product);
  Array a = randomArray({4, 6}, DType::f32, 1), b = randomArray({6, 5}, DType::f32, 2);
  Compiled cpu = f.compile(a, b);
  auto g = jit(product, gpuOptions());
  Compiled gpu = g.compile(a, b);
  EXPECT_EQ(cpu.target(), Target::CPU);
  EXPECT_EQ(gpu.target(), Target::GPU);
  EXPECT_TRUE(cpu.ptx().empty());
  EXPECT_FALSE(gpu.ptx().empty());
  EXPECT_EQ(count(cpu.lowered(), "gpu."), 0);
}

TEST(GpuPtx, EveryProgramAssemblesForSm90AndSm75) {
  if (!findPtxas())
    GTEST_SKIP() << "ptxas is neither on PATH nor in $CUDA_HOME/bin (CUDA toolkit not "
                    "installed): PTX not assembled";
  for (const Program &p : programs()) {
    SCOPED_TRACE(p.name);
    Compiled c = p.compile(gpuOptions());
    ASSERT_NE(c.ptx().find(".target sm_90"), std::string::npos);
    auto failure = runPtxas(c.ptx(), "sm_90", p.name);
    EXPECT_FALSE(failure) << *failure;
    if (p.products > 0)
      EXPECT_NE(c.ptx().find(".shared"), std::string::npos);
  }
  // The second, older target: its PTX is the ptx stage when listed first.
  for (const Program &p : programs()) {
    SCOPED_TRACE(p.name);
    Compiled c = p.compile(gpuOptions(false, "sm_75,sm_90"));
    ASSERT_NE(c.ptx().find(".target sm_75"), std::string::npos);
    auto failure = runPtxas(c.ptx(), "sm_75", p.name);
    EXPECT_FALSE(failure) << *failure;
  }
}

TEST(GpuPtx, MathUsesLibdevice) {
  Compiled c = jit(elementwise, gpuOptions())
                   .compile(randomArray({4, 8}, DType::f32, 1), randomArray({8}, DType::f32, 2));
  // tanh comes from libdevice, linked and inlined: no external calls remain.
  EXPECT_EQ(c.ptx().find(".extern .func"), std::string::npos) << c.ptx();
  EXPECT_EQ(c.ptx().find("__nv_"), std::string::npos);
}

TEST(GpuRuntime, NoDriverIsAClearError) {
  std::string why;
  if (haveGpu(&why))
    GTEST_SKIP() << "a CUDA device is present: " << gpuDescription();
  EXPECT_NE(why.find("[gpu] no CUDA"), std::string::npos) << why;
  auto f = jit(product, gpuOptions());
  Array a = randomArray({4, 6}, DType::f32, 1), b = randomArray({6, 5}, DType::f32, 2);
  std::string error = errorOf([&] { Array r = f(a, b); });
  EXPECT_NE(error.find("[gpu] no CUDA"), std::string::npos) << error;
  // The CPU target is unaffected.
  Array viaCpu = jit(product)(a, b);
  EXPECT_EQ(viaCpu.shape(), (Shape{4, 5}));
}

TEST(GpuEmulation, KernelsMatchTheCpuTarget) {
  for (const Program &p : programs()) {
    if (!p.emulate)
      continue;
    SCOPED_TRACE(p.name);
    Compiled gpu = p.compile(gpuOptions(/*emulate=*/true));
    JitOptions cpuOptions;
    cpuOptions.blas = false;
    Compiled cpu = p.compile(cpuOptions);
    // Emulated: no launches left; kernels with barriers run as OpenMP teams.
    EXPECT_EQ(count(gpu.lowered(), "gpu.launch_func"), 0);
    EXPECT_EQ(count(gpu.lowered(), "omp.parallel") > 0, p.products > 0);
    Array want = cpu.call(p.inputs);
    Array got = gpu.call(p.inputs);
    // float64 results may pass through float32 math, where the CPU target's
    // vectorized exp/tanh/pow (libmvec, a few ulp) and the emulator's scalar
    // libm calls differ in the last bits: the first input's dtype decides.
    double tol = crossTargetTolerance(p.inputs[0].dtype());
    EXPECT_TRUE(allClose(got, want, tol, tol));
  }
}

TEST(GpuDevice, ResultsMatchTheCpuTarget) {
  std::string why;
  if (!haveGpu(&why))
    GTEST_SKIP() << "no CUDA driver/device: " << why;
  for (const Program &p : programs()) {
    SCOPED_TRACE(p.name);
    Compiled gpu = p.compile(gpuOptions());
    Compiled cpu = p.compile(JitOptions{});
    Array want = cpu.call(p.inputs);
    Array got = gpu.call(p.inputs);
    double tol = crossTargetTolerance(p.inputs[0].dtype());
    EXPECT_TRUE(allClose(got, want, tol, tol));
  }
}

TEST(GpuDevice, ResidentWeightsAreUploadedOnce) {
  std::string why;
  if (!haveGpu(&why))
    GTEST_SKIP() << "no CUDA driver/device: " << why;
  Array w = randomArray({64, 96}, DType::f32, 30);
  gpuKeepResident(w);
  auto f = jit(product, gpuOptions());
  auto cpu = jit(product);
  GpuTransferStats before = gpuTransferStats();
  for (int step = 0; step < 3; ++step) {
    Array x = randomArray({5, 64}, DType::f32, 31 + step);
    Array got = f(x, w), want = cpu(x, w);
    EXPECT_TRUE(
        allClose(got, want, crossTargetTolerance(DType::f32), crossTargetTolerance(DType::f32)));
  }
  GpuTransferStats after = gpuTransferStats();
  EXPECT_EQ(after.residentUploads - before.residentUploads, 1u);
  EXPECT_EQ(after.residentHits - before.residentHits, 2u);
  EXPECT_EQ(after.transientUploads - before.transientUploads, 3u); // x at each step
  gpuReleaseResident(w);
  EXPECT_EQ(gpuTransferStats().residentBytes, before.residentBytes);
}
