//===- KernelCacheTest.cpp - The on-disk kernel cache ---------------------===//

#include "../../lib/Runtime/KernelCache.h"
#include "TempDirectoryTest.h"

#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <csignal>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

TEST_F(KernelCacheTest, DirectoryThatIsAFileIsAnErrorNotACrash) {
  std::string path = directory + "/cache";
  write(path, "not a directory");
  KernelCache cache(path);
  std::string error, payload;
  EXPECT_FALSE(cache.store(KernelCache::hashKey({"x"}), "y", error));
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_EQ(cache.load(KernelCache::hashKey({"x"}), payload),
            KernelCache::Lookup::Miss);
  EXPECT_EQ(read(path), "not a directory"); // left as it was
}

TEST_F(KernelCacheTest, FullDiskFailsTheStoreAndLeavesNothing) {
  // A file-size limit stands in for a full disk: the write fails part way.
  std::string key = KernelCache::hashKey({"big"});
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN); // the write fails instead (EFBIG)
    rlimit limit{4096, 4096};
    setrlimit(RLIMIT_FSIZE, &limit);
    std::string error;
    bool stored = KernelCache(directory).store(key, std::string(1 << 20, 'p'),
                                               error);
    _exit(!stored && error.find("failed") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(countFiles(), 0u); // no partial entry, no temporary file
  std::string error, payload;
  KernelCache cache(directory);
  EXPECT_EQ(cache.load(key, payload), KernelCache::Lookup::Miss);
  EXPECT_TRUE(cache.store(key, "small", error)) << error;
  EXPECT_EQ(cache.load(key, payload), KernelCache::Lookup::Hit);
}

TEST_F(KernelCacheTest, WriterKilledMidStoreNeverLeavesACorruptEntry) {
  // A child stores large entries under one key until it is killed; whatever
  // it was doing then, the key loads a whole entry or none.
  std::string key = KernelCache::hashKey({"killed"});
  std::string large(8 << 20, 'k');
  for (int attempt = 0; attempt < 5; ++attempt) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::string error;
      for (;;)
        KernelCache(directory).store(key, large, error);
    }
    usleep(20000 + 15000 * attempt);
    kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    std::string payload;
    KernelCache::Lookup lookup = KernelCache(directory).load(key, payload);
    EXPECT_NE(lookup, KernelCache::Lookup::Corrupt);
    if (lookup == KernelCache::Lookup::Hit)
      EXPECT_EQ(payload, large);
  }
  // The temporary files a killed writer leaves do not stop later stores.
  std::string error, payload;
  KernelCache cache(directory);
  EXPECT_TRUE(cache.store(key, "after", error)) << error;
  EXPECT_EQ(cache.load(key, payload), KernelCache::Lookup::Hit);
  EXPECT_EQ(payload, "after");

  // Once they are old, a store removes them; a young one may be another
  // writer's store in flight and stays.
  auto temporaries = [&] {
    std::vector<std::string> found;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(directory, ec), end;
         !ec && it != end; it.increment(ec))
      if (llvm::StringRef(it->path()).ends_with(".tmp"))
        found.push_back(it->path());
    return found;
  };
  std::string fresh = directory + "/in-flight-1234abcd.tmp";
  std::string stale = directory + "/dead-writer-5678abcd.tmp";
  for (const std::string &path : {fresh, stale}) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
  }
  auto hourAgo = llvm::sys::toTimePoint(std::time(nullptr) - 3600);
  for (const std::string &path : temporaries()) {
    if (path == fresh)
      continue;
    int fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(path, fd,
                                                 llvm::sys::fs::CD_OpenExisting));
    ASSERT_FALSE(
        llvm::sys::fs::setLastAccessAndModificationTime(fd, hourAgo));
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  EXPECT_TRUE(cache.store(key, "again", error)) << error;
  EXPECT_EQ(temporaries(), std::vector<std::string>{fresh});
}

TEST_F(KernelCacheTest, NoDirectoryMeansNoCaching) {
  KernelCache cache("");
  std::string error, payload;
  EXPECT_TRUE(cache.store("k", "v", error));
  EXPECT_EQ(cache.load("k", payload), KernelCache::Lookup::Miss);
}

} // namespace
