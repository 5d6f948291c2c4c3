// GPT-2 checkpoints: config.json + model.safetensors (see Checkpoint.h).
#include "models/gpt2/Checkpoint.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

namespace tinymlir::gpt2 {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull * 1000 * 1000;
const std::string kPrefix = "transformer.";

[[noreturn]] void fail(const std::string &path, const std::string &reason) {
  throw Error("[checkpoint] " + path + ": " + reason);
}

std::string joinPath(const std::string &dir, const std::string &file) {
  return (fs::path(dir) / file).string();
}

std::string inQuotes(const std::string &s) { return "'" + s + "'"; }

} // namespace

//===----------------------------------------------------------------------===//
// Config
//===----------------------------------------------------------------------===//

int64_t Config::numParameters() const {
  int64_t C = n_embd;
  return vocab_size * C + n_positions * C + n_layer * (12 * C * C + 13 * C) + 2 * C;
}

Config Config::gpt2_124M() { return Config{12, 12, 768, 1024, 50257, 1e-5}; }
Config Config::tiny() { return Config{2, 4, 64, 128, 50257, 1e-5}; }

void validateConfig(const Config &c, const std::string &where) {
  auto check = [&](const char *field, int64_t value, int64_t max) {
    if (value <= 0)
      fail(where, std::string(field) + " must be positive, got " + std::to_string(value));
    if (value > max)
      fail(where, std::string(field) + " = " + std::to_string(value) +
                      " is larger than the supported maximum " + std::to_string(max));
  };
  check("n_layer", c.n_layer, 4096);
  check("n_head", c.n_head, 1 << 16);
  check("n_embd", c.n_embd, 1 << 16);
  check("n_positions", c.n_positions, 1 << 20);
  check("vocab_size", c.vocab_size, 1 << 22);
  if (c.n_embd % c.n_head != 0)
    fail(where, "n_embd (" + std::to_string(c.n_embd) + ") must be divisible by n_head (" +
                    std::to_string(c.n_head) + ")");
  if (!(std::fabs(c.layer_norm_epsilon - 1e-5) <= 1e-12))
    fail(where, "layer_norm_epsilon must be 1e-05, got " + std::to_string(c.layer_norm_epsilon));
}

