"""Naive float64 attention in numpy: the formulas of DESIGN.md, with the
mask as an explicit predicate (the independent check of fa's kernels)."""

import numpy as np


def visible(sq, sk, causal, window, sink_tokens):
    i = np.arange(sq)[:, None] + (sk - sq)
    j = np.arange(sk)[None, :]
    ok = np.ones((sq, sk), dtype=bool)
    if causal:
        ok &= j <= i
    if window is not None:
        ok &= (j > i - window) | (j < sink_tokens)
    return ok


def attention(q, k, v, causal=False, window=None, sink_tokens=0, sinks=None,
              scale=None):
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(d) if scale is None else scale
    k = np.repeat(k, hq // hkv, axis=1)
    v = np.repeat(v, hq // hkv, axis=1)
    s = scale * q @ k.transpose(0, 1, 3, 2)
    s = np.where(visible(sq, sk, causal, window, sink_tokens), s, -np.inf)
    sink = np.full(hq, -np.inf) if sinks is None else \
        np.asarray(sinks, dtype=np.float64)
    sink = sink[None, :, None]
    m = np.maximum(s.max(axis=-1), sink)
    m_safe = np.where(np.isinf(m), 0.0, m)
    p = np.exp(s - m_safe[..., None])
    l = p.sum(-1) + np.exp(sink - m_safe)
    with np.errstate(invalid="ignore", divide="ignore"):
        o = np.where(l[..., None] > 0, (p @ v) / l[..., None], 0.0)
        lse = np.where(l > 0, m_safe + np.log(l), -np.inf)
    return o, lse


def relative_error(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    both_inf = np.isinf(got) & np.isinf(ref) & (got == ref)
    got, ref = np.where(both_inf, 0, got), np.where(both_inf, 0, ref)
    return np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)


def decode(q, k, v, cache_seqlens, causal=True, window=None, sink_tokens=0,
           sinks=None, scale=None):
    """attention() of each batch entry over its first cache_seqlens[b] keys
    (the rest of the cache is never looked at)."""
    b, hq, sq, d = q.shape
    o, lse = np.zeros(q.shape), np.full((b, hq, sq), -np.inf)
    for e, n in enumerate(np.asarray(cache_seqlens)):
        if n == 0:  # no key: o = 0; lse is the sink's logit, if any
            if sinks is not None:
                lse[e] = np.asarray(sinks, np.float64)[:, None]
            continue
        o[e:e + 1], lse[e:e + 1] = attention(
            q[e:e + 1], k[e:e + 1, :, :n], v[e:e + 1, :, :n], causal, window,
            sink_tokens, sinks, scale)
    return o, lse


def varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, **variant):
    """attention() within each packed sequence: q [rows_q, Hq, D], k and v
    [rows_k, Hkv, D]; sequence s is q's rows cu_seqlens_q[s] to
    cu_seqlens_q[s + 1] and k's and v's cu_seqlens_k[s] to
    cu_seqlens_k[s + 1]. Returns o [rows_q, Hq, D] and lse [Hq, rows_q]."""
    rows, hq, _ = q.shape
    o, lse = np.zeros(q.shape), np.full((hq, rows), -np.inf)
    sinks = variant.get("sinks")
    for s in range(len(cu_seqlens_q) - 1):
        q0, q1 = int(cu_seqlens_q[s]), int(cu_seqlens_q[s + 1])
        k0, k1 = int(cu_seqlens_k[s]), int(cu_seqlens_k[s + 1])
        if q1 == q0:
            continue
        if k1 == k0:  # no key: o = 0; lse is the sink's logit, if any
            if sinks is not None:
                lse[:, q0:q1] = np.asarray(sinks, np.float64)[:, None]
            continue
        so, slse = attention(*(x[None].transpose(0, 2, 1, 3) for x in
                               (q[q0:q1], k[k0:k1], v[k0:k1])), **variant)
        o[q0:q1] = so[0].transpose(1, 0, 2)
        lse[:, q0:q1] = slse[0]
    return o, lse
