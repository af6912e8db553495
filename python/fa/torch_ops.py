"""fa.attention as a torch.library custom op with autograd: torch.compile
keeps it in the graph, and backward saves only q, k, v, o, lse (and sinks).

Plain eager calls take the same forward and backward through an
autograd.Function instead: torch.library's dispatch imports torch._dynamo
at an op's first call (2.4 s of a 2.7 s first call on a 2-core machine)
and doubles the per-call host cost of small calls, and eager autograd
needs neither. Anything that watches ops (torch.compile, export, fake
tensors, dispatch or function modes, functorch transforms, tensor
subclasses) sees the custom op."""

from typing import Optional, Tuple

import torch
from torch.autograd.function import once_differentiable

from . import api


def _forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             sinks: Optional[torch.Tensor], causal: bool,
             window: Optional[int], sink_tokens: int,
             scale: Optional[float],
             deterministic: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    # `deterministic` is the backward's; the forward always is.
    return api.attention_forward(q, k, v, causal, window, sink_tokens, sinks,
                                 scale)


def _backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              o: torch.Tensor, lse: torch.Tensor, do: torch.Tensor,
              dlse: Optional[torch.Tensor],
              sinks: Optional[torch.Tensor], causal: bool,
              window: Optional[int], sink_tokens: int,
              scale: Optional[float], deterministic: bool
              ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                         torch.Tensor]:
    _refuse_lse_gradient(dlse)
    dq, dk, dv, dsinks = api.attention_backward(
        q, k, v, o, lse, do, causal, window, sink_tokens, sinks, scale,
        deterministic)
    if dsinks is None:  # custom ops return tensors: an empty one stands in
        dsinks = q.new_empty(0, dtype=api.accumulator_torch_dtype(q.dtype))
    return dq, dk, dv, dsinks


def _refuse_lse_gradient(dlse):
    # Checked here, on real values, so compiled graphs need no guard on them.
    if dlse is not None and bool((dlse != 0).any()):
        raise NotImplementedError(
            "fa.attention: gradients through lse are not supported; use "
            "return_lse only for values, or detach lse")


attention_fwd = torch.library.custom_op("fa::attention_fwd", _forward,
                                        mutates_args=())
attention_bwd = torch.library.custom_op("fa::attention_bwd", _backward,
                                        mutates_args=())


@attention_fwd.register_fake
def _(q, k, v, sinks, causal, window, sink_tokens, scale, deterministic):
    return q.new_empty(q.shape), q.new_empty(q.shape[:3],
                                             dtype=api.accumulator_torch_dtype(q.dtype))


@attention_bwd.register_fake
def _(q, k, v, o, lse, do, dlse, sinks, causal, window, sink_tokens, scale,
      deterministic):
    n = sinks.shape[0] if sinks is not None else 0
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape),
            q.new_empty(n, dtype=api.accumulator_torch_dtype(q.dtype)))


def _setup_context(ctx, inputs, output):
    q, k, v, sinks, causal, window, sink_tokens, scale, deterministic = inputs
    o, lse = output
    ctx.save_for_backward(q, k, v, o, lse, sinks)
    ctx.variant = (causal, window, sink_tokens, scale, deterministic)
    # An lse nobody used then reaches the backward as None, not as zeros
    # that the check in _backward would read back: that read synchronised
    # the host with the GPU in every training step (H100: a backward call
    # cost 0.69 ms of host time, and the GPU waited for it).
    ctx.set_materialize_grads(False)


def _kernel_layout(do):
    """dO itself where the tensor-core kernels take its layout as it is
    (unit stride on D; each other dim longer than 1 a positive whole
    number of 16-byte chunks apart), else a dense copy (an expanded
    gradient's zero strides, say). A gradient that arrives as a view of a
    [B, S, H, D] buffer, as it does behind flash_attn_func and the Hugging
    Face integration, is then read in place rather than copied every
    step."""
    if do.is_contiguous() and do.shape[-1] * do.element_size() % 16 == 0:
        return do  # the common case, without the loop over the dims below
    if do.stride(-1) == 1:
        item = do.element_size()
        if all(size == 1 or (stride > 0 and stride * item % 16 == 0)
               for size, stride in zip(do.shape[:-1], do.stride()[:-1])):
            return do
    return do.contiguous()


