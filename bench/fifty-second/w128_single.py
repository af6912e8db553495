#!/usr/bin/env python3
"""Where bench_gpu.py's single-call time of gpt-oss window 128's forward
goes beyond its kernel: bench_gpu's inputs and fa call (2x64/8x8k, D 64,
sinks, all needing gradients), after its first call and the background
compiles; per mode (autograd on, torch.no_grad) the median of 30 single
calls between CUDA events (bench_gpu's measure), the host time of the call
itself (perf_counter around it, the GPU idle before), 20 queued calls, and
each GPU activity's median time (torch.profiler over 10 single calls);
then the same for the backward (autograd.grad of q, k, v and the sinks)."""
import statistics
import sys
import time

import torch

sys.path.insert(0, "bench")
import bench_gpu  # noqa: E402
import common  # noqa: E402
import host_overhead  # noqa: E402


def profiled(fn, calls=10):
    """Each GPU activity's median time over `calls` single calls."""
    events = host_overhead.cuda_events(fn, calls)
    for name in sorted({e.name for e in events}):
        us = [e.time_range.elapsed_us() for e in events if e.name == name]
        print(f"    gpu {name[:60]:60s} x{len(us):3d} median "
              f"{statistics.median(us):7.1f} us")


def main():
    fa = common.import_fa()
    cfg = next(bench_gpu.configs(["gpt-oss-window-128"], [64], [8192]))
    q, k, v, sinks = bench_gpu.inputs(cfg)
    attend = bench_gpu.fa_attend(fa, cfg)
    fn = lambda: attend(q, k, v, sinks)
    fn()
    fa.wait_for_compiles()
    for mode in ("grad", "no_grad"):
        ctx = torch.no_grad() if mode == "no_grad" else torch.enable_grad()
        with ctx:
            for _ in range(10):
                fn()
            torch.cuda.synchronize()
            single = statistics.median(common.cuda_ms(fn, 1)
                                       for _ in range(30))
            host = []
            for _ in range(30):
                torch.cuda.synchronize()
                t = time.perf_counter()
                fn()
                host.append((time.perf_counter() - t) * 1e6)
            torch.cuda.synchronize()
            queued = statistics.median(common.cuda_ms(fn, 20)
                                       for _ in range(5))
            print(f"{mode:8s} single {single:.3f} ms  queued {queued:.3f} ms"
                  f"  host {statistics.median(host):.1f} us (min "
                  f"{min(host):.1f})  {cfg['flops'] / single / 1e9:.1f} / "
                  f"{cfg['flops'] / queued / 1e9:.1f} TFLOP/s")
            profiled(fn)
    out = fn()
    dout = torch.randn_like(out)
    grads_of = bench_gpu.differentiable(q, k, v, sinks)
    grad = lambda: torch.autograd.grad(out, grads_of, dout, retain_graph=True)
    grad()
    torch.cuda.synchronize()
    single = statistics.median(common.cuda_ms(grad, 1) for _ in range(30))
    queued = statistics.median(common.cuda_ms(grad, 20) for _ in range(5))
    work = cfg["flops"] * common.BACKWARD_FLOP_RATIO
    print(f"backward single {single:.3f} ms  queued {queued:.3f} ms  "
          f"{work / single / 1e9:.1f} / {work / queued / 1e9:.1f} TFLOP/s")
    profiled(grad)


if __name__ == "__main__":
    main()
