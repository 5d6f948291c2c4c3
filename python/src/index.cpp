// tinymlir._tinymlir.Ref: NumPy's indexing and writes for traced arrays, a thin
// layer over include/tinymlir/index.h. Python's index items become IndexItems
// here (ints, slices, None, Ellipsis, ranges, tensors); the rules are C++'s.
#include "binding.h"

#include <tinymlir/index.h>
#include <tinymlir/numpy.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <string>

namespace nb = nanobind;
using namespace nb::literals;

namespace tinymlir::python {
namespace {

/// A Python int as int64, saturated (a slice bound past int64 clamps as
/// Python's slice.indices does).
int64_t saturated(nb::handle h) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow)
    return overflow > 0 ? INT64_MAX : INT64_MIN;
  if (v == -1 && PyErr_Occurred())
    throw nb::python_error();
  return v;
}

std::optional<int64_t> slicePart(nb::handle h) {
  if (h.is_none())
    return std::nullopt;
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) {
    PyErr_Clear();
    throw nb::index_error("slice indices must be integers or None or have an __index__ method");
  }
  return saturated(i);
}

IndexItem toItem(nb::handle h) {
  if (nb::isinstance<Tensor>(h))
    return nb::cast<Tensor>(h);
  if (h.is_none())
    return NewAxis{};
  if (h.ptr() == Py_Ellipsis)
    return Ellipsis{};
  if (PySlice_Check(h.ptr())) {
    nb::object start = h.attr("start"), stop = h.attr("stop"), step = h.attr("step");
    if (nb::isinstance<Tensor>(start) || nb::isinstance<Tensor>(stop)) {
      // A traced bound: a span whose extent is known when the kernel runs.
      if (nb::isinstance<Tensor>(step) || slicePart(step).value_or(1) != 1)
        throw nb::index_error("tinymlir: a slice with traced bounds takes step 1 (x[i:j])");
      auto bound = [](nb::handle b) -> std::optional<Tensor> {
        if (b.is_none())
          return std::nullopt;
        if (nb::isinstance<Tensor>(b))
          return nb::cast<Tensor>(b);
        return weakInteger(*slicePart(b));
      };
      return TracedSlice{bound(start), bound(stop)};
    }
    return Slice{slicePart(start), slicePart(stop), slicePart(step)};
  }
  if (PyRange_Check(h.ptr()))
    return Range{saturated(h.attr("start")), saturated(h.attr("stop")), saturated(h.attr("step"))};
  if (!PyBool_Check(h.ptr()) && PyIndex_Check(h.ptr())) {
    nb::object i = nb::steal(PyNumber_Index(h.ptr()));
    if (!i.is_valid())
      throw nb::python_error();
    return saturated(i);
  }
  throw nb::index_error(("tinymlir cannot index a traced array with " +
                         std::string(nb::type_name(h.type()).c_str()) + " " + nb::repr(h).c_str() +
                         " (ints, slices, ranges, None, Ellipsis, a boolean mask, int arrays or a "
                         "traced int)")
                            .c_str());
}

Index toIndex(const nb::sequence &items) {
  Index index;
  for (nb::handle h : items)
    index.push_back(toItem(h));
  return index;
}

nb::tuple stepTuple(const ViewStep &s) {
  auto tuple = [](const std::vector<int64_t> &v) {
    nb::list l;
    for (int64_t k : v)
      l.append(k);
    return nb::tuple(l);
  };
  switch (s.kind) {
  case ViewStep::Kind::Flip:
    return nb::make_tuple("flip", tuple(s.a));
  case ViewStep::Kind::Slice:
    return nb::make_tuple("slice", tuple(s.a), tuple(s.b), tuple(s.c));
  case ViewStep::Kind::Reshape:
    return nb::make_tuple("reshape", tuple(s.a));
  case ViewStep::Kind::Transpose:
    return nb::make_tuple("transpose", tuple(s.a));
  case ViewStep::Kind::Broadcast:
    return nb::make_tuple("broadcast", tuple(s.a));
  case ViewStep::Kind::Diagonal:
    return nb::make_tuple("diagonal", tuple(s.a));
  case ViewStep::Kind::Real:
    return nb::make_tuple("real");
  case ViewStep::Kind::Imag:
    return nb::make_tuple("imag");
  case ViewStep::Kind::Window:
    return nb::make_tuple("window", tuple(s.a), tuple(s.b));
  case ViewStep::Kind::Bits:
    return nb::make_tuple("bits", dtypeName(static_cast<DType>(s.a[0])));
  }
  return nb::tuple();
}

} // namespace

