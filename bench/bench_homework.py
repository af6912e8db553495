#!/usr/bin/env python3
"""The course homework's two benchmarks with fa as the implementation under
test ("Flash Attention Homework", sections 1.5.1 and 3.5.1), same
parameters and CSV columns:

softmax_matmul_benchmark.csv: softmax(x) @ V, x [16, 2048, d2], V [16, d2,
512], float32, d2 = 64..8192; PyTorch's F.softmax(x, -1) @ V beside
fa.softmax_matmul(x, V). Columns batch_size, d1, d2, d3, triton, BLOCK,
forward_ms_mean, forward_ms_std, forward_peak_MiB:
- `triton` keeps the homework's name and meaning, "the fused kernel under
  test": True on fa's rows (there is no Triton here), False on PyTorch's.
- `BLOCK`: the homework sweeps BLOCK_1 = BLOCK_2 over 16/32/64; fa picks its
  own tiles and its Python API takes none, so fa has one row per d2 with
  BLOCK "auto" (softmax_matmul runs fa's scalar GPU path, one row and one
  key per thread: V's 512 columns are beyond the tensor-core kernels' head
  dims of 64 and 128). PyTorch's rows leave it empty (<NA>), as the
  homework does.
- mean and standard deviation of `--reps` (100) CUDA-event timed calls after
  `--warmup` (10); failed configs leave the nullable columns empty and say
  why in the log.

attention_benchmark.csv: batch 8, d_model 64 (one head: q, k, v [8, S, 64]),
float32, S = 256..16384, not causal (the homework's default, is_causal=False;
--causal for the other), forward and backward. Implementations:
- pytorch_sdpa: F.scaled_dot_product_attention under torch.compile, default
  backend selection (the homework's reference).
- fa: fa.attention on the same tensors (a head axis added), with autograd,
  under torch.compile too (the homework's flash_triton slot; fa's ops stay
  in the compiled graph).
- pytorch_eager: softmax(QK^T / sqrt(d)) V with every score materialized (not
  asked by the homework; it shows what the fused kernels save).
forward_ms/backward_ms are medians of CUDA-event timed calls (backward:
torch.autograd.grad of the output with a random dO); status is ok, OOM,
OOM(backward), error: ... or skipped: ... (budget or time limit).

Memory, in both files (bench/common.py): peak MiB above what was allocated
before the call, so the inputs do not count; fa's rows add fa's peak device
workspace (fa.workspace_peak_bytes(), allocated outside PyTorch's
allocator) when the package has it. saved_activations_MiB: the distinct
storages autograd keeps for backward (saved_tensors_hooks, inputs included:
q, k, v, o and lse for fa), taken on the uncompiled call (one op saves the
same tensors under torch.compile).

float32 in fa: attention runs the tensor-core kernels on tf32 MMAs, three
per product on hi/lo halves for float32 accuracy (one with --tf32, which
sets torch.backends.cuda.matmul.allow_tf32 for PyTorch and fa alike);
softmax_matmul runs the scalar path, far slower. So each measurement gets
at most --budget seconds (a config predicted not to fit is recorded as
skipped, one that fits only partly keeps fewer reps and says so), and
--time-limit bounds the whole run.

usage: bench_homework.py [--out-dir DIR] [--only softmax|attention]
       [--d2s 64,...] [--seqs 256,...] [--impl pytorch_sdpa,fa,...]
       [--causal] [--no-compile] [--tf32] [--budget S] [--time-limit S]
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

import common

SOFTMAX_FIELDS = ["batch_size", "d1", "d2", "d3", "triton", "BLOCK",
                  "forward_ms_mean", "forward_ms_std", "forward_peak_MiB"]
ATTENTION_FIELDS = ["implementation", "d_model", "seq_len", "forward_ms",
                    "forward_peak_MiB", "backward_ms", "backward_peak_MiB",
                    "saved_activations_MiB", "status", "gpu"]
ATTENTION_IMPLS = ("pytorch_sdpa", "fa", "pytorch_eager")


def softmax_mult(x, v):
    """The homework's PyTorch reference."""
    return F.softmax(x, dim=-1) @ v


