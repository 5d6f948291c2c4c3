// Host arrays: typed, strided views of host memory (see include/tinymlir/array.h).
#include "tinymlir/array.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <charconv>
#include <cmath>
#include <complex>
#include <type_traits>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <sstream>

namespace tinymlir {

namespace {
std::atomic<WarningHandler> warningHandler{nullptr};
} // namespace

void setWarningHandler(WarningHandler handler) { warningHandler.store(handler); }

void warn(const std::string &message) {
  if (WarningHandler handler = warningHandler.load())
    handler(message);
  else
    std::fprintf(stderr, "RuntimeWarning: %s\n", message.c_str());
}

//===----------------------------------------------------------------------===//
// dtypes and shapes
//===----------------------------------------------------------------------===//

namespace {
struct DTypeRow {
  const char *name;
  const char *descr;
  size_t bytes;
  DTypeKind kind;
};
constexpr DTypeRow kDTypes[] = {
#define TINYMLIR_DTYPE(Name, name, descr, bytes, Kind, CType) {name, descr, bytes, DTypeKind::Kind},
#include <tinymlir/dtypes.def>
};
const DTypeRow &row(DType d) { return kDTypes[static_cast<size_t>(d)]; }
} // namespace

const char *dtypeName(DType dtype) { return row(dtype).name; }
const char *dtypeDescr(DType dtype) { return row(dtype).descr; }
size_t dtypeSize(DType dtype) { return row(dtype).bytes; }
DTypeKind dtypeKind(DType dtype) { return row(dtype).kind; }

std::optional<DType> dtypeNamed(const std::string &name) {
  for (size_t i = 0; i < std::size(kDTypes); ++i)
    if (name == kDTypes[i].name)
      return static_cast<DType>(i);
  return std::nullopt;
}

DType realPart(DType d) { return d == DType::c64 ? DType::f32 : d == DType::c128 ? DType::f64 : d; }

std::string shapeString(const Shape &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= std::numeric_limits<int64_t>::min() / 2) // a traced size (Graph.h's symbolic
                                                      // extent): no count while tracing
      throw Error("[array] this needs the size of an array whose size is known only when the "
                  "kernel runs (a slice with traced bounds, x[i:])",
                  ErrorKind::Trace);
    if (d < 0)
      throw Error("[array] negative dimension in shape " + shapeString(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw Error("[array] shape " + shapeString(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

std::vector<int64_t> contiguousStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

//===----------------------------------------------------------------------===//
// Element helpers
//===----------------------------------------------------------------------===//

namespace {

/// Calls fn(T{}) with T the C type of `dtype` (dtypes.def's last column).
template <class Fn> void withCType(DType dtype, Fn &&fn) {
  switch (dtype) {
#define TINYMLIR_DTYPE(Name, name, descr, bytes, Kind, CType)                                      \
  case DType::Name:                                                                                \
    fn(CType{});                                                                                   \
    return;
#include <tinymlir/dtypes.def>
  }
}

template <class T> constexpr bool kIsComplex = false;
template <class T> constexpr bool kIsComplex<std::complex<T>> = true;

/// A double as T: integers saturate (NaN -> 0), so conversion is never UB;
/// complex numbers get a zero imaginary part.
template <class T> T fromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0; // nan is true, as NumPy's
  } else if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v))
      return 0;
    if (v <= static_cast<double>(std::numeric_limits<T>::min()))
      return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else if constexpr (kIsComplex<T>) {
    return T(static_cast<typename T::value_type>(v), 0);
  } else {
    return static_cast<T>(v);
  }
}

/// T as a double (a complex number's real part).
template <class T> double toDouble(T v) {
  if constexpr (kIsComplex<T>)
    return static_cast<double>(v.real());
  else
    return static_cast<double>(v);
}

double loadElement(const std::byte *p, DType dtype) {
  double out = 0;
  withCType(dtype, [&]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    out = toDouble(v);
  });
  return out;
}

void storeElement(std::byte *p, DType dtype, double value) {
  withCType(dtype, [&]<class T>(T) {
    T v = fromDouble<T>(value);
    std::memcpy(p, &v, sizeof v);
  });
}

/// One element converted from one dtype to another without a double in
/// between (int64 and uint64 stay exact), as NumPy's astype for values in range.
void convertElement(std::byte *dst, DType to, const std::byte *src, DType from) {
  withCType(from, [&]<class S>(S) {
    S s;
    std::memcpy(&s, src, sizeof s);
    withCType(to, [&]<class D>(D) {
      D d;
      if constexpr (std::is_same_v<S, D>) {
        d = s;
      } else if constexpr (kIsComplex<D>) {
        if constexpr (kIsComplex<S>)
          d = D(static_cast<typename D::value_type>(s.real()),
                static_cast<typename D::value_type>(s.imag()));
        else
          d = D(static_cast<typename D::value_type>(s), 0);
      } else if constexpr (kIsComplex<S>) {
        d = fromDouble<D>(static_cast<double>(s.real())); // NumPy drops the imaginary part
      } else if constexpr (std::is_same_v<D, bool>) {
        d = s != S(0);
      } else if constexpr (std::is_integral_v<D> && std::is_integral_v<S>) {
        d = static_cast<D>(s); // wraps, as NumPy's
      } else if constexpr (std::is_integral_v<D>) {
        d = fromDouble<D>(static_cast<double>(s));
      } else {
        d = static_cast<D>(s);
      }
      std::memcpy(dst, &d, sizeof d);
    });
  });
}

/// Calls fn(elementOffset) for every element in row-major order.
template <class Fn>
void forEachOffset(const Shape &shape, const std::vector<int64_t> &strides, Fn &&fn) {
  int64_t n = numElements(shape);
  if (n == 0)
    return;
  size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t k = 0; k < n; ++k) {
    fn(off);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

std::shared_ptr<void> allocateAligned(size_t nbytes) {
  return std::shared_ptr<void>(allocateMemory(nbytes), freeMemory);
}

} // namespace

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

Array::Array() : shape_{0}, strides_{1}, dtype_(DType::f32) {}

Array Array::empty(const Shape &shape, DType dtype) {
  int64_t n = numElements(shape);
  if (static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / 16)
    throw Error("[array] shape " + shapeString(shape) + " is too large to allocate");
  Array a;
  a.owner_ = allocateAligned(static_cast<size_t>(n) * dtypeSize(dtype));
  a.data_ = a.owner_.get();
  a.shape_ = shape;
  a.strides_ = contiguousStrides(shape);
  a.dtype_ = dtype;
  return a;
}

Array Array::zeros(const Shape &shape, DType dtype) {
  Array a = empty(shape, dtype);
  std::memset(a.data_, 0, a.nbytes());
  return a;
}

Array Array::full(const Shape &shape, double value, DType dtype) {
  Array a = empty(shape, dtype);
  auto *p = static_cast<std::byte *>(a.data_);
  size_t es = dtypeSize(dtype);
  for (int64_t i = 0, n = a.size(); i < n; ++i)
    storeElement(p + i * es, dtype, value);
  return a;
}

Array Array::scalar(double value, DType dtype) { return full({}, value, dtype); }

Array Array::linspace(double start, double stop, int64_t n, DType dtype) {
  if (n < 0)
    throw Error("[linspace] number of samples must be non-negative, got " + std::to_string(n));
  Array a = empty({n}, dtype);
  auto *p = static_cast<std::byte *>(a.data_);
  size_t es = dtypeSize(dtype);
  double step = n > 1 ? (stop - start) / static_cast<double>(n - 1) : 0.0;
  for (int64_t i = 0; i < n; ++i)
    storeElement(p + i * es, dtype, start + static_cast<double>(i) * step);
  if (n > 1)
    storeElement(p + (n - 1) * es, dtype, stop);
  return a;
}

Array Array::arange(int64_t n, DType dtype) {
  if (n < 0)
    throw Error("[arange] length must be non-negative, got " + std::to_string(n));
  Array a = empty({n}, dtype);
  auto *p = static_cast<std::byte *>(a.data_);
  size_t es = dtypeSize(dtype);
  for (int64_t i = 0; i < n; ++i)
    storeElement(p + i * es, dtype, static_cast<double>(i));
  return a;
}

Array Array::view(void *data, const Shape &shape, DType dtype, std::vector<int64_t> strides,
                  std::shared_ptr<void> owner) {
  int64_t n = numElements(shape);
  if (strides.empty() && !shape.empty())
    strides = contiguousStrides(shape);
  if (strides.size() != shape.size())
    throw Error("[view] " + std::to_string(strides.size()) + " strides given for shape " +
                shapeString(shape));
  if (!data && n != 0)
    throw Error("[view] null data pointer for shape " + shapeString(shape));
  Array a;
  a.owner_ = std::move(owner);
  a.data_ = data;
  a.shape_ = shape;
  a.strides_ = std::move(strides);
  a.dtype_ = dtype;
  return a;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

int64_t Array::dim(int64_t axis) const {
  int64_t r = rank();
  if (axis < -r || axis >= r)
    throw Error("[array] axis " + std::to_string(axis) + " out of range for shape " +
                shapeString(shape_));
  return shape_[axis < 0 ? axis + r : axis];
}

bool Array::isContiguous() const {
  if (size() == 0)
    return true;
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != expected)
      return false;
    expected *= shape_[i];
  }
  return true;
}

