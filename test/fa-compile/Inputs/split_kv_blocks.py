"""Prints, for each split-KV forward kernel of some specs (the head dim
fixed, bf16, sm_90a, as the JIT compiles them), how many of its 128-thread
blocks one SM holds by the registers and shared memory ptxas reports, and
its spills. The host code sizes the split count to one wave of that many
blocks (tensor_core::splitKvBlocksPerSmOf). Usage:
  split_kv_blocks.py PTXAS FA_COMPILE SPECS_DIR D[,D...] SPEC [SPEC...]
One line per kernel: "<spec> D<d> <kernel>: <n> blocks an SM, <s> bytes
spill stores"."""
import os
import re
import sys
import tempfile

from ptxas_spills import fa_compile_modules, fixed_head_dim, ptxas_report

# sm_90: 64K registers an SM, allocated per warp in units of 256; 228 KB
# of shared memory an SM, 1 KB of it reserved per block.
REGISTERS, REGISTER_UNIT, SHARED, SHARED_RESERVED, THREADS = (
    65536, 256, 228 * 1024, 1024, 128)


def blocks_per_sm(registers, shared):
    per_warp = -(-registers * 32 // REGISTER_UNIT) * REGISTER_UNIT
    by_registers = REGISTERS // (per_warp * THREADS // 32)
    by_shared = SHARED // (shared + SHARED_RESERVED)
    return min(by_registers, by_shared)


def main():
    ptxas, fa_compile, specs, dims = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        for name in sys.argv[5:]:
            text = open(os.path.join(specs, name + ".mlir")).read()
            for d in dims.split(","):
                spec = os.path.join(tmp, f"{name}_{d}.mlir")
                open(spec, "w").write(fixed_head_dim(text, d))
                for kernel, body in fa_compile_modules(fa_compile, spec,
                                                       split_kv=True):
                    if not re.search(r"_split_kv_d\d+$", kernel):
                        continue
                    report = ptxas_report(ptxas, body,
                                          os.path.join(tmp, kernel + ".ptx"))
                    registers = int(re.search(r"Used (\d+) registers",
                                              report).group(1))
                    # ptxas reports static shared memory; past 48 KB the
                    # tiles are dynamic: two stages of K and V, 64 keys of
                    # 2-byte elements each, a paged cache's ring of table
                    # entries (4 tiles of 64 i32), and the f32 states three
                    # warps hand warp 0 where the warps share each key tile
                    # (4 + D / 2 values for each of 32 lanes).
                    shared = int(re.search(r"(\d+) bytes smem",
                                           report).group(1))
                    tiles = 2 * 2 * 64 * int(d) * 2
                    if shared < tiles:
                        shared += (tiles + 4 * 64 * 4 +
                                   3 * (4 + int(d) // 2) * 32 * 4)
                    stores = re.search(r"(\d+) bytes spill stores", report)
                    print(f"{name} D{d} {kernel}: "
                          f"{blocks_per_sm(registers, shared)} blocks an SM, "
                          f"{stores.group(1)} bytes spill stores")


if __name__ == "__main__":
    main()
