#!/usr/bin/env python3
"""Issue 13's forward bars and issue 14's backward bars, read from
bench_gpu.py CSVs of one run: for each row of fa that a bar names, the
ratio to its peer at the same variant, head dim and S, and whether the bar
is met. Rows a CSV lacks (peer not run, shape skipped) are left out.

  usage: bars.py CSV [CSV ...]

The bars (the issues' tables, bf16, B*S = 16k):
  full, causal D 128 (S >= 4k)       fwd >= 0.95x, bwd >= 1.05x sdpa-cudnn
  full, causal, gqa-causal D 64      fwd and bwd >= 1.0x sdpa-cudnn
  gqa-causal D 128                   fwd >= 1.0x sdpa-cudnn
  window-4096, window-1024+4-sinks,
  gpt-oss-full                       fwd >= 1.4x, bwd >= 1.15x flex
  gpt-oss-window-128                 fwd >= 1.5x, bwd >= 1.5x flex
  D 80, 96, 256 (full, causal)       >= 0.85x fa's own D 128 rate, and
                                     >= 1.0x the best SDPA backend
"""
import csv
import sys

SDPA = ("sdpa-cudnn", "sdpa-flash2")
FLEX_VARIANTS = {"window-4096": (1.4, 1.15), "window-1024+4-sinks": (1.4, 1.15),
                 "gpt-oss-full": (1.4, 1.15), "gpt-oss-window-128": (1.5, 1.5)}


def load(paths):
    """{(impl, variant, d, s): row} over the CSVs' rows that ran."""
    rows = {}
    for path in paths:
        with open(path) as f:
            for row in csv.DictReader(f):
                if row.get("status") == "ok":
                    key = (row["impl"], row["variant"], int(row["d"]),
                           int(row["s"]))
                    rows[key] = row
    return rows


def rate(row, phase):
    value = row.get(f"{phase}_tflops") if row else None
    return float(value) if value else None


def bars(rows):
    """(variant, d, s, phase, peer, ratio, bar) of every bar the rows
    reach."""
    found = []

    def check(variant, d, s, phase, peer_name, peer_rate, bar):
        ours = rate(rows.get(("fa", variant, d, s)), phase)
        if ours is not None and peer_rate:
            found.append((variant, d, s, phase, peer_name, ours / peer_rate,
                          bar))

    for (impl, variant, d, s) in sorted(rows):
        if impl != "fa":
            continue
        cudnn = rows.get(("sdpa-cudnn", variant, d, s))
        flex = rows.get(("flex", variant, d, s))
        for phase in ("fwd", "bwd"):
            if variant in ("full", "causal") and d == 128 and s >= 4096:
                check(variant, d, s, phase, "sdpa-cudnn", rate(cudnn, phase),
                      0.95 if phase == "fwd" else 1.05)
            if (variant in ("full", "causal", "gqa-causal") and d == 64) or \
                    (variant == "gqa-causal" and d == 128 and phase == "fwd"):
                check(variant, d, s, phase, "sdpa-cudnn", rate(cudnn, phase),
                      1.0)
            if variant in FLEX_VARIANTS:
                check(variant, d, s, phase, "flex", rate(flex, phase),
                      FLEX_VARIANTS[variant][phase == "bwd"])
            if variant in ("full", "causal") and d in (80, 96, 256):
                own = rows.get(("fa", variant, 128, s))
                check(variant, d, s, phase, "fa D 128", rate(own, phase),
                      0.85)
                best = max((rate(rows.get((p, variant, d, s)), phase) or 0
                            for p in SDPA), default=0)
                check(variant, d, s, phase, "best SDPA", best, 1.0)
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    found = bars(load(sys.argv[1:]))
    print("| case | phase | against | fa / peer | bar |")
    print("|---|---|---|---|---|")
    for variant, d, s, phase, peer, ratio, bar in found:
        verdict = "met" if ratio >= bar else "not met"
        print(f"| {variant} D {d}, S {s} | {phase} | {peer} | {ratio:.2f} | "
              f"{bar}: {verdict} |")
    met = sum(ratio >= bar for *_, ratio, bar in found)
    print(f"\n{met} of {len(found)} bars met")


if __name__ == "__main__":
    main()