void registerIndex(nb::module_ &m) {
  nb::enum_<IndexKind>(m, "IndexKind")
      .value("basic", IndexKind::Basic)
      .value("mask", IndexKind::Mask)
      .value("dynamic", IndexKind::Dynamic)
      .value("gather", IndexKind::Gather)
      .value("computed", IndexKind::Computed)
      .value("advanced", IndexKind::Advanced);

  m.def(
      "index_kind",
      [](const nb::sequence &items, int64_t rank) {
        const Index e = expandIndex(toIndex(items), rank);
        return indexKind(e);
      },
      "items"_a, "rank"_a, "What NumPy does with an index (its ellipsis expanded for `rank`).");
  m.def(
      "can_cast",
      [](const std::string &from, const std::string &to, const std::string &casting) {
        return canCast(parseDType(from), parseDType(to), castingNamed(casting));
      },
      "from_"_a, "to"_a, "casting"_a = "safe", "NumPy's np.can_cast of two dtypes.");
  m.def("broadcast_into", &broadcastInto, "t"_a, "shape"_a, "what"_a = "input array",
        "t broadcast to shape as NumPy's assignment does, or NumPy's ValueError.");

  nb::class_<Ref>(m, "Ref", "A writable traced array: a buffer with versions, and a view of it.")
      .def(nb::init<const Tensor &>(), "value"_a)
      .def(nb::init<const Tensor &, std::vector<int64_t>>(), "value"_a, "strides"_a,
           "An argument laid out with these element strides.")
      .def("value", &Ref::value, "The current value, read through the view.")
      .def("base", &Ref::base, "The buffer's current value.")
      .def_prop_ro("version", &Ref::version, "The number of writes to the buffer.")
      .def_prop_ro("buffer_id", &Ref::bufferId)
      .def("rebase", &Ref::rebase, "value"_a, "new_version"_a,
           "Replaces the buffer's value (every view reads it); a new version only with "
           "new_version (loops: their parameters before the body, results after).")
      .def("same_buffer", &Ref::sameBuffer, "other"_a)
      .def("shares_memory", &Ref::sharesMemory, "other"_a, "exact"_a)
      .def(
          "split",
          [](const Ref &r, const std::string &name, const nb::object &spec, int64_t axis) {
            if (nb::isinstance<nb::int_>(spec))
              return splitViews(r, name, nb::cast<int64_t>(spec), axis);
            return splitViews(r, name, nb::cast<std::vector<int64_t>>(spec), axis);
          },
          "name"_a, "spec"_a, "axis"_a = 0,
          "np.split and its kin: views in `spec` sections (an int) or cut at `spec` (a list).")
      .def("current", &Ref::current, "Whether this value was read after the last write.")
      .def_prop_ro("steps",
                   [](const Ref &r) {
                     nb::list l;
                     for (const ViewStep &s : r.steps())
                       l.append(stepTuple(s));
                     return nb::tuple(l);
                   })
      .def("contiguous", &Ref::contiguous)
      .def("set_shape", &Ref::setShape, "shape"_a)
      .def(
          "reshaped",
          [](const Ref &r, const Shape &shape, const std::string &order, std::optional<bool> copy) {
            return r.reshaped(shape, order, copy);
          },
          "shape"_a, "order"_a = "C", "copy"_a = nb::none(),
          "a.reshape(shape, order=, copy=): NumPy's view where strides allow, else a copy.")
      .def(
          "as_array",
          [](const Ref &r, const std::optional<std::string> &dtype, std::optional<bool> copy,
             const std::string &order, int64_t ndmin) {
            return r.asArray(dtype ? std::optional(parseDType(*dtype)) : std::nullopt, copy, order,
                             ndmin);
          },
          "dtype"_a.none(), "copy"_a.none(), "order"_a = "K", "ndmin"_a = 0,
          "np.array/np.asarray of it: None where NumPy gives the array itself.")
      .def(
          "raveled", [](const Ref &r, const std::string &order) { return r.raveled(order); },
          "order"_a = "C", "a.ravel(order=): a view where contiguous in that order, else a copy.")
      .def("transposed", &Ref::transposed, "axes"_a.none() = nb::none(),
           "a.transpose(axes): a view (none: the axes reversed).")
      .def(
          "flipped",
          [](const Ref &r, const Axes &axes, const std::string &name) {
            return r.flipped(axes, name);
          },
          "axes"_a.none(), "name"_a = "flip", "np.flip, np.fliplr or np.flipud: a view.")
      .def("rotated90", &Ref::rotated90, "k"_a, "axes"_a, "np.rot90: a view.")
      .def("broadcasted", &Ref::broadcasted, "shape"_a, "np.broadcast_to: a read-only view.")
      .def("windowed", &Ref::windowed, "window"_a, "axes"_a.none(),
           "sliding_window_view: a read-only view.")
      .def(
          "bits_as",
          [](const Ref &r, const std::string &dtype) { return r.bitsAs(parseDType(dtype)); },
          "dtype"_a, "a.view(dtype): the same bits as another dtype of the same size.")
      .def("read_only", &Ref::readOnly, "Whether NumPy's array would be read-only.")
      .def("part", &Ref::part, "imaginary"_a, "a.real, a.imag: views of a complex array's parts.")
      .def("diagonal_view", &Ref::diagonalView, "offset"_a, "axis1"_a, "axis2"_a,
           "np.diagonal: a read-only view.")
      .def("matrix_transposed", &Ref::matrixTransposed, "a.mT: the last two axes swapped.")
      .def(
          "whole", [](const Ref &r) { return r.view({}); }, "A view of all of it.")
      .def(
          "get", [](const Ref &r, const nb::sequence &items) { return r.get(toIndex(items)); },
          "items"_a)
      .def(
          "set",
          [](Ref &r, const nb::sequence &items, const Tensor &value) {
            r.set(toIndex(items), value);
          },
          "items"_a, "value"_a)
      .def("assign", &Ref::assign, "value"_a)
      .def(
          "update",
          [](Ref &r, const Tensor &result, const std::string &ufunc, const std::string &casting,
             std::optional<Tensor> where) {
            r.update(result, ufunc.c_str(), casting, where.value_or(Tensor()));
          },
          "result"_a, "ufunc"_a, "casting"_a = "same_kind", "where"_a.none() = nb::none(),
          "NumPy's ufunc into this array (out=): cast by `casting`, where `where` holds.")
      .def(
          "masked_read",
          [](const Ref &r, const nb::sequence &items) { return r.maskedRead(toIndex(items)); },
          "items"_a, "x[mask]: a read whose count depends on the data.")
      .def(
          "set_masked",
          [](Ref &r, const nb::sequence &items, const MaskedRead &read) {
            r.setMasked(toIndex(items), read);
          },
          "items"_a, "read"_a, "x[mask] = f(x[mask]) through the same mask.");

  nb::class_<MaskedRead>(m, "MaskedRead",
                         "x[mask] while tracing (index.h): the whole array and the mask.")
      .def_prop_ro("full", &MaskedRead::full)
      .def_prop_ro("ndim", &MaskedRead::rank)
      .def_prop_ro("shape_text", &MaskedRead::shapeText)
      .def("size", &MaskedRead::size)
      .def("operand", nb::overload_cast<const MaskedRead &>(&MaskedRead::operand, nb::const_),
           "other"_a)
      .def("operand", nb::overload_cast<const Tensor &>(&MaskedRead::operand, nb::const_),
           "other"_a)
      .def("with_full", &MaskedRead::with, "full"_a)
      .def(
          "reduce",
          [](const MaskedRead &r, const std::string &name, const Axes &axis, bool keepdims,
             const std::optional<std::string> &dtype, std::optional<Tensor> where,
             std::optional<Tensor> initial, double ddof, std::optional<double> correction) {
            return r.reduce(name, axis, keepdims,
                            Reduction{dtype ? std::optional(parseDType(*dtype)) : std::nullopt,
                                      where.value_or(Tensor()), initial.value_or(Tensor()), ddof,
                                      correction});
          },
          "name"_a, "axis"_a.none() = nb::none(), "keepdims"_a = false,
          "dtype"_a.none() = nb::none(), "where"_a.none() = nb::none(),
          "initial"_a.none() = nb::none(), "ddof"_a = 0.0, "correction"_a.none() = nb::none(),
          "NumPy's reduction `name` of the read: an array, or a read where the count's axis "
          "stays.");
}

} // namespace tinymlir::python
