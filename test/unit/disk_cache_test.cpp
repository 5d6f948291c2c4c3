// The persistent compile cache: reuse across Jit objects (as across
// processes), and corrupt or stale entries detected and replaced.
#include "numpy_ref.h"
#include "programs.h"

#include <tinymlir/tinymlir.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <barrier>
#include <thread>
#include <unistd.h>

using namespace tinymlir;
namespace fs = std::filesystem;
using tinymlir::test::allClose;
using tinymlir::test::kMathUlps;
using tinymlir::test::matchesNumPy;
using tinymlir::test::randomArray;
using tinymlir::test::softmax;

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
  corrupt([&] { fs::resize_file(entry, size / 3); });       // truncated
  corrupt([&] { std::ofstream(entry) << "not a kernel"; }); // garbage
  corrupt([&] {                                             // a valid entry of another program
    JitOptions elsewhere;
    elsewhere.cacheDir = (dir_ / "other").string();
    jit(other, elsewhere)(x_, w_);
    fs::copy_file(fs::directory_iterator(dir_ / "other")->path(), entry,
                  fs::copy_options::overwrite_existing);
  });
}

TEST_F(DiskCache, ADirectoryWhereAnEntryGoesIsAMiss) {
  // A directory opens as a file would; reading it must be a miss, not a
  // crash (its size is not the bytes to read).
  Array expected = jit(program, options_)(x_, w_);
  ASSERT_EQ(entries().size(), 1u);
  fs::path entry = entries()[0];
  fs::remove(entry);
  fs::create_directory(entry);
  auto f = jit(program, options_);
  Array got = f(x_, w_);
  EXPECT_EQ(f.stats().diskHits, 0u);
  EXPECT_EQ(f.stats().compilations, 1u);
  EXPECT_TRUE(allClose(got, expected, 0, 0));
  EXPECT_TRUE(fs::is_directory(entry)) << "left as it was: the entry is not stored over it";
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

// Several programs compiled at once by several threads, each stored in the
// disk cache; a second process (this binary again) loads every entry and
// checks every result against NumPy. A kernel stored under another's key
// gives another program's numbers there.
constexpr int kPrograms = 32, kThreads = 8;
Tensor numbered(const Tensor &x, const Tensor &w, int k) {
  return tanh(matmul(x, w) * static_cast<double>(k) / kPrograms) + static_cast<double>(k);
}
Array numberedX() { return randomArray({24, 40}, DType::f32, 50); }
Array numberedW() { return randomArray({40, 36}, DType::f32, 51); }

/// Checks program k's result: the product (gamma_40 of |x| @ |w|, scaled by
/// k / 32 < 1 and tanh's slope <= 1), tanh kMathUlps, the scaling and the sum.
::testing::AssertionResult numberedMatches(const Array &got, int k) {
  return matchesNumPy(got, "np.tanh(x @ w * int(k) / 32) + int(k)",
                      {{"x", numberedX()}, {"w", numberedW()}, {"k", Array::scalar(k, i32)}},
                      2 * (40 + kMathUlps + 4), "np.abs(x) @ np.abs(w) + 1 + int(k)");
}

TEST_F(DiskCache, ThreadsCompilingAtOnceStoreEachKernelUnderItsOwnKey) {
  Array x = numberedX(), w = numberedW();
  std::vector<Array> results(kPrograms);
  // kThreads threads compile kPrograms / kThreads rounds of programs, each
  // round started together, so that their object dumps meet often.
  std::barrier round(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = t; k < kPrograms; k += kThreads) {
        auto f = jit(numbered, options_); // one Jit each: nothing shared but the disk cache
        round.arrive_and_wait();
        results[k] = f(x, w, k);
      }
    });
  for (auto &t : threads)
    t.join();
  for (int k = 0; k < kPrograms; ++k)
    EXPECT_TRUE(numberedMatches(results[k], k)) << "program " << k << " in the compiling process";
  ASSERT_EQ(entries().size(), static_cast<size_t>(kPrograms));
  for (const auto &e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().extension(), ".kernel") << "a temporary file was left: " << e.path();

  // The second process: every program from the disk cache, none compiled.
  std::string command = "TINYMLIR_SECOND_PROCESS_DIR='" + dir_.string() + "' /proc/" +
                        std::to_string(::getpid()) +
                        "/exe --gtest_filter=DiskCacheSecondProcess.* 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

TEST(DiskCacheSecondProcess, LoadsEveryEntryAndChecksItAgainstNumPy) {
  const char *dir = std::getenv("TINYMLIR_SECOND_PROCESS_DIR");
  if (!dir)
    GTEST_SKIP() << "runs only as the second process of "
                    "DiskCache.ThreadsCompilingAtOnceStoreEachKernelUnderItsOwnKey";
  JitOptions options;
  options.cacheDir = dir;
  Array x = numberedX(), w = numberedW();
  for (int k = 0; k < kPrograms; ++k) {
    auto f = jit(numbered, options);
    Array got = f(x, w, k);
    EXPECT_EQ(f.stats().diskHits, 1u) << "program " << k << " was not in the disk cache";
    EXPECT_EQ(f.stats().compilations, 0u);
    EXPECT_TRUE(numberedMatches(got, k)) << "program " << k << " loaded from the disk cache";
  }
}

} // namespace
