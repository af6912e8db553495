"""fa.attention as a torch.library custom op with autograd: torch.compile
keeps it in the graph, and backward saves only q, k, v, o, lse (and sinks)."""

from typing import Optional, Tuple

import torch

from . import api


@torch.library.custom_op("fa::attention_fwd", mutates_args=())
def attention_fwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  sinks: Optional[torch.Tensor], causal: bool,
                  window: Optional[int], sink_tokens: int,
                  scale: Optional[float]) -> Tuple[torch.Tensor, torch.Tensor]:
    return api.attention_forward(q, k, v, causal, window, sink_tokens, sinks,
                                 scale)


@attention_fwd.register_fake
def _(q, k, v, sinks, causal, window, sink_tokens, scale):
    return q.new_empty(q.shape), q.new_empty(q.shape[:3],
                                             dtype=api.accumulator_torch_dtype(q.dtype))


@torch.library.custom_op("fa::attention_bwd", mutates_args=())
def attention_bwd(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  o: torch.Tensor, lse: torch.Tensor, do: torch.Tensor,
                  dlse: Optional[torch.Tensor],
                  sinks: Optional[torch.Tensor], causal: bool,
                  window: Optional[int], sink_tokens: int,
                  scale: Optional[float]
                  ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                             torch.Tensor]:
    # Checked here, on real values, so compiled graphs need no guard on them.
    if dlse is not None and bool((dlse != 0).any()):
        raise NotImplementedError(
            "fa.attention: gradients through lse are not supported; use "
            "return_lse only for values, or detach lse")
    dq, dk, dv, dsinks = api.attention_backward(
        q, k, v, o, lse, do, causal, window, sink_tokens, sinks, scale)
    if dsinks is None:  # custom ops return tensors: an empty one stands in
        dsinks = q.new_empty(0, dtype=api.accumulator_torch_dtype(q.dtype))
    return dq, dk, dv, dsinks


@attention_bwd.register_fake
def _(q, k, v, o, lse, do, dlse, sinks, causal, window, sink_tokens, scale):
    n = sinks.shape[0] if sinks is not None else 0
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape),
            q.new_empty(n, dtype=api.accumulator_torch_dtype(q.dtype)))


def _setup_context(ctx, inputs, output):
    q, k, v, sinks, causal, window, sink_tokens, scale = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse, sinks)
    ctx.variant = (causal, window, sink_tokens, scale)


def _backward(ctx, do, dlse):
    q, k, v, o, lse, sinks = ctx.saved_tensors
    dq, dk, dv, dsinks = attention_bwd(q, k, v, o, lse, do.contiguous(), dlse,
                                       sinks, *ctx.variant)
    return dq, dk, dv, (dsinks if sinks is not None else None), None, None, \
        None, None


attention_fwd.register_autograd(_backward, setup_context=_setup_context)


def attention(q, k, v, causal, window, sink_tokens, sinks, scale):
    # Checked here too so errors name the argument before torch's dispatch.
    api.check_attention_args(q, k, v, causal, window, sink_tokens, sinks,
                             scale)
    return attention_fwd(q, k, v, sinks, causal, window, sink_tokens, scale)
