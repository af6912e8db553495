"""Where the host time of fa's backward call goes (issue 14's single-call
bars; bench_gpu.py times one torch.autograd.grad between CUDA events, so
the host time before the first launch counts). For gpt-oss's window-128
layer (2x64/8x8k D 64, sinks) and full D 128 (4x16x4k), host us per call
(median of 20, the GPU kept busy by queued matmuls so nothing waits) of:
  grad        torch.autograd.grad of fa.attention's output
  grad-1t     the same with autograd's device threads off (the backward
              runs on the caller's thread)
  api         fa.api.attention_backward on the same tensors
  run         Program.run of the backward entry (api._run)
  bound       a BoundCall of the backward entry (Program.bind once)
  cudnn       torch.autograd.grad of SDPA's cuDNN backend (D 128 only)
then CUDA-event ms of a single grad (synchronised before) against the
kernels' sum (torch.profiler), and cProfile's top entries of grad-1t.
PYTHONPATH=... python3 bench/forty-third/bwd_host.py"""
import cProfile
import pstats
import statistics
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

import fa
from fa import api

CASES = [("gpt-oss window 128", 2, 64, 8, 8192, 64, True, 128, True),
         ("full D 128", 4, 16, 16, 4096, 128, False, None, False)]
BUSY = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)


def host_us(fn, reps=20):
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        for _ in range(12):
            BUSY @ BUSY  # ~12 ms queued: fn's launches never wait
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times)


def event_ms(fn, reps=10):
    out = []
    for _ in range(reps):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
            enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    return statistics.median(out)


def kernel_ms(fn, calls=5):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    total = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total += e.time_range.end - e.time_range.start
    return total / calls / 1e3


def warm_case(b, hq, hkv, s, d, causal, window, learnable):
    """bf16 leaves q, k, v (and sinks) of a case, fa.attention's output
    over them, a random dO and grad() (torch.autograd.grad of the output,
    graph kept), run until fa's background compiles are done."""
    torch.manual_seed(0)
    q = torch.randn(b, hq, s, d, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    k, v = (torch.randn(b, hkv, s, d, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True) for _ in range(2))
    sinks = (torch.randn(hq, device="cuda", requires_grad=True)
             if learnable else None)
    inputs = [t for t in (q, k, v, sinks) if t is not None]
    out = fa.attention(q, k, v, causal=causal, window=window, sinks=sinks)
    do = torch.randn_like(out)
    grad = lambda: torch.autograd.grad(out, inputs, do, retain_graph=True)
    for _ in range(3):
        grad()
    fa.wait_for_compiles()
    grad()
    return q, k, v, sinks, do, grad


def main():
    print(torch.cuda.get_device_name())
    for name, b, hq, hkv, s, d, causal, window, learnable in CASES:
        q, k, v, sinks, do, grad = warm_case(b, hq, hkv, s, d, causal, window,
                                             learnable)
        qd, kd, vd = q.detach(), k.detach(), v.detach()
        sd = None if sinks is None else sinks.detach()
        o, lse = api.attention_forward(qd, kd, vd, causal, window, 0, sd, None)
        apicall = lambda: api.attention_backward(qd, kd, vd, o, lse, do, causal,
                                                 window, 0, sd, None)
        record = api._attention_call(qd, kd, vd, causal, window, 0, sd, None,
                                     "backward")
        grads = [torch.empty_like(t) for t in (qd, kd, vd)]
        tensors = [qd, kd, vd, o, lse, do] + ([sd] if sd is not None else []) \
            + grads + ([torch.empty_like(sd)] if sd is not None else [])
        run = lambda: api._run(record.program, "attention", "backward", tensors)
        stream = api._stream_of(qd)
        bound = record.program.bind("attention", "backward",
                                    [api._descriptor(t) for t in tensors],
                                    stream=stream)
        ptrs = [t.data_ptr() for t in tensors]
        boundcall = lambda: bound.run(ptrs, api._stream_of(qd))

        def grad1t():
            with torch.autograd.set_multithreading_enabled(False):
                grad()
        for f in (apicall, run, boundcall, grad1t):
            f()
        torch.cuda.synchronize()
        print(f"== {name}")
        line = {"grad": host_us(grad), "grad-1t": host_us(grad1t),
                "api": host_us(apicall), "run": host_us(run),
                "bound": host_us(boundcall)}
        if d == 128:
            qc, kc, vc = (t.detach().clone().requires_grad_() for t in (q, k, v))
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                oc = F.scaled_dot_product_attention(qc, kc, vc, is_causal=causal)
            cg = lambda: torch.autograd.grad(oc, (qc, kc, vc), do,
                                             retain_graph=True)
            cg()
            line["cudnn"] = host_us(cg)
            print(f"  cudnn grad: event ms single {event_ms(cg):.3f}, kernels "
                  f"{kernel_ms(cg):.3f}")
        print("  host us: " + ", ".join(f"{k} {v:.1f}" for k, v in line.items()))
        print(f"  fa grad: event ms single {event_ms(grad):.3f}, kernels "
              f"{kernel_ms(grad):.3f}; bound: event ms single "
              f"{event_ms(boundcall):.3f}")
        prof = cProfile.Profile()
        torch.cuda.synchronize()
        prof.enable()
        for _ in range(20):
            grad1t()
        prof.disable()
        torch.cuda.synchronize()
        pstats.Stats(prof).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
