// The module builder behind buildModule, declared for the files that define it:
// MLIRGen.cpp (the function, the graph walk, one node at a time) and StraightLine.cpp
// (the straight-line modes of unrolled code: SSA scalars, dot loops, slice updates).
#pragma once

#include "builder/MLIRGen.h"
#include "builder/ScalarLowering.h"

#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/AffineMap.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinTypes.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tinymlir::detail {

class ModuleBuilder {
public:
  ModuleBuilder(mlir::MLIRContext &context)
      : context_(context), b_(&context), loc_(b_.getUnknownLoc()) {}

  /// Updates: slice updates, emitted by emitInOrder; Large: thousands of
  /// nodes (an unrolled loop), whose bufferization analysis would grow
  /// superlinearly. Both are bufferized without analysis
  /// (kBufferizeStraightLinePipeline), unless an index_put's loop carries a
  /// tensor through a region (Small: bufferized as usual).
  enum class GraphKind { Small, Updates, Large };
  static constexpr size_t kLargeGraph = 2000;
  static GraphKind classify(const NodePtr &root);

  BuiltModule build(const std::vector<NodePtr> &results, const std::vector<NodePtr> &args,
                    const std::vector<int> &donated);

  /// A kernel of more than kVectorizedDots dot loops (an unrolled Python loop
  /// over np.dot of slices, as a Cholesky's 4,950) keeps them scalar: LLVM's
  /// loop vectorizer spends about 0.5 ms on each (a third of a 100x100
  /// Cholesky's LLVM time), more than vectorizing saves on short dots of a
  /// kernel called a few thousand times.
  void scalarDotsInLongKernels();

private:
  mlir::Type elementType(DType dtype) { return tinymlir::detail::elementType(b_, dtype); }
  /// MLIR's shape of `shape`: a symbolic extent (Graph.h) is a `?` dimension.
  static mlir::SmallVector<int64_t> typeShape(const Shape &shape) {
    mlir::SmallVector<int64_t> out(shape.begin(), shape.end());
    for (int64_t &d : out)
      if (isSymbolic(d))
        d = mlir::ShapedType::kDynamic;
    return out;
  }
  mlir::RankedTensorType tensorType(const Node &n) {
    return mlir::RankedTensorType::get(typeShape(n.shape), elementType(n.dtype));
  }
  mlir::MemRefType memrefType(const Node &n) {
    return mlir::MemRefType::get(typeShape(n.shape), elementType(n.dtype));
  }

  // --- Symbolic extents (Graph.h): `?` dimensions ---------------------------------

  /// Records the size node of each symbolic extent under `root` (the spans of
  /// its Slices and SliceUpdates).
  void collectSymbolicSizes(const NodePtr &root);
  /// A dimension as an index: a constant, or a symbolic extent's size.
  mlir::OpFoldResult dimOf(int64_t d);
  mlir::Value dimValue(int64_t d);
  /// The sizes of the `?` dimensions of `shape`, in order (tensor.empty's).
  mlir::SmallVector<mlir::Value> dynamicDims(const Shape &shape);

  /// Captured constants in first-use order; the same array view is one argument.
  void collectConstants(const NodePtr &root);

  void bindInput(const NodePtr &n, mlir::Value memref);

  mlir::Value emptyLike(const Node &n);

  mlir::Value scalarConstant(mlir::OpBuilder &b, DType dtype, double value, double imag = 0) {
    return tinymlir::detail::scalarConstant(b, loc_, dtype, value, imag);
  }

  /// A Scalar node's value as a constant: integers with all their bits.
  mlir::Value scalarValue(mlir::OpBuilder &b, const Node &n);

  mlir::Value filled(const Node &n, mlir::Value init);
  mlir::Value filled(const Node &n, double value, double imag = 0);

  mlir::Value emit(const NodePtr &n);

  // --- Single elements of straight-line graphs: SSA scalars --------------------
  //
  // Unrolled loops of element updates (A[i, j] -= np.dot(A[i, :j], A[j, :j]);
  // A[i, j] /= A[j, j]) and scalar loops (trace += np.tanh(a[i, i])) are mostly
  // single elements. As tensors each would be a buffer of one element, with
  // its allocation and copies in and out (about 500 LLVM operations a step of
  // a Cholesky); as SSA scalars they are a load, the arithmetic and a store.
  // In a graph of updates every node is emitted at its place in program order
  // (emitInOrder), so a load of an element of an array's buffer reads the
  // version the buffer holds there, and never needs a copy.

  /// Most elements of a dot product computed by a loop of scalars (dotOf).
  static constexpr int64_t kScalarDotMax = 4096;

  /// Whether `n` is computed as an SSA scalar (scalarOf): one element, in a
  /// straight-line graph, and elementwise, a slice, a reshape, a literal, or
  /// a short dot product of vectors of its own (float or integer) dtype.
  bool isScalarNode(const Node &n) const;

  /// The element of a one-element node, as an SSA scalar of its element type:
  /// computed (isScalarNode), or extracted from its tensor.
  mlir::Value scalarOf(const NodePtr &n);

