"""Decode steps through fa.decode: one (or a few: --query-lengths) query
rows per sequence against KV caches filled to a length per sequence. Reports GB/s of the bytes
a step must move (the K/V rows each sequence's mask lets it see, plus q and
o) beside the device-to-device copy's bandwidth, and SDPA's where it runs the
same step (uniform lengths, no sinks, no window); fa's step also captured in
a CUDA graph and replayed (the kernels without the Python host); and, with
--graph-layers L, L steps on caches of their own in one graph, as a
model's graph holds a step of every layer, so that the graph's launch is
paid once a token and not once a layer (a step's time: the replay's over
L). Timing: CUDA events around 50 queued calls after a warm-up, median of
5 rounds.

python3 bench/bench_decode.py [--quick] [--graph-layers L] [--csv FILE]
"""
import argparse
import csv
import itertools
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import fa
from common import cuda_ms

# name, Hq, Hkv, D, window, learnable sinks
MODELS = [("gpt-oss full", 64, 8, 64, None, True),
          ("gpt-oss window 128", 64, 8, 64, 128, True),
          ("Llama 32/8", 32, 8, 128, None, False)]
BATCHES = [1, 8, 32, 128]
CACHES = [1024, 8192, 32768, 131072]
MAX_CACHE_BYTES = 24 << 30


def queued_ms(fn, calls=50, rounds=5):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    return statistics.median(cuda_ms(fn, calls) for _ in range(rounds))


