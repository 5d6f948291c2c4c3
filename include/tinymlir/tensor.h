// The tracing frontend: a symbolic Tensor whose operators build a typed graph.
//
// A Tensor is a handle to a graph node. Nodes are compared by identity: using
// the same Tensor twice uses the same node, and the builder emits it once.
// A Tensor made from an Array is concrete; used inside a traced function it is
// a captured constant, lifted to a trailing argument of the compiled function.
//
// Types follow NumPy: broadcasting, and NumPy 2 promotion (NEP 50). Plain C++
// number literals are weak and take the tensor's dtype (a float literal with an
// int32 tensor gives float64); typed scalars made with f32(v), f64(v), i32(v)
// keep their dtype and promote like arrays.
#pragma once

#include <tinymlir/array.h>

#include <concepts>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <tuple>
#include <utility>
#include <vector>

namespace tinymlir {

enum class Op : uint8_t {
#define TINYMLIR_OP(Name, ...) Name,
#include <tinymlir/ops.def>
};
const char *opName(Op op);

namespace detail {
struct Node;
template <class> inline constexpr bool alwaysFalse = false;
} // namespace detail

class Tensor {
public:
  /// An invalid tensor; every operation on it is an error.
  Tensor() = default;
  /// A concrete tensor holding `array` (borrowed, not copied).
  Tensor(const Array &array); // NOLINT: implicit on purpose, arrays flow into traced code

  const Shape &shape() const;
  DType dtype() const;
  int64_t rank() const { return static_cast<int64_t>(shape().size()); }
  int64_t dim(int64_t axis) const;
  bool valid() const { return node_ != nullptr; }
  /// Whether this tensor holds data (an Array) rather than a traced value.
  bool isConcrete() const;
  /// Whether this tensor is an input of the traced function (a placeholder).
  bool isInput() const;
  /// The data of a concrete tensor; an error for a traced one.
  const Array &array() const;
  operator const Array &() const { return array(); } // NOLINT

  /// Data-dependent control flow cannot be traced.
  template <class T = void> explicit operator bool() const {
    static_assert(detail::alwaysFalse<T>,
                  "tinymlir: a Tensor cannot be converted to bool: its value is not known while "
                  "tracing, so data-dependent control flow cannot be compiled; use static "
                  "(non-tensor) arguments for branches");
    return false;
  }

  // Reductions as methods, NumPy style. axis may be negative; no axis = all.
  Tensor sum(std::optional<int64_t> axis = std::nullopt, bool keepdims = false) const;
  Tensor max(std::optional<int64_t> axis = std::nullopt, bool keepdims = false) const;
  Tensor min(std::optional<int64_t> axis = std::nullopt, bool keepdims = false) const;
  Tensor mean(std::optional<int64_t> axis = std::nullopt, bool keepdims = false) const;
  Tensor var(std::optional<int64_t> axis = std::nullopt, bool keepdims = false) const;
  Tensor astype(DType dtype) const;
  Tensor reshape(const Shape &shape) const;
  Tensor transpose(const std::vector<int64_t> &perm) const;
  /// Reverses the axes, as NumPy's .T.
  Tensor T() const;

