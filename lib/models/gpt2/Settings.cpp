// The model's settings: Settings.h.
#include "models/gpt2/Settings.h"

#include <tinymlir/environment.h>

namespace tinymlir::gpt2::settings {

std::string dataDir() {
  const char *value = environment("TINYMLIR_GPT2_DATA");
  return value ? value : "";
}

bool profile() { return environmentEnabled("TINYMLIR_PROFILE"); }

} // namespace tinymlir::gpt2::settings
