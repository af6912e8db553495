//===- KernelCacheTest.cpp - The on-disk kernel cache ---------------------===//

#include "../../lib/Runtime/KernelCache.h"
#include "TempDirectoryTest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using fa::KernelCache;

namespace {

class KernelCacheTest : public TempDirectoryTest {
protected:
  std::string read(const std::string &path) {
    auto file = llvm::MemoryBuffer::getFile(path);
    return file ? (*file)->getBuffer().str() : "";
  }
  void write(const std::string &path, const std::string &data) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << data;
  }
  size_t countFiles() {
    std::error_code ec;
    size_t n = 0;
    for (llvm::sys::fs::directory_iterator it(directory, ec), end;
         it != end && !ec; it.increment(ec))
      ++n;
    return n;
  }
};

TEST_F(KernelCacheTest, StoreThenLoad) {
  KernelCache cache(directory);
  std::string key = KernelCache::hashKey({"spec", "bf16", "sm_90"});
  std::string payload;
  EXPECT_EQ(cache.load(key, payload), KernelCache::Lookup::Miss);
  std::string error;
  ASSERT_TRUE(cache.store(key, std::string("module\0with\0nul", 15), error))
      << error;
  ASSERT_EQ(cache.load(key, payload), KernelCache::Lookup::Hit);
  EXPECT_EQ(payload, std::string("module\0with\0nul", 15));
}

TEST_F(KernelCacheTest, KeysSeparateTheirParts) {
  EXPECT_NE(KernelCache::hashKey({"ab", "c"}), KernelCache::hashKey({"a", "bc"}));
  EXPECT_EQ(KernelCache::hashKey({"a", "b"}), KernelCache::hashKey({"a", "b"}));
  EXPECT_EQ(KernelCache::hashKey({"a"}).size(), 64u);
}

TEST_F(KernelCacheTest, CorruptEntryIsRemovedNotTrusted) {
  KernelCache cache(directory);
  std::string key = KernelCache::hashKey({"corrupt"});
  std::string error, payload;
  ASSERT_TRUE(cache.store(key, "a compiled kernel", error)) << error;
  std::string data = read(cache.pathFor(key));
  data[data.size() - 3] ^= 0x20; // one flipped bit in the payload
  write(cache.pathFor(key), data);
  EXPECT_EQ(cache.load(key, payload), KernelCache::Lookup::Corrupt);
  EXPECT_FALSE(llvm::sys::fs::exists(cache.pathFor(key)));
  // Rebuilt, it is trusted again.
  ASSERT_TRUE(cache.store(key, "a compiled kernel", error)) << error;
  EXPECT_EQ(cache.load(key, payload), KernelCache::Lookup::Hit);
}

TEST_F(KernelCacheTest, TruncatedAndForeignEntriesAreCorrupt) {
  KernelCache cache(directory);
  std::string key = KernelCache::hashKey({"truncated"});
  std::string error, payload;
  ASSERT_TRUE(cache.store(key, std::string(1000, 'x'), error)) << error;
  std::string data = read(cache.pathFor(key));
  write(cache.pathFor(key), data.substr(0, data.size() / 2));
  EXPECT_EQ(cache.load(key, payload), KernelCache::Lookup::Corrupt);
  for (std::string junk : {std::string(), std::string("FACACHE1"),
                           std::string("not a cache entry at all")}) {
    write(cache.pathFor(key), junk);
    EXPECT_EQ(cache.load(key, payload), KernelCache::Lookup::Corrupt) << junk;
  }
}

TEST_F(KernelCacheTest, ConcurrentWritersLeaveOneValidEntry) {
  KernelCache cache(directory);
  std::string key = KernelCache::hashKey({"contended"});
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&, t] {
      std::string error;
      for (int i = 0; i < 20; ++i)
        EXPECT_TRUE(cache.store(key, std::string(4096 + t, 'a' + t), error))
            << error;
    });
  for (std::thread &w : writers)
    w.join();
  std::string payload;
  ASSERT_EQ(cache.load(key, payload), KernelCache::Lookup::Hit);
  EXPECT_EQ(payload.size() - 4096, static_cast<size_t>(payload[0] - 'a'));
  EXPECT_EQ(countFiles(), 1u); // no temporary files left behind
}

TEST_F(KernelCacheTest, UnwritableDirectoryIsAnErrorNotACrash) {
  KernelCache cache("/proc/fa-cannot-exist/cache");
  std::string error;
  EXPECT_FALSE(cache.store(KernelCache::hashKey({"x"}), "y", error));
  EXPECT_NE(error.find("cannot create the kernel cache directory"),
            std::string::npos)
      << error;
}

TEST_F(KernelCacheTest, NoDirectoryMeansNoCaching) {
  KernelCache cache("");
  std::string error, payload;
  EXPECT_TRUE(cache.store("k", "v", error));
  EXPECT_EQ(cache.load("k", payload), KernelCache::Lookup::Miss);
}

} // namespace
