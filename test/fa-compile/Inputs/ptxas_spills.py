"""Prints the spills ptxas reports for each wgmma forward of some specs,
compiled as the JIT compiles them: the head dim fixed, no split-KV or
scalar kernels, bf16, sm_90a. Usage:
  ptxas_spills.py PTXAS FA_COMPILE SPECS_DIR D[,D...] SPEC [SPEC...]
One line per kernel: "<spec> D<d> <kernel>: <n> bytes spill stores"."""
import os
import re
import subprocess
import sys
import tempfile


def fixed_head_dim(text, d):
    # q, k, v (and their gradients) are [B, H, S, D]: D the last extent.
    return re.sub(r"tensor<(\?x[0-9?]+x\?x)(\?|[0-9]+)x",
                  rf"tensor<\g<1>{d}x", text)


def main():
    ptxas, fa_compile, specs, dims = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        for name in sys.argv[5:]:
            text = open(os.path.join(specs, name + ".mlir")).read()
            for d in dims.split(","):
                spec = os.path.join(tmp, f"{name}_{d}.mlir")
                open(spec, "w").write(fixed_head_dim(text, d))
                ptx = subprocess.run(
                    [fa_compile, spec, "--arch", "sm_90a", "--dtype", "bf16",
                     "--split-kv=false", "--scalar-fallback=false", "-o", "-"],
                    check=True, capture_output=True, text=True).stdout
                for module in re.split(r"^// fa-compile: ", ptx,
                                       flags=re.M)[1:]:
                    kernel, body = module.split("\n", 1)
                    if not re.search(r"_forward_wgmma_d\d+$", kernel):
                        continue
                    path = os.path.join(tmp, kernel + ".ptx")
                    open(path, "w").write(body)
                    report = subprocess.run(
                        [ptxas, "-arch=sm_90a", "-v", path, "-o", os.devnull],
                        check=True, capture_output=True, text=True).stderr
                    stores = re.search(r"(\d+) bytes spill stores", report)
                    print(f"{name} D{d} {kernel}: {stores.group(1)} bytes "
                          "spill stores")


if __name__ == "__main__":
    main()
