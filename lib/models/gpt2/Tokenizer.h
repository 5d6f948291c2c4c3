// GPT-2's byte-level BPE tokenizer (OpenAI's encoder.py, exactly).
//
// Text is split into pieces by GPT-2's pre-tokenizer pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (PCRE2 with UTF and UCP; \s is spelled out as the Unicode White_Space set so
// the result does not depend on the PCRE2 version), each piece's UTF-8 bytes
// start as single-byte tokens, and adjacent pairs are merged in vocab.bpe's rank
// order. "<|endoftext|>" in the text is not special: it is encoded as ordinary
// characters, as encoder.py does.
//
// \p{L} and \p{N} come from PCRE2's Unicode tables; characters assigned in later
// Unicode versions than the installed PCRE2 knows may split differently from a
// newer Python `regex` module (test/python/bpe_reference.py is the reference).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinymlir::gpt2 {

class Tokenizer {
public:
  /// Loads `dir`/encoder.json and `dir`/vocab.bpe and validates them. Throws
  /// tinymlir::Error naming the file and the reason: missing file, bad JSON, not
  /// an object of string to integer, duplicate tokens or ids, ids not exactly
  /// 0..N-1, a token that is not made of byte-level characters, a missing
  /// single-byte token, a merge line without exactly two symbols, a merge symbol
  /// (or the merged symbol) not in the vocabulary, a duplicate merge.
  static Tokenizer load(const std::string &dir);
  /// Loads and validates `dir`/encoder.json only: a tokenizer that decodes
  /// (ids given by the caller) and whose encode() throws. Parsing vocab.bpe's
  /// 50,000 merges took a warm first token 15-30 ms of its 0.15 s.
  static Tokenizer loadForDecoding(const std::string &dir);
  /// The files shipped with the project: $TINYMLIR_GPT2_DATA if set, else
  /// share/tinymlir/gpt2 next to the installed binary or library (<prefix>/bin
  /// or <prefix>/lib), else the configured install prefix's, else the source
  /// tree's data/gpt2.
  static Tokenizer loadDefault();
  /// The directory loadDefault() would use; throws if none has the files.
  static std::string defaultDataDir();

  /// Token ids of UTF-8 text. Invalid UTF-8 throws (with the byte offset), as
  /// does a tokenizer loaded for decoding only.
  /// Thread-safe (the per-piece cache is guarded by a mutex).
  std::vector<int32_t> encode(std::string_view utf8) const;
  /// The pre-tokenizer's pieces of `utf8`, in order (their concatenation is the
  /// input). Mostly for tests and debugging.
  std::vector<std::string> pretokenize(std::string_view utf8) const;

  /// The bytes the ids stand for. Negative or out-of-range ids throw. The result
  /// is raw bytes: a prefix of a valid encoding may end in a partial UTF-8
  /// sequence.
  std::string decode(const std::vector<int32_t> &ids) const;
  /// The bytes of one token (for streaming output); throws if out of range.
  std::string decodeToken(int32_t id) const;

  /// Number of tokens (50257 for GPT-2).
  int32_t vocabSize() const;
  /// Id of the token spelled `token` in encoder.json (byte-level characters,
  /// e.g. "\u0120the" for " the"), if any.
  std::optional<int32_t> tokenId(std::string_view token) const;
  /// Id of "<|endoftext|>" (50256 for GPT-2), or -1 if the vocabulary lacks it.
  int32_t endOfTextId() const;

  Tokenizer(const Tokenizer &) = default;
  Tokenizer(Tokenizer &&) noexcept = default;
  Tokenizer &operator=(const Tokenizer &) = default;
  Tokenizer &operator=(Tokenizer &&) noexcept = default;
  ~Tokenizer();

private:
  struct Impl;
  explicit Tokenizer(std::shared_ptr<const Impl> impl);
  static Tokenizer load(const std::string &dir, bool merges);
  // Immutable after load (the cache inside is internally synchronized), so
  // copies share it.
  std::shared_ptr<const Impl> impl_;
};

} // namespace tinymlir::gpt2