void Array::checkDType(DType expected) const {
  if (expected != dtype_)
    throw Error(std::string("[array] array has dtype ") + dtypeName(dtype_) + ", accessed as " +
                dtypeName(expected));
}

void Array::checkCount(size_t count) const {
  if (count != static_cast<size_t>(size()))
    throw Error("[array] " + std::to_string(count) + " values given for shape " +
                shapeString(shape_) + " of " + std::to_string(size()) + " elements");
}

std::pair<const std::byte *, const std::byte *> Array::byteRange() const {
  auto *base = static_cast<const std::byte *>(data_);
  if (size() == 0 || !base)
    return {base, base};
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < shape_.size(); ++i) {
    int64_t span = strides_[i] * (shape_[i] - 1);
    if (span < 0)
      lo += span;
    else
      hi += span;
  }
  int64_t es = static_cast<int64_t>(dtypeSize(dtype_));
  return {base + lo * es, base + hi * es + es};
}

bool Array::overlaps(const Array &other) const {
  auto [a0, a1] = byteRange();
  auto [b0, b1] = other.byteRange();
  if (a0 == a1 || b0 == b1)
    return false;
  auto x0 = reinterpret_cast<uintptr_t>(a0), x1 = reinterpret_cast<uintptr_t>(a1);
  auto y0 = reinterpret_cast<uintptr_t>(b0), y1 = reinterpret_cast<uintptr_t>(b1);
  return x0 < y1 && y0 < x1;
}

