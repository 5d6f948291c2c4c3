// Row kernels (ops.def's Sort ... SearchSorted): what compiled code calls for
// an operation along the last axis of a 2-D array, one row after another.
//
// Each array comes as MLIR's expanded memref descriptor (the builder's
// emitRowCall): allocated and aligned pointers, offset, two sizes, two strides,
// all in elements. Results are fresh contiguous buffers. NumPy's orders: nan
// after every number; sorts stable; accumulations sequential, in the result's
// dtype (float16 rounded at each step, as NumPy's add.accumulate).
#include "runtime/Rows.h"

#include <tinymlir/array.h>

#include <hwy/contrib/sort/vqsort.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {
using tinymlir::detail::Rows;

template <class T> constexpr bool kComplex = false;
template <class T> constexpr bool kComplex<std::complex<T>> = true;

template <class T> bool isNan(T v) {
  if constexpr (kComplex<T>)
    return isNan(v.real()) || isNan(v.imag());
  else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, _Float16>)
    return v != v;
  else
    return false;
}

/// NumPy's sort order: a < b, with nan after everything. Complex numbers
/// compare lexicographically, in NumPy's extended order R + Rj < R + nanj <
/// nan + Rj < nan + nanj (npysort's complex `less`).
template <class T> bool before(T a, T b) {
  if constexpr (kComplex<T>) {
    const auto ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
    if (ar < br)
      return ai == ai || bi != bi;
    if (ar > br)
      return bi != bi && ai == ai;
    if (ar == br || (ar != ar && br != br))
      return ai < bi || (bi != bi && ai == ai);
    return br != br;
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, _Float16>) {
    return a < b || (b != b && a == a);
  } else {
    return a < b;
  }
}

/// a < b for numbers (no nan): lexicographic for complex ones.
template <class T> bool less(T a, T b) {
  if constexpr (kComplex<T>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  else
    return a < b;
}

/// The dtypes Highway's vectorized quicksort (vqsort) sorts: 16-, 32- and
/// 64-bit integers and floats. The others (bool, 8-bit, float16, complex)
/// go through std::sort with NumPy's order.
template <class T>
constexpr bool kVectorSort =
    std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, int32_t> || std::is_same_v<T, int16_t> || std::is_same_v<T, uint64_t> ||
    std::is_same_v<T, uint32_t> || std::is_same_v<T, uint16_t>;

/// A float's bits as an unsigned key in its order (-0.0 before 0.0): the
/// sign folded in. keyBits undoes it.
inline uint64_t bitsKey(double v) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  return bits >> 63 ? ~bits : bits | (uint64_t{1} << 63);
}
inline double keyBits(uint64_t key) {
  return std::bit_cast<double>(key >> 63 ? key ^ (uint64_t{1} << 63) : ~key);
}

/// An unsigned key in NumPy's sort order: a float's bitsKey with -0.0 as 0.0
/// (NumPy finds them equal) and every nan one key after inf; an integer with
/// its sign bit flipped.
template <class T> uint64_t orderKey(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v ? ~uint64_t{0} - 1 : bitsKey(static_cast<double>(v) + 0.0); // -0.0 + 0.0: 0.0
  else if constexpr (std::is_signed_v<T>)
    return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ (uint64_t{1} << 63);
  else
    return static_cast<uint64_t>(v);
}

