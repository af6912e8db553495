"""fa.distributed.ring_attention on CPU processes over gloo: forward and
backward against single-process fa.attention on the full sequence."""
import socket

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import fa  # noqa: E402
from fa.distributed import (_band_calls, ring_attention,  # noqa: E402
                            zigzag_shard, zigzag_unshard)

# name: (query heads, kv heads, causal, learnable sinks, window, sink tokens)
CASES = {
    "full": (4, 4, False, False, None, 0),
    "causal": (4, 4, True, False, None, 0),
    "gqa-causal": (4, 2, True, False, None, 0),
    "gqa-causal-sinks": (4, 1, True, True, None, 0),
    # Windows shorter and longer than a chunk (6 or 3 positions here).
    "causal-window-5": (4, 2, True, False, 5, 0),
    "gqa-causal-window-7": (4, 2, True, False, 7, 0),
    "causal-window-4-sink-tokens-2": (4, 2, True, False, 4, 2),
    "gpt-oss-like": (4, 1, True, True, 3, 1),
}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rel(got, ref):
    return ((got - ref).abs().max() / ref.abs().max()).item()


def _rank_main(rank, world, port, seq):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    try:
        for name, (hq, hkv, causal, learnable, window, sink_tokens) in \
                CASES.items():
            gen = torch.Generator().manual_seed(7)
            make = lambda h: torch.randn(2, h, seq, 16, generator=gen,
                                         dtype=torch.float64)
            q, k, v, do = make(hq), make(hkv), make(hkv), make(hq)
            sinks = torch.randn(hq, generator=gen, dtype=torch.float64) \
                if learnable else None
            # The reference: one process, the whole sequence.
            leaves = [t.clone().requires_grad_() for t in (q, k, v)]
            ref_sinks = sinks.clone().requires_grad_() if learnable else None
            ref = fa.attention(*leaves, causal=causal, window=window,
                               sink_tokens=sink_tokens, sinks=ref_sinks)
            ref.backward(do)
            # This rank's shard through the ring.
            mine = [zigzag_shard(t, rank, world).requires_grad_()
                    for t in (q, k, v)]
            my_sinks = sinks.clone().requires_grad_() if learnable else None
            o = ring_attention(*mine, causal=causal, window=window,
                               sink_tokens=sink_tokens, sinks=my_sinks)
            o.backward(zigzag_shard(do, rank, world))
            for what, got, want in (
                    ("o", o, ref), ("dq", mine[0].grad, leaves[0].grad),
                    ("dk", mine[1].grad, leaves[1].grad),
                    ("dv", mine[2].grad, leaves[2].grad)):
                err = rel(got.detach(), zigzag_shard(want.detach(), rank,
                                                     world))
                assert err < 1e-10, f"{name} world {world} rank {rank} " \
                    f"{what}: rel. error {err:.2e}"
            if learnable:
                total = my_sinks.grad.clone()
                dist.all_reduce(total)
                err = rel(total, ref_sinks.grad)
                assert err < 1e-10, f"{name} world {world} dsinks: {err:.2e}"
        # Sink tokens past the first chunk (of 24 / (2 * world) positions).
        q = torch.zeros(1, 2, 24 // world, 8, dtype=torch.float64)
        with pytest.raises(ValueError, match="must lie in the first chunk"):
            ring_attention(q, q, q, causal=True, window=2,
                           sink_tokens=24 // (2 * world) + 1)
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("world", [2, 4])
def test_ring_attention_matches_one_process(world):
    # 24 positions: 2 * world chunks of 6 or 3; ragged against fa's tiles.
    mp.spawn(_rank_main, args=(world, _free_port(), 24), nprocs=world,
             join=True)


def test_zigzag_round_trip_and_refusals():
    x = torch.arange(2 * 3 * 16 * 2, dtype=torch.float64).reshape(2, 3, 16, 2)
    shards = [zigzag_shard(x, r, 4) for r in range(4)]
    assert torch.equal(zigzag_unshard(shards), x)
    # Rank 0 holds the first and the last of the 8 chunks.
    assert torch.equal(shards[0][:, :, :2], x[:, :, :2])
    assert torch.equal(shards[0][:, :, 2:], x[:, :, 14:])
    with pytest.raises(ValueError, match="2 \\* world = 8 equal chunks"):
        zigzag_shard(x[:, :, :15], 0, 4)
    with pytest.raises(RuntimeError, match="torch.distributed initialized"):
        ring_attention(x, x, x)


def _fa_visible(rows, keys, causal, window):
    """The (row, key) pairs fa's masks keep: bottom-right aligned causal,
    and a window ending at that diagonal (tools/fa-run/Reference.cpp)."""
    seen = set()
    for i in range(rows):
        diag = i + keys - rows
        seen.update((i, j) for j in range(keys)
                    if not (causal and j > diag) and
                    not (window is not None and j <= diag - window))
    return seen


def test_band_calls_cover_each_band_exactly():
    # Every band j >= i + lo, j <= i + hi of small chunk pairs: the calls'
    # pairs (reversed calls mapped back) are the band, none twice, and each
    # call is one fa takes (a window only with causal).
    for rows, keys in [(r, k) for r in range(1, 7) for k in range(1, 7)]:
        for lo in [None] + list(range(-8, 9)):
            for hi in [None] + list(range(-8, 9)):
                if lo is not None and hi is not None and hi < lo:
                    continue
                want = {(i, j) for i in range(rows) for j in range(keys)
                        if (lo is None or j >= i + lo) and
                        (hi is None or j <= i + hi)}
                got = []
                for r0, r1, s0, s1, causal, window, flipped in _band_calls(
                        rows, keys, lo, hi):
                    assert 0 <= r0 < r1 <= rows and 0 <= s0 < s1 <= keys
                    assert window is None or (causal and window >= 1)
                    for a, b in _fa_visible(r1 - r0, s1 - s0, causal,
                                            window):
                        got.append((r1 - 1 - a, s1 - 1 - b) if flipped
                                   else (r0 + a, s0 + b))
                assert len(got) == len(set(got)), (rows, keys, lo, hi)
                assert set(got) == want, (rows, keys, lo, hi)