//===----------------------------------------------------------------------===//
// Copies and conversion
//===----------------------------------------------------------------------===//

Array Array::contiguous() const {
  if (isContiguous())
    return *this;
  return copy();
}

Array Array::copy() const {
  Array out = empty(shape_, dtype_);
  auto *src = static_cast<const std::byte *>(data_);
  auto *dst = static_cast<std::byte *>(out.data_);
  size_t es = dtypeSize(dtype_);
  if (isContiguous()) {
    if (nbytes())
      std::memcpy(dst, src, nbytes());
    return out;
  }
  forEachOffset(shape_, strides_, [&](int64_t off) {
    std::memcpy(dst, src + off * static_cast<int64_t>(es), es);
    dst += es;
  });
  return out;
}

Array Array::astype(DType dtype) const {
  if (dtype == dtype_)
    return copy();
  Array out = empty(shape_, dtype);
  auto *src = static_cast<const std::byte *>(data_);
  auto *dst = static_cast<std::byte *>(out.data_);
  int64_t es = static_cast<int64_t>(dtypeSize(dtype_));
  size_t os = dtypeSize(dtype);
  forEachOffset(shape_, strides_, [&](int64_t off) {
    convertElement(dst, dtype, src + off * es, dtype_);
    dst += os;
  });
  return out;
}

