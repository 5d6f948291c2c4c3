// Reductions with NumPy's keywords (dtype=, where=, initial=, ddof=, out=) and
// the nan-functions: nansum, nanprod, nanmax, nanmin, nanmean, nanvar, nanstd.
#include "frontend/FunctionsCommon.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace tinymlir {
using detail::fail;

// --- nan functions ---------------------------------------------------------------

namespace {

/// NumPy's _replace_nan: a float or complex operand with its nans replaced by
/// `fill`, and their mask; others as they are, with no mask.
std::pair<Tensor, Tensor> replaceNan(const Tensor &a, double fill) {
  if (!inexact(a.dtype()))
    return {a, Tensor()};
  Tensor mask = isnan(a);
  return {where(mask, ScalarType{a.dtype()}(fill), a), mask};
}

Tensor inDtype(const Tensor &x, std::optional<DType> dtype) { return dtype ? cast(x, *dtype) : x; }

void realOnly(const Tensor &a, const char *op) {
  if (isComplex(a.dtype()))
    fail(op,
         std::string("tinymlir traces numpy.") + op + " of real (and bool) values, not " +
             dtypeName(a.dtype()),
         ErrorKind::Trace);
}

/// NumPy's means and variances take a float dtype= here (an integer one
/// would truncate the accumulator).
void floatDtype(const char *op, std::optional<DType> dtype, bool masked) {
  if (!dtype || isFloat(*dtype))
    return;
  if (masked) { // NumPy's own check; the sums then take any inexact dtype
    if (!isComplex(*dtype))
      fail(op, "If a is inexact, then dtype must be inexact", ErrorKind::Type);
    return;
  }
  fail(op,
       std::string("tinymlir traces ") + op + "(dtype=...) with a float dtype only, got " +
           dtypeName(*dtype),
       ErrorKind::Trace);
}

/// NumPy's _divide_by_count: a / b in a's dtype.
Tensor divideByCount(const Tensor &a, const Tensor &b) { return cast(a / b, a.dtype()); }

Tensor nanExtreme(const char *op, const Tensor &a, const Axes &axes, bool keepdims, bool largest) {
  const double inf = std::numeric_limits<double>::infinity();
  auto [t, mask] = replaceNan(a, largest ? -inf : inf);
  realOnly(t, op);
  Tensor r = largest ? max(t, axes, keepdims) : min(t, axes, keepdims);
  if (!mask.valid())
    return r;
  return where(all(mask, axes, keepdims), ScalarType{r.dtype()}(std::nan("")), r);
}

} // namespace

Tensor nansum(const Tensor &a, const Axes &axes, bool keepdims, std::optional<DType> dtype) {
  return reduce("nansum", a, axes, keepdims, {.dtype = dtype});
}

Tensor nanprod(const Tensor &a, const Axes &axes, bool keepdims, std::optional<DType> dtype) {
  return reduce("nanprod", a, axes, keepdims, {.dtype = dtype});
}

Tensor nanmax(const Tensor &a, const Axes &axes, bool keepdims) {
  return reduce("nanmax", a, axes, keepdims);
}

Tensor nanmin(const Tensor &a, const Axes &axes, bool keepdims) {
  return reduce("nanmin", a, axes, keepdims);
}

Tensor nanmean(const Tensor &a, const Axes &axes, bool keepdims, std::optional<DType> dtype) {
  return reduce("nanmean", a, axes, keepdims, {.dtype = dtype});
}

Tensor nanvar(const Tensor &a, const Axes &axes, bool keepdims, double ddof,
              std::optional<DType> dtype) {
  return reduce("nanvar", a, axes, keepdims, {.dtype = dtype, .ddof = ddof});
}

Tensor nanstd(const Tensor &a, const Axes &axes, bool keepdims, double ddof,
              std::optional<DType> dtype) {
  return reduce("nanstd", a, axes, keepdims, {.dtype = dtype, .ddof = ddof});
}

// --- Reductions with NumPy's keywords ---------------------------------------------

