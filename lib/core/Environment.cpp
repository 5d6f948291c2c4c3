// The one reader of the process environment: environment.h.
#include <tinymlir/environment.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tinymlir {
namespace {

bool listed(std::string_view name) {
#define TINYMLIR_VARIABLE(variable, reader, help)                                                  \
  if (name == variable)                                                                            \
    return true;
#include <tinymlir/environment.def>
#define TINYMLIR_OPTION(Type, field, pyname, variable, def, key, min, max, help)                   \
  if (std::string_view(variable) == name && !name.empty())                                         \
    return true;
#include <tinymlir/options.def>
  return false;
}

} // namespace

const char *environment(const char *name) {
  if (!listed(name))
    throw std::invalid_argument(std::string("[environment] ") + name +
                                " is not a variable of options.def or environment.def");
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

bool environmentEnabled(const char *name) {
  const char *value = environment(name);
  return value && std::string_view(value) != "0";
}

} // namespace tinymlir
