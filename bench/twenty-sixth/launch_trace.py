#!/usr/bin/env python3
"""Where a single call's time goes before its first kernel runs: each
implementation's call, synchronised before and after as bench_gpu.py's
single-call timing does, under torch.profiler; from the trace, per call
(median over --calls): host_us from the call's start to its first launch
API call (cudaLaunchKernel*, cuLaunchKernel*), latency_us from that call to
the kernel's start on the GPU, gpu_us from the first kernel's start to the
last one's end, and the kernels. Also no-grad host time for fa.

Usage: launch_trace.py [--variants causal,gpt-oss-window-128] [--seqs 4096]
                       [--head-dims 64] [--impls fa,sdpa-cudnn,flex]"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
import probe  # noqa: E402

LAUNCHES = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC",
            "cuLaunchKernelEx", "cudaMemsetAsync", "cuMemsetD32Async")


def trace(fn, calls):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(calls):
            with record_function(f"call{i}"):
                fn()
            torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        events = json.load(open(f.name))["traceEvents"]
    marks = sorted((e["ts"], e["ts"] + e.get("dur", 0), e["name"])
                   for e in events if e.get("name", "").startswith("call")
                   and e.get("cat") == "user_annotation")
    apis = sorted((e["ts"], e["name"], e.get("args", {}).get("correlation"))
                  for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")
                  and e.get("name") in LAUNCHES)
    kernels = sorted((e["ts"], e["ts"] + e["dur"], e["name"],
                      e.get("args", {}).get("correlation"))
                     for e in events if e.get("cat") in ("kernel", "gpu_memset"))
    rows = []
    for start, end, _ in marks:
        first_api = next((a for a in apis if start <= a[0] <= end), None)
        ks = [k for k in kernels if k[0] >= start and (first_api is None or
                                                        k[0] >= first_api[0])]
        ks = [k for k in ks if k[0] < end + 5000][:8]
        if first_api is None or not ks:
            continue
        mine = [k for k in ks if k[0] <= ks[0][0] + 20000]
        last = max(k[1] for k in mine)
        rows.append((first_api[0] - start, ks[0][0] - first_api[0],
                     last - ks[0][0], end - start,
                     tuple(k[2][:40] for k in mine)))
    med = lambda i: statistics.median(r[i] for r in rows)
    return med(0), med(1), med(2), med(3), rows[0][4] if rows else ()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--variants", default="causal,gpt-oss-window-128")
    p.add_argument("--seqs", default="4096")
    p.add_argument("--head-dims", default="64")
    p.add_argument("--impls", default="fa,sdpa-cudnn,flex")
    p.add_argument("--calls", type=int, default=15)
    a = p.parse_args()
    fa = common.import_fa()
    for cfg, impl, attend, (q, k, v, sinks) in probe.cases(a, fa):
        modes = [("grad", lambda: attend(q, k, v, sinks))]
        if impl == "fa":
            def nograd():
                with torch.no_grad():
                    return attend(q, k, v, sinks)
            modes.append(("nograd", nograd))
        for mode, fn in modes:
            host, latency, gpu, call, names = trace(fn, a.calls)
            print(f"{impl:10s} {mode:6s} {cfg['variant']:20s} D {cfg['d']} "
                  f"S {cfg['s']}: host {host:6.1f} us, launch->start "
                  f"{latency:5.1f} us, gpu {gpu:7.1f} us, call {call:6.1f} us "
                  f"[{', '.join(names)}]", flush=True)

if __name__ == "__main__":
    main()
