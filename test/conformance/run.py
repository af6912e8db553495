#!/usr/bin/env python3
"""CPU conformance suite: every variant through the real lowering pipeline.

For each variant (mask, window, sink tokens, learnable sinks, scale) and
element type, writes a spec with dynamic sizes, runs `fa-run --check
--backward` over a grid of shapes (Sq, Sk in {1, 7, 64, 197, 300}, Sq != Sk
included; D in {16, 64, 96, 128}; GQA ratios 1, 4, 8), then runs every spec
in kernels_spec/, a finite-difference gradient check in f64 on small shapes,
and a second tile configuration. With --target gpu it also runs every variant
in bf16 and f16 at head dims 64 and 128 (the tensor-core kernels; other
head dims with --gpu-head-dims). Prints the worst relative error per dtype
and fails if any run fails. --variants NAME[,NAME] runs only those variants'
grids (no named specs, no second configuration): a focused check that fits
one GPU call.

usage: run.py FA_RUN SPECS_DIR WORK_DIR [--target cpu|gpu] [--jobs N]
              [--variants NAME,...] [--gpu-head-dims D,...]
              [--tensor-cores-only]
"""
import argparse
import collections
import concurrent.futures
import importlib.util
import os
import re
import subprocess
import sys

# The Python package's spec writer, loaded by path (no built module needed).
_SPEC_PY = os.path.join(os.path.dirname(__file__), "..", "..", "python", "fa",
                        "spec.py")
_loader = importlib.util.spec_from_file_location("fa_spec", _SPEC_PY)
spec = importlib.util.module_from_spec(_loader)
_loader.loader.exec_module(spec)

SEQ_PAIRS = [(1, 1), (7, 7), (64, 64), (197, 197), (300, 300), (1, 300),
             (7, 197), (64, 300), (300, 7), (197, 64), (300, 1)]
HEAD_DIMS = [16, 64, 96, 128]
HEADS = [(2, 2), (4, 1), (8, 1)]  # GQA ratios 1, 4, 8

# (name, variant, learnable sinks)
VARIANTS = [
    ("full", dict(), False),
    ("causal", dict(causal=True), False),
    ("window1", dict(causal=True, window=1), False),
    ("window16", dict(causal=True, window=16), False),
    ("window_wide", dict(causal=True, window=1000), False),
    ("window16_sink1", dict(causal=True, window=16, sink_tokens=1), False),
    ("window16_sink4", dict(causal=True, window=16, sink_tokens=4), False),
    # More sink tokens than one 16-key group: the wgmma kernels' narrow
    # sink tile is two k steps wide (sinkTileWidth).
    ("window16_sink20", dict(causal=True, window=16, sink_tokens=20), False),
    ("full_sinks", dict(), True),
    ("causal_sinks", dict(causal=True), True),
    ("gpt_oss_like", dict(causal=True, window=16, sink_tokens=4), True),
    ("causal_scale", dict(causal=True, scale=0.3), False),
]
LOW_PRECISION_VARIANTS = {"causal", "window16_sink4", "window16_sink20",
                          "gpt_oss_like", "full_sinks"}


def spec_text(name, variant, sinks):
    return spec.attention_spec(name, "f32", sinks, **variant)


def shape_arg(shapes):
    """fa-run's --shape value for a list of shapes."""
    return ";".join(",".join(map(str, s)) for s in shapes)


def grid(offset):
    shapes = []
    for n, (sq, sk) in enumerate(SEQ_PAIRS):
        hq, hkv = HEADS[(n + offset) % len(HEADS)]
        d = HEAD_DIMS[(n + offset) % len(HEAD_DIMS)]
        batch = 1 + (n + offset) % 2
        shapes.append((batch, hq, hkv, sq, sk, d))
    return shapes


