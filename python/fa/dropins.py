"""fa behind the signatures users already call: flash-attn's
flash_attn_func, flash_attn_varlen_func and flash_attn_with_kvcache, and
PyTorch's scaled_dot_product_attention. Switching is a one-line change;
whatever fa cannot compute yet is refused by name (NotImplementedError),
never dropped."""

from . import attention, attention_varlen, decode


def _unsupported(what):
    raise NotImplementedError(f"fa does not support {what} yet")


def _flash_window(causal, window_size):
    """flash-attn's (causal, window_size=(left, right)) as fa's
    (causal, window): keys i - left .. i + right, -1 meaning no limit;
    right = 0 is causal, and left keys before the diagonal make a window of
    left + 1 keys."""
    try:
        left, right = window_size
    except (TypeError, ValueError):
        raise ValueError(f"window_size must be a pair (left, right), got "
                         f"{window_size!r}") from None
    for name, value in (("left", left), ("right", right)):
        if not isinstance(value, int) or isinstance(value, bool) or \
                value < -1:
            raise ValueError(f"window_size's {name} must be an int >= -1, "
                             f"got {value!r}")
    if causal and right not in (-1, 0):
        raise ValueError(f"window_size=({left}, {right}) with causal=True: "
                         "a causal window has right = 0 (or -1)")
    if not causal and right != 0:
        if (left, right) != (-1, -1):
            _unsupported(f"window_size=({left}, {right}) (a window that "
                         "reaches past the diagonal; fa's windows end at it)")
        return False, None
    return True, (None if left == -1 else left + 1)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None,
                    causal=False, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, deterministic=False,
                    return_attn_probs=False):
    """flash_attn.flash_attn_func on fa: q [B, Sq, Hq, D], k and v
    [B, Sk, Hkv, D] (read in place through their strides, no copy), causal
    bottom-right aligned as flash-attn's. Returns out [B, Sq, Hq, D] (a
    view of fa's [B, Hq, Sq, D] output); with return_attn_probs,
    (out, softmax_lse [B, Hq, Sq] float32, None): fa never forms the
    attention probabilities that flash-attn returns for testing."""
    _refuse_extras(dropout_p, softcap, alibi_slopes)
    for name, x in (("q", q), ("k", k), ("v", v)):
        if getattr(x, "dim", lambda: None)() != 4:
            raise ValueError(f"{name} must be [B, S, H, D] (4 dimensions), "
                             f"got shape {tuple(getattr(x, 'shape', ()))}")
    fa_causal, window = _flash_window(causal, window_size)
    o, lse = attention(q.transpose(1, 2), k.transpose(1, 2),
                       v.transpose(1, 2), causal=fa_causal, window=window,
                       scale=softmax_scale, return_lse=True,
                       deterministic=deterministic)
    out = o.transpose(1, 2)
    return (out, lse, None) if return_attn_probs else out


