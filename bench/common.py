"""Helpers shared by the benchmarks in bench/: CUDA-event timing within a
time budget, peak and saved memory, FLOP counts, failures as CSV statuses.

Memory conventions (every table):
- peak MiB: torch.cuda.max_memory_allocated() during the call minus what was
  allocated just before it, so the inputs (and, for a backward, everything
  the forward left alive) are not counted; for fa plus fa's own peak device
  workspace (fa.workspace_peak_bytes(), where the package has it), which
  comes from the CUDA driver's pool and not from torch's allocator. The two
  peaks are added, so fa's figure is an upper bound when they do not
  coincide.
- saved activations MiB: the distinct storages autograd keeps for backward
  (torch.autograd.graph.saved_tensors_hooks), inputs included.
"""
import contextlib
import csv
import gc
import importlib.util
import math
import os
import sys
import time

import torch

MIB = 1 << 20


def visible_pairs(sq, sk, causal, window=None, sink_tokens=0):
    """(query, key) pairs the mask lets through, summed over query rows;
    causal is bottom-right aligned like fa's (key j visible to query i when
    j <= i + sk - sq)."""
    if not causal:
        return sq * sk
    offset, total = sk - sq, 0
    for i in range(sq):
        hi = min(max(i + offset + 1, 0), sk)
        lo = 0 if window is None else min(max(i + offset - window + 1, 0), hi)
        total += hi - lo + min(sink_tokens, lo)
    return total


def attention_flops(b, hq, s, d, causal=False, window=None, sink_tokens=0):
    """Forward FLOPs: QK^T and PV, 2 * D each per visible pair and head.
    The backward does 2.5x this (five matmuls of the same size instead of
    two)."""
    return 4.0 * b * hq * d * visible_pairs(s, s, causal, window, sink_tokens)


BACKWARD_FLOP_RATIO = 2.5


def import_fa():
    """The fa package, or SystemExit saying how to make it importable."""
    try:
        import fa
    except ImportError as e:
        sys.exit(f"cannot import fa ({e}): put the built package on "
                 "PYTHONPATH (build/python here, /tmp/fa-python on the GPU "
                 "machine after scripts/gpu-run.sh built it)")
    return fa


def peak_mib(fn, fa=None):
    """(fn(), peak MiB of the call above what was allocated before it);
    with `fa` given, fa's peak workspace is added (see the module
    comment)."""
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    if fa is not None:
        fa.reset_workspace_peak()
    result = fn()
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - base
    if fa is not None:
        extra += fa.workspace_peak_bytes()
    return result, extra / MIB


def saved_tensors_mib(fn):
    """(fn(), MiB of the distinct storages autograd saved during the call).

    Returns None for the size when no saved tensor was seen (a compiled
    graph that hides them), so that callers can fall back on allocation
    deltas."""
    storages = {}

    def pack(t):
        s = t.untyped_storage()
        storages[(s.data_ptr(), t.device)] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn()
    total = sum(storages.values())
    return result, (total / MIB if storages else None)


# Calls timed back to back per sample by cuda_ms. 1: each call alone, so
# the host time before its first launch counts; more: the kernels' rate with
# the host running ahead of the GPU, as in a model's step.
QUEUED_CALLS = 1

# Seconds of calls measure() makes before it times any (--warmup-seconds),
# on top of its --warmup calls. A GPU that was idle (a compile, a first
# call, the previous row's setup) runs its first ~0.5 s of load below its
# clock: the H200 lent here dipped to 1665-1755 MHz at every start of load,
# its power-cap flag set, and took 0.3-0.5 s back to 1980 MHz, where it
# then stayed (bench/NOTES.md, fifty-fifth session). Timed calls inside
# that dip ran 9% slower than the same calls after it, so whichever
# implementation came first after an idle spell was timed slow.
WARMUP_SECONDS = 0.0


def cuda_ms(fn, calls=None):
    """fn's GPU time in ms, between CUDA events recorded around `calls`
    calls of it (default QUEUED_CALLS), per call."""
    calls = QUEUED_CALLS if calls is None else calls
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


class Skipped(Exception):
    """A measurement not taken on purpose (budget, predicted OOM)."""


