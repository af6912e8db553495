#!/usr/bin/env python3
"""Where a forward call's time goes besides its kernel: host time per call,
and the gap between timing one call between CUDA events and timing a queue
of calls.

For each implementation (fa.attention; SDPA on its cuDNN and flash
backends) and each shape it prints:
  host_us     wall time per call of a tight loop of calls at a tiny shape
              (the GPU idles; this is the call's host cost)
  single_ms   median of CUDA events around one call, synchronised each time
              (bench_gpu.py's measure: host time before the launch counts)
  queued_ms   CUDA events around `--queue` calls in a row, per call (the
              host runs ahead; the kernels' own rate)
with --breakdown, the host time of each step of a forward call, and with
--profile, cProfile's top entries of fa.attention's calls.

Usage: host_overhead.py [--shapes B,H,S,D;...] [--queue 20] [--grad]
       [--profile] [--breakdown] [--time-limit SECONDS]
"""
import argparse
import cProfile
import pstats
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import common


def impls(fa):
    def sdpa(backend):
        def call(q, k, v):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return call
    return {
        "fa": lambda q, k, v: fa.attention(q, k, v, causal=True),
        "sdpa-cudnn": sdpa(SDPBackend.CUDNN_ATTENTION),
        "sdpa-flash2": sdpa(SDPBackend.FLASH_ATTENTION),
    }


def host_us(fn, calls=300):
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def queued_ms(fn, queue, reps=10):
    return statistics.median(common.cuda_ms(fn, queue) for _ in range(reps))


def breakdown(fa, tiny):
    """Host µs per call of each step of fa.attention's forward, one loop
    each, at the tiny shape (the GPU idles)."""
    from fa import api
    q, k, v = (x.detach() for x in tiny)
    _, program = api._attention_program(q, k, v, True, None, 0, None, None)
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:3], device="cuda")
    tensors = [q, k, v, o, lse]
    descriptors = [api._descriptor(t) for t in tensors]
    stream = torch.cuda.current_stream().cuda_stream
    steps = {
        "fa.attention (no grad)": lambda: fa.attention(q, k, v, causal=True),
        "check_attention_args": lambda: api.check_attention_args(
            q, k, v, True, None, 0, None, None),
        "_attention_program": lambda: api._attention_program(
            q, k, v, True, None, 0, None, None),
        "2 x torch.empty": lambda: (torch.empty_like(q),
                                    torch.empty(q.shape[:3], device="cuda")),
        "5 x _descriptor": lambda: [api._descriptor(t) for t in tensors],
        "current_stream": lambda: torch.cuda.current_stream().cuda_stream,
        "api._run": lambda: api._run(program, "attention", "forward",
                                     tensors),
        "Program.run (C++)": lambda: program.run(
            "attention", "forward", descriptors, stream=stream),
        "torch add_ (one launch)": lambda: o.add_(1),
    }
    for name, fn in steps.items():
        print(f"  {name:26s} {host_us(fn, 500):8.1f} us")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="2,16,8192,128;4,16,4096,128")
    parser.add_argument("--queue", type=int, default=20)
    parser.add_argument("--grad", action="store_true",
                        help="inputs that require gradients (autograd)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--breakdown", action="store_true",
                        help="host time of each step of a forward call")
    parser.add_argument("--time-limit", type=float, default=450,
                        help="seconds after which no new shape starts")
    args = parser.parse_args()
    fa = common.import_fa()
    calls = impls(fa)

    tiny = [torch.randn(1, 1, 128, 64, device="cuda", dtype=torch.bfloat16,
                        requires_grad=args.grad) for _ in range(3)]
    for name, fn in calls.items():
        print(f"{name:12s} host_us {host_us(lambda: fn(*tiny)):8.1f} "
              f"(B 1, H 1, S 128, D 64, grad {args.grad})")

    deadline = time.perf_counter() + args.time_limit
    for text in args.shapes.split(";"):
        if time.perf_counter() > deadline:
            print(f"time limit: shape {text} not run")
            break
        b, h, s, d = map(int, text.split(","))
        qkv = [torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=args.grad) for _ in range(3)]
        flops = common.attention_flops(b, h, s, d, causal=True)
        for name, fn in calls.items():
            call = lambda: fn(*qkv)
            single, _ = common.measure(call, warmup=5, reps=30, budget=60)
            single = statistics.median(single)
            queued = queued_ms(call, args.queue)
            print(f"{name:12s} causal {text:18s} single_ms {single:7.3f} "
                  f"({flops / single / 1e9:5.0f} TFLOP/s)  queued_ms "
                  f"{queued:7.3f} ({flops / queued / 1e9:5.0f} TFLOP/s)")

    if args.breakdown:
        breakdown(fa, tiny)

    if args.profile:
        fn = calls["fa"]
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(200):
            fn(*tiny)
        profiler.disable()
        torch.cuda.synchronize()
        pstats.Stats(profiler, stream=sys.stdout).sort_stats(
            "tottime").print_stats(15)


if __name__ == "__main__":
    main()
