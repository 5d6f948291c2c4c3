// The methods of binary ufuncs: accumulate, reduce and reduceat (a row kernel
// or a tree of the ufunc), and at (a Put row kernel, or steps of the ufunc).
#include "frontend/Graph.h"
#include "frontend/Promotion.h"
#include "frontend/TensorInternals.h"

#include <tinymlir/tensor.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinymlir {
using detail::accumulated;
using detail::binary;
using detail::describe;
using detail::fail;
using detail::keptShape;
using detail::nodeOf;
using detail::NodePtr;
using detail::normalizeAxis;
using detail::operandDType;
using detail::putAlongRows;
using detail::reducedAxes;
using detail::reducedCount;
using detail::removedAxes;
using detail::rowsAndPositions;

namespace {
/// The binary ufuncs whose reduce and accumulate tinymlir traces, by name:
/// the function, the row kernel that accumulates it sequentially as NumPy's
/// loop, NumPy's identity, and the reduction that folds it (none: a tree of
/// the function itself). Without a kernel (Op::Results) the ufunc is
/// exactly associative and commutative, so folding it in any order gives
/// NumPy's result; subtract is a sequential sum of the negated first element
/// and the rest, negated (exact: rounding is symmetric).
struct UfuncFold {
  std::string_view name;
  Tensor (*apply)(const Tensor &, const Tensor &);
  Op scan;
  std::optional<double> identity;
  Tensor (*whole)(const Tensor &, const Axes &, bool) = nullptr;
};
const UfuncFold kUfuncFolds[] = {{"add", add, Op::Cumsum, 0, sum},
                                 {"multiply", multiply, Op::Cumprod, 1, prod},
                                 {"maximum", maximum, Op::Cummax, std::nullopt, max},
                                 {"minimum", minimum, Op::Cummin, std::nullopt, min},
                                 {"logical_and", logical_and, Op::Cummin, 1, all},
                                 {"logical_or", logical_or, Op::Cummax, 0, any},
                                 {"subtract", subtract, Op::Results, std::nullopt},
                                 {"logical_xor", logical_xor, Op::Results, 0},
                                 {"bitwise_and", bitwise_and, Op::Results, -1},
                                 {"bitwise_or", bitwise_or, Op::Results, 0},
                                 {"bitwise_xor", bitwise_xor, Op::Results, 0},
                                 {"fmax", fmax, Op::Results, std::nullopt},
                                 {"fmin", fmin, Op::Results, std::nullopt}};

const UfuncFold &ufuncFold(std::string_view ufunc, std::string_view method) {
  for (const UfuncFold &u : kUfuncFolds)
    if (u.name == ufunc)
      return u;
  std::string names;
  for (const UfuncFold &u : kUfuncFolds)
    names += (names.empty() ? "" : ", ") + std::string(u.name);
  const std::string op = std::string(ufunc) + "." + std::string(method);
  fail(op.c_str(),
       "tinymlir traces the " + std::string(method) + " of " + names + ", not of " +
           std::string(ufunc),
       ErrorKind::Trace);
}

/// x (a normalized axis) in the dtype the ufunc gives for x with itself: its
/// own type check and result (logical_xor of ints is bool).
Tensor inFoldDType(const UfuncFold &u, const Tensor &x) {
  const DType d = u.apply(x, x).dtype(); // a dead node: only its dtype is read
  return x.dtype() == d ? x : cast(x, d);
}

/// subtract.accumulate along `axis`: -cumsum([-x0, x1, x2, ...]), exactly
/// NumPy's ((x0 - x1) - x2) ..., in x's dtype.
Tensor subtractScan(const Tensor &x, int64_t axis) {
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  if (n == 0)
    return x;
  const Tensor first = negative(detail::sliceAlong(x, axis, 0, 1));
  const Tensor all = n > 1 ? concatenate({first, detail::sliceAlong(x, axis, 1, n)}, axis) : first;
  return cast(negative(cumsum(all, axis)), x.dtype());
}

/// The running fold of an associative, commutative ufunc along `axis`:
/// log2(n) rounds, each combining an element with the one `step` before it.
Tensor foldScan(const UfuncFold &u, Tensor x, int64_t axis) {
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  for (int64_t step = 1; step < n; step *= 2)
    x = concatenate(
        {detail::sliceAlong(x, axis, 0, step),
         u.apply(detail::sliceAlong(x, axis, 0, n - step), detail::sliceAlong(x, axis, step, n))},
        axis);
  return x;
}

/// The fold of an associative, commutative ufunc along the last axis, kept
/// (size 1): halves combined, an odd last element first into the first.
Tensor foldLast(const UfuncFold &u, Tensor x) {
  const int64_t axis = static_cast<int64_t>(x.shape().size()) - 1;
  for (int64_t n = x.shape().back(); n > 1; n = x.shape().back()) {
    if (n % 2) {
      const Tensor first =
          u.apply(detail::sliceAlong(x, axis, 0, 1), detail::sliceAlong(x, axis, n - 1, n));
      x = concatenate({first, detail::sliceAlong(x, axis, 1, n - 1)}, axis);
      --n;
    }
    x = u.apply(detail::sliceAlong(x, axis, 0, n / 2), detail::sliceAlong(x, axis, n / 2, n));
  }
  return x;
}
} // namespace

