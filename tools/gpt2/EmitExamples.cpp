// tinymlir-emit's examples of GPT-2's kernels (lib/models/nn) and blocks
// (lib/models/gpt2), in builds with the models; their stage tests are
// test/gpt2/lit.
#include "EmitExamples.h"
#include "models/gpt2/Model.h"
#include "models/nn/Kernels.h"

namespace tinymlir::emit {

void addGpt2Examples(Examples &m) {
  m["gelu"] = {"GELU, tanh form (float64 result, as in the reference)",
               [](auto &s, DType d, int64_t, auto &a) { return gelu(arg(a, shapeAt(s, 0), d)); },
               {{4, 8}}};
  m["softmax"] = {
      "softmax over the last axis",
      [](auto &s, DType d, int64_t, auto &a) { return softmax(arg(a, shapeAt(s, 0), d)); },
      {{4, 8}}};
  m["layer_norm"] = {"layer normalization over the last axis, eps 1e-5",
                     [](auto &s, DType d, int64_t, auto &a) {
                       Tensor x = arg(a, shapeAt(s, 0), d);
                       Shape c{shapeAt(s, 0).back()};
                       return layerNorm(x, arg(a, c, d), arg(a, c, d));
                     },
                     {{4, 8}}};
  m["attention"] = {"causal multi-head attention (packed QKV), x: (T, C)",
                    [](auto &s, DType d, int64_t heads, auto &a) {
                      const Shape &x = shapeAt(s, 0);
                      int64_t C = x.back();
                      Tensor in = arg(a, x, d);
                      LinearParams qkv{arg(a, {C, 3 * C}, d), arg(a, {3 * C}, d)};
                      LinearParams out{arg(a, {C, C}, d), arg(a, {C}, d)};
                      return attention(in, qkv, out, heads);
                    },
                    {{16, 768}}};
  auto block = [](bool attendBlock) {
    return [attendBlock](auto &s, DType d, int64_t heads, auto &a) {
      const Shape &x = shapeAt(s, 0);
      int64_t C = x.back();
      Tensor in = arg(a, x, d);
      LayerNormParams ln{arg(a, {C}, d), arg(a, {C}, d)};
      if (attendBlock) {
        LinearParams qkv{arg(a, {C, 3 * C}, d), arg(a, {3 * C}, d)};
        LinearParams out{arg(a, {C, C}, d), arg(a, {C}, d)};
        return gpt2::attend(in, ln, qkv, out, heads);
      }
      LinearParams up{arg(a, {C, 4 * C}, d), arg(a, {4 * C}, d)};
      LinearParams down{arg(a, {4 * C, C}, d), arg(a, {C}, d)};
      return gpt2::feedforward(in, ln, up, down);
    };
  };
  m["attend"] = {"x + attention(layer_norm(x)), x: (T, C)", block(true), {{16, 768}}};
  m["feedforward"] = {"x + mlp(layer_norm(x)), x: (T, C)", block(false), {{16, 768}}};
}

} // namespace tinymlir::emit