  const std::shared_ptr<detail::Node> &node() const { return node_; }
  explicit Tensor(std::shared_ptr<detail::Node> node) : node_(std::move(node)) {}

private:
  std::shared_ptr<detail::Node> node_;
};

/// A typed scalar: f32(1.5) is a float32 scalar that promotes like an array.
/// Also usable as a dtype: Array::zeros({3}, f32).
struct ScalarType {
  DType dtype;
  constexpr operator DType() const { return dtype; } // NOLINT
  /// A value rounded (or truncated and wrapped) to dtype, as NumPy's cast.
  Tensor operator()(double value) const;
  /// An integer, exact in all 64 bits; out of dtype's range it is NumPy 2's
  /// OverflowError (np.uint8(300)).
  template <std::integral I> Tensor operator()(I value) const {
    if constexpr (std::is_signed_v<I>)
      return integer(static_cast<int64_t>(value));
    else
      return integer(static_cast<uint64_t>(value));
  }

private:
  Tensor integer(int64_t value) const;
  Tensor integer(uint64_t value) const;
};
inline constexpr ScalarType f32{DType::f32};
inline constexpr ScalarType f64{DType::f64};
inline constexpr ScalarType i32{DType::i32};
inline constexpr ScalarType i64{DType::i64};

/// NumPy's casting rules, as np.can_cast of two dtypes: `safe` where `to`
/// holds every value of `from`; `same_kind` also within a kind or to a higher
/// one (bool < unsigned < signed < float < complex).
enum class Casting : uint8_t { No, Equiv, Safe, SameKind, Unsafe };
bool canCast(DType from, DType to, Casting casting);
/// The casting rule of NumPy's name for it ("same_kind"...); NumPy's
/// ValueError for another name.
Casting castingNamed(std::string_view name);

/// A weak scalar (a plain C++ number): takes the dtype of the tensor it meets.
/// `integral` marks an integer written as a double (exact up to 2^53).
Tensor weakScalar(double value, bool integral);
/// A weak integer (a Python int), exact in all 64 bits: out of the range of
/// the dtype it meets, NumPy 2's OverflowError.
Tensor weakInteger(int64_t value);
/// A weak integer in [2^63, 2^64): meets only uint64 (and floats) exactly.
Tensor weakUnsigned(uint64_t value);
/// The weak scalar for a C++ number of any arithmetic type.
template <class S> Tensor weakNumber(S value) {
  if constexpr (std::is_floating_point_v<S>)
    return weakScalar(static_cast<double>(value), false);
  else if constexpr (std::is_signed_v<S>)
    return weakInteger(static_cast<int64_t>(value));
  else
    return weakUnsigned(static_cast<uint64_t>(value));
}
/// A weak complex scalar (a Python complex): complex64 with float32 and
/// float16 tensors, else complex128 (NEP 50).
Tensor weakComplexScalar(double real, double imag);
/// A Python int beyond 64 bits (`value`: its nearest double): a float beside
/// float and complex operands, compared exactly with integers (NumPy 2's
/// `int8_array < 2**70` is all True), NumPy's OverflowError in any other
/// use with integers.
Tensor weakWideInteger(double value);

template <class S>
concept Number = std::is_arithmetic_v<S> && !std::is_same_v<S, bool>;

// Elementwise functions with broadcasting and promotion, one per Unary or
// Binary row of ops.def, named by its Function column (tinymlir::exp, add,
// maximum...; its Ints column says what int32 operands do). Binary ones also
// take a plain number on either side.
#define TINYMLIR_SCALAR_OVERLOADS(OP)                                                              \
  template <Number S> Tensor OP(const Tensor &a, S b) { return OP(a, weakNumber(b)); }             \
  template <Number S> Tensor OP(S a, const Tensor &b) { return OP(weakNumber(a), b); }
#define TINYMLIR_DECLARE_Unary(f) Tensor f(const Tensor &x);
#define TINYMLIR_DECLARE_Binary(f)                                                                 \
  Tensor f(const Tensor &a, const Tensor &b);                                                      \
  TINYMLIR_SCALAR_OVERLOADS(f)
#define TINYMLIR_DECLARE_Compare(f) TINYMLIR_DECLARE_Binary(f)
#define TINYMLIR_DECLARE_Select(f)                                                                 \
  Tensor f(const Tensor &condition, const Tensor &x, const Tensor &y);                             \
  template <Number S> Tensor f(const Tensor &condition, const Tensor &x, S y) {                    \
    return f(condition, x, weakNumber(y));                                                         \
  }                                                                                                \
  template <Number S> Tensor f(const Tensor &condition, S x, const Tensor &y) {                    \
    return f(condition, weakNumber(x), y);                                                         \
  }
#define TINYMLIR_DECLARE_Convert(f)
#define TINYMLIR_OP(...)
#define TINYMLIR_ELEMENTWISE_OP(Name, spelling, Kind, Ints, FloatLowering, IntLowering,            \
                                ComplexLowering, Function)                                         \
  TINYMLIR_DECLARE_##Kind(Function)
#include <tinymlir/ops.def>
#undef TINYMLIR_DECLARE_Unary
#undef TINYMLIR_DECLARE_Binary
#undef TINYMLIR_DECLARE_Compare
#undef TINYMLIR_DECLARE_Select
#undef TINYMLIR_DECLARE_Convert

/// Logical operations on truth values (nonzero is true): bool results.
Tensor logical_and(const Tensor &a, const Tensor &b);
Tensor logical_or(const Tensor &a, const Tensor &b);
Tensor logical_xor(const Tensor &a, const Tensor &b);
Tensor logical_not(const Tensor &x);

