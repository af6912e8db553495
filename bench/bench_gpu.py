#!/usr/bin/env python3
"""fa beside PyTorch SDPA (flash and cuDNN backends) and FlexAttention, one run.

Dense rows: bf16, head dims 64 and 128, B*S = 16k tokens at a 2048 model dim
(so H = 2048 / D), S in 1k, 4k, 16k, full and causal. Variant rows: GQA
causal (32 query / 8 kv heads), sliding window 4096, window 1024 + 4 sink
tokens, and gpt-oss (64 / 8 heads, D 64, learnable sinks, window 128 or
full causal), each beside the peers that can express it.

Everything is timed with CUDA events (warm-up, median of many): PyTorch
around its calls, fa through `fa-run --repeat` (events around each of its
kernel launches, on resident device buffers). TFLOP/s count 4 * D flops per visible (query, key) pair per head
forward (4*B*H*S*S*D full, about half that causal) and 2.5x that backward.
fa shapes whose predicted time exceeds --fa-budget seconds are recorded as
skipped, not run; failures are recorded in the status column.

usage: bench_gpu.py --fa-run PATH --csv OUT.csv [--fa-budget SECONDS]
                    [--no-flex] [--only dense|variants] [--head-dims 64,128]
                    [--seqs 1024,4096,16384]
"""
import argparse
import os
import csv
import re
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

TOKENS, MODEL_DIM = 16384, 2048


def visible_pairs(sq, sk, causal, window=None, sink_tokens=0):
    """(query, key) pairs the mask lets through, summed over query rows."""
    if not causal:
        return sq * sk
    offset, total = sk - sq, 0
    for i in range(sq):
        hi = min(max(i + offset + 1, 0), sk)
        lo = 0 if window is None else min(max(i + offset - window + 1, 0), hi)
        total += hi - lo + min(sink_tokens, lo)
    return total


def time_cuda(fn, warmup=3, reps=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def qkv(cfg, requires_grad=True):
    b, hq, hkv, s, d = cfg["b"], cfg["hq"], cfg["hkv"], cfg["s"], cfg["d"]
    make = lambda h: torch.randn(b, h, s, d, device="cuda",
                                 dtype=torch.bfloat16,
                                 requires_grad=requires_grad)
    return make(hq), make(hkv), make(hkv)


def fwd_bwd(attend, q, k, v):
    fwd = time_cuda(lambda: attend(q, k, v))
    o = attend(q, k, v)
    do = torch.randn_like(o)
    bwd = time_cuda(lambda: torch.autograd.grad(o, (q, k, v), do,
                                                retain_graph=True))
    return fwd, bwd


def bench_sdpa(backend, cfg):
    q, k, v = qkv(cfg)
    gqa = cfg["hq"] != cfg["hkv"]
    with sdpa_kernel([backend]):
        return fwd_bwd(lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, is_causal=cfg["causal"], enable_gqa=gqa), q, k, v)


def bench_flex(cfg):
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
    q, k, v = qkv(cfg)
    window, sink_tokens = cfg.get("window"), cfg.get("sink_tokens", 0)
    if not cfg["causal"]:
        block_mask = None
    else:
        def mask(b, h, i, j):
            keep = i >= j
            if window is not None:
                near = i - j < window
                if sink_tokens:
                    near = near | (j < sink_tokens)
                keep = keep & near
            return keep
        block_mask = create_block_mask(mask, None, None, cfg["s"], cfg["s"])
    compiled = torch.compile(flex_attention)
    gqa = cfg["hq"] != cfg["hkv"]
    return fwd_bwd(lambda q, k, v: compiled(q, k, v, block_mask=block_mask,
                                            enable_gqa=gqa), q, k, v)


def bench_fa(fa_run, cfg, backward, autotune=True):
    shape = f"{cfg['b']},{cfg['hq']},{cfg['hkv']},{cfg['s']},{cfg['s']},{cfg['d']}"
    cmd = [fa_run, cfg["spec"], "--target", "gpu", "--dtype", "bf16",
           "--repeat", "10", "--shape", shape]
    if cfg.get("kernel"):
        cmd += ["--kernel", cfg["kernel"]]
    if backward:
        cmd.append("--backward")
    env = dict(os.environ, FA_AUTOTUNE="1" if autotune else "0")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip()[-300:])
    fwd = float(re.search(r" fwd=([\d.]+)ms", proc.stdout).group(1))
    bwd = re.search(r" bwd=([\d.]+)ms", proc.stdout)
    # The autotuner's picks ("<entry> ...: chose block-n N, warps W").
    chosen = "; ".join(f"{m.group(1)}: {m.group(2)}" for m in re.finditer(
        r"fa: autotuning \S+ (\w+) .*: chose (.*)", proc.stderr))
    return fwd, float(bwd.group(1)) if bwd else None, chosen


def dense_configs(head_dims, seqs):
    for d in head_dims:
        h = MODEL_DIM // d
        for s in seqs:
            for causal in (False, True):
                yield dict(variant="causal" if causal else "full",
                           spec="kernels_spec/causal.mlir" if causal
                           else "kernels_spec/mha.mlir",
                           b=TOKENS // s, hq=h, hkv=h, s=s, d=d,
                           causal=causal)