namespace {

enum class Reducer { Sum, Prod, Max, Min, Any, All, Mean, Var, Std };

std::optional<Reducer> reducerOf(std::string_view name) {
  static constexpr std::pair<std::string_view, Reducer> kNames[] = {
      {"sum", Reducer::Sum},   {"prod", Reducer::Prod}, {"max", Reducer::Max},
      {"min", Reducer::Min},   {"any", Reducer::Any},   {"all", Reducer::All},
      {"mean", Reducer::Mean}, {"var", Reducer::Var},   {"std", Reducer::Std}};
  for (auto [n, r] : kNames)
    if (n == name)
      return r;
  return std::nullopt;
}

Reducer reducerNamed(std::string_view name) {
  if (const std::optional<Reducer> r = reducerOf(name))
    return *r;
  fail("reduce",
       "no reduction named '" + std::string(name) +
           "' (sum, prod, max, min, any, all, mean, var, std, and nan and one of the first "
           "four or the last three)",
       ErrorKind::Type);
}

/// a where `w` holds and `fill` elsewhere; all of a without a mask.
Tensor kept(const Tensor &a, const Tensor &w, const Tensor &fill) {
  return w.valid() ? where(w, a, cast(fill, a.dtype())) : a;
}

/// NumPy's _mean and _var (numpy/_core/_methods.py) over the elements where
/// `w` holds: integers in float64, float16 in float32 with a float16 result.
/// The count is w's (nan for none); the variance's sum of squares is divided
/// by max(count - ddof, 0).
Tensor meanOrVar(const Tensor &a, const Axes &axes, bool keepdims, const Tensor &w,
                 std::optional<double> ddof) {
  if (!w.valid())
    return ddof ? var(a, axes, keepdims, *ddof) : mean(a, axes, keepdims);
  Tensor t = inexact(a.dtype()) ? a : cast(a, DType::f64);
  const bool half = t.dtype() == DType::f16;
  if (half)
    t = cast(t, DType::f32);
  auto zero = [](const Tensor &x) { return ScalarType{x.dtype()}(0.0); };
  auto half16 = [&](const Tensor &r) { return half ? cast(r, DType::f16) : r; };
  if (!ddof) {
    const Tensor total = sum(where(w, t, zero(t)), axes, keepdims);
    return half16(divideByCount(total, sum(cast(w, DType::i64), axes, keepdims)));
  }
  const Tensor count = sum(cast(w, DType::i64), axes, /*keepdims=*/true);
  const Tensor centered = t - divideByCount(sum(where(w, t, zero(t)), axes, true), count);
  const Tensor squares = isComplex(t.dtype())
                             ? real(centered) * real(centered) + imag(centered) * imag(centered)
                             : centered * centered;
  const Tensor total = sum(where(w, squares, zero(squares)), axes, keepdims);
  Tensor dof = maximum(subtract(count, ScalarType{DType::f64}(*ddof)), ScalarType{DType::f64}(0.0));
  return half16(divideByCount(total, reshape(dof, total.shape())));
}

/// NumPy's nanmean, nanvar and nanstd (`variance`) of the numbers selected
/// by `how.where`: the sum over their count, and the squared deviations from
/// that mean (zero at the nans) over the count less ddof, nan where that is
/// not positive.
Tensor nanAverage(const char *op, const Tensor &a, const Axes &axes, bool keepdims,
                  const Reduction &how, bool variance) {
  auto [t, mask] = replaceNan(a, 0);
  if (variance)
    realOnly(t, op);
  floatDtype(op, how.dtype, mask.valid());
  if (!mask.valid()) // integers: np.mean and np.var
    return reduce(variance ? "var" : "mean", t, axes, keepdims, how);
  const Tensor w =
      how.where.valid() ? broadcastTo(cast(how.where, DType::b8), t.shape()) : Tensor();
  const Tensor selected = w.valid() ? logical_and(logical_not(mask), w) : logical_not(mask);
  const Tensor zero = ScalarType{t.dtype()}(0.0);
  const Tensor count = sum(selected, axes, variance || keepdims);
  const Tensor total = sum(inDtype(kept(t, w, zero), how.dtype), axes, variance || keepdims);
  if (!variance)
    return divideByCount(total, count); // nan for none
  const Tensor average = divideByCount(total, count);
  const Tensor deviation = where(selected, cast(t - average, t.dtype()), zero); // into arr
  const Tensor squares = sum(inDtype(deviation * deviation, how.dtype), axes, keepdims);
  const Tensor dof = subtract(keepdims ? count : reshape(count, squares.shape()),
                              ScalarType{DType::f64}(how.ddof));
  const Tensor v = divideByCount(squares, dof);
  return where(less_equal(dof, ScalarType{DType::f64}(0.0)), ScalarType{v.dtype()}(std::nan("")),
               v);
}

/// NumPy's nan-functions (numpy/lib/_nanfunctions_impl.py) with their
/// keywords: nans replaced by the identity of sum and prod, skipped by max
/// and min (fmax and fmin), not counted by means and variances.
Tensor nanReduce(std::string_view base, const Tensor &a, const Axes &axes, bool keepdims,
                 const Reduction &how) {
  const std::string op = "nan" + std::string(base);
  const Reducer r = reducerNamed(base);
  switch (r) {
  case Reducer::Sum:
  case Reducer::Prod:
    return reduce(base, replaceNan(a, r == Reducer::Sum ? 0 : 1).first, axes, keepdims, how);
  case Reducer::Max:
  case Reducer::Min: {
    realOnly(a, op.c_str());
    if (how.initial.valid()) // nans never win against initial
      return reduce(base, inexact(a.dtype()) ? where(isnan(a), cast(how.initial, a.dtype()), a) : a,
                    axes, keepdims, how);
    if (how.where.valid())
      fail(op.c_str(), std::string("reduction operation '") +
                           (r == Reducer::Max ? "fmax" : "fmin") +
                           "' does not have an identity, so to use a where mask one has to "
                           "specify 'initial'");
    return nanExtreme(op.c_str(), a, axes, keepdims, r == Reducer::Max);
  }
  case Reducer::Mean:
    return nanAverage(op.c_str(), a, axes, keepdims, how, false);
  case Reducer::Var:
    return nanAverage(op.c_str(), a, axes, keepdims, how, true);
  case Reducer::Std:
    return sqrt(nanAverage(op.c_str(), a, axes, keepdims, how, true));
  case Reducer::Any:
  case Reducer::All:
    break;
  }
  fail("reduce", "no reduction named '" + op + "'", ErrorKind::Type);
}

} // namespace

