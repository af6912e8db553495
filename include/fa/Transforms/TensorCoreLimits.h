//===- TensorCoreLimits.h - What fa-gpu-tensor-core covers ------*- C++ -*-===//
//
// The head dims and tile sizes fa-gpu-tensor-core builds kernels for, shared
// with the runtime's autotuner so that it only offers configs the pass
// honours. Plain C++: no MLIR types.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TRANSFORMS_TENSORCORELIMITS_H
#define FA_TRANSFORMS_TENSORCORELIMITS_H

#include <cstdint>

namespace fa::tensor_core {

/// Head dims with a tensor-core kernel. The shared-memory swizzle needs at
/// least 8 chunks of 8 elements per row; the registers of 16 rows x D
/// accumulators per warp bound it above.
inline constexpr int64_t kHeadDims[] = {64, 128};

/// Static shared memory a block may use without opting in.
inline constexpr int64_t kStaticSharedBytes = 48 * 1024;

inline constexpr bool hasKernel(int64_t headDim) {
  for (int64_t d : kHeadDims)
    if (d == headDim)
      return true;
  return false;
}

/// Whether a kernel's two shared tiles of `rows` x `headDim` elements of
/// `elementBytes` each fit static shared memory (else the head dim keeps
/// the scalar path).
inline constexpr bool tilesFit(int64_t rows, int64_t headDim,
                               int64_t elementBytes) {
  return 2 * rows * headDim * elementBytes <= kStaticSharedBytes;
}

} // namespace fa::tensor_core

#endif // FA_TRANSFORMS_TENSORCORELIMITS_H