def _saved(ctx, do):
    """The forward's q, k, v, o, lse and sinks, and dO as the kernels take
    it (zeros where only lse was used)."""
    q, k, v, o, lse, sinks = ctx.saved_tensors
    if do is None:  # only lse was used
        do = torch.zeros_like(o)
    return q, k, v, o, lse, sinks, _kernel_layout(do)


def _op_gradients(ctx, do, dlse):
    q, k, v, o, lse, sinks, do = _saved(ctx, do)
    dq, dk, dv, dsinks = attention_bwd(q, k, v, o, lse, do, dlse, sinks,
                                       *ctx.variant)
    return dq, dk, dv, (dsinks if sinks is not None else None), None, None, \
        None, None, None


attention_fwd.register_autograd(_op_gradients, setup_context=_setup_context)


class _EagerAttention(torch.autograd.Function):
    """The op's forward and backward for plain eager calls. forward takes
    ctx itself: the setup_context form costs ~100 us more per call (torch
    2.15, 2-core machine), more than the dispatch this class saves. Its
    last input is the forward's api._CheckedCall, which the caller looked
    up already."""

    @staticmethod
    def forward(ctx, *inputs_and_record):
        *inputs, record = inputs_and_record
        q, k, v, sinks, causal, window, sink_tokens, scale, _ = inputs
        output = api.attention_forward(q, k, v, causal, window, sink_tokens,
                                       sinks, scale, record)
        _setup_context(ctx, inputs, output)
        ctx.record = record
        return output

    @staticmethod
    def backward(ctx, do, dlse):
        # Grad mode is on only under create_graph: there, like the op, the
        # gradients get no gradient of their own (once_differentiable makes
        # differentiating them an error). Otherwise its wrapper is skipped:
        # 6-12 us of each backward call's host time on a 2-core machine
        # (bench/NOTES.md, fifty-second session).
        if torch.is_grad_enabled():
            return _eager_gradients_once(ctx, do, dlse)
        return _eager_gradients(ctx, do, dlse)


def _eager_gradients(ctx, do, dlse):
    """The op's gradients, through the backward call that the forward's
    record keeps (api.forward_backward_call): on the device thread of
    autograd, everything before the launch is time the GPU waits for in
    a call timed alone (bench/NOTES.md, fifty-fourth session)."""
    _refuse_lse_gradient(dlse)
    q, k, v, o, lse, sinks, do = _saved(ctx, do)
    causal, window, sink_tokens, scale, deterministic = ctx.variant
    record = api.forward_backward_call(ctx.record, q, k, v, o, lse, do,
                                       causal, window, sink_tokens, sinks,
                                       scale, deterministic)
    dq, dk, dv, dsinks = api._launch_backward(record, q, k, v, o, lse, do,
                                              sinks)
    return dq, dk, dv, dsinks, None, None, None, None, None, None


_eager_gradients_once = once_differentiable(_eager_gradients)


# torch's switches for modes and transforms, looked up once; where one is
# missing (another torch version) it counts as on.
_WATCH_SWITCHES = tuple(getattr(torch._C, name, None) for name in (
    "_is_torch_function_mode_enabled", "_len_torch_dispatch_stack",
    "_are_functorch_transforms_active"))


def _watched(tensors):
    """Whether anything but eager autograd may see this call's ops: tensor
    subclasses, or a mode or transform switched on."""
    if any(t is not None and type(t) is not torch.Tensor for t in tensors):
        return True
    return any(switch is None or switch() for switch in _WATCH_SWITCHES)


