#!/usr/bin/env bash
# Where ptxas puts a wgmma forward's P V wait (twenty-eighth session):
#   depbar.sh PTX KERNEL OUT
# takes KERNEL's module out of PTX (fa-compile -o - output, modules after
# "// fa-compile: <name>" lines), assembles it for sm_90a (OUT.ptx,
# OUT.cubin, OUT.sass), prints ptxas's spills and registers, and for each
# `WARPGROUP.DEPBAR.LE gsb0, 0x1` (a pipelined tile's S wait) how many
# instructions, MUFU.EX2 among them, come before the next
# `WARPGROUP.DEPBAR.LE gsb0, 0x0` (its P V wait); then the kernel's
# MUFU.EX2 count. PTXAS and CUOBJDUMP name the tools (defaults: the CUDA
# toolkit's ptxas, and cuobjdump on PATH, else the venv's Triton copy).
set -euo pipefail
ptx=$1 kernel=$2 out=$3
here=$(cd "$(dirname "$0")/../.." && pwd)
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump ||
  ls "$here"/build/venv/lib/python3*/site-packages/triton/backends/nvidia/bin/cuobjdump)}
python3 - "$ptx" "$kernel" "$out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
for module in re.split(r"^// fa-compile: ", text, flags=re.M)[1:]:
    name, body = module.split("\n", 1)
    if name == sys.argv[2]:
        open(sys.argv[3] + ".ptx", "w").write(body)
        break
else:
    sys.exit(f"no kernel {sys.argv[2]} in {sys.argv[1]}")
PY
"$PTXAS" -arch=sm_90a -v "$out.ptx" -o "$out.cubin" 2>&1 | grep -E "C75|spill|Used" | cut -c1-140
"$CUOBJDUMP" -sass "$out.cubin" | grep -E "^\s+/\*[0-9a-f]{4}\*/" > "$out.sass"
awk '/DEPBAR.LE gsb0, 0x1/ {on = 1; n = 0; mufu = 0; next}
     on && /DEPBAR.LE gsb0, 0x0/ {print "S wait to P V wait: " n " instructions, " mufu " MUFU.EX2"; on = 0}
     on {n++; if (/MUFU.EX2/) mufu++}' "$out.sass"
echo "MUFU.EX2 in the kernel: $(grep -c MUFU.EX2 "$out.sass")"
