"""fa: FlashAttention-style kernels compiled from a small MLIR dialect.

    import fa
    o = fa.attention(q, k, v, causal=True, window=128, sinks=sinks)

q [B, Hq, Sq, D], k and v [B, Hkv, Sk, D] (grouped-query when Hq > Hkv), as
torch tensors (CPU or CUDA, with autograd) or numpy arrays (CPU backend).
"""

from . import api as _api
from ._version import __version__
from .api import (cache_info, clear_cache, compile, softmax_matmul,
                  wait_for_compiles)

__all__ = ["attention", "attention_varlen", "decode", "softmax_matmul", "compile", "cache_info",
           "clear_cache", "wait_for_compiles", "gpu_available",
           "workspace_peak_bytes",
           "reset_workspace_peak", "flash_attn_func",
           "flash_attn_varlen_func", "flash_attn_with_kvcache",
           "scaled_dot_product_attention", "__version__"]


def gpu_available():
    """(True, "") when fa can launch kernels here, else (False, why)."""
    return _api._fa.gpu_available()


# fa's GPU workspaces (the backward's row statistics, dsinks partials) come
# from the CUDA driver's stream-ordered pool, which torch.cuda's memory
# statistics do not see; add these to them for fa's peak memory.
def workspace_peak_bytes():
    """The most bytes of device workspace fa held at once since the last
    reset_workspace_peak() (or the start)."""
    return _api._fa.workspace_peak_bytes()


def reset_workspace_peak():
    """Restarts workspace_peak_bytes() from what fa holds now."""
    _api._fa.reset_workspace_peak()


def attention(q, k, v, *, causal=False, window=None, sink_tokens=0,
              sinks=None, scale=None, return_lse=False, deterministic=False):
    """Scaled dot-product attention, the online-softmax way.

    causal: key j visible to query i when j <= i + (Sk - Sq).
    window: the `window` keys ending at the diagonal (needs causal).
    sink_tokens: the first keys stay visible (StreamingLLM; needs window).
    sinks: learnable per-head logits [Hq] in the softmax denominator
        (gpt-oss), float32 (float64 for float64 inputs); gets a gradient.
    scale: defaults to 1/sqrt(D).
    deterministic: the backward gives the same bits from run to run. By
        default, on sm_90a up to D 128, dQ is a sum of f32 atomic
        reduce-adds from the dK/dV kernel (faster), whose order, and so
        whose rounding, varies from run to run; with the flag dQ comes
        from a kernel of its own, one owner per element.
    Returns o [B, Hq, Sq, D], and lse [B, Hq, Sq] with return_lse.
    """
    if not isinstance(deterministic, bool):
        raise TypeError(f"deterministic must be a bool, got "
                        f"{deterministic!r}")
    # Spelled out, not a generator over the four, and torch_ops imported
    # once: this runs before every launch (a call's host time counts when
    # the GPU waits for it; bench/NOTES.md, fifty-second session).
    if _api._is_torch(q) or _api._is_torch(k) or _api._is_torch(v) or \
            _api._is_torch(sinks):
        o, lse = _torch_attention()(q, k, v, causal, window, sink_tokens,
                                    sinks, scale, deterministic)
    else:
        o, lse = _api.attention_forward(q, k, v, causal, window, sink_tokens,
                                        sinks, scale)
    return (o, lse) if return_lse else o


_torch_ops_attention = None


def _torch_attention():
    """torch_ops.attention, imported at the first call with torch tensors
    (numpy users never import torch_ops)."""
    global _torch_ops_attention
    if _torch_ops_attention is None:
        from .torch_ops import attention
        _torch_ops_attention = attention
    return _torch_ops_attention


def _refuse_autograd(name, tensors):
    """fa's forward-only entries refuse tensors that want a gradient, which
    they would silently not get."""
    # numpy arrays and None have no requires_grad.
    if any(getattr(x, "requires_grad", False) for x in tensors) and \
            _api.torch.is_grad_enabled():
        raise ValueError(f"fa.{name} has no backward: call it under "
                         "torch.no_grad() or on tensors that need no "
                         "gradient (fa.attention has one)")


