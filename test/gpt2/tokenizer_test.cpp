// Tests for the GPT-2 byte-level BPE tokenizer (lib/models/gpt2/Tokenizer.*).
//
// Exactness is checked against known GPT-2 encodings and against an independent
// Python port of OpenAI's encoder.py (test/python/bpe_reference.py, which needs
// the Python `regex` module, a dependency: those tests fail with the reason if it is missing).
// Set TINYMLIR_PYTHON to use another interpreter than /usr/bin/python3.
#include "models/gpt2/Tokenizer.h"
#include "tinymlir/array.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using tinymlir::gpt2::Tokenizer;
using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

const std::string kSourceDir = TINYMLIR_SOURCE_DIR;
const std::string kDataDir = kSourceDir + "/data/gpt2";
const std::string kReference = kSourceDir + "/test/python/bpe_reference.py";

const Tokenizer &gpt2() {
  static const Tokenizer tok = Tokenizer::load(kDataDir);
  return tok;
}

#define EXPECT_CONTAINS(haystack, needle)                                                          \
  do {                                                                                             \
    const std::string h_ = (haystack), n_ = (needle);                                              \
    EXPECT_NE(h_.find(n_), std::string::npos)                                                      \
        << "expected to find: " << n_ << "\n               in: " << h_;                            \
  } while (0)

/// The message of the tinymlir::Error that f throws ("no exception" if none).
std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const tinymlir::Error &e) {
    return e.what();
  } catch (const std::exception &e) {
    return std::string("unexpected non-tinymlir exception: ") + e.what();
  }
  return "no exception";
}

