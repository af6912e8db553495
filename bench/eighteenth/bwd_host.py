"""Where a single backward call's time goes before/between its kernels:
torch.profiler timeline (CPU driver calls + GPU activity) of one call,
then single/queued timing, with the default mempool's release threshold
0 (as is) and then UINT64_MAX (A/B of the pool-trim hypothesis)."""
import ctypes, statistics, time
import torch
import fa
from torch.profiler import ProfilerActivity, profile

def single_ms(fn, reps=30):
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)

def queued_ms(fn, n=20, reps=5):
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n): fn()
        e.record(); e.synchronize()
        ts.append(s.elapsed_time(e) / n)
    return statistics.median(ts)

def host_us(fn, n=50):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n): fn()
    h = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    return h

def timeline(name, fn):
    import json, os, tempfile
    from torch.profiler import record_function
    for _ in range(3): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        with record_function("THECALL"):
            fn()
        torch.cuda.synchronize()
    path = os.path.join(tempfile.mkdtemp(), "t.json")
    prof.export_chrome_trace(path)
    ev = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    call = [e for e in ev if e["name"] == "THECALL"][0]
    lo = call["ts"]
    print(f"--- {name}: one call, us from its start (host {call['dur']:.0f} us)")
    for e in sorted(ev, key=lambda e: e["ts"]):
        if e["ts"] < lo or e is call:
            continue
        cat = e.get("cat", "")
        if cat in ("kernel", "gpu_memset", "gpu_memcpy", "cuda_driver", "cuda_runtime") or e["dur"] >= 5:
            print(f"  {cat[:12]:12s} +{e['ts'] - lo:9.1f} {e['dur']:9.1f}  {e['name'][:70]}")

def cprof(name, fn, n=50):
    import cProfile, pstats, io
    for _ in range(3): fn()
    torch.cuda.synchronize()
    pr = cProfile.Profile(); pr.enable()
    for _ in range(n): fn()
    pr.disable(); torch.cuda.synchronize()
    st = io.StringIO(); pstats.Stats(pr, stream=st).sort_stats('tottime').print_stats(18)
    print(f"--- {name}: cProfile of {n} calls (tottime)"); print(st.getvalue()[-4000:])

def pool_threshold(value):
    cu = ctypes.CDLL('libcuda.so.1')
    pool = ctypes.c_void_p()
    assert cu.cuDeviceGetDefaultMemPool(ctypes.byref(pool), 0) == 0
    v = ctypes.c_uint64(value)
    assert cu.cuMemPoolSetAttribute(pool, 4, ctypes.byref(v)) == 0  # RELEASE_THRESHOLD

for shape in [(1, 8, 2048, 128), (2, 16, 8192, 128), (2, 64, 8192, 64)]:
    B, H, S, D = shape
    torch.manual_seed(0)
    hkv = 8 if H == 64 else H
    q = torch.randn(B, H, S, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(B, hkv, S, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(B, hkv, S, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    kw = dict(causal=True, window=128) if H == 64 else dict(causal=True)
    fwd = lambda: fa.attention(q, k, v, **kw)
    out = fwd(); do = torch.randn_like(out)
    bwd = lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
    for _ in range(3): bwd()
    torch.cuda.synchronize()
    timeline(f"{shape} {kw} backward", bwd)
    timeline(f"{shape} {kw} forward", fwd)
    if S == 2048:
        cprof(f"{shape} backward", bwd)
    for label, thr in [("release threshold 0", 0), ("release threshold max", 2**64 - 1)]:
        pool_threshold(thr)
        for _ in range(3): bwd()
        print(f"{shape} {kw} [{label}] bwd single {single_ms(bwd):.3f} ms queued {queued_ms(bwd):.3f} ms host {host_us(bwd):.0f} us | "
              f"fwd single {single_ms(fwd):.3f} queued {queued_ms(fwd):.3f} host {host_us(fwd):.0f} us", flush=True)
    pool_threshold(0)