def copy_gbps():
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    ms = queued_ms(lambda: y.copy_(x), calls=10, rounds=3)
    return 2 * x.numel() / ms / 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true",
                        help="batches 1 and 32, caches 8k and 128k")
    parser.add_argument("--ragged", action="store_true",
                        help="lengths uniform in [cache/2, cache] instead "
                        "of the whole cache")
    parser.add_argument("--append", action="store_true",
                        help="each step writes its own key and value into "
                        "the cache (fa.decode's k_new/v_new; the lengths "
                        "passed stop one short), beside two copies into "
                        "the cache before a plain step")
    parser.add_argument("--models",
                        help="comma-separated model names, '_' for a space "
                        "(default: all): " + ", ".join(m[0] for m in MODELS))
    parser.add_argument("--batches", help="comma-separated batch sizes")
    parser.add_argument("--caches", help="comma-separated cache lengths")
    parser.add_argument("--query-lengths", default="1",
                        help="comma-separated query rows per sequence (a "
                        "speculative step's drafts plus one; causal within "
                        "them, bottom-right aligned); SDPA runs at 1 only, "
                        "where its causal mask and fa's agree")
    parser.add_argument("--graph-layers", type=int, default=0,
                        help="also capture this many steps, each on its "
                        "own q, caches and lengths, in one graph (where "
                        "their caches fit): a step's time in a model's "
                        "graph (0: not measured)")
    parser.add_argument("--csv")
    parser.add_argument("--time-limit", type=float, default=float("inf"),
                        help="start no row after this many seconds")
    args = parser.parse_args()
    began = time.monotonic()
    batches, caches = ([1, 32], [8192, 131072]) if args.quick else \
        (BATCHES, CACHES)
    if args.batches:
        batches = [int(x) for x in args.batches.split(",")]
    if args.caches:
        caches = [int(x) for x in args.caches.split(",")]
    models = MODELS
    if args.models:
        wanted = args.models.replace("_", " ").split(",")
        unknown = set(wanted) - {m[0] for m in MODELS}
        if unknown:
            parser.error(f"--models: no model named {sorted(unknown)}")
        models = [m for m in MODELS if m[0] in wanted]
    query_lengths = [int(x) for x in args.query_lengths.split(",")]
    if min(query_lengths) < 1:
        parser.error(f"--query-lengths: each at least 1, got "
                     f"{args.query_lengths}")
    peak = copy_gbps()
    print(f"device-to-device copy: {peak:.0f} GB/s (read + write); "
          f"{torch.cuda.get_device_name()}", flush=True)
    rows = []
    torch.manual_seed(0)
    for name, hq, hkv, d, window, learnable in models:
        for b, cache, sq in itertools.product(batches, caches, query_lengths):
            if 4 * b * hkv * cache * d > MAX_CACHE_BYTES:
                continue
            if time.monotonic() - began > args.time_limit:
                print("time limit: rows left out", flush=True)
                break
            q = torch.randn(b, hq, sq, d, device="cuda",
                            dtype=torch.bfloat16)
            k, v = (torch.randn(b, hkv, cache, d, device="cuda",
                                dtype=torch.bfloat16) for _ in range(2))
            sinks = torch.randn(hq, device="cuda") if learnable else None
            if args.ragged:
                lengths = torch.randint(cache // 2, cache + 1, (b,),
                                        dtype=torch.int32)
            else:
                lengths = torch.full((b,), cache, dtype=torch.int32)
            # Under a window the rows see its last keys and those of the
            # rows after the first.
            seen = lengths.clamp(max=window + sq - 1) if window else lengths
            nbytes = 2 * (2 * hkv * d * int(seen.sum()) +
                          2 * b * hq * sq * d)
            lengths = lengths.cuda()
            # Unchecked lengths (clamped in the kernels): the check
            # would synchronise every step.
            def step_on(q, k, v):
                return lambda: fa.decode(q, k, v, cache_seqlens=lengths,
                                         sinks=sinks, window=window,
                                         check_lengths=False)
            step = step_on(q, k, v)
            if args.append:
                k_new, v_new = (torch.randn(b, hkv, sq, d, device="cuda",
                                            dtype=torch.bfloat16)
                                for _ in range(2))
                before = lengths - sq
                plain = step

                def copy_then_step():
                    k[:, :, cache - sq:].copy_(k_new)
                    v[:, :, cache - sq:].copy_(v_new)
                    plain()
                step = lambda: fa.decode(
                    q, k, v, cache_seqlens=before, k_new=k_new,
                    v_new=v_new, sinks=sinks, window=window,
                    check_lengths=False)
            ms = queued_ms(step)
            # The same step captured in a CUDA graph and replayed: the
            # kernels' time without the Python host's.
            try:
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    step()
                graph_ms = queued_ms(graph.replay)
            except RuntimeError as e:  # said, and the row goes on
                print(f"graph capture failed: {e}", flush=True)
                graph_ms = float("nan")
            if args.append:
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    copy_then_step()
                copy_ms = queued_ms(graph.replay)
            layers_ms = None
            layers = args.graph_layers
            if layers > 0 and not args.append and \
                    4 * b * hkv * cache * d * layers <= MAX_CACHE_BYTES:
                # Each layer its own q and caches (so that no layer reads
                # another's K/V from L2), the same lengths and sinks.
                steps = [step_on(torch.randn_like(q), torch.randn_like(k),
                                 torch.randn_like(v)) for _ in range(layers)]
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    for layer_step in steps:
                        layer_step()
                layers_ms = queued_ms(graph.replay, calls=10) / layers
                steps = graph = None
            row = dict(model=name, batch=b, cache=cache, queries=sq,
                       ragged=args.ragged, fa_us=ms * 1e3,
                       fa_gbps=nbytes / ms / 1e6,
                       fa_of_copy=nbytes / ms / 1e6 / peak,
                       fa_graph_us=graph_ms * 1e3,
                       fa_graph_gbps=nbytes / graph_ms / 1e6)
            line = (f"{name:20s} B {b:4d} cache {cache:6d}"
                    f"{f' q {sq:2d}' if sq > 1 else ''}: fa "
                    f"{ms * 1e3:8.1f} us {row['fa_gbps']:6.0f} GB/s "
                    f"({row['fa_of_copy']:.0%} of copy); graph "
                    f"{graph_ms * 1e3:8.1f} us "
                    f"{row['fa_graph_gbps']:6.0f} GB/s "
                    f"({nbytes / graph_ms / 1e6 / peak:.0%})")
            if layers_ms is not None:
                row.update(fa_layers_graph_us=layers_ms * 1e3,
                           fa_layers_graph_gbps=nbytes / layers_ms / 1e6)
                line += (f" | {layers} a graph {layers_ms * 1e3:8.1f} us "
                         f"{row['fa_layers_graph_gbps']:6.0f} GB/s "
                         f"({nbytes / layers_ms / 1e6 / peak:.0%})")
            if args.append:
                row.update(copies_then_step_graph_us=copy_ms * 1e3)
                line += f" | 2 copies + step, graph {copy_ms * 1e3:8.1f} us"
            if not learnable and not window and not args.ragged and \
                    sq == 1:
                sdpa = queued_ms(lambda: F.scaled_dot_product_attention(
                    q, k, v, enable_gqa=True))
                row.update(sdpa_us=sdpa * 1e3,
                           sdpa_gbps=nbytes / sdpa / 1e6)
                line += (f" | sdpa {sdpa * 1e3:8.1f} us "
                         f"{row['sdpa_gbps']:6.0f} GB/s")
            print(line, flush=True)
            rows.append(row)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=sorted(
                {key for row in rows for key in row}))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    sys.exit(main())
