"""Whether fa's backward call waits for the GPU: host time of one
torch.autograd.grad of fa.attention (full, D 128, 4x16x4096, bf16) with the
GPU idle, and with about 40 ms of matmuls queued before it (a call that
synchronises takes that long), plus CUDA-event times of single and queued
calls, and torch.profiler's GPU activities over 5 queued calls (no
synchronisation between them), with the idle time before each."""
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import fa  # noqa: E402
from host_overhead import cuda_events, queued_ms  # noqa: E402

q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.bfloat16,
                       requires_grad=True) for _ in range(3))
out = fa.attention(q, k, v)
dout = torch.randn_like(out)
grad = lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
for _ in range(5):
    grad()
torch.cuda.synchronize()


def host_ms(busy):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    times = []
    for _ in range(10):
        torch.cuda.synchronize()
        for _ in range(busy):
            a @ a
        t0 = time.perf_counter()
        grad()
        times.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    return statistics.median(times)


print(f"host ms, GPU idle {host_ms(0):.3f}; behind 40 matmuls of 8k "
      f"{host_ms(40):.3f}; event ms single {queued_ms(grad, 1):.3f}, "
      f"queued x20 {queued_ms(grad, 20):.3f}")


def queued_activities(calls=5):
    end = None
    for e in cuda_events(grad, calls, synchronise_each=False):
        idle = 0 if end is None else e.time_range.start - end
        print(f"  idle {idle / 1e3:7.3f} ms, then {e.time_range.elapsed_us() / 1e3:7.3f}"
              f" ms  {e.name[:70]}")
        end = e.time_range.end if end is None else max(end, e.time_range.end)


queued_activities()
