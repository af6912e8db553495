#!/usr/bin/env python3
"""fa beside PyTorch SDPA (flash and cuDNN backends), FlexAttention and eager
PyTorch on attention variants: speed and peak memory, forward and backward.

Variants (bf16, B*S = 16k tokens, head dims 64 and 128, S = 1k..16k):
  full, causal           MHA, H = 2048 / D
  gqa-causal             Hq = 4096 / D, Hkv = Hq / 4
  window-4096            sliding window (causal), H = 2048 / D
  gqa-window-2048        GQA 4:1 with a window of 2048, Hq = 4096 / D
  window-1024+4-sinks    window 1024 plus 4 sink tokens (StreamingLLM)
  gpt-oss-window-128     gpt-oss: Hq = 4096 / D, Hkv = Hq / 8, window 128,
                         learnable sinks (one logit per head in the softmax)
  gpt-oss-full           the same without the window
Implementations, each where it expresses the variant:
  fa            fa.attention (autotuned unless FA_AUTOTUNE is set: the
                first call of a shape class times the tensor-core configs;
                fa_config says what it chose; FA_AUTOTUNE=table: the
                shipped table's configs, as a call with it unset gets)
  fa-tuned, fa-default   at --fa-default-seqs: fa autotuned and with
                FA_AUTOTUNE=0 (the compiler's tiles) on the same inputs, timed
                in alternating rounds (--rounds of --reps calls each) so that
                clocks and heat weigh on both alike
  sdpa-flash2, sdpa-cudnn   F.scaled_dot_product_attention, one backend
                forced (full, causal, GQA: no windows, no sinks)
  flex          FlexAttention under torch.compile: masks as a mask_mod;
                learnable sinks by renormalizing its output with its
                log-sum-exp, o * sigmoid(lse - sink) (one extra logit s in a
                row with normalizer Z scales it by Z / (Z + e^s)); the
                gradient reaches the sinks through lse
  fa4           FlashAttention-4 (pip flash-attn-4, flash_attn.cute's
                flash_attn_func; a JIT like fa): [B, S, H, D] views of the
                same tensors, windows as window_size (W - 1, 0), learnable
                sinks as learnable_sink; no sink tokens. Installed on the
                GPU machine from carried wheels (gpu-run.sh, FA_WHEELS)
  eager         every score materialized, softmax in float32: the gpt-oss
                rows, whose learnable sinks SDPA cannot express; skipped
                where its memory is predicted not to fit

Timing: CUDA events, warm-up (--warmup calls, then --warmup-seconds of calls
for a settled clock), median of --reps, all through PyTorch (fa runs
on torch's stream). TFLOP/s count 4 * D flops per visible (query, key) pair
per query head forward, 2.5x that backward. Peak MiB: above what was
allocated before the call, fa's device workspace added (bench/common.py).
Failures, OOMs and budget cuts go to the status column; --time-limit keeps
the run within a device call.

usage: bench_gpu.py --csv OUT.csv [--variants a,b | --only dense|variants]
                    [--impls fa,fa-default,sdpa-flash2,sdpa-cudnn,flex,fa4,eager]
                    [--no-flex] [--head-dims 64,128] [--seqs 1024,...]
                    [--fa-default-seqs 16384] [--warmup N] [--reps N]
                    [--warmup-seconds S (0.6)]
                    [--budget S] [--time-limit S] [--plot-dir DIR]
                    [--alternate [--rounds N (4)]]
--alternate times each shape's implementations in alternating rounds
(bench_alternating), so that ratios between them do not depend on which
ran in a slower clock state.
"""
import argparse
import contextlib
import os
import re
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import common
from common import Skipped

try:
    from torch.nn.attention.flex_attention import (create_block_mask,
                                                   flex_attention)
except ImportError:  # torch < 2.5
    flex_attention = None
try:
    from torch.nn.attention.flex_attention import AuxRequest
except ImportError:  # torch < 2.9: return_lse instead
    AuxRequest = None

TOKENS = 16384

