#!/usr/bin/env python3
"""What compiling costs: fa's JIT beside SDPA's cuDNN backend and
FlexAttention's torch.compile, per case (bf16, B*S = 16k tokens, S 4096;
heads as in bench_gpu.py). A case is a bench_gpu variant at a head dim,
`variant@D`; the default cases are issue 16's: causal at D 128, GQA with a
window of 2048 at D 128, gpt-oss's sliding layer at D 64.

For each variant and implementation, two fresh processes share fresh, empty
cache folders: fa's kernel cache (FA_CACHE_DIR), Inductor's and Triton's
(TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR) and the CUDA driver's PTX cache
(CUDA_CACHE_PATH), so nothing from an earlier run helps.
- cold_fwd_s, cold_bwd_s: the first process, wall time of the first forward
  call (synchronized) and then of the first backward. fa: parse, lower,
  LLVM, PTX JIT by the driver, module load (FA_AUTOTUNE=0: no tuning runs);
  flex: Dynamo, AOTAutograd, Inductor, Triton (the block mask is built
  before the clock starts).
- cache_fwd_s, cache_bwd_s: the same in the second process, whose caches
  the first filled (fa: its kernel cache on disk; flex: Inductor's FX graph
  and Triton's caches).
- second_fwd_ms: that process's second forward, wall time, synchronized (an
  in-memory hit); steady_kernel_ms: median CUDA-event time of later
  forwards; steady_wall_ms: their median synchronized wall time;
  hit_overhead_ms = second_fwd_ms - steady_kernel_ms.
- cold_phases, cache_phases: where each process's compile went, from fa's
  FA_COMPILE_TIMES line: parse, lowering (cold) or cache load, host
  codegen (cold: LLVM on the host code, to the object the cache keeps),
  host link (the object into a JIT), GPU module load.
- tuned_fwd_s, tuned_bwd_s (fa): a third process on fresh, empty caches
  with FA_AUTOTUNE unset: what a first call waits for when tuning is left
  to fa (since 2026-11-25 its default reads the shipped table and times
  nothing; before, it timed the candidates; since 2026-11-27 it compiles
  the row's config alone, where it compiled the compiler's default first).
- cache: what the caches said (fa: its program's disk-cache status, first
  process then second; flex: Inductor's FX graph cache hits and misses).
CUDA and fa's driver are initialised before any clock starts; process start
and imports are not counted, torch._dynamo's included: a torch.library
custom op imports it at its first call (2.4 s of a 2.7 s first call on the
2-core dev machine under cProfile; on the H100 machine the likely bulk of a
5.8 s cache-hit first call whose compile took 0.33 s). fa's plain eager
calls no longer go through its custom op, so only runs before that change
paid it.

usage: bench_compile.py --csv OUT.csv [--cases causal@128,...]
                        [--impls fa,sdpa-cudnn,flex] [--time-limit S]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import common

CASES = ("causal@128", "gqa-window-2048@128", "gpt-oss-window-128@64")
SEQ = 4096  # B = 16k tokens / S = 4
FIELDS = ["impl", "variant", "dtype", "d", "b", "hq", "hkv", "s",
          "cold_fwd_s", "cold_bwd_s", "cache_fwd_s", "cache_bwd_s",
          "tuned_fwd_s", "tuned_bwd_s",
          "second_fwd_ms", "steady_kernel_ms", "steady_wall_ms",
          "hit_overhead_ms", "cold_phases", "cache_phases", "tuned_phases",
          "cache", "status", "gpu"]
CHILD_TIMEOUT = 300


def timed(fn):
    """(fn(), seconds), synchronized."""
    import torch
    start = time.perf_counter()
    result = fn()
    torch.cuda.synchronize()
    return result, time.perf_counter() - start


def cache_state(impl):
    if impl == "sdpa-cudnn":
        return "-"
    if impl == "fa":
        import fa
        # Each Program knows whether it came from the disk cache; the
        # package keeps them in fa.api._programs (no public accessor).
        programs = getattr(fa.api, "_programs", {}).values()
        return ",".join(sorted({p.cache_status.split(" /")[0]
                                for p in programs}))
    from torch._dynamo.utils import counters
    c = counters["inductor"]
    return (f"fxgraph hit {c['fxgraph_cache_hit']} miss "
            f"{c['fxgraph_cache_miss']}")


def parse_case(case):
    """(variant, head dim) of `variant@D`."""
    variant, _, d = case.partition("@")
    return variant, int(d or 128)


def child(impl, case):
    """One process's measurements, as a dict."""
    import torch
    import bench_gpu
    variant, d = parse_case(case)
    cfg = next(bench_gpu.configs([variant], [d], [SEQ]))
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    # Imports are not counted: torch._dynamo, which torch.compile (flex's)
    # and torch.library custom ops (fa's, when watched) import when first
    # called, is imported here, off the clock.
    import torch._dynamo  # noqa: F401
    if impl == "fa":
        fa = common.import_fa()
        import fa.torch_ops  # noqa: F401  (registers fa's ops off the clock)
        ok, why = fa.gpu_available()
        if not ok:
            raise RuntimeError(f"fa has no GPU: {why}")
        attend = bench_gpu.fa_attend(fa, cfg)
    elif impl == "sdpa-cudnn":
        attend = bench_gpu.sdpa_attend(bench_gpu.SDPBackend.CUDNN_ATTENTION,
                                       cfg)
    else:
        common.set_recompile_limit(64)
        attend = bench_gpu.flex_attend(cfg)
    q, k, v, sinks = bench_gpu.inputs(cfg)
    grads_of = bench_gpu.differentiable(q, k, v, sinks)
    fwd = lambda: attend(q, k, v, sinks)
    o, first_fwd = timed(fwd)
    do = torch.randn_like(o)
    _, first_bwd = timed(lambda: torch.autograd.grad(o, grads_of, do))
    _, second = timed(fwd)
    kernel = common.median([common.cuda_ms(fwd) for _ in range(20)])
    wall = common.median([timed(fwd)[1] * 1e3 for _ in range(20)])
    return dict(cfg=cfg, first_fwd=first_fwd, first_bwd=first_bwd,
                second_ms=second * 1e3, kernel_ms=kernel, wall_ms=wall,
                cache=cache_state(impl), gpu=torch.cuda.get_device_name())


