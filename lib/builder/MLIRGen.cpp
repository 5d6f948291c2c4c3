// Graph -> MLIR: linalg on tensors inside a function of memrefs.
//
//   func.func @kernel(%in: memref<...>, ..., %out: memref<...>) {llvm.emit_c_interface}
//     %t = bufferization.to_tensor %in restrict
//     ... linalg.generic / linalg.reduce / linalg.matmul ... on tensors
//     bufferization.materialize_in_destination %r in restrict writable %out
//
// A donated input is read from %out instead (bufferization.to_tensor %out
// restrict writable), so that an update of it bufferizes in place.
//
// Each elementwise op's scalar body is ScalarLowering.cpp's; the straight-line
// modes (unrolled code) are StraightLine.cpp's.
#include "builder/MLIRGen.h"
#include "builder/ModuleBuilder.h"
#include "builder/ScalarLowering.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Bufferization/IR/Bufferization.h>
#include <mlir/Dialect/Complex/IR/Complex.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/Linalg/IR/Linalg.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/Dialect/Utils/ReshapeOpsUtils.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinTypes.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace tinymlir::detail {

using namespace mlir;

namespace {

/// Private declarations of the runtime functions that calls name without one
/// (complex math, row kernels, index errors: made inside bodies not yet in
/// the module), typed as called.
void declareCallees(ModuleOp module) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  module.walk([&](func::CallOp call) {
    if (module.lookupSymbol(call.getCallee()))
      return;
    auto f = func::FuncOp::create(b, call.getLoc(), call.getCallee(), call.getCalleeType());
    f.setPrivate();
  });
}

} // namespace

BuiltModule ModuleBuilder::build(const std::vector<NodePtr> &results,
                                 const std::vector<NodePtr> &args,
                                 const std::vector<int> &donated) {
  if (results.empty() || donated.size() != results.size())
    throw Error("[build] internal: give one donation (or -1) per result");
  // The root: every result is one of its arguments, read until the end.
  const NodePtr root = makeNode(Op::Results, {}, results[0]->dtype, results);
  for (const NodePtr &r : results)
    if (hasSymbolic(r->shape))
      throw Error("[jit] a result's shape depends on a traced value (a slice with traced "
                  "bounds, x[i:]): results need sizes known while tracing",
                  ErrorKind::Trace);
  collectConstants(root);
  collectSymbolicSizes(root);
  BuiltModule out;
  out.module = ModuleOp::create(loc_);
  b_.setInsertionPointToEnd(out.module->getBody());

  SmallVector<Type> argTypes;
  for (const NodePtr &a : args)
    argTypes.push_back(memrefType(*a));
  for (const NodePtr &c : constants_)
    argTypes.push_back(memrefType(*c));
  for (const NodePtr &r : results)
    argTypes.push_back(memrefType(*r));
  auto func = func::FuncOp::create(b_, loc_, kKernelName, b_.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", b_.getUnitAttr());
  func->setAttr(kResultsAttr, b_.getI64IntegerAttr(static_cast<int64_t>(results.size())));
  Block *entry = func.addEntryBlock();
  b_.setInsertionPointToStart(entry);

  const size_t firstOutput = args.size() + constants_.size();
  auto output = [&](size_t k) { return entry->getArgument(firstOutput + k); };
  std::vector<int> outputOf(args.size(), -1); // the output each input is donated to
  for (size_t k = 0; k < results.size(); ++k) {
    const int i = donated[k];
    if (i < 0)
      continue;
    if (static_cast<size_t>(i) >= args.size() || args[i]->shape != results[k]->shape ||
        args[i]->dtype != results[k]->dtype || outputOf[i] >= 0)
      throw Error("[build] the donated input " + std::to_string(i) +
                  " must have its result's shape and dtype, and be donated once");
    outputOf[i] = static_cast<int>(k);
  }
  const GraphKind kind = classify(root);
  out.straightLine = kind != GraphKind::Small;
  scalarMode_ = out.straightLine;
  for (size_t i = 0; i < args.size(); ++i)
    if (outputOf[i] < 0)
      bindInput(args[i], entry->getArgument(i));
    else if (kind == GraphKind::Updates) {
      // Its versions live in the output buffer: the first of its updates
      // writes there (emitUpdate), with no copy of the array.
      chainOf_[args[i].get()] = output(outputOf[i]);
      holder_[output(outputOf[i])] = args[i].get();
    } else
      values_[args[i].get()] = bufferization::ToTensorOp::create(
          b_, loc_, tensorType(*args[i]), output(outputOf[i]), /*restrict=*/true,
          /*writable=*/true);
  for (size_t i = 0; i < constants_.size(); ++i) {
    bindInput(constants_[i], entry->getArgument(args.size() + i));
    out.constants.push_back(constants_[i]->constant);
  }
  // Several results bufferized with the analysis: each output as a tensor,
  // defined at the top, where empty-tensor elimination can use it (below).
  // So is a donated input's result: written into the input's tensor, so
  // that the analysis orders the write after the input's last read.
  const bool tensorDestinations =
      !out.straightLine && (results.size() > 1 || std::any_of(donated.begin(), donated.end(),
                                                              [](int i) { return i >= 0; }));
  std::vector<Value> dests(results.size());
  for (size_t k = 0; tensorDestinations && k < results.size(); ++k)
    dests[k] = donated[k] >= 0
                   ? values_[args[donated[k]].get()]
                   : Value(bufferization::ToTensorOp::create(b_, loc_, tensorType(*results[k]),
                                                             output(k), /*restrict=*/true,
                                                             /*writable=*/true));
  // A concatenated result of a straight-line graph: each part is written
  // into its box of the output. Without the bufferization analysis, a
  // chain of insert_slices would copy the whole destination at each part.
  auto partsInPlace = [&](size_t k) {
    return out.straightLine && results[k]->op == Op::Concat && donated[k] < 0;
  };
  if (kind == GraphKind::Updates) {
    std::unordered_set<const Node *> skip{root.get()};
    for (size_t k = 0; k < results.size(); ++k)
      if (partsInPlace(k))
        skip.insert(results[k].get());
    emitInOrder(root, skip);
  }
  // Several results bufferized with the analysis: every result is computed
  // first, then written into its output as a tensor (to_tensor of the
  // output, or the donated input's), so that the analysis sees every write
  // into an output's buffer: empty-tensor elimination makes producers write
  // there directly, and a value one output's producers wrote in place may
  // be another output. They are written in creation order, so that such a
  // value (created before what was computed from it) is written out before
  // its buffer is overwritten. Only then is each copied into its memref, a
  // copy onto itself where it was computed in place. (Written straight into
  // memrefs, which the analysis does not track, an output's write could
  // clobber what a later output still reads.)
  if (tensorDestinations) {
    std::vector<Value> values;
    for (const NodePtr &r : results)
      values.push_back(emit(r));
    std::vector<size_t> order(results.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t x, size_t y) { return results[x]->seq < results[y]->seq; });
    std::vector<Value> written(results.size());
    for (size_t k : order)
      written[k] = bufferization::MaterializeInDestinationOp::create(b_, loc_, values[k], dests[k])
                       .getResult();
    for (size_t k = 0; k < results.size(); ++k)
      bufferization::MaterializeInDestinationOp::create(b_, loc_, TypeRange{}, written[k],
                                                        output(k), /*restrict=*/true,
                                                        /*writable=*/true);
    func::ReturnOp::create(b_, loc_);
    return out;
  }
  for (size_t k = 0; k < results.size(); ++k) {
    const NodePtr &result = results[k];
    if (partsInPlace(k)) {
      for (const auto &[part, box] : concatParts(*result)) {
        Value view =
            memref::SubViewOp::create(b_, loc_, output(k), box.offsets, box.sizes, box.strides);
        bufferization::MaterializeInDestinationOp::create(b_, loc_, TypeRange{}, emit(part), view,
                                                          /*restrict=*/true,
                                                          /*writable=*/true);
      }
    } else if (auto it = chainOf_.find(result.get()); it != chainOf_.end() &&
                                                      it->second == output(k) &&
                                                      holder_[output(k)] == result.get()) {
      // The result is the donated input's last version: already in place.
    } else {
      bufferization::MaterializeInDestinationOp::create(b_, loc_, TypeRange{}, emit(result),
                                                        output(k), /*restrict=*/true,
                                                        /*writable=*/true);
    }
  }
  func::ReturnOp::create(b_, loc_);
  return out;
}