Tensor reduce(std::string_view name, const Tensor &a, const Axes &axes, bool keepdims,
              const Reduction &given) {
  Reduction how = given;
  if (how.correction) {
    if (how.ddof != 0)
      throw Error("ddof and correction can't be provided simultaneously.", ErrorKind::Value);
    how.ddof = *how.correction;
    how.correction.reset();
  }
  if (name.starts_with("nan"))
    return nanReduce(name.substr(3), a, axes, keepdims, how);
  if (!reducerOf(name)) // a binary ufunc's reduce, by its name (bitwise_and, subtract)
    return reduceUfunc(name, inDtype(a, how.dtype), axes, keepdims, how.initial, how.where);
  const Reducer r = reducerNamed(name);
  const std::string op(name);
  if (how.initial.valid()) {
    if (r != Reducer::Sum && r != Reducer::Prod && r != Reducer::Max && r != Reducer::Min)
      fail(op.c_str(), op + "() got an unexpected keyword argument 'initial'", ErrorKind::Type);
    if (how.initial.rank() != 0)
      fail(op.c_str(), "setting an array element with a sequence (initial of shape " +
                           shapeString(how.initial.shape()) + ", not a scalar)");
  }
  const bool averages = r == Reducer::Mean || r == Reducer::Var || r == Reducer::Std;
  if (averages)
    floatDtype(op.c_str(), how.dtype, false);
  const Tensor t = inDtype(a, how.dtype);
  const Tensor w =
      how.where.valid() ? broadcastTo(cast(how.where, DType::b8), t.shape()) : Tensor();
  auto value = [](const Tensor &x, double v) { return ScalarType{x.dtype()}(v); };
  switch (r) {
  case Reducer::Sum:
  case Reducer::Prod: {
    const bool add = r == Reducer::Sum;
    Tensor out = add ? sum(kept(t, w, value(t, 0)), axes, keepdims)
                     : prod(kept(t, w, value(t, 1)), axes, keepdims);
    if (how.dtype) // an int64 sum cast to a narrower integer wraps as its own sum would
      out = cast(out, *how.dtype);
    if (!how.initial.valid())
      return out;
    const Tensor init = cast(how.initial, out.dtype());
    return add ? out + init : out * init;
  }
  case Reducer::Max:
  case Reducer::Min: {
    const bool largest = r == Reducer::Max;
    if (!how.initial.valid()) {
      if (w.valid())
        fail(op.c_str(), std::string("reduction operation '") + (largest ? "maximum" : "minimum") +
                             "' does not have an identity, so to use a where mask one has to "
                             "specify 'initial'");
      return largest ? max(t, axes, keepdims) : min(t, axes, keepdims);
    }
    const Tensor init = cast(how.initial, t.dtype());
    if (numElements(t.shape()) == 0) // an empty max or min is initial's
      return broadcastTo(init, sum(t, axes, keepdims).shape());
    const Tensor out =
        largest ? max(kept(t, w, init), axes, keepdims) : min(kept(t, w, init), axes, keepdims);
    return largest ? maximum(out, init) : minimum(out, init);
  }
  case Reducer::Any:
  case Reducer::All: {
    const Tensor b = w.valid() ? cast(t, DType::b8) : t;
    return r == Reducer::Any ? any(kept(b, w, value(b, 0)), axes, keepdims)
                             : all(kept(b, w, value(b, 1)), axes, keepdims);
  }
  case Reducer::Mean:
    return meanOrVar(t, axes, keepdims, w, std::nullopt);
  case Reducer::Var:
    return meanOrVar(t, axes, keepdims, w, how.ddof);
  case Reducer::Std:
    return sqrt(meanOrVar(t, axes, keepdims, w, how.ddof));
  }
  return Tensor();
}

void reduceInto(Ref &out, const Tensor &result, std::string_view name) {
  const std::string op(name);
  const Shape &want = result.shape(), &got = out.shape();
  if (got.size() != want.size())
    fail(op.c_str(), "output parameter for reduction operation " + op +
                         " has the wrong number of dimensions: Found " +
                         std::to_string(got.size()) + " but expected " +
                         std::to_string(want.size()));
  if (got != want)
    fail(op.c_str(), "output parameter for reduction operation " + op + " has shape " +
                         shapeString(got) + ", not the result's " + shapeString(want));
  out.assign(cast(result, out.dtype()));
}

} // namespace tinymlir
