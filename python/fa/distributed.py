"""Context parallelism: ring attention over torch.distributed.

Each rank of a process group holds a shard of the sequence, [B, H, S/W, D]
for a group of W ranks, and `ring_attention` computes exact attention over
the whole sequence: K/V blocks travel around the ring while each rank
attends to them with fa's kernels, and the partial results merge by their
log-sum-exps in float32. The backward re-uses fa's backward with the
merged (global) O and LSE, and the dK/dV of each block travel the ring
back to its owner. NCCL on GPUs, gloo on CPUs: the algorithm is the same.

Causal work is balanced by zigzag sharding: the sequence is cut into 2W
chunks and rank r holds chunks r and 2W-1-r (`zigzag_shard` and
`zigzag_unshard` make and undo it). A chunk pair is then fully visible, a
causal diagonal, or empty; empty pairs are skipped.

Learnable sinks (gpt-oss) join the softmax denominator once, in the final
merge; each rank's `sinks` gradient is its own rows' share (sum them over
the group, as data parallelism sums gradients). Windows and sink tokens are
not carried across ranks yet and are refused by name.
"""

import math

import torch
import torch.distributed as dist

from . import api

__all__ = ["ring_attention", "zigzag_shard", "zigzag_unshard"]


def _chunks(world):
    """The zigzag chunk indices of each rank."""
    return [(r, 2 * world - 1 - r) for r in range(world)]


def zigzag_shard(x, rank, world, dim=2):
    """Rank `rank`'s shard of the full-sequence tensor `x` (the sequence on
    `dim`): chunks rank and 2*world-1-rank of 2*world equal chunks."""
    if x.shape[dim] % (2 * world):
        raise ValueError(
            f"the sequence ({x.shape[dim]} on dim {dim}) must split into "
            f"2 * world = {2 * world} equal chunks for zigzag sharding; pad "
            f"it to a multiple of {2 * world}")
    pieces = x.chunk(2 * world, dim=dim)
    a, b = _chunks(world)[rank]
    return torch.cat([pieces[a], pieces[b]], dim=dim)


def zigzag_unshard(shards, dim=2):
    """The full-sequence tensor of the per-rank shards (in rank order)."""
    world = len(shards)
    pieces = [None] * (2 * world)
    for rank, shard in enumerate(shards):
        first, second = shard.chunk(2, dim=dim)
        a, b = _chunks(world)[rank]
        pieces[a], pieces[b] = first, second
    return torch.cat(pieces, dim=dim)


def _pair_mask(causal, q_chunk, k_chunk):
    """None when keys of chunk k_chunk are invisible to queries of chunk
    q_chunk, else fa's causal flag for the pair (equal chunk sizes: the
    diagonal pair is causal, earlier chunks wholly visible)."""
    if not causal:
        return False
    if k_chunk > q_chunk:
        return None
    return k_chunk == q_chunk


def _merge(o, lse, o_part, lse_part):
    """(o, lse) of two partial attentions over disjoint keys, in lse's
    dtype (float32; float64 for float64 inputs)."""
    acc = lse_part.dtype
    if o is None:
        return o_part.to(acc), lse_part
    new = torch.logaddexp(lse, lse_part)
    o = (o * torch.exp(lse - new)[..., None] +
         o_part.to(acc) * torch.exp(lse_part - new)[..., None])
    return o, new


def _ring_exchange(tensors, group, rank, world):
    """Sends `tensors` to the next rank and receives the previous rank's;
    returns (requests, received)."""
    received = [torch.empty_like(t) for t in tensors]
    nxt = dist.get_global_rank(group, (rank + 1) % world) if group else \
        (rank + 1) % world
    prev = dist.get_global_rank(group, (rank - 1) % world) if group else \
        (rank - 1) % world
    ops = [dist.P2POp(dist.isend, t, nxt, group) for t in tensors]
    ops += [dist.P2POp(dist.irecv, t, prev, group) for t in received]
    return dist.batch_isend_irecv(ops), received


