"""Whether fa's backward call waits for the GPU: host time of one
torch.autograd.grad of fa.attention (full, D 128, 4x16x4096, bf16) with the
GPU idle, and with about 40 ms of matmuls queued before it (a call that
synchronises takes that long), plus CUDA-event times of single and queued
calls, and torch.profiler's GPU activities over 5 queued calls (no
synchronisation between them), with the idle time before each."""
import statistics
import time

import torch

import fa

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


def event_ms(calls):
    start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    times = []
    for _ in range(10):
        torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            grad()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


print(f"host ms, GPU idle {host_ms(0):.3f}; behind 40 matmuls of 8k "
      f"{host_ms(40):.3f}; event ms single {event_ms(1):.3f}, "
      f"queued x20 {event_ms(20):.3f}")


def queued_activities(calls=5):
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            grad()
        torch.cuda.synchronize()
    events = sorted((e for e in prof.events()
                     if e.device_type == DeviceType.CUDA),
                    key=lambda e: e.time_range.start)
    end = None
    for e in events:
        idle = 0 if end is None else e.time_range.start - end
        print(f"  idle {idle / 1e3:7.3f} ms, then {e.time_range.elapsed_us() / 1e3:7.3f}"
              f" ms  {e.name[:70]}")
        end = e.time_range.end if end is None else max(end, e.time_range.end)


queued_activities()