# name: model width (Hq = model / D), query heads per kv head, mask.
VARIANTS = {
    "full": dict(model=2048, group=1, causal=False),
    "causal": dict(model=2048, group=1, causal=True),
    "gqa-causal": dict(model=4096, group=4, causal=True),
    "window-4096": dict(model=2048, group=1, causal=True, window=4096),
    "gqa-window-2048": dict(model=4096, group=4, causal=True, window=2048),
    "window-1024+4-sinks": dict(model=2048, group=1, causal=True,
                                window=1024, sink_tokens=4),
    "gpt-oss-window-128": dict(model=4096, group=8, causal=True, window=128,
                               learnable_sinks=True),
    "gpt-oss-full": dict(model=4096, group=8, causal=True,
                         learnable_sinks=True),
}
DENSE = ("full", "causal")
IMPLS = ("fa", "fa-default", "sdpa-flash2", "sdpa-cudnn", "flex", "fa4",
         "eager")
FIELDS = ["impl", "variant", "gpu", "dtype", "d", "b", "hq", "hkv", "s",
          "fwd_ms", "bwd_ms", "fwd_tflops", "bwd_tflops", "fwd_peak_mib",
          "bwd_peak_mib", "status", "fa_config"]
# FA_AUTOTUNE=0: the program as compiled (wgmma: the compiler's tiles;
# mma.sync: block-n 64, warps 4, stages 1, shared 48 KiB).
DEFAULT_CONFIG = "default: the compiler's tiles"