/// Row i's positions in stable sorted order. vqsort's types: (key, position)
/// pairs as 128-bit numbers, sorted (ties by position: stable). Others:
/// (value, position) pairs by std::sort with ties broken by position
/// (std::stable_sort's temporary buffer is deprecated in C++20's libstdc++).
template <class T> void stableOrder(const Rows<T> &in, int64_t i, std::vector<int64_t> &order) {
  const auto n = static_cast<size_t>(in.columns);
  order.resize(n);
  if constexpr (kVectorSort<T>) {
    std::vector<hwy::uint128_t> keyed(n);
    for (size_t j = 0; j < n; ++j)
      keyed[j] = {static_cast<uint64_t>(j), orderKey(in(i, static_cast<int64_t>(j)))};
    const hwy::Sorter sorter;
    sorter(keyed.data(), n, hwy::SortAscending());
    for (size_t j = 0; j < n; ++j)
      order[j] = static_cast<int64_t>(keyed[j].lo);
  } else {
    std::vector<std::pair<T, int64_t>> keyed(n);
    for (size_t j = 0; j < n; ++j)
      keyed[j] = {in(i, static_cast<int64_t>(j)), static_cast<int64_t>(j)};
    std::sort(keyed.begin(), keyed.end(), [](const auto &x, const auto &y) {
      return before(x.first, y.first) || (!before(y.first, x.first) && x.second < y.second);
    });
    for (size_t j = 0; j < n; ++j)
      order[j] = keyed[j].second;
  }
}

/// Rows sorted by value. Equal numbers are alike, so the sort need not be
/// stable, and sorts the values themselves by vqsort, nans moved to the end
/// (30,000 float64: 0.16 ms; a sort of positions took 2.2, NumPy's AVX-512
/// sort 0.1), or by std::sort.
template <class T> void sortRows(Rows<T> in, Rows<T> out) {
  std::vector<T> row(static_cast<size_t>(in.columns));
  std::vector<uint64_t> keys;
  const hwy::Sorter sorter;
  for (int64_t i = 0; i < in.rows; ++i) {
    for (int64_t j = 0; j < in.columns; ++j)
      row[static_cast<size_t>(j)] = in(i, j);
    if constexpr (std::is_floating_point_v<T>) {
      // The numbers' bitsKeys, sorted and turned back; nans after them. (Highway
      // 1.0.3's own float sort returned the largest finite value for inf.)
      auto numbers = std::partition(row.begin(), row.end(), [](T v) { return !isNan(v); });
      keys.resize(static_cast<size_t>(numbers - row.begin()));
      for (size_t j = 0; j < keys.size(); ++j)
        keys[j] = bitsKey(static_cast<double>(row[j]));
      sorter(keys.data(), keys.size(), hwy::SortAscending());
      for (size_t j = 0; j < keys.size(); ++j)
        row[j] = static_cast<T>(keyBits(keys[j]));
    } else if constexpr (kVectorSort<T>) {
      sorter(row.data(), row.size(), hwy::SortAscending());
    } else {
      std::sort(row.begin(), row.end(), [](T a, T b) { return before(a, b); });
    }
    for (int64_t j = 0; j < in.columns; ++j)
      out(i, j) = row[static_cast<size_t>(j)];
  }
}

template <class T> void argsortRows(Rows<T> in, Rows<int64_t> out) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < in.rows; ++i) {
    stableOrder(in, i, order);
    for (int64_t j = 0; j < in.columns; ++j)
      out(i, j) = order[static_cast<size_t>(j)];
  }
}

