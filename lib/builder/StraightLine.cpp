// The module builder's straight-line (unrolled-code) modes (ModuleBuilder.h):
// which graphs skip the bufferization analysis (classify), one-element nodes as
// SSA scalars and dot loops, and slice updates written into buffers in program order.
#include "builder/ModuleBuilder.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Bufferization/IR/Bufferization.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Tensor/IR/Tensor.h>
#include <mlir/IR/OperationSupport.h>

#include <algorithm>
#include <limits>
#include <optional>

namespace tinymlir::detail {

using namespace mlir;

ModuleBuilder::GraphKind ModuleBuilder::classify(const NodePtr &root) {
  // An index_put's loop, or a Loop's, carries tensors through a region:
  // bufferized with the analysis (a loop's updates of its carried arrays are
  // insert_slices into its iter_args, in place).
  bool updates = false, regions = false;
  size_t count = 0;
  forEachNode(root, [&](const Node &n) {
    ++count;
    // (a symbolic extent's buffers are not the straight-line mode's: sizes
    // known only when the kernel runs)
    if (n.op == Op::IndexPut || n.op == Op::Loop || hasSymbolic(n.shape)) {
      regions = true;
      return false;
    }
    updates |= n.op == Op::SliceUpdate;
    return true;
  });
  return regions               ? GraphKind::Small
         : updates             ? GraphKind::Updates
         : count > kLargeGraph ? GraphKind::Large
                               : GraphKind::Small;
}

void ModuleBuilder::scalarDotsInLongKernels() {
  if (dotLoops_.size() > kVectorizedDots)
    for (scf::ForOp loop : dotLoops_)
      annotateDot(loop, /*vectorize=*/false);
}

bool ModuleBuilder::isScalarNode(const Node &n) const {
  if (!scalarMode_ || hasSymbolic(n.shape) || numElements(n.shape) != 1)
    return false;
  if (n.op == Op::MatMul) {
    const Node &a = *n.args[0], &b = *n.args[1];
    // a row by a column, of any rank: each operand is its k elements (k
    // symbolic: a size known when the kernel runs, the vectors' one extent)
    const int64_t k = a.shape.empty() ? 1 : a.shape.back();
    auto vectorOfK = [&](const Shape &s) {
      int64_t other = 1;
      for (int64_t d : s)
        if (d != k)
          other *= d;
      return other == 1 && std::count(s.begin(), s.end(), k) == 1;
    };
    const bool vectors = isSymbolic(k) ? vectorOfK(a.shape) && vectorOfK(b.shape)
                                       : !hasSymbolic(a.shape) && !hasSymbolic(b.shape) &&
                                             numElements(a.shape) == k && numElements(b.shape) == k;
    return vectors && (isSymbolic(k) || k <= kScalarDotMax) && a.dtype == n.dtype &&
           b.dtype == n.dtype &&
           (n.dtype == DType::f32 || n.dtype == DType::f64 || isInteger(n.dtype));
  }
  switch (opInfo(n.op).kind) {
  case OpKind::Unary:
  case OpKind::Binary:
  case OpKind::Compare:
  case OpKind::Select:
  case OpKind::Convert:
    return true;
  default:
    return n.op == Op::Slice || n.op == Op::Reshape || n.op == Op::Scalar;
  }
}

Value ModuleBuilder::scalarOf(const NodePtr &n) {
  if (auto it = scalars_.find(n.get()); it != scalars_.end())
    return it->second;
  Value s;
  if (!isScalarNode(*n)) {
    SmallVector<Value> zeros(n->shape.size(), arith::ConstantIndexOp::create(b_, loc_, 0));
    s = tensor::ExtractOp::create(b_, loc_, emit(n), zeros);
  } else if (n->op == Op::Scalar) {
    s = scalarValue(b_, *n);
  } else if (n->op == Op::Reshape) {
    s = scalarOf(n->args[0]);
  } else if (n->op == Op::MatMul) {
    s = dotOf(*n);
  } else if (n->op == Op::Slice) {
    const Node *v = n->args[0].get();
    SmallVector<Value> at = boxOrigin(*n);
    if (chainOf_.contains(v) && !values_.contains(v)) {
      // The element of the buffer, read now: the buffer holds v here.
      Value buffer = chainOf_[v];
      if (holder_[buffer] != v)
        throw Error("[build] internal: an element of an updated array is read after the "
                    "write that replaced it");
      s = memref::LoadOp::create(b_, loc_, buffer, at);
    } else if (isScalarNode(*v)) {
      s = scalarOf(n->args[0]);
    } else {
      s = tensor::ExtractOp::create(b_, loc_, emit(n->args[0]), at);
    }
  } else {
    SmallVector<Value> operands;
    for (const NodePtr &a : n->args)
      operands.push_back(scalarOf(a));
    s = scalarOp(b_, loc_, *n, operands);
  }
  scalars_[n.get()] = s;
  return s;
}

std::pair<NodePtr, size_t> ModuleBuilder::vectorOf(NodePtr n) {
  auto nonUnit = [](const Shape &shape) {
    return std::count_if(shape.begin(), shape.end(), [](int64_t d) { return d != 1; });
  };
  while (n->op == Op::Reshape && nonUnit(n->args[0]->shape) <= 1)
    n = n->args[0];
  size_t axis = 0;
  for (size_t d = 0; d < n->shape.size(); ++d)
    if (n->shape[d] != 1)
      axis = d;
  return {n, axis};
}

Value ModuleBuilder::dotOf(const Node &n) {
  auto [x, xAxis] = vectorOf(n.args[0]);
  auto [y, yAxis] = vectorOf(n.args[1]);
  Value a = emit(x), b = emit(y);
  const bool f = isFloat(n.dtype);
  Type type = elementType(n.dtype);
  Value zero = f ? Value(arith::ConstantOp::create(b_, loc_, b_.getFloatAttr(type, 0.0)))
                 : Value(arith::ConstantIntOp::create(b_, loc_, type, 0));
  Value c0 = arith::ConstantIndexOp::create(b_, loc_, 0);
  // (a vector of a size known when the kernel runs: its extent's size)
  const Shape &xs = n.args[0]->shape;
  Value k = hasSymbolic(xs) ? dimValue(*std::find_if(xs.begin(), xs.end(), isSymbolic))
                            : arith::ConstantIndexOp::create(b_, loc_, numElements(xs));
  Value c1 = arith::ConstantIndexOp::create(b_, loc_, 1);
  auto loop = scf::ForOp::create(
      b_, loc_, c0, k, c1, ValueRange{zero},
      [&](OpBuilder &lb, Location loc, Value i, ValueRange acc) {
        auto element = [&](Value t, const Node &v, size_t axis) {
          SmallVector<Value> at(v.shape.size(), c0);
          if (!at.empty())
            at[axis] = i;
          return tensor::ExtractOp::create(lb, loc, t, at).getResult();
        };
        Value ea = element(a, *x, xAxis), eb = element(b, *y, yAxis);
        Value sum;
        if (f) {
          auto reassoc = arith::FastMathFlags::reassoc;
          sum = arith::AddFOp::create(lb, loc, acc[0], arith::MulFOp::create(lb, loc, ea, eb),
                                      reassoc);
        } else {
          sum = arith::AddIOp::create(lb, loc, acc[0], arith::MulIOp::create(lb, loc, ea, eb));
        }
        scf::YieldOp::create(lb, loc, sum);
      });
  // Kept a loop (vectorized, with the sum reassociated): unrolled, the
  // thousands of dot products of an unrolled loop, each of its own length,
  // would make LLVM's time grow with their lengths.
  dotLoops_.push_back(loop);
  annotateDot(loop, /*vectorize=*/true);
  // Dot loops of one length have the same operands once canonicalize has
  // merged their constants, and CSE's hash does not look into regions: it
  // compared each new loop with every earlier one of its length (a 112x112
  // Cholesky's CSE took 9x the time of a 56x56's for 4x the steps). The ids
  // of the vectors read keep different loops apart, and equal ones equal.
  loop->setAttr("tinymlir.dot", b_.getDenseI64ArrayAttr({idOf(a), idOf(b)}));
  return loop.getResult(0);
}

int64_t ModuleBuilder::idOf(Value v) {
  return valueIds_.try_emplace(keyOf(v, 0), static_cast<int64_t>(valueIds_.size())).first->second;
}

size_t ModuleBuilder::keyOf(Value v, int depth) {
  if (auto it = valueKeys_.find(v); it != valueKeys_.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  llvm::hash_code key = hash_value(v); // arguments, deep chains and loops: themselves
  if (def && depth < 8 && def->getNumRegions() == 0)
    key = llvm::hash_combine(
        OperationEquivalence::computeHash(
            def, [&](Value operand) { return llvm::hash_code(keyOf(operand, depth + 1)); },
            OperationEquivalence::ignoreHashValue, OperationEquivalence::IgnoreLocations),
        cast<OpResult>(v).getResultNumber());
  return valueKeys_[v] = static_cast<size_t>(key);
}

void ModuleBuilder::annotateDot(scf::ForOp loop, bool vectorize) {
  MLIRContext *ctx = &context_;
  auto unroll = LLVM::LoopUnrollAttr::get(ctx, b_.getBoolAttr(true), {}, {}, {}, {}, {}, {});
  LLVM::LoopVectorizeAttr scalar;
  if (!vectorize)
    scalar = LLVM::LoopVectorizeAttr::get(ctx, b_.getBoolAttr(true), {}, {}, {}, {}, {}, {});
  loop->setAttr("llvm.loop_annotation",
                LLVM::LoopAnnotationAttr::get(ctx, {}, scalar, {}, unroll, {}, {}, {}, {}, {}, {},
                                              {}, {}, {}, {}, {}));
}

void ModuleBuilder::emitInOrder(const NodePtr &root, const std::unordered_set<const Node *> &skip) {
  std::vector<const Node *> order;
  std::unordered_map<const Node *, NodePtr> owner;
  std::vector<const Node *> stack{root.get()};
  owner[root.get()] = root;
  while (!stack.empty()) {
    const Node *n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const NodePtr &a : n->args) {
      consumers_[a.get()].push_back(n);
      if (owner.emplace(a.get(), a).second)
        stack.push_back(a.get());
    }
  }
  std::sort(order.begin(), order.end(),
            [](const Node *a, const Node *b) { return a->seq < b->seq; });
  // Each version's successor: the first update (in program order) that writes over it.
  for (const Node *n : order)
    if (n->op == Op::SliceUpdate) {
      const Node *base = n->args[0].get();
      if (!successor_.contains(base) || successor_[base]->seq > n->seq)
        successor_[base] = n;
    }
  // How long each value is read (readsUntil of its consumers). Consumers
  // come later in `order`, so one backward pass suffices.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node *n = *it;
    auto readers = consumers_.find(n);
    uint64_t end = 0;
    if (n == root.get() || readers == consumers_.end())
      end = std::numeric_limits<uint64_t>::max();
    else
      for (const Node *r : readers->second)
        end = std::max(end, readsUntil(*r));
    liveEnd_[n] = end;
  }
  for (const Node *n : order) {
    if (n->op == Op::SliceUpdate)
      emitUpdate(*n);
    else if (skip.contains(n) || chainOf_.contains(n))
      continue;
    else if (isScalarNode(*n))
      scalarOf(owner[n]); // reads its elements here, in program order
    else
      emit(owner[n]);
  }
}