def configs(variants, head_dims, seqs):
    for name in variants:
        v = VARIANTS[name]
        for d in head_dims:
            hq = v["model"] // d
            for s in seqs:
                b = max(TOKENS // s, 1)
                yield dict(v, variant=name, d=d, s=s, b=b, hq=hq,
                           hkv=hq // v["group"],
                           flops=common.attention_flops(
                               b, hq, s, d, v["causal"], v.get("window"),
                               v.get("sink_tokens", 0)))


def expresses(impl, cfg):
    """Whether `impl` computes this variant."""
    if impl in ("sdpa-flash2", "sdpa-cudnn"):
        return cfg.get("window") is None and not cfg.get("learnable_sinks")
    if impl == "eager":
        return bool(cfg.get("learnable_sinks"))
    if impl == "fa4":
        return not cfg.get("sink_tokens")
    return True


def inputs(cfg):
    """q, k, v (bf16) and sinks (float32 [Hq], or None), with gradients."""
    b, s, d = cfg["b"], cfg["s"], cfg["d"]
    make = lambda h: torch.randn(b, h, s, d, device="cuda",
                                 dtype=torch.bfloat16, requires_grad=True)
    sinks = None
    if cfg.get("learnable_sinks"):
        sinks = torch.randn(cfg["hq"], device="cuda", requires_grad=True)
    return make(cfg["hq"]), make(cfg["hkv"]), make(cfg["hkv"]), sinks


def differentiable(q, k, v, sinks):
    """The inputs that get gradients: q, k, v and sinks when there are."""
    return (q, k, v) + ((sinks,) if sinks is not None else ())


def base_row(impl, cfg, gpu):
    return dict(impl=common.row_impl(impl), variant=cfg["variant"], gpu=gpu,
                dtype="bf16",
                d=cfg["d"], b=cfg["b"], hq=cfg["hq"], hkv=cfg["hkv"],
                s=cfg["s"])


def put_time(row, phase, ms, cfg):
    """Fills row's `phase` ("fwd" or "bwd") time and TFLOP/s."""
    work = cfg["flops"] * (common.BACKWARD_FLOP_RATIO if phase == "bwd"
                           else 1)
    row[f"{phase}_ms"] = f"{ms:.3f}"
    row[f"{phase}_tflops"] = f"{work / ms / 1e9:.1f}"


def fa_attend(fa, cfg):
    return lambda q, k, v, sinks: fa.attention(
        q, k, v, causal=cfg["causal"], window=cfg.get("window"),
        sink_tokens=cfg.get("sink_tokens", 0), sinks=sinks)


def sdpa_attend(backend, cfg):
    gqa = cfg["hq"] != cfg["hkv"]

    def attend(q, k, v, sinks):
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(
                q, k, v, is_causal=cfg["causal"], enable_gqa=gqa)
    return attend


def fa4_attend(cfg):
    from flash_attn.cute import flash_attn_func
    window = cfg.get("window")
    window_size = (window - 1, 0) if window else (None, None)

    def attend(q, k, v, sinks):
        o, _ = flash_attn_func(q.transpose(1, 2), k.transpose(1, 2),
                               v.transpose(1, 2), causal=cfg["causal"],
                               window_size=window_size, learnable_sink=sinks)
        return o.transpose(1, 2)
    return attend


def flex_plain(q, k, v, sinks, block_mask, gqa):
    return flex_attention(q, k, v, block_mask=block_mask, enable_gqa=gqa)


def flex_sinks(q, k, v, sinks, block_mask, gqa):
    if AuxRequest is None:
        o, lse = flex_attention(q, k, v, block_mask=block_mask,
                                enable_gqa=gqa, return_lse=True)
    else:
        o, aux = flex_attention(q, k, v, block_mask=block_mask,
                                enable_gqa=gqa,
                                return_aux=AuxRequest(lse=True))
        lse = aux.lse
    scale = torch.sigmoid(lse - sinks[None, :, None])
    return (o.float() * scale[..., None]).to(o.dtype)


_flex_compiled = {}


def flex_attend(cfg):
    if flex_attention is None:
        raise RuntimeError(f"no FlexAttention in torch {torch.__version__}")
    block_mask = None
    if cfg["causal"]:
        window, sink_tokens = cfg.get("window"), cfg.get("sink_tokens", 0)
        block_mask = create_block_mask(
            lambda b, h, i, j: common.causal_keep(i, j, window, sink_tokens),
            None, None, cfg["s"], cfg["s"], device="cuda")
    fn = flex_sinks if cfg.get("learnable_sinks") else flex_plain
    # One compiled function each: every shape and mask recompiles (static
    # shapes, as FlexAttention is meant to run), within the raised limit.
    if fn not in _flex_compiled:
        _flex_compiled[fn] = torch.compile(fn, dynamic=False)
    compiled, gqa = _flex_compiled[fn], cfg["hq"] != cfg["hkv"]
    return lambda q, k, v, sinks: compiled(q, k, v, sinks, block_mask, gqa)


def eager_attend(cfg):
    need = common.eager_peak_bytes(cfg["b"], cfg["hq"], cfg["s"])
    have = torch.cuda.get_device_properties(0).total_memory
    if need > 0.9 * have:
        raise Skipped(f"skipped: predicted {need / 2**30:.0f} GiB > "
                      f"{have / 2**30:.0f} GiB")
    return lambda q, k, v, sinks: common.eager_attention(
        q, k, v, cfg["causal"], cfg.get("window"),
        cfg.get("sink_tokens", 0), sinks)


@contextlib.contextmanager
def captured_stderr(lines):
    """Collects what native code writes to fd 2 (fa's autotuner logs its
    choice there) into `lines`, and passes it on to stderr afterwards."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode(errors="replace")
            sys.stderr.write(text)
            lines.extend(text.splitlines())


NO_CHOICE = "autotuned: no choice logged (kernel cache, or nothing to tune)"


def autotuning():
    """Whether fa's calls measure their configs (FA_AUTOTUNE=1, main()'s
    default), rather than take the shipped table's or the compiler's."""
    return os.environ.get("FA_AUTOTUNE") == "1"


def tuned_config(lines):
    """The autotuner's picks, "forward: block-n 64, warps 8; backward: ...",
    or None when it logged none."""
    picks = [f"{m.group(1)}: {m.group(2)}" for m in
             (re.search(r"fa: autotuning \S+ (\w+) .*: chose (.*)", line)
              for line in lines) if m]
    return "; ".join(picks) or None


def fa_config_of(logged):
    """An fa row's fa_config: the autotuner's picks from its `logged`
    lines, or what configs it ran without them."""
    return tuned_config(logged) or (
        NO_CHOICE if autotuning() else
        f"FA_AUTOTUNE={os.environ.get('FA_AUTOTUNE', '')}: not tuned "
        "(the shipped table's config, or the compiler's)")


def attend_of(impl, cfg, fa):
    """`impl`'s attention at cfg: attend(q, k, v, sinks) -> o."""
    if impl in ("fa", "fa-default"):
        return fa_attend(fa, cfg)
    if impl == "flex":
        return flex_attend(cfg)
    if impl == "eager":
        return eager_attend(cfg)
    if impl == "fa4":
        return fa4_attend(cfg)
    return sdpa_attend(SDPBackend.FLASH_ATTENTION if impl == "sdpa-flash2"
                       else SDPBackend.CUDNN_ATTENTION, cfg)


