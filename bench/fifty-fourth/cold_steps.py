#!/usr/bin/env python3
"""Each step of fa's eager backward on autograd's device thread, in calls
timed alone (the host waits for the GPU before each, as bench_gpu.py's
single calls do: "cold") and back to back ("hot"): time.perf_counter at
each step of a copy of torch_ops._eager_gradients and
api._launch_backward with stamps between, medians in us from
torch.autograd.grad's start. Causal 4x16x4096, D 128, bf16.

  usage: cold_steps.py [--reps N]
"""
import argparse
import statistics
import time

import torch

import fa
from fa import api, torch_ops

STAMPS = []


def stamp(name):
    STAMPS.append((name, time.perf_counter()))


def eager_gradients(ctx, do, dlse):
    stamp("backward starts")
    torch_ops._refuse_lse_gradient(dlse)
    q, k, v, o, lse, sinks, do = torch_ops._saved(ctx, do)
    stamp("saved tensors")
    causal, window, sink_tokens, scale, deterministic = ctx.variant
    record = api.forward_backward_call(ctx.record, q, k, v, o, lse, do,
                                       causal, window, sink_tokens, sinks,
                                       scale, deterministic)
    stamp("record")
    dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    stamp("dq empty")
    dk = torch.empty(k.shape, dtype=q.dtype, device=q.device)
    dv = torch.empty(v.shape, dtype=q.dtype, device=q.device)
    stamp("dk, dv empty")
    tensors = (q, k, v, o, lse, do, dq, dk, dv)
    stream = api._stream_of(q)
    pointers = [t.data_ptr() for t in tensors]
    stamp("stream, pointers")
    record.bound.run(pointers, stream)
    stamp("bound run")
    return dq, dk, dv, None, None, None, None, None, None, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=40)
    args = parser.parse_args()
    make = lambda: torch.randn(4, 16, 4096, 128, device="cuda",
                               dtype=torch.bfloat16, requires_grad=True)
    q, k, v = make(), make(), make()
    dout = torch.randn_like(q)
    out = fa.attention(q, k, v, causal=True)
    grad = lambda: torch.autograd.grad(out, (q, k, v), dout,
                                       retain_graph=True)
    for _ in range(5):
        grad()  # binds the backward's call
    torch_ops._eager_gradients = eager_gradients
    for mode in ("cold", "hot"):
        rows = {}
        for _ in range(args.reps):
            if mode == "cold":
                torch.cuda.synchronize()
            STAMPS.clear()
            start = time.perf_counter()
            grad()
            stamp("grad returns")
            for name, t in STAMPS:
                rows.setdefault(name, []).append((t - start) * 1e6)
        torch.cuda.synchronize()
        print(f"{mode}: " + ", ".join(
            f"{name} {statistics.median(us):.0f}" for name, us in
            rows.items()))


if __name__ == "__main__":
    main()
