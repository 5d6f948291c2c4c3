// tinymlir-emit's examples: programs built on placeholders, by name. The
// compiler's own are in tinymlir-emit.cpp; GPT-2's kernels and blocks are added
// by tools/gpt2/EmitExamples.cpp in builds with the models.
#pragma once

#include <tinymlir/tensor.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tinymlir::emit {

struct Example {
  std::string description;
  /// Builds the program: (input shapes, dtype, heads, placeholders made) -> result.
  std::function<Tensor(const std::vector<Shape> &, DType, int64_t, std::vector<Tensor> &)> build;
  std::vector<Shape> defaultShapes;
  /// The input the result updates in place (Jit::into that argument), or -1.
  int donated = -1;
};
using Examples = std::map<std::string, Example>;

/// A new placeholder (the next input) of `shape` and `dtype`.
inline Tensor arg(std::vector<Tensor> &args, const Shape &shape, DType dtype) {
  args.push_back(detail::placeholder(static_cast<int64_t>(args.size()), shape, dtype));
  return args.back();
}

inline const Shape &shapeAt(const std::vector<Shape> &shapes, size_t i) { return shapes.at(i); }

/// GPT-2's kernels and blocks (gelu, softmax, layer_norm, attention, attend,
/// feedforward), from lib/models: tools/gpt2/EmitExamples.cpp, linked in
/// builds with the models (TINYMLIR_WITH_MODELS).
void addGpt2Examples(Examples &examples);

} // namespace tinymlir::emit
