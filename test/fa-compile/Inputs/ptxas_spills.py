"""Prints the spills ptxas reports for each wgmma forward of some specs,
compiled as the JIT compiles them: the head dim fixed, no split-KV or
scalar kernels, bf16, sm_90a. Usage:
  ptxas_spills.py [--kernels REGEX] [--dq-kernel] PTXAS FA_COMPILE SPECS_DIR
                  D[,D...] SPEC...
  ptxas_spills.py --tiles BN:STAGES[,...] PTXAS FA_OPT SPECS_DIR D[,...] SPEC...
--kernels takes the kernels whose names REGEX matches (re.search) in place
of the wgmma forwards (`_forward_wgmma_d<D>$`); --dq-kernel compiles the
backward with dQ's own kernel (fa-compile --dq-atomics=false) instead of
the default, whose dK/dV kernel adds dQ.
The second form compiles through fa-opt's fa-lower-to-gpu pipeline with the
wgmma forward's block-n and stages set (0: the compiler's), as the tuner's
candidates ask for them. One line per kernel:
"<spec> D<d> <kernel>: <n> bytes spill stores", the tiles after D."""
import os
import re
import subprocess
import sys
import tempfile


def fixed_head_dim(text, d):
    # q, k, v (and their gradients) are [B, H, S, D]: D the last extent; a
    # paged cache's k and v [pages, H, P, D].
    return re.sub(r"tensor<(\?x[0-9?]+x[0-9?]+x)(\?|[0-9]+)x",
                  rf"tensor<\g<1>{d}x", text)


def ptx_modules(ptx):
    """(kernel, PTX) of each module in fa-compile's PTX output."""
    for module in re.split(r"^// fa-compile: ", ptx, flags=re.M)[1:]:
        kernel, body = module.split("\n", 1)
        yield kernel, body


def fa_compile_modules(fa_compile, spec, split_kv=False, extra=()):
    """(kernel, PTX) of each module fa-compile writes for `spec` (with the
    split-KV kernels where `split_kv`, and the options `extra`)."""
    return ptx_modules(subprocess.run(
        [fa_compile, spec, "--arch", "sm_90a", "--dtype", "bf16",
         f"--split-kv={'true' if split_kv else 'false'}",
         "--scalar-fallback=false", "-o", "-", *extra],
        check=True, capture_output=True, text=True).stdout)


def ptxas_report(ptxas, ptx, path):
    """What `ptxas -v` says of `ptx` (written to `path`) at sm_90a."""
    open(path, "w").write(ptx)
    return subprocess.run([ptxas, "-arch=sm_90a", "-v", path, "-o",
                           os.devnull],
                          check=True, capture_output=True, text=True).stderr


def unescape(text):
    """An MLIR string attribute's text: \\XX hex escapes and \\\\, \\"."""
    return re.sub(r'\\([0-9A-Fa-f]{2}|\\|")',
                  lambda m: m.group(1) if len(m.group(1)) == 1
                  else chr(int(m.group(1), 16)), text)


def fa_opt_modules(fa_opt, spec, block_n, stages):
    """(kernel, PTX) of each gpu.binary fa-opt's GPU pipeline makes for
    `spec` with the tensor-core block-n and stages given."""
    options = ("chip=sm_90a entries=forward split-kv=false "
               f"scalar-fallback=false tensor-core-block-n={block_n} "
               f"tensor-core-kv-stages={stages}")
    ir = subprocess.run([fa_opt, spec, f"--fa-lower-to-gpu={options}"],
                        check=True, capture_output=True, text=True).stdout
    for m in re.finditer(r'gpu\.binary @(\w+) .*?assembly = "((?:[^"\\]|\\.)*)"',
                         ir):
        yield m.group(1), unescape(m.group(2))


def main():
    args = sys.argv[1:]
    tiles = [None]
    kernels = r"_forward_wgmma_d\d+$"
    extra = []
    if args[0] == "--kernels":
        kernels = args[1]
        args = args[2:]
    if args[0] == "--dq-kernel":
        extra = ["--dq-atomics=false"]
        args = args[1:]
    if args[0] == "--tiles":
        tiles = [tuple(t.split(":")) for t in args[1].split(",")]
        args = args[2:]
    ptxas, tool, specs, dims = args[:4]
    with tempfile.TemporaryDirectory() as tmp:
        for name in args[4:]:
            text = open(os.path.join(specs, name + ".mlir")).read()
            for d in dims.split(","):
                spec = os.path.join(tmp, f"{name}_{d}.mlir")
                open(spec, "w").write(fixed_head_dim(text, d))
                for tile in tiles:
                    modules = fa_compile_modules(tool, spec, extra=extra) \
                        if tile is None \
                        else fa_opt_modules(tool, spec, *tile)
                    label = "" if tile is None else \
                        f" block-n {tile[0]} stages {tile[1]}"
                    for kernel, body in modules:
                        if not re.search(kernels, kernel):
                            continue
                        report = ptxas_report(
                            ptxas, body, os.path.join(tmp, kernel + ".ptx"))
                        stores = re.search(r"(\d+) bytes spill stores", report)
                        print(f"{name} D{d}{label} {kernel}: "
                              f"{stores.group(1)} bytes spill stores")


if __name__ == "__main__":
    main()
