// JitOptions: the defaults, and the environment variables that supply them
// (the one place they are read; docs/options.md lists them).
#include <tinymlir/environment.h>
#include <tinymlir/options.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <type_traits>

namespace tinymlir {
namespace {

const char *variable(const char *name) { return environment(name); }

[[noreturn]] void malformed(const char *name, const char *value, const std::string &expected) {
  throw Error(std::string("[options] ") + name + "='" + value + "': expected " + expected);
}

/// A flag: 1/on/true or 0/off/false.
void read(const char *name, bool &field, int, int) {
  const char *value = variable(name);
  if (!value)
    return;
  for (const char *on : {"1", "on", "true"})
    if (std::strcmp(value, on) == 0)
      return void(field = true);
  for (const char *off : {"0", "off", "false"})
    if (std::strcmp(value, off) == 0)
      return void(field = false);
  malformed(name, value, "1 or 0");
}

/// A decimal number; an int in [min, max].
template <typename T> void read(const char *name, T &field, int min, int max) {
  const char *value = variable(name);
  if (!value)
    return;
  const bool isInt = std::is_same_v<T, int>;
  const std::string expected = isInt ? std::to_string(min) + " to " + std::to_string(max)
                                     : std::string("a number (0: no bound)");
  char *end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(value, &end, 10);
  if (*value == '-' || *end != '\0' || errno == ERANGE ||
      (isInt &&
       (n < static_cast<unsigned long long>(min) || n > static_cast<unsigned long long>(max))))
    malformed(name, value, expected);
  field = static_cast<T>(n);
}

void read(const char *name, std::string &field, int, int) {
  if (const char *value = variable(name))
    field = value;
}

/// Appends " name=value" where a row of this key kind counts.
template <typename T> void addToKey(std::string &key, const char *name, const T &value) {
  key += ' ';
  key += name;
  key += '=';
  if constexpr (std::is_same_v<T, std::string>)
    key += value;
  else
    key += std::to_string(value);
}

} // namespace

JitOptions::JitOptions() {
#define TINYMLIR_OPTION(Type, field, name, variable, value, key, min, max, help)                   \
  if (*variable)                                                                                   \
    read(variable, field, min, max);
#include <tinymlir/options.def>
  // TINYMLIR_CACHE=0 wins over a directory given by TINYMLIR_CACHE_DIR.
  if (!diskCache)
    cacheDir.clear();
}

const std::vector<OptionInfo> &optionTable() {
  static const std::vector<OptionInfo> table = {
#define TINYMLIR_OPTION(Type, field, name, variable, value, key, min, max, help)                   \
  {name, variable, help},
#include <tinymlir/options.def>
  };
  return table;
}

const char *targetName(Target target) { return target == Target::CPU ? "cpu" : "gpu"; }

namespace detail {

std::string libdevice(const JitOptions &options) {
  if (!options.gpuLibdevice.empty())
    return options.gpuLibdevice;
  std::vector<std::string> roots;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *v = variable(var))
      roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  roots.emplace_back("/usr/lib/cuda");
  for (const std::string &root : roots) {
    std::string path = root + "/nvvm/libdevice/libdevice.10.bc";
    if (std::filesystem::exists(path))
      return path;
  }
  const char *debian = "/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc";
  return std::filesystem::exists(debian) ? debian : "";
}

std::string optionsKey(const JitOptions &o) {
  std::string key = std::string("target=") + targetName(o.target);
  const bool gpu = o.target == Target::GPU;
  enum Kind { Code, Gpu, None };
#define TINYMLIR_OPTION(Type, field, name, variable, value, kind, min, max, help)                  \
  if (kind == Code || (kind == Gpu && gpu))                                                        \
    addToKey(key, name, o.field);
#include <tinymlir/options.def>
  return key;
}

} // namespace detail
} // namespace tinymlir
