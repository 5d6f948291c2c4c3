#include "jit/DiskCache.h"
#include "jit/BuildFingerprint.h"
#include "runtime/Settings.h"
#include "targets/Target.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/xxhash.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <unistd.h>

namespace tinymlir::detail {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[16] = {'T', 'I', 'N', 'Y', 'M', 'L', 'I', 'R',
                             '-', 'K', 'E', 'R', 'N', 'E', 'L', '\n'};
constexpr uint32_t kFormat = 3; // 2: XXH3 checksums and names; 3: several objects
constexpr const char *kVersion = "tinymlir 0.1.0";

/// XXH3: the checksum of an entry and the name of its file (128 bits of its
/// key), at memory speed (GPT-2's first token
/// reads ten entries, up to 650 KB each, and their keys of the same size).
uint64_t hash64(llvm::StringRef bytes) { return llvm::xxh3_64bits(bytes); }

/// The whole of a file, or nothing if it cannot be read.
std::optional<std::string> readWhole(const std::string &path) {
  std::error_code error;
  const uintmax_t size = fs::file_size(path, error); // fails for a directory, which would open
  std::ifstream file(path, std::ios::binary);
  if (error || !file)
    return std::nullopt;
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!file.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    return std::nullopt;
  return bytes;
}

std::string hex(uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

void putU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
bool getU64(const std::string &in, size_t &pos, uint64_t &v) {
  if (in.size() < pos + 8)
    return false;
  v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += 8;
  return true;
}
void putString(std::string &out, const std::string &s) {
  putU64(out, s.size());
  out += s;
}
bool getString(const std::string &in, size_t &pos, std::string &s) {
  uint64_t n;
  if (!getU64(in, pos, n) || in.size() - pos < n)
    return false;
  s.assign(in, pos, n);
  pos += n;
  return true;
}

/// A fingerprint of this build of tinymlir (any change to the compiler, its
/// passes or its pipelines changes the code it generates, so it invalidates
/// the cache): the hash of its sources and toolchain, made at build time.
std::string buildFingerprint() { return detail::kBuildFingerprint; }

std::string describeHost() {
  std::string text = std::string("cpu=") + llvm::sys::getHostCPUName().str() + " features=";
  auto features = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> enabled;
  for (const auto &f : features)
    if (f.second)
      enabled.push_back(f.first().str());
  std::sort(enabled.begin(), enabled.end());
  for (const std::string &f : enabled)
    text += "+" + f;
  return text;
}

/// The host does not change while the process runs (CPUID is slow in a VM).
const std::string &hostDescription() {
  static const std::string description = describeHost();
  return description;
}

/// Removes the least recently used entries of `directory` (by modification
/// time: written, or marked by loadEntry) until they total at most maxBytes;
/// `keep`, just written, stays. Temporaries older than an hour (a writer that
/// died) go too.
void trimDirectory(const std::string &directory, uint64_t maxBytes, const std::string &keep) {
  struct File {
    fs::file_time_type used;
    uint64_t bytes;
    fs::path path;
  };
  std::vector<File> entries;
  uint64_t total = 0;
  std::error_code error;
  const auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry &e : fs::directory_iterator(directory, error)) {
    std::error_code ignored;
    const std::string name = e.path().filename().string();
    const auto used = e.last_write_time(ignored);
    if (name.find(".kernel.tmp.") != std::string::npos) {
      if (!ignored && now - used > std::chrono::hours(1))
        fs::remove(e.path(), ignored);
      continue;
    }
    if (e.path().extension() != ".kernel")
      continue;
    const uint64_t bytes = e.file_size(ignored);
    if (ignored)
      continue;
    total += bytes;
    if (e.path() != fs::path(keep))
      entries.push_back({used, bytes, e.path()});
  }
  std::sort(entries.begin(), entries.end(),
            [](const File &a, const File &b) { return a.used < b.used; });
  for (const File &f : entries) {
    if (total <= maxBytes)
      break;
    std::error_code ignored;
    if (fs::remove(f.path, ignored))
      total -= f.bytes;
  }
}

} // namespace