def decode(q, k_cache, v_cache, *, cache_seqlens, block_table=None,
           k_new=None, v_new=None, causal=True, window=None, sink_tokens=0,
           sinks=None, scale=None, return_lse=False, check_lengths=True):
    """Attention of a few query rows per sequence (a decode step, or a
    speculative block of them) over KV caches filled to different lengths.

    q [B, Hq, Sq, D]; k_cache, v_cache [B, Hkv, S_cache, D] (any strides
    with a unit stride on D: a [B, S_cache, Hkv, D] buffer transposed
    works); cache_seqlens: int32 [B], sequence b's keys are the first
    cache_seqlens[b] rows of its cache, the rest never read (unwritten
    slots may hold anything). The query rows are the last Sq positions of
    each sequence: causal, window and sink_tokens are taken with Sk =
    cache_seqlens[b], bottom-right aligned as in `attention`. sinks and
    scale as in `attention`.

    block_table: a paged cache. k_cache and v_cache are then
    [pages, Hkv, P, D] (a [pages, P, Hkv, D] pool transposed works), and
    sequence b's key j is row j % P of page block_table[b, j // P]
    (int32 [B, N]; entries past a sequence's length are never read, so
    they may hold anything, -1 included). Any page size P; each compiles
    its own kernels, as each head dim does.

    k_new, v_new: [B, Hkv, Snew, D], the step's new keys and values
    (flash-attn's k and v of flash_attn_with_kvcache): written into the
    caches in place at rows cache_seqlens[b] .. cache_seqlens[b] + Snew
    (through block_table where paged) by the attention kernels themselves,
    which attend to them with the cache's first cache_seqlens[b] keys (Sk =
    cache_seqlens[b] + Snew). No separate copy kernel; cache_seqlens is not
    advanced (the caller's next step passes the new lengths).

    check_lengths: cache_seqlens is checked to lie in [0, S_cache] (N * P
    when paged; less Snew with k_new), and the pages the lengths (plus
    Snew) reach to lie in the cache; that
    reads them: for CUDA tensors a synchronisation with the GPU, which costs
    a serving loop its queued launches (bench/NOTES.md). Pass False there
    (or capture the step in a CUDA graph, where the check is skipped): the
    kernels then clamp each length to [0, S_cache] ([0, S_cache - Snew]
    with k_new), so they never read or write outside the cache, but a wrong
    length is not reported. No gradient:
    inputs that require one are refused under autograd.
    Returns o [B, Hq, Sq, D], and lse [B, Hq, Sq] with return_lse.
    """
    _refuse_autograd("decode", (q, k_cache, v_cache, sinks, k_new, v_new))
    if not isinstance(check_lengths, bool):
        raise TypeError(f"check_lengths must be a bool, got "
                        f"{check_lengths!r}")
    o, lse = _api.decode_forward(q, k_cache, v_cache, cache_seqlens,
                                 block_table, causal, window, sink_tokens,
                                 sinks, scale, check_lengths, k_new, v_new)
    return (o, lse) if return_lse else o


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, *, causal=False,
                     window=None, sink_tokens=0, sinks=None, scale=None,
                     return_lse=False, check_lengths=True):
    """Attention over sequences of different lengths packed end to end
    (flash-attn's varlen layout), each attending only within itself.

    q [rows_q, Hq, D], k and v [rows_k, Hkv, D] (unit stride on D);
    cu_seqlens_q, cu_seqlens_k: int32 [N + 1], sequence s is q's rows
    cu_seqlens_q[s] to cu_seqlens_q[s + 1] and k's and v's rows
    cu_seqlens_k[s] to cu_seqlens_k[s + 1]. causal, window and sink_tokens
    are taken per sequence, with its own Sq and Sk (bottom-right aligned
    as in `attention`); sinks and scale as in `attention`. No maximum
    lengths are needed: the kernels' grid comes from the rows and N.

    check_lengths: each cu_seqlens is checked to rise from 0 to its rows
    without falling; that reads them (for CUDA tensors a synchronisation;
    skipped inside CUDA-graph capture). Unchecked, the kernels clamp every
    offset to the rows there are and never read outside q, k and v, but a
    wrong offset is not reported. Under autograd (torch tensors that
    require a gradient) the backward gives dq, dk, dv and dsinks: it runs
    fa.attention's backward once per sequence on views of the packed
    tensors, with the offsets read once in the forward.
    Returns o [rows_q, Hq, D], and lse [Hq, rows_q] with return_lse.
    """
    if not isinstance(check_lengths, bool):
        raise TypeError(f"check_lengths must be a bool, got "
                        f"{check_lengths!r}")
    if any(getattr(x, "requires_grad", False) for x in (q, k, v, sinks)) \
            and _api.torch.is_grad_enabled():
        from .torch_ops import VarlenAttention
        o, lse = VarlenAttention.apply(q, k, v, sinks, cu_seqlens_q,
                                       cu_seqlens_k, causal, window,
                                       sink_tokens, scale, check_lengths)
    else:
        o, lse = _api.varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                     causal, window, sink_tokens, sinks,
                                     scale, check_lengths)
    return (o, lse) if return_lse else o


# The drop-ins call attention (above): imported after it.
from .dropins import (flash_attn_func, flash_attn_varlen_func,  # noqa: E402
                      flash_attn_with_kvcache, scaled_dot_product_attention)