  /// The node holding the elements of vector `n` along one axis, seen through
  /// reshapes that only add or drop unit axes (A[i, :j] read as a (1, j)
  /// slice of the buffer, no copy), and that axis.
  std::pair<NodePtr, size_t> vectorOf(NodePtr n);

  /// np.dot of two short vectors (a row by a column): a loop carrying the sum
  /// in a register, its reads at this point of the program (the operands'
  /// slices in place).
  mlir::Value dotOf(const Node &n);

  /// A number for `v`, the same each time the module is built: values of
  /// equal operations on equal operands (the same slice of the same tensor,
  /// traced twice) share one, numbered in the order first seen. Only a hash:
  /// CSE still compares the loops themselves.
  int64_t idOf(mlir::Value v);
  size_t keyOf(mlir::Value v, int depth);

  /// A dot loop's LLVM loop annotation: never unrolled; vectorized or not.
  void annotateDot(mlir::scf::ForOp loop, bool vectorize);

  // --- Slice updates: chains of writes into one buffer -------------------------
  //
  // One-shot bufferization's analysis of a chain of k insert_slices into one
  // tensor grows superlinearly in k (a 10x10 Cholesky's 155 updates: 2 s), so
  // an array's versions are not tensors here. The nodes are emitted in
  // creation order (the trace's program order, in which every read of a
  // version comes before the write that replaces it). The first update of an
  // array copies it into a buffer of its own; each update writes its box
  // there (a subview: O(box)). A read of a version reads the buffer itself
  // when every use of what it reads is done before the next write into the
  // buffer (liveEnd_); otherwise it copies what it reads (a slice: O(slice))
  // while the buffer holds that version. A version still read after the next
  // write is copied whole first.

  /// Emits the graph under `root` in program order, but for the nodes in
  /// `skip` (the root, and results written part by part).
  void emitInOrder(const NodePtr &root, const std::unordered_set<const Node *> &skip);

  mlir::MemRefType bufferType(const Node &n) {
    return mlir::MemRefType::get(typeShape(n.shape), elementType(n.dtype));
  }

  /// The strided box of a Slice (of its shape) or a SliceUpdate (of its
  /// value's shape): axes holds the offsets, then the steps where one is not 1.
  struct Box {
    mlir::SmallVector<mlir::OpFoldResult> offsets, sizes, strides;
  };
  Box boxOf(const Node &n, const Shape &sizes);

  /// The first element of a Slice's or SliceUpdate's box (its offsets: the
  /// first `rank` of axes), as index values: a one-element box's position.
  mlir::SmallVector<mlir::Value> boxOrigin(const Node &n);

  /// Per axis of a Slice's or SliceUpdate's array, the box's offset where a
  /// traced position gives it (DynamicBox), else null: the static offset plus
  /// the position times the step, computed once, where first asked for. A
  /// negative position counts from the end of the box's extent; one out of
  /// range reports NumPy's IndexError (runtime/Rows.cpp, raised after the
  /// kernel) and reads or writes the box's first element instead.
  const mlir::SmallVector<mlir::Value> &tracedOffsets(const Node &n);

  /// A Concat's non-empty parts (an empty one has nothing to write, and no
  /// offset inside the result), each with its box of the result.
  std::vector<std::pair<NodePtr, Box>> concatParts(const Node &n);

  mlir::Value subview(mlir::Value buffer, const Node &n, const Shape &sizes);

  /// A tensor holding a copy of `source` (a memref): read now, never written.
  /// Copies between an array's buffer and a box of it are memref.copy, which
  /// the CPU runtime does in runs of memcpy (runtime/Copy.cpp); loops
  /// (linalg.copy) for each of thousands of small copies cost LLVM seconds (a
  /// 61x61 cavity flow's 1,000 copies: 1.4 s -> 9.7 s first call).
  mlir::Value copied(mlir::Value source, const Shape &shape, DType dtype);

  void emitUpdate(const Node &u);

  /// Until when consumer `r` reads its operands: a SliceUpdate or a scalar
  /// node (isScalarNode) when it is emitted; any other consumer as long as
  /// its own value is read (fusion may move its reads there).
  uint64_t readsUntil(const Node &r);

  /// Whether reads of version `v` that last until `end` (liveEnd_) are all
  /// done before the write that replaces v in its buffer: then they may read
  /// the buffer itself, with no copy.
  bool readBeforeOverwrite(const Node &v, uint64_t end);

  /// Whether the box a Slice reads and the box a SliceUpdate writes, of the
  /// same array, are disjoint: some axis where their extents do not meet.
  static bool disjointBoxes(const Node &read, const Node &write);

  /// Whether Slice `n` of version `v` may be read in the buffer itself until
  /// `end`: every write into the buffer up to then misses its box (a sweep
  /// reading column j - 1 while writing column j; before, any later write
  /// made a copy of the column).
  bool unchangedWhileRead(const Node &n, const Node &v, uint64_t end);