std::string cacheDirectory(const JitOptions &options) {
  if (!options.cacheDir.empty())
    return options.cacheDir;
  if (!options.diskCache)
    return "";
  const std::string home = settings::userCacheHome();
  return home.empty() ? "" : (fs::path(home) / "tinymlir" / "kernels").string();
}

std::string cacheKey(const std::string &module, const JitOptions &options,
                     const CompileTarget &target) {
  std::ostringstream key;
  key << kVersion << " build " << buildFingerprint() << "\nllvm " << LLVM_VERSION_STRING << "\n"
      << hostDescription() << "\n"
      << target.name() << ": " << optionsKey(options) << " libmvec=" << target.vectorMath() << "\n"
      << module;
  return key.str();
}

std::string entryPath(const std::string &directory, const std::string &key) {
  const llvm::XXH128_hash_t h =
      llvm::xxh3_128bits(llvm::ArrayRef(reinterpret_cast<const uint8_t *>(key.data()), key.size()));
  return (fs::path(directory) / (hex(h.high64) + hex(h.low64) + ".kernel")).string();
}

std::optional<CacheEntry> loadEntry(const std::string &directory, const std::string &key) {
  std::string path = entryPath(directory, key);
  std::optional<std::string> read = readWhole(path);
  if (!read)
    return std::nullopt;
  const std::string &bytes = *read;
  auto reject = [&]() -> std::optional<CacheEntry> {
    std::error_code ignored;
    fs::remove(path, ignored); // corrupt or stale: never loaded, replaced later
    return std::nullopt;
  };
  // Header: magic, format, checksum, payload size.
  size_t pos = sizeof kMagic;
  uint64_t format, checksum, size;
  if (bytes.size() < pos || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0 ||
      !getU64(bytes, pos, format) || format != kFormat || !getU64(bytes, pos, checksum) ||
      !getU64(bytes, pos, size) || bytes.size() - pos != size ||
      hash64(llvm::StringRef(bytes).substr(pos)) != checksum)
    return reject();
  CacheEntry entry;
  std::string storedKey, blas, count;
  if (!getString(bytes, pos, storedKey) || storedKey != key || !getString(bytes, pos, count))
    return reject();
  const uint64_t objects = std::strtoull(count.c_str(), nullptr, 10);
  if (objects == 0 || objects > 64) // a partition per core, at most (jit/ObjectCode.h)
    return reject();
  entry.objects.resize(static_cast<size_t>(objects));
  for (std::string &object : entry.objects)
    if (!getString(bytes, pos, object) || object.empty())
      return reject();
  if (!getString(bytes, pos, entry.optimized) || !getString(bytes, pos, entry.bufferized) ||
      !getString(bytes, pos, entry.lowered) || !getString(bytes, pos, blas) || pos != bytes.size())
    return reject();
  entry.blasCalls = std::atoi(blas.c_str());
  std::error_code ignored; // used now: the last to go when the cache is trimmed
  fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);
  return entry;
}

bool storeEntry(const std::string &directory, const std::string &key, const CacheEntry &entry,
                uint64_t maxBytes) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    return false;
  std::string payload;
  putString(payload, key);
  putString(payload, std::to_string(entry.objects.size()));
  for (const std::string &object : entry.objects)
    putString(payload, object);
  putString(payload, entry.optimized);
  putString(payload, entry.bufferized);
  putString(payload, entry.lowered);
  putString(payload, std::to_string(entry.blasCalls));
  std::string bytes(kMagic, sizeof kMagic);
  putU64(bytes, kFormat);
  putU64(bytes, hash64(payload));
  putU64(bytes, payload.size());
  bytes += payload;
  std::string path = entryPath(directory, key);
  std::string temporary = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0)
    return false;
  bool written = true;
  for (size_t done = 0; written && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    written = n > 0;
    done += written ? static_cast<size_t>(n) : 0;
  }
  written = ::close(fd) == 0 && written;
  if (written)
    fs::rename(temporary, path, error);
  if (!written || error) {
    fs::remove(temporary, error);
    return false;
  }
  if (maxBytes > 0)
    trimDirectory(directory, maxBytes, path);
  return true;
}

} // namespace tinymlir::detail
