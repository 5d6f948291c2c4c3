// The fingerprint of this build, in every disk-cache key: a hash of the
// compiler's sources and of the toolchain that built them (compiler, flags,
// MLIR/LLVM version), made at build time by cmake/Fingerprint.cmake.
#pragma once

namespace tinymlir::detail {
extern const char *const kBuildFingerprint;
} // namespace tinymlir::detail
