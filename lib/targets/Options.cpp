// JitOptions: the defaults, and the environment variables that supply them
// (the one place they are read; docs/options.md lists them).
#include <tinymlir/options.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace tinymlir {
namespace {

const char *variable(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

/// A flag: 1/on/true or 0/off/false.
void readFlag(const char *name, bool &field) {
  const char *value = variable(name);
  if (!value)
    return;
  for (const char *on : {"1", "on", "true"})
    if (std::strcmp(value, on) == 0)
      return void(field = true);
  for (const char *off : {"0", "off", "false"})
    if (std::strcmp(value, off) == 0)
      return void(field = false);
  throw Error(std::string("[options] ") + name + "='" + value + "': expected 1 or 0");
}

void readText(const char *name, std::string &field) {
  if (const char *value = variable(name))
    field = value;
}

} // namespace

JitOptions::JitOptions() {
  readFlag("TINYMLIR_BLAS", blas);
  if (const char *level = variable("TINYMLIR_OPT_LEVEL")) {
    if (std::strlen(level) != 1 || level[0] < '0' || level[0] > '3')
      throw Error(std::string("[options] TINYMLIR_OPT_LEVEL='") + level + "': expected 0 to 3");
    optLevel = level[0] - '0';
  }
  readFlag("TINYMLIR_VECTOR_MATH", vectorMath);
  readText("TINYMLIR_CPU", cpu);
  readFlag("TINYMLIR_CACHE", diskCache);
  if (diskCache)
    readText("TINYMLIR_CACHE_DIR", cacheDir);
  if (const char *bytes = variable("TINYMLIR_CACHE_BYTES")) {
    char *end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(bytes, &end, 10);
    if (*bytes == '\0' || *bytes == '-' || *end != '\0' || errno == ERANGE)
      throw Error(std::string("[options] TINYMLIR_CACHE_BYTES='") + bytes +
                  "': expected a number of bytes (0: no bound)");
    cacheBytes = n;
  }
  readFlag("TINYMLIR_GPU_EMULATE", gpuEmulate);
  readText("TINYMLIR_GPU_CHIPS", gpuChips);
  readText("TINYMLIR_GPU_MATMUL_TILE", gpuMatmulTile);
  readFlag("TINYMLIR_TIMING", timing);
  readFlag("TINYMLIR_PERF", perf);
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
  std::string key = std::string("target=") + targetName(o.target) +
                    " blas=" + std::to_string(o.blas) + " optimize=" + std::to_string(o.optimize) +
                    " O" + std::to_string(o.optLevel) +
                    " vector-math=" + std::to_string(o.vectorMath) + " cpu=" + o.cpu;
  if (o.streamRows != 1)
    key += " stream-rows=" + std::to_string(o.streamRows);
  if (o.target == Target::GPU)
    key += " emulate=" + std::to_string(o.gpuEmulate) + " chips=" + o.gpuChips +
           " tile=" + o.gpuMatmulTile + " libdevice=" + o.gpuLibdevice;
  return key;
}

} // namespace detail
} // namespace tinymlir