Tensor accumulate(std::string_view ufunc, const Tensor &x, int64_t axis,
                  std::optional<DType> dtype) {
  const UfuncFold &u = ufuncFold(ufunc, "accumulate");
  const bool logical = ufunc.starts_with("logical_");
  Tensor t = logical ? cast(x, DType::b8) : x;
  if (t.rank() == 0)
    fail("accumulate", "cannot accumulate on a scalar", ErrorKind::Type);
  if (u.scan == Op::Cumsum || u.scan == Op::Cumprod)
    return accumulated(u.scan, t, axis, dtype); // cumsum's dtypes
  if (dtype && !logical)
    t = cast(t, *dtype);
  if (u.scan != Op::Results) // maximum and minimum keep x's dtype
    return accumulated(u.scan, t, axis, t.dtype());
  const int64_t a = normalizeAxis("accumulate", axis, t.shape());
  t = inFoldDType(u, t);
  return u.name == "subtract" ? subtractScan(t, a) : foldScan(u, t, a);
}

Tensor reduceUfunc(std::string_view ufunc, const Tensor &x, const Axes &axes, bool keepdims,
                   const Tensor &initial, const Tensor &where) {
  const UfuncFold &u = ufuncFold(ufunc, "reduce");
  const std::string op = std::string(ufunc) + ".reduce";
  const Shape shape = x.shape();
  const std::vector<int64_t> reduced = reducedAxes(op.c_str(), axes, shape); // NumPy's first
  Tensor t = inFoldDType(u, ufunc.starts_with("logical_") ? cast(x, DType::b8) : x);
  const Shape out = keepdims ? keptShape(shape, reduced) : removedAxes(shape, reduced);
  if (u.name == "subtract" && reduced.size() > 1)
    fail(op.c_str(), "reduction operation 'subtract' is not reorderable, so at most one axis may "
                     "be specified");
  if (where.valid()) { // masked elements change nothing: the identity, else initial
    if (!u.identity && !initial.valid()) // (maximum and kin: idempotent), or subtract's 0
      fail(op.c_str(),
           "reduction operation '" + std::string(ufunc) +
               "' does not have an identity, so to use a where mask one has to specify 'initial'");
    const Tensor fill = u.identity             ? ScalarType{t.dtype()}(*u.identity)
                        : u.name == "subtract" ? ScalarType{t.dtype()}(0.0)
                                               : cast(initial, t.dtype());
    t = tinymlir::where(broadcastTo(cast(where, DType::b8), shape), t, fill);
  }
  const int64_t m = reducedCount(shape, reduced);
  const Tensor init = initial.valid() ? cast(initial, t.dtype()) : Tensor();
  if (numElements(out) == 0)
    return full(out, 0, t.dtype());
  if (m == 0) {
    if (init.valid())
      return broadcastTo(init, out);
    if (!u.identity)
      fail(op.c_str(), "zero-size array to reduction operation " + std::string(ufunc) +
                           " which has no identity");
    return full(out, *u.identity, t.dtype());
  }
  if (u.whole) { // its reduction, initial folded in after: the ufunc commutes
    const Tensor r = u.whole(t, reduced, keepdims);
    return init.valid() ? cast(u.apply(r, init), t.dtype()) : r;
  }
  // the reduced axes last, as one: (kept..., m)
  std::vector<int64_t> perm;
  Shape rows = removedAxes(shape, reduced);
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
    if (std::find(reduced.begin(), reduced.end(), i) == reduced.end())
      perm.push_back(i);
  perm.insert(perm.end(), reduced.begin(), reduced.end());
  rows.push_back(m);
  Tensor r = reshape(transpose(t, perm), rows);
  if (init.valid()) { // NumPy's first element
    Shape column = r.shape();
    column.back() = 1;
    r = concatenate({broadcastTo(init, column), r}, -1);
  }
  const int64_t last = static_cast<int64_t>(rows.size()) - 1, n = r.shape().back();
  r = u.name == "subtract" ? detail::sliceAlong(subtractScan(r, last), last, n - 1, n)
                           : foldLast(u, r);
  return reshape(r, out);
}