void ModuleBuilder::collectConstants(const NodePtr &root) {
  std::vector<const Node *> stack{root.get()};
  std::unordered_map<const Node *, bool> seen;
  std::vector<NodePtr> order;
  // Depth-first, children in order, so argument order is deterministic.
  std::function<void(const NodePtr &)> visit = [&](const NodePtr &n) {
    if (seen[n.get()])
      return;
    seen[n.get()] = true;
    forEachOperand(*n, visit); // a loop's body too
    if (n->op == Op::Constant)
      order.push_back(n);
  };
  visit(root);
  // A view: its data, dtype, shape and strides (one lookup per constant:
  // unrolled loops capture thousands).
  auto viewKey = [](const Array &x) {
    std::string key;
    auto add = [&](int64_t v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); };
    add(reinterpret_cast<intptr_t>(x.data()));
    add(static_cast<int64_t>(x.dtype()));
    for (int64_t d : x.shape())
      add(d);
    add(-1);
    for (int64_t d : x.strides())
      add(d);
    return key;
  };
  std::unordered_map<std::string, const Node *> byView;
  for (const NodePtr &c : constants_)
    byView.emplace(viewKey(c->constant), c.get());
  for (const NodePtr &c : order) {
    auto [it, fresh] = byView.emplace(viewKey(c->constant), c.get());
    if (fresh)
      constants_.push_back(c);
    else
      aliases_[c.get()] = it->second;
  }
}

void ModuleBuilder::bindInput(const NodePtr &n, Value memref) {
  values_[n.get()] = bufferization::ToTensorOp::create(b_, loc_, tensorType(*n), memref,
                                                       /*restrict=*/true, /*writable=*/false);
}

Value ModuleBuilder::emptyLike(const Node &n) {
  return tensor::EmptyOp::create(b_, loc_, typeShape(n.shape), elementType(n.dtype),
                                 dynamicDims(n.shape));
}

void ModuleBuilder::collectSymbolicSizes(const NodePtr &root) {
  forEachNode(root, [&](const Node &n) {
    const size_t spans = spanCount(n);
    if (spans == 0)
      return;
    const size_t rank = n.op == Op::SliceUpdate ? n.shape.size() : n.args[0]->shape.size();
    const size_t positions = tracedPositions(n);
    const size_t first = n.args.size() - spans; // the sizes, after the starts
    for (size_t j = 0; j < spans; ++j)
      symbolicSizes_.try_emplace(n.axes[2 * rank + 2 * positions + 2 * j + 1], n.args[first + j]);
  });
}

Value ModuleBuilder::dimValue(int64_t d) {
  if (!isSymbolic(d))
    return arith::ConstantIndexOp::create(b_, loc_, d);
  auto it = symbolicSizes_.find(d);
  if (it == symbolicSizes_.end())
    throw Error("[build] internal: a symbolic extent with no slice that gives its size");
  return arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), scalarOf(it->second));
}

OpFoldResult ModuleBuilder::dimOf(int64_t d) {
  return isSymbolic(d) ? OpFoldResult(dimValue(d)) : OpFoldResult(b_.getIndexAttr(d));
}

