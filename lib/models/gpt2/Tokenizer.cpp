// GPT-2 byte-level BPE: see Tokenizer.h.
#include "models/gpt2/Tokenizer.h"
#include "models/gpt2/Settings.h"

#include "tinymlir/array.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <nlohmann/json.hpp>

#include <array>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace tinymlir::gpt2 {
namespace {

[[noreturn]] void fail(const std::string &message) { throw Error("[tokenizer] " + message); }
[[noreturn]] void failFile(const std::string &path, const std::string &reason) {
  fail(path + ": " + reason);
}

std::string hexByte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

std::string codePointName(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", cp);
  return buf;
}

/// A string for an error message: quoted, control characters escaped, long
/// strings cut.
std::string quote(std::string_view s) {
  std::string out = "\"";
  size_t n = 0;
  for (unsigned char c : s) {
    if (++n > 60) {
      out += "...";
      break;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// Decodes one UTF-8 sequence at s[i] (strictly: no overlongs, surrogates or
/// code points above U+10FFFF). Returns its length, or 0 and sets `why`.
size_t decodeUtf8(std::string_view s, size_t i, uint32_t &cp, const char *&why) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF; // allowed range of the second byte
  if (b0 < 0xC2) {
    why = b0 < 0xC0 ? "unexpected continuation byte" : "overlong encoding";
    return 0;
  } else if (b0 < 0xE0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 < 0xF0) {
    len = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0)
      lo = 0xA0;
    if (b0 == 0xED)
      hi = 0x9F;
  } else if (b0 < 0xF5) {
    len = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0)
      lo = 0x90;
    if (b0 == 0xF4)
      hi = 0x8F;
  } else {
    why = "invalid byte";
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) {
      why = "truncated multi-byte sequence";
      return 0;
    }
    unsigned char b = byte(i + k);
    unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) {
      if (k == 1 && b >= 0x80 && b <= 0xBF)
        why = b0 == 0xED   ? "surrogate code point"
              : b0 == 0xF4 ? "code point above U+10FFFF"
                           : "overlong encoding";
      else
        why = "truncated multi-byte sequence";
      return 0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  return len;
}

/// Throws unless `s` is valid UTF-8 (as Python's strict decoder would).
void checkUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp;
    const char *why = "";
    size_t n = decodeUtf8(s, i, cp, why);
    if (n == 0)
      fail("invalid UTF-8 at byte offset " + std::to_string(i) + ": " + why + " (byte " +
           hexByte(b) + ")");
    i += n;
  }
}

/// OpenAI's bytes_to_unicode(): printable bytes map to themselves, the other 68
/// to U+0100.. in byte order.
struct ByteLevel {
  std::array<uint32_t, 256> byteToCp{};
  std::array<int16_t, 0x144> cpToByte{};
  ByteLevel() {
    cpToByte.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      uint32_t cp = printable ? static_cast<uint32_t>(b) : next++;
      byteToCp[b] = cp;
      cpToByte[cp] = static_cast<int16_t>(b);
    }
  }
  /// Raw bytes of a byte-level token string; on failure returns false and
  /// describes why.
  bool toBytes(std::string_view token, std::string &bytes, std::string &why) const {
    bytes.clear();
    for (size_t i = 0; i < token.size();) {
      uint32_t cp;
      const char *reason = "";
      size_t n = decodeUtf8(token, i, cp, reason);
      if (n == 0) {
        why = std::string("invalid UTF-8 (") + reason + ")";
        return false;
      }
      if (cp >= cpToByte.size() || cpToByte[cp] < 0) {
        why = "contains " + codePointName(cp) + ", which is not a byte-level character";
        return false;
      }
      bytes += static_cast<char>(cpToByte[cp]);
      i += n;
    }
    return true;
  }
  std::string toTokenString(std::string_view bytes) const {
    std::string out;
    for (unsigned char b : bytes)
      appendUtf8(out, byteToCp[b]);
    return out;
  }
};

const ByteLevel &byteLevel() {
  static const ByteLevel table;
  return table;
}

