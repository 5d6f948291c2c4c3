// NumPy's indexing and in-place writes for traced arrays: one index
// specification for reads and writes, views that share their base's memory,
// and the versions that make writes visible through every view.
//
//   Ref a(x);                                    // a writable traced array
//   a.set({Slice{1, -1}, Slice{1, -1}}, v);      // a[1:-1, 1:-1] = v
//   Ref row = a.get({2});                        // a[2]: a view
//   row.assign(row.value() * 2);                 // a[2] *= 2, seen by a
//   Tensor y = a.get({Ellipsis{}, NewAxis{}}).value();  // a[..., None]
//
// Python's `__getitem__`, `__setitem__` and in-place operators turn their
// arguments into an Index and call these; the semantics live here.
#pragma once

#include <tinymlir/tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tinymlir {

/// NumPy's start:stop:step; a missing part is Python's None.
struct Slice {
  std::optional<int64_t> start{}, stop{}, step{};
};
/// start:stop with a traced bound (x[i:], A[i, :j] with i, j traced 0-d
/// integers; a missing bound is None): its extent is known only when the
/// kernel runs (a `?` dimension: Graph.h's symbolic extents). Step 1 only.
struct TracedSlice {
  std::optional<Tensor> start{}, stop{};
};
/// np.newaxis (None in an index).
struct NewAxis {};
/// `...` in an index.
struct Ellipsis {};
/// Python's range(start, stop, step): NumPy takes it as an integer array. It
/// stands for the equal slice where that gives NumPy's result (one range, no
/// int index, entries in bounds and not negative); otherwise it is refused.
struct Range {
  int64_t start, stop, step;
};
/// One item of an index: an int, a slice, None, `...`, a range, a tensor
/// (an int scalar or array, or a bool mask; traced or concrete), or a slice
/// with traced bounds.
using IndexItem = std::variant<int64_t, Slice, NewAxis, Ellipsis, Range, Tensor, TracedSlice>;
using Index = std::vector<IndexItem>;

/// What NumPy does with an index, by its items: basic indexing (a view), a
/// boolean mask, traced int scalars (`hist[b] += 1`), a traced rank-1 int
/// argument selecting rows (`table[ids]`), computed int arrays, or constant
/// int arrays (both advanced indexing: a copy, a scatter when written).
enum class IndexKind : uint8_t { Basic, Mask, Dynamic, Gather, Computed, Advanced };

/// One step from an array to a view of it. Broadcast and Diagonal make
/// NumPy's read-only views (np.broadcast_to, np.diagonal): a write through
/// them is NumPy's ValueError. Real and Imag are a complex array's .real and
/// .imag (their positions counted in the complex elements).
struct ViewStep {
  enum class Kind : uint8_t {
    Flip,
    Slice,
    Reshape,
    Transpose,
    Broadcast,
    Diagonal,
    Real,
    Imag,
    Window,
    Bits
  };
  Kind kind;
  std::vector<int64_t> a; ///< flip: axes; slice: begin; reshape, broadcast: shape;
                          ///< transpose: perm; diagonal: offset, axis1, axis2;
                          ///< window: the window's shape; bits: the dtype
  std::vector<int64_t> b; ///< slice: end; window: the axes it slides along
  std::vector<int64_t> c; ///< slice: steps (empty: all 1)
  bool operator==(const ViewStep &) const = default;
};
using ViewSteps = std::vector<ViewStep>;

/// The view `step` makes of x.
Tensor applyView(const Tensor &x, const ViewStep &step);
/// `parent` with the elements its view `step` shows replaced by `value`.
Tensor unapplyView(const ViewStep &step, const Tensor &parent, const Tensor &value);

/// The index with its ellipsis expanded to whole slices (NumPy's IndexError
/// for two); an index of no items stays empty (`a[()]`, `a[...]` of rank 0).
Index expandIndex(const Index &index, int64_t rank);
/// The kind of an expanded index.
IndexKind indexKind(const Index &expanded);
/// The view steps of a basic index on `shape`; `scalar` says every axis was
/// taken by an int (NumPy's result is then a scalar: a copy, not a view).
struct BasicIndex {
  ViewSteps steps;
  bool scalar = false;
};
BasicIndex basicIndex(const Shape &shape, const Index &expanded);