  /// A version of an updated array, read now (while its buffer holds it).
  mlir::Value readVersion(const Node &v);

  /// Slice of a version of an updated array: the box of the buffer itself if
  /// every read of it is done before the next write into the buffer, else
  /// the box copied now (O(slice)).
  std::optional<mlir::Value> sliceOfVersion(const Node &n);

  mlir::Value emitNew(const Node &n);

  /// Whether `to` is `from` with some of its size-1 dimensions removed.
  static bool onlyDropsUnitDims(const Shape &from, const Shape &to);

  static bool isElementwise(const Node &n);

  /// Whether every reader of `n` (known when the graph is emitted in order)
  /// is elementwise or writes it into a slice: none can be a product, which
  /// fusion would turn into a generic through a collapse_shape.
  bool readByElementwiseOps(const Node &n);

  /// A read of `tensor`'s buffer by the memref op that follows (a call, a
  /// copy). Bufferization sees the read at this to_buffer, so it must stay
  /// where it is made: each carries its own number, which keeps CSE from
  /// merging it with an earlier one of the same tensor (whose buffer may be
  /// reused in place between the two; found by a weighted histogram whose
  /// second bincount read weights overwritten by a cast).
  mlir::Value readBuffer(mlir::MemRefType type, mlir::Value tensor);

  /// A row kernel: tinymlir_<op>_<dtype>(operands..., result, flag) of
  /// lib/runtime/Rows.cpp, on 2-D memrefs of any strides (each passed as
  /// MLIR's expanded descriptor: allocated and aligned pointers, offset, two
  /// sizes, two strides). The result is a fresh buffer the call fills.
  mlir::Value emitRowCall(const Node &n);

  /// (d0..dR) -> operand indices, broadcasting size-1 and missing leading dims.
  mlir::AffineMap broadcastMap(const Shape &operand, const Shape &out);

  mlir::Value emitElementwise(const Node &n);

  mlir::Value emitReduction(const Node &n);

  /// A product of float64 rows with float32 weights (promoted by an explicit
  /// Cast node, possibly of a transposed matrix): a mixed-precision
  /// linalg.matmul that reads the float32 weights and accumulates in float64.
  /// The CPU target streams the weights of few-row products and converts
  /// those of the others once (tinymlir-small-products, option max-rows).
  /// Returns the weights node (and whether it is transposed), or null.
  static NodePtr mixedPrecisionWeights(const Node &n, bool &transposed);

  mlir::Value emitMatmul(const Node &n);

  mlir::Value emitGather(const Node &n);

  mlir::Value emitIndexPut(const Node &n);

  mlir::Value emitFlip(const Node &n);

  mlir::Value emitTriangle(const Node &n);

  // --- Loops (Loops.cpp) ---------------------------------------------------------
  //
  // A Loop node is one scf.for over k in [0, trip count) with its carried
  // values as tensor iter_args; the index i = start + k * step. The outer
  // values its body reads are emitted first, before the loop; the body's own
  // values are emitted inside it and forgotten after it (values_ and the
  // other memos are scoped), so that nothing of the body is used outside.

  /// Iterations between two polls for Ctrl-C in a loop (a power of two).
  static constexpr int64_t kPollInterval = 1024;

  /// The values after `loop` (one per carried value), emitted once.
  const std::vector<mlir::Value> &emitLoop(const NodePtr &loop);

  mlir::MLIRContext &context_;
  mlir::OpBuilder b_;
  mlir::Location loc_;
  std::vector<NodePtr> constants_;
  std::unordered_map<const Node *, const Node *> aliases_;
  std::unordered_map<const Node *, mlir::Value> values_;
  bool scalarMode_ = false;                               // isScalarNode: straight-line graphs
  std::unordered_map<const Node *, mlir::Value> scalars_; // scalarOf
  std::unordered_map<const Node *, mlir::SmallVector<mlir::Value>> tracedOffsets_;
  std::unordered_map<const Node *, std::vector<mlir::Value>> loopResults_; // emitLoop
  std::unordered_map<int64_t, NodePtr> symbolicSizes_;                     // collectSymbolicSizes
  // Slice updates (emitInOrder): each version's buffer, the version each
  // buffer holds now, each version's successor, and each node's readers.
  std::unordered_map<const Node *, mlir::Value> chainOf_;
  llvm::DenseMap<mlir::Value, const Node *> holder_;
  std::unordered_map<const Node *, const Node *> successor_;
  std::unordered_map<const Node *, std::vector<const Node *>> consumers_;
  std::unordered_map<const Node *, uint64_t> liveEnd_; // the last seq that reads a value
  int64_t reads_ = 0;                                  // readBuffer's numbers
  std::vector<mlir::scf::ForOp> dotLoops_;             // dotOf's loops
  llvm::DenseMap<size_t, int64_t> valueIds_;           // idOf's, by keyOf
  llvm::DenseMap<mlir::Value, size_t> valueKeys_;      // keyOf's
  static constexpr size_t kVectorizedDots = 64;
};

} // namespace tinymlir::detail