/// NumPy's complex product: (ar br - ai bi, ar bi + ai br), no inf recovery.
template <class T> T times(T a, T b) {
  if constexpr (kComplex<T>)
    return T(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
  else
    return static_cast<T>(a * b);
}

template <class T> void accumulateRows(Rows<T> in, Rows<T> out, bool product) {
  for (int64_t i = 0; i < in.rows; ++i) {
    T acc = in(i, 0);
    out(i, 0) = acc;
    for (int64_t j = 1; j < in.columns; ++j) {
      acc = product ? times(acc, in(i, j)) : static_cast<T>(acc + in(i, j)); // rounded each step
      out(i, j) = acc;
    }
  }
}

/// maximum.accumulate (`largest`) and minimum.accumulate: the running
/// extreme, the first nan from where it is on, as np.maximum propagates it.
template <class T> void runningExtremeRows(Rows<T> in, Rows<T> out, bool largest) {
  for (int64_t i = 0; i < in.rows; ++i) {
    T acc = in(i, 0);
    out(i, 0) = acc;
    for (int64_t j = 1; j < in.columns; ++j) {
      const T v = in(i, j);
      if (!isNan(acc) && (isNan(v) || (largest ? less(acc, v) : less(v, acc))))
        acc = v;
      out(i, j) = acc;
    }
  }
}

template <class T> void extremeRows(Rows<T> in, Rows<int64_t> out, bool largest) {
  for (int64_t i = 0; i < in.rows; ++i) {
    int64_t best = 0;
    T value = in(i, 0);
    for (int64_t j = 1; j < in.columns && !isNan(value); ++j) {
      T v = in(i, j);
      if (isNan(v) || (largest ? less(value, v) : less(v, value))) {
        best = j;
        value = v;
      }
    }
    out(i, 0) = best;
  }
}

/// Element counts from which a row kernel's independent steps run on the
/// OpenMP team (below, a fork costs more than it saves).
constexpr int64_t kParallelElements = 1 << 15;

/// Binary searches in NumPy's order (nan last): the first position where v
/// could go (left), or the last (right).
template <class T> void searchRows(Rows<T> sorted, Rows<T> values, Rows<int64_t> out, bool right) {
  std::vector<T> row(static_cast<size_t>(sorted.columns));
  for (int64_t j = 0; j < sorted.columns; ++j)
    row[static_cast<size_t>(j)] = sorted(0, j);
  // Independent searches: over the OpenMP team when there are many.
#pragma omp parallel for schedule(static) if (values.columns >= kParallelElements)
  for (int64_t j = 0; j < values.columns; ++j) {
    // std::upper_bound / lower_bound without branches on the data (the
    // step is a conditional move): the histogram's searches of values among
    // a few dozen edges are bound by branch misses otherwise.
    const T v = values(0, j);
    size_t lo = 0, n = row.size();
    while (n > 0) {
      const size_t half = n / 2;
      const T &x = row[lo + half];
      const bool after = right ? !before<T>(v, x) : before<T>(x, v);
      lo = after ? lo + half + 1 : lo;
      n = after ? n - half - 1 : half;
    }
    out(0, j) = static_cast<int64_t>(lo);
  }
}

/// A position along an axis of `size`, NumPy's way: negative ones count from
/// the end; -1 if out of range.
int64_t wrappedPosition(int64_t i, int64_t size) {
  const int64_t p = i < 0 ? i + size : i;
  return p >= 0 && p < size ? p : -1;
}

/// The same, with an out-of-range one NumPy's IndexError (reported, then -1).
int64_t position(int64_t i, int64_t size) {
  const int64_t p = wrappedPosition(i, size);
  if (p < 0) {
    tinymlir::detail::reportKernelError(tinymlir::ErrorKind::Index,
                                        "index " + std::to_string(i) +
                                            " is out of bounds for axis 0 with size " +
                                            std::to_string(size));
    return -1;
  }
  return p;
}

/// Compiled code's report of a traced position out of range (MLIRGen's
/// tracedOffsets): NumPy's IndexError, raised after the kernel.
extern "C" void tinymlir_index_error(int64_t position, int64_t axis, int64_t size) {
  tinymlir::detail::reportKernelError(tinymlir::ErrorKind::Index,
                                      "index " + std::to_string(position) +
                                          " is out of bounds for axis " + std::to_string(axis) +
                                          " with size " + std::to_string(size));
}

template <class T> void takeRows(Rows<T> table, Rows<int64_t> ids, Rows<T> out) {
  // Rows copied over the OpenMP team when there are many elements. Errors
  // are thread-local (reportKernelError): the first id out of range is
  // found on the team, then reported on this thread.
  std::atomic<int64_t> firstBad{ids.columns};
#pragma omp parallel for schedule(static) if (ids.columns * table.columns >= kParallelElements)
  for (int64_t j = 0; j < ids.columns; ++j) {
    const int64_t r = wrappedPosition(ids(0, j), table.rows);
    if (r < 0) {
      int64_t seen = firstBad.load();
      while (j < seen && !firstBad.compare_exchange_weak(seen, j)) {
      }
    }
    for (int64_t k = 0; k < table.columns; ++k)
      out(j, k) = r < 0 ? T{} : table(r, k);
  }
  if (const int64_t j = firstBad.load(); j < ids.columns)
    position(ids(0, j), table.rows); // reports NumPy's IndexError
}

/// What ufunc.at's `mode` (ops.def's Put: 0 assigns, then add, subtract,
/// multiply, maximum, minimum) makes of an entry `a` and a value `b`:
/// NumPy's loops (integers wrap; bools or, and; maximum and minimum carry a
/// nan).
template <class T> T combine(int64_t mode, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return mode == 1 || mode == 4 ? a || b : mode == 3 || mode == 5 ? a && b : b;
  } else if constexpr (std::is_integral_v<T>) {
    const auto x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    switch (mode) {
    case 1:
      return static_cast<T>(x + y);
    case 2:
      return static_cast<T>(x - y);
    case 3:
      return static_cast<T>(x * y);
    case 4:
      return std::max(a, b);
    case 5:
      return std::min(a, b);
    default:
      return b;
    }
  } else {
    switch (mode) {
    case 1:
      return a + b;
    case 2:
      return a - b;
    case 3:
      return a * b;
    default:
      break;
    }
    if constexpr (!kComplex<T>) {
      if (mode == 4)
        return a >= b || a != a ? a : b;
      if (mode == 5)
        return a <= b || a != a ? a : b;
    }
    return b;
  }
}

