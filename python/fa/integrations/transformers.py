"""fa as a Hugging Face transformers attention implementation.

    import fa.integrations.transformers  # registers "fa"
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="fa")

Importing this module registers fa's attention function with transformers'
AttentionInterface and fa's mask function with its AttentionMaskInterface,
under the name "fa" (`register(name)` adds another name). Every model whose
attention goes through that interface then runs fa.attention, honouring each
layer's `is_causal`, `sliding_window` and `scaling` and gpt-oss's learnable
sinks (the `s_aux` the model passes).

Masks are variants in fa, never tensors, so the mask function does not build
one: it reads transformers' mask factory (causal, sliding-window causal or
bidirectional) and hands the layers only what the variant leaves out, the
key padding and where the queries sit among the keys. A padded batch runs
one fa call per run of kept keys; queries at padded positions get zeros
(transformers' eager path gives them values that no kept token reads). A
mask fa cannot express (chunked attention, image-token overlays, dense 4D
masks, keys kept with gaps) raises an error naming the model and the mask;
fa never drops a mask. Packed sequences (position_ids that restart, or the
flash-attention kwargs cu_seq_lens_q/k) run fa.attention_varlen.
"""

import dataclasses
from typing import Optional, Tuple

import torch

try:
    from transformers import AttentionInterface
    from transformers import masking_utils
    from transformers.masking_utils import AttentionMaskInterface
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("fa.integrations.transformers needs Hugging Face "
                      "transformers (pip install transformers)") from e

from .. import attention, attention_varlen
from ..api import accumulator_torch_dtype

NAME = "fa"


@dataclasses.dataclass(frozen=True)
class KeyPadding:
    """The mask fa's mask function hands attention layers where a plain
    bottom-right-aligned variant is not enough.

    runs: per sequence, the run [start, end) of its kept keys (key_padding
        makes them once per mask, not once per layer).
    query_start: the key index of the first query; query i sits at key
        query_start + i.
    causal, window: the variant transformers' mask factory described; the
        layers' own arguments must agree with it.
    """
    runs: Tuple[Tuple[int, int], ...]
    query_start: int
    causal: bool
    window: Optional[int]


@dataclasses.dataclass(frozen=True)
class PackedSequences:
    """The mask fa's mask function hands attention layers for packed
    sequences (transformers' packing format: position_ids that restart, no
    attention mask): the rows of every batch entry end to end, split into
    sequences at the restarts.

    cu_seqlens: int32 [N + 1], the sequences' starts among the B * S rows
        and their end.
    causal, window: the variant within each sequence.
    """
    cu_seqlens: torch.Tensor
    causal: bool
    window: Optional[int]


def key_padding(padding, num_keys, query_start, causal, window):
    """A KeyPadding from a [B, Sk] keep-mask (None: every key kept, for one
    sequence); raises where a row keeps keys with gaps."""
    if padding is None:
        return KeyPadding(((0, num_keys),), query_start, causal, window)
    if padding.shape[1] != num_keys:
        raise ValueError(f"fa: the key padding mask has shape "
                         f"{tuple(padding.shape)} for {num_keys} keys")
    kept = padding.to(torch.bool)
    count = kept.sum(1)
    start = kept.int().argmax(1)
    last = num_keys - 1 - kept.flip(1).int().argmax(1)
    positions = torch.arange(num_keys, device=kept.device)
    in_run = (positions >= start[:, None]) & \
        (positions < (start + count)[:, None])
    gaps = (in_run != kept).any(1)
    # One host transfer per mask: a forward's layers share it.
    rows = torch.stack([count, start, last, gaps.int()], 1).tolist()
    runs = []
    for b, (n, first, end_index, gap) in enumerate(rows):
        if gap:
            raise NotImplementedError(
                f"fa takes key padding as one run of kept keys per sequence "
                f"(left or right padding); sequence {b} of the attention "
                f"mask keeps {n} keys between {first} and {end_index}")
        runs.append((first, first + n) if n else (0, 0))
    return KeyPadding(tuple(runs), query_start, causal, window)