SmallVector<Value> ModuleBuilder::dynamicDims(const Shape &shape) {
  SmallVector<Value> out;
  for (int64_t d : shape)
    if (isSymbolic(d))
      out.push_back(dimValue(d));
  return out;
}

Value ModuleBuilder::scalarValue(OpBuilder &b, const Node &n) {
  if (isInteger(n.dtype))
    return intConstant(b, loc_, tinymlir::detail::elementType(b, n.dtype), n.integer);
  return scalarConstant(b, n.dtype, n.scalar, n.imag);
}

Value ModuleBuilder::filled(const Node &n, Value init) {
  return linalg::FillOp::create(b_, loc_, ValueRange{init}, ValueRange{emptyLike(n)}).getResult(0);
}

Value ModuleBuilder::filled(const Node &n, double value, double imag) {
  return filled(n, scalarConstant(b_, n.dtype, value, imag));
}

Value ModuleBuilder::emit(const NodePtr &n) {
  const Node *key = n.get();
  if (auto alias = aliases_.find(key); alias != aliases_.end())
    key = alias->second;
  if (auto it = values_.find(key); it != values_.end())
    return it->second;
  if (chainOf_.contains(key))
    return readVersion(*n);
  Value v =
      isScalarNode(*n)
          ? Value(tensor::FromElementsOp::create(b_, loc_, tensorType(*n), ValueRange{scalarOf(n)}))
          : emitNew(*n);
  values_[key] = v;
  return v;
}

ModuleBuilder::Box ModuleBuilder::boxOf(const Node &n, const Shape &sizes) {
  Box box;
  const size_t rank = sizes.size();
  const auto &traced = tracedOffsets(n);
  for (size_t i = 0; i < rank; ++i) {
    box.offsets.push_back(traced[i] ? OpFoldResult(traced[i]) : b_.getIndexAttr(n.axes[i]));
    box.sizes.push_back(dimOf(sizes[i]));
    box.strides.push_back(b_.getIndexAttr(sliceStep(n, rank, i)));
  }
  return box;
}

SmallVector<Value> ModuleBuilder::boxOrigin(const Node &n) {
  SmallVector<Value> at;
  const auto &traced = tracedOffsets(n);
  for (size_t i = 0; i < n.shape.size(); ++i)
    at.push_back(traced[i] ? traced[i] : arith::ConstantIndexOp::create(b_, loc_, n.axes[i]));
  return at;
}

const SmallVector<Value> &ModuleBuilder::tracedOffsets(const Node &n) {
  auto [it, added] = tracedOffsets_.try_emplace(&n);
  if (!added)
    return it->second;
  SmallVector<Value> &slot = it->second; // (scalarOf below may add entries)
  const size_t rank = n.op == Op::SliceUpdate ? n.shape.size() : n.args[0]->shape.size();
  SmallVector<Value> offsets(rank);
  const size_t count = tracedPositions(n), first = n.op == Op::SliceUpdate ? 2 : 1;
  for (size_t j = 0; j < count; ++j) {
    const NodePtr &k = n.args[first + j];
    const int64_t axis = n.axes[2 * rank + 2 * j], extent = n.axes[2 * rank + 2 * j + 1];
    Type i64 = b_.getI64Type();
    Value v = scalarOf(k);
    if (dtypeSize(k->dtype) < 8)
      v = isUnsigned(k->dtype) ? Value(arith::ExtUIOp::create(b_, loc_, i64, v))
                               : Value(arith::ExtSIOp::create(b_, loc_, i64, v));
    Value size = arith::ConstantIntOp::create(b_, loc_, i64, extent);
    Value zero = arith::ConstantIntOp::create(b_, loc_, i64, 0);
    Value p = v;
    if (!isUnsigned(k->dtype)) {
      Value negative = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::slt, v, zero);
      p = arith::SelectOp::create(b_, loc_, negative, arith::AddIOp::create(b_, loc_, v, size), v);
    }
    // Unsigned: a position still negative is past any extent.
    Value bad = arith::CmpIOp::create(b_, loc_, arith::CmpIPredicate::uge, p, size);
    scf::IfOp::create(b_, loc_, bad, [&](OpBuilder &b, Location loc) {
      // tinymlir_index_error(position, axis, size): NumPy's IndexError, reported
      // (lib/runtime/Rows.cpp; declared by declareCallees).
      Value a = arith::ConstantIntOp::create(b, loc, i64, axis);
      func::CallOp::create(b, loc, "tinymlir_index_error", TypeRange{}, ValueRange{v, a, size});
      scf::YieldOp::create(b, loc);
    });
    p = arith::SelectOp::create(b_, loc_, bad, zero, p);
    const int64_t step = n.axes[rank + static_cast<size_t>(axis)];
    Value offset = arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), p);
    if (step != 1)
      offset =
          arith::MulIOp::create(b_, loc_, offset, arith::ConstantIndexOp::create(b_, loc_, step));
    if (n.axes[static_cast<size_t>(axis)] != 0)
      offset = arith::AddIOp::create(
          b_, loc_, offset,
          arith::ConstantIndexOp::create(b_, loc_, n.axes[static_cast<size_t>(axis)]));
    offsets[static_cast<size_t>(axis)] = offset;
  }
  // Spans (A[i, :j]): the static offset plus the span's clamped start (in
  // range by construction: no check).
  const size_t spans = spanCount(n);
  for (size_t j = 0; j < spans; ++j) {
    const auto axis = static_cast<size_t>(n.axes[2 * rank + 2 * count + 2 * j]);
    Value start = arith::IndexCastOp::create(b_, loc_, b_.getIndexType(),
                                             scalarOf(n.args[first + count + j]));
    if (n.axes[axis] != 0)
      start = arith::AddIOp::create(b_, loc_, start,
                                    arith::ConstantIndexOp::create(b_, loc_, n.axes[axis]));
    offsets[axis] = start;
  }
  return slot = std::move(offsets);
}

