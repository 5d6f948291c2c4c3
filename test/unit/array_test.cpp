// Tests for the host Array API and .npy reading/writing (checked against NumPy).
#include "test_util.h"
#include "tinymlir/array.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

using namespace tinymlir;
using tinymlir::test::errorOf;
namespace fs = std::filesystem;

namespace {

/// A fresh temporary directory, removed when the test ends.
class TempDir {
public:
  TempDir() {
    std::random_device rd;
    auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = fs::temp_directory_path() /
            ("tinymlir_array_test_" + std::to_string(stamp) + "_" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string &name) const { return (path_ / name).string(); }

private:
  fs::path path_;
};

bool hasNumpy() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return ok;
}

void runPython(const std::string &code) {
  std::string cmd = "/usr/bin/python3 -c \"" + code + "\"";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST(DType, NamesAndSizes) {
  EXPECT_STREQ(dtypeName(DType::f32), "float32");
  EXPECT_STREQ(dtypeName(DType::f64), "float64");
  EXPECT_STREQ(dtypeName(DType::i32), "int32");
  EXPECT_EQ(dtypeSize(DType::f32), 4u);
  EXPECT_EQ(dtypeSize(DType::f64), 8u);
  EXPECT_EQ(dtypeSize(DType::i32), 4u);
  EXPECT_TRUE(isFloat(DType::f64));
  EXPECT_FALSE(isFloat(DType::i32));
}

TEST(Shape, StringsAndCounts) {
  EXPECT_EQ(shapeString({}), "()");
  EXPECT_EQ(shapeString({5}), "(5,)");
  EXPECT_EQ(shapeString({3, 7}), "(3, 7)");
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({3, 0, 2}), 0);
  EXPECT_EQ(numElements({3, 7}), 21);
  EXPECT_THROW(numElements({-1, 2}), Error);
  EXPECT_THROW(numElements({int64_t(1) << 40, int64_t(1) << 40}), Error);
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}

TEST(Array, DefaultIsEmptyFloat32) {
  Array a;
  EXPECT_EQ(a.shape(), (Shape{0}));
  EXPECT_EQ(a.dtype(), DType::f32);
  EXPECT_EQ(a.size(), 0);
  EXPECT_EQ(a.nbytes(), 0u);
}

TEST(Array, Factories) {
  Array z = Array::zeros({2, 3}, DType::f64);
  EXPECT_EQ(z.toDoubles(), std::vector<double>(6, 0.0));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(z.data()) % 64, 0u);
  Array f = Array::full({4}, 2.5, DType::f32);
  EXPECT_EQ(f.toVector<float>(), std::vector<float>(4, 2.5f));
  Array s = Array::scalar(7, DType::i32);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.at({}), 7);
  Array r = Array::arange(5, DType::i32);
  EXPECT_EQ(r.toVector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  Array v = Array::fromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(v.at({1, 2}), 6);
  EXPECT_THROW(Array::fromVector<float>({1, 2, 3}, {2, 3}), Error);
  EXPECT_THROW(Array::arange(-1, DType::f32), Error);
}

TEST(Array, Linspace) {
  Array l = Array::linspace(0, 1, 5, DType::f64);
  EXPECT_EQ(l.toDoubles(), (std::vector<double>{0, 0.25, 0.5, 0.75, 1.0}));
  Array one = Array::linspace(3, 9, 1, DType::f32);
  EXPECT_EQ(one.toDoubles(), (std::vector<double>{3}));
  Array l3 = Array::linspace(-1, 1, 7, DType::f64);
  EXPECT_EQ(l3.at({6}), 1.0); // exactly stop
  EXPECT_DOUBLE_EQ(l3.at({1}), -1 + 1.0 / 3);
  EXPECT_EQ(Array::linspace(0, 1, 0, DType::f32).size(), 0);
}

TEST(Array, DTypeChecksAndAstype) {
  Array a = Array::arange(4, DType::f32);
  EXPECT_THROW(a.data<double>(), Error);
  EXPECT_NO_THROW(a.data<float>());
  Array b = a.astype(DType::i32);
  EXPECT_EQ(b.dtype(), DType::i32);
  EXPECT_EQ(b.toVector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3}));
  Array c = a.astype(DType::f32);
  EXPECT_NE(c.data(), a.data());
  Array d = Array::fromVector<double>({1.7, -2.7, NAN, 1e20}, {4}).astype(DType::i32);
  EXPECT_EQ(d.toVector<int32_t>()[0], 1);
  EXPECT_EQ(d.toVector<int32_t>()[1], -2);
}

