"""SASS of fa's kernels without a GPU: compiles a spec at fixed head dims (fa-compile, as the JIT does: bf16, sm_90a, no
split-KV or scalar kernels), assembles it with the local ptxas, disassembles
it with nvdisasm, and prints each loop of more than 100 instructions (a
backward branch) with its size and instruction mix, and the HGMMA shapes.

nvdisasm and cuobjdump are not in the local CUDA; PyPI has them:
  pip download nvidia-cuda-nvdisasm --no-deps -d /tmp/nvd
  (cd /tmp/nvd && unzip -o -q nvidia_cuda_nvdisasm*.whl)
Usage (from the repository root):
  python3 bench/fifty-seventh/sass_loops.py [--kernels REGEX] NVDISASM SPEC D[,D...]
--kernels takes the kernels whose names REGEX matches (re.search) in place
of the wgmma forwards (`_forward_wgmma_d<D>$`), e.g.
'_backward_wgmma_dk_dv_d[0-9]+$' for the dK/dV kernel.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "test",
                                "fa-compile", "Inputs"))
from ptxas_spills import fa_compile_modules, fixed_head_dim  # noqa: E402

PTXAS = "/usr/local/cuda/bin/ptxas"
INSTRUCTION = re.compile(r"^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9]+)")


def loops(sass):
    lines = sass.splitlines()
    labels = {m.group(1): i for i, l in enumerate(lines)
              if (m := re.match(r"^(\.L_x_\d+):", l))}
    for i, line in enumerate(lines):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", line)
        if m and labels.get(m.group(1), len(lines)) < i:
            body = [INSTRUCTION.match(x) for x in lines[labels[m.group(1)]:i + 1]]
            ops = collections.Counter(b.group(2) for b in body if b)
            if sum(ops.values()) > 100:
                yield m.group(1), sum(ops.values()), ops


def main():
    args = sys.argv[1:]
    kernels = r"_forward_wgmma_d\d+$"
    if args[0] == "--kernels":
        kernels, args = args[1], args[2:]
    nvdisasm, spec, dims = args[:3]
    text = open(os.path.join("kernels_spec", spec + ".mlir")).read()
    with tempfile.TemporaryDirectory() as tmp:
        for d in dims.split(","):
            path = os.path.join(tmp, f"{spec}_{d}.mlir")
            open(path, "w").write(fixed_head_dim(text, d))
            for kernel, ptx in fa_compile_modules("build/bin/fa-compile", path):
                if not re.search(kernels, kernel):
                    continue
                open(os.path.join(tmp, "k.ptx"), "w").write(ptx)
                report = subprocess.run(
                    [PTXAS, "-arch=sm_90a", "-v", os.path.join(tmp, "k.ptx"),
                     "-o", os.path.join(tmp, "k.cubin")],
                    check=True, capture_output=True, text=True).stderr
                spills = re.search(r"(\d+) bytes spill stores", report)
                sass = subprocess.run([nvdisasm, "-c", os.path.join(tmp, "k.cubin")],
                                      check=True, capture_output=True,
                                      text=True).stdout
                shapes = collections.Counter(re.findall(r"HGMMA\.(\w+)\.", sass))
                print(f"{kernel}: {spills.group(1)} bytes spill stores, "
                      f"HGMMA {dict(shapes)}")
                for label, size, ops in loops(sass):
                    mix = " ".join(f"{op} {n}" for op, n in ops.most_common(10))
                    print(f"  loop {label}: {size} instructions: {mix}")


if __name__ == "__main__":
    main()
