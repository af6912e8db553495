//===- Version.cpp - The compiler id in kernel cache keys -----------------===//
//
// Alone in its file: Version.inc changes with every source edit, and only
// this translation unit recompiles then.
//
//===----------------------------------------------------------------------===//

#include "KernelCache.h"

#include "fa/Version.inc"

const char *fa::compilerId() { return FA_COMPILER_ID; }