/// table with table[ids] = values (mode 0), or ufunc.at's table[id] =
/// f(table[id], value) for each id in order (repeats apply again).
template <class T>
void putRows(Rows<T> table, Rows<int64_t> ids, Rows<T> values, Rows<T> out, int64_t mode) {
  for (int64_t i = 0; i < table.rows; ++i)
    for (int64_t k = 0; k < table.columns; ++k)
      out(i, k) = table(i, k);
  for (int64_t j = 0; j < ids.columns; ++j) {
    const int64_t r = position(ids(0, j), table.rows);
    if (r >= 0)
      for (int64_t k = 0; k < table.columns; ++k)
        out(r, k) = combine(mode, out(r, k), values(j, k));
  }
}

/// Counts (or weight sums) of ids in [0, out.columns).
template <class W> void countRows(Rows<int64_t> ids, const Rows<W> *weights, Rows<W> out) {
  for (int64_t k = 0; k < out.columns; ++k)
    out(0, k) = W(0);
  for (int64_t j = 0; j < ids.columns; ++j) {
    const int64_t id = ids(0, j);
    if (id < 0) {
      tinymlir::detail::reportKernelError(tinymlir::ErrorKind::Value,
                                          "'list' argument must have no negative elements");
      return;
    }
    if (id >= out.columns) {
      tinymlir::detail::reportKernelError(
          tinymlir::ErrorKind::Value,
          "[bincount] id " + std::to_string(id) + " is at or past minlength " +
              std::to_string(out.columns) +
              " (NumPy's result would be longer, which a compiled shape cannot be): raise "
              "minlength");
      return;
    }
    out(0, id) += weights ? (*weights)(0, j) : W(1);
  }
}

/// Values passed through once each is at least `bound`; the first below it
/// is reported with `reason`'s message (ops.def's Require).
void requireAtLeast(Rows<int64_t> values, Rows<int64_t> out, int64_t bound, int64_t reason) {
  for (int64_t i = 0; i < values.rows; ++i)
    for (int64_t j = 0; j < values.columns; ++j) {
      const int64_t v = values(i, j);
      out(i, j) = v;
      if (v >= bound)
        continue;
      static const char *const kMessages[] = {
          "Integers to negative integer powers are not allowed.",
          nullptr, // lstsq: below
          "bins must be monotonically increasing or decreasing",
          "All-NaN slice encountered",
          "zero-size array to reduction operation maximum which has no identity",
          "zero-size array to reduction operation minimum which has no identity",
          "Cannot insert from an empty array!",
          "index out of bounds: an index is outside its array (unravel_index) or an entry "
          "outside its dimension (ravel_multi_index: invalid entry in coordinates array)"};
      const std::string message =
          reason == 1 ? "[lstsq] the matrix's rank is " + std::to_string(v) + ", below its " +
                            std::to_string(bound) +
                            " columns: NumPy's residuals would then be empty, a shape that "
                            "depends on the data (compute them from the solution instead)"
                      : kMessages[reason];
      tinymlir::detail::reportKernelError(tinymlir::ErrorKind::Value, message);
      return;
    }
}

} // namespace

