// tinymlir-emit: prints a named example program at a chosen compiler stage.
//
//   tinymlir-emit polynomial --shape 4,8 --dtype float32 --stage optimized
//   tinymlir-emit matmul --gpu --stage ptx
//   tinymlir-emit --print-pipeline     (module -> lowered, for tinymlir-opt --pass-pipeline)
//
// The examples here are the compiler's (test/lit); builds with the models add
// GPT-2's kernels and blocks (tools/gpt2/EmitExamples.cpp, test/gpt2/lit).
#include "EmitExamples.h"
#include "passes/Passes.h"

#include <tinymlir/tinymlir.h>

#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <map>
#include <sstream>

using namespace tinymlir;
using namespace tinymlir::emit;

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

Examples examples() {
  Examples m;
  m["affine"] = {"(x * gain + bias) * 0.5",
                 [](auto &s, DType d, int64_t, auto &a) {
                   Tensor x = arg(a, shapeAt(s, 0), d);
                   Tensor g = arg(a, {shapeAt(s, 0).back()}, d);
                   Tensor b = arg(a, {shapeAt(s, 0).back()}, d);
                   return (x * g + b) * 0.5;
                 },
                 {{16, 8}}};
  m["polynomial"] = {"tanh(0.5 * (x**3 - 3x + 1)), the 0.5 a float64 scalar: float32 x gives "
                     "float64, one fused loop",
                     [](auto &s, DType d, int64_t, auto &a) {
                       Tensor x = arg(a, shapeAt(s, 0), d);
                       return tanh(f64(0.5) * (pow(x, 3) - 3 * x + 1));
                     },
                     {{4, 8}}};
  m["normalize_rows"] = {"exp(x - row max) / its row sum: two row reductions broadcast back",
                         [](auto &s, DType d, int64_t, auto &a) {
                           Tensor x = arg(a, shapeAt(s, 0), d);
                           Tensor numerator = exp(x - max(x, -1, /*keepdims=*/true));
                           return numerator / sum(numerator, -1, /*keepdims=*/true);
                         },
                         {{4, 8}}};
  m["standardize_rows"] = {"gain * (x - row mean) / sqrt(row variance + 1e-5) + bias",
                           [](auto &s, DType d, int64_t, auto &a) {
                             Tensor x = arg(a, shapeAt(s, 0), d);
                             Shape c{shapeAt(s, 0).back()};
                             Tensor gain = arg(a, c, d), bias = arg(a, c, d);
                             Tensor mu = mean(x, -1, /*keepdims=*/true);
                             Tensor variance = var(x, -1, /*keepdims=*/true);
                             return gain * (x - mu) / sqrt(variance + 1e-5) + bias;
                           },
                           {{4, 8}}};
  m["matmul"] = {"a @ b",
                 [](auto &s, DType d, int64_t, auto &a) {
                   Tensor x = arg(a, shapeAt(s, 0), d);
                   return matmul(x, arg(a, shapeAt(s, 1), d));
                 },
                 {{16, 768}, {768, 2304}}};
  m["mlp"] = {"tanh(x @ w1 + b1) @ w2 + b2: products plus bias, x: (T, C), w1: (C, H)",
              [](auto &s, DType d, int64_t, auto &a) {
                const Shape &x = shapeAt(s, 0), &w1 = shapeAt(s, 1);
                const int64_t C = x.back(), H = w1.back();
                Tensor in = arg(a, x, d);
                Tensor w = arg(a, w1, d), b = arg(a, {H}, d);
                Tensor w2 = arg(a, {H, C}, d), b2 = arg(a, {C}, d);
                return matmul(tanh(matmul(in, w) + b), w2) + b2;
              },
              {{16, 768}, {768, 3072}}};
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
  m["loop_sweep"] = {
      "for i in range(1, N - 1): A[i, 1:-1] = (A[i - 1, 1:-1] + A[i + 1, 1:-1]) / 2: "
      "one scf.for whose carried A is updated in place, A (N, M)",
      [](auto &s, DType d, int64_t, auto &a) {
        Tensor A = arg(a, shapeAt(s, 0), d);
        const int64_t n = A.dim(0);
        auto sweep = [](const Tensor &i, const std::vector<Tensor> &carried) {
          Ref r(carried[0]);
          Tensor up = r.get({i - 1, Slice{1, -1}}).value();
          Tensor down = r.get({i + 1, Slice{1, -1}}).value();
          r.set({i, Slice{1, -1}}, (up + down) / 2);
          return std::vector<Tensor>{r.value()};
        };
        return forLoop(weakInteger(1), weakInteger(n - 1), weakInteger(1), {A}, sweep)[0];
      },
      {{64, 32}}};
#ifdef TINYMLIR_WITH_MODELS // GPT-2's kernels and blocks (lib/models)
  addGpt2Examples(m);
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
  app.add_option("--heads", heads, "attention heads (GPT-2's attention, attend)");
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