std::vector<std::pair<NodePtr, ModuleBuilder::Box>> ModuleBuilder::concatParts(const Node &n) {
  std::vector<std::pair<NodePtr, Box>> parts;
  const int64_t axis = n.axes[0];
  int64_t offset = 0;
  for (const NodePtr &part : n.args) {
    if (numElements(part->shape) == 0)
      continue;
    Box box;
    for (size_t i = 0; i < n.shape.size(); ++i) {
      box.offsets.push_back(b_.getIndexAttr(static_cast<int64_t>(i) == axis ? offset : 0));
      box.sizes.push_back(b_.getIndexAttr(part->shape[i]));
      box.strides.push_back(b_.getIndexAttr(1));
    }
    parts.emplace_back(part, std::move(box));
    offset += part->shape[axis];
  }
  return parts;
}

Value ModuleBuilder::emitNew(const Node &n) {
  switch (n.op) {
#define TINYMLIR_OP(Name, ...)
#define TINYMLIR_ELEMENTWISE_OP(Name, ...) case Op::Name:
#include <tinymlir/ops.def>
    return emitElementwise(n);
  case Op::Argument:
  case Op::Constant:
    break; // bound to the function's arguments before any use
  case Op::Scalar:
    return filled(n, scalarValue(b_, n));
  case Op::Sum:
  case Op::Max:
  case Op::Min:
  case Op::Prod:
    return emitReduction(n);
  case Op::MatMul:
    return emitMatmul(n);
  case Op::Slice: {
    if (auto read = sliceOfVersion(n))
      return *read;
    Box box = boxOf(n, n.shape);
    return tensor::ExtractSliceOp::create(b_, loc_, tensorType(n), emit(n.args[0]), box.offsets,
                                          box.sizes, box.strides);
  }
  case Op::SliceUpdate: { // with an index_put in the graph (emitInOrder writes buffers)
    if (scalarMode_ && !hasSymbolic(n.args[1]->shape) && numElements(n.args[1]->shape) == 1 &&
        !n.shape.empty()) {
      // One element (a loop body's A[i, j] = ...): a tensor.insert of its
      // scalar, a store once bufferized (no one-element buffer and copy).
      SmallVector<Value> at = boxOrigin(n);
      return tensor::InsertOp::create(b_, loc_, scalarOf(n.args[1]), emit(n.args[0]), at);
    }
    Box box = boxOf(n, n.args[1]->shape);
    return tensor::InsertSliceOp::create(b_, loc_, emit(n.args[1]), emit(n.args[0]), box.offsets,
                                         box.sizes, box.strides);
  }
  case Op::Reshape: {
    // A size known only when the kernel runs: unit axes dropped, then added
    // (frontend reshape allows no other), as collapse_shape and expand_shape.
    if (hasSymbolic(n.shape) || hasSymbolic(n.args[0]->shape)) {
      // A span of an array not updated here, squeezed for elementwise readers
      // (A[:i + 1, k] read as a vector): a rank-reduced extract_slice, as below.
      if (n.args[0]->op == Op::Slice && onlyDropsUnitDims(n.args[0]->shape, n.shape) &&
          !chainOf_.contains(n.args[0]->args[0].get()) && readByElementwiseOps(n)) {
        const Node &slice = *n.args[0];
        Box box = boxOf(slice, slice.shape);
        return tensor::ExtractSliceOp::create(b_, loc_, tensorType(n), emit(slice.args[0]),
                                              box.offsets, box.sizes, box.strides);
      }
      auto groups = [](const Shape &shape) {
        SmallVector<ReassociationIndices> out;
        ReassociationIndices current;
        for (size_t d = 0; d < shape.size(); ++d) {
          current.push_back(static_cast<int64_t>(d));
          if (shape[d] != 1) {
            out.push_back(current);
            current.clear();
          }
        }
        if (!current.empty() && !out.empty())
          out.back().append(current.begin(), current.end());
        return out;
      };
      Shape kept;
      for (int64_t d : n.shape)
        if (d != 1)
          kept.push_back(d);
      Value v = emit(n.args[0]);
      auto keptType = RankedTensorType::get(typeShape(kept), elementType(n.dtype));
      if (keptType != v.getType())
        v = tensor::CollapseShapeOp::create(b_, loc_, keptType, v, groups(n.args[0]->shape));
      if (keptType != tensorType(n)) {
        SmallVector<OpFoldResult> sizes;
        for (int64_t d : n.shape)
          sizes.push_back(dimOf(d));
        v = tensor::ExpandShapeOp::create(b_, loc_, tensorType(n), v, groups(n.shape), sizes);
      }
      return v;
    }
    // A slice split into more dimensions (a row of packed q, k, v into
    // heads) stays a view of the slice: expand_shape, no copy. (A slice
    // with steps is reshaped as any tensor.)
    if (n.args[0]->op == Op::Slice && n.shape.size() > n.args[0]->shape.size() &&
        n.args[0]->axes.size() == n.args[0]->shape.size()) {
      if (auto groups = getReassociationIndicesForReshape(tensorType(*n.args[0]), tensorType(n)))
        return tensor::ExpandShapeOp::create(b_, loc_, tensorType(n), emit(n.args[0]), *groups);
    }
    // A slice read in place, squeezed (a[1:-1, j]: (98, 1) -> (98,)) for
    // elementwise readers: collapse_shape, a strided view. tensor.reshape
    // takes identity layouts only, so bufferization copied each such
    // column first (unrolled sweeps: a copy and its loop per read).
    // A slice of an array that is not updated is taken squeezed
    // (a rank-reduced extract_slice): no collapse_shape for fusion to move
    // below the reader, where it kept a column's product from fusing with
    // a row's update (syrk's C[i, :i] += a * A[:i, k]).
    if (n.args[0]->op == Op::Slice && onlyDropsUnitDims(n.args[0]->shape, n.shape) &&
        readByElementwiseOps(n)) {
      const Node &slice = *n.args[0];
      if (!chainOf_.contains(slice.args[0].get())) {
        Box box = boxOf(slice, slice.shape);
        return tensor::ExtractSliceOp::create(b_, loc_, tensorType(n), emit(slice.args[0]),
                                              box.offsets, box.sizes, box.strides);
      }
      if (auto groups = getReassociationIndicesForReshape(tensorType(*n.args[0]), tensorType(n)))
        return tensor::CollapseShapeOp::create(b_, loc_, tensorType(n), emit(n.args[0]), *groups);
    }
    // An elementwise result given unit axes for an elementwise reader or a
    // slice update (a row's new values, (n,) -> (1, n)): expand_shape,
    // which fusion folds into the producer, so that the update's value is
    // computed in its box's shape and can be written into the box itself
    // (tinymlir-write-into-destination).
    if (isElementwise(*n.args[0]) && onlyDropsUnitDims(n.shape, n.args[0]->shape) &&
        readByElementwiseOps(n)) {
      if (auto groups = getReassociationIndicesForReshape(tensorType(*n.args[0]), tensorType(n)))
        return tensor::ExpandShapeOp::create(b_, loc_, tensorType(n), emit(n.args[0]), *groups);
    }
    // Otherwise a shape operand (not expand/collapse_shape), so fusion
    // cannot fold the reshape into a neighbouring matmul and turn it into a
    // generic.
    auto shapeType = RankedTensorType::get({static_cast<int64_t>(n.shape.size())}, b_.getI64Type());
    Value shape = arith::ConstantOp::create(
        b_, loc_, DenseIntElementsAttr::get(shapeType, ArrayRef<int64_t>(n.shape)));
    return tensor::ReshapeOp::create(b_, loc_, tensorType(n), emit(n.args[0]), shape);
  }
  case Op::Results:
    throw Error("[build] internal: the results are written into their outputs, not emitted");
  case Op::Loop:
    throw Error("[build] internal: a loop is emitted through its results");
  case Op::LoopParam:
    throw Error("[loop] a value of a loop's body is used outside of the loop (only the values "
                "it carries leave it)");
  case Op::LoopResult:
    return emitLoop(n.args[0]).at(static_cast<size_t>(n.index));
  case Op::Concat: {
    // Each part inserted into one destination; eliminate-empty-tensors lets
    // the producers write into their slice of it directly.
    Value out = emptyLike(n);
    for (const auto &[part, box] : concatParts(n))
      out = tensor::InsertSliceOp::create(b_, loc_, emit(part), out, box.offsets, box.sizes,
                                          box.strides);
    return out;
  }
  case Op::Transpose:
    return linalg::TransposeOp::create(b_, loc_, emit(n.args[0]), emptyLike(n), n.axes)
        .getResult()[0];
  case Op::Gather:
    return emitGather(n);
  case Op::IndexPut:
    return emitIndexPut(n);
  case Op::Triu:
  case Op::Tril:
    return emitTriangle(n);
  case Op::Flip:
    return emitFlip(n);
  case Op::Sort:
  case Op::Argsort:
  case Op::Cumsum:
  case Op::Cumprod:
  case Op::Cummax:
  case Op::Cummin:
  case Op::Argmax:
  case Op::Argmin:
  case Op::SearchSorted:
  case Op::Take:
  case Op::Put:
  case Op::Bincount:
  case Op::BincountWeighted:
  case Op::Cholesky:
  case Op::Solve:
  case Op::Inv:
  case Op::Det:
  case Op::Slogdet:
  case Op::Eigh:
  case Op::Svd:
  case Op::Qr:
  case Op::Lstsq:
  case Op::Require:
    return emitRowCall(n);
  }
  throw Error(std::string("[build] no lowering for op '") + opName(n.op) + "'");
}

