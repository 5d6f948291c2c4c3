// x[mask] while tracing (index.h's MaskedRead): a boolean-mask read whose
// count is known only when the kernel runs, its operands and its reductions.
#include "frontend/Graph.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include <algorithm>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>

namespace tinymlir {
using detail::fail;

namespace {
template <class C> Tensor extremeValue(ScalarType type, bool largest) {
  if constexpr (std::is_same_v<C, bool>)
    return type(largest ? 1.0 : 0.0);
  else if constexpr (std::is_integral_v<C>)
    return type(largest ? std::numeric_limits<C>::max() : std::numeric_limits<C>::min());
  else
    return type(largest ? std::numeric_limits<double>::infinity()
                        : -std::numeric_limits<double>::infinity());
}

/// The largest (or smallest) value of a real dtype: infinities for floats.
Tensor extremeOf(DType dtype, bool largest) {
  switch (dtype) {
#define TINYMLIR_DTYPE(Name, name, descr, bytes, Kind, CType)                                      \
  case DType::Name:                                                                                \
    return extremeValue<CType>(ScalarType{dtype}, largest);
#include <tinymlir/dtypes.def>
  }
  return Tensor();
}
} // namespace

// --- x[mask] while tracing (index.h's MaskedRead) ----------------------------------

MaskedRead::MaskedRead(Tensor full, Tensor mask, int64_t axis)
    : full_(std::move(full)), mask_(std::move(mask)), axis_(axis) {
  const Shape &fs = full_.shape(), &ms = mask_.shape();
  const auto at = static_cast<size_t>(axis_);
  if (mask_.dtype() != DType::b8 || axis_ < 0 || at + ms.size() > fs.size() ||
      !std::equal(ms.begin(), ms.end(), fs.begin() + axis_))
    fail("x[mask]",
         "a mask of shape " + shapeString(ms) + " does not cover axes " + std::to_string(axis_) +
             ".. of an array of shape " + shapeString(fs),
         ErrorKind::Trace);
}

int64_t MaskedRead::rank() const { return full_.rank() - mask_.rank() + 1; }

std::string MaskedRead::shapeText() const {
  const Shape &fs = full_.shape();
  std::string text = "(";
  for (int64_t a = 0; a < rank(); ++a) {
    if (a > 0)
      text += ", ";
    text += a == axis_
                ? "?"
                : std::to_string(fs[static_cast<size_t>(a < axis_ ? a : a + mask_.rank() - 1)]);
  }
  return text + (rank() == 1 ? ",)" : ")");
}

Tensor MaskedRead::spreadMask() const {
  Shape s(full_.shape().size(), 1);
  std::copy(mask_.shape().begin(), mask_.shape().end(), s.begin() + axis_);
  return reshape(mask_, s);
}

std::optional<Tensor> MaskedRead::fitted(const Tensor &other) const {
  const int64_t n = rank(), m = other.rank();
  if (m > n)
    return std::nullopt;                  // NumPy's result would have the count among new axes
  const int64_t facing = axis_ - (n - m); // other's axis against the count
  if (facing < 0)
    return other; // it meets only the axes after the count's: as the whole array's
  Shape s = other.shape();
  if (s[static_cast<size_t>(facing)] != 1)
    return std::nullopt;
  s.erase(s.begin() + facing);
  s.insert(s.begin() + facing, static_cast<size_t>(mask_.rank()), 1);
  return reshape(other, s);
}

Tensor MaskedRead::operand(const Tensor &other) const {
  if (std::optional<Tensor> t = fitted(other))
    return *t;
  fail("x[mask]",
       "tinymlir: an array of shape " + shapeString(other.shape()) +
           " with a boolean-mask read of shape " + shapeText() +
           ": whether they broadcast depends on the mask's count, known only when the kernel "
           "runs; use a scalar, an array of the read's other axes, or a read of the same mask",
       ErrorKind::Trace);
}

Tensor MaskedRead::operand(const MaskedRead &other) const {
  if (other.axis_ != axis_ || !sameValue(other.mask_, mask_))
    fail("x[mask]",
         "tinymlir: boolean-mask reads of different masks cannot be combined (their shapes "
         "depend on the data)",
         ErrorKind::Trace);
  return other.full_;
}

MaskedRead MaskedRead::with(const Tensor &full) const { return MaskedRead(full, mask_, axis_); }

Tensor MaskedRead::size() const {
  Tensor n = sum(cast(mask_, DType::i64));
  const Shape &fs = full_.shape();
  int64_t others = 1;
  for (size_t a = 0; a < fs.size(); ++a)
    if (static_cast<int64_t>(a) < axis_ || static_cast<int64_t>(a) >= axis_ + mask_.rank())
      others *= fs[a];
  return others == 1 ? n : n * ScalarType{DType::i64}(static_cast<double>(others));
}

std::variant<Tensor, MaskedRead> MaskedRead::reduce(std::string_view name, const Axes &axes,
                                                    bool keepdims, const Reduction &given) const {
  const std::string op(name);
  const int64_t n = rank(), r = mask_.rank();
  const std::vector<int64_t> readAxes = normalizeAxes(op.c_str(), axes, n);
  const bool counted = std::find(readAxes.begin(), readAxes.end(), axis_) != readAxes.end();
  std::vector<int64_t> fullAxes;
  int64_t before = 0; // reduced axes before the count's
  for (int64_t a : readAxes) {
    if (a == axis_)
      for (int64_t k = 0; k < r; ++k)
        fullAxes.push_back(axis_ + k);
    else
      fullAxes.push_back(a < axis_ ? a : a + r - 1);
    before += a < axis_ ? 1 : 0;
  }
  Reduction how = given;
  if (how.where.valid())
    how.where = operand(cast(how.where, DType::b8));
  Tensor x = full_;
  std::string reduction = op;
  if (reduction == "count_nonzero") {
    x = x.dtype() == DType::b8 ? x : not_equal(x, ScalarType{x.dtype()}(0.0));
    reduction = "sum";
  }
  const bool inexact = isFloat(x.dtype()) || isComplex(x.dtype());
  if (reduction.starts_with("nan") && !inexact)
    reduction = reduction.substr(3); // NumPy's nan-functions of integers are the plain ones
  if (!counted)
    return MaskedRead(tinymlir::reduce(reduction, x, Axes(fullAxes), keepdims, how), mask_,
                      keepdims ? axis_ : axis_ - before);
  const Tensor mask = spreadMask();
  const bool extreme =
      reduction == "max" || reduction == "min" || reduction == "nanmax" || reduction == "nanmin";
  if (reduction.starts_with("nan")) // the elements not selected are nans, which they skip
    x = where(mask, x, ScalarType{x.dtype()}(std::numeric_limits<double>::quiet_NaN()));
  else if (extreme && how.where.valid() && !how.initial.valid())
    return tinymlir::reduce(reduction, x, Axes(fullAxes), keepdims, how); // NumPy's error
  else
    how.where = how.where.valid() ? logical_and(mask, how.where) : mask;
  const bool checkEmpty = extreme && !how.initial.valid();
  if (checkEmpty && !reduction.starts_with("nan"))
    how.initial = extremeOf(x.dtype(), reduction == "min"); // no effect on what is selected
  Tensor result = tinymlir::reduce(reduction, x, Axes(fullAxes), false, how);
  if (checkEmpty) { // 1 when something is selected; the kernel stops at a 0 (reasons 4, 5)
    const bool largest = reduction.ends_with("max");
    const Tensor one = detail::requireAtLeast(cast(any(mask_), DType::i64), 1, largest ? 4 : 5);
    result = result.dtype() == DType::b8 ? logical_and(result, cast(one, DType::b8))
                                         : result * cast(one, result.dtype());
  }
  if (!keepdims)
    return result;
  Shape kept; // the read's shape with the reduced axes 1
  for (int64_t a = 0; a < n; ++a)
    kept.push_back(std::find(readAxes.begin(), readAxes.end(), a) != readAxes.end()
                       ? 1
                       : full_.shape()[static_cast<size_t>(a < axis_ ? a : a + r - 1)]);
  return reshape(result, kept);
}

} // namespace tinymlir
