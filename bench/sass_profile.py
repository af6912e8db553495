#!/usr/bin/env python3
"""Reads ncu's SASS source page (`ncu -i REP --page source --csv
--print-source sass > F.csv`) and prints where a kernel's warps stall and
what its hot loop issues.

  stall totals   samples per stall reason over the kernel
  hot spots      the --top instructions by samples, with their two main
                 reasons (index, samples, share, SASS)
  loop mix       opcodes of the instructions executed at least a third as
                 often as the most executed one (the main loop), per
                 iteration of that loop by one warp (an iteration: the
                 count most of those instructions share)
  runs           (--runs N) stretches of consecutive instructions that
                 executed equally often, with their samples, where those
                 reach N: code that runs once per work item (prologue,
                 epilogue) against the per-tile loops

Usage: sass_profile.py F.csv [--top 40] [--runs N]
"""
import argparse
import collections
import csv


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--runs", type=int, default=0)
    args = parser.parse_args()
    with open(args.csv) as f:
        rows = list(csv.reader(f))
    header, data = rows[1], rows[2:]  # row 0 names the kernel
    number = lambda r, i: int((r[i] or "0").replace(",", ""))
    samples = header.index("Warp Stall Sampling (All Samples)")
    executed = header.index("Instructions Executed")
    reasons = {h: header.index(h) for h in header
               if h.startswith("stall_") and "Not Issued" not in h}
    total = sum(number(r, samples) for r in data) or 1
    print(f"{rows[0][1]}: {total} samples, {len(data)} instructions")
    totals = {h: sum(number(r, i) for r in data) for h, i in reasons.items()}
    print("stall totals:", ", ".join(
        f"{h[6:]} {100 * n / total:.1f}%"
        for h, n in sorted(totals.items(), key=lambda x: -x[1])[:10]))

    print("hot spots:")
    top = sorted(range(len(data)), key=lambda i: -number(data[i], samples))
    for i in sorted(top[:args.top]):
        r = data[i]
        main_reasons = sorted(((number(r, j), h[6:])
                               for h, j in reasons.items()), reverse=True)[:2]
        print(f"  {i:5d} {number(r, samples):7d} "
              f"{100 * number(r, samples) / total:5.1f}%  "
              f"{r[1].strip()[:58]:58s} {main_reasons}")

    most = max(number(r, executed) for r in data) or 1
    hot = [r for r in data if number(r, executed) >= most / 3]
    loop = collections.Counter(number(r, executed)
                               for r in hot).most_common(1)[0][0]
    mix = collections.Counter()
    for r in hot:
        n = number(r, executed)
        words = r[1].split()
        opcode = words[1] if words[0].startswith("@") else words[0]
        mix[opcode.split(".")[0]] += n / loop
    print(f"loop mix: {sum(mix.values()):.0f} instructions per warp and "
          "iteration:", ", ".join(f"{op} {n:.0f}"
                                  for op, n in mix.most_common(30)))

    if args.runs:
        print("runs (first-last instruction, executions each, samples):")
        start = 0
        for i in range(1, len(data) + 1):
            if i < len(data) and (number(data[i], executed) ==
                                  number(data[start], executed)):
                continue
            n = sum(number(r, samples) for r in data[start:i])
            if n >= args.runs:
                print(f"  {start:5d}-{i - 1:5d} {number(data[start], executed):10d}"
                      f" {n:7d} {100 * n / total:5.1f}%")
            start = i


if __name__ == "__main__":
    main()