bool ModuleBuilder::onlyDropsUnitDims(const Shape &from, const Shape &to) {
  size_t j = 0;
  for (int64_t d : from) {
    if (j < to.size() && to[j] == d)
      ++j;
    else if (d != 1)
      return false;
  }
  return j == to.size();
}

bool ModuleBuilder::isElementwise(const Node &n) {
  const OpKind kind = opInfo(n.op).kind;
  return kind == OpKind::Unary || kind == OpKind::Binary || kind == OpKind::Compare ||
         kind == OpKind::Select || kind == OpKind::Convert;
}

bool ModuleBuilder::readByElementwiseOps(const Node &n) {
  auto it = consumers_.find(&n);
  if (it == consumers_.end() || it->second.empty())
    return false;
  return std::all_of(it->second.begin(), it->second.end(),
                     [](const Node *r) { return r->op == Op::SliceUpdate || isElementwise(*r); });
}

Value ModuleBuilder::readBuffer(MemRefType type, Value tensor) {
  auto read = bufferization::ToBufferOp::create(b_, loc_, type, tensor, /*read_only=*/true);
  read->setAttr("tinymlir.read", b_.getI64IntegerAttr(reads_++));
  return read;
}

Value ModuleBuilder::emitRowCall(const Node &n) {
  const int64_t d = ShapedType::kDynamic;
  auto layout = StridedLayoutAttr::get(&context_, d, {d, d});
  auto strided = [&](const Node &v) {
    return MemRefType::get(v.shape, elementType(v.dtype), layout);
  };
  auto dynamic = [&](const Node &v) {
    return MemRefType::get({d, d}, elementType(v.dtype), layout);
  };
  // Every operand first: no tensor op may come between a to_buffer and the
  // call (bufferization sees the read at the to_buffer, and could reuse the
  // buffer in place before the call reads it).
  SmallVector<Value> tensors;
  for (const NodePtr &a : n.args)
    tensors.push_back(emit(a));
  SmallVector<Value> operands;
  for (auto [a, t] : llvm::zip(n.args, tensors)) {
    Value m = readBuffer(strided(*a), t);
    operands.push_back(memref::CastOp::create(b_, loc_, dynamic(*a), m));
  }
  Value result = memref::AllocOp::create(b_, loc_, memrefType(n), b_.getI64IntegerAttr(64));
  operands.push_back(memref::CastOp::create(b_, loc_, dynamic(n), result));
  operands.push_back(arith::ConstantIntOp::create(b_, loc_, b_.getI64Type(), n.axes.at(0)));
  // Declared by declareCallees, typed as called.
  const std::string name =
      std::string("tinymlir_") + opName(n.op) + "_" + dtypeName(n.args[0]->dtype);
  func::CallOp::create(b_, loc_, name, TypeRange{}, operands);
  return bufferization::ToTensorOp::create(b_, loc_, tensorType(n), result, /*restrict=*/true,
                                           /*writable=*/true);
}

