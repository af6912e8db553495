#!/usr/bin/env python3
"""fa beside PyTorch SDPA (flash and cuDNN backends) on the GPU, one run.

bf16, head dims 64 and 128, B*S = 16k tokens at a 2048 model dim (so
H = 2048 / D), S in 1k, 4k, 16k, full and causal, forward and backward.
PyTorch is timed with CUDA events (warm-up, median of many); fa through
`fa-run --repeat`, the median wall time of synchronous calls on resident
device buffers. TFLOP/s count 4*B*H*S*S*D forward (halved for causal) and
2.5x that backward. fa shapes whose predicted time exceeds --fa-budget
seconds are recorded as skipped, not run.

usage: bench_gpu.py --fa-run PATH --csv OUT.csv [--fa-budget SECONDS]
"""
import argparse
import csv
import re
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

TOKENS, MODEL_DIM = 16384, 2048


def flops(b, h, s, d, causal):
    return 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)


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


def bench_sdpa(backend, b, h, s, d, causal):
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    with sdpa_kernel([backend]):
        fwd = time_cuda(lambda: F.scaled_dot_product_attention(
            q, k, v, is_causal=causal))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        do = torch.randn_like(o)
        bwd = time_cuda(lambda: torch.autograd.grad(
            o, (q, k, v), do, retain_graph=True))
    return fwd, bwd


def bench_fa(fa_run, spec, b, h, s, d):
    cmd = [fa_run, spec, "--target", "gpu", "--dtype", "bf16", "--backward",
           "--repeat", "2", "--shape", f"{b},{h},{h},{s},{s},{d}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip()[-300:])
    fwd = float(re.search(r" fwd=([\d.]+)ms", proc.stdout).group(1))
    bwd = float(re.search(r" bwd=([\d.]+)ms", proc.stdout).group(1))
    return fwd, bwd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fa-run", required=True)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--fa-budget", type=float, default=30.0)
    parser.add_argument("--fa-tflops-guess", type=float, default=0.05,
                        help="fa's expected rate, to skip hopeless shapes")
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

    for d in (64, 128):
        h = MODEL_DIM // d
        for s in (1024, 4096, 16384):
            b = TOKENS // s
            for causal in (False, True):
                spec = "kernels_spec/causal.mlir" if causal \
                    else "kernels_spec/mha.mlir"
                f = flops(b, h, s, d, causal)
                impls = [("sdpa-flash2", SDPBackend.FLASH_ATTENTION),
                         ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION),
                         ("fa", None)]
                for name, backend in impls:
                    row = dict(impl=name, gpu=gpu, dtype="bf16", d=d, b=b,
                               h=h, s=s, causal=causal, fwd_ms="", bwd_ms="",
                               fwd_tflops="", bwd_tflops="", status="ok")
                    try:
                        if backend is None:
                            predicted = 3.5 * 5 * f / (args.fa_tflops_guess
                                                       * 1e12)
                            if predicted > args.fa_budget:
                                row["status"] = \
                                    f"skipped (predicted {predicted:.0f} s)"
                                emit(row)
                                continue
                            fwd, bwd = bench_fa(args.fa_run, spec, b, h, s, d)
                        else:
                            fwd, bwd = bench_sdpa(backend, b, h, s, d, causal)
                        row.update(fwd_ms=f"{fwd:.3f}", bwd_ms=f"{bwd:.3f}",
                                   fwd_tflops=f"{f / fwd / 1e9:.1f}",
                                   bwd_tflops=f"{2.5 * f / bwd / 1e9:.1f}")
                    except Exception as e:  # recorded, never a crash
                        row["status"] = "error: " + str(e).replace("\n", " ")
                    emit(row)
                    print(f"{name:12s} D={d:3d} S={s:5d} causal={causal!s:5s} "
                          f"fwd {row['fwd_tflops'] or '-':>6} TFLOP/s  "
                          f"bwd {row['bwd_tflops'] or '-':>6} TFLOP/s  "
                          f"{row['status']}", flush=True)
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