// GPT-2's pattern with \s spelled out as Unicode's White_Space set, which is
// what Python's `regex` module matches (PCRE2 10.42 also counts U+180E).
#define TM_WS                                                                                      \
  "\\t\\n\\x{0B}\\f\\r "                                                                           \
  "\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
constexpr const char *kPattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" TM_WS
                                 "\\p{L}\\p{N}]+|[" TM_WS "]+(?![^" TM_WS "])|[" TM_WS "]+";
#undef TM_WS

struct CodeDeleter {
  void operator()(pcre2_code *c) const { pcre2_code_free(c); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data *m) const { pcre2_match_data_free(m); }
};
struct MatchContextDeleter {
  void operator()(pcre2_match_context *m) const { pcre2_match_context_free(m); }
};
struct JitStackDeleter {
  void operator()(pcre2_jit_stack *s) const { pcre2_jit_stack_free(s); }
};

std::string pcre2Message(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0)
    return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char *>(buf);
}

std::string readFile(const std::string &path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    failFile(path, "missing file");
  if (std::filesystem::is_directory(path, ec))
    failFile(path, "is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    failFile(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    failFile(path, "read error");
  return ss.str();
}

/// SAX handler for encoder.json: a flat object of string to integer, every
/// entry kept in order, so that loadEncoder finds duplicate keys (a DOM parse
/// would silently keep the last one).
struct EncoderSax {
  std::vector<std::pair<std::string, int64_t>> entries;
  std::string currentKey;
  int depth = 0;
  bool started = false;
  std::string error;

  bool notObject(const std::string &detail) {
    error = "not a JSON object of string to integer (" + detail + ")";
    return false;
  }
  bool value(const char *kind) {
    if (depth == 0)
      return notObject(std::string("the document is ") + kind);
    return notObject("value of " + quote(currentKey) + " is " + kind);
  }
  bool null() { return value("null"); }
  bool boolean(bool) { return value("a boolean"); }
  bool number_integer(int64_t v) {
    if (depth != 1)
      return value("a number");
    entries.emplace_back(std::move(currentKey), v);
    return true;
  }
  bool number_unsigned(uint64_t v) {
    if (depth != 1)
      return value("a number");
    entries.emplace_back(std::move(currentKey),
                         v > uint64_t(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v));
    return true;
  }
  bool number_float(double, const std::string &text) {
    return value(("a non-integer number " + text).c_str());
  }
  bool string(std::string &) { return value("a string"); }
  bool binary(nlohmann::json::binary_t &) { return value("binary"); }
  bool start_object(size_t) {
    if (depth == 0 && !started) {
      started = true;
      depth = 1;
      entries.reserve(60000);
      return true;
    }
    return value("an object");
  }
  bool key(std::string &k) {
    currentKey.swap(k); // the lexer clears its buffer before the next token
    return true;
  }
  bool end_object() {
    depth = 0;
    return true;
  }
  bool start_array(size_t) { return value("an array"); }
  bool end_array() { return true; }
  bool parse_error(size_t, const std::string &, const nlohmann::json::exception &ex) {
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 9: ..."
    if (auto p = what.find("] "); p != std::string::npos)
      what = what.substr(p + 2);
    error = "invalid JSON: " + what;
    return false;
  }
};

/// Raw bytes -> token id: open addressing over ids, the bytes themselves being
/// the tokens' (`tokens`, id -> bytes). Loading vocab.bpe looks up 150,000
/// strings before the first token; std::unordered_map's node per entry (two
/// cache misses a lookup) made that most of the tokenizer's load time.
class TokenIndex {
public:
  explicit TokenIndex(const std::vector<std::string> &tokens) : tokens_(tokens) {}
  TokenIndex(const TokenIndex &) = delete; // it refers to its owner's tokens
  TokenIndex &operator=(const TokenIndex &) = delete;
  void reserve(size_t n) { slots_.assign(std::bit_ceil(2 * n + 1), Slot{}); } // at most half full
  /// The id of `bytes`, or -1.
  int32_t find(std::string_view bytes) const { return slots_[slotOf(bytes, hash(bytes))].id; }
  /// Adds token `id`, whose bytes tokens[id] are to be `bytes`; false if a
  /// token with these bytes is there already.
  bool insert(std::string_view bytes, int32_t id) {
    const uint64_t h = hash(bytes);
    Slot &s = slots_[slotOf(bytes, h)];
    if (s.id >= 0)
      return false;
    s = {tag(h), id};
    return true;
  }

private:
  struct Slot {
    uint32_t tag = 0; // the hash's high half
    int32_t id = -1;  // -1: empty
  };
  static uint64_t hash(std::string_view bytes) { return std::hash<std::string_view>{}(bytes); }
  static uint32_t tag(uint64_t h) { return static_cast<uint32_t>(h >> 32); }
  /// The slot holding `bytes` (hash h), or the empty one where they would go.
  size_t slotOf(std::string_view bytes, uint64_t h) const {
    const size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    while (slots_[i].id >= 0 && !(slots_[i].tag == tag(h) && tokens_[slots_[i].id] == bytes))
      i = (i + 1) & mask;
    return i;
  }
  const std::vector<std::string> &tokens_;
  std::vector<Slot> slots_;
};

} // namespace

