#!/usr/bin/env python3
"""Where a single backward call's time goes between its CUDA events, for
fa at issue 14's dense bar shapes: an event recorded just before fa's
backward launches splits each call into

  before launch   start event to the launch (host time the GPU waits for:
                  autograd.grad, the engine's hand-off, fa's Python)
  from launch     the launch to the end event (the kernels, and any gap
                  between them)

beside the whole single call, the same through api.attention_backward
without autograd, 20 queued calls per call, and SDPA's cuDNN backend's
single and queued calls. Medians of --reps calls, ms. First, the same
split of autograd.grad through a Python autograd.Function that does no
work (an event recorded as its backward starts): the engine's own
hand-off to its device thread, in a call timed alone.

  usage: single_parts.py [--shapes causal:B,H,S,D;full:...] [--reps N]
"""
import argparse
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import fa
from fa import api


def event():
    return torch.cuda.Event(enable_timing=True)


def single(fn, reps):
    times = []
    for _ in range(3):
        fn()
    for _ in range(reps):
        torch.cuda.synchronize()
        start, end = event(), event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def queued(fn, calls=20, reps=5):
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start, end = event(), event()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


class Stub(torch.autograd.Function):
    """No work either way; its backward records an event as it starts."""
    grads, marks = None, []

    @staticmethod
    def forward(ctx, q, k, v):
        return q.clone()

    @staticmethod
    def backward(ctx, do):
        mark = event()
        mark.record()
        Stub.marks.append(mark)
        return Stub.grads


def engine_hand_off(reps):
    """Median ms from autograd.grad's start event to the start of a Python
    node's backward, and of the whole call."""
    make = lambda: torch.randn(1, 8, 128, 64, device="cuda",
                               requires_grad=True)
    q, k, v = make(), make(), make()
    Stub.grads = tuple(torch.randn_like(x) for x in (q, k, v))
    out = Stub.apply(q, k, v)
    do = torch.randn_like(out)
    before, whole = [], []
    for i in range(reps + 3):
        torch.cuda.synchronize()
        Stub.marks.clear()
        start, end = event(), event()
        start.record()
        torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
        end.record()
        end.synchronize()
        if i >= 3:
            before.append(start.elapsed_time(Stub.marks[0]))
            whole.append(start.elapsed_time(end))
    return statistics.median(before), statistics.median(whole)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="causal:4,32,4096,64;"
                        "causal:4,16,4096,128;full:4,32,4096,64;"
                        "full:4,16,4096,128")
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    marks = []
    real_launch = api._CheckedCall.launch

    def launch(self, name, entry, tensors):
        if entry == "backward" and marks is not None:
            mark = event()
            mark.record()
            marks.append(mark)
        return real_launch(self, name, entry, tensors)
    api._CheckedCall.launch = launch
    hand_off, whole = engine_hand_off(args.reps)
    print(f"stub  autograd.grad single {whole:.3f}: its backward starts at "
          f"{hand_off:.3f}")

    for text in args.shapes.split(";"):
        mask, dims = text.split(":")
        b, h, s, d = map(int, dims.split(","))
        causal = mask == "causal"
        make = lambda: torch.randn(b, h, s, d, device="cuda",
                                   dtype=torch.bfloat16, requires_grad=True)
        q, k, v = make(), make(), make()
        dout = torch.randn_like(q)
        out = fa.attention(q, k, v, causal=causal)
        grad = lambda: torch.autograd.grad(out, (q, k, v), dout,
                                           retain_graph=True)
        for _ in range(3):
            grad()
        before, after, whole = [], [], []
        for _ in range(args.reps):
            torch.cuda.synchronize()
            marks.clear()
            start, end = event(), event()
            start.record()
            grad()
            end.record()
            end.synchronize()
            before.append(start.elapsed_time(marks[0]))
            after.append(marks[0].elapsed_time(end))
            whole.append(start.elapsed_time(end))
        med = statistics.median
        o, lse = api.attention_forward(q.detach(), k.detach(), v.detach(),
                                       causal, None, 0, None, None)
        direct = lambda: api.attention_backward(
            q.detach(), k.detach(), v.detach(), o, lse, dout, causal, None,
            0, None, None)
        print(f"fa    {text:22s} single {med(whole):.3f} = before launch "
              f"{med(before):.3f} + from launch {med(after):.3f}; "
              f"no autograd single {single(direct, args.reps):.3f}; "
              f"queued {queued(grad):.3f}")
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        rgrad = lambda: torch.autograd.grad(ref, (q, k, v), dout,
                                            retain_graph=True)
        print(f"cudnn {text:22s} single {single(rgrad, args.reps):.3f}; "
              f"queued {queued(rgrad):.3f}")
        del out, ref, o, lse


if __name__ == "__main__":
    main()