class _RingAttention(torch.autograd.Function):

    @staticmethod
    def forward(ctx, q, k, v, sinks, causal, scale, group):
        rank, world = dist.get_rank(group), dist.get_world_size(group)
        mine = _chunks(world)[rank]
        q_parts = q.chunk(2, dim=2)
        merged = [(None, None), (None, None)]
        block = [k.contiguous(), v.contiguous()]
        for step in range(world):
            pending = None
            if step + 1 < world:  # the next block travels during compute
                pending = _ring_exchange(block, group, rank, world)
            owner = (rank - step) % world
            k_parts = block[0].chunk(2, dim=2)
            v_parts = block[1].chunk(2, dim=2)
            for i, q_chunk in enumerate(mine):
                for j, k_chunk in enumerate(_chunks(world)[owner]):
                    mask = _pair_mask(causal, q_chunk, k_chunk)
                    if mask is None:
                        continue
                    o_part, lse_part = api.attention_forward(
                        q_parts[i], k_parts[j], v_parts[j], mask, None, 0,
                        None, scale)
                    merged[i] = _merge(*merged[i], o_part, lse_part)
            if pending is not None:
                for request in pending[0]:
                    request.wait()
                block = pending[1]
        o = torch.cat([m[0] for m in merged], dim=2)
        lse = torch.cat([m[1] for m in merged], dim=2)
        if sinks is not None:  # once, in the final merge
            total = torch.logaddexp(lse, sinks.to(lse.dtype)[None, :, None])
            o = o * torch.exp(lse - total)[..., None]
            lse = total
        o = o.to(q.dtype)
        ctx.save_for_backward(q, k, v, o, lse, sinks)
        ctx.causal, ctx.scale, ctx.group = causal, scale, group
        return o, lse

    @staticmethod
    def backward(ctx, do, dlse):
        q, k, v, o, lse, sinks = ctx.saved_tensors
        if dlse is not None and dlse.abs().sum() != 0:
            raise RuntimeError("ring_attention: a gradient through lse is not "
                               "supported; use o only")
        causal, scale, group = ctx.causal, ctx.scale, ctx.group
        rank, world = dist.get_rank(group), dist.get_world_size(group)
        mine = _chunks(world)[rank]
        halves = lambda t: [part.contiguous() for part in t.chunk(2, dim=2)]
        # Split once: every step's pairs take the same query-side halves.
        q_parts, o_parts = halves(q), halves(o)
        lse_parts, do_parts = halves(lse), halves(do)
        acc = lse.dtype
        dq = torch.zeros_like(q, dtype=acc)
        dq_parts = dq.chunk(2, dim=2)
        # The visiting block and its gradients travel together; after
        # `world` hops the gradients are back at their owner (the last hop
        # carries them alone: nobody needs the block any more).
        block = [k.contiguous(), v.contiguous(),
                 torch.zeros_like(k, dtype=acc),
                 torch.zeros_like(v, dtype=acc)]
        for step in range(world):
            owner = (rank - step) % world
            k_parts, v_parts = halves(block[0]), halves(block[1])
            dk_parts, dv_parts = block[2].chunk(2, dim=2), block[3].chunk(2, 2)
            for i, q_chunk in enumerate(mine):
                for j, k_chunk in enumerate(_chunks(world)[owner]):
                    mask = _pair_mask(causal, q_chunk, k_chunk)
                    if mask is None:
                        continue
                    dq_i, dk_j, dv_j, _ = api.attention_backward(
                        q_parts[i], k_parts[j], v_parts[j], o_parts[i],
                        lse_parts[i], do_parts[i], mask, None, 0, None, scale)
                    dq_parts[i].add_(dq_i.to(acc))
                    dk_parts[j].add_(dk_j.to(acc))
                    dv_parts[j].add_(dv_j.to(acc))
            last = step + 1 == world
            requests, received = _ring_exchange(block[2:] if last else block,
                                                group, rank, world)
            for request in requests:
                request.wait()
            block = [None, None] + received if last else received
        dsinks = None
        if sinks is not None:
            # d sink_h = -sum over rows of exp(sink_h - lse) * rowsum(dO o):
            # this rank's rows; summed over the group it is the whole.
            d = (do.to(acc) * o.to(acc)).sum(-1)
            p = torch.exp(sinks.to(acc)[None, :, None] - lse)
            dsinks = -(p * d).sum(dim=(0, 2)).to(sinks.dtype)
        return (dq.to(q.dtype), block[2].to(k.dtype), block[3].to(v.dtype),
                dsinks, None, None, None)


def ring_attention(q, k, v, *, group=None, causal=False, window=None,
                   sink_tokens=0, sinks=None, scale=None, layout="zigzag",
                   return_lse=False):
    """fa.attention over a sequence sharded across the ranks of `group`.

    q [B, Hq, S/W, D], k and v [B, Hkv, S/W, D]: this rank's zigzag shard
    (zigzag_shard) of the full sequence, on the device its backend serves
    (CUDA for NCCL, CPU for gloo). Returns this rank's shard of o (and of
    lse with return_lse). Differentiable in q, k, v and sinks; the sinks'
    gradient on each rank is its own rows' share.
    """
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("ring_attention needs torch.distributed "
                           "initialized (dist.init_process_group)")
    if layout != "zigzag":
        raise ValueError(f"layout must be 'zigzag', got {layout!r}")
    if window is not None:
        raise NotImplementedError("ring_attention: window is not carried "
                                  "across ranks yet")
    if sink_tokens:
        raise NotImplementedError("ring_attention: sink_tokens are not "
                                  "carried across ranks yet")
    api.check_attention_args(q, k, v, causal, None, 0, sinks, scale)
    if q.shape[2] != k.shape[2]:
        raise ValueError(f"q and k/v shards must hold the same positions, "
                         f"got Sq = {q.shape[2]} and Sk = {k.shape[2]}")
    if q.shape[2] % 2:
        raise ValueError(f"a zigzag shard holds two equal chunks, got "
                         f"{q.shape[2]} positions: pad the sequence to a "
                         f"multiple of 2 * world")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[3])
    o, lse = _RingAttention.apply(q, k, v, sinks, causal, float(scale),
                                  group)
    return (o, lse) if return_lse else o