struct Tokenizer::Impl {
  struct Merge {
    int32_t rank;
    int32_t id;   // the merged token
    int32_t line; // in vocab.bpe, for error messages
  };

  std::vector<std::string> tokenBytes;        // id -> raw bytes
  TokenIndex bytesToId{tokenBytes};           // raw bytes -> id
  std::array<int32_t, 256> byteId{};          // single-byte tokens
  std::unordered_map<uint64_t, Merge> merges; // (left id, right id) -> merge
  std::unique_ptr<pcre2_code, CodeDeleter> regex;
  int32_t endOfText = -1;
  bool decodeOnly = false; // loaded without vocab.bpe (loadForDecoding)

  static constexpr size_t kCacheEntries = 1 << 16;
  static constexpr size_t kCacheMaxPiece = 128;
  mutable std::mutex cacheMutex;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache;

  static uint64_t pairKey(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  void loadEncoder(const std::string &path);
  void loadMerges(const std::string &path);
  void compileRegex();
  void bpe(std::string_view piece, std::vector<int32_t> &out) const;
  template <class F> void forEachPiece(std::string_view text, F &&f) const;
};

void Tokenizer::Impl::loadEncoder(const std::string &path) {
  std::string text = readFile(path);
  EncoderSax sax;
  bool ok = nlohmann::json::sax_parse(text, &sax);
  if (!ok || !sax.error.empty())
    failFile(path, sax.error.empty() ? "invalid JSON" : sax.error);
  if (sax.entries.empty())
    failFile(path, "empty vocabulary");
  if (sax.entries.size() > size_t(INT32_MAX))
    failFile(path, "too many tokens");

  const ByteLevel &bl = byteLevel();
  const int64_t n = static_cast<int64_t>(sax.entries.size());
  tokenBytes.assign(static_cast<size_t>(n), std::string());
  std::vector<int32_t> owner(static_cast<size_t>(n), -1); // id -> entry index
  bytesToId.reserve(static_cast<size_t>(n));
  std::string bytes, why;
  for (size_t e = 0; e < sax.entries.size(); ++e) {
    const auto &[key, id] = sax.entries[e];
    if (key.empty())
      failFile(path, "empty token string (id " + std::to_string(id) + ")");
    if (id < 0 || id >= n)
      failFile(path, "ids must be 0.." + std::to_string(n - 1) + " (one per token), but " +
                         quote(key) + " has id " + std::to_string(id));
    if (!bl.toBytes(key, bytes, why))
      failFile(path, "token " + quote(key) + " " + why);
    // The byte-level map is one to one: equal bytes mean the same key twice.
    if (!bytesToId.insert(bytes, static_cast<int32_t>(id)))
      failFile(path, "duplicate token " + quote(key));
    if (owner[id] >= 0)
      failFile(path, "duplicate id " + std::to_string(id) + " (" +
                         quote(sax.entries[owner[id]].first) + " and " + quote(key) + ")");
    owner[id] = static_cast<int32_t>(e);
    tokenBytes[id] = bytes;
    if (key == "<|endoftext|>")
      endOfText = static_cast<int32_t>(id);
  }
  // n entries, distinct ids all below n: every id 0..n-1 is used. Distinct keys
  // give distinct byte strings since the byte-level map is one to one.
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    byteId[b] = bytesToId.find(std::string_view(&byte, 1));
    if (byteId[b] < 0)
      failFile(path, "no token for byte " + hexByte(static_cast<unsigned char>(b)) + " (" +
                         quote(bl.toTokenString(std::string(1, byte))) + ")");
  }
}

