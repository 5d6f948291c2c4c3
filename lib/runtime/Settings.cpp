// The runtime's settings: Settings.h.
#include "runtime/Settings.h"

#include <tinymlir/environment.h>

#include <cstdlib>

namespace tinymlir::settings {
namespace {

const char *variable(const char *name) { return environment(name); }

} // namespace

std::string userCacheHome() {
  if (const char *xdg = variable("XDG_CACHE_HOME"))
    return xdg;
  if (const char *home = variable("HOME"))
    return std::string(home) + "/.cache";
  return "";
}

bool blocktimeGiven() { return variable("KMP_BLOCKTIME") != nullptr; }

int gpuDevice() {
  const char *value = variable("TINYMLIR_GPU_DEVICE");
  return value ? std::atoi(value) : 0;
}

std::optional<size_t> gpuCacheBytes() {
  if (const char *value = variable("TINYMLIR_GPU_CACHE_MB"))
    return static_cast<size_t>(std::atoll(value)) << 20;
  return std::nullopt;
}

bool gpuProfile() { return enabled("TINYMLIR_GPU_PROFILE"); }

bool enabled(const char *name) { return environmentEnabled(name); }

} // namespace tinymlir::settings
