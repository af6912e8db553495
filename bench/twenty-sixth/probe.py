#!/usr/bin/env python3
"""Where a bench_gpu.py forward row's time goes: for each case and
implementation, single_ms (one call between CUDA events after a
synchronisation: bench_gpu.py's measure, host time before the launch
counted), queued_ms (20 calls in a row, per call: the kernels' rate) and,
for fa, the GPU time of its kernels per call from torch.profiler.

Usage: probe.py [--variants a,b] [--seqs 8192] [--head-dims 64]
                [--impls fa,flex,sdpa-cudnn]
Runs with the caller's FA_AUTOTUNE (bench_gpu.py sets 1)."""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import bench_gpu  # noqa: E402
import common  # noqa: E402
from torch.nn.attention import SDPBackend  # noqa: E402


def kernel_us(fn, calls=10):
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name] = per.get(e.name, 0.0) + e.device_time / calls
    return sum(per.values()), per


def attend_of(impl, cfg, fa):
    """bench_gpu.py's call of `impl` (fa, flex or sdpa-cudnn) on cfg."""
    if impl == "fa":
        return bench_gpu.fa_attend(fa, cfg)
    if impl == "flex":
        return bench_gpu.flex_attend(cfg)
    return bench_gpu.sdpa_attend(SDPBackend.CUDNN_ATTENTION, cfg)


def cases(args, fa):
    """(cfg, impl, attend, (q, k, v, sinks)) of each row the arguments
    name that `impl` expresses; frees the inputs after each."""
    for cfg in bench_gpu.configs(args.variants.split(","),
                                 common.int_list(args.head_dims),
                                 common.int_list(args.seqs)):
        for impl in args.impls.split(","):
            if bench_gpu.expresses(impl, cfg):
                yield cfg, impl, attend_of(impl, cfg, fa), bench_gpu.inputs(cfg)
                common.free_cuda()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--variants", default="gpt-oss-window-128")
    p.add_argument("--seqs", default="8192")
    p.add_argument("--head-dims", default="64")
    p.add_argument("--impls", default="fa,flex")
    p.add_argument("--settle", action="store_true",
                   help="time fa after its background compiles are done")
    a = p.parse_args()
    fa = common.import_fa()
    for cfg, impl, attend, (q, k, v, sinks) in cases(a, fa):
        fn = lambda: attend(q, k, v, sinks)
        fn()
        if impl == "fa" and a.settle:
            fa.wait_for_compiles()  # the backward, compiling since fn()
        for _ in range(4):
            fn()
        torch.cuda.synchronize()
        single = statistics.median(common.cuda_ms(fn, 1) for _ in range(30))
        queued = statistics.median(common.cuda_ms(fn, 20) for _ in range(5))
        tf = lambda ms: cfg["flops"] / ms / 1e9
        line = (f"{impl:10s} {cfg['variant']:20s} D {cfg['d']:3d} "
                f"{cfg['b']}x{cfg['hq']}/{cfg['hkv']}x{cfg['s']}  "
                f"single {single:.3f} ms ({tf(single):6.1f})  "
                f"queued {queued:.3f} ms ({tf(queued):6.1f})")
        if impl == "fa":
            total, per = kernel_us(fn)
            line += (f"  kernels {total / 1e3:.3f} ms "
                     f"({tf(total / 1e3):6.1f}): " +
                     ", ".join(f"{n[:40]} {t:.1f}us" for n, t in per.items()))
        print(line, flush=True)

if __name__ == "__main__":
    main()
