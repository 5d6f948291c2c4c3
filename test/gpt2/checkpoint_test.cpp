// Tests for GPT-2 checkpoint loading (config.json + model.safetensors) and the
// random checkpoint writer, checked against an independent NumPy parse.
#include "test_util.h"
#include "models/gpt2/RandomCheckpoint.h"
#include "models/gpt2/Checkpoint.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#ifndef TINYMLIR_SOURCE_DIR
#define TINYMLIR_SOURCE_DIR ""
#endif

using namespace tinymlir;
using namespace tinymlir::gpt2;
using tinymlir::test::errorOf;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

class TempDir {
public:
  TempDir() {
    std::random_device rd;
    auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = fs::temp_directory_path() /
            ("tinymlir_checkpoint_test_" + std::to_string(stamp) + "_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string sub(const std::string &name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

private:
  fs::path path_;
};

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string &path, const std::string &bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool hasNumpy() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return ok;
}

/// Odd sizes so that swapped dimensions show up.
Config smallConfig() { return Config{2, 2, 8, 5, 11, 1e-5}; }

/// A safetensors file taken apart: JSON header and data section.
struct Parts {
  json header;
  std::string data;
};

Parts split(const std::string &bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  return {json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

std::string join(const std::string &headerText, const std::string &data) {
  std::string out(8, '\0');
  uint64_t n = headerText.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>(n >> (8 * i));
  return out + headerText + data;
}

std::string join(const Parts &p, size_t padTo = 8) {
  std::string text = p.header.dump();
  text.append((padTo - text.size() % padTo) % padTo, ' ');
  return join(text, p.data);
}

/// Copies the checkpoint in `src` to `dst`, editing model.safetensors with `edit`.
void copyEdited(const std::string &src, const std::string &dst,
                const std::function<void(Parts &)> &edit) {
  fs::create_directories(dst);
  fs::copy_file(src + "/config.json", dst + "/config.json", fs::copy_options::overwrite_existing);
  Parts p = split(readBytes(src + "/model.safetensors"));
  edit(p);
  writeBytes(dst + "/model.safetensors", join(p));
}

void expectSame(const Array &a, const Array &b, const std::string &what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  EXPECT_EQ(a.toDoubles(), b.toDoubles()) << what;
}

void expectSameWeights(const Weights &a, const Weights &b) {
  expectSame(a.wte, b.wte, "wte");
  expectSame(a.wpe, b.wpe, "wpe");
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) {
    const LayerWeights &x = a.layers[i], &y = b.layers[i];
    expectSame(x.ln_1_w, y.ln_1_w, "ln_1_w");
    expectSame(x.ln_1_b, y.ln_1_b, "ln_1_b");
    expectSame(x.attn_w, y.attn_w, "attn_w");
    expectSame(x.attn_b, y.attn_b, "attn_b");
    expectSame(x.proj_w, y.proj_w, "proj_w");
    expectSame(x.proj_b, y.proj_b, "proj_b");
    expectSame(x.ln_2_w, y.ln_2_w, "ln_2_w");
    expectSame(x.ln_2_b, y.ln_2_b, "ln_2_b");
    expectSame(x.fc_w, y.fc_w, "fc_w");
    expectSame(x.fc_b, y.fc_b, "fc_b");
    expectSame(x.fc_proj_w, y.fc_proj_w, "fc_proj_w");
    expectSame(x.fc_proj_b, y.fc_proj_b, "fc_proj_b");
  }
  expectSame(a.ln_f_w, b.ln_f_w, "ln_f_w");
  expectSame(a.ln_f_b, b.ln_f_b, "ln_f_b");
}

/// The loaded tensor for a Hugging Face name (no prefix).
const Array &byName(const Weights &w, const std::string &name) {
  if (name == "wte.weight")
    return w.wte;
  if (name == "wpe.weight")
    return w.wpe;
  if (name == "ln_f.weight")
    return w.ln_f_w;
  if (name == "ln_f.bias")
    return w.ln_f_b;
  size_t dot = name.find('.', 2);
  const LayerWeights &l = w.layers.at(std::stoul(name.substr(2, dot - 2)));
  std::string rest = name.substr(dot + 1);
  if (rest == "ln_1.weight")
    return l.ln_1_w;
  if (rest == "ln_1.bias")
    return l.ln_1_b;
  if (rest == "attn.c_attn.weight")
    return l.attn_w;
  if (rest == "attn.c_attn.bias")
    return l.attn_b;
  if (rest == "attn.c_proj.weight")
    return l.proj_w;
  if (rest == "attn.c_proj.bias")
    return l.proj_b;
  if (rest == "ln_2.weight")
    return l.ln_2_w;
  if (rest == "ln_2.bias")
    return l.ln_2_b;
  if (rest == "mlp.c_fc.weight")
    return l.fc_w;
  if (rest == "mlp.c_fc.bias")
    return l.fc_b;
  if (rest == "mlp.c_proj.weight")
    return l.fc_proj_w;
  if (rest == "mlp.c_proj.bias")
    return l.fc_proj_b;
  throw std::runtime_error("unknown tensor " + name);
}

/// Independent reader: plain struct/json/np.frombuffer, per-tensor statistics as JSON.
json numpyStats(const TempDir &tmp, const std::string &safetensors) {
  std::string script = tmp.sub("stats.py"), out = tmp.sub("stats.json");
  writeBytes(script, R"(import json, struct, sys
import numpy as np
blob = open(sys.argv[1], 'rb').read()
(n,) = struct.unpack('<Q', blob[:8])
header = json.loads(blob[8:8 + n])
data = blob[8 + n:]
out = {}
for name, e in header.items():
    if name == '__metadata__':
        continue
    begin, end = e['data_offsets']
    a = np.frombuffer(data[begin:end], dtype='<f4').reshape(e['shape'])
    out[name] = {'shape': list(a.shape), 'sum': float(a.astype(np.float64).sum()),
                 'first': float(a.flat[0]), 'last': float(a.flat[-1]),
                 'mean': float(a.mean(dtype=np.float64)), 'std': float(a.std(dtype=np.float64))}
json.dump(out, open(sys.argv[2], 'w'))
)");
  std::string cmd = "/usr/bin/python3 " + script + " " + safetensors + " " + out;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return json::parse(readBytes(out));
}

double sumOf(const Array &a) {
  double s = 0;
  for (double v : a.toDoubles())
    s += v;
  return s;
}

uint64_t fnv1a(const std::string &bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

} // namespace

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

TEST(Checkpoint, ConfigPresetsAndParameterCount) {
  EXPECT_EQ(Config::gpt2_124M().numParameters(), 124439808); // GPT-2 small
  EXPECT_EQ(Config::gpt2_124M().headDim(), 64);
  EXPECT_NO_THROW(validateConfig(Config::tiny(), "tiny"));
  EXPECT_EQ(tensorNames(smallConfig()).size(), 2u + 2 * 12 + 2);
  EXPECT_EQ(expectedShape(smallConfig(), "h.1.mlp.c_proj.weight"), (Shape{32, 8}));
  EXPECT_THROW(expectedShape(smallConfig(), "h.2.ln_1.weight"), Error);
}

TEST(Checkpoint, LoadConfigFromRealGpt2Config) {
  Config c =
      loadConfig(std::string(TINYMLIR_SOURCE_DIR).empty() ? "/work/main/data/gpt2"
                                                          : TINYMLIR_SOURCE_DIR "/data/gpt2");
  EXPECT_EQ(c.n_layer, 12);
  EXPECT_EQ(c.n_head, 12);
  EXPECT_EQ(c.n_embd, 768);
  EXPECT_EQ(c.n_positions, 1024);
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_EQ(c.layer_norm_epsilon, 1e-5);
}

TEST(Checkpoint, ConfigErrors) {
  TempDir tmp;
  auto expectConfigError = [&](const std::string &name, const std::string &text,
                               const std::string &reason) {
    std::string dir = tmp.sub(name);
    fs::create_directories(dir);
    if (!text.empty())
      writeBytes(dir + "/config.json", text);
    std::string path = dir + "/config.json";
    std::string msg = errorOf([&] { loadConfig(dir); });
    EXPECT_EQ(msg.rfind("[checkpoint] " + path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << name << ": " << msg;
  };
  json good = {{"n_layer", 2},         {"n_head", 2},
               {"n_embd", 8},          {"n_positions", 5},
               {"vocab_size", 11},     {"layer_norm_epsilon", 1e-5},
               {"model_type", "gpt2"}, {"activation_function", "gelu_new"}};
  auto with = [&](const char *key, json value) {
    json j = good;
    if (value.is_discarded())
      j.erase(key);
    else
      j[key] = value;
    return j.dump();
  };
  const json drop(json::value_t::discarded);

  expectConfigError("missing", "", "cannot open");
  expectConfigError("activation", with("activation_function", "relu"), "activation_function");
  expectConfigError("divisible", with("n_head", 3), "n_embd (8) must be divisible by n_head (3)");
  expectConfigError("badjson", "{\"n_layer\": ", "not valid JSON");
  expectConfigError("array", "[1, 2]", "not a JSON object");
  expectConfigError("nolayer", with("n_layer", drop), "missing field 'n_layer'");
  expectConfigError("nopositions", with("n_positions", drop), "'n_positions'");
  expectConfigError("negative", with("n_embd", -8), "n_embd must be positive");
  expectConfigError("zero", with("vocab_size", 0), "vocab_size must be positive");
  expectConfigError("float", with("n_layer", 2.5), "field 'n_layer' must be an integer");
  expectConfigError("string", with("n_head", "2"), "field 'n_head' must be an integer");
  expectConfigError("bool", with("n_head", true), "field 'n_head' must be an integer");
  expectConfigError("huge", with("n_embd", 18446744073709551615ull), "field 'n_embd' is too large");
  expectConfigError("big", with("n_layer", 1000000), "n_layer = 1000000 is larger");
  expectConfigError("eps", with("layer_norm_epsilon", 1e-6), "layer_norm_epsilon");
  expectConfigError("type", with("model_type", "llama"), "model_type");
  expectConfigError("inner", with("n_inner", 7), "n_inner");
  expectConfigError("crossattn", with("add_cross_attention", true), "add_cross_attention");
  expectConfigError("hugenumber", "{\"n_layer\": 1e999999}", "not valid JSON");

  // n_ctx stands in for n_positions; defaults for the optional fields; null n_inner.
  std::string dir = tmp.sub("ctx");
  fs::create_directories(dir);
  json j = {{"n_layer", 1}, {"n_head", 1},     {"n_embd", 4},
            {"n_ctx", 9},   {"vocab_size", 3}, {"n_inner", nullptr}};
  writeBytes(dir + "/config.json", j.dump());
  Config c = loadConfig(dir);
  EXPECT_EQ(c.n_positions, 9);
  EXPECT_EQ(c.layer_norm_epsilon, 1e-5);
}

//===----------------------------------------------------------------------===//
// Writing and loading
//===----------------------------------------------------------------------===//

TEST(Checkpoint, RoundTripShapesAndValues) {
  TempDir tmp;
  Config c = smallConfig();
  writeRandomCheckpoint(tmp.str(), c, 7);
  Weights w = loadCheckpoint(tmp.str());
  EXPECT_EQ(w.config.n_layer, 2);
  EXPECT_EQ(w.config.vocab_size, 11);
  Config reread = loadConfig(tmp.str());
  EXPECT_EQ(reread.n_positions, 5);
  ASSERT_EQ(w.layers.size(), 2u);
  for (const std::string &name : tensorNames(c)) {
    const Array &a = byName(w, name);
    EXPECT_EQ(a.shape(), expectedShape(c, name)) << name;
    EXPECT_EQ(a.dtype(), DType::f32) << name;
    EXPECT_TRUE(a.isContiguous()) << name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 4, 0u) << name;
    EXPECT_NE(a.owner(), nullptr) << name;
  }
  EXPECT_EQ(w.wte.shape(), (Shape{11, 8}));
  EXPECT_EQ(w.layers[1].attn_w.shape(), (Shape{8, 24}));
  EXPECT_EQ(w.layers[0].fc_proj_w.shape(), (Shape{32, 8}));
  // All tensors share one mapping that outlives the directory.
  EXPECT_EQ(w.wte.owner(), w.ln_f_b.owner());
  double before = sumOf(w.wte);
  fs::remove_all(tmp.str());
  EXPECT_EQ(sumOf(w.wte), before);
  // The mapping is private: writes are allowed and don't reach the file.
  w.wte.set({0, 0}, 123.0);
  EXPECT_EQ(w.wte.at({0, 0}), 123.0);
}

TEST(Checkpoint, DeterministicAcrossRunsAndSeeds) {
  TempDir tmp;
  Config c = smallConfig();
  writeRandomCheckpoint(tmp.sub("a"), c, 42);
  writeRandomCheckpoint(tmp.sub("b"), c, 42);
  writeRandomCheckpoint(tmp.sub("c"), c, 43);
  std::string a = readBytes(tmp.sub("a/model.safetensors"));
  EXPECT_EQ(a, readBytes(tmp.sub("b/model.safetensors")));
  EXPECT_NE(a, readBytes(tmp.sub("c/model.safetensors")));
  EXPECT_EQ(readBytes(tmp.sub("a/config.json")), readBytes(tmp.sub("c/config.json")));
  // Pinned: the generator must give these exact bytes on every machine.
  EXPECT_EQ(fnv1a(a), 0xbb40b1bd5048be8full) << std::hex << "0x" << fnv1a(a);
  // Header padded to a multiple of 8 with spaces; metadata as safetensors' writer.
  Parts p = split(a);
  EXPECT_EQ((a.size() - p.data.size()) % 8, 0u);
  EXPECT_EQ(p.header["__metadata__"]["format"], "pt");
  // Overwriting an existing checkpoint works and leaves no temporary file.
  writeRandomCheckpoint(tmp.sub("a"), c, 43);
  EXPECT_EQ(readBytes(tmp.sub("a/model.safetensors")), readBytes(tmp.sub("c/model.safetensors")));
  size_t files = 0;
  for ([[maybe_unused]] auto &e : fs::directory_iterator(tmp.sub("a")))
    ++files;
  EXPECT_EQ(files, 2u);
}

TEST(Checkpoint, RandomWeightStatistics) {
  TempDir tmp;
  Config c{2, 4, 64, 64, 1000, 1e-5};
  writeRandomCheckpoint(tmp.str(), c, 1);
  Weights w = loadCheckpoint(tmp.str());
  auto stats = [](const Array &a) {
    std::vector<double> v = a.toDoubles();
    double mean = 0, sq = 0;
    for (double x : v)
      mean += x;
    mean /= static_cast<double>(v.size());
    for (double x : v)
      sq += (x - mean) * (x - mean);
    return std::pair{mean, std::sqrt(sq / static_cast<double>(v.size()))};
  };
  auto [wteMean, wteStd] = stats(w.wte); // 64000 samples
  EXPECT_NEAR(wteMean, 0.0, 0.0005);
  EXPECT_NEAR(wteStd, 0.02, 0.0005);
  auto [fcMean, fcStd] = stats(w.layers[1].fc_w);
  EXPECT_NEAR(fcMean, 0.0, 0.001);
  EXPECT_NEAR(fcStd, 0.02, 0.001);
  auto [projMean, projStd] = stats(w.layers[0].fc_proj_w);
  EXPECT_NEAR(projStd, 0.02 / 2, 0.0005); // 1/sqrt(2 n_layer)
  auto [lnMean, lnStd] = stats(w.ln_f_w);
  EXPECT_NEAR(lnMean, 1.0, 0.03);
  EXPECT_GT(lnStd, 0.02);
  // Tensors are distinct streams.
  EXPECT_NE(w.layers[0].ln_1_b.toDoubles(), w.layers[0].ln_2_b.toDoubles());
}

TEST(Checkpoint, AgreesWithNumpyParse) {
  ASSERT_TRUE(hasNumpy()) << "NumPy is a dependency of the tests (scripts/install-deps.sh)";
  TempDir tmp;
  Config c = smallConfig();
  std::string dir = tmp.sub("model");
  writeRandomCheckpoint(dir, c, 3);
  Weights w = loadCheckpoint(dir);
  json stats = numpyStats(tmp, dir + "/model.safetensors");
  ASSERT_EQ(stats.size(), tensorNames(c).size());
  for (const std::string &name : tensorNames(c)) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(stats.contains(name));
    const json &s = stats[name];
    const Array &a = byName(w, name);
    EXPECT_EQ(s["shape"].get<Shape>(), a.shape());
    std::vector<double> v = a.toDoubles();
    EXPECT_EQ(s["first"].get<double>(), v.front());
    EXPECT_EQ(s["last"].get<double>(), v.back());
    EXPECT_NEAR(s["sum"].get<double>(), sumOf(a), 1e-9 * (1 + std::fabs(sumOf(a))));
  }
  EXPECT_NEAR(stats["wte.weight"]["std"].get<double>(), 0.02, 0.006);
}

TEST(Checkpoint, LoadsPythonWrittenCheckpointWithPrefixAndMaskBuffers) {
  ASSERT_TRUE(hasNumpy()) << "NumPy is a dependency of the tests (scripts/install-deps.sh)";
  std::string helper = std::string(TINYMLIR_SOURCE_DIR).empty() ? "/work/main/test/python"
                                                                : TINYMLIR_SOURCE_DIR
                           "/test/python";
  ASSERT_TRUE(fs::exists(helper + "/safetensors_np.py"))
      << helper << "/safetensors_np.py not found";
  TempDir tmp;
  std::string dir = tmp.sub("py");
  std::string cmd = "cd " + helper +
                    " && /usr/bin/python3 -c \"import safetensors_np as s; "
                    "s.make_random_checkpoint('" +
                    dir +
                    "', 2, 2, 8, 11, 5, seed=5, "
                    "prefix='transformer.', include_mask_buffers=True)\"";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Weights w = loadCheckpoint(dir);
  json stats = numpyStats(tmp, dir + "/model.safetensors");
  EXPECT_TRUE(stats.contains("transformer.h.1.attn.bias"));
  for (const std::string &name : tensorNames(smallConfig())) {
    SCOPED_TRACE(name);
    const json &s = stats["transformer." + name];
    const Array &a = byName(w, name);
    EXPECT_EQ(s["shape"].get<Shape>(), a.shape());
    EXPECT_EQ(s["first"].get<double>(), a.toDoubles().front());
    EXPECT_NEAR(s["sum"].get<double>(), sumOf(a), 1e-9 * (1 + std::fabs(sumOf(a))));
  }
}

TEST(Checkpoint, IgnoresMaskBuffersOfAnyDTypeAndExtraTensors) {
  TempDir tmp;
  writeRandomCheckpoint(tmp.sub("base"), smallConfig(), 9);
  Weights base = loadCheckpoint(tmp.sub("base"));
  copyEdited(tmp.sub("base"), tmp.sub("extra"), [](Parts &p) {
    int pads = 0;
    auto add = [&](const std::string &name, const char *dtype, Shape shape, size_t bytes) {
      // Aligned for its dtype: bytes before it, if needed, as an extra U8 tensor.
      size_t gap = (safetensorsDTypeSize(dtype) - p.data.size() % safetensorsDTypeSize(dtype)) %
                   safetensorsDTypeSize(dtype);
      if (gap > 0) {
        uint64_t at = p.data.size();
        p.data.append(gap, '\x02');
        p.header["pad." + std::to_string(pads++)] = {
            {"dtype", "U8"}, {"shape", {gap}}, {"data_offsets", {at, at + gap}}};
      }
      uint64_t begin = p.data.size();
      p.data.append(bytes, '\x01');
      p.header[name] = {
          {"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, begin + bytes}}};
    };
    add("h.0.attn.bias", "BOOL", {1, 1, 5, 5}, 25);
    add("h.1.attn.bias", "U8", {1, 1, 5, 5}, 25);
    add("h.0.attn.masked_bias", "F16", {}, 2);
    add("h.1.attn.masked_bias", "F64", {}, 8);
    add("lm_head.weight", "BF16", {11, 8}, 176);
  });
  expectSameWeights(base, loadCheckpoint(tmp.sub("extra")));
}

TEST(Checkpoint, AcceptsTransformerPrefix) {
  TempDir tmp;
  writeRandomCheckpoint(tmp.sub("base"), smallConfig(), 11);
  copyEdited(tmp.sub("base"), tmp.sub("prefixed"), [](Parts &p) {
    json h = json::object();
    for (auto &[k, v] : p.header.items())
      h[k == "__metadata__" ? k : "transformer." + k] = v;
    p.header = h;
  });
  expectSameWeights(loadCheckpoint(tmp.sub("base")), loadCheckpoint(tmp.sub("prefixed")));
}

TEST(Checkpoint, CopiesMisalignedTensors) {
  TempDir tmp;
  writeRandomCheckpoint(tmp.sub("base"), smallConfig(), 13);
  Parts p = split(readBytes(tmp.sub("base/model.safetensors")));
  // A header of 4k + 2 bytes puts every tensor at an odd 2-byte boundary.
  std::string text = p.header.dump();
  text.append((4 - text.size() % 4) % 4 + 2, ' ');
  fs::create_directories(tmp.sub("odd"));
  fs::copy_file(tmp.sub("base/config.json"), tmp.sub("odd/config.json"));
  writeBytes(tmp.sub("odd/model.safetensors"), join(text, p.data));
  Weights w = loadCheckpoint(tmp.sub("odd"));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.wte.data()) % 4, 0u);
  expectSameWeights(loadCheckpoint(tmp.sub("base")), w);
}

TEST(Checkpoint, RejectsCorruptFiles) {
  TempDir tmp;
  Config c = smallConfig();
  const std::string base = tmp.sub("base");
  writeRandomCheckpoint(base, c, 21);
  const std::string good = readBytes(base + "/model.safetensors");
  const uint64_t dataSize = split(good).data.size();
  int counter = 0;

  auto expectRejected = [&](const std::string &bytes, const std::string &reason) {
    std::string dir = tmp.sub("case" + std::to_string(counter++));
    fs::create_directories(dir);
    fs::copy_file(base + "/config.json", dir + "/config.json");
    std::string path = dir + "/model.safetensors";
    writeBytes(path, bytes);
    std::string msg = errorOf([&] { loadCheckpoint(dir); });
    EXPECT_EQ(msg.rfind("[checkpoint] " + path + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << "wanted '" << reason << "' in: " << msg;
    // parseSafetensorsHeader on the same bytes never reads out of bounds either.
    try {
      parseSafetensorsHeader(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), path);
    } catch (const Error &) {
    }
  };
  auto edited = [&](const std::function<void(Parts &)> &edit) {
    Parts p = split(good);
    edit(p);
    return join(p);
  };
  auto headerOnly = [&](const std::string &text) { return join(text, split(good).data); };

  std::string longLength = good;
  longLength[6] = '\x01'; // N ~ 2^48
  expectRejected(longLength, "runs past the end of the file");
  std::string slightlyLong = good;
  uint64_t n = good.size() - dataSize - 8 + dataSize + 1;
  for (int i = 0; i < 8; ++i)
    slightlyLong[i] = static_cast<char>(n >> (8 * i));
  expectRejected(slightlyLong, "runs past the end of the file");
  expectRejected(headerOnly("{\"wte.weight\": {"), "header is not valid JSON");
  expectRejected(headerOnly("not json"), "header is not valid JSON");
  expectRejected(headerOnly("[1, 2, 3]       "), "header is not a JSON object");
  expectRejected(headerOnly("\"wte\"   "), "header is not a JSON object");
  expectRejected(headerOnly("{\"a\": \"\xff\xfe\"}"), "header is not valid JSON"); // invalid UTF-8
  expectRejected(edited([](Parts &p) {
                   auto &e = p.header["wte.weight"];
                   e["dtype"] = "F16"; // the same bytes, as twice as many halves
                   e["shape"] = {11, 16};
                 }),
                 "tensor 'wte.weight' has dtype F16, expected F32");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"]["shape"] = {8, 11}; }),
                 "tensor 'wte.weight' has shape (8, 11), expected (11, 8)");
  expectRejected(edited([](Parts &p) { p.header["h.1.attn.c_attn.weight"]["shape"] = {24, 8}; }),
                 "tensor 'h.1.attn.c_attn.weight' has shape (24, 8), expected (8, 24)");
  expectRejected(edited([](Parts &p) { p.header["wpe.weight"]["shape"] = {5, 8, 1}; }),
                 "tensor 'wpe.weight' has shape (5, 8, 1), expected (5, 8)");
  expectRejected(edited([&](Parts &p) {
                   p.header["ln_f.bias"]["data_offsets"] = {dataSize - 16, dataSize + 16};
                 }),
                 "tensor 'ln_f.bias' data [" + std::to_string(dataSize - 16) + ", " +
                     std::to_string(dataSize + 16) + ") lies outside the data section of " +
                     std::to_string(dataSize) + " bytes");
  expectRejected(edited([](Parts &p) { p.header["ln_f.bias"]["data_offsets"] = {64, 32}; }),
                 "tensor 'ln_f.bias': data_offsets [64, 32) begin after they end");
  expectRejected(edited([](Parts &p) {
                   uint64_t begin = p.header["ln_f.bias"]["data_offsets"][0];
                   p.header["ln_f.bias"]["data_offsets"][1] = begin + 28;
                 }),
                 "tensor 'ln_f.bias': shape (8,) of F32 needs 32 bytes but data_offsets");
  expectRejected(edited([](Parts &p) {
                   p.header["h.1.mlp.c_fc.bias_renamed"] = p.header["h.1.mlp.c_fc.bias"];
                   p.header.erase("h.1.mlp.c_fc.bias");
                 }),
                 "missing tensor 'h.1.mlp.c_fc.bias'");
  // The data section is covered exactly, each tensor aligned for its dtype.
  expectRejected(edited([](Parts &p) {
                   p.header["extra"] = {
                       {"dtype", "U8"}, {"shape", {512}}, {"data_offsets", {3, 515}}};
                 }),
                 "tensor 'extra' data [3, 515) overlaps tensor '");
  expectRejected(edited([](Parts &p) {
                   p.header["extra"] = {
                       {"dtype", "F32"}, {"shape", {128}}, {"data_offsets", {3, 515}}};
                 }),
                 "tensor 'extra' (F32) starts at byte 3 of the data section, not a multiple of its "
                 "4-byte elements");
  expectRejected(edited([](Parts &p) { p.header.erase("h.1.mlp.c_fc.bias"); }),
                 "of the data section belong to no tensor (holes are not allowed)");
  expectRejected(edited([](Parts &p) { p.data.append(8, '\0'); }),
                 "bytes [" + std::to_string(dataSize) + ", " + std::to_string(dataSize + 8) +
                     ") of the data section belong to no tensor");
  expectRejected(good.substr(0, good.size() - 100), "lies outside the data section");
  expectRejected(good.substr(0, 5), "too short");
  expectRejected("", "too short");
  expectRejected(good.substr(0, 8), "runs past the end of the file");
  // More malformed entries.
  expectRejected(edited([](Parts &p) { p.header["wte.weight"]["dtype"] = "F33"; }),
                 "unknown dtype 'F33'");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"]["dtype"] = 4; }),
                 "missing string 'dtype'");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"].erase("shape"); }),
                 "missing array 'shape'");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"]["shape"] = {-11, -8}; }),
                 "not a non-negative integer");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"]["shape"] = {11.0, 8}; }),
                 "not a non-negative integer");
  expectRejected(edited([](Parts &p) {
                   p.header["wte.weight"]["shape"] = {4294967296ull, 4294967296ull, 4294967296ull};
                 }),
                 "is too large");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"]["shape"] = {1ull << 62, 4}; }),
                 "is too large");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"]["data_offsets"] = {0}; }),
                 "missing 'data_offsets'");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"]["data_offsets"] = {-4, 0}; }),
                 "are not non-negative integers");
  expectRejected(edited([](Parts &p) { p.header["wte.weight"] = "F32"; }),
                 "entry is not a JSON object");
  expectRejected(edited([](Parts &p) { p.header["__metadata__"] = {{"format", 1}}; }),
                 "'__metadata__' value");
  expectRejected(edited([](Parts &p) { p.header["__metadata__"] = 3; }),
                 "'__metadata__' is not a JSON object");
  expectRejected(edited([](Parts &p) {
                   uint64_t at = p.data.size();
                   p.data.append(32, '\0');
                   p.header["h.2.ln_1.weight"] = {
                       {"dtype", "F32"}, {"shape", {8}}, {"data_offsets", {at, at + 32}}};
                 }),
                 "tensor 'h.2.ln_1.weight' belongs to a layer beyond n_layer = 2");
  {
    Parts p = split(good);
    std::string text = p.header.dump();
    // Duplicate a name: nlohmann would silently keep the last one.
    std::string entry = "\"ln_f.bias\":" + p.header["ln_f.bias"].dump();
    text.insert(1, entry + ",");
    text.append((8 - text.size() % 8) % 8, ' ');
    expectRejected(join(text, p.data), "header names tensor 'ln_f.bias' more than once");
  }
  // A deeply nested header must not overflow the stack.
  expectRejected(headerOnly("{\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}"),
                 "entry is not a JSON object");

  // Missing model file; config problems reported before the weights are read.
  std::string noModel = tmp.sub("nomodel");
  fs::create_directories(noModel);
  fs::copy_file(base + "/config.json", noModel + "/config.json");
  std::string msg = errorOf([&] { loadCheckpoint(noModel); });
  EXPECT_EQ(msg.rfind("[checkpoint] " + noModel + "/model.safetensors: cannot open", 0), 0u) << msg;
  std::string noConfig = tmp.sub("noconfig");
  fs::create_directories(noConfig);
  fs::copy_file(base + "/model.safetensors", noConfig + "/model.safetensors");
  msg = errorOf([&] { loadCheckpoint(noConfig); });
  EXPECT_EQ(msg.rfind("[checkpoint] " + noConfig + "/config.json: cannot open", 0), 0u) << msg;
  // A config that does not match the weights.
  std::string mismatch = tmp.sub("mismatch");
  Config bigger = c;
  bigger.vocab_size = 12;
  fs::create_directories(mismatch);
  writeConfig(mismatch, bigger);
  fs::copy_file(base + "/model.safetensors", mismatch + "/model.safetensors");
  msg = errorOf([&] { loadCheckpoint(mismatch); });
  EXPECT_NE(msg.find("tensor 'wte.weight' has shape (11, 8), expected (12, 8)"), std::string::npos)
      << msg;
  Config fewer = c;
  fewer.n_layer = 1;
  writeConfig(mismatch, fewer);
  msg = errorOf([&] { loadCheckpoint(mismatch); });
  EXPECT_NE(msg.find("beyond n_layer = 1"), std::string::npos) << msg;
}