Tensor operator+(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a);
TINYMLIR_SCALAR_OVERLOADS(operator+)
TINYMLIR_SCALAR_OVERLOADS(operator-)
TINYMLIR_SCALAR_OVERLOADS(operator*)
TINYMLIR_SCALAR_OVERLOADS(operator/)
#undef TINYMLIR_SCALAR_OVERLOADS
Tensor cast(const Tensor &x, DType dtype);

/// The axes of a reduction, as NumPy's `axis`: none (std::nullopt, every
/// axis), one, or several (a tuple; empty reduces each value alone). Negative
/// ones count from the end; out of range is NumPy's AxisError, a repeated one
/// its ValueError.
struct Axes {
  std::optional<std::vector<int64_t>> list;
  Axes() = default;
  Axes(std::nullopt_t) {}                                  // NOLINT: implicit
  Axes(int64_t axis) : list(std::vector<int64_t>{axis}) {} // NOLINT
  Axes(int axis) : Axes(static_cast<int64_t>(axis)) {}     // NOLINT
  Axes(std::optional<int64_t> axis) {                      // NOLINT
    if (axis)
      list = std::vector<int64_t>{*axis};
  }
  Axes(std::vector<int64_t> axes) : list(std::move(axes)) {}                      // NOLINT
  Axes(std::initializer_list<int64_t> axes) : list(std::vector<int64_t>(axes)) {} // NOLINT
};
/// The axes of `axes` for an array of rank `rank`: sorted, each in [0, rank).
std::vector<int64_t> normalizeAxes(const char *op, const Axes &axes, int64_t rank);

// Reductions: axis may be negative; std::nullopt reduces every axis.
Tensor sum(const Tensor &x, const Axes &axes = {}, bool keepdims = false);
Tensor max(const Tensor &x, const Axes &axes = {}, bool keepdims = false);
Tensor min(const Tensor &x, const Axes &axes = {}, bool keepdims = false);
/// The product of the elements (floats: NumPy's int32 products are int64).
Tensor prod(const Tensor &x, const Axes &axes = {}, bool keepdims = false);
/// Whether any (all) of the elements is nonzero: bool, as np.any (np.all).
Tensor any(const Tensor &x, const Axes &axes = {}, bool keepdims = false);
Tensor all(const Tensor &x, const Axes &axes = {}, bool keepdims = false);
Tensor mean(const Tensor &x, const Axes &axes = {}, bool keepdims = false);
/// The variance, computed centered: mean(|x - mean(x)|^2), or with `ddof`
/// (delta degrees of freedom) sum(|x - mean(x)|^2) / max(n - ddof, 0), as
/// NumPy's; integers and bool in float64, float16 in float32.
Tensor var(const Tensor &x, const Axes &axes = {}, bool keepdims = false, double ddof = 0);

// Matrix products and layout.
/// NumPy's matmul: 1-D operands, stacks of matrices, broadcast batch dimensions.
Tensor matmul(const Tensor &a, const Tensor &b);
/// Static slice [begin, end) along each axis, every steps[i]-th element (1
/// if not given; positive); a negative index counts from the end, and missing
/// trailing axes are taken whole.
Tensor slice(const Tensor &x, const std::vector<int64_t> &begin, const std::vector<int64_t> &end,
             const std::vector<int64_t> &steps = {});
/// NumPy's `x[basic index] = value` as a value: a copy of `x` with the box
/// slice(x, begin, end, steps) replaced by `value`, which broadcasts to the
/// box's shape and is cast to x's dtype (as NumPy's __setitem__ casts).
Tensor sliceUpdate(const Tensor &x, const std::vector<int64_t> &begin,
                   const std::vector<int64_t> &end, const std::vector<int64_t> &steps,
                   const Tensor &value);
