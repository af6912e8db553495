"""Drop-in attention modules whose core is fa.attention.

Parameter names follow the modules they replace, so their state dicts load
as they are: `MultiheadAttention` mirrors torch.nn.MultiheadAttention
(batch_first), `GptOssAttention` the Hugging Face gpt-oss attention.
"""

import torch
from torch import nn

from . import attention
from .api import accumulator_torch_dtype


class MultiheadAttention(nn.Module):
    """torch.nn.MultiheadAttention(batch_first=True) with fa's kernel.

    Masks are variant attributes in fa, never tensors: `is_causal=True` is
    supported; `attn_mask`, `key_padding_mask` and `need_weights=True` are
    refused rather than ignored.
    """

    def __init__(self, embed_dim, num_heads, bias=True, batch_first=True,
                 device=None, dtype=None):
        super().__init__()
        if not batch_first:
            raise ValueError("fa.nn.MultiheadAttention supports "
                             "batch_first=True only")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by "
                             f"num_heads ({num_heads})")
        factory = dict(device=device, dtype=dtype)
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.batch_first = True
        self.in_proj_weight = nn.Parameter(
            torch.empty(3 * embed_dim, embed_dim, **factory))
        self.in_proj_bias = nn.Parameter(
            torch.empty(3 * embed_dim, **factory)) if bias else None
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias, **factory)
        self._reset_parameters()

    def _reset_parameters(self):
        nn.init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            nn.init.zeros_(self.in_proj_bias)
            nn.init.zeros_(self.out_proj.bias)

    def forward(self, query, key, value, key_padding_mask=None,
                need_weights=False, attn_mask=None, average_attn_weights=True,
                is_causal=False):
        if need_weights:
            raise NotImplementedError("fa never materialises attention "
                                      "weights: pass need_weights=False")
        if key_padding_mask is not None or attn_mask is not None:
            raise NotImplementedError("fa takes masks as variants "
                                      "(is_causal), not mask tensors")
        w = self.in_proj_weight.chunk(3)
        b = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None \
            else (None, None, None)

        def heads(x, i):
            y = nn.functional.linear(x, w[i], b[i])
            return y.view(x.shape[0], x.shape[1], self.num_heads,
                          self.head_dim).transpose(1, 2)

        o = attention(heads(query, 0), heads(key, 1), heads(value, 2),
                      causal=is_causal)
        o = o.transpose(1, 2).reshape(query.shape[0], query.shape[1],
                                      self.embed_dim)
        return self.out_proj(o), None


def apply_rotary(x, cos, sin):
    """gpt-oss's rotary embedding: the two halves of the head rotate."""
    first, second = torch.chunk(x, 2, dim=-1)
    return torch.cat((first * cos - second * sin,
                      second * cos + first * sin), dim=-1)


class GptOssAttention(nn.Module):
    """gpt-oss attention: GQA, a sliding window on sliding layers, and a
    learnable sink logit per head, on fa's kernel.

    forward(hidden_states [B, S, hidden], position_embeddings=(cos, sin) of
    shape [B, S, head_dim / 2]) -> [B, S, hidden].
    """

    def __init__(self, hidden_size=2880, num_heads=64, num_kv_heads=8,
                 head_dim=64, sliding_window=None, bias=True, device=None,
                 dtype=None):
        super().__init__()
        if num_heads % num_kv_heads:
            raise ValueError(f"num_heads ({num_heads}) must be a multiple of "
                             f"num_kv_heads ({num_kv_heads})")
        factory = dict(device=device, dtype=dtype)
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim, self.sliding_window = head_dim, sliding_window
        self.scaling = head_dim ** -0.5
        self.q_proj = nn.Linear(hidden_size, num_heads * head_dim, bias=bias,
                                **factory)
        self.k_proj = nn.Linear(hidden_size, num_kv_heads * head_dim,
                                bias=bias, **factory)
        self.v_proj = nn.Linear(hidden_size, num_kv_heads * head_dim,
                                bias=bias, **factory)
        self.o_proj = nn.Linear(num_heads * head_dim, hidden_size, bias=bias,
                                **factory)
        # Sink logits stay in float32 (float64 for float64 models).
        sink_dtype = torch.float64 if dtype == torch.float64 else torch.float32
        self.sinks = nn.Parameter(torch.zeros(num_heads, device=device,
                                              dtype=sink_dtype))

    def forward(self, hidden_states, position_embeddings=None):
        b, s, _ = hidden_states.shape

        def heads(proj, n):
            return proj(hidden_states).view(b, s, n, self.head_dim) \
                .transpose(1, 2)

        q = heads(self.q_proj, self.num_heads)
        k = heads(self.k_proj, self.num_kv_heads)
        v = heads(self.v_proj, self.num_kv_heads)
        if position_embeddings is not None:
            cos, sin = (t.unsqueeze(1) for t in position_embeddings)
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        acc = accumulator_torch_dtype(q.dtype)
        o = attention(q.contiguous(), k.contiguous(), v, causal=True,
                      window=self.sliding_window, sinks=self.sinks.to(acc),
                      scale=self.scaling)
        return self.o_proj(o.transpose(1, 2).reshape(b, s, -1))


def rotary_embeddings(positions, head_dim, base=150000.0, dtype=None):
    """(cos, sin) [B, S, head_dim / 2] for integer positions [B, S]."""
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64,
                                       device=positions.device) / head_dim))
    angles = positions[..., None].double() * inv
    return angles.cos().to(dtype), angles.sin().to(dtype)


__all__ = ["MultiheadAttention", "GptOssAttention", "apply_rotary",
           "rotary_embeddings"]
