// Host arrays: the values that go in and out of compiled functions.
//
// An Array is a typed, strided view of host memory that either owns its storage
// or borrows caller memory. Strides are counted in elements, as in MLIR's
// memref descriptors. Rank 0 (a scalar) is allowed. No MLIR types here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tinymlir {

/// Every error tinymlir raises: messages start with the operation in brackets,
/// for example "[matmul] inner dimensions differ: (3, 5) @ (4, 7)".
/// What an Error reports, as NumPy's Python exceptions tell mistakes apart
/// (the binding raises ValueError, TypeError, IndexError, OverflowError,
/// numpy.linalg.LinAlgError, numpy.exceptions.AxisError, which is both a
/// ValueError and an IndexError, tinymlir.TracingError, a TypeError: what
/// NumPy computes but tinymlir refuses to trace, by name; RuntimeError and
/// ZeroDivisionError where NumPy raises those, as np.cov and np.average do).
enum class ErrorKind : uint8_t {
  Value,
  Type,
  Index,
  Overflow,
  LinAlg,
  Axis,
  Trace,
  Runtime,
  ZeroDivision
};

/// NumPy's RuntimeWarning given while tracing (np.cov's "Degrees of freedom
/// <= 0 for slice"): the handler's (Python's warnings), else a line on stderr.
/// A handler may throw (warnings turned into errors).
void warn(const std::string &message);
using WarningHandler = void (*)(const std::string &message);
void setWarningHandler(WarningHandler handler);

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message, ErrorKind kind = ErrorKind::Value)
      : std::runtime_error(message), kind_(kind) {}
  explicit Error(const char *message, ErrorKind kind = ErrorKind::Value)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

private:
  ErrorKind kind_;
};

/// NumPy's element types, one per row of dtypes.def: b8 is NumPy's bool (one
/// byte, 0 or 1), i64 its default integer, c128 two float64s.
enum class DType : uint8_t {
#define TINYMLIR_DTYPE(Name, ...) Name,
#include <tinymlir/dtypes.def>
};
enum class DTypeKind : uint8_t { Bool, Signed, Unsigned, Float, Complex };

using Shape = std::vector<int64_t>;

/// "float32", "uint8", "bool", "complex128": NumPy's spelling.
const char *dtypeName(DType dtype);
/// "<f4", "|b1": NumPy's array-protocol string (dtype.str).
const char *dtypeDescr(DType dtype);
/// The dtype NumPy spells `name`, or nullopt.
std::optional<DType> dtypeNamed(const std::string &name);
size_t dtypeSize(DType dtype);
DTypeKind dtypeKind(DType dtype);
/// A real floating-point type (float16, float32, float64).
inline bool isFloat(DType d) { return dtypeKind(d) == DTypeKind::Float; }
inline bool isComplex(DType d) { return dtypeKind(d) == DTypeKind::Complex; }
/// Signed or unsigned integers (not bool).
inline bool isInteger(DType d) {
  return dtypeKind(d) == DTypeKind::Signed || dtypeKind(d) == DTypeKind::Unsigned;
}
inline bool isUnsigned(DType d) { return dtypeKind(d) == DTypeKind::Unsigned; }
/// The real type of a complex type's parts (float64 for complex128); others' own.
DType realPart(DType d);
/// "(3, 7)", "()" for rank 0, "(5,)" for rank 1: NumPy's spelling.
std::string shapeString(const Shape &shape);
int64_t numElements(const Shape &shape);

/// Host memory, 64-byte aligned: arrays' storage and compiled code's
/// temporaries. Freed blocks of 64 KiB or more are kept (up to 256 MiB in
/// all) for the next request of about their size, so that repeated calls do
/// not fault in fresh pages; releaseMemory() returns them to the system and
/// says how many bytes that was.
void *allocateMemory(size_t bytes);
void freeMemory(void *data);
size_t releaseMemory();

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> {
  static constexpr DType value = DType::f32;
};
template <> struct DTypeOf<double> {
  static constexpr DType value = DType::f64;
};
template <> struct DTypeOf<int32_t> {
  static constexpr DType value = DType::i32;
};
template <> struct DTypeOf<bool> {
  static constexpr DType value = DType::b8;
};
template <> struct DTypeOf<int64_t> {
  static constexpr DType value = DType::i64;
};
template <> struct DTypeOf<int8_t> {
  static constexpr DType value = DType::i8;
};
template <> struct DTypeOf<int16_t> {
  static constexpr DType value = DType::i16;
};
template <> struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::u8;
};
template <> struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::u16;
};
template <> struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::u32;
};
template <> struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::u64;
};