/// `x` repeated to `shape` by NumPy's broadcasting rules (np.broadcast_to).
Tensor broadcastTo(const Tensor &x, const Shape &shape);
/// The bits of a 64-bit tensor read as another 64-bit dtype (x.view(dtype)).
Tensor bitcast(const Tensor &x, DType dtype);
/// A tensor of `shape` filled with `value` in `dtype` (np.full; np.zeros).
Tensor full(const Shape &shape, double value, DType dtype);
/// The same with an integer fill value, exact in all 64 bits.
template <std::integral I> Tensor full(const Shape &shape, I value, DType dtype) {
  return broadcastTo(ScalarType{dtype}(value), shape);
}
/// New shape with the same element count; one entry may be -1.
Tensor reshape(const Tensor &x, const Shape &shape);
Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm);
/// The elements in reverse order along `axes` (negative allowed; none: every
/// axis), as np.flip.
Tensor flip(const Tensor &x, const Axes &axes = {});
/// The tensors joined along `axis` (negative allowed), as np.concatenate: equal
/// ranks, equal sizes on the other axes, dtypes promoted as by arithmetic.
Tensor concatenate(const std::vector<Tensor> &parts, int64_t axis);
/// `sections` equal parts along `axis`, as np.split.
std::vector<Tensor> split(const Tensor &x, int64_t sections, int64_t axis);
/// Rows of a rank-2 `table` picked by rank-1 int32 `ids`: table[ids].
Tensor gather(const Tensor &table, const Tensor &ids);
/// NumPy's `a[index] = values` as a value: a copy of `a` with the elements at
/// `index` replaced. index[d] is a rank-1 int32 tensor of R positions along
/// axis d, or std::nullopt for the whole axis (as `:`); missing trailing axes
/// are whole. Row r of `values` goes to the positions (index[d][r]) of the
/// indexed axes; `values` has NumPy's shape for `a[index]`: (R, the whole axes)
/// when a whole axis separates two indexed ones, else R in place of the indexed
/// axes. Values are cast to a's dtype; a repeated position takes the last row.
/// Positions must be in [0, dim): index tensors are inputs of the compiled
/// function, checked before each call. Calling a jitted function `into` an
/// argument (Jit::into) updates that argument in place. CPU target only.
Tensor indexPut(const Tensor &a, const std::vector<std::optional<Tensor>> &index,
                const Tensor &values);
/// NumPy's sort and argsort along `axis` (stable: the order of equal values
/// kept; nan last). argsort's indices are int64.
/// No axis: of the flattened array.
Tensor sort(const Tensor &x, std::optional<int64_t> axis = -1);
Tensor argsort(const Tensor &x, std::optional<int64_t> axis = -1);
/// Cumulative sums and products along `axis` (none: of the flattened array),
/// sequential as NumPy's; integers and bools accumulate in int64 (uint64),
/// or in `dtype` where given (the operand cast to it first).
Tensor cumsum(const Tensor &x, std::optional<int64_t> axis = std::nullopt,
              std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor &x, std::optional<int64_t> axis = std::nullopt,
               std::optional<DType> dtype = std::nullopt);
/// NumPy's ufunc.accumulate of add, multiply, maximum, minimum, subtract,
/// fmax, fmin and the logical and bitwise and, or and xor (`ufunc`) along
/// `axis`: the running results, in `dtype` where given; by default add and
/// multiply take cumsum's (int64 for integers), logical ones give bools, the
/// others keep x's. Exactly NumPy's sequential results: a nan, once reached,
/// is carried on by maximum and minimum, as np.maximum's.
Tensor accumulate(std::string_view ufunc, const Tensor &x, int64_t axis = 0,
                  std::optional<DType> dtype = std::nullopt);
/// NumPy's ufunc.reduce of those ufuncs over `axes`, exactly: `initial` is
/// the first element, elements where `where` is false are left out (the
/// ufunc's identity); NumPy's ValueError for an empty reduction or a where=
/// without an identity. np.sum and kin are numpy.h's reduce.
Tensor reduceUfunc(std::string_view ufunc, const Tensor &x, const Axes &axes, bool keepdims = false,
                   const Tensor &initial = Tensor(), const Tensor &where = Tensor());
/// NumPy's ufunc.reduceat along `axis`, at 1-D integer `indices` known while
/// tracing (they make the result's shape): the reduce of x[indices[k] :
/// indices[k + 1]] where that is a range, else the element at indices[k];
/// the last to the end. In `dtype` (x cast to it first) where given.
Tensor reduceAt(std::string_view ufunc, const Tensor &x, const Tensor &indices, int64_t axis = 0,
                std::optional<DType> dtype = std::nullopt);
