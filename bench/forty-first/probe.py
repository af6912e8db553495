"""Whether the host keeps ahead of the GPU in a chain of fa backward calls
(full D 128, 4x16x4096, bf16): an event after each of 20 queued calls; per
call, host ms of the call, whether the event after the call before had
already completed when the call returned (the GPU waited for the host), and
the event-to-event ms. Then the same chain through Program.run (no
autograd), and cuDNN's for comparison."""
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import fa  # noqa: E402
from fa import api  # noqa: E402
from host_overhead import backward_of, impls  # noqa: E402

q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.bfloat16,
                       requires_grad=True) for _ in range(3))


def chain(name, fn, n=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    host, done_before = [], []
    events[0].record()
    for i in range(n):
        t0 = time.perf_counter()
        fn()
        host.append((time.perf_counter() - t0) * 1e3)
        done_before.append(events[i].query())
        events[i + 1].record()
    torch.cuda.synchronize()
    gaps = [events[i].elapsed_time(events[i + 1]) for i in range(n)]
    print(f"{name}: host ms median {statistics.median(host):.3f} max {max(host):.3f}; "
          f"GPU had caught up at {sum(done_before[1:])}/{n - 1} returns; "
          f"event ms median {statistics.median(gaps):.3f} "
          f"[{' '.join(f'{g:.2f}' for g in gaps[:10])}]")


for name in ("fa", "sdpa-cudnn"):
    chain(name + " autograd.grad",
          backward_of(impls(fa, causal=False)[name], (q, k, v)))

qd, kd, vd = (x.detach() for x in (q, k, v))
o, lse = api.attention_forward(qd, kd, vd, False, None, 0, None, None)
do = torch.randn_like(o)
chain("fa attention_backward", lambda: api.attention_backward(
    qd, kd, vd, o, lse, do, False, None, 0, None, None))
