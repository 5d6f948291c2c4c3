// JitOptions: how a function is compiled, and for which target.
#pragma once

#include <tinymlir/array.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tinymlir {

enum class Target : uint8_t { CPU, GPU };
const char *targetName(Target target);

/// How a function is compiled: the fields are the rows of options.def, which
/// documents each. Every field of key Code (and Gpu, on the GPU target) is
/// part of the specialization key and of the disk cache's. The defaults come
/// from environment variables where set (JitOptions(), docs/options.md); a
/// field set in code wins over the environment.
struct JitOptions {
  /// The defaults, with TINYMLIR_* environment variables applied. A malformed
  /// value is an error naming the variable.
  JitOptions();

  Target target = Target::CPU;
#define TINYMLIR_OPTION(Type, field, name, variable, value, key, min, max, help) Type field = value;
#include <tinymlir/options.def>

  bool operator==(const JitOptions &) const = default;
};

/// One row of options.def, for code that lists the options (the Python
/// binding, the CLI, the documentation's check).
struct OptionInfo {
  const char *name;     ///< the Python keyword
  const char *variable; ///< the environment variable ("" where none)
  const char *help;
};
/// Every row of options.def, in order.
const std::vector<OptionInfo> &optionTable();

namespace detail {
/// The fields of the options that decide the generated code, as one string
/// (specialization and disk cache keys).
std::string optionsKey(const JitOptions &options);
/// options.gpuLibdevice, or where it is not set, the default it documents.
std::string libdevice(const JitOptions &options);
} // namespace detail

} // namespace tinymlir
