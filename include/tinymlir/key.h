// The specialization key: one grammar, one writer, for the C++ Jit's argument
// trees (jit.h's walk) and for Python's calls (python/src/cache.cpp).
//
// A key is the text of a call's argument tree, read left to right:
//
//   key     := item* ('|aliases ' (index ',')*)? '|' options
//   item    := array | static | open item* close | 'k' text item
//   array   := 'A' descr '[' (dim ',')* ']' ('S' (stride ',')*)?
//   static  := 'T;' | 'F;'                     a bool
//            | 'i' digits ';'                  an integer (any size)
//            | 'f' hex ';'                     a float, by its IEEE-754 bits
//            | 'c' hex ',' hex ';'             a complex
//            | 'N;'                            None
//            | 's' text | 'y' text             a string, bytes
//   text    := length ':' bytes                length-prefixed: no escaping
//   open    := '(' | '[' | '{' | '<'           a tuple, a list (std::vector or
//   close   := ')' | ']' | '}' | '>'           std::array), a dict (std::map:
//                                              'k' names), a struct's fields
//
// `descr` is NumPy's array-protocol string ("<f8", dtypes.def); `S` follows
// only for a layout other than C order, with the strides in elements
// (layoutStrides). `|aliases` lists, per array leaf, the index of the first
// leaf that is the same array, where any two are. `options` is the options'
// own key (options.def). A tree this grammar has no item for (a dataclass,
// a named tuple, a NumPy scalar) is keyed in Python by _jit.flatten's tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinymlir {

/// Writes one key (the grammar above) item by item.
class KeyWriter {
public:
  std::string &text() { return key_; }
  const std::string &text() const { return key_; }

  void boolean(bool b) { key_ += b ? "T;" : "F;"; }
  void integer(long long v);
  /// An integer given by its decimal digits (Python's ints have any size).
  void integerDigits(std::string_view digits);
  void real(double v);
  void complex(double re, double im);
  void none() { key_ += "N;"; }
  void string(std::string_view s) { tagged('s', s); }
  void bytes(std::string_view s) { tagged('y', s); }
  /// A dict's or map's entry name, before its value.
  void keyword(std::string_view name) { tagged('k', name); }
  /// '(' tuple, '[' list, '{' dict, '<' fields; close with the matching one.
  void open(char bracket) { key_ += bracket; }
  void close(char bracket) { key_ += bracket; }
  /// An array leaf: its dtype's array-protocol string, shape and, where the
  /// layout is not C order, its strides in elements.
  void array(std::string_view descr, const int64_t *dims, size_t rank,
             const std::optional<std::vector<int64_t>> &layout = std::nullopt);
  /// Which array leaves are one array: aliases[i] is the first leaf that is
  /// leaf i's array. Written only where two leaves are one array.
  void aliases(const std::vector<size_t> &first);
  /// Ends the key with the options' key.
  void options(std::string_view optionsKey);

private:
  void tagged(char tag, std::string_view s);
  void number(int64_t v);
  void hex(double v);
  std::string key_;
};

/// The element strides of an array of these dimensions and byte strides
/// where its layout is not C order (size-1 axes aside, as NumPy's flag),
/// else none; none too for an empty array and for strides that are not
/// whole elements (or items of no size).
std::optional<std::vector<int64_t>> layoutStrides(const int64_t *dims, const int64_t *bytes,
                                                  size_t rank, int64_t item);

} // namespace tinymlir
