//===- KernelCache.h - Compiled kernels on disk -----------------*- C++ -*-===//
//
// Entries are files named by a hash of everything that decides the compiled
// code (compiler id, spec, element type, target, arch, driver, tile sizes).
// Each carries a magic header and the SHA-256 of its payload; writes go to a
// temporary file renamed into place, so readers never see half an entry. A
// truncated, corrupt or unreadable entry is a miss: it is removed and
// rebuilt, never trusted.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_RUNTIME_KERNELCACHE_H
#define FA_LIB_RUNTIME_KERNELCACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace fa {

/// The fa build that compiles kernels: its git commit (plus a hash of local
/// changes). Part of every cache key, so a new compiler never reads entries
/// an older one wrote.
const char *compilerId();

class KernelCache {
public:
  /// $FA_CACHE_DIR, else $XDG_CACHE_HOME/fa, else $HOME/.cache/fa; empty
  /// when none is set (then nothing is cached).
  static std::string defaultDirectory();

  explicit KernelCache(std::string directory);

  /// Hex SHA-256 of the parts, each length-prefixed so that no two lists
  /// collide.
  static std::string hashKey(llvm::ArrayRef<llvm::StringRef> parts);

  enum class Lookup { Hit, Miss, Corrupt };
  /// The payload under `key`. Corrupt entries are removed.
  Lookup load(llvm::StringRef key, std::string &payload) const;

  /// Stores `payload` under `key` atomically; false with `error` set when the
  /// directory cannot be written. A store also removes the temporary files
  /// that writers killed mid-store left, once they are ten minutes old.
  bool store(llvm::StringRef key, llvm::StringRef payload,
             std::string &error) const;

  std::string pathFor(llvm::StringRef key) const;
  const std::string &directory() const { return dir; }

private:
  std::string dir;
};

} // namespace fa

#endif // FA_LIB_RUNTIME_KERNELCACHE_H