TEST(Checkpoint, HeaderLengthLimit) {
  // N within the buffer but over 100 MB.
  size_t n = 100'000'001;
  std::vector<uint8_t> buf(8 + n, ' ');
  for (int i = 0; i < 8; ++i)
    buf[i] = static_cast<uint8_t>(static_cast<uint64_t>(n) >> (8 * i));
  std::string msg =
      errorOf([&] { parseSafetensorsHeader(buf.data(), buf.size(), "big.safetensors"); });
  EXPECT_EQ(
      msg,
      "[checkpoint] big.safetensors: header length 100000001 exceeds the limit of 100000000 bytes");
}

TEST(Checkpoint, ParseHeaderDirectly) {
  std::string bytes = join("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                           "\"b\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[8,16]},"
                           "\"e\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[16,16]}}",
                           std::string(16, '\0'));
  auto infos =
      parseSafetensorsHeader(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), "x");
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos["a"].dtype, "I32");
  EXPECT_EQ(infos["a"].shape, (Shape{2}));
  EXPECT_EQ(infos["b"].shape, Shape{});
  EXPECT_EQ(infos["b"].begin, 8u);
  EXPECT_EQ(infos["e"].end, 16u);
  EXPECT_EQ(safetensorsDataOffset(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()),
            bytes.size() - 16);
  EXPECT_EQ(safetensorsDTypeSize("BF16"), 2u);
  EXPECT_EQ(safetensorsDTypeSize("Q4"), 0u);
}

TEST(Checkpoint, WriterRejectsBadConfigs) {
  TempDir tmp;
  Config c = smallConfig();
  c.n_head = 3;
  std::string msg = errorOf([&] { writeRandomCheckpoint(tmp.str(), c, 0); });
  EXPECT_NE(msg.find("n_embd (8) must be divisible by n_head (3)"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(tmp.sub("model.safetensors")));
}
