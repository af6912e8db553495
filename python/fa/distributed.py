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
the group, as data parallelism sums gradients).

Windows: a chunk pair's keys are a band of its queries' (t <= p, t > p -
window, in global positions), which fa's bottom-right aligned causal and
window masks express on a slice of the pair's rows and keys (at most two
calls a pair, _band_calls); pairs outside every window are skipped, and
where that leaves some rank without a use for some block, each block goes
straight to the ranks that see it (its gradients straight back) instead of
around the ring. Sink
tokens (which must lie in the first chunk) go from rank 0 to every rank
once; each rank attends to those outside its rows' windows beside the
ring, and their gradients are summed back to rank 0.
"""

import functools
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


def _band_calls(rows, keys, lo, hi):
    """fa calls that cover exactly the pairs (i, j), i < rows, j < keys,
    with j >= i + lo (lo None: no lower bound) and j <= i + hi (hi None: no
    upper bound): a list of (r0, r1, s0, s1, causal, window, flipped), each
    fa's attention of query rows [r0, r1) over keys [s0, s1) with its
    bottom-right aligned causal and window masks; `flipped` calls take
    those rows and keys in reverse order (attention does not depend on the
    keys' order, and each row is its own). Rows whose upper bound lies
    inside the keys take a causal call with window hi - lo + 1. Rows whose
    upper bound lies past the last key see keys [i + lo, keys): reversed,
    that is a causal mask, which fa expresses where a window without its
    causal bound it cannot. Rows that see no key take no call."""
    calls = []
    start = 0  # the first row whose upper bound lies past the last key
    if hi is not None:
        start = max(0, keys - hi)
        r0, r1 = max(0, -hi), min(rows, keys - hi)
        if r1 > r0:
            s0, s1 = max(0, r0 + lo) if lo is not None else 0, r1 + hi
            window = hi - lo + 1 if lo is not None else None
            calls.append((r0, r1, s0, s1, True, window, False))
    r0 = min(start, rows)
    if lo is None:
        if rows > r0:
            calls.append((r0, rows, 0, keys, False, None, False))
        return calls
    r1 = min(rows, keys - lo)
    if r1 <= r0:
        return calls
    s0 = max(0, r0 + lo)
    n, m = r1 - r0, keys - s0
    # Reversed rows a' = n-1-a and keys b' = m-1-b: j >= i + lo becomes
    # b' <= a' + (keys - r1 - lo).
    for x0, x1, y0, y1, causal, window, _ in _band_calls(
            n, m, None, keys - r1 - lo):
        calls.append((r0 + n - x1, r0 + n - x0, s0 + m - y1, s0 + m - y0,
                      causal, window, True))
    return calls


def _pair_calls(causal, window, chunk, q_chunk, k_chunk):
    """The fa calls of queries of chunk q_chunk against keys of chunk
    k_chunk (chunks of `chunk` positions): key t is visible to query p when
    t <= p (causal) and t > p - window."""
    shift = (q_chunk - k_chunk) * chunk
    hi = shift if causal else None
    lo = shift - window + 1 if window is not None else None
    return _band_calls(chunk, chunk, lo, hi)


def _taker(flipped):
    """take(t, a, b): positions [a, b) of t on the sequence dim (dim 2, of
    q, k, v, o and lse alike), in reverse order for a flipped call (see
    _band_calls)."""
    if flipped:
        return lambda t, a, b: t[:, :, a:b].flip(2).contiguous()
    return lambda t, a, b: t[:, :, a:b]


def _merge_rows(state, rows, o_part, lse_part):
    """Merges the partial attention (o_part, lse_part) of rows [r0, r1) of
    a query chunk into `state` = [o, lse] (float32, or float64 for float64
    inputs; o 0 and lse -inf where no key was seen yet)."""
    r0, r1 = rows
    o, lse = state[0][..., r0:r1, :], state[1][..., r0:r1]
    lse_part = lse_part.to(lse.dtype)
    new = torch.logaddexp(lse, lse_part)
    seen = torch.isfinite(new)  # both -inf: nothing seen yet
    w_old = torch.where(seen, torch.exp(lse - new), 0)[..., None]
    w_new = torch.where(seen, torch.exp(lse_part - new), 0)[..., None]
    o.copy_(o * w_old + o_part.to(o.dtype) * w_new)
    lse.copy_(new)


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


def _needs(causal, window, world, chunk):
    """needs[r]: the owners of the K/V blocks that some chunk pair of rank
    r's queries sees (its own among them)."""
    return [{o for o in range(world)
             if any(_pair_calls(causal, window, chunk, q_chunk, k_chunk)
                    for q_chunk in _chunks(world)[r]
                    for k_chunk in _chunks(world)[o])}
            for r in range(world)]


def _direct_exchange(outgoing, incoming, group):
    """Sends the tensors of outgoing[peer] to each group rank `peer` and
    receives those of incoming[peer] (buffers) from it, in one batch;
    returns the requests."""
    peer = (lambda r: dist.get_global_rank(group, r)) if group else \
        (lambda r: r)
    ops = [dist.P2POp(dist.isend, t, peer(r), group)
           for r in sorted(outgoing) for t in outgoing[r]]
    ops += [dist.P2POp(dist.irecv, t, peer(r), group)
            for r in sorted(incoming) for t in incoming[r]]
    return dist.batch_isend_irecv(ops) if ops else []


@functools.lru_cache(maxsize=64)
def _plan(causal, window, world, rank, chunk):
    """(owners, users) when this variant sends each block only to the
    ranks that see it (a window keeps most pairs empty): the owners whose
    blocks this rank sees and the ranks that see its block, others than
    itself; None where every rank sees every block (the ring then passes
    them on, one block in flight at a time). Kept per arguments: every
    forward and backward of a variant asks the same."""
    if window is None:
        return None
    needs = _needs(causal, window, world, chunk)
    if all(len(n) == world for n in needs):
        return None
    return (tuple(sorted(needs[rank] - {rank})),
            tuple(r for r in range(world) if r != rank and rank in needs[r]))


class _RingAttention(torch.autograd.Function):

    @staticmethod
    def forward(ctx, q, k, v, sinks, causal, window, sink_tokens, scale,
                group):
        rank, world = dist.get_rank(group), dist.get_world_size(group)
        mine = _chunks(world)[rank]
        chunk = q.shape[2] // 2
        q_parts = q.chunk(2, dim=2)
        acc = api.accumulator_torch_dtype(q.dtype)
        state = [[q.new_zeros(part.shape, dtype=acc),
                  q.new_full(part.shape[:3], -math.inf, dtype=acc)]
                 for part in q_parts]

        def attend(i, call, k_block, v_block):
            r0, r1, s0, s1, mask, win, flipped = call
            take = _taker(flipped)
            o_part, lse_part = api.attention_forward(
                take(q_parts[i], r0, r1), take(k_block, s0, s1),
                take(v_block, s0, s1), mask, win, 0, None, scale)
            _merge_rows(state[i], (r0, r1), take(o_part, 0, r1 - r0),
                        take(lse_part, 0, r1 - r0))

        def visit(owner, k_block, v_block):
            k_parts, v_parts = k_block.chunk(2, dim=2), v_block.chunk(2, 2)
            for i, q_chunk in enumerate(mine):
                for j, k_chunk in enumerate(_chunks(world)[owner]):
                    for call in _pair_calls(causal, window, chunk, q_chunk,
                                            k_chunk):
                        attend(i, call, k_parts[j], v_parts[j])

        block = [k.contiguous(), v.contiguous()]
        plan = _plan(causal, window, world, rank, chunk)
        if plan is not None:  # straight to the ranks that see them
            owners, users = plan
            received = {o: [torch.empty_like(t) for t in block]
                        for o in owners}
            requests = _direct_exchange({r: block for r in users}, received,
                                        group)
            visit(rank, *block)  # while the others travel
            for request in requests:
                request.wait()
            for owner in owners:
                visit(owner, *received[owner])
        for step in range(world if plan is None else 0):
            pending = None
            if step + 1 < world:  # the next block travels during compute
                pending = _ring_exchange(block, group, rank, world)
            visit((rank - step) % world, *block)
            if pending is not None:
                for request in pending[0]:
                    request.wait()
                block = pending[1]
        sink_kv = _sink_keys(k, v, window, sink_tokens, group)
        for i, q_chunk in enumerate(mine):
            for call in _sink_calls(window, sink_tokens, chunk, q_chunk):
                attend(i, call, *sink_kv)
        o = torch.cat([st[0] for st in state], dim=2)
        lse = torch.cat([st[1] for st in state], dim=2)
        if sinks is not None:  # once, in the final merge
            total = torch.logaddexp(lse, sinks.to(lse.dtype)[None, :, None])
            o = o * torch.exp(lse - total)[..., None]
            lse = total
        o = o.to(q.dtype)
        ctx.save_for_backward(q, k, v, o, lse, sinks, *sink_kv)
        ctx.causal, ctx.window, ctx.sink_tokens = causal, window, sink_tokens
        ctx.scale, ctx.group = scale, group
        return o, lse

    @staticmethod
    def backward(ctx, do, dlse):
        q, k, v, o, lse, sinks, *sink_kv = ctx.saved_tensors
        if dlse is not None and dlse.abs().sum() != 0:
            raise RuntimeError("ring_attention: a gradient through lse is not "
                               "supported; use o only")
        causal, window, scale, group = (ctx.causal, ctx.window, ctx.scale,
                                        ctx.group)
        rank, world = dist.get_rank(group), dist.get_world_size(group)
        mine = _chunks(world)[rank]
        chunk = q.shape[2] // 2
        halves = lambda t: [part.contiguous() for part in t.chunk(2, dim=2)]
        # Split once: every step's pairs take the same query-side halves.
        q_parts, o_parts = halves(q), halves(o)
        lse_parts, do_parts = halves(lse), halves(do)
        acc = lse.dtype
        dq = torch.zeros_like(q, dtype=acc)
        dq_parts = dq.chunk(2, dim=2)

        def attend(i, call, k_block, v_block, dk, dv):
            r0, r1, s0, s1, mask, win, flipped = call
            take = _taker(flipped)
            dq_i, dk_j, dv_j, _ = api.attention_backward(
                take(q_parts[i], r0, r1), take(k_block, s0, s1),
                take(v_block, s0, s1), take(o_parts[i], r0, r1),
                take(lse_parts[i], r0, r1),
                take(do_parts[i], r0, r1), mask, win, 0, None, scale)
            dq_parts[i][:, :, r0:r1].add_(take(dq_i, 0, r1 - r0).to(acc))
            dk[:, :, s0:s1].add_(take(dk_j, 0, s1 - s0).to(acc))
            dv[:, :, s0:s1].add_(take(dv_j, 0, s1 - s0).to(acc))

        def visit(owner, k_block, v_block, dk_block, dv_block):
            k_parts, v_parts = halves(k_block), halves(v_block)
            dk_parts, dv_parts = dk_block.chunk(2, 2), dv_block.chunk(2, 2)
            for i, q_chunk in enumerate(mine):
                for j, k_chunk in enumerate(_chunks(world)[owner]):
                    for call in _pair_calls(causal, window, chunk, q_chunk,
                                            k_chunk):
                        attend(i, call, k_parts[j], v_parts[j], dk_parts[j],
                               dv_parts[j])

        grads = lambda: [torch.zeros_like(k, dtype=acc),
                         torch.zeros_like(v, dtype=acc)]
        plan = _plan(causal, window, world, rank, chunk)
        if plan is not None:
            # The blocks come again from the ranks that own them; their
            # gradients go straight back.
            owners, users = plan
            mine_kv = [k.contiguous(), v.contiguous()]
            received = {o: [torch.empty_like(t) for t in mine_kv]
                        for o in owners}
            requests = _direct_exchange({r: mine_kv for r in users},
                                        received, group)
            dk, dv = grads()
            visit(rank, *mine_kv, dk, dv)
            for request in requests:
                request.wait()
            theirs = {o: grads() for o in owners}
            for owner in owners:
                visit(owner, *received[owner], *theirs[owner])
            back = {r: grads() for r in users}
            for request in _direct_exchange(theirs, back, group):
                request.wait()
            for grad in back.values():
                dk.add_(grad[0])
                dv.add_(grad[1])
        else:
            # The visiting block and its gradients travel together; after
            # `world` hops the gradients are back at their owner (the last
            # hop carries them alone: nobody needs the block any more).
            block = [k.contiguous(), v.contiguous(), *grads()]
            for step in range(world):
                visit((rank - step) % world, *block)
                last = step + 1 == world
                requests, received = _ring_exchange(
                    block[2:] if last else block, group, rank, world)
                for request in requests:
                    request.wait()
                block = [None, None] + received if last else received
            dk, dv = block[2], block[3]
        if sink_kv:
            # Every rank's share of the sink keys' gradients, summed where
            # they live: rank 0's first positions.
            sink_grads = [torch.zeros_like(t, dtype=acc) for t in sink_kv]
            for i, q_chunk in enumerate(mine):
                for call in _sink_calls(window, ctx.sink_tokens, chunk,
                                        q_chunk):
                    attend(i, call, *sink_kv, *sink_grads)
            for grad in sink_grads:
                dist.all_reduce(grad, group=group)
            if rank == 0:
                dk[:, :, :ctx.sink_tokens].add_(sink_grads[0])
                dv[:, :, :ctx.sink_tokens].add_(sink_grads[1])
        dsinks = None
        if sinks is not None:
            # d sink_h = -sum over rows of exp(sink_h - lse) * rowsum(dO o):
            # this rank's rows; summed over the group it is the whole.
            d = (do.to(acc) * o.to(acc)).sum(-1)
            p = torch.exp(sinks.to(acc)[None, :, None] - lse)
            dsinks = -(p * d).sum(dim=(0, 2)).to(sinks.dtype)
        return (dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype), dsinks,
                None, None, None, None, None)