void Tokenizer::Impl::loadMerges(const std::string &path) {
  std::string text = readFile(path);
  const ByteLevel &bl = byteLevel();
  merges.reserve(60000);
  std::string_view rest = text;
  int32_t lineNo = 0;
  int32_t rank = 0;
  std::string left, right, joined, why;
  // Error messages are built only on failure: this loop runs 50,000 times
  // before the first token.
  const auto fail = [&](const std::string &what) {
    failFile(path, "line " + std::to_string(lineNo) + ": " + what);
  };
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (lineNo == 1) {
      if (line.empty() || line[0] != '#')
        fail("expected a '#version' header, got " + quote(line));
      continue;
    }
    // Split on runs of spaces/tabs, as Python's str.split() does for this data.
    std::array<std::string_view, 2> fields;
    size_t count = 0;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
        ++i;
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t')
        ++j;
      if (j > i && count++ < 2)
        fields[count - 1] = line.substr(i, j - i);
      i = j;
    }
    if (count == 0)
      continue; // blank line
    if (count != 2)
      fail("expected two symbols separated by a space, got " + quote(line));
    int32_t ids[2];
    for (int k = 0; k < 2; ++k) {
      std::string &bytes = k == 0 ? left : right;
      if (!bl.toBytes(fields[k], bytes, why))
        fail("symbol " + quote(fields[k]) + " " + why);
      ids[k] = bytesToId.find(bytes);
      if (ids[k] < 0)
        fail("symbol " + quote(fields[k]) + " is not in the vocabulary");
    }
    joined.assign(left).append(right);
    const int32_t merged = bytesToId.find(joined);
    if (merged < 0)
      fail("merged symbol " + quote(std::string(fields[0]) + std::string(fields[1])) +
           " is not in the vocabulary");
    auto [it, inserted] = merges.emplace(pairKey(ids[0], ids[1]), Merge{rank, merged, lineNo});
    if (!inserted)
      fail("duplicate merge " + quote(line) + " (also on line " + std::to_string(it->second.line) +
           ")");
    ++rank;
  }
  if (lineNo == 0)
    failFile(path, "empty file (expected a '#version' header and merge lines)");
}

void Tokenizer::Impl::compileRegex() {
  int errorCode = 0;
  PCRE2_SIZE errorOffset = 0;
  pcre2_code *code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &errorCode, &errorOffset, nullptr);
  if (!code)
    fail("cannot compile the pre-tokenizer pattern at offset " + std::to_string(errorOffset) +
         ": " + pcre2Message(errorCode) + " (PCRE2 needs Unicode support)");
  regex.reset(code);
  // JIT when available; pcre2_match falls back to the interpreter otherwise.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
}