def bench_row(impl, cfg, args, fa, deadline, predictor, gpu, out):
    row = base_row(impl, cfg, gpu)
    logged = []
    try:
        deadline.check()
        attend = attend_of(impl, cfg, fa)
        q, k, v, sinks = inputs(cfg)
        grads_of = differentiable(q, k, v, sinks)
        capture = captured_stderr(logged) if impl == "fa" else \
            contextlib.nullcontext()
        with capture:
            r = common.forward_backward(
                lambda: attend(q, k, v, sinks), grads_of, warmup=args.warmup,
                reps=args.reps, budget=lambda: deadline.budget(args.budget),
                predictor=predictor, key=(impl, cfg["variant"], cfg["d"]),
                flops=cfg["flops"], fa=fa if impl.startswith("fa") else None)
    except Exception as e:  # recorded, never a crash
        r = dict(failure=common.failure(e), notes=[])
    for phase in ("fwd", "bwd"):
        ms, peak = r.get(f"{phase}_ms"), r.get(f"{phase}_peak")
        if ms is not None:
            put_time(row, phase, ms, cfg)
        if peak is not None:
            row[f"{phase}_peak_mib"] = f"{peak:.1f}"
    row["status"] = common.status(r)
    if impl == "fa":
        row["fa_config"] = fa_config_of(logged)
    q = k = v = sinks = grads_of = attend = None
    common.free_cuda()
    write_row(out, row)
    return row


def bench_alternating(cfg, impls, args, fa, deadline, gpu, out):
    """Rows of `impls` at cfg (--alternate): each implementation's first
    calls (compiles, fa's tuning) made, then --rounds rounds in which every
    implementation runs its warm-up call and --reps timed calls, forward
    then backward, the order rotating by round. The GPU's clock and power
    budget move 4-9% between batches of calls moments apart (bench/NOTES.md,
    fifty-eighth session), so that timing each implementation in one
    batch, as the plain sweep does, makes the ratios the bars read move as
    much between runs; alternating rounds give every implementation the
    same share of each state. Medians over all rounds; no peak memory."""
    rows = {impl: base_row(impl, cfg, gpu) for impl in impls}
    ready, logged = {}, []
    for impl in impls:
        try:
            deadline.check()
            attend = attend_of(impl, cfg, fa)
            q, k, v, sinks = inputs(cfg)
            grads_of = differentiable(q, k, v, sinks)
            fwd = (lambda attend=attend, q=q, k=k, v=v, sinks=sinks:
                   attend(q, k, v, sinks))
            capture = captured_stderr(logged) if impl == "fa" else \
                contextlib.nullcontext()
            with capture:
                o = fwd()
                if impl == "fa":  # its backward's background compile
                    getattr(fa, "wait_for_compiles", lambda: None)()
                do = torch.randn_like(o)
                bwd = (lambda o=o, do=do, grads_of=grads_of:
                       torch.autograd.grad(o, grads_of, do, retain_graph=True))
                bwd()
                torch.cuda.synchronize()
            # Rounds that would take past the budget are not started.
            cost = (common.cuda_ms(fwd) + common.cuda_ms(bwd)) / 1e3
            if cost * (args.reps + 1) * args.rounds > deadline.budget(
                    args.budget):
                raise Skipped(f"skipped: {args.rounds} rounds of "
                              f"{args.reps} calls past the budget")
            ready[impl] = (fwd, bwd)
        except Exception as e:  # recorded, never a crash
            rows[impl]["status"] = common.failure(e)
    times = {(impl, phase): [] for impl in ready for phase in ("fwd", "bwd")}
    if ready:
        first_fwd, _ = next(iter(ready.values()))
        common.settle_clocks(first_fwd, common.WARMUP_SECONDS)
    order = list(ready)
    for r in range(args.rounds):
        for impl in order[r % len(order):] + order[:r % len(order)]:
            for phase, fn in zip(("fwd", "bwd"), ready[impl]):
                fn()
                times[(impl, phase)] += [common.cuda_ms(fn)
                                         for _ in range(args.reps)]
    for impl in ready:
        for phase in ("fwd", "bwd"):
            put_time(rows[impl], phase, common.median(times[(impl, phase)]),
                     cfg)
        rows[impl]["status"] = "ok"
    if "fa" in rows:
        rows["fa"]["fa_config"] = fa_config_of(logged)
    ready = times = None
    common.free_cuda()
    for impl in impls:
        write_row(out, rows[impl])


