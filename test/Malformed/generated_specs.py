#!/usr/bin/env python3
"""Compiles generated specs that parse but may make no sense, and checks
that fa-compile handles each cleanly.

check_corpus.py mutates bytes, so almost everything it makes fails to
parse. This script writes specs that do parse and stresses the verifier
and the lowering instead. It varies the element and accumulator types,
static and dynamic extents (0 among them), head dims from 1 to 512, GQA
ratios, masks, windows, sink tokens and learnable sinks, and adds a
backward half of the time. It compiles each spec for sm_90a or sm_80.

Clean means what check_corpus.run says: exit status 0, or 1 with an error
that names its place (`file:line:col: error:`); never a signal, never a
crash report. The bugs this found: a static B or Sq of 0 ended in "no
kernel named ''", and a static D of 0 compiled.

usage: generated_specs.py FA_COMPILE WORK_DIR COUNT
"""
import os
import random
import sys

from check_corpus import run

ELEMENTS = ["bf16", "f16", "f32", "f64", "i8"]
ACCUMULATORS = ["f32", "f64", "f16"]
HEAD_DIMS = ["?", "0", "1", "8", "24", "32", "48", "64", "72", "80", "96",
             "112", "128", "160", "192", "256", "512"]
HEADS = [("?", "?"), ("32", "8"), ("8", "3"), ("4", "4"), ("0", "0"),
         ("16", "?")]
EXTENTS = ["?", "?", "1", "0", "7", "128"]
MASKS = ["", "mask causal", "mask causal window 128", "mask causal window 1",
         "mask causal window 4096 sink_tokens 4",
         "mask causal window 3 sink_tokens 200",
         "mask causal window 100000000000"]


def generate(rng):
    """One spec's text: a forward, and a backward half of the time. Half
    the specs are plausible (types, heads and extents that agree), so that
    the lowering sees odd head dims, extents and masks, not only the
    verifier."""
    plausible = rng.random() < 0.5
    pick = lambda choices, good: rng.choice(good if plausible else choices)
    element = pick(ELEMENTS, ["bf16", "f16", "f32"])
    acc = "f32" if plausible else rng.choice(ACCUMULATORS)
    d = pick(HEAD_DIMS, ["?", "1", "8", "24", "48", "72", "112", "160"])
    kv_d = d if plausible or rng.random() < 0.9 else rng.choice(HEAD_DIMS)
    hq, hkv = pick(HEADS, [("?", "?"), ("32", "8"), ("4", "4")])
    b, sq, sk = (pick(EXTENTS, ["?", "1", "7"]) for _ in range(3))
    mask = rng.choice(MASKS)
    q = f"tensor<{b}x{hq}x{sq}x{d}x{element}>"
    kv = f"tensor<{b}x{hkv}x{sk}x{kv_d}x{element}>"
    lse = f"tensor<{b}x{hq}x{sq}x{acc}>"
    sinks = f"tensor<{hq}x{rng.choice([acc, acc, 'f16'])}>" \
        if rng.random() < 0.3 else None
    args = f"%q: {q}, %k: {kv}, %v: {kv}" + (f", %s: {sinks}" if sinks else "")
    sink_type = f", {sinks}" if sinks else ""
    ins = f"{q}, {kv}, {kv}{sink_type}"
    clause = " sinks %s" if sinks else ""
    text = f"""fa.kernel @generated {{
  func.func @forward({args}) -> ({q}, {lse}) {{
    %o, %lse = fa.attention %q, %k, %v{clause} {mask}
        : ({ins}) -> ({q}, {lse})
    return %o, %lse : {q}, {lse}
  }}
"""
    if rng.random() < 0.5:
        outs = f"{q}, {kv}, {kv}{sink_type}"
        names = "%dq, %dk, %dv" + (", %ds" if sinks else "")
        grad_args = (f"%q: {q}, %k: {kv}, %v: {kv}, %o: {q}, %lse: {lse}, "
                     f"%dO: {q}" + (f", %s: {sinks}" if sinks else ""))
        text += f"""  func.func @backward({grad_args}) -> ({outs}) {{
    {names} = fa.attention_grad %q, %k, %v, %o, %lse, %dO{clause} {mask}
        : ({q}, {kv}, {kv}, {q}, {lse}, {q}{sink_type}) -> ({outs})
    return {names} : {outs}
  }}
"""
    return text + "}\n"


def main():
    fa_compile, work, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    rng = random.Random(2026)
    failures, compiled = [], 0
    for i in range(count):
        path = os.path.join(work, f"generated{i}.mlir")
        with open(path, "w") as f:
            f.write(generate(rng))
        arch = ("sm_90a", "sm_80")[i % 2]
        status, failure = run(
            [fa_compile, path, "--arch", arch, "--emit", "ptx", "-o",
             os.devnull], path, timeout=600)
        compiled += status == 0
        if failure:
            failures.append(f"{arch}: {failure}")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{count} generated specs, {compiled} compiled, {len(failures)} "
          f"unclean")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