TEST(Array, AtSetBounds) {
  Array a = Array::zeros({2, 3}, DType::f32);
  a.set({1, 2}, 5);
  EXPECT_EQ(a.at({1, 2}), 5);
  EXPECT_THROW(a.at({2, 0}), Error);
  EXPECT_THROW(a.at({0, -1}), Error);
  EXPECT_THROW(a.at({0}), Error);
  EXPECT_THROW(a.set({0, 3}, 1), Error);
  std::string msg = errorOf([&] { a.at({2, 0}); });
  EXPECT_NE(msg.find("[at]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2, 3)"), std::string::npos) << msg;
  EXPECT_EQ(a.dim(-1), 3);
  EXPECT_THROW(a.dim(2), Error);
}

TEST(Array, TransposeSliceReshapeViews) {
  Array a = Array::arange(24, DType::f32).reshaped({2, 3, 4});
  EXPECT_TRUE(a.isContiguous());
  Array t = a.transposed({2, 0, 1});
  EXPECT_EQ(t.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(t.owner(), a.owner());
  EXPECT_FALSE(t.isContiguous());
  EXPECT_EQ(t.at({3, 1, 2}), a.at({1, 2, 3}));
  Array tc = t.contiguous();
  EXPECT_TRUE(tc.isContiguous());
  EXPECT_NE(tc.data(), t.data());
  EXPECT_EQ(tc.at({3, 1, 2}), 23);
  EXPECT_EQ(a.contiguous().data(), a.data());

  Array s = a.sliced(1, 1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(s.at({1, 0, 0}), 16);
  EXPECT_FALSE(s.isContiguous());
  EXPECT_THROW(a.sliced(1, 2, 4), Error);
  EXPECT_THROW(a.sliced(3, 0, 1), Error);
  EXPECT_THROW(a.sliced(0, 2, 1), Error);
  Array row = a.sliced(0, 1, 2);
  EXPECT_TRUE(row.isContiguous()); // leading size-1 dim
  EXPECT_EQ(row.reshaped({12}).at({0}), 12);

  EXPECT_THROW(t.reshaped({24}), Error);
  std::string msg = errorOf([&] { a.reshaped({5, 5}); });
  EXPECT_NE(msg.find("(2, 3, 4)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(5, 5)"), std::string::npos) << msg;
  EXPECT_EQ(a.reshaped({6, -1}).shape(), (Shape{6, 4}));
  EXPECT_THROW(a.transposed({0, 0, 1}), Error);
  EXPECT_THROW(a.transposed({0, 1}), Error);

  std::vector<double> expected;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        expected.push_back(i * 12 + j * 4 + k);
  EXPECT_EQ(t.toDoubles(), expected);
}

TEST(Array, ScalarAndSizeOneContiguity) {
  Array s = Array::scalar(1.5, DType::f64);
  EXPECT_TRUE(s.isContiguous());
  EXPECT_EQ(s.contiguous().data(), s.data());
  float buf[4] = {1, 2, 3, 4};
  Array v = Array::view(buf, {1, 4}, DType::f32, {99, 1});
  EXPECT_TRUE(v.isContiguous());
}

TEST(Array, BorrowedViews) {
  std::vector<float> mem = {1, 2, 3, 4, 5, 6};
  Array v = Array::view(mem.data(), {3, 2}, DType::f32);
  EXPECT_EQ(v.strides(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(v.owner(), nullptr);
  v.set({0, 0}, 10);
  EXPECT_EQ(mem[0], 10);
  Array col = Array::view(mem.data(), {3}, DType::f32, {2});
  EXPECT_EQ(col.toVector<float>(), (std::vector<float>{10, 3, 5}));
  EXPECT_THROW(Array::view(mem.data(), {3, 2}, DType::f32, {1}), Error);
  EXPECT_THROW(Array::view(nullptr, {3}, DType::f32), Error);

  auto owner = std::make_shared<std::vector<double>>(4, 3.0);
  Array o = Array::view(owner->data(), {4}, DType::f64, {}, owner);
  std::weak_ptr<std::vector<double>> weak = owner;
  owner.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(o.at({3}), 3.0);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeepsFreedBlocks = false; // AddressSanitizer's build keeps none (Memory.cpp)
#else
constexpr bool kKeepsFreedBlocks = true;
#endif

TEST(Memory, LargeFreedBlocksAreReusedSmallOnesAreNot) {
  if (!kKeepsFreedBlocks)
    GTEST_SKIP() << "AddressSanitizer build: freed blocks go back at once, so that it sees every "
                    "use after free";
  releaseMemory();
  void *big = allocateMemory(1 << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % 64, 0u);
  freeMemory(big);
  // The same block for the same size, and for one up to a quarter smaller.
  void *again = allocateMemory(1 << 20);
  EXPECT_EQ(again, big);
  freeMemory(again);
  void *smaller = allocateMemory((1 << 20) - (1 << 17));
  EXPECT_EQ(smaller, big);
  freeMemory(smaller);
  EXPECT_EQ(releaseMemory(), size_t{1} << 20);
  EXPECT_EQ(releaseMemory(), 0u);
  // A small block is not kept; nor is a large one past the 256 MiB kept in all.
  freeMemory(allocateMemory(1000));
  EXPECT_EQ(releaseMemory(), 0u);
  void *huge = allocateMemory(size_t{300} << 20);
  freeMemory(huge);
  EXPECT_EQ(releaseMemory(), 0u);
  // Arrays' storage is that memory.
  {
    Array a = Array::zeros({512, 512}, DType::f32);
  }
  EXPECT_EQ(releaseMemory(), size_t{1} << 20);
}

TEST(Array, Overlaps) {
  Array a = Array::arange(10, DType::f32);
  Array lo = a.sliced(0, 0, 5), hi = a.sliced(0, 5, 10), mid = a.sliced(0, 4, 6);
  EXPECT_FALSE(lo.overlaps(hi));
  EXPECT_TRUE(lo.overlaps(mid));
  EXPECT_TRUE(hi.overlaps(mid));
  EXPECT_TRUE(a.overlaps(a));
  EXPECT_FALSE(a.overlaps(Array::arange(10, DType::f32)));
  EXPECT_FALSE(a.overlaps(a.sliced(0, 3, 3)));
  // Interleaved columns of a matrix share a byte range: conservatively overlapping.
  Array m = Array::zeros({4, 2}, DType::f64);
  EXPECT_TRUE(m.sliced(1, 0, 1).overlaps(m.sliced(1, 1, 2)));
  // Negative strides.
  std::vector<float> mem(8);
  Array rev = Array::view(mem.data() + 3, {4}, DType::f32, {-1});
  Array tail = Array::view(mem.data() + 4, {4}, DType::f32);
  EXPECT_FALSE(rev.overlaps(tail));
  EXPECT_TRUE(rev.overlaps(Array::view(mem.data() + 3, {1}, DType::f32)));
  EXPECT_EQ(rev.toVector<float>().size(), 4u);
}

TEST(Array, ToString) {
  EXPECT_EQ(Array::fromVector<float>({1, 2.5f}, {2}).toString(),
            "array([1. , 2.5], dtype=float32)");
  EXPECT_EQ(Array::arange(4, DType::i32).reshaped({2, 2}).toString(),
            "array([[0, 1],\n       [2, 3]], dtype=int32)");
  EXPECT_EQ(Array::scalar(3, DType::f64).toString(), "array(3., dtype=float64)");
  EXPECT_EQ(Array().toString(), "array([], dtype=float32)");
  std::string big = Array::arange(5000, DType::i32).toString();
  EXPECT_NE(big.find("..."), std::string::npos);
  EXPECT_LT(big.size(), 100u);
}

TEST(Npy, RoundTripAllDTypes) {
  TempDir dir;
  Array f = Array::linspace(-1, 1, 12, DType::f32).reshaped({3, 4});
  Array d = Array::linspace(0, 5, 6, DType::f64);
  Array i = Array::arange(24, DType::i32).reshaped({2, 3, 4});
  Array s = Array::scalar(4.25, DType::f64);
  Array e = Array::zeros({0, 3}, DType::f32);
  for (const Array *a : {&f, &d, &i, &s, &e}) {
    std::string p = dir.file("x.npy");
    a->saveNpy(p);
    EXPECT_EQ(fs::file_size(p) % 64, a->nbytes() % 64);
    Array b = Array::loadNpy(p);
    EXPECT_EQ(b.shape(), a->shape());
    EXPECT_EQ(b.dtype(), a->dtype());
    EXPECT_EQ(b.toDoubles(), a->toDoubles());
  }
  // A strided view is saved in logical order.
  Array t = i.transposed({2, 1, 0});
  t.saveNpy(dir.file("t.npy"));
  EXPECT_EQ(Array::loadNpy(dir.file("t.npy")).toDoubles(), t.toDoubles());
}

TEST(Npy, AgainstNumpy) {
  ASSERT_TRUE(hasNumpy()) << "NumPy is a dependency of the tests (scripts/install-deps.sh)";
  TempDir dir;
  Array a = Array::linspace(-3, 3, 35, DType::f32).reshaped({5, 7});
  a.saveNpy(dir.file("a.npy"));
  runPython("import numpy as np; x = np.load('" + dir.file("a.npy") +
            "'); assert x.dtype == np.float32 and x.shape == (5, 7), (x.dtype, x.shape); "
            "assert np.array_equal(x, np.linspace(-3, 3, 35).astype(np.float32).reshape(5, 7)); "
            "np.save('" +
            dir.file("b.npy") +
            "', x.astype(np.float64) * 2); "
            "np.save('" +
            dir.file("f.npy") +
            "', np.asfortranarray(x.T[1:4] + 1)); "
            "np.save('" +
            dir.file("s.npy") +
            "', np.array(np.int32(-42))); "
            "np.save('" +
            dir.file("i.npy") +
            "', np.arange(6, dtype=np.int32)); "
            "np.save('" +
            dir.file("f3.npy") +
            "', np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4)))");
  Array b = Array::loadNpy(dir.file("b.npy"));
  ASSERT_EQ(b.dtype(), DType::f64);
  ASSERT_EQ(b.shape(), (Shape{5, 7}));
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 7; ++c)
      EXPECT_EQ(b.at({r, c}), 2.0 * static_cast<float>(a.at({r, c})));

  Array f = Array::loadNpy(dir.file("f.npy"));
  ASSERT_EQ(f.shape(), (Shape{3, 5}));
  ASSERT_EQ(f.dtype(), DType::f32);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 5; ++c)
      EXPECT_EQ(f.at({r, c}), static_cast<float>(a.at({c, r + 1}) + 1.0f));

  Array s = Array::loadNpy(dir.file("s.npy"));
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.dtype(), DType::i32);
  EXPECT_EQ(s.at({}), -42);

  EXPECT_EQ(Array::loadNpy(dir.file("i.npy")).toVector<int32_t>(),
            (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  Array f3 = Array::loadNpy(dir.file("f3.npy"));
  EXPECT_EQ(f3.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(f3.toDoubles(), Array::arange(24, DType::f64).toDoubles());

  // Our header layout matches NumPy's byte for byte.
  runPython("import numpy as np; np.save('" + dir.file("np.npy") +
            "', np.linspace(-3, 3, 35).astype(np.float32).reshape(5, 7))");
  EXPECT_EQ(readBytes(dir.file("np.npy")), readBytes(dir.file("a.npy")));
}

TEST(Npy, FormatVersions2And3) {
  ASSERT_TRUE(hasNumpy()) << "NumPy is a dependency of the tests (scripts/install-deps.sh)";
  TempDir dir;
  runPython("import numpy as np; from numpy.lib import format as f; "
            "x = np.arange(10, dtype=np.float32).reshape(2, 5); "
            "[f.write_array(open('" +
            dir.file("v") + "%d.npy' % v, 'wb'), x, version=(v, 0)) for v in (1, 2, 3)]");
  for (int v = 1; v <= 3; ++v) {
    Array a = Array::loadNpy(dir.file("v" + std::to_string(v) + ".npy"));
    EXPECT_EQ(a.shape(), (Shape{2, 5}));
    EXPECT_EQ(a.toDoubles(), Array::arange(10, DType::f64).toDoubles());
  }
}

TEST(Npy, MalformedFiles) {
  TempDir dir;
  Array a = Array::arange(6, DType::f32).reshaped({2, 3});
  std::string good = dir.file("good.npy");
  a.saveNpy(good);
  std::string bytes = readBytes(good);
  size_t dataStart = bytes.size() - 24;

  auto expectError = [&](const std::string &name, const std::string &content,
                         const std::string &reason) {
    std::string p = dir.file(name);
    writeBytes(p, content);
    std::string msg = errorOf([&] { Array::loadNpy(p); });
    EXPECT_EQ(msg.rfind("[npy] " + p + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(reason), std::string::npos) << name << ": " << msg;
  };

  expectError("truncated.npy", bytes.substr(0, bytes.size() - 3), "truncated");
  expectError("extra.npy", bytes + "xx", "data section holds");
  std::string badMagic = bytes;
  badMagic[1] = 'X';
  expectError("magic.npy", badMagic, "bad magic");
  expectError("tiny.npy", "\x93NUM", "too short");
  expectError("empty.npy", "", "too short");
  std::string m8 = bytes; // a dtype tinymlir does not have (datetime64)
  m8.replace(m8.find("<f4"), 3, "<M8");
  expectError("m8.npy", m8, "unsupported dtype '<M8'");
  std::string u2 = bytes; // uint16 is read: 24 bytes are 12 of them, not 6
  u2.replace(u2.find("<f4"), 3, "<u2");
  expectError("u2.npy", u2, "data section holds");
  std::string i8 = bytes; // int64 is read: 24 bytes are too few for six of them
  i8.replace(i8.find("<f4"), 3, "<i8");
  expectError("i8.npy", i8, "holds 24 bytes but shape (2, 3) of int64 needs 48");
  std::string big = bytes;
  big.replace(big.find("<f4"), 3, ">f4");
  expectError("big.npy", big, "unsupported dtype '>f4'");
  std::string version = bytes;
  version[6] = 9;
  expectError("version.npy", version, "unsupported .npy format version 9.0");
  std::string longHeader = bytes;
  longHeader[8] = '\xff';
  longHeader[9] = '\xff';
  expectError("longheader.npy", longHeader, "runs past the end");
  std::string noShape = bytes;
  noShape.replace(noShape.find("'shape'"), 7, "'shapf'");
  expectError("noshape.npy", noShape, "unexpected key 'shapf'");
  std::string badShape = bytes;
  badShape.replace(badShape.find("(2, 3)"), 6, "(2, x)");
  expectError("badshape.npy", badShape, "integer");
  std::string hugeShape = bytes;
  hugeShape.replace(hugeShape.find("(2, 3), }"), 9, "(99999999999999999999)");
  expectError("hugeshape.npy", hugeShape, "too large");
  std::string overflow = bytes;
  overflow.replace(overflow.find("(2, 3), }"), 9, "(4294967296, 4294967296, 8)}");
  expectError("overflow.npy", overflow, "too many elements");
  std::string unterminated =
      bytes.substr(0, 10) + std::string(bytes.begin() + 10, bytes.begin() + dataStart);
  unterminated.replace(unterminated.find("}"), 1, " ");
  expectError("unterminated.npy", unterminated + bytes.substr(dataStart), "malformed header");

  std::string missing = dir.file("does_not_exist.npy");
  std::string msg = errorOf([&] { Array::loadNpy(missing); });
  EXPECT_EQ(msg.rfind("[npy] " + missing + ": cannot open", 0), 0u) << msg;
  std::string unwritable = dir.file("no_such_dir/x.npy");
  msg = errorOf([&] { a.saveNpy(unwritable); });
  EXPECT_EQ(msg.rfind("[npy] " + unwritable, 0), 0u) << msg;
}

TEST(Npy, FuzzedHeadersNeverCrash) {
  TempDir dir;
  Array a = Array::arange(6, DType::f64).reshaped({3, 2});
  std::string good = dir.file("good.npy");
  a.saveNpy(good);
  std::string bytes = readBytes(good);
  std::mt19937 rng(1234);
  std::string p = dir.file("fuzz.npy");
  for (int iter = 0; iter < 300; ++iter) {
    std::string b = bytes;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k)
      b[rng() % 128] = static_cast<char>(rng() % 256);
    if (rng() % 3 == 0)
      b.resize(rng() % b.size());
    writeBytes(p, b);
    try {
      Array r = Array::loadNpy(p);
      (void)r.toDoubles();
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()).rfind("[npy] ", 0), 0u);
    }
  }
}
