// The Python module tinymlir._gpt2 (tinymlir.gpt2's): the C++ GPT-2
// (incremental decoder), its tokenizer, and the kernels it is written with
// (lib/models/nn: gelu, softmax, layer_norm, linear, attention, causal_mask).
// An extension of its own, so that tinymlir._tinymlir builds and imports
// without the models; it uses _tinymlir's Tensor and Options (nanobind shares
// bound types between extensions of one ABI).
#include "binding.h"

#include "models/gpt2/RandomCheckpoint.h"
#include "models/gpt2/Checkpoint.h"
#include "models/gpt2/Model.h"
#include "models/gpt2/Tokenizer.h"
#include "models/nn/Kernels.h"

#include <tinymlir/jit.h>
#include <tinymlir/tensor.h>

#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

namespace nb = nanobind;
using namespace nb::literals;

namespace tinymlir::python {

namespace {

nb::dict configDict(const gpt2::Config &c) {
  nb::dict d;
  d["n_layer"] = c.n_layer;
  d["n_head"] = c.n_head;
  d["n_embd"] = c.n_embd;
  d["n_positions"] = c.n_positions;
  d["vocab_size"] = c.vocab_size;
  d["layer_norm_epsilon"] = c.layer_norm_epsilon;
  return d;
}

using TokenCallback = std::function<void(int64_t, int32_t)>;

} // namespace

void registerKernels(nb::module_ &m) {
  m.def("gelu", &gelu, "x"_a, "GELU, tanh form; its float64 sqrt(2/pi) promotes float32.");
  m.def("softmax", &softmax, "x"_a, "Softmax over the last axis, stabilized by the row maximum.");
  m.def("layer_norm", &layerNorm, "x"_a, "gain"_a, "bias"_a, "eps"_a = 1e-5,
        "Layer normalization over the last axis (centered variance).");
  m.def("linear", &linear, "x"_a, "w"_a, "b"_a, "x @ w + b.");
  m.def(
      "attention",
      [](const Tensor &x, const Tensor &qkvWeight, const Tensor &qkvBias, const Tensor &outWeight,
         const Tensor &outBias,
         int64_t heads) { return attention(x, {qkvWeight, qkvBias}, {outWeight, outBias}, heads); },
      "x"_a, "qkv_weight"_a, "qkv_bias"_a, "out_weight"_a, "out_bias"_a, "heads"_a,
      "Causal multi-head self-attention of x (T, C).");
  m.def(
      "causal_mask",
      [](int64_t n, const std::string &dtype) { return causalMask(n, parseDType(dtype)); }, "n"_a,
      "dtype"_a, "(n, n): 0 on and below the diagonal, -1e10 above.");
}

void registerGpt2(nb::module_ &m) {
  nb::class_<gpt2::Tokenizer>(m, "Tokenizer")
      .def_static(
          "load",
          [](const std::string &dir) {
            nb::gil_scoped_release release;
            return gpt2::Tokenizer::load(dir);
          },
          "dir"_a)
      .def(
          "encode",
          [](const gpt2::Tokenizer &t, const std::string &text) { return t.encode(text); },
          "text"_a)
      .def(
          "decode_bytes",
          [](const gpt2::Tokenizer &t, const std::vector<int32_t> &ids) {
            std::string bytes = t.decode(ids);
            return nb::bytes(bytes.data(), bytes.size());
          },
          "ids"_a)
      .def_prop_ro("vocab_size", &gpt2::Tokenizer::vocabSize)
      .def_prop_ro("end_of_text", &gpt2::Tokenizer::endOfTextId);

  nb::class_<gpt2::PrefixCache>(m, "PrefixCache",
                                "Keys and values of recent sequences, reused by prompts that "
                                "start as one of them did (gpt2::PrefixCache).")
      .def(nb::init<int64_t>(), "positions"_a, "The most positions held (0: none).")
      .def_prop_ro("limit", &gpt2::PrefixCache::limit)
      .def(
          "stats",
          [](const gpt2::PrefixCache &c) {
            gpt2::PrefixCache::Stats s = c.stats();
            nb::dict d;
            d["hits"] = s.hits;
            d["misses"] = s.misses;
            d["tokens_saved"] = s.tokensSaved;
            d["positions"] = s.positions;
            d["entries"] = s.entries;
            d["evicted"] = s.evicted;
            return d;
          },
          "Hits, misses, prompt positions not computed, positions and entries held, "
          "entries evicted.")
      .def("clear", &gpt2::PrefixCache::clear, "Drops every entry (the statistics stay).");

  nb::class_<gpt2::Model>(m, "Model")
      .def(
          "__init__",
          [](gpt2::Model *self, const std::string &dir, const JitOptions &options,
             const std::string &precision) {
            gpt2::Precision p = gpt2::parsePrecision(precision);
            nb::gil_scoped_release release;
            new (self) gpt2::Model(gpt2::loadCheckpoint(dir), options, p);
          },
          "dir"_a, "options"_a, "precision"_a = "reference")
      .def_prop_ro("config", [](const gpt2::Model &g) { return configDict(g.config()); })
      .def(
          "forward",
          [](const gpt2::Model &g, const std::vector<int32_t> &ids) {
            Array logits;
            {
              nb::gil_scoped_release release;
              logits = g.forward(ids);
            }
            return toNumPy(std::move(logits));
          },
          "ids"_a, "Logits of every position, (T, V) float64.")
      .def(
          "generate",
          [](const gpt2::Model &g, std::vector<int32_t> ids, int64_t tokens, bool incremental,
             const TokenCallback &onToken, double temperature, int64_t topK, double topP,
             double repeatPenalty, std::optional<uint64_t> seed, bool ignoreEos,
             gpt2::PrefixCache *prefixCache) {
            if (tokens < 0)
              throw nb::value_error("max_new_tokens must be non-negative");
            gpt2::GenerateOptions how;
            how.incremental = incremental;
            how.sampling = {.temperature = temperature,
                            .topK = topK,
                            .topP = topP,
                            .repeatPenalty = repeatPenalty,
                            .seed = seed ? *seed : gpt2::randomSeed()};
            how.stopAtEndOfText = !ignoreEos;
            how.prefixCache = prefixCache;
            auto each = [&](int64_t step, int32_t id, const Array &) {
              if (onToken) {
                nb::gil_scoped_acquire gil;
                onToken(step, id);
              }
            };
            nb::gil_scoped_release release;
            return g.generate(std::move(ids), tokens, how, each);
          },
          "ids"_a, "max_new_tokens"_a, "incremental"_a = true, "on_token"_a = nb::none(),
          "temperature"_a = 0.0, "top_k"_a = 0, "top_p"_a = 1.0, "repeat_penalty"_a = 1.0,
          "seed"_a = nb::none(), "ignore_eos"_a = false, "prefix_cache"_a = nb::none(),
          "Greedy decoding, or sampling with temperature > 0 (seed None: a random one); stops "
          "at <|endoftext|> (not returned) unless ignore_eos. on_token(step, id) is called "
          "(with the GIL) as each token is made. prefix_cache: a PrefixCache the prompt "
          "starts from and the sequence is added to (incremental decoding).")
      .def_prop_ro("compile_seconds", &gpt2::Model::compileSeconds)
      .def_prop_ro("compilations", &gpt2::Model::compilations)
      .def_prop_ro("disk_hits", &gpt2::Model::diskHits);

  m.def(
      "write_random_checkpoint",
      [](const std::string &dir, int64_t layers, int64_t heads, int64_t embd, int64_t vocab,
         int64_t positions, uint64_t seed) {
        gpt2::Config c;
        c.n_layer = layers;
        c.n_head = heads;
        c.n_embd = embd;
        c.vocab_size = vocab;
        c.n_positions = positions;
        gpt2::validateConfig(c, dir);
        nb::gil_scoped_release release;
        gpt2::writeRandomCheckpoint(dir, c, seed);
      },
      "dir"_a, "n_layer"_a, "n_head"_a, "n_embd"_a, "vocab_size"_a, "n_positions"_a, "seed"_a = 0,
      "Writes a random GPT-2 checkpoint (model.safetensors + config.json), as tinymlir-make-gpt2.");
  m.def(
      "load_config", [](const std::string &dir) { return configDict(gpt2::loadConfig(dir)); },
      "dir"_a);
}

} // namespace tinymlir::python

NB_MODULE(_gpt2, m) {
  m.doc() = "GPT-2 on tinymlir's C++ core, and its kernels (use tinymlir.gpt2, not this module)";
  // Tensor, Options and the translation of tinymlir::Error are _tinymlir's.
  nb::module_::import_("tinymlir._tinymlir");
  tinymlir::python::registerKernels(m);
  tinymlir::python::registerGpt2(m);
}
