//===- Reference.cpp - Naive float64 attention for checking ---------------===//

#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace fa::reference;

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

bool allowed(const Problem &p, int64_t b, int64_t i, int64_t j) {
  if (j >= p.keysOf(b))
    return false;
  int64_t diag = i + (p.keysOf(b) - p.sq);
  if (p.causal && j > diag)
    return false;
  if (p.window && j <= diag - *p.window && j >= p.sinkTokens)
    return false;
  return true;
}

} // namespace

int64_t fa::reference::visiblePairs(const Problem &p) {
  // Row i sees keys [lo, hi) and the sink tokens below lo (allowed()).
  int64_t total = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t sk = p.keysOf(b);
    for (int64_t i = 0; i < p.sq; ++i) {
      int64_t diag = i + (sk - p.sq);
      int64_t hi = p.causal ? std::clamp<int64_t>(diag + 1, 0, sk) : sk;
      int64_t lo =
          p.window ? std::clamp<int64_t>(diag - *p.window + 1, 0, hi) : 0;
      total += hi - lo + std::min(p.sinkTokens, lo);
    }
  }
  return total;
}

namespace {

/// The scores of row i of head h against every key (-inf where masked).
std::vector<double> scores(const Problem &p, const std::vector<double> &q,
                           const std::vector<double> &k, int64_t b, int64_t h,
                           int64_t i) {
  int64_t g = h / (p.hq / p.hkv);
  std::vector<double> s(p.sk, kNegInf);
  const double *qi = &q[((b * p.hq + h) * p.sq + i) * p.d];
  for (int64_t j = 0; j < p.sk; ++j) {
    if (!allowed(p, b, i, j))
      continue;
    const double *kj = &k[((b * p.hkv + g) * p.sk + j) * p.d];
    double dot = 0;
    for (int64_t c = 0; c < p.d; ++c)
      dot += qi[c] * kj[c];
    s[j] = p.scale * dot;
  }
  return s;
}
} // namespace

Forward fa::reference::attention(const Problem &p,
                                 const std::vector<double> &q,
                                 const std::vector<double> &k,
                                 const std::vector<double> &v,
                                 const std::vector<double> *sinks) {
  Forward f;
  f.o.assign(p.batch * p.hq * p.sq * p.d, 0.0);
  f.lse.assign(p.batch * p.hq * p.sq, kNegInf);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.hq; ++h) {
      int64_t g = h / (p.hq / p.hkv);
      double sink = sinks ? (*sinks)[h] : kNegInf;
      for (int64_t i = 0; i < p.sq; ++i) {
        std::vector<double> s = scores(p, q, k, b, h, i);
        double m = sink;
        for (double x : s)
          m = std::max(m, x);
        if (m == kNegInf)
          continue; // nothing visible: o = 0, lse = -inf
        double l = std::exp(sink - m);
        double *oi = &f.o[((b * p.hq + h) * p.sq + i) * p.d];
        for (int64_t j = 0; j < p.sk; ++j) {
          if (s[j] == kNegInf)
            continue;
          double e = std::exp(s[j] - m);
          l += e;
          const double *vj = &v[((b * p.hkv + g) * p.sk + j) * p.d];
          for (int64_t c = 0; c < p.d; ++c)
            oi[c] += e * vj[c];
        }
        for (int64_t c = 0; c < p.d; ++c)
          oi[c] /= l;
        f.lse[(b * p.hq + h) * p.sq + i] = m + std::log(l);
      }
    }
  return f;
}

Backward fa::reference::attentionGrad(
    const Problem &p, const std::vector<double> &q,
    const std::vector<double> &k, const std::vector<double> &v,
    const std::vector<double> &o, const std::vector<double> &lse,
    const std::vector<double> &dO, const std::vector<double> *sinks) {
  Backward g;
  g.dq.assign(q.size(), 0.0);
  g.dk.assign(k.size(), 0.0);
  g.dv.assign(v.size(), 0.0);
  g.dsinks.assign(sinks ? p.hq : 0, 0.0);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.hq; ++h) {
      int64_t kvh = h / (p.hq / p.hkv);
      for (int64_t i = 0; i < p.sq; ++i) {
        int64_t row = (b * p.hq + h) * p.sq + i;
        const double *doi = &dO[row * p.d];
        const double *oi = &o[row * p.d];
        double rowDot = 0;
        for (int64_t c = 0; c < p.d; ++c)
          rowDot += doi[c] * oi[c];
        if (sinks)
          g.dsinks[h] -= std::exp((*sinks)[h] - lse[row]) * rowDot;
        std::vector<double> s = scores(p, q, k, b, h, i);
        for (int64_t j = 0; j < p.sk; ++j) {
          if (s[j] == kNegInf)
            continue;
          double prob = std::exp(s[j] - lse[row]);
          int64_t key = ((b * p.hkv + kvh) * p.sk + j) * p.d;
          double dp = 0;
          for (int64_t c = 0; c < p.d; ++c)
            dp += doi[c] * v[key + c];
          double ds = prob * (dp - rowDot);
          for (int64_t c = 0; c < p.d; ++c) {
            g.dv[key + c] += prob * doi[c];
            g.dq[row * p.d + c] += p.scale * ds * k[key + c];
            g.dk[key + c] += p.scale * ds * q[row * p.d + c];
          }
        }
      }
    }
  return g;
}

std::vector<double> fa::reference::softmaxMatmul(int64_t batch, int64_t m,
                                                 int64_t n, int64_t p,
                                                 const std::vector<double> &x,
                                                 const std::vector<double> &v) {
  std::vector<double> out(batch * m * p, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i) {
      const double *xi = &x[(b * m + i) * n];
      double mx = kNegInf;
      for (int64_t j = 0; j < n; ++j)
        mx = std::max(mx, xi[j]);
      double l = 0;
      double *oi = &out[(b * m + i) * p];
      for (int64_t j = 0; j < n; ++j) {
        double e = std::exp(xi[j] - mx);
        l += e;
        for (int64_t c = 0; c < p; ++c)
          oi[c] += e * v[(b * n + j) * p + c];
      }
      for (int64_t c = 0; c < p; ++c)
        oi[c] /= l;
    }
  return out;
}
