// The typed expression graph built by tracing (internal; no MLIR types).
#pragma once

#include <tinymlir/array.h>
#include <tinymlir/tensor.h>

#include <atomic>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace tinymlir::detail {

struct Region;

struct Node {
  Op op;
  uint64_t seq = 0; // creation order: a valid program order of the trace (reads of an
                    // array's version come before the write that replaces it)
  Shape shape;
  DType dtype;
  std::vector<std::shared_ptr<Node>> args;

  Node() = default;
  Node(const Node &) = default;
  Node &operator=(const Node &) = default;
  /// Frees the nodes only this one holds without recursion: an unrolled loop
  /// chains hundreds of thousands of them (npbench's seidel_2d), and the
  /// default destructor's recursion through args overflowed the stack.
  /// A loop's body (regions, below) is freed the same way.
  ~Node();

  // Attributes, by op:
  int64_t index = 0;              // Argument: position among the traced inputs;
                                  // Slice, SliceUpdate: the count of spans
  Array constant;                 // Constant: the captured data
  double scalar = 0;              // Scalar: the value (in dtype; a complex one's real part)
  double imag = 0;                // Scalar: a complex value's imaginary part
  int64_t integer = 0;            // Scalar of an integer dtype, or weak and integral: the
                                  // exact value's 64 bits (read unsigned where dtype is
                                  // uint64: a weak integer beyond INT64_MAX has it)
  bool weak = false;              // Scalar: a plain C++ number, dtype not decided yet
  bool integral = false;          // Scalar, weak: written as an integer
  bool weakComplex = false;       // Scalar, weak: a Python complex number
  bool wide = false;              // Scalar, weak: a Python int beyond 64 bits, held as its
                                  // nearest double (not integral: no exact bits)
  std::shared_ptr<Region> region; // Loop: its body
  std::vector<int64_t> axes;      // Sum/Max/Min: reduced axes (sorted, non-negative);
                                  // Transpose: permutation; Slice: offsets, then
                                  // the steps where one is not 1 (with traced
                                  // offsets: the steps always, then (axis, extent)
                                  // per traced position, see DynamicBox);
                                  // IndexPut: the indexed axes (increasing);
                                  // Triu/Tril: {k}, the diagonal; Flip: the
                                  // reversed axes (increasing)
};

using NodePtr = std::shared_ptr<Node>;

/// A loop's body (Op::Loop): its parameters (Op::LoopParam: the index, then
/// one per carried value) and the carried values at the end of an iteration.
/// Body nodes are reachable only through the yields (forEachNode walks them);
/// every node made while the body was traced has its seq in [firstSeq,
/// lastSeq], and every node before it a smaller one.
struct Region {
  std::vector<NodePtr> params;
  std::vector<NodePtr> yields;
  uint64_t firstSeq = 0, lastSeq = 0;
  bool inBody(const Node &n) const { return n.seq >= firstSeq && n.seq <= lastSeq; }
};

inline Node::~Node() {
  // Frees the nodes only this one holds without recursion: an unrolled loop
  // chains hundreds of thousands of them (npbench's seidel_2d), and the
  // default destructor's recursion through args overflowed the stack.
  std::vector<std::shared_ptr<Node>> pending = std::move(args);
  auto release = [&pending](std::shared_ptr<Region> &r) {
    if (r && r.use_count() == 1) {
      for (NodePtr &p : r->params)
        pending.push_back(std::move(p));
      for (NodePtr &y : r->yields)
        pending.push_back(std::move(y));
    }
    r.reset();
  };
  release(region);
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    if (n && n.use_count() == 1) { // its last owner: its args are freed here, not by it
      for (std::shared_ptr<Node> &a : n->args)
        pending.push_back(std::move(a));
      release(n->region);
    }
  }
}

