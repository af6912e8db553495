"""Packed variable-length prefill: fa.attention_varlen over N sequences of
random lengths packed end to end, beside the same sequences run one call
each (fa.attention and SDPA's flash and cuDNN backends, per sequence) and
fa.attention on one batch of equal-length sequences with the same tokens
(what packing costs against an unpadded batch). FLOPs count the visible
pairs of each sequence. Timing: CUDA events around queued calls after a
warm-up, median of 5 rounds.

python3 bench/bench_varlen.py [--csv FILE] [--time-limit SECONDS]
"""
import argparse
import csv
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import fa
from common import cuda_ms, visible_pairs

# name, Hq, Hkv, D, causal, window, learnable sinks
MODELS = [("Llama 32/8 causal", 32, 8, 128, True, None, False),
          ("gpt-oss full", 64, 8, 64, True, None, True),
          ("gpt-oss window 128", 64, 8, 64, True, 128, True)]
# (total tokens, shortest, longest): lengths drawn uniformly in between.
MIXES = [(16384, 512, 4096), (16384, 64, 1024), (65536, 1024, 16384)]


def queued_ms(fn, calls=10, rounds=5):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    return statistics.median(cuda_ms(fn, calls) for _ in range(rounds))


def lengths_of(total, lo, hi, gen):
    lengths = []
    while sum(lengths) < total:
        lengths.append(int(torch.randint(lo, hi + 1, (1,), generator=gen)))
    lengths[-1] -= sum(lengths) - total
    if lengths[-1] < 1:
        lengths.pop()
        lengths[-1] += total - sum(lengths)
    return lengths


def sdpa_backend(name):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION,
                        "cudnn": SDPBackend.CUDNN_ATTENTION}[name])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", default=None)
    parser.add_argument("--time-limit", type=float, default=float("inf"),
                        help="seconds after which no new row starts")
    args = parser.parse_args()
    began = time.monotonic()
    dev, dt = "cuda", torch.bfloat16
    rows = []
    gen = torch.Generator().manual_seed(0)
    for name, hq, hkv, d, causal, window, learnable in MODELS:
        for total, lo, hi in MIXES:
            if time.monotonic() - began > args.time_limit:
                print("time limit: rows left out", flush=True)
                break
            lengths = lengths_of(total, lo, hi, gen)
            cu = torch.tensor([0] + lengths).cumsum(0).to(torch.int32)
            q = torch.randn(total, hq, d, device=dev, dtype=dt)
            k, v = (torch.randn(total, hkv, d, device=dev, dtype=dt)
                    for _ in range(2))
            sinks = torch.randn(hq, device=dev) if learnable else None
            variant = dict(causal=causal, window=window)
            flops = sum(4.0 * hq * d * visible_pairs(n, n, causal, window)
                        for n in lengths)
            cu_dev = cu.to(dev)
            times = {}
            with torch.no_grad():
                times["fa varlen"] = queued_ms(lambda: fa.attention_varlen(
                    q, k, v, cu_dev, cu_dev, sinks=sinks,
                    check_lengths=False, **variant))
                views = [tuple(x[a:b][None].transpose(1, 2) for x in (q, k, v))
                         for a, b in zip(cu[:-1].tolist(), cu[1:].tolist())]

                def per_sequence():
                    for qs, ks, vs in views:
                        fa.attention(qs, ks, vs, sinks=sinks, **variant)
                times["fa per sequence"] = queued_ms(per_sequence, calls=2)
                if window is None and sinks is None:
                    for backend in ("flash", "cudnn"):
                        def sdpa():
                            for qs, ks, vs in views:
                                F.scaled_dot_product_attention(
                                    qs, ks, vs, is_causal=causal,
                                    enable_gqa=hq != hkv)
                        try:
                            with sdpa_backend(backend):
                                times[f"sdpa-{backend} per sequence"] = \
                                    queued_ms(sdpa, calls=2)
                        except RuntimeError as e:
                            print(f"sdpa-{backend}: {e}", file=sys.stderr)
                # The same tokens as one batch of equal lengths.
                s = total // len(lengths)
                qb, kb, vb = (x[:s * len(lengths)].reshape(
                    len(lengths), s, -1, d).transpose(1, 2) for x in (q, k, v))
                times["fa batch of equal lengths"] = queued_ms(
                    lambda: fa.attention(qb, kb, vb, sinks=sinks, **variant))
                equal_flops = len(lengths) * 4.0 * hq * d * visible_pairs(
                    s, s, causal, window)
            for what, ms in times.items():
                work = equal_flops if what.startswith("fa batch") else flops
                row = dict(model=name, tokens=total,
                           lengths=f"{lo}-{hi}", sequences=len(lengths),
                           kernel=what, ms=round(ms, 4),
                           tflops=round(work / ms / 1e9, 1))
                rows.append(row)
                print(row, flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