AffineMap ModuleBuilder::broadcastMap(const Shape &operand, const Shape &out) {
  size_t rank = out.size(), lead = rank - operand.size();
  SmallVector<AffineExpr> exprs;
  for (size_t k = 0; k < operand.size(); ++k) {
    if (operand[k] == 1 && out[lead + k] != 1)
      exprs.push_back(b_.getAffineConstantExpr(0));
    else
      exprs.push_back(b_.getAffineDimExpr(lead + k));
  }
  return AffineMap::get(rank, 0, exprs, &context_);
}

Value ModuleBuilder::emitElementwise(const Node &n) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  // Operand i of the region is either a block argument, an inline
  // constant, or an SSA scalar of the straight-line graph (isScalarNode:
  // a[i, k] in `a[:, j] * a[i, k]`), read from above the loop.
  SmallVector<int> blockArg(n.args.size(), -1);
  SmallVector<Value> captured(n.args.size());
  for (size_t i = 0; i < n.args.size(); ++i) {
    if (n.args[i]->op == Op::Scalar)
      continue;
    if (n.args[i]->shape.size() <= n.shape.size() && isScalarNode(*n.args[i])) {
      captured[i] = scalarOf(n.args[i]);
      continue;
    }
    blockArg[i] = static_cast<int>(inputs.size());
    inputs.push_back(emit(n.args[i]));
    maps.push_back(broadcastMap(n.args[i]->shape, n.shape));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(n.shape.size(), &context_));
  SmallVector<utils::IteratorType> iterators(n.shape.size(), utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b_, loc_, TypeRange{tensorType(n)}, inputs, ValueRange{emptyLike(n)}, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange block) {
        SmallVector<Value> operands;
        for (size_t i = 0; i < n.args.size(); ++i)
          operands.push_back(blockArg[i] >= 0 ? block[blockArg[i]]
                             : captured[i]    ? captured[i]
                                              : scalarValue(b, *n.args[i]));
        linalg::YieldOp::create(b, loc, scalarOp(b, loc_, n, operands));
      });
  return generic.getResult(0);
}

Value ModuleBuilder::emitReduction(const Node &n) {
  const Node &in = *n.args[0];
  const bool f = isFloat(in.dtype), c = isComplex(in.dtype);
  const bool s = dtypeKind(in.dtype) == DTypeKind::Signed,
             extreme = n.op == Op::Max || n.op == Op::Min;
  Value acc;
  if (extreme && isInteger(n.dtype)) { // exact extremes of the type (bool: any/all below)
    const unsigned bits = static_cast<unsigned>(8 * dtypeSize(n.dtype));
    APInt v = n.op == Op::Max ? (s ? APInt::getSignedMinValue(bits) : APInt::getMinValue(bits))
                              : (s ? APInt::getSignedMaxValue(bits) : APInt::getMaxValue(bits));
    Value init = arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(elementType(n.dtype), v));
    acc = linalg::FillOp::create(b_, loc_, ValueRange{init}, ValueRange{emptyLike(n)}).getResult(0);
  } else {
    const double inf = std::numeric_limits<double>::infinity();
    double init = n.op == Op::Prod ? 1 : 0;
    if (n.op == Op::Max) // bool: any, from false
      init = f ? -inf : 0;
    if (n.op == Op::Min) // bool: all, from true
      init = f ? inf : 1;
    acc = filled(n, init);
  }
  // NumPy adds fewer than 8 elements one after another (pairwise_sum's
  // first case): such short sums and products keep that order, exactly.
  // (A size known only when the kernel runs may be any: reassociated.)
  int64_t count = 1;
  bool symbolic = false;
  for (int64_t a : n.axes) {
    symbolic |= isSymbolic(in.shape[static_cast<size_t>(a)]);
    count *= in.shape[static_cast<size_t>(a)];
  }
  const bool inOrder = !symbolic && count < 8 && (n.op == Op::Sum || n.op == Op::Prod);
  auto reduce = linalg::ReduceOp::create(
      b_, loc_, ValueRange{emit(n.args[0])}, ValueRange{acc}, n.axes,
      [&](OpBuilder &b, Location loc, ValueRange block) {
        // Longer accumulations may be reassociated (as NumPy's pairwise sums
        // are): this lets LLVM vectorize them with several partial sums.
        Value r;
        auto reassoc = inOrder ? arith::FastMathFlags::none : arith::FastMathFlags::reassoc;
        if (n.op == Op::Sum)
          r = c   ? Value(complex::AddOp::create(b, loc, block[0], block[1]))
              : f ? Value(arith::AddFOp::create(b, loc, block[0], block[1], reassoc))
                  : Value(arith::AddIOp::create(b, loc, block[0], block[1]));
        else if (n.op == Op::Prod) // floats, complex, or 64-bit integers (NumPy's products)
          r = c   ? Value(complex::MulOp::create(b, loc, block[0], block[1]))
              : f ? Value(arith::MulFOp::create(b, loc, block[0], block[1], reassoc))
                  : Value(arith::MulIOp::create(b, loc, block[0], block[1]));
        else if (n.op == Op::Max)
          r = f   ? Value(arith::MaximumFOp::create(b, loc, block[0], block[1], reassoc))
              : s ? Value(arith::MaxSIOp::create(b, loc, block[0], block[1]))
                  : Value(arith::MaxUIOp::create(b, loc, block[0], block[1]));
        else
          r = f   ? Value(arith::MinimumFOp::create(b, loc, block[0], block[1], reassoc))
              : s ? Value(arith::MinSIOp::create(b, loc, block[0], block[1]))
                  : Value(arith::MinUIOp::create(b, loc, block[0], block[1]));
        linalg::YieldOp::create(b, loc, r);
      });
  return reduce.getResult(0);
}

