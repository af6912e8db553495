"""Where a short decode step's time goes: each GPU activity of one
fa.decode step (the split-KV kernel, its merge, anything else) from
torch.profiler, with the span from the first start to the last end, for
gpt-oss's full layer (64/8, D 64, sinks) and Llama 32/8 (D 128), one query
row, caches filled to the length given.

python3 bench/thirty-fourth/decode_parts.py [B,CACHE ...] (default: 1,8192
1,32768 8,32768)"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import fa  # noqa: E402
from host_overhead import gpu_activities  # noqa: E402

MODELS = [("gpt-oss full", 64, 8, 64, True), ("Llama 32/8", 32, 8, 128, False)]
for arg in sys.argv[1:] or ["1,8192", "1,32768", "8,32768"]:
    b, cache = (int(x) for x in arg.split(","))
    for name, hq, hkv, d, learnable in MODELS:
        q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b, hkv, cache, d, device="cuda",
                            dtype=torch.bfloat16) for _ in range(2))
        sinks = torch.randn(hq, device="cuda") if learnable else None
        lengths = torch.full((b,), cache, dtype=torch.int32, device="cuda")
        gpu_activities(f"{name} B {b} cache {cache}",
                       lambda: fa.decode(q, k, v, cache_seqlens=lengths,
                                         sinks=sinks, check_lengths=False))
