// The persistent compile cache: native code of compiled specializations on
// disk, so that a second process starts without compiling.
//
// An entry is keyed by everything that decides the code: the module as built
// (program and specialization), the compile options, the tinymlir build (a
// hash of its sources and toolchain, made at build time) and the LLVM version, and the host CPU's
// name and features. Each file holds a header (magic, format, checksum, size) and the key itself;
// an entry whose checksum, size or key does not match is stale or corrupt: it is ignored, removed
// and replaced, never loaded.
#pragma once

#include <tinymlir/jit.h>

#include <optional>
#include <string>
#include <vector>

namespace tinymlir::detail {

class CompileTarget;

struct CacheEntry {
  /// The relocatable object files of the kernel and its wrappers (one per
  /// partition compiled on its own thread: jit/ObjectCode.h).
  std::vector<std::string> objects;
  std::string optimized, bufferized, lowered;
  int blasCalls = 0;
};

/// The cache directory for these options, or "" when the disk cache is off:
/// options.cacheDir, else $XDG_CACHE_HOME/tinymlir/kernels or
/// ~/.cache/tinymlir/kernels; off with options.diskCache = false (unless
/// options.cacheDir is given).
std::string cacheDirectory(const JitOptions &options);

/// Everything the compiled code depends on, as one string.
std::string cacheKey(const std::string &module, const JitOptions &options,
                     const CompileTarget &target);

/// The entry for `key`, if present and intact. A corrupt or stale file is removed.
std::optional<CacheEntry> loadEntry(const std::string &directory, const std::string &key);

/// Writes the entry atomically (a temporary file of its own, then rename:
/// threads and processes storing one key at once each write whole files, and
/// the last rename wins). Then, with maxBytes > 0, removes the least recently
/// used entries (loadEntry marks its entry used) until the directory's
/// entries total at most maxBytes. Failures to write are not errors (the
/// cache is an optimization); they return false.
bool storeEntry(const std::string &directory, const std::string &key, const CacheEntry &entry,
                uint64_t maxBytes = 0);

/// The file that holds (or would hold) the entry for `key`.
std::string entryPath(const std::string &directory, const std::string &key);

} // namespace tinymlir::detail