def _sink_keys(k, v, window, sink_tokens, group):
    """(k, v) of the sink tokens, from rank 0 (whose first chunk holds
    them) to every rank, once; () when the variant has none that matter
    (without a window every key a row may see is visible already)."""
    if window is None or not sink_tokens:
        return ()
    source = dist.get_global_rank(group, 0) if group else 0
    sink_kv = [t[:, :, :sink_tokens].contiguous() for t in (k, v)]
    for t in sink_kv:
        dist.broadcast(t, source, group=group)
    return tuple(sink_kv)


def _sink_calls(window, sink_tokens, chunk, q_chunk):
    """The fa calls of queries of chunk q_chunk against the sink tokens
    they see outside their window (key t <= p - window); the ring's pairs
    cover the sink tokens inside it."""
    if window is None or not sink_tokens:
        return []
    return _band_calls(chunk, sink_tokens, None,
                       q_chunk * chunk - window)


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
    api.check_attention_args(q, k, v, causal, window, sink_tokens, sinks,
                             scale)
    if q.shape[2] != k.shape[2]:
        raise ValueError(f"q and k/v shards must hold the same positions, "
                         f"got Sq = {q.shape[2]} and Sk = {k.shape[2]}")
    if q.shape[2] % 2:
        raise ValueError(f"a zigzag shard holds two equal chunks, got "
                         f"{q.shape[2]} positions: pad the sequence to a "
                         f"multiple of 2 * world")
    if window is not None and sink_tokens > q.shape[2] // 2:
        raise ValueError(f"ring_attention: sink_tokens ({sink_tokens}) must "
                         f"lie in the first chunk, of {q.shape[2] // 2} "
                         f"positions here: use fewer sink tokens or fewer "
                         f"ranks")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[3])
    o, lse = _RingAttention.apply(q, k, v, sinks, causal, window,
                                  int(sink_tokens), float(scale), group)
    return (o, lse) if return_lse else o
