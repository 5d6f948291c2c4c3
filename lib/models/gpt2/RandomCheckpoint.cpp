// Random-weight GPT-2 checkpoints (see RandomCheckpoint.h).
#include "models/gpt2/RandomCheckpoint.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace tinymlir::gpt2 {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
[[noreturn]] void fail(const std::string &path, const std::string &reason) {
  throw Error("[checkpoint] " + path + ": " + reason);
}
std::string joinPath(const std::string &dir, const std::string &file) {
  return (fs::path(dir) / file).string();
}
} // namespace

// The generator must give identical bits everywhere: only +, -, *, / and sqrt
// (all correctly rounded in IEEE 754), no libm transcendental functions, and no
// fused multiply-add contraction.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// Natural log of x > 0 from + - * / only: x = m 2^e with m in [sqrt(1/2), sqrt(2)),
/// log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172.
double portableLog(double x) {
  int e = 0;
  double m = std::frexp(x, &e); // exact
  if (m < 0.70710678118654752440) {
    m *= 2;
    e -= 1;
  }
  double s = (m - 1) / (m + 1), s2 = s * s;
  double term = s, sum = 0;
  for (int k = 1; k <= 31; k += 2) {
    sum += term / k;
    term *= s2;
  }
  return 2 * sum + static_cast<double>(e) * 0.69314718055994530942;
}

/// Standard normal samples: Marsaglia's polar method over splitmix64.
class NormalGenerator {
public:
  explicit NormalGenerator(uint64_t seed) : state_(seed) {}
  double next() {
    if (hasSpare_) {
      hasSpare_ = false;
      return spare_;
    }
    for (;;) {
      double u = uniform(), v = uniform();
      double s = u * u + v * v;
      if (s >= 1 || s == 0)
        continue;
      double f = std::sqrt(-2 * portableLog(s) / s);
      spare_ = v * f;
      hasSpare_ = true;
      return u * f;
    }
  }

private:
  /// Uniform in [-1, 1) with 53 random bits (exact arithmetic).
  double uniform() { return static_cast<double>(splitmix64(state_) >> 11) * 0x1p-52 - 1.0; }
  uint64_t state_;
  double spare_ = 0;
  bool hasSpare_ = false;
};

void fillTensor(std::vector<float> &buf, const std::string &name, const Config &c, uint64_t seed,
                double weightScale) {
  uint64_t mix = seed;
  uint64_t streamSeed = splitmix64(mix) ^ fnv1a(name);
  NormalGenerator gen(streamSeed);
  auto endsWith = [&](const char *suffix) {
    size_t n = std::strlen(suffix);
    return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
  };
  double offset = 0, scale = weightScale;
  if (endsWith("ln_1.weight") || endsWith("ln_2.weight") || endsWith("ln_f.weight")) {
    offset = 1;
    scale = 0.05;
  } else if (endsWith("ln_1.bias") || endsWith("ln_2.bias") || endsWith("ln_f.bias")) {
    scale = 0.05;
  } else if (endsWith("c_proj.weight")) {
    scale = weightScale / std::sqrt(2.0 * static_cast<double>(c.n_layer));
  }
  for (float &x : buf)
    x = static_cast<float>(offset + scale * gen.next());
}

} // namespace

#if !defined(__clang__) && defined(__GNUC__)
#pragma GCC pop_options
#endif

void writeRandomCheckpoint(const std::string &dir, const Config &config, uint64_t seed,
                           double weightScale) {
  std::string path = joinPath(dir, "model.safetensors");
  validateConfig(config, path);
  if (!(weightScale > 0 && weightScale <= 10))
    fail(path, "weight scale must be in (0, 10], got " + std::to_string(weightScale));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    fail(dir, "cannot create directory: " + ec.message());

  // Name order, as safetensors' Python writer (for equal dtypes) does.
  std::vector<std::string> names = tensorNames(config);
  std::sort(names.begin(), names.end());
  json header = json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const std::string &name : names) {
    Shape shape = expectedShape(config, name);
    uint64_t bytes = static_cast<uint64_t>(numElements(shape)) * sizeof(float);
    header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string headerText = header.dump();
  headerText.append((8 - headerText.size() % 8) % 8, ' ');

  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    fail(tmp, std::string("cannot open for writing: ") + std::strerror(errno));
  auto writeOrFail = [&](const void *p, size_t n) {
    if (n && std::fwrite(p, 1, n, f) != n) {
      int err = errno;
      std::fclose(f);
      std::remove(tmp.c_str());
      fail(tmp, std::string("write failed: ") + std::strerror(err));
    }
  };
  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = static_cast<uint8_t>(static_cast<uint64_t>(headerText.size()) >> (8 * i));
  writeOrFail(len, 8);
  writeOrFail(headerText.data(), headerText.size());
  std::vector<float> buf;
  for (const std::string &name : names) {
    buf.resize(static_cast<size_t>(numElements(expectedShape(config, name))));
    fillTensor(buf, name, config, seed, weightScale);
    writeOrFail(buf.data(), buf.size() * sizeof(float));
  }
  if (std::fclose(f) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    fail(tmp, std::string("write failed: ") + std::strerror(err));
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    fail(path, "cannot rename " + tmp + ": " + ec.message());
  }
  writeConfig(dir, config);
}

} // namespace tinymlir::gpt2