def variant_configs(seqs):
    for s in [s for s in seqs if s >= 4096]:
        b = TOKENS // s
        yield dict(variant="gqa-causal", spec="kernels_spec/gqa_causal.mlir",
                   b=b, hq=32, hkv=8, s=s, d=128, causal=True)
        yield dict(variant="window-4096", spec="kernels_spec/swa.mlir",
                   b=b, hq=16, hkv=16, s=s, d=128, causal=True, window=4096)
        yield dict(variant="window-1024+4-sinks",
                   spec="kernels_spec/streaming.mlir", b=b, hq=16, hkv=16,
                   s=s, d=128, causal=True, window=1024, sink_tokens=4)
        yield dict(variant="gpt-oss-window-128", spec="kernels_spec/gpt_oss.mlir",
                   kernel="gpt_oss_sliding", b=b, hq=64, hkv=8, s=s, d=64,
                   causal=True, window=128, learnable_sinks=True)
        yield dict(variant="gpt-oss-full", spec="kernels_spec/gpt_oss.mlir",
                   kernel="gpt_oss_full", b=b, hq=64, hkv=8, s=s, d=64,
                   causal=True, learnable_sinks=True)


def peers(cfg, flex):
    """The implementations that compute this variant, besides fa."""
    windowed = cfg.get("window") is not None
    out = []
    if not windowed and not cfg.get("learnable_sinks"):
        out += [("sdpa-flash2", lambda: bench_sdpa(SDPBackend.FLASH_ATTENTION,
                                                   cfg)),
                ("sdpa-cudnn", lambda: bench_sdpa(SDPBackend.CUDNN_ATTENTION,
                                                  cfg))]
    # FlexAttention has no learnable sink logits (an extra softmax column).
    # Each shape compiles anew (tens of seconds): only the S = 16k rows.
    if flex and not cfg.get("learnable_sinks") and cfg["s"] == 16384 and (
            windowed or (cfg["causal"] and cfg["d"] == 128)):
        out.append(("flex-attention", lambda: bench_flex(cfg)))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fa-run", required=True)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--fa-budget", type=float, default=30.0)
    parser.add_argument("--fa-fwd-tflops-guess", type=float, default=100.0)
    parser.add_argument("--fa-bwd-tflops-guess", type=float, default=50.0,
                        help="fa's expected backward rate, to skip hopeless "
                             "shapes")
    parser.add_argument("--no-flex", action="store_true")
    parser.add_argument("--only", choices=("dense", "variants"))
    parser.add_argument("--head-dims", default="64,128",
                        help="dense rows' head dims")
    parser.add_argument("--seqs", default="1024,4096,16384",
                        help="sequence lengths (variant rows: those >= 4k)")
    args = parser.parse_args()
    gpu = torch.cuda.get_device_name()
    out = open(args.csv, "w", newline="")
    writer = None

    def emit(row):
        # Row by row, flushed: a timeout keeps what was measured.
        nonlocal writer
        if writer is None:
            writer = csv.DictWriter(out, fieldnames=list(row))
            writer.writeheader()
        writer.writerow(row)
        out.flush()

    seqs = [int(s) for s in args.seqs.split(",")]
    configs = []
    if args.only != "variants":
        configs += list(dense_configs(
            [int(d) for d in args.head_dims.split(",")], seqs))
    if args.only != "dense":
        configs += list(variant_configs(seqs))
    for cfg in configs:
        flops = 4.0 * cfg["b"] * cfg["hq"] * cfg["d"] * visible_pairs(
            cfg["s"], cfg["s"], cfg["causal"], cfg.get("window"),
            cfg.get("sink_tokens", 0))
        # "fa" is autotuned (the first call of a shape class times the
        # candidate configs; later processes read the choice from the
        # cache); at S = 16k "fa-default" runs the default config beside it.
        impls = peers(cfg, not args.no_flex) + [("fa", True)]
        if cfg["s"] == 16384:
            impls.append(("fa-default", False))
        for name, run in impls:
            row = dict(impl=name, variant=cfg["variant"], gpu=gpu,
                       dtype="bf16", d=cfg["d"], b=cfg["b"], hq=cfg["hq"],
                       hkv=cfg["hkv"], s=cfg["s"], fwd_ms="", bwd_ms="",
                       fwd_tflops="", bwd_tflops="", status="ok",
                       fa_config="")
            try:
                if isinstance(run, bool):
                    predicted_fwd = 12 * flops / (args.fa_fwd_tflops_guess
                                                  * 1e12)
                    predicted_bwd = 12 * 2.5 * flops / (
                        args.fa_bwd_tflops_guess * 1e12)
                    backward = predicted_bwd <= args.fa_budget
                    if predicted_fwd > args.fa_budget:
                        raise RuntimeError(
                            f"skipped (predicted {predicted_fwd:.0f} s)")
                    fwd, bwd, row["fa_config"] = bench_fa(
                        args.fa_run, cfg, backward, run)
                    if not run:
                        row["fa_config"] = "default: block-n 64, warps 4"
                    if not backward:
                        row["status"] = (f"backward skipped (predicted "
                                         f"{predicted_bwd:.0f} s)")
                else:
                    fwd, bwd = run()
                row.update(fwd_ms=f"{fwd:.3f}",
                           fwd_tflops=f"{flops / fwd / 1e9:.1f}")
                if bwd is not None:
                    row.update(bwd_ms=f"{bwd:.3f}",
                               bwd_tflops=f"{2.5 * flops / bwd / 1e9:.1f}")
            except Exception as e:  # recorded, never a crash
                message = str(e).replace("\n", " ")[:200]
                row["status"] = message if message.startswith("skipped") \
                    else "error: " + message
            emit(row)
            print(f"{name:14s} {cfg['variant']:20s} D={cfg['d']:3d} "
                  f"S={cfg['s']:5d} fwd {row['fwd_tflops'] or '-':>6} "
                  f"bwd {row['bwd_tflops'] or '-':>6} TFLOP/s  "
                  f"{row['status']} {row['fa_config']}", flush=True)
            torch.cuda.empty_cache()
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