/// `t` broadcast to `shape` as NumPy's assignment broadcasts (leading size-1
/// axes of t dropped first); otherwise NumPy's ValueError naming `what`.
Tensor broadcastInto(const Tensor &t, const Shape &shape, const char *what = "input array");

struct Reduction;

/// x[mask] while tracing: its shape depends on the data (the count of the
/// mask's true elements), so it is kept as the whole array `full` and the
/// mask, which covers full's axes axis .. axis + mask.rank - 1. The read's
/// shape is full's with those axes replaced by one axis, the count's.
///   - Elementwise operations apply to the whole array; operand() makes the
///     other side fit it, with() makes the result a read again.
///   - A reduction over the count's axis selects with where= and gives an
///     array; over other axes, a read of the reduced whole array.
///   - Ref::setMasked writes a read back through the same mask.
/// Anything needing the count as a shape is refused (a TracingError).
class MaskedRead {
public:
  MaskedRead(Tensor full, Tensor mask, int64_t axis = 0);
  const Tensor &full() const { return full_; }
  const Tensor &mask() const { return mask_; }
  int64_t axis() const { return axis_; }
  /// The read's rank: full's, its mask's axes counted as one.
  int64_t rank() const;
  /// The read's shape with the count written "?", for messages: (?, 3).
  std::string shapeText() const;
  /// `other` as the other operand of an elementwise operation with this
  /// read, made to broadcast against the whole array: NumPy broadcasts it
  /// against the read where its axis facing the count is missing or of size
  /// 1. Otherwise whether it fits depends on the count: a TracingError.
  Tensor operand(const Tensor &other) const;
  /// Another read as an operand: its whole array, where its mask is this
  /// one's (the same traced value, in the same place); else a TracingError.
  Tensor operand(const MaskedRead &other) const;
  /// The read of this mask from `full`, an elementwise result of full().
  MaskedRead with(const Tensor &full) const;
  /// NumPy's reduction `name` of the read (numpy.h's reduce's names, and
  /// count_nonzero) over `axes` (none: all), with its keywords (`where`
  /// broadcast against the read as operand() does). Over the count's axis,
  /// an array (the max and min of nothing are NumPy's ValueError when the
  /// kernel runs; a mean of nothing is nan); otherwise a read.
  std::variant<Tensor, MaskedRead> reduce(std::string_view name, const Axes &axes, bool keepdims,
                                          const Reduction &how) const;
  /// The mask with size-1 axes to full's rank, in its place.
  Tensor spreadMask() const;
  /// The read's size (NumPy's .size): the count times the other axes', an
  /// int64 scalar known when the kernel runs.
  Tensor size() const;

private:
  /// operand()'s rule; nothing where the fit depends on the count.
  std::optional<Tensor> fitted(const Tensor &other) const;
  Tensor full_, mask_;
  int64_t axis_;
};

/// An array being traced that can be written: a buffer (its current value and
/// a count of the writes to it) and the view steps from the buffer to this
/// array. Views share the buffer, as NumPy's share memory: a write through
/// any of them replaces the buffer's value, and every view reads it again.
class Ref {
public:
  Ref() = default;
  /// A new buffer holding `value` (an array made inside, or an argument).
  explicit Ref(const Tensor &value);
  /// An argument laid out in memory with these element strides (NumPy's
  /// strides / itemsize): which of its reshapes, ravels and np.asarray orders
  /// are views, and which copies, follows its layout as NumPy's does. Its
  /// value is read as one array whatever the layout.
  Ref(const Tensor &value, std::vector<int64_t> strides);

