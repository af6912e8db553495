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
with --breakdown, the host time of each step of a forward and a backward
call; with
--profile, cProfile's top entries of fa.attention's calls; and with
--backward-kernels, each GPU activity (kernel, memset, copy) of one
backward per implementation and shape, from torch.profiler: its time, the
sum, and the span from the first start to the last end (the gaps are what
the span adds).

A variant other than causal or full MHA: --kv-group G (H / G key and
value heads), --window W, --learnable-sinks (float32 logits [H]); SDPA's
rows are left out where it cannot express the variant (windows, sinks).

Usage: host_overhead.py [--shapes B,H,S,D;...] [--queue 20] [--grad]
       [--full] [--kv-group G] [--window W] [--learnable-sinks]
       [--profile] [--breakdown] [--forward-kernels]
       [--backward-kernels]
       [--time-limit SECONDS]
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


class Variant:
    """The attention variant timed: the mask, GQA's group, and learnable
    sinks; makes the inputs and the fa call arguments."""

    def __init__(self, causal=True, group=1, window=None, sinks=False):
        self.causal, self.group = causal, group
        self.window, self.sinks = window, sinks

    def inputs(self, b, h, s, d, grad):
        """q, k, v (bf16) and sinks (or None)."""
        if h % self.group:
            raise SystemExit(f"--kv-group {self.group} does not divide "
                             f"{h} heads")
        make = lambda heads: torch.randn(b, heads, s, d, device="cuda",
                                         dtype=torch.bfloat16,
                                         requires_grad=grad)
        sinks = torch.randn(h, device="cuda", requires_grad=grad) \
            if self.sinks else None
        return make(h), make(h // self.group), make(h // self.group), sinks

    def args(self, sinks):
        """fa's api arguments after q, k, v: causal, window, sink_tokens,
        sinks, scale."""
        return self.causal, self.window, 0, sinks, None

    def keywords(self, sinks):
        """fa.attention's keyword arguments for the variant."""
        return dict(causal=self.causal, window=self.window, sinks=sinks)

    def flops(self, b, h, s, d):
        return common.attention_flops(b, h, s, d, causal=self.causal,
                                      window=self.window)

    def name(self):
        parts = ["causal" if self.causal else "full"]
        if self.group > 1:
            parts.append(f"gqa{self.group}")
        if self.window is not None:
            parts.append(f"w{self.window}")
        if self.sinks:
            parts.append("sinks")
        return "-".join(parts)


def impls(fa, variant):
    """Each implementation as call(q, k, v, sinks); SDPA only where it
    expresses the variant."""
    causal = variant.causal

    def sdpa(backend):
        def call(q, k, v, sinks):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(
                    q, k, v, is_causal=causal,
                    enable_gqa=variant.group > 1)
        return call
    calls = {"fa": lambda q, k, v, sinks: fa.attention(
        q, k, v, **variant.keywords(sinks))}
    if variant.window is None and not variant.sinks:
        calls["sdpa-cudnn"] = sdpa(SDPBackend.CUDNN_ATTENTION)
        calls["sdpa-flash2"] = sdpa(SDPBackend.FLASH_ATTENTION)
    return calls


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


def breakdown(fa, variant, tiny):
    """Host µs per call of each step of fa.attention's forward and
    backward, one loop each, at the tiny shape (the GPU idles)."""
    from fa import api
    q, k, v, sinks = (None if x is None else x.detach() for x in tiny)
    args = variant.args(sinks)
    kwargs = variant.keywords(sinks)
    _, program = api._attention_program(q, k, v, *args, "forward")
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:3], device="cuda")
    ins = [q, k, v] + ([sinks] if sinks is not None else [])
    tensors = ins + [o, lse]
    descriptors = [api._descriptor(t) for t in tensors]
    stream = torch.cuda.current_stream().cuda_stream
    steps = {
        "fa.attention (no grad)": lambda: fa.attention(q, k, v, **kwargs),
        "check_attention_args": lambda: api.check_attention_args(
            q, k, v, *args),
        "_attention_program": lambda: api._attention_program(
            q, k, v, *args, "forward"),
        "2 x torch.empty": lambda: (torch.empty_like(q),
                                    torch.empty(q.shape[:3], device="cuda")),
        f"{len(tensors)} x _descriptor": lambda: [api._descriptor(t)
                                                  for t in tensors],
        "current_stream": lambda: torch.cuda.current_stream().cuda_stream,
        "api._run": lambda: api._run(program, "attention", "forward",
                                     tensors),
        "Program.run (C++)": lambda: program.run(
            "attention", "forward", descriptors, stream=stream),
        "torch add_ (one launch)": lambda: o.add_(1),
    }
    if hasattr(api, "forward_call"):  # builds with bound calls
        record = api.forward_call(q, k, v, *args)
        for _ in range(2):  # the second launch binds
            record.launch("attention", "forward", tensors)
        pointers = [t.data_ptr() for t in tensors]
        steps.update({
            "forward_call": lambda: api.forward_call(q, k, v, *args),
            "launch (bound)": lambda: record.launch("attention", "forward",
                                                    tensors),
            "BoundCall.run (C++)": lambda: record.bound.run(pointers,
                                                            stream),
        })
    # The backward's steps: its entry, the C++ call alone, and autograd's
    # whole call (the eager Function around the entry).
    api._run(program, "attention", "forward", tensors)
    grads = [torch.empty_like(t) for t in ins]
    do = torch.randn_like(q)
    backward = ins[:3] + [o, lse, do] + ins[3:] + grads
    backward_descriptors = [api._descriptor(t) for t in backward]
    # Programs hold one entry each: the backward's is its own.
    _, backward_program = api._attention_program(q, k, v, *args, "backward")
    qg = q.clone().requires_grad_()
    out = fa.attention(qg, k, v, **kwargs)
    steps.update({
        "fa.attention (grad)": lambda: fa.attention(qg, k, v, **kwargs),
        "prepare_backward": lambda: api.prepare_backward(qg, k, v, *args),
        "attention_backward": lambda: api.attention_backward(
            q, k, v, o, lse, do, *args),
        "Program.run backward (C++)": lambda: backward_program.run(
            "attention", "backward", backward_descriptors, stream=stream),
        "autograd.grad (whole call)": lambda: torch.autograd.grad(
            out, qg, do, retain_graph=True),
    })
    for name, fn in steps.items():
        print(f"  {name:26s} {host_us(fn, 500):8.1f} us")