def attention(q, k, v, causal, window, sink_tokens, sinks, scale,
              deterministic=False):
    args = (q, k, v, sinks, causal, window, sink_tokens, scale, deterministic)
    # Compiling (Dynamo, export) decides first, before anything it would
    # have to trace.
    if torch.compiler.is_compiling() or _watched((q, k, v, sinks)):
        # Checked here too so errors name the argument before torch's
        # dispatch (the eager path checks in its forward).
        api.check_attention_args(q, k, v, causal, window, sink_tokens, sinks,
                                 scale)
        return attention_fwd(*args)
    # Spelled out, not a generator: 1 us of a call's host time (q, k and v
    # are plain tensors here, _watched said so).
    if torch.is_grad_enabled() and (
            q.requires_grad or k.requires_grad or v.requires_grad or
            (sinks is not None and sinks.requires_grad)):
        # One lookup of the call's signature serves the forward and, once
        # its backward is compiled, the check that it is. A new signature
        # starts its backward's compile first, so that it runs beside the
        # forward's own rather than after it (a cold forward and backward
        # then cost the longer of the two compiles, not their sum).
        record = api.known_forward_call(q, k, v, causal, window, sink_tokens,
                                        sinks, scale)
        if record is None:
            api.prepare_backward(q, k, v, causal, window, sink_tokens, sinks,
                                 scale, deterministic)
            record = api.forward_call(q, k, v, causal, window, sink_tokens,
                                      sinks, scale)
        if deterministic not in record.backwards_ready and \
                api.prepare_backward(q, k, v, causal, window, sink_tokens,
                                     sinks, scale, deterministic):
            record.backwards_ready.add(deterministic)
        return _EagerAttention.apply(*args, record)
    # Nothing to differentiate (inference, decode): the forward without an
    # autograd node, whose apply cost a tenth of a small call's host time.
    return _forward(*args)


class VarlenAttention(torch.autograd.Function):
    """fa.attention_varlen with autograd: the forward runs the packed
    kernels once; the backward runs fa.attention's backward kernels once
    per sequence, on views of the packed tensors, each writing its own
    rows of dq, dk and dv (a backward over the packed rows in one launch is
    not there yet). The offsets come to the host once, in the forward."""

    @staticmethod
    def forward(ctx, q, k, v, sinks, cu_seqlens_q, cu_seqlens_k, causal,
                window, sink_tokens, scale, check_lengths):
        # Read once, for the check and for the backward's calls (after the
        # checks that name a wrong argument before anything reads it).
        api.check_seq_starts(cu_seqlens_q, cu_seqlens_k, q, k,
                             check_values=False)
        ctx.offsets = (cu_seqlens_q.tolist(), cu_seqlens_k.tolist())
        o, lse = api.varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                    causal, window, sink_tokens, sinks,
                                    scale, check_lengths, ctx.offsets)
        ctx.save_for_backward(q, k, v, o, lse, sinks)
        ctx.variant = (causal, window, sink_tokens, scale)
        ctx.set_materialize_grads(False)
        return o, lse

    @staticmethod
    @once_differentiable
    def backward(ctx, do, dlse):
        if dlse is not None and bool((dlse != 0).any()):
            raise NotImplementedError(
                "fa.attention_varlen: gradients through lse are not "
                "supported; use return_lse only for values, or detach lse")
        q, k, v, o, lse, sinks = ctx.saved_tensors
        causal, window, sink_tokens, scale = ctx.variant
        dq, dk, dv = (torch.zeros_like(x) for x in (q, k, v))
        dsinks = None if sinks is None else torch.zeros_like(sinks)
        if do is None:  # only lse was used
            return dq, dk, dv, dsinks, *([None] * 7)
        do = do.contiguous()
        starts_q, starts_k = ctx.offsets
        rows_q, rows_k = q.shape[0], k.shape[0]

        def rows(x, first, end):  # [first, end) of x as [1, H, S, D]
            return x[first:end].unsqueeze(0).transpose(1, 2)
        for s in range(len(starts_q) - 1):
            # The forward's clamping of unchecked offsets, on the host.
            q0 = min(max(starts_q[s], 0), rows_q)
            q1 = min(max(starts_q[s + 1], q0), rows_q)
            k0 = min(max(starts_k[s], 0), rows_k)
            k1 = min(max(starts_k[s + 1], k0), rows_k)
            # No queries: no gradient reaches the keys. No keys: o = 0,
            # so neither q nor the sink gets one.
            if q1 == q0 or k1 == k0:
                continue
            grads = api.attention_backward(
                rows(q, q0, q1), rows(k, k0, k1), rows(v, k0, k1),
                rows(o, q0, q1), lse[:, q0:q1].unsqueeze(0),
                rows(do, q0, q1), causal, window, sink_tokens, sinks, scale,
                out=(rows(dq, q0, q1), rows(dk, k0, k1), rows(dv, k0, k1)))
            if dsinks is not None:
                dsinks += grads[3]
        return dq, dk, dv, dsinks, *([None] * 7)