/// Calls fn(const Node &) once for every node reachable from `root` through
/// arguments and loop bodies (a Loop's parameters and yields), without
/// recursion. fn returning bool: false stops the walk (forEachNode then
/// returns false).
template <class F> bool forEachNode(const Node *root, F &&fn) {
  std::vector<const Node *> stack{root};
  std::unordered_set<const Node *> seen{root};
  auto push = [&](const NodePtr &a) {
    if (a && seen.insert(a.get()).second)
      stack.push_back(a.get());
  };
  while (!stack.empty()) {
    const Node *n = stack.back();
    stack.pop_back();
    if constexpr (std::is_same_v<std::invoke_result_t<F &, const Node &>, bool>) {
      if (!fn(*n))
        return false;
    } else {
      fn(*n);
    }
    // Pushed in reverse, so that arguments are visited first to last.
    if (n->region) {
      for (auto it = n->region->yields.rbegin(); it != n->region->yields.rend(); ++it)
        push(*it);
      for (auto it = n->region->params.rbegin(); it != n->region->params.rend(); ++it)
        push(*it);
    }
    for (auto it = n->args.rbegin(); it != n->args.rend(); ++it)
      push(*it);
  }
  return true;
}
template <class F> bool forEachNode(const NodePtr &root, F &&fn) {
  return forEachNode(root.get(), std::forward<F>(fn));
}
/// Whether some node reachable from `root` (forEachNode's) satisfies `pred`.
template <class P> bool anyNode(const Node *root, P &&pred) {
  return !forEachNode(root, [&](const Node &n) { return !pred(n); });
}

/// The operands a node's value depends on: its arguments, and a Loop's yields
/// (its body); fn(const NodePtr &) for each.
template <class F> void forEachOperand(const Node &n, F &&fn) {
  for (const NodePtr &a : n.args)
    fn(a);
  if (n.region)
    for (const NodePtr &y : n.region->yields)
      fn(y);
}

inline uint64_t nextSeq() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

/// NumPy's OverflowError where a wide Python int (Node::wide) meets an integer.
inline constexpr const char *kWideInteger = "Python int too large to convert to C long";

/// Throws where an operand of `op` has a symbolic extent (a size known only
/// when the kernel runs) and `op` has no rule for one (Extent.cpp: the
/// elementwise ops, reductions, products, slices, reshapes of unit axes,
/// transposes and flips have).
void checkSymbolicOperands(Op op, const std::vector<NodePtr> &args);

inline NodePtr makeNode(Op op, Shape shape, DType dtype, std::vector<NodePtr> args = {}) {
  checkSymbolicOperands(op, args);
  auto node = std::make_shared<Node>();
  node->op = op;
  node->seq = nextSeq();
  node->shape = std::move(shape);
  node->dtype = dtype;
  node->args = std::move(args);
  return node;
}

/// What ops.def says about an op (see its header for the columns).
enum class OpKind : uint8_t {
  Leaf,
  Unary,
  Binary,
  Compare,
  Select,
  Convert,
  Reduction,
  Row,
  CheckedRow,
  Other
};
enum class IntPolicy : uint8_t { Keep, ToFloat, ToFloat64, FloatOnly, IntOnly };
struct OpInfo {
  OpKind kind;
  IntPolicy ints;
  bool complex; // takes complex operands (its ComplexLowering is not NotLowered)
};

