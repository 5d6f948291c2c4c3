// libFuzzer target for the safetensors reader: the input is a whole
// model.safetensors file. It must be rejected with tinymlir::Error or accepted,
// never crash, leak or read out of bounds (run under ASan/UBSan).
//
//   safetensors_fuzz -runs=100000 WORK_DIR test/fuzz/corpus
//
// Accepted headers are also turned into GPT-2 weights for a fixed tiny config
// (n_layer 1, n_head 1, n_embd 2, n_positions 2, vocab_size 3), the shapes of
// the seed in corpus/, so tensor lookup, shape/dtype checks and the unaligned
// copy path are exercised too.
#include "models/gpt2/Checkpoint.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace tinymlir;
  try {
    auto infos = gpt2::parseSafetensorsHeader(data, size, "fuzz.safetensors");
    uint64_t dataOffset = gpt2::safetensorsDataOffset(data, size);
    for (const auto &[name, info] : infos) {
      // Every accepted tensor lies inside the buffer: touch its first and last byte.
      if (info.end > info.begin) {
        volatile uint8_t first = data[dataOffset + info.begin];
        volatile uint8_t last = data[dataOffset + info.end - 1];
        (void)first;
        (void)last;
      }
    }
    gpt2::Config config{1, 1, 2, 2, 3, 1e-5};
    gpt2::Weights w = gpt2::weightsFromSafetensors(data, size, config, "fuzz.safetensors", nullptr);
    volatile double sink = w.wte.at({2, 1}) + w.layers[0].fc_proj_w.at({7, 1}) + w.ln_f_b.at({1});
    (void)sink;
  } catch (const Error &) {
  }
  return 0;
}