template <class F> void Tokenizer::Impl::forEachPiece(std::string_view text, F &&f) const {
  checkUtf8(text);
  if (text.empty())
    return;
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> md(
      pcre2_match_data_create_from_pattern(regex.get(), nullptr));
  if (!md)
    throw std::bad_alloc();
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> mctx;
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> jitStack;
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t offset = 0;
  while (offset < text.size()) {
    // The text was checked once above; checking again per match would make
    // this loop quadratic.
    int rc = pcre2_match(regex.get(), subject, text.size(), offset, PCRE2_NO_UTF_CHECK, md.get(),
                         mctx.get());
    if (rc == PCRE2_ERROR_NOMATCH)
      break; // as re.findall: the rest matches nothing (cannot happen for this pattern)
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_HEAPLIMIT ||
        rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT) {
      if (!mctx) { // retry once with generous limits
        mctx.reset(pcre2_match_context_create(nullptr));
        jitStack.reset(pcre2_jit_stack_create(32 * 1024, 512 * 1024 * 1024, nullptr));
        if (!mctx || !jitStack)
          throw std::bad_alloc();
        pcre2_jit_stack_assign(mctx.get(), nullptr, jitStack.get());
        pcre2_set_heap_limit(mctx.get(), 4u * 1024 * 1024); // in KiB: 4 GiB
        pcre2_set_match_limit(mctx.get(), UINT32_MAX);
        pcre2_set_depth_limit(mctx.get(), UINT32_MAX);
        continue;
      }
    }
    if (rc < 0)
      fail("pre-tokenizer failed at byte offset " + std::to_string(offset) + ": " +
           pcre2Message(rc));
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md.get());
    size_t start = ov[0], end = ov[1];
    if (end <= start) { // empty match (impossible here): step over one character
      offset = start + 1;
      while (offset < text.size() && (static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80)
        ++offset;
      continue;
    }
    f(text.substr(start, end - start));
    offset = end;
  }
}

void Tokenizer::Impl::bpe(std::string_view piece, std::vector<int32_t> &out) const {
  if (piece.size() == 1) {
    out.push_back(byteId[static_cast<unsigned char>(piece[0])]);
    return;
  }
  const bool cacheable = piece.size() <= kCacheMaxPiece;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(std::string(piece));
    if (it != cache.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> word;
  word.reserve(piece.size());
  for (unsigned char c : piece)
    word.push_back(byteId[c]);
  std::vector<int32_t> next;
  next.reserve(word.size());
  while (word.size() > 1) {
    // The lowest-ranked adjacent pair that has a merge.
    const Merge *best = nullptr;
    int32_t bestLeft = 0, bestRight = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      auto it = merges.find(pairKey(word[i], word[i + 1]));
      if (it != merges.end() && (!best || it->second.rank < best->rank)) {
        best = &it->second;
        bestLeft = word[i];
        bestRight = word[i + 1];
      }
    }
    if (!best)
      break;
    // Merge every occurrence, left to right, without overlaps.
    next.clear();
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == bestLeft && word[i + 1] == bestRight) {
        next.push_back(best->id);
        i += 2;
      } else {
        next.push_back(word[i]);
        ++i;
      }
    }
    word.swap(next);
  }
  out.insert(out.end(), word.begin(), word.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex);
    if (cache.size() >= kCacheEntries)
      cache.clear();
    cache.emplace(std::string(piece), std::move(word));
  }
}

Tokenizer::Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::string &dir, bool merges) {
  std::error_code ec;
  const char *expected =
      merges ? " (expected encoder.json and vocab.bpe in it)" : " (expected encoder.json in it)";
  if (!std::filesystem::exists(dir, ec))
    fail(dir + ": missing directory" + expected);
  if (!std::filesystem::is_directory(dir, ec))
    fail(dir + ": not a directory" + expected);
  auto impl = std::make_shared<Impl>();
  std::string base = dir;
  if (!base.empty() && base.back() != '/')
    base += '/';
  impl->loadEncoder(base + "encoder.json");
  if (merges) {
    impl->loadMerges(base + "vocab.bpe");
    impl->compileRegex();
  }
  impl->decodeOnly = !merges;
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::load(const std::string &dir) { return load(dir, true); }

Tokenizer Tokenizer::loadForDecoding(const std::string &dir) { return load(dir, false); }

std::string Tokenizer::defaultDataDir() {
  std::vector<std::string> tried;
  const auto has = [](const std::string &d) {
    std::error_code ec;
    return std::filesystem::exists(d + "/encoder.json", ec) &&
           std::filesystem::exists(d + "/vocab.bpe", ec);
  };
  if (std::string env = settings::dataDir(); !env.empty())
    return env; // explicit choice: load() reports what is wrong with it
  // Installed: <prefix>/share/tinymlir/gpt2, found from where this code was
  // loaded from (<prefix>/bin/tinymlir-gpt2 or <prefix>/lib/libtinymlir...),
  // so that a moved prefix still works; then the prefix given at build time;
  // then the source tree (a build that was not installed).
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&Tokenizer::defaultDataDir), &info) != 0 && info.dli_fname) {
    std::error_code ec;
    std::filesystem::path self = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) {
      const std::filesystem::path up = self.parent_path().parent_path();
      // <prefix>/share/tinymlir/gpt2, or the Python package's data/gpt2.
      for (const std::filesystem::path &d :
           {up / "share" / "tinymlir" / "gpt2", up / "data" / "gpt2"}) {
        tried.push_back(d.string());
        if (has(tried.back()))
          return tried.back();
      }
    }
  }
