#!/usr/bin/env python3
"""Feeds fa-opt malformed input and checks it fails cleanly.

Clean means: exit status 1 (never a signal or an abort), and the first line
of stderr is `<file>:<line>:<col>: error: <message>`. Inputs are the files of
the corpus folder plus, for every spec in kernels_spec/, truncations at many
offsets and seeded single-byte mutations; those may also happen to stay
valid (exit 0), but must never crash or fail without a located error.

usage: check_corpus.py FA_OPT CORPUS_DIR SPECS_DIR WORK_DIR
"""
import os
import random
import re
import subprocess
import sys


def run(fa_opt, path, must_fail):
    proc = subprocess.run([fa_opt, path], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=60)
    err = proc.stderr.decode("utf-8", "replace")
    first = err.splitlines()[0] if err else ""
    located = re.match(re.escape(path) + r":\d+:\d+: error: \S", first)
    if proc.returncode == 0 and not must_fail:
        return None
    if proc.returncode != 1:
        return f"{path}: exit status {proc.returncode}\n{err[:2000]}"
    if not located:
        return f"{path}: error is not 'file:line:col: error: ...':\n{first}"
    if "Stack dump" in err or "PLEASE submit" in err:
        return f"{path}: crash report in stderr\n{err[:2000]}"
    return None


def main():
    fa_opt, corpus, specs, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    failures, count = [], 0
    for name in sorted(os.listdir(corpus)):
        count += 1
        failure = run(fa_opt, os.path.join(corpus, name), must_fail=True)
        if failure:
            failures.append(failure)
    rng = random.Random(2026)
    for name in sorted(os.listdir(specs)):
        data = open(os.path.join(specs, name), "rb").read()
        variants = [data[:cut] for cut in range(1, len(data), 53)]
        for _ in range(24):
            pos = rng.randrange(len(data))
            variants.append(data[:pos] + bytes([rng.randrange(256)]) +
                            data[pos + 1:])
        for i, text in enumerate(variants):
            path = os.path.join(work, f"{name}.{i}.mlir")
            with open(path, "wb") as f:
                f.write(text)
            count += 1
            failure = run(fa_opt, path, must_fail=False)
            if failure:
                failures.append(failure)
    for failure in failures:
        print("FAIL:", failure)
    print(f"{count} inputs, {len(failures)} unclean")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