Config loadConfig(const std::string &dir) {
  std::string path = joinPath(dir, "config.json");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception &e) {
    fail(path, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object())
    fail(path, "not a JSON object");

  auto intField = [&](const char *field) -> std::optional<int64_t> {
    auto it = j.find(field);
    if (it == j.end())
      return std::nullopt;
    if (!it->is_number_integer())
      fail(path, std::string("field '") + field + "' must be an integer, got " + it->dump());
    if (it->is_number_unsigned() &&
        it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(path, std::string("field '") + field + "' is too large: " + it->dump());
    return it->get<int64_t>();
  };
  auto requireInt = [&](const char *field) {
    auto v = intField(field);
    if (!v)
      fail(path, std::string("missing field '") + field + "'");
    return *v;
  };
  auto boolField = [&](const char *field) -> std::optional<bool> {
    auto it = j.find(field);
    if (it == j.end() || it->is_null())
      return std::nullopt;
    if (!it->is_boolean())
      fail(path, std::string("field '") + field + "' must be true or false, got " + it->dump());
    return it->get<bool>();
  };
  auto stringField = [&](const char *field) -> std::optional<std::string> {
    auto it = j.find(field);
    if (it == j.end())
      return std::nullopt;
    if (!it->is_string())
      fail(path, std::string("field '") + field + "' must be a string, got " + it->dump());
    return it->get<std::string>();
  };

  Config c;
  c.n_layer = requireInt("n_layer");
  c.n_head = requireInt("n_head");
  c.n_embd = requireInt("n_embd");
  c.vocab_size = requireInt("vocab_size");
  if (auto p = intField("n_positions"))
    c.n_positions = *p;
  else if (auto n = intField("n_ctx"))
    c.n_positions = *n;
  else
    fail(path, "missing field 'n_positions' (or 'n_ctx')");

  if (auto it = j.find("layer_norm_epsilon"); it != j.end()) {
    if (!it->is_number())
      fail(path, "field 'layer_norm_epsilon' must be a number, got " + it->dump());
    c.layer_norm_epsilon = it->get<double>();
    if (!(std::fabs(c.layer_norm_epsilon - 1e-5) <= 1e-12))
      fail(path, "field 'layer_norm_epsilon' must be 1e-05 (the only value supported), got " +
                     it->dump());
  }
  if (auto act = stringField("activation_function"); act && *act != "gelu_new")
    fail(path, "field 'activation_function' is '" + *act + "'; only 'gelu_new' is supported");
  if (auto type = stringField("model_type"); type && *type != "gpt2")
    fail(path, "field 'model_type' is '" + *type + "', expected 'gpt2'");
  if (auto v = boolField("scale_attn_weights"); v && !*v)
    fail(path, "field 'scale_attn_weights' false is not supported");
  if (auto v = boolField("scale_attn_by_inverse_layer_idx"); v && *v)
    fail(path, "field 'scale_attn_by_inverse_layer_idx' true is not supported");
  if (auto v = boolField("add_cross_attention"); v && *v)
    fail(path, "field 'add_cross_attention' true is not supported");
  if (auto it = j.find("n_inner"); it != j.end() && !it->is_null()) {
    auto inner = intField("n_inner");
    if (*inner != 4 * c.n_embd)
      fail(path, "field 'n_inner' = " + std::to_string(*inner) +
                     " is not supported (must be 4 * n_embd = " + std::to_string(4 * c.n_embd) +
                     " or null)");
  }
  validateConfig(c, path);
  return c;
}

void writeConfig(const std::string &dir, const Config &c) {
  std::string path = joinPath(dir, "config.json");
  validateConfig(c, path);
  nlohmann::ordered_json j;
  j["activation_function"] = "gelu_new";
  j["architectures"] = {"GPT2LMHeadModel"};
  j["bos_token_id"] = c.vocab_size - 1;
  j["eos_token_id"] = c.vocab_size - 1;
  j["layer_norm_epsilon"] = 1e-05;
  j["model_type"] = "gpt2";
  j["n_ctx"] = c.n_positions;
  j["n_embd"] = c.n_embd;
  j["n_head"] = c.n_head;
  j["n_layer"] = c.n_layer;
  j["n_positions"] = c.n_positions;
  j["vocab_size"] = c.vocab_size;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    fail(path, std::string("cannot open for writing: ") + std::strerror(errno));
  out << j.dump(2) << "\n";
  out.close();
  if (!out)
    fail(path, "write failed");
}

//===----------------------------------------------------------------------===//
// safetensors header
//===----------------------------------------------------------------------===//

size_t safetensorsDTypeSize(const std::string &d) {
  if (d == "F64" || d == "I64" || d == "U64")
    return 8;
  if (d == "F32" || d == "I32" || d == "U32")
    return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16")
    return 2;
  if (d == "BOOL" || d == "U8" || d == "I8" || d == "F8_E5M2" || d == "F8_E4M3" || d == "F8_E8M0")
    return 1;
  return 0;
}

namespace {

uint64_t readHeaderLength(const uint8_t *data) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= static_cast<uint64_t>(data[i]) << (8 * i);
  return n;
}

std::string offsetsString(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

/// A JSON value that must be a non-negative integer fitting in int64.
std::optional<uint64_t> asIndex(const json &v) {
  if (!v.is_number_unsigned())
    return std::nullopt; // nlohmann stores non-negative integers as unsigned
  uint64_t u = v.get<uint64_t>();
  if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return std::nullopt;
  return u;
}

} // namespace

std::map<std::string, TensorInfo> parseSafetensorsHeader(const uint8_t *data, size_t size,
                                                         const std::string &path) {
  if (size < 8)
    fail(path, "file is " + std::to_string(size) +
                   " bytes, too short for a safetensors header length (8 bytes)");
  uint64_t n = readHeaderLength(data);
  if (n > size - 8)
    fail(path, "header length " + std::to_string(n) + " runs past the end of the file (" +
                   std::to_string(size) + " bytes)");
  if (n > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(n) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes");
  const uint64_t dataSize = size - 8 - n;

  // Parse, noting duplicate top-level names (nlohmann would keep the last).
  std::set<std::string> seen;
  std::string duplicate;
  json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json &parsed) {
    if (event == json::parse_event_t::key && depth == 1 && duplicate.empty()) {
      const std::string &key = parsed.get_ref<const std::string &>();
      if (!seen.insert(key).second)
        duplicate = key;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(data + 8, data + 8 + n, callback);
  } catch (const json::exception &e) {
    fail(path, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object())
    fail(path, "header is not a JSON object");
  if (!duplicate.empty())
    fail(path, "header names tensor " + inQuotes(duplicate) + " more than once");

  std::map<std::string, TensorInfo> out;
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        fail(path, "'__metadata__' is not a JSON object");
      for (const auto &[key, value] : entry.items())
        if (!value.is_string())
          fail(path, "'__metadata__' value for " + inQuotes(key) + " is not a string");
      continue;
    }
    const std::string what = "tensor " + inQuotes(name);
    if (!entry.is_object())
      fail(path, what + ": entry is not a JSON object");

    TensorInfo info;
    auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string())
      fail(path, what + ": missing string 'dtype'");
    info.dtype = dtype->get<std::string>();
    size_t elemSize = safetensorsDTypeSize(info.dtype);
    if (elemSize == 0)
      fail(path, what + ": unknown dtype " + inQuotes(info.dtype));

    auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array())
      fail(path, what + ": missing array 'shape'");
    uint64_t count = 1;
    bool overflow = false;
    for (const json &d : *shape) {
      auto dim = asIndex(d);
      if (!dim)
        fail(path, what + ": shape " + shape->dump() +
                       " has an entry that is not a non-negative integer");
      info.shape.push_back(static_cast<int64_t>(*dim));
      overflow = overflow || __builtin_mul_overflow(count, *dim, &count);
    }
    uint64_t bytes = 0;
    overflow = overflow || __builtin_mul_overflow(count, static_cast<uint64_t>(elemSize), &bytes);
    if (overflow)
      fail(path, what + ": shape " + shapeString(info.shape) + " is too large");

    auto offsets = entry.find("data_offsets");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2)
      fail(path, what + ": missing 'data_offsets' [begin, end]");
    auto begin = asIndex((*offsets)[0]), end = asIndex((*offsets)[1]);
    if (!begin || !end)
      fail(path, what + ": data_offsets " + offsets->dump() + " are not non-negative integers");
    info.begin = *begin;
    info.end = *end;
    if (info.begin > info.end)
      fail(path, what + ": data_offsets " + offsetsString(info.begin, info.end) +
                     " begin after they end");
    if (info.end > dataSize)
      fail(path, what + " data " + offsetsString(info.begin, info.end) +
                     " lies outside the data section of " + std::to_string(dataSize) + " bytes");
    if (info.end - info.begin != bytes)
      fail(path, what + ": shape " + shapeString(info.shape) + " of " + info.dtype + " needs " +
                     std::to_string(bytes) + " bytes but data_offsets " +
                     offsetsString(info.begin, info.end) + " hold " +
                     std::to_string(info.end - info.begin));
    if (info.begin % elemSize != 0)
      fail(path, what + " (" + info.dtype + ") starts at byte " + std::to_string(info.begin) +
                     " of the data section, not a multiple of its " + std::to_string(elemSize) +
                     "-byte elements");
    out.emplace(name, std::move(info));
  }

  // The tensors cover the data section exactly, in some order: no byte is
  // shared by two tensors, and none belongs to no tensor (the format forbids
  // holes, so that a file cannot carry hidden data).
  std::vector<std::pair<const std::string *, const TensorInfo *>> spans;
  for (const auto &[name, info] : out)
    if (info.end > info.begin)
      spans.emplace_back(&name, &info);
  std::sort(spans.begin(), spans.end(), [](const auto &a, const auto &b) {
    return std::pair(a.second->begin, a.second->end) < std::pair(b.second->begin, b.second->end);
  });
  uint64_t covered = 0;
  const std::string *previous = nullptr;
  for (const auto &[name, info] : spans) {
    if (info->begin < covered)
      fail(path, "tensor " + inQuotes(*name) + " data " + offsetsString(info->begin, info->end) +
                     " overlaps tensor " + inQuotes(*previous) + " data " +
                     offsetsString(out.at(*previous).begin, covered));
    if (info->begin > covered)
      fail(path, "bytes " + offsetsString(covered, info->begin) +
                     " of the data section belong to no tensor (holes are not allowed)");
    covered = info->end;
    previous = name;
  }
  if (covered != dataSize)
    fail(path, "bytes " + offsetsString(covered, dataSize) +
                   " of the data section belong to no tensor (holes are not allowed)");
  return out;
}