def run_softmax(args, fa, out, deadline, predictor):
    b, d1, d3 = 16, 2048, 512
    rows = []
    for d2 in args.d2s:
        for impl in ("pytorch", "fa"):
            row = dict(batch_size=b, d1=d1, d2=d2, d3=d3,
                       triton=impl == "fa",
                       BLOCK="auto" if impl == "fa" else None,
                       forward_ms_mean=None, forward_ms_std=None,
                       forward_peak_MiB=None)
            why = "ok"
            try:
                deadline.check()
                x = torch.randn(b, d1, d2, device="cuda")
                v = torch.randn(b, d2, d3, device="cuda")
                fn = (lambda: fa.softmax_matmul(x, v)) if impl == "fa" \
                    else (lambda: softmax_mult(x, v))
                times, why = common.measure(
                    fn, args.warmup, args.reps, deadline.budget(args.budget),
                    predictor.predict(impl, d2))
                predictor.add(impl, d2, common.median(times) / 1e3)
                _, peak = common.peak_mib(fn, fa if impl == "fa" else None)
                mean, std = common.mean_std(times)
                row.update(forward_ms_mean=fmt(mean),
                           forward_ms_std=fmt(std),
                           forward_peak_MiB=fmt(peak))
                why = why or "ok"
            except Exception as e:  # recorded, never a crash
                why = common.failure(e)
            x = v = fn = None
            common.free_cuda()
            out.write(row)
            rows.append(row)
            print(f"softmax_matmul {impl:7s} d2={d2:5d} "
                  f"mean {row['forward_ms_mean']} ms, std "
                  f"{row['forward_ms_std']}, peak {row['forward_peak_MiB']} "
                  f"MiB  {why}", flush=True)
    return rows


