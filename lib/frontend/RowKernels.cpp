// Ops on rows of the runtime's row kernels (runtime/Rows.cpp): sort, argsort,
// cumsum, argmax, searchsorted, take, bincount and put, and the complex max/min.
#include "frontend/Graph.h"
#include "frontend/Promotion.h"
#include "frontend/TensorInternals.h"

#include <tinymlir/tensor.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinymlir {
using detail::accumulated;
using detail::convert;
using detail::describe;
using detail::fail;
using detail::makeNode;
using detail::nodeOf;
using detail::NodePtr;
using detail::normalizeAxis;
using detail::promote;
using detail::putAlongRows;
using detail::rowsAndPositions;

// --- Row kernels ----------------------------------------------------------------

namespace {

/// x with `axis` moved last and the others flattened: (rows, n); `restore`
/// takes a (rows, m) result back to x's layout with that axis of size m.
struct Rows {
  Tensor rows;
  Shape moved;               // x's shape with the axis last
  std::vector<int64_t> perm; // x's axes in `moved` order

  Tensor restore(const Tensor &r, int64_t m) const {
    Shape shape = moved;
    shape.back() = m;
    Tensor t = reshape(r, shape);
    if (perm.empty())
      return t;
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    return transpose(t, inverse);
  }
};

Rows rowsAlong(const char *op, const Tensor &x, int64_t axis) {
  const Shape &shape = nodeOf(x, op)->shape;
  if (shape.empty())
    fail(op, "axis " + std::to_string(axis) + " is out of bounds for array of dimension 0",
         ErrorKind::Index);
  const int64_t a = normalizeAxis(op, axis, shape), rank = static_cast<int64_t>(shape.size());
  Rows r;
  Tensor t = x;
  if (a != rank - 1) {
    for (int64_t i = 0; i < rank; ++i)
      if (i != a)
        r.perm.push_back(i);
    r.perm.push_back(a);
    t = transpose(x, r.perm);
  }
  r.moved = nodeOf(t, op)->shape;
  r.rows =
      reshape(t, {numElements(r.moved) / std::max<int64_t>(r.moved.back(), 1), r.moved.back()});
  return r;
}

Tensor rowKernel(Op op, const Tensor &rows, Shape shape, DType dtype, int64_t flag = 0) {
  auto node = makeNode(op, std::move(shape), dtype, {rows.node()});
  node->axes = {flag};
  return Tensor(node);
}

/// The operand of a sort or index search (Python scalars as NumPy's default
/// dtypes; complex numbers are ordered lexicographically by the kernels).
NodePtr orderedOperand(Op op, const Tensor &x) {
  NodePtr n = nodeOf(x, opName(op));
  if (n->weak)
    n = convert(n, n->integral ? DType::i64 : DType::f64, opName(op));
  return n;
}

Tensor sorted(Op op, const Tensor &x, int64_t axis) {
  NodePtr n = orderedOperand(op, x);
  const DType dtype = op == Op::Argsort ? DType::i64 : n->dtype;
  Rows r = rowsAlong(opName(op), Tensor(n), axis);
  const Shape &s = nodeOf(r.rows, opName(op))->shape;
  if (numElements(s) == 0)
    return full(nodeOf(x, opName(op))->shape, 0, dtype);
  return r.restore(rowKernel(op, r.rows, s, dtype), s[1]);
}

} // namespace

Tensor detail::accumulated(Op op, const Tensor &x, std::optional<int64_t> axis,
                           std::optional<DType> dtype) {
  if (dtype) // in int64 and cast back: a narrower integer wraps as its own sums would
    return cast(accumulated(op, cast(x, *dtype), axis), *dtype);
  NodePtr n = nodeOf(x, opName(op));
  if (n->weak)
    n = convert(n, n->integral ? DType::i64 : DType::f64, opName(op));
  if (isInteger(n->dtype) || n->dtype == DType::b8) // as NumPy's: in int64 or uint64
    n = convert(n, isUnsigned(n->dtype) ? DType::u64 : DType::i64, opName(op));
  Tensor t(n);
  if (!axis || n->shape.empty())
    t = reshape(t, {numElements(n->shape)});
  Rows r = rowsAlong(opName(op), t, axis && !n->shape.empty() ? *axis : 0);
  const Shape &s = nodeOf(r.rows, opName(op))->shape;
  if (numElements(s) == 0)
    return full(nodeOf(t, opName(op))->shape, 0, n->dtype);
  return r.restore(rowKernel(op, r.rows, s, n->dtype), s[1]);
}