def write_row(out, row):
    out.write(row)
    print(f"{row['impl']:12s} {row['variant']:20s} D={row['d']:3d} "
          f"S={row['s']:5d} fwd {row.get('fwd_tflops', '-'):>6} bwd "
          f"{row.get('bwd_tflops', '-'):>6} TFLOP/s  peak "
          f"{row.get('fwd_peak_mib', '-')}/{row.get('bwd_peak_mib', '-')} MiB"
          f"  {row['status']} {row.get('fa_config', '')}", flush=True)


def bench_tuned_vs_default(cfg, args, fa, deadline, gpu, out, tuned_as):
    """Rows fa-tuned and fa-default: fa.attention with FA_AUTOTUNE on and
    off (fa keeps a program per setting), forward and backward on the same
    inputs, timed in --rounds alternating rounds of --reps calls each, so
    that the comparison does not depend on when each ran. `tuned_as` is
    the autotuner's choice when an earlier row made it."""
    modes = {"fa-tuned": "1", "fa-default": "0"}
    rows = {impl: base_row(impl, cfg, gpu) for impl in modes}
    logged = []
    try:
        deadline.check()
        attend = fa_attend(fa, cfg)
        q, k, v, sinks = inputs(cfg)
        grads_of = differentiable(q, k, v, sinks)
        times = {(impl, phase): [] for impl in modes for phase in "fb"}
        grads = {}
        with captured_stderr(logged):
            # The first calls compile and (FA_AUTOTUNE=1) tune.
            for impl, flag in modes.items():
                with common.env("FA_AUTOTUNE", flag):
                    o = attend(q, k, v, sinks)
                    do = torch.randn_like(o)
                    grads[impl] = (lambda o=o, do=do: torch.autograd.grad(
                        o, grads_of, do, retain_graph=True))
                    grads[impl]()
        for _ in range(args.rounds):
            for impl, flag in modes.items():
                with common.env("FA_AUTOTUNE", flag):
                    for phase, fn in (("f", lambda: attend(q, k, v, sinks)),
                                      ("b", grads[impl])):
                        fn()  # this mode's kernels warm again
                        times[(impl, phase)] += [common.cuda_ms(fn)
                                                 for _ in range(args.reps)]
        for impl, row in rows.items():
            for phase, key in (("f", "fwd"), ("b", "bwd")):
                put_time(row, key, common.median(times[(impl, phase)]), cfg)
            row["status"] = "ok"
    except Exception as e:  # recorded, never a crash
        for row in rows.values():
            row["status"] = common.failure(e)
    rows["fa-tuned"]["fa_config"] = (tuned_as or tuned_config(logged) or
                                     NO_CHOICE)
    rows["fa-default"]["fa_config"] = DEFAULT_CONFIG
    q = k = v = sinks = grads_of = attend = grads = None
    common.free_cuda()
    for row in rows.values():
        write_row(out, row)