inline constexpr OpInfo kOpInfo[] = {
#define TINYMLIR_OP(Name, spelling, Kind, Ints) {OpKind::Kind, IntPolicy::Ints, false},
#define TINYMLIR_ELEMENTWISE_OP(Name, spelling, Kind, Ints, FloatLowering, IntLowering,            \
                                ComplexLowering, Function)                                         \
  {OpKind::Kind, IntPolicy::Ints, std::string_view(#ComplexLowering) != "NotLowered"},
#include <tinymlir/ops.def>
};

constexpr const OpInfo &opInfo(Op op) { return kOpInfo[static_cast<size_t>(op)]; }

/// `values` (integers), checked when the kernel runs to be at least `bound`:
/// ops.def's Require, whose `reason` (below kRequireReasons: 0 a negative
/// integer exponent, 1 lstsq's rank, 2 digitize's bins out of order, 3
/// nanargmax's slice of nans, 4 and 5 the max and min of an empty masked
/// read, 6 np.place's empty values for a mask that selects something, 7 an
/// index out of its array or axis: np.unravel_index, np.ravel_multi_index)
/// names NumPy's error (runtime/Rows.cpp). Same shape and dtype.
constexpr int64_t kRequireReasons = 8;
inline Tensor requireAtLeast(const Tensor &values, int64_t bound, int64_t reason) {
  const int64_t m = numElements(values.shape());
  if (m == 0)
    return values;
  Tensor v = reshape(cast(values, DType::i64), {1, m});
  auto node = makeNode(Op::Require, {1, m}, DType::i64, {v.node()});
  node->axes = {bound * kRequireReasons + reason};
  return cast(reshape(Tensor(node), values.shape()), values.dtype());
}

/// A box of an array at traced positions along some of its axes: NumPy's
/// x[i, k] with k a traced 0-d integer. Along axis `at[j].first`, the box
/// holds the element at position k = `at[j].second` of the `extents` there
/// (negative counts from the end; out of range raises NumPy's IndexError
/// when the kernel runs); along the others, its `extents` elements. A Slice
/// or SliceUpdate node with operands past its own: their axes hold the
/// offsets, the steps, then (axis, extent) per position (Tensor.cpp).
struct DynamicBox {
  std::vector<int64_t> offsets, steps; // per axis of the array
  Shape extents;                       // per axis: the box's elements, before the positions
  std::vector<std::pair<int64_t, Tensor>> at;
  /// Traced slices of the box (A[i, :j]): along `axis` (step 1), the elements
  /// [start, start + size) of its extents there, `extent` the symbolic
  /// dimension of that size (tracedSpan).
  struct Span {
    int64_t axis;
    Tensor start, size;
    int64_t extent;
  };
  std::vector<Span> spans;
  /// The box's shape: its extents, 1 along the traced axes, the symbolic
  /// extent along each span.
  Shape shape() const;
};

// --- Symbolic extents: sizes known only when the kernel runs ----------------
//
// x[i:] with i traced has i's extent, a number tracing does not know. Such a
// dimension is a negative number in a Shape, kFirstExtent - k for the k-th
// extent of the trace (far from any size a user writes: -1 is reshape's, and
// other negative sizes stay NumPy's errors), so that NumPy's shape rules
// compare it as they compare numbers:
// two are equal where they are one extent (the same bounds on axes of one
// length: A[i, :j] and A[j, :j]), broadcasting keeps it against 1, and it
// differs from any number (a static extent: the rules refuse). The size
// itself is a traced int64 0-d tensor, an operand of the Slice that made the
// extent (the builder finds it there: symbolicSizes). Rules that need a
// number refuse a symbolic dimension with an error, and a loop that meets
// one is unrolled (python/tinymlir/_loops.py).

/// The first symbolic extent of a trace; the k-th is kFirstExtent - k.
inline constexpr int64_t kFirstExtent = std::numeric_limits<int64_t>::min() / 2;
/// Whether dimension `d` is a symbolic extent.
constexpr bool isSymbolic(int64_t d) { return d <= kFirstExtent; }
inline bool hasSymbolic(const Shape &s) {
  for (int64_t d : s)
    if (isSymbolic(d))
      return true;
  return false;
}
/// The span [start, stop) of an axis of `length` (NumPy's slice: negative
/// bounds count from the end, then both are clamped to [0, length]; a missing
/// bound is the axis's start or end): its clamped start, its size and its
/// symbolic extent, one extent for equal bounds (the same nodes, up to added
/// constants) on axes of one length within a trace.
DynamicBox::Span tracedSpan(int64_t axis, const std::optional<Tensor> &start,
                            const std::optional<Tensor> &stop, int64_t length);
/// The size (a traced int64 0-d tensor) of symbolic extent `d` of this trace.
Tensor symbolicSize(int64_t d);
/// Forgets the trace's extents (the outermost TraceScope's end).
void forgetSymbolicExtents();
/// A Slice's or SliceUpdate's spans (DynamicBox::Span): Node::index of them.
inline size_t spanCount(const Node &n) {
  return n.op == Op::Slice || n.op == Op::SliceUpdate ? static_cast<size_t>(n.index) : 0;
}
/// The whole of an array of `shape` as a box (no positions yet).
DynamicBox wholeBox(const Shape &shape);
/// x's elements in `box`, of the box's shape.
Tensor dynamicSlice(const Tensor &x, const DynamicBox &box);
/// x with the elements in `box` replaced by `value` (of the box's shape, x's dtype).
Tensor dynamicSliceUpdate(const Tensor &x, const DynamicBox &box, const Tensor &value);
/// A Slice's or SliceUpdate's step along axis i of its array of rank `rank`
/// (its axes hold the steps after the offsets, or none where all are 1).
inline int64_t sliceStep(const Node &n, size_t rank, size_t i) {
  return n.axes.size() >= 2 * rank ? n.axes[rank + i] : 1;
}
/// The traced positions of a Slice (operands past 1) or SliceUpdate (past 2),
/// before its spans' starts and sizes (two operands a span).
inline size_t tracedPositions(const Node &n) {
  const size_t own = (n.op == Op::SliceUpdate ? 2 : 1) + 2 * spanCount(n);
  return n.args.size() > own ? n.args.size() - own : 0;
}

/// 0..n-1 along `axis` of a rank-`rank` array (Iota.cpp), one array per
/// shape and dtype: the same array is one constant input of a kernel however
/// often it is used.
Tensor iotaAlong(int64_t n, int64_t axis, int64_t rank, DType dtype = DType::i32);
/// x's elements [begin, end) along `axis` (the rest whole).
Tensor sliceAlong(const Tensor &x, int64_t axis, int64_t begin, int64_t end);

/// NumPy 2's promotion of two strong dtypes (Promotion.cpp).
DType promoteTypes(DType a, DType b);
/// The dtype of `n` as an array alone: a Python number's is NumPy's default
/// of its kind (complex128, int64, float64), as np.asarray gives it.
inline DType strongDType(const Node &n) {
  return !n.weak ? n.dtype : n.weakComplex ? DType::c128 : n.integral ? DType::i64 : DType::f64;
}

/// NumPy's broadcast of `shapes`: nullopt where they do not broadcast (each
/// caller raises NumPy's error for its case). Tensor.cpp.
std::optional<Shape> broadcastShapes(const std::vector<Shape> &shapes);

/// Throws the frontend's errors: "[op] message", NumPy's ValueError unless
/// `kind` says otherwise.
[[noreturn]] inline void fail(const char *op, const std::string &message,
                              ErrorKind kind = ErrorKind::Value) {
  throw Error(std::string("[") + op + "] " + message, kind);
}
[[noreturn]] inline void fail(Op op, const std::string &message,
                              ErrorKind kind = ErrorKind::Value) {
  fail(opName(op), message, kind);
}

/// The node of `t`; op's error for an invalid (default-constructed) Tensor.
inline const NodePtr &nodeOf(const Tensor &t, const char *op) {
  if (!t.valid())
    fail(op, "operand is an invalid (default-constructed) Tensor");
  return t.node();
}

/// A node's dtype and shape, for messages.
inline std::string describe(const NodePtr &n) {
  return std::string(dtypeName(n->dtype)) + " " + shapeString(n->shape);
}

/// NumPy's IndexError message for position `k` along axis `axis` of size `n`.
inline std::string outOfBounds(int64_t k, size_t axis, int64_t n) {
  return "index " + std::to_string(k) + " is out of bounds for axis " + std::to_string(axis) +
         " with size " + std::to_string(n);
}
/// Position `k` (negative: from the end) along axis `axis` of size `n`, in
/// [0, n); NumPy's IndexError outside [-n, n).
inline int64_t positionAlong(int64_t k, size_t axis, int64_t n) {
  if (k < -n || k >= n)
    throw Error(outOfBounds(k, axis, n), ErrorKind::Index);
  return k < 0 ? k + n : k;
}

/// Ops lowered to calls of the runtime's row and LAPACK kernels (CPU only).
constexpr bool isRowKernel(Op op) {
  return opInfo(op).kind == OpKind::Row || opInfo(op).kind == OpKind::CheckedRow;
}

} // namespace tinymlir::detail
