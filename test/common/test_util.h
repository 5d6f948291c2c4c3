// Small helpers shared by the test suites.
#pragma once

#include <tinymlir/array.h>

#include <string>

namespace tinymlir::test {

/// The message of the tinymlir::Error that `f` throws, or "<no error>".
template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "<no error>";
}

/// How many times `needle` occurs in `text` (overlaps counted).
inline int count(const std::string &text, const std::string &needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1))
    ++n;
  return n;
}

} // namespace tinymlir::test