class Predictor:
    """Predicts a call's seconds from the last two measured sizes of the
    same key: time ~ work^a, with `a` fitted between the two points and
    clamped to [0.5, 1] (below 1 while the GPU is not yet full, as with
    fa's scalar f32 path at small sizes)."""

    def __init__(self):
        self.points = {}

    def add(self, key, work, seconds):
        if work > 0 and seconds > 0:
            self.points[key] = (self.points.get(key, [])[-1:] +
                                [(work, seconds)])

    def predict(self, key, work):
        points = self.points.get(key)
        if not points:
            return None
        w1, t1 = points[-1]
        exponent = 1.0
        if len(points) == 2 and points[0][0] != w1:
            w0, t0 = points[0]
            exponent = math.log(t1 / t0) / math.log(w1 / w0)
            exponent = min(max(exponent, 0.5), 1.0)
        return t1 * (work / w1) ** exponent


def measure(fn, warmup, reps, budget, predicted=None, settle=None):
    """Times fn with CUDA events: one untimed call (JIT, compile, caches;
    then `settle()` where given: fa's background compiles, which the
    first call starts, finish before the timing), then warm-up (`warmup`
    calls, then calls for WARMUP_SECONDS), then `reps` timed calls;
    returns (list of ms, note).

    Stays within `budget` seconds after the first call: Skipped when
    `predicted` (seconds per call) says that two calls do not fit; when the
    first timed call shows that the full count does not fit, keeps the calls
    that do (the note says how many)."""
    if predicted is not None and 2 * predicted > budget:
        raise Skipped(f"skipped: predicted {2 * predicted:.0f} s > budget "
                      f"{budget:.0f} s")
    # The budget counts from the second call: the first may compile (fa's
    # JIT, torch.compile), which is not what the budget is about.
    fn()
    if settle is not None:
        settle()
    torch.cuda.synchronize()
    start = time.perf_counter()
    first = cuda_ms(fn)
    left = budget - (time.perf_counter() - start)
    fits = int(left * 1e3 / first) if first > 0 else warmup + reps
    if fits >= warmup + reps:
        for _ in range(max(warmup - 1, 0)):
            fn()
        settle_clocks(fn, min(WARMUP_SECONDS,
                              left - (warmup + reps) * first / 1e3))
        return [cuda_ms(fn) for _ in range(reps)], ""
    # The two calls above warmed up; spend what is left on timed calls.
    n = max(min(fits, reps), 1)
    times = [first] + [cuda_ms(fn) for _ in range(n - 1)]
    return times, ("" if n == reps else
                   f"{n} of {reps} reps (budget {budget:.0f} s)")


