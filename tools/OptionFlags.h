// The CLI flags that mirror JitOptions: one per row of options.def, named
// after its Python keyword with dashes (--opt-level 3, --cache-dir DIR), and
// --name/--no-name for a flag. They write into options, which holds the
// environment's defaults until a flag is given.
#pragma once

#include <tinymlir/options.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <type_traits>

namespace tinymlir::tools {

inline void addOptionFlags(CLI::App &app, JitOptions &options) {
  auto flag = [](std::string name) {
    std::replace(name.begin(), name.end(), '_', '-');
    return "--" + name;
  };
  auto add = [&](const char *name, auto &field, int min, int max, const char *help) {
    using T = std::remove_reference_t<decltype(field)>;
    if constexpr (std::is_same_v<T, bool>) {
      app.add_flag(flag(name) + ",!" + "--no-" + flag(name).substr(2), field, help)
          ->group("Compiler options");
    } else {
      CLI::Option *option = app.add_option(flag(name), field, help)->group("Compiler options");
      if (min < max)
        option->check(CLI::Range(min, max));
    }
  };
#define TINYMLIR_OPTION(Type, field, name, variable, value, key, min, max, help)                   \
  add(name, options.field, min, max, help);
#include <tinymlir/options.def>
}

} // namespace tinymlir::tools
