"""Where a graph-replayed decode step's time goes (issue 18): each kernel's
duration and the gaps between them under torch.profiler, for fa.decode at
one batch and cache length per model, beside a read of the same bytes
(torch.sum over the K and V caches) and a copy of them, each also
captured in a CUDA graph.

PYTHONPATH=... python3 bench/forty-second/decode_parts.py
"""
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

import fa

CASES = [("gpt-oss full", 64, 8, 64, True, 1, 32768),
         ("gpt-oss full", 64, 8, 64, True, 1, 131072),
         ("Llama 32/8", 32, 8, 128, False, 1, 32768)]
REPLAYS = 40


def graph_of(fn):
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def replay_ms(g, calls=50, rounds=5):
    for _ in range(5):
        g.replay()
    out = []
    for _ in range(rounds):
        a, b = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        a.record()
        for _ in range(calls):
            g.replay()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / calls)
    return statistics.median(out)


def kernels_of(g):
    """(name, start us, duration us) of the kernels of REPLAYS replays."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPLAYS):
            g.replay()
        torch.cuda.synchronize()
    events = [e for e in prof.events()
              if e.device_type == torch.autograd.DeviceType.CUDA]
    out = [(e.name, e.time_range.start, e.time_range.end - e.time_range.start)
           for e in events]
    return sorted(out, key=lambda x: x[1])


def summarise(label, g):
    ks = kernels_of(g)
    per = len(ks) // REPLAYS if ks else 0
    print(f"{label}: {replay_ms(g) * 1e3:.1f} us a replay (events); "
          f"{len(ks)} kernels profiled, {per} a replay")
    if not per:
        return
    names = [ks[i][0][:70] for i in range(per)]
    for i, name in enumerate(names):
        durs = [ks[r * per + i][2] for r in range(REPLAYS)]
        print(f"  kernel {i}: {statistics.median(durs):7.2f} us  {name}")
    gaps = [[ks[r * per + i + 1][1] - (ks[r * per + i][1] + ks[r * per + i][2])
             for r in range(REPLAYS)] for i in range(per - 1)]
    for i, gap in enumerate(gaps):
        print(f"  gap after kernel {i}: {statistics.median(gap):6.2f} us")
    starts = [ks[r * per][1] for r in range(REPLAYS)]
    period = [b - a for a, b in zip(starts, starts[1:])]
    print(f"  replay period (first kernel to first kernel): "
          f"{statistics.median(period):.2f} us")


def main():
    print(torch.cuda.get_device_name())
    torch.manual_seed(0)
    for name, hq, hkv, d, learnable, b, cache in CASES:
        q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b, hkv, cache, d, device="cuda",
                            dtype=torch.bfloat16) for _ in range(2))
        sinks = torch.randn(hq, device="cuda") if learnable else None
        lengths = torch.full((b,), cache, dtype=torch.int32, device="cuda")
        kv_mb = 2 * k.numel() * 2 / 1e6
        print(f"== {name}, B {b}, cache {cache}: K/V {kv_mb:.1f} MB")
        summarise("fa.decode", graph_of(lambda: fa.decode(
            q, k, v, cache_seqlens=lengths, sinks=sinks,
            check_lengths=False)))
        def read():
            torch.sum(k, dtype=torch.float32)
            torch.sum(v, dtype=torch.float32)
        summarise("sum of K and V (read only)", graph_of(read))
        k2, v2 = torch.empty_like(k), torch.empty_like(v)

        def copy():
            k2.copy_(k)
            v2.copy_(v)
        summarise("copy of K and V", graph_of(copy))


if __name__ == "__main__":
    main()