def settle_clocks(fn, seconds):
    """Times fn by cuda_ms, untimed, until `seconds` have passed
    (WARMUP_SECONDS says why)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        cuda_ms(fn)


def int_list(text):
    """"64,128" -> [64, 128] (a command-line list)."""
    return [int(x) for x in text.split(",") if x]


def add_measurement_args(parser, warmup, reps, budget, measurement,
                         time_limit, warmup_seconds=0.0):
    """--warmup, --reps, --budget (seconds per `measurement`) and
    --time-limit (seconds for the whole run; `time_limit` says what it
    does to the rest), the options every timed benchmark shares."""
    parser.add_argument("--warmup", type=int, default=warmup)
    parser.add_argument("--warmup-seconds", type=float,
                        default=warmup_seconds,
                        help="seconds of untimed calls before each "
                             "measurement's timed ones, so that the GPU's "
                             "clock has settled (common.WARMUP_SECONDS)")
    parser.add_argument("--reps", type=int, default=reps)
    parser.add_argument("--budget", type=float, default=budget,
                        help=f"seconds per measurement ({measurement})")
    parser.add_argument("--time-limit", type=float,
                        help=f"seconds for the whole run; {time_limit}")


def set_recompile_limit(n):
    """Lets torch.compile keep a graph per benchmarked shape (the default
    limit of 8 falls back to eager without a word)."""
    config = torch._dynamo.config
    name = "recompile_limit" if hasattr(config, "recompile_limit") \
        else "cache_size_limit"
    setattr(config, name, max(getattr(config, name), n))


def forward_backward(fwd, inputs, *, warmup, reps, budget, predictor, key,
                     flops, fa=None):
    """Times fwd() and the backward of its output (torch.autograd.grad with
    a random dO, graph retained), and takes the peak memory of each.

    budget() gives the seconds each measurement may use (see measure());
    predictor, under (key, "fwd"/"bwd") with `flops` as the work, skips
    what will not fit. Returns a dict: fwd_ms and bwd_ms (medians),
    fwd_peak and bwd_peak (MiB, see peak_mib; fa's workspace added when
    `fa` is given), failure (None, "OOM", "OOM(backward)", "skipped...",
    "error: ...") and notes (reps cut by the budget)."""
    r = dict(fwd_ms=None, bwd_ms=None, fwd_peak=None, bwd_peak=None,
             failure=None, notes=[])
    phase = "forward"
    try:
        # A forward whose inputs need gradients starts fa's backward compile
        # in the background: done before the forward is timed, as in a
        # model's steps after its first.
        settle = getattr(fa, "wait_for_compiles", None)
        times, note = measure(fwd, warmup, reps, budget(),
                              predictor.predict((key, "fwd"), flops), settle)
        r["notes"].append(note and "forward " + note)
        r["fwd_ms"] = median(times)
        predictor.add((key, "fwd"), flops, r["fwd_ms"] / 1e3)
        out, r["fwd_peak"] = peak_mib(fwd, fa)

        phase = "backward"
        dout = torch.randn_like(out)
        grad = lambda: torch.autograd.grad(out, inputs, dout,
                                           retain_graph=True)
        predicted = predictor.predict((key, "bwd"), flops)
        if predicted is None:
            predicted = BACKWARD_FLOP_RATIO * r["fwd_ms"] / 1e3
        times, note = measure(grad, warmup, reps, budget(), predicted)
        r["notes"].append(note and "backward " + note)
        r["bwd_ms"] = median(times)
        predictor.add((key, "bwd"), flops, r["bwd_ms"] / 1e3)
        _, r["bwd_peak"] = peak_mib(grad, fa)
    except Exception as e:  # recorded, never a crash
        r["failure"] = failure(e, phase)
    return r


def failure(e, phase=None):
    """An exception as a status: skipped..., OOM, OOM(backward) (the
    homework's spelling) or error: ...; `phase` is "forward" or "backward"
    where one was running."""
    backward = phase == "backward"
    if isinstance(e, Skipped):
        return str(e).replace("skipped", "skipped(backward)", 1) \
            if backward else str(e)
    if is_oom(e):
        return "OOM(backward)" if backward else "OOM"
    return f"error: {phase + ': ' if phase else ''}{short_error(e)}"


def status(result):
    """A forward_backward result's status: its failure or "ok" first (the
    homework's values: ok, OOM, OOM(backward)), then what the budget cut."""
    return "; ".join([result["failure"] or "ok"] +
                     [n for n in result["notes"] if n])


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def mean_std(xs):
    """Mean and sample standard deviation (None for a single value)."""
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, None
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def is_oom(e):
    return isinstance(e, torch.cuda.OutOfMemoryError) or \
        "out of memory" in str(e).lower()


def short_error(e, limit=160):
    """An exception as a one-line CSV status."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text[:limit]


def free_cuda():
    """Returns what a failed or finished measurement left to the allocator
    (an OOM leaves its frames' tensors reachable until collected)."""
    gc.collect()
    torch.cuda.empty_cache()


class Deadline:
    """The benchmark's wall-clock limit: rows not started before it are
    recorded as skipped, so a device call's time limit never cuts a run
    without a trace."""

    def __init__(self, seconds):
        self.end = None if seconds is None else time.monotonic() + seconds

    def left(self):
        return math.inf if self.end is None else self.end - time.monotonic()

    def budget(self, per_config):
        """Seconds a config may use: its budget, or what is left."""
        return max(min(per_config, self.left()), 0.0)

    def check(self):
        if self.left() <= 0:
            raise Skipped("skipped: time limit")


class CsvOut:
    """Rows written as they come, flushed: a timeout keeps what was
    measured. Values of None are written empty (pandas reads them as NA)."""

    def __init__(self, path, fields):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=fields)
        self.writer.writeheader()
        self.file.flush()

    def write(self, row):
        self.writer.writerow({k: "" if v is None else v
                              for k, v in row.items()})
        self.file.flush()

    def close(self):
        self.file.close()


def row_impl(impl):
    """A CSV row's name for `impl`: fa's rows say when FA_BRANCHED_TILES=1
    made every program of the run take branched tiles, so that the two
    kernel forms' runs stay apart (bench/README.md)."""
    if impl.startswith("fa") and os.environ.get("FA_BRANCHED_TILES") == "1":
        return impl + "+branched"
    return impl


@contextlib.contextmanager
def env(name, value):
    """Sets an environment variable for the native code that reads it
    (os.environ writes through putenv) and restores it afterwards."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def causal_keep(i, j, window=None, sink_tokens=0):
    """Whether key j is visible to query i under fa's causal masks (Sq ==
    Sk): j <= i, within the `window` keys ending at i, or among the first
    `sink_tokens` keys. i and j are tensors (broadcast, or FlexAttention's
    mask_mod indices)."""
    keep = j <= i
    if window is not None:
        near = i - j < window
        if sink_tokens:
            near = near | (j < sink_tokens)
        keep = keep & near
    return keep


def eager_attention(q, k, v, causal=False, window=None, sink_tokens=0,
                    sinks=None):
    """Attention the textbook way, every score materialized: q [B, Hq, S, D],
    k and v [B, Hkv, S, D]; scores and softmax in float32, matmuls in the
    inputs' type; learnable `sinks` [Hq] (float32) join each row's softmax
    as an extra logit, as in gpt-oss's eager reference."""
    b, hq, s, d = q.shape
    hkv = k.shape[1]
    group = hq // hkv
    # Query heads grouped under their kv head: broadcasting shares K and V
    # (query head h reads kv head h // group, as in fa and repeat_kv).
    qg = q.view(b, hkv, group, s, d)
    scores = torch.matmul(qg, k.unsqueeze(2).transpose(-1, -2)).float()
    scores = scores * (1.0 / math.sqrt(d))
    if causal:
        idx = torch.arange(s, device=q.device)
        keep = causal_keep(idx[:, None], idx[None, :], window, sink_tokens)
        scores = scores.masked_fill(~keep, float("-inf"))
    if sinks is not None:
        column = sinks.view(1, hkv, group, 1, 1).expand(b, hkv, group, s, 1)
        scores = torch.cat([scores, column], dim=-1)
    probs = torch.softmax(scores, dim=-1)
    if sinks is not None:
        probs = probs[..., :-1]
    out = torch.matmul(probs.to(q.dtype), v.unsqueeze(2))
    return out.view(b, hq, s, d)