Tensor reduceAt(std::string_view ufunc, const Tensor &x, const Tensor &indices, int64_t axis,
                std::optional<DType> dtype) {
  const std::string op = std::string(ufunc) + ".reduceat";
  const NodePtr &i = nodeOf(indices, op.c_str());
  if (i->op != Op::Constant ||
      ((isFloat(i->dtype) || isComplex(i->dtype)) && numElements(i->shape) != 0))
    fail(op.c_str(),
         "tinymlir traces " + op +
             " at integer indices known while tracing (the segments "
             "make the result's shape), not " +
             describe(i),
         i->op == Op::Constant ? ErrorKind::Type : ErrorKind::Trace);
  if (i->shape.size() > 1)
    fail(op.c_str(), "setting an array element with a sequence. The requested array would "
                     "exceed the maximum number of dimension of 1.");
  const Tensor t = dtype ? cast(x, *dtype) : x;
  if (t.rank() == 0)
    fail(op.c_str(), "cannot reduceat on a scalar", ErrorKind::Type);
  const int64_t a = normalizeAxis(op.c_str(), axis, t.shape());
  const int64_t n = t.shape()[static_cast<size_t>(a)];
  std::vector<int64_t> at;
  for (double v : i->constant.toDoubles()) {
    const auto k = static_cast<int64_t>(v);
    if (k < 0 || k >= n)
      fail(op.c_str(),
           "index " + std::to_string(k) + " out-of-bounds in " + op + " [0, " + std::to_string(n) +
               ")",
           ErrorKind::Index);
    at.push_back(k);
  }
  // NumPy's: the reduce of [at[k], at[k + 1]) where that is a range, else at[k]'s element
  std::vector<Tensor> parts;
  for (size_t k = 0; k < at.size(); ++k) {
    const int64_t end = k + 1 < at.size() && at[k + 1] > at[k] ? at[k + 1]
                        : k + 1 < at.size()                    ? at[k] + 1
                                                               : n;
    parts.push_back(reduceUfunc(ufunc, detail::sliceAlong(t, a, at[k], end), a, true));
  }
  if (parts.empty()) {
    Shape shape = t.shape();
    shape[static_cast<size_t>(a)] = 0;
    return full(shape, 0, reduceUfunc(ufunc, t, a, true).dtype());
  }
  return concatenate(parts, a);
}

Tensor ufuncAt(std::string_view ufunc, const Tensor &table, const Tensor &ids,
               const Tensor &values) {
  static constexpr std::pair<std::string_view, Op> kModes[] = {{"add", Op::Add},
                                                               {"subtract", Op::Sub},
                                                               {"multiply", Op::Mul},
                                                               {"maximum", Op::Maximum},
                                                               {"minimum", Op::Minimum}};
  const std::string name = std::string(ufunc) + ".at";
  const auto *mode = std::find_if(std::begin(kModes), std::end(kModes),
                                  [&](const auto &m) { return m.first == ufunc; });
  if (mode == std::end(kModes))
    fail(name.c_str(), "tinymlir traces ufunc.at for add, subtract, multiply, maximum and minimum",
         ErrorKind::Trace);
  const NodePtr &t = nodeOf(table, name.c_str()), &v = nodeOf(values, name.c_str());
  if (isComplex(t->dtype) && mode->second != Op::Add && mode->second != Op::Sub &&
      mode->second != Op::Mul)
    fail(name.c_str(), "tinymlir traces " + name + " of real values, not complex",
         ErrorKind::Trace);
  auto [rows, positions] = rowsAndPositions(Op::Put, table, ids); // validates
  const DType computed = operandDType(mode->second, t, v);
  if (computed == t->dtype)
    return putAlongRows(table, ids, values, 1 + (mode - std::begin(kModes)));
  // NumPy's loop computes each step in the operands' dtype and casts it back
  // to the table's (unsafely): step by step, for positions known now.
  const NodePtr &i = nodeOf(ids, name.c_str());
  if (i->op != Op::Constant)
    fail(name.c_str(),
         "tinymlir traces " + name + " at positions from the data with values of the " +
             "table's dtype (" + dtypeName(t->dtype) + "), not " + dtypeName(v->dtype) +
             ": NumPy computes each step in " + dtypeName(computed) + " and casts it back",
         ErrorKind::Trace);
  const Shape &shape = t->shape;
  const int64_t n = shape[0], m = numElements(i->shape), width = rows.shape()[1];
  if (m == 0 || width == 0)
    return table;
  Shape valueShape = i->shape, rowShape = shape;
  valueShape.insert(valueShape.end(), shape.begin() + 1, shape.end());
  rowShape[0] = 1;
  const Tensor steps = reshape(broadcastTo(values, valueShape), {m, width});
  std::vector<int64_t> begin(shape.size(), 0), end = shape;
  Tensor out = table;
  const std::vector<double> at = i->constant.toDoubles();
  for (int64_t k = 0; k < m; ++k) {
    begin[0] = detail::positionAlong(static_cast<int64_t>(at[static_cast<size_t>(k)]), 0, n);
    end[0] = begin[0] + 1;
    const Tensor value = reshape(slice(steps, {k, 0}, {k + 1, width}), rowShape);
    const Tensor step = binary(mode->second, cast(slice(out, begin, end), computed), value);
    out = sliceUpdate(out, begin, end, {}, cast(step, t->dtype));
  }
  return out;
}

} // namespace tinymlir
