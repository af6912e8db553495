"""Decode steps through fa.attention beside SDPA: one (or a few) query rows
per sequence against a KV cache; GB/s of K/V + q + o, CUDA events, median."""
import statistics
import torch, torch.nn.functional as F
import fa

def ms(fn, reps=50):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return statistics.median(ts)

def queued(fn, n=50):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n): fn()
    e.record(); e.synchronize()
    return s.elapsed_time(e) / n

x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
copy = queued(lambda: y.copy_(x), 20)
print(f"device-to-device copy: {2 * x.numel() / copy / 1e6:.0f} GB/s (read + write)")
del x, y
cases = [  # name, B, Hq, Hkv, Sq, Sk, D, kwargs
    ("gpt-oss full, sinks", 1, 64, 8, 1, 32768, 64, dict(causal=True, sinks=True)),
    ("gpt-oss window 128, sinks", 4, 64, 8, 1, 32768, 64, dict(causal=True, window=128, sinks=True)),
    ("Llama 32/8 D128", 1, 32, 8, 1, 8192, 128, dict(causal=True)),
    ("Llama 32/8 D128", 8, 32, 8, 1, 8192, 128, dict(causal=True)),
    ("Llama 32/8 D128 128k", 1, 32, 8, 1, 131072, 128, dict(causal=True)),
    ("28/4 D128 (issue)", 1, 28, 4, 1, 8191, 128, dict(causal=True)),
    ("MHA 16 D128", 32, 16, 16, 1, 4096, 128, dict(causal=True)),
    ("spec-decode 4 rows 32/8", 2, 32, 8, 4, 16384, 128, dict(causal=True)),
]
torch.manual_seed(0)
for name, B, Hq, Hkv, Sq, Sk, D, kw in cases:
    q = torch.randn(B, Hq, Sq, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16)
    kw = dict(kw)
    sinks = torch.randn(Hq, device="cuda") if kw.pop("sinks", False) else None
    keys = min(Sk, kw.get("window", Sk) + Sq - 1)
    nbytes = 2 * (2 * B * Hkv * keys * D + 2 * B * Hq * Sq * D)
    f = lambda: fa.attention(q, k, v, sinks=sinks, **kw)
    o = f()
    # float64 reference on the visible keys
    qq, kk, vv = (t.double() for t in (q, k, v))
    g = Hq // Hkv
    kk = kk.repeat_interleave(g, 1); vv = vv.repeat_interleave(g, 1)
    s = qq @ kk.transpose(-1, -2) / D ** 0.5
    i = torch.arange(Sq, device="cuda")[:, None] + (Sk - Sq); j = torch.arange(Sk, device="cuda")[None]
    keep = j <= i
    if "window" in kw: keep &= j > i - kw["window"]
    s = s.masked_fill(~keep, float("-inf"))
    if sinks is not None:
        s = torch.cat([s, sinks.double()[None, :, None, None].expand(B, Hq, Sq, 1)], -1)
    p = torch.softmax(s, -1)[..., :Sk]
    ref = p @ vv
    err = ((o.double() - ref).norm() / ref.norm()).item()
    t_single, t_queued = ms(f), queued(f)
    row = f"{name:28s} B {B:3d} Sk {Sk:6d}: fa {t_single*1e3:7.1f} us single / {t_queued*1e3:7.1f} us queued = {nbytes/t_queued/1e6:6.0f} GB/s, rel err {err:.1e}"
    if sinks is None and "window" not in kw:
        sd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=Sq > 1 and False, enable_gqa=True) if Sq == 1 else F.scaled_dot_product_attention(q, k, v, attn_mask=keep, enable_gqa=True)
        t_sd = queued(sd)
        row += f" | sdpa {t_sd*1e3:7.1f} us = {nbytes/t_sd/1e6:6.0f} GB/s"
    print(row, flush=True)
    del q, k, v, o, ref, s, p, kk, vv
    torch.cuda.empty_cache()