namespace {
int64_t elementOffset(const Shape &shape, const std::vector<int64_t> &strides,
                      const std::vector<int64_t> &index, const char *op) {
  auto indexString = [&] {
    std::string s = "[";
    for (size_t i = 0; i < index.size(); ++i)
      s += (i ? ", " : "") + std::to_string(index[i]);
    return s + "]";
  };
  if (index.size() != shape.size())
    throw Error(std::string("[") + op + "] index " + indexString() + " has " +
                std::to_string(index.size()) + " entries for shape " + shapeString(shape));
  int64_t off = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i] < 0 || index[i] >= shape[i])
      throw Error(std::string("[") + op + "] index " + indexString() + " out of bounds for shape " +
                  shapeString(shape));
    off += index[i] * strides[i];
  }
  return off;
}
} // namespace

double Array::at(const std::vector<int64_t> &index) const {
  int64_t off = elementOffset(shape_, strides_, index, "at");
  return loadElement(static_cast<const std::byte *>(data_) +
                         off * static_cast<int64_t>(dtypeSize(dtype_)),
                     dtype_);
}

void Array::set(const std::vector<int64_t> &index, double value) {
  int64_t off = elementOffset(shape_, strides_, index, "set");
  storeElement(static_cast<std::byte *>(data_) + off * static_cast<int64_t>(dtypeSize(dtype_)),
               dtype_, value);
}

std::vector<double> Array::toDoubles() const {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(size()));
  auto *src = static_cast<const std::byte *>(data_);
  int64_t es = static_cast<int64_t>(dtypeSize(dtype_));
  forEachOffset(shape_, strides_,
                [&](int64_t off) { out.push_back(loadElement(src + off * es, dtype_)); });
  return out;
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

Array Array::transposed(const std::vector<int64_t> &perm) const {
  auto permString = [&] {
    std::string s = "[";
    for (size_t i = 0; i < perm.size(); ++i)
      s += (i ? ", " : "") + std::to_string(perm[i]);
    return s + "]";
  };
  if (perm.size() != shape_.size())
    throw Error("[transpose] permutation " + permString() + " does not match shape " +
                shapeString(shape_));
  std::vector<bool> seen(perm.size(), false);
  Array out = *this;
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= rank() || seen[p])
      throw Error("[transpose] " + permString() + " is not a permutation of the axes of shape " +
                  shapeString(shape_));
    seen[p] = true;
    out.shape_[i] = shape_[p];
    out.strides_[i] = strides_[p];
  }
  return out;
}

Array Array::sliced(int64_t axis, int64_t begin, int64_t end) const {
  if (axis < 0 || axis >= rank())
    throw Error("[slice] axis " + std::to_string(axis) + " out of range for shape " +
                shapeString(shape_));
  if (begin < 0 || begin > end || end > shape_[axis])
    throw Error("[slice] range [" + std::to_string(begin) + ", " + std::to_string(end) +
                ") out of bounds for axis " + std::to_string(axis) + " of shape " +
                shapeString(shape_));
  Array out = *this;
  out.shape_[axis] = end - begin;
  if (end > begin && out.size() > 0)
    out.data_ = static_cast<std::byte *>(data_) +
                begin * strides_[axis] * static_cast<int64_t>(dtypeSize(dtype_));
  return out;
}

