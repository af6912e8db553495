"""One split-KV decode step of gpt-oss's full layer (64/8, D 64, sinks,
B 8, 32k keys) and of Llama 32/8 (D 128, B 1, 128k keys), contiguous and
paged (pages of 16 keys, shuffled and in order), each after a warm-up,
between cudaProfilerStart/Stop: for `ncu --profile-from-start off`."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "nineteenth"))
import fa  # noqa: E402
from paged_bw import paged_pool  # noqa: E402

torch.manual_seed(0)
for name, b, keys, hq, hkv, d, learnable in [
        ("gpt-oss full", 8, 32768, 64, 8, 64, True),
        ("Llama 32/8", 1, 131072, 32, 8, 128, False)]:
    q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, keys, d, device="cuda", dtype=torch.bfloat16)
            for _ in range(2))
    s = torch.randn(hq, device="cuda") if learnable else None
    n = torch.full((b,), keys, dtype=torch.int32, device="cuda")
    steps = {"contiguous": lambda: fa.decode(q, k, v, cache_seqlens=n,
                                              sinks=s, check_lengths=False)}
    for order in ("shuffled", "in order"):
        steps[order] = (lambda pk, pv, t: lambda: fa.decode(
            q, pk, pv, cache_seqlens=n, block_table=t, sinks=s,
            check_lengths=False))(*paged_pool(k, v, 16, order))
    for label, step in steps.items():
        for _ in range(3):
            step()
        torch.cuda.synchronize()
        print(f"== {name} B {b} {keys} keys, {label}", flush=True)
        torch.cuda.cudart().cudaProfilerStart()
        step()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
