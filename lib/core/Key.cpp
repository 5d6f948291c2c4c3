// The specialization key's writer (include/tinymlir/key.h has the grammar).
#include <tinymlir/key.h>

#include <bit>
#include <cinttypes>
#include <charconv>
#include <cstdio>

namespace tinymlir {

void KeyWriter::number(int64_t v) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  key_.append(digits, end);
  key_ += ',';
}

void KeyWriter::hex(double v) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%" PRIx64, std::bit_cast<uint64_t>(v));
  key_ += digits;
}

void KeyWriter::tagged(char tag, std::string_view s) {
  key_ += tag;
  key_ += std::to_string(s.size());
  key_ += ':';
  key_ += s;
}

void KeyWriter::integer(long long v) {
  key_ += 'i';
  key_ += std::to_string(v);
  key_ += ';';
}

void KeyWriter::integerDigits(std::string_view digits) {
  key_ += 'i';
  key_ += digits;
  key_ += ';';
}

void KeyWriter::real(double v) {
  key_ += 'f';
  hex(v);
  key_ += ';';
}

void KeyWriter::complex(double re, double im) {
  key_ += 'c';
  hex(re);
  key_ += ',';
  hex(im);
  key_ += ';';
}

void KeyWriter::array(std::string_view descr, const int64_t *dims, size_t rank,
                      const std::optional<std::vector<int64_t>> &layout) {
  key_ += 'A';
  key_ += descr;
  key_ += '[';
  for (size_t k = 0; k < rank; ++k)
    number(dims[k]);
  key_ += ']';
  if (layout) {
    key_ += 'S';
    for (int64_t s : *layout)
      number(s);
  }
}

void KeyWriter::aliases(const std::vector<size_t> &first) {
  bool any = false;
  for (size_t i = 0; i < first.size(); ++i)
    any = any || first[i] != i;
  if (!any)
    return;
  key_ += "|aliases ";
  for (size_t f : first)
    key_ += std::to_string(f) + ',';
}

void KeyWriter::options(std::string_view optionsKey) {
  key_ += '|';
  key_ += optionsKey;
}

std::optional<std::vector<int64_t>> layoutStrides(const int64_t *dims, const int64_t *bytes,
                                                  size_t rank, int64_t item) {
  if (item <= 0)
    return std::nullopt;
  std::vector<int64_t> out(rank);
  int64_t expected = 1;
  bool contiguous = true, empty = false;
  for (size_t k = rank; k-- > 0;) {
    if (bytes[k] % item != 0)
      return std::nullopt;
    out[k] = bytes[k] / item;
    empty = empty || dims[k] == 0;
    if (dims[k] != 1) {
      contiguous = contiguous && out[k] == expected;
      expected *= dims[k];
    }
  }
  if (contiguous || empty)
    return std::nullopt;
  return out;
}

} // namespace tinymlir
