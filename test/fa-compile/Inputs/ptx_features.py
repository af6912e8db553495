"""Prints, for each module of fa-compile's PTX whose kernel name contains
`wgmma` (the schedule kernels aside), which of the Hopper path's features
its code uses and whether it touches local memory:
  <kernel>: wgmma tma mbarrier setmaxnreg, local <none|ld.local ...>
Usage: ptx_features.py PTX_FILE (or - for stdin)."""
import re
import sys

from ptxas_spills import ptx_modules

FEATURES = (("wgmma", "wgmma.mma_async"), ("tma", "cp.async.bulk.tensor"),
            ("mbarrier", "mbarrier."), ("setmaxnreg", "setmaxnreg."))


def main():
    text = sys.stdin.read() if sys.argv[1] == "-" else open(sys.argv[1]).read()
    for kernel, body in ptx_modules(text):
        if "wgmma" not in kernel or kernel.endswith("_schedule"):
            continue
        used = [name for name, mark in FEATURES if mark in body]
        local = sorted(set(re.findall(r"\b(ld\.local|st\.local)\b", body)))
        print(f"{kernel}: {' '.join(used)}, local {' '.join(local) or 'none'}")


if __name__ == "__main__":
    main()
