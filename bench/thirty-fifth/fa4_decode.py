"""Decode steps of fa.decode beside FlashAttention-4's flash_attn_func
(flash_attn.cute 4.0.0b36, where it imports), one query row, full caches,
bf16, queued calls (no CUDA graph: both eager), for gpt-oss's full layer
(64/8, D 64, learnable sinks) and Llama 32/8 (D 128), B 1 and 8, caches
of 32k and 128k keys. Bytes: K/V read plus q and o. FA4 on sm_90 has no
split-KV ("SplitKV not supported on SM 9.0" in its interface): it runs a
block per (batch, kv head) with pack_gqa, or per query head without.

python3 fa4_decode.py [--no-fa]"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from bench_decode import copy_gbps, queued_ms  # noqa: E402

try:
    from flash_attn.cute.interface import flash_attn_func as fa4_func
except Exception as e:  # noqa: BLE001 - report any import failure
    print(f"FA4 not importable: {type(e).__name__}: {e}", flush=True)
    fa4_func = None

with_fa = "--no-fa" not in sys.argv
if with_fa:
    import fa

copy = copy_gbps()
print(f"device-to-device copy: {copy:.0f} GB/s; "
      f"{torch.cuda.get_device_name()}", flush=True)
torch.manual_seed(0)
for name, hq, hkv, d, learnable in [("gpt-oss full", 64, 8, 64, True),
                                    ("Llama 32/8", 32, 8, 128, False)]:
    for b in (1, 8):
        for keys in (32768, 131072):
            q = torch.randn(b, hq, 1, d, device="cuda", dtype=torch.bfloat16)
            k, v = (torch.randn(b, hkv, keys, d, device="cuda",
                                dtype=torch.bfloat16) for _ in range(2))
            s = torch.randn(hq, device="cuda") if learnable else None
            nbytes = 2 * (2 * b * hkv * keys * d + 2 * b * hq * d)
            line = f"{name:13s} B {b} cache {keys:6d}:"
            ref = None
            if with_fa:
                n = torch.full((b,), keys, dtype=torch.int32, device="cuda")
                step = lambda: fa.decode(q, k, v, cache_seqlens=n, sinks=s,
                                         check_lengths=False)
                ref = step().transpose(1, 2).float()
                ms = queued_ms(step)
                line += (f" fa {ms * 1e3:7.1f} us "
                         f"({nbytes / ms / 1e6 / copy:4.0%} of copy)")
            if fa4_func is not None:
                # FA4 takes [B, S, H, D]; its causal mask is bottom-right
                # aligned, so one query row sees every key.
                q4, k4, v4 = (x.transpose(1, 2) for x in (q, k, v))
                k4, v4 = k4.contiguous(), v4.contiguous()
                q4 = q4.contiguous()
                for pack in (True, False):
                    try:
                        step4 = lambda: fa4_func(q4, k4, v4, causal=True,
                                                 learnable_sink=s,
                                                 pack_gqa=pack)
                        out = step4()
                        out = out[0] if isinstance(out, tuple) else out
                        err = "" if ref is None else \
                            f", vs fa {((out.float() - ref).norm() / ref.norm()).item():.1e}"
                        ms4 = queued_ms(step4)
                        line += (f" | FA4 pack_gqa={pack} {ms4 * 1e3:7.1f} us "
                                 f"({nbytes / ms4 / 1e6 / copy:4.0%}{err})")
                        if with_fa:
                            line += f" fa/FA4 {ms4 / ms:.2f}x"
                    except Exception as e:  # noqa: BLE001
                        line += f" | FA4 pack_gqa={pack} failed: {type(e).__name__}: {str(e)[:120]}"
            print(line, flush=True)
            del k, v
