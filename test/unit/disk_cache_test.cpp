// The persistent compile cache: reuse across Jit objects (as across
// processes), and corrupt or stale entries detected and replaced.
#include "numpy_ref.h"

#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tinymlir;
namespace fs = std::filesystem;
using tinymlir::test::allClose;
using tinymlir::test::randomArray;

namespace {

Tensor program(const Tensor &x, const Tensor &w) { return softmax(matmul(x, w)) * 2 + 1; }
Tensor other(const Tensor &x, const Tensor &w) { return matmul(x, w) - 1; }

class DiskCache : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tinymlir-disk-cache-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    options_.cacheDir = dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<fs::path> entries() const {
    std::vector<fs::path> files;
    if (fs::exists(dir_))
      for (const auto &e : fs::directory_iterator(dir_))
        if (e.path().extension() == ".kernel")
          files.push_back(e.path());
    return files;
  }

  fs::path dir_;
  JitOptions options_;
  Array x_ = randomArray({4, 8}, DType::f32, 1), w_ = randomArray({8, 6}, DType::f32, 2);
};

TEST_F(DiskCache, ASecondJitLoadsInsteadOfCompiling) {
  auto first = jit(program, options_);
  Array a = first(x_, w_);
  EXPECT_EQ(first.stats().compilations, 1u);
  EXPECT_EQ(first.stats().diskHits, 0u);
  ASSERT_EQ(entries().size(), 1u);

  auto second = jit(program, options_); // a fresh in-memory cache, as in a new process
  Array b = second(x_, w_);
  EXPECT_EQ(second.stats().compilations, 0u);
  EXPECT_EQ(second.stats().diskHits, 1u);
  EXPECT_TRUE(allClose(a, b, 0, 0));
  Compiled c = second.compile(x_, w_);
  EXPECT_TRUE(c.fromDiskCache());
  EXPECT_EQ(c.optimized(), first.compile(x_, w_).optimized());
  EXPECT_NE(c.lowered().find("llvm.func"), std::string::npos);
  EXPECT_EQ(c.blasCalls(), 1);

  // Another program or another shape is another entry.
  jit(other, options_)(x_, w_);
  jit(program, options_)(randomArray({5, 8}, DType::f32, 3), w_);
  EXPECT_EQ(entries().size(), 3u);
}

TEST_F(DiskCache, CorruptEntriesAreIgnoredAndReplaced) {
  Array expected = jit(program, options_)(x_, w_);
  ASSERT_EQ(entries().size(), 1u);
  fs::path entry = entries()[0];
  auto size = fs::file_size(entry);
  auto corrupt = [&](auto &&damage) {
    damage();
    auto f = jit(program, options_);
    Array got = f(x_, w_);
    EXPECT_EQ(f.stats().diskHits, 0u) << "a damaged entry was loaded";
    EXPECT_EQ(f.stats().compilations, 1u);
    EXPECT_TRUE(allClose(got, expected, 0, 0));
    // ...and replaced by a good one.
    auto again = jit(program, options_);
    again(x_, w_);
    EXPECT_EQ(again.stats().diskHits, 1u);
  };
  corrupt([&] { // one flipped byte in the object code
    std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 2));
    char byte;
    file.read(&byte, 1);
    file.seekp(static_cast<std::streamoff>(size / 2));
    byte = static_cast<char>(byte ^ 0x5a);
    file.write(&byte, 1);
  });
  corrupt([&] { fs::resize_file(entry, size / 3); });      // truncated
  corrupt([&] { std::ofstream(entry) << "not a kernel"; }); // garbage
  corrupt([&] {                                              // a valid entry of another program
    JitOptions elsewhere;
    elsewhere.cacheDir = (dir_ / "other").string();
    jit(other, elsewhere)(x_, w_);
    fs::copy_file(fs::directory_iterator(dir_ / "other")->path(), entry,
                  fs::copy_options::overwrite_existing);
  });
}

TEST_F(DiskCache, CanBeSwitchedOff) {
  JitOptions off;
  off.diskCache = false;
  setenv("TINYMLIR_CACHE_DIR", dir_.c_str(), 1);
  auto f = jit(program, off);
  f(x_, w_);
  unsetenv("TINYMLIR_CACHE_DIR");
  EXPECT_TRUE(entries().empty());
  EXPECT_EQ(f.stats().compilations, 1u);
}

} // namespace
