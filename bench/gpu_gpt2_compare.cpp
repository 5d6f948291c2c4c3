// GPT-2 on the CPU and GPU targets from the same checkpoint: generated tokens
// must be equal, logits close. Built and run by bench/gpu_check.sh (it does
// not need tinymlir-gpt2 --gpu). Weights are made device-resident.
//
//   gpu_gpt2_compare MODEL_DIR TOKENS [--recompute]
#include <tinymlir/gpu.h>
#include "models/gpt2/Model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace tinymlir;

namespace {

struct Run {
  std::vector<int32_t> tokens;
  std::vector<Array> logits;
  double seconds = 0, firstToken = 0;
};

Run generate(const gpt2::Model &model, const std::vector<int32_t> &prompt, int64_t tokens,
             bool recompute) {
  Run r;
  auto start = std::chrono::steady_clock::now();
  auto onToken = [&](int64_t step, int32_t, const Array &logits) {
    if (step == 0)
      r.firstToken =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.logits.push_back(logits.copy());
  };
  gpt2::GenerateOptions how;
  how.incremental = !recompute;
  r.tokens = model.generate(prompt, tokens, how, onToken);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gpu_gpt2_compare MODEL_DIR TOKENS [--recompute]\n");
    return 2;
  }
  std::string dir = argv[1];
  int64_t tokens = std::atoll(argv[2]);
  bool recompute = argc > 3 && std::strcmp(argv[3], "--recompute") == 0;
  try {
    requireGpu();
    std::printf("device: %s\n", gpuDescription().c_str());
    std::vector<int32_t> prompt{464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13};
    JitOptions cpuOptions, gpuOptions;
    gpuOptions.target = Target::GPU;
    gpt2::Model cpu(gpt2::loadCheckpoint(dir), cpuOptions);
    gpt2::Weights weights = gpt2::loadCheckpoint(dir);
    gpt2::Model gpu(std::move(weights), gpuOptions);
    Run c = generate(cpu, prompt, tokens, recompute);
    Run g = generate(gpu, prompt, tokens, recompute);
    double maxDiff = 0;
    for (size_t s = 0; s < std::min(c.logits.size(), g.logits.size()); ++s) {
      std::vector<double> x = c.logits[s].toDoubles(), y = g.logits[s].toDoubles();
      for (size_t i = 0; i < x.size(); ++i)
        maxDiff = std::max(maxDiff, std::fabs(x[i] - y[i]));
    }
    auto print = [](const char *name, const Run &r, int64_t n) {
      std::printf("%s tokens:", name);
      for (int32_t t : r.tokens)
        std::printf(" %d", t);
      std::printf("\n%s: %.2f s (first token %.2f s, then %.1f ms/token)\n", name, r.seconds,
                  r.firstToken, n > 1 ? (r.seconds - r.firstToken) / (n - 1) * 1e3 : 0.0);
    };
    print("cpu", c, tokens);
    print("gpu", g, tokens);
    GpuTransferStats st = gpuTransferStats();
    std::printf("gpu transfers: %zu resident uploads (%.1f MB held), %zu resident hits, %zu "
                "per-call uploads, %.1f MB up, %.1f MB down, %zu launches\n",
                st.residentUploads, st.residentBytes / 1e6, st.residentHits, st.transientUploads,
                st.bytesUploaded / 1e6, st.bytesDownloaded / 1e6, st.launches);
    std::printf("max |logits cpu - gpu| over %zu steps: %.3e\n", c.logits.size(), maxDiff);
    bool same = c.tokens == g.tokens;
    std::printf("tokens %s\n", same ? "EQUAL" : "DIFFER");
    return same ? 0 : 1;
  } catch (const Error &e) {
    std::fprintf(stderr, "gpu_gpt2_compare: %s\n", e.what());
    return 2;
  }
}