uint64_t safetensorsDataOffset(const uint8_t *data, size_t size) {
  if (size < 8)
    throw Error("[checkpoint] safetensorsDataOffset: buffer shorter than 8 bytes");
  return 8 + readHeaderLength(data);
}

//===----------------------------------------------------------------------===//
// Tensor names and shapes
//===----------------------------------------------------------------------===//

namespace {
const char *const kLayerTensors[] = {
    "ln_1.weight",        "ln_1.bias",        "attn.c_attn.weight", "attn.c_attn.bias",
    "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight",        "ln_2.bias",
    "mlp.c_fc.weight",    "mlp.c_fc.bias",    "mlp.c_proj.weight",  "mlp.c_proj.bias",
};

/// For "h.{i}.rest": i and rest; i = -1 if `name` is not of that form (or i is absurdly long).
std::pair<int64_t, std::string> splitLayerName(const std::string &name) {
  if (name.rfind("h.", 0) != 0)
    return {-1, ""};
  size_t i = 2;
  int64_t index = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') {
    if (i - 2 >= 12)
      return {std::numeric_limits<int64_t>::max(), ""};
    index = index * 10 + (name[i] - '0');
    ++i;
  }
  if (i == 2 || i >= name.size() || name[i] != '.')
    return {-1, ""};
  return {index, name.substr(i + 1)};
}
} // namespace