Array Array::reshaped(const Shape &shape) const {
  Shape target = shape;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1 && inferred < 0) {
      inferred = static_cast<int64_t>(i);
      continue;
    }
    if (target[i] < 0)
      throw Error("[reshape] invalid target shape " + shapeString(shape) + " for array of shape " +
                  shapeString(shape_));
    if (target[i] != 0 && known > std::numeric_limits<int64_t>::max() / target[i])
      throw Error("[reshape] target shape " + shapeString(shape) + " has too many elements");
    known *= target[i];
  }
  if (inferred >= 0) {
    if (known == 0 || size() % known != 0)
      throw Error("[reshape] cannot reshape array of shape " + shapeString(shape_) +
                  " into shape " + shapeString(shape));
    target[inferred] = size() / known;
  }
  if (numElements(target) != size())
    throw Error("[reshape] cannot reshape array of shape " + shapeString(shape_) + " (" +
                std::to_string(size()) + " elements) into shape " + shapeString(shape) + " (" +
                std::to_string(numElements(target)) + " elements)");
  if (!isContiguous())
    throw Error("[reshape] array of shape " + shapeString(shape_) +
                " is not contiguous; call contiguous() first");
  Array out = *this;
  out.shape_ = target;
  out.strides_ = contiguousStrides(target);
  return out;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

namespace {

std::string formatElement(double v, DType dtype) {
  if (dtype == DType::b8)
    return v != 0 ? "True" : "False";
  if (isInteger(dtype))
    return std::to_string(static_cast<int64_t>(v));
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::to_chars_result r = dtype == DType::f32
                               ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                               : std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  size_t e = s.find('e');
  if (s.find('.') == std::string::npos)
    s.insert(e == std::string::npos ? s.size() : e, ".");
  return s;
}

} // namespace

std::string Array::toString() const {
  constexpr int64_t threshold = 1000, edge = 3;
  bool summarize = size() > threshold;
  std::vector<double> values = toDoubles();
  std::vector<std::string> texts(values.size());
  size_t width = 0, left = 0, right = 0;
  bool alignPoint = isFloat(dtype_);
  for (size_t i = 0; i < values.size(); ++i) {
    texts[i] = formatElement(values[i], dtype_);
    size_t dot = texts[i].find('.');
    if (dot == std::string::npos || texts[i].find('e') != std::string::npos)
      alignPoint = false;
    else {
      left = std::max(left, dot);
      right = std::max(right, texts[i].size() - dot);
    }
  }
  // Like NumPy, line up decimal points when no value uses an exponent.
  for (auto &t : texts) {
    if (alignPoint) {
      size_t dot = t.find('.');
      t = std::string(left - dot, ' ') + t + std::string(right - (t.size() - dot), ' ');
    }
    width = std::max(width, t.size());
  }
  auto rowStrides = contiguousStrides(shape_);
  const std::string prefix = "array(";
  std::string out = prefix;
  // Recursively renders axis `d` starting at flat element `base`.
  auto render = [&](auto &&self, size_t d, int64_t base) -> void {
    if (d == shape_.size()) {
      std::string t = texts[static_cast<size_t>(base)];
      out += std::string(width - t.size(), ' ') + t;
      return;
    }
    out += "[";
    int64_t n = shape_[d];
    std::string sep = d + 1 == shape_.size() ? ", "
                                             : "," + std::string(shape_.size() - d - 1, '\n') +
                                                   std::string(prefix.size() + d + 1, ' ');
    bool first = true;
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * edge && i == edge) {
        out += sep + "...";
        i = n - edge - 1;
        continue;
      }
      if (!first)
        out += sep;
      first = false;
      self(self, d + 1, base + i * rowStrides[d]);
    }
    out += "]";
  };
  if (size() == 0) {
    out += shape_.size() <= 1 ? "[]" : "[], shape=" + shapeString(shape_);
  } else {
    render(render, 0, 0);
  }
  out += std::string(", dtype=") + dtypeName(dtype_) + ")";
  return out;
}

} // namespace tinymlir
