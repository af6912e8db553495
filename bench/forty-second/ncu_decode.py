"""One fa.decode step of gpt-oss (64/8 heads, D 64, learnable sinks) at
B 1 and a full 32k cache, for ncu: three calls, the first two compile and
warm; run under `ncu --launch-skip 4` to profile the third's kernels.
"""
import torch

import fa

torch.manual_seed(0)
b, hq, hkv, d, cache = 1, 64, 8, 64, 32768
q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
k, v = (torch.randn(b, hkv, cache, d, device="cuda", dtype=torch.bfloat16)
        for _ in range(2))
sinks = torch.randn(hq, device="cuda")
lengths = torch.full((b,), cache, dtype=torch.int32, device="cuda")
for _ in range(3):
    fa.decode(q, k, v, cache_seqlens=lengths, sinks=sinks,
              check_lengths=False)
torch.cuda.synchronize()