namespace {

/// The position of the largest (Argmax) or smallest (Argmin) element along
/// `axis` (all: flattened), as NumPy's, with `pick` applied to the rows and
/// their (R, 1) positions: the positions themselves, or the elements there.
template <class Pick>
Tensor alongRows(Op op, Op arg, const Tensor &x, std::optional<int64_t> axis, bool keepdims,
                 Pick pick) {
  NodePtr n = orderedOperand(op, x);
  Tensor t(n);
  const Shape shape = n->shape;
  if (shape.empty() && axis && (*axis == 0 || *axis == -1))
    axis.reset(); // NumPy's: axis 0 (or -1) of a rank-0 array is all of it
  if (!axis)
    t = reshape(t, {numElements(shape)});
  Rows r = rowsAlong(opName(op), t, axis ? *axis : 0);
  const Shape &s = nodeOf(r.rows, opName(op))->shape;
  if (s[1] == 0) {
    if (op == arg)
      fail(op, std::string("attempt to get ") + opName(op) + " of an empty sequence");
    fail(op, std::string("zero-size array to reduction operation ") +
                 (op == Op::Max ? "maximum" : "minimum") + " which has no identity");
  }
  Tensor index =
      s[0] == 0 ? full({0, 1}, 0, DType::i64) : rowKernel(arg, r.rows, {s[0], 1}, DType::i64);
  Tensor kept = r.restore(s[0] == 0 ? index : pick(r.rows, index), 1); // the axis kept, size 1
  if (!axis)
    return keepdims ? reshape(kept, Shape(shape.size(), 1)) : reshape(kept, {});
  if (keepdims)
    return kept;
  Shape out = shape;
  out.erase(out.begin() + normalizeAxis(opName(op), *axis, shape));
  return reshape(kept, out);
}

Tensor extremeIndex(Op op, const Tensor &x, std::optional<int64_t> axis, bool keepdims) {
  return alongRows(op, op, x, axis, keepdims, [](const Tensor &, const Tensor &i) { return i; });
}

} // namespace

/// max and min of complex numbers: the element at argmax (argmin), NumPy's
/// lexicographic order, the first nan if there is one.
Tensor detail::complexExtreme(Op op, const Tensor &x, std::optional<int64_t> axis, bool keepdims) {
  const Op arg = op == Op::Max ? Op::Argmax : Op::Argmin;
  return alongRows(op, arg, x, axis, keepdims, [](const Tensor &rows, const Tensor &index) {
    const Shape &s = rows.shape(); // (R, W): element R*W + index of the flattened rows
    Tensor starts = Tensor(Array::arange(s[0], DType::i64)) * weakInteger(s[1]);
    Tensor at = starts + reshape(index, {s[0]});
    return reshape(take(reshape(rows, {s[0] * s[1]}), at), {s[0], 1});
  });
}

Tensor sort(const Tensor &x, std::optional<int64_t> axis) {
  return axis ? sorted(Op::Sort, x, *axis) : sorted(Op::Sort, reshape(x, {-1}), -1);
}
Tensor argsort(const Tensor &x, std::optional<int64_t> axis) {
  return axis ? sorted(Op::Argsort, x, *axis) : sorted(Op::Argsort, reshape(x, {-1}), -1);
}
Tensor cumsum(const Tensor &x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return accumulated(Op::Cumsum, x, axis, dtype);
}
Tensor cumprod(const Tensor &x, std::optional<int64_t> axis, std::optional<DType> dtype) {
  return accumulated(Op::Cumprod, x, axis, dtype);
}
Tensor argmax(const Tensor &x, std::optional<int64_t> axis, bool keepdims) {
  return extremeIndex(Op::Argmax, x, axis, keepdims);
}
Tensor argmin(const Tensor &x, std::optional<int64_t> axis, bool keepdims) {
  return extremeIndex(Op::Argmin, x, axis, keepdims);
}

Tensor searchsorted(const Tensor &sortedValues, const Tensor &values, bool right) {
  NodePtr a = orderedOperand(Op::SearchSorted, sortedValues),
          v = orderedOperand(Op::SearchSorted, values);
  if (a->shape.size() != 1)
    fail(Op::SearchSorted, "the sorted array must be 1-D, got " + describe(a));
  const DType common = promote(a->dtype, v->dtype);
  const Shape out = v->shape;
  const int64_t n = a->shape[0], m = numElements(out);
  if (m == 0 || n == 0)
    return full(out, 0, DType::i64);
  Tensor row = reshape(Tensor(convert(a, common, "searchsorted")), {1, n});
  Tensor vals = reshape(Tensor(convert(v, common, "searchsorted")), {1, m});
  auto node = makeNode(Op::SearchSorted, {1, m}, DType::i64, {row.node(), vals.node()});
  node->axes = {right ? 1 : 0};
  return reshape(Tensor(node), out);
}

