// tinymlir-emit: prints a named example program at a chosen compiler stage.
//
//   tinymlir-emit gelu --shape 4,8 --dtype float32 --stage optimized
//   tinymlir-emit matmul --gpu --stage ptx
//   tinymlir-emit --print-pipeline     (module -> lowered, for tinymlir-opt --pass-pipeline)
#ifdef TINYMLIR_WITH_MODELS
#include "models/gpt2/Model.h"
#endif
#include "passes/Passes.h"

#include <tinymlir/tinymlir.h>

#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <map>
#include <sstream>

using namespace tinymlir;

namespace {

Shape parseShape(const std::string &text) {
  Shape shape;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty())
      shape.push_back(std::stoll(item));
  return shape;
}

DType parseDType(const std::string &name) {
  if (name == "float32" || name == "f32")
    return DType::f32;
  if (name == "float64" || name == "f64")
    return DType::f64;
  if (name == "int32" || name == "i32")
    return DType::i32;
  throw Error("[emit] unknown dtype '" + name + "' (float32, float64, int32)");
}

struct Example {
  std::string description;
  /// Builds the program: (inputs, their placeholders) -> result.
  std::function<Tensor(const std::vector<Shape> &, DType, int64_t, std::vector<Tensor> &)> build;
  std::vector<Shape> defaultShapes;
  /// The input the result updates in place (Jit::into that argument), or -1.
  int donated = -1;
};

Tensor arg(std::vector<Tensor> &args, const Shape &shape, DType dtype) {
  args.push_back(detail::placeholder(static_cast<int64_t>(args.size()), shape, dtype));
  return args.back();
}

const Shape &shapeAt(const std::vector<Shape> &shapes, size_t i) { return shapes.at(i); }

std::map<std::string, Example> examples() {
  std::map<std::string, Example> m;
  m["affine"] = {"(x * gain + bias) * 0.5",
                 [](auto &s, DType d, int64_t, auto &a) {
                   Tensor x = arg(a, shapeAt(s, 0), d);
                   Tensor g = arg(a, {shapeAt(s, 0).back()}, d);
                   Tensor b = arg(a, {shapeAt(s, 0).back()}, d);
                   return (x * g + b) * 0.5;
                 },
                 {{16, 8}}};
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
  m["matmul"] = {"a @ b",
                 [](auto &s, DType d, int64_t, auto &a) {
                   Tensor x = arg(a, shapeAt(s, 0), d);
                   return matmul(x, arg(a, shapeAt(s, 1), d));
                 },
                 {{16, 768}, {768, 2304}}};
#ifdef TINYMLIR_WITH_MODELS // GPT-2's blocks, from the model (lib/models/gpt2)
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
#endif
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
#ifdef TINYMLIR_WITH_MODELS
  m["attend"] = {"x + attention(layer_norm(x)), x: (T, C)", block(true), {{16, 768}}};
#endif
  m["cache_write"] = {"keys[slots, :, :, positions] = k, in place: keys (S, H, D, P), k (R, H, D)",
                      [](auto &s, DType d, int64_t, auto &a) {
                        const Shape &keys = shapeAt(s, 0);
                        Tensor cache = arg(a, keys, d);
                        Tensor k = arg(a, shapeAt(s, 1), d);
                        Tensor slots = arg(a, {k.dim(0)}, DType::i32);
                        Tensor positions = arg(a, {k.dim(0)}, DType::i32);
                        return indexPut(cache, {slots, std::nullopt, std::nullopt, positions}, k);
                      },
                      {{4, 12, 64, 128}, {2, 12, 64}},
                      /*donated=*/0};
#ifdef TINYMLIR_WITH_MODELS
  m["feedforward"] = {"x + mlp(layer_norm(x)), x: (T, C)", block(false), {{16, 768}}};
#endif
  return m;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Print a tinymlir example program at a compiler stage."};
  std::string name, stage = "module", dtypeName = "float32";
  std::vector<std::string> shapes;
  int64_t heads = 12;
  bool list = false, noBlas = false, gpu = false, printPipeline = false;
  app.add_option("example", name, "example to print (--list shows them)");
  app.add_option("--stage", stage, "module | optimized | bufferized | gpu | lowered | ptx")
      ->check(CLI::IsMember({"module", "optimized", "bufferized", "gpu", "lowered", "ptx"}));
  app.add_option("--shape", shapes, "input shapes, e.g. --shape 16,768 (repeat for more inputs)");
  app.add_option("--dtype", dtypeName, "float32 | float64 | int32");
  app.add_option("--heads", heads, "attention heads (attention, attend)");
  app.add_flag("--no-blas", noBlas, "keep matmuls as loops");
  // --- GPU target (lib/passes/gpu, lib/targets/gpu) ---
  app.add_flag("--gpu", gpu,
               "compile for the NVIDIA GPU (stages gpu: kernels outlined, ptx: PTX for sm_90)");
  // --- end GPU target ---
  app.add_flag("--list", list, "list the examples");
  app.add_flag("--print-pipeline", printPipeline,
               "print the pass pipeline from the module stage to the lowered stage");
  CLI11_PARSE(app, argc, argv);

  JitOptions options;
  if (noBlas)
    options.blas = false;
  // --- GPU target (lib/passes/gpu, lib/targets/gpu) ---
  if (gpu)
    options.target = Target::GPU;
  // --- end GPU target ---
  if (printPipeline) {
    try {
      std::cout << printablePipeline(options) << "\n";
    } catch (const Error &e) {
      std::cerr << "tinymlir-emit: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }

  auto all = examples();
  if (list || name.empty()) {
    for (const auto &[key, example] : all)
      std::cout << key << ": " << example.description << "\n";
    return name.empty() && !list ? 1 : 0;
  }
  try {
    auto it = all.find(name);
    if (it == all.end())
      throw Error("[emit] unknown example '" + name + "' (see --list)");
    std::vector<Shape> inputShapes = it->second.defaultShapes;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (i < inputShapes.size())
        inputShapes[i] = parseShape(shapes[i]);
      else
        inputShapes.push_back(parseShape(shapes[i]));
    }
    std::vector<Tensor> args;
    Tensor result;
    {
      detail::TraceScope scope;
      result = it->second.build(inputShapes, parseDType(dtypeName), heads, args);
    }
    // --- GPU target (lib/passes/gpu, lib/targets/gpu) ---
    if (!gpu && (stage == "gpu" || stage == "ptx"))
      throw Error("[emit] stage '" + stage + "' exists only for the GPU target (add --gpu)");
    // --- end GPU target ---
    Compiled compiled = compileGraph(result, args, options, it->second.donated);
    if (stage == "module")
      std::cout << compiled.module();
    else if (stage == "optimized")
      std::cout << compiled.optimized();
    else if (stage == "bufferized")
      std::cout << compiled.bufferized();
    else if (stage == "gpu") // GPU target
      std::cout << compiled.gpuModule();
    else if (stage == "ptx") // GPU target
      std::cout << compiled.ptx();
    else
      std::cout << compiled.lowered();
  } catch (const Error &e) {
    std::cerr << "tinymlir-emit: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