def backward_of(call, qkv):
    """One backward of call(*qkv) as a function: autograd.grad (of q, k, v
    and the sinks where there are) with a random dO, the graph kept for
    the next."""
    out = call(*qkv)
    dout = torch.randn_like(out)
    grads_of = [x for x in qkv if x is not None]
    return lambda: torch.autograd.grad(out, grads_of, dout,
                                       retain_graph=True)


def backward_kernels(name, call, qkv, calls=3):
    """Prints each GPU activity of the last of `calls` profiled backwards
    of call(*qkv) (backward_of), in order."""
    gpu_activities(name, backward_of(call, qkv), calls)


def cuda_events(fn, calls, synchronise_each=True):
    """The GPU activities (torch.profiler events) of `calls` calls of fn(),
    in the order they started; with `synchronise_each`, the host waits for
    the GPU after each call, else the calls are queued back to back."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
            if synchronise_each:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
    return sorted((e for e in prof.events()
                   if e.device_type == DeviceType.CUDA),
                  key=lambda e: e.time_range.start)


def gpu_activities(name, fn, calls=3):
    """Prints each GPU activity of the last of `calls` profiled calls of
    fn(), in order."""
    for _ in range(3):
        fn()
    events = cuda_events(fn, calls)
    if not events:
        print(f"  {name}: the profiler saw no GPU activity")
        return
    # The last call's activities: from the last gap longer than the host's
    # synchronisation (100 us) on.
    last = 0
    for i in range(1, len(events)):
        if events[i].time_range.start - events[i - 1].time_range.end > 100:
            last = i
    events = events[last:]
    total = sum(e.time_range.elapsed_us() for e in events)
    span = events[-1].time_range.end - events[0].time_range.start
    print(f"  {name}: {len(events)} GPU activities, sum {total / 1e3:.3f} "
          f"ms, span {span / 1e3:.3f} ms")
    for e in events:
        at = (e.time_range.start - events[0].time_range.start) / 1e3
        print(f"    {e.time_range.elapsed_us() / 1e3:8.3f} ms  +{at:7.3f}  "
              f"{e.name[:90]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="2,16,8192,128;4,16,4096,128")
    parser.add_argument("--queue", type=int, default=20)
    parser.add_argument("--grad", action="store_true",
                        help="inputs that require gradients (autograd)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--breakdown", action="store_true",
                        help="host time of each step of a forward call")
    parser.add_argument("--backward-kernels", action="store_true",
                        help="each GPU activity of one backward, with "
                        "--grad")
    parser.add_argument("--full", action="store_true",
                        help="full attention rather than causal")
    parser.add_argument("--kv-group", type=int, default=1,
                        help="query heads per key/value head (GQA)")
    parser.add_argument("--window", type=int,
                        help="a sliding window of this many keys")
    parser.add_argument("--learnable-sinks", action="store_true",
                        help="gpt-oss's learnable sink logits, one a head")
    parser.add_argument("--forward-kernels", action="store_true",
                        help="each GPU activity of one forward")
    parser.add_argument("--time-limit", type=float, default=450,
                        help="seconds after which no new shape starts")
    args = parser.parse_args()
    fa = common.import_fa()
    variant = Variant(causal=not args.full, group=args.kv_group,
                      window=args.window, sinks=args.learnable_sinks)
    calls = impls(fa, variant)
    mask = variant.name()

    tiny_heads = args.kv_group
    tiny = variant.inputs(1, tiny_heads, 128, 64, args.grad)
    for name, fn in calls.items():
        print(f"{name:12s} host_us {host_us(lambda: fn(*tiny)):8.1f} "
              f"(B 1, H {tiny_heads}, S 128, D 64, {mask}, grad "
              f"{args.grad})")

    deadline = time.perf_counter() + args.time_limit
    for text in args.shapes.split(";"):
        if time.perf_counter() > deadline:
            print(f"time limit: shape {text} not run")
            break
        b, h, s, d = map(int, text.split(","))
        qkv = variant.inputs(b, h, s, d, args.grad)
        flops = variant.flops(b, h, s, d)
        for name, fn in calls.items():
            call = lambda: fn(*qkv)
            single, _ = common.measure(call, warmup=5, reps=30, budget=60)
            single = statistics.median(single)
            queued = queued_ms(call, args.queue)
            print(f"{name:12s} {mask} {text:18s} single_ms {single:7.3f} "
                  f"({flops / single / 1e9:5.0f} TFLOP/s)  queued_ms "
                  f"{queued:7.3f} ({flops / queued / 1e9:5.0f} TFLOP/s)")
            if args.grad:
                grad = backward_of(fn, qkv)
                single, _ = common.measure(grad, warmup=3, reps=20,
                                           budget=60)
                single = statistics.median(single)
                queued = queued_ms(grad, args.queue)
                work = flops * common.BACKWARD_FLOP_RATIO
                print(f"{name:12s} backward {text:16s} single_ms "
                      f"{single:7.3f} ({work / single / 1e9:5.0f} TFLOP/s)  "
                      f"queued_ms {queued:7.3f} "
                      f"({work / queued / 1e9:5.0f} TFLOP/s)")
                grad = None
            if args.forward_kernels:
                gpu_activities(f"{name} forward", call)
            if args.backward_kernels and args.grad:
                backward_kernels(name, fn, qkv)

    if args.breakdown:
        breakdown(fa, variant, tiny)

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
