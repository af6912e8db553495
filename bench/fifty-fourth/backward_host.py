#!/usr/bin/env python3
"""Where a backward call's host time goes before its first kernel, on the
GPU machine: timestamps (time.perf_counter, one clock for both threads)
around torch.autograd.grad and inside fa's eager backward, which autograd
runs on its device thread:

  engine in    autograd.grad's call until fa's backward starts
  python       fa's backward until the bound call launches
  launch       the bound call (every kernel queued)
  engine out   fa's backward's return until autograd.grad returns

Beside them, autograd.grad's whole host time for: a Python
autograd.Function whose backward returns gradients made before (the
engine's own cost with a Python node), SDPA's cuDNN backend (a C++ node),
and fa; at a tiny shape (B 1, H 8, S 128, D 64), the GPU idle.

  usage: backward_host.py [--calls N]
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import fa
from fa import api, torch_ops

STAMPS = {}


def stamped(name, fn):
    def wrapper(*args, **kwargs):
        STAMPS[name + " in"] = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            STAMPS[name + " out"] = time.perf_counter()
    return wrapper


class Stub(torch.autograd.Function):
    """The engine's cost around a Python node: no work in either pass."""
    grads = None

    @staticmethod
    def forward(ctx, q, k, v):
        return q.clone()

    @staticmethod
    def backward(ctx, do):
        return Stub.grads


def host_us(fn, calls):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    make = lambda: torch.randn(1, 8, 128, 64, device="cuda",
                               dtype=torch.bfloat16, requires_grad=True)
    q, k, v = make(), make(), make()
    do = torch.randn_like(q)
    Stub.grads = tuple(torch.randn_like(x) for x in (q, k, v))

    out_stub = Stub.apply(q, k, v)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out_sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out_fa = fa.attention(q, k, v, causal=True)
    grad = lambda out: (lambda: torch.autograd.grad(out, (q, k, v), do,
                                                    retain_graph=True))
    for name, out in (("stub Function", out_stub), ("sdpa-cudnn", out_sdpa),
                      ("fa", out_fa)):
        us = host_us(grad(out), args.calls)
        print(f"{name:14s} autograd.grad host {us:7.1f} us")
    lse = torch.zeros(1, 8, 128, device="cuda")
    alone = lambda: api.attention_backward(
        q.detach(), k.detach(), v.detach(), out_fa.detach(), lse, do, True,
        None, 0, None, None)
    print(f"{'fa':14s} attention_backward alone "
          f"{host_us(alone, args.calls):7.1f} us")

    # The stages of fa's backward under autograd.grad.
    torch_ops._EagerAttention.backward = staticmethod(
        stamped("backward", torch_ops._EagerAttention.backward))
    api._CheckedCall.launch = stamped("launch", api._CheckedCall.launch)
    out_fa = fa.attention(q, k, v, causal=True)
    call = grad(out_fa)
    for _ in range(20):
        call()
    torch.cuda.synchronize()
    parts = {"engine in": [], "python": [], "launch": [], "engine out": [],
             "whole": []}
    for _ in range(args.calls):
        STAMPS.clear()
        start = time.perf_counter()
        call()
        end = time.perf_counter()
        torch.cuda.synchronize()
        s = STAMPS
        parts["engine in"].append(s["backward in"] - start)
        parts["python"].append(s["launch in"] - s["backward in"])
        parts["launch"].append(s["launch out"] - s["launch in"])
        parts["engine out"].append(end - s["backward out"])
        parts["whole"].append(end - start)
    for name, values in parts.items():
        us = statistics.median(values) * 1e6
        print(f"  fa backward {name:12s} {us:7.1f} us")


if __name__ == "__main__":
    main()
