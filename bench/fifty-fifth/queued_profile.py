#!/usr/bin/env python3
"""Why fa's queued backward calls take longer than one call's kernels
(fifty-fourth session: causal D 128 1.487 ms queued against a 1.358 ms
span) while cuDNN's do not: torch.profiler over --calls backwards queued
back to back (and, for comparison, each call alone), for fa and SDPA's
cuDNN backend at issue 14's dense bar shapes. Prints, per implementation
and mode: the per-call period (first kernel to the next call's first
kernel), each kernel's median duration, and the median idle gap before
each kernel (the GPU doing nothing between two activities). Events
around the same calls, unprofiled, give the queued ms per call.

  usage: queued_profile.py [--shapes causal:B,H,S,D;...] [--calls N]
"""
import argparse
import contextlib
import os
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import fa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # noqa: E402  (bench/)
import host_overhead  # noqa: E402


def queued_ms(fn, calls):
    return statistics.median(common.cuda_ms(fn, calls) for _ in range(5))


def events(fn, calls, alone):
    return host_overhead.cuda_events(fn, calls, synchronise_each=alone)


def report(name, evs, first_name):
    starts = [e.time_range.start for e in evs if first_name in e.name]
    periods = [b - a for a, b in zip(starts, starts[1:])]
    durations, gaps = {}, {}
    for prev, e in zip(evs, evs[1:]):
        key = e.name[:60]
        gaps.setdefault(key, []).append(e.time_range.start - prev.time_range.end)
    for e in evs:
        durations.setdefault(e.name[:60], []).append(e.time_range.elapsed_us())
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    print(f"  {name}: period median {med(periods) / 1e3:.3f} ms "
          f"(min {min(periods) / 1e3:.3f}, max {max(periods) / 1e3:.3f})")
    for key, ds in durations.items():
        print(f"    {med(ds) / 1e3:8.3f} ms (n {len(ds):3d}, max "
              f"{max(ds) / 1e3:.3f}) gap before {med(gaps.get(key, [0])):7.1f} us"
              f"  {key}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="causal:4,16,4096,128;full:4,16,4096,128;"
                   "causal:4,32,4096,64;full:4,32,4096,64")
    p.add_argument("--calls", type=int, default=20)
    args = p.parse_args()
    for item in args.shapes.split(";"):
        mask, dims = item.split(":")
        b, h, s, d = map(int, dims.split(","))
        causal = mask == "causal"
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16,
                               requires_grad=True) for _ in range(3))
        impls = {
            "fa": (lambda: fa.attention(q, k, v, causal=causal), "row_dot"),
            "cudnn": (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                      "dot_do_o"),
        }
        for name, (fwd, first) in impls.items():
            ctx = sdpa_kernel(SDPBackend.CUDNN_ATTENTION) if name == "cudnn" \
                else contextlib.nullcontext()
            with ctx:
                out = fwd()
                do = torch.randn_like(out)
                grad = lambda: torch.autograd.grad(out, (q, k, v), do,
                                                   retain_graph=True)
                for _ in range(5):
                    grad()
                    if name == "fa":
                        fa.wait_for_compiles()
                print(f"== {name} {item}: queued {queued_ms(grad, args.calls):.3f} ms/call",
                      flush=True)
                report("queued", events(grad, args.calls, alone=False), first)
                report("alone", events(grad, 10, alone=True), first)
        del q, k, v
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
