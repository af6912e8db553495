#!/usr/bin/env python3
"""Where a forward (or backward) call timed alone (bench_gpu.py's way) spends the time
its kernels do not: for each row and implementation, after bench_gpu.py's
warm-up (untimed calls, fa's compiles finished, 0.6 s of calls for the
clock), the median of --reps calls timed alone three ways:

  single   CUDA events around the call after a synchronisation (the
           benchmark's number);
  covered  the same, with a GPU sleep queued ahead of the start event, so
           that the host's work before the first kernel overlaps the sleep
           and the events time the GPU's part alone;
  queued   --queue calls back to back between two events, per call;

then torch.profiler's GPU activities of the last call alone (each
kernel's duration). single - covered is the host time the GPU waited for.

  usage: forward_profile.py [--rows VARIANT:D:S,...] [--impls fa,flex,...]
"""
import argparse
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import bench_gpu  # noqa: E402  (bench/)
import common  # noqa: E402
import host_overhead  # noqa: E402

import fa  # noqa: E402


def attend_of(impl, cfg):
    if impl == "fa":
        return bench_gpu.fa_attend(fa, cfg)
    if impl == "flex":
        return bench_gpu.flex_attend(cfg)
    if impl == "sdpa-cudnn":
        return bench_gpu.sdpa_attend(bench_gpu.SDPBackend.CUDNN_ATTENTION, cfg)
    raise ValueError(impl)


def covered_ms(fn, sleep_cycles):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    torch.cuda._sleep(sleep_cycles)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default="gpt-oss-full:64:8192,gqa-causal:64:4096,"
                   "causal:64:4096")
    p.add_argument("--impls", default="fa,flex,sdpa-cudnn")
    p.add_argument("--phase", default="fwd", choices=("fwd", "bwd"))
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--queue", type=int, default=10)
    p.add_argument("--sleep-cycles", type=int, default=4_000_000)
    args = p.parse_args()
    med = statistics.median
    for row in args.rows.split(","):
        variant, d, s = row.split(":")
        cfg = next(bench_gpu.configs([variant], [int(d)], [int(s)]))
        q, k, v, sinks = bench_gpu.inputs(cfg)
        for impl in args.impls.split(","):
            if not bench_gpu.expresses(impl, cfg):
                continue
            attend = attend_of(impl, cfg)
            fwd = lambda: attend(q, k, v, sinks)
            if args.phase == "bwd":
                out = fwd()
                dout = torch.randn_like(out)
                wrt = bench_gpu.differentiable(q, k, v, sinks)
                fwd = lambda: torch.autograd.grad(out, wrt, dout,
                                                  retain_graph=True)
            for _ in range(3):
                fwd()
            if impl == "fa":
                fa.wait_for_compiles()
            torch.cuda.synchronize()
            common.settle_clocks(fwd, 0.6)
            single = med(common.cuda_ms(fwd, 1) for _ in range(args.reps))
            covered = med(covered_ms(fwd, args.sleep_cycles)
                          for _ in range(args.reps))
            single2 = med(common.cuda_ms(fwd, 1) for _ in range(args.reps))
            queued = med(common.cuda_ms(fwd, args.queue) for _ in range(5))
            work = cfg["flops"] * (common.BACKWARD_FLOP_RATIO
                                   if args.phase == "bwd" else 1)
            tf = lambda ms: work / ms / 1e9
            print(f"== {args.phase} {impl} {row}: single {single:.3f} / {single2:.3f} ms "
                  f"({tf(single):.1f} TFLOP/s), covered {covered:.3f} "
                  f"({tf(covered):.1f}), queued {queued:.3f} ({tf(queued):.1f});"
                  f" host exposed {1e3 * (single - covered):.0f} us",
                  flush=True)
            host_overhead.gpu_activities(impl, fwd, calls=3)
        del q, k, v, sinks
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