def _refuse_extras(dropout_p=0.0, softcap=0.0, alibi_slopes=None):
    if dropout_p:
        _unsupported(f"dropout_p={dropout_p!r} (attention dropout)")
    if softcap:
        _unsupported(f"softcap={softcap!r} (logit soft-capping)")
    if alibi_slopes is not None:
        _unsupported("alibi_slopes (ALiBi biases)")


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                           max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None):
    """flash_attn.flash_attn_varlen_func on fa (fa.attention_varlen): q
    [total_q, Hq, D], k and v [total_k, Hkv, D], cu_seqlens int32 [N + 1].
    max_seqlen_q and max_seqlen_k are taken and not needed: fa's grid
    comes from the rows and N. Under autograd, fa.attention_varlen's
    backward (fa.attention's, once per sequence). Returns out
    [total_q, Hq, D]; with return_attn_probs, (out, softmax_lse [Hq,
    total_q], None)."""
    _refuse_extras(dropout_p, softcap, alibi_slopes)
    if block_table is not None:
        _unsupported("block_table with flash_attn_varlen_func (packed "
                     "sequences over a paged cache)")
    fa_causal, window = _flash_window(causal, window_size)
    out, lse = attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                causal=fa_causal, window=window,
                                scale=softmax_scale, return_lse=True)
    return (out, lse, None) if return_attn_probs else out


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None,
                            rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False,
                            window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None,
                            num_splits=0, return_softmax_lse=False):
    """flash_attn.flash_attn_with_kvcache on fa (fa.decode): q [B, Sq, Hq,
    D]; k_cache and v_cache [B, S, Hkv, D], or with block_table (int32
    [B, N]) a pool of pages [pages, P, Hkv, D]; k and v [B, Snew, Hkv, D],
    written into the caches in place at cache_seqlens by the attention
    kernels themselves and attended to; cache_seqlens an int or int32 [B]
    (None: every cache full). num_splits is a hint fa does not need (it
    splits the keys by its own rule). Returns out [B, Sq, Hq, D]; with
    return_softmax_lse, (out, softmax_lse [B, Hq, Sq])."""
    _refuse_extras(softcap=softcap, alibi_slopes=alibi_slopes)
    if rotary_cos is not None or rotary_sin is not None:
        _unsupported("rotary_cos/rotary_sin (rotary embeddings inside the "
                     "kernel): apply them to q and k first")
    if cache_batch_idx is not None:
        _unsupported("cache_batch_idx (a batch indexing the caches): pass "
                     "the caches' rows, or a block_table")
    if cache_leftpad is not None:
        _unsupported("cache_leftpad (caches that start past row 0)")
    if not isinstance(num_splits, int) or num_splits < 0:
        raise ValueError(f"num_splits must be an int >= 0, got "
                         f"{num_splits!r}")
    for name, x in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)):
        if getattr(x, "dim", lambda: None)() != 4:
            raise ValueError(f"{name} must have 4 dimensions, got shape "
                             f"{tuple(getattr(x, 'shape', ()))}")
    if (k is None) != (v is None):
        raise ValueError("k and v come together (the new keys and values)")
    import torch
    batch = q.shape[0]
    if cache_seqlens is None:
        if block_table is not None:
            raise ValueError("a paged cache needs cache_seqlens (how far "
                             "each sequence fills its pages)")
        full = k_cache.shape[1] - (0 if k is None else k.shape[1])
        cache_seqlens = torch.full((batch,), full, dtype=torch.int32,
                                   device=q.device)
    elif isinstance(cache_seqlens, int) and \
            not isinstance(cache_seqlens, bool):
        cache_seqlens = torch.full((batch,), cache_seqlens,
                                   dtype=torch.int32, device=q.device)
    fa_causal, window = _flash_window(causal, window_size)
    new = {} if k is None else dict(k_new=k.transpose(1, 2),
                                    v_new=v.transpose(1, 2))
    out, lse = decode(q.transpose(1, 2), k_cache.transpose(1, 2),
                      v_cache.transpose(1, 2), cache_seqlens=cache_seqlens,
                      block_table=block_table, causal=fa_causal,
                      window=window, scale=softmax_scale, return_lse=True,
                      **new)
    out = out.transpose(1, 2)
    return (out, lse) if return_softmax_lse else out


def scaled_dot_product_attention(query, key, value, attn_mask=None,
                                 dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention on fa: query
    [B, Hq, L, D], key and value [B, Hkv, S, D], as SDPA takes them (fa
    needs the batch and head dimensions both present)."""
    if attn_mask is not None:
        _unsupported("attn_mask (a dense mask): fa has no mask tensors; "
                     "express causal masks with is_causal, windows, sink "
                     "tokens and learnable sinks with fa.attention")
    if dropout_p:
        _unsupported(f"dropout_p={dropout_p!r} (attention dropout)")
    for name, x in (("query", query), ("key", key), ("value", value)):
        if getattr(x, "dim", lambda: None)() != 4:
            raise ValueError(f"{name} must be [B, H, S, D] (4 dimensions) "
                             f"for fa, got shape "
                             f"{tuple(getattr(x, 'shape', ()))}")
    if query.shape[1] != key.shape[1] and not enable_gqa:
        raise ValueError(f"query has {query.shape[1]} heads and key "
                         f"{key.shape[1]}: pass enable_gqa=True, as SDPA "
                         "asks")
    if is_causal and query.shape[2] != key.shape[2]:
        # SDPA aligns its causal mask top-left, fa (and flash-attn)
        # bottom-right: they agree only when L == S.
        _unsupported(f"is_causal with L = {query.shape[2]} queries and "
                     f"S = {key.shape[2]} keys (SDPA aligns that mask "
                     "top-left; fa.attention's causal is bottom-right)")
    return attention(query, key, value, causal=bool(is_causal), scale=scale)