class Suite:
    """Runs fa-run invocations `jobs` at a time; their output is printed
    and checked in the order they were asked for."""

    def __init__(self, fa_run, work, target, jobs):
        self.fa_run, self.work, self.target = fa_run, work, target
        self.pool = concurrent.futures.ThreadPoolExecutor(jobs)
        self.pending = []
        self.worst = collections.defaultdict(float)
        self.failures, self.runs, self.cases = [], 0, 0

    def run(self, spec, args):
        cmd = [self.fa_run, spec, "--check", "--target", self.target] + args
        self.pending.append((cmd, self.pool.submit(
            subprocess.run, cmd, capture_output=True, text=True)))
        while self.pending and self.pending[0][1].done():
            self.record(*self.pending.pop(0))

    def finish(self):
        for cmd, future in self.pending:
            self.record(cmd, future)
        self.pending.clear()
        self.pool.shutdown()

    def record(self, cmd, future):
        proc = future.result()
        self.runs += 1
        sys.stdout.write(proc.stdout)
        sys.stdout.flush()
        for line in proc.stdout.splitlines():
            self.cases += 1
            dtype = re.search(r"dtype=(\w+)", line).group(1)
            for key, value in re.findall(r" (\w+)=([-+.\w]+)", line):
                if key in ("shape", "dtype", "target") or value.endswith("ms") \
                    or key.endswith("_tflops"):
                    continue
                err = float(value.replace("(FAIL)", ""))
                slot = "f64-gradcheck" if key.startswith("fd_") else dtype
                self.worst[slot] = max(self.worst[slot], err)
        if proc.returncode != 0:
            self.failures.append(" ".join(cmd) + "\n" + proc.stderr)

    def write(self, name, text):
        path = os.path.join(self.work, name + ".mlir")
        with open(path, "w") as f:
            f.write(text)
        return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("fa_run")
    parser.add_argument("specs")
    parser.add_argument("work")
    parser.add_argument("--target", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="fa-run invocations at a time")
    parser.add_argument("--variants",
                        help="comma-separated variant names: only their grids")
    parser.add_argument("--tensor-cores-only", action="store_true",
                        help="--target gpu: only the bf16/f16 shapes (the "
                             "tensor-core kernels), no f32/f64 grids or "
                             "finite differences")
    parser.add_argument("--gpu-head-dims", default="64,128",
                        help="head dims of the GPU's bf16/f16 shapes, taken "
                             "in turn (default 64,128)")
    args = parser.parse_args()
    gpu_dims = [int(d) for d in args.gpu_head_dims.split(",")]
    names = [name for name, _, _ in VARIANTS]
    only = args.variants.split(",") if args.variants else names
    unknown = sorted(set(only) - set(names))
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; "
                     f"known: {', '.join(names)}")
    fa_run, specs, work, target = args.fa_run, args.specs, args.work, \
        args.target
    if args.tensor_cores_only and (target != "gpu" or not args.variants):
        parser.error("--tensor-cores-only needs --target gpu and --variants")
    os.makedirs(work, exist_ok=True)
    suite = Suite(fa_run, work, target, max(1, args.jobs))
    # Each variant keeps its offset in VARIANTS: its seeds and heads.
    chosen = [(offset, entry) for offset, entry in enumerate(VARIANTS)
              if entry[0] in only]
    paths = {}
    for offset, (name, variant, sinks) in chosen:
        dtypes = ["f32", "f64"]
        if name in LOW_PRECISION_VARIANTS:
            dtypes += ["bf16", "f16"]
        path = paths[name] = suite.write(name, spec_text(name, variant, sinks))
        if args.tensor_cores_only:
            continue
        for i, dtype in enumerate(dtypes):
            suite.run(path, ["--dtype", dtype, "--backward", "--shape",
                             shape_arg(grid(offset + i)),
                             "--seed", str(offset * 10 + i)])
        # Finite differences in f64 on small shapes.
        suite.run(path, ["--dtype", "f64", "--gradcheck", "--shape",
                         "1,2,1,7,9,16;1,4,2,13,13,16;1,2,2,20,5,16"])
    # On the GPU, f16/bf16 at D 64 and 128 (--gpu-head-dims) run the
    # tensor-core kernels:
    # every variant, with sequence lengths that give full interior tiles,
    # partial last tiles and Sq != Sk both ways.
    if target == "gpu":
        for offset, (name, _, _) in chosen:
            hq, hkv = HEADS[offset % len(HEADS)]
            sizes = [(1, 200, 200), (2, 130, 333), (1, 333, 130),
                     (1, 257, 257)]
            shapes = [(b, hq, hkv, sq, sk, gpu_dims[i % len(gpu_dims)])
                      for i, (b, sq, sk) in enumerate(sizes)]
            for i, dtype in enumerate(("bf16", "f16")):
                suite.run(paths[name], ["--dtype", dtype, "--backward",
                                        "--shape", shape_arg(shapes),
                                        "--seed", str(100 + offset * 10 + i)])
    if args.variants:
        return finish(suite)
    # A second tile configuration moves every phase boundary (small on the
    # GPU, whose first path keeps a thread's tile scratch on its stack).
    block_m, block_n = ("2", "3") if target == "gpu" else ("8", "8")
    for name in ("window16_sink4", "gpt_oss_like"):
        suite.run(paths[name], ["--dtype", "f32", "--backward", "--block-m",
                                block_m, "--block-n", block_n, "--shape",
                                shape_arg(grid(3))])
    # Every named spec, with the sizes it leaves dynamic filled by fa-run.
    for spec in sorted(os.listdir(specs)):
        path = os.path.join(specs, spec)
        for dtype in ("f32", "bf16"):
            suite.run(path, ["--dtype", dtype, "--backward"])
    suite.run(os.path.join(specs, "vit.mlir"),
              ["--dtype", "f32", "--backward", "--shape", "2,3,3,197,197,64"])
    suite.run(os.path.join(specs, "softmax_matmul.mlir"),
              ["--dtype", "f32", "--shape", "2,64,8192,32;1,7,300,5"])
    return finish(suite)


def finish(suite):
    """Waits for the suite's runs; prints its summary; the exit status."""
    suite.finish()
    print(f"\n{suite.cases} cases in {suite.runs} fa-run invocations")
    for slot in sorted(suite.worst):
        print(f"worst relative error {slot}: {suite.worst[slot]:.2e}")
    for failure in suite.failures:
        print("FAILED:", failure)
    return 1 if suite.failures else 0


if __name__ == "__main__":
    sys.exit(main())
