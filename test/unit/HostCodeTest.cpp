//===- HostCodeTest.cpp - What fa's host code carries --------------------===//

#include "../../lib/Runtime/KernelCache.h"
#include "TempDirectoryTest.h"
#include "fa/Runtime.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char *const kSoftmaxMatmul = R"(
fa.kernel @softmax_matmul {
  func.func @forward(%x: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>)
      -> tensor<?x?x?xf32> {
    %out = fa.softmax_matmul %x, %v
        : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
    return %out : tensor<?x?x?xf32>
  }
})";

// fa's host code never throws and is never unwound through, so it has no
// unwind tables: with them the JIT registered each engine's .eh_frame with
// the unwinder, and after an engine was destroyed the next C++ exception
// in the process crashed in _Unwind_Find_FDE or corrupted the heap (issue
// 15). The JIT and the export share the step that drops them; the export's
// object shows what the JIT gets.
TEST(HostCode, CarriesNoUnwindTables) {
  const std::string spec = kSoftmaxMatmul;
  fa::ExportedSpec exported;
  std::string error;
  ASSERT_TRUE(fa::compileForExport(spec, "<spec>", fa::CompileOptions(),
                                   "sm_80", exported, error))
      << error;
  auto object = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(exported.hostObject, "host.o"));
  ASSERT_TRUE(bool(object)) << llvm::toString(object.takeError());
  int functions = 0;
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    ASSERT_TRUE(bool(name));
    EXPECT_NE(*name, ".eh_frame");
    functions += section.isText() && section.getSize() > 0;
  }
  EXPECT_GT(functions, 0); // the object does hold the host code
}

/// The cache keeps each CPU program's host object; a hit links it.
class HostObjectCacheTest : public TempDirectoryTest {
protected:
  void SetUp() override {
    TempDirectoryTest::SetUp();
    setenv("FA_CACHE_DIR", directory.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("FA_CACHE_DIR");
    TempDirectoryTest::TearDown();
  }

  /// Compiles the spec for the CPU, checks its cache status starts with
  /// `status`, and runs softmax(x) v against a naive reference.
  void compileAndRun(const std::string &status) {
    fa::CompileOptions options;
    options.target = fa::Target::CPU;
    std::string error;
    auto program =
        fa::Program::compile(kSoftmaxMatmul, "<spec>", options, error);
    ASSERT_TRUE(program) << error;
    EXPECT_EQ(program->cacheStatus().rfind(status, 0), 0u)
        << program->cacheStatus();
    const int64_t b = 2, m = 3, n = 5, p = 4;
    std::vector<float> x(b * m * n), v(b * n * p), out(b * m * p, NAN);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = std::sin(0.7f * i);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = std::cos(1.3f * i);
    std::vector<fa::Tensor> args = {
        fa::Tensor::contiguous(x.data(), fa::DType::F32, {b, m, n}),
        fa::Tensor::contiguous(v.data(), fa::DType::F32, {b, n, p}),
        fa::Tensor::contiguous(out.data(), fa::DType::F32, {b, m, p})};
    ASSERT_TRUE(program->run("softmax_matmul", fa::Entry::Forward, args, error))
        << error;
    for (int64_t i = 0; i < b; ++i)
      for (int64_t r = 0; r < m; ++r) {
        double sum = 0, max = -INFINITY;
        for (int64_t j = 0; j < n; ++j)
          max = std::max<double>(max, x[(i * m + r) * n + j]);
        std::vector<double> weight(n);
        for (int64_t j = 0; j < n; ++j)
          sum += weight[j] = std::exp(x[(i * m + r) * n + j] - max);
        for (int64_t c = 0; c < p; ++c) {
          double want = 0;
          for (int64_t j = 0; j < n; ++j)
            want += weight[j] / sum * v[(i * n + j) * p + c];
          EXPECT_NEAR(out[(i * m + r) * p + c], want, 1e-5);
        }
      }
  }
};

TEST_F(HostObjectCacheTest, MissThenHitThenAnUnlinkableEntryIsRebuilt) {
  compileAndRun("miss");
  compileAndRun("hit");
  // The one entry, rewritten with a valid checksum over bytes that are no
  // object file: it cannot link, so it is rebuilt, never run.
  std::error_code ec;
  std::string key;
  for (llvm::sys::fs::directory_iterator it(directory, ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".fa") {
      ASSERT_TRUE(key.empty()) << "more than one entry";
      key = llvm::sys::path::stem(it->path()).str();
    }
  ASSERT_FALSE(key.empty());
  std::string error;
  ASSERT_TRUE(fa::KernelCache(directory).store(key, "not an object", error))
      << error;
  compileAndRun("rebuilt corrupt entry");
  compileAndRun("hit");
}

} // namespace