/// The int64 index of the first maximum (minimum) along `axis`, or of the
/// flattened array; a nan counts as the extreme, as NumPy's.
Tensor argmax(const Tensor &x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Tensor argmin(const Tensor &x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
/// Where `values` would go in the sorted 1-D `sorted` (side 'left' or, with
/// right, 'right'): int64 indices of values' shape.
Tensor searchsorted(const Tensor &sorted, const Tensor &values, bool right = false);
/// NumPy's table[ids] along axis 0 for computed integer ids of any shape: a
/// result of shape ids.shape + table.shape[1:]; ids out of range raise an
/// IndexError when the kernel runs.
Tensor take(const Tensor &table, const Tensor &ids);
/// NumPy's bincount of integer ids with a known length (NumPy's minlength,
/// here the bound: an id at or past it raises when the kernel runs): int64
/// counts, or with weights float64 sums.
Tensor bincount(const Tensor &ids, int64_t length, const Tensor &weights = Tensor());
/// table with table[ids] = values (values broadcast to ids.shape +
/// table.shape[1:]), in order, as NumPy's assignment.
Tensor put(const Tensor &table, const Tensor &ids, const Tensor &values);
/// ufunc.at(table, ids, values) along axis 0 for "add", "subtract",
/// "multiply", "maximum" and "minimum": table[id] = ufunc(table[id], value)
/// for each id in order, a repeated id applying again (NumPy's unbuffered
/// loop), computed in the operands' dtype and cast back to the table's;
/// negative ids count from the end, others out of range are NumPy's
/// IndexError when the kernel runs. Values of another dtype than the
/// table's (a float into an int table) need ids known while tracing.
Tensor ufuncAt(std::string_view ufunc, const Tensor &table, const Tensor &ids,
               const Tensor &values);
/// The same with a tuple of positions (`ids`: one int array or int per
/// leading axis, broadcast together; np.add.at(m, (rows, cols), 1)): each
/// checked against its axis (NumPy's IndexError) and wrapped, then merged
/// into one position of those axes.
Tensor ufuncAt(std::string_view ufunc, const Tensor &table, const std::vector<Tensor> &ids,
               const Tensor &values);
/// np.linalg (namespace la: not MLIR's linalg) on float32 and float64 (integers and bools as
/// float64) matrices
/// (..., m, n), by LAPACK; NumPy's LinAlgError (a matrix not positive
/// definite, singular) is raised when the kernel runs.
namespace la {
Tensor cholesky(const Tensor &a, bool upper = false);
/// x with a x = b: b (..., n, k), or (n,) for one vector.
Tensor solve(const Tensor &a, const Tensor &b);
Tensor inv(const Tensor &a);
Tensor det(const Tensor &a);
/// (sign, log|det|)
std::pair<Tensor, Tensor> slogdet(const Tensor &a);
/// (ascending eigenvalues, eigenvectors as columns) of the lower (upper) triangle.
std::pair<Tensor, Tensor> eigh(const Tensor &a, bool upper = false);
/// The same with NumPy's UPLO argument ('L' or 'U', of either case; else its
/// ValueError).
std::pair<Tensor, Tensor> eigh(const Tensor &a, std::string_view uplo);
/// (U, S, Vh); full: U (m, m) and Vh (n, n), else (m, k) and (k, n).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor &a, bool full = true);
/// The singular values alone, descending: (..., min(m, n)).
Tensor singularValues(const Tensor &a);
/// (Q, R), NumPy's mode='reduced'.
std::pair<Tensor, Tensor> qr(const Tensor &a);
/// (x, residuals, rank, singular values) of min |a x - b|, a (m, n), rcond NumPy 2's
/// default; residuals: the squared norms of b - a x's columns where m > n,
/// else an empty array (NumPy's for a full-rank a).
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor &a, const Tensor &b);
} // namespace la
/// NumPy's triu and tril: x with the elements below (triu) or above (tril)
/// diagonal k of its last two axes set to 0, whatever they were (inf and nan
/// too: a select, not a product with a 0/1 mask). A 1-D x of n elements is
/// NumPy's too: its (n, n) rows, each x. Rank 0 is NumPy's TypeError.
Tensor triu(const Tensor &x, int64_t k = 0);
Tensor tril(const Tensor &x, int64_t k = 0);
/// Whether `a` and `b` compute the same value: the same node, or nodes of the
/// same op, types and attributes on the same values (two traces of `x > 0`).
bool sameValue(const Tensor &a, const Tensor &b);

// --- Loops (lib/frontend/Loop.cpp) ---

/// A loop being traced, JAX's fori_loop with writes: for i in range(start,
/// stop, step), carrying values from one iteration to the next. Construct it,
/// trace the body once on index() and params(), then finish() it with the
/// carried values at the end of an iteration; the kernel runs it as one loop
/// (scf.for), however many iterations it has.
///
///   LoopBuilder loop(0, n, 1, {s});
///   Tensor next = loop.params()[0] + x[loop.index()];
///   Tensor total = loop.finish({next})[0];
///
/// Bodies of static shapes for now (positions may be traced: A[i, 1:-1]);
/// loops nest (a LoopBuilder made while another's body is traced is inside
/// it). CPU target only: the GPU targets refuse graphs with loops.
class LoopBuilder {
public:
  /// start, stop, step: rank-0 integer (or bool) tensors, traced or concrete
  /// (a plain number is a weak scalar), cast to int64; anything else is
  /// NumPy's TypeError (Python's range). A step known to be 0 is Python's
  /// ValueError "range() arg 3 must not be zero" (a traced 0 step runs no
  /// iteration). inits: the carried values' initial values (a weak number
  /// is carried as its strong dtype: int64, float64 or complex128).
  LoopBuilder(const Tensor &start, const Tensor &stop, const Tensor &step,
              std::vector<Tensor> inits);
  ~LoopBuilder();
  LoopBuilder(LoopBuilder &&) noexcept;
  LoopBuilder &operator=(LoopBuilder &&) noexcept;
  LoopBuilder(const LoopBuilder &) = delete;
  LoopBuilder &operator=(const LoopBuilder &) = delete;

  /// The iteration's index i: a traced rank-0 int64 tensor.
  const Tensor &index() const;
  /// One parameter per init: a traced value of its shape and dtype, the
  /// carried value at the start of an iteration.
  const std::vector<Tensor> &params() const;
  /// The inits, as carried (weak numbers made strong).
  const std::vector<Tensor> &inits() const;

  /// For each carried value, the dtype its parameter must take where
  /// yields[k]'s differs from its init's: NumPy's promotion of the two (NEP
  /// 50: a weak init takes the yield's kind), as for `init + yield`; nullopt
  /// where the dtypes agree. Checks nothing else and throws nothing but for a
  /// count of yields other than the inits'.
  std::vector<std::optional<DType>> joinedDTypes(const std::vector<Tensor> &yields) const;
  /// After a finish() that failed on dtypes: the joined dtype of carried
  /// value k (joinedDTypes of those yields), nullopt where it agreed.
  std::optional<DType> joinedDType(size_t k) const;

  /// Ends the body: yields[k] is carried value k at the end of an iteration
  /// (the parameter itself where it is unchanged, or any value made before
  /// or inside the body). A yield of another shape than its init is
  /// NumPy's ValueError "[loop] carried value k changes shape from (..) to
  /// (..)"; of another dtype, a TypeError "[loop] carried value k changes
  /// dtype from .. to ..": trace the body again with the inits cast to
  /// joinedDType(k) (a new LoopBuilder). Returns the values after the loop,
  /// one per carried value (the inits where the loop runs no iteration).
  /// Once only.
  std::vector<Tensor> finish(const std::vector<Tensor> &yields);

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

/// A loop for C++ callers: body(i, carried) returns the carried values at
/// the end of an iteration; a yield of another dtype than its init's makes
/// the body traced again with the joined dtype (at most twice more). Returns
/// the values after the loop.
std::vector<Tensor> forLoop(
    const Tensor &start, const Tensor &stop, const Tensor &step, std::vector<Tensor> inits,
    const std::function<std::vector<Tensor>(const Tensor &i, const std::vector<Tensor> &carried)>
        &body);

// --- Tracing (lib/frontend/Tensor.cpp) ---
namespace detail {

/// Whether a function is being traced on this thread.
bool tracing();
class TraceScope {
public:
  TraceScope();
  ~TraceScope();
  TraceScope(const TraceScope &) = delete;
  TraceScope &operator=(const TraceScope &) = delete;
};
/// A traced input of the given type.
Tensor placeholder(int64_t index, const Shape &shape, DType dtype);

} // namespace detail

} // namespace tinymlir
