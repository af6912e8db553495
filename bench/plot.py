#!/usr/bin/env python3
"""PNGs of the benchmarks' CSVs (needs matplotlib; runs anywhere).

usage: plot.py CSV... --out DIR

- bench_gpu.py CSVs (columns impl, variant, d, s, fwd_tflops, bwd_tflops
  and, in newer runs, fwd_peak_mib, bwd_peak_mib): one PNG per
  variant, TFLOP/s against S forward and backward (and peak MiB where the
  CSVs have it), a line per implementation, solid for D 128 and dashed for
  D 64. Several CSVs merge; a row measured again in a later CSV replaces the
  earlier one.
- bench_homework.py's softmax_matmul_benchmark.csv (time and peak memory
  against d2) and attention_benchmark.csv (forward and backward time and
  peak memory against seq_len).
Rows without a measurement (failed, skipped) are left out of the lines.
"""
import argparse
import csv
import os
import sys

COLORS = {"fa": "tab:red", "fa-tuned": "tab:pink",
          "fa-default": "tab:orange",
          "pytorch_sdpa": "tab:blue", "pytorch_eager": "tab:gray",
          "PyTorch softmax(x) @ V": "tab:blue",
          "sdpa-flash2": "tab:blue", "sdpa-cudnn": "tab:green",
          "flex": "tab:purple", "flex-attention": "tab:purple",
          "eager": "tab:gray"}


def color(label):
    return dict(color=COLORS.get(label))


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def read(paths):
    """Rows per CSV kind: "variants", "softmax" or "attention"."""
    kinds = {"variants": {}, "softmax": {}, "attention": {}}
    for path in paths:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames or []
            if "fwd_tflops" in fields:
                kind, key = "variants", ("impl", "variant", "d", "s")
            elif "d2" in fields:
                kind, key = "softmax", ("triton", "BLOCK", "d2")
            elif "seq_len" in fields:
                kind, key = "attention", ("implementation", "d_model",
                                          "seq_len")
            else:  # e.g. bench_compile.py's table: nothing to draw
                print(f"{path}: skipped (not a table of bench_gpu.py or "
                      "bench_homework.py)")
                continue
            for row in reader:
                kinds[kind][tuple(row[k] for k in key)] = row
    return {k: list(v.values()) for k, v in kinds.items()}


def lines(rows, label_of, x_field, y_field):
    """{label: sorted [(x, y)]} over the rows that have y."""
    out = {}
    for row in rows:
        x, y = number(row.get(x_field)), number(row.get(y_field))
        if x is not None and y is not None:
            out.setdefault(label_of(row), []).append((x, y))
    return {label: sorted(points) for label, points in out.items()}


def size_label(x):
    return f"{int(x) // 1024}k" if x >= 1024 and x % 1024 == 0 else \
        str(int(x))


def draw(ax, series, title, ylabel, xlabel, style=lambda label: {}):
    for label, points in sorted(series.items()):
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o", label=label, **style(label))
    ax.set_xscale("log", base=2)
    ticks = sorted({x for points in series.values() for x, _ in points})
    ax.set_xticks(ticks)
    ax.set_xticklabels([size_label(x) for x in ticks])
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)


def finish(fig, axes, title, path):
    """One legend for all panels, beside them; saves and closes."""
    handles = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    labels = sorted(handles)
    fig.legend([handles[label] for label in labels], labels,
               loc="center right", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    fig.savefig(path, dpi=110)
    return path


def plot_variants(plt, rows, out):
    written = []
    gpu = next((r["gpu"] for r in rows if r.get("gpu")), "")
    panels = [("fwd_tflops", "forward", "TFLOP/s"),
              ("bwd_tflops", "backward", "TFLOP/s"),
              ("fwd_peak_mib", "forward peak", "MiB above inputs"),
              ("bwd_peak_mib", "backward peak", "MiB above inputs")]

    def style(label):
        impl, d = label.rsplit(" D", 1)
        return dict(color(impl), linestyle="--" if d == "64" else "-")
    label_of = lambda r: f"{r['impl']} D{r['d']}"
    for variant in sorted({r["variant"] for r in rows}):
        mine = [r for r in rows if r["variant"] == variant]
        series = [(lines(mine, label_of, "s", field), title, unit)
                  for field, title, unit in panels]
        series = [p for p in series if p[0]]
        if not series:
            continue
        cols = 2
        nrows = (len(series) + 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(12, 4 * nrows),
                                 squeeze=False)
        for ax, (data, title, unit) in zip(axes.flat, series):
            draw(ax, data, title, unit, "S (B*S = 16k tokens)", style)
            if unit.startswith("MiB"):
                ax.set_yscale("log")  # eager's scores dwarf the rest
        for ax in list(axes.flat)[len(series):]:
            ax.set_visible(False)
        written.append(finish(fig, axes.flat, f"{variant}, bf16  {gpu}",
                              os.path.join(out, f"{variant}.png")))
        plt.close(fig)
    return written


def plot_softmax(plt, rows, out):
    def label_of(r):
        if r["triton"] != "True":
            return "PyTorch softmax(x) @ V"
        return "fa" if r["BLOCK"] == "auto" else f"fused BLOCK={r['BLOCK']}"
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    draw(axes[0], lines(rows, label_of, "d2", "forward_ms_mean"),
         "forward time (mean)", "ms", "d2", color)
    draw(axes[1], lines(rows, label_of, "d2", "forward_peak_MiB"),
         "forward peak", "MiB above inputs", "d2", color)
    axes[0].set_yscale("log")
    path = finish(fig, axes, "softmax(x) @ V, x [16, 2048, d2], V [16, d2, "
                  "512], float32", os.path.join(out, "softmax_matmul.png"))
    plt.close(fig)
    return [path]


def plot_attention(plt, rows, out):
    gpu = next((r["gpu"] for r in rows if r.get("gpu")), "")
    label_of = lambda r: r["implementation"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    for ax, (field, title, unit) in zip(axes.flat, [
            ("forward_ms", "forward", "ms"),
            ("backward_ms", "backward", "ms"),
            ("forward_peak_MiB", "forward peak", "MiB above inputs"),
            ("backward_peak_MiB", "backward peak", "MiB above inputs")]):
        draw(ax, lines(rows, label_of, "seq_len", field), title, unit,
             "seq_len", color)
        ax.set_yscale("log")
    path = finish(fig, axes.flat, f"attention, batch 8, d_model 64, "
                  f"float32  {gpu}", os.path.join(out, "attention.png"))
    plt.close(fig)
    return [path]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--out", required=True, help="folder for the PNGs")
    args = parser.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(args.out, exist_ok=True)
    rows = read(args.csv)
    written = []
    for kind, plot in (("variants", plot_variants),
                       ("softmax", plot_softmax),
                       ("attention", plot_attention)):
        if rows[kind]:
            written += plot(plt, rows[kind], args.out)
    print("plots: " + (", ".join(written) or "none (no measured rows)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
