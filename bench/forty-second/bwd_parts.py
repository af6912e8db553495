"""Each GPU activity of fa's backward (torch.autograd.grad of fa.attention)
per call, from torch.profiler over 5 calls after a warm-up: name, median
time per call, and the calls' span; for the windowed and gpt-oss rows of
issue 14's bars and the dense D 64 rows.

PYTHONPATH=... python3 bench/forty-second/bwd_parts.py [NAME-SUBSTRING...]
(the cases whose names hold one of the substrings; all without any)
"""
import collections
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import fa

# name, B, Hq, Hkv, S, D, causal, window, sink tokens, learnable sinks
CASES = [("gpt-oss window 128", 2, 64, 8, 8192, 64, True, 128, 0, True),
         ("gpt-oss full", 2, 64, 8, 8192, 64, True, None, 0, True),
         ("window 4096", 2, 32, 32, 8192, 64, True, 4096, 0, False),
         ("full D 64", 4, 32, 32, 4096, 64, False, None, 0, False),
         ("causal D 64", 4, 32, 32, 4096, 64, True, None, 0, False),
         ("causal D 128", 4, 16, 16, 4096, 128, True, None, 0, False),
         ("full D 128", 4, 16, 16, 4096, 128, False, None, 0, False),
         ("GQA 32/8 causal D 128", 4, 32, 8, 4096, 128, True, None, 0,
          False)]
CALLS = 5


def main():
    print(torch.cuda.get_device_name())
    torch.manual_seed(0)
    for name, b, hq, hkv, s, d, causal, window, sink_tokens, learnable in CASES:
        if len(sys.argv) > 1 and not any(a in name for a in sys.argv[1:]):
            continue
        q = torch.randn(b, hq, s, d, device="cuda", dtype=torch.bfloat16,
                        requires_grad=True)
        k, v = (torch.randn(b, hkv, s, d, device="cuda",
                            dtype=torch.bfloat16, requires_grad=True)
                for _ in range(2))
        sinks = (torch.randn(hq, device="cuda", requires_grad=True)
                 if learnable else None)
        inputs = [t for t in (q, k, v, sinks) if t is not None]
        do = torch.randn(b, hq, s, d, device="cuda", dtype=torch.bfloat16)

        def step():
            o = fa.attention(q, k, v, causal=causal, window=window,
                             sink_tokens=sink_tokens, sinks=sinks)
            torch.autograd.grad(o, inputs, do)
        for _ in range(3):
            step()
        fa.wait_for_compiles()
        step()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                step()
            torch.cuda.synchronize()
        times = collections.defaultdict(list)
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                times[e.name].append(e.time_range.end - e.time_range.start)
        print(f"== {name}: B {b}, {hq}/{hkv} heads, S {s}, D {d}")
        total = 0.0
        for kname, ts in sorted(times.items(), key=lambda x: -sum(x[1])):
            per = sum(ts) / CALLS
            total += per
            print(f"  {per:9.1f} us a call ({len(ts) // CALLS} a call)  "
                  f"{kname[:80]}")
        print(f"  {total:9.1f} us a call in all (forward and backward)")


if __name__ == "__main__":
    main()