Value ModuleBuilder::subview(Value buffer, const Node &n, const Shape &sizes) {
  Box box = boxOf(n, sizes);
  return memref::SubViewOp::create(b_, loc_, buffer, box.offsets, box.sizes, box.strides);
}

Value ModuleBuilder::copied(Value source, const Shape &shape, DType dtype) {
  Value copy = memref::AllocOp::create(b_, loc_, MemRefType::get(shape, elementType(dtype)));
  memref::CopyOp::create(b_, loc_, source, copy);
  return bufferization::ToTensorOp::create(b_, loc_,
                                           RankedTensorType::get(shape, elementType(dtype)), copy,
                                           /*restrict=*/true, /*writable=*/true);
}

void ModuleBuilder::emitUpdate(const Node &u) {
  const Node *base = u.args[0].get();
  // A one-element value is stored as a scalar (computed before the buffer
  // is chosen, as a tensor value would be).
  const bool element = scalarMode_ && numElements(u.args[1]->shape) == 1;
  Value value = element ? scalarOf(u.args[1]) : emit(u.args[1]);
  Value buffer;
  if (auto it = chainOf_.find(base);
      it != chainOf_.end() && holder_[it->second] == base && successor_[base] == &u) {
    buffer = it->second;
    // Readers of the version being overwritten that come later read a copy.
    const auto &readers = consumers_[base];
    if (std::any_of(readers.begin(), readers.end(),
                    [&](const Node *r) { return r != &u && r->seq > u.seq; }))
      values_[base] = copied(buffer, base->shape, base->dtype);
  } else {
    // A new buffer for this array: its current value copied in.
    Value start = emit(u.args[0]);
    buffer = memref::AllocOp::create(b_, loc_, bufferType(u));
    bufferization::MaterializeInDestinationOp::create(b_, loc_, TypeRange{}, start, buffer,
                                                      /*restrict=*/false, /*writable=*/true);
  }
  if (element) {
    memref::StoreOp::create(b_, loc_, value, buffer, boxOrigin(u));
  } else {
    // The box written from the value's buffer (of a static identity layout).
    Value source = readBuffer(bufferType(*u.args[1]), value);
    memref::CopyOp::create(b_, loc_, source, subview(buffer, u, u.args[1]->shape));
  }
  chainOf_[&u] = buffer;
  holder_[buffer] = &u;
}

