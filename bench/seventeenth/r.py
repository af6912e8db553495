import torch, fa
q = torch.randn(2, 8, 45, 32, device="cuda")
k = torch.randn(2, 2, 45, 32, device="cuda")
s = torch.randn(8, device="cuda")
fa.attention(q, k, k, causal=True, window=16, sinks=s)
torch.cuda.synchronize()
fa.clear_cache()                             # destroys the GPU program
import gc; gc.collect()
try:
    fa.compile("fa.kernel @k { garbage }")
except Exception as e:
    print("compile error (expected):", str(e)[:80])
print("repro survived")