class Array {
public:
  /// An empty float32 array of shape (0,); most operations reject it.
  Array();

  /// Uninitialized owning array.
  static Array empty(const Shape &shape, DType dtype);
  static Array zeros(const Shape &shape, DType dtype);
  static Array full(const Shape &shape, double value, DType dtype);
  /// A rank-0 array.
  static Array scalar(double value, DType dtype);
  /// n evenly spaced values from start to stop inclusive, as np.linspace.
  static Array linspace(double start, double stop, int64_t n, DType dtype);
  /// 0, 1, ..., n-1 as np.arange.
  static Array arange(int64_t n, DType dtype);
  /// Copies `values` (row-major) into a new array of `shape`.
  template <class T> static Array fromVector(const std::vector<T> &values, const Shape &shape) {
    Array a = empty(shape, DTypeOf<T>::value);
    a.checkCount(values.size());
    std::copy(values.begin(), values.end(), static_cast<T *>(a.data()));
    return a;
  }
  /// Borrows caller memory: `data` points at element [0, ..., 0]; strides in
  /// elements (empty: row-major contiguous). The caller keeps it alive, or
  /// passes `owner` to share ownership.
  static Array view(void *data, const Shape &shape, DType dtype, std::vector<int64_t> strides = {},
                    std::shared_ptr<void> owner = nullptr);

  const Shape &shape() const { return shape_; }
  const std::vector<int64_t> &strides() const { return strides_; }
  DType dtype() const { return dtype_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size() const { return numElements(shape_); }
  int64_t dim(int64_t axis) const;
  size_t nbytes() const { return static_cast<size_t>(size()) * dtypeSize(dtype_); }

  /// Pointer to element [0, ..., 0].
  void *data() const { return data_; }
  template <class T> T *data() const {
    checkDType(DTypeOf<T>::value);
    return static_cast<T *>(data_);
  }
  /// The storage owner (shared by views of this array).
  const std::shared_ptr<void> &owner() const { return owner_; }

  bool isContiguous() const;
  /// This array if row-major contiguous, else a contiguous copy.
  Array contiguous() const;
  /// A contiguous deep copy.
  Array copy() const;
  /// Converts to another dtype (a copy, even for the same dtype).
  Array astype(DType dtype) const;
  /// Element at a multi-index (negative indices not allowed), as double.
  double at(const std::vector<int64_t> &index) const;
  /// Sets the element at a multi-index.
  void set(const std::vector<int64_t> &index, double value);
  /// All elements in row-major order, as double.
  std::vector<double> toDoubles() const;
  template <class T> std::vector<T> toVector() const {
    Array c = contiguous();
    const T *p = c.data<T>();
    return std::vector<T>(p, p + size());
  }
  /// A view with the same storage: axes reordered (no copy).
  Array transposed(const std::vector<int64_t> &perm) const;
  /// A view of rows [begin, end) along `axis` (no copy).
  Array sliced(int64_t axis, int64_t begin, int64_t end) const;
  /// A view of contiguous data with a new shape of the same size.
  Array reshaped(const Shape &shape) const;
  /// Whether the memory of the two arrays may overlap.
  bool overlaps(const Array &other) const;

  /// NumPy .npy files (format 1.0-3.0, little-endian, C or Fortran order).
  static Array loadNpy(const std::string &path);
  void saveNpy(const std::string &path) const;

  /// "array([[...]], dtype=float32)"-like rendering for messages and examples.
  std::string toString() const;

private:
  void checkDType(DType expected) const;
  void checkCount(size_t count) const;
  std::pair<const std::byte *, const std::byte *> byteRange() const;

  std::shared_ptr<void> owner_;
  void *data_ = nullptr;
  Shape shape_;
  std::vector<int64_t> strides_;
  DType dtype_ = DType::f32;
};

/// Row-major strides for a shape, in elements.
std::vector<int64_t> contiguousStrides(const Shape &shape);

} // namespace tinymlir