NodePtr ModuleBuilder::mixedPrecisionWeights(const Node &n, bool &transposed) {
  const Node &b = *n.args[1];
  if (n.shape.size() != 2 || n.dtype != DType::f64 || b.op != Op::Cast ||
      b.args[0]->dtype != DType::f32)
    return nullptr;
  const NodePtr &w = b.args[0];
  transposed = w->op == Op::Transpose;
  return transposed ? w->args[0] : w;
}

Value ModuleBuilder::emitMatmul(const Node &n) {
  Value acc = filled(n, 0.0);
  bool transposed = false;
  if (NodePtr w = mixedPrecisionWeights(n, transposed)) {
    auto mm = linalg::MatmulOp::create(b_, loc_, TypeRange{tensorType(n)},
                                       ValueRange{emit(n.args[0]), emit(w)}, ValueRange{acc});
    if (transposed) {
      AffineExpr i = b_.getAffineDimExpr(0), j = b_.getAffineDimExpr(1), k = b_.getAffineDimExpr(2);
      mm.setIndexingMapsAttr(b_.getAffineMapArrayAttr({AffineMap::get(3, 0, {i, k}, &context_),
                                                       AffineMap::get(3, 0, {j, k}, &context_),
                                                       AffineMap::get(3, 0, {i, j}, &context_)}));
    }
    return mm.getResult(0);
  }
  Value a = emit(n.args[0]), bv = emit(n.args[1]);
  if (n.shape.size() == 2)
    return linalg::MatmulOp::create(b_, loc_, TypeRange{tensorType(n)}, ValueRange{a, bv},
                                    ValueRange{acc})
        .getResult(0);
  return linalg::BatchMatmulOp::create(b_, loc_, TypeRange{tensorType(n)}, ValueRange{a, bv},
                                       ValueRange{acc})
      .getResult(0);
}

Value ModuleBuilder::emitGather(const Node &n) {
  // out[i, j] = table[ids[i], j]; ids (any integer dtype) were checked
  // against the table at the call, a negative one counts from the end.
  Value table = emit(n.args[0]), ids = emit(n.args[1]);
  const DType idType = n.args[1]->dtype;
  const int64_t rows = n.args[0]->shape[0];
  SmallVector<AffineMap> maps{AffineMap::get(2, 0, {b_.getAffineDimExpr(0)}, &context_),
                              AffineMap::getMultiDimIdentityMap(2, &context_)};
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b_, loc_, TypeRange{tensorType(n)}, ValueRange{ids}, ValueRange{emptyLike(n)}, maps,
      iterators, [&](OpBuilder &b, Location loc, ValueRange block) {
        Value id = block[0];
        Type i64 = b.getI64Type();
        if (dtypeSize(idType) < 8)
          id = isUnsigned(idType) ? Value(arith::ExtUIOp::create(b, loc, i64, id))
                                  : Value(arith::ExtSIOp::create(b, loc, i64, id));
        if (!isUnsigned(idType)) {
          Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
          Value size = arith::ConstantIntOp::create(b, loc, i64, rows);
          Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, id, zero);
          id = arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, id, size),
                                       id);
        }
        Value row = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
        Value col = linalg::IndexOp::create(b, loc, 1);
        Value v = tensor::ExtractOp::create(b, loc, table, ValueRange{row, col});
        linalg::YieldOp::create(b, loc, v);
      });
  return generic.getResult(0);
}

