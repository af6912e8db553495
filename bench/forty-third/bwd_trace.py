"""The host side of one fa backward call (gpt-oss window 128, 2x64/8x8k D
64, sinks), from torch.profiler's CPU and CUDA activities: each host event
(torch ops, driver calls) of the last of 3 torch.autograd.grad calls, in
order, with its start (us from the call's first event) and duration, then
each kernel's start on the same clock; plus host us per call (the GPU kept
busy) of grad, fa.api.attention_backward, and CUDA-event ms of a single
grad against its kernels, as bwd_host.py.
PYTHONPATH=... python3 bench/forty-third/bwd_trace.py"""
import torch
from torch.profiler import ProfilerActivity, profile

from fa import api

import bwd_host


def main():
    print(torch.cuda.get_device_name())
    q, k, v, sinks, do, grad = bwd_host.warm_case(2, 64, 8, 8192, 64, True,
                                                  128, True)
    inputs = (q, k, v, sinks)
    qd, kd, vd, sd = (x.detach() for x in inputs)
    o, lse = api.attention_forward(qd, kd, vd, True, 128, 0, sd, None)
    apicall = lambda: api.attention_backward(qd, kd, vd, o, lse, do, True, 128,
                                             0, sd, None)
    apicall()
    apicall()
    print(f"host us: grad {bwd_host.host_us(grad):.1f}, api "
          f"{bwd_host.host_us(apicall):.1f}")
    print(f"event ms single: grad {bwd_host.event_ms(grad):.3f}, api "
          f"{bwd_host.event_ms(apicall):.3f}; kernels "
          f"{bwd_host.kernel_ms(grad):.3f}")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) \
            as prof:
        for _ in range(3):
            torch.cuda.synchronize()
            grad()
        torch.cuda.synchronize()
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    # The last call: from the last host event named like autograd's entry.
    starts = [i for i, e in enumerate(events)
              if e.device_type != torch.autograd.DeviceType.CUDA and
              "synchronize" in e.name]
    first = starts[-2] + 1 if len(starts) >= 2 else 0
    t0 = events[first].time_range.start
    for e in events[first:]:
        where = "GPU" if e.device_type == torch.autograd.DeviceType.CUDA \
            else "cpu"
        print(f"  {where} {(e.time_range.start - t0):9.1f} "
              f"{e.time_range.elapsed_us():8.1f}  {e.name[:80]}")


if __name__ == "__main__":
    main()