def main():
    # fa's rows are autotuned on their own shapes, as before the shipped
    # table became fa's default; a caller's FA_AUTOTUNE is kept (0: the
    # compiler's default; any value but 0 and 1, "table" say: the table).
    os.environ.setdefault("FA_AUTOTUNE", "1")
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated: " + ", ".join(VARIANTS))
    parser.add_argument("--only", choices=("dense", "variants"),
                        help="dense: full and causal; variants: the rest")
    parser.add_argument("--impls", default=",".join(i for i in IMPLS if i != "fa4"),
                        help="comma-separated: " + ", ".join(IMPLS))
    parser.add_argument("--no-flex", action="store_true",
                        help="leave FlexAttention out (its compiles take "
                             "tens of seconds per shape)")
    parser.add_argument("--queue", type=int, default=1,
                        help="calls timed back to back per sample (1: each "
                             "alone, host time before the launch counted)")
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--seqs", default="1024,2048,4096,8192,16384")
    parser.add_argument("--fa-default-seqs", default="16384",
                        help="where fa-default runs beside fa")
    common.add_measurement_args(
        parser, warmup=3, reps=10, budget=30.0,
        measurement="one forward or one backward of one row",
        time_limit="rows not started by then are recorded as skipped",
        warmup_seconds=0.6)
    parser.add_argument("--rounds", type=int, default=4,
                        help="alternating rounds of fa-tuned and "
                             "fa-default, and of --alternate's rows")
    parser.add_argument("--alternate", action="store_true",
                        help="time each shape's implementations in "
                             "--rounds alternating rounds, not one after "
                             "another (bench_alternating)")
    parser.add_argument("--plot-dir",
                        help="PNGs of the CSV (default: the CSV's path "
                             "without .csv, plus -plots)")
    args = parser.parse_args()
    if args.queue < 1:
        parser.error(f"--queue must be >= 1, got {args.queue}")
    common.QUEUED_CALLS = args.queue
    common.WARMUP_SECONDS = args.warmup_seconds
    variants = args.variants.split(",")
    if args.only == "dense":
        variants = [v for v in variants if v in DENSE]
    elif args.only == "variants":
        variants = [v for v in variants if v not in DENSE]
    impls = [i for i in args.impls.split(",")
             if not (args.no_flex and i == "flex")]
    for name, chosen, known in (("variant", variants, VARIANTS),
                                ("impl", impls, IMPLS)):
        unknown = set(chosen) - set(known)
        if unknown:
            parser.error(f"unknown {name} {', '.join(sorted(unknown))}")
    if not torch.cuda.is_available():
        sys.exit("bench_gpu.py needs a CUDA GPU")
    fa = common.import_fa() if {"fa", "fa-default"} & set(impls) else None
    common.set_recompile_limit(1024)
    gpu = torch.cuda.get_device_name()
    deadline = common.Deadline(args.time_limit)
    predictor = common.Predictor()
    out = common.CsvOut(args.csv, FIELDS)
    grid = list(configs(variants, common.int_list(args.head_dims),
                        common.int_list(args.seqs)))
    default_seqs = set(common.int_list(args.fa_default_seqs))

    chosen = {}
    # Under main()'s FA_AUTOTUNE: a caller's "table" times the shipped
    # table's configs.
    for cfg in grid:
        if args.alternate:
            bench_alternating(cfg, [i for i in impls if i != "fa-default" and
                                    expresses(i, cfg)],
                              args, fa, deadline, gpu, out)
            continue
        for impl in impls:
            if impl != "fa-default" and expresses(impl, cfg):
                row = bench_row(impl, cfg, args, fa, deadline, predictor,
                                gpu, out)
                if (impl == "fa" and autotuning() and
                        row.get("fa_config") != NO_CHOICE):
                    chosen[id(cfg)] = row["fa_config"]
    # After the sweep, so that fa's rows there show the tuning it did.
    if "fa-default" in impls:
        for cfg in grid:
            if cfg["s"] in default_seqs:
                bench_tuned_vs_default(cfg, args, fa, deadline, gpu, out,
                                       chosen.get(id(cfg)))
    out.close()
    common.plot_hint([args.csv], args.plot_dir or
                     os.path.splitext(args.csv)[0] + "-plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
