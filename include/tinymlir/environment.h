// The process environment, read in one place: the variables of options.def
// (JitOptions' defaults) and of environment.def (the rest). Core layer.
#pragma once

namespace tinymlir {

/// The value of environment variable `name`, or nullptr where it is unset or
/// empty. `name` must be a variable of options.def or environment.def:
/// another throws std::invalid_argument, so every variable read is listed
/// (and documented, test/check_options.py).
const char *environment(const char *name);

/// Whether `name` is set to something other than "" or "0".
bool environmentEnabled(const char *name);

} // namespace tinymlir
