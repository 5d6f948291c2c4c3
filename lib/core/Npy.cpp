// NumPy .npy reading and writing for Array (formats 1.0, 2.0 and 3.0).
//
// Only little-endian float32, float64 and int32 data are supported. Fortran
// ordered files are loaded and returned as C-ordered (row-major) arrays.
#include "tinymlir/array.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

namespace tinymlir {

static_assert(std::endian::native == std::endian::little, "tinymlir assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kMaxHeader = 1 << 20; // far larger than any real header

[[noreturn]] void fail(const std::string &path, const std::string &reason) {
  throw Error("[npy] " + path + ": " + reason);
}

/// The header dict, e.g. "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }".
struct Header {
  std::optional<std::string> descr;
  std::optional<bool> fortranOrder;
  std::optional<Shape> shape;
};

/// A small parser for the Python literal subset NumPy writes in headers.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &path) : s_(text), path_(path) {}

  Header parse() {
    Header h;
    skipSpace();
    expect('{');
    skipSpace();
    while (!consume('}')) {
      std::string key = parseString();
      skipSpace();
      expect(':');
      skipSpace();
      if (key == "descr") {
        h.descr = parseString();
      } else if (key == "fortran_order") {
        h.fortranOrder = parseBool();
      } else if (key == "shape") {
        h.shape = parseShape();
      } else {
        fail(path_, "unexpected key '" + key + "' in header");
      }
      skipSpace();
      if (!consume(',')) {
        skipSpace();
        expect('}');
        break;
      }
      skipSpace();
    }
    skipSpace();
    if (pos_ != s_.size())
      fail(path_, "trailing characters after the header dict");
    if (!h.descr)
      fail(path_, "header has no 'descr'");
    if (!h.fortranOrder)
      fail(path_, "header has no 'fortran_order'");
    if (!h.shape)
      fail(path_, "header has no 'shape'");
    return h;
  }

private:
  void skipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  bool consume(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      fail(path_, std::string("malformed header: expected '") + c + "' at offset " +
                      std::to_string(pos_) + " of '" + s_ + "'");
  }
  std::string parseString() {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      fail(path_, "malformed header: expected a string at offset " + std::to_string(pos_));
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos)
      fail(path_, "malformed header: unterminated string");
    std::string out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }
  bool parseBool() {
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail(path_, "malformed header: 'fortran_order' is not True or False");
  }
  int64_t parseInt() {
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int d = s_[pos_++] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10)
        fail(path_, "shape dimension is too large");
      v = v * 10 + d;
    }
    if (pos_ == start)
      fail(path_, "malformed header: expected a non-negative integer in 'shape'");
    // Python 2 era files may write 3L.
    consume('L');
    return v;
  }
  Shape parseShape() {
    Shape shape;
    expect('(');
    skipSpace();
    while (!consume(')')) {
      shape.push_back(parseInt());
      skipSpace();
      if (!consume(',')) {
        skipSpace();
        expect(')');
        break;
      }
      skipSpace();
    }
    return shape;
  }

  const std::string &s_;
  const std::string &path_;
  size_t pos_ = 0;
};

std::optional<DType> dtypeFromDescr(const std::string &d) {
#define TINYMLIR_DTYPE(Name, name, descr, ...)                                                     \
  if (d == descr)                                                                                  \
    return DType::Name;
#include <tinymlir/dtypes.def>
  return std::nullopt;
}

const char *descrOf(DType d) {
  switch (d) {
#define TINYMLIR_DTYPE(Name, name, descr, ...)                                                     \
  case DType::Name:                                                                                \
    return descr;
#include <tinymlir/dtypes.def>
  }
  return "?";
}

} // namespace