uint64_t ModuleBuilder::readsUntil(const Node &r) {
  return r.op == Op::SliceUpdate || isScalarNode(r) ? r.seq : liveEnd_[&r];
}

bool ModuleBuilder::readBeforeOverwrite(const Node &v, uint64_t end) {
  auto next = successor_.find(&v);
  return next == successor_.end() || end < next->second->seq;
}

bool ModuleBuilder::disjointBoxes(const Node &read, const Node &write) {
  const size_t rank = read.shape.size();
  if (write.op != Op::SliceUpdate || write.args[1]->shape.size() != rank)
    return false;
  auto extent = [rank](const Node &x, const Shape &sizes, size_t i) {
    const int64_t step = sliceStep(x, rank, i);
    int64_t size = sizes[i]; // at a traced position: anywhere in the extent
    for (size_t j = 2 * rank; j + 1 < x.axes.size(); j += 2)
      if (x.axes[j] == static_cast<int64_t>(i))
        size = x.axes[j + 1];
    return std::pair<int64_t, int64_t>{x.axes[i], x.axes[i] + (size - 1) * step};
  };
  for (size_t i = 0; i < rank; ++i) {
    const int64_t written = write.args[1]->shape[i];
    if (read.shape[i] == 0 || written == 0)
      return true;
    auto [a0, a1] = extent(read, read.shape, i);
    auto [b0, b1] = extent(write, write.args[1]->shape, i);
    if (a1 < b0 || b1 < a0)
      return true;
  }
  return false;
}