def run_child(impl, variant, env, timeout):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", impl,
           variant]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    sys.stderr.write(proc.stderr[-2000:])
    phases = [line.split(" total ", 1)[1] for line in proc.stderr.splitlines()
              if line.startswith("fa: compile times: ") and " total " in line]
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            if "error" in result:
                raise RuntimeError(result["error"])
            result["phases"] = "; ".join(phases)
            return result
    raise RuntimeError(f"exit {proc.returncode}: "
                       f"{proc.stderr.strip()[-200:]}")


def fresh_caches(root):
    """The environment of a process whose caches live under `root`."""
    return dict(os.environ, FA_COMPILE_TIMES="1",
                FA_CACHE_DIR=os.path.join(root, "fa"),
                TORCHINDUCTOR_CACHE_DIR=os.path.join(root, "inductor"),
                TRITON_CACHE_DIR=os.path.join(root, "triton"),
                CUDA_CACHE_PATH=os.path.join(root, "cuda"))


def measure(impl, case, deadline):
    """Row of one (impl, case): a cold process, then a warm one (and for
    fa, a cold one that tunes as fa does by default)."""
    variant, d = parse_case(case)
    row = dict(impl=common.row_impl(impl), variant=variant, dtype="bf16")
    root = tempfile.mkdtemp(prefix=f"fa-bench-compile-{impl}-")
    env = dict(fresh_caches(os.path.join(root, "cold")), FA_AUTOTUNE="0")
    try:
        deadline.check()
        cold = run_child(impl, case, env, min(CHILD_TIMEOUT,
                                               deadline.left()))
        deadline.check()
        warm = run_child(impl, case, env, min(CHILD_TIMEOUT,
                                               deadline.left()))
        if impl == "fa":
            deadline.check()
            tuning = fresh_caches(os.path.join(root, "tuned"))
            tuning.pop("FA_AUTOTUNE", None)
            tuned = run_child(impl, case, tuning,
                              min(CHILD_TIMEOUT, deadline.left()))
            row.update(tuned_fwd_s=f"{tuned['first_fwd']:.3f}",
                       tuned_bwd_s=f"{tuned['first_bwd']:.3f}",
                       tuned_phases=tuned["phases"])
        cfg = warm["cfg"]
        row.update({f: cfg[f] for f in ("d", "b", "hq", "hkv", "s")})
        row.update(cold_fwd_s=f"{cold['first_fwd']:.3f}",
                   cold_bwd_s=f"{cold['first_bwd']:.3f}",
                   cache_fwd_s=f"{warm['first_fwd']:.3f}",
                   cache_bwd_s=f"{warm['first_bwd']:.3f}",
                   second_fwd_ms=f"{warm['second_ms']:.3f}",
                   steady_kernel_ms=f"{warm['kernel_ms']:.3f}",
                   steady_wall_ms=f"{warm['wall_ms']:.3f}",
                   hit_overhead_ms=f"{warm['second_ms'] - warm['kernel_ms']:.3f}",
                   cold_phases=cold["phases"], cache_phases=warm["phases"],
                   cache=f"{cold['cache']} -> {warm['cache']}",
                   status="ok", gpu=warm["gpu"])
    except subprocess.TimeoutExpired:
        row["status"] = "error: timed out"
    except Exception as e:  # recorded, never a crash
        row["status"] = common.failure(e)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return row


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        try:
            result = child(sys.argv[2], sys.argv[3])
        except Exception as e:
            result = dict(error=" ".join(str(e).split())[:300])
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--cases", default=",".join(CASES),
                        help="variant@D, comma-separated (variants: "
                             "bench_gpu.py's)")
    parser.add_argument("--impls", default="fa,sdpa-cudnn,flex")
    parser.add_argument("--time-limit", type=float,
                        help="seconds for the whole run; rows not started "
                             "by then are recorded as skipped")
    args = parser.parse_args()
    deadline = common.Deadline(args.time_limit)
    out = common.CsvOut(args.csv, FIELDS)
    rows = []
    import bench_gpu
    # Each impl's cases before the next impl's: under a time limit, fa's
    # rows (first in --impls) are not lost to a peer's slow first calls
    # (flex's torch.compile took a whole stage's limit on one case).
    for impl in args.impls.split(","):
        for case in args.cases.split(","):
            variant, d = parse_case(case)
            cfg = next(bench_gpu.configs([variant], [d], [SEQ]))
            if not bench_gpu.expresses(impl, cfg):
                continue
            row = measure(impl, case, deadline)
            out.write(row)
            rows.append(row)
            print(f"{impl:10s} {case:24s} cold {row.get('cold_fwd_s')} + "
                  f"{row.get('cold_bwd_s')} s, cache {row.get('cache_fwd_s')}"
                  f" + {row.get('cache_bwd_s')} s, in-memory overhead "
                  f"{row.get('hit_overhead_ms')} ms  [{row.get('cache')}]  "
                  f"{row['status']}", flush=True)
    out.close()
    common.print_table(rows, FIELDS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