def eager_peak_bytes(b, hq, s):
    """What eager_attention's forward and backward hold at once, roughly
    and on the high side: 20 bytes per score (the saved float32 softmax and
    bf16 probabilities, plus float32 gradients of the softmax, the mask and
    the scaling alive during the backward)."""
    return 20 * b * hq * s * (s + 1)


def print_table(rows, fields):
    """The rows as an aligned text table (the homework's summary)."""
    cells = [[("" if r.get(f) is None else str(r.get(f))) for f in fields]
             for r in rows]
    widths = [max([len(f)] + [len(c[i]) for c in cells])
              for i, f in enumerate(fields)]
    print("  ".join(f.rjust(w) for f, w in zip(fields, widths)))
    for c in cells:
        print("  ".join(x.rjust(w) for x, w in zip(c, widths)))


def plot_hint(csv_paths, out_dir):
    """Draws the PNGs when matplotlib is here, else says how to; never
    fails the run, whose CSVs are written by then."""
    hint = (f"python3 bench/plot.py {' '.join(csv_paths)} --out {out_dir}")
    if importlib.util.find_spec("matplotlib") is None:
        print(f"matplotlib is not installed here; make the PNGs anywhere "
              f"with: {hint}")
        return
    try:
        import plot
        plot.main(list(csv_paths) + ["--out", out_dir])
    except Exception as e:
        print(f"plotting failed ({short_error(e)}); try: {hint}")
