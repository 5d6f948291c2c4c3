// Loops for Python's converter (python/tinymlir/_loops.py): tensor.h's
// LoopBuilder, held so that an abandoned body (a loop that falls back to
// Python's) ends its region at once, not when the garbage collector runs.
#include "binding.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <tinymlir/tensor.h>

#include <memory>

namespace nb = nanobind;
using namespace nb::literals;

namespace tinymlir::python {
namespace {

struct PyLoop {
  std::unique_ptr<LoopBuilder> loop;
  LoopBuilder &get() {
    if (!loop)
      throw nb::value_error("[loop] this loop was finished or abandoned");
    return *loop;
  }
};

} // namespace

void registerLoops(nb::module_ &m) {
  nb::class_<PyLoop>(m, "LoopBuilder",
                     "A loop being traced (tensor.h's LoopBuilder): trace the body on index and "
                     "params, then finish(yields), or abandon().")
      .def(
          "__init__",
          [](PyLoop *self, const Tensor &start, const Tensor &stop, const Tensor &step,
             std::vector<Tensor> inits) {
            new (self) PyLoop{std::make_unique<LoopBuilder>(start, stop, step, std::move(inits))};
          },
          "start"_a, "stop"_a, "step"_a, "inits"_a)
      .def_prop_ro("index", [](PyLoop &l) { return l.get().index(); })
      .def_prop_ro("params", [](PyLoop &l) { return l.get().params(); })
      .def(
          "joined_dtypes",
          [](PyLoop &l, const std::vector<Tensor> &yields) {
            std::vector<std::optional<std::string>> out;
            for (const std::optional<DType> &d : l.get().joinedDTypes(yields))
              out.push_back(d ? std::optional<std::string>(dtypeName(*d)) : std::nullopt);
            return out;
          },
          "yields"_a, "For each carried value, the joined dtype where its yield's differs.")
      .def(
          "finish",
          [](PyLoop &l, const std::vector<Tensor> &yields) {
            std::vector<Tensor> out = l.get().finish(yields);
            l.loop.reset();
            return out;
          },
          "yields"_a, "Ends the body; the values after the loop.")
      .def(
          "abandon", [](PyLoop &l) { l.loop.reset(); },
          "Ends the body without a loop (its nodes are dropped).");
}

} // namespace tinymlir::python
