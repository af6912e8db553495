//===- KernelCache.cpp - Compiled kernels on disk -------------------------===//

#include "KernelCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

using namespace llvm;

namespace fa {

static constexpr StringLiteral kMagic = "FACACHE1";
// magic, 64 hex digits of SHA-256(payload), '\n'
static constexpr size_t kHeaderSize = 8 + 64 + 1;
/// A temporary file this old belongs to a writer that died (a store takes
/// well under a second); younger ones may be another process's store.
static constexpr std::chrono::minutes kStaleTemporaryAge{10};

/// Removes the temporary files of writers killed mid-store in `dir`.
static void removeStaleTemporaries(StringRef dir) {
  auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    StringRef path = it->path();
    if (!path.ends_with(".tmp"))
      continue;
    ErrorOr<sys::fs::basic_file_status> status = it->status();
    if (status && now - status->getLastModificationTime() > kStaleTemporaryAge)
      sys::fs::remove(path);
  }
}

static std::string sha256Hex(StringRef data) {
  return toHex(SHA256::hash(arrayRefFromStringRef(data)), /*LowerCase=*/true);
}

std::string KernelCache::defaultDirectory() {
  if (const char *dir = std::getenv("FA_CACHE_DIR"))
    return dir;
  SmallString<128> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"))
    path = xdg;
  else if (const char *home = std::getenv("HOME"))
    sys::path::append(path, home, ".cache");
  else
    return "";
  sys::path::append(path, "fa");
  return std::string(path);
}

KernelCache::KernelCache(std::string directory) : dir(std::move(directory)) {}

std::string KernelCache::hashKey(ArrayRef<StringRef> parts) {
  std::string joined;
  for (StringRef part : parts)
    joined += std::to_string(part.size()) + ":" + part.str() + ";";
  return sha256Hex(joined);
}

std::string KernelCache::pathFor(StringRef key) const {
  SmallString<128> path(dir);
  sys::path::append(path, key + ".fa");
  return std::string(path);
}

KernelCache::Lookup KernelCache::load(StringRef key,
                                      std::string &payload) const {
  if (dir.empty())
    return Lookup::Miss;
  std::string path = pathFor(key);
  auto file = MemoryBuffer::getFile(path, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
  if (!file)
    return Lookup::Miss;
  StringRef data = (*file)->getBuffer();
  bool valid = data.size() >= kHeaderSize && data.starts_with(kMagic) &&
               data[kHeaderSize - 1] == '\n' &&
               data.substr(8, 64) == sha256Hex(data.substr(kHeaderSize));
  if (!valid) {
    sys::fs::remove(path);
    return Lookup::Corrupt;
  }
  payload = data.substr(kHeaderSize).str();
  return Lookup::Hit;
}

bool KernelCache::store(StringRef key, StringRef payload,
                        std::string &error) const {
  if (dir.empty())
    return true;
  if (std::error_code ec = sys::fs::create_directories(dir)) {
    error = "cannot create the kernel cache directory '" + dir +
            "': " + ec.message();
    return false;
  }
  // A unique temporary name in the same directory, then an atomic rename:
  // concurrent writers of one key each install a complete entry.
  SmallString<128> model(dir);
  sys::path::append(model, key + "-%%%%%%%%.tmp");
  int fd;
  SmallString<128> temp;
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, temp)) {
    error = "cannot write to the kernel cache '" + dir + "': " + ec.message();
    return false;
  }
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << kMagic << sha256Hex(payload) << '\n' << payload;
    os.close();
    if (os.has_error()) {
      error = "writing " + std::string(temp) + " failed: " +
              os.error().message();
      os.clear_error();
      sys::fs::remove(temp);
      return false;
    }
  }
  if (std::error_code ec = sys::fs::rename(temp, pathFor(key))) {
    sys::fs::remove(temp);
    error = "cannot install a kernel cache entry: " + ec.message();
    return false;
  }
  removeStaleTemporaries(dir);
  return true;
}

} // namespace fa