Array Array::loadNpy(const std::string &path) {
  std::error_code ec;
  auto fileSize = std::filesystem::file_size(path, ec);
  if (ec)
    fail(path, "cannot open file: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, "cannot open file");

  unsigned char pre[12];
  if (fileSize < 10)
    fail(path, "file is too short to be a .npy file (" + std::to_string(fileSize) + " bytes)");
  in.read(reinterpret_cast<char *>(pre), 10);
  if (!in)
    fail(path, "cannot read the file header");
  if (std::memcmp(pre, kMagic, kMagicSize) != 0)
    fail(path, "not a .npy file (bad magic string)");
  int major = pre[6], minor = pre[7];
  if (minor != 0 || major < 1 || major > 3)
    fail(path,
         "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor));
  uint64_t headerLen, prefixLen;
  if (major == 1) {
    headerLen = pre[8] | (uint32_t(pre[9]) << 8);
    prefixLen = 10;
  } else {
    if (fileSize < 12)
      fail(path, "file is too short to be a .npy file");
    in.read(reinterpret_cast<char *>(pre + 10), 2);
    if (!in)
      fail(path, "cannot read the file header");
    headerLen =
        pre[8] | (uint32_t(pre[9]) << 8) | (uint32_t(pre[10]) << 16) | (uint32_t(pre[11]) << 24);
    prefixLen = 12;
  }
  if (headerLen > kMaxHeader)
    fail(path, "header length " + std::to_string(headerLen) + " is implausibly large");
  if (prefixLen + headerLen > fileSize)
    fail(path, "header length " + std::to_string(headerLen) + " runs past the end of the file (" +
                   std::to_string(fileSize) + " bytes)");
  std::string text(headerLen, '\0');
  in.read(text.data(), static_cast<std::streamsize>(headerLen));
  if (!in)
    fail(path, "cannot read the header");

  Header h = HeaderParser(text, path).parse();
  auto dtype = dtypeFromDescr(*h.descr);
  if (!dtype)
    fail(path,
         "unsupported dtype '" + *h.descr + "' (supported: '<f4', '<f8', '<i4', '<i8', '|b1')");
  int64_t count;
  try {
    count = numElements(*h.shape);
  } catch (const Error &) {
    fail(path, "shape " + shapeString(*h.shape) + " has too many elements");
  }
  uint64_t dataBytes = static_cast<uint64_t>(count);
  uint64_t es = dtypeSize(*dtype);
  if (dataBytes > std::numeric_limits<uint64_t>::max() / es)
    fail(path, "shape is too large");
  dataBytes *= es;
  uint64_t available = fileSize - prefixLen - headerLen;
  if (available != dataBytes)
    fail(path, "data section holds " + std::to_string(available) + " bytes but shape " +
                   shapeString(*h.shape) + " of " + dtypeName(*dtype) + " needs " +
                   std::to_string(dataBytes) + (available < dataBytes ? " (file truncated?)" : ""));

  Shape storedShape = *h.shape;
  if (*h.fortranOrder)
    std::reverse(storedShape.begin(), storedShape.end());
  Array a = empty(storedShape, *dtype);
  if (dataBytes) {
    in.read(static_cast<char *>(a.data()), static_cast<std::streamsize>(dataBytes));
    if (!in)
      fail(path, "cannot read the data");
  }
  if (!*h.fortranOrder || a.rank() < 2)
    return a.reshaped(*h.shape);
  // Fortran order is the reversed-shape C-order array, transposed.
  std::vector<int64_t> perm(static_cast<size_t>(a.rank()));
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
  return a.transposed(perm).copy();
}

void Array::saveNpy(const std::string &path) const {
  Array c = contiguous();
  std::string shapeText = "(";
  for (size_t i = 0; i < shape_.size(); ++i)
    shapeText += (i ? ", " : "") + std::to_string(shape_[i]);
  if (shape_.size() == 1)
    shapeText += ",";
  shapeText += ")";
  std::string dict = std::string("{'descr': '") + descrOf(dtype_) +
                     "', 'fortran_order': False, 'shape': " + shapeText + ", }";
  // Pad with spaces so magic + version + length + header (ending in '\n') is a multiple of 64.
  size_t total = kMagicSize + 2 + 2 + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  if (dict.size() > 0xffff)
    throw Error("[npy] " + path + ": header too long for format 1.0");

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw Error("[npy] " + path + ": cannot open file for writing");
  out.write(kMagic, kMagicSize);
  const char version[2] = {1, 0};
  out.write(version, 2);
  const unsigned char len[2] = {static_cast<unsigned char>(dict.size() & 0xff),
                                static_cast<unsigned char>(dict.size() >> 8)};
  out.write(reinterpret_cast<const char *>(len), 2);
  out.write(dict.data(), static_cast<std::streamsize>(dict.size()));
  if (c.nbytes())
    out.write(static_cast<const char *>(c.data()), static_cast<std::streamsize>(c.nbytes()));
  out.close();
  if (!out)
    throw Error("[npy] " + path + ": write failed");
}

} // namespace tinymlir
