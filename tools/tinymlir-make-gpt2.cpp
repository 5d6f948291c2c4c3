// tinymlir-make-gpt2: writes a random-weight GPT-2 checkpoint
// (model.safetensors + config.json, Hugging Face layout) for tests and demos.
//
//   tinymlir-make-gpt2 --out DIR [--preset tiny|124M|distilgpt2|gpt2-medium|gpt2-large|gpt2-xl]
//                      [--layers N] [--heads N]
//                      [--embd N] [--vocab N] [--positions N] [--seed S]
//
// The preset gives the sizes (default tiny: 2 layers, 4 heads, 64 wide, 128
// positions, 50257 tokens; 124M: GPT-2 small; the others: the shapes of the
// Hugging Face checkpoints of those names); explicit flags override it. The
// same seed gives the same bytes on every machine.
#include "models/gpt2/RandomCheckpoint.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>

int main(int argc, char **argv) {
  using namespace tinymlir;
  CLI::App app{"Writes a random-weight GPT-2 checkpoint (model.safetensors + config.json)"};
  std::string out, preset = "tiny";
  int64_t layers = 0, heads = 0, embd = 0, vocab = 0, positions = 0;
  uint64_t seed = 0;
  app.add_option("--out", out, "Output directory (created if missing)")->required();
  // n_layer, n_head, n_embd of each released GPT-2 (1024 positions, 50257 tokens).
  const std::map<std::string, gpt2::Config> presets = {
      {"tiny", gpt2::Config::tiny()},
      {"124M", gpt2::Config::gpt2_124M()},
      {"gpt2", gpt2::Config::gpt2_124M()},
      {"distilgpt2", {6, 12, 768, 1024, 50257, 1e-5}},
      {"gpt2-medium", {24, 16, 1024, 1024, 50257, 1e-5}},
      {"gpt2-large", {36, 20, 1280, 1024, 50257, 1e-5}},
      {"gpt2-xl", {48, 25, 1600, 1024, 50257, 1e-5}},
  };
  std::vector<std::string> names;
  for (const auto &[name, config] : presets)
    names.push_back(name);
  app.add_option("--preset", preset,
                 "Base sizes: tiny (2 layers, 4 heads, 64 wide), 124M or gpt2 (GPT-2 small), "
                 "distilgpt2, gpt2-medium, gpt2-large, gpt2-xl (the shapes of those checkpoints)")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
  app.add_option("--layers", layers, "Number of transformer blocks (n_layer)")
      ->check(CLI::PositiveNumber);
  app.add_option("--heads", heads, "Attention heads (n_head)")->check(CLI::PositiveNumber);
  app.add_option("--embd", embd, "Embedding width (n_embd), a multiple of --heads")
      ->check(CLI::PositiveNumber);
  app.add_option("--vocab", vocab, "Vocabulary size (vocab_size)")->check(CLI::PositiveNumber);
  app.add_option("--positions", positions, "Maximum context length (n_positions)")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "Random seed")->capture_default_str();
  double scale = 0.02;
  app.add_option("--scale", scale,
                 "Standard deviation of the weights and linear biases (GPT-2's initialization: "
                 "0.02; 0.2-0.5 make attention peaked and GELU non-linear, for verification)")
      ->check(CLI::Range(1e-6, 10.0))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  gpt2::Config config = presets.at(preset);
  if (layers)
    config.n_layer = layers;
  if (heads)
    config.n_head = heads;
  if (embd)
    config.n_embd = embd;
  if (vocab)
    config.vocab_size = vocab;
  if (positions)
    config.n_positions = positions;

  try {
    auto start = std::chrono::steady_clock::now();
    gpt2::writeRandomCheckpoint(out, config, seed, scale);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string model = (std::filesystem::path(out) / "model.safetensors").string();
    std::string cfg = (std::filesystem::path(out) / "config.json").string();
    std::printf("wrote %s (%lld parameters, %llu bytes) and %s in %.1f s\n", model.c_str(),
                static_cast<long long>(config.numParameters()),
                static_cast<unsigned long long>(std::filesystem::file_size(model)), cfg.c_str(),
                seconds);
    std::printf(
        "  n_layer=%lld n_head=%lld n_embd=%lld n_positions=%lld vocab_size=%lld seed=%llu\n",
        static_cast<long long>(config.n_layer), static_cast<long long>(config.n_head),
        static_cast<long long>(config.n_embd), static_cast<long long>(config.n_positions),
        static_cast<long long>(config.vocab_size), static_cast<unsigned long long>(seed));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tinymlir-make-gpt2: %s\n", e.what());
    return 1;
  }
  return 0;
}