std::vector<std::string> tensorNames(const Config &c) {
  std::vector<std::string> names = {"wte.weight", "wpe.weight"};
  for (int64_t i = 0; i < c.n_layer; ++i)
    for (const char *t : kLayerTensors)
      names.push_back("h." + std::to_string(i) + "." + t);
  names.push_back("ln_f.weight");
  names.push_back("ln_f.bias");
  return names;
}

Shape expectedShape(const Config &c, const std::string &name) {
  const int64_t C = c.n_embd;
  if (name == "wte.weight")
    return {c.vocab_size, C};
  if (name == "wpe.weight")
    return {c.n_positions, C};
  if (name == "ln_f.weight" || name == "ln_f.bias")
    return {C};
  auto [layer, rest] = splitLayerName(name);
  if (layer < 0 || layer >= c.n_layer)
    throw Error("[checkpoint] not a GPT-2 tensor name: '" + name + "'");
  if (rest == "ln_1.weight" || rest == "ln_1.bias" || rest == "ln_2.weight" ||
      rest == "ln_2.bias" || rest == "attn.c_proj.bias" || rest == "mlp.c_proj.bias")
    return {C};
  if (rest == "attn.c_attn.weight")
    return {C, 3 * C};
  if (rest == "attn.c_attn.bias")
    return {3 * C};
  if (rest == "attn.c_proj.weight")
    return {C, C};
  if (rest == "mlp.c_fc.weight")
    return {C, 4 * C};
  if (rest == "mlp.c_fc.bias")
    return {4 * C};
  if (rest == "mlp.c_proj.weight")
    return {4 * C, C};
  throw Error("[checkpoint] not a GPT-2 tensor name: '" + name + "'");
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Weights weightsFromSafetensors(const uint8_t *data, size_t size, const Config &config,
                               const std::string &path, std::shared_ptr<void> owner) {
  validateConfig(config, path);
  const auto infos = parseSafetensorsHeader(data, size, path);
  const uint8_t *section = data + safetensorsDataOffset(data, size);

  for (const auto &entry : infos) {
    std::string name = entry.first;
    if (name.rfind(kPrefix, 0) == 0)
      name.erase(0, kPrefix.size());
    auto [layer, rest] = splitLayerName(name);
    if (layer >= config.n_layer)
      fail(path, "tensor " + inQuotes(entry.first) +
                     " belongs to a layer beyond n_layer = " + std::to_string(config.n_layer) +
                     " (config.json does not match the checkpoint)");
  }

  auto get = [&](const std::string &name) -> Array {
    auto it = infos.find(name);
    if (it == infos.end())
      it = infos.find(kPrefix + name);
    if (it == infos.end())
      fail(path, "missing tensor " + inQuotes(name));
    const std::string &stored = it->first;
    const TensorInfo &info = it->second;
    if (info.dtype != "F32")
      fail(path, "tensor " + inQuotes(stored) + " has dtype " + info.dtype + ", expected F32");
    Shape want = expectedShape(config, name);
    if (info.shape != want)
      fail(path, "tensor " + inQuotes(stored) + " has shape " + shapeString(info.shape) +
                     ", expected " + shapeString(want) + " for n_layer=" +
                     std::to_string(config.n_layer) + ", n_embd=" + std::to_string(config.n_embd) +
                     ", n_positions=" + std::to_string(config.n_positions) +
                     ", vocab_size=" + std::to_string(config.vocab_size));
    const uint8_t *p = section + info.begin;
    if (reinterpret_cast<uintptr_t>(p) % alignof(float) != 0) {
      Array copy = Array::empty(want, DType::f32);
      std::memcpy(copy.data(), p, info.end - info.begin);
      return copy;
    }
    return Array::view(const_cast<uint8_t *>(p), want, DType::f32, {}, owner);
  };

  Weights w;
  w.config = config;
  w.wte = get("wte.weight");
  w.wpe = get("wpe.weight");
  w.layers.resize(static_cast<size_t>(config.n_layer));
  for (int64_t i = 0; i < config.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    LayerWeights &l = w.layers[static_cast<size_t>(i)];
    l.ln_1_w = get(h + "ln_1.weight");
    l.ln_1_b = get(h + "ln_1.bias");
    l.attn_w = get(h + "attn.c_attn.weight");
    l.attn_b = get(h + "attn.c_attn.bias");
    l.proj_w = get(h + "attn.c_proj.weight");
    l.proj_b = get(h + "attn.c_proj.bias");
    l.ln_2_w = get(h + "ln_2.weight");
    l.ln_2_b = get(h + "ln_2.bias");
    l.fc_w = get(h + "mlp.c_fc.weight");
    l.fc_b = get(h + "mlp.c_fc.bias");
    l.fc_proj_w = get(h + "mlp.c_proj.weight");
    l.fc_proj_b = get(h + "mlp.c_proj.bias");
  }
  w.ln_f_w = get("ln_f.weight");
  w.ln_f_b = get("ln_f.bias");
  return w;
}

Weights loadCheckpoint(const std::string &dir) {
  Config config = loadConfig(dir);
  std::string path = joinPath(dir, "model.safetensors");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(path, std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    fail(path, "file is " + std::to_string(size) +
                   " bytes, too short for a safetensors header length (8 bytes)");
  }
  // Private writable mapping: pages are shared with the page cache until written,
  // and writes (if any) never reach the file.
  void *addr = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (addr == MAP_FAILED)
    fail(path, std::string("cannot memory-map: ") + std::strerror(err));
  std::shared_ptr<void> mapping(addr, [size](void *p) { ::munmap(p, size); });
  return weightsFromSafetensors(static_cast<const uint8_t *>(addr), size, config, path, mapping);
}

} // namespace tinymlir::gpt2
