"""fa.attention's forward and backward (autograd) per call, CUDA events
around 30 queued calls (median of 7), at short and long shapes, bf16: the
kernel chain's launch gaps are what FA_PROGRAMMATIC_LAUNCH changes. One
line per shape; run once per setting in separate processes."""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import fa  # noqa: E402
from common import cuda_ms  # noqa: E402

SHAPES = [(16, 16, 1024, 128, True), (16, 16, 1024, 64, False),
          (4, 16, 4096, 128, False), (4, 32, 4096, 64, True),
          (64, 16, 256, 128, True)]
setting = os.environ.get("FA_PROGRAMMATIC_LAUNCH", "1")
for b, h, s, d, causal in SHAPES:
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    fwd = lambda: fa.attention(q, k, v, causal=causal)
    out = fwd()
    do = torch.randn_like(out)
    bwd = lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
    row = []
    for fn in (fwd, bwd):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        row.append(statistics.median(cuda_ms(fn, 30) for _ in range(7)))
    print(f"pdl={setting} {b}x{h}x{s} D {d} {'causal' if causal else 'full'}: "
          f"fwd {row[0] * 1e3:.1f} us, bwd {row[1] * 1e3:.1f} us")