extern "C" void tinymlir_require_int64(TINYMLIR_ROWS(int64_t, values), TINYMLIR_ROWS(int64_t, out),
                                       int64_t flag) {
  // flag: bound * 8 + reason (frontend/Graph.h's kRequireReasons)
  requireAtLeast(TINYMLIR_ROWS_OF(int64_t, values), TINYMLIR_ROWS_OF(int64_t, out), flag / 8,
                 flag % 8);
}
extern "C" void tinymlir_bincount_int64(TINYMLIR_ROWS(int64_t, ids), TINYMLIR_ROWS(int64_t, out),
                                        int64_t) {
  countRows<int64_t>(TINYMLIR_ROWS_OF(int64_t, ids), nullptr, TINYMLIR_ROWS_OF(int64_t, out));
}
extern "C" void tinymlir_bincount_weighted_int64(TINYMLIR_ROWS(int64_t, ids),
                                                 TINYMLIR_ROWS(double, w),
                                                 TINYMLIR_ROWS(double, out), int64_t) {
  auto weights = TINYMLIR_ROWS_OF(double, w);
  countRows<double>(TINYMLIR_ROWS_OF(int64_t, ids), &weights, TINYMLIR_ROWS_OF(double, out));
}

// The C entry points, one per op and dtype (dtypes.def's C types).
#define TINYMLIR_ORDER_KERNELS(Name, T)                                                            \
  extern "C" void tinymlir_sort_##Name(TINYMLIR_ROWS(T, in), TINYMLIR_ROWS(T, out), int64_t) {     \
    sortRows(TINYMLIR_ROWS_OF(T, in), TINYMLIR_ROWS_OF(T, out));                                   \
  }                                                                                                \
  extern "C" void tinymlir_argsort_##Name(TINYMLIR_ROWS(T, in), TINYMLIR_ROWS(int64_t, out),       \
                                          int64_t) {                                               \
    argsortRows(TINYMLIR_ROWS_OF(T, in), TINYMLIR_ROWS_OF(int64_t, out));                          \
  }                                                                                                \
  extern "C" void tinymlir_argmax_##Name(TINYMLIR_ROWS(T, in), TINYMLIR_ROWS(int64_t, out),        \
                                         int64_t) {                                                \
    extremeRows(TINYMLIR_ROWS_OF(T, in), TINYMLIR_ROWS_OF(int64_t, out), true);                    \
  }                                                                                                \
  extern "C" void tinymlir_argmin_##Name(TINYMLIR_ROWS(T, in), TINYMLIR_ROWS(int64_t, out),        \
                                         int64_t) {                                                \
    extremeRows(TINYMLIR_ROWS_OF(T, in), TINYMLIR_ROWS_OF(int64_t, out), false);                   \
  }                                                                                                \
  extern "C" void tinymlir_searchsorted_##Name(TINYMLIR_ROWS(T, a), TINYMLIR_ROWS(T, v),           \
                                               TINYMLIR_ROWS(int64_t, out), int64_t right) {       \
    searchRows(TINYMLIR_ROWS_OF(T, a), TINYMLIR_ROWS_OF(T, v), TINYMLIR_ROWS_OF(int64_t, out),     \
               right != 0);                                                                        \
  }
#define TINYMLIR_MOVE_KERNELS(Name, T)                                                             \
  extern "C" void tinymlir_take_##Name(TINYMLIR_ROWS(T, table), TINYMLIR_ROWS(int64_t, ids),       \
                                       TINYMLIR_ROWS(T, out), int64_t) {                           \
    takeRows(TINYMLIR_ROWS_OF(T, table), TINYMLIR_ROWS_OF(int64_t, ids),                           \
             TINYMLIR_ROWS_OF(T, out));                                                            \
  }                                                                                                \
  extern "C" void tinymlir_put_##Name(TINYMLIR_ROWS(T, table), TINYMLIR_ROWS(int64_t, ids),        \
                                      TINYMLIR_ROWS(T, values), TINYMLIR_ROWS(T, out),             \
                                      int64_t mode) {                                              \
    putRows(TINYMLIR_ROWS_OF(T, table), TINYMLIR_ROWS_OF(int64_t, ids),                            \
            TINYMLIR_ROWS_OF(T, values), TINYMLIR_ROWS_OF(T, out), mode);                          \
  }
