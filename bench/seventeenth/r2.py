import os, torch, fa
D = int(os.environ.get("REPRO_D", "40"))
dt = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
q = torch.randn(2, 8, 45, D, device="cuda", dtype=dt)
k = torch.randn(2, 2, 45, D, device="cuda", dtype=dt)
s = torch.randn(8, device="cuda")
fa.attention(q, k, k, causal=True, window=16, sinks=s)
torch.cuda.synchronize()
fa.clear_cache()
import gc; gc.collect()
try:
    fa.compile("fa.kernel @k { garbage }")
except Exception as e:
    print("compile error (expected):", str(e)[:80])
print("repro survived")
