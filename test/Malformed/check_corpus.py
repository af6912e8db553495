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


def run(command, path, must_fail=False, timeout=60):
    """(exit status, None or why it was unclean) of `command`, a tool's
    run on `path`: exit 0 (unless `must_fail`) or 1 with the first line of
    stderr `path:line:col: error: ...`, and no crash report."""
    proc = subprocess.run(command, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=timeout)
    err = proc.stderr.decode("utf-8", "replace")
    first = err.splitlines()[0] if err else ""
    located = re.match(re.escape(path) + r":\d+:\d+: error: \S", first)
    status = proc.returncode
    if "Stack dump" in err or "PLEASE submit" in err or "LLVM ERROR" in err:
        return status, f"{path}: crash report in stderr\n{err[:2000]}"
    if status == 0 and not must_fail:
        return status, None
    if status != 1:
        return status, f"{path}: exit status {status}\n{err[:2000]}"
    if not located:
        return status, \
            f"{path}: error is not 'file:line:col: error: ...':\n{first}"
    return status, None


def main():
    fa_opt, corpus, specs, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    failures, count = [], 0
    for name in sorted(os.listdir(corpus)):
        count += 1
        path = os.path.join(corpus, name)
        _, failure = run([fa_opt, path], path, must_fail=True)
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
            _, failure = run([fa_opt, path], path)
            if failure:
                failures.append(failure)
    for failure in failures:
        print("FAIL:", failure)
    print(f"{count} inputs, {len(failures)} unclean")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