/// A fresh directory under the system temp dir, removed afterwards.
class TempDir {
public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("tinymlir_tok_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string file(const std::string &name) const { return (path_ / name).string(); }
  void write(const std::string &name, const std::string &content) const {
    std::ofstream out(path_ / name, std::ios::binary);
    out << content;
  }

private:
  fs::path path_;
};

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------
// Independent helpers (not using the tokenizer's own tables).

std::string utf8(uint32_t cp) {
  std::string out;
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
  return out;
}

/// encoder.py's bytes_to_unicode, written out again: the byte-level spelling of
/// raw bytes.
std::string byteLevel(std::string_view raw) {
  static const std::vector<uint32_t> table = [] {
    std::vector<int> bs;
    for (int b = '!'; b <= '~'; ++b)
      bs.push_back(b);
    for (int b = 0xA1; b <= 0xAC; ++b)
      bs.push_back(b);
    for (int b = 0xAE; b <= 0xFF; ++b)
      bs.push_back(b);
    std::vector<uint32_t> t(256, 0);
    std::vector<bool> printable(256, false);
    for (int b : bs) {
      t[b] = static_cast<uint32_t>(b);
      printable[b] = true;
    }
    uint32_t n = 0;
    for (int b = 0; b < 256; ++b)
      if (!printable[b])
        t[b] = 256 + n++;
    return t;
  }();
  std::string out;
  for (unsigned char c : raw)
    out += utf8(table[c]);
  return out;
}

std::string jsonString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string python() {
  const char *env = std::getenv("TINYMLIR_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

/// Runs a shell command; returns its exit status and stdout.
int runCommand(const std::string &cmd, std::string &out) {
  out.clear();
  FILE *pipe = ::popen(cmd.c_str(), "r");
  if (!pipe)
    return -1;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0)
    out.append(buf, n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Why the Python reference cannot run here, or nullopt if it can.
std::optional<std::string> referenceUnavailable() {
  static const std::optional<std::string> why = []() -> std::optional<std::string> {
    if (!fs::exists(kReference))
      return "missing " + kReference;
    std::string out;
    int rc = runCommand(shellQuote(python()) + " -c 'import regex' 2>&1", out);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
      out.pop_back();
    if (rc != 0)
      return "the Python reference needs the `regex` module (" + python() +
             " -c 'import regex' failed: " + out + "); install python3-regex";
    return std::nullopt;
  }();
  return why;
}

#define REQUIRE_REFERENCE()                                                                        \
  do {                                                                                             \
    if (auto why_ = referenceUnavailable()) /* python3-regex is a dependency: fail, not skip */    \
      FAIL() << *why_;                                                                             \
  } while (0)

/// Ids from the Python reference for each text (one process for all).
std::vector<std::vector<int32_t>> referenceEncode(const std::vector<std::string> &texts,
                                                  const std::string &dataDir = kDataDir) {
  TempDir tmp;
  std::string json = "[";
  for (size_t i = 0; i < texts.size(); ++i)
    json += (i ? ",\n" : "") + jsonString(texts[i]);
  json += "]";
  tmp.write("texts.json", json);
  std::string out;
  const std::string cmd = shellQuote(python()) + " " + shellQuote(kReference) + " --data " +
                          shellQuote(dataDir) + " --batch " + shellQuote(tmp.file("texts.json")) +
                          " 2>" + shellQuote(tmp.file("stderr.txt"));
  int rc = runCommand(cmd, out);
  if (rc != 0) {
    ADD_FAILURE() << "reference failed (exit " << rc << "): " << cmd << "\n"
                  << readAll(tmp.file("stderr.txt"));
    return {};
  }
  std::vector<std::vector<int32_t>> result;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<int32_t> ids;
    for (size_t i = 0; i < line.size();) {
      if (line[i] == '-' || (line[i] >= '0' && line[i] <= '9')) {
        size_t used = 0;
        ids.push_back(static_cast<int32_t>(std::stol(line.substr(i), &used)));
        i += used;
      } else {
        ++i;
      }
    }
    result.push_back(std::move(ids));
  }
  if (result.size() != texts.size())
    ADD_FAILURE() << "reference printed " << result.size() << " lines for " << texts.size()
                  << " texts";
  return result;
}

std::string printable(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// Checks the tokenizer against the reference, and round trips, for `texts`.
void expectMatchesReference(const Tokenizer &tok, const std::vector<std::string> &texts,
                            const std::string &dataDir = kDataDir) {
  auto expected = referenceEncode(texts, dataDir);
  ASSERT_EQ(expected.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    std::vector<int32_t> ids = tok.encode(texts[i]);
    EXPECT_EQ(ids, expected[i]) << "text #" << i << ": \"" << printable(texts[i]) << "\"";
    EXPECT_EQ(tok.decode(ids), texts[i]) << "text #" << i;
  }
}

const std::vector<std::string> &variedTexts() {
  static const std::vector<std::string> texts = {
      "Hello, world! This is a test of the GPT-2 tokenizer.",
      "The quick brown fox jumps over the lazy dog.",
      "I'm, you're, they'll, it's, we'd, I've",
      "IT'S WE'D I'M YOU'RE 'S 'T ''s 'll've don't stop believin'",
      "12345 3.14 1,000,000",
      "a   b\n\n\n  c\t\td   ",
      "   leading and trailing   ",
      "café naïve Zürich",
      "e\xCC\x81 combining acute, \xEF\xAC\x81 ligature",
      "日本語のテキスト 中文",
      "🙂👍🏽 family 👨‍👩‍👧",
      "Ελληνικά Русский текст עברית العربية हिन्दी ภาษาไทย 한국어",
      "Mixed: ½ ² ٣ Ⅻ — “quotes” ‘single’ … €100 "
      "¥200\r\n\xC2\xA0nbsp\xE3\x80\x80ideo\xE2\x80\xA8line",
      "mongolian vowel separator: a\xE1\xA0\x8E"
      "b \xE1\xA0\x8E c x \xE1\xA0\x8Ey",
      "def f(x):\n    return x**2  # square\n\n\nclass A:\n\tpass\n",
      "<|endoftext|>",
      "",
      " ",
      "\n",
      "  \n",
      "\x01\x02 control\x7f chars \x00 nul\x1f"s, // with a NUL
      std::string(300, 'x'),
      "Alan Turing theorized that computers would one day become the most powerful machines on the "
      "planet.",
      "In 1950, Turing published \"Computing Machinery and Intelligence\", asking: can machines "
      "think? "
      "It's a question that we'd still debate in 2024 -- or won't we?",
  };
  return texts;
}

// ---------------------------------------------------------------------------
// Small synthetic vocabularies.

struct TinyVocab {
  std::vector<std::string> tokens;                         // raw bytes, index = id
  std::vector<std::pair<std::string, std::string>> merges; // raw bytes
};

/// 256 single-byte tokens (in reverse byte order, so ids differ from bytes),
/// then the merge results in order, then "<|endoftext|>".
TinyVocab tinyVocab(const std::vector<std::pair<std::string, std::string>> &merges) {
  TinyVocab v;
  for (int b = 255; b >= 0; --b)
    v.tokens.push_back(std::string(1, static_cast<char>(b)));
  for (const auto &[a, b] : merges)
    v.tokens.push_back(a + b);
  v.merges = merges;
  return v;
}

std::string encoderJson(const TinyVocab &v) {
  std::string json = "{";
  for (size_t i = 0; i < v.tokens.size(); ++i)
    json += (i ? ", " : "") + jsonString(byteLevel(v.tokens[i])) + ": " + std::to_string(i);
  json += ", \"<|endoftext|>\": " + std::to_string(v.tokens.size()) + "}";
  return json;
}

std::string vocabBpe(const TinyVocab &v) {
  std::string bpe = "#version: 0.2\n";
  for (const auto &[a, b] : v.merges)
    bpe += byteLevel(a) + " " + byteLevel(b) + "\n";
  return bpe;
}

void writeTiny(const TempDir &dir, const TinyVocab &v) {
  dir.write("encoder.json", encoderJson(v));
  dir.write("vocab.bpe", vocabBpe(v));
}

const std::vector<std::pair<std::string, std::string>> kTinyMerges = {
    {"a", "a"},   {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "w"}, {"o", "r"},
    {" w", "or"}, {"a", "b"}, {"b", "a"}, {"aa", "a"},  {"ab", "ab"},  {"1", "2"}, {"'", "s"},
};

} // namespace

// ---------------------------------------------------------------------------
// Known GPT-2 encodings.

TEST(Gpt2Tokenizer, EncodesKnownPrompt) {
  const std::string prompt = "Alan Turing theorized that computers would one day become";
  const std::vector<int32_t> expected = {36235, 39141, 18765, 1143, 326,
                                         9061,  561,   530,   1110, 1716};
  EXPECT_EQ(gpt2().encode(prompt), expected);
  EXPECT_EQ(gpt2().decode(expected), prompt);
}

TEST(Gpt2Tokenizer, DecodesKnownContinuation) {
  const std::vector<int32_t> ids = {262, 749, 3665, 8217, 319, 262, 5440, 13, 198, 198};
  const std::string text = " the most powerful machines on the planet.\n\n";
  EXPECT_EQ(gpt2().decode(ids), text);
  // Generated text need not be in canonical form: encoding merges "\n\n" (628).
  const std::vector<int32_t> canonical = {262, 749, 3665, 8217, 319, 262, 5440, 13, 628};
  EXPECT_EQ(gpt2().encode(text), canonical);
  EXPECT_EQ(gpt2().decode(canonical), text);
}

TEST(Gpt2Tokenizer, VocabularyBasics) {
  const Tokenizer &tok = gpt2();
  EXPECT_EQ(tok.vocabSize(), 50257);
  EXPECT_EQ(tok.endOfTextId(), 50256);
  EXPECT_EQ(tok.decodeToken(50256), "<|endoftext|>");
  EXPECT_EQ(tok.tokenId("\xC4\xA0the"), 262); // "Ġthe"
  EXPECT_EQ(tok.decodeToken(262), " the");
  EXPECT_EQ(tok.decodeToken(198), "\n");
  EXPECT_EQ(tok.tokenId("<|endoftext|>"), 50256);
  EXPECT_EQ(tok.tokenId("no such token, surely"), std::nullopt);
  EXPECT_EQ(tok.tokenId(" the"), std::nullopt); // a raw space is not a byte-level character
  // "<|endoftext|>" in text is ordinary characters, as in encoder.py.
  EXPECT_GT(tok.encode("<|endoftext|>").size(), 1u);
  // Every single byte is a token of its own.
  for (int b = 0; b < 256; ++b) {
    std::optional<int32_t> id = tok.tokenId(byteLevel(std::string(1, static_cast<char>(b))));
    ASSERT_TRUE(id.has_value()) << b;
    EXPECT_EQ(tok.decodeToken(*id), std::string(1, static_cast<char>(b)));
  }
}

TEST(Gpt2Tokenizer, LoadDefaultFindsShippedFiles) {
  ::unsetenv("TINYMLIR_GPT2_DATA");
  Tokenizer tok = Tokenizer::loadDefault();
  EXPECT_EQ(tok.vocabSize(), 50257);
  EXPECT_EQ(tok.encode("Hello world"), gpt2().encode("Hello world"));
}

TEST(Gpt2Tokenizer, LoadDefaultHonoursEnvironment) {
  TempDir dir;
  TinyVocab v = tinyVocab(kTinyMerges);
  writeTiny(dir, v);
  ::setenv("TINYMLIR_GPT2_DATA", dir.str().c_str(), 1);
  Tokenizer tok = Tokenizer::loadDefault();
  EXPECT_EQ(Tokenizer::defaultDataDir(), dir.str());
  EXPECT_EQ(tok.vocabSize(), static_cast<int32_t>(v.tokens.size() + 1));
  ::setenv("TINYMLIR_GPT2_DATA", (dir.str() + "/nope").c_str(), 1);
  EXPECT_CONTAINS(errorOf([] { Tokenizer::loadDefault(); }), dir.str() + "/nope");
  ::unsetenv("TINYMLIR_GPT2_DATA");
}

TEST(Gpt2Tokenizer, LoadedForDecodingDecodesAsTheWholeOne) {
  // Without vocab.bpe (it is not read: a directory without one loads), every
  // id decodes to the whole tokenizer's bytes; encoding is refused by name.
  TempDir dir;
  fs::copy_file(fs::path(Tokenizer::defaultDataDir()) / "encoder.json", dir.file("encoder.json"));
  Tokenizer tok = Tokenizer::loadForDecoding(dir.str());
  ASSERT_EQ(tok.vocabSize(), gpt2().vocabSize());
  for (int32_t id = 0; id < tok.vocabSize(); ++id)
    ASSERT_EQ(tok.decodeToken(id), gpt2().decodeToken(id)) << id;
  EXPECT_EQ(tok.endOfTextId(), 50256);
  EXPECT_EQ(tok.tokenId("\xC4\xA0the"), 262);
  EXPECT_CONTAINS(errorOf([&] { tok.encode("Hello"); }),
                  "[tokenizer] this tokenizer was loaded for decoding only");
  EXPECT_CONTAINS(errorOf([&] { tok.pretokenize("Hello"); }), "decoding only");
  // encoder.json is still validated.
  dir.write("encoder.json", "{\"a\": 0, \"b\": 0}");
  EXPECT_CONTAINS(errorOf([&] { Tokenizer::loadForDecoding(dir.str()); }), "duplicate id 0");
  EXPECT_CONTAINS(errorOf([&] { Tokenizer::loadForDecoding(dir.str() + "/absent"); }),
                  "missing directory (expected encoder.json in it)");
}

TEST(Gpt2Tokenizer, CopiesShareTheTables) {
  Tokenizer a = gpt2();
  Tokenizer b = std::move(a);
  Tokenizer c = b;
  EXPECT_EQ(c.encode("copy me"), gpt2().encode("copy me"));
  EXPECT_EQ(b.vocabSize(), 50257);
}

// ---------------------------------------------------------------------------
// Pre-tokenizer.

TEST(Gpt2Tokenizer, PretokenizerPieces) {
  using V = std::vector<std::string>;
  const Tokenizer &tok = gpt2();
  EXPECT_EQ(tok.pretokenize("I'm here  now"), (V{"I", "'m", " here", " ", " now"}));
  EXPECT_EQ(tok.pretokenize("Hello world!!! 123abc"), (V{"Hello", " world", "!!!", " 123", "abc"}));
  EXPECT_EQ(tok.pretokenize("a   b\nc  "), (V{"a", "  ", " b", "\n", "c", "  "}));
  EXPECT_EQ(tok.pretokenize("it's 'S don't"), (V{"it", "'s", " '", "S", " don", "'t"}));
  EXPECT_EQ(tok.pretokenize(""), V{});
  // U+180E is not White_Space (Python's regex agrees; PCRE2's own \s would not).
  EXPECT_EQ(tok.pretokenize("x \xE1\xA0\x8Ey"), (V{"x", " \xE1\xA0\x8E", "y"}));
  // U+3000 and U+00A0 are.
  EXPECT_EQ(tok.pretokenize("x\xE3\x80\x80\xC2\xA0y"), (V{"x", "\xE3\x80\x80", "\xC2\xA0", "y"}));
}

// ---------------------------------------------------------------------------
// Against the Python reference.

TEST(Gpt2Tokenizer, MatchesReferenceOnVariedText) {
  REQUIRE_REFERENCE();
  expectMatchesReference(gpt2(), variedTexts());
}

TEST(Gpt2Tokenizer, MatchesReferenceOnRandomTextFromStableScripts) {
  REQUIRE_REFERENCE();
  // Characters whose Unicode categories have not changed in decades, so the
  // result does not depend on the Unicode versions of PCRE2 and Python regex.
  const std::vector<std::pair<uint32_t, uint32_t>> ranges = {
      {0x20, 0x7E},       {0x20, 0x20},     {0x30, 0x39},   {0x61, 0x7A},     {0xA0, 0xFF},
      {0x391, 0x3A1},     {0x3B1, 0x3C9},   {0x410, 0x44F}, {0x3041, 0x3096}, {0x4E00, 0x9FA5},
      {0x1F600, 0x1F64F}, {0x2000, 0x200A}, {0x660, 0x669},
  };
  const std::vector<std::string> specials = {
      "'s", "'t", "'re",  "'ve", "'m",           "'ll",          "'d",
      "\n", "\t", "\r\n", "  ",  "\xE3\x80\x80", "\xE2\x80\xA8", "\xC2\x85"};
  std::mt19937 rng(12345);
  std::vector<std::string> texts;
  for (int t = 0; t < 200; ++t) {
    std::string s;
    int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) {
      if (rng() % 5 == 0) {
        s += specials[rng() % specials.size()];
      } else {
        auto [lo, hi] = ranges[rng() % ranges.size()];
        s += utf8(lo + rng() % (hi - lo + 1));
      }
    }
    texts.push_back(s);
  }
  expectMatchesReference(gpt2(), texts);
}

TEST(Gpt2Tokenizer, MatchesReferenceOnLongRuns) {
  REQUIRE_REFERENCE();
  std::string mixed;
  for (int i = 0; i < 300; ++i)
    mixed += "word" + std::to_string(i) + (i % 7 == 0 ? "\n\n" : i % 3 == 0 ? ",  " : " ");
  expectMatchesReference(gpt2(), {std::string(5000, 'a'), std::string(5000, ' ') + "x",
                                  std::string(3000, '7'), std::string(3000, '!'),
                                  std::string(2000, '\n') + "end", mixed});
}

TEST(Gpt2Tokenizer, MatchesReferenceOnTinyVocabulary) {
  REQUIRE_REFERENCE();
  TempDir dir;
  writeTiny(dir, tinyVocab(kTinyMerges));
  Tokenizer tok = Tokenizer::load(dir.str());
  expectMatchesReference(tok,
                         {"hello world", "aaaaa", "aaaaaaa", "ababab", "abababa", "baab",
                          "12 123 1212", "it's hello's", "hellohello worldworld", "", "zzz"},
                         dir.str());
}

// ---------------------------------------------------------------------------
// Merge semantics on a tiny vocabulary (independent of the reference).

TEST(Gpt2Tokenizer, TinyVocabularyMerges) {
  TempDir dir;
  TinyVocab v = tinyVocab(kTinyMerges);
  writeTiny(dir, v);
  Tokenizer tok = Tokenizer::load(dir.str());
  const auto id = [&](const std::string &raw) -> int32_t {
    for (size_t i = 0; i < v.tokens.size(); ++i)
      if (v.tokens[i] == raw)
        return static_cast<int32_t>(i);
    ADD_FAILURE() << "no token " << raw;
    return -1;
  };
  EXPECT_EQ(tok.vocabSize(), static_cast<int32_t>(v.tokens.size() + 1));
  EXPECT_EQ(tok.endOfTextId(), static_cast<int32_t>(v.tokens.size()));
  EXPECT_EQ(tok.encode("hello world"),
            (std::vector<int32_t>{id("hello"), id(" wor"), id("l"), id("d")}));
  // "a a" (rank 0) merges left to right without overlap: aaa -> aa a, then "aa a" -> aaa.
  EXPECT_EQ(tok.encode("aaa"), (std::vector<int32_t>{id("aaa")}));
  EXPECT_EQ(tok.encode("aaaaa"), (std::vector<int32_t>{id("aa"), id("aaa")}));
  // "a b" outranks "b a"; then "ab ab".
  EXPECT_EQ(tok.encode("ababab"), (std::vector<int32_t>{id("abab"), id("ab")}));
  EXPECT_EQ(tok.encode("baab"),
            (std::vector<int32_t>{id("b"), id("aa"), id("b")})); // "a a" outranks "a b"
  EXPECT_EQ(tok.encode("it's"), (std::vector<int32_t>{id("i"), id("t"), id("'s")}));
}

// ---------------------------------------------------------------------------
// Round trips.

TEST(Gpt2Tokenizer, RoundTripsVariedText) {
  for (const std::string &s : variedTexts()) {
    std::vector<int32_t> ids = gpt2().encode(s);
    EXPECT_EQ(gpt2().decode(ids), s) << printable(s);
    std::string joined;
    for (const std::string &p : gpt2().pretokenize(s))
      joined += p;
    EXPECT_EQ(joined, s);
  }
}

TEST(Gpt2Tokenizer, RoundTripsRandomUtf8) {
  std::mt19937 rng(2024);
  const auto randomCodePoint = [&]() -> uint32_t {
    for (;;) {
      uint32_t cp;
      switch (rng() % 6) {
      case 0:
        cp = rng() % 0x80;
        break;
      case 1:
        cp = 0x80 + rng() % (0x800 - 0x80);
        break;
      case 2:
        cp = 0x800 + rng() % (0x10000 - 0x800);
        break;
      case 3:
        cp = 0x10000 + rng() % (0x110000 - 0x10000);
        break;
      case 4:
        cp = " \t\n\r\x0b\x0c"[rng() % 6];
        break;
      default:
        cp = 0x1F300 + rng() % 0x800;
        break;
      }
      if (cp < 0xD800 || cp > 0xDFFF)
        return cp;
    }
  };
  for (int t = 0; t < 500; ++t) {
    std::string s;
    int len = static_cast<int>(rng() % 50);
    for (int i = 0; i < len; ++i)
      s += utf8(randomCodePoint());
    std::vector<int32_t> ids = gpt2().encode(s);
    ASSERT_EQ(gpt2().decode(ids), s) << "case " << t << ": " << printable(s);
    std::string streamed;
    for (int32_t id : ids)
      streamed += gpt2().decodeToken(id);
    ASSERT_EQ(streamed, s);
  }
}

TEST(Gpt2Tokenizer, RoundTripsLongInputs) {
  for (const std::string &s :
       {std::string(200000, 'a'), std::string(200000, ' '), std::string(100000, '9'),
        std::string(100000, '?'), std::string(100000, '\n') + "x"}) {
    std::vector<int32_t> ids = gpt2().encode(s);
    EXPECT_EQ(gpt2().decode(ids), s);
  }
}

TEST(Gpt2Tokenizer, StreamingDecodeMayEndInPartialUtf8) {
  const std::string s = "🙂👍🏽 日本";
  std::vector<int32_t> ids = gpt2().encode(s);
  std::string prefix;
  for (size_t k = 0; k < ids.size(); ++k) {
    prefix += gpt2().decodeToken(ids[k]);
    EXPECT_EQ(gpt2().decode(std::vector<int32_t>(ids.begin(), ids.begin() + k + 1)), prefix);
  }
  EXPECT_EQ(prefix, s);
  // Some token of the emoji is a partial character.
  EXPECT_GT(ids.size(), 3u);
}

TEST(Gpt2Tokenizer, ConcurrentEncodeAgrees) {
  const auto &texts = variedTexts();
  std::vector<std::vector<int32_t>> expected;
  Tokenizer fresh = Tokenizer::load(kDataDir); // empty cache
  for (const auto &t : texts)
    expected.push_back(gpt2().encode(t));
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < 4; ++th)
    threads.emplace_back([&, th] {
      for (int rep = 0; rep < 20; ++rep)
        for (size_t i = 0; i < texts.size(); ++i)
          if (fresh.encode(texts[(i + th) % texts.size()]) != expected[(i + th) % texts.size()])
            ++mismatches;
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// ---------------------------------------------------------------------------
// Errors.

TEST(Gpt2Tokenizer, RejectsInvalidUtf8) {
  struct Case {
    std::string text;
    size_t offset;
    const char *reason;
  };
  const std::vector<Case> cases = {
      {"\xff", 0, "invalid byte"},
      {"abc\x80", 3, "unexpected continuation byte"},
      {"ok \xC3", 3, "truncated"},
      {"\xE2\x82x", 0, "truncated"},
      {"a\xC0\xAF", 1, "overlong"},
      {"ab\xE0\x80\xAF", 2, "overlong"},
      {"\xED\xA0\x80", 0, "surrogate"},
      {"caf\xC3\xA9 \xF4\x90\x80\x80", 6, "above U+10FFFF"},
      {"\xF8\x88\x80\x80\x80", 0, "invalid byte"},
  };
  for (const Case &c : cases) {
    std::string msg = errorOf([&] { gpt2().encode(c.text); });
    EXPECT_CONTAINS(msg,
                    "[tokenizer] invalid UTF-8 at byte offset " + std::to_string(c.offset) + ":");
    EXPECT_CONTAINS(msg, c.reason);
  }
}

TEST(Gpt2Tokenizer, RejectsOutOfRangeIds) {
  EXPECT_EQ(errorOf([] { gpt2().decodeToken(50300); }),
            "[tokenizer] token id 50300 is outside the vocabulary of 50257");
  EXPECT_EQ(errorOf([] { gpt2().decodeToken(-1); }),
            "[tokenizer] token id -1 is outside the vocabulary of 50257");
  std::string msg = errorOf([] { gpt2().decode({464, 50257}); });
  EXPECT_CONTAINS(msg, "[tokenizer] token id 50257 is outside the vocabulary of 50257");
  EXPECT_CONTAINS(msg, "position 1");
  EXPECT_CONTAINS(errorOf([] { gpt2().decode({-5}); }), "token id -5 is outside the vocabulary");
  EXPECT_EQ(gpt2().decode({}), "");
}

namespace {
/// Loads `dir` expecting an error that names `file` (a path) and contains `reason`.
void expectLoadError(const std::string &dir, const std::string &file, const std::string &reason) {
  std::string msg = errorOf([&] { Tokenizer::load(dir); });
  EXPECT_CONTAINS(msg, "[tokenizer] ");
  EXPECT_CONTAINS(msg, file);
  EXPECT_CONTAINS(msg, reason);
}
} // namespace

TEST(Gpt2Tokenizer, RejectsMissingFiles) {
  TempDir dir;
  expectLoadError(dir.str() + "/absent", dir.str() + "/absent", "missing directory");
  expectLoadError(dir.str(), dir.file("encoder.json"), "missing file");
  TinyVocab v = tinyVocab(kTinyMerges);
  dir.write("encoder.json", encoderJson(v));
  expectLoadError(dir.str(), dir.file("vocab.bpe"), "missing file");
  dir.write("vocab.bpe", vocabBpe(v));
  EXPECT_NO_THROW(Tokenizer::load(dir.str()));
  fs::remove(dir.file("encoder.json"));
  fs::create_directory(dir.file("encoder.json"));
  expectLoadError(dir.str(), dir.file("encoder.json"), "is a directory");
  expectLoadError(dir.file("vocab.bpe"), dir.file("vocab.bpe"), "not a directory");
}

TEST(Gpt2Tokenizer, RejectsMalformedEncoderJson) {
  TinyVocab v = tinyVocab(kTinyMerges);
  const std::string good = encoderJson(v);
  const std::string bytes =
      good.substr(0, good.find(", \"<|endoftext|>\"")); // without the closing brace
  const std::string n = std::to_string(v.tokens.size());
  const std::string objectReason = "not a JSON object of string to integer";
  struct Case {
    std::string json, reason;
  };
  const std::vector<Case> cases = {
      {"", "invalid JSON"},
      {good.substr(0, good.size() / 2), "invalid JSON"},
      {good + " x", "invalid JSON"},
      {"[1, 2, 3]", objectReason + " (the document is an array)"},
      {"42", objectReason},
      {bytes + ", \"zz\": \"x\"}", objectReason + " (value of \"zz\" is a string)"},
      {bytes + ", \"zz\": 1.5}", "non-integer number"},
      {bytes + ", \"zz\": null}", objectReason},
      {bytes + ", \"zz\": [1]}", objectReason},
      {bytes + ", \"zz\": {\"a\": 1}}", objectReason},
      {bytes + ", \"zz\": " + n + ", \"zz\": " + n + "}", "duplicate token \"zz\""},
      {bytes + ", \"zz\": 0}", "duplicate id 0"},
      {bytes + ", \"zz\": -1}", "has id -1"},
      {bytes + ", \"zz\": " + std::to_string(v.tokens.size() + 5) + "}", "ids must be 0.." + n},
      {bytes + ", \"zz\": 99999999999999999999}", objectReason},
      {bytes + ", \"\": " + n + "}", "empty token string"},
      {bytes + ", \"a b\": " + n + "}", "U+0020, which is not a byte-level character"},
      {bytes + ", \"€\": " + n + "}", "U+20AC, which is not a byte-level character"},
      {"{}", "empty vocabulary"},
      {"{\"a\": 0, \"b\": 1}", "no token for byte 0x00"},
  };
  for (const Case &c : cases) {
    TempDir dir;
    dir.write("encoder.json", c.json);
    dir.write("vocab.bpe", "#version: 0.2\n");
    SCOPED_TRACE(c.json.size() > 80 ? "..." + c.json.substr(c.json.size() - 60) : c.json);
    expectLoadError(dir.str(), dir.file("encoder.json"), c.reason);
  }
}

TEST(Gpt2Tokenizer, RejectsMalformedVocabBpe) {
  TinyVocab v = tinyVocab(kTinyMerges);
  const std::string good = vocabBpe(v);
  struct Case {
    std::string bpe, reason;
  };
  const std::vector<Case> cases = {
      {"", "empty file"},
      {"h e\n", "line 1: expected a '#version' header"},
      {"#version: 0.2\nh e\nabc\n",
       "line 3: expected two symbols separated by a space, got \"abc\""},
      {"#version: 0.2\nh e l\n", "line 2: expected two symbols"},
      {"#version: 0.2\nzz q\n", "line 2: symbol \"zz\" is not in the vocabulary"},
      {"#version: 0.2\nh e\nhe x\n", "line 3: merged symbol \"hex\" is not in the vocabulary"},
      {"#version: 0.2\nh e\na a\nh e\n", "line 4: duplicate merge \"h e\" (also on line 2)"},
      {"#version: 0.2\nh \xE2\x82\xAC\n", "line 2: symbol \"\xE2\x82\xAC\" contains U+20AC"},
      {"#version: 0.2\nh \xE2\x82\n", "line 2: symbol"},
  };
  for (const Case &c : cases) {
    TempDir dir;
    dir.write("encoder.json", encoderJson(v));
    dir.write("vocab.bpe", c.bpe);
    SCOPED_TRACE(c.bpe);
    expectLoadError(dir.str(), dir.file("vocab.bpe"), c.reason);
  }
  // Blank lines and CRLF line ends are accepted.
  TempDir dir;
  dir.write("encoder.json", encoderJson(v));
  std::string crlf;
  for (char ch : good) {
    if (ch == '\n')
      crlf += "\r\n\n";
    else
      crlf += ch;
  }
  dir.write("vocab.bpe", crlf);
  Tokenizer tok = Tokenizer::load(dir.str());
  EXPECT_EQ(tok.encode("hello"), (std::vector<int32_t>{static_cast<int32_t>(256 + 4)}));
}