Value ModuleBuilder::emitIndexPut(const Node &n) {
  // for r: a[i0[r], :, i1[r], ...] = values[r] (R in place when the indexed
  // axes are adjacent), as a copy into the slice of the loop-carried
  // tensor: in place when `a` is writable (a donated input).
  const Node &target = *n.args[0], &values = *n.args[1];
  const auto &axes = n.axes;
  const int64_t rank = static_cast<int64_t>(n.shape.size());
  const bool adjacent = axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  const int64_t rowAxis = adjacent ? axes.front() : 0; // R's axis in values
  Shape whole;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end())
      whole.push_back(n.shape[d]);
  auto rowType = RankedTensorType::get(whole, elementType(n.dtype));
  SmallVector<Value> indices;
  for (size_t k = 2; k < n.args.size(); ++k)
    indices.push_back(emit(n.args[k]));
  Value vs = emit(n.args[1]);
  Value zero = arith::ConstantIndexOp::create(b_, loc_, 0);
  Value one = arith::ConstantIndexOp::create(b_, loc_, 1);
  Value rows = arith::ConstantIndexOp::create(b_, loc_, values.shape[rowAxis]);
  auto loop = scf::ForOp::create(
      b_, loc_, zero, rows, one, ValueRange{emit(n.args[0])},
      [&](OpBuilder &b, Location loc, Value r, ValueRange carried) {
        SmallVector<OpFoldResult> offsets, sizes, strides(rank, b.getIndexAttr(1));
        size_t k = 0;
        for (int64_t d = 0; d < rank; ++d) {
          bool indexed = k < axes.size() && axes[k] == d;
          if (indexed) {
            Value i = tensor::ExtractOp::create(b, loc, indices[k++], ValueRange{r});
            offsets.push_back(Value(arith::IndexCastOp::create(b, loc, b.getIndexType(), i)));
          } else {
            offsets.push_back(b.getIndexAttr(0));
          }
          sizes.push_back(b.getIndexAttr(indexed ? 1 : target.shape[d]));
        }
        SmallVector<OpFoldResult> rowOffsets, rowSizes,
            rowStrides(values.shape.size(), b.getIndexAttr(1));
        for (int64_t d = 0; d < static_cast<int64_t>(values.shape.size()); ++d) {
          rowOffsets.push_back(d == rowAxis ? OpFoldResult(r) : b.getIndexAttr(0));
          rowSizes.push_back(b.getIndexAttr(d == rowAxis ? 1 : values.shape[d]));
        }
        Value row =
            tensor::ExtractSliceOp::create(b, loc, rowType, vs, rowOffsets, rowSizes, rowStrides);
        Value slot =
            tensor::ExtractSliceOp::create(b, loc, rowType, carried[0], offsets, sizes, strides);
        Value copied = linalg::CopyOp::create(b, loc, row, slot).getResult(0);
        Value updated =
            tensor::InsertSliceOp::create(b, loc, copied, carried[0], offsets, sizes, strides);
        scf::YieldOp::create(b, loc, updated);
      });
  return loop.getResult(0);
}

Value ModuleBuilder::emitFlip(const Node &n) {
  // out[..., i, ...] = x[..., size - 1 - i, ...] along each flipped axis.
  const size_t rank = n.shape.size();
  if (hasSymbolic(n.shape)) {
    // A size known when the kernel runs: positions computed, elements extracted.
    Value x = emit(n.args[0]);
    SmallVector<Value> last;
    for (size_t d = 0; d < rank; ++d)
      last.push_back(arith::SubIOp::create(b_, loc_, dimValue(n.shape[d]),
                                           arith::ConstantIndexOp::create(b_, loc_, 1)));
    SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, &context_)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b_, loc_, TypeRange{tensorType(n)}, ValueRange{}, ValueRange{emptyLike(n)}, maps, iterators,
        [&](OpBuilder &b, Location loc, ValueRange) {
          SmallVector<Value> at;
          for (size_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, loc, d);
            const bool flipped =
                std::find(n.axes.begin(), n.axes.end(), static_cast<int64_t>(d)) != n.axes.end();
            at.push_back(flipped ? Value(arith::SubIOp::create(b, loc, last[d], i)) : i);
          }
          linalg::YieldOp::create(b, loc, Value(tensor::ExtractOp::create(b, loc, x, at)));
        });
    return generic.getResult(0);
  }
  SmallVector<AffineExpr> reads;
  for (size_t d = 0; d < rank; ++d) {
    AffineExpr i = b_.getAffineDimExpr(d);
    const bool flipped =
        std::find(n.axes.begin(), n.axes.end(), static_cast<int64_t>(d)) != n.axes.end();
    reads.push_back(flipped ? b_.getAffineConstantExpr(n.shape[d] - 1) - i : i);
  }
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, reads, &context_),
                              AffineMap::getMultiDimIdentityMap(rank, &context_)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b_, loc_, TypeRange{tensorType(n)}, ValueRange{emit(n.args[0])}, ValueRange{emptyLike(n)},
      maps, iterators, [&](OpBuilder &b, Location loc, ValueRange block) {
        linalg::YieldOp::create(b, loc, block[0]);
      });
  return generic.getResult(0);
}

Value ModuleBuilder::emitTriangle(const Node &n) {
  // Over the last two axes (i, j): x where j - i >= k (triu) or <= k
  // (tril), else 0.
  const size_t rank = n.shape.size();
  SmallVector<AffineMap> maps(2, AffineMap::getMultiDimIdentityMap(rank, &context_));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b_, loc_, TypeRange{tensorType(n)}, ValueRange{emit(n.args[0])}, ValueRange{emptyLike(n)},
      maps, iterators, [&](OpBuilder &b, Location loc, ValueRange block) {
        Value i = linalg::IndexOp::create(b, loc, rank - 2);
        Value j = linalg::IndexOp::create(b, loc, rank - 1);
        Value offset = arith::SubIOp::create(b, loc, j, i);
        Value k = arith::ConstantIndexOp::create(b, loc, n.axes[0]);
        Value keep = arith::CmpIOp::create(
            b, loc, n.op == Op::Triu ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
            offset, k);
        Value zero = scalarConstant(b, n.dtype, 0.0);
        linalg::YieldOp::create(b, loc,
                                Value(arith::SelectOp::create(b, loc, keep, block[0], zero)));
      });
  return generic.getResult(0);
}

BuiltModule buildModule(MLIRContext &context, const std::vector<NodePtr> &results,
                        const std::vector<NodePtr> &args, const std::vector<int> &donated) {
  ModuleBuilder builder(context);
  BuiltModule out = builder.build(results, args, donated);
  builder.scalarDotsInLongKernels();
  declareCallees(*out.module);
  return out;
}

bool bufferizesWithAnalysis(const NodePtr &results) {
  return ModuleBuilder::classify(results) == ModuleBuilder::GraphKind::Small;
}

} // namespace tinymlir::detail