# --- Reading transformers' mask factories -------------------------------

def _code(factory):
    return getattr(factory, "__code__", None)


# The closures transformers composes masks from, recognised by their code
# objects (every closure a factory makes shares its factory's code).
_AND_CODE = _code(masking_utils.and_masks())
_SLIDING_CODE = _code(masking_utils.sliding_window_overlay(1))
# Packing: the sequences' ids per row, and the positions the variant reads
# (within a sequence they rise by one, as the rows do, so the variant there
# is the rows' own). Absent from transformers versions without packing.
_PACKED_CODE = _code(getattr(masking_utils, "packed_sequence_mask_function",
                             lambda m: None)(torch.zeros(1, 1)))
_REMAP_CODE = _code(getattr(masking_utils,
                            "remap_positions_for_packed_sequence",
                            lambda f, p: None)(None, torch.zeros(1, 1)))


def _closure(fn):
    return dict(zip(fn.__code__.co_freevars,
                    (cell.cell_contents for cell in fn.__closure__ or ())))


def _describe(fn):
    """A mask factory as a readable expression, for error messages."""
    if _code(fn) == _AND_CODE:
        parts = _closure(fn).get("mask_functions", ())
        return "and_masks(" + ", ".join(_describe(p) for p in parts) + ")"
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    return name.replace(".<locals>.", ":")


def _constraints(fn):
    """The set of fa-expressible constraints `fn` is the conjunction of:
    "causal", "full" and ("window", w); None where any part is something
    else."""
    if fn is masking_utils.causal_mask_function:
        return {"causal"}
    if fn is masking_utils.bidirectional_mask_function:
        return {"full"}
    if _code(fn) == _SLIDING_CODE:
        return {("window", _closure(fn)["sliding_window"])}
    if _PACKED_CODE is not None and _code(fn) == _PACKED_CODE:
        return {("packed", _closure(fn)["packed_sequence_mask"])}
    if _REMAP_CODE is not None and _code(fn) == _REMAP_CODE:
        return _constraints(_closure(fn)["mask_function"])
    if _code(fn) == _AND_CODE:
        found = set()
        for part in _closure(fn).get("mask_functions", ()):
            sub = _constraints(part)
            if sub is None:
                return None
            found |= sub
        return found
    return None


def mask_variant(mask_function):
    """(causal, window) for a mask factory fa expresses as a variant, or
    None. transformers' sliding window keeps keys kv > q - w: the w keys
    ending at the diagonal, which is fa's window of w. Packing (see
    packed_sequences) is left out of the variant."""
    found = _constraints(mask_function)
    if not found:
        return None
    found = {c for c in found if not (isinstance(c, tuple) and
                                      c[0] == "packed")}
    if not found:
        return None
    windows = [c[1] for c in found if isinstance(c, tuple)]
    causal = "causal" in found
    if windows and not causal:
        return None  # a window past the diagonal
    return causal, (min(windows) if windows else None)


def packed_sequences(mask_function):
    """The [B, S] sequence ids of transformers' packing overlay in
    `mask_function`, or None."""
    for c in _constraints(mask_function) or ():
        if isinstance(c, tuple) and c[0] == "packed":
            return c[1]
    return None


def cu_seqlens_of(sequence_ids):
    """int32 [N + 1] starts of the sequences of [B, S] ids (each row's ids
    rise from 0), rows end to end, and their end: one host transfer."""
    batch, length = sequence_ids.shape
    starts = torch.ones_like(sequence_ids, dtype=torch.bool)
    starts[:, 1:] = sequence_ids[:, 1:] != sequence_ids[:, :-1]
    flat = torch.nonzero(starts.reshape(-1)).reshape(-1)
    end = torch.tensor([batch * length], device=flat.device)
    return torch.cat([flat, end]).to(torch.int32)