bool ModuleBuilder::unchangedWhileRead(const Node &n, const Node &v, uint64_t end) {
  for (auto next = successor_.find(&v); next != successor_.end() && next->second->seq <= end;
       next = successor_.find(next->second))
    if (!disjointBoxes(n, *next->second))
      return false;
  return true;
}

Value ModuleBuilder::readVersion(const Node &v) {
  Value buffer = chainOf_[&v];
  if (holder_[buffer] != &v)
    throw Error("[build] internal: a version of an updated array is read after the write "
                "that replaced it");
  // Read in place if every reader is done before the next write (the last
  // version is never written again); otherwise a copy.
  auto next = successor_.find(&v);
  const Node *overwrite = next == successor_.end() ? nullptr : next->second;
  uint64_t end = 0;
  for (const Node *r : consumers_[&v])
    if (!(r == overwrite && r->args[0].get() == &v && r->args[1].get() != &v))
      end = std::max(end, readsUntil(*r));
  Value t = readBeforeOverwrite(v, end)
                ? Value(bufferization::ToTensorOp::create(b_, loc_, tensorType(v), buffer,
                                                          /*restrict=*/true,
                                                          /*writable=*/false))
                : copied(buffer, v.shape, v.dtype);
  values_[&v] = t;
  return t;
}

std::optional<Value> ModuleBuilder::sliceOfVersion(const Node &n) {
  const Node *v = n.args[0].get();
  if (values_.contains(v) || !chainOf_.contains(v))
    return std::nullopt;
  Value buffer = chainOf_[v];
  if (holder_[buffer] != v)
    throw Error("[build] internal: a slice of an updated array is read after the write "
                "that replaced it");
  Value box = subview(buffer, n, n.shape);
  if (unchangedWhileRead(n, *v, liveEnd_[&n]))
    return Value(bufferization::ToTensorOp::create(b_, loc_, tensorType(n), box,
                                                   /*restrict=*/true, /*writable=*/false));
  return copied(box, n.shape, n.dtype);
}

} // namespace tinymlir::detail
