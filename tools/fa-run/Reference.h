//===- Reference.h - Naive float64 attention for checking -------*- C++ -*-===//
//
// The formulas of DESIGN.md evaluated directly, one row at a time, with the
// mask as an explicit predicate: the independent reference fa-run checks
// kernels against.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FA_RUN_REFERENCE_H
#define FA_TOOLS_FA_RUN_REFERENCE_H

#include <cstdint>
#include <optional>
#include <vector>

namespace fa::reference {

struct Problem {
  int64_t batch = 0, hq = 0, hkv = 0, sq = 0, sk = 0, d = 0;
  bool causal = false;
  std::optional<int64_t> window;
  int64_t sinkTokens = 0;
  double scale = 1.0;
  /// Batch entry b's sequence is its first keyLengths[b] keys (all Sk where
  /// empty).
  std::vector<int64_t> keyLengths;

  /// Batch entry b's key count.
  int64_t keysOf(int64_t b) const {
    return keyLengths.empty() ? sk : keyLengths[b];
  }
};

/// The (query, key) pairs of one head that the mask lets through, over
/// every batch entry: the pairs whose products count towards a kernel's
/// FLOPs.
int64_t visiblePairs(const Problem &p);

/// Contiguous [B, H, S, D] / [B, H, S] / [H] arrays.
struct Forward {
  std::vector<double> o, lse;
};
Forward attention(const Problem &p, const std::vector<double> &q,
                  const std::vector<double> &k, const std::vector<double> &v,
                  const std::vector<double> *sinks);

struct Backward {
  std::vector<double> dq, dk, dv, dsinks;
};
Backward attentionGrad(const Problem &p, const std::vector<double> &q,
                       const std::vector<double> &k,
                       const std::vector<double> &v,
                       const std::vector<double> &o,
                       const std::vector<double> &lse,
                       const std::vector<double> &dO,
                       const std::vector<double> *sinks);

/// softmax(x) @ v for x [B, M, N], v [B, N, P].
std::vector<double> softmaxMatmul(int64_t batch, int64_t m, int64_t n,
                                  int64_t p, const std::vector<double> &x,
                                  const std::vector<double> &v);

} // namespace fa::reference

#endif // FA_TOOLS_FA_RUN_REFERENCE_H
