"""Paged against contiguous decode, through fa.decode replayed from a CUDA
graph: Llama 32/8 D 128 and gpt-oss full 64/8 D 64, one query row, pages
of 16 and 64 keys in shuffled order and of 16 in order (each sequence's
pages one after another in the pool); B 8 and 32k keys per sequence, or the
B,KEYS pairs given: python3 paged_bw.py [B,KEYS ...]."""
import statistics
import sys
import torch
import fa


def graph_us(step, calls=50, rounds=5):
    step()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    times = []
    for _ in range(rounds):
        s, e = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        s.record()
        for _ in range(calls):
            g.replay()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / calls * 1e3)
    return statistics.median(times)



def paged_pool(k, v, page, order):
    """k and v ([B, Hkv, keys, D]) as a pool of pages [pages, Hkv, page, D]
    and its block table, the pages shuffled or in order (each sequence's
    one after another)."""
    b, hkv, keys, d = k.shape
    per = keys // page
    table = (torch.randperm(b * per, device=k.device) if order == "shuffled"
             else torch.arange(b * per, device=k.device)).reshape(b, per).int()
    pools = []
    for x in (k, v):
        pool = torch.empty(b * per, hkv, page, d, device=x.device,
                           dtype=x.dtype)
        pool[table.flatten().long()] = x.reshape(b, hkv, per, page, d) \
            .transpose(1, 2).reshape(b * per, hkv, page, d)
        pools.append(pool)
    return pools[0], pools[1], table


def main():
    torch.manual_seed(0)
    for (b, keys), (name, hq, hkv, d, sinks) in (
            (tuple(int(x) for x in arg.split(",")), model)
            for arg in sys.argv[1:] or ["8,32768"]
            for model in [("Llama 32/8", 32, 8, 128, False),
                          ("gpt-oss full", 64, 8, 64, True)]):
        q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b, hkv, keys, d, device="cuda",
                            dtype=torch.bfloat16) for _ in range(2))
        s = torch.randn(hq, device="cuda") if sinks else None
        n = torch.full((b,), keys, dtype=torch.int32, device="cuda")
        nbytes = 2 * (2 * b * hkv * keys * d + 2 * b * hq * d)
        flat = graph_us(lambda: fa.decode(q, k, v, cache_seqlens=n, sinks=s,
                                          check_lengths=False))
        ref = fa.decode(q, k, v, cache_seqlens=n, sinks=s)
        print(f"{name} B {b} {keys} keys: contiguous {flat:7.1f} us "
              f"{nbytes / flat / 1e3:6.0f} GB/s", flush=True)
        for page, order in ((16, "shuffled"), (64, "shuffled"),
                            (16, "in order")):
            pool_k, pool_v, table = paged_pool(k, v, page, order)
            step = (lambda pk, pv, t: lambda: fa.decode(
                q, pk, pv, cache_seqlens=n, block_table=t, sinks=s,
                check_lengths=False))(pool_k, pool_v, table)
            err = ((step().double() - ref.double()).norm() /
                   ref.double().norm()).item()
            us = graph_us(step)
            print(f"  page {page:3d} ({order}): {us:7.1f} us "
                  f"{nbytes / us / 1e3:6.0f} GB/s "
                  f"({flat / us:.2f}x contiguous), rel. difference {err:.1e}",
                  flush=True)


if __name__ == "__main__":
    main()