  /// The current value of this array: the buffer's, through the view steps.
  Tensor value() const;
  const Shape &shape() const { return value().shape(); }
  DType dtype() const { return value().dtype(); }
  /// The buffer's current value, the view steps to this array, the number of
  /// writes to the buffer, and an identity for the buffer (never reused).
  Tensor base() const;
  const ViewSteps &steps() const { return steps_; }
  int64_t version() const;
  uint64_t bufferId() const;
  bool sameBuffer(const Ref &other) const { return buf_ == other.buf_; }
  /// Whether this value was read after the buffer's last write (or made by it).
  bool current() const;
  /// Replaces the buffer's current value by `value` (of its shape and dtype;
  /// NumPy's ValueError otherwise): every view of it reads through it again.
  /// The version grows only with `newVersion`. Loops rebase each buffer they
  /// carry on its parameter before the body is traced (no new version, so
  /// that a write in the body shows as one), and after the loop on its result.
  void rebase(const Tensor &value, bool newVersion);

  /// A view of this array: further steps from the same buffer.
  Ref view(const ViewSteps &steps) const;
  /// Whether the elements are consecutive in the buffer, in C order, as
  /// NumPy's C_CONTIGUOUS flag (size-1 axes ignored): its reshape is a view.
  bool contiguous() const;
  /// Each element's position in the buffer (C order), an int64 array of this
  /// array's shape.
  Array positions() const;
  /// NumPy's shares_memory (`exact`: an element in common) and
  /// may_share_memory (overlapping bounds) of two traced arrays: views of one
  /// buffer (an argument passed twice is one) may; nothing else does.
  bool sharesMemory(const Ref &other, bool exact) const;
  /// NumPy's in-place reshape (`a.shape = ...`): this array becomes a view of
  /// its data in `shape`; NumPy's AttributeError (as a TypeError here) where
  /// the elements are not contiguous.
  void setShape(const Shape &shape);
  /// a.reshape(shape, order=, copy=): a view where NumPy's strides allow one
  /// (its _attempt_nocopy_reshape: the axes merged are contiguous among
  /// themselves), else a copy. `copy` true always copies; false raises
  /// NumPy's ValueError where no view exists. Orders 'C', 'F' and 'A'.
  Ref reshaped(const Shape &shape, std::string_view order = "C",
               std::optional<bool> copy = {}) const;
  /// np.array/np.asarray of this array: nullopt where NumPy gives the array
  /// itself, else a copy or a view. A new `dtype`, or an order ('C', 'F') the
  /// elements are not in, needs a copy (cast as astype; laid out in 'F' order
  /// for 'F', and for 'K'/'A' of an F-ordered array); `copy` true always
  /// copies, false raises NumPy's ValueError where one is needed. `ndmin`
  /// prepends size-1 axes (a view).
  std::optional<Ref> asArray(std::optional<DType> dtype, std::optional<bool> copy,
                             std::string_view order = "K", int64_t ndmin = 0) const;
  /// a.transpose(axes): a view with its axes permuted (none: reversed;
  /// negative ones from the end), NumPy's errors for a bad permutation.
  Ref transposed(const std::optional<std::vector<int64_t>> &axes = std::nullopt) const;
  /// np.flip(a, axes) (none: all), or `name` np.fliplr / np.flipud (axis 1
  /// or 0, NumPy's ValueError below 2-D or 1-D): a view, as NumPy's.
  Ref flipped(const Axes &axes, std::string_view name = "flip") const;
  /// np.rot90(a, k, axes): a view turned by 90 degrees k times in the plane of
  /// `axes`, from the first axis towards the second (NumPy's flips and
  /// transpose), with NumPy's errors for the axes.
  Ref rotated90(int64_t k, const std::vector<int64_t> &axes) const;
  /// np.broadcast_to(a, shape) and np.diagonal(a, offset, axis1, axis2):
  /// NumPy's read-only views (they show later writes to the base; a write
  /// through them is NumPy's ValueError), with NumPy's errors.
  Ref broadcasted(const Shape &shape) const;
  Ref diagonalView(int64_t offset, int64_t axis1, int64_t axis2) const;
  /// np.lib.stride_tricks.sliding_window_view(a, window, axes): NumPy's
  /// read-only view of every window (none: one per axis), its axes trimmed
  /// to the windows' starts and the windows' axes last, with NumPy's errors.
  Ref windowed(const std::vector<int64_t> &window,
               const std::optional<std::vector<int64_t>> &axes = std::nullopt) const;
  /// a.real and a.imag (`imaginary`): of a complex array, views of its parts
  /// (a write through them changes it); of a real one, the array itself, and
  /// NumPy's read-only zeros.
  Ref part(bool imaginary) const;
  /// a.view(dtype) of another dtype of the same size (not bool, complex or
  /// float16): a view of the same bits (a write through it changes a), as
  /// NumPy's; NumPy's errors otherwise.
  Ref bitsAs(DType dtype) const;
  /// Whether a step is read-only (NumPy's writeable flag, negated).
  bool readOnly() const;
  /// a.mT: a view with the last two axes swapped; NumPy's ValueError below 2-D.
  Ref matrixTransposed() const;
  /// a.ravel(order=): a view where the elements are contiguous in that order
  /// ('K': in memory order, as they are), else a copy, as NumPy's.
  Ref raveled(std::string_view order = "C") const;