def _model_name(config=None, module=None):
    config = config if config is not None else getattr(module, "config",
                                                       None)
    name = getattr(config, "model_type", None)
    if name:
        return f"model '{name}'"
    return f"module {type(module).__name__}" if module is not None \
        else "this model"


def fa_mask(batch_size, q_length, kv_length, q_offset=0, kv_offset=0,
            mask_function=masking_utils.causal_mask_function,
            attention_mask=None, config=None, **kwargs):
    """transformers' mask interface for fa: None where the layer's variant
    says everything (no padding, queries ending at the last key), else a
    KeyPadding. Raises NotImplementedError for masks fa cannot express."""
    variant = mask_variant(mask_function)
    if variant is None:
        raise NotImplementedError(
            f"fa cannot express the attention mask of {_model_name(config)}:"
            f" {_describe(mask_function)}. fa takes causal, sliding-window "
            "causal and bidirectional masks, with key padding or packed "
            "sequences; chunked attention and mask overlays are not "
            "supported yet")
    causal, window = variant
    packed = packed_sequences(mask_function)
    if packed is not None:
        # transformers packs only without an attention mask or a cache:
        # queries and keys are the same rows.
        if attention_mask is not None or q_length != kv_length:
            raise NotImplementedError(
                f"fa cannot express the attention mask of "
                f"{_model_name(config)}: packed sequences with "
                f"{'an attention mask' if attention_mask is not None else 'a cache'}")
        return PackedSequences(cu_seqlens_of(packed), causal, window)
    if isinstance(q_offset, torch.Tensor):
        q_offset = int(q_offset)
    query_start = q_offset - kv_offset
    padding = None
    if attention_mask is not None:
        padding = masking_utils.prepare_padding_mask(
            attention_mask, kv_length, kv_offset)
        padding = padding[:, kv_offset:kv_offset + kv_length].to(torch.bool)
        if bool(padding.all()):
            padding = None
    aligned = not causal or query_start + q_length == kv_length
    if padding is None and aligned:
        return None
    return key_padding(padding, kv_length, query_start, causal, window)


# --- The attention function ----------------------------------------------

def _padded_attention(q, k, v, mask, causal, window, sinks, scale):
    """fa.attention over each sequence's kept keys; rows of queries that
    sit on padding are zeros."""
    batch, _, num_queries, _ = q.shape
    runs = mask.runs * batch if len(mask.runs) == 1 else mask.runs
    if len(runs) != batch:
        raise ValueError(f"fa: the key padding mask has {len(runs)} "
                         f"sequences but the layer has {batch}")
    pieces = {}
    for b, (start, end) in enumerate(runs):
        if causal:
            # Queries sitting on kept keys; each sees the kept keys up to
            # its own, so the key slice ends at the last query's key and
            # the variant's bottom-right diagonal lines up.
            first = max(0, start - mask.query_start)
            last = min(num_queries, end - mask.query_start)
            keys = (start, mask.query_start + last)
        else:
            first, last, keys = 0, num_queries, (start, end)
        pieces.setdefault((first, last, keys), []).append(b)
    outputs = [None] * batch
    for (first, last, (start, end)), rows in pieces.items():
        if last <= first or end <= start:
            continue
        whole = len(rows) == batch
        index = slice(None) if whole else torch.tensor(rows, device=q.device)
        o = attention(q[index, :, first:last], k[index, :, start:end],
                      v[index, :, start:end], causal=causal, window=window,
                      sinks=sinks, scale=scale)
        o = torch.nn.functional.pad(o, (0, 0, first, num_queries - last))
        if whole:
            return o
        for i, b in enumerate(rows):
            outputs[b] = o[i:i + 1]
    zeros = q.new_zeros((1,) + tuple(q.shape[1:]))
    return torch.cat([o if o is not None else zeros for o in outputs])


def _refuse(model, what):
    raise NotImplementedError(f"fa: {model} asks for {what}, which fa does "
                              "not support yet")


