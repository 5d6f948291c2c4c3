// The GPT-2 model's input checks (numerics are checked against the NumPy
// reference by test/python/verify_gpt2.py, run from CTest).
#include "models/gpt2/Model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace tinymlir;
namespace fs = std::filesystem;

namespace {

template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "<no error>";
}

class ModelTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("tinymlir-model-test-" + std::to_string(::getpid()));
    gpt2::Config c;
    c.n_layer = 1;
    c.n_head = 2;
    c.n_embd = 8;
    c.n_positions = 6;
    c.vocab_size = 20;
    gpt2::writeRandomCheckpoint(dir_.string(), c, 5);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path dir_;
};
fs::path ModelTest::dir_;

TEST_F(ModelTest, RejectsIdsOutsideTheVocabulary) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  EXPECT_EQ(errorOf([&] { model.forward({1, 20, 3}); }),
            "[gpt2] token id 20 at position 1 is outside the vocabulary of 20");
  EXPECT_EQ(errorOf([&] { model.forward({-1}); }),
            "[gpt2] token id -1 at position 0 is outside the vocabulary of 20");
  EXPECT_EQ(errorOf([&] { model.forward({}); }), "[gpt2] the prompt is empty: give at least one token");
  EXPECT_EQ(model.compilations(), 0u) << "nothing is compiled for rejected input";
}

TEST_F(ModelTest, RejectsSequencesBeyondTheContext) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  EXPECT_EQ(errorOf([&] { model.forward({1, 2, 3, 4, 5, 6, 7}); }),
            "[gpt2] 7 tokens exceed the context of 6 positions");
  EXPECT_EQ(errorOf([&] { model.generate({1, 2, 3}, 4); }),
            "[gpt2] a prompt of 3 tokens plus 4 new tokens exceeds the context of 6 positions");
}

TEST_F(ModelTest, ForwardGivesFloat64LogitsAndFloat64Residuals) {
  gpt2::Model model(gpt2::loadCheckpoint(dir_.string()));
  gpt2::Trace trace;
  Array logits = model.forward({3, 1, 4}, &trace);
  EXPECT_EQ(logits.shape(), (Shape{3, 20}));
  EXPECT_EQ(logits.dtype(), DType::f64);
  EXPECT_EQ(trace.embed.dtype(), DType::f32);
  ASSERT_EQ(trace.attn.size(), 1u);
  EXPECT_EQ(trace.attn[0].dtype(), DType::f64);
  std::vector<int32_t> out = model.generate({3, 1, 4}, 3);
  EXPECT_EQ(out.size(), 3u);
  for (int32_t id : out)
    EXPECT_TRUE(id >= 0 && id < 20);
}

} // namespace