def attention_fn(impl, fa, causal, compiled):
    """impl's attention on [B, S, D] tensors."""
    if impl == "pytorch_sdpa":
        def fn(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    elif impl == "fa":
        def fn(q, k, v):
            return fa.attention(q.unsqueeze(1), k.unsqueeze(1),
                                v.unsqueeze(1), causal=causal).squeeze(1)
    else:
        def fn(q, k, v):
            return common.eager_attention(q.unsqueeze(1), k.unsqueeze(1),
                                          v.unsqueeze(1), causal).squeeze(1)
        return fn, fn
    # Every shape compiles once (dynamic=False: no symbolic sizes in fa's
    # argument checks); the eager function measures saved tensors.
    return (torch.compile(fn, dynamic=False) if compiled else fn), fn


def run_attention(args, fa, out, deadline, predictor, gpu):
    b, d = 8, 64
    rows = []
    for s in args.seqs:
        flops = common.attention_flops(b, 1, s, d, args.causal)
        for impl in args.impl:
            row = dict(implementation=impl, d_model=d, seq_len=s, gpu=gpu)
            try:
                deadline.check()
                attend, eager = attention_fn(impl, fa, args.causal,
                                             not args.no_compile)
                q, k, v = (torch.randn(b, s, d, device="cuda",
                                       requires_grad=True) for _ in range(3))
                r = common.forward_backward(
                    lambda: attend(q, k, v), (q, k, v), warmup=args.warmup,
                    reps=args.reps,
                    budget=lambda: deadline.budget(args.budget),
                    predictor=predictor, key=impl, flops=flops,
                    fa=fa if impl == "fa" else None)
                if r["fwd_ms"] is not None and r["failure"] != "OOM":
                    row["saved_activations_MiB"] = saved_mib(eager, q, k, v)
            except Exception as e:  # recorded, never a crash
                r = dict(failure=common.failure(e), notes=[])
            row.update(forward_ms=fmt(r.get("fwd_ms")),
                       forward_peak_MiB=fmt(r.get("fwd_peak")),
                       backward_ms=fmt(r.get("bwd_ms")),
                       backward_peak_MiB=fmt(r.get("bwd_peak")),
                       status=common.status(r))
            q = k = v = attend = eager = None
            common.free_cuda()
            out.write(row)
            rows.append(row)
            print(f"attention {impl:13s} S={s:5d} fwd {row['forward_ms']} ms "
                  f"bwd {row['backward_ms']} ms peak "
                  f"{row['forward_peak_MiB']}/{row['backward_peak_MiB']} MiB "
                  f"saved {row.get('saved_activations_MiB')} MiB  "
                  f"{row['status']}", flush=True)
    return rows


def fmt(x):
    return None if x is None else round(x, 4)


def saved_mib(eager, q, k, v):
    """saved_activations_MiB of one uncompiled forward (see the module
    comment); the allocation it leaves alive (output included) where the
    hooks see nothing; None, said in the log, when it fails."""
    try:
        before = torch.cuda.memory_allocated()
        o, mib = common.saved_tensors_mib(lambda: eager(q, k, v))
        if mib is None:
            mib = (torch.cuda.memory_allocated() - before) / common.MIB
            print("  saved tensors not visible to the hooks; allocation "
                  "delta taken instead", flush=True)
        return fmt(mib)
    except Exception as e:
        print(f"  saved activations not measured: {common.short_error(e)}",
              flush=True)
        return None


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", default="bench/out",
                        help="where both CSVs go (default bench/out)")
    parser.add_argument("--only", choices=("softmax", "attention"))
    parser.add_argument("--d2s", type=common.int_list,
                        default=[64, 128, 256, 512, 1024, 2048, 4096, 8192])
    parser.add_argument("--seqs", type=common.int_list,
                        default=[256, 1024, 4096, 8192, 16384])
    parser.add_argument("--impl", default=",".join(ATTENTION_IMPLS),
                        type=lambda t: t.split(","),
                        help="attention implementations, comma-separated: "
                             + ", ".join(ATTENTION_IMPLS))
    parser.add_argument("--causal", action="store_true",
                        help="causal attention (the homework's default is "
                             "not)")
    parser.add_argument("--no-compile", action="store_true",
                        help="attention without torch.compile")
    parser.add_argument("--tf32", action="store_true",
                        help="float32 matmuls on tf32, PyTorch's and fa's "
                             "(torch.backends.cuda.matmul.allow_tf32)")
    common.add_measurement_args(
        parser, warmup=10, reps=100, budget=20.0,
        measurement="one config's forward, or its backward",
        time_limit="softmax gets a third of it when both parts run")
    args = parser.parse_args()
    unknown = set(args.impl) - set(ATTENTION_IMPLS)
    if unknown:
        parser.error(f"unknown --impl {', '.join(sorted(unknown))}")
    if not torch.cuda.is_available():
        sys.exit("bench_homework.py needs a CUDA GPU")
    fa = common.import_fa()
    common.set_recompile_limit(64)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    gpu = torch.cuda.get_device_name()
    start = time.monotonic()
    paths = []
    predictor = common.Predictor()
    if args.only != "attention":
        share = args.time_limit and (args.time_limit / 3
                                     if args.only is None
                                     else args.time_limit)
        path = f"{args.out_dir}/softmax_matmul_benchmark.csv"
        out = common.CsvOut(path, SOFTMAX_FIELDS)
        rows = run_softmax(args, fa, out, common.Deadline(share), predictor)
        out.close()
        common.print_table(rows, SOFTMAX_FIELDS)
        paths.append(path)
    if args.only != "softmax":
        left = args.time_limit and args.time_limit - (time.monotonic() -
                                                      start)
        path = f"{args.out_dir}/attention_benchmark.csv"
        out = common.CsvOut(path, ATTENTION_FIELDS)
        rows = run_attention(args, fa, out, common.Deadline(left), predictor,
                             gpu)
        out.close()
        common.print_table(rows, ATTENTION_FIELDS)
        paths.append(path)
    print("wrote " + ", ".join(paths))
    common.plot_hint(paths, f"{args.out_dir}/plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
