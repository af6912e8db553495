"""Why fa's full D 128 backward (4x16x4096, bf16) takes longer per call
between CUDA events around queued calls than its kernels' profiled sum:
event ms per call for 1, 5, 20 and 60 queued calls; the profiler's kernel
durations over 20 queued calls (first, middle, last); the same for SDPA's
cuDNN backend; nvidia-smi's SM clock, power and throttle reasons sampled
while 200 calls run."""
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import fa  # noqa: E402
from common import cuda_ms  # noqa: E402
from host_overhead import backward_of, cuda_events, impls  # noqa: E402

q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.bfloat16,
                       requires_grad=True) for _ in range(3))


for name in ("fa", "sdpa-cudnn"):
    grad = backward_of(impls(fa, causal=False)[name], (q, k, v))
    for _ in range(5):
        grad()
    torch.cuda.synchronize()
    for n in (1, 5, 20, 60):
        print(f"{name} queued {n:3d}: {statistics.median(cuda_ms(grad, n) for _ in range(7)):.3f} ms/call")
    events = cuda_events(grad, 20, synchronise_each=False)
    by = {}
    for e in events:
        by.setdefault(e.name[:60], []).append(e.time_range.elapsed_us() / 1e3)
    for kname, ts in by.items():
        print(f"  {kname}: n {len(ts)} first {ts[0]:.3f} mid {ts[len(ts)//2]:.3f} last {ts[-1]:.3f} median {statistics.median(ts):.3f}")
    span = events[-1].time_range.end - events[0].time_range.start
    busy = sum(e.time_range.elapsed_us() for e in events)
    print(f"  20 queued profiled: span {span / 20e3:.3f} ms/call, busy {busy / 20e3:.3f}")
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.active,temperature.gpu",
                            "--format=csv,noheader", "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    t = cuda_ms(grad, 200)
    time.sleep(0.2)
    smi.terminate()
    lines = smi.stdout.read().strip().splitlines()
    print(f"  200 queued: {t:.3f} ms/call; nvidia-smi samples ({len(lines)}):")
    for line in lines[::max(1, len(lines) // 12)]:
        print("    " + line)
