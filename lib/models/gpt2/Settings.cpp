// The model's settings: Settings.h.
#include "models/gpt2/Settings.h"

#include <cstdlib>
#include <string_view>

namespace tinymlir::gpt2::settings {

std::string dataDir() {
  const char *value = std::getenv("TINYMLIR_GPT2_DATA");
  return value ? value : "";
}

bool profile() {
  const char *value = std::getenv("TINYMLIR_PROFILE");
  return value && *value && std::string_view(value) != "0";
}

} // namespace tinymlir::gpt2::settings