/// The (R, W) table of `x` (rows along axis 0) and int64 positions (1, m).
std::pair<Tensor, Tensor> detail::rowsAndPositions(Op op, const Tensor &table, const Tensor &ids) {
  NodePtr t = nodeOf(table, opName(op)), i = nodeOf(ids, opName(op));
  if (t->shape.empty())
    fail(op, "too many indices for array: array is 0-dimensional, but 1 were indexed",
         ErrorKind::Index);
  if (!isInteger(i->dtype) && !i->weak)
    fail(op, "arrays used as indices must be of integer (or boolean) type, got " + describe(i),
         ErrorKind::Index);
  const int64_t rows = t->shape[0];
  Tensor positions =
      reshape(Tensor(convert(i, DType::i64, opName(op))), {1, numElements(i->shape)});
  return {reshape(table, {rows, rows ? numElements(t->shape) / rows : 0}), positions};
}

Tensor take(const Tensor &table, const Tensor &ids) {
  auto [rows, positions] = rowsAndPositions(Op::Take, table, ids);
  const NodePtr &t = table.node(), &i = ids.node();
  Shape out = i->shape;
  out.insert(out.end(), t->shape.begin() + 1, t->shape.end());
  const int64_t m = numElements(i->shape), width = rows.shape()[1];
  if (m == 0 || width == 0)
    return full(out, 0, t->dtype);
  auto node = makeNode(Op::Take, {m, width}, t->dtype, {rows.node(), positions.node()});
  node->axes = {0};
  return reshape(Tensor(node), out);
}

Tensor bincount(const Tensor &ids, int64_t length, const Tensor &weights) {
  NodePtr i = nodeOf(ids, "bincount");
  if (i->shape.size() != 1)
    fail(Op::Bincount, "object too deep for desired array: ids must be 1-D, got " + describe(i));
  if (!isInteger(i->dtype) && i->dtype != DType::b8)
    fail(Op::Bincount,
         "Cannot cast array data from dtype('" + std::string(dtypeName(i->dtype)) +
             "') to dtype('int64') according to the rule 'safe'",
         ErrorKind::Type);
  if (length < 0)
    throw Error("'minlength' must not be negative", ErrorKind::Value);
  if (length == 0)
    fail(Op::Bincount,
         "tinymlir traces numpy.bincount with minlength= only: the length of its result "
         "(max(x) + 1) depends on the data; pass minlength, the number of bins, as the bound",
         ErrorKind::Trace);
  const int64_t m = i->shape[0];
  const bool weighted = weights.valid();
  const DType dtype = weighted ? DType::f64 : DType::i64;
  if (weighted && weights.shape() != i->shape)
    fail(Op::Bincount, "The weights and list don't have the same length.");
  if (m == 0)
    return full({length}, 0, dtype);
  Tensor positions = reshape(Tensor(convert(i, DType::i64, "bincount")), {1, m});
  std::vector<NodePtr> args{positions.node()};
  if (weighted)
    args.push_back(reshape(cast(weights, DType::f64), {1, m}).node());
  auto node = makeNode(weighted ? Op::BincountWeighted : Op::Bincount, {1, length}, dtype, args);
  node->axes = {length};
  return reshape(Tensor(node), {length});
}

/// table[ids] = values (mode 0) or ufunc.at's update (runtime/Rows.cpp's
/// combine) along axis 0: a Put row kernel, values broadcast to ids.shape +
/// table.shape[1:].
Tensor detail::putAlongRows(const Tensor &table, const Tensor &ids, const Tensor &values,
                            int64_t mode) {
  auto [rows, positions] = rowsAndPositions(Op::Put, table, ids);
  const NodePtr &t = table.node(), &i = ids.node();
  Shape valueShape = i->shape;
  valueShape.insert(valueShape.end(), t->shape.begin() + 1, t->shape.end());
  const int64_t m = numElements(i->shape), width = rows.shape()[1];
  if (m == 0 || width == 0)
    return table;
  Tensor v = reshape(broadcastTo(cast(values, t->dtype), valueShape), {m, width});
  auto node = makeNode(Op::Put, rows.shape(), t->dtype, {rows.node(), positions.node(), v.node()});
  node->axes = {mode};
  return reshape(Tensor(node), t->shape);
}

Tensor put(const Tensor &table, const Tensor &ids, const Tensor &values) {
  return putAlongRows(table, ids, values, 0);
}

} // namespace tinymlir