#define TINYMLIR_ACCUMULATE_KERNELS(Name, T)                                                       \
  extern "C" void tinymlir_cumsum_##Name(TINYMLIR_ROWS(T, in), TINYMLIR_ROWS(T, out), int64_t) {   \
    accumulateRows(TINYMLIR_ROWS_OF(T, in), TINYMLIR_ROWS_OF(T, out), false);                      \
  }                                                                                                \
  extern "C" void tinymlir_cumprod_##Name(TINYMLIR_ROWS(T, in), TINYMLIR_ROWS(T, out), int64_t) {  \
    accumulateRows(TINYMLIR_ROWS_OF(T, in), TINYMLIR_ROWS_OF(T, out), true);                       \
  }                                                                                                \
  extern "C" void tinymlir_cummax_##Name(TINYMLIR_ROWS(T, in), TINYMLIR_ROWS(T, out), int64_t) {   \
    runningExtremeRows(TINYMLIR_ROWS_OF(T, in), TINYMLIR_ROWS_OF(T, out), true);                   \
  }                                                                                                \
  extern "C" void tinymlir_cummin_##Name(TINYMLIR_ROWS(T, in), TINYMLIR_ROWS(T, out), int64_t) {   \
    runningExtremeRows(TINYMLIR_ROWS_OF(T, in), TINYMLIR_ROWS_OF(T, out), false);                  \
  }

// Every dtype: complex numbers sort and compare in NumPy's lexicographic order.
#define TINYMLIR_DTYPE(Name, name, descr, bytes, Kind, CType)                                      \
  TINYMLIR_ORDER_KERNELS(Name, CType)                                                              \
  TINYMLIR_ACCUMULATE_KERNELS(Name, CType) TINYMLIR_MOVE_KERNELS(Name, CType)
#include <tinymlir/dtypes.def>

tinymlir::detail::RuntimeSymbols tinymlir::detail::rowRuntimeSymbols() {
  RuntimeSymbols out{symbol("tinymlir_index_error", &tinymlir_index_error),
                     symbol("tinymlir_poll", &tinymlir_poll),
                     symbol("tinymlir_require_int64", &tinymlir_require_int64),
                     symbol("tinymlir_bincount_int64", &tinymlir_bincount_int64),
                     symbol("tinymlir_bincount_weighted_int64", &tinymlir_bincount_weighted_int64)};
#define TINYMLIR_SYMBOL(op, Name, name)                                                            \
  out.push_back(symbol("tinymlir_" #op "_" name, &tinymlir_##op##_##Name));
#define TINYMLIR_DTYPE(Name, name, descr, bytes, Kind, CType)                                      \
  TINYMLIR_SYMBOL(sort, Name, name)                                                                \
  TINYMLIR_SYMBOL(argsort, Name, name)                                                             \
  TINYMLIR_SYMBOL(argmax, Name, name)                                                              \
  TINYMLIR_SYMBOL(argmin, Name, name)                                                              \
  TINYMLIR_SYMBOL(searchsorted, Name, name)                                                        \
  TINYMLIR_SYMBOL(cumsum, Name, name)                                                              \
  TINYMLIR_SYMBOL(cumprod, Name, name)                                                             \
  TINYMLIR_SYMBOL(cummax, Name, name)                                                              \
  TINYMLIR_SYMBOL(cummin, Name, name)                                                              \
  TINYMLIR_SYMBOL(take, Name, name)                                                                \
  TINYMLIR_SYMBOL(put, Name, name)
#include <tinymlir/dtypes.def>
  return out;
}