  /// a[index]: a view for a basic index, else a new array (a copy), as NumPy's.
  /// A concrete bool mask is its nonzero() positions, as NumPy's; a traced
  /// one is refused (see maskedRead: the result's shape depends on the data).
  Ref get(const Index &index) const;
  /// a[index] = value: value broadcast and cast as NumPy's __setitem__. A
  /// traced mask takes a value that broadcasts against the read whatever its
  /// count (see MaskedRead::operand); see setMasked for f(a[mask]).
  void set(const Index &index, const Tensor &value);
  /// a[...] = value.
  void assign(const Tensor &value);
  /// NumPy's in-place ufunc `ufunc` (a += b, np.add(a, b, out=a)): `result`
  /// is cast by the `casting` rule (NumPy's names) and must broadcast to a's
  /// shape; otherwise NumPy's TypeError or ValueError. A `where` mask (it
  /// broadcasts to a's shape) writes only where it holds, as ufunc's where=.
  void update(const Tensor &result, const char *ufunc, std::string_view casting = "same_kind",
              const Tensor &where = {});
  /// a[mask] = value[mask] for `value` of a's shape (np.copyto's where=).
  void assignWhere(const Tensor &mask, const Tensor &value);
  /// a[index] for an index holding a traced bool mask (and basic items around
  /// it): a read whose count depends on the data, checked as NumPy's.
  MaskedRead maskedRead(const Index &index) const;
  /// a[index] = read, where the read is through the same mask (the same
  /// traced value, in the same place): `r[r > 1] = r[r > 1] ** 2`.
  void setMasked(const Index &index, const MaskedRead &read);

private:
  struct Buffer;
  Ref(std::shared_ptr<Buffer> buf, ViewSteps steps, Tensor value);
  /// A view one step further whose value the op that checked the step made.
  Ref viewAs(ViewStep step, Tensor value) const;
  /// A new buffer holding this array's value through `steps`.
  Ref copyOf(const ViewSteps &steps) const;
  Ref copyInOrder(const ViewSteps &steps, char order) const;
  std::shared_ptr<Buffer> buf_;
  ViewSteps steps_;
  mutable Tensor cache_;
  mutable int64_t seen_ = 0;
};

/// np.split, np.array_split, np.hsplit, np.vsplit and np.dsplit (`name`):
/// views of `x` along `axis` (hsplit, vsplit and dsplit pick theirs, with
/// NumPy's rank checks), in `sections` parts (equal ones for split, else
/// NumPy's ValueError; array_split's first n % sections one longer), or cut
/// at `indices` (Python's slice bounds: negative from the end, clamped).
std::vector<Ref> splitViews(const Ref &x, const std::string &name,
                            const std::variant<int64_t, std::vector<int64_t>> &spec,
                            int64_t axis = 0);

} // namespace tinymlir
