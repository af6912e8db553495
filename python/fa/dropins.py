"""fa behind the signatures users already call: flash-attn's
flash_attn_func and PyTorch's scaled_dot_product_attention. Switching is
a one-line change; whatever fa cannot compute yet is refused by name
(NotImplementedError), never dropped."""

from . import attention


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
    if dropout_p:
        _unsupported(f"dropout_p={dropout_p!r} (attention dropout)")
    if softcap:
        _unsupported(f"softcap={softcap!r} (logit soft-capping)")
    if alibi_slopes is not None:
        _unsupported("alibi_slopes (ALiBi biases)")
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