#ifdef TINYMLIR_INSTALL_DATA_DIR
  tried.push_back(std::string(TINYMLIR_INSTALL_DATA_DIR) + "/gpt2");
  if (has(tried.back()))
    return tried.back();
#endif
#ifdef TINYMLIR_DATA_DIR
  tried.push_back(std::string(TINYMLIR_DATA_DIR) + "/gpt2");
  if (has(tried.back()))
    return tried.back();
#endif
  std::string list;
  for (const auto &t : tried)
    list += (list.empty() ? "" : ", ") + t;
  fail("GPT-2 tokenizer files (encoder.json, vocab.bpe) not found; set TINYMLIR_GPT2_DATA to their "
       "directory" +
       (list.empty() ? std::string() : " (tried " + list + ")"));
}

Tokenizer Tokenizer::loadDefault() { return load(defaultDataDir()); }

std::vector<int32_t> Tokenizer::encode(std::string_view utf8) const {
  if (impl_->decodeOnly)
    fail("this tokenizer was loaded for decoding only (Tokenizer::loadForDecoding, without "
         "vocab.bpe's merges): it cannot encode text");
  std::vector<int32_t> ids;
  ids.reserve(utf8.size() / 3 + 1);
  impl_->forEachPiece(utf8, [&](std::string_view piece) { impl_->bpe(piece, ids); });
  return ids;
}

std::vector<std::string> Tokenizer::pretokenize(std::string_view utf8) const {
  if (impl_->decodeOnly)
    fail("this tokenizer was loaded for decoding only (Tokenizer::loadForDecoding): it cannot "
         "pretokenize text");
  std::vector<std::string> pieces;
  impl_->forEachPiece(utf8, [&](std::string_view piece) { pieces.emplace_back(piece); });
  return pieces;
}

namespace {
[[noreturn]] void badId(int32_t id, size_t vocab, const char *where) {
  fail("token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(vocab) +
       where);
}
} // namespace

std::string Tokenizer::decode(const std::vector<int32_t> &ids) const {
  const auto &tokens = impl_->tokenBytes;
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    int32_t id = ids[i];
    if (id < 0 || static_cast<size_t>(id) >= tokens.size())
      badId(id, tokens.size(), (" (at position " + std::to_string(i) + ")").c_str());
    out += tokens[static_cast<size_t>(id)];
  }
  return out;
}

std::string Tokenizer::decodeToken(int32_t id) const {
  const auto &tokens = impl_->tokenBytes;
  if (id < 0 || static_cast<size_t>(id) >= tokens.size())
    badId(id, tokens.size(), "");
  return tokens[static_cast<size_t>(id)];
}

int32_t Tokenizer::vocabSize() const { return static_cast<int32_t>(impl_->tokenBytes.size()); }

std::optional<int32_t> Tokenizer::tokenId(std::string_view token) const {
  std::string bytes, why;
  if (!byteLevel().toBytes(token, bytes, why))
    return std::nullopt;
  const int32_t id = impl_->bytesToId.find(bytes);
  if (id < 0)
    return std::nullopt;
  return id;
}

int32_t Tokenizer::endOfTextId() const { return impl_->endOfText; }

} // namespace tinymlir::gpt2
