// Ctrl-C during a call of compiled code.
#pragma once

#include <tinymlir/array.h>

#include <string>

namespace tinymlir {

/// SIGINT arrived while a kernel with loops ran on the main thread: its loops
/// poll for it (every 1024th iteration) and the call stops and writes nothing
/// back. Python raises KeyboardInterrupt; a C++ caller gets this Error (of
/// kind Runtime) and its SIGINT handler is not called for it.
class Interrupted : public Error {
public:
  explicit Interrupted(const std::string &message) : Error(message, ErrorKind::Runtime) {}
};

} // namespace tinymlir