def fa_attention_forward(module, query, key, value, attention_mask,
                         scaling=None, dropout=0.0, sliding_window=None,
                         s_aux=None, softcap=None, is_causal=None, **kwargs):
    """transformers' attention interface for fa: query [B, Hq, Sq, D], key
    and value [B, Hkv, Sk, D] (grouped-query heads as they come). Returns
    ([B, Sq, Hq, D], None): fa never forms the attention weights."""
    model = _model_name(module=module)
    if dropout:
        _refuse(model, f"attention dropout ({dropout}); use eval() or "
                "attention_dropout=0")
    if softcap:
        _refuse(model, f"logit soft-capping ({softcap})")
    if kwargs.get("head_mask") is not None:
        _refuse(model, "a head mask")
    if kwargs.get("output_attentions"):
        _refuse(model, "the attention weights (output_attentions)")
    causal = bool(getattr(module, "is_causal", True)) if is_causal is None \
        else bool(is_causal)
    window = sliding_window or None
    if window is not None and not causal:
        _refuse(model, f"a bidirectional sliding window ({window})")
    sinks = None
    if s_aux is not None:
        sinks = s_aux.to(accumulator_torch_dtype(query.dtype))

    # Packed sequences: as flash-attention kwargs (DataCollatorWithFlattening's
    # cu_seq_lens_q/k), which win, or from the mask function.
    starts = [kwargs.get(name) for name in ("cu_seq_lens_q", "cu_seq_lens_k")]
    if isinstance(attention_mask, PackedSequences) and \
            all(s is None for s in starts):
        starts = [attention_mask.cu_seqlens] * 2
    if any(s is not None for s in starts):
        if any(s is None for s in starts):
            _refuse(model, "packed sequences with only one of cu_seq_lens_q "
                    "and cu_seq_lens_k")
        batch, heads, rows, dim = query.shape

        def packed(x):  # [B, H, S, D] as [B * S, H, D]
            return x.transpose(1, 2).reshape(-1, x.shape[1], dim)
        o = attention_varlen(packed(query), packed(key), packed(value),
                             *(s.to(torch.int32) for s in starts),
                             causal=causal, window=window, sinks=sinks,
                             scale=scaling)
        return o.reshape(batch, rows, heads, dim), None
    if isinstance(attention_mask, KeyPadding):
        if (attention_mask.causal, attention_mask.window) != (causal, window):
            raise ValueError(
                f"fa: {model}'s attention mask was made for causal="
                f"{attention_mask.causal}, window={attention_mask.window} "
                f"but the layer runs causal={causal}, window={window}")
        o = _padded_attention(query, key, value, attention_mask, causal,
                              window, sinks, scaling)
    elif attention_mask is None:
        o = attention(query, key, value, causal=causal, window=window,
                      sinks=sinks, scale=scaling)
    elif isinstance(attention_mask, torch.Tensor) and attention_mask.dim() \
            == 2:
        # A plain [B, Sk] key-padding mask, as flash-attn backends take it:
        # the queries are the last Sq keys.
        mask = key_padding(attention_mask, key.shape[2],
                           key.shape[2] - query.shape[2], causal, window)
        o = _padded_attention(query, key, value, mask, causal, window, sinks,
                              scaling)
    else:
        shape = tuple(getattr(attention_mask, "shape", ()))
        raise NotImplementedError(
            f"fa cannot take {model}'s attention mask: a dense mask of "
            f"shape {shape} ({type(attention_mask).__name__}); fa takes "
            "masks as variants (causal, sliding window, sinks) and key "
            "padding")
    return o.transpose(1, 2), None


def register(name=NAME):
    """Registers fa under `name` (attn_implementation=name): its attention
    function and its mask function. Importing this module registers "fa"."""
    AttentionInterface.register(name, fa_attention_forward)
    AttentionMaskInterface.register(name, fa_mask)


register()
